package binance

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// marketSession is one StreamMarket call: its subscriptions, one feed per (market, route), the synced books.
type marketSession struct {
	s      *Server
	cfg    config
	ctx    context.Context
	send   chan *exchangev1.MarketEvent
	mu     sync.Mutex
	subs   map[string]*exchangev1.Subscription // by stream name
	books  map[string]*BookSync                // by stream name of the depth stream
	lastTr map[string]int64                    // last trade id per trade stream (overlap dedupe)
	feeds  map[string]*feed
	wg     sync.WaitGroup
}

func streamName(sub *exchangev1.Subscription) (Market, string, error) {
	m, err := marketOf(sub.GetMarketType())
	if err != nil {
		return 0, "", err
	}
	sym := strings.ToLower(sub.GetSymbol())
	switch sub.GetChannel() {
	case exchangev1.Channel_CHANNEL_BOOK:
		return m, sym + "@depth@100ms", nil
	case exchangev1.Channel_CHANNEL_TRADES:
		return m, sym + "@trade", nil
	case exchangev1.Channel_CHANNEL_TICKER:
		return m, sym + "@ticker", nil
	case exchangev1.Channel_CHANNEL_CANDLES:
		if !validInterval(m, sub.GetInterval()) {
			return 0, "", fmt.Errorf("interval %q is not offered", sub.GetInterval())
		}
		return m, sym + "@kline_" + sub.GetInterval(), nil
	case exchangev1.Channel_CHANNEL_MARK_PRICE:
		if m != Futures {
			return 0, "", fmt.Errorf("mark price streams are perpetual only")
		}
		return m, sym + "@markPrice@1s", nil
	}
	return 0, "", fmt.Errorf("channel %v is not supported", sub.GetChannel())
}

// feedKey: spot uses one connection; futures splits depth (/public) from the rest (/market) as Binance now requires.
func feedKey(m Market, stream string) string {
	if m == Spot {
		return "spot"
	}
	if strings.Contains(stream, "@depth") {
		return "futures/public"
	}
	return "futures/market"
}

func (ms *marketSession) feedURL(key string) func([]string) string {
	switch key {
	case "futures/public":
		return func(s []string) string { return combinedStreamURL(ms.cfg.endpoints.FuturesWS+"/public", s) }
	case "futures/market":
		return func(s []string) string { return combinedStreamURL(ms.cfg.endpoints.FuturesWS+"/market", s) }
	}
	return func(s []string) string { return combinedStreamURL(ms.cfg.endpoints.SpotWS, s) }
}

// StreamMarket serves subscriptions over Binance's combined streams.
func (s *Server) StreamMarket(stream exchangev1.Exchange_StreamMarketServer) error {
	_, cfg := s.client()
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	ms := &marketSession{s: s, cfg: cfg, ctx: ctx, send: make(chan *exchangev1.MarketEvent, 1024),
		subs: map[string]*exchangev1.Subscription{}, books: map[string]*BookSync{}, lastTr: map[string]int64{}, feeds: map[string]*feed{}}
	defer ms.wg.Wait()
	errc := make(chan error, 2)
	ms.wg.Add(1)
	go func() { // sender: the only goroutine calling stream.Send
		defer ms.wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-ms.send:
				if err := stream.Send(ev); err != nil {
					errc <- err
					cancel()
					return
				}
			}
		}
	}()
	ms.wg.Add(1)
	go func() { // receiver of host requests
		defer ms.wg.Done()
		for {
			req, err := stream.Recv()
			if err != nil {
				if err != io.EOF {
					errc <- err
				}
				cancel()
				return
			}
			ms.handle(req)
		}
	}()
	<-ctx.Done()
	select {
	case err := <-errc:
		if stream.Context().Err() != nil {
			return nil
		}
		return err
	default:
		return nil
	}
}

func (ms *marketSession) emit(ev *exchangev1.MarketEvent) {
	select {
	case ms.send <- ev:
	case <-ms.ctx.Done():
	}
}

func statusEv(state exchangev1.StreamStatus_State, reqID, msg string, e *sdk.Error) *exchangev1.MarketEvent {
	st := &exchangev1.StreamStatus{State: state, RequestId: reqID, Message: msg}
	if e != nil {
		st.Error = e.Detail
	}
	return &exchangev1.MarketEvent{Time: time.Now().UnixMilli(), Event: &exchangev1.MarketEvent_Status{Status: st}}
}

