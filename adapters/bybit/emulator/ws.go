package emulator

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
)

// wsConn is one public WebSocket connection of a category. Its reader, writer, idle watchdog and topic feeds are
// goroutines owned by the connection and stop with its context; the outbound queue is bounded and a connection
// that falls behind is closed, as Bybit drops slow clients.
type wsConn struct {
	s        *Server
	ws       *websocket.Conn
	category string
	id       string
	ctx      context.Context
	cancel   context.CancelFunc
	out      chan []byte
	heard    atomic.Int64 // unix nanoseconds of the last frame from the client
	wg       sync.WaitGroup
	mu       sync.Mutex
	subs     map[string]context.CancelFunc
}

const outQueue = 4096

// bookDepths are the orderbook topics served, with their push intervals (Bybit: 10 ms for level 1, 20 ms for 50,
// 100 ms for 200, 200 ms for 1000; the emulator pushes level 1 and 50 every 20 ms).
var bookDepths = map[string]time.Duration{"1": 20 * time.Millisecond, "50": 20 * time.Millisecond,
	"200": 100 * time.Millisecond, "1000": 200 * time.Millisecond}

func (s *Server) wsRoutes() {
	s.mux.HandleFunc("GET /v5/public/spot", s.serveWS("spot"))
	s.mux.HandleFunc("GET /v5/public/linear", s.serveWS("linear"))
	s.mux.HandleFunc("POST /emulator/drop-connections", func(w http.ResponseWriter, r *http.Request) {
		n := s.DropConnections()
		s.writeJSON(w, http.StatusOK, s.envelope(0, "OK", obj{"dropped": strconv.Itoa(n)}))
	})
}

func (s *Server) serveWS(category string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		ws.SetReadLimit(1 << 16)
		ctx, cancel := context.WithCancel(s.ctx)
		s.mu.Lock()
		s.nextID++
		id := fmt.Sprintf("%08x-%d", crc32.ChecksumIEEE([]byte(strconv.FormatUint(s.nextID, 10)+r.RemoteAddr)), s.nextID)
		c := &wsConn{s: s, ws: ws, category: category, id: id, ctx: ctx, cancel: cancel, out: make(chan []byte, outQueue),
			subs: map[string]context.CancelFunc{}}
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		c.heard.Store(time.Now().UnixNano())
		c.run()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}
}

// DropConnections closes every WebSocket connection abruptly (a test hook for reconnect logic) and returns how
// many there were. Also served as POST /emulator/drop-connections.
func (s *Server) DropConnections() int {
	s.mu.Lock()
	cs := make([]*wsConn, 0, len(s.conns))
	for c := range s.conns {
		cs = append(cs, c)
	}
	s.mu.Unlock()
	for _, c := range cs {
		c.cancel()
		_ = c.ws.CloseNow()
	}
	return len(cs)
}

func (c *wsConn) run() {
	c.wg.Add(2)
	go func() { // writer
		defer c.wg.Done()
		for {
			select {
			case <-c.ctx.Done():
				return
			case b := <-c.out:
				wctx, cancel := context.WithTimeout(c.ctx, 10*time.Second)
				err := c.ws.Write(wctx, websocket.MessageText, b)
				cancel()
				if err != nil {
					c.cancel()
					return
				}
			}
		}
	}()
	go func() { // idle watchdog: a client that sends nothing (no ping) for the idle timeout is dropped
		defer c.wg.Done()
		idle := c.s.cfg.IdleTimeout
		t := time.NewTicker(min(idle/4, time.Second))
		defer t.Stop()
		for {
			select {
			case <-c.ctx.Done():
				return
			case <-t.C:
				if time.Since(time.Unix(0, c.heard.Load())) > idle {
					_ = c.ws.Close(websocket.StatusNormalClosure, "idle")
					c.cancel()
					return
				}
			}
		}
	}()
	for {
		_, b, err := c.ws.Read(c.ctx)
		if err != nil {
			break
		}
		c.heard.Store(time.Now().UnixNano())
		c.handle(b)
	}
	c.cancel()
	_ = c.ws.CloseNow()
	c.wg.Wait()
}

