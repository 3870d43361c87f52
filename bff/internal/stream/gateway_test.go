package stream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/shopspring/decimal"
)

var fast = map[string]string{"tick_interval": "50ms"}

// localBook is the browser's side: it applies snapshot and update messages and checks sequence chaining.
type localBook struct {
	t          *testing.T
	bids, asks map[string]string
	seq        int64
	have       bool
	updates    int
	snapshots  int
	depth      int
}

func newLocalBook(t *testing.T, depth int) *localBook {
	return &localBook{t: t, bids: map[string]string{}, asks: map[string]string{}, depth: depth}
}

func (b *localBook) apply(m map[string]any) {
	b.t.Helper()
	seq, _ := m["seq"].(float64)
	switch m["type"] {
	case "snapshot":
		b.bids, b.asks, b.have, b.seq = map[string]string{}, map[string]string{}, true, int64(seq)
		b.snapshots++
	case "update":
		if !b.have {
			b.t.Fatalf("update before a snapshot: %v", m)
		}
		if prev := int64(m["prevSeq"].(float64)); prev != b.seq {
			b.t.Fatalf("update prevSeq %d after seq %d", prev, b.seq)
		}
		b.seq = int64(seq)
		b.updates++
	case "status":
		b.have = false
		return
	default:
		return
	}
	for side, levels := range map[string]map[string]string{"bids": b.bids, "asks": b.asks} {
		for _, l := range m[side].([]any) {
			pq := l.([]any)
			if pq[1].(string) == "0" {
				delete(levels, pq[0].(string))
			} else {
				levels[pq[0].(string)] = pq[1].(string)
			}
		}
	}
	if len(b.bids) > b.depth || len(b.asks) > b.depth {
		b.t.Fatalf("book has %d/%d levels, depth %d", len(b.bids), len(b.asks), b.depth)
	}
	best := func(levels map[string]string, bid bool) (decimal.Decimal, bool) {
		var out decimal.Decimal
		first := true
		for p := range levels {
			d := decimal.RequireFromString(p)
			if first || (bid && d.GreaterThan(out)) || (!bid && d.LessThan(out)) {
				out, first = d, false
			}
		}
		return out, !first
	}
	bb, ok1 := best(b.bids, true)
	ba, ok2 := best(b.asks, false)
	if ok1 && ok2 && !bb.LessThan(ba) {
		b.t.Fatalf("crossed book at seq %d: bid %s ask %s", b.seq, bb, ba)
	}
}

func TestStreamChannels(t *testing.T) {
	r := startReplica(t, nil, Config{}, fast)
	c := dial(t, r.srv)
	c.send(sub("book", "BTCUSDT", "depth", 10))
	c.send(sub("trades", "BTCUSDT"))
	c.send(sub("ticker", "BTCUSDT"))
	c.send(sub("candles", "BTCUSDT", "interval", "1m"))
	lb := newLocalBook(t, 10)
	seen := map[string]int{}
	acks := 0
	deadline := time.Now().Add(patience)
	for lb.updates < 10 || seen["trades"] == 0 || seen["ticker"] == 0 || seen["candle"] == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %v, %d book updates", patience, seen, lb.updates)
		}
		m := c.next()
		typ, _ := m["type"].(string)
		seen[typ]++
		if _, ok := m["seq"]; !ok && (typ == "snapshot" || typ == "update" || typ == "trades" || typ == "ticker" || typ == "candle") {
			t.Fatalf("message without seq: %v", m)
		}
		switch typ {
		case "subscribed":
			acks++
		case "snapshot", "update":
			if m["channel"] != "book" || m["symbol"] != "BTCUSDT" || m["depth"].(float64) != 10 {
				t.Fatalf("book message header: %v", m)
			}
			if typ == "snapshot" && acks == 0 {
				t.Fatal("snapshot before the subscribe ack")
			}
			lb.apply(m)
		case "trades":
			tr := m["trades"].([]any)
			if len(tr) == 0 {
				t.Fatalf("empty trades message: %v", m)
			}
			first := tr[0].(map[string]any)
			if _, err := decimal.NewFromString(first["price"].(string)); err != nil || (first["side"] != "buy" && first["side"] != "sell") {
				t.Fatalf("trade %v", first)
			}
		case "ticker":
			if m["ticker"].(map[string]any)["last"] == "" {
				t.Fatalf("ticker %v", m)
			}
		case "candle":
			if m["interval"] != "1m" || m["candle"].(map[string]any)["open"] == "" {
				t.Fatalf("candle %v", m)
			}
		case "error":
			t.Fatalf("error: %v", m)
		}
	}
	if acks != 4 || lb.snapshots != 1 {
		t.Fatalf("acks %d, snapshots %d", acks, lb.snapshots)
	}
	// The count is stored by the upstream's control loop after it started the topics: it may trail the data.
	waitFor(t, "four topics led", func() bool { return r.gw.Stats().Leading == 4 })
}

