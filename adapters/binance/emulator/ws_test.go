package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/shopspring/decimal"
)

// wsClient reads frames in the background so tests can wait for them with a timeout.
type wsClient struct {
	t    testing.TB
	c    *websocket.Conn
	msgs chan []byte
	done chan struct{}
	err  error
}

func (e *env) dial(path string) *wsClient {
	e.t.Helper()
	u := "ws" + strings.TrimPrefix(e.ts.URL, "http") + path
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, res, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		status := 0
		if res != nil {
			status = res.StatusCode
		}
		e.t.Fatalf("dial %s: %v (HTTP %d)", path, err, status)
	}
	c.SetReadLimit(1 << 22)
	w := &wsClient{t: e.t, c: c, msgs: make(chan []byte, 100000), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			_, b, err := c.Read(context.Background())
			if err != nil {
				w.err = err
				return
			}
			w.msgs <- b
		}
	}()
	e.t.Cleanup(func() {
		_ = c.CloseNow()
		<-w.done
	})
	return w
}

// next waits for the next frame.
func (w *wsClient) next(timeout time.Duration) []byte {
	w.t.Helper()
	select {
	case b := <-w.msgs:
		return b
	case <-w.done:
		select {
		case b := <-w.msgs:
			return b
		default:
		}
		w.t.Fatalf("connection ended: %v", w.err)
	case <-time.After(timeout):
		w.t.Fatalf("no frame within %v", timeout)
	}
	return nil
}

// poll returns the next frame if one comes within d.
func (w *wsClient) poll(d time.Duration) ([]byte, bool) {
	select {
	case b := <-w.msgs:
		return b, true
	case <-time.After(d):
		return nil, false
	}
}

// until waits for a frame that satisfies ok.
func (w *wsClient) until(timeout time.Duration, ok func([]byte) bool) []byte {
	w.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			w.t.Fatalf("no matching frame within %v", timeout)
		}
		if b := w.next(left); ok(b) {
			return b
		}
	}
}

// ended waits for the connection to end and returns the read error.
func (w *wsClient) ended(timeout time.Duration) error {
	w.t.Helper()
	select {
	case <-w.done:
		return w.err
	case <-time.After(timeout):
		w.t.Fatalf("connection still open after %v", timeout)
	}
	return nil
}

func (w *wsClient) send(v any) {
	w.t.Helper()
	b, _ := json.Marshal(v)
	if err := w.c.Write(context.Background(), websocket.MessageText, b); err != nil {
		w.t.Fatal(err)
	}
}

func hasEvent(kind string) func([]byte) bool {
	return func(b []byte) bool { return strings.Contains(string(b), `"e":"`+kind+`"`) }
}

