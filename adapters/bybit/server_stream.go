package bybit

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// streamQueue bounds the events waiting for the host; a full queue blocks the WebSocket reader (backpressure).
const streamQueue = 1024

// bookDepths are the orderbook topic depths Bybit offers on spot and linear.
var bookDepths = []int{1, 50, 200, 1000}

// msub is one host subscription and the Bybit topic behind it.
type msub struct {
	sub   *exchangev1.Subscription
	in    *Instrument
	topic string
	mark  bool // CHANNEL_MARK_PRICE: fed by the tickers topic of a perpetual
}

// bookState is the local book of one topic and the sequence the host sees.
type bookState struct {
	book Book
	seq  int64 // our own contiguous sequence, growing across resyncs
}

// tickerState is the merged tickers row of one topic and the mark fields last sent.
type tickerState struct {
	row      rawTicker
	have     bool
	lastMark string
}

// marketSession serves one StreamMarket call.
type marketSession struct {
	s   *Server
	st  Settings
	out chan *exchangev1.MarketEvent

	mu      sync.Mutex
	subs    map[string]*msub // by subscription key
	books   map[string]*bookState
	tickers map[string]*tickerState
	conns   map[string]*wsConn // by category
	closed  bool
	wg      sync.WaitGroup
}

func subKey(s *exchangev1.Subscription) string {
	return s.GetChannel().String() + "|" + s.GetMarketType().String() + "|" + s.GetSymbol() + "|" + s.GetInterval() + "|" + strconv.Itoa(int(s.GetDepth()))
}

// topicKey names a topic on its category's connection.
func topicKey(category, topic string) string { return category + "|" + topic }

// StreamMarket serves market subscriptions from Bybit's public WebSockets (one per category).
func (s *Server) StreamMarket(stream exchangev1.Exchange_StreamMarketServer) error {
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()
	m := &marketSession{s: s, st: s.cfg(), out: make(chan *exchangev1.MarketEvent, streamQueue), subs: map[string]*msub{},
		books: map[string]*bookState{}, tickers: map[string]*tickerState{}, conns: map[string]*wsConn{}}
	defer func() {
		cancel()
		m.mu.Lock()
		m.closed = true // no connection starts after this
		m.mu.Unlock()
		m.wg.Wait()
	}()
	// The receiving goroutine belongs to the RPC: Recv returns once the stream ends, which gRPC guarantees right
	// after this handler returns.
	go func() {
		for {
			req, err := stream.Recv()
			if err != nil {
				cancel()
				return
			}
			m.handle(ctx, req)
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-m.out:
			if err := stream.Send(ev); err != nil {
				return err
			}
		}
	}
}

func (m *marketSession) emit(ctx context.Context, ev *exchangev1.MarketEvent) {
	select {
	case m.out <- ev:
	case <-ctx.Done():
	}
}

// conn returns (starting when needed) the public connection of a category.
func (m *marketSession) conn(ctx context.Context, category string) *wsConn {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := m.conns[category]; c != nil {
		return c
	}
	url := m.st.WSSpotURL
	if category == catLinear {
		url = m.st.WSLinearURL
	}
	c := newWSConn(url, m.st, m.s.log)
	if m.closed {
		return c // the session is ending: a connection that never starts
	}
	c.onMsg = func(ctx context.Context, msg *wsMsg) { m.onMsg(ctx, category, msg) }
	c.onState = func(ctx context.Context, st connState, err error) { m.onState(ctx, c, category, st, err) }
	m.conns[category] = c
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		c.run(ctx)
	}()
	return c
}

