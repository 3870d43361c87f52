package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// MarketStream is a market data stream that survives plugin restarts. It remembers its subscriptions; when the
// plugin process dies or the gRPC stream breaks it sends the consumer one StreamStatus RECONNECTING, waits for the
// supervisor to bring the plugin back, re-opens the stream, sends StreamStatus RESYNCED and re-subscribes (so every
// book starts again with a snapshot). Transport errors never reach the consumer.
//
// What the consumer sees on Events: market events (book snapshot/delta, trade, ticker, candle, mark price) and
// StreamStatus events with state RECONNECTING, RESYNCED or ERROR (ERROR only when the plugin itself reports one,
// e.g. it rejects a subscription; never for a transport failure). Acknowledgements (CONNECTED, SUBSCRIBED,
// UNSUBSCRIBED) are not forwarded.
//
// Backpressure: Events is a bounded channel and the reader of the plugin stream never blocks on it. When it is
// full, the event is dropped and counted (Dropped). Trades, tickers, candles and mark prices are simply lost while
// the consumer lags (tickers, candles and mark prices are superseded by the next update anyway). A book that loses
// an event (or whose deltas show a sequence gap) is put into resync: its further deltas are dropped, and once the
// buffer is at most half full the stream sends a RESYNCED status carrying that book's subscription and
// re-subscribes the book, so the consumer's next event for it is a fresh snapshot. Host status events
// (RECONNECTING/RESYNCED after a restart) are never dropped: they wait for room.
//
// Events is closed when the stream ends: Close, the context given to StreamMarket, or host shutdown.
type MarketStream struct {
	sup    *Supervisor
	events chan *exchangev1.MarketEvent
	ops    chan streamOp
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	// subs is owned by the run loop.
	subs map[string]*exchangev1.Subscription

	booksMu sync.Mutex
	books   map[string]*bookState

	dropped    atomic.Uint64
	reconnects atomic.Uint64
}

type bookState struct {
	sub *exchangev1.Subscription
	// synced: a snapshot was delivered and lastSeq is the sequence of the last event delivered.
	synced  bool
	lastSeq int64
	// resync: events are being dropped until a fresh snapshot; requested: the re-subscribe was sent.
	resync    bool
	requested bool
}

type streamOp struct {
	op   exchangev1.StreamMarketRequest_Op
	subs []*exchangev1.Subscription
}

// StreamMarket opens a durable market stream with the host's default buffer. It returns at once; the stream
// connects (and reconnects) in the background until ctx ends or Close is called.
func (s *Supervisor) StreamMarket(ctx context.Context) *MarketStream {
	return s.StreamMarketBuffer(ctx, s.opts.StreamBuffer)
}

// StreamMarketBuffer is StreamMarket with an explicit event buffer size.
func (s *Supervisor) StreamMarketBuffer(ctx context.Context, buffer int) *MarketStream {
	if buffer < 1 {
		buffer = 1
	}
	sctx, cancel := context.WithCancel(ctx)
	m := &MarketStream{
		sup:    s,
		events: make(chan *exchangev1.MarketEvent, buffer),
		ops:    make(chan streamOp, 64),
		ctx:    sctx,
		cancel: cancel,
		done:   make(chan struct{}),
		subs:   map[string]*exchangev1.Subscription{},
		books:  map[string]*bookState{},
	}
	go m.run() // owned by the MarketStream; ends with its context
	return m
}

// Events delivers the stream's events; it is closed when the stream ends.
func (m *MarketStream) Events() <-chan *exchangev1.MarketEvent { return m.events }

// Dropped counts events dropped because the consumer was too slow.
func (m *MarketStream) Dropped() uint64 { return m.dropped.Load() }

// Reconnects counts how many times the stream was re-opened after a break.
func (m *MarketStream) Reconnects() uint64 { return m.reconnects.Load() }

// Subscribe adds subscriptions; they are remembered and replayed after every reconnect.
func (m *MarketStream) Subscribe(ctx context.Context, subs ...*exchangev1.Subscription) error {
	return m.send(ctx, exchangev1.StreamMarketRequest_OP_SUBSCRIBE, subs)
}

// Unsubscribe removes subscriptions.
func (m *MarketStream) Unsubscribe(ctx context.Context, subs ...*exchangev1.Subscription) error {
	return m.send(ctx, exchangev1.StreamMarketRequest_OP_UNSUBSCRIBE, subs)
}

func (m *MarketStream) send(ctx context.Context, op exchangev1.StreamMarketRequest_Op, subs []*exchangev1.Subscription) error {
	for _, s := range subs {
		if s == nil || s.GetChannel() == exchangev1.Channel_CHANNEL_UNSPECIFIED || s.GetSymbol() == "" {
			return errors.New("subscription needs a channel and a symbol")
		}
	}
	select {
	case m.ops <- streamOp{op: op, subs: subs}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-m.ctx.Done():
		return errors.New("market stream closed")
	}
}

