package market

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/valkey-io/valkey-go"

	"github.com/exhub/exhub/bff/internal/cache"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newClock() *clock { return &clock{t: time.Unix(1_800_000_000, 0)} }

func newService(t *testing.T, c cache.Cache, clk *clock, exs ...Exchange) *Service {
	t.Helper()
	if c == nil {
		c = cache.NewMemory(100)
	}
	return New(Options{Exchanges: exs, Cache: c, Now: clk.now})
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestInstrumentsFilteredWithDefaultLeverage(t *testing.T) {
	f := newFake("fx", 1)
	s := newService(t, nil, newClock(), Exchange{Key: 1, Slug: "fx", Plugin: f})
	got, fr, err := s.Instruments(ctx(t), "fx", "SWAP")
	if err != nil {
		t.Fatal(err)
	}
	var syms []string
	for _, i := range got {
		syms = append(syms, i.Symbol+"/"+i.MaxLeverage)
		if i.Type != "SWAP" || i.Quote != "USDT" || i.Status != "TRADING" {
			t.Fatalf("bad instrument %+v", i)
		}
	}
	// Sorted; delisted and USDC-quoted left out; ETH had no max leverage: 5.
	if fmt.Sprint(syms) != "[BTCUSDT/125 ETHUSDT/5 SOLUSDT/50 XRPUSDT/50]" {
		t.Fatalf("swap instruments %v", syms)
	}
	if fr.Stale || fr.AsOf == 0 {
		t.Fatalf("freshness %+v", fr)
	}
	got, _, err = s.Instruments(ctx(t), "fx", "SPOT")
	if err != nil || len(got) != 1 || got[0].Symbol != "BTCUSDT" || got[0].MaxLeverage != "1" {
		t.Fatalf("spot instruments %+v %v", got, err)
	}
}

func assertField(t *testing.T, err error, field string) {
	t.Helper()
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != field {
		t.Fatalf("want a FieldError on %q, got %v", field, err)
	}
}

func TestValidationNamesTheField(t *testing.T) {
	f := newFake("fx", 1)
	s := newService(t, nil, newClock(), Exchange{Key: 1, Slug: "fx", Plugin: f}, Exchange{Key: 3, Slug: "soon", Status: StatusComingSoon})
	c := ctx(t)
	_, _, err := s.Tickers(c, "nope", "SWAP")
	assertField(t, err, "exchange")
	_, _, err = s.Tickers(c, "soon", "SWAP")
	assertField(t, err, "exchange")
	_, _, err = s.Tickers(c, "fx", "FUTURES")
	assertField(t, err, "type")
	_, _, err = s.Candles(c, "fx", "SWAP", "NOPEUSDT", "1m", 0, 10)
	assertField(t, err, "symbol")
	_, _, err = s.Candles(c, "fx", "SWAP", "OLDUSDT", "1m", 0, 10) // delisted: not listed
	assertField(t, err, "symbol")
	_, _, err = s.Candles(c, "fx", "SWAP", "BTCUSDT", "7m", 0, 10)
	assertField(t, err, "interval")
	_, _, err = s.Candles(c, "fx", "SWAP", "BTCUSDT", "1m", 0, MaxCandles+1)
	assertField(t, err, "limit")
	_, _, err = s.Candles(c, "fx", "SWAP", "BTCUSDT", "1m", -5, 10)
	assertField(t, err, "end")
	_, _, err = s.OrderBook(c, "fx", "SWAP", "BTCUSDT", 21) // plugin depth limit 20
	assertField(t, err, "depth")
	_, _, err = s.Trades(c, "fx", "SWAP", "BTCUSDT", 201) // plugin trades limit 200
	assertField(t, err, "limit")
	_, _, err = s.Movers(c, MaxMovers+1)
	assertField(t, err, "limit")

	// A type the plugin does not describe.
	f.desc.Capabilities.MarketTypes = f.desc.Capabilities.MarketTypes[:1]
	_, _, err = s.Tickers(c, "fx", "SWAP")
	assertField(t, err, "type")
}

// A cold cache never stampedes the plugin: 64 concurrent requests cost one ListInstruments and one GetTickers.
func TestColdCacheSingleFlight(t *testing.T) {
	f := newFake("fx", 1)
	f.c.delay = 50 * time.Millisecond
	s := newService(t, nil, newClock(), Exchange{Key: 1, Slug: "fx", Plugin: f})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tk, _, err := s.Tickers(context.Background(), "fx", "SWAP")
			if err == nil && len(tk) != 4 {
				err = fmt.Errorf("%d tickers", len(tk))
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := f.c.count("GetTickers"); n != 1 {
		t.Fatalf("GetTickers called %d times", n)
	}
	if n := f.c.count("ListInstruments"); n != 1 {
		t.Fatalf("ListInstruments called %d times", n)
	}
	// Warm: no more calls.
	if _, _, err := s.Tickers(context.Background(), "fx", "SWAP"); err != nil {
		t.Fatal(err)
	}
	if n := f.c.count("GetTickers"); n != 1 {
		t.Fatalf("warm call reached the plugin: %d", n)
	}
	// Same for candles: identical concurrent requests share one paged fetch.
	f.c.mu.Lock()
	f.c.calls = nil
	f.c.mu.Unlock()
	var wg2 sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg2.Add(1)
		go func() {
			defer wg2.Done()
			_, _, _ = s.Candles(context.Background(), "fx", "SWAP", "BTCUSDT", "1m", 0, 50)
		}()
	}
	wg2.Wait()
	if n := f.c.count("GetCandles"); n != 1 {
		t.Fatalf("GetCandles called %d times for 16 identical requests", n)
	}
}

func valkeyOnMiniredis(t *testing.T) cache.Cache {
	t.Helper()
	mr := miniredis.RunT(t)
	v, err := cache.OpenValkey(context.Background(), cache.Config{Addr: mr.Addr(), ValkeyOption: func(o *valkey.ClientOption) {
		o.DisableCache = true
		o.AlwaysRESP2 = true
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	return v
}

// Two replicas share the Valkey copy: the second one serves instruments and tickers without calling its plugin,
// and the ticker refresher adopts a value another replica stored moments ago.
func TestSharedCacheAcrossReplicas(t *testing.T) {
	shared := valkeyOnMiniredis(t)
	clk := newClock()
	fa, fb := newFake("fx", 1), newFake("fx", 1)
	a := newService(t, shared, clk, Exchange{Key: 1, Slug: "fx", Plugin: fa})
	b := newService(t, shared, clk, Exchange{Key: 1, Slug: "fx", Plugin: fb})
	for _, typ := range []string{"SPOT", "SWAP"} {
		if _, _, err := a.Tickers(ctx(t), "fx", typ); err != nil {
			t.Fatal(err)
		}
	}
	tk, _, err := b.Tickers(ctx(t), "fx", "SWAP")
	if err != nil || len(tk) != 4 {
		t.Fatalf("replica b: %v %v", tk, err)
	}
	if fb.c.count("GetTickers") != 0 || fb.c.count("ListInstruments") != 0 {
		t.Fatalf("replica b called its plugin: %v", fb.c.calls)
	}
	clk.add(2 * time.Second)
	b.RefreshTickers(ctx(t), "fx") // a's value is 2 s old, under half the 10 s interval: adopted
	if n := fb.c.count("GetTickers"); n != 0 {
		t.Fatalf("refresh did not adopt the shared value: %d calls", n)
	}
	clk.add(4 * time.Second) // now 6 s old
	b.RefreshTickers(ctx(t), "fx")
	if n := fb.c.count("GetTickers"); n != 2 { // SPOT and SWAP
		t.Fatalf("refresh of a 6 s old value: %d calls", n)
	}
}

// A failing plugin: the last good value is served marked stale while fresh enough, then the error is a 503 with a
// retry hint; the plugin is not retried before that hint.
func TestStaleFallbackAndUpstreamErrors(t *testing.T) {
	clk := newClock()
	f := newFake("fx", 1)
	s := newService(t, nil, clk, Exchange{Key: 1, Slug: "fx", Plugin: f})
	c := ctx(t)
	good, fr, err := s.Tickers(c, "fx", "SWAP")
	if err != nil || fr.Stale {
		t.Fatal(err, fr)
	}
	f.c.setTickers(nil)
	f.down.Store(true)
	clk.add(20 * time.Second) // past the 15 s fresh window
	got, fr, err := s.Tickers(c, "fx", "SWAP")
	if err != nil || !fr.Stale || fr.StaleReason != "plugin is not running" || len(got) != len(good) {
		t.Fatalf("stale: %v %+v %v", len(got), fr, err)
	}
	if fr.AsOf != clk.now().Add(-20*time.Second).UnixMilli() {
		t.Fatalf("asOf %d is not the last good fetch", fr.AsOf)
	}
	clk.add(3 * time.Minute) // past TickersMaxStale
	_, _, err = s.Tickers(c, "fx", "SWAP")
	var ue *UpstreamError
	if !errors.As(err, &ue) || ue.Status != http.StatusServiceUnavailable || ue.RetryAfter != retryPluginDown {
		t.Fatalf("want 503 with retry hint, got %v", err)
	}

	// The exchange rate-limits: 503 with its own retry-after, and no new call before it passes.
	f.down.Store(false)
	clk.add(5 * time.Second)
	f.c.setErr(sdk.RateLimited(7*time.Second, "slow down"))
	_, _, err = s.Candles(c, "fx", "SWAP", "BTCUSDT", "1m", 0, 10)
	if !errors.As(err, &ue) || ue.Status != 503 || ue.RetryAfter != 7*time.Second {
		t.Fatalf("rate limited: %v", err)
	}
	// An internal error: 502.
	f.c.setErr(sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "boom"))
	_, _, err = s.Trades(c, "fx", "SWAP", "BTCUSDT", 10)
	if !errors.As(err, &ue) || ue.Status != http.StatusBadGateway {
		t.Fatalf("internal: %v", err)
	}
	// The plugin refuses an argument: 422 naming its field.
	f.c.setErr(sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "depth", "depth too large"))
	_, _, err = s.OrderBook(c, "fx", "SWAP", "BTCUSDT", 5)
	assertField(t, err, "depth")
}

func TestInstrumentFailureIsNotRetriedBeforeItsHint(t *testing.T) {
	clk := newClock()
	f := newFake("fx", 1)
	f.c.setErr(sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "exchange down"))
	s := newService(t, nil, clk, Exchange{Key: 1, Slug: "fx", Plugin: f})
	for i := 0; i < 5; i++ {
		_, _, err := s.Instruments(ctx(t), "fx", "SWAP")
		var ue *UpstreamError
		if !errors.As(err, &ue) || ue.Status != 503 || ue.RetryAfter != retryUnavailable {
			t.Fatalf("%v", err)
		}
	}
	if n := f.c.count("ListInstruments"); n != 1 {
		t.Fatalf("retried %d times within the retry hint", n)
	}
	clk.add(retryUnavailable + time.Millisecond)
	f.c.setErr(nil)
	if _, _, err := s.Instruments(ctx(t), "fx", "SWAP"); err != nil {
		t.Fatal(err)
	}
}

func TestStaleBookAfterFailure(t *testing.T) {
	f := newFake("fx", 1)
	s := newService(t, nil, newClock(), Exchange{Key: 1, Slug: "fx", Plugin: f})
	b, fr, err := s.OrderBook(ctx(t), "fx", "SWAP", "BTCUSDT", 3)
	if err != nil || fr.Stale || len(b.Bids) != 3 || len(b.Asks) != 3 || b.Bids[0].Price != "99" || b.Asks[0].Price != "101" {
		t.Fatalf("book %+v %v", b, err)
	}
	f.c.setErr(sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "exchange down"))
	b2, fr, err := s.OrderBook(ctx(t), "fx", "SWAP", "BTCUSDT", 3)
	if err != nil || !fr.Stale || b2.Sequence != b.Sequence || !strings.Contains(fr.StaleReason, "exchange down") {
		t.Fatalf("stale book %+v %+v %v", b2, fr, err)
	}
	_, _, err = s.OrderBook(ctx(t), "fx", "SWAP", "BTCUSDT", 4) // never fetched: no last good value
	var ue *UpstreamError
	if !errors.As(err, &ue) || ue.Status != 503 {
		t.Fatalf("%v", err)
	}
}

