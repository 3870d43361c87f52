package venue

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func newSim(t testing.TB, seed int64, days int) (*Venue, *ManualClock) {
	t.Helper()
	clock := NewManualClock(t0.Add(13*time.Minute + 7*time.Second))
	cfg := Config{Profile: "binance", Seed: seed, Clock: clock, Simulate: true, HistoryDays: days, StepInterval: time.Second}
	if days < 30 {
		// Live-market tests run on a few coins so they stay fast under the race detector.
		p, _ := LoadProfile("binance")
		for _, in := range p.Instruments {
			if in.Base == "BTC" || in.Base == "ETH" || in.Base == "SOL" {
				cfg.Instruments = append(cfg.Instruments, in)
			}
		}
	}
	v, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	return v, clock
}

func checkBars(t *testing.T, cs []Candle, ms int64) {
	t.Helper()
	for i, c := range cs {
		if c.H.LessThan(c.O) || c.H.LessThan(c.C) || c.L.GreaterThan(c.O) || c.L.GreaterThan(c.C) || !c.L.IsPositive() {
			t.Fatalf("bar %d inconsistent: %+v", i, c)
		}
		if ms > 0 && c.Open%ms != 0 {
			t.Fatalf("bar %d not aligned: %d", i, c.Open)
		}
		if i > 0 && c.Open <= cs[i-1].Open {
			t.Fatalf("bars not ascending at %d", i)
		}
		if c.TakerBuyBase.GreaterThan(c.Volume) {
			t.Fatalf("taker buy above volume at %d", i)
		}
	}
}