// Close ends the stream and waits for its goroutines.
func (m *MarketStream) Close() {
	m.cancel()
	<-m.done
}

func subKey(s *exchangev1.Subscription) string {
	return fmt.Sprintf("%d|%d|%s|%s|%d", s.GetChannel(), s.GetMarketType(), s.GetSymbol(), s.GetInterval(), s.GetDepth())
}

// bookKey identifies a book regardless of the depth the plugin echoes.
func bookKey(s *exchangev1.Subscription) string {
	return fmt.Sprintf("%d|%s", s.GetMarketType(), strings.ToUpper(s.GetSymbol()))
}

func statusEvent(state exchangev1.StreamStatus_State, msg string, sub *exchangev1.Subscription) *exchangev1.MarketEvent {
	return &exchangev1.MarketEvent{
		Subscription: sub,
		Time:         time.Now().UnixMilli(),
		Event:        &exchangev1.MarketEvent_Status{Status: &exchangev1.StreamStatus{State: state, Message: msg}},
	}
}

// emit delivers a host status event, waiting for room; false when the stream is closing.
func (m *MarketStream) emit(ev *exchangev1.MarketEvent) bool {
	select {
	case m.events <- ev:
		return true
	case <-m.ctx.Done():
		return false
	}
}

func (m *MarketStream) run() {
	defer close(m.done)
	defer close(m.events)
	defer m.cancel()
	var (
		minGen  uint64
		outage  bool
		retries int
	)
	retry := Backoff{Initial: 50 * time.Millisecond, Max: 2 * time.Second}
	for {
		client, gen, err := m.waitRunning(minGen, 0)
		if err != nil {
			return
		}
		opened, err := m.session(client, outage)
		if m.ctx.Err() != nil {
			return
		}
		if opened {
			outage, retries = false, 0
		}
		// The stream broke: tell the consumer once per outage, nudge the supervisor, then wait for a new process
		// (or retry on the same one after a short delay, for a break that was not a crash).
		if !outage {
			outage = true
			if !m.emit(statusEvent(exchangev1.StreamStatus_STATE_RECONNECTING, "plugin stream lost; reconnecting", nil)) {
				return
			}
		}
		m.sup.log.Debug("market stream broken", "err", err)
		m.sup.checkNow()
		delay := retry.Delay(retries)
		retries++
		if _, _, err := m.waitRunning(gen+1, delay); err == nil {
			minGen = gen + 1
		} else if m.ctx.Err() != nil {
			return
		} else {
			minGen = 0
		}
	}
}

// waitRunning waits for a running plugin of generation >= minGen (timeout 0: no limit), applying subscription
// changes that arrive meanwhile so Subscribe never blocks on a plugin that is down.
func (m *MarketStream) waitRunning(minGen uint64, timeout time.Duration) (exchangev1.ExchangeClient, uint64, error) {
	var expire <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expire = t.C
	}
	for {
		c, gen, changed, stopped := m.sup.running(minGen)
		if c != nil {
			return c, gen, nil
		}
		if stopped {
			return nil, 0, errStopped
		}
		select {
		case <-changed:
		case o := <-m.ops:
			m.apply(o)
		case <-m.ctx.Done():
			return nil, 0, m.ctx.Err()
		case <-expire:
			return nil, 0, context.DeadlineExceeded
		}
	}
}

// apply records a subscription change (run loop only).
func (m *MarketStream) apply(o streamOp) {
	for _, s := range o.subs {
		k := subKey(s)
		if o.op == exchangev1.StreamMarketRequest_OP_SUBSCRIBE {
			m.subs[k] = s
			if s.GetChannel() == exchangev1.Channel_CHANNEL_BOOK {
				m.booksMu.Lock()
				m.books[bookKey(s)] = &bookState{sub: s}
				m.booksMu.Unlock()
			}
			continue
		}
		delete(m.subs, k)
		if s.GetChannel() == exchangev1.Channel_CHANNEL_BOOK {
			m.booksMu.Lock()
			delete(m.books, bookKey(s))
			m.booksMu.Unlock()
		}
	}
}