// send queues a frame; a full queue closes the connection.
func (c *wsConn) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	select {
	case c.out <- b:
	case <-c.ctx.Done():
	default:
		c.s.log.Warn("bybit ws client too slow, closing", "conn", c.id)
		c.cancel()
	}
}

type wsRequest struct {
	ReqID string   `json:"req_id,omitempty"`
	Op    string   `json:"op"`
	Args  []string `json:"args"`
}

func (c *wsConn) answer(req wsRequest, ok bool, msg string) {
	o := obj{"success": ok, "ret_msg": msg, "conn_id": c.id, "op": req.Op}
	if req.ReqID != "" {
		o["req_id"] = req.ReqID
	}
	c.send(o)
}

func (c *wsConn) handle(b []byte) {
	var req wsRequest
	if err := json.Unmarshal(b, &req); err != nil {
		c.answer(wsRequest{Op: "unknown"}, false, "error:request not json")
		return
	}
	switch req.Op {
	case "ping":
		c.answer(req, true, "pong")
	case "subscribe", "unsubscribe":
		if len(req.Args) == 0 || (c.category == "spot" && len(req.Args) > 10) {
			c.answer(req, false, "error:args invalid")
			return
		}
		// The answer is queued before any feed starts, so it precedes the first snapshot, as at Bybit.
		var bad []string
		var start []func()
		for _, a := range req.Args {
			if req.Op == "unsubscribe" {
				if !c.unsubscribe(a) {
					bad = append(bad, a)
				}
				continue
			}
			if f := c.subscribe(a); f != nil {
				start = append(start, f)
			} else {
				bad = append(bad, a)
			}
		}
		if len(bad) > 0 {
			c.answer(req, false, "Invalid topic: "+strings.Join(bad, ","))
		} else {
			c.answer(req, true, "")
		}
		for _, f := range start {
			f()
		}
	default:
		c.answer(req, false, "error:op not supported")
	}
}

// feed is a running topic: it pushes frames through c until ctx ends.
type feed func(ctx context.Context)

// subscribe checks a topic and registers it; it returns the function that starts its feed (a no-op for a topic
// already subscribed), or nil for an unknown topic.
func (c *wsConn) subscribe(topic string) func() {
	parts := strings.Split(topic, ".")
	var f feed
	switch {
	case len(parts) == 3 && parts[0] == "orderbook":
		if i, ok := c.s.lookup(c.category, parts[2]); ok {
			if every, ok := bookDepths[parts[1]]; ok {
				depth, _ := strconv.Atoi(parts[1])
				f = c.bookFeed(topic, i, depth, every)
			}
		}
	case len(parts) == 2 && parts[0] == "publicTrade":
		if i, ok := c.s.lookup(c.category, parts[1]); ok {
			f = c.tradeFeed(topic, i)
		}
	case len(parts) == 2 && parts[0] == "tickers":
		if i, ok := c.s.lookup(c.category, parts[1]); ok {
			f = c.tickerFeed(topic, i)
		}
	case len(parts) == 3 && parts[0] == "kline":
		if i, ok := c.s.lookup(c.category, parts[2]); ok {
			if iv, ok := intervals[parts[1]]; ok {
				f = c.klineFeed(topic, i, parts[1], iv)
			}
		}
	}
	if f == nil {
		return nil
	}
	c.mu.Lock()
	if _, dup := c.subs[topic]; dup {
		c.mu.Unlock()
		return func() {}
	}
	ctx, cancel := context.WithCancel(c.ctx)
	c.subs[topic] = cancel
	c.mu.Unlock()
	return func() {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			f(ctx)
		}()
	}
}

func (c *wsConn) unsubscribe(topic string) bool {
	c.mu.Lock()
	cancel, ok := c.subs[topic]
	delete(c.subs, topic)
	c.mu.Unlock()
	if ok {
		cancel()
	}
	return ok
}

