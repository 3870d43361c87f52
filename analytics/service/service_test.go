package service

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

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
	deadline := time.Now().Add(60 * time.Second)
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
