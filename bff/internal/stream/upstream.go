package stream

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/exhub/exhub/bff/internal/book"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// upstream holds the upstream subscriptions of the topics this replica leads: one durable market stream per
// exchange, one subscription per topic on it. Its event loops keep the local order books and publish each topic's
// messages through the broker.
type upstream struct {
	src    Source
	broker Broker
	depth  int
	linger time.Duration
	log    *slog.Logger

	mu     sync.Mutex
	want   map[string]bool // topics to lead
	resync map[string]bool // book topics to re-subscribe
	kick   chan struct{}

	// owned by run
	active map[string]*leadTopic
	exch   map[string]*exStream

	published atomic.Uint64
	events    atomic.Uint64
	leading   atomic.Int64
	held      [numChannels]atomic.Int64 // upstream subscriptions by client channel
	resyncs   [numResyncReasons]atomic.Uint64

	runOnce sync.Once
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
}

type exStream struct {
	slug string
	ms   MarketStream
	done chan struct{}

	mu     sync.Mutex
	topics map[string]*leadTopic
}

type leadTopic struct {
	topic      string
	sub        *exchangev1.Subscription
	book       *book.Book // book topics
	seq        int64      // other topics: increasing message sequence
	lastResync time.Time
	// per batch
	dirty   bool
	time    int64
	trades  []TradeJSON
	ticker  *TickerJSON
	candles []*CandleJSON
	status  *pubMsg
}

func newUpstream(src Source, b Broker, depth int, linger time.Duration, log *slog.Logger) *upstream {
	ctx, cancel := context.WithCancel(context.Background())
	u := &upstream{src: src, broker: b, depth: depth, linger: linger, log: log, want: map[string]bool{}, resync: map[string]bool{},
		kick: make(chan struct{}, 1), active: map[string]*leadTopic{}, exch: map[string]*exStream{},
		ctx: ctx, cancel: cancel, done: make(chan struct{})}
	go u.run() // owned by the upstream; ends with close
	return u
}

func (u *upstream) signal() {
	select {
	case u.kick <- struct{}{}:
	default:
	}
}

// lead and unlead record the wish and return at once; run applies it.
func (u *upstream) lead(topic string) {
	u.mu.Lock()
	u.want[topic] = true
	u.mu.Unlock()
	u.signal()
}

func (u *upstream) unlead(topic string) {
	u.mu.Lock()
	delete(u.want, topic)
	u.mu.Unlock()
	u.signal()
}

func (u *upstream) requestResync(topic string) {
	u.mu.Lock()
	u.resync[topic] = true
	u.mu.Unlock()
	u.signal()
}

func (u *upstream) stats() (published uint64, leading int, events uint64) {
	return u.published.Load(), int(u.leading.Load()), u.events.Load()
}

// byChannel counts the upstream subscriptions held by client channel.
func (u *upstream) byChannel() map[string]int {
	out := make(map[string]int, numChannels)
	for i, n := range channelNames {
		out[n] = int(u.held[i].Load())
	}
	return out
}

// Why a book was resynced (Stats.Resyncs).
const (
	resyncGap = iota
	resyncCrossed
	resyncInvalid
	resyncUpstream
	numResyncReasons
)

var resyncReasonNames = [numResyncReasons]string{"gap", "crossed", "invalid", "upstream"}

func (u *upstream) resyncCounts() map[string]uint64 {
	out := make(map[string]uint64, numResyncReasons)
	for i, n := range resyncReasonNames {
		out[n] = u.resyncs[i].Load()
	}
	return out
}

// protoChannels maps the plugin's channels to the client channel counters.
var protoChannels = map[exchangev1.Channel]int{
	exchangev1.Channel_CHANNEL_BOOK: 0, exchangev1.Channel_CHANNEL_TRADES: 1,
	exchangev1.Channel_CHANNEL_TICKER: 2, exchangev1.Channel_CHANNEL_CANDLES: 3,
}

// close stops every upstream stream and waits for the loops.
func (u *upstream) close() {
	u.cancel()
	<-u.done
}

