package venue

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/shopspring/decimal"
)

const minuteMs = int64(60_000)
const dayMs = 24 * 3600 * 1000

// Candle is an OHLCV bar. Open is the bar's start in Unix milliseconds; Closed is false for the forming bar.
type Candle struct {
	Instrument    string
	Interval      string
	Open          int64
	CloseTime     int64 // last millisecond of the bar
	O, H, L, C    decimal.Decimal
	Volume        decimal.Decimal // base
	QuoteVolume   decimal.Decimal
	Trades        int64
	TakerBuyBase  decimal.Decimal
	TakerBuyQuote decimal.Decimal
	Closed        bool
}

// bar is a candle in ticks, lots and tick x lot units.
type bar struct {
	start                int64
	o, h, l, c           int64
	vol, quote           int64
	trades               int64
	takerBuy, takerQuote int64
}

func (b *bar) merge(x *bar) {
	if b.trades == 0 && b.vol == 0 && b.o == 0 {
		*b = bar{start: b.start, o: x.o, h: x.h, l: x.l, c: x.c, vol: x.vol, quote: x.quote, trades: x.trades,
			takerBuy: x.takerBuy, takerQuote: x.takerQuote}
		return
	}
	b.h = max(b.h, x.h)
	b.l = min(b.l, x.l)
	b.c = x.c
	b.vol += x.vol
	b.quote += x.quote
	b.trades += x.trades
	b.takerBuy += x.takerBuy
	b.takerQuote += x.takerQuote
}

// liveCandles builds 1-minute bars from the venue's own trades since the start.
type liveCandles struct {
	cur    bar
	closed ring[bar]
}

// liveKeep is how many closed live minutes are kept (7 days).
const liveKeep = 7 * 24 * 60

func newLiveCandles(start, price int64) *liveCandles {
	return &liveCandles{cur: bar{start: start, o: price, h: price, l: price, c: price}, closed: newRing[bar](liveKeep)}
}

func (lc *liveCandles) add(st *instState, price, q int64, side Side, now int64) {
	lc.roll(st, now)
	b := &lc.cur
	if b.trades == 0 {
		b.o, b.h, b.l = price, price, price
	}
	b.h = max(b.h, price)
	b.l = min(b.l, price)
	b.c = price
	b.vol += q
	b.quote += q * price
	b.trades++
	if side == Buy {
		b.takerBuy += q
		b.takerQuote += q * price
	}
}

// roll closes every minute that ended before now; minutes without trades are flat bars at the last close.
func (lc *liveCandles) roll(st *instState, now int64) {
	for n := 0; lc.cur.start+minuteMs <= now; n++ {
		lc.closed.push(lc.cur)
		c := lc.cur.c
		lc.cur = bar{start: lc.cur.start + minuteMs, o: c, h: c, l: c, c: c}
		if n > liveKeep {
			// A long jump of the clock: skip ahead instead of filling more flat bars than are kept.
			lc.cur.start = now / minuteMs * minuteMs
		}
	}
}

// intervalMs parses an interval code. Months are variable (0 with month=true).
func intervalMs(code string) (ms int64, month bool, err error) {
	units := map[byte]int64{'m': minuteMs, 'h': 60 * minuteMs, 'd': dayMs, 'w': 7 * dayMs}
	if code == "1M" {
		return 0, true, nil
	}
	if len(code) < 2 {
		return 0, false, fmt.Errorf("%w: interval %q", ErrInvalidOrder, code)
	}
	u, ok := units[code[len(code)-1]]
	var n int64
	_, perr := fmt.Sscanf(code[:len(code)-1], "%d", &n)
	if !ok || perr != nil || n <= 0 {
		return 0, false, fmt.Errorf("%w: interval %q", ErrInvalidOrder, code)
	}
	return n * u, false, nil
}

// Intervals lists the candle intervals the venue serves.
var Intervals = []string{"1m", "3m", "5m", "15m", "30m", "1h", "2h", "4h", "6h", "8h", "12h", "1d", "3d", "1w", "1M"}

