package venue

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/shopspring/decimal"
)

// Stat is one period of derivatives statistics of a perpetual.
type Stat struct {
	Time int64 // period start, Unix ms
	// OpenInterest in base units and its value in quote at the period's close.
	OpenInterest      decimal.Decimal
	OpenInterestValue decimal.Decimal
	// LongShortAccountRatio is long accounts / short accounts; LongAccount + ShortAccount = 1.
	LongShortAccountRatio decimal.Decimal
	LongAccount           decimal.Decimal
	ShortAccount          decimal.Decimal
	// TopLongShortPositionRatio is the long/short ratio of the largest accounts' positions.
	TopLongShortPositionRatio decimal.Decimal
	TopLongShortAccountRatio  decimal.Decimal
	// Taker volumes in base units, from the period's bars.
	TakerBuyVolume  decimal.Decimal
	TakerSellVolume decimal.Decimal
}

// FundingRate is one settled funding.
type FundingRate struct {
	Time int64
	Rate decimal.Decimal
	Mark decimal.Decimal
}

// StatPeriods lists the statistics periods served.
var StatPeriods = []string{"5m", "15m", "30m", "1h", "2h", "4h", "6h", "12h", "1d"}

// wave is a smooth, stateless, deterministic series in [-1, 1]: two sines with per-coin phases plus a small
// per-point jitter. Statistics are functions of time, so any range can be served without stored state.
func (v *Venue) wave(base, name string, t int64, p1, p2 float64) float64 {
	h := hashSeed(v.cfg.Seed, name, base)
	ph1 := float64(h%6283) / 1000
	ph2 := float64((h>>16)%6283) / 1000
	x := float64(t) / 3.6e6 // hours
	j := rand.New(rand.NewPCG(h, uint64(t))).Float64()*2 - 1
	return 0.6*math.Sin(2*math.Pi*x/p1+ph1) + 0.3*math.Sin(2*math.Pi*x/p2+ph2) + 0.1*j
}

