package stream

import (
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/exhub/exhub/bff/internal/book"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// pubMsg is what a topic's leader publishes (once, through the broker) and every replica's hub delivers to its own
// clients: the full book state (top levels) rather than deltas, so a replica that joins late, or a client that
// falls behind, needs nothing but the latest message.
type pubMsg struct {
	K       string        `json:"k"` // book, trades, ticker, candle, status
	Seq     int64         `json:"seq"`
	Time    int64         `json:"time,omitempty"`
	Bids    levelsJSON    `json:"bids,omitempty"`
	Asks    levelsJSON    `json:"asks,omitempty"`
	Trades  []TradeJSON   `json:"trades,omitempty"`
	Ticker  *TickerJSON   `json:"ticker,omitempty"`
	Candles []*CandleJSON `json:"candles,omitempty"`
	State   string        `json:"state,omitempty"`
	Message string        `json:"message,omitempty"`
}

// lazy is a message encoded at most once, on first use, and shared by every client that sends it.
type lazy struct {
	once sync.Once
	v    any
	b    []byte
}

func newLazy(v any) *lazy { return &lazy{v: v} }

func (l *lazy) bytes() []byte {
	l.once.Do(func() {
		b, err := json.Marshal(l.v)
		if err != nil {
			b = []byte(`{"type":"error","error":{"title":"Internal Server Error","status":500,"detail":"encoding failed"}}`)
		}
		l.b, l.v = b, nil
	})
	return l.b
}

// hub delivers topic messages to this replica's clients.
type hub struct {
	mu     sync.RWMutex
	topics map[string]*hubTopic
	join   func(topic string)
	leave  func(topic string)

	delivered     atomic.Uint64 // messages handed to client queues
	conflated     atomic.Uint64 // of those, messages that replaced or merged into a pending one
	tradesDropped atomic.Uint64 // trades left out of merged trades messages
	subs          [numChannels]atomic.Int64
}

// channelNames are the client channels in the order of the per-channel counters.
var channelNames = [...]string{"book", "trades", "ticker", "candles"}

const numChannels = len(channelNames)

func channelIndex(ch string) int {
	for i, n := range channelNames {
		if n == ch {
			return i
		}
	}
	return 0 // parseSub admits the four channels only
}

// subscriptions counts this replica's client subscriptions by channel.
func (h *hub) subscriptions() map[string]int {
	out := make(map[string]int, numChannels)
	for i, n := range channelNames {
		out[n] = int(h.subs[i].Load())
	}
	return out
}

type hubTopic struct {
	key   string
	canon *Sub // the topic's fields, for messages that have no view

	mu     sync.Mutex
	subs   map[*connSub]struct{}
	views  map[string]*view
	state  *book.Book // last book state (book topics)
	seq    int64
	time   int64
	ticker *lazy
	candle map[int64]*lazy // latest per open time (at most 2 kept)
	hasMsg bool
}

// view is one (depth, grouping) rendering of a book topic, shared by the clients that asked for it.
type view struct {
	sub     *Sub
	subs    map[*connSub]struct{}
	synced  bool
	seq     int64
	bids    []book.Level
	asks    []book.Level
	snap    *lazy // snapshot of the current levels
	snapSeq int64
}

// connSub is one subscription of one connection; needSnap is guarded by its topic's lock.
type connSub struct {
	c        *conn
	sub      *Sub
	key      string
	needSnap bool
}

func newHub(join, leave func(string)) *hub {
	return &hub{topics: map[string]*hubTopic{}, join: join, leave: leave}
}

// add registers a subscription and queues its initial state (a book snapshot, the last ticker and candle).
func (h *hub) add(cs *connSub) {
	h.subs[channelIndex(cs.sub.Channel)].Add(1)
	topic := cs.sub.Topic()
	h.mu.Lock()
	t, ok := h.topics[topic]
	if !ok {
		t = &hubTopic{key: topic, canon: cs.sub, subs: map[*connSub]struct{}{}, views: map[string]*view{},
			candle: map[int64]*lazy{}}
		h.topics[topic] = t
		h.join(topic)
	}
	t.mu.Lock()
	h.mu.Unlock()
	defer cs.c.signal()
	defer t.mu.Unlock()
	t.subs[cs] = struct{}{}
	cs.needSnap = true
	if cs.sub.Channel == "book" {
		vk := cs.sub.viewKey()
		v, ok := t.views[vk]
		if !ok {
			v = &view{sub: cs.sub, subs: map[*connSub]struct{}{}}
			t.views[vk] = v
			if t.state != nil && t.state.Synced() {
				v.render(t.state, t.seq, t.time)
			}
		}
		v.subs[cs] = struct{}{}
		if v.synced {
			cs.needSnap = false
			cs.c.offerBook(cs.key, v.snapshot(t.time), nil)
		}
		return
	}
	cs.needSnap = false
	if t.ticker != nil {
		cs.c.offer(cs.key, t.ticker, kindReplace)
	}
	for ot, c := range t.candle {
		cs.c.offer(candleKey(cs.key, ot), c, kindReplace)
	}
}

// wakeSet collects the connections a batch of deliveries queued messages for, to wake each writer once.
type wakeSet struct {
	seen  map[*conn]struct{}
	conns []*conn
}

func (w *wakeSet) add(c *conn) {
	if w.seen == nil {
		w.seen = map[*conn]struct{}{}
	}
	if _, ok := w.seen[c]; !ok {
		w.seen[c] = struct{}{}
		w.conns = append(w.conns, c)
	}
}

func (w *wakeSet) flush() {
	for _, c := range w.conns {
		c.signal()
	}
}

// deliverBatch delivers a leader's batch, waking each connection's writer once for all of it.
func (h *hub) deliverBatch(msgs []Message) {
	var w wakeSet
	for _, m := range msgs {
		h.deliverInto(m.Topic, m.Payload, m.msg, false, &w)
	}
	w.flush()
}

// remove drops a subscription; the last one of a topic leaves it.
func (h *hub) remove(cs *connSub) {
	topic := cs.sub.Topic()
	h.mu.Lock()
	defer h.mu.Unlock()
	t, ok := h.topics[topic]
	if !ok {
		return
	}
	t.mu.Lock()
	if _, ok := t.subs[cs]; ok {
		h.subs[channelIndex(cs.sub.Channel)].Add(-1)
	}
	delete(t.subs, cs)
	if v, ok := t.views[cs.sub.viewKey()]; ok && cs.sub.Channel == "book" {
		delete(v.subs, cs)
		if len(v.subs) == 0 {
			delete(t.views, cs.sub.viewKey())
		}
	}
	empty := len(t.subs) == 0
	t.mu.Unlock()
	if empty {
		delete(h.topics, topic)
		h.leave(topic)
	}
}

// wants reports whether any local client watches the topic.
func (h *hub) wants(topic string) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	_, ok := h.topics[topic]
	return ok
}

