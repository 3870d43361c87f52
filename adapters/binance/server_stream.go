package binance

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// marketSession is one StreamMarket call: its subscriptions, one feed per (market, route), the synced books.
type marketSession struct {
	s      *Server
	cfg    config
	ctx    context.Context
	send   chan *exchangev1.MarketEvent
	mu     sync.Mutex
	subs   map[string]*exchangev1.Subscription // by stream name
	books  map[string]*BookSync                // by stream name of the depth stream
	lastTr map[string]int64                    // last trade id per trade stream (overlap dedupe)
	feeds  map[string]*feed
	wg     sync.WaitGroup
}

func streamName(sub *exchangev1.Subscription) (Market, string, error) {
	m, err := marketOf(sub.GetMarketType())
	if err != nil {
		return 0, "", err
	}
	sym := strings.ToLower(sub.GetSymbol())
	switch sub.GetChannel() {
	case exchangev1.Channel_CHANNEL_BOOK:
		return m, sym + "@depth@100ms", nil
	case exchangev1.Channel_CHANNEL_TRADES:
		return m, sym + "@trade", nil
	case exchangev1.Channel_CHANNEL_TICKER:
		return m, sym + "@ticker", nil
	case exchangev1.Channel_CHANNEL_CANDLES:
		if !validInterval(m, sub.GetInterval()) {
			return 0, "", fmt.Errorf("interval %q is not offered", sub.GetInterval())
		}
		return m, sym + "@kline_" + sub.GetInterval(), nil
	case exchangev1.Channel_CHANNEL_MARK_PRICE:
		if m != Futures {
			return 0, "", fmt.Errorf("mark price streams are perpetual only")
		}
		return m, sym + "@markPrice@1s", nil
	}
	return 0, "", fmt.Errorf("channel %v is not supported", sub.GetChannel())
}

// feedKey: spot uses one connection; futures splits depth (/public) from the rest (/market) as Binance now requires.
func feedKey(m Market, stream string) string {
	if m == Spot {
		return "spot"
	}
	if strings.Contains(stream, "@depth") {
		return "futures/public"
	}
	return "futures/market"
}

func (ms *marketSession) feedURL(key string) func([]string) string {
	switch key {
	case "futures/public":
		return func(s []string) string { return combinedStreamURL(ms.cfg.endpoints.FuturesWS+"/public", s) }
	case "futures/market":
		return func(s []string) string { return combinedStreamURL(ms.cfg.endpoints.FuturesWS+"/market", s) }
	}
	return func(s []string) string { return combinedStreamURL(ms.cfg.endpoints.SpotWS, s) }
}

// StreamMarket serves subscriptions over Binance's combined streams.
func (s *Server) StreamMarket(stream exchangev1.Exchange_StreamMarketServer) error {
	_, cfg := s.client()
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	ms := &marketSession{s: s, cfg: cfg, ctx: ctx, send: make(chan *exchangev1.MarketEvent, 1024),
		subs: map[string]*exchangev1.Subscription{}, books: map[string]*BookSync{}, lastTr: map[string]int64{}, feeds: map[string]*feed{}}
	defer ms.wg.Wait()
	errc := make(chan error, 2)
	ms.wg.Add(1)
	go func() { // sender: the only goroutine calling stream.Send
		defer ms.wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-ms.send:
				if err := stream.Send(ev); err != nil {
					errc <- err
					cancel()
					return
				}
			}
		}
	}()
	ms.wg.Add(1)
	go func() { // receiver of host requests
		defer ms.wg.Done()
		for {
			req, err := stream.Recv()
			if err != nil {
				if err != io.EOF {
					errc <- err
				}
				cancel()
				return
			}
			ms.handle(req)
		}
	}()
	<-ctx.Done()
	select {
	case err := <-errc:
		if stream.Context().Err() != nil {
			return nil
		}
		return err
	default:
		return nil
	}
}

func (ms *marketSession) emit(ev *exchangev1.MarketEvent) {
	select {
	case ms.send <- ev:
	case <-ms.ctx.Done():
	}
}

func statusEv(state exchangev1.StreamStatus_State, reqID, msg string, e *sdk.Error) *exchangev1.MarketEvent {
	st := &exchangev1.StreamStatus{State: state, RequestId: reqID, Message: msg}
	if e != nil {
		st.Error = e.Detail
	}
	return &exchangev1.MarketEvent{Time: time.Now().UnixMilli(), Event: &exchangev1.MarketEvent_Status{Status: st}}
}

