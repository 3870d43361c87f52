package okx

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// streamQueue bounds the events waiting for the host; a full queue blocks the WebSocket reader (backpressure).
const streamQueue = 1024

// msub is one host subscription and the OKX channel behind it.
type msub struct {
	sub  *exchangev1.Subscription
	in   *Instrument
	arg  wsArg
	biz  bool
	mark bool // CHANNEL_MARK_PRICE also listens to funding-rate
}

// bookState is the local book of one instrument and the sequence the host sees.
type bookState struct {
	book   Book
	synced bool
	seq    int64 // our own contiguous sequence, growing across resyncs
}

type markState struct {
	mark, index, rate string
	next              int64
}

// marketSession serves one StreamMarket call.
type marketSession struct {
	s   *Server
	st  Settings
	out chan *exchangev1.MarketEvent

	mu     sync.Mutex
	subs   map[string]*msub // by subscription key
	books  map[string]*bookState
	marks  map[string]*markState
	pub    *wsConn
	biz    *wsConn
	closed bool
	wg     sync.WaitGroup
}

func subKey(s *exchangev1.Subscription) string {
	return s.GetChannel().String() + "|" + s.GetSymbol() + "|" + s.GetInterval()
}

// StreamMarket serves market subscriptions from OKX's public and business WebSockets.
func (s *Server) StreamMarket(stream exchangev1.Exchange_StreamMarketServer) error {
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()
	m := &marketSession{s: s, st: s.cfg(), out: make(chan *exchangev1.MarketEvent, streamQueue), subs: map[string]*msub{},
		books: map[string]*bookState{}, marks: map[string]*markState{}}
	defer func() {
		cancel()
		m.mu.Lock()
		m.closed = true // no connection starts after this
		m.mu.Unlock()
		m.wg.Wait()
	}()
	// The receiving goroutine belongs to the RPC: Recv returns once the stream ends, which gRPC guarantees right
	// after this handler returns.
	go func() {
		for {
			req, err := stream.Recv()
			if err != nil {
				cancel()
				return
			}
			m.handle(ctx, req)
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-m.out:
			if err := stream.Send(ev); err != nil {
				return err
			}
		}
	}
}

func (m *marketSession) emit(ctx context.Context, ev *exchangev1.MarketEvent) {
	select {
	case m.out <- ev:
	case <-ctx.Done():
	}
}

// conn returns (starting when needed) the public or business connection.
func (m *marketSession) conn(ctx context.Context, biz bool) *wsConn {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := &m.pub
	url := m.st.WSPublicURL
	if biz {
		p, url = &m.biz, m.st.WSBusinessURL
	}
	if *p == nil {
		c := newWSConn(url, nil, m.st, m.s.log)
		if m.closed {
			return c // the session is ending: a connection that never starts
		}
		c.onMsg = m.onMsg
		c.onState = func(ctx context.Context, st connState, err error) { m.onState(ctx, c, st, err) }
		*p = c
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			_ = c.run(ctx)
		}()
	}
	return *p
}