func TestOneUpstreamPerTopic(t *testing.T) {
	r := startReplica(t, nil, Config{}, fast)
	var clients []*client
	var books []*localBook
	views := [][]any{{"depth", 5}, {"depth", 20}, {"depth", 5, "grouping", "10"}, {"depth", 5}}
	for _, v := range views {
		c := dial(t, r.srv)
		c.send(sub("book", "ETHUSDT", v...))
		clients = append(clients, c)
		books = append(books, newLocalBook(t, v[1].(int)))
	}
	for i, c := range clients {
		for books[i].updates < 3 {
			m := c.next()
			if m["type"] == "error" {
				t.Fatalf("client %d: %v", i, m)
			}
			books[i].apply(m)
			if m["type"] == "snapshot" && views[i][len(views[i])-1] == "10" {
				for _, l := range m["bids"].([]any) {
					p := decimal.RequireFromString(l.([]any)[0].(string))
					if !p.Mod(decimal.NewFromInt(10)).IsZero() {
						t.Fatalf("grouped bid %s not a multiple of 10", p)
					}
				}
			}
		}
	}
	waitFor(t, "one upstream topic for 4 viewers of one book", func() bool { return r.gw.Stats().Leading == 1 })
	for i, c := range clients {
		u := sub("book", "ETHUSDT", views[i]...)
		u["op"] = "unsubscribe"
		c.send(u)
		c.until(func(m map[string]any) bool { return m["type"] == "unsubscribed" })
		if i < len(clients)-1 && r.gw.Stats().Leading != 1 {
			t.Fatal("upstream dropped while viewers remain")
		}
	}
	waitFor(t, "the upstream to be dropped", func() bool { return r.gw.Stats().Leading == 0 })
	// After the last unsubscribe no more book data arrives.
	clients[0].send(map[string]any{"op": "ping", "id": "p"})
	m := clients[0].until(func(m map[string]any) bool { return m["type"] == "pong" || m["type"] == "update" })
	if m["type"] != "pong" {
		// A message queued before the unsubscribe may still be in flight; anything after the pong is a bug.
		clients[0].until(func(m map[string]any) bool { return m["type"] == "pong" })
	}
	select {
	case m := <-clients[0].msgs:
		t.Fatalf("message after unsubscribe: %v", m)
	case <-time.After(300 * time.Millisecond):
	}
}