func (ms *marketSession) handle(req *exchangev1.StreamMarketRequest) {
	op := req.GetOp()
	if op != exchangev1.StreamMarketRequest_OP_SUBSCRIBE && op != exchangev1.StreamMarketRequest_OP_UNSUBSCRIBE {
		e := sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "op is required")
		ms.emit(statusEv(exchangev1.StreamStatus_STATE_ERROR, req.GetRequestId(), e.Message, e))
		return
	}
	type change struct {
		m      Market
		stream string
		sub    *exchangev1.Subscription
	}
	var changes []change
	for _, sub := range req.GetSubscriptions() {
		m, name, err := streamName(sub)
		if err != nil {
			e := sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "%v", err)
			ms.emit(statusEv(exchangev1.StreamStatus_STATE_ERROR, req.GetRequestId(), e.Message, e))
			return
		}
		if op == exchangev1.StreamMarketRequest_OP_SUBSCRIBE {
			if _, _, err := ms.s.instrument(ms.ctx, sub.GetMarketType(), sub.GetSymbol()); err != nil {
				e, _ := err.(*sdk.Error)
				if e == nil {
					e = sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "%v", err)
				}
				ms.emit(statusEv(exchangev1.StreamStatus_STATE_ERROR, req.GetRequestId(), e.Message, e))
				return
			}
		}
		changes = append(changes, change{m, name, sub})
	}
	ms.mu.Lock()
	touched := map[string]Market{}
	var newBooks []string
	for _, c := range changes {
		touched[feedKey(c.m, c.stream)] = c.m
		if op == exchangev1.StreamMarketRequest_OP_SUBSCRIBE {
			if _, dup := ms.subs[c.stream]; dup {
				continue
			}
			ms.subs[c.stream] = c.sub
			if c.sub.GetChannel() == exchangev1.Channel_CHANNEL_BOOK {
				depth := int(c.sub.GetDepth())
				if depth <= 0 {
					depth = defaultBookDepth
				}
				ms.books[c.stream] = NewBookSync(c.m == Futures, depth)
				newBooks = append(newBooks, c.stream)
			}
		} else {
			delete(ms.subs, c.stream)
			delete(ms.books, c.stream)
			delete(ms.lastTr, c.stream)
		}
	}
	for key, m := range touched {
		var names []string
		for name, sub := range ms.subs {
			if sm, _ := marketOf(sub.GetMarketType()); sm == m && feedKey(m, name) == key {
				names = append(names, name)
			}
		}
		f, ok := ms.feeds[key]
		if !ok {
			f = newFeed(key, ms.feedURL(key), ms.cfg.wsMaxLifetime, ms.s.log)
			ms.feeds[key] = f
			ms.wg.Add(2)
			go func() { defer ms.wg.Done(); f.run(ms.ctx) }()
			go func() { defer ms.wg.Done(); ms.consume(m, f) }()
		}
		f.SetStreams(names)
	}
	ms.mu.Unlock()
	state := exchangev1.StreamStatus_STATE_SUBSCRIBED
	if op == exchangev1.StreamMarketRequest_OP_UNSUBSCRIBE {
		state = exchangev1.StreamStatus_STATE_UNSUBSCRIBED
	}
	ms.emit(statusEv(state, req.GetRequestId(), "", nil))
	for _, name := range newBooks {
		ms.snapshot(name)
	}
}