func (m *marketSession) handle(ctx context.Context, req *exchangev1.StreamMarketRequest) {
	for _, sub := range req.GetSubscriptions() {
		switch req.GetOp() {
		case exchangev1.StreamMarketRequest_OP_SUBSCRIBE:
			ms, err := m.resolve(ctx, sub)
			if err != nil {
				m.emit(ctx, statusEvent(sub, exchangev1.StreamStatus_STATE_ERROR, sdk.MessageOf(err), req.GetRequestId(), err))
				continue
			}
			m.mu.Lock()
			m.subs[subKey(sub)] = ms
			if sub.GetChannel() == exchangev1.Channel_CHANNEL_BOOK {
				if _, ok := m.books[ms.in.InstID]; !ok {
					m.books[ms.in.InstID] = &bookState{}
				}
			}
			m.mu.Unlock()
			c := m.conn(ctx, ms.biz)
			args := []wsArg{ms.arg}
			if ms.mark {
				args = append(args, wsArg{"channel": "funding-rate", "instId": ms.in.InstID})
			}
			m.emit(ctx, statusEvent(sub, exchangev1.StreamStatus_STATE_SUBSCRIBED, "subscribed", req.GetRequestId(), nil))
			c.subscribe(ctx, args...)
		case exchangev1.StreamMarketRequest_OP_UNSUBSCRIBE:
			m.mu.Lock()
			ms := m.subs[subKey(sub)]
			delete(m.subs, subKey(sub))
			if ms != nil && sub.GetChannel() == exchangev1.Channel_CHANNEL_BOOK {
				delete(m.books, ms.in.InstID)
			}
			m.mu.Unlock()
			if ms != nil {
				m.conn(ctx, ms.biz).unsubscribe(ctx, ms.arg)
			}
			m.emit(ctx, statusEvent(sub, exchangev1.StreamStatus_STATE_UNSUBSCRIBED, "unsubscribed", req.GetRequestId(), nil))
		default:
			m.emit(ctx, statusEvent(sub, exchangev1.StreamStatus_STATE_ERROR, "unknown op", req.GetRequestId(),
				sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "op %v", req.GetOp())))
		}
	}
}

func (m *marketSession) resolve(ctx context.Context, sub *exchangev1.Subscription) (*msub, error) {
	in, err := m.s.instrument(ctx, sub.GetMarketType(), sub.GetSymbol())
	if err != nil {
		return nil, err
	}
	ms := &msub{sub: sub, in: in}
	switch sub.GetChannel() {
	case exchangev1.Channel_CHANNEL_BOOK:
		ms.arg = wsArg{"channel": "books", "instId": in.InstID}
	case exchangev1.Channel_CHANNEL_TRADES:
		ms.arg = wsArg{"channel": "trades", "instId": in.InstID}
	case exchangev1.Channel_CHANNEL_TICKER:
		ms.arg = wsArg{"channel": "tickers", "instId": in.InstID}
	case exchangev1.Channel_CHANNEL_CANDLES:
		ch, ok := candleChannelOf(sub.GetInterval())
		if !ok {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "interval", "interval %q is not offered", sub.GetInterval())
		}
		ms.arg, ms.biz = wsArg{"channel": ch, "instId": in.InstID}, true
	case exchangev1.Channel_CHANNEL_MARK_PRICE:
		if in.MarketType != exchangev1.MarketType_MARKET_TYPE_SWAP {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "market_type", "mark price is a SWAP channel")
		}
		ms.arg, ms.mark = wsArg{"channel": "mark-price", "instId": in.InstID}, true
	default:
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "channel", "channel %v is not offered", sub.GetChannel())
	}
	return ms, nil
}

func (m *marketSession) onState(ctx context.Context, c *wsConn, st connState, err error) {
	switch st {
	case stateConnected:
		m.emit(ctx, statusEvent(nil, exchangev1.StreamStatus_STATE_CONNECTED, "connected to "+c.url, "", nil))
	case stateReconnecting:
		m.mu.Lock()
		for _, b := range m.books {
			b.synced = false
		}
		m.mu.Unlock()
		msg := "connection to OKX lost"
		if err != nil {
			msg += ": " + err.Error()
		}
		m.emit(ctx, statusEvent(nil, exchangev1.StreamStatus_STATE_RECONNECTING, msg, "", nil))
	case stateResubscribed:
		m.emit(ctx, statusEvent(nil, exchangev1.StreamStatus_STATE_RESYNCED, "reconnected; fresh snapshots follow", "", nil))
	}
}

// subsFor returns the host subscriptions fed by an OKX channel of one instrument.
func (m *marketSession) subsFor(channel, instID string) []*msub {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*msub
	for _, ms := range m.subs {
		if ms.in.InstID != instID {
			continue
		}
		if ms.arg["channel"] == channel || (ms.mark && channel == "funding-rate") {
			out = append(out, ms)
		}
	}
	return out
}

