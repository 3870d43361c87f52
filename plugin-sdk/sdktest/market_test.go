package sdktest

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func TestHistoryIsDeterministicFromTheSeed(t *testing.T) {
	ctx := context.Background()
	candles := func(seed int64) []*exchangev1.Candle {
		clock := newClock()
		_, c := Start(t, Options{Seed: seed, Manual: true, Now: clock.now, HistoryDays: 2})
		return must(c.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: swap, Symbol: "ETHUSDT", Interval: "15m", Limit: 100})).Candles
	}
	a, b, other := candles(7), candles(7), candles(8)
	if len(a) != 100 {
		t.Fatalf("want 100 candles, got %d", len(a))
	}
	for i := range a {
		if !proto.Equal(a[i], b[i]) {
			t.Fatalf("same seed, different candle %d: %v vs %v", i, a[i], b[i])
		}
	}
	same := 0
	for i := range a {
		if proto.Equal(a[i], other[i]) {
			same++
		}
	}
	if same == len(a) {
		t.Fatal("different seeds gave the same history")
	}
}

func TestCandlesAlignedConsistentAndPaged(t *testing.T) {
	_, c, clock := manual(t)
	ctx := context.Background()
	week := int64(7 * 24 * 3600 * 1000)
	for _, iv := range intervals {
		cs := must(c.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: spot, Symbol: "BTCUSDT", Interval: iv.name, Limit: 50})).Candles
		if len(cs) == 0 {
			t.Fatalf("%s: no candles", iv.name)
		}
		for i, k := range cs {
			aligned := k.OpenTime%iv.ms == 0
			if iv.name == "1w" {
				aligned = (k.OpenTime-4*24*3600*1000)%week == 0
			}
			if !aligned {
				t.Fatalf("%s: candle %d not aligned", iv.name, k.OpenTime)
			}
			if i > 0 && k.OpenTime != cs[i-1].OpenTime+iv.ms {
				t.Fatalf("%s: gap or disorder between %d and %d", iv.name, cs[i-1].OpenTime, k.OpenTime)
			}
			o, h, l, cl := d(k.Open), d(k.High), d(k.Low), d(k.Close)
			if l.GreaterThan(o) || l.GreaterThan(cl) || h.LessThan(o) || h.LessThan(cl) {
				t.Fatalf("%s: OHLC inconsistent %v", iv.name, k)
			}
			if k.Closed != (i < len(cs)-1) {
				t.Fatalf("%s: only the newest candle may be open: %v", iv.name, k)
			}
		}
	}
	// A 1h candle is exactly the aggregate of its sixty 1m candles.
	hours := must(c.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: spot, Symbol: "BTCUSDT", Interval: "1h", Limit: 3})).Candles
	h := hours[0]
	mins := must(c.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: spot, Symbol: "BTCUSDT", Interval: "1m",
		StartTime: h.OpenTime, EndTime: h.OpenTime + 59*60_000, Limit: 1000})).Candles
	if len(mins) != 60 {
		t.Fatalf("want 60 minutes in an hour, got %d", len(mins))
	}
	hi, lo, vol := d(mins[0].High), d(mins[0].Low), d("0")
	for _, m := range mins {
		if d(m.High).GreaterThan(hi) {
			hi = d(m.High)
		}
		if d(m.Low).LessThan(lo) {
			lo = d(m.Low)
		}
		vol = vol.Add(d(m.Volume))
	}
	if h.Open != mins[0].Open || h.Close != mins[59].Close || !d(h.High).Equal(hi) || !d(h.Low).Equal(lo) || !d(h.Volume).Equal(vol) {
		t.Fatalf("1h candle %v does not aggregate its minutes (high %s low %s volume %s)", h, hi, lo, vol)
	}
	// Paging by end time: page 2 ends exactly one interval before page 1 starts.
	p1 := must(c.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: swap, Symbol: "SOLUSDT", Interval: "5m", Limit: 100})).Candles
	p2 := must(c.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: swap, Symbol: "SOLUSDT", Interval: "5m", Limit: 100, EndTime: p1[0].OpenTime - 1})).Candles
	if len(p2) != 100 || p2[99].OpenTime != p1[0].OpenTime-5*60_000 {
		t.Fatalf("page 2 should end right before page 1: %d candles, last %d, page 1 first %d", len(p2), p2[len(p2)-1].OpenTime, p1[0].OpenTime)
	}
	// The history ends: paging past it returns nothing.
	old := must(c.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: swap, Symbol: "SOLUSDT", Interval: "1h", EndTime: clock.now().UnixMilli() - 10*24*3600*1000})).Candles
	if len(old) != 0 {
		t.Fatalf("3 days of history, but got %d candles 10 days back", len(old))
	}
	_, err := c.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: swap, Symbol: "SOLUSDT", Interval: "7m"})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)
}