// snapshot fetches a REST depth snapshot for a book stream in the background and applies it.
func (ms *marketSession) snapshot(name string) {
	ms.wg.Add(1)
	go func() {
		defer ms.wg.Done()
		for attempt := 0; ; attempt++ {
			// Let the stream buffer a few diffs first, as the procedure asks.
			select {
			case <-ms.ctx.Done():
				return
			case <-time.After(300*time.Millisecond + backoff(attempt)/4):
			}
			ms.mu.Lock()
			sub, ok := ms.subs[name]
			ms.mu.Unlock()
			if !ok {
				return
			}
			m, _ := marketOf(sub.GetMarketType())
			limit := 1000
			d, err := ms.s.fetchDepth(ms.ctx, m, sub.GetSymbol(), limit)
			if err != nil {
				ms.s.log.Warn("binance depth snapshot failed", "symbol", sub.GetSymbol(), "err", err)
				continue
			}
			ms.mu.Lock()
			b, ok := ms.books[name]
			if !ok {
				ms.mu.Unlock()
				return
			}
			snap, deltas, stale, err := b.ApplySnapshot(d)
			if err == nil && !stale {
				ms.emit(&exchangev1.MarketEvent{Subscription: sub, Time: d.Time, Event: &exchangev1.MarketEvent_BookSnapshot{BookSnapshot: snap}})
				for _, dl := range deltas {
					ms.emit(&exchangev1.MarketEvent{Subscription: sub, Time: d.Time, Event: &exchangev1.MarketEvent_BookDelta{BookDelta: dl}})
				}
				ms.mu.Unlock()
				return
			}
			ms.mu.Unlock()
		}
	}()
}

// consume turns feed frames into events; it owns nothing but reads the session under its lock.
func (ms *marketSession) consume(m Market, f *feed) {
	for {
		var fm feedMsg
		select {
		case <-ms.ctx.Done():
			return
		case fm = <-f.out:
		}
		switch fm.state {
		case feedReconnecting:
			ms.emit(statusEv(exchangev1.StreamStatus_STATE_RECONNECTING, "", f.name+" connection lost", nil))
			continue
		case feedResynced:
			ms.mu.Lock()
			var rebuild []string
			for name, b := range ms.books {
				if feedKey(m, name) == f.name {
					b.Reset()
					rebuild = append(rebuild, name)
				}
			}
			ms.mu.Unlock()
			ms.emit(statusEv(exchangev1.StreamStatus_STATE_RESYNCED, "", f.name+" reconnected", nil))
			for _, name := range rebuild {
				ms.snapshot(name)
			}
			continue
		}
		msg, err := ParseStreamMessage(fm.data)
		if err != nil || msg.Stream == "" {
			continue
		}
		ms.dispatch(m, msg)
	}
}

func (ms *marketSession) dispatch(m Market, msg *StreamMessage) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	sub, ok := ms.subs[msg.Stream]
	if !ok {
		return
	}
	ev := &exchangev1.MarketEvent{Subscription: sub}
	switch sub.GetChannel() {
	case exchangev1.Channel_CHANNEL_BOOK:
		d, err := ParseDepthEvent(msg.Data)
		if err != nil {
			ms.s.log.Warn("binance depth event unreadable", "stream", msg.Stream, "err", err)
			return
		}
		b := ms.books[msg.Stream]
		delta, gap, err := b.OnEvent(*d)
		if err != nil {
			return
		}
		if gap {
			ms.emit(statusEv(exchangev1.StreamStatus_STATE_RESYNCED, "", msg.Stream+" gap: rebuilding the book", nil))
			ms.snapshot(msg.Stream)
			return
		}
		if delta == nil {
			return
		}
		ev.Time, ev.Event = d.Time, &exchangev1.MarketEvent_BookDelta{BookDelta: delta}
	case exchangev1.Channel_CHANNEL_TRADES:
		tr, t, ok, err := ParseTradeEvent(msg.Data)
		if err != nil || !ok {
			return
		}
		id := atoiSafe(tr.Id)
		if id <= ms.lastTr[msg.Stream] {
			return // seen on the other connection during a rollover
		}
		ms.lastTr[msg.Stream] = id
		ev.Time, ev.Event = t, &exchangev1.MarketEvent_Trade{Trade: tr}
	case exchangev1.Channel_CHANNEL_TICKER:
		tk, err := ParseTickerEvent(m, msg.Data)
		if err != nil {
			return
		}
		ev.Time, ev.Event = tk.Time, &exchangev1.MarketEvent_Ticker{Ticker: tk}
	case exchangev1.Channel_CHANNEL_CANDLES:
		c, _, t, err := ParseKlineEvent(msg.Data)
		if err != nil {
			return
		}
		ev.Time, ev.Event = t, &exchangev1.MarketEvent_Candle{Candle: c}
	case exchangev1.Channel_CHANNEL_MARK_PRICE:
		u, t, err := ParseMarkPriceEvent(msg.Data)
		if err != nil {
			return
		}
		ev.Time, ev.Event = t, &exchangev1.MarketEvent_MarkPrice{MarkPrice: u}
	default:
		return
	}
	ms.emit(ev)
}

