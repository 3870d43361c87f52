package ratelimit_test

import (
	"context"
	"net"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/exhub/exhub/bff/internal/ratelimit"
)

// clock is a test clock moved by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// startValkey runs valkey-server on a free loopback port until the test ends (stopped by PID). A missing binary
// fails the test.
func startValkey(t *testing.T) (addr string, stop func()) {
	t.Helper()
	bin, err := exec.LookPath("valkey-server")
	if err != nil {
		t.Fatalf("valkey-server not found (install it with `make deps`): %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	stop = func() {
		select {
		case <-done:
			return
		default:
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	t.Cleanup(stop)
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return addr, stop
		}
		if time.Now().After(deadline) {
			t.Fatalf("valkey-server did not listen on %s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func limiters(t *testing.T, clk *clock) map[string]ratelimit.Limiter {
	addr, _ := startValkey(t)
	vc, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{addr}, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(vc.Close)
	cfg := ratelimit.Defaults()
	cfg.Now = clk.Now
	v, err := ratelimit.NewValkey(cfg, vc, nil)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]ratelimit.Limiter{"local": ratelimit.NewLocal(cfg), "valkey": v}
}

func TestBurstThenRefill(t *testing.T) {
	clk := &clock{now: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)}
	for name, l := range limiters(t, clk) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			lim := ratelimit.Limit{N: 5, Per: 30 * time.Minute}
			key := ratelimit.HashKey("code_send", "alice@example.com")
			for i := range 5 {
				r, err := l.Allow(ctx, key, lim)
				if err != nil || !r.Allowed || r.Remaining != 4-i {
					t.Fatalf("attempt %d: %+v, %v; want allowed with %d remaining", i+1, r, err, 4-i)
				}
			}
			r, err := l.Allow(ctx, key, lim)
			if err != nil || r.Allowed || r.RetryAfter != 6*time.Minute {
				t.Fatalf("6th attempt: %+v, %v; want refused for 6m", r, err)
			}
			// Another key is not affected.
			if r, _ := l.Allow(ctx, ratelimit.HashKey("code_send", "bob@example.com"), lim); !r.Allowed {
				t.Fatal("another identifier was refused")
			}
			clk.Add(5 * time.Minute)
			if r, _ := l.Allow(ctx, key, lim); r.Allowed || r.RetryAfter != time.Minute {
				t.Fatalf("after 5m: %+v, want refused for 1m", r)
			}
			clk.Add(time.Minute)
			if r, _ := l.Allow(ctx, key, lim); !r.Allowed || r.Remaining != 0 {
				t.Fatalf("after 6m: %+v, want one attempt allowed", r)
			}
			if r, _ := l.Allow(ctx, key, lim); r.Allowed {
				t.Fatal("a second attempt passed after one refill")
			}
			clk.Add(30 * time.Minute)
			if r, _ := l.Allow(ctx, key, lim); !r.Allowed || r.Remaining != 4 {
				t.Fatalf("after a full window: %+v, want a full burst again", r)
			}
		})
	}
}

func TestHashKeyHoldsNoIdentifier(t *testing.T) {
	k := ratelimit.HashKey("login_id", "alice@example.com")
	if !strings.HasPrefix(k, "login_id:") || strings.Contains(k, "alice") {
		t.Fatalf("key %q", k)
	}
	if k == ratelimit.HashKey("login_id", "alice@example.co", "m") {
		t.Fatal("parts are not separated")
	}
}

func TestValkeyDownFallsBackToLocal(t *testing.T) {
	clk := &clock{now: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)}
	addr, stop := startValkey(t)
	vc, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{addr}, DisableCache: true, DisableRetry: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(vc.Close)
	cfg := ratelimit.Defaults()
	cfg.Now = clk.Now
	v, err := ratelimit.NewValkey(cfg, vc, nil)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	lim := ratelimit.Limit{N: 2, Per: time.Minute}
	ctx := context.Background()
	for i := range 2 {
		if r, err := v.Allow(ctx, "k", lim); err != nil || !r.Allowed {
			t.Fatalf("attempt %d with valkey down: %+v, %v", i+1, r, err)
		}
	}
	if r, err := v.Allow(ctx, "k", lim); err != nil || r.Allowed {
		t.Fatalf("3rd attempt with valkey down: %+v, %v; want refused by the in-process count", r, err)
	}
}

func TestLocalIsBounded(t *testing.T) {
	clk := &clock{now: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)}
	cfg := ratelimit.Defaults()
	cfg.MaxLocalKeys = 3
	cfg.Now = clk.Now
	l := ratelimit.NewLocal(cfg)
	for i := range 10 {
		if _, err := l.Allow(context.Background(), string(rune('a'+i)), ratelimit.Limit{N: 1, Per: time.Hour}); err != nil {
			t.Fatal(err)
		}
	}
	if l.Len() > 3 {
		t.Fatalf("table holds %d keys, bound 3", l.Len())
	}
}

func TestConfigValidate(t *testing.T) {
	if err := ratelimit.Defaults().Validate(); err != nil {
		t.Fatal(err)
	}
	if err := (ratelimit.Config{}).Validate(); err == nil {
		t.Fatal("empty config passed")
	}
	if err := (ratelimit.Limit{N: 0, Per: time.Minute}).Validate(); err == nil {
		t.Fatal("zero limit passed")
	}
}
