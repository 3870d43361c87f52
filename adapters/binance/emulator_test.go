package binance

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/exhub/exhub/adapters/binance/emulator"
	"github.com/exhub/exhub/adapters/venue"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// emu runs the Binance emulator on a venue in-process and returns a configured Server against it.
func emu(t *testing.T) (*Server, *emulator.Server) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	// A few instruments (see plugins/binance/main_test.go): all-symbol calls take the venue lock once per symbol.
	prof, err := venue.LoadProfile("binance")
	if err != nil {
		t.Fatal(err)
	}
	vc := venue.Config{Profile: "binance", Seed: 7, Simulate: true, HistoryDays: 1}
	for _, in := range prof.Instruments {
		if in.Base == "BTC" || in.Base == "ETH" || in.Base == "SOL" {
			vc.Instruments = append(vc.Instruments, in)
		}
	}
	v, err := venue.New(vc)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); v.Run(ctx) }()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	e, err := emulator.New(emulator.Config{Venue: v, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(e.Handler())
	t.Cleanup(func() { hs.Close(); e.Close(); cancel(); <-done })
	s := New(Options{Logger: log})
	settings := emulator.PluginSettings(hs.URL)
	settings[SettingHTTPTimeout] = "60s" // generous: the race detector and parallel packages share the cores
	if _, err := s.Configure(ctx, &exchangev1.ConfigureRequest{Settings: settings}); err != nil {
		t.Fatal(err)
	}
	return s, e
}

func TestEmulatorMarketData(t *testing.T) {
	s, _ := emu(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, mt := range []exchangev1.MarketType{exchangev1.MarketType_MARKET_TYPE_SPOT, exchangev1.MarketType_MARKET_TYPE_SWAP} {
		ins, err := s.ListInstruments(ctx, &exchangev1.ListInstrumentsRequest{MarketType: mt})
		if err != nil || len(ins.Instruments) == 0 {
			t.Fatalf("%v instruments: %v", mt, err)
		}
		sym := ins.Instruments[0].Symbol
		for _, in := range ins.Instruments {
			if in.Symbol == "BTCUSDT" {
				sym = in.Symbol
			}
		}
		tk, err := s.GetTickers(ctx, &exchangev1.GetTickersRequest{MarketType: mt, Symbols: []string{sym}})
		if err != nil || len(tk.Tickers) != 1 || tk.Tickers[0].Last == "" {
			t.Fatalf("%v tickers: %v %+v", mt, err, tk)
		}
		if mt == exchangev1.MarketType_MARKET_TYPE_SWAP && tk.Tickers[0].MarkPrice == "" {
			t.Errorf("perp ticker without mark price")
		}
		ob, err := s.GetOrderBook(ctx, &exchangev1.GetOrderBookRequest{MarketType: mt, Symbol: sym, Depth: 10})
		if err != nil || len(ob.Book.Bids) == 0 || len(ob.Book.Bids) > 10 || ob.Book.Sequence == 0 {
			t.Fatalf("%v book: %v", mt, err)
		}
		cs, err := s.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: mt, Symbol: sym, Interval: "1m", Limit: 30})
		if err != nil || len(cs.Candles) == 0 || len(cs.Candles) > 30 {
			t.Fatalf("%v candles: %v", mt, err)
		}
		first := cs.Candles[0].OpenTime
		p2, err := s.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: mt, Symbol: sym, Interval: "1m", Limit: 30, EndTime: first - 1})
		if err != nil || len(p2.Candles) == 0 || p2.Candles[len(p2.Candles)-1].OpenTime >= first {
			t.Fatalf("%v candle page 2: %v", mt, err)
		}
		if _, err := s.GetTrades(ctx, &exchangev1.GetTradesRequest{MarketType: mt, Symbol: sym, Limit: 20}); err != nil {
			t.Fatalf("%v trades: %v", mt, err)
		}
		_, err = s.GetOrderBook(ctx, &exchangev1.GetOrderBookRequest{MarketType: mt, Symbol: "NOPEUSDT"})
		if sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND {
			t.Fatalf("unknown symbol: %v", err)
		}
	}
	fr, err := s.GetFundingRate(ctx, &exchangev1.GetFundingRateRequest{Symbol: "BTCUSDT"})
	if err != nil || fr.Rate == "" || fr.NextFundingTime == 0 {
		t.Fatalf("funding: %v", err)
	}
	series := &exchangev1.SeriesRequest{Symbol: "BTCUSDT", Period: "5m", Limit: 10}
	if r, err := s.GetOpenInterestHistory(ctx, &exchangev1.GetOpenInterestHistoryRequest{Series: series}); err != nil || len(r.Points) == 0 {
		t.Fatalf("oi: %v", err)
	}
	if r, err := s.GetLongShortRatioHistory(ctx, &exchangev1.GetLongShortRatioHistoryRequest{Series: series,
		Kind: exchangev1.LongShortRatioKind_LONG_SHORT_RATIO_KIND_TOP_POSITIONS}); err != nil || len(r.Points) == 0 {
		t.Fatalf("ls: %v", err)
	}
	if r, err := s.GetTakerVolumeHistory(ctx, &exchangev1.GetTakerVolumeHistoryRequest{Series: series}); err != nil || len(r.Points) == 0 {
		t.Fatalf("taker: %v", err)
	}
	if h, err := s.Health(ctx, &exchangev1.HealthRequest{}); err != nil || !h.Ok {
		t.Fatalf("health: %v %+v", err, h)
	}
}