func (m *marketSession) onMsg(ctx context.Context, msg *wsMsg) {
	if msg.Event != "" {
		if msg.Event == "error" {
			err := apiError(msg.Code, msg.Msg)
			m.emit(ctx, statusEvent(nil, exchangev1.StreamStatus_STATE_ERROR, "OKX: "+msg.Msg, "", err))
		}
		return
	}
	channel, instID := msg.Arg["channel"], msg.Arg["instId"]
	subs := m.subsFor(channel, instID)
	if len(subs) == 0 {
		return
	}
	in := subs[0].in
	switch {
	case channel == "books":
		m.onBook(ctx, subs[0], msg)
	case channel == "trades":
		ts, err := ParseTrades(msg.Data, in.ContractSize)
		if err != nil {
			m.s.log.Warn("okx: bad trades message", "error", err)
			return
		}
		for _, t := range ts {
			m.emit(ctx, &exchangev1.MarketEvent{Subscription: subs[0].sub, Time: t.Time, Event: &exchangev1.MarketEvent_Trade{Trade: t}})
		}
	case channel == "tickers":
		rows, err := ParseTickers(msg.Data)
		if err != nil {
			m.s.log.Warn("okx: bad tickers message", "error", err)
			return
		}
		for _, r := range rows {
			t, err := tickerProto(r, in)
			if err != nil {
				m.s.log.Warn("okx: bad ticker", "error", err)
				continue
			}
			if in.MarketType == exchangev1.MarketType_MARKET_TYPE_SWAP {
				m.s.fundingRates().fill(t)
			}
			m.emit(ctx, &exchangev1.MarketEvent{Subscription: subs[0].sub, Time: t.Time, Event: &exchangev1.MarketEvent_Ticker{Ticker: t}})
		}
	case channel == "mark-price" || channel == "funding-rate":
		m.onMark(ctx, subs, channel, msg.Data)
	default: // candles
		rows, err := decodeList[[]string](msg.Data)
		if err != nil {
			m.s.log.Warn("okx: bad candle message", "error", err)
			return
		}
		for _, r := range rows {
			c, err := candleRow(r, in.MarketType)
			if err != nil {
				m.s.log.Warn("okx: bad candle", "error", err)
				continue
			}
			for _, ms := range subs {
				m.emit(ctx, &exchangev1.MarketEvent{Subscription: ms.sub, Time: c.OpenTime, Event: &exchangev1.MarketEvent_Candle{Candle: c}})
			}
		}
	}
}

func (m *marketSession) onMark(ctx context.Context, subs []*msub, channel string, data json.RawMessage) {
	instID := subs[0].in.InstID
	m.mu.Lock()
	st := m.marks[instID]
	if st == nil {
		st = &markState{}
		m.marks[instID] = st
	}
	var ts int64
	if channel == "mark-price" {
		rows, err := decodeList[rawMark](data)
		if err == nil && len(rows) > 0 {
			st.mark, _ = canonStr("markPx", rows[0].MarkPx)
			ts, _ = parseMs("ts", rows[0].Ts)
		}
	} else {
		rows, err := decodeList[rawFunding](data)
		if err == nil && len(rows) > 0 {
			m.s.fundingRates().put(rows[0])
			st.rate, _ = canonStr("fundingRate", rows[0].FundingRate)
			st.next, _ = parseMs("fundingTime", rows[0].FundingTime)
			ts, _ = parseMs("ts", rows[0].Ts)
		}
	}
	u := &exchangev1.MarkPriceUpdate{MarkPrice: st.mark, IndexPrice: st.index, FundingRate: st.rate, NextFundingTime: st.next}
	m.mu.Unlock()
	if u.MarkPrice == "" {
		return
	}
	if ts == 0 {
		ts = time.Now().UnixMilli()
	}
	for _, ms := range subs {
		if ms.mark {
			m.emit(ctx, &exchangev1.MarketEvent{Subscription: ms.sub, Time: ts, Event: &exchangev1.MarketEvent_MarkPrice{MarkPrice: u}})
		}
	}
}

