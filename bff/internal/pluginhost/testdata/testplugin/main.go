// Command testplugin is a small exchange plugin for the plugin host's tests. It answers Describe, Configure and
// Health, and streams books (a snapshot, then contiguous deltas) and trades. Environment:
//
//	TESTPLUGIN_LOG    append one line per launch and per Describe/Configure/PlaceOrder call to this file, and at
//	                  launch one "env <pid> NAME" line per variable of the process environment
//	TESTPLUGIN_EXIT   exit with status 3 right away (a plugin that cannot start)
//	TESTPLUGIN_PERIOD interval between stream events (default 5ms; "0" floods as fast as possible)
//
// Misbehaviour on purpose: GetTickers panics (its panic message holds the requested symbols); StreamAccount panics
// for the api key "panic"; PlaceOrder logs its client order id and then never answers (the test kills the process
// mid-call).
//
// StreamAccount sends a sequenced account stream through sdk.AccountSender: CONNECTED, a snapshot (its open order's id is
// "<pid>-<call>"), then fills with trade ids 1, 2, 3, ... (per call). AccountRef.extra tunes it:
//
//	events     how many fills to send (default 0: none), then the stream idles
//	period_ms  pause between fills (default 0)
//	gap_at     on the first call of the process only, skip one sequence number after this many fills
//	no_snapshot on the first call of the process only, start with a fill instead of a snapshot
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

func logLine(format string, args ...any) {
	path := os.Getenv("TESTPLUGIN_LOG")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, format+"\n", args...)
}

type server struct {
	exchangev1.UnimplementedExchangeServer
	mu       sync.Mutex
	settings map[string]string
}

func (s *server) Describe(context.Context, *exchangev1.DescribeRequest) (*exchangev1.DescribeResponse, error) {
	logLine("describe %d", os.Getpid())
	return &exchangev1.DescribeResponse{
		Exchange: &exchangev1.ExchangeInfo{
			Key: 100, Slug: "test", Name: "Test Exchange", PluginVersion: "0.1.0",
			Status: exchangev1.ExchangeStatus_EXCHANGE_STATUS_AVAILABLE, LogoSvg: "<svg xmlns=\"http://www.w3.org/2000/svg\"/>",
			Website: "https://example.invalid",
		},
		Capabilities: &exchangev1.Capabilities{
			MarketTypes: []exchangev1.MarketType{exchangev1.MarketType_MARKET_TYPE_SPOT},
			Streams:     &exchangev1.StreamCapabilities{Book: true, Trades: true},
		},
	}, nil
}

func (s *server) Configure(_ context.Context, req *exchangev1.ConfigureRequest) (*exchangev1.ConfigureResponse, error) {
	keys := make([]string, 0, len(req.GetSettings()))
	for k, v := range req.GetSettings() {
		if k != "endpoint" {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, k, "unknown setting %q", k)
		}
		keys = append(keys, k+"="+v)
	}
	logLine("configure %d %s", os.Getpid(), strings.Join(keys, ","))
	s.mu.Lock()
	s.settings = req.GetSettings()
	s.mu.Unlock()
	return &exchangev1.ConfigureResponse{}, nil
}

func (s *server) Health(context.Context, *exchangev1.HealthRequest) (*exchangev1.HealthResponse, error) {
	return &exchangev1.HealthResponse{Ok: true, Message: "ok"}, nil
}

type activeSub struct {
	sub *exchangev1.Subscription
	seq int64
	new bool
}

func (s *server) StreamMarket(stream exchangev1.Exchange_StreamMarketServer) error {
	ops := make(chan *exchangev1.StreamMarketRequest, 16)
	recvErr := make(chan error, 1)
	go func() { // ends when the stream ends (Recv fails)
		for {
			req, err := stream.Recv()
			if err != nil {
				recvErr <- err
				return
			}
			select {
			case ops <- req:
			case <-stream.Context().Done():
				return
			}
		}
	}()
	period := 5 * time.Millisecond
	if v := os.Getenv("TESTPLUGIN_PERIOD"); v != "" {
		if d, err := time.ParseDuration(v + "ms"); err == nil {
			period = d
		}
	}
	var tick <-chan time.Time
	if period > 0 {
		t := time.NewTicker(period)
		defer t.Stop()
		tick = t.C
	}
	subs := map[string]*activeSub{}
	// Sequences start from the launch time so a restarted process does not repeat the previous one's numbers.
	base := time.Now().UnixMilli() * 1000
	price := int64(40000)
	for {
		if period == 0 && len(subs) > 0 {
			select {
			case req := <-ops:
				apply(subs, req, base)
			case err := <-recvErr:
				return err
			case <-stream.Context().Done():
				return nil
			default:
			}
		} else {
			select {
			case req := <-ops:
				apply(subs, req, base)
				continue
			case err := <-recvErr:
				return err
			case <-stream.Context().Done():
				return nil
			case <-tick:
			}
		}
		now := time.Now().UnixMilli()
		price++
		for _, a := range subs {
			var ev *exchangev1.MarketEvent
			switch a.sub.GetChannel() {
			case exchangev1.Channel_CHANNEL_BOOK:
				if a.new {
					a.new = false
					ev = &exchangev1.MarketEvent{Subscription: a.sub, Time: now, Event: &exchangev1.MarketEvent_BookSnapshot{
						BookSnapshot: &exchangev1.BookUpdate{
							Bids:     []*exchangev1.PriceLevel{{Price: "39999", Qty: "1"}},
							Asks:     []*exchangev1.PriceLevel{{Price: "40001", Qty: "1"}},
							Sequence: a.seq,
						}}}
				} else {
					prev := a.seq
					a.seq++
					ev = &exchangev1.MarketEvent{Subscription: a.sub, Time: now, Event: &exchangev1.MarketEvent_BookDelta{
						BookDelta: &exchangev1.BookUpdate{
							Bids:         []*exchangev1.PriceLevel{{Price: fmt.Sprint(price - 1), Qty: "0.5"}},
							Sequence:     a.seq,
							PrevSequence: prev,
						}}}
				}
			case exchangev1.Channel_CHANNEL_TRADES:
				ev = &exchangev1.MarketEvent{Subscription: a.sub, Time: now, Event: &exchangev1.MarketEvent_Trade{
					Trade: &exchangev1.Trade{Price: fmt.Sprint(price), Qty: "0.01", Time: now}}}
			default:
				continue
			}
			if err := stream.Send(ev); err != nil {
				return err
			}
		}
	}
}