func (m *marketSession) handle(ctx context.Context, req *exchangev1.StreamMarketRequest) {
	for _, sub := range req.GetSubscriptions() {
		switch req.GetOp() {
		case exchangev1.StreamMarketRequest_OP_SUBSCRIBE:
			ms, err := m.resolve(ctx, sub)
			if err != nil {
				m.emit(ctx, statusEvent(sub, exchangev1.StreamStatus_STATE_ERROR, sdk.MessageOf(err), req.GetRequestId(), err))
				continue
			}
			tk := topicKey(ms.in.Category, ms.topic)
			m.mu.Lock()
			m.subs[subKey(sub)] = ms
			if sub.GetChannel() == exchangev1.Channel_CHANNEL_BOOK && m.books[tk] == nil {
				m.books[tk] = &bookState{}
			}
			if strings.HasPrefix(ms.topic, "tickers.") && m.tickers[tk] == nil {
				m.tickers[tk] = &tickerState{}
			}
			m.mu.Unlock()
			c := m.conn(ctx, ms.in.Category)
			m.emit(ctx, statusEvent(sub, exchangev1.StreamStatus_STATE_SUBSCRIBED, "subscribed", req.GetRequestId(), nil))
			c.subscribe(ctx, ms.topic)
		case exchangev1.StreamMarketRequest_OP_UNSUBSCRIBE:
			m.mu.Lock()
			ms := m.subs[subKey(sub)]
			delete(m.subs, subKey(sub))
			used := false
			if ms != nil {
				for _, o := range m.subs {
					if o.topic == ms.topic && o.in.Category == ms.in.Category {
						used = true
					}
				}
				if !used {
					delete(m.books, topicKey(ms.in.Category, ms.topic))
					delete(m.tickers, topicKey(ms.in.Category, ms.topic))
				}
			}
			m.mu.Unlock()
			if ms != nil && !used {
				m.conn(ctx, ms.in.Category).unsubscribe(ctx, ms.topic)
			}
			m.emit(ctx, statusEvent(sub, exchangev1.StreamStatus_STATE_UNSUBSCRIBED, "unsubscribed", req.GetRequestId(), nil))
		default:
			m.emit(ctx, statusEvent(sub, exchangev1.StreamStatus_STATE_ERROR, "unknown op", req.GetRequestId(),
				sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "op %v", req.GetOp())))
		}
	}
}

func (m *marketSession) resolve(ctx context.Context, sub *exchangev1.Subscription) (*msub, error) {
	in, err := m.s.instrument(ctx, sub.GetMarketType(), sub.GetSymbol())
	if err != nil {
		return nil, err
	}
	ms := &msub{sub: sub, in: in}
	switch sub.GetChannel() {
	case exchangev1.Channel_CHANNEL_BOOK:
		depth := bookDepths[len(bookDepths)-1]
		want := int(sub.GetDepth())
		if want <= 0 {
			want = streamBookDepthDefault
		}
		for _, d := range bookDepths {
			if d >= want {
				depth = d
				break
			}
		}
		ms.topic = "orderbook." + strconv.Itoa(depth) + "." + in.Symbol
	case exchangev1.Channel_CHANNEL_TRADES:
		ms.topic = "publicTrade." + in.Symbol
	case exchangev1.Channel_CHANNEL_TICKER:
		ms.topic = "tickers." + in.Symbol
	case exchangev1.Channel_CHANNEL_CANDLES:
		code, ok := intervalOf[sub.GetInterval()]
		if !ok {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "interval", "interval %q is not offered", sub.GetInterval())
		}
		ms.topic = "kline." + code + "." + in.Symbol
	case exchangev1.Channel_CHANNEL_MARK_PRICE:
		if in.MarketType != exchangev1.MarketType_MARKET_TYPE_SWAP {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "market_type", "mark price is a SWAP channel")
		}
		ms.topic, ms.mark = "tickers."+in.Symbol, true
	default:
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "channel", "channel %v is not offered", sub.GetChannel())
	}
	return ms, nil
}

func (m *marketSession) onState(ctx context.Context, c *wsConn, category string, st connState, err error) {
	switch st {
	case stateConnected:
		m.emit(ctx, statusEvent(nil, exchangev1.StreamStatus_STATE_CONNECTED, "connected to "+c.url, "", nil))
	case stateReconnecting:
		m.mu.Lock()
		for k, b := range m.books {
			if strings.HasPrefix(k, category+"|") {
				b.book.synced = false
			}
		}
		for k, t := range m.tickers {
			if strings.HasPrefix(k, category+"|") {
				t.have, t.lastMark = false, "" // the snapshot after the reconnect is sent whole, marks included
			}
		}
		m.mu.Unlock()
		msg := "connection to Bybit lost"
		if err != nil {
			msg += ": " + err.Error()
		}
		m.emit(ctx, statusEvent(nil, exchangev1.StreamStatus_STATE_RECONNECTING, msg, "", nil))
	case stateResubscribed:
		m.emit(ctx, statusEvent(nil, exchangev1.StreamStatus_STATE_RESYNCED, "reconnected; fresh snapshots follow", "", nil))
	}
}