func TestMarketMovesAndStaysUncrossed(t *testing.T) {
	s, c, clock := manual(t)
	ctx := context.Background()
	first := must(c.GetTickers(ctx, &exchangev1.GetTickersRequest{MarketType: swap, Symbols: []string{"BTCUSDT"}})).Tickers[0]
	trades0 := len(must(c.GetTrades(ctx, &exchangev1.GetTradesRequest{MarketType: swap, Symbol: "BTCUSDT", Limit: 1000})).Trades)
	for range 200 {
		step(s, clock, 1)
		for _, in := range s.ordered {
			b := in.book
			if len(b.bids) == 0 || len(b.asks) == 0 || b.bids[0].price >= b.asks[0].price {
				t.Fatalf("%s: empty or crossed book at seq %d", in.key, b.seq)
			}
		}
	}
	last := must(c.GetTickers(ctx, &exchangev1.GetTickersRequest{MarketType: swap, Symbols: []string{"BTCUSDT"}})).Tickers[0]
	if first.Last == last.Last && first.Bid == last.Bid {
		t.Fatal("the market did not move in 200 ticks")
	}
	trades := must(c.GetTrades(ctx, &exchangev1.GetTradesRequest{MarketType: swap, Symbol: "BTCUSDT", Limit: 1000})).Trades
	if len(trades) <= trades0 {
		t.Fatal("no synthetic trades happened")
	}
	for i := 1; i < len(trades); i++ {
		if trades[i].Time < trades[i-1].Time {
			t.Fatal("trades are not ascending")
		}
	}
	b := book(t, c, swap, "BTCUSDT", 5)
	if len(b.Bids) != 5 || len(b.Asks) != 5 || b.Sequence != s.insts["SWAP:BTCUSDT"].seq {
		t.Fatalf("book depth/sequence wrong: %v", b)
	}
	_, err := c.GetOrderBook(ctx, &exchangev1.GetOrderBookRequest{MarketType: swap, Symbol: "DOGEUSDT"})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND)
}

func TestDerivativesSeries(t *testing.T) {
	_, c, _ := manual(t)
	ctx := context.Background()
	series := &exchangev1.SeriesRequest{Symbol: "BTCUSDT", Period: "1h", Limit: 24}
	oi := must(c.GetOpenInterestHistory(ctx, &exchangev1.GetOpenInterestHistoryRequest{Series: series})).Points
	ls := must(c.GetLongShortRatioHistory(ctx, &exchangev1.GetLongShortRatioHistoryRequest{Series: series, Kind: exchangev1.LongShortRatioKind_LONG_SHORT_RATIO_KIND_ACCOUNTS})).Points
	tv := must(c.GetTakerVolumeHistory(ctx, &exchangev1.GetTakerVolumeHistoryRequest{Series: series, MarketType: swap})).Points
	fr := must(c.GetFundingRateHistory(ctx, &exchangev1.GetFundingRateHistoryRequest{Symbol: "BTCUSDT", Limit: 6})).Rates
	if len(oi) != 24 || len(ls) != 24 || len(tv) != 24 || len(fr) != 6 {
		t.Fatalf("lengths: oi %d ls %d tv %d funding %d", len(oi), len(ls), len(tv), len(fr))
	}
	for i := range 24 {
		if oi[i].Time%3_600_000 != 0 || ls[i].Time != oi[i].Time || tv[i].Time != oi[i].Time {
			t.Fatalf("point %d not aligned to the hour", i)
		}
		if !d(ls[i].LongRatio).Add(d(ls[i].ShortRatio)).Equal(d("1")) {
			t.Fatalf("long + short != 1: %v", ls[i])
		}
	}
	for i := 1; i < 6; i++ {
		if fr[i].FundingTime-fr[i-1].FundingTime != 8*3_600_000 {
			t.Fatal("funding settlements are not 8 hours apart")
		}
	}
	// Taker volume sums the bars: the hour's buy + sell equals the 1h candle's volume.
	candles := must(c.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: swap, Symbol: "BTCUSDT", Interval: "1h", EndTime: tv[10].Time, Limit: 1})).Candles
	if !d(tv[10].BuyVolume).Add(d(tv[10].SellVolume)).Equal(d(candles[0].Volume)) {
		t.Fatalf("taker volume %v does not match candle volume %s", tv[10], candles[0].Volume)
	}
	_, err := c.GetFundingRate(ctx, &exchangev1.GetFundingRateRequest{Symbol: "NOPE"})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND)
}

func TestConfigure(t *testing.T) {
	s, c, _ := manual(t)
	ctx := context.Background()
	_, err := c.Configure(ctx, &exchangev1.ConfigureRequest{Settings: map[string]string{"base_url": "x"}})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)
	_, err = c.Configure(ctx, &exchangev1.ConfigureRequest{Settings: map[string]string{"tick_interval": "fast"}})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)
	_, err = c.Configure(ctx, &exchangev1.ConfigureRequest{Settings: map[string]string{"seed": "0"}})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)
	before := must(c.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: spot, Symbol: "BTCUSDT", Interval: "1h", Limit: 5})).Candles
	must(c.Configure(ctx, &exchangev1.ConfigureRequest{Settings: map[string]string{"seed": "99", "tick_interval": "100ms", "history_days": "2"}}))
	after := must(c.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: spot, Symbol: "BTCUSDT", Interval: "1h", Limit: 5})).Candles
	if proto.Equal(before[0], after[0]) {
		t.Fatal("a new seed should rebuild the history")
	}
	if s.seed != 99 || s.opts.TickInterval.String() != "100ms" || s.historyDays != 2 {
		t.Fatalf("settings not applied: seed %d tick %s days %d", s.seed, s.opts.TickInterval, s.historyDays)
	}
	d := must(c.Describe(ctx, &exchangev1.DescribeRequest{}))
	if d.Exchange.Key != Key || d.Exchange.Slug != Slug || len(d.Settings) != len(settings) || d.SdkVersion != "1.2" {
		t.Fatalf("describe: %v", d.Exchange)
	}
}
