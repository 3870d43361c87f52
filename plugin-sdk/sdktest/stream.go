package sdktest

import (
	"errors"
	"io"
	"maps"
	"slices"
	"sync"

	"google.golang.org/protobuf/proto"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// Streams never buffer without bound. Each stream has a conflating queue: state-like events (the book, ticker,
// candles, mark price, an order's or position's latest state) are keyed and a newer value replaces a pending older
// one, so a slow host gets the latest state instead of a backlog. Discrete events (trades, fills) get their own keys
// and are dropped oldest-first when the queue is full; the stream then says how many were lost. The producer (the
// market, under the server lock) never blocks on a stream.

const (
	queueSize        = 1024
	maxSubscriptions = 100
	defaultBookDepth = 20
)

// queue is a bounded, keyed, conflating FIFO.
type queue[T any] struct {
	mu        sync.Mutex
	keys      []string
	items     map[string]T
	droppable map[string]bool
	dropped   int
	notify    chan struct{} // capacity 1: "something is pending"
}

func newQueue[T any]() *queue[T] {
	return &queue[T]{items: map[string]T{}, droppable: map[string]bool{}, notify: make(chan struct{}, 1)}
}

// put adds or replaces the item under key. Replacing keeps the key's place in line.
func (q *queue[T]) put(key string, v T, droppable bool) {
	q.mu.Lock()
	if _, ok := q.items[key]; !ok {
		q.keys = append(q.keys, key)
		if len(q.keys) > queueSize {
			i := slices.IndexFunc(q.keys, func(k string) bool { return q.droppable[k] })
			if i < 0 {
				i = 0
			}
			delete(q.items, q.keys[i])
			delete(q.droppable, q.keys[i])
			q.keys = slices.Delete(q.keys, i, i+1)
			q.dropped++
		}
	}
	q.items[key] = v
	q.droppable[key] = droppable
	q.mu.Unlock()
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

// take empties the queue, returning the items in order and how many were dropped since the last take.
func (q *queue[T]) take() ([]T, int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]T, 0, len(q.keys))
	for _, k := range q.keys {
		out = append(out, q.items[k])
	}
	dropped := q.dropped
	q.keys, q.items, q.droppable, q.dropped = nil, map[string]T{}, map[string]bool{}, 0
	return out, dropped
}

// ---------------------------------------------------------------------------------------------------------------
// StreamMarket

type marketItem struct {
	sub  string // subscription key; "" for stream-wide events
	ev   *exchangev1.MarketEvent
	book *bookSnap // book items are rendered at send time, as a delta from what this stream last sent
}

type marketSub struct {
	sub   *exchangev1.Subscription
	in    *instrument
	iv    interval
	depth int
	// Book state: what was last sent. A snapshot is due when sentSeq is 0.
	sentSeq    int64
	sentBids   []level
	sentAsks   []level
	lastCandle int64
}

type marketSession struct {
	q    *queue[marketItem]
	mu   sync.Mutex
	subs map[string]*marketSub
	acks int
}

func subKey(sub *exchangev1.Subscription) string {
	return sub.GetChannel().String() + "|" + marketTypeName(sub.GetMarketType()) + "|" + sub.GetSymbol() + "|" + sub.GetInterval()
}

func statusEvent(state exchangev1.StreamStatus_State, msg, requestID string, sub *exchangev1.Subscription, err error) *exchangev1.MarketEvent {
	st := &exchangev1.StreamStatus{State: state, Message: msg, RequestId: requestID}
	if err != nil {
		st.Error = sdk.DetailOf(err)
		st.Message = sdk.MessageOf(err)
	}
	return &exchangev1.MarketEvent{Subscription: sub, Event: &exchangev1.MarketEvent_Status{Status: st}}
}

// control queues a stream-wide event that is never conflated.
func (m *marketSession) control(ev *exchangev1.MarketEvent) {
	m.acks++
	m.q.put("ctl#"+itoa(int64(m.acks)), marketItem{ev: ev}, false)
}