// onBook keeps the local book: a snapshot resets it, an update must follow the last seqId and match OKX's
// checksum; a failure resubscribes the channel for a fresh snapshot.
func (m *marketSession) onBook(ctx context.Context, ms *msub, msg *wsMsg) {
	rows, err := ParseBooks(msg.Data)
	if err != nil || len(rows) == 0 {
		m.s.log.Warn("okx: bad book message", "error", err)
		m.resync(ctx, ms, "malformed book message")
		return
	}
	r := rows[0]
	cs := ms.in.ContractSize
	ts, _ := parseMs("ts", r.Ts)
	m.mu.Lock()
	bs := m.books[ms.in.InstID]
	if bs == nil {
		m.mu.Unlock()
		return
	}
	if msg.Action == "snapshot" {
		bs.book.Reset(r)
		if err := bs.book.Verify(r); err != nil {
			bs.synced = false
			m.mu.Unlock()
			m.resync(ctx, ms, err.Error())
			return
		}
		wasSynced := bs.synced
		bs.synced = true
		bs.seq++
		bids, asks := bs.book.Levels(0, cs)
		ev := &exchangev1.MarketEvent{Subscription: ms.sub, Time: ts, Event: &exchangev1.MarketEvent_BookSnapshot{
			BookSnapshot: &exchangev1.BookUpdate{Bids: bids, Asks: asks, Sequence: bs.seq}}}
		m.mu.Unlock()
		_ = wasSynced
		m.emit(ctx, ev)
		return
	}
	if !bs.synced {
		m.mu.Unlock()
		return // waiting for the snapshot of a resync
	}
	if r.SeqID != nil && r.PrevSeqID != nil && *r.SeqID == *r.PrevSeqID && len(r.Bids) == 0 && len(r.Asks) == 0 {
		m.mu.Unlock()
		return // OKX's keep-alive update: nothing changed
	}
	if err := bs.book.Update(r); err != nil {
		bs.synced = false
		m.mu.Unlock()
		m.resync(ctx, ms, err.Error())
		return
	}
	if err := bs.book.Verify(r); err != nil {
		bs.synced = false
		m.mu.Unlock()
		m.resync(ctx, ms, err.Error())
		return
	}
	prev := bs.seq
	bs.seq++
	ev := &exchangev1.MarketEvent{Subscription: ms.sub, Time: ts, Event: &exchangev1.MarketEvent_BookDelta{
		BookDelta: &exchangev1.BookUpdate{Bids: levelsProto(r.Bids, cs), Asks: levelsProto(r.Asks, cs), Sequence: bs.seq, PrevSequence: prev}}}
	m.mu.Unlock()
	m.emit(ctx, ev)
}

// resync tells the host the book is being rebuilt and asks OKX for a new snapshot.
func (m *marketSession) resync(ctx context.Context, ms *msub, why string) {
	m.s.log.Warn("okx: book resync", "instId", ms.in.InstID, "reason", why)
	m.emit(ctx, statusEvent(ms.sub, exchangev1.StreamStatus_STATE_RESYNCED, "book resync: "+why+"; a fresh snapshot follows", "", nil))
	m.conn(ctx, false).resubscribe(ctx, ms.arg)
}

// ---------------------------------------------------------------------------------------------------------------
// StreamAccount

// accountItem is what the WebSocket side hands the sending side of StreamAccount: an event, a status, or a
// request to read the account afresh (snapshot, with resync when it follows a gap).
type accountItem struct {
	ev       *exchangev1.AccountEvent
	state    exchangev1.StreamStatus_State
	msg      string
	snapshot bool
}

