// Package stream is the BFF's live market stream gateway (GET /api/v1/stream): browsers subscribe over one
// WebSocket to books (with depth and price grouping), trades, tickers and candles of any exchange. The protocol is
// documented in README.md beside this file and in docs/stream-api.md.
//
// Shape: a topic is one upstream stream (exchange, market type, symbol, channel, interval). Exactly one replica
// leads each topic: it holds the single upstream subscription on the exchange plugin's durable market stream,
// keeps the local order book (gap and crossed-book detection, resync) and publishes the topic's messages once
// through the broker. Every replica's hub delivers published messages to its own clients, rendering each book view
// (depth, grouping) once and sharing the encoded bytes. Without Valkey the broker is in-process (one replica); with
// Valkey, leadership is a lease with a TTL that the leader renews and another replica takes over when it lapses.
package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/exhub/exhub/bff/internal/accountstream/feed"
)

// Config tunes the gateway. Zero values take the defaults noted.
type Config struct {
	// MaxSubscriptions per connection (64).
	MaxSubscriptions int
	// MaxMessageBytes is the largest client message (4096); bigger closes the connection with 1009.
	MaxMessageBytes int64
	// MaxConnections on this replica (20000); more are refused with 503 before the upgrade.
	MaxConnections int
	// MaxDepth is the largest book depth a client may ask for (200).
	MaxDepth int
	// UpstreamDepth is the depth of the one upstream book subscription per topic (0: the plugin's default;
	// client views deeper than it show what the plugin sends).
	UpstreamDepth int
	// UpstreamLinger is how long a leader waits for more upstream events before publishing a batch (1 ms;
	// negative: no wait). Events that arrive together reach a client in one frame.
	UpstreamLinger time.Duration
	// MaxCoalescedTrades is how many trades a slow client's merged trades message keeps (200).
	MaxCoalescedTrades int
	// MaxPendingControl bounds unread replies (acks, errors, pongs) per connection (256).
	MaxPendingControl int
	// MaxFrameBytes bounds one frame that batches several pending messages (64 KiB); a single bigger message
	// still goes out, alone.
	MaxFrameBytes int
	// PingInterval and PongTimeout: heartbeat (20 s, 10 s).
	PingInterval, PongTimeout time.Duration
	// WriteTimeout bounds one message write (10 s).
	WriteTimeout time.Duration
	// InstrumentsTTL is how long an instrument list validates subscriptions (5 min).
	InstrumentsTTL time.Duration
	// OriginPatterns allowed besides same-host (see websocket.AcceptOptions).
	OriginPatterns []string
	// InsecureSkipOriginCheck accepts any Origin (benchmarks, tests).
	InsecureSkipOriginCheck bool
	// SessionRecheck is how often a connection's session is checked again while it holds private subscriptions
	// (1 min; through the checker's cache).
	SessionRecheck time.Duration
	// MaxPrivatePending bounds the unsent messages of one private subscription (1024); a client further behind
	// gets a resync (status resyncing and a fresh snapshot) instead of the backlog.
	MaxPrivatePending int
}

func (c Config) withDefaults() Config {
	if c.MaxSubscriptions <= 0 {
		c.MaxSubscriptions = 64
	}
	if c.MaxMessageBytes <= 0 {
		c.MaxMessageBytes = 4096
	}
	if c.MaxConnections <= 0 {
		c.MaxConnections = 20000
	}
	if c.MaxDepth <= 0 {
		c.MaxDepth = 200
	}
	if c.UpstreamLinger == 0 {
		c.UpstreamLinger = time.Millisecond
	}
	if c.MaxCoalescedTrades <= 0 {
		c.MaxCoalescedTrades = 200
	}
	if c.MaxPendingControl <= 0 {
		c.MaxPendingControl = 256
	}
	if c.MaxFrameBytes <= 0 {
		c.MaxFrameBytes = 64 << 10
	}
	if c.PingInterval <= 0 {
		c.PingInterval = 20 * time.Second
	}
	if c.PongTimeout <= 0 {
		c.PongTimeout = 10 * time.Second
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 10 * time.Second
	}
	if c.InstrumentsTTL <= 0 {
		c.InstrumentsTTL = 5 * time.Minute
	}
	if c.SessionRecheck <= 0 {
		c.SessionRecheck = time.Minute
	}
	if c.MaxPrivatePending <= 0 {
		c.MaxPrivatePending = 1024
	}
	return c
}