func atoiSafe(s string) int64 {
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

// accountQueue bounds the events waiting for the host's stream.
const accountQueue = 1024

// StreamAccount follows the account's spot and USDT-M user data streams: a listen key per market (created, kept
// alive every 30 minutes, closed at the end), its WebSocket, and a new key and connection when the key expires or
// the connection drops. It answers as exchange.v1 1.1 asks (sdk.AccountSender): once both markets are connected, a
// snapshot (open orders of both markets, open algo orders, positions, balances of both wallets) and STATE_CONNECTED,
// then every order, fill, algo order, position and spot balance event with the next sequence. Binance's user
// streams carry no sequence, so a gap shows only as a lost connection or key: after the reconnect the stream sends
// STATE_RESYNCED and a fresh snapshot. Events are never dropped or merged: the queues are bounded and a full queue
// holds the socket reader (backpressure) until the host reads. Bad credentials end the stream with AUTH_FAILED
// (PERMISSION_DENIED when Binance says the key may not do it).
func (s *Server) StreamAccount(req *exchangev1.StreamAccountRequest, stream exchangev1.Exchange_StreamAccountServer) error {
	cr := creds(req.GetAccount())
	if cr.APIKey == "" || cr.APISecret == "" {
		return sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED, "account api_key and api_secret are required")
	}
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	c, cfg := s.client()
	out := make(chan userMsg, accountQueue)
	errCh := make(chan error, 2)
	var wg sync.WaitGroup
	var live sync.WaitGroup
	var failed atomic.Int32
	var dead [Futures + 1]atomic.Bool // per Market: its user stream gave up (the key may not use it)
	live.Add(2)
	for _, m := range []Market{Spot, Futures} {
		u := &userStream{m: m, cr: cr, c: c, base: cfg.endpoints.ws(m), keepalive: s.userKeepalive, log: s.log, out: out, live: &live}
		if m == Futures {
			u.base += "/private"
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := u.run(ctx)
			if err != nil {
				dead[m].Store(true)
			}
			u.liveOnce.Do(u.live.Done) // never leave StreamAccount waiting on a market that gave up
			if err == nil {
				return
			}
			// One market refusing the key (a spot-only key has no futures rights) leaves the other running; the
			// stream ends with the error when both refuse.
			ev := statusAccountEv(exchangev1.StreamStatus_STATE_ERROR, u.m.String()+" user data stream: "+sdk.MessageOf(err))
			ev.GetStatus().Error = sdk.DetailOf(err)
			u.emit(ctx, userMsg{ev: ev})
			if failed.Add(1) == 2 {
				errCh <- err
				cancel()
			}
		}()
	}
	liveCh := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		live.Wait()
		close(liveCh)
	}()
	defer wg.Wait()
	defer cancel()
	send := sdk.NewAccountSender(stream)
	alive := func(m Market) bool { return !dead[m].Load() }
	ended := func() error {
		select {
		case err := <-errCh:
			// Forward what was queued before the failure (the markets' ERROR statuses) if the host still listens.
			for {
				select {
				case msg := <-out:
					if msg.ev != nil && send.Send(msg.ev) != nil {
						return err
					}
				default:
					return err
				}
			}
		default:
			return nil
		}
	}
	// Nothing is sent before the first snapshot; events of the meantime wait in the queue.
	select {
	case <-ctx.Done():
		return ended()
	case <-liveCh:
	}
	if ctx.Err() != nil {
		return ended()
	}
	snap, err := s.accountSnapshotRetry(ctx, req.GetAccount(), alive)
	if err != nil {
		if ctx.Err() != nil {
			return ended()
		}
		return err
	}
	if err := send.Snapshot(snap); err != nil {
		return err
	}
	if err := send.Status(exchangev1.StreamStatus_STATE_CONNECTED, "spot and futures user data streams connected"); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return ended()
		case msg := <-out:
			if msg.resync != "" {
				snap, err := s.accountSnapshotRetry(ctx, req.GetAccount(), alive)
				if err != nil {
					if ctx.Err() != nil {
						return ended()
					}
					return err
				}
				if err := send.Resynced(msg.resync, snap); err != nil {
					return err
				}
				continue
			}
			if err := send.Send(msg.ev); err != nil {
				return err
			}
		}
	}
}

