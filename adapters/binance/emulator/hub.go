package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
)

// streamKind is the kind of a market stream.
type streamKind uint8

const (
	stTrade streamKind = iota + 1
	stAggTrade
	stKline
	stDepthDiff
	stDepthPartial
	stMarkPrice
	stTicker
	stBookTicker
)

// streamSpec is a parsed stream name such as "btcusdt@depth@100ms".
type streamSpec struct {
	name     string
	kind     streamKind
	in       *venue.Instrument
	interval string // kline interval
	ms       int64  // update speed of depth, mark price
	levels   int    // partial depth levels
}

// parseStream validates a stream name for one market.
func (s *Server) parseStream(futures bool, name string) (streamSpec, error) {
	sym, rest, ok := strings.Cut(name, "@")
	if !ok || sym == "" || sym != strings.ToLower(sym) {
		return streamSpec{}, fmt.Errorf("invalid stream %q", name)
	}
	in, ok := s.instrument(futures, strings.ToUpper(sym))
	if !ok {
		return streamSpec{}, fmt.Errorf("invalid stream %q: unknown symbol", name)
	}
	sp := streamSpec{name: name, in: in}
	speed := func(opt string, def int64, allowed ...int64) (int64, bool) {
		if opt == "" {
			return def, true
		}
		if !strings.HasSuffix(opt, "ms") && !strings.HasSuffix(opt, "s") {
			return 0, false
		}
		var n int64
		var err error
		if strings.HasSuffix(opt, "ms") {
			n, err = strconv.ParseInt(strings.TrimSuffix(opt, "ms"), 10, 64)
		} else {
			n, err = strconv.ParseInt(strings.TrimSuffix(opt, "s"), 10, 64)
			n *= 1000
		}
		return n, err == nil && slices.Contains(allowed, n)
	}
	kind, opt, _ := strings.Cut(rest, "@")
	switch {
	case kind == "trade" && opt == "":
		sp.kind = stTrade
	case kind == "aggTrade" && opt == "":
		sp.kind = stAggTrade
	case strings.HasPrefix(kind, "kline_") && opt == "":
		sp.kind, sp.interval = stKline, strings.TrimPrefix(kind, "kline_")
		if _, ok := intervalDur[sp.interval]; !ok {
			return streamSpec{}, fmt.Errorf("invalid stream %q: interval", name)
		}
	case kind == "depth":
		sp.kind = stDepthDiff
		if futures {
			sp.ms, ok = speed(opt, 250, 100, 250, 500)
		} else {
			sp.ms, ok = speed(opt, 1000, 100, 1000)
		}
	case kind == "depth5" || kind == "depth10" || kind == "depth20":
		sp.kind = stDepthPartial
		sp.levels, _ = strconv.Atoi(strings.TrimPrefix(kind, "depth"))
		if futures {
			sp.ms, ok = speed(opt, 250, 100, 250, 500)
		} else {
			sp.ms, ok = speed(opt, 1000, 100, 1000)
		}
	case kind == "markPrice" && futures:
		sp.kind = stMarkPrice
		sp.ms, ok = speed(opt, 3000, 1000, 3000)
	case kind == "ticker" && opt == "":
		sp.kind = stTicker
	case kind == "bookTicker" && opt == "":
		sp.kind = stBookTicker
	default:
		ok = false
	}
	if !ok {
		return streamSpec{}, fmt.Errorf("invalid stream %q", name)
	}
	return sp, nil
}

// depthAgg merges the venue's book deltas of one instrument over a stream's update interval.
type depthAgg struct {
	spec     streamSpec
	first    uint64 // PrevSeq of the first delta in the batch (0 = empty batch)
	last     uint64
	bids     map[string]decimal.Decimal
	asks     map[string]decimal.Decimal
	prices   map[string]decimal.Decimal
	next     time.Time
	lastSent uint64 // partial depth: last reported u
	gap      bool   // a delta was dropped: the next one restarts the batch's first id, so clients see the gap
}

func (a *depthAgg) add(d *venue.BookDelta) {
	if a.last == 0 || a.gap {
		a.first = d.PrevSeq
		a.gap = false
	}
	a.last = d.Seq
	for _, l := range d.Bids {
		k := l.Price.String()
		a.bids[k] = l.Qty
		a.prices[k] = l.Price
	}
	for _, l := range d.Asks {
		k := l.Price.String()
		a.asks[k] = l.Qty
		a.prices[k] = l.Price
	}
}

