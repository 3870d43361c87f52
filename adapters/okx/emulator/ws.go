package emulator

import (
	"context"
	"crypto/hmac"
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

type endpoint uint8

const (
	epPublic endpoint = iota + 1
	epBusiness
	epPrivate
)

// wsConn is one WebSocket connection. Its reader, writer, idle watchdog and subscription feeds are goroutines
// owned by the connection and stop with its context; the outbound queue is bounded and a connection that falls
// behind is closed, as OKX drops slow clients.
type wsConn struct {
	s       *Server
	ws      *websocket.Conn
	ep      endpoint
	id      string
	ctx     context.Context
	cancel  context.CancelFunc
	out     chan []byte
	last    atomic.Int64 // unix nanoseconds of the last frame either way
	wg      sync.WaitGroup
	mu      sync.Mutex
	account string
	subs    map[string]context.CancelFunc
}

const outQueue = 4096

func (s *Server) wsRoutes() {
	s.mux.HandleFunc("GET /ws/v5/public", s.serveWS(epPublic))
	s.mux.HandleFunc("GET /ws/v5/business", s.serveWS(epBusiness))
	s.mux.HandleFunc("GET /ws/v5/private", s.serveWS(epPrivate))
	s.mux.HandleFunc("POST /emulator/drop-connections", func(w http.ResponseWriter, r *http.Request) {
		n := s.DropConnections()
		writeJSON(w, http.StatusOK, envelope{Code: "0", Data: []obj{{"dropped": strconv.Itoa(n)}}})
	})
}

func (s *Server) serveWS(ep endpoint) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		ws.SetReadLimit(1 << 16)
		ctx, cancel := context.WithCancel(s.ctx)
		s.mu.Lock()
		s.nextID++
		id := fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(strconv.FormatUint(s.nextID, 10)+r.RemoteAddr)))
		c := &wsConn{s: s, ws: ws, ep: ep, id: id, ctx: ctx, cancel: cancel, out: make(chan []byte, outQueue),
			subs: map[string]context.CancelFunc{}}
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		c.touch()
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

func (c *wsConn) touch() { c.last.Store(time.Now().UnixNano()) }

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
				c.touch()
			}
		}
	}()
	go func() { // idle watchdog: OKX closes a connection with no traffic for 30 seconds
		defer c.wg.Done()
		idle := c.s.cfg.IdleTimeout
		t := time.NewTicker(min(idle/4, time.Second))
		defer t.Stop()
		for {
			select {
			case <-c.ctx.Done():
				return
			case <-t.C:
				if time.Since(time.Unix(0, c.last.Load())) > idle {
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
		c.touch()
		c.handle(b)
	}
	c.cancel()
	_ = c.ws.CloseNow()
	c.wg.Wait()
}

// send queues a frame; a full queue closes the connection.
func (c *wsConn) send(v any) {
	var b []byte
	switch x := v.(type) {
	case []byte:
		b = x
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			return
		}
	}
	select {
	case c.out <- b:
	case <-c.ctx.Done():
	default:
		c.s.log.Warn("okx ws client too slow, closing", "conn", c.id)
		c.cancel()
	}
}

func (c *wsConn) sendError(code, msg string) {
	c.send(obj{"event": "error", "code": code, "msg": msg, "connId": c.id})
}

type wsRequest struct {
	ID   string              `json:"id,omitempty"`
	Op   string              `json:"op"`
	Args []map[string]string `json:"args"`
}

func (c *wsConn) handle(b []byte) {
	if string(b) == "ping" {
		c.send([]byte("pong"))
		return
	}
	var req wsRequest
	if err := json.Unmarshal(b, &req); err != nil {
		c.sendError("60012", "Invalid request: "+string(b))
		return
	}
	switch req.Op {
	case "login":
		c.login(req)
	case "subscribe", "unsubscribe":
		if len(req.Args) == 0 {
			c.sendError("60012", "Invalid request: "+string(b))
			return
		}
		for _, a := range req.Args {
			if req.Op == "subscribe" {
				c.subscribe(a)
			} else {
				c.unsubscribe(a)
			}
		}
	default:
		c.sendError("60012", "Invalid request: "+string(b))
	}
}

// WSLoginSign computes the private WebSocket login signature: Base64(HMAC-SHA256(secret, timestamp + "GET" +
// "/users/self/verify")), timestamp in Unix seconds.
func WSLoginSign(secret, timestamp string) string {
	return Sign(secret, timestamp, "GET", "/users/self/verify", "")
}

func (c *wsConn) login(req wsRequest) {
	if c.ep != epPrivate || len(req.Args) != 1 {
		c.sendError("60012", "Invalid request: login")
		return
	}
	a := req.Args[0]
	cred, ok := c.s.credential(a["apiKey"])
	if !ok {
		c.sendError("60005", "Invalid apiKey")
		return
	}
	if a["passphrase"] != cred.Passphrase {
		c.sendError("60024", "Wrong passphrase")
		return
	}
	ts, err := strconv.ParseFloat(a["timestamp"], 64)
	if err != nil || time.Duration(float64(c.s.v.Now())/1000-ts)*time.Second > c.s.cfg.TimestampWindow ||
		time.Duration(ts-float64(c.s.v.Now())/1000)*time.Second > c.s.cfg.TimestampWindow {
		c.sendError("60004", "Invalid timestamp")
		return
	}
	if !hmac.Equal([]byte(WSLoginSign(cred.Secret, a["timestamp"])), []byte(a["sign"])) {
		c.sendError("60007", "Invalid sign")
		return
	}
	c.mu.Lock()
	c.account = cred.Account
	c.mu.Unlock()
	c.send(obj{"event": "login", "code": "0", "msg": "", "connId": c.id})
}

func argKey(a map[string]string) string {
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + a[k] + ";")
	}
	return b.String()
}