// Gateway is the stream gateway of one BFF replica.
type Gateway struct {
	cfg    Config
	log    *slog.Logger
	broker Broker
	hub    *hub
	up     *upstream
	cat    *catalog
	// Private channels: nil sessions or accounts leave them unavailable.
	sessions Sessions
	accounts feed.Subscriber

	mu     sync.Mutex
	conns  map[*conn]struct{}
	admit  int // connections admitted: in conns, or past the limit check and upgrading
	closed bool
	ctx    context.Context

	sent   atomic.Uint64
	frames atomic.Uint64
	bytes  atomic.Uint64
	closes [numCloseReasons]atomic.Uint64
}

// Options builds a gateway.
type Options struct {
	Config Config
	Source Source
	// Broker connects replicas; nil uses the in-process broker (a single replica).
	Broker Broker
	// Sessions checks the upgrade request's session (an *auth.Checker) and Accounts serves the member's private
	// channels (an *accountstream.Manager); without both the private channels answer errors.
	Sessions Sessions
	Accounts feed.Subscriber
	Logger   *slog.Logger
}

// New builds a gateway; Run must run for it to serve.
func New(o Options) *Gateway {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	cfg := o.Config.withDefaults()
	g := &Gateway{cfg: cfg, log: o.Logger, conns: map[*conn]struct{}{}, cat: newCatalog(o.Source, cfg.InstrumentsTTL),
		sessions: o.Sessions, accounts: o.Accounts}
	if o.Broker == nil {
		o.Broker = NewMemoryBroker()
	}
	g.broker = o.Broker
	g.up = newUpstream(o.Source, o.Broker, cfg.UpstreamDepth, cfg.UpstreamLinger, o.Logger)
	g.hub = newHub(o.Broker.Join, o.Broker.Leave)
	o.Broker.bind(brokerHandler{deliver: g.hub.deliver, batch: g.hub.deliverBatch, lead: g.up.lead, unlead: g.up.unlead, wants: g.hub.wants})
	return g
}

