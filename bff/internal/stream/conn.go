package stream

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

type itemKind int

const (
	kindReplace itemKind = iota // state: a newer value replaces a pending one
	kindBook                    // book update: a second pending update turns into the latest snapshot
	kindTrades                  // trades: pending batches merge (bounded)
	kindControl                 // acks, errors, pongs: never merged or dropped
	kindOrdered                 // private channel messages: every one is sent, in order (bounded list)
)

// item is one pending message of a connection.
type item struct {
	kind   itemKind
	msg    *lazy
	snap   func() *lazy // kindBook: the view's latest snapshot, used when updates pile up
	trades *tradesMsg   // kindTrades: set once batches were merged (encoded per connection)
	src    *tradesMsg   // kindTrades: the shared batch msg encodes
	list   []*lazy      // kindOrdered: the messages, oldest first
}

func (it *item) bytes() []byte {
	if it.trades != nil {
		b, err := json.Marshal(it.trades)
		if err != nil {
			return nil
		}
		return b
	}
	return it.msg.bytes()
}

// conn is one browser connection. Its outbound queue is conflating and bounded: at most one pending item per
// subscription stream (book, trades, ticker, each candle, status) plus a bounded number of control replies.
type conn struct {
	g      *Gateway
	ws     *websocket.Conn
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	pending  map[string]*item
	order    []string
	controls int
	ctlSeq   uint64
	notify   chan struct{}

	subs map[string]*connSub // owned by the reader

	// Private channels: the member of the session checked at the upgrade ("" without one, or after it ended),
	// the session cookie it is re-checked with, and the private subscriptions.
	privMu      sync.Mutex
	member      string
	cookie      string
	priv        map[string]*privSub
	nextSession atomic.Int64 // unix nanoseconds of the next session re-check
	checking    atomic.Bool

	writingSince atomic.Int64 // unix nanoseconds when the current write began, 0 when not writing
	nextPing     atomic.Int64 // unix nanoseconds of the next heartbeat ping
	pinging      atomic.Bool
}

var errTooManyPending = errors.New("too many unanswered requests")

