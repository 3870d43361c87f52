package emulator

import (
	"context"
	"net/http"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
)

// listenKey is a user data stream key of one account and market.
type listenKey struct {
	key     string
	account string
	futures bool
	expires int64 // venue ms
	done    chan struct{}
	expired bool
}

func (s *Server) newListenKey(q *req) (any, error) {
	now := s.v.Now()
	ttl := s.cfg.ListenKeyTTL.Milliseconds()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, lk := range s.keys {
		if lk.account == q.account && lk.futures == q.futures {
			lk.expires = now + ttl
			return map[string]string{"listenKey": lk.key}, nil
		}
	}
	lk := &listenKey{key: randomID(60), account: q.account, futures: q.futures, expires: now + ttl,
		done: make(chan struct{})}
	s.keys[lk.key] = lk
	return map[string]string{"listenKey": lk.key}, nil
}

// findKey resolves the listenKey parameter (futures may omit it: the account's key is meant).
func (s *Server) findKeyLocked(q *req) (*listenKey, error) {
	key := q.str("listenKey")
	if key == "" && !q.futures {
		return nil, badParam("listenKey")
	}
	for _, lk := range s.keys {
		if lk.account == q.account && lk.futures == q.futures && (key == "" || lk.key == key) {
			return lk, nil
		}
	}
	return nil, errf(http.StatusBadRequest, codeInvalidListenKey, "This listenKey does not exist.")
}

func (s *Server) keepListenKey(q *req) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lk, err := s.findKeyLocked(q)
	if err != nil {
		return nil, err
	}
	lk.expires = s.v.Now() + s.cfg.ListenKeyTTL.Milliseconds()
	if q.futures {
		return map[string]string{"listenKey": lk.key}, nil
	}
	return struct{}{}, nil
}

func (s *Server) deleteListenKey(q *req) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lk, err := s.findKeyLocked(q)
	if err != nil {
		return nil, err
	}
	delete(s.keys, lk.key)
	close(lk.done)
	return struct{}{}, nil
}

func (s *Server) listenKeyValid(key string, futures bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	lk, ok := s.keys[key]
	return ok && lk.futures == futures
}

// ExpireListenKeys expires every listen key now (as if an hour passed without keepalive).
func (s *Server) ExpireListenKeys() {
	s.expireKeys(1 << 62)
}

func (s *Server) expireKeys(now int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, lk := range s.keys {
		if lk.expires <= now {
			lk.expired = true
			delete(s.keys, k)
			close(lk.done)
		}
	}
}

// janitor expires listen keys on the venue clock until ctx ends.
func (s *Server) janitor(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			now := s.v.Now()
			s.expireKeys(now)
			s.fireTimers(now)
		}
	}
}

// userSink receives user data events the emulator makes itself (leverage changes, wallet balance deltas) for one
// running user data stream.
type userSink struct {
	account string
	futures bool
	c       chan []byte
}

// userSinkSize bounds the emulator-made events waiting for one stream; when full, events are dropped (they are
// informational: the REST state is authoritative).
const userSinkSize = 64

// pushUser sends an event to every user data stream of an account and market.
func (s *Server) pushUser(account string, futures bool, payload []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.sinks {
		if k.account == account && k.futures == futures {
			select {
			case k.c <- payload:
			default:
			}
		}
	}
}