// Run serves until ctx ends, then closes every connection (1001 going away) and stops the upstream streams.
func (g *Gateway) Run(ctx context.Context) error {
	g.mu.Lock()
	g.ctx = ctx
	g.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(2)
	errc := make(chan error, 1)
	go func() { // owned by Run; ends with ctx
		defer wg.Done()
		errc <- g.broker.Run(ctx)
	}()
	go func() { // owned by Run; ends with ctx
		defer wg.Done()
		g.watchdog(ctx)
	}()
	<-ctx.Done()
	g.mu.Lock()
	g.closed = true
	conns := make([]*conn, 0, len(g.conns))
	for c := range g.conns {
		conns = append(conns, c)
	}
	g.mu.Unlock()
	for _, c := range conns {
		c.cancel(errShutdown)
	}
	wg.Wait()
	g.up.close()
	if err := <-errc; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// Stats are the gateway's gauges and counters (bff/internal/metrics exports them on /metrics; tests and
// benchmarks read them directly). Counters only grow for the life of the gateway.
type Stats struct {
	Connections int
	// Subscriptions of this replica's clients by channel (book, trades, ticker, candles).
	Subscriptions map[string]int
	Delivered     uint64 // messages queued to clients
	Sent          uint64 // messages written to clients
	Frames        uint64 // WebSocket frames written (a frame may batch several messages)
	BytesSent     uint64 // payload bytes of those frames
	// Conflated counts queued messages replaced or merged by a newer one before the client read them (a slow
	// client); TradesDropped the trades left out of merged trades messages past MaxCoalescedTrades.
	Conflated     uint64
	TradesDropped uint64
	// Closes counts ended connections by reason: client (closed or dropped by the client), message_too_big (1009),
	// heartbeat (1008), unread_replies (1008), write_timeout (a slow client not reading), write_error, shutdown.
	Closes         map[string]uint64
	Published      uint64 // topic messages published by this replica as leader
	Leading        int    // topics this replica leads (holds the upstream subscription of)
	UpstreamEvents uint64
	// Upstream subscriptions held by this replica by channel (their sum is Leading once the control loop ran).
	Upstream map[string]int
	// Resyncs counts book resyncs by reason: gap (a sequence gap), crossed (a crossed book), invalid (another book
	// error), upstream (the plugin reported its stream re-established).
	Resyncs map[string]uint64
	// Leases is how many topic leases this replica holds in Valkey (0 with the in-process broker).
	Leases int
	// BrokerErrors counts Valkey failures by operation: publish, receive (subscription connection lost, or a
	// payload that does not decode), subscribe, interest, lease, last (reading a topic's last state).
	BrokerErrors map[string]uint64
}

// Stats returns the gateway's gauges and counters.
func (g *Gateway) Stats() Stats {
	g.mu.Lock()
	n := len(g.conns)
	g.mu.Unlock()
	pub, lead, evs := g.up.stats()
	st := Stats{Connections: n, Subscriptions: g.hub.subscriptions(), Delivered: g.hub.delivered.Load(),
		Sent: g.sent.Load(), Frames: g.frames.Load(), BytesSent: g.bytes.Load(), Conflated: g.hub.conflated.Load(),
		TradesDropped: g.hub.tradesDropped.Load(), Closes: map[string]uint64{}, Published: pub, Leading: lead,
		UpstreamEvents: evs, Upstream: g.up.byChannel(), Resyncs: g.up.resyncCounts()}
	for r := range numCloseReasons {
		st.Closes[closeReasonNames[r]] = g.closes[r].Load()
	}
	st.Leases, st.BrokerErrors = g.broker.stats()
	return st
}

// Why connections end (Stats.Closes).
type closeReason int

const (
	closeClient closeReason = iota
	closeTooBig
	closeHeartbeat
	closeUnread
	closeWriteTimeout
	closeWriteError
	closeShutdown
	numCloseReasons
)

var closeReasonNames = [numCloseReasons]string{"client", "message_too_big", "heartbeat", "unread_replies",
	"write_timeout", "write_error", "shutdown"}

// ServeHTTP upgrades GET /api/v1/stream to a WebSocket.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The slot is taken under the lock before the upgrade, so concurrent upgrades cannot pass the limit together;
	// it is given back when the connection ends or the upgrade fails.
	g.mu.Lock()
	ctx, closed, full := g.ctx, g.closed, g.admit >= g.cfg.MaxConnections
	if ctx != nil && !closed && !full {
		g.admit++
	}
	g.mu.Unlock()
	if ctx == nil || closed {
		httpProblem(w, http.StatusServiceUnavailable, "the stream gateway is not running")
		return
	}
	if full {
		w.Header().Set("Retry-After", "5")
		httpProblem(w, http.StatusServiceUnavailable, "too many stream connections on this server; retry shortly")
		return
	}
	defer func() {
		g.mu.Lock()
		g.admit--
		g.mu.Unlock()
	}()
	// A browser's Origin must be this host or match OriginPatterns: another site's page cannot open the stream
	// (the library answers 403 before the upgrade).
	cctx, cancel := context.WithCancelCause(context.Background())
	c := &conn{g: g, ctx: cctx, cancel: cancel, pending: map[string]*item{}, notify: make(chan struct{}, 1),
		subs: map[string]*connSub{}}
	g.authenticate(r, c)
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		OriginPatterns: g.cfg.OriginPatterns, InsecureSkipVerify: g.cfg.InsecureSkipOriginCheck,
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		cancel(err)
		return // Accept wrote the HTTP error
	}
	ws.SetReadLimit(g.cfg.MaxMessageBytes)
	c.ws = ws
	c.nextPing.Store(time.Now().Add(g.cfg.PingInterval).UnixNano())
	g.mu.Lock()
	g.conns[c] = struct{}{}
	g.mu.Unlock()
	defer func() {
		c.endPrivate()
		for _, cs := range c.subs {
			g.hub.remove(cs)
		}
		g.mu.Lock()
		delete(g.conns, c)
		g.mu.Unlock()
	}()
	g.serveConn(c)
}

