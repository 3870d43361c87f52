package stream

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/exhub/exhub/bff/internal/accountstream/feed"
	"github.com/exhub/exhub/bff/internal/auth"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// Sessions resolves the session of a stream connection (an *auth.Checker): the upgrade request's session cookie is
// checked once, then again every Config.SessionRecheck through the checker's cache.
type Sessions interface {
	SessionCookie(r *http.Request) string
	CheckCookie(ctx context.Context, cookie string) (*auth.Member, error)
}

// privateChannels are the member's account channels: what each carries besides snapshots and statuses.
var privateChannels = map[string][]feed.Kind{
	"orders":    {feed.KindOrder, feed.KindAlgo},
	"fills":     {feed.KindFill},
	"positions": {feed.KindPosition},
	"balances":  {feed.KindBalance},
	"account":   {feed.KindOrder, feed.KindAlgo, feed.KindFill, feed.KindPosition, feed.KindBalance},
}

// IsPrivateChannel says whether a channel is one of the member's account channels.
func IsPrivateChannel(ch string) bool { _, ok := privateChannels[ch]; return ok }

// privSub is one private subscription of a connection; the account stream manager calls it (feed.Sink), one call
// at a time, in order.
type privSub struct {
	c        *conn
	key      string
	channel  string
	exchange string
	kinds    []feed.Kind
	max      int
	lastSeq  int64 // seq of the last snapshot or delta queued (prevSeq of the next)
	cancel   func()
}

func (p *privSub) wants(k feed.Kind) bool {
	switch k {
	case feed.KindSnapshot, feed.KindResync, feed.KindStatus:
		return true
	}
	for _, w := range p.kinds {
		if w == k {
			return true
		}
	}
	return false
}

// Offer implements feed.Sink: the message is queued after the ones already waiting, or refused (false) when
// MaxPrivatePending of them wait: the manager then calls Reset.
func (p *privSub) Offer(u feed.Update) bool {
	if !p.wants(u.Kind) {
		return true
	}
	msg, seq := p.render(u, p.lastSeq)
	if !p.c.offerOrdered(p.key, newLazy(msg), p.max) {
		return false
	}
	if seq != 0 {
		p.lastSeq = seq
	}
	return true
}

// Reset implements feed.Sink: what the client has not been sent is replaced by us (status resyncing, snapshot).
func (p *privSub) Reset(us []feed.Update) {
	ls := make([]*lazy, 0, len(us))
	last := p.lastSeq
	for _, u := range us {
		if !p.wants(u.Kind) {
			continue
		}
		msg, seq := p.render(u, last)
		ls = append(ls, newLazy(msg))
		if seq != 0 {
			last = seq
		}
	}
	p.lastSeq = last
	p.c.resetOrdered(p.key, ls)
}

// privHeader names the subscription of a private message.
type privHeader struct {
	Type     string `json:"type"`
	Channel  string `json:"channel"`
	Exchange string `json:"exchange"`
}

type privSnapshotMsg struct {
	privHeader
	Seq        int64           `json:"seq"`
	Time       int64           `json:"time,omitempty"`
	Orders     json.RawMessage `json:"orders,omitempty"`
	AlgoOrders json.RawMessage `json:"algoOrders,omitempty"`
	Positions  json.RawMessage `json:"positions,omitempty"`
	Balances   json.RawMessage `json:"balances,omitempty"`
	Fills      json.RawMessage `json:"fills,omitempty"`
}

type privDeltaMsg struct {
	privHeader
	Seq       int64           `json:"seq"`
	PrevSeq   int64           `json:"prevSeq"`
	Time      int64           `json:"time,omitempty"`
	Order     json.RawMessage `json:"order,omitempty"`
	AlgoOrder json.RawMessage `json:"algoOrder,omitempty"`
	Fill      json.RawMessage `json:"fill,omitempty"`
	Position  json.RawMessage `json:"position,omitempty"`
	Balance   json.RawMessage `json:"balance,omitempty"`
}