// subsFor returns the host subscriptions fed by a topic of a category.
func (m *marketSession) subsFor(category, topic string) []*msub {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*msub
	for _, ms := range m.subs {
		if ms.topic == topic && ms.in.Category == category {
			out = append(out, ms)
		}
	}
	return out
}

func (m *marketSession) onMsg(ctx context.Context, category string, msg *wsMsg) {
	if msg.Topic == "" {
		if msg.Success != nil && !*msg.Success {
			err := sdk.ExchangeError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "", "Bybit refused "+msg.Op+": "+msg.RetMsg)
			m.emit(ctx, statusEvent(nil, exchangev1.StreamStatus_STATE_ERROR, "Bybit: "+msg.RetMsg, "", err))
		}
		return
	}
	subs := m.subsFor(category, msg.Topic)
	if len(subs) == 0 {
		return
	}
	ts := msg.Ts
	if ts == 0 {
		ts = time.Now().UnixMilli()
	}
	switch {
	case strings.HasPrefix(msg.Topic, "orderbook."):
		m.onBook(ctx, category, subs, msg)
	case strings.HasPrefix(msg.Topic, "publicTrade."):
		trades, err := ParseWSTrades(msg.Data)
		if err != nil {
			m.s.log.Warn("bybit: bad publicTrade message", "error", err)
			return
		}
		for _, t := range trades {
			for _, ms := range subs {
				m.emit(ctx, &exchangev1.MarketEvent{Subscription: ms.sub, Time: t.Time, Event: &exchangev1.MarketEvent_Trade{Trade: t}})
			}
		}
	case strings.HasPrefix(msg.Topic, "tickers."):
		m.onTicker(ctx, category, subs, msg, ts)
	case strings.HasPrefix(msg.Topic, "kline."):
		cs, err := ParseWSKlines(msg.Data)
		if err != nil {
			m.s.log.Warn("bybit: bad kline message", "error", err)
			return
		}
		for _, c := range cs {
			for _, ms := range subs {
				m.emit(ctx, &exchangev1.MarketEvent{Subscription: ms.sub, Time: ts, Event: &exchangev1.MarketEvent_Candle{Candle: c}})
			}
		}
	}
}

// onTicker keeps the merged row of a tickers topic: a snapshot replaces it, a delta changes only the fields it
// carries (a delta before any snapshot is dropped). Ticker subscriptions get the merged ticker, mark price ones a
// MarkPriceUpdate when the mark, index or funding changed.
func (m *marketSession) onTicker(ctx context.Context, category string, subs []*msub, msg *wsMsg, ts int64) {
	var r rawTicker
	if err := jsonUnmarshal(msg.Data, &r); err != nil {
		m.s.log.Warn("bybit: bad tickers message", "error", err)
		return
	}
	in := subs[0].in
	m.mu.Lock()
	st := m.tickers[topicKey(category, msg.Topic)]
	if st == nil {
		m.mu.Unlock()
		return
	}
	if msg.Type == "delta" {
		if !st.have {
			m.mu.Unlock()
			return
		}
		st.row = mergeTicker(st.row, r)
	} else {
		st.row, st.have = r, true
	}
	row := st.row
	t, err := tickerProto(row, in, ts)
	var mark *exchangev1.MarkPriceUpdate
	if err == nil && in.MarketType == exchangev1.MarketType_MARKET_TYPE_SWAP && t.GetMarkPrice() != "" {
		key := t.GetMarkPrice() + "|" + t.GetIndexPrice() + "|" + t.GetFundingRate() + "|" + strconv.FormatInt(t.GetNextFundingTime(), 10)
		if key != st.lastMark {
			st.lastMark = key
			mark = &exchangev1.MarkPriceUpdate{MarkPrice: t.GetMarkPrice(), IndexPrice: t.GetIndexPrice(),
				FundingRate: t.GetFundingRate(), NextFundingTime: t.GetNextFundingTime()}
		}
	}
	m.mu.Unlock()
	if err != nil {
		m.s.log.Warn("bybit: bad ticker", "topic", msg.Topic, "error", err)
		return
	}
	for _, ms := range subs {
		switch {
		case ms.mark && mark != nil:
			m.emit(ctx, &exchangev1.MarketEvent{Subscription: ms.sub, Time: ts, Event: &exchangev1.MarketEvent_MarkPrice{MarkPrice: mark}})
		case !ms.mark:
			m.emit(ctx, &exchangev1.MarketEvent{Subscription: ms.sub, Time: ts, Event: &exchangev1.MarketEvent_Ticker{Ticker: t}})
		}
	}
}

