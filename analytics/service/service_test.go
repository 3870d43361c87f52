package service

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/exhub/exhub/analytics/chtest"
	"github.com/exhub/exhub/analytics/schema"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdktest"
)

// refExchange serves the SDK's reference exchange in-process.
type refExchange struct {
	client exchangev1.ExchangeClient
	desc   *exchangev1.DescribeResponse
}

func (r *refExchange) Slug() string                               { return "reference" }
func (r *refExchange) WaitRunning(context.Context) error          { return nil }
func (r *refExchange) Client() (exchangev1.ExchangeClient, error) { return r.client, nil }
func (r *refExchange) Describe() *exchangev1.DescribeResponse     { return r.desc }
func (r *refExchange) OpenStream(ctx context.Context) Stream      { return openGRPCStream(ctx, r.client) }

// grpcStream is a minimal Stream over a raw StreamMarket call.
type grpcStream struct {
	events chan *exchangev1.MarketEvent
	stream exchangev1.Exchange_StreamMarketClient
	cancel context.CancelFunc
	wg     sync.WaitGroup
	err    error
}

func openGRPCStream(ctx context.Context, c exchangev1.ExchangeClient) *grpcStream {
	ctx, cancel := context.WithCancel(ctx)
	g := &grpcStream{events: make(chan *exchangev1.MarketEvent, 1024), cancel: cancel}
	g.stream, g.err = c.StreamMarket(ctx)
	g.wg.Add(1)
	go func() { // owned by the stream; ends when the call ends
		defer g.wg.Done()
		defer close(g.events)
		if g.err != nil {
			return
		}
		for {
			ev, err := g.stream.Recv()
			if err != nil {
				return
			}
			select {
			case g.events <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return g
}

func (g *grpcStream) Events() <-chan *exchangev1.MarketEvent { return g.events }
func (g *grpcStream) Subscribe(_ context.Context, subs ...*exchangev1.Subscription) error {
	if g.err != nil {
		return g.err
	}
	return g.stream.Send(&exchangev1.StreamMarketRequest{Op: exchangev1.StreamMarketRequest_OP_SUBSCRIBE, Subscriptions: subs})
}
func (g *grpcStream) Close() { g.cancel(); g.wg.Wait() }

func TestServiceBackfillsAndIngestsLive(t *testing.T) {
	srv := chtest.Start(t)
	_, client := sdktest.Start(t, sdktest.Options{HistoryDays: 2, TickInterval: 50 * time.Millisecond})
	desc, err := client.Describe(context.Background(), &exchangev1.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	svc := New(Config{
		Addr: srv.TCPAddr, HTTPAddr: srv.HTTPAddr, Schema: schema.Options{Database: "svc"}, SpoolDir: t.TempDir(),
		FlushInterval: 200 * time.Millisecond, BackfillDays: 1, BackfillPeriods: []string{"1h"}, MaxSymbols: 1, Live: true,
		Exchanges: []Exchange{&refExchange{client: client, desc: desc}},
	})
	if _, err := svc.Store(); !errors.Is(err, ErrNotReady) {
		t.Fatalf("store before run: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	defer func() { cancel(); <-done }()

	count := func(q string) uint64 {
		var n uint64
		if err := srv.Conn.QueryRow(context.Background(), q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	deadline := time.Now().Add(3 * time.Minute) // a day of candles: normally seconds; the bound is for a stuck backfill
	for {
		if svc.ready.Load() {
			c := count("SELECT count() FROM svc.candles_1m FINAL WHERE market_type = 'SWAP'")
			tr := count("SELECT count() FROM svc.trades")
			oi := count("SELECT count() FROM svc.open_interest")
			mk := count("SELECT count() FROM svc.mark_prices")
			if c >= 1440 && tr > 0 && oi >= 24 && mk > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("candles %d trades %d oi %d marks %d; stats %+v", c, tr, oi, mk, svc.Stats())
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	st, err := svc.Store()
	if err != nil {
		t.Fatal(err)
	}
	syms, err := st.Symbols(context.Background())
	if err != nil || len(syms) != 2 {
		t.Fatalf("symbols %v %v: want one SWAP and one SPOT", syms, err)
	}
}

// startValkey runs a real valkey-server on a free loopback port, stopped by PID when the test ends. A missing
// valkey-server fails the test (`make deps` installs it).
func startValkey(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("valkey-server")
	if err != nil {
		t.Fatalf("valkey-server not found (install it with `make deps`): %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
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
	deadline := time.Now().Add(time.Minute) // listens at once; the bound is for a server that never does
	for {
		c, err := net.Dial("tcp", addr)
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

// TestIngestLeaseAcrossReplicas runs two services, each with its own Valkey client, against one valkey-server, one
// ClickHouse and one exchange: exactly one runs the exchange's live ingest at any time. When that replica dies
// without giving the lease back, the other takes over once the lease lapses.
//
// No step depends on how fast the machine is: the TTL is long enough that a renewal delayed by a busy machine never
// loses the lease, and the lapse after the crash is brought forward by the test (the key's expiry is shortened, as if
// the TTL had passed) instead of waited for.
func TestIngestLeaseAcrossReplicas(t *testing.T) {
	ch := chtest.Start(t)
	vaddr := startValkey(t)
	_, client := sdktest.Start(t, sdktest.Options{TickInterval: 50 * time.Millisecond, HistoryDays: 1})
	desc, err := client.Describe(context.Background(), &exchangev1.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	type replica struct {
		svc    *Service
		lease  *ValkeyLease
		cancel context.CancelFunc
		done   chan error
	}
	const leaseTTL = 15 * time.Second
	key := "exhub:analytics:lease:ingest:reference"
	probe, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{vaddr}, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(probe.Close)
	holder := func() string {
		v, err := probe.Do(context.Background(), probe.B().Get().Key(key).Build()).ToString()
		if err != nil && !valkey.IsValkeyNil(err) {
			t.Fatal(err)
		}
		return v
	}
	n := 0
	start := func() *replica {
		vc, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{vaddr}, DisableCache: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(vc.Close)
		l := NewValkeyLease(ValkeyLeaseOptions{Client: vc, TTL: leaseTTL, ReplicaID: fmt.Sprintf("replica-%d", n)})
		n++
		svc := New(Config{
			Addr: ch.TCPAddr, HTTPAddr: ch.HTTPAddr, Schema: schema.Options{Database: "lease"}, SpoolDir: t.TempDir(),
			FlushInterval: 200 * time.Millisecond, MaxSymbols: 1, Live: true, Lease: l,
			Exchanges: []Exchange{&refExchange{client: client, desc: desc}},
		})
		ctx, cancel := context.WithCancel(context.Background())
		r := &replica{svc: svc, lease: l, cancel: cancel, done: make(chan error, 1)}
		go func() { r.done <- svc.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-r.done })
		return r
	}
	live := func(r *replica) uint64 {
		var n uint64
		for _, e := range r.svc.Exchanges() {
			for _, v := range e.LiveRows {
				n += v
			}
		}
		return n
	}
	// Waits that normally end at once or within one renewal period; the bound is only for a broken lease.
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	a := start()
	waitFor("replica a to lead and ingest", func() bool { return a.svc.Leading("reference") && live(a) > 0 })
	if h := holder(); h != a.lease.ID() {
		t.Fatalf("lease held by %q, want replica a (%s)", h, a.lease.ID())
	}
	b := start()
	waitFor("replica b to be ready", func() bool { _, err := b.svc.Store(); return err == nil })
	// While a holds the lease, b asks for it (at once, then every TTL/3) and never gets it: b ingests nothing. The
	// watch spans b's first attempts; nothing here can change with the machine's speed, a's lease outlives it.
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if b.svc.Leading("reference") || live(b) != 0 || !a.svc.Leading("reference") {
			t.Fatalf("a leads %v, b leads %v with %d live rows", a.svc.Leading("reference"), b.svc.Leading("reference"), live(b))
		}
	}
	waitFor("replica a to write trades", func() bool { return a.svc.Stats().WrittenByTable[schema.Trades] > 0 })

	// a dies without giving the lease back, as after a crash: the key still names a.
	a.lease.keepOnRelease = true
	a.cancel()
	<-a.done
	a.done <- nil // for the cleanup
	if a.svc.Leading("reference") {
		t.Fatal("a still leads after it stopped")
	}
	if h := holder(); h != a.lease.ID() {
		t.Fatalf("after the crash the lease names %q, want the dead replica a", h)
	}
	if b.svc.Leading("reference") || live(b) != 0 {
		t.Fatal("b took over while the dead replica's lease was still alive")
	}
	// The TTL passes (brought forward): b takes the lapsed lease on its next attempt, and ingests.
	if err := probe.Do(context.Background(), probe.B().Pexpire().Key(key).Milliseconds(1).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	waitFor("replica b to take over", func() bool { return b.svc.Leading("reference") && live(b) > 0 })
	if h := holder(); h != b.lease.ID() {
		t.Fatalf("after the takeover the lease names %q, want replica b (%s)", h, b.lease.ID())
	}
}