func (ms *marketSession) handle(req *exchangev1.StreamMarketRequest) {
	op := req.GetOp()
	if op != exchangev1.StreamMarketRequest_OP_SUBSCRIBE && op != exchangev1.StreamMarketRequest_OP_UNSUBSCRIBE {
		e := sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "op is required")
		ms.emit(statusEv(exchangev1.StreamStatus_STATE_ERROR, req.GetRequestId(), e.Message, e))
		return
	}
	type change struct {
		m      Market
		stream string
		sub    *exchangev1.Subscription
	}
	var changes []change
	for _, sub := range req.GetSubscriptions() {
		m, name, err := streamName(sub)
		if err != nil {
			e := sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "%v", err)
			ms.emit(statusEv(exchangev1.StreamStatus_STATE_ERROR, req.GetRequestId(), e.Message, e))
			return
		}
		if op == exchangev1.StreamMarketRequest_OP_SUBSCRIBE {
			if _, _, err := ms.s.instrument(ms.ctx, sub.GetMarketType(), sub.GetSymbol()); err != nil {
				e, _ := err.(*sdk.Error)
				if e == nil {
					e = sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "%v", err)
				}
				ms.emit(statusEv(exchangev1.StreamStatus_STATE_ERROR, req.GetRequestId(), e.Message, e))
				return
			}
		}
		changes = append(changes, change{m, name, sub})
	}
	ms.mu.Lock()
	touched := map[string]Market{}
	var newBooks []string
	for _, c := range changes {
		touched[feedKey(c.m, c.stream)] = c.m
		if op == exchangev1.StreamMarketRequest_OP_SUBSCRIBE {
			if _, dup := ms.subs[c.stream]; dup {
				continue
			}
			ms.subs[c.stream] = c.sub
			if c.sub.GetChannel() == exchangev1.Channel_CHANNEL_BOOK {
				depth := int(c.sub.GetDepth())
				if depth <= 0 {
					depth = defaultBookDepth
				}
				ms.books[c.stream] = NewBookSync(c.m == Futures, depth)
				newBooks = append(newBooks, c.stream)
			}
		} else {
			delete(ms.subs, c.stream)
			delete(ms.books, c.stream)
			delete(ms.lastTr, c.stream)
		}
	}
	for key, m := range touched {
		var names []string
		for name, sub := range ms.subs {
			if sm, _ := marketOf(sub.GetMarketType()); sm == m && feedKey(m, name) == key {
				names = append(names, name)
			}
		}
		f, ok := ms.feeds[key]
		if !ok {
			f = newFeed(key, ms.feedURL(key), ms.cfg.wsMaxLifetime, ms.s.log)
			ms.feeds[key] = f
			ms.wg.Add(2)
			go func() { defer ms.wg.Done(); f.run(ms.ctx) }()
			go func() { defer ms.wg.Done(); ms.consume(m, f) }()
		}
		f.SetStreams(names)
	}
	ms.mu.Unlock()
	state := exchangev1.StreamStatus_STATE_SUBSCRIBED
	if op == exchangev1.StreamMarketRequest_OP_UNSUBSCRIBE {
		state = exchangev1.StreamStatus_STATE_UNSUBSCRIBED
	}
	ms.emit(statusEv(state, req.GetRequestId(), "", nil))
	for _, name := range newBooks {
		ms.snapshot(name)
	}
}

// snapshot fetches a REST depth snapshot for a book stream in the background and applies it.
func (ms *marketSession) snapshot(name string) {
	ms.wg.Add(1)
	go func() {
		defer ms.wg.Done()
		for attempt := 0; ; attempt++ {
			// Let the stream buffer a few diffs first, as the procedure asks.
			select {
			case <-ms.ctx.Done():
				return
			case <-time.After(300*time.Millisecond + backoff(attempt)/4):
			}
			ms.mu.Lock()
			sub, ok := ms.subs[name]
			ms.mu.Unlock()
			if !ok {
				return
			}
			m, _ := marketOf(sub.GetMarketType())
			limit := 1000
			d, err := ms.s.fetchDepth(ms.ctx, m, sub.GetSymbol(), limit)
			if err != nil {
				ms.s.log.Warn("binance depth snapshot failed", "symbol", sub.GetSymbol(), "err", err)
				continue
			}
			ms.mu.Lock()
			b, ok := ms.books[name]
			if !ok {
				ms.mu.Unlock()
				return
			}
			snap, deltas, stale, err := b.ApplySnapshot(d)
			if err == nil && !stale {
				ms.emit(&exchangev1.MarketEvent{Subscription: sub, Time: d.Time, Event: &exchangev1.MarketEvent_BookSnapshot{BookSnapshot: snap}})
				for _, dl := range deltas {
					ms.emit(&exchangev1.MarketEvent{Subscription: sub, Time: d.Time, Event: &exchangev1.MarketEvent_BookDelta{BookDelta: dl}})
				}
				ms.mu.Unlock()
				return
			}
			ms.mu.Unlock()
		}
	}()
}