// userMsg is what a market's user stream hands StreamAccount: an event, or a request to resync (re-read the account
// and send STATE_RESYNCED with a snapshot) after a reconnect.
type userMsg struct {
	ev     *exchangev1.AccountEvent
	resync string
}

// accountSnapshotRetry reads a snapshot, retrying transient failures with backoff until ctx ends.
func (s *Server) accountSnapshotRetry(ctx context.Context, acct *exchangev1.AccountRef, alive func(Market) bool) (*exchangev1.AccountSnapshot, error) {
	for attempt := 0; ; attempt++ {
		snap, err := s.accountSnapshot(ctx, acct, alive)
		if err == nil {
			return snap, nil
		}
		if fatal(err) || ctx.Err() != nil {
			return nil, err
		}
		s.log.Warn("binance account snapshot", "err", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(backoff(attempt)):
		}
	}
}

// accountSnapshot reads the account's whole state over REST: open orders of both markets, open algo orders,
// positions, and the balances of both wallets. A market whose user stream gave up (the key may not use it) is left
// out.
func (s *Server) accountSnapshot(ctx context.Context, acct *exchangev1.AccountRef, alive func(Market) bool) (*exchangev1.AccountSnapshot, error) {
	snap := &exchangev1.AccountSnapshot{}
	c, _ := s.client()
	if alive(Spot) {
		open, err := s.ListOpenOrders(ctx, &exchangev1.ListOpenOrdersRequest{Account: acct, MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT})
		if err != nil {
			return nil, err
		}
		snap.OpenOrders = append(snap.OpenOrders, open.GetOrders()...)
		bs, err := call(ctx, c, rest{m: Spot, method: http.MethodGet, path: pathSpotAccount, q: url.Values{"omitZeroBalances": {"true"}}, weight: 20, acct: acct, what: "account"}, ParseSpotAccount)
		if err != nil {
			return nil, err
		}
		snap.Balances = append(snap.Balances, bs...)
		fs, err := call(ctx, c, rest{m: Spot, method: http.MethodPost, path: pathFundingAsset, weight: 1, acct: acct, what: "funding assets"}, ParseFundingAssets)
		if err != nil {
			return nil, err
		}
		snap.Balances = append(snap.Balances, fs...)
	}
	if alive(Futures) {
		// One openOrders answer holds both: plain orders and waiting conditional ones.
		type open struct {
			orders []*exchangev1.Order
			algos  []*exchangev1.AlgoOrder
		}
		both, err := call(ctx, c, rest{m: Futures, method: http.MethodGet, path: pathFutOpenOrders, weight: 40, acct: acct, what: "openOrders"},
			func(b []byte) (o open, err error) {
				if o.orders, err = ParseOrders(Futures, b); err == nil {
					o.algos, err = ParseAlgoOrders(b)
				}
				return o, err
			})
		if err != nil {
			return nil, err
		}
		snap.OpenOrders = append(snap.OpenOrders, both.orders...)
		snap.AlgoOrders = both.algos
		ps, err := s.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: acct})
		if err != nil {
			return nil, err
		}
		snap.Positions = ps.GetPositions()
	}
	return snap, nil
}

func statusAccountEv(state exchangev1.StreamStatus_State, msg string) *exchangev1.AccountEvent {
	return &exchangev1.AccountEvent{Event: &exchangev1.AccountEvent_Status{
		Status: &exchangev1.StreamStatus{State: state, Message: msg}}}
}

// userStream keeps one market's user data stream alive.
type userStream struct {
	m         Market
	cr        Credentials
	c         *RESTClient
	base      string
	keepalive time.Duration
	log       *slog.Logger
	out       chan<- userMsg
	live      *sync.WaitGroup // Done once, at the first connection
	liveOnce  sync.Once
}

func (u *userStream) keyPath() string {
	if u.m == Futures {
		return pathFutListenKey
	}
	return pathSpotListenKey
}

// emit queues a message for StreamAccount, waiting while the queue is full (never dropping one).
func (u *userStream) emit(ctx context.Context, msg userMsg) bool {
	select {
	case u.out <- msg:
		return true
	case <-ctx.Done():
		return false
	}
}

