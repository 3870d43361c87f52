package bybit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// wsMsg is any message Bybit pushes on a public WebSocket: a topic message, or an answer to an op (subscribe,
// unsubscribe, ping).
type wsMsg struct {
	Topic   string          `json:"topic"`
	Type    string          `json:"type"`
	Ts      int64           `json:"ts"`
	Data    json.RawMessage `json:"data"`
	Success *bool           `json:"success"`
	RetMsg  string          `json:"ret_msg"`
	Op      string          `json:"op"`
	ReqID   string          `json:"req_id"`
}

// connState is what a wsConn reports to its owner.
type connState int

const (
	stateConnected connState = iota + 1
	stateReconnecting
	stateResubscribed
)

// subscribeBatch is how many topics one subscribe request carries (Bybit's spot limit is 10 args per request).
const subscribeBatch = 10

// wsConn is one Bybit public WebSocket kept alive: dial, subscribe, {"op":"ping"} every ping interval, reconnect
// with exponential backoff and jitter, resubscribe everything after a reconnect. Its goroutines belong to run's
// context.
type wsConn struct {
	url     string
	log     *slog.Logger
	ping    time.Duration
	backMin time.Duration
	backMax time.Duration
	// onMsg gets every topic message and every op answer except pongs; onState connection changes. Both are
	// called from the reading goroutine, one at a time.
	onMsg   func(ctx context.Context, m *wsMsg)
	onState func(ctx context.Context, st connState, err error)

	reqID atomic.Int64
	mu    sync.Mutex
	subs  map[string]bool
	conn  *websocket.Conn
}

func newWSConn(url string, st Settings, log *slog.Logger) *wsConn {
	return &wsConn{url: url, log: log, ping: st.PingInterval, backMin: st.ReconnectMin, backMax: st.ReconnectMax,
		subs: map[string]bool{}}
}

// subscribe records topics and sends them when connected (they are sent again after every reconnect).
func (w *wsConn) subscribe(ctx context.Context, topics ...string) {
	w.mu.Lock()
	for _, t := range topics {
		w.subs[t] = true
	}
	c := w.conn
	w.mu.Unlock()
	if c != nil {
		w.send(ctx, c, "subscribe", topics)
	}
}

func (w *wsConn) unsubscribe(ctx context.Context, topics ...string) {
	w.mu.Lock()
	for _, t := range topics {
		delete(w.subs, t)
	}
	c := w.conn
	w.mu.Unlock()
	if c != nil {
		w.send(ctx, c, "unsubscribe", topics)
	}
}

// resubscribe asks Bybit for a fresh snapshot of one topic (after a gap in a book's update ids).
func (w *wsConn) resubscribe(ctx context.Context, topic string) {
	w.mu.Lock()
	c := w.conn
	w.mu.Unlock()
	if c != nil {
		w.send(ctx, c, "unsubscribe", []string{topic})
		w.send(ctx, c, "subscribe", []string{topic})
	}
}

func (w *wsConn) send(ctx context.Context, c *websocket.Conn, op string, topics []string) {
	for len(topics) > 0 {
		n := min(len(topics), subscribeBatch)
		b, _ := json.Marshal(map[string]any{"op": op, "args": topics[:n], "req_id": strconv.FormatInt(w.reqID.Add(1), 10)})
		topics = topics[n:]
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := c.Write(wctx, websocket.MessageText, b)
		cancel()
		if err != nil {
			w.log.Warn("bybit: websocket write failed", "url", w.url, "op", op, "error", err)
			return
		}
	}
}

// errLived marks a session that was up for a while before it dropped: the backoff starts over.
var errLived = errors.New("bybit: websocket dropped")

// run keeps the connection until ctx ends.
func (w *wsConn) run(ctx context.Context) {
	backoff := w.backMin
	first := true
	for {
		err := w.session(ctx, first)
		if ctx.Err() != nil {
			return
		}
		w.log.Warn("bybit: websocket lost, reconnecting", "url", w.url, "error", err, "in", backoff)
		w.onState(ctx, stateReconnecting, err)
		jitter := time.Duration(rand.Int64N(int64(backoff)/2 + 1))
		t := time.NewTimer(backoff/2 + jitter)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(backoff*2, w.backMax)
		if errors.Is(err, errLived) {
			backoff = w.backMin
		}
		first = false
	}
}

func (w *wsConn) session(ctx context.Context, first bool) error {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	c, _, err := websocket.Dial(dctx, w.url, nil)
	cancel()
	if err != nil {
		return fmt.Errorf("dial %s: %w", w.url, err)
	}
	defer c.CloseNow()
	c.SetReadLimit(8 << 20)
	w.mu.Lock()
	w.conn = c
	topics := make([]string, 0, len(w.subs))
	for t := range w.subs {
		topics = append(topics, t)
	}
	w.mu.Unlock()
	sort.Strings(topics)
	defer func() {
		w.mu.Lock()
		if w.conn == c {
			w.conn = nil
		}
		w.mu.Unlock()
	}()
	if first {
		w.onState(ctx, stateConnected, nil)
	}
	w.send(ctx, c, "subscribe", topics)
	if !first {
		w.onState(ctx, stateResubscribed, nil)
	}
	start := time.Now()

	// The pinger sends {"op":"ping"} every interval, as Bybit asks, and drops the connection when nothing at all
	// arrived for two intervals after a ping went out.
	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	sctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(w.ping)
		defer tick.Stop()
		for {
			select {
			case <-sctx.Done():
				return
			case <-tick.C:
				if time.Since(time.Unix(0, last.Load())) > 2*w.ping {
					w.log.Warn("bybit: websocket silent, closing", "url", w.url)
					c.CloseNow()
					return
				}
				b, _ := json.Marshal(map[string]string{"op": "ping", "req_id": strconv.FormatInt(w.reqID.Add(1), 10)})
				wctx, cancel := context.WithTimeout(sctx, 5*time.Second)
				_ = c.Write(wctx, websocket.MessageText, b)
				cancel()
			}
		}
	}()
	defer wg.Wait()
	defer stop()
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			if time.Since(start) > 10*time.Second {
				return fmt.Errorf("%w: %v", errLived, err)
			}
			return fmt.Errorf("read: %w", err)
		}
		last.Store(time.Now().UnixNano())
		var m wsMsg
		if err := json.Unmarshal(data, &m); err != nil {
			w.log.Warn("bybit: undecodable websocket message", "url", w.url, "error", err)
			continue
		}
		if m.Op == "ping" || m.Op == "pong" || m.RetMsg == "pong" {
			continue
		}
		w.onMsg(ctx, &m)
	}
}

// statusEvent builds a stream-wide or per-subscription status event.
func statusEvent(sub *exchangev1.Subscription, st exchangev1.StreamStatus_State, msg, reqID string, err error) *exchangev1.MarketEvent {
	s := &exchangev1.StreamStatus{State: st, Message: msg, RequestId: reqID}
	if err != nil {
		s.Error = sdk.DetailOf(err)
	}
	return &exchangev1.MarketEvent{Subscription: sub, Time: time.Now().UnixMilli(), Event: &exchangev1.MarketEvent_Status{Status: s}}
}