func unwrap(t *testing.T, b []byte) (string, []byte) {
	t.Helper()
	checkShape(t, "ws_combined", b)
	var m struct {
		Stream string          `json:"stream"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m.Stream, m.Data
}

func TestStreamShapes(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		futures bool
		stream  string
		shape   string
	}{
		{false, "btcusdt@trade", "ws_spot_trade"},
		{false, "btcusdt@aggTrade", "ws_spot_aggTrade"},
		{false, "btcusdt@kline_1m", "ws_kline"},
		{false, "btcusdt@depth@100ms", "ws_spot_depthUpdate"},
		{false, "btcusdt@depth", "ws_spot_depthUpdate"},
		{false, "btcusdt@depth5@100ms", "ws_spot_partialDepth"},
		{false, "btcusdt@ticker", "ws_spot_24hrTicker"},
		{false, "btcusdt@bookTicker", "ws_spot_bookTicker"},
		{true, "btcusdt@trade", "ws_futures_trade"},
		{true, "btcusdt@aggTrade", "ws_futures_aggTrade"},
		{true, "btcusdt@kline_1h", "ws_kline"},
		{true, "btcusdt@depth@100ms", "ws_futures_depthUpdate"},
		{true, "btcusdt@depth", "ws_futures_depthUpdate"},
		{true, "btcusdt@depth10@100ms", "ws_futures_depthUpdate"},
		{true, "btcusdt@markPrice@1s", "ws_futures_markPriceUpdate"},
		{true, "btcusdt@ticker", "ws_futures_24hrTicker"},
		{true, "btcusdt@bookTicker", "ws_futures_bookTicker"},
	}
	var raw, comb []*wsClient
	for _, c := range cases {
		pre := ""
		if c.futures {
			pre = "/fws"
		}
		raw = append(raw, e.dial(pre+"/ws/"+c.stream))
		comb = append(comb, e.dial(pre+"/stream?streams="+c.stream))
	}
	// Move the market while the clients listen.
	stop := make(chan struct{})
	moved := make(chan struct{})
	go func() {
		defer close(moved)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				e.advance(time.Second)
			}
		}
	}()
	defer func() { close(stop); <-moved }()
	for i, c := range cases {
		b := raw[i].next(20 * time.Second)
		checkShape(t, c.shape, b)
		name, data := unwrap(t, comb[i].next(5*time.Second))
		if name != c.stream {
			t.Fatalf("combined stream name %q, want %q", name, c.stream)
		}
		checkShape(t, c.shape, data)
	}
}

func TestStreamSubscribeMethods(t *testing.T) {
	e := newEnv(t)
	c := e.dial("/stream")
	c.send(map[string]any{"method": "SUBSCRIBE", "params": []string{"ethusdt@trade", "ethusdt@bookTicker"}, "id": 1})
	r := c.until(20*time.Second, func(b []byte) bool { return strings.Contains(string(b), `"id":1`) })
	checkShape(t, "ws_result", r)
	c.send(map[string]any{"method": "LIST_SUBSCRIPTIONS", "id": 2})
	r = c.until(20*time.Second, func(b []byte) bool { return strings.Contains(string(b), `"id":2`) })
	if string(r) != `{"id":2,"result":["ethusdt@bookTicker","ethusdt@trade"]}` {
		t.Fatalf("list: %s", r)
	}
	e.advance(3 * time.Second)
	c.until(20*time.Second, func(b []byte) bool { return strings.Contains(string(b), `"stream":"ethusdt@trade"`) })
	c.send(map[string]any{"method": "UNSUBSCRIBE", "params": []string{"ethusdt@trade"}, "id": 3})
	c.until(20*time.Second, func(b []byte) bool { return strings.Contains(string(b), `"id":3`) })
	c.send(map[string]any{"method": "SUBSCRIBE", "params": []string{"nosuch@trade"}, "id": 4})
	r = c.until(20*time.Second, func(b []byte) bool { return strings.Contains(string(b), `"id":4`) })
	if !strings.Contains(string(r), `"error":{"code":2`) {
		t.Fatalf("bad stream: %s", r)
	}
	c.send(map[string]any{"method": "LIST_SUBSCRIPTIONS", "id": 5})
	r = c.until(20*time.Second, func(b []byte) bool { return strings.Contains(string(b), `"id":5`) })
	if string(r) != `{"id":5,"result":["ethusdt@bookTicker"]}` {
		t.Fatalf("list after unsubscribe: %s", r)
	}
	// Bad stream names in the URL are refused before the upgrade.
	res, err := http.Get(e.ts.URL + "/ws/btcusdt@nonsense")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest {
		t.Fatalf("bad stream upgrade: %d", res.StatusCode)
	}
}

// localBook follows Binance's documented procedure to keep a local order book from diff events.
type localBook struct {
	futures    bool
	synced     bool
	lastU      uint64
	bids, asks map[string]decimal.Decimal
}

type diffEvent struct {
	U  uint64      `json:"U"`
	UL uint64      `json:"u"`
	PU uint64      `json:"pu"`
	B  [][2]string `json:"b"`
	A  [][2]string `json:"a"`
}

type depthSnap struct {
	LastUpdateID uint64      `json:"lastUpdateId"`
	Bids         [][2]string `json:"bids"`
	Asks         [][2]string `json:"asks"`
}

func (lb *localBook) load(s depthSnap) {
	lb.bids, lb.asks = map[string]decimal.Decimal{}, map[string]decimal.Decimal{}
	for _, l := range s.Bids {
		lb.bids[l[0]] = decimal.RequireFromString(l[1])
	}
	for _, l := range s.Asks {
		lb.asks[l[0]] = decimal.RequireFromString(l[1])
	}
	lb.lastU = s.LastUpdateID
	lb.synced = false
}

// apply returns an error on a gap (the caller must resync).
func (lb *localBook) apply(ev diffEvent) error {
	if !lb.synced {
		if ev.UL < lb.lastU || (!lb.futures && ev.UL == lb.lastU) {
			return nil // older than the snapshot
		}
		if lb.futures {
			if !(ev.U <= lb.lastU && ev.UL >= lb.lastU) {
				return errors.New("first event does not straddle the snapshot")
			}
		} else if !(ev.U <= lb.lastU+1 && ev.UL >= lb.lastU+1) {
			return errors.New("first event does not follow the snapshot")
		}
		lb.synced = true
	} else if lb.futures && ev.PU != lb.lastU || !lb.futures && ev.U != lb.lastU+1 {
		return errors.New("gap")
	}
	for _, l := range ev.B {
		setLevel(lb.bids, l)
	}
	for _, l := range ev.A {
		setLevel(lb.asks, l)
	}
	lb.lastU = ev.UL
	return nil
}

func setLevel(m map[string]decimal.Decimal, l [2]string) {
	q := decimal.RequireFromString(l[1])
	if q.IsZero() {
		delete(m, l[0])
	} else {
		m[l[0]] = q
	}
}

func sameBook(lb *localBook, s depthSnap) bool {
	other := &localBook{}
	other.load(s)
	eq := func(a, b map[string]decimal.Decimal) bool {
		if len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if w, ok := b[k]; !ok || !w.Equal(v) {
				return false
			}
		}
		return true
	}
	return eq(lb.bids, other.bids) && eq(lb.asks, other.asks)
}

func TestDepthSync(t *testing.T) {
	for _, futures := range []bool{false, true} {
		name := "spot"
		pre, rest := "", "/api/v3/depth"
		if futures {
			name, pre, rest = "futures", "/fws", "/fapi/v1/depth"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			c := e.dial(pre + "/ws/solusdt@depth@100ms")
			// Let a few batches flow before taking the snapshot, as a client that buffers would.
			for range 5 {
				e.advance(time.Second)
				time.Sleep(30 * time.Millisecond)
			}
			var snap depthSnap
			e.get(rest, url.Values{"symbol": {"SOLUSDT"}, "limit": {"1000"}}).expectOK(t).decode(t, &snap)
			lb := &localBook{futures: futures}
			lb.load(snap)
			applied := 0
			for round := range 15 {
				e.advance(time.Second)
				// Wait for the batch that holds this step, then drain what arrived.
				deadline := time.Now().Add(30 * time.Second)
				for {
					var cur depthSnap
					e.get(rest, url.Values{"symbol": {"SOLUSDT"}, "limit": {"1000"}}).expectOK(t).decode(t, &cur)
					want := cur.LastUpdateID
					if futures {
						want-- // snapshot 2S+1 matches the event ending at u=2S
					}
					if lb.synced && lb.lastU == want {
						if !sameBook(lb, cur) {
							t.Fatalf("round %d: local book differs from the snapshot at %d", round, cur.LastUpdateID)
						}
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("round %d: never caught up with snapshot %d (local %d)", round, cur.LastUpdateID, lb.lastU)
					}
					b := c.next(20 * time.Second)
					var ev diffEvent
					if err := json.Unmarshal(b, &ev); err != nil {
						t.Fatal(err)
					}
					if err := lb.apply(ev); err != nil {
						t.Fatalf("round %d: %v (event U=%d u=%d pu=%d, local %d)", round, err, ev.U, ev.UL, ev.PU, lb.lastU)
					}
					if lb.synced {
						applied++
					}
				}
			}
			if applied < 15 {
				t.Fatalf("only %d events applied", applied)
			}
		})
	}
}

func TestStreamDropAndLifetime(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.WSLifetime = 400 * time.Millisecond
		c.PingInterval = 50 * time.Millisecond
	})
	a := e.dial("/ws/btcusdt@trade")
	b := e.dial("/fws/stream?streams=btcusdt@markPrice@1s")
	waitWhile(t, func() bool { return e.s.Connections() != 2 })
	// Pings are answered by the client's reader, so the connection outlives several ping intervals...
	b.next(20 * time.Second)
	// ...until its lifetime ends with a close frame.
	err := a.ended(3 * time.Second)
	if websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Fatalf("lifetime close: %v", err)
	}
	e.s.SetWSLifetime(time.Hour)
	c := e.dial("/fws/ws/btcusdt@markPrice@1s")
	c.next(20 * time.Second)
	if n := e.s.DropConnections(); n < 1 {
		t.Fatalf("dropped %d", n)
	}
	err = c.ended(3 * time.Second)
	if websocket.CloseStatus(err) != -1 {
		t.Fatalf("a dropped connection should end without a close frame: %v", err)
	}
	waitWhile(t, func() bool { return e.s.Connections() != 0 })
	if n := e.s.Connections(); n != 0 {
		t.Fatalf("%d connections left", n)
	}
}

func TestKlineStreamClosesBars(t *testing.T) {
	e := newEnv(t)
	c := e.dial("/fws/market/ws/ethusdt@kline_1m")
	type kev struct {
		K struct {
			T0    int64  `json:"t"`
			T1    int64  `json:"T"`
			I     string `json:"i"`
			X     bool   `json:"x"`
			Close string `json:"c"`
		} `json:"k"`
	}
	var first kev
	b := c.next(20 * time.Second)
	checkShape(t, "ws_kline", b)
	if err := json.Unmarshal(b, &first); err != nil {
		t.Fatal(err)
	}
	if first.K.X || first.K.I != "1m" || first.K.T1 != first.K.T0+59999 {
		t.Fatalf("forming bar: %s", b)
	}
	e.advance(40 * time.Second) // crosses into the next minute
	var closed, next kev
	b = c.until(20*time.Second, func(b []byte) bool { return strings.Contains(string(b), `"x":true`) })
	if err := json.Unmarshal(b, &closed); err != nil {
		t.Fatal(err)
	}
	if closed.K.T0 != first.K.T0 {
		t.Fatalf("closed bar %d, want %d", closed.K.T0, first.K.T0)
	}
	// The REST bar agrees with the closed one.
	ks := e.klines("/fapi/v1/klines", url.Values{"symbol": {"ETHUSDT"}, "interval": {"1m"}, "limit": {"2"}})
	if len(ks) != 2 || ks[0].open != closed.K.T0 || ks[0].c.String() != decimal.RequireFromString(closed.K.Close).String() {
		t.Fatalf("REST %+v vs closed %+v", ks, closed.K)
	}
	b = c.next(20 * time.Second)
	if err := json.Unmarshal(b, &next); err != nil {
		t.Fatal(err)
	}
	if next.K.X || next.K.T0 != first.K.T0+60000 {
		t.Fatalf("bar after the closed one: %s", b)
	}
}

func TestStreamClientLimits(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.PingInterval = 50 * time.Millisecond })
	// More than five requests in a second on spot ends the connection.
	c := e.dial("/ws")
	for i := range 7 {
		// The server may close before the last writes: their errors are expected.
		b, _ := json.Marshal(map[string]any{"method": "LIST_SUBSCRIPTIONS", "id": i})
		_ = c.c.Write(context.Background(), websocket.MessageText, b)
	}
	if err := c.ended(3 * time.Second); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Fatalf("flooding client: %v", err)
	}
	// Futures allows ten.
	f := e.dial("/fws/ws")
	for i := range 10 {
		f.send(map[string]any{"method": "LIST_SUBSCRIPTIONS", "id": i})
	}
	for range 10 {
		f.next(20 * time.Second)
	}
	// A client that never reads does not answer pings and is dropped.
	u := "ws" + strings.TrimPrefix(e.ts.URL, "http") + "/ws/btcusdt@trade"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	mute, _, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer mute.CloseNow()
	waitWhile(t, func() bool { return e.s.Connections() != 1 })
	if n := e.s.Connections(); n != 1 {
		t.Fatalf("%d connections, want only the futures one", n)
	}
}

func TestDepthGapAndResync(t *testing.T) {
	for _, futures := range []bool{false, true} {
		pre, rest := "", "/api/v3/depth"
		if futures {
			pre, rest = "/fws/public", "/fapi/v1/depth"
		}
		e := newEnv(t)
		c := e.dial(pre + "/ws/ethusdt@depth@100ms")
		snapshot := func() depthSnap {
			var s depthSnap
			e.get(rest, url.Values{"symbol": {"ETHUSDT"}, "limit": {"1000"}}).expectOK(t).decode(t, &s)
			return s
		}
		lb := &localBook{futures: futures}
		lb.load(snapshot())
		// applyNext moves the market until the next depth event arrives and applies it.
		applyNext := func() error {
			for range 50 {
				e.advance(time.Second)
				if b, ok := c.poll(300 * time.Millisecond); ok {
					var ev diffEvent
					if err := json.Unmarshal(b, &ev); err != nil {
						t.Fatal(err)
					}
					return lb.apply(ev)
				}
			}
			t.Fatal("no depth event while the market moves")
			return nil
		}
		for range 3 {
			if err := applyNext(); err != nil {
				t.Fatalf("futures=%v before the drop: %v", futures, err)
			}
		}
		e.s.DropDepthUpdates(futures, 1)
		var gapErr error
		for range 5 {
			if gapErr = applyNext(); gapErr != nil {
				break
			}
		}
		if gapErr == nil {
			t.Fatalf("futures=%v: the dropped update went unnoticed", futures)
		}
		// Resync: a fresh snapshot, then the events after it apply again and match the book.
		lb.load(snapshot())
		for deadline := time.Now().Add(30 * time.Second); ; {
			if err := applyNext(); err != nil {
				t.Fatalf("futures=%v after resync: %v", futures, err)
			}
			// Let the batch that holds the last step arrive, then compare with a snapshot at the same id.
			time.Sleep(150 * time.Millisecond)
			for {
				b, ok := c.poll(0)
				if !ok {
					break
				}
				var ev diffEvent
				if err := json.Unmarshal(b, &ev); err != nil {
					t.Fatal(err)
				}
				if err := lb.apply(ev); err != nil {
					t.Fatalf("futures=%v after resync: %v", futures, err)
				}
			}
			cur := snapshot()
			want := cur.LastUpdateID
			if futures {
				want--
			}
			if lb.synced && lb.lastU == want {
				if !sameBook(lb, cur) {
					t.Fatalf("futures=%v: resynced book differs", futures)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("futures=%v: no resync", futures)
			}
		}
	}
}