func (c *conn) signal() {
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// offer queues a replaceable message under key and reports whether it replaced a pending one (conflated).
// Callers wake the writer afterwards (signal), once per batch.
func (c *conn) offer(key string, msg *lazy, kind itemKind) (conflated bool) {
	c.mu.Lock()
	if old, ok := c.pending[key]; ok {
		old.msg, old.kind, old.trades, old.snap, old.src = msg, kind, nil, nil, nil
		c.mu.Unlock()
		return true
	}
	c.pending[key] = &item{kind: kind, msg: msg}
	c.order = append(c.order, key)
	c.mu.Unlock()
	return false
}

// offerBook queues a book message; snap (nil for a snapshot) gives the latest snapshot to send instead when an
// earlier message of the same view is still pending (conflated: true).
func (c *conn) offerBook(key string, msg *lazy, snap func() *lazy) (conflated bool) {
	c.mu.Lock()
	if old, ok := c.pending[key]; ok {
		if snap != nil {
			msg = snap()
		}
		old.msg, old.kind, old.snap = msg, kindBook, nil
		c.mu.Unlock()
		return true
	}
	c.pending[key] = &item{kind: kindBook, msg: msg}
	c.order = append(c.order, key)
	c.mu.Unlock()
	return false
}

// offerTrades queues a trades batch; batches pending together merge, keeping the newest MaxCoalescedTrades. It
// reports whether the batch merged into a pending one and how many trades the merge left out.
func (c *conn) offerTrades(key string, l *lazy, m *tradesMsg) (conflated bool, dropped int) {
	c.mu.Lock()
	if old, ok := c.pending[key]; ok {
		merged := old.trades
		if merged == nil {
			// First merge: copy the shared batch so other connections are not affected.
			prev := old.prevTrades()
			merged = &tradesMsg{header: m.header, Trades: append([]TradeJSON(nil), prev.Trades...), Dropped: prev.Dropped}
		}
		merged.header = m.header
		merged.Trades = append(merged.Trades, m.Trades...)
		if over := len(merged.Trades) - c.g.cfg.MaxCoalescedTrades; over > 0 {
			merged.Trades = append(merged.Trades[:0:0], merged.Trades[over:]...)
			merged.Dropped += over
			dropped = over
		}
		old.trades = merged
		c.mu.Unlock()
		return true, dropped
	}
	c.pending[key] = &item{kind: kindTrades, msg: l, src: m}
	c.order = append(c.order, key)
	c.mu.Unlock()
	return false, 0
}

// prevTrades returns the batch a pending trades item holds (its shared message).
func (it *item) prevTrades() *tradesMsg {
	if it.trades != nil {
		return it.trades
	}
	if it.src != nil {
		return it.src
	}
	return &tradesMsg{}
}

// control queues a reply that is never merged; too many unread replies close the connection.
func (c *conn) control(v any) {
	c.mu.Lock()
	if c.controls >= c.g.cfg.MaxPendingControl {
		c.mu.Unlock()
		c.cancel(errTooManyPending)
		return
	}
	c.ctlSeq++
	key := "\x00ctl" + itoa(int64(c.ctlSeq))
	c.controls++
	c.pending[key] = &item{kind: kindControl, msg: newLazy(v)}
	c.order = append(c.order, key)
	c.mu.Unlock()
	c.signal()
}

// offerOrdered appends a private channel message under key; false (nothing queued) when max messages of the key
// are already waiting.
func (c *conn) offerOrdered(key string, l *lazy, max int) bool {
	c.mu.Lock()
	if old, ok := c.pending[key]; ok {
		if len(old.list) >= max {
			c.mu.Unlock()
			return false
		}
		old.list = append(old.list, l)
		c.mu.Unlock()
		c.signal()
		return true
	}
	c.pending[key] = &item{kind: kindOrdered, list: []*lazy{l}}
	c.order = append(c.order, key)
	c.mu.Unlock()
	c.signal()
	return true
}

// resetOrdered replaces the messages waiting under key with ls.
func (c *conn) resetOrdered(key string, ls []*lazy) {
	c.mu.Lock()
	if old, ok := c.pending[key]; ok {
		old.list = ls
		c.mu.Unlock()
		c.signal()
		return
	}
	c.pending[key] = &item{kind: kindOrdered, list: ls}
	c.order = append(c.order, key)
	c.mu.Unlock()
	c.signal()
}

// take removes every pending item in queue order.
func (c *conn) take(buf []*item) []*item {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range c.order {
		it := c.pending[k]
		if it.kind == kindControl {
			c.controls--
		}
		if it.kind == kindOrdered {
			for _, l := range it.list {
				buf = append(buf, &item{kind: kindOrdered, msg: l})
			}
			delete(c.pending, k)
			continue
		}
		buf = append(buf, it)
		delete(c.pending, k)
	}
	c.order = c.order[:0]
	return buf
}

// writeLoop sends queued messages until the connection ends. One pending message goes out as its own frame; when
// several are pending (the client or the network is behind), they go out together as one frame holding a JSON
// array of messages, so a busy connection costs one write per wake-up instead of one per message.
func (c *conn) writeLoop() error {
	var (
		items []*item
		frame []byte
	)
	for {
		select {
		case <-c.ctx.Done():
			return context.Cause(c.ctx)
		case <-c.notify:
		}
		items = c.take(items[:0])
		n := 0
		frame = frame[:0]
		for i, it := range items {
			b := it.bytes()
			items[i] = nil
			if b == nil {
				continue
			}
			if n > 0 && len(frame)+len(b) > c.g.cfg.MaxFrameBytes {
				if err := c.writeFrame(frame, n); err != nil {
					return err
				}
				frame, n = frame[:0], 0
			}
			if n == 0 {
				frame = append(frame, b...)
			} else {
				if n == 1 {
					frame = append(append(frame[:0:0], '['), frame...)
				}
				frame = append(append(frame, ','), b...)
			}
			n++
		}
		if n > 0 {
			if err := c.writeFrame(frame, n); err != nil {
				return err
			}
		}
	}
}

// writeFrame writes one frame of n messages (an array when n > 1). The gateway's watchdog ends a write that takes
// longer than WriteTimeout.
func (c *conn) writeFrame(frame []byte, n int) error {
	if n > 1 {
		frame = append(frame, ']')
	}
	c.writingSince.Store(time.Now().UnixNano())
	// No context deadline here: the library would arm a timer per write. The gateway's watchdog ends a stuck write
	// (closing the connection ends a blocked write).
	err := c.ws.Write(context.Background(), websocket.MessageText, frame)
	c.writingSince.Store(0)
	if err != nil {
		return err
	}
	c.g.sent.Add(uint64(n))
	c.g.frames.Add(1)
	c.g.bytes.Add(uint64(len(frame)))
	return nil
}

// ping sends one WebSocket ping (the watchdog calls it every PingInterval); no pong within PongTimeout ends the
// connection.
func (c *conn) ping() {
	if !c.pinging.CompareAndSwap(false, true) {
		return
	}
	defer c.pinging.Store(false)
	pctx, cancel := context.WithTimeout(c.ctx, c.g.cfg.PongTimeout)
	defer cancel()
	if err := c.ws.Ping(pctx); err != nil && c.ctx.Err() == nil {
		c.cancel(errHeartbeat)
	}
}

var errWriteTimeout = errors.New("write timeout: client not reading")

var errHeartbeat = errors.New("heartbeat timeout")