// serveConn runs one connection: this goroutine reads, one writer goroutine writes; heartbeats and the write
// watchdog are the gateway's (watchdog), and the socket is closed, with a code saying why, by a function that runs
// once the connection's context ends (context.AfterFunc), so an idle connection costs two goroutines and no timer.
func (g *Gateway) serveConn(c *conn) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // owned by serveConn; ends with the connection
		defer wg.Done()
		err := c.writeLoop()
		if c.ctx.Err() == nil {
			err = errWrite{err}
		}
		c.cancel(err)
	}()
	closed := make(chan struct{})
	context.AfterFunc(c.ctx, func() { // runs once, when the connection ends; serveConn waits for it
		defer close(closed)
		cause := context.Cause(c.ctx)
		reason := closeClient
		switch {
		case errors.Is(cause, errTooManyPending):
			reason = closeUnread
			_ = c.ws.Close(websocket.StatusPolicyViolation, "too many unanswered requests: read your messages")
		case errors.Is(cause, errHeartbeat):
			reason = closeHeartbeat
			_ = c.ws.Close(websocket.StatusPolicyViolation, "heartbeat timeout")
		case errors.Is(cause, errWriteTimeout):
			reason = closeWriteTimeout
			_ = c.ws.CloseNow() // a close frame would wait behind the stuck write
		case errors.Is(cause, errShutdown):
			reason = closeShutdown
			_ = c.ws.Close(websocket.StatusGoingAway, "server shutting down")
		default:
			// The client closed, the read limit fired (coder/websocket already sent 1009) or a write failed.
			if errors.Is(cause, websocket.ErrMessageTooBig) {
				reason = closeTooBig
			} else if errors.As(cause, new(errWrite)) {
				reason = closeWriteError
			}
			_ = c.ws.CloseNow()
		}
		g.closes[reason].Add(1)
	})
	c.control(&helloMsg{Type: "hello", Version: 1, MaxSubscriptions: g.cfg.MaxSubscriptions,
		MaxMessageBytes: g.cfg.MaxMessageBytes, HeartbeatSeconds: int(g.cfg.PingInterval / time.Second)})
	// Reads use their own context: cancelling a read's context makes the library drop the connection without a
	// close frame, and the closer above must be able to send one.
	readErr := g.readLoop(c)
	c.cancel(readErr)
	wg.Wait()
	<-closed
}

// watchdog pings every connection each PingInterval (a missing pong ends it, see conn.ping) and ends a connection
// whose current write has been stuck for WriteTimeout: one goroutine and one ticker for all connections.
func (g *Gateway) watchdog(ctx context.Context) {
	check := min(time.Second, g.cfg.WriteTimeout/2, g.cfg.PingInterval)
	t := time.NewTicker(check)
	defer t.Stop()
	var conns []*conn
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			g.mu.Lock()
			conns = conns[:0]
			for c := range g.conns {
				conns = append(conns, c)
			}
			g.mu.Unlock()
			n := now.UnixNano()
			for i, c := range conns {
				conns[i] = nil
				if ws := c.writingSince.Load(); ws != 0 && n-ws > int64(g.cfg.WriteTimeout) {
					c.cancel(errWriteTimeout)
					continue
				}
				if n >= c.nextPing.Load() {
					c.nextPing.Store(n + int64(g.cfg.PingInterval))
					go c.ping() // owned by the connection: bounded by PongTimeout
				}
				if g.sessions != nil && c.sessionDue(n, g.cfg.SessionRecheck) {
					go c.recheckSession() // owned by the connection: bounded by its timeout
				}
			}
		}
	}
}