// deliver hands one published topic message to every local subscriber. initial marks a cached last state fetched
// when this replica joined: it is used only when nothing newer has arrived.
// It reports false when the payload does not decode.
func (h *hub) deliver(topic string, payload []byte, initial bool) bool {
	var w wakeSet
	ok := h.deliverInto(topic, payload, nil, initial, &w)
	w.flush()
	return ok
}

func (h *hub) deliverInto(topic string, payload []byte, decoded *pubMsg, initial bool, w *wakeSet) bool {
	h.mu.RLock()
	t, ok := h.topics[topic]
	h.mu.RUnlock()
	if !ok {
		return true
	}
	m := decoded
	if m == nil {
		m = &pubMsg{}
		if err := json.Unmarshal(payload, m); err != nil {
			return false
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if initial && t.hasMsg {
		return true
	}
	t.hasMsg = true
	n, conflated, dropped := 0, 0, 0
	count := func(c bool) {
		n++
		if c {
			conflated++
		}
	}
	switch m.K {
	case "status":
		if t.canon.Channel == "book" {
			// The book will restart with a snapshot: clients keep no stale book meanwhile.
			for _, v := range t.views {
				v.synced, v.bids, v.asks, v.snap = false, nil, nil, nil
			}
			t.state = nil
			for cs := range t.subs {
				cs.needSnap = true
			}
		}
		for cs := range t.subs {
			msg := newLazy(&statusMsg{header: headerOf("status", cs.sub, m.Seq), State: m.State, Message: m.Message})
			count(cs.c.offer(cs.key+"|status", msg, kindReplace))
		}
	case "book":
		b := book.New()
		if err := b.Snapshot(toProto(m.Bids), toProto(m.Asks), m.Seq); err != nil {
			return false
		}
		if t.state != nil && m.Seq <= t.seq {
			// The sequence went back (a new leader with its own upstream): every view starts over with a snapshot.
			for _, v := range t.views {
				v.synced, v.bids, v.asks, v.snap = false, nil, nil, nil
			}
			for cs := range t.subs {
				cs.needSnap = true
			}
		}
		t.state, t.seq, t.time = b, m.Seq, m.Time
		for _, v := range t.views {
			diff := v.render(b, m.Seq, m.Time)
			var snap *lazy
			for cs := range v.subs {
				if cs.needSnap {
					if snap == nil {
						snap = v.snapshot(m.Time)
					}
					cs.needSnap = false
					count(cs.c.offerBook(cs.key, snap, nil))
					continue
				}
				if diff == nil {
					continue
				}
				count(cs.c.offerBook(cs.key, diff, func() *lazy { return v.snapshot(m.Time) }))
			}
		}
	case "trades":
		msg := &tradesMsg{header: headerOf("trades", t.canon, m.Seq), Trades: m.Trades}
		l := newLazy(msg)
		for cs := range t.subs {
			c, d := cs.c.offerTrades(cs.key, l, msg)
			count(c)
			dropped += d
		}
	case "ticker":
		t.ticker = newLazy(&tickerMsg{header: headerOf("ticker", t.canon, m.Seq), Ticker: m.Ticker})
		for cs := range t.subs {
			count(cs.c.offer(cs.key, t.ticker, kindReplace))
		}
	case "candle":
		for i, c := range m.Candles {
			l := newLazy(&candleMsg{header: headerOf("candle", t.canon, m.Seq-int64(len(m.Candles)-1-i)), Candle: c})
			t.candle[c.OpenTime] = l
			for ot := range t.candle {
				if len(t.candle) > 2 && ot < c.OpenTime {
					delete(t.candle, ot)
				}
			}
			for cs := range t.subs {
				count(cs.c.offer(candleKey(cs.key, c.OpenTime), l, kindReplace))
			}
		}
	}
	if n > 0 {
		for cs := range t.subs {
			w.add(cs.c)
		}
	}
	h.delivered.Add(uint64(n))
	if conflated > 0 {
		h.conflated.Add(uint64(conflated))
	}
	if dropped > 0 {
		h.tradesDropped.Add(uint64(dropped))
	}
	return true
}

func candleKey(key string, openTime int64) string {
	return key + "|" + itoa(openTime)
}

// render computes the view from a book state and returns the update message, or nil when nothing the view shows
// changed (or the view had no levels yet: its subscribers then get a snapshot).
func (v *view) render(b *book.Book, seq, time int64) *lazy {
	bids, asks := b.Grouped(v.sub.Depth, v.sub.grouping)
	if !v.synced {
		v.synced, v.seq, v.bids, v.asks, v.snap = true, seq, bids, asks, nil
		return nil
	}
	db, da := diffLevels(v.bids, bids), diffLevels(v.asks, asks)
	if len(db) == 0 && len(da) == 0 {
		return nil
	}
	prev := v.seq
	v.seq, v.bids, v.asks, v.snap = seq, bids, asks, nil
	return newLazy(&bookMsg{header: headerOf("update", v.sub, seq), PrevSeq: prev, Time: time, Bids: db, Asks: da})
}

// snapshot is the view's current levels as a snapshot message (shared until the view changes).
func (v *view) snapshot(time int64) *lazy {
	if v.snap == nil || v.snapSeq != v.seq {
		v.snap = newLazy(&bookMsg{header: headerOf("snapshot", v.sub, v.seq), Time: time,
			Bids: nonNil(v.bids), Asks: nonNil(v.asks)})
		v.snapSeq = v.seq
	}
	return v.snap
}

func nonNil(ls []book.Level) levelsJSON {
	if ls == nil {
		return levelsJSON{}
	}
	return ls
}

// diffLevels lists next's levels that are new or changed and prev's levels that are gone (qty "0").
func diffLevels(prev, next []book.Level) levelsJSON {
	old := make(map[string]string, len(prev))
	for _, l := range prev {
		old[l.Price] = l.Qty
	}
	var out levelsJSON
	seen := make(map[string]struct{}, len(next))
	for _, l := range next {
		seen[l.Price] = struct{}{}
		if q, ok := old[l.Price]; !ok || q != l.Qty {
			out = append(out, l)
		}
	}
	for _, l := range prev {
		if _, ok := seen[l.Price]; !ok {
			out = append(out, book.Level{Price: l.Price, Qty: "0"})
		}
	}
	return out
}

func toProto(ls levelsJSON) []*exchangev1.PriceLevel {
	out := make([]*exchangev1.PriceLevel, len(ls))
	for i, l := range ls {
		out[i] = &exchangev1.PriceLevel{Price: l.Price, Qty: l.Qty}
	}
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