// startUser attaches a listen key's account events to the connection.
func (c *wsConn) startUser(key string) {
	c.s.mu.Lock()
	lk, ok := c.s.keys[key]
	c.s.mu.Unlock()
	if !ok {
		return
	}
	ctx, cancel := context.WithCancel(c.ctx)
	c.mu.Lock()
	if _, dup := c.users[key]; dup {
		c.mu.Unlock()
		cancel()
		return
	}
	c.users[key] = cancel
	c.uwg.Add(1)
	c.mu.Unlock()
	// The venue subscription is opened here, before the goroutine starts, so no event after the connection is
	// accepted can be missed.
	sub := c.s.v.Subscribe(ctx, venue.Filter{Account: lk.account,
		Kinds: []venue.EventKind{venue.EvOrder, venue.EvFill, venue.EvPosition, venue.EvBalance}}, 4096)
	sink := &userSink{account: lk.account, futures: lk.futures, c: make(chan []byte, userSinkSize)}
	c.s.mu.Lock()
	c.s.sinks[sink] = struct{}{}
	c.s.mu.Unlock()
	go func() {
		defer c.uwg.Done()
		defer cancel()
		defer func() {
			c.s.mu.Lock()
			delete(c.s.sinks, sink)
			c.s.mu.Unlock()
		}()
		t := &userTranslator{s: c.s, futures: lk.futures, account: lk.account, pending: map[uint64][]venue.Fill{},
			seen: map[uint64]venue.Order{}, balances: map[string]venue.Balance{}, positions: map[string]venue.Position{}}
		emit := func(b []byte) { c.enqueue(key, b) }
		for {
			select {
			case <-ctx.Done():
				return
			case b := <-sink.c:
				emit(b)
			case <-lk.done:
				if lk.expired {
					emit(mustJSON(map[string]any{"e": "listenKeyExpired", "E": c.s.v.Now(), "listenKey": key}))
				}
				return
			case ev, ok := <-sub.C:
				if !ok {
					if ctx.Err() == nil {
						c.kill(0, "")
					}
					return
				}
				t.handle(ev, emit)
				// An empty queue can be the middle of an operation (its order event still to come after its
				// fills): wait for the venue to finish publishing before treating the operation as complete.
				if len(sub.C) == 0 {
					c.s.v.Barrier()
				}
				if len(sub.C) == 0 {
					t.flushPending(emit)
					t.flushAccount(emit)
				}
			}
		}
	}()
}

// userTranslator turns venue account events into Binance user data events.
type userTranslator struct {
	s       *Server
	futures bool
	account string
	pending map[uint64][]venue.Fill // fills waiting for their order's event
	order   []uint64
	seen    map[uint64]venue.Order // last reported state of open orders
	// account changes waiting for the end of the operation
	balances  map[string]venue.Balance
	balOrder  []string
	positions map[string]venue.Position
	posOrder  []string
}

func (t *userTranslator) mine(instrument string) bool {
	in := t.s.byID[instrument]
	return in != nil && (in.Market == venue.Perp) == t.futures
}

func (t *userTranslator) handle(ev venue.Event, emit func([]byte)) {
	switch ev.Kind {
	case venue.EvFill:
		if !t.mine(ev.Fill.Instrument) {
			return
		}
		if _, ok := t.pending[ev.Fill.OrderID]; !ok {
			t.order = append(t.order, ev.Fill.OrderID)
		}
		t.pending[ev.Fill.OrderID] = append(t.pending[ev.Fill.OrderID], *ev.Fill)
	case venue.EvOrder:
		if !t.mine(ev.Order.Instrument) {
			return
		}
		t.orderEvent(*ev.Order, emit)
	case venue.EvPosition:
		if !t.futures || !t.mine(ev.Position.Instrument) {
			return
		}
		k := ev.Position.Instrument + "/" + posSideName(ev.Position.Side)
		if _, ok := t.positions[k]; !ok {
			t.posOrder = append(t.posOrder, k)
		}
		t.positions[k] = *ev.Position
	case venue.EvBalance:
		b := ev.Balance
		if b.Wallet != venue.TradingWallet || t.futures && b.Asset != "USDT" {
			return // the funding wallet has no user data events; futures margin is USDT
		}
		if _, ok := t.balances[b.Asset]; !ok {
			t.balOrder = append(t.balOrder, b.Asset)
		}
		t.balances[b.Asset] = *b
	}
}

// flushAccount sends the balance and position changes collected since the last flush as one account event, after
// the order reports of the same operation, the way Binance orders them.
func (t *userTranslator) flushAccount(emit func([]byte)) {
	if len(t.balOrder) == 0 && len(t.posOrder) == 0 {
		return
	}
	now := t.s.v.Now()
	if t.futures {
		bs := make([]map[string]string, 0, len(t.balOrder))
		for _, a := range t.balOrder {
			b := t.balances[a]
			bs = append(bs, map[string]string{"a": b.Asset, "wb": b.Total.StringFixed(8), "cw": b.Total.StringFixed(8),
				"bc": "0"})
		}
		ps := make([]map[string]string, 0, len(t.posOrder))
		for _, k := range t.posOrder {
			ps = append(ps, t.positionRow(t.positions[k]))
		}
		emit(mustJSON(map[string]any{"e": "ACCOUNT_UPDATE", "E": now, "T": now,
			"a": map[string]any{"m": "ORDER", "B": bs, "P": ps}}))
	} else if len(t.balOrder) > 0 {
		bs := make([]map[string]string, 0, len(t.balOrder))
		for _, a := range t.balOrder {
			b := t.balances[a]
			bs = append(bs, map[string]string{"a": b.Asset, "f": fix8(b.Free), "l": fix8(b.Locked)})
		}
		emit(mustJSON(map[string]any{"e": "outboundAccountPosition", "E": now, "u": now, "B": bs}))
	}
	clear(t.balances)
	clear(t.positions)
	t.balOrder, t.posOrder = t.balOrder[:0], t.posOrder[:0]
}