func (u *upstream) run() {
	defer close(u.done)
	defer func() {
		for _, es := range u.exch {
			es.ms.Close()
			<-es.done
		}
	}()
	for {
		select {
		case <-u.ctx.Done():
			return
		case <-u.kick:
		}
		u.mu.Lock()
		want := make(map[string]bool, len(u.want))
		for t := range u.want {
			want[t] = true
		}
		resync := u.resync
		u.resync = map[string]bool{}
		u.mu.Unlock()
		for t, lt := range u.active {
			if !want[t] {
				u.stop(lt)
			}
		}
		for t := range want {
			if _, ok := u.active[t]; !ok {
				u.start(t)
			}
		}
		for t := range resync {
			if lt, ok := u.active[t]; ok {
				u.resubscribe(lt)
			}
		}
		u.leading.Store(int64(len(u.active)))
		var held [numChannels]int64
		for _, lt := range u.active {
			held[protoChannels[lt.sub.GetChannel()]]++
		}
		for i := range held {
			u.held[i].Store(held[i])
		}
	}
}

func (u *upstream) stream(slug string) (*exStream, error) {
	if es, ok := u.exch[slug]; ok {
		return es, nil
	}
	ex, ok := u.src.Exchange(slug)
	if !ok {
		return nil, errors.New("unknown exchange")
	}
	es := &exStream{slug: slug, ms: ex.StreamMarket(u.ctx), done: make(chan struct{}), topics: map[string]*leadTopic{}}
	u.exch[slug] = es
	go u.loop(es) // owned by run; ends when the market stream closes
	return es, nil
}

func (u *upstream) start(topic string) {
	slug, sub, err := parseTopic(topic, u.depth)
	if err != nil {
		u.log.Warn("stream: bad topic", "topic", topic, "err", err)
		return
	}
	es, err := u.stream(slug)
	if err != nil {
		u.log.Warn("stream: cannot lead topic", "topic", topic, "err", err)
		return
	}
	lt := &leadTopic{topic: topic, sub: sub, seq: time.Now().UnixMicro()}
	if sub.GetChannel() == exchangev1.Channel_CHANNEL_BOOK {
		lt.book = book.New()
		lt.book.SetMaxLevels(1000)
	}
	es.mu.Lock()
	es.topics[topic] = lt
	es.mu.Unlock()
	u.active[topic] = lt
	ctx, cancel := context.WithTimeout(u.ctx, 5*time.Second)
	defer cancel()
	if err := es.ms.Subscribe(ctx, sub); err != nil {
		u.log.Warn("stream: upstream subscribe", "topic", topic, "err", err)
	}
	u.log.Debug("stream: leading topic", "topic", topic)
}

func (u *upstream) stop(lt *leadTopic) {
	slug, _, _ := parseTopic(lt.topic, u.depth)
	delete(u.active, lt.topic)
	es := u.exch[slug]
	if es == nil {
		return
	}
	es.mu.Lock()
	delete(es.topics, lt.topic)
	es.mu.Unlock()
	ctx, cancel := context.WithTimeout(u.ctx, 5*time.Second)
	defer cancel()
	if err := es.ms.Unsubscribe(ctx, lt.sub); err != nil {
		u.log.Warn("stream: upstream unsubscribe", "topic", lt.topic, "err", err)
	}
	u.log.Debug("stream: dropped topic", "topic", lt.topic)
}

// resubscribe asks the plugin for a fresh book snapshot.
func (u *upstream) resubscribe(lt *leadTopic) {
	slug, _, _ := parseTopic(lt.topic, u.depth)
	es := u.exch[slug]
	if es == nil {
		return
	}
	ctx, cancel := context.WithTimeout(u.ctx, 5*time.Second)
	defer cancel()
	if err := es.ms.Unsubscribe(ctx, lt.sub); err == nil {
		_ = es.ms.Subscribe(ctx, lt.sub)
	}
}

// maxBatch is how many queued events one pass applies before publishing.
const maxBatch = 512

// loop applies an exchange's events and publishes, per pass, one message per changed topic.
func (u *upstream) loop(es *exStream) {
	defer close(es.done)
	batch := make([]*exchangev1.MarketEvent, 0, maxBatch)
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	var dirty []*leadTopic
	var out []Message
	for {
		ev, ok := <-es.ms.Events()
		if !ok {
			return
		}
		batch = append(batch[:0], ev)
		// Take what is queued; then linger briefly for events that belong with these (a trade and the book
		// change it caused arrive microseconds apart), so they reach each client in one frame.
		lingering := false
	drain:
		for len(batch) < maxBatch {
			select {
			case ev, ok := <-es.ms.Events():
				if !ok {
					break drain
				}
				batch = append(batch, ev)
				continue
			default:
			}
			if lingering || u.linger <= 0 {
				break
			}
			lingering = true
			linger.Reset(u.linger)
			select {
			case ev, ok := <-es.ms.Events():
				if !linger.Stop() {
					<-linger.C
				}
				if !ok {
					break drain
				}
				batch = append(batch, ev)
			case <-linger.C:
				break drain
			}
		}
		u.events.Add(uint64(len(batch)))
		dirty = dirty[:0]
		es.mu.Lock()
		for _, ev := range batch {
			dirty = u.apply(es, ev, dirty)
		}
		out = out[:0]
		for _, lt := range dirty {
			out = u.flush(lt, out)
		}
		es.mu.Unlock()
		if len(out) > 0 {
			u.published.Add(uint64(len(out)))
			u.broker.Publish(out)
		}
	}
}