func apply(subs map[string]*activeSub, req *exchangev1.StreamMarketRequest, base int64) {
	for _, sub := range req.GetSubscriptions() {
		k := fmt.Sprintf("%d|%d|%s", sub.GetChannel(), sub.GetMarketType(), sub.GetSymbol())
		if req.GetOp() == exchangev1.StreamMarketRequest_OP_UNSUBSCRIBE {
			delete(subs, k)
			continue
		}
		subs[k] = &activeSub{sub: sub, seq: base, new: true}
	}
}

// accountCalls counts StreamAccount calls of this process.
var accountCalls atomic.Int64

func (s *server) GetTickers(_ context.Context, req *exchangev1.GetTickersRequest) (*exchangev1.GetTickersResponse, error) {
	panic("tickers exploded for " + strings.Join(req.GetSymbols(), ","))
}

func (s *server) PlaceOrder(ctx context.Context, req *exchangev1.PlaceOrderRequest) (*exchangev1.PlaceOrderResponse, error) {
	logLine("place %d %s", os.Getpid(), req.GetClientOrderId())
	<-ctx.Done()
	return nil, ctx.Err()
}

func (s *server) StreamAccount(req *exchangev1.StreamAccountRequest, stream exchangev1.Exchange_StreamAccountServer) error {
	acct := req.GetAccount()
	if acct.GetApiKey() == "panic" {
		panic("account stream exploded for key " + acct.GetApiSecret())
	}
	call := accountCalls.Add(1)
	extra := acct.GetExtra()
	num := func(k string) int64 {
		n, _ := strconv.ParseInt(extra[k], 10, 64)
		return n
	}
	events, period, gapAt := num("events"), time.Duration(num("period_ms"))*time.Millisecond, num("gap_at")
	out := sdk.NewAccountSender(stream)
	fill := func(n int64) *exchangev1.AccountEvent {
		return &exchangev1.AccountEvent{Event: &exchangev1.AccountEvent_Fill{Fill: &exchangev1.Fill{
			TradeId: strconv.FormatInt(n, 10), OrderId: "o1", Symbol: "BTCUSDT", Price: "40000", Qty: "0.001",
		}}}
	}
	if err := out.Status(exchangev1.StreamStatus_STATE_CONNECTED, "connected"); err != nil {
		return err
	}
	if call == 1 && extra["no_snapshot"] != "" {
		if err := out.Send(fill(0)); err != nil {
			return err
		}
	}
	snap := &exchangev1.AccountSnapshot{
		OpenOrders: []*exchangev1.Order{{OrderId: fmt.Sprintf("%d-%d", os.Getpid(), call), Symbol: "BTCUSDT"}},
		Balances:   []*exchangev1.Balance{{Asset: "USDT", Total: "1000", Available: "1000", Locked: "0"}},
	}
	if err := out.Snapshot(snap); err != nil {
		return err
	}
	for n := int64(1); n <= events; n++ {
		if call == 1 && gapAt > 0 && n == gapAt+1 {
			// A lost event: the next one jumps a sequence number.
			if err := stream.Send(&exchangev1.AccountEvent{Sequence: out.Sequence() + 2, Time: time.Now().UnixMilli(),
				Event: fill(n).Event}); err != nil {
				return err
			}
			continue
		}
		if err := out.Send(fill(n)); err != nil {
			return err
		}
		if period > 0 {
			select {
			case <-time.After(period):
			case <-stream.Context().Done():
				return nil
			}
		}
	}
	<-stream.Context().Done()
	return nil
}

func main() {
	logLine("start %d", os.Getpid())
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		logLine("env %d %s", os.Getpid(), name)
	}
	if os.Getenv("TESTPLUGIN_EXIT") != "" {
		os.Exit(3)
	}
	sdk.Serve(&server{})
}