func TestBadOps(t *testing.T) {
	r := startReplica(t, nil, Config{MaxSubscriptions: 2, MaxMessageBytes: 512}, nil)
	c := dial(t, r.srv)
	cases := []struct {
		op     map[string]any
		status float64
		field  string
	}{
		{sub("book", "BTCUSDT", "exchange", "nosuch"), 422, "exchange"},
		{sub("book", "NOPEUSDT"), 422, "symbol"},
		{sub("news", "BTCUSDT"), 422, "channel"},
		{sub("orders", "BTCUSDT"), 422, "marketType"}, // a private channel names only an exchange
		{sub("book", "BTCUSDT", "marketType", "OPTION"), 422, "marketType"},
		{sub("book", "BTCUSDT", "depth", 5000), 422, "depth"},
		{sub("book", "BTCUSDT", "grouping", "-1"), 422, "grouping"},
		{sub("candles", "BTCUSDT"), 422, "interval"},
		{sub("candles", "BTCUSDT", "interval", "7m"), 422, "interval"},
		{sub("trades", "BTCUSDT", "depth", 5), 422, "depth"},
		{map[string]any{"op": "dance", "id": "x"}, 400, "op"},
	}
	for _, cs := range cases {
		c.send(cs.op)
		m := c.until(func(m map[string]any) bool { return m["type"] == "error" })
		p := m["error"].(map[string]any)
		if p["status"].(float64) != cs.status || p["field"] != cs.field || p["detail"] == "" || !strings.HasPrefix(p["type"].(string), "/api/problems/stream/") {
			t.Fatalf("op %v: error %v", cs.op, m)
		}
		if m["id"] != cs.op["id"] {
			t.Fatalf("error id %v for %v", m["id"], cs.op["id"])
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	_ = c.ws.Write(ctx, websocket.MessageText, []byte("{not json"))
	if m := c.until(func(m map[string]any) bool { return m["type"] == "error" }); m["error"].(map[string]any)["status"].(float64) != 400 {
		t.Fatalf("bad JSON: %v", m)
	}
	c.send(sub("ticker", "BTCUSDT"))
	c.until(func(m map[string]any) bool { return m["type"] == "subscribed" })
	c.send(sub("ticker", "BTCUSDT"))
	if m := c.until(func(m map[string]any) bool { return m["type"] == "error" }); m["error"].(map[string]any)["status"].(float64) != 409 {
		t.Fatalf("duplicate: %v", m)
	}
	c.send(sub("ticker", "ETHUSDT"))
	c.until(func(m map[string]any) bool { return m["type"] == "subscribed" })
	c.send(sub("ticker", "SOLUSDT"))
	if m := c.until(func(m map[string]any) bool { return m["type"] == "error" }); m["error"].(map[string]any)["status"].(float64) != 429 {
		t.Fatalf("over the limit: %v", m)
	}
	// A message over the size limit closes the connection with 1009.
	_ = c.ws.Write(ctx, websocket.MessageText, []byte(`{"op":"ping","id":"`+strings.Repeat("x", 600)+`"}`))
	for range c.msgs {
	}
	if err := <-c.done; websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Fatalf("close after a big message: %v", err)
	}
}

func TestShutdownClosesGoingAway(t *testing.T) {
	r := startReplica(t, nil, Config{}, nil)
	c := dial(t, r.srv)
	c.send(sub("ticker", "BTCUSDT"))
	c.until(func(m map[string]any) bool { return m["type"] == "subscribed" })
	go r.stop()
	for range c.msgs {
	}
	if err := <-c.done; websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Fatalf("close on shutdown: %v", err)
	}
}