// StreamMarket serves market subscriptions until the host ends the stream or the server closes.
func (s *Server) StreamMarket(stream exchangev1.Exchange_StreamMarketServer) error {
	ctx := stream.Context()
	sess := &marketSession{q: newQueue[marketItem](), subs: map[string]*marketSub{}}
	s.mu.Lock()
	s.marketSubs[sess] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.marketSubs, sess)
		s.mu.Unlock()
	}()
	sess.control(statusEvent(exchangev1.StreamStatus_STATE_CONNECTED, "connected", "", nil, nil))

	// The reader belongs to this stream: it ends when Recv fails, which happens when the stream ends.
	recvErr := make(chan error, 1)
	go func() {
		for {
			req, err := stream.Recv()
			if err != nil {
				recvErr <- err
				return
			}
			s.handleMarketRequest(sess, req)
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.life.Done():
			return sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "exchange shutting down")
		case err := <-recvErr:
			if !errors.Is(err, io.EOF) {
				return nil // the host went away
			}
			recvErr = nil // half-closed: keep sending until the host cancels
		case <-sess.q.notify:
			items, dropped := sess.q.take()
			if dropped > 0 {
				if err := stream.Send(statusEvent(exchangev1.StreamStatus_STATE_CONNECTED,
					"slow consumer: "+itoa(int64(dropped))+" events dropped", "", nil, nil)); err != nil {
					return err
				}
			}
			for _, it := range items {
				ev := sess.render(it)
				if ev == nil {
					continue
				}
				if err := stream.Send(ev); err != nil {
					return err
				}
			}
		}
	}
}

func (s *Server) handleMarketRequest(sess *marketSession, req *exchangev1.StreamMarketRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess.mu.Lock()
	defer sess.mu.Unlock()
	now := s.nowMs()
	switch req.GetOp() {
	case exchangev1.StreamMarketRequest_OP_SUBSCRIBE:
		for _, sub := range req.GetSubscriptions() {
			if err := s.subscribe(sess, sub, now); err != nil {
				sess.control(statusEvent(exchangev1.StreamStatus_STATE_ERROR, "", req.GetRequestId(), sub, err))
				continue
			}
			sess.control(statusEvent(exchangev1.StreamStatus_STATE_SUBSCRIBED, "subscribed", req.GetRequestId(), sub, nil))
			s.pushInitial(sess, sess.subs[subKey(sub)], now)
		}
	case exchangev1.StreamMarketRequest_OP_UNSUBSCRIBE:
		for _, sub := range req.GetSubscriptions() {
			delete(sess.subs, subKey(sub))
			sess.control(statusEvent(exchangev1.StreamStatus_STATE_UNSUBSCRIBED, "unsubscribed", req.GetRequestId(), sub, nil))
		}
	default:
		sess.control(statusEvent(exchangev1.StreamStatus_STATE_ERROR, "", req.GetRequestId(), nil,
			sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "op", "op must be SUBSCRIBE or UNSUBSCRIBE")))
	}
}

// subscribe validates and registers one subscription. Caller holds s.mu and sess.mu.
func (s *Server) subscribe(sess *marketSession, sub *exchangev1.Subscription, _ int64) error {
	in, err := s.instrument(sub.GetMarketType(), sub.GetSymbol())
	if err != nil {
		return err
	}
	ms := &marketSub{sub: sub, in: in}
	switch sub.GetChannel() {
	case exchangev1.Channel_CHANNEL_BOOK:
		ms.depth = int(sub.GetDepth())
		if ms.depth <= 0 {
			ms.depth = defaultBookDepth
		}
		ms.depth = min(ms.depth, bookLevels)
	case exchangev1.Channel_CHANNEL_TRADES, exchangev1.Channel_CHANNEL_TICKER:
	case exchangev1.Channel_CHANNEL_CANDLES:
		if ms.iv, err = lookupInterval("interval", sub.GetInterval(), nil); err != nil {
			return err
		}
	case exchangev1.Channel_CHANNEL_MARK_PRICE:
		if !in.isSwap() {
			return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED, "channel", "mark price is for SWAP instruments")
		}
	default:
		return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "channel", "channel is required")
	}
	if _, ok := sess.subs[subKey(sub)]; !ok && len(sess.subs) >= maxSubscriptions {
		return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "subscriptions",
			"at most %d subscriptions per stream", maxSubscriptions)
	}
	sess.subs[subKey(sub)] = ms // a repeated subscribe restarts the subscription (a book gets a new snapshot)
	return nil
}