// consume turns feed frames into events; it owns nothing but reads the session under its lock.
func (ms *marketSession) consume(m Market, f *feed) {
	for {
		var fm feedMsg
		select {
		case <-ms.ctx.Done():
			return
		case fm = <-f.out:
		}
		switch fm.state {
		case feedReconnecting:
			ms.emit(statusEv(exchangev1.StreamStatus_STATE_RECONNECTING, "", f.name+" connection lost", nil))
			continue
		case feedResynced:
			ms.mu.Lock()
			var rebuild []string
			for name, b := range ms.books {
				if feedKey(m, name) == f.name {
					b.Reset()
					rebuild = append(rebuild, name)
				}
			}
			ms.mu.Unlock()
			ms.emit(statusEv(exchangev1.StreamStatus_STATE_RESYNCED, "", f.name+" reconnected", nil))
			for _, name := range rebuild {
				ms.snapshot(name)
			}
			continue
		}
		msg, err := ParseStreamMessage(fm.data)
		if err != nil || msg.Stream == "" {
			continue
		}
		ms.dispatch(m, msg)
	}
}

func (ms *marketSession) dispatch(m Market, msg *StreamMessage) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	sub, ok := ms.subs[msg.Stream]
	if !ok {
		return
	}
	ev := &exchangev1.MarketEvent{Subscription: sub}
	switch sub.GetChannel() {
	case exchangev1.Channel_CHANNEL_BOOK:
		d, err := ParseDepthEvent(msg.Data)
		if err != nil {
			ms.s.log.Warn("binance depth event unreadable", "stream", msg.Stream, "err", err)
			return
		}
		b := ms.books[msg.Stream]
		delta, gap, err := b.OnEvent(*d)
		if err != nil {
			return
		}
		if gap {
			ms.emit(statusEv(exchangev1.StreamStatus_STATE_RESYNCED, "", msg.Stream+" gap: rebuilding the book", nil))
			ms.snapshot(msg.Stream)
			return
		}
		if delta == nil {
			return
		}
		ev.Time, ev.Event = d.Time, &exchangev1.MarketEvent_BookDelta{BookDelta: delta}
	case exchangev1.Channel_CHANNEL_TRADES:
		tr, t, ok, err := ParseTradeEvent(msg.Data)
		if err != nil || !ok {
			return
		}
		id := atoiSafe(tr.Id)
		if id <= ms.lastTr[msg.Stream] {
			return // seen on the other connection during a rollover
		}
		ms.lastTr[msg.Stream] = id
		ev.Time, ev.Event = t, &exchangev1.MarketEvent_Trade{Trade: tr}
	case exchangev1.Channel_CHANNEL_TICKER:
		tk, err := ParseTickerEvent(m, msg.Data)
		if err != nil {
			return
		}
		ev.Time, ev.Event = tk.Time, &exchangev1.MarketEvent_Ticker{Ticker: tk}
	case exchangev1.Channel_CHANNEL_CANDLES:
		c, _, t, err := ParseKlineEvent(msg.Data)
		if err != nil {
			return
		}
		ev.Time, ev.Event = t, &exchangev1.MarketEvent_Candle{Candle: c}
	case exchangev1.Channel_CHANNEL_MARK_PRICE:
		u, t, err := ParseMarkPriceEvent(msg.Data)
		if err != nil {
			return
		}
		ev.Time, ev.Event = t, &exchangev1.MarketEvent_MarkPrice{MarkPrice: u}
	default:
		return
	}
	ms.emit(ev)
}

func atoiSafe(s string) int64 {
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int64(c-'0')
	}
	return n
}
