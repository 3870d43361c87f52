package emulator

import (
	"slices"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
)

const (
	hourMs = int64(time.Hour / time.Millisecond)
	dayMs  = 24 * hourMs
	// hk is OKX's default candle alignment: Hong Kong time, UTC+8.
	hk = 8 * hourMs
)

// barSpec describes one OKX bar code. Bars the venue aligns the same way are read from it directly (direct); the
// others are aggregated from venue bars (base) into buckets computed with offset (UTC+8 for the non-"utc" codes).
type barSpec struct {
	direct string // venue interval with the same buckets
	base   string // venue interval aggregated otherwise
	fixed  int64  // bucket length in ms for fixed buckets
	months int    // bucket length in months (1 or 3), 0 for fixed
	week   bool
	offset int64
}

var barSpecs = map[string]barSpec{
	"1m": {direct: "1m"}, "3m": {direct: "3m"}, "5m": {direct: "5m"}, "15m": {direct: "15m"}, "30m": {direct: "30m"},
	// An hour, two and four divide the eight-hour offset, so HK and UTC buckets coincide.
	"1H": {direct: "1h"}, "2H": {direct: "2h"}, "4H": {direct: "4h"},
	"6H": {base: "1h", fixed: 6 * hourMs, offset: hk}, "12H": {base: "1h", fixed: 12 * hourMs, offset: hk},
	"1D": {base: "1h", fixed: dayMs, offset: hk}, "2D": {base: "1h", fixed: 2 * dayMs, offset: hk},
	"3D": {base: "1h", fixed: 3 * dayMs, offset: hk}, "1W": {base: "1h", week: true, offset: hk},
	"1M": {base: "1h", months: 1, offset: hk}, "3M": {base: "1h", months: 3, offset: hk},
	"6Hutc": {direct: "6h"}, "12Hutc": {direct: "12h"}, "1Dutc": {direct: "1d"},
	"2Dutc": {base: "1d", fixed: 2 * dayMs}, "3Dutc": {base: "1d", fixed: 3 * dayMs},
	"1Wutc": {direct: "1w"}, "1Mutc": {direct: "1M"}, "3Mutc": {base: "1d", months: 3},
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// bucket returns the start of the bar holding t.
func (b barSpec) bucket(t int64) int64 {
	local := t + b.offset
	switch {
	case b.months > 0:
		d := time.UnixMilli(local).UTC()
		m := (int(d.Month()) - 1) / b.months * b.months
		return time.Date(d.Year(), time.Month(m+1), 1, 0, 0, 0, 0, time.UTC).UnixMilli() - b.offset
	case b.week:
		// 1970-01-01 was a Thursday; weeks start on Monday.
		return floorDiv(local-4*dayMs, 7*dayMs)*7*dayMs + 4*dayMs - b.offset
	default:
		return floorDiv(local, b.fixed)*b.fixed - b.offset
	}
}

// next returns the start of the bar after the one starting at start.
func (b barSpec) next(start int64) int64 {
	switch {
	case b.months > 0:
		return time.UnixMilli(start+b.offset).UTC().AddDate(0, b.months, 0).UnixMilli() - b.offset
	case b.week:
		return start + 7*dayMs
	default:
		return start + b.fixed
	}
}

// bar is one OKX candle in venue units.
type bar struct {
	ts          int64
	o, h, l, c  decimal.Decimal
	vol, volQ   decimal.Decimal
	buy         decimal.Decimal // taker buy base volume
	closed      bool
	initialized bool
}

func (b *bar) add(c venue.Candle) {
	if !b.initialized {
		b.o, b.h, b.l = c.O, c.H, c.L
		b.initialized = true
	}
	b.h = decimal.Max(b.h, c.H)
	b.l = decimal.Min(b.l, c.L)
	b.c = c.C
	b.vol = b.vol.Add(c.Volume)
	b.volQ = b.volQ.Add(c.QuoteVolume)
	b.buy = b.buy.Add(c.TakerBuyBase)
}

// candleRange returns up to limit bars of code with after > ts > before (0 = unbounded), newest first.
func (s *Server) candleRange(i *inst, code string, after, before int64, limit int) ([]bar, error) {
	spec := barSpecs[code]
	now := s.v.Now()
	end := now
	if after > 0 && after-1 < end {
		end = after - 1
	}
	if spec.direct != "" {
		cs, err := s.v.Candles(i.v.ID, spec.direct, end, limit)
		if err != nil {
			return nil, err
		}
		out := make([]bar, 0, len(cs))
		for k := len(cs) - 1; k >= 0 && len(out) < limit; k-- {
			c := cs[k]
			if c.Open <= before || (after > 0 && c.Open >= after) {
				continue
			}
			b := bar{ts: c.Open, closed: c.Closed}
			b.add(c)
			out = append(out, b)
		}
		return out, nil
	}
	// Aggregate: find the first bucket of the window, then read the base bars from there to end.
	last := spec.bucket(end)
	first := last
	for n := 1; n < limit; n++ {
		p := spec.bucket(first - 1)
		if p <= before {
			break
		}
		first = p
	}
	base, err := s.baseBars(i, spec.base, first, end)
	if err != nil {
		return nil, err
	}
	var out []bar
	var cur *bar
	for _, c := range base {
		start := spec.bucket(c.Open)
		if cur == nil || cur.ts != start {
			if cur != nil {
				out = append(out, *cur)
			}
			cur = &bar{ts: start, closed: spec.next(start) <= now}
		}
		cur.add(c)
	}
	if cur != nil {
		out = append(out, *cur)
	}
	slices.Reverse(out)
	kept := out[:0]
	for _, b := range out {
		if b.ts > before && len(kept) < limit {
			kept = append(kept, b)
		}
	}
	return kept, nil
}

// baseBars reads venue bars of interval iv with from <= start <= to, oldest first, paging back 1500 at a time.
func (s *Server) baseBars(i *inst, iv string, from, to int64) ([]venue.Candle, error) {
	var out []venue.Candle
	end := to
	for {
		cs, err := s.v.Candles(i.v.ID, iv, end, 1500)
		if err != nil {
			return nil, err
		}
		k := 0
		for k < len(cs) && cs[k].Open < from {
			k++
		}
		out = append(slices.Clone(cs[k:]), out...)
		if len(cs) < 1500 || k > 0 || len(cs) == 0 {
			return out, nil
		}
		end = cs[0].Open - 1
	}
}

// sodCache keeps the opening prices at the UTC and UTC+8 day starts (sodUtc0, sodUtc8) per instrument and day.
type sodCache struct {
	mu sync.Mutex
	m  map[sodKey]decimal.Decimal
}

type sodKey struct {
	id    string
	start int64
}

func newSodCache() *sodCache { return &sodCache{m: map[sodKey]decimal.Decimal{}} }

// openAt is the open of the first venue minute at or after start (the last price when there is none yet).
func (s *Server) openAt(i *inst, start int64) decimal.Decimal {
	k := sodKey{i.v.ID, start}
	s.sod.mu.Lock()
	if d, ok := s.sod.m[k]; ok {
		s.sod.mu.Unlock()
		return d
	}
	s.sod.mu.Unlock()
	var px decimal.Decimal
	cs, err := s.v.Candles(i.v.ID, "1m", start, 1)
	if err == nil && len(cs) > 0 && cs[len(cs)-1].Open == start {
		px = cs[len(cs)-1].O
	} else {
		px, _ = s.v.LastPrice(i.v.ID)
		return px // not cached: the day's first bar is not there yet
	}
	s.sod.mu.Lock()
	if len(s.sod.m) > 4096 {
		clear(s.sod.m)
	}
	s.sod.m[k] = px
	s.sod.mu.Unlock()
	return px
}

// sod returns sodUtc0 and sodUtc8 at now.
func (s *Server) sodPrices(i *inst, now int64) (utc0, utc8 decimal.Decimal) {
	d0 := floorDiv(now, dayMs) * dayMs
	d8 := floorDiv(now+hk, dayMs)*dayMs - hk
	return s.openAt(i, d0), s.openAt(i, d8)
}