// pushInitial queues the current state of a new subscription. Caller holds s.mu and sess.mu.
func (s *Server) pushInitial(sess *marketSession, ms *marketSub, now int64) {
	switch ms.sub.GetChannel() {
	case exchangev1.Channel_CHANNEL_BOOK:
		sess.q.put(subKey(ms.sub), marketItem{sub: subKey(ms.sub), book: ms.in.book}, false)
	default:
		s.pushState(sess, ms, now, nil)
	}
}

// pushState queues the state-like events of one subscription (and trades). Caller holds s.mu and sess.mu.
func (s *Server) pushState(sess *marketSession, ms *marketSub, now int64, trades []*exchangev1.Trade) {
	key := subKey(ms.sub)
	in := ms.in
	ev := func(e *exchangev1.MarketEvent) marketItem {
		e.Subscription, e.Time = ms.sub, now
		return marketItem{sub: key, ev: e}
	}
	switch ms.sub.GetChannel() {
	case exchangev1.Channel_CHANNEL_TRADES:
		for _, t := range trades {
			sess.q.put(key+"#"+t.Id, ev(&exchangev1.MarketEvent{Event: &exchangev1.MarketEvent_Trade{Trade: t}}), true)
		}
	case exchangev1.Channel_CHANNEL_TICKER:
		sess.q.put(key, ev(&exchangev1.MarketEvent{Event: &exchangev1.MarketEvent_Ticker{Ticker: s.ticker(in, now)}}), false)
	case exchangev1.Channel_CHANNEL_CANDLES:
		in.rollBars(now)
		cs := in.candles(ms.iv, 0, now, 2, now)
		if len(cs) == 0 {
			return
		}
		cur := cs[len(cs)-1]
		if ms.lastCandle != 0 && ms.lastCandle != cur.OpenTime && len(cs) == 2 {
			// The previous candle just closed: send its final state before the new one.
			sess.q.put(key+"@"+itoa(cs[0].OpenTime), ev(&exchangev1.MarketEvent{Event: &exchangev1.MarketEvent_Candle{Candle: cs[0]}}), false)
		}
		ms.lastCandle = cur.OpenTime
		sess.q.put(key+"@"+itoa(cur.OpenTime), ev(&exchangev1.MarketEvent{Event: &exchangev1.MarketEvent_Candle{Candle: cur}}), false)
	case exchangev1.Channel_CHANNEL_MARK_PRICE:
		m := s.markOf(in)
		sess.q.put(key, ev(&exchangev1.MarketEvent{Event: &exchangev1.MarketEvent_MarkPrice{MarkPrice: &exchangev1.MarkPriceUpdate{
			MarkPrice: m.mark.String(), IndexPrice: m.index.String(), FundingRate: m.fundingRate.String(), NextFundingTime: s.nextFunding(now),
		}}}), false)
	}
}

// publish makes an instrument's current book visible (next sequence) and notifies every market stream. tick
// says whether the state channels (ticker, candles, mark price) should be refreshed too. Caller holds s.mu.
func (s *Server) publish(in *instrument, now int64, tick bool) {
	snap := in.snapshot(now)
	trades := in.newTrades
	in.newTrades = nil
	for sess := range s.marketSubs {
		sess.mu.Lock()
		for _, k := range slices.Sorted(maps.Keys(sess.subs)) {
			ms := sess.subs[k]
			if ms.in != in {
				continue
			}
			switch ms.sub.GetChannel() {
			case exchangev1.Channel_CHANNEL_BOOK:
				sess.q.put(k, marketItem{sub: k, book: snap}, false)
			case exchangev1.Channel_CHANNEL_TRADES:
				s.pushState(sess, ms, now, trades)
			default:
				if tick {
					s.pushState(sess, ms, now, nil)
				}
			}
		}
		sess.mu.Unlock()
	}
}

