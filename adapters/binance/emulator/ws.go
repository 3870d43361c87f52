package emulator

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

const (
	closeGoingAway = websocket.StatusGoingAway
	// sendQueue bounds the frames waiting for one connection; a client that falls this far behind is
	// disconnected, as Binance does with slow consumers.
	sendQueue = 4096
	// maxStreams per connection (Binance: 1024).
	maxStreams = 1024
)

// wsConn is one WebSocket client connection (market streams and/or a user data stream).
type wsConn struct {
	s        *Server
	h        *hub
	futures  bool
	combined bool
	c        *websocket.Conn
	send     chan []byte
	ctx      context.Context
	cancel   context.CancelFunc

	mu      sync.Mutex
	streams map[string]bool
	users   map[string]context.CancelFunc // listen key -> user stream
	uwg     sync.WaitGroup                // user stream goroutines

	// killMu guards how the connection ends. It is separate from mu because hubs call kill while holding their
	// own lock, and subscribe takes mu then the hub's lock.
	killMu sync.Mutex
	dead   bool
	code   websocket.StatusCode
	reason string
}

// enqueue queues a frame without blocking; a full queue ends the connection.
func (c *wsConn) enqueue(stream string, payload []byte) {
	frame := payload
	if c.combined {
		frame = make([]byte, 0, len(payload)+len(stream)+20)
		frame = append(frame, `{"stream":"`...)
		frame = append(frame, stream...)
		frame = append(frame, `","data":`...)
		frame = append(frame, payload...)
		frame = append(frame, '}')
	}
	select {
	case c.send <- frame:
	default:
		c.kill(websocket.StatusPolicyViolation, "slow consumer")
	}
}

// reply queues a response to a client request (never wrapped).
func (c *wsConn) reply(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	select {
	case c.send <- b:
	default:
		c.kill(websocket.StatusPolicyViolation, "slow consumer")
	}
}

// kill ends the connection with a close frame (code 0 = drop without one).
func (c *wsConn) kill(code websocket.StatusCode, reason string) {
	c.killMu.Lock()
	if !c.dead {
		c.dead, c.code, c.reason = true, code, reason
	}
	c.killMu.Unlock()
	c.cancel()
}

// serveWS upgrades a request on a market's WebSocket path. rest is what follows /ws/ (streams or a listen key).
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request, futures bool, rest string) {
	combined := strings.HasSuffix(r.URL.Path, "/stream")
	var names []string
	if combined {
		if q := r.URL.Query().Get("streams"); q != "" {
			names = strings.Split(q, "/")
		}
	} else if rest != "" {
		names = strings.Split(rest, "/")
	}
	if lk := r.URL.Query().Get("listenKey"); lk != "" {
		names = append(names, lk)
	}
	h := s.spotHub
	if futures {
		h = s.futHub
	}
	// Validate before upgrading, as Binance refuses bad stream names with an HTTP error.
	var specs []streamSpec
	var keys []string
	for _, n := range names {
		if n == "" {
			continue
		}
		if !strings.Contains(n, "@") {
			if s.listenKeyValid(n, futures) {
				keys = append(keys, n)
				continue
			}
			writeErr(w, errf(http.StatusBadRequest, codeInvalidListenKey, "This listenKey does not exist."))
			return
		}
		sp, err := s.parseStream(futures, n)
		if err != nil {
			writeErr(w, errf(http.StatusBadRequest, codeBadParam, "Invalid request: %v", err))
			return
		}
		specs = append(specs, sp)
	}
	if len(specs) > maxStreams {
		writeErr(w, errf(http.StatusBadRequest, codeBadParam, "Too many streams."))
		return
	}
	ctx, cancel := context.WithCancel(s.ctx)
	c := &wsConn{s: s, h: h, futures: futures, combined: combined, send: make(chan []byte, sendQueue),
		ctx: ctx, cancel: cancel, streams: map[string]bool{}, users: map[string]context.CancelFunc{}}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		cancel()
		writeErr(w, errf(http.StatusServiceUnavailable, codeUnknown, "server closing"))
		return
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	// Subscribe before completing the upgrade, so every event after the client sees the connection open is sent.
	for _, sp := range specs {
		c.subscribe(sp)
	}
	for _, k := range keys {
		c.startUser(k)
	}
	wc, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		c.kill(0, "")
		c.cleanup()
		return
	}
	wc.SetReadLimit(1 << 16)
	c.c = wc
	c.serve()
}

func (c *wsConn) subscribe(sp streamSpec) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.streams[sp.name] {
		return
	}
	c.streams[sp.name] = true
	c.h.add(sp, c)
}

func (c *wsConn) unsubscribe(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.streams[name] {
		return
	}
	delete(c.streams, name)
	c.h.remove(name, c)
}

// cleanup ends the connection's subscriptions and user streams and returns how it should be closed.
func (c *wsConn) cleanup() (websocket.StatusCode, string) {
	c.cancel()
	c.mu.Lock()
	names := make([]string, 0, len(c.streams))
	for n := range c.streams {
		names = append(names, n)
	}
	for _, stop := range c.users {
		stop()
	}
	c.mu.Unlock()
	c.killMu.Lock()
	code, reason := c.code, c.reason
	c.killMu.Unlock()
	for _, n := range names {
		c.unsubscribe(n)
	}
	c.uwg.Wait()
	return code, reason
}