// TestBookSurvivesPluginKill kills the plugin mid-stream: the client sees a status, then a fresh snapshot, and
// never a crossed book or an update that does not chain.
func TestBookSurvivesPluginKill(t *testing.T) {
	r := startReplica(t, nil, Config{}, fast)
	c := dial(t, r.srv)
	c.send(sub("book", "SOLUSDT", "depth", 20))
	lb := newLocalBook(t, 20)
	for lb.updates < 3 {
		lb.apply(c.next())
	}
	sup, _ := r.host.Get("reference")
	if err := syscall.Kill(sup.Status().Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	sawStatus := false
	for !(sawStatus && lb.have && lb.snapshots >= 2 && lb.updates >= 6) {
		m := c.next()
		if m["type"] == "status" {
			sawStatus = true
		}
		lb.apply(m)
	}
}

func TestConflation(t *testing.T) {
	g := New(Options{Config: Config{MaxCoalescedTrades: 5}})
	c := &conn{g: g, pending: map[string]*item{}, notify: make(chan struct{}, 1)}
	c.ctx, c.cancel = context.WithCancelCause(context.Background())
	defer c.cancel(nil)
	v := &view{sub: &Sub{Channel: "book", Exchange: "x", MarketType: "SPOT", Symbol: "S", Depth: 5}}
	snapCalls := 0
	for i := range 1000 {
		v.seq = int64(i)
		c.offerBook("b", newLazy(&bookMsg{header: headerOf("update", v.sub, int64(i))}), func() *lazy {
			snapCalls++
			return v.snapshot(0)
		})
	}
	for i := range 1000 {
		m := &tradesMsg{header: headerOf("trades", v.sub, int64(i)), Trades: []TradeJSON{{ID: itoa(int64(i))}}}
		c.offerTrades("t", newLazy(m), m)
	}
	for i := range 1000 {
		c.offer("k", newLazy(&pongMsg{Type: "pong", Time: int64(i)}), kindReplace)
	}
	items := c.take(nil)
	if len(items) != 3 {
		t.Fatalf("%d pending items after 3000 offers", len(items))
	}
	if b := string(items[0].bytes()); !strings.Contains(b, `"type":"snapshot"`) || !strings.Contains(b, `"seq":999`) {
		t.Fatalf("book after a backlog: %s", b)
	}
	if snapCalls != 999 {
		t.Fatalf("snapshot used %d times", snapCalls)
	}
	tb := string(items[1].bytes())
	if !strings.Contains(tb, `"dropped":995`) || !strings.Contains(tb, `"id":"999"`) || strings.Contains(tb, `"id":"994"`) || !strings.Contains(tb, `"seq":999`) {
		t.Fatalf("merged trades: %s", tb)
	}
	if b := string(items[2].bytes()); !strings.Contains(b, `"time":999`) {
		t.Fatalf("replaced state: %s", b)
	}
	for range g.cfg.MaxPendingControl + 1 {
		c.control(&pongMsg{Type: "pong"})
	}
	if !errors.Is(context.Cause(c.ctx), errTooManyPending) {
		t.Fatalf("unread replies did not end the connection: %v", context.Cause(c.ctx))
	}
}

// TestHeartbeatTimeout: a client that answers no ping is closed with 1008.
func TestHeartbeatTimeout(t *testing.T) {
	r := startReplica(t, nil, Config{PingInterval: 100 * time.Millisecond, PongTimeout: 200 * time.Millisecond}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(r.srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	// Not reading means pings go unanswered (the library answers them from Read): read only once the gateway has
	// given up on the client, or a slow machine's first read would answer a ping in time and keep it alive.
	waitFor(t, "the heartbeat to end the connection", func() bool { return r.gw.Stats().Closes["heartbeat"] == 1 })
	for {
		_, _, err := ws.Read(ctx)
		if err != nil {
			if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
				t.Fatalf("close: %v", err)
			}
			return
		}
	}
}

// TestConflationCounted: the hub counts what a slow client's queue conflated and the trades merging left out, and
// subscriptions by channel.
func TestConflationCounted(t *testing.T) {
	g := &Gateway{cfg: Config{MaxCoalescedTrades: 5}.withDefaults()}
	h := newHub(func(string) {}, func(string) {})
	c := &conn{g: g, pending: map[string]*item{}, notify: make(chan struct{}, 1)}
	s := &Sub{Channel: "trades", Exchange: "x", MarketType: "SPOT", Symbol: "S"}
	cs := &connSub{c: c, sub: s, key: s.key()}
	h.add(cs)
	if n := h.subscriptions()["trades"]; n != 1 {
		t.Fatalf("%d trades subscriptions", n)
	}
	for i := range 10 {
		p := fmt.Sprintf(`{"k":"trades","seq":%d,"trades":[{"id":"%da","price":"1","qty":"1","side":"buy","time":1},`+
			`{"id":"%db","price":"1","qty":"1","side":"sell","time":1}]}`, i+1, i, i)
		if !h.deliver(s.Topic(), []byte(p), false) {
			t.Fatal("a valid payload did not decode")
		}
	}
	// Nobody read: the first batch waits, the nine others merged into it; 20 trades, 5 kept.
	if d, cf, dr := h.delivered.Load(), h.conflated.Load(), h.tradesDropped.Load(); d != 10 || cf != 9 || dr != 15 {
		t.Fatalf("delivered %d, conflated %d, dropped %d; want 10, 9, 15", d, cf, dr)
	}
	if h.deliver(s.Topic(), []byte(`{"k":`), false) {
		t.Fatal("a broken payload reported as delivered")
	}
	h.remove(cs)
	h.remove(cs) // twice: counted once
	if n := h.subscriptions()["trades"]; n != 0 {
		t.Fatalf("%d trades subscriptions after remove", n)
	}
}