func (t *userTranslator) orderEvent(o venue.Order, emit func([]byte)) {
	fills := t.pending[o.ID]
	prev, wasSeen := t.seen[o.ID]
	if len(fills) > 0 {
		delete(t.pending, o.ID)
		// Binance reports an order as NEW before its first trade: a taker that filled on arrival, or a conditional
		// order that has just triggered (its type turns into MARKET or LIMIT, origType stays).
		if !wasSeen || prev.Type != o.Type {
			nw := o
			nw.Status, nw.Filled, nw.CumQuote, nw.AvgPrice = venue.StatusNew, decimal.Zero, decimal.Zero, decimal.Zero
			emit(t.report(nw, "NEW", nil))
		}
		t.emitFills(o, fills, emit)
		switch o.Status {
		case venue.StatusCanceled:
			emit(t.report(o, "CANCELED", nil))
		case venue.StatusExpired:
			emit(t.report(o, "EXPIRED", nil))
		}
	} else {
		x := "NEW"
		switch o.Status {
		case venue.StatusNew, venue.StatusUntriggered, venue.StatusPartiallyFilled:
			if wasSeen && prev.Type == o.Type && (!prev.Qty.Equal(o.Qty) || !prev.Price.Equal(o.Price) ||
				!prev.StopPrice.Equal(o.StopPrice)) {
				x = "AMENDMENT"
				if !t.futures {
					x = "REPLACED"
				}
			} else if wasSeen && prev.Type == o.Type && o.Status == venue.StatusPartiallyFilled {
				return
			}
		case venue.StatusCanceled:
			x = "CANCELED"
		case venue.StatusExpired:
			x = "EXPIRED"
		case venue.StatusRejected:
			x = "REJECTED"
		case venue.StatusFilled:
			x = "TRADE"
		}
		emit(t.report(o, x, nil))
	}
	if o.Status.Final() {
		delete(t.seen, o.ID)
	} else {
		t.seen[o.ID] = o
	}
}

// emitFills reports each fill with the cumulative quantity it brought the order to.
func (t *userTranslator) emitFills(o venue.Order, fills []venue.Fill, emit func([]byte)) {
	base, quote := o.Filled, o.CumQuote
	for _, f := range fills {
		base, quote = base.Sub(f.Qty), quote.Sub(f.Quote)
	}
	for i := range fills {
		f := fills[i]
		base, quote = base.Add(f.Qty), quote.Add(f.Quote)
		st := o
		st.Filled, st.CumQuote = base, quote
		st.Status = venue.StatusPartiallyFilled
		if i == len(fills)-1 && o.Status == venue.StatusFilled || base.Equal(o.Qty) && o.Qty.IsPositive() {
			st.Status = venue.StatusFilled
		}
		if base.IsPositive() {
			st.AvgPrice = quote.Div(base)
		}
		emit(t.report(st, "TRADE", &f))
	}
}

// flushPending reports fills whose order event did not come (resting orders filled by others).
func (t *userTranslator) flushPending(emit func([]byte)) {
	for _, id := range t.order {
		fills, ok := t.pending[id]
		if !ok {
			continue
		}
		delete(t.pending, id)
		o, err := t.s.v.GetOrder(t.account, id, "")
		if err != nil {
			continue
		}
		t.emitFills(o, fills, emit)
		if o.Status.Final() {
			delete(t.seen, id)
		} else {
			t.seen[id] = o
		}
	}
	t.order = t.order[:0]
}