// onBook keeps the local book: a snapshot (also one mid-stream, or a delta with u = 1) resets it and goes to the
// host as a snapshot; a delta must carry the next update id: a duplicate is dropped, a gap sends RESYNCED and
// resubscribes the topic for a fresh snapshot.
func (m *marketSession) onBook(ctx context.Context, category string, subs []*msub, msg *wsMsg) {
	r, err := ParseBook(msg.Data)
	if err != nil {
		m.s.log.Warn("bybit: bad orderbook message", "error", err)
		m.resync(ctx, category, subs, msg.Topic, "malformed book message")
		return
	}
	m.mu.Lock()
	bs := m.books[topicKey(category, msg.Topic)]
	if bs == nil {
		m.mu.Unlock()
		return
	}
	var ev func(*exchangev1.Subscription) *exchangev1.MarketEvent
	if msg.Type == "snapshot" || r.U == 1 {
		bs.book.Reset(r)
		bs.seq++
		bids, asks := bs.book.Levels(0)
		seq := bs.seq
		ev = func(sub *exchangev1.Subscription) *exchangev1.MarketEvent {
			return &exchangev1.MarketEvent{Subscription: sub, Time: msg.Ts, Event: &exchangev1.MarketEvent_BookSnapshot{
				BookSnapshot: &exchangev1.BookUpdate{Bids: bids, Asks: asks, Sequence: seq}}}
		}
	} else {
		if !bs.book.synced {
			m.mu.Unlock()
			return // waiting for the snapshot of a resync
		}
		if err := bs.book.Update(r); err != nil {
			if errors.Is(err, ErrStale) {
				m.mu.Unlock()
				return
			}
			bs.book.synced = false
			m.mu.Unlock()
			m.resync(ctx, category, subs, msg.Topic, err.Error())
			return
		}
		prev := bs.seq
		bs.seq++
		seq := bs.seq
		bids, asks := levelsOf(r.B), levelsOf(r.A)
		ev = func(sub *exchangev1.Subscription) *exchangev1.MarketEvent {
			return &exchangev1.MarketEvent{Subscription: sub, Time: msg.Ts, Event: &exchangev1.MarketEvent_BookDelta{
				BookDelta: &exchangev1.BookUpdate{Bids: bids, Asks: asks, Sequence: seq, PrevSequence: prev}}}
		}
	}
	m.mu.Unlock()
	for _, ms := range subs {
		m.emit(ctx, ev(ms.sub))
	}
}

// levelsOf converts delta rows (size "0" deletes: sent as qty 0).
func levelsOf(rows [][]string) []*exchangev1.PriceLevel {
	out := make([]*exchangev1.PriceLevel, 0, len(rows))
	for _, r := range rows {
		px, _, _ := parseDec("price", r[0])
		sz, _, _ := parseDec("size", r[1])
		out = append(out, &exchangev1.PriceLevel{Price: canon(px), Qty: canon(sz)})
	}
	return out
}

// resync tells the host the book is being rebuilt and asks Bybit for a new snapshot.
func (m *marketSession) resync(ctx context.Context, category string, subs []*msub, topic, why string) {
	m.s.log.Warn("bybit: book resync", "topic", topic, "reason", why)
	for _, ms := range subs {
		m.emit(ctx, statusEvent(ms.sub, exchangev1.StreamStatus_STATE_RESYNCED, "book resync: "+why+"; a fresh snapshot follows", "", nil))
	}
	m.conn(ctx, category).resubscribe(ctx, topic)
}