func (u *userStream) newKey(ctx context.Context) (string, error) {
	body, err := u.c.keyed(ctx, u.m, http.MethodPost, u.keyPath(), nil, 2, u.cr)
	if err != nil {
		return "", err
	}
	return ParseListenKey(body)
}

func (u *userStream) keyParams(key string) url.Values {
	if u.m == Futures {
		return nil // futures keys are per API key: no parameter
	}
	return url.Values{"listenKey": {key}}
}

func fatal(err error) bool {
	r := sdk.DetailOf(err).GetReason()
	return r == exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED || r == exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED
}

// run connects, serves and reconnects until ctx ends; it returns an error only for a failure retrying cannot fix.
func (u *userStream) run(ctx context.Context) error {
	connectedBefore := false
	for attempt := 0; ctx.Err() == nil; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(backoff(attempt - 1)):
			}
		}
		key, err := u.newKey(ctx)
		if err != nil {
			if fatal(err) {
				return err
			}
			u.log.Warn("binance listen key", "market", u.m.String(), "err", err)
			continue
		}
		dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
		conn, _, err := websocket.Dial(dctx, userStreamURL(u.base, key), nil)
		dcancel()
		if err != nil {
			u.log.Warn("binance user stream dial", "market", u.m.String(), "err", err)
			continue
		}
		conn.SetReadLimit(4 << 20)
		attempt = 0
		if connectedBefore {
			u.emit(ctx, userMsg{resync: u.m.String() + " user data stream reconnected; events of the gap were re-read into a snapshot"})
		}
		connectedBefore = true
		u.liveOnce.Do(u.live.Done)
		why := u.serve(ctx, conn, key)
		_ = conn.Close(websocket.StatusNormalClosure, "")
		if ctx.Err() != nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_, _ = u.c.keyed(cctx, u.m, http.MethodDelete, u.keyPath(), u.keyParams(key), 2, u.cr)
			cancel()
			return nil
		}
		u.log.Info("binance user stream reconnecting", "market", u.m.String(), "reason", why)
		u.emit(ctx, userMsg{ev: statusAccountEv(exchangev1.StreamStatus_STATE_RECONNECTING, u.m.String()+" user data stream: "+why)})
	}
	return nil
}

// serve reads one connection until it ends, the key expires or ctx ends, keeping the key alive; it says why it
// stopped.
func (u *userStream) serve(ctx context.Context, conn *websocket.Conn, key string) string {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	msgs := make(chan []byte, 256)
	readErr := make(chan error, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			_, data, err := conn.Read(cctx)
			if err != nil {
				readErr <- err
				return
			}
			select {
			case msgs <- data:
			case <-cctx.Done():
				return
			}
		}
	}()
	keep := time.NewTicker(u.keepalive)
	defer keep.Stop()
	ping := time.NewTicker(30 * time.Second)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			return "closing"
		case err := <-readErr:
			return fmt.Sprintf("connection lost: %v", err)
		case <-ping.C:
			pctx, pcancel := context.WithTimeout(cctx, 10*time.Second)
			err := conn.Ping(pctx)
			pcancel()
			if err != nil {
				return fmt.Sprintf("ping failed: %v", err)
			}
		case <-keep.C:
			_, err := u.c.keyed(ctx, u.m, http.MethodPut, u.keyPath(), u.keyParams(key), 2, u.cr)
			if err != nil && ctx.Err() == nil {
				if d := sdk.DetailOf(err); d.GetExchangeCode() == "-1125" || fatal(err) {
					return "listen key no longer valid"
				}
				u.log.Warn("binance listen key keepalive", "market", u.m.String(), "err", err)
			}
		case data := <-msgs:
			ev, err := ParseUserEvent(u.m, data)
			if err != nil {
				u.log.Warn("binance user event", "market", u.m.String(), "err", err, "body", truncate(data, 200))
				continue
			}
			if ev.KeyExpired {
				return "listen key expired"
			}
			for _, e := range ev.Events {
				if !u.emit(ctx, userMsg{ev: e}) {
					return "closing"
				}
			}
		}
	}
}

func truncate(b []byte, n int) string {
	s := string(b)
	if len(s) > n {
		return s[:n] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