func (t *userTranslator) report(o venue.Order, x string, f *venue.Fill) []byte {
	s := t.s
	in := s.byID[o.Instrument]
	now := s.v.Now()
	lastQty, lastPx, lastQuote, fee := decimal.Zero, decimal.Zero, decimal.Zero, decimal.Zero
	var feeAsset *string
	tradeID, maker, txTime := int64(-1), false, o.Updated
	if f != nil {
		lastQty, lastPx, lastQuote, fee = f.Qty, f.Price, f.Quote, f.Fee
		a := f.FeeAsset
		feeAsset = &a
		tradeID, maker, txTime = int64(f.TradeID), f.Maker, f.Time
	}
	status := statusOf(t.futures, o)
	if t.futures {
		ps, qs := in.PriceScale(), in.QtyScale()
		n := "0"
		N := in.Quote
		if feeAsset != nil {
			n, N = fee.StringFixed(8), *feeAsset
		}
		rp := decimal.Zero
		if f != nil {
			rp = f.RealizedPnL
		}
		if tradeID < 0 {
			tradeID = 0
		}
		return mustJSON(map[string]any{"e": "ORDER_TRADE_UPDATE", "E": now, "T": txTime, "o": map[string]any{
			"s": s.native[in.ID], "c": o.ClientID, "S": sideName(o.Side), "o": typeName(true, o.Type, o.TIF),
			"f": tifName(true, origType(o), o.TIF), "q": o.Qty.StringFixed(qs), "p": o.Price.StringFixed(ps),
			"ap": o.AvgPrice.StringFixed(ps), "sp": o.StopPrice.StringFixed(ps), "x": x, "X": status, "i": o.ID,
			"l": lastQty.StringFixed(qs), "z": o.Filled.StringFixed(qs), "L": lastPx.StringFixed(ps), "N": N, "n": n,
			"T": txTime, "t": tradeID, "b": "0", "a": "0", "m": maker, "R": o.ReduceOnly,
			"wt": workingTypeName(o.TriggerBy), "ot": typeName(true, origType(o), o.TIF),
			"ps": posSideName(o.PositionSide), "cp": o.ClosePosition, "rp": rp.StringFixed(8), "pP": false,
			"si": 0, "ss": 0, "V": stpName(o.STP), "pm": "NONE", "gtd": 0,
		}})
	}
	working := o.Created
	if o.Status == venue.StatusUntriggered {
		working = -1
	}
	origClient := ""
	if x == "CANCELED" {
		origClient = o.ClientID
	}
	n := "0"
	if f != nil {
		n = fix8(fee)
	}
	return mustJSON(map[string]any{
		"e": "executionReport", "E": now, "s": s.native[in.ID], "c": o.ClientID, "S": sideName(o.Side),
		"o": typeName(false, origType(o), o.TIF), "f": tifName(false, origType(o), o.TIF), "q": fix8(o.Qty), "p": fix8(o.Price),
		"P": fix8(o.StopPrice), "F": fix8(decimal.Zero), "g": -1, "C": origClient, "x": x, "X": status, "r": "NONE",
		"i": o.ID, "l": fix8(lastQty), "z": fix8(o.Filled), "L": fix8(lastPx), "n": n, "N": feeAsset, "T": txTime,
		"t": tradeID, "I": o.Updated, "w": o.Status == venue.StatusNew || o.Status == venue.StatusPartiallyFilled,
		"m": maker, "M": false, "O": o.Created, "Z": fix8(o.CumQuote), "Y": fix8(lastQuote), "Q": fix8(o.QuoteQty),
		"W": working, "V": stpName(o.STP),
	})
}

func (t *userTranslator) positionRow(p venue.Position) map[string]string {
	in := t.s.byID[p.Instrument]
	amtQ := p.Qty
	if p.Side == venue.PosShort {
		amtQ = amtQ.Neg()
	}
	mt, iw := "cross", decimal.Zero
	if p.Isolated {
		mt, iw = "isolated", p.Margin
	}
	return map[string]string{"s": t.s.native[in.ID], "pa": amtQ.StringFixed(in.QtyScale()),
		"ep": p.EntryPrice.StringFixed(in.PriceScale() + 1), "bep": breakEven(in, p),
		"cr": p.RealizedPnL.StringFixed(8), "up": p.UnrealizedPnL.StringFixed(8), "mt": mt,
		"iw": iw.StringFixed(8), "ps": posSideName(p.Side)}
}