// serve runs the connection: a reader goroutine for client requests, and this goroutine writing frames, pinging,
// and enforcing the connection lifetime. Everything ends with c.ctx.
func (c *wsConn) serve() {
	// The reader has its own context: cancelling a read makes the library drop the connection at once, which
	// would race with the close frame. It is cancelled after the close handshake.
	rctx, rcancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		c.readLoop(rctx)
	}()
	go func() {
		defer wg.Done()
		c.pingLoop()
	}()
	defer func() {
		code, reason := c.cleanup()
		if code == 0 {
			_ = c.c.CloseNow()
		} else {
			// Close sends the close frame and waits briefly for the client's; bounded by the library's timeout.
			_ = c.c.Close(code, reason)
		}
		rcancel()
		wg.Wait()
	}()
	life := time.NewTimer(c.s.wsLifetime())
	defer life.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-life.C:
			c.kill(websocket.StatusGoingAway, "connection lifetime exceeded")
			return
		case frame := <-c.send:
			wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := c.c.Write(wctx, websocket.MessageText, frame)
			cancel()
			if err != nil {
				c.kill(0, "")
				return
			}
		}
	}
}

type wsRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	ID     any             `json:"id"`
}

type wsError struct {
	Code int    `json:"code"`
	Msg  string `json:"msg"`
}

// pingLoop pings the client every PingInterval until the connection ends; a client that does not answer within
// three intervals (at most a minute, as Binance) is dropped.
func (c *wsConn) pingLoop() {
	t := time.NewTicker(c.s.cfg.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		// Not derived from c.ctx: a cancelled ping makes the library drop the connection without the close frame.
		pctx, cancel := context.WithTimeout(context.Background(), min(3*c.s.cfg.PingInterval, time.Minute))
		err := c.c.Ping(pctx)
		cancel()
		if err != nil {
			if c.ctx.Err() == nil {
				c.kill(0, "") // the peer does not answer: no close handshake to wait for
			}
			return
		}
	}
}

// Incoming message limits per second (Binance: 5 on spot, 10 on futures); a client over it is disconnected.
const (
	spotMsgRate    = 5
	futuresMsgRate = 10
)

func (c *wsConn) readLoop(ctx context.Context) {
	limit := spotMsgRate
	if c.futures {
		limit = futuresMsgRate
	}
	var window time.Time
	n := 0
	for {
		_, msg, err := c.c.Read(ctx)
		if err != nil {
			c.kill(0, "")
			return
		}
		if now := time.Now(); now.Sub(window) >= time.Second {
			window, n = now, 0
		}
		n++
		if n > limit {
			// Keep reading so the close handshake can complete; the request is ignored.
			c.kill(websocket.StatusPolicyViolation, "too many messages")
			continue
		}
		if c.ctx.Err() == nil {
			c.request(msg)
		}
	}
}

func (c *wsConn) request(msg []byte) {
	var rq wsRequest
	if err := json.Unmarshal(msg, &rq); err != nil {
		c.reply(map[string]any{"error": wsError{3, "Invalid JSON: " + err.Error()}, "id": nil})
		return
	}
	switch rq.ID.(type) {
	case nil, float64, string:
	default:
		c.reply(map[string]any{"error": wsError{2, "Invalid request: request ID must be an unsigned integer"}, "id": nil})
		return
	}
	switch rq.Method {
	case "SUBSCRIBE", "UNSUBSCRIBE":
		var names []string
		if err := json.Unmarshal(rq.Params, &names); err != nil {
			c.reply(map[string]any{"error": wsError{2, "Invalid request: params must be a list of stream names"}, "id": rq.ID})
			return
		}
		var specs []streamSpec
		for _, n := range names {
			if rq.Method == "UNSUBSCRIBE" {
				continue
			}
			sp, err := c.s.parseStream(c.futures, n)
			if err != nil {
				c.reply(map[string]any{"error": wsError{2, "Invalid request: " + err.Error()}, "id": rq.ID})
				return
			}
			specs = append(specs, sp)
		}
		if rq.Method == "UNSUBSCRIBE" {
			for _, n := range names {
				c.unsubscribe(n)
			}
		} else {
			c.mu.Lock()
			n := len(c.streams)
			c.mu.Unlock()
			if n+len(specs) > maxStreams {
				c.reply(map[string]any{"error": wsError{2, "Invalid request: too many streams"}, "id": rq.ID})
				return
			}
			for _, sp := range specs {
				c.subscribe(sp)
			}
		}
		c.reply(map[string]any{"result": nil, "id": rq.ID})
	case "LIST_SUBSCRIPTIONS":
		c.mu.Lock()
		names := make([]string, 0, len(c.streams))
		for n := range c.streams {
			names = append(names, n)
		}
		c.mu.Unlock()
		sort.Strings(names)
		c.reply(map[string]any{"result": names, "id": rq.ID})
	case "SET_PROPERTY":
		c.reply(map[string]any{"result": nil, "id": rq.ID})
	case "GET_PROPERTY":
		c.reply(map[string]any{"result": c.combined, "id": rq.ID})
	default:
		c.reply(map[string]any{"error": wsError{2, "Invalid request: unknown method"}, "id": rq.ID})
	}
}

// DropConnections closes every WebSocket connection abruptly (no close frame), the way a network failure or a
// server restart looks to a client. Reconnect tests use it. It returns how many were dropped.
func (s *Server) DropConnections() int {
	s.mu.Lock()
	conns := make([]*wsConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.kill(0, "")
	}
	return len(conns)
}

// Connections reports how many WebSocket connections are open.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// SetWSLifetime changes the lifetime of connections opened from now on (Binance: 24 hours). Tests of the
// client's rollover use a short one.
func (s *Server) SetWSLifetime(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.WSLifetime = d
}

func (s *Server) wsLifetime() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.WSLifetime
}