type privStatusMsg struct {
	privHeader
	State   string `json:"state"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

var entityJSON = protojson.MarshalOptions{}

func entity(m proto.Message) json.RawMessage {
	b, err := entityJSON.Marshal(m)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

func entities[T proto.Message](ms []T) json.RawMessage {
	b := []byte{'['}
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, entity(m)...)
	}
	return append(b, ']')
}

// render builds the client message of u; seq is its sequence (0 for statuses and markers).
func (p *privSub) render(u feed.Update, prev int64) (msg any, seq int64) {
	h := privHeader{Channel: p.channel, Exchange: p.exchange}
	switch u.Kind {
	case feed.KindSnapshot:
		h.Type = "snapshot"
		s := u.Snapshot
		m := &privSnapshotMsg{privHeader: h, Seq: u.Seq, Time: s.Time}
		for _, k := range p.kinds {
			switch k {
			case feed.KindOrder:
				m.Orders = entities(s.Orders)
			case feed.KindAlgo:
				m.AlgoOrders = entities(s.AlgoOrders)
			case feed.KindPosition:
				m.Positions = entities(s.Positions)
			case feed.KindBalance:
				m.Balances = entities(s.Balances)
			case feed.KindFill:
				m.Fills = entities(s.Fills)
			}
		}
		return m, u.Seq
	case feed.KindResync:
		h.Type = "status"
		return &privStatusMsg{privHeader: h, State: "resyncing", Reason: u.Reason}, 0
	case feed.KindStatus:
		h.Type = "status"
		st := u.Event.GetStatus()
		state := "error"
		if st.GetState() == exchangev1.StreamStatus_STATE_RECONNECTING {
			state = "reconnecting"
		}
		return &privStatusMsg{privHeader: h, State: state, Message: st.GetMessage()}, 0
	}
	h.Type = string(u.Kind)
	m := &privDeltaMsg{privHeader: h, Seq: u.Seq, PrevSeq: prev, Time: u.Event.GetTime()}
	switch e := u.Event.GetEvent().(type) {
	case *exchangev1.AccountEvent_Order:
		m.Order = entity(e.Order)
	case *exchangev1.AccountEvent_AlgoOrder:
		m.AlgoOrder = entity(e.AlgoOrder)
	case *exchangev1.AccountEvent_Fill:
		m.Fill = entity(e.Fill)
	case *exchangev1.AccountEvent_Position:
		m.Position = entity(e.Position)
	case *exchangev1.AccountEvent_Balance:
		m.Balance = entity(e.Balance)
	}
	return m, u.Seq
}

type privAckMsg struct {
	Type          string `json:"type"`
	ID            string `json:"id,omitempty"`
	Channel       string `json:"channel"`
	Exchange      string `json:"exchange"`
	Subscriptions int    `json:"subscriptions"`
}

// authenticate resolves the upgrade request's session for the private channels (none: market channels only).
func (g *Gateway) authenticate(r *http.Request, c *conn) {
	if g.sessions == nil {
		return
	}
	cookie := g.sessions.SessionCookie(r)
	if cookie == "" {
		return
	}
	m, err := g.sessions.CheckCookie(r.Context(), cookie)
	if err != nil {
		return
	}
	c.member, c.cookie = m.ID, cookie
	c.nextSession.Store(time.Now().Add(g.cfg.SessionRecheck).UnixNano())
}

func (g *Gateway) privCount(c *conn) int {
	c.privMu.Lock()
	defer c.privMu.Unlock()
	return len(c.priv)
}

// handlePrivate serves subscribe and unsubscribe of a private channel.
func (g *Gateway) handlePrivate(c *conn, o *op) {
	fail := func(p *Problem) {
		c.control(&errorMsg{Type: "error", ID: o.ID, Op: o.Op, Channel: o.Channel, Exchange: o.Exchange, Error: p})
	}
	switch {
	case !slugRe.MatchString(o.Exchange):
		fail(problemf(422, "unknown-exchange", "exchange", "exchange %q: want an exchange slug such as \"binance\"", o.Exchange))
		return
	}
	for _, f := range []struct {
		name string
		set  bool
	}{{"marketType", o.MarketType != ""}, {"symbol", o.Symbol != ""}, {"interval", o.Interval != ""},
		{"depth", o.Depth != 0}, {"grouping", o.Grouping != ""}} {
		if f.set {
			fail(problemf(422, "invalid-field", f.name, "%s: a private channel names only an exchange (your account there)", f.name))
			return
		}
	}
	key := "priv|" + o.Channel + "|" + o.Exchange
	if o.Op == "unsubscribe" {
		c.privMu.Lock()
		p := c.priv[key]
		delete(c.priv, key)
		c.privMu.Unlock()
		if p == nil {
			fail(problemf(422, "not-subscribed", "", "not subscribed to %s on %s", o.Channel, o.Exchange))
			return
		}
		p.cancel()
		c.dropPending(key)
		c.control(&privAckMsg{Type: "unsubscribed", ID: o.ID, Channel: o.Channel, Exchange: o.Exchange,
			Subscriptions: len(c.subs) + g.privCount(c)})
		return
	}
	if g.accounts == nil {
		fail(problemf(503, "private-unavailable", "", "private channels are not available on this server"))
		return
	}
	c.privMu.Lock()
	member, dup := c.member, c.priv[key] != nil
	n := len(c.priv)
	c.privMu.Unlock()
	switch {
	case member == "":
		fail(problemf(401, "unauthorized", "", "sign in to subscribe to %s", o.Channel))
		return
	case dup:
		fail(problemf(409, "already-subscribed", "", "already subscribed to %s on %s", o.Channel, o.Exchange))
		return
	case len(c.subs)+n >= g.cfg.MaxSubscriptions:
		fail(problemf(429, "too-many-subscriptions", "", "at most %d subscriptions per connection", g.cfg.MaxSubscriptions))
		return
	}
	p := &privSub{c: c, key: key, channel: o.Channel, exchange: o.Exchange, kinds: privateChannels[o.Channel],
		max: g.cfg.MaxPrivatePending}
	// The acknowledgement heads the subscription's own queue, so it goes out before the snapshot that Subscribe
	// may queue at once.
	c.resetOrdered(key, []*lazy{newLazy(&privAckMsg{Type: "subscribed", ID: o.ID, Channel: o.Channel,
		Exchange: o.Exchange, Subscriptions: len(c.subs) + n + 1})})
	cancel, err := g.accounts.Subscribe(c.ctx, member, o.Exchange, p)
	if err != nil {
		c.dropPending(key)
		if errors.Is(err, feed.ErrNoAccount) {
			fail(problemf(404, "no-account", "exchange", "you have no account on %s", o.Exchange))
		} else {
			g.log.Warn("stream: private subscribe", "exchange", o.Exchange, "err", err)
			fail(problemf(503, "private-unavailable", "", "your account stream on %s is not available; try again shortly", o.Exchange))
		}
		return
	}
	p.cancel = cancel
	c.privMu.Lock()
	ended := c.member != member
	if !ended {
		if c.priv == nil {
			c.priv = map[string]*privSub{}
		}
		c.priv[key] = p
	}
	c.privMu.Unlock()
	if ended { // the session ended meanwhile
		cancel()
		c.dropPending(key)
		fail(problemf(401, "unauthorized", "", "your session ended; sign in again"))
	}
}

// endPrivate ends every private subscription (connection end).
func (c *conn) endPrivate() {
	c.privMu.Lock()
	subs := c.priv
	c.priv = nil
	c.member = ""
	c.privMu.Unlock()
	for _, p := range subs {
		p.cancel()
	}
}

// recheckSession asks the checker again for the connection's session (its cache answers most of the time); a
// session that ended (logout, expiry, revoked) ends the private subscriptions with an error each. An identity
// service that does not answer changes nothing.
func (c *conn) recheckSession() {
	if !c.checking.CompareAndSwap(false, true) {
		return
	}
	defer c.checking.Store(false)
	c.privMu.Lock()
	member, cookie := c.member, c.cookie
	c.privMu.Unlock()
	if member == "" {
		return
	}
	ctx, cancel := context.WithTimeout(c.ctx, 30*time.Second)
	defer cancel()
	m, err := c.g.sessions.CheckCookie(ctx, cookie)
	status, detail := 401, "your session ended; sign in again"
	var aal *auth.AAL2Error
	switch {
	case err == nil && m.ID == member:
		return
	case errors.Is(err, auth.ErrUnavailable), c.ctx.Err() != nil:
		return
	case errors.As(err, &aal):
		status, detail = 403, "this session needs the second factor"
	}
	c.privMu.Lock()
	if c.member != member {
		c.privMu.Unlock()
		return
	}
	subs := c.priv
	c.priv, c.member, c.cookie = nil, "", ""
	c.privMu.Unlock()
	for _, p := range subs {
		p.cancel()
		c.dropPending(p.key)
		c.control(&errorMsg{Type: "error", Channel: p.channel, Exchange: p.exchange,
			Error: problemf(status, "session-ended", "", "%s", detail)})
	}
}

// sessionDue reports whether the connection's session should be re-checked now (and schedules the next check).
func (c *conn) sessionDue(now int64, every time.Duration) bool {
	next := c.nextSession.Load()
	if next == 0 || now < next {
		return false
	}
	c.nextSession.Store(now + int64(every))
	return true
}