// hub fans one market's venue events out to the WebSocket connections subscribed to each stream.
type hub struct {
	s       *Server
	futures bool

	mu    sync.Mutex
	subs  map[string]map[*wsConn]struct{}
	specs map[string]streamSpec
	aggs  map[string]*depthAgg
	// per-stream state of periodic streams
	due      map[string]time.Time
	klines   map[string]int64 // stream -> open time of the bar last sent
	lastBook map[string]string
	drop     map[string]int // instrument -> book deltas to drop (test hook)
}

func newHub(s *Server, futures bool) *hub {
	return &hub{s: s, futures: futures, subs: map[string]map[*wsConn]struct{}{}, specs: map[string]streamSpec{},
		aggs: map[string]*depthAgg{}, due: map[string]time.Time{}, klines: map[string]int64{},
		lastBook: map[string]string{}, drop: map[string]int{}}
}

// add subscribes a connection to a stream.
func (h *hub) add(sp streamSpec, c *wsConn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.subs[sp.name]
	if m == nil {
		m = map[*wsConn]struct{}{}
		h.subs[sp.name] = m
		h.specs[sp.name] = sp
		if sp.kind == stDepthDiff || sp.kind == stDepthPartial {
			h.aggs[sp.name] = &depthAgg{spec: sp, bids: map[string]decimal.Decimal{}, asks: map[string]decimal.Decimal{},
				prices: map[string]decimal.Decimal{}, next: time.Now().Add(time.Duration(sp.ms) * time.Millisecond)}
		}
	}
	m[c] = struct{}{}
}

// remove unsubscribes a connection from a stream.
func (h *hub) remove(name string, c *wsConn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.subs[name]
	delete(m, c)
	if len(m) == 0 {
		delete(h.subs, name)
		delete(h.specs, name)
		delete(h.aggs, name)
		delete(h.due, name)
		delete(h.klines, name)
		delete(h.lastBook, name)
	}
}

func (h *hub) publishLocked(name string, payload []byte) {
	for c := range h.subs[name] {
		c.enqueue(name, payload)
	}
}

func (h *hub) instruments() []string {
	list := h.s.spotL
	if h.futures {
		list = h.s.futL
	}
	ids := make([]string, 0, len(list))
	for _, in := range list {
		ids = append(ids, in.ID)
	}
	return ids
}

// subscribe opens the hub's subscription to the venue's market events.
func (h *hub) subscribe(ctx context.Context) *venue.Subscription {
	filter := venue.Filter{Kinds: []venue.EventKind{venue.EvBook, venue.EvTrade}, Instruments: h.instruments()}
	return h.s.v.Subscribe(ctx, filter, 1<<16)
}

// run consumes the venue's market events from sub (opened by the caller before any client can subscribe, so no
// book delta after a client's subscription is missed) until ctx ends. A subscription that overflows is replaced;
// the missing book deltas then show as a gap in U/pu, which clients resync from.
func (h *hub) run(ctx context.Context, sub *venue.Subscription) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for ctx.Err() == nil {
		if sub == nil {
			sub = h.subscribe(ctx)
		}
	loop:
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-sub.C:
				if !ok {
					if errors.Is(sub.Err(), venue.ErrClosed) {
						<-ctx.Done()
						return
					}
					h.s.log.Warn("market event subscription ended; resubscribing", "futures", h.futures, "err", sub.Err())
					sub = nil
					break loop
				}
				h.event(ev)
			case now := <-tick.C:
				h.periodic(now)
			}
		}
	}
}

func (h *hub) event(ev venue.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.subs) == 0 {
		return
	}
	sym := strings.ToLower(h.s.native[ev.Instrument])
	switch ev.Kind {
	case venue.EvBook:
		if h.drop[ev.Instrument] > 0 {
			h.drop[ev.Instrument]--
			for _, a := range h.aggs {
				if a.spec.in.ID == ev.Instrument {
					a.gap = true
				}
			}
			return
		}
		for _, a := range h.aggs {
			if a.spec.in.ID == ev.Instrument && a.spec.kind == stDepthDiff {
				a.add(ev.Book)
			}
		}
		name := sym + "@bookTicker"
		if _, ok := h.subs[name]; ok {
			h.bookTicker(name, ev.Book.Seq)
		}
	case venue.EvTrade:
		in := h.s.byID[ev.Instrument]
		if _, ok := h.subs[sym+"@trade"]; ok {
			h.publishLocked(sym+"@trade", h.tradeEvent(in, ev.Trade))
		}
		if _, ok := h.subs[sym+"@aggTrade"]; ok {
			h.publishLocked(sym+"@aggTrade", h.aggTradeEvent(in, ev.Trade))
		}
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("binance emulator: marshal event: %v", err))
	}
	return b
}

