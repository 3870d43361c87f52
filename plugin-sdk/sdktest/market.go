package sdktest

import (
	"cmp"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

const (
	minuteMs = int64(60_000)
	// bookLevels is how many levels per side the synthetic book has, and the most GetOrderBook returns.
	bookLevels = 50
	// maxTrades is how many recent public trades each instrument keeps.
	maxTrades = 1000
)

// underlying is the price one base asset's instruments quote around, in units of 1/unitsPerUSDT USDT.
type underlying struct {
	spec  baseSpec
	price int64
	rng   *rand.Rand
}

// bar is one minute of an instrument's history. Prices are in ticks, volumes in steps, quote volume in
// tick*step units, so a bar is plain integers and candles of any interval are exact sums of bars.
type bar struct {
	open, high, low, close int64
	volume, buyVolume      int64
	quoteVolume            int64
	trades                 int64
}

// level is one price level: price in ticks, quantity in steps.
type level struct{ price, qty int64 }

// bookSnap is a published, immutable view of an instrument's book. Streams hold on to it without locks.
type bookSnap struct {
	seq        int64
	time       int64
	bids, asks []level
}

// instrument is the live state of one tradable instrument.
type instrument struct {
	grid
	spec instrumentSpec
	info *exchangev1.Instrument
	key  string
	und  *underlying
	rng  *rand.Rand

	minQty, maxQty, marketMax int64 // steps
	minNotional               decimal.Decimal

	// premiumBps is the SWAP price's premium over the underlying, in basis points; it drives the funding rate.
	premiumBps int64

	// History: bars[i] opens at firstMinute + i minutes; the last bar is the one still forming.
	firstMinute int64
	bars        []bar

	// The order book: synthetic market-maker levels plus resting orders of paper accounts, which rest in
	// price-time priority (bids highest first, asks lowest first).
	synthBids, synthAsks []level
	bids, asks           []*order
	seq                  int64
	book                 *bookSnap

	trades    []*exchangev1.Trade // oldest first, at most maxTrades
	nextTrade int64
	// newTrades are the trades since the last publish, for streams.
	newTrades []*exchangev1.Trade
	last      int64 // last trade price, ticks
}

func seededRand(seed int64, name string) *rand.Rand {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	return rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
}

// buildMarket creates every instrument and generates its history backwards from the starting price, so that the
// newest bar is the current minute. Everything follows from the seed; only the timestamps follow the clock.
func buildMarket(seed int64, historyDays int, nowMs int64) (map[string]*underlying, []*instrument) {
	unds := map[string]*underlying{}
	var insts []*instrument
	n := historyDays * 1440
	nowMin := nowMs / minuteMs * minuteMs
	for _, b := range bases {
		u := &underlying{spec: b, price: b.start, rng: seededRand(seed, "underlying:"+b.asset)}
		unds[b.asset] = u
		// closes[i] is the underlying at the end of minute i; generated from the newest backwards.
		closes := make([]int64, n+1)
		closes[n] = b.start
		for i := n; i > 0; i-- {
			p := closes[i]
			move := int64(u.rng.NormFloat64() * b.volBps / 10_000 * float64(p))
			revert := (b.start - p) / 2_000 // a gentle pull keeps the walk within a plausible band
			closes[i-1] = max(p-move+revert, b.start/10)
		}
		for _, spec := range instrumentSpecs {
			if spec.base != b.asset {
				continue
			}
			in := newInstrument(seed, spec, u)
			in.firstMinute = nowMin - int64(n)*minuteMs
			in.bars = make([]bar, n+1)
			for i := 0; i <= n; i++ {
				c := in.fromUnits(closes[i])
				o := c
				if i > 0 {
					o = in.fromUnits(closes[i-1])
				}
				if i == n { // the forming bar starts flat: live trades fill it
					in.bars[i] = bar{open: c, high: c, low: c, close: c}
					continue
				}
				wick := int64(math.Abs(in.rng.NormFloat64()) * b.volBps / 20_000 * float64(c))
				hi, lo := max(o, c)+wick, max(min(o, c)-wick, 1)
				vol := spec.levelQty * int64(5+in.rng.IntN(25)) / 10
				in.bars[i] = bar{
					open: o, high: hi, low: lo, close: c,
					volume:      vol,
					buyVolume:   vol * int64(30+in.rng.IntN(41)) / 100,
					quoteVolume: vol * ((o + hi + lo + c) / 4),
					trades:      int64(20 + in.rng.IntN(180)),
				}
			}
			in.last = in.bars[n].close
			in.seedTrades(nowMs)
			insts = append(insts, in)
		}
	}
	return unds, insts
}

func newInstrument(seed int64, spec instrumentSpec, u *underlying) *instrument {
	g := grid{tick: mustDec(spec.tickSize), step: mustDec(spec.stepSize)}
	g.unitsPerTick = g.tick.Mul(decimal.NewFromInt(unitsPerUSDT)).IntPart()
	symbol := spec.base + "USDT"
	info := &exchangev1.Instrument{
		Symbol:         symbol,
		MarketType:     spec.marketType,
		Base:           spec.base,
		Quote:          "USDT",
		Status:         exchangev1.InstrumentStatus_INSTRUMENT_STATUS_TRADING,
		TickSize:       spec.tickSize,
		MinPrice:       spec.tickSize,
		MaxPrice:       g.tick.Mul(decimal.NewFromInt(1_000_000_000)).String(),
		StepSize:       spec.stepSize,
		MinQty:         spec.minQty,
		MaxQty:         spec.maxQty,
		MarketStepSize: spec.stepSize,
		MarketMinQty:   spec.minQty,
		MarketMaxQty:   spec.marketMax,
		MinNotional:    spec.minNotional,
		ListedTime:     1_577_836_800_000, // 2020-01-01
	}
	if spec.marketType == exchangev1.MarketType_MARKET_TYPE_SWAP {
		info.Settle = "USDT"
		info.ContractValue = "1"
		info.ContractValueAsset = spec.base
		info.MaxLeverage = strconv.FormatInt(spec.maxLeverage, 10)
		info.Family = spec.base + "-USDT"
	}
	in := &instrument{
		grid: g, spec: spec, info: info, und: u,
		key:         instKey(spec.marketType, symbol),
		rng:         seededRand(seed, instKey(spec.marketType, symbol)),
		minNotional: mustDec(spec.minNotional),
	}
	in.minQty, _ = g.stepsOf("min_qty", mustDec(spec.minQty))
	in.maxQty, _ = g.stepsOf("max_qty", mustDec(spec.maxQty))
	in.marketMax, _ = g.stepsOf("market_max_qty", mustDec(spec.marketMax))
	if in.isSwap() {
		in.premiumBps = 2
	}
	return in
}

func (in *instrument) isSwap() bool {
	return in.spec.marketType == exchangev1.MarketType_MARKET_TYPE_SWAP
}

// fromUnits converts an underlying price to this instrument's ticks, premium included.
func (in *instrument) fromUnits(units int64) int64 {
	p := units * (10_000 + in.premiumBps) / 10_000
	return max((p+in.unitsPerTick/2)/in.unitsPerTick, 1)
}

// seedTrades fills the recent-trades list with trades from the last minute so GetTrades has data at once.
func (in *instrument) seedTrades(nowMs int64) {
	p := in.last
	for i := range 100 {
		t := nowMs - minuteMs + int64(i)*minuteMs/100
		side := exchangev1.Side_SIDE_BUY
		if in.rng.IntN(2) == 0 {
			side = exchangev1.Side_SIDE_SELL
		}
		q := max(in.spec.levelQty*int64(1+in.rng.IntN(20))/100, 1)
		in.appendTrade(p+int64(in.rng.IntN(3))-1, q, side, t)
	}
	in.newTrades = nil
}

// appendTrade records a public trade and does not touch the bars (seeded trades are already in the history).
func (in *instrument) appendTrade(price, qty int64, side exchangev1.Side, t int64) *exchangev1.Trade {
	in.nextTrade++
	tr := &exchangev1.Trade{
		Id:       strconv.FormatInt(in.nextTrade, 10),
		Price:    in.price(price).String(),
		Qty:      in.qty(qty).String(),
		QuoteQty: in.price(price).Mul(in.qty(qty)).String(),
		Side:     side,
		Time:     t,
	}
	in.trades = append(in.trades, tr)
	if len(in.trades) > maxTrades {
		in.trades = slices.Delete(in.trades, 0, len(in.trades)-maxTrades)
	}
	in.newTrades = append(in.newTrades, tr)
	return tr
}

// recordTrade records a public trade and folds it into the forming bar.
func (in *instrument) recordTrade(price, qty int64, side exchangev1.Side, t int64) {
	in.rollBars(t)
	in.appendTrade(price, qty, side, t)
	b := &in.bars[len(in.bars)-1]
	b.high, b.low, b.close = max(b.high, price), min(b.low, price), price
	b.volume += qty
	if side == exchangev1.Side_SIDE_BUY {
		b.buyVolume += qty
	}
	b.quoteVolume += price * qty
	b.trades++
	in.last = price
}

// rollBars appends flat bars until the last bar is the minute containing t, and trims history to its window.
func (in *instrument) rollBars(t int64) {
	for in.firstMinute+int64(len(in.bars))*minuteMs <= t {
		c := in.bars[len(in.bars)-1].close
		in.bars = append(in.bars, bar{open: c, high: c, low: c, close: c})
	}
}

func (in *instrument) trimBars(keepMinutes int) {
	if extra := len(in.bars) - keepMinutes; extra > 1440 { // trim in chunks, not every minute
		in.bars = slices.Delete(in.bars, 0, extra)
		in.firstMinute += int64(extra) * minuteMs
	}
}

// mid is the instrument's fair price now, in ticks.
func (in *instrument) mid() int64 { return in.fromUnits(in.und.price) }

// refreshSynth replaces the synthetic market-maker levels around the current mid.
func (in *instrument) refreshSynth() {
	gap := in.spec.levelGap
	bestBid := max(in.mid()-max(gap/2, 1), int64(bookLevels)*gap+1)
	bestAsk := bestBid + gap
	in.synthBids, in.synthAsks = in.synthBids[:0], in.synthAsks[:0]
	for i := range int64(bookLevels) {
		depthFactor := 10 + i // deeper levels are larger
		qb := max(in.spec.levelQty*depthFactor*int64(50+in.rng.IntN(100))/1000, 1)
		qa := max(in.spec.levelQty*depthFactor*int64(50+in.rng.IntN(100))/1000, 1)
		in.synthBids = append(in.synthBids, level{price: bestBid - i*gap, qty: qb})
		in.synthAsks = append(in.synthAsks, level{price: bestAsk + i*gap, qty: qa})
	}
}

// snapshot merges synthetic levels and resting orders into a new published book with the next sequence.
func (in *instrument) snapshot(t int64) *bookSnap {
	in.seq++
	merge := func(synth []level, orders []*order, better func(a, b int64) bool) []level {
		agg := map[int64]int64{}
		for _, l := range synth {
			agg[l.price] += l.qty
		}
		for _, o := range orders {
			agg[o.price] += o.qty - o.filled
		}
		out := make([]level, 0, len(agg))
		for p, q := range agg {
			if q > 0 {
				out = append(out, level{p, q})
			}
		}
		slices.SortFunc(out, func(a, b level) int {
			if better(a.price, b.price) {
				return -1
			}
			return 1
		})
		return out[:min(len(out), bookLevels)]
	}
	in.book = &bookSnap{
		seq:  in.seq,
		time: t,
		bids: merge(in.synthBids, in.bids, func(a, b int64) bool { return a > b }),
		asks: merge(in.synthAsks, in.asks, func(a, b int64) bool { return a < b }),
	}
	return in.book
}

// bestOpposite returns the best price a taker on side can trade at, and whether any liquidity exists.
func (in *instrument) bestOpposite(side exchangev1.Side) (int64, bool) {
	synth, orders := in.synthAsks, in.asks
	if side == exchangev1.Side_SIDE_SELL {
		synth, orders = in.synthBids, in.bids
	}
	best, ok := int64(0), false
	if len(synth) > 0 {
		best, ok = synth[0].price, true
	}
	if len(orders) > 0 {
		p := orders[0].price
		if !ok || (side == exchangev1.Side_SIDE_BUY && p < best) || (side == exchangev1.Side_SIDE_SELL && p > best) {
			best, ok = p, true
		}
	}
	return best, ok
}

// crosses reports whether price (ticks) on side is marketable against opposite price op.
func crosses(side exchangev1.Side, limit, op int64) bool {
	if side == exchangev1.Side_SIDE_BUY {
		return op <= limit
	}
	return op >= limit
}

// walk visits the opposite side's liquidity in execution order (synthetic first at an equal price) without
// changing anything, calling fn(price, qty, maker) until fn returns false. maker is nil for synthetic liquidity.
func (in *instrument) walk(side exchangev1.Side, fn func(price, qty int64, maker *order) bool) {
	synth, orders := in.synthAsks, in.asks
	if side == exchangev1.Side_SIDE_SELL {
		synth, orders = in.synthBids, in.bids
	}
	i, j := 0, 0
	for i < len(synth) || j < len(orders) {
		useSynth := j >= len(orders)
		if !useSynth && i < len(synth) {
			sp, op := synth[i].price, orders[j].price
			useSynth = sp == op || crosses(side, op, sp) // synthetic is better or equal
		}
		if useSynth {
			if !fn(synth[i].price, synth[i].qty, nil) {
				return
			}
			i++
			continue
		}
		o := orders[j]
		if !fn(o.price, o.qty-o.filled, o) {
			return
		}
		j++
	}
}

// available sums the liquidity a taker on side could take up to limit (0: no limit) in steps.
func (in *instrument) available(side exchangev1.Side, limit int64) int64 {
	var total int64
	in.walk(side, func(p, q int64, _ *order) bool {
		if limit > 0 && !crosses(side, limit, p) {
			return false
		}
		total += q
		return true
	})
	return total
}

// insertResting puts an order in the book in price-time priority.
func (in *instrument) insertResting(o *order) {
	list := &in.bids
	better := func(a, b int64) bool { return a > b }
	if o.side == exchangev1.Side_SIDE_SELL {
		list = &in.asks
		better = func(a, b int64) bool { return a < b }
	}
	i := 0
	for i < len(*list) && !better(o.price, (*list)[i].price) {
		i++
	}
	*list = slices.Insert(*list, i, o)
}

// removeResting takes an order out of the book; it is a no-op for an order that is not resting.
func (in *instrument) removeResting(o *order) {
	for _, list := range []*[]*order{&in.bids, &in.asks} {
		if i := slices.Index(*list, o); i >= 0 {
			*list = slices.Delete(*list, i, i+1)
			return
		}
	}
}

// aggregate sums bars [from, to) (indexes into in.bars) into one candle.
func (in *instrument) aggregate(openTime int64, from, to int, nowMs, intervalMs int64) *exchangev1.Candle {
	first := in.bars[from]
	c := bar{open: first.open, high: first.high, low: first.low}
	for _, b := range in.bars[from:to] {
		c.high, c.low, c.close = max(c.high, b.high), min(c.low, b.low), b.close
		c.volume += b.volume
		c.quoteVolume += b.quoteVolume
		c.trades += b.trades
	}
	return &exchangev1.Candle{
		OpenTime:    openTime,
		Open:        in.price(c.open).String(),
		High:        in.price(c.high).String(),
		Low:         in.price(c.low).String(),
		Close:       in.price(c.close).String(),
		Volume:      in.qty(c.volume).String(),
		QuoteVolume: in.tick.Mul(in.step).Mul(decimal.NewFromInt(c.quoteVolume)).String(),
		Trades:      c.trades,
		Closed:      openTime+intervalMs <= nowMs,
	}
}

// barIndex is the index of the bar opening at minute t (may be out of range).
func (in *instrument) barIndex(t int64) int { return int((t - in.firstMinute) / minuteMs) }

// candles returns up to limit candles of the interval whose open time is in [start, end], ascending.
func (in *instrument) candles(iv interval, start, end int64, limit int, nowMs int64) []*exchangev1.Candle {
	var out []*exchangev1.Candle
	lastOpen := in.firstMinute + int64(len(in.bars)-1)*minuteMs
	for open := iv.align(min(end, lastOpen)); len(out) < limit && open >= start; open = iv.prev(open) {
		from := max(in.barIndex(open), 0)
		to := min(in.barIndex(iv.next(open)), len(in.bars))
		if to <= 0 || from >= to {
			break
		}
		out = append(out, in.aggregate(open, from, to, nowMs, iv.next(open)-open))
		if in.barIndex(open) <= 0 { // the oldest bucket: nothing before it
			break
		}
	}
	slices.Reverse(out)
	return out
}

// stats24h summarises the last 24 hours of bars for a ticker.
func (in *instrument) stats24h() (open, high, low int64, vol, quoteVol int64) {
	from := max(len(in.bars)-1440, 0)
	open, high, low = in.bars[from].open, in.bars[from].high, in.bars[from].low
	for _, b := range in.bars[from:] {
		high, low = max(high, b.high), min(low, b.low)
		vol += b.volume
		quoteVol += b.quoteVolume
	}
	return open, high, low, vol, quoteVol
}

func sortTradesByTime(ts []*exchangev1.Trade) {
	slices.SortStableFunc(ts, func(a, b *exchangev1.Trade) int { return cmp.Compare(a.Time, b.Time) })
}