func (c *wsConn) badChannel(a map[string]string) {
	c.sendError("60018", fmt.Sprintf("Wrong URL or channel:%s,instId:%s doesn't exist. Please use the correct URL, "+
		"channel and parameters referring to API document.", a["channel"], a["instId"]))
}

// feed is a running subscription: it pushes frames through c until ctx ends. It calls ready once it receives the
// venue's events (and before it pushes anything): ready sends the subscribe acknowledgement, so an event that
// happens after a client saw the ack reaches it. Calling ready again does nothing.
type feed func(ctx context.Context, ready func())

func (c *wsConn) subscribe(a map[string]string) {
	ch := a["channel"]
	var f feed
	switch c.ep {
	case epPublic:
		i, ok := c.s.lookup(a["instId"])
		if !ok {
			c.badChannel(a)
			return
		}
		switch ch {
		case "tickers":
			f = c.tickerFeed(a, i)
		case "books", "books5", "bbo-tbt":
			f = c.bookFeed(a, i, ch)
		case "trades":
			f = c.tradeFeed(a, i)
		case "mark-price", "funding-rate":
			if ch == "funding-rate" && !i.swap {
				c.badChannel(a)
				return
			}
			f = c.markFeed(a, i, ch)
		}
	case epBusiness:
		i, ok := c.s.lookup(a["instId"])
		code, isCandle := strings.CutPrefix(ch, "candle")
		if _, known := barSpecs[code]; ok && isCandle && known {
			f = c.candleFeed(a, i, code)
		}
	case epPrivate:
		c.mu.Lock()
		acct := c.account
		c.mu.Unlock()
		if acct == "" {
			c.sendError("60011", "Please log in")
			return
		}
		switch ch {
		case "orders":
			f = c.orderFeed(a, acct)
		case "positions":
			f = c.positionFeed(a, acct)
		case "account":
			f = c.accountFeed(a, acct)
		case "orders-algo":
			if t := strings.ToUpper(a["instType"]); t == "" {
				c.sendError("60012", "Invalid request: instType is required")
				return
			}
			f = c.algoFeed(a, acct)
		}
	}
	if f == nil {
		c.badChannel(a)
		return
	}
	key := argKey(a)
	c.mu.Lock()
	if _, dup := c.subs[key]; dup {
		c.mu.Unlock()
		c.send(obj{"event": "subscribe", "arg": a, "connId": c.id})
		return
	}
	ctx, cancel := context.WithCancel(c.ctx)
	c.subs[key] = cancel
	c.mu.Unlock()
	// The ack goes out from the feed once it has subscribed to the venue, ahead of its first push; the reader
	// waits for it so replies keep the order of the requests.
	acked := make(chan struct{})
	var once sync.Once
	ready := func() {
		once.Do(func() {
			c.send(obj{"event": "subscribe", "arg": a, "connId": c.id})
			close(acked)
		})
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer ready() // a feed that ended early (the connection closed) still releases the reader
		f(ctx, ready)
	}()
	<-acked
}

func (c *wsConn) unsubscribe(a map[string]string) {
	key := argKey(a)
	c.mu.Lock()
	cancel, ok := c.subs[key]
	delete(c.subs, key)
	c.mu.Unlock()
	if !ok {
		c.badChannel(a)
		return
	}
	cancel()
	c.send(obj{"event": "unsubscribe", "arg": a, "connId": c.id})
}

