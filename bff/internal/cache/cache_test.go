package cache

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/valkey-io/valkey-go"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startValkey runs a real valkey-server on a free loopback port and stops it (by PID) when the test ends. A missing
// server is a failure: `make deps` (scripts/apt-deps.sh) installs it.
func startValkey(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("valkey-server")
	if err != nil {
		t.Fatalf("valkey-server not found (install it with `make deps`): %v", err)
	}
	port := freePort(t)
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", fmt.Sprint(port), "--save", "", "--appendonly", "no",
		"--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(5 * time.Second); ; {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("valkey-server did not listen on %s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exercise runs the same contract against any backend.
func exercise(t *testing.T, c Cache, expire func(time.Duration)) {
	t.Helper()
	ctx := context.Background()
	if _, ok, err := c.Get(ctx, "missing"); ok || err != nil {
		t.Fatalf("Get(missing) = %v, %v", ok, err)
	}
	val := []byte("exchanges\x00binary\xff")
	if err := c.Set(ctx, "k", val, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	got, ok, err := c.Get(ctx, "k")
	if err != nil || !ok || !bytes.Equal(got, val) {
		t.Fatalf("Get(k) = %q, %v, %v", got, ok, err)
	}
	if err := c.Set(ctx, "k", []byte("v2"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := c.Get(ctx, "k"); string(got) != "v2" {
		t.Fatalf("overwrite: %q", got)
	}
	if err := c.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := c.Get(ctx, "k"); ok {
		t.Fatal("deleted key still present")
	}
	if err := c.Set(ctx, "short", []byte("x"), 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	expire(150 * time.Millisecond)
	if _, ok, _ := c.Get(ctx, "short"); ok {
		t.Fatal("key alive after its TTL")
	}
	if err := c.Set(ctx, "bad", []byte("x"), 0); err == nil {
		t.Fatal("zero TTL accepted")
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestValkeyServer(t *testing.T) {
	addr := startValkey(t)
	var logs bytes.Buffer
	c, err := Open(context.Background(), Config{Addr: addr, DialTimeout: time.Second}, slog.New(slog.NewJSONHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Backend() != "valkey" {
		t.Fatalf("backend %s, want valkey; log: %s", c.Backend(), logs.String())
	}
	if !strings.Contains(logs.String(), `"backend":"valkey"`) {
		t.Fatalf("choice not logged: %s", logs.String())
	}
	exercise(t, c, time.Sleep)
	// The value really is in the server, visible to another client (another BFF replica).
	if err := c.Set(context.Background(), "shared", []byte("yes"), time.Minute); err != nil {
		t.Fatal(err)
	}
	other, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	s, err := other.Do(context.Background(), other.B().Get().Key("shared").Build()).ToString()
	if err != nil || s != "yes" {
		t.Fatalf("other client read %q, %v", s, err)
	}
	ttl, err := other.Do(context.Background(), other.B().Pttl().Key("shared").Build()).AsInt64()
	if err != nil || ttl <= 0 || ttl > 60000 {
		t.Fatalf("ttl %d, %v", ttl, err)
	}
}

func TestMiniredis(t *testing.T) {
	mr := miniredis.RunT(t)
	c, err := OpenValkey(context.Background(), Config{Addr: mr.Addr(), ValkeyOption: func(o *valkey.ClientOption) {
		o.DisableCache = true
		o.AlwaysRESP2 = true
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	exercise(t, c, mr.FastForward)
}

func TestFallbackWhenValkeyIsDown(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t)) // nothing listens there
	var logs bytes.Buffer
	c, err := Open(context.Background(), Config{Addr: addr, DialTimeout: 200 * time.Millisecond}, slog.New(slog.NewJSONHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if c.Backend() != "memory" {
		t.Fatalf("backend %s", c.Backend())
	}
	if !strings.Contains(logs.String(), `"level":"WARN"`) || !strings.Contains(logs.String(), "fallback") {
		t.Fatalf("fallback not logged as a warning: %s", logs.String())
	}
	if _, err := Open(context.Background(), Config{Addr: addr, Required: true, DialTimeout: 200 * time.Millisecond}, nil); err == nil ||
		!strings.Contains(err.Error(), "valkey.required") {
		t.Fatalf("required valkey down: err %v", err)
	}
}

func TestMemoryContractAndBound(t *testing.T) {
	m := NewMemory(3)
	now := time.Unix(1000, 0)
	m.now = func() time.Time { return now }
	exercise(t, m, func(d time.Duration) { now = now.Add(d) })

	ctx := context.Background()
	for i := 0; i < 3; i++ {
		_ = m.Set(ctx, fmt.Sprint(i), []byte{byte(i)}, time.Minute)
	}
	_, _, _ = m.Get(ctx, "0") // 0 is now the most recently used
	_ = m.Set(ctx, "3", []byte{3}, time.Minute)
	if m.Len() != 3 {
		t.Fatalf("len %d, want the bound 3", m.Len())
	}
	if _, ok, _ := m.Get(ctx, "1"); ok {
		t.Fatal("least recently used entry was not evicted")
	}
	for _, k := range []string{"0", "2", "3"} {
		if _, ok, _ := m.Get(ctx, k); !ok {
			t.Fatalf("entry %s evicted", k)
		}
	}
	// Values are copied: the caller cannot change what is stored.
	v, _, _ := m.Get(ctx, "3")
	v[0] = 99
	if w, _, _ := m.Get(ctx, "3"); w[0] != 3 {
		t.Fatal("stored value aliased")
	}
}