var errShutdown = errors.New("server shutting down")

// errWrite is a failed write that ended a connection still open on our side.
type errWrite struct{ err error }

func (e errWrite) Error() string { return "write: " + e.err.Error() }
func (e errWrite) Unwrap() error { return e.err }

func (g *Gateway) isClosed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed
}

func (g *Gateway) readLoop(c *conn) error {
	for {
		typ, b, err := c.ws.Read(context.Background())
		if err != nil {
			return err
		}
		if typ != websocket.MessageText {
			c.control(&errorMsg{Type: "error", Error: problemf(400, "bad-message", "", "send JSON text messages")})
			continue
		}
		var o op
		if err := json.Unmarshal(b, &o); err != nil {
			c.control(&errorMsg{Type: "error", Error: problemf(400, "bad-message", "", "not a JSON op: %v", err)})
			continue
		}
		g.handle(c, &o)
	}
}

func (g *Gateway) handle(c *conn, o *op) {
	fail := func(p *Problem) { c.control(&errorMsg{Type: "error", ID: o.ID, Op: o.Op, Error: p}) }
	switch o.Op {
	case "ping":
		c.control(&pongMsg{Type: "pong", ID: o.ID, Time: time.Now().UnixMilli()})
		return
	case "subscribe", "unsubscribe":
		if IsPrivateChannel(o.Channel) {
			g.handlePrivate(c, o)
			return
		}
	}
	switch o.Op {
	case "subscribe":
		s, p := parseSub(o, g.cfg.MaxDepth)
		if p != nil {
			fail(p)
			return
		}
		key := s.key()
		if _, ok := c.subs[key]; ok {
			fail(problemf(409, "already-subscribed", "", "already subscribed to %s", key))
			return
		}
		if len(c.subs)+g.privCount(c) >= g.cfg.MaxSubscriptions {
			fail(problemf(429, "too-many-subscriptions", "", "at most %d subscriptions per connection", g.cfg.MaxSubscriptions))
			return
		}
		if p := g.cat.check(c.ctx, s); p != nil {
			fail(p)
			return
		}
		cs := &connSub{c: c, sub: s, key: key}
		c.subs[key] = cs
		c.control(&ackMsg{Type: "subscribed", ID: o.ID, Sub: s, Subscriptions: len(c.subs)})
		g.hub.add(cs)
	case "unsubscribe":
		s, p := parseSub(o, g.cfg.MaxDepth)
		if p != nil {
			fail(p)
			return
		}
		cs, ok := c.subs[s.key()]
		if !ok {
			fail(problemf(422, "not-subscribed", "", "not subscribed to %s", s.key()))
			return
		}
		delete(c.subs, s.key())
		g.hub.remove(cs)
		c.dropPending(cs.key)
		c.control(&ackMsg{Type: "unsubscribed", ID: o.ID, Sub: s, Subscriptions: len(c.subs)})
	default:
		fail(problemf(400, "unknown-op", "op", "op %q: want subscribe, unsubscribe or ping", o.Op))
	}
}

// dropPending forgets queued messages of a subscription that ended.
func (c *conn) dropPending(prefix string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	keep := c.order[:0]
	for _, k := range c.order {
		if k == prefix || strings.HasPrefix(k, prefix+"|") {
			delete(c.pending, k)
			continue
		}
		keep = append(keep, k)
	}
	c.order = keep
}

func httpProblem(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `{"type":"about:blank","title":%q,"status":%d,"detail":%q}`+"\n", http.StatusText(status), status, detail)
}