func mark(lt *leadTopic, dirty []*leadTopic) []*leadTopic {
	if !lt.dirty {
		lt.dirty = true
		dirty = append(dirty, lt)
	}
	return dirty
}

// apply folds one event into its topic (es.mu held).
func (u *upstream) apply(es *exStream, ev *exchangev1.MarketEvent, dirty []*leadTopic) []*leadTopic {
	if st, ok := ev.GetEvent().(*exchangev1.MarketEvent_Status); ok {
		return u.applyStatus(es, ev, st.Status, dirty)
	}
	if ev.GetSubscription() == nil {
		return dirty
	}
	lt := es.topics[topicOf(es.slug, ev.GetSubscription())]
	if lt == nil {
		return dirty // not led (any more): a late event
	}
	switch e := ev.GetEvent().(type) {
	case *exchangev1.MarketEvent_BookSnapshot:
		if lt.book == nil {
			return dirty
		}
		if err := lt.book.Snapshot(e.BookSnapshot.GetBids(), e.BookSnapshot.GetAsks(), e.BookSnapshot.GetSequence()); err != nil {
			return u.bookBroken(lt, err, dirty)
		}
		lt.time = eventTime(ev)
		lt.status = nil
		return mark(lt, dirty)
	case *exchangev1.MarketEvent_BookDelta:
		if lt.book == nil || !lt.book.Synced() {
			return dirty // waiting for a snapshot
		}
		if err := lt.book.Apply(e.BookDelta); err != nil {
			return u.bookBroken(lt, err, dirty)
		}
		lt.time = eventTime(ev)
		return mark(lt, dirty)
	case *exchangev1.MarketEvent_Trade:
		t := e.Trade
		lt.trades = append(lt.trades, TradeJSON{ID: t.GetId(), Price: t.GetPrice(), Qty: t.GetQty(), Side: sideName(t.GetSide()), Time: t.GetTime()})
		return mark(lt, dirty)
	case *exchangev1.MarketEvent_Ticker:
		lt.ticker = tickerJSON(e.Ticker)
		return mark(lt, dirty)
	case *exchangev1.MarketEvent_Candle:
		c := candleJSON(e.Candle)
		for i, old := range lt.candles {
			if old.OpenTime == c.OpenTime {
				lt.candles = append(lt.candles[:i], lt.candles[i+1:]...)
				break
			}
		}
		lt.candles = append(lt.candles, c)
		return mark(lt, dirty)
	}
	return dirty
}

// bookBroken drops a book that cannot be trusted, tells clients, and asks for a fresh snapshot.
func (u *upstream) bookBroken(lt *leadTopic, err error, dirty []*leadTopic) []*leadTopic {
	switch {
	case errors.Is(err, book.ErrGap):
		u.resyncs[resyncGap].Add(1)
	case errors.Is(err, book.ErrCrossed):
		u.resyncs[resyncCrossed].Add(1)
	default:
		u.resyncs[resyncInvalid].Add(1)
	}
	lt.book.Reset()
	u.log.Info("stream: book resync", "topic", lt.topic, "err", err)
	lt.status = &pubMsg{K: "status", State: "resyncing", Message: "order book resync; a snapshot follows"}
	// Resyncs of one topic are spaced resyncSpacing apart (a plugin whose book keeps breaking is not asked for a
	// snapshot in a tight loop), but every broken book gets one: a resync that comes too soon after the last is
	// made when the spacing has passed, never dropped (the book would wait for a snapshot forever). lastResync is
	// the time of the latest resync made or scheduled.
	now := time.Now()
	next := lt.lastResync.Add(resyncSpacing)
	switch {
	case errors.Is(err, book.ErrCrossed) || !now.Before(next):
		lt.lastResync = now
		u.requestResync(lt.topic)
	case now.Before(lt.lastResync):
		// One is scheduled already.
	default:
		lt.lastResync = next
		topic := lt.topic
		time.AfterFunc(next.Sub(now), func() { u.requestResync(topic) }) // ends at once; run ignores a topic no longer led
	}
	return mark(lt, dirty)
}