// StreamAccount logs in to the private WebSocket and, once every channel is subscribed, sends one snapshot of the
// account (open orders, positions, balances, waiting algo orders) read over REST, then the orders (with their
// fills), algo orders, positions and trading balances OKX pushes, each with the next sequence (sdk.AccountSender).
// After a reconnect or a message it cannot read it sends STATE_RESYNCED and a fresh snapshot. Events wait in a
// bounded queue; a full queue blocks the WebSocket reader, nothing is dropped.
func (s *Server) StreamAccount(req *exchangev1.StreamAccountRequest, stream exchangev1.Exchange_StreamAccountServer) error {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()
	st := s.cfg()
	out := make(chan accountItem, streamQueue)
	put := func(ctx context.Context, it accountItem) {
		select {
		case out <- it:
		case <-ctx.Done():
		}
	}
	c := newWSConn(st.WSPrivateURL, creds, st, s.log)
	c.subs = map[string]wsArg{}
	for _, a := range []wsArg{{"channel": "orders", "instType": "ANY"}, {"channel": "orders-algo", "instType": "ANY"},
		{"channel": "positions", "instType": "ANY"}, {"channel": "account"}} {
		c.subs[a.key()] = a
	}
	// The snapshot is read once OKX acknowledged every subscription of a session, so no event falls between the
	// snapshot and the first delta. Callbacks run on the connection's goroutine; mu guards against reordering.
	var mu sync.Mutex
	pendingAcks := 0
	c.onState = func(ctx context.Context, cs connState, err error) {
		mu.Lock()
		defer mu.Unlock()
		switch cs {
		case stateConnected, stateResubscribed:
			pendingAcks = len(c.subs)
		case stateReconnecting:
			pendingAcks = -1
			put(ctx, accountItem{state: exchangev1.StreamStatus_STATE_RECONNECTING, msg: "connection to OKX lost"})
		}
	}
	c.onMsg = func(ctx context.Context, m *wsMsg) {
		mu.Lock()
		defer mu.Unlock()
		switch m.Event {
		case "":
		case "error", "subscribe":
			if m.Event == "error" {
				put(ctx, accountItem{state: exchangev1.StreamStatus_STATE_ERROR, msg: "OKX: " + m.Code + " " + m.Msg})
			}
			// Every subscription is answered (acknowledged or refused): then the account is read.
			if pendingAcks > 0 {
				if pendingAcks--; pendingAcks == 0 {
					put(ctx, accountItem{snapshot: true, msg: "subscribed"})
				}
			}
			return
		default:
			return // login acknowledgements and notices
		}
		evs, err := s.accountEvents(ctx, m)
		if err != nil {
			s.log.Warn("okx: unreadable account event; reading the account again", "error", err)
			put(ctx, accountItem{snapshot: true, msg: "unreadable account event: " + err.Error()})
			return
		}
		for _, ev := range evs {
			put(ctx, accountItem{ev: ev})
		}
	}
	runErr := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		runErr <- c.run(ctx)
		cancel()
	}()
	defer wg.Wait()
	defer cancel()
	snd := sdk.NewAccountSender(stream)
	started := false
	for {
		select {
		case <-ctx.Done():
			select {
			case err := <-runErr:
				if err != nil {
					var se *sdk.Error
					if errors.As(err, &se) {
						return se
					}
					return sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED, "%v", err)
				}
			default:
			}
			return nil
		case it := <-out:
			var err error
			switch {
			case it.snapshot:
				snap, serr := s.accountSnapshot(ctx, req.GetAccount())
				if serr != nil {
					if ctx.Err() != nil {
						return nil
					}
					return serr
				}
				if started {
					err = snd.Resynced(it.msg+"; a fresh snapshot follows", snap)
				} else {
					err = snd.Snapshot(snap)
				}
				started = true
			case !started:
				// Nothing goes out before the first snapshot: its state covers what came before.
			case it.ev != nil:
				err = snd.Send(it.ev)
			default:
				err = snd.Status(it.state, it.msg)
			}
			if err != nil {
				return err
			}
		}
	}
}