func TestConfigure(t *testing.T) {
	s := New(Options{})
	ctx := context.Background()
	_, err := s.Configure(ctx, &exchangev1.ConfigureRequest{Settings: map[string]string{"bogus": "1"}})
	if sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT {
		t.Fatalf("unknown key: %v", err)
	}
	for k, v := range map[string]string{SettingSpotRESTURL: "ftp://x", SettingSpotWSURL: "http://x", SettingHTTPTimeout: "-1s", SettingRecvWindow: "2m"} {
		if _, err := s.Configure(ctx, &exchangev1.ConfigureRequest{Settings: map[string]string{k: v}}); err == nil {
			t.Errorf("%s=%s accepted", k, v)
		}
	}
	d, _ := s.Describe(ctx, &exchangev1.DescribeRequest{})
	if d.Exchange.Key != 1 || d.Exchange.Slug != "binance" || len(d.Settings) != 7 || d.Capabilities.PageLimits.Candles != 1000 {
		t.Fatalf("describe: %+v", d.Exchange)
	}
}

// The emulator answers 429 with Retry-After: the call is RATE_LIMITED; calls during the ban fail at once without
// reaching the exchange; after Retry-After they go through again. 418 is RATE_LIMITED too.
func TestEmulatorRateLimitBackoff(t *testing.T) {
	s, e := emu(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req := &exchangev1.GetTickersRequest{MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT, Symbols: []string{"BTCUSDT"}}
	if _, err := s.GetTickers(ctx, req); err != nil { // instruments loaded before the injection
		t.Fatal(err)
	}
	// A long Retry-After: the ban certainly lasts for the next call, however slow the machine.
	e.InjectRateLimit(429, time.Minute, 1)
	_, err := s.GetTickers(ctx, req)
	if d := sdk.DetailOf(err); d.GetReason() != exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED || d.GetExchangeCode() != "-1003" {
		t.Fatalf("429: %v", err)
	}
	// A second injected failure would show if a call reached the emulator during the ban.
	e.InjectRateLimit(429, time.Minute, 1)
	_, err = s.GetTickers(ctx, req)
	if d := sdk.DetailOf(err); d.GetReason() != exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED || d.GetExchangeCode() != "" || d.GetRetryAfterMs() <= 0 {
		t.Fatalf("during the ban: %v (%+v)", err, d)
	}
	// The ban lives in the REST client: a reconfigured plugin starts without it (instead of sleeping it out).
	e.InjectRateLimit(0, 0, 0)
	if _, err := s.Configure(ctx, &exchangev1.ConfigureRequest{Settings: emulator.PluginSettings(s.cfg.endpoints.SpotREST)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetTickers(ctx, req); err != nil {
		t.Fatalf("after the ban: %v", err)
	}
	e.InjectRateLimit(418, 0, 1)
	if _, err := s.GetTickers(ctx, req); sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED {
		t.Fatalf("418: %v", err)
	}
}