func TestLiveMarket(t *testing.T) {
	v, clock := newSim(t, 42, 2)
	if err := v.CreateAccount("u"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := v.Deposit(ctx, "u", "USDT", decimal10k()); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Transfer(ctx, "u", "USDT", decimal10k(), Funding, TradingWallet); err != nil {
		t.Fatal(err)
	}
	snap, _ := v.BookSnapshot("BTC/USDT", 0)
	if len(snap.Bids) < 30 || len(snap.Asks) < 30 {
		t.Fatalf("book too thin: %d/%d", len(snap.Bids), len(snap.Asks))
	}
	// A user bid at the best bid gets hit by synthetic takers within minutes.
	bid := snap.Bids[0].Price
	o, err := v.Place(ctx, OrderRequest{Account: "u", Instrument: "BTC/USDT", Side: Buy, Type: Limit, Price: bid, Qty: d("0.001")})
	if err != nil {
		t.Fatal(err)
	}
	for range 30 {
		clock.Advance(time.Minute)
		v.AdvanceTo(clock.Now())
		checkVenueInvariants(t, v)
	}
	got, _ := v.GetOrder("u", o.ID, "")
	if got.Status != StatusFilled {
		t.Fatalf("user bid at the top of the book not filled after 30 minutes: %s (bid %s, last %s)", got.Status, bid, mustLast(v))
	}
	trades, _ := v.RecentTrades("ETH/USDT:PERP", 100)
	if len(trades) < 100 {
		t.Fatalf("few trades: %d", len(trades))
	}
	cs, err := v.Candles("BTC/USDT", "1m", 0, 40)
	if err != nil {
		t.Fatal(err)
	}
	checkBars(t, cs, minuteMs)
	last := cs[len(cs)-1]
	if last.Closed || cs[len(cs)-2].Trades == 0 {
		t.Fatalf("live bars: last %+v prev %+v", last, cs[len(cs)-2])
	}
	m, _ := v.Mark("BTC/USDT:PERP")
	tk, _ := v.Ticker("BTC/USDT:PERP")
	if !m.Mark.IsPositive() || tk.Volume.IsZero() || !tk.BestBid.Price.LessThan(tk.BestAsk.Price) {
		t.Fatalf("mark %+v ticker %+v", m, tk)
	}
}

func mustLast(v *Venue) string { p, _ := v.LastPrice("BTC/USDT"); return p.String() }

func TestDeterministic(t *testing.T) {
	run := func(seed int64) string {
		v, clock := newSim(t, seed, 1)
		for range 20 {
			clock.Advance(30 * time.Second)
			v.AdvanceTo(clock.Now())
		}
		tr, _ := v.RecentTrades("SOL/USDT:PERP", 50)
		cs, _ := v.Candles("SOL/USDT", "1h", 0, 30)
		s := ""
		for _, x := range tr {
			s += x.Price.String() + "/" + x.Qty.String() + " "
		}
		for _, c := range cs {
			s += c.C.String() + ";"
		}
		return s
	}
	a, b, c := run(7), run(7), run(8)
	if a != b {
		t.Fatal("same seed, different market")
	}
	if a == c {
		t.Fatal("different seeds, same market")
	}
}

func TestHistory(t *testing.T) {
	start := time.Now()
	v, _ := newSim(t, 1, 30)
	// Generate every 1m bar of 30 days for every instrument, plus 5m statistics for the perpetuals.
	bars := 0
	for _, in := range v.Instruments() {
		v.mu.Lock()
		st := v.instruments[in.ID]
		v.minutes(st, v.historyStart(), v.start.UnixMilli(), func(*bar) { bars++ })
		v.mu.Unlock()
	}
	genDur := time.Since(start)
	t.Logf("generated %d one-minute bars (30 days x %d instruments) in %s", bars, len(v.Instruments()), genDur)
	if want := 30 * 1440 * len(v.Instruments()); bars < want-1440*len(v.Instruments()) {
		t.Fatalf("bars %d, want about %d", bars, want)
	}
	for _, iv := range []struct {
		code string
		ms   int64
	}{{"1m", minuteMs}, {"15m", 15 * minuteMs}, {"1h", 60 * minuteMs}, {"4h", 240 * minuteMs}, {"1d", dayMs}} {
		cs, err := v.Candles("ETH/USDT", iv.code, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		checkBars(t, cs, iv.ms)
		if len(cs) < 20 {
			t.Fatalf("%s: %d bars", iv.code, len(cs))
		}
	}
	// Aggregation: a 1h bar equals its sixty 1m bars.
	h, _ := v.Candles("BTC/USDT", "1h", v.start.UnixMilli()-5*3600*1000, 1)
	ms, _ := v.Candles("BTC/USDT", "1m", h[0].Open+59*minuteMs, 60)
	if ms[0].Open != h[0].Open || !ms[0].O.Equal(h[0].O) || !ms[59].C.Equal(h[0].C) {
		t.Fatalf("1h %+v vs 1m %+v..%+v", h[0], ms[0], ms[59])
	}
	vol := ms[0].Volume
	for _, m := range ms[1:] {
		vol = vol.Add(m.Volume)
	}
	if !vol.Equal(h[0].Volume) {
		t.Fatalf("volume %s vs %s", vol, h[0].Volume)
	}
	// Weekly bars start on Monday, monthly on the 1st, UTC.
	for _, c := range mustCandles(t, v, "1w") {
		if time.UnixMilli(c.Open).UTC().Weekday() != time.Monday {
			t.Fatalf("week starts %s", time.UnixMilli(c.Open).UTC())
		}
	}
	for _, c := range mustCandles(t, v, "1M") {
		if time.UnixMilli(c.Open).UTC().Day() != 1 {
			t.Fatalf("month starts %s", time.UnixMilli(c.Open).UTC())
		}
	}
	// History ends at the start price: the last generated close is the reference price.
	last, _ := v.Candles("BTC/USDT", "1m", v.start.UnixMilli()-minuteMs, 1)
	if !last[0].C.Equal(d("98000")) {
		t.Fatalf("history does not join the live start: %s", last[0].C)
	}
	stats, err := v.Stats("BTC/USDT:PERP", "5m", 0, 0, 288)
	if err != nil || len(stats) != 288 {
		t.Fatalf("stats %d %v", len(stats), err)
	}
	for _, s := range stats {
		if !s.OpenInterest.IsPositive() || !s.LongAccount.Add(s.ShortAccount).Equal(d("1")) || s.Time%(5*minuteMs) != 0 {
			t.Fatalf("stat %+v", s)
		}
	}
	fh, err := v.FundingHistory("BTC/USDT:PERP", 0, 0, 1000)
	if err != nil || len(fh) < 89 {
		t.Fatalf("funding history %d %v", len(fh), err)
	}
	for _, f := range fh {
		if f.Time%(8*3600*1000) != 0 {
			t.Fatalf("funding time %d", f.Time)
		}
	}
}

func mustCandles(t *testing.T, v *Venue, iv string) []Candle {
	t.Helper()
	cs, err := v.Candles("BTC/USDT", iv, 0, 10)
	if err != nil || len(cs) == 0 {
		t.Fatalf("%s: %v", iv, err)
	}
	checkBars(t, cs, 0)
	return cs
}

func decimal10k() decimal.Decimal { return d("10000") }