// session runs one gRPC stream until it breaks or the stream is closed. resynced says whether to announce a
// recovery (RESYNCED) before re-subscribing.
func (m *MarketStream) session(client exchangev1.ExchangeClient, resynced bool) (bool, error) {
	sctx, cancel := context.WithCancel(m.ctx)
	defer cancel()
	st, err := client.StreamMarket(sctx)
	if err != nil {
		return false, fmt.Errorf("open stream: %w", err)
	}
	if resynced {
		m.reconnects.Add(1)
		if !m.emit(statusEvent(exchangev1.StreamStatus_STATE_RESYNCED, "plugin stream re-established; snapshots follow", nil)) {
			return true, m.ctx.Err()
		}
	}
	// Every book starts over with a snapshot.
	m.booksMu.Lock()
	for _, b := range m.books {
		b.synced, b.resync, b.requested = false, false, false
	}
	m.booksMu.Unlock()

	readErr := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // owned by session; ends when the stream ends (sctx is cancelled on return)
		defer wg.Done()
		readErr <- m.read(st)
	}()
	defer wg.Wait()
	defer cancel()

	if len(m.subs) > 0 {
		all := make([]*exchangev1.Subscription, 0, len(m.subs))
		for _, s := range m.subs {
			all = append(all, s)
		}
		if err := st.Send(&exchangev1.StreamMarketRequest{Op: exchangev1.StreamMarketRequest_OP_SUBSCRIBE, Subscriptions: all}); err != nil {
			return true, fmt.Errorf("re-subscribe: %w", err)
		}
	}
	resyncTick := time.NewTicker(20 * time.Millisecond)
	defer resyncTick.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return true, m.ctx.Err()
		case err := <-readErr:
			return true, err
		case o := <-m.ops:
			m.apply(o)
			if err := st.Send(&exchangev1.StreamMarketRequest{Op: o.op, Subscriptions: o.subs}); err != nil {
				return true, fmt.Errorf("send: %w", err)
			}
		case <-resyncTick.C:
			if err := m.resyncBooks(st); err != nil {
				return true, err
			}
		}
	}
}

// resyncBooks re-subscribes books that lost events, once the consumer has room again.
func (m *MarketStream) resyncBooks(st exchangev1.Exchange_StreamMarketClient) error {
	if len(m.events) > cap(m.events)/2 {
		return nil
	}
	m.booksMu.Lock()
	var todo []*bookState
	for _, b := range m.books {
		if b.resync && !b.requested {
			todo = append(todo, b)
		}
	}
	m.booksMu.Unlock()
	for _, b := range todo {
		select {
		case m.events <- statusEvent(exchangev1.StreamStatus_STATE_RESYNCED, "book resync after a gap; snapshot follows", b.sub):
		default:
			return nil // no room after all; try on the next tick
		}
		m.booksMu.Lock()
		b.requested = true
		m.booksMu.Unlock()
		for _, op := range []exchangev1.StreamMarketRequest_Op{exchangev1.StreamMarketRequest_OP_UNSUBSCRIBE, exchangev1.StreamMarketRequest_OP_SUBSCRIBE} {
			if err := st.Send(&exchangev1.StreamMarketRequest{Op: op, Subscriptions: []*exchangev1.Subscription{b.sub}}); err != nil {
				return fmt.Errorf("resync send: %w", err)
			}
		}
	}
	return nil
}

// read forwards plugin events to the consumer without ever blocking on it.
func (m *MarketStream) read(st exchangev1.Exchange_StreamMarketClient) error {
	for {
		ev, err := st.Recv()
		if err != nil {
			return err
		}
		switch e := ev.GetEvent().(type) {
		case *exchangev1.MarketEvent_Status:
			switch e.Status.GetState() {
			case exchangev1.StreamStatus_STATE_RECONNECTING, exchangev1.StreamStatus_STATE_RESYNCED,
				exchangev1.StreamStatus_STATE_ERROR:
				m.offer(ev)
			}
		case *exchangev1.MarketEvent_BookSnapshot:
			m.offerBook(ev, e.BookSnapshot, true)
		case *exchangev1.MarketEvent_BookDelta:
			m.offerBook(ev, e.BookDelta, false)
		default:
			m.offer(ev)
		}
	}
}

func (m *MarketStream) offer(ev *exchangev1.MarketEvent) bool {
	select {
	case m.events <- ev:
		return true
	default:
		m.dropped.Add(1)
		return false
	}
}

func (m *MarketStream) offerBook(ev *exchangev1.MarketEvent, u *exchangev1.BookUpdate, snapshot bool) {
	if ev.GetSubscription() == nil {
		m.offer(ev)
		return
	}
	k := bookKey(ev.GetSubscription())
	m.booksMu.Lock()
	defer m.booksMu.Unlock()
	b, ok := m.books[k]
	if !ok {
		// Not (or no longer) subscribed: a late event after an unsubscribe.
		return
	}
	if snapshot {
		if m.offer(ev) {
			b.synced, b.lastSeq, b.resync, b.requested = true, u.GetSequence(), false, false
		} else {
			b.synced, b.resync, b.requested = false, true, false
		}
		return
	}
	if b.resync {
		m.dropped.Add(1)
		return
	}
	if !b.synced || u.GetPrevSequence() != b.lastSeq {
		// A delta without its snapshot or with a gap: the consumer's book would be wrong.
		m.dropped.Add(1)
		b.resync, b.requested = true, false
		return
	}
	if m.offer(ev) {
		b.lastSeq = u.GetSequence()
	} else {
		b.resync, b.requested = true, false
	}
}