func TestCandlesPagedIntoThePluginLimit(t *testing.T) {
	f := newFake("fx", 1)
	s := newService(t, nil, newClock(), Exchange{Key: 1, Slug: "fx", Plugin: f})
	start := f.c.candleStart
	end := start + 239*60_000 // candle #239
	got, _, err := s.Candles(ctx(t), "fx", "SWAP", "BTCUSDT", "1m", end+30_000, 230)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 230 {
		t.Fatalf("%d candles", len(got))
	}
	for i, c := range got {
		if want := start + int64(10+i)*60_000; c.OpenTime != want {
			t.Fatalf("candle %d open %d, want %d (ascending, contiguous, ending at end)", i, c.OpenTime, want)
		}
	}
	if n := f.c.count("GetCandles"); n != 3 {
		t.Fatalf("%d plugin calls for 230 candles with a page of 100", n)
	}
	for _, r := range f.c.candleReqs {
		if r.GetLimit() > 100 {
			t.Fatalf("page over the plugin limit: %d", r.GetLimit())
		}
	}
	// The history ends: fewer candles than asked, no endless paging.
	got, _, err = s.Candles(ctx(t), "fx", "SWAP", "BTCUSDT", "1m", 0, 1000)
	if err != nil || len(got) != 250 || got[0].OpenTime != start || got[249].OpenTime != start+249*60_000 {
		t.Fatalf("%d candles %v", len(got), err)
	}
	// Before the first candle: empty, not an error.
	got, _, err = s.Candles(ctx(t), "fx", "SWAP", "BTCUSDT", "1m", start-1, 10)
	if err != nil || len(got) != 0 {
		t.Fatalf("%v %v", got, err)
	}
}