// resyncSpacing is the least time between two resyncs of one book.
const resyncSpacing = 200 * time.Millisecond

func (u *upstream) applyStatus(es *exStream, ev *exchangev1.MarketEvent, st *exchangev1.StreamStatus, dirty []*leadTopic) []*leadTopic {
	var targets []*leadTopic
	if ev.GetSubscription() != nil {
		if lt := es.topics[topicOf(es.slug, ev.GetSubscription())]; lt != nil {
			targets = append(targets, lt)
		}
	} else {
		for _, lt := range es.topics {
			targets = append(targets, lt)
		}
	}
	for _, lt := range targets {
		var m *pubMsg
		switch st.GetState() {
		case exchangev1.StreamStatus_STATE_RECONNECTING:
			m = &pubMsg{K: "status", State: "reconnecting", Message: "exchange stream interrupted; reconnecting"}
		case exchangev1.StreamStatus_STATE_RESYNCED:
			if lt.book != nil {
				u.resyncs[resyncUpstream].Add(1)
				m = &pubMsg{K: "status", State: "resyncing", Message: "order book resync; a snapshot follows"}
			} else {
				m = &pubMsg{K: "status", State: "live", Message: "exchange stream re-established"}
			}
		case exchangev1.StreamStatus_STATE_ERROR:
			m = &pubMsg{K: "status", State: "error", Message: st.GetMessage()}
		default:
			continue
		}
		if lt.book != nil {
			lt.book.Reset()
		}
		lt.status = m
		dirty = mark(lt, dirty)
	}
	return dirty
}

// flush turns a topic's pending changes into messages (es.mu held).
func (u *upstream) flush(lt *leadTopic, out []Message) []Message {
	lt.dirty = false
	enc := func(m *pubMsg, state bool) {
		b, err := json.Marshal(m)
		if err != nil {
			return
		}
		out = append(out, Message{Topic: lt.topic, Payload: b, State: state, msg: m})
	}
	if lt.status != nil {
		lt.seq++
		lt.status.Seq = lt.seq
		enc(lt.status, false)
		lt.status = nil
	}
	switch {
	case lt.book != nil:
		if lt.book.Synced() {
			bids, asks := lt.book.Top(maxPublishedLevels)
			enc(&pubMsg{K: "book", Seq: lt.book.Seq(), Time: lt.time, Bids: bids, Asks: asks}, true)
		}
	case len(lt.trades) > 0:
		lt.seq++
		enc(&pubMsg{K: "trades", Seq: lt.seq, Trades: lt.trades}, false)
		lt.trades = nil
	case lt.ticker != nil:
		lt.seq++
		enc(&pubMsg{K: "ticker", Seq: lt.seq, Ticker: lt.ticker}, true)
		lt.ticker = nil
	case len(lt.candles) > 0:
		lt.seq += int64(len(lt.candles))
		enc(&pubMsg{K: "candle", Seq: lt.seq, Candles: lt.candles}, true)
		lt.candles = nil
	}
	return out
}

// maxPublishedLevels bounds the levels per side a book message carries between replicas.
const maxPublishedLevels = 200

func tickerJSON(t *exchangev1.Ticker) *TickerJSON {
	return &TickerJSON{Last: t.GetLast(), Open24h: t.GetOpen_24H(), High24h: t.GetHigh_24H(), Low24h: t.GetLow_24H(),
		Volume24h: t.GetVolume_24H(), QuoteVolume24h: t.GetQuoteVolume_24H(), ChangePct24h: t.GetChangePct_24H(),
		Bid: t.GetBid(), BidQty: t.GetBidQty(), Ask: t.GetAsk(), AskQty: t.GetAskQty(), MarkPrice: t.GetMarkPrice(),
		IndexPrice: t.GetIndexPrice(), FundingRate: t.GetFundingRate(), NextFunding: t.GetNextFundingTime(),
		OpenInterest: t.GetOpenInterest(), Time: t.GetTime()}
}

func candleJSON(c *exchangev1.Candle) *CandleJSON {
	return &CandleJSON{OpenTime: c.GetOpenTime(), Open: c.GetOpen(), High: c.GetHigh(), Low: c.GetLow(), Close: c.GetClose(),
		Volume: c.GetVolume(), QuoteVolume: c.GetQuoteVolume(), Trades: c.GetTrades(), Closed: c.GetClosed()}
}

// eventTime is the event's exchange time, or now when the plugin gave none.
func eventTime(ev *exchangev1.MarketEvent) int64 {
	if t := ev.GetTime(); t > 0 {
		return t
	}
	return time.Now().UnixMilli()
}