// accountSnapshot reads the account's whole state over REST.
func (s *Server) accountSnapshot(ctx context.Context, acct *exchangev1.AccountRef) (*exchangev1.AccountSnapshot, error) {
	snap := &exchangev1.AccountSnapshot{}
	for _, mt := range []exchangev1.MarketType{exchangev1.MarketType_MARKET_TYPE_SPOT, exchangev1.MarketType_MARKET_TYPE_SWAP} {
		oo, err := s.ListOpenOrders(ctx, &exchangev1.ListOpenOrdersRequest{Account: acct, MarketType: mt})
		if err != nil {
			return nil, err
		}
		snap.OpenOrders = append(snap.OpenOrders, oo.GetOrders()...)
		for cursor := ""; ; {
			ao, err := s.ListAlgoOrders(ctx, &exchangev1.ListAlgoOrdersRequest{Account: acct, MarketType: mt,
				Page: &exchangev1.HistoryPage{Cursor: cursor}})
			if err != nil {
				return nil, err
			}
			snap.AlgoOrders = append(snap.AlgoOrders, ao.GetAlgoOrders()...)
			if cursor = ao.GetNextCursor(); cursor == "" {
				break
			}
		}
	}
	ps, err := s.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: acct})
	if err != nil {
		return nil, err
	}
	snap.Positions = ps.GetPositions()
	bs, err := s.GetBalances(ctx, &exchangev1.GetBalancesRequest{Account: acct})
	if err != nil {
		return nil, err
	}
	snap.Balances = bs.GetBalances()
	return snap, nil
}

// channelRows decodes a private channel's rows and hands each, with its instrument's size conversion, to each;
// rows of markets this plugin does not serve (futures, options) are skipped.
func channelRows[R any](ctx context.Context, s *Server, data json.RawMessage, inst func(R) (instType, instID string), each func(R, sizeConv) error) error {
	rows, err := decodeList[R](data)
	if err != nil {
		return err
	}
	for _, r := range rows {
		it, id := inst(r)
		if it != "" && marketTypeOf(it) == exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED {
			continue
		}
		cv, err := s.convFor(ctx, id)
		if err != nil {
			return err
		}
		if err := each(r, cv); err != nil {
			return err
		}
	}
	return nil
}

// accountEvents converts one private-channel message. A message it cannot read in full is an error: the stream
// then reads the account again instead of skipping an order or a fill.
func (s *Server) accountEvents(ctx context.Context, m *wsMsg) ([]*exchangev1.AccountEvent, error) {
	now := time.Now().UnixMilli()
	var out []*exchangev1.AccountEvent
	switch m.Arg["channel"] {
	case "orders":
		err := channelRows(ctx, s, m.Data, func(r rawOrder) (string, string) { return r.InstType, r.InstID }, func(r rawOrder, cv sizeConv) error {
			o, err := orderProto(r, cv)
			if err != nil {
				return err
			}
			out = append(out, &exchangev1.AccountEvent{Time: o.UpdatedTime, Event: &exchangev1.AccountEvent_Order{Order: o}})
			f, err := fillOf(r, cv)
			if err != nil {
				return err
			}
			if f != nil {
				out = append(out, &exchangev1.AccountEvent{Time: f.Time, Event: &exchangev1.AccountEvent_Fill{Fill: f}})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	case "orders-algo":
		err := channelRows(ctx, s, m.Data, func(r rawAlgo) (string, string) { return r.InstType, r.InstID }, func(r rawAlgo, cv sizeConv) error {
			a, err := algoProto(r, cv)
			if err != nil {
				return err
			}
			out = append(out, &exchangev1.AccountEvent{Time: a.UpdatedTime, Event: &exchangev1.AccountEvent_AlgoOrder{AlgoOrder: a}})
			return nil
		})
		if err != nil {
			return nil, err
		}
	case "positions":
		err := channelRows(ctx, s, m.Data, func(r rawPosition) (string, string) { return r.InstType, r.InstID }, func(r rawPosition, cv sizeConv) error {
			p, err := positionProto(r, cv)
			if err != nil {
				return err
			}
			out = append(out, &exchangev1.AccountEvent{Time: p.UpdatedTime, Event: &exchangev1.AccountEvent_Position{Position: p}})
			return nil
		})
		if err != nil {
			return nil, err
		}
	case "account":
		bs, _, _, _, err := ParseTradingBalance(m.Data)
		if err != nil {
			return nil, err
		}
		for _, b := range bs {
			out = append(out, &exchangev1.AccountEvent{Time: now, Event: &exchangev1.AccountEvent_Balance{Balance: b}})
		}
	}
	return out, nil
}