func (h *hub) tradeEvent(in *venue.Instrument, t *venue.Trade) []byte {
	sym := h.s.native[in.ID]
	now := h.s.v.Now()
	if h.futures {
		return mustJSON(struct {
			E  string `json:"e"`
			EE int64  `json:"E"`
			T  int64  `json:"T"`
			S  string `json:"s"`
			ID uint64 `json:"t"`
			P  string `json:"p"`
			Q  string `json:"q"`
			X  string `json:"X"`
			M  bool   `json:"m"`
		}{"trade", now, t.Time, sym, t.ID, h.s.px(true, in, t.Price), h.s.qty(true, in, t.Qty), "MARKET", t.TakerSide == venue.Sell})
	}
	return mustJSON(struct {
		E  string `json:"e"`
		EE int64  `json:"E"`
		S  string `json:"s"`
		ID uint64 `json:"t"`
		P  string `json:"p"`
		Q  string `json:"q"`
		T  int64  `json:"T"`
		M  bool   `json:"m"`
		BM bool   `json:"M"`
	}{"trade", now, sym, t.ID, h.s.px(false, in, t.Price), h.s.qty(false, in, t.Qty), t.Time, t.TakerSide == venue.Sell, true})
}

func (h *hub) aggTradeEvent(in *venue.Instrument, t *venue.Trade) []byte {
	sym := h.s.native[in.ID]
	now := h.s.v.Now()
	if h.futures {
		return mustJSON(struct {
			E  string `json:"e"`
			EE int64  `json:"E"`
			S  string `json:"s"`
			A  uint64 `json:"a"`
			P  string `json:"p"`
			Q  string `json:"q"`
			NQ string `json:"nq"`
			F  uint64 `json:"f"`
			L  uint64 `json:"l"`
			T  int64  `json:"T"`
			M  bool   `json:"m"`
		}{"aggTrade", now, sym, t.ID, h.s.px(true, in, t.Price), h.s.qty(true, in, t.Qty), h.s.qty(true, in, t.Qty),
			t.ID, t.ID, t.Time, t.TakerSide == venue.Sell})
	}
	return mustJSON(struct {
		E  string `json:"e"`
		EE int64  `json:"E"`
		S  string `json:"s"`
		A  uint64 `json:"a"`
		P  string `json:"p"`
		Q  string `json:"q"`
		F  uint64 `json:"f"`
		L  uint64 `json:"l"`
		T  int64  `json:"T"`
		M  bool   `json:"m"`
		BM bool   `json:"M"`
	}{"aggTrade", now, sym, t.ID, h.s.px(false, in, t.Price), h.s.qty(false, in, t.Qty), t.ID, t.ID, t.Time,
		t.TakerSide == venue.Sell, true})
}

// bookTicker publishes the best bid and ask when they changed.
func (h *hub) bookTicker(name string, seq uint64) {
	in := h.specs[name].in
	snap, err := h.s.v.BookSnapshot(in.ID, 1)
	if err != nil {
		return
	}
	var bid, ask venue.Level
	if len(snap.Bids) > 0 {
		bid = snap.Bids[0]
	}
	if len(snap.Asks) > 0 {
		ask = snap.Asks[0]
	}
	f := h.futures
	b, bq, a, aq := h.s.px(f, in, bid.Price), h.s.qty(f, in, bid.Qty), h.s.px(f, in, ask.Price), h.s.qty(f, in, ask.Qty)
	key := b + bq + a + aq
	if h.lastBook[name] == key {
		return
	}
	h.lastBook[name] = key
	sym := h.s.native[in.ID]
	if f {
		now := h.s.v.Now()
		h.publishLocked(name, mustJSON(struct {
			E  string `json:"e"`
			U  uint64 `json:"u"`
			EE int64  `json:"E"`
			T  int64  `json:"T"`
			S  string `json:"s"`
			B  string `json:"b"`
			BQ string `json:"B"`
			A  string `json:"a"`
			AQ string `json:"A"`
		}{"bookTicker", 2 * snap.Seq, now, snap.Time, sym, b, bq, a, aq}))
		return
	}
	h.publishLocked(name, mustJSON(struct {
		U  uint64 `json:"u"`
		S  string `json:"s"`
		B  string `json:"b"`
		BQ string `json:"B"`
		A  string `json:"a"`
		AQ string `json:"A"`
	}{snap.Seq, sym, b, bq, a, aq}))
}

