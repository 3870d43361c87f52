package binance

import (
	"context"
	"fmt"
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
	cr := creds(acct)
	if alive(Spot) {
		open, err := s.ListOpenOrders(ctx, &exchangev1.ListOpenOrdersRequest{Account: acct, MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT})
		if err != nil {
			return nil, err
		}
		snap.OpenOrders = append(snap.OpenOrders, open.GetOrders()...)
		body, err := c.signed(ctx, Spot, http.MethodGet, pathSpotAccount, url.Values{"omitZeroBalances": {"true"}}, 20, cr)
		if err != nil {
			return nil, err
		}
		bs, err := ParseSpotAccount(body)
		if err != nil {
			return nil, parseErr("account", err)
		}
		snap.Balances = append(snap.Balances, bs...)
		fb, err := c.signed(ctx, Spot, http.MethodPost, pathFundingAsset, nil, 1, cr)
		if err != nil {
			return nil, err
		}
		fs, err := ParseFundingAssets(fb)
		if err != nil {
			return nil, parseErr("funding assets", err)
		}
		snap.Balances = append(snap.Balances, fs...)
	}
	if alive(Futures) {
		body, err := c.signed(ctx, Futures, http.MethodGet, pathFutOpenOrders, nil, 40, cr)
		if err != nil {
			return nil, err
		}
		os, err := ParseOrders(Futures, body)
		if err != nil {
			return nil, parseErr("openOrders", err)
		}
		as, err := ParseAlgoOrders(body)
		if err != nil {
			return nil, parseErr("openOrders", err)
		}
		snap.OpenOrders = append(snap.OpenOrders, os...)
		snap.AlgoOrders = as
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