// resync is called after the market was rebuilt: every book gets a fresh snapshot after a RESYNCED status.
func (m *marketSession) resync(s *Server) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.control(statusEvent(exchangev1.StreamStatus_STATE_RESYNCED, "market rebuilt", "", nil, nil))
	for k, ms := range m.subs {
		in, ok := s.insts[ms.in.key]
		if !ok {
			delete(m.subs, k)
			continue
		}
		ms.in, ms.sentSeq, ms.sentBids, ms.sentAsks, ms.lastCandle = in, 0, nil, nil, 0
		if ms.sub.GetChannel() == exchangev1.Channel_CHANNEL_BOOK {
			m.q.put(k, marketItem{sub: k, book: in.book}, false)
		}
	}
}

// render turns a queued item into the event to send, or nil when there is nothing to send.
func (m *marketSession) render(it marketItem) *exchangev1.MarketEvent {
	if it.sub == "" {
		return it.ev
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	ms, ok := m.subs[it.sub]
	if !ok {
		return nil // unsubscribed meanwhile
	}
	if it.book == nil {
		return it.ev
	}
	in, snap := ms.in, it.book
	bids, asks := snap.bids[:min(len(snap.bids), ms.depth)], snap.asks[:min(len(snap.asks), ms.depth)]
	if ms.sentSeq == 0 {
		ms.sentSeq, ms.sentBids, ms.sentAsks = snap.seq, bids, asks
		return &exchangev1.MarketEvent{Subscription: ms.sub, Time: snap.time, Event: &exchangev1.MarketEvent_BookSnapshot{
			BookSnapshot: &exchangev1.BookUpdate{Bids: levelsOf(in, bids, ms.depth), Asks: levelsOf(in, asks, ms.depth), Sequence: snap.seq},
		}}
	}
	if snap.seq <= ms.sentSeq {
		return nil
	}
	db, da := diffLevels(in, ms.sentBids, bids), diffLevels(in, ms.sentAsks, asks)
	if len(db) == 0 && len(da) == 0 {
		return nil // nothing changed within this stream's depth; the next delta still chains from sentSeq
	}
	ev := &exchangev1.MarketEvent{Subscription: ms.sub, Time: snap.time, Event: &exchangev1.MarketEvent_BookDelta{
		BookDelta: &exchangev1.BookUpdate{Bids: db, Asks: da, Sequence: snap.seq, PrevSequence: ms.sentSeq},
	}}
	ms.sentSeq, ms.sentBids, ms.sentAsks = snap.seq, bids, asks
	return ev
}

// diffLevels lists the levels of next that differ from prev, and prev's vanished levels with qty "0", in the
// order of next (best first), removals last.
func diffLevels(in *instrument, prev, next []level) []*exchangev1.PriceLevel {
	old := make(map[int64]int64, len(prev))
	for _, l := range prev {
		old[l.price] = l.qty
	}
	var out []*exchangev1.PriceLevel
	seen := make(map[int64]bool, len(next))
	for _, l := range next {
		seen[l.price] = true
		if q, ok := old[l.price]; !ok || q != l.qty {
			out = append(out, &exchangev1.PriceLevel{Price: in.price(l.price).String(), Qty: in.qty(l.qty).String()})
		}
	}
	for _, l := range prev {
		if !seen[l.price] {
			out = append(out, &exchangev1.PriceLevel{Price: in.price(l.price).String(), Qty: "0"})
		}
	}
	return out
}

// ---------------------------------------------------------------------------------------------------------------
// StreamAccount

type accountSession struct {
	q *queue[*exchangev1.AccountEvent]
}

// StreamAccount sends the account's state as a snapshot, then its order, fill, position, balance and algo order
// updates as deltas, every event with the next sequence (sdk.AccountSender), until the host ends the stream. The
// snapshot is taken under the server lock at the moment the stream registers, so no delta falls between the two.
// When the stream's bounded queue had to drop events, it sends STATE_RESYNCED and a fresh snapshot, never a guess.
func (s *Server) StreamAccount(req *exchangev1.StreamAccountRequest, stream exchangev1.Exchange_StreamAccountServer) error {
	s.mu.Lock()
	a, err := s.account(req.GetAccount())
	if err != nil {
		s.mu.Unlock()
		return err
	}
	sess := &accountSession{q: newQueue[*exchangev1.AccountEvent]()}
	a.sessions[sess] = struct{}{}
	snap := s.accountSnapshot(a)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(a.sessions, sess)
		s.mu.Unlock()
	}()
	out := sdk.NewAccountSender(stream)
	if err := out.Snapshot(snap); err != nil {
		return err
	}
	ctx := stream.Context()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.life.Done():
			return sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "exchange shutting down")
		case <-sess.q.notify:
			items, dropped := sess.q.take()
			if dropped > 0 {
				// Re-read the account under the lock and forget what is queued: the snapshot already holds it.
				s.mu.Lock()
				snap := s.accountSnapshot(a)
				_, _ = sess.q.take()
				s.mu.Unlock()
				if err := out.Resynced(itoa(int64(dropped))+" events dropped: snapshot follows", snap); err != nil {
					return err
				}
				continue
			}
			for _, ev := range items {
				if err := out.Send(ev); err != nil {
					return err
				}
			}
		}
	}
}