// periodic flushes depth batches and sends the streams that Binance pushes on a timer.
func (h *hub) periodic(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for name, a := range h.aggs {
		if now.Before(a.next) {
			continue
		}
		a.next = now.Add(time.Duration(a.spec.ms) * time.Millisecond)
		if a.spec.kind == stDepthPartial {
			h.partialDepth(name, a)
			continue
		}
		if a.last == 0 {
			continue
		}
		h.publishLocked(name, h.depthEvent(a))
		a.first, a.last = 0, 0
		clear(a.bids)
		clear(a.asks)
		clear(a.prices)
	}
	for name, sp := range h.specs {
		var every time.Duration
		switch sp.kind {
		case stMarkPrice:
			every = time.Duration(sp.ms) * time.Millisecond
		case stTicker, stKline:
			every = time.Second
		default:
			continue
		}
		if now.Before(h.due[name]) {
			continue
		}
		h.due[name] = now.Add(every)
		switch sp.kind {
		case stMarkPrice:
			h.markPrice(sp)
		case stTicker:
			h.ticker(sp)
		case stKline:
			h.kline(sp)
		}
	}
}

func (h *hub) levels(in *venue.Instrument, m map[string]decimal.Decimal, prices map[string]decimal.Decimal, desc bool) [][2]string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		c := prices[a].Cmp(prices[b])
		if desc {
			return -c
		}
		return c
	})
	out := make([][2]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, [2]string{h.s.px(h.futures, in, prices[k]), h.s.qty(h.futures, in, m[k])})
	}
	return out
}

type depthUpdate struct {
	E  string      `json:"e"`
	EE int64       `json:"E"`
	T  *int64      `json:"T,omitempty"`
	S  string      `json:"s"`
	U  uint64      `json:"U"`
	UL uint64      `json:"u"`
	PU *uint64     `json:"pu,omitempty"`
	B  [][2]string `json:"b"`
	A  [][2]string `json:"a"`
}

func (h *hub) depthEvent(a *depthAgg) []byte {
	in := a.spec.in
	now := h.s.v.Now()
	ev := depthUpdate{E: "depthUpdate", EE: now, S: h.s.native[in.ID], U: a.first + 1, UL: a.last,
		B: h.levels(in, a.bids, a.prices, true), A: h.levels(in, a.asks, a.prices, false)}
	if h.futures {
		pu := 2 * a.first
		ev.T, ev.PU = &now, &pu
		ev.U, ev.UL = 2*(a.first+1)-1, 2*a.last
	}
	return mustJSON(ev)
}

func (h *hub) partialDepth(name string, a *depthAgg) {
	in := a.spec.in
	snap, err := h.s.v.BookSnapshot(in.ID, a.spec.levels)
	if err != nil {
		return
	}
	lv := func(ls []venue.Level) [][2]string {
		out := make([][2]string, 0, len(ls))
		for _, l := range ls {
			out = append(out, [2]string{h.s.px(h.futures, in, l.Price), h.s.qty(h.futures, in, l.Qty)})
		}
		return out
	}
	if !h.futures {
		h.publishLocked(name, mustJSON(struct {
			LastUpdateID uint64      `json:"lastUpdateId"`
			Bids         [][2]string `json:"bids"`
			Asks         [][2]string `json:"asks"`
		}{snap.Seq, lv(snap.Bids), lv(snap.Asks)}))
		return
	}
	now := h.s.v.Now()
	u := 2 * snap.Seq
	pu := a.lastSent
	a.lastSent = u
	h.publishLocked(name, mustJSON(depthUpdate{E: "depthUpdate", EE: now, T: &snap.Time, S: h.s.native[in.ID],
		U: max(pu+1, 1), UL: u, PU: &pu, B: lv(snap.Bids), A: lv(snap.Asks)}))
}

func (h *hub) markPrice(sp streamSpec) {
	p, err := h.s.premium(sp.in)
	if err != nil {
		return
	}
	h.publishLocked(sp.name, mustJSON(struct {
		E  string `json:"e"`
		EE int64  `json:"E"`
		S  string `json:"s"`
		P  string `json:"p"`
		I  string `json:"i"`
		PP string `json:"P"`
		R  string `json:"r"`
		T  int64  `json:"T"`
	}{"markPriceUpdate", h.s.v.Now(), p.Symbol, p.MarkPrice, p.IndexPrice, p.EstimatedSettlePrice, p.LastFundingRate,
		p.NextFundingTime}))
}

