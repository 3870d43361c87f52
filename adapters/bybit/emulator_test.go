package bybit_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/exhub/exhub/adapters/bybit"
	"github.com/exhub/exhub/adapters/bybit/emulator"
	"github.com/exhub/exhub/adapters/venue"
	"github.com/exhub/exhub/plugin-sdk/conformance"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
	"github.com/exhub/exhub/plugin-sdk/sdktest"
)

// world is a venue moving in real time, the Bybit emulator over it on a loopback listener, and the adapter served
// in-process over gRPC, configured to the emulator.
type world struct {
	v   *venue.Venue
	emu *emulator.Server
	ts  *httptest.Server
	srv *bybit.Server
	c   exchangev1.ExchangeClient
}

var (
	sharedOnce  sync.Once
	sharedWorld *world
	sharedErr   error
)

func newWorld() (*world, error) {
	v, err := venue.New(venue.Config{Profile: "bybit", Seed: 13, Simulate: true, HistoryDays: 1, StepInterval: 250 * time.Millisecond})
	if err != nil {
		return nil, err
	}
	go func() { _ = v.Run(context.Background()) }() // lives for the test binary
	emu, err := emulator.New(emulator.Config{Venue: v, DisableRateLimits: true, Credentials: []emulator.Credentials{
		{APIKey: otherKey, Secret: otherSecret, Account: otherAccount}}})
	if err != nil {
		return nil, err
	}
	ts := httptest.NewServer(emu.Handler())
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	srv := bybit.New(bybit.Options{Logger: log})
	c, _, err := sdktest.ServeInProcess(srv)
	if err != nil {
		return nil, err
	}
	settings := emulator.PluginSettings(ts.URL)
	settings["reconnect_min"] = "50ms"
	settings["reconnect_max"] = "500ms"
	settings["rest_timeout"] = "30s"
	if _, err := c.Configure(context.Background(), &exchangev1.ConfigureRequest{Settings: settings}); err != nil {
		return nil, err
	}
	return &world{v: v, emu: emu, ts: ts, srv: srv, c: c}, nil
}

func shared(t *testing.T) *world {
	t.Helper()
	sharedOnce.Do(func() { sharedWorld, sharedErr = newWorld() })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return sharedWorld
}

// TestConformance runs the kit's market-data checks through the adapter against the emulator; trading, account
// and wallet checks do not apply (Describe claims none of them).
func TestConformance(t *testing.T) {
	w := shared(t)
	conformance.Test(t, w.c, conformance.Options{StreamWait: 20 * time.Second, CheckTimeout: 2 * time.Minute})
}

// TestCandlePagesWalkBack pages 1m and 1h candles back with end_time = first open - 1: contiguous, no repeats,
// 1000 per page while the history lasts.
func TestCandlePagesWalkBack(t *testing.T) {
	w := shared(t)
	ctx := context.Background()
	for _, c := range []struct {
		mt exchangev1.MarketType
		iv string
		ms int64
	}{{exchangev1.MarketType_MARKET_TYPE_SPOT, "1m", 60_000}, {exchangev1.MarketType_MARKET_TYPE_SWAP, "1m", 60_000},
		{exchangev1.MarketType_MARKET_TYPE_SWAP, "5m", 300_000}} {
		var end int64
		var prevFirst int64
		for page := 0; page < 2; page++ {
			r, err := w.c.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: c.mt, Symbol: "BTCUSDT", Interval: c.iv, Limit: 1000, EndTime: end})
			if err != nil {
				t.Fatal(err)
			}
			cs := r.GetCandles()
			if page == 0 && len(cs) != 1000 && c.iv == "1m" {
				t.Fatalf("%v %s page %d: %d candles", c.mt, c.iv, page, len(cs))
			}
			for i := 1; i < len(cs); i++ {
				if cs[i].GetOpenTime() != cs[i-1].GetOpenTime()+c.ms {
					t.Fatalf("%v %s page %d: gap at %d", c.mt, c.iv, page, i)
				}
			}
			if page > 0 && len(cs) > 0 && cs[len(cs)-1].GetOpenTime() != prevFirst-c.ms {
				t.Fatalf("%v %s: page %d ends at %d, want %d", c.mt, c.iv, page, cs[len(cs)-1].GetOpenTime(), prevFirst-c.ms)
			}
			if len(cs) == 0 {
				break
			}
			prevFirst = cs[0].GetOpenTime()
			end = prevFirst - 1
		}
	}
	// 1d, 1w and 1M candles open at 00:00 UTC (weeks on Monday, months on the 1st).
	for _, iv := range []string{"1d", "1w", "1M"} {
		r, err := w.c.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: "BTCUSDT", Interval: iv, Limit: 3})
		if err != nil || len(r.GetCandles()) == 0 {
			t.Fatalf("%s: %v", iv, err)
		}
		ot := time.UnixMilli(r.GetCandles()[len(r.GetCandles())-1].GetOpenTime()).UTC()
		if ot.Hour() != 0 || ot.Minute() != 0 || (iv == "1w" && ot.Weekday() != time.Monday) || (iv == "1M" && ot.Day() != 1) {
			t.Errorf("%s opens at %v", iv, ot)
		}
	}
	if _, err := w.c.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: "BTCUSDT", Interval: "8h"}); sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT {
		t.Errorf("8h: %v", err)
	}
}