// bucketStart aligns t to the start of its bar in UTC: weeks start on Monday, months on the 1st.
func bucketStart(t, ms int64, month bool) int64 {
	if month {
		tt := time.UnixMilli(t).UTC()
		return time.Date(tt.Year(), tt.Month(), 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	}
	if ms == 7*dayMs {
		const monday = 4 * dayMs // 1970-01-01 was a Thursday
		return floorDiv(t-monday, ms)*ms + monday
	}
	return floorDiv(t, ms) * ms
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func bucketNext(start, ms int64, month bool) int64 {
	if month {
		return time.UnixMilli(start).UTC().AddDate(0, 1, 0).UnixMilli()
	}
	return start + ms
}

// Candles returns up to limit bars of an interval whose start is at or before end (0 = now), oldest first. Bars
// come from generated history before the venue started and from its own trades after; the last bar may be open.
func (v *Venue) Candles(id, interval string, end int64, limit int) ([]Candle, error) {
	ms, month, err := intervalMs(interval)
	if err != nil {
		return nil, err
	}
	if limit <= 0 || limit > 1500 {
		limit = 500
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	st, err := v.inst(id)
	if err != nil {
		return nil, err
	}
	now := v.Now()
	if end <= 0 || end > now {
		end = now
	}
	// Walk back limit buckets from the bucket holding end.
	first := bucketStart(end, ms, month)
	for i := 1; i < limit; i++ {
		var prev int64
		if month {
			prev = time.UnixMilli(first).UTC().AddDate(0, -1, 0).UnixMilli()
		} else {
			prev = first - ms
		}
		if prev < v.historyStart() {
			break
		}
		first = prev
	}
	var out []Candle
	cur := bar{start: first}
	next := bucketNext(first, ms, month)
	last := bucketNext(bucketStart(end, ms, month), ms, month)
	emit := func() {
		if cur.o == 0 {
			return
		}
		closeT := next - 1
		out = append(out, st.candle(interval, &cur, closeT, closeT < now))
	}
	v.minutes(st, first, min(last, now+minuteMs), func(b *bar) {
		for b.start >= next {
			emit()
			cur = bar{start: next}
			next = bucketNext(next, ms, month)
		}
		cur.merge(b)
	})
	emit()
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, nil
}

func (st *instState) candle(interval string, b *bar, closeT int64, closed bool) Candle {
	in := st.in
	return Candle{Instrument: in.ID, Interval: interval, Open: b.start, CloseTime: closeT, O: in.Price(b.o),
		H: in.Price(b.h), L: in.Price(b.l), C: in.Price(b.c), Volume: in.Qty(b.vol), QuoteVolume: in.Notional(b.quote),
		Trades: b.trades, TakerBuyBase: in.Qty(b.takerBuy), TakerBuyQuote: in.Notional(b.takerQuote), Closed: closed}
}

func (v *Venue) historyStart() int64 {
	if v.hist == nil {
		return v.start.UnixMilli()
	}
	return v.hist.from
}

// minutes calls fn with every 1-minute bar in [from, to), oldest first: generated history, then live bars.
func (v *Venue) minutes(st *instState, from, to int64, fn func(*bar)) {
	start := v.start.UnixMilli()
	if v.hist != nil && from < start {
		v.hist.minutes(st, max(from, v.hist.from), min(to, start), fn)
	}
	if st.live == nil || to <= start {
		return
	}
	for _, b := range st.live.closed.last(0) {
		if b.start >= from && b.start < to {
			fn(&b)
		}
	}
	if c := st.live.cur; c.start >= from && c.start < to {
		fn(&c)
	}
}

// history generates past 1-minute bars and 5-minute statistics on demand, deterministically from the seed: a
// daily path of anchor prices is drawn backwards from the start price, and each day's minutes are a Brownian
// bridge between its two anchors drawn from that day's own seed. Any day can be generated alone (tens of
// microseconds), so nothing is stored but a small cache.
type history struct {
	v       *Venue
	seed    int64
	from    int64 // first minute of history
	start   int64 // the venue start (end of history)
	anchors map[string][]float64
	cache   map[histKey][]bar
}

type histKey struct {
	inst string
	day  int64
}

func newHistory(v *Venue, seed int64, days int) *history {
	start := v.start.UnixMilli()
	h := &history{v: v, seed: seed, start: start, from: start - int64(days)*dayMs, anchors: map[string][]float64{},
		cache: map[histKey][]bar{}}
	for _, st := range v.list {
		if _, ok := h.anchors[st.in.Base]; ok {
			continue
		}
		// anchors[i] is the log price at the start of day segment i (segments are UTC days clipped to
		// [from, start]); the last entry is the start price.
		r := rand.New(rand.NewPCG(hashSeed(seed, "anchors", st.in.Base), 2))
		segs := h.segments()
		a := make([]float64, len(segs)+1)
		ref, _ := st.in.RefPrice.Float64()
		a[len(segs)] = math.Log(ref)
		daily := coinVol(st.in.Base) / math.Sqrt(365)
		for i := len(segs) - 1; i >= 0; i-- {
			frac := float64(segs[i][1]-segs[i][0]) / float64(dayMs)
			a[i] = a[i+1] - r.NormFloat64()*daily*math.Sqrt(frac)
		}
		h.anchors[st.in.Base] = a
	}
	return h
}

// segments are the [start, end) ms ranges of history, split at UTC midnights.
func (h *history) segments() [][2]int64 {
	var out [][2]int64
	for t := h.from; t < h.start; {
		e := min((t/dayMs+1)*dayMs, h.start)
		out = append(out, [2]int64{t, e})
		t = e
	}
	return out
}

func (h *history) minutes(st *instState, from, to int64, fn func(*bar)) {
	segs := h.segments()
	for i, sg := range segs {
		if sg[1] <= from || sg[0] >= to {
			continue
		}
		bars := h.day(st, i, sg)
		for j := range bars {
			if bars[j].start >= from && bars[j].start < to {
				fn(&bars[j])
			}
		}
	}
}

// day generates (or returns cached) bars of one history segment.
func (h *history) day(st *instState, i int, sg [2]int64) []bar {
	k := histKey{st.in.ID, sg[0]}
	if b, ok := h.cache[k]; ok {
		return b
	}
	if len(h.cache) > 512 {
		clear(h.cache)
	}
	in := st.in
	a := h.anchors[in.Base]
	n := int((sg[1] - sg[0]) / minuteMs)
	r := rand.New(rand.NewPCG(hashSeed(h.seed, "day", in.Base), uint64(sg[0])))
	vr := rand.New(rand.NewPCG(hashSeed(h.seed, "vol", in.ID), uint64(sg[0])))
	sigma := coinVol(in.Base) / math.Sqrt(365*24*60)
	// Random walk with hourly volatility regimes, then bridged onto the anchors.
	w := make([]float64, n+1)
	reg := 1.0
	for j := 1; j <= n; j++ {
		if j%60 == 1 {
			reg = []float64{0.5, 1, 1, 2.2}[r.IntN(4)]
		}
		w[j] = w[j-1] + r.NormFloat64()*sigma*reg
	}
	lo, hi := a[i], a[i+1]
	tick := tickF(in)
	step := stepF(in)
	bars := make([]bar, n)
	basis := 1.0
	if in.Market == Perp {
		basis = 1.0003
	}
	price := func(j int) int64 {
		x := lo + w[j] + float64(j)/float64(n)*(hi-lo-w[n])
		return max(int64(math.Round(math.Exp(x)*basis/tick)), 1)
	}
	prev := price(0)
	volUnit := 250000 / math.Exp(lo) / step // lots of ~250k USDT per minute on a normal minute
	if in.Market == Perp {
		volUnit *= 3
	}
	// Keep a month of quote volume in tick x lot units well inside int64 (1M bars sum ~45k minutes).
	volUnit = math.Min(volUnit, 1e13/math.Exp(lo)*tick)
	for j := range n {
		c := price(j + 1)
		o := prev
		move := math.Abs(float64(c-o)) / float64(max(o, 1))
		wick := func() int64 { return int64(math.Abs(vr.NormFloat64()) * float64(o) * sigma * 0.6) }
		bh := max(o, c) + wick()
		bl := max(min(o, c)-wick(), 1)
		vol := int64(volUnit * (0.4 + vr.ExpFloat64()) * (1 + move/sigma*0.5))
		vol = min(max(vol, 1), int64(8*volUnit)+1)
		mid := (o + c) / 2
		buyFrac := 0.5
		if c > o {
			buyFrac = 0.58
		} else if c < o {
			buyFrac = 0.42
		}
		tb := int64(float64(vol) * buyFrac)
		bars[j] = bar{start: sg[0] + int64(j)*minuteMs, o: o, h: bh, l: bl, c: c, vol: vol, quote: vol * mid,
			trades: max(int64(float64(vol)/math.Max(1, volUnit/120)), 1), takerBuy: tb, takerQuote: tb * mid}
		prev = c
	}
	h.cache[k] = bars
	return bars
}