func (h *hub) ticker(sp streamSpec) {
	in := sp.in
	ts, err := h.s.tickerStats(in)
	if err != nil {
		return
	}
	f := h.futures
	t := ts.t
	now := h.s.v.Now()
	type common struct {
		E   string `json:"e"`
		EE  int64  `json:"E"`
		S   string `json:"s"`
		P   string `json:"p"`
		PP  string `json:"P"`
		W   string `json:"w"`
		C   string `json:"c"`
		Q   string `json:"Q"`
		O   string `json:"o"`
		H   string `json:"h"`
		L   string `json:"l"`
		V   string `json:"v"`
		QV  string `json:"q"`
		OT  int64  `json:"O"`
		CT  int64  `json:"C"`
		F   int64  `json:"F"`
		LID int64  `json:"L"`
		N   int64  `json:"n"`
	}
	c := common{"24hrTicker", now, h.s.native[in.ID], h.s.px(f, in, ts.change), ts.pct.StringFixed(3),
		h.s.px(f, in, ts.wavg), h.s.px(f, in, t.Last), h.s.qty(f, in, ts.lastQty), h.s.px(f, in, t.Open),
		h.s.px(f, in, t.High), h.s.px(f, in, t.Low), h.s.qty(f, in, t.Volume), amt(f, t.QuoteVolume), ts.openTime,
		ts.closeTime, ts.first, ts.last, t.Trades}
	if f {
		h.publishLocked(sp.name, mustJSON(c))
		return
	}
	h.publishLocked(sp.name, mustJSON(struct {
		common
		X  string `json:"x"`
		B  string `json:"b"`
		BQ string `json:"B"`
		A  string `json:"a"`
		AQ string `json:"A"`
	}{c, h.s.px(f, in, t.Open), h.s.px(f, in, t.BestBid.Price), h.s.qty(f, in, t.BestBid.Qty),
		h.s.px(f, in, t.BestAsk.Price), h.s.qty(f, in, t.BestAsk.Qty)}))
}

// kline publishes the forming bar every second, and the previous bar once as closed when a new one starts.
func (h *hub) kline(sp streamSpec) {
	bars, err := h.s.v.Candles(sp.in.ID, sp.interval, 0, 2)
	if err != nil || len(bars) == 0 {
		return
	}
	cur := bars[len(bars)-1]
	if last, ok := h.klines[sp.name]; ok && last != cur.Open && len(bars) == 2 && bars[0].Open == last {
		prev := bars[0]
		prev.Closed = true
		h.publishLocked(sp.name, h.klineEvent(sp, prev))
	}
	h.klines[sp.name] = cur.Open
	h.publishLocked(sp.name, h.klineEvent(sp, cur))
}

func (h *hub) klineEvent(sp streamSpec, c venue.Candle) []byte {
	in, f := sp.in, h.futures
	first, last := int64(-1), int64(-1)
	if c.Trades > 0 {
		if tr, err := h.s.v.RecentTrades(in.ID, 1); err == nil && len(tr) == 1 {
			last = int64(tr[0].ID)
			first = max64(0, last-c.Trades+1)
		}
	}
	type k struct {
		T  int64  `json:"t"`
		CT int64  `json:"T"`
		S  string `json:"s"`
		I  string `json:"i"`
		F  int64  `json:"f"`
		L  int64  `json:"L"`
		O  string `json:"o"`
		C  string `json:"c"`
		H  string `json:"h"`
		Lo string `json:"l"`
		V  string `json:"v"`
		N  int64  `json:"n"`
		X  bool   `json:"x"`
		Q  string `json:"q"`
		VB string `json:"V"`
		QB string `json:"Q"`
		B  string `json:"B"`
	}
	sym := h.s.native[in.ID]
	return mustJSON(struct {
		E  string `json:"e"`
		EE int64  `json:"E"`
		S  string `json:"s"`
		K  k      `json:"k"`
	}{"kline", h.s.v.Now(), sym, k{c.Open, c.CloseTime, sym, sp.interval, first, last, h.s.px(f, in, c.O),
		h.s.px(f, in, c.C), h.s.px(f, in, c.H), h.s.px(f, in, c.L), h.s.qty(f, in, c.Volume), c.Trades, c.Closed,
		amt(f, c.QuoteVolume), h.s.qty(f, in, c.TakerBuyBase), amt(f, c.TakerBuyQuote), "0"}})
}

// DropDepthUpdates makes the diff depth streams of one market lose the next n book updates of each instrument, as a
// network or exchange hiccup would: the next events then show a gap in U (spot) or pu (futures), and clients must
// resynchronise from a REST snapshot. Tests of book resync use it.
func (s *Server) DropDepthUpdates(futures bool, n int) {
	h := s.spotHub
	if futures {
		h = s.futHub
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range h.instruments() {
		h.drop[id] += n
	}
}