// Stats returns up to limit periods of statistics (oldest first) starting at or after from and before to (0 = now).
func (v *Venue) Stats(id, period string, from, to int64, limit int) ([]Stat, error) {
	ms, month, err := intervalMs(period)
	if err != nil || month || ms < 5*minuteMs {
		return nil, fmt.Errorf("%w: period %q", ErrInvalidOrder, period)
	}
	if limit <= 0 || limit > 500 {
		limit = 30
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	st, err := v.inst(id)
	if err != nil {
		return nil, err
	}
	if st.in.Market != Perp {
		return nil, fmt.Errorf("%w: statistics are for perpetuals", ErrInvalidOrder)
	}
	now := v.Now()
	if to <= 0 || to > now {
		to = now
	}
	// Only closed periods.
	endB := bucketStart(to, ms, false)
	startB := endB - int64(limit)*ms
	if from > 0 {
		startB = max(startB, bucketStart(from+ms-1, ms, false))
	}
	startB = max(startB, bucketStart(v.historyStart()+ms-1, ms, false))
	var out []Stat
	for t := startB; t+ms <= endB+ms && t < endB && len(out) < limit; t += ms {
		out = append(out, v.statAt(st, t, ms))
	}
	return out, nil
}

func (v *Venue) statAt(st *instState, t, ms int64) Stat {
	in := st.in
	b := in.Base
	var agg bar
	v.minutes(st, t, t+ms, func(x *bar) { agg.merge(x) })
	closePx := in.RefPrice
	if agg.c != 0 {
		closePx = in.Price(agg.c)
	}
	ref, _ := in.RefPrice.Float64()
	oiUSDT := 2e7 * (1 + 0.25*v.wave(b, "oi", t, 70, 9))
	oi := decimal.NewFromFloat(oiUSDT / ref).Div(in.StepSize).Floor().Mul(in.StepSize)
	ls := 1.3 + 0.6*v.wave(b, "ls", t, 40, 5)
	top := 1.1 + 0.5*v.wave(b, "top", t, 55, 7)
	topAcc := 1.2 + 0.5*v.wave(b, "topacc", t, 45, 6)
	r4 := func(f float64) decimal.Decimal { return decimal.NewFromFloat(f).Round(4) }
	long := ls / (1 + ls)
	return Stat{Time: t, OpenInterest: oi, OpenInterestValue: oi.Mul(closePx).Round(8),
		LongShortAccountRatio: r4(ls), LongAccount: r4(long), ShortAccount: decimal.NewFromInt(1).Sub(r4(long)),
		TopLongShortPositionRatio: r4(top), TopLongShortAccountRatio: r4(topAcc),
		TakerBuyVolume: in.Qty(agg.takerBuy), TakerSellVolume: in.Qty(agg.vol - agg.takerBuy)}
}

// FundingHistory returns settled fundings (every 8 hours) in [from, to) (0 = from history start / to now), oldest
// first, up to limit. Past rates come from the same smooth series the live rate continues from.
func (v *Venue) FundingHistory(id string, from, to int64, limit int) ([]FundingRate, error) {
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	st, err := v.inst(id)
	if err != nil {
		return nil, err
	}
	if st.in.Market != Perp {
		return nil, fmt.Errorf("%w: funding is for perpetuals", ErrInvalidOrder)
	}
	const eight = 8 * 3600 * 1000
	now := v.Now()
	if to <= 0 || to > now {
		to = now + 1
	}
	hs := v.historyStart()
	if from < hs {
		from = hs
	}
	var out []FundingRate
	for t := (from + eight - 1) / eight * eight; t < to; t += eight {
		var agg bar
		v.minutes(st, t-minuteMs, t, func(x *bar) { agg.merge(x) })
		mark := st.in.RefPrice
		if agg.c != 0 {
			mark = st.in.Price(agg.c)
		}
		out = append(out, FundingRate{Time: t, Rate: v.fundingAt(st, t), Mark: mark})
	}
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, nil
}

// fundingAt is the rate settled at t: the recorded live rate when the venue settled it, else the series.
func (v *Venue) fundingAt(st *instState, t int64) decimal.Decimal {
	if r, ok := st.fundHist[t]; ok {
		return r
	}
	f := 0.0001 + 0.00015*v.wave(st.in.Base, "funding", t, 100, 20)
	return decimal.NewFromFloat(f).Round(8)
}

// Ticker is the rolling 24-hour summary of an instrument.
type Ticker struct {
	Instrument  string
	Last        decimal.Decimal
	Open        decimal.Decimal // 24 hours ago
	High        decimal.Decimal
	Low         decimal.Decimal
	Volume      decimal.Decimal
	QuoteVolume decimal.Decimal
	Trades      int64
	BestBid     Level
	BestAsk     Level
	Mark        decimal.Decimal
	Index       decimal.Decimal
	FundingRate decimal.Decimal
	NextFunding int64
	Time        int64
}

// Ticker returns the 24-hour summary built from the last 1440 one-minute bars.
func (v *Venue) Ticker(id string) (Ticker, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	st, err := v.inst(id)
	if err != nil {
		return Ticker{}, err
	}
	now := v.Now()
	var agg bar
	v.minutes(st, now-dayMs+minuteMs, now+minuteMs, func(x *bar) { agg.merge(x) })
	in := st.in
	t := Ticker{Instrument: id, Last: st.lastPrice(), Open: in.Price(agg.o), High: in.Price(agg.h), Low: in.Price(agg.l),
		Volume: in.Qty(agg.vol), QuoteVolume: in.Notional(agg.quote), Trades: agg.trades, Mark: st.mark,
		Index: st.index, FundingRate: st.funding, NextFunding: st.nextFund, Time: now}
	if l := st.book.bids.best(); l != nil {
		t.BestBid = Level{Price: in.Price(l.price), Qty: in.Qty(l.total)}
	}
	if l := st.book.asks.best(); l != nil {
		t.BestAsk = Level{Price: in.Price(l.price), Qty: in.Qty(l.total)}
	}
	return t, nil
}