// TestInstrumentCursor reads linear instruments three at a time through nextPageCursor: the same list as one page.
func TestInstrumentCursor(t *testing.T) {
	w := shared(t)
	ctx := context.Background()
	all, err := w.c.ListInstruments(ctx, &exchangev1.ListInstrumentsRequest{MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP})
	if err != nil {
		t.Fatal(err)
	}
	w.srv.SetInstrumentsPage(3)
	defer w.srv.SetInstrumentsPage(1000)
	paged, err := w.c.ListInstruments(ctx, &exchangev1.ListInstrumentsRequest{MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.GetInstruments()) < 10 || len(paged.GetInstruments()) != len(all.GetInstruments()) {
		t.Fatalf("%d instruments in pages of 3, %d in one", len(paged.GetInstruments()), len(all.GetInstruments()))
	}
	for i, in := range paged.GetInstruments() {
		if in.GetSymbol() != all.GetInstruments()[i].GetSymbol() || in.GetContractValue() != "1" || in.GetSettle() != "USDT" {
			t.Fatalf("instrument %d: %v", i, in)
		}
	}
}

// TestAnalyticsWindow asks open interest and long/short for a window: the newest points inside it, ascending, one
// period apart.
func TestAnalyticsWindow(t *testing.T) {
	w := shared(t)
	ctx := context.Background()
	end := (time.Now().UnixMilli()/3_600_000 - 3) * 3_600_000
	start := end - 9*3_600_000
	series := &exchangev1.SeriesRequest{Symbol: "BTCUSDT", Period: "1h", StartTime: start, EndTime: end, Limit: 5}
	oi, err := w.c.GetOpenInterestHistory(ctx, &exchangev1.GetOpenInterestHistoryRequest{Series: series})
	if err != nil {
		t.Fatal(err)
	}
	ls, err := w.c.GetLongShortRatioHistory(ctx, &exchangev1.GetLongShortRatioHistoryRequest{Series: series})
	if err != nil {
		t.Fatal(err)
	}
	for name, times := range map[string][]int64{"open interest": timesOf(oi.GetPoints()), "long/short": timesOf(ls.GetPoints())} {
		if len(times) != 5 || times[4] != end || times[0] != end-4*3_600_000 {
			t.Errorf("%s: %v, want the 5 newest hours up to %d", name, times, end)
		}
	}
	if p := oi.GetPoints()[0]; p.GetOpenInterest() == "" || p.GetOpenInterestValue() == "" {
		t.Errorf("open interest point %v", p)
	}
	if _, err := w.c.GetTakerVolumeHistory(ctx, &exchangev1.GetTakerVolumeHistoryRequest{Series: series}); sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED {
		t.Errorf("taker volume: %v", err)
	}
	fr, err := w.c.GetFundingRateHistory(ctx, &exchangev1.GetFundingRateHistoryRequest{Symbol: "BTCUSDT", StartTime: time.Now().Add(-20 * time.Hour).UnixMilli()})
	if err != nil || len(fr.GetRates()) < 2 {
		t.Fatalf("funding history from a start time: %v %v", fr, err)
	}
}

func timesOf[T interface{ GetTime() int64 }](pts []T) []int64 {
	out := make([]int64, len(pts))
	for i, p := range pts {
		out[i] = p.GetTime()
	}
	return out
}

// TestStreamReconnect drops the emulator's connections: the stream says RECONNECTING, then RESYNCED, and a fresh
// book snapshot follows with the next sequence.
func TestStreamReconnect(t *testing.T) {
	w := shared(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := w.c.StreamMarket(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sub := &exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_BOOK, MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT, Symbol: "BTCUSDT", Depth: 50}
	if err := stream.Send(&exchangev1.StreamMarketRequest{Op: exchangev1.StreamMarketRequest_OP_SUBSCRIBE, Subscriptions: []*exchangev1.Subscription{sub}}); err != nil {
		t.Fatal(err)
	}
	var seq int64
	wait := func(what string, ok func(*exchangev1.MarketEvent) bool) {
		t.Helper()
		for {
			ev, err := stream.Recv()
			if err != nil {
				t.Fatalf("waiting for %s: %v", what, err)
			}
			if s := ev.GetBookSnapshot(); s != nil {
				if s.GetSequence() <= seq {
					t.Fatalf("snapshot sequence %d after %d", s.GetSequence(), seq)
				}
				seq = s.GetSequence()
			}
			if d := ev.GetBookDelta(); d != nil {
				if d.GetPrevSequence() != seq {
					t.Fatalf("delta %d after %d", d.GetPrevSequence(), seq)
				}
				seq = d.GetSequence()
			}
			if ok(ev) {
				return
			}
		}
	}
	state := func(st exchangev1.StreamStatus_State) func(*exchangev1.MarketEvent) bool {
		return func(ev *exchangev1.MarketEvent) bool { return ev.GetStatus().GetState() == st }
	}
	wait("a snapshot", func(ev *exchangev1.MarketEvent) bool { return ev.GetBookSnapshot() != nil })
	wait("a delta", func(ev *exchangev1.MarketEvent) bool { return ev.GetBookDelta() != nil })
	if n := w.emu.DropConnections(); n == 0 {
		t.Fatal("no connection to drop")
	}
	wait("RECONNECTING", state(exchangev1.StreamStatus_STATE_RECONNECTING))
	wait("RESYNCED", state(exchangev1.StreamStatus_STATE_RESYNCED))
	wait("a fresh snapshot", func(ev *exchangev1.MarketEvent) bool { return ev.GetBookSnapshot() != nil })
}