func push(arg map[string]string, data any) obj { return obj{"arg": arg, "data": data} }

func (c *wsConn) tickerFeed(a map[string]string, i *inst) feed {
	return func(ctx context.Context, ready func()) {
		ready() // polls the venue: nothing to subscribe to
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		var prev string
		for {
			o, err := c.s.tickerObj(i)
			if err == nil {
				k := fmt.Sprint(o["last"], o["bidPx"], o["bidSz"], o["askPx"], o["askSz"], o["vol24h"])
				if k != prev {
					prev = k
					c.send(push(a, []obj{o}))
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

func (c *wsConn) tradeFeed(a map[string]string, i *inst) feed {
	return func(ctx context.Context, ready func()) {
		for ctx.Err() == nil {
			sub := c.s.v.Subscribe(ctx, venue.Filter{Kinds: []venue.EventKind{venue.EvTrade},
				Instruments: []string{i.v.ID}}, 4096)
			ready()
			for e := range sub.C {
				o := tradeObj(i, *e.Trade)
				o["count"] = "1"
				c.send(push(a, []obj{o}))
			}
		}
	}
}

func (c *wsConn) markFeed(a map[string]string, i *inst, ch string) feed {
	return func(ctx context.Context, ready func()) {
		var prev string
		emit := func() {
			if ch == "mark-price" {
				m, err := c.s.v.Mark(i.v.ID)
				if err != nil || dec(m.Mark) == prev {
					return
				}
				prev = dec(m.Mark)
				c.send(push(a, []obj{{"instType": i.instType(), "instId": i.id, "markPx": prev, "ts": ms(m.Time)}}))
				return
			}
			o, err := c.s.fundingObj(i)
			if err != nil {
				return
			}
			k := fmt.Sprint(o["fundingRate"], o["fundingTime"])
			if k != prev {
				prev = k
				c.send(push(a, []obj{o}))
			}
		}
		subscribe := func() *venue.Subscription {
			return c.s.v.Subscribe(ctx, venue.Filter{Kinds: []venue.EventKind{venue.EvMark}, Instruments: []string{i.v.ID}}, 1024)
		}
		sub := subscribe()
		ready()
		emit()
		for ctx.Err() == nil {
			for range sub.C {
				emit()
			}
			sub = subscribe()
		}
	}
}

func (c *wsConn) candleFeed(a map[string]string, i *inst, code string) feed {
	return func(ctx context.Context, ready func()) {
		ready() // polls the candle store: nothing to subscribe to
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		var prevTs int64
		var prevRow string
		for {
			bars, err := c.s.candleRange(i, code, 0, 0, 2)
			if err == nil && len(bars) > 0 {
				cur := bars[0]
				if prevTs != 0 && cur.ts != prevTs && len(bars) > 1 && bars[1].ts == prevTs {
					c.send(push(a, [][]string{candleRow(i, bars[1])}))
				}
				row := candleRow(i, cur)
				if k := strings.Join(row, ","); k != prevRow {
					prevRow = k
					c.send(push(a, [][]string{row}))
				}
				prevTs = cur.ts
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}
}

// Book keeping for the books channels.

type lvl struct {
	px  decimal.Decimal
	ps  string // price as sent
	ss  string // size as sent
	qty decimal.Decimal
}

type localBook struct {
	bids, asks map[string]*lvl
}

func (b *localBook) sorted(bid bool) []*lvl {
	m := b.asks
	if bid {
		m = b.bids
	}
	out := make([]*lvl, 0, len(m))
	for _, l := range m {
		out = append(out, l)
	}
	sort.Slice(out, func(x, y int) bool {
		if bid {
			return out[x].px.GreaterThan(out[y].px)
		}
		return out[x].px.LessThan(out[y].px)
	})
	return out
}

// Checksum is OKX's order book checksum: CRC32 (IEEE) of the top 25 levels interleaved bid, ask, bid, ask...
// each as "price:size" with the strings as sent, joined with ":", as a signed 32-bit integer. When one side has
// fewer levels the other side's remaining levels follow alone.
func Checksum(bids, asks [][]string) int32 {
	var parts []string
	for k := 0; k < 25; k++ {
		if k < len(bids) {
			parts = append(parts, bids[k][0]+":"+bids[k][1])
		}
		if k < len(asks) {
			parts = append(parts, asks[k][0]+":"+asks[k][1])
		}
	}
	return int32(crc32.ChecksumIEEE([]byte(strings.Join(parts, ":"))))
}

func rowsOf(ls []*lvl, n int) [][]string {
	if n > 0 && len(ls) > n {
		ls = ls[:n]
	}
	out := make([][]string, 0, len(ls))
	for _, l := range ls {
		out = append(out, []string{l.ps, l.ss, "0", "1"})
	}
	return out
}

// bookFeed serves books (400 levels: a snapshot then updates every 100 ms with seqId/prevSeqId and a checksum),
// books5 (the top five every 100 ms when changed) and bbo-tbt (the best level on each change).
func (c *wsConn) bookFeed(a map[string]string, i *inst, ch string) feed {
	return func(ctx context.Context, ready func()) {
		for ctx.Err() == nil {
			c.runBook(ctx, a, i, ch, ready)
		}
	}
}

func (c *wsConn) runBook(ctx context.Context, a map[string]string, i *inst, ch string, ready func()) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sub := c.s.v.Subscribe(sctx, venue.Filter{Kinds: []venue.EventKind{venue.EvBook}, Instruments: []string{i.v.ID}}, 8192)
	ready()
	snap, err := c.s.v.BookSnapshot(i.v.ID, 0)
	if err != nil {
		return
	}
	book := &localBook{bids: map[string]*lvl{}, asks: map[string]*lvl{}}
	set := func(bid bool, l venue.Level) (string, string) {
		m := book.asks
		if bid {
			m = book.bids
		}
		ps := dec(l.Price)
		if l.Qty.IsZero() {
			delete(m, ps)
			return ps, "0"
		}
		e := &lvl{px: l.Price, ps: ps, ss: i.szString(l.Qty), qty: l.Qty}
		m[ps] = e
		return ps, e.ss
	}
	for _, l := range snap.Bids {
		set(true, l)
	}
	for _, l := range snap.Asks {
		set(false, l)
	}
	seq := int64(snap.Seq)
	pushedSeq := int64(-1)
	depth := map[string]int{"books": 400, "books5": 5, "bbo-tbt": 1}[ch]
	var changedBids, changedAsks map[string]string
	resetChanges := func() { changedBids, changedAsks = map[string]string{}, map[string]string{} }
	resetChanges()
	var prevTop string
	flush := func(snapshot bool) {
		bids, asks := book.sorted(true), book.sorted(false)
		ts := ms(c.s.v.Now())
		if ch != "books" {
			b, as := rowsOf(bids, depth), rowsOf(asks, depth)
			k := fmt.Sprint(b, as)
			if k == prevTop {
				return
			}
			prevTop = k
			d := obj{"asks": as, "bids": b, "ts": ts, "seqId": seq}
			if ch == "books5" {
				d["instId"] = i.id
			}
			c.send(push(a, []obj{d}))
			return
		}
		if !snapshot && len(changedBids) == 0 && len(changedAsks) == 0 {
			return
		}
		cs := Checksum(rowsOf(bids, 25), rowsOf(asks, 25))
		d := obj{"ts": ts, "checksum": cs, "seqId": seq, "prevSeqId": pushedSeq}
		action := "snapshot"
		if snapshot {
			d["bids"], d["asks"] = rowsOf(bids, depth), rowsOf(asks, depth)
		} else {
			action = "update"
			d["bids"], d["asks"] = changeRows(changedBids, true), changeRows(changedAsks, false)
		}
		pushedSeq = seq
		resetChanges()
		c.send(obj{"arg": a, "action": action, "data": []obj{d}})
	}
	flush(true)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			flush(false)
		case e, ok := <-sub.C:
			if !ok {
				return // resubscribe and resnapshot
			}
			d := e.Book
			if int64(d.Seq) <= int64(snap.Seq) {
				continue
			}
			if int64(d.PrevSeq) != seq {
				return // gap: start over with a snapshot
			}
			for _, l := range d.Bids {
				p, sz := set(true, l)
				changedBids[p] = sz
			}
			for _, l := range d.Asks {
				p, sz := set(false, l)
				changedAsks[p] = sz
			}
			seq = int64(d.Seq)
			if ch == "bbo-tbt" {
				flush(false)
			}
		}
	}
}

func changeRows(m map[string]string, bid bool) [][]string {
	type kv struct {
		p  decimal.Decimal
		ps string
		ss string
	}
	xs := make([]kv, 0, len(m))
	for p, sz := range m {
		xs = append(xs, kv{decimal.RequireFromString(p), p, sz})
	}
	sort.Slice(xs, func(a, b int) bool {
		if bid {
			return xs[a].p.GreaterThan(xs[b].p)
		}
		return xs[a].p.LessThan(xs[b].p)
	})
	out := make([][]string, 0, len(xs))
	for _, x := range xs {
		n := "1"
		if x.ss == "0" {
			n = "0"
		}
		out = append(out, []string{x.ps, x.ss, "0", n})
	}
	return out
}
