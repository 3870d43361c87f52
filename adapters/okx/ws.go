package okx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// wsArg is a channel argument: {"channel":"books","instId":"BTC-USDT"}.
type wsArg map[string]string

func (a wsArg) key() string { return a["channel"] + "|" + a["instId"] + "|" + a["instType"] }

// wsMsg is any message OKX pushes.
type wsMsg struct {
	Event  string          `json:"event"`
	Code   string          `json:"code"`
	Msg    string          `json:"msg"`
	Arg    wsArg           `json:"arg"`
	Action string          `json:"action"`
	Data   json.RawMessage `json:"data"`
}

// connState is what a wsConn reports to its owner.
type connState int

const (
	stateConnected connState = iota + 1
	stateReconnecting
	stateResubscribed
)

// wsConn is one OKX WebSocket kept alive: dial, login (private), subscribe, text "ping" when idle, reconnect with
// exponential backoff and jitter, resubscribe everything after a reconnect. Its goroutines belong to run's
// context.
type wsConn struct {
	url     string
	creds   *Credentials
	log     *slog.Logger
	idle    time.Duration
	backMin time.Duration
	backMax time.Duration
	// onMsg gets every data or event message (not pongs); onState connection changes. Both are called from the
	// reading goroutine, one at a time.
	onMsg   func(ctx context.Context, m *wsMsg)
	onState func(ctx context.Context, st connState, err error)

	mu   sync.Mutex
	subs map[string]wsArg
	conn *websocket.Conn
}

func newWSConn(url string, creds *Credentials, st Settings, log *slog.Logger) *wsConn {
	return &wsConn{url: url, creds: creds, log: log, idle: st.PingInterval, backMin: st.ReconnectMin, backMax: st.ReconnectMax,
		subs: map[string]wsArg{}}
}

// errAuth is returned by run when OKX refuses the login: retrying cannot help.
var errAuth = errors.New("okx: websocket login refused")

// subscribe records args and sends them when connected (they are sent again after every reconnect).
func (w *wsConn) subscribe(ctx context.Context, args ...wsArg) {
	w.mu.Lock()
	for _, a := range args {
		w.subs[a.key()] = a
	}
	c := w.conn
	w.mu.Unlock()
	if c != nil {
		w.send(ctx, c, "subscribe", args)
	}
}

func (w *wsConn) unsubscribe(ctx context.Context, args ...wsArg) {
	w.mu.Lock()
	for _, a := range args {
		delete(w.subs, a.key())
	}
	c := w.conn
	w.mu.Unlock()
	if c != nil {
		w.send(ctx, c, "unsubscribe", args)
	}
}

// resubscribe asks OKX for a fresh snapshot of one channel (used after a checksum or sequence failure).
func (w *wsConn) resubscribe(ctx context.Context, a wsArg) {
	w.mu.Lock()
	c := w.conn
	w.mu.Unlock()
	if c != nil {
		w.send(ctx, c, "unsubscribe", []wsArg{a})
		w.send(ctx, c, "subscribe", []wsArg{a})
	}
}

func (w *wsConn) send(ctx context.Context, c *websocket.Conn, op string, args []wsArg) {
	if len(args) == 0 {
		return
	}
	b, _ := json.Marshal(map[string]any{"op": op, "args": args})
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.Write(wctx, websocket.MessageText, b); err != nil {
		w.log.Warn("okx: websocket write failed", "url", w.url, "op", op, "error", err)
	}
}

// run keeps the connection until ctx ends. It returns errAuth (wrapped) when the login is refused.
func (w *wsConn) run(ctx context.Context) error {
	backoff := w.backMin
	first := true
	for {
		err := w.session(ctx, first)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, errAuth) {
			return err
		}
		w.log.Warn("okx: websocket lost, reconnecting", "url", w.url, "error", err, "in", backoff)
		w.onState(ctx, stateReconnecting, err)
		jitter := time.Duration(rand.Int64N(int64(backoff)/2 + 1))
		t := time.NewTimer(backoff/2 + jitter)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		backoff = min(backoff*2, w.backMax)
		if errors.Is(err, errLived) {
			backoff = w.backMin
		}
		first = false
	}
}