func (c *wsConn) tradeFeed(topic string, i *inst) feed {
	return func(ctx context.Context) {
		for ctx.Err() == nil {
			sub := c.s.v.Subscribe(ctx, venue.Filter{Kinds: []venue.EventKind{venue.EvTrade}, Instruments: []string{i.v.ID}}, 4096)
			for e := range sub.C {
				t := e.Trade
				row := obj{"T": t.Time, "s": i.symbol, "S": side(t.TakerSide), "v": dec(t.Qty), "p": dec(t.Price),
					"i": strconv.FormatUint(t.ID, 10), "BT": false, "RPI": false, "seq": int64(t.ID)}
				if i.linear {
					row["L"] = "ZeroPlusTick"
				}
				c.send(obj{"topic": topic, "type": "snapshot", "ts": c.s.v.Now(), "data": []obj{row}})
			}
		}
	}
}

// tickerFeed pushes the ticker every 100 ms when it changed: spot always as a snapshot; linear a snapshot first,
// then deltas carrying only the fields that changed (with cs, the cross sequence).
func (c *wsConn) tickerFeed(topic string, i *inst) feed {
	return func(ctx context.Context) {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		var prev obj
		for {
			o, err := c.s.tickerObj(i)
			if err == nil {
				delete(o, "fundingIntervalHour")
				delete(o, "fundingCap")
				if !i.linear {
					// Spot's tickers topic carries no best bid and ask.
					for _, k := range []string{"bid1Price", "bid1Size", "ask1Price", "ask1Size"} {
						delete(o, k)
					}
					if !sameObj(o, prev) {
						prev = o
						c.send(obj{"topic": topic, "type": "snapshot", "ts": c.s.v.Now(), "cs": c.s.v.Now(), "data": o})
					}
				} else if prev == nil {
					prev = o
					c.send(obj{"topic": topic, "type": "snapshot", "ts": c.s.v.Now(), "cs": c.s.v.Now(), "data": o})
				} else if d := diffObj(prev, o); len(d) > 1 {
					prev = o
					c.send(obj{"topic": topic, "type": "delta", "ts": c.s.v.Now(), "cs": c.s.v.Now(), "data": d})
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}
}

func sameObj(a, b obj) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if fmt.Sprint(b[k]) != fmt.Sprint(v) {
			return false
		}
	}
	return true
}

// diffObj is the fields of cur that differ from prev, plus the symbol.
func diffObj(prev, cur obj) obj {
	d := obj{"symbol": cur["symbol"]}
	for k, v := range cur {
		if fmt.Sprint(prev[k]) != fmt.Sprint(v) {
			d[k] = v
		}
	}
	return d
}

func klineObj(c venue.Candle, code string, now int64) obj {
	return obj{"start": c.Open, "end": c.CloseTime, "interval": code, "open": dec(c.O), "close": dec(c.C),
		"high": dec(c.H), "low": dec(c.L), "volume": dec(c.Volume), "turnover": dec(c.QuoteVolume),
		"confirm": c.Closed, "timestamp": now}
}

// klineFeed pushes the current bar every 250 ms when it changed, and the previous one confirmed once a new bar
// opens.
func (c *wsConn) klineFeed(topic string, i *inst, code, iv string) feed {
	return func(ctx context.Context) {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		var prevOpen int64
		var prevKey string
		for {
			cs, err := c.s.v.Candles(i.v.ID, iv, 0, 2)
			if err == nil && len(cs) > 0 {
				now := c.s.v.Now()
				cur := cs[len(cs)-1]
				if prevOpen != 0 && cur.Open != prevOpen && len(cs) > 1 && cs[0].Open == prevOpen {
					done := cs[0]
					done.Closed = true
					c.send(obj{"topic": topic, "type": "snapshot", "ts": now, "data": []obj{klineObj(done, code, now)}})
				}
				o := klineObj(cur, code, now)
				if k := fmt.Sprint(o["open"], o["high"], o["low"], o["close"], o["volume"], o["start"], o["confirm"]); k != prevKey {
					prevKey = k
					c.send(obj{"topic": topic, "type": "snapshot", "ts": now, "data": []obj{o}})
				}
				prevOpen = cur.Open
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}
}

// bookFeed serves orderbook.{depth}.{symbol}: a snapshot of the top depth levels, then every push interval a delta
// of the levels of that window that changed (size "0" removes one, a level entering the window is sent whole),
// with u growing by one per message and seq the venue's book sequence. A venue gap or a slow subscription starts
// over with a new snapshot whose u is 1, as Bybit's after a restart of its service.
func (c *wsConn) bookFeed(topic string, i *inst, depth int, every time.Duration) feed {
	return func(ctx context.Context) {
		var u int64
		for ctx.Err() == nil {
			c.runBook(ctx, topic, i, depth, every, &u)
		}
	}
}

type sideBook map[string]venue.Level // by price string

func (b sideBook) top(n int, bid bool) []venue.Level {
	out := make([]venue.Level, 0, len(b))
	for _, l := range b {
		out = append(out, l)
	}
	sort.Slice(out, func(x, y int) bool {
		if bid {
			return out[x].Price.GreaterThan(out[y].Price)
		}
		return out[x].Price.LessThan(out[y].Price)
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

func windowOf(ls []venue.Level) map[string]decimal.Decimal {
	m := make(map[string]decimal.Decimal, len(ls))
	for _, l := range ls {
		m[dec(l.Price)] = l.Qty
	}
	return m
}

// changes lists the levels of the new window that differ from the old one, and "0" for prices that left it,
// best first.
func changes(old, cur map[string]decimal.Decimal, bid bool) [][]string {
	type row struct {
		p  decimal.Decimal
		ps string
		q  string
	}
	var rows []row
	for p, q := range cur {
		if o, ok := old[p]; !ok || !o.Equal(q) {
			rows = append(rows, row{decimal.RequireFromString(p), p, dec(q)})
		}
	}
	for p := range old {
		if _, ok := cur[p]; !ok {
			rows = append(rows, row{decimal.RequireFromString(p), p, "0"})
		}
	}
	sort.Slice(rows, func(a, b int) bool {
		if bid {
			return rows[a].p.GreaterThan(rows[b].p)
		}
		return rows[a].p.LessThan(rows[b].p)
	})
	out := make([][]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, []string{r.ps, r.q})
	}
	return out
}

func (c *wsConn) runBook(ctx context.Context, topic string, i *inst, depth int, every time.Duration, u *int64) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sub := c.s.v.Subscribe(sctx, venue.Filter{Kinds: []venue.EventKind{venue.EvBook}, Instruments: []string{i.v.ID}}, 8192)
	snap, err := c.s.v.BookSnapshot(i.v.ID, 0)
	if err != nil {
		return
	}
	bids, asks := sideBook{}, sideBook{}
	set := func(m sideBook, l venue.Level) {
		if l.Qty.IsZero() {
			delete(m, dec(l.Price))
		} else {
			m[dec(l.Price)] = l
		}
	}
	for _, l := range snap.Bids {
		set(bids, l)
	}
	for _, l := range snap.Asks {
		set(asks, l)
	}
	seq := int64(snap.Seq)
	var sentB, sentA map[string]decimal.Decimal
	*u = 0 // a fresh snapshot restarts the update ids: u = 1 also tells a client to reset
	push := func(snapshot bool) {
		tb, ta := windowOf(bids.top(depth, true)), windowOf(asks.top(depth, false))
		var b, a [][]string
		typ := "snapshot"
		if snapshot {
			b, a = changes(nil, tb, true), changes(nil, ta, false)
		} else {
			b, a = changes(sentB, tb, true), changes(sentA, ta, false)
			if len(b) == 0 && len(a) == 0 {
				return
			}
			typ = "delta"
		}
		sentB, sentA = tb, ta
		*u++
		now := c.s.v.Now()
		c.send(obj{"topic": topic, "type": typ, "ts": now, "data": obj{"s": i.symbol, "b": b, "a": a, "u": *u, "seq": seq},
			"cts": now})
	}
	push(true)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			push(false)
		case e, ok := <-sub.C:
			if !ok {
				return // slow: start over with a snapshot
			}
			d := e.Book
			if int64(d.Seq) <= int64(snap.Seq) {
				continue
			}
			if int64(d.PrevSeq) != seq {
				return // gap: start over with a snapshot
			}
			for _, l := range d.Bids {
				set(bids, l)
			}
			for _, l := range d.Asks {
				set(asks, l)
			}
			seq = int64(d.Seq)
		}
	}
}