func TestTradesOldestFirstAndBookDepth(t *testing.T) {
	f := newFake("fx", 1)
	s := newService(t, nil, newClock(), Exchange{Key: 1, Slug: "fx", Plugin: f})
	tr, _, err := s.Trades(ctx(t), "fx", "SWAP", "BTCUSDT", 0)
	if err != nil || len(tr) != DefaultTrades {
		t.Fatalf("%d %v", len(tr), err)
	}
	for i := 1; i < len(tr); i++ {
		if tr[i].Time < tr[i-1].Time {
			t.Fatal("trades not ascending")
		}
	}
	if tr[0].Side != "sell" && tr[0].Side != "buy" {
		t.Fatalf("side %q", tr[0].Side)
	}
	b, _, err := s.OrderBook(ctx(t), "fx", "SWAP", "BTCUSDT", 0) // default 50 lowered to the plugin's 20
	if err != nil || len(b.Bids) != 20 {
		t.Fatalf("%d levels %v", len(b.Bids), err)
	}
}

func TestMoversRule(t *testing.T) {
	a, b := newFake("ax", 1), newFake("bx", 2)
	b.c.setTickers(nil)
	b.c.insts = append(b.c.insts, inst("DOGEUSDT", swap, "DOGE", "USDT", trad, ""))
	a.c.setTickers(append(a.c.tickers, ticker("ETHUSDT", spot, "1", "99", "1"))) // SPOT: not a mover
	s := newService(t, nil, newClock(), Exchange{Key: 1, Slug: "ax", Plugin: a}, Exchange{Key: 2, Slug: "bx", Plugin: b},
		Exchange{Key: 3, Slug: "cx", Plugin: newFake("cx", 3), Status: StatusComingSoon})
	m, fr, err := s.Movers(ctx(t), 0)
	if err != nil || fr.AsOf == 0 {
		t.Fatal(err, fr)
	}
	var rows []string
	for _, x := range m {
		rows = append(rows, fmt.Sprintf("%d:%s:%s:%v", x.Exchange, x.Symbol, x.ChangePct24h, x.Default))
	}
	// |9.9| > |-4.2| > |1.5| > |-0.1|; OLDUSDT (delisted) and BTCUSDC (not USDT) excluded; then the default set
	// completes the five: DOGE is listed by bx only (no ticker there).
	want := "[1:SOLUSDT:9.9:false 1:ETHUSDT:-4.2:false 1:BTCUSDT:1.5:false 1:XRPUSDT:-0.1:false 2:DOGEUSDT::true]"
	if fmt.Sprint(rows) != want {
		t.Fatalf("movers\n got %v\nwant %s", rows, want)
	}
	m, _, _ = s.Movers(ctx(t), 2)
	if len(m) != 2 || m[0].Symbol != "SOLUSDT" || m[1].Symbol != "ETHUSDT" {
		t.Fatalf("limit 2: %+v", m)
	}

	// The same base on two exchanges: one row, where it moved most; ties go to the higher quote volume.
	b.c.setTickers([]*exchangev1.Ticker{ticker("SOLUSDT", swap, "151", "-12", "5"), ticker("BTCUSDT", swap, "65000", "1.5", "9000000")})
	s2 := newService(t, nil, newClock(), Exchange{Key: 1, Slug: "ax", Plugin: a}, Exchange{Key: 2, Slug: "bx", Plugin: b})
	m, _, _ = s2.Movers(ctx(t), 3)
	rows = nil
	for _, x := range m {
		rows = append(rows, fmt.Sprintf("%d:%s", x.Exchange, x.Symbol))
	}
	if fmt.Sprint(rows) != "[2:SOLUSDT 1:ETHUSDT 2:BTCUSDT]" {
		t.Fatalf("dedup/ties: %v", rows)
	}

	// No ticker anywhere: the default set only, from listed instruments.
	a.c.setTickers(nil)
	b.c.setTickers(nil)
	s3 := newService(t, nil, newClock(), Exchange{Key: 1, Slug: "ax", Plugin: a}, Exchange{Key: 2, Slug: "bx", Plugin: b})
	m, _, _ = s3.Movers(ctx(t), 5)
	rows = nil
	for _, x := range m {
		rows = append(rows, fmt.Sprintf("%d:%s:%v", x.Exchange, x.Base, x.Default))
	}
	if fmt.Sprint(rows) != "[1:BTC:true 1:ETH:true 1:SOL:true 1:XRP:true 2:DOGE:true]" {
		t.Fatalf("default set: %v", rows)
	}
}

func TestRunRefreshesTickersAndStops(t *testing.T) {
	f := newFake("fx", 1)
	s := New(Options{Exchanges: []Exchange{{Key: 1, Slug: "fx", Plugin: f}, {Key: 3, Slug: "soon"}},
		TickerInterval: 40 * time.Millisecond})
	c, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(c) }()
	deadline := time.Now().Add(5 * time.Second)
	for f.c.count("GetTickers") < 6 && time.Now().Before(deadline) { // 3 rounds of SPOT + SWAP
		time.Sleep(10 * time.Millisecond)
	}
	if n := f.c.count("GetTickers"); n < 6 {
		t.Fatalf("%d refreshes", n)
	}
	// Requests are served from the refreshed copy.
	before := f.c.count("GetTickers")
	if _, _, err := s.Tickers(ctx(t), "fx", "SPOT"); err != nil {
		t.Fatal(err)
	}
	if f.c.count("GetTickers") > before+1 {
		t.Fatal("request did not use the refreshed tickers")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Run did not stop with its context")
	}
}