// errLived marks a session that was up for a while before it dropped: the backoff starts over.
var errLived = errors.New("okx: websocket dropped")

func (w *wsConn) session(ctx context.Context, first bool) error {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	c, _, err := websocket.Dial(dctx, w.url, nil)
	cancel()
	if err != nil {
		return fmt.Errorf("dial %s: %w", w.url, err)
	}
	defer c.CloseNow()
	c.SetReadLimit(8 << 20)
	if w.creds != nil {
		if err := w.login(ctx, c); err != nil {
			return err
		}
	}
	w.mu.Lock()
	w.conn = c
	args := make([]wsArg, 0, len(w.subs))
	for _, a := range w.subs {
		args = append(args, a)
	}
	w.mu.Unlock()
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
	w.send(ctx, c, "subscribe", args)
	if !first {
		w.onState(ctx, stateResubscribed, nil)
	}
	start := time.Now()

	// The pinger sends a text "ping" when nothing arrived for idle, and drops the connection when a further idle
	// period passes after that ping in silence. The drop always follows a ping that was written, however late the
	// ticker runs: a slow scheduler delays the check, never skips the ping.
	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(max(w.idle/4, 10*time.Millisecond))
		defer tick.Stop()
		var pinged time.Time // when the ping for the current silence went out; zero when none did
		for {
			select {
			case <-sctx.Done():
				return
			case <-tick.C:
				heard := time.Unix(0, last.Load())
				if !pinged.IsZero() && heard.After(pinged) {
					pinged = time.Time{} // something arrived after the ping
				}
				switch {
				case time.Since(heard) <= w.idle:
				case pinged.IsZero():
					wctx, cancel := context.WithTimeout(sctx, 5*time.Second)
					_ = c.Write(wctx, websocket.MessageText, []byte("ping"))
					cancel()
					pinged = time.Now()
				case time.Since(pinged) > w.idle:
					w.log.Warn("okx: websocket silent after a ping, closing", "url", w.url, "quiet", time.Since(heard))
					c.CloseNow()
					return
				}
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
		if string(data) == "pong" {
			continue
		}
		var m wsMsg
		if err := json.Unmarshal(data, &m); err != nil {
			w.log.Warn("okx: undecodable websocket message", "url", w.url, "error", err, "message", truncate(data))
			continue
		}
		w.onMsg(ctx, &m)
	}
}

func (w *wsConn) login(ctx context.Context, c *websocket.Conn) error {
	ts, sign := LoginSign(w.creds.Secret, time.Now().Unix())
	b, _ := json.Marshal(map[string]any{"op": "login", "args": []map[string]string{{"apiKey": w.creds.APIKey,
		"passphrase": w.creds.Passphrase, "timestamp": ts, "sign": sign}}})
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.Write(lctx, websocket.MessageText, b); err != nil {
		return fmt.Errorf("login: %w", err)
	}
	for {
		_, data, err := c.Read(lctx)
		if err != nil {
			return fmt.Errorf("login: %w", err)
		}
		var m wsMsg
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		switch m.Event {
		case "login":
			if m.Code == "" || m.Code == "0" {
				return nil
			}
			return fmt.Errorf("%w: %w", errAuth, loginError(m.Code, m.Msg))
		case "error":
			return fmt.Errorf("%w: %w", errAuth, loginError(m.Code, m.Msg))
		}
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

// loginError is a refused login: always AUTH_FAILED, with OKX's code and message kept.
func loginError(code, msg string) error {
	if msg == "" {
		msg = "login refused"
	}
	return sdk.ExchangeError(exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED, code, msg)
}