// flushAccounts sends pending account changes to StreamAccount subscribers and clears them. Caller holds s.mu.
func (s *Server) flushAccounts(now int64) {
	for _, a := range s.accounts {
		if len(a.sessions) > 0 {
			var evs []struct {
				key       string
				ev        *exchangev1.AccountEvent
				droppable bool
			}
			add := func(key string, ev *exchangev1.AccountEvent, droppable bool) {
				ev.Time = now
				evs = append(evs, struct {
					key       string
					ev        *exchangev1.AccountEvent
					droppable bool
				}{key, ev, droppable})
			}
			for _, o := range a.orders {
				if a.dirtyOrders[o] {
					add("order:"+o.id, &exchangev1.AccountEvent{Event: &exchangev1.AccountEvent_Order{Order: o.proto()}}, false)
				}
			}
			for _, f := range a.newFills {
				add("fill:"+f.TradeId, &exchangev1.AccountEvent{Event: &exchangev1.AccountEvent_Fill{Fill: f}}, true)
			}
			for _, k := range slices.Sorted(maps.Keys(a.dirtyPos)) {
				if p := a.positions[k]; p != nil {
					add("pos:"+k, &exchangev1.AccountEvent{Event: &exchangev1.AccountEvent_Position{Position: s.positionProto(a, p)}}, false)
				}
			}
			for _, k := range slices.SortedFunc(maps.Keys(a.dirtyBal), func(x, y balKey) int {
				if x.wallet != y.wallet {
					return int(x.wallet - y.wallet)
				}
				if x.asset < y.asset {
					return -1
				}
				return 1
			}) {
				add("bal:"+k.wallet.String()+k.asset, &exchangev1.AccountEvent{Event: &exchangev1.AccountEvent_Balance{Balance: balanceProto(k, a.bal(k.wallet, k.asset))}}, false)
			}
			for _, g := range a.algos {
				if a.dirtyAlgos[g] {
					add("algo:"+g.p.AlgoId, &exchangev1.AccountEvent{Event: &exchangev1.AccountEvent_AlgoOrder{AlgoOrder: cloneAlgo(g.p)}}, false)
				}
			}
			for sess := range a.sessions {
				for _, e := range evs {
					sess.q.put(e.key, e.ev, e.droppable)
				}
			}
		}
		clear(a.dirtyOrders)
		clear(a.dirtyPos)
		clear(a.dirtyBal)
		clear(a.dirtyAlgos)
		a.newFills = nil
	}
}

// cloneAlgo copies an algo order for sending: the stored one keeps changing under the server lock.
func cloneAlgo(p *exchangev1.AlgoOrder) *exchangev1.AlgoOrder {
	return proto.Clone(p).(*exchangev1.AlgoOrder)
}
