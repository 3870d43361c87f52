package sdktest

// exchange.v1 revision 1.1: per-market capabilities, client id format, CheckCredentials, batch orders,
// cancel-all-after, good-till-date expiry, idempotency that compares parameters, unknown outcomes (fault
// injection) and the sequenced account snapshot.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"google.golang.org/protobuf/proto"

	"github.com/exhub/exhub/plugin-sdk/faults"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// Client ids (client_order_id, client_algo_id) the reference accepts.
const (
	clientIDMaxLen  = 36
	clientIDPattern = `^[A-Za-z0-9_-]{1,36}$`
	// batchMax is the most orders one BatchPlaceOrders or BatchCancelOrders call takes.
	batchMax = 10
	// cancelAfterMaxMs bounds CancelAllAfter's timeout.
	cancelAfterMaxMs = 10 * 60 * 1000
	// readOnlyPrefix: an api_key starting with it names a paper account whose key can read but not trade,
	// withdraw or transfer (CheckCredentials says so; trading calls answer PERMISSION_DENIED).
	readOnlyPrefix = "readonly"
)

var clientIDRe = regexp.MustCompile(clientIDPattern)

// checkClientID validates a client id against the published format. Empty is allowed (the exchange assigns none).
func checkClientID(field, id string) error {
	if id == "" || clientIDRe.MatchString(id) {
		return nil
	}
	return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, field,
		"%s %q does not match %s", field, id, clientIDPattern)
}

// marketCapabilities says what each market type takes. Spot has no margin, positions or mark price.
func marketCapabilities() []*exchangev1.MarketTradingCapabilities {
	orderTypes := []exchangev1.OrderType{exchangev1.OrderType_ORDER_TYPE_LIMIT, exchangev1.OrderType_ORDER_TYPE_MARKET}
	tifs := []exchangev1.TimeInForce{
		exchangev1.TimeInForce_TIME_IN_FORCE_GTC, exchangev1.TimeInForce_TIME_IN_FORCE_IOC,
		exchangev1.TimeInForce_TIME_IN_FORCE_FOK, exchangev1.TimeInForce_TIME_IN_FORCE_POST_ONLY,
		exchangev1.TimeInForce_TIME_IN_FORCE_GTD,
	}
	algoTypes := []exchangev1.OrderType{
		exchangev1.OrderType_ORDER_TYPE_STOP_MARKET, exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_MARKET,
		exchangev1.OrderType_ORDER_TYPE_STOP_LIMIT, exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_LIMIT,
	}
	return []*exchangev1.MarketTradingCapabilities{
		{
			MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT, OrderTypes: orderTypes, TimeInForce: tifs, Amend: true,
			AlgoOrderTypes:    algoTypes,
			TpslKinds:         []exchangev1.TpSlKind{exchangev1.TpSlKind_TP_SL_KIND_CONDITIONAL},
			TriggerPriceTypes: []exchangev1.TriggerPriceType{exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST},
			BatchPlaceMax:     batchMax, BatchCancelMax: batchMax, CancelAllAfter: true,
			IdempotentClientOrderId: true,
		},
		{
			MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, OrderTypes: orderTypes, TimeInForce: tifs, Amend: true,
			AlgoOrderTypes: algoTypes,
			TpslKinds:      []exchangev1.TpSlKind{exchangev1.TpSlKind_TP_SL_KIND_CONDITIONAL, exchangev1.TpSlKind_TP_SL_KIND_ON_POSITION},
			TriggerPriceTypes: []exchangev1.TriggerPriceType{
				exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST, exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK,
			},
			ReduceOnly: true, BatchPlaceMax: batchMax, BatchCancelMax: batchMax, CancelAllAfter: true,
			MarginModes:             []exchangev1.MarginMode{exchangev1.MarginMode_MARGIN_MODE_CROSS, exchangev1.MarginMode_MARGIN_MODE_ISOLATED},
			PositionModes:           []exchangev1.PositionMode{exchangev1.PositionMode_POSITION_MODE_ONE_WAY, exchangev1.PositionMode_POSITION_MODE_HEDGE},
			IdempotentClientOrderId: true,
		},
	}
}

// ---------------------------------------------------------------------------------------------------------------
// Unknown outcomes

// Faults is the server's fault injector: a test arms a lost answer for a client id, and the next request that
// carries it (PlaceOrder, BatchPlaceOrders, PlaceAlgoOrder, ClosePosition, Transfer, Withdraw; AmendOrder by the
// order's client id) answers
// UNKNOWN_OUTCOME: after executing (accept_then_error, accept_then_drop) or without executing (drop_before). The
// reference has no wire to its "exchange", so a dropped answer and an error answer look the same to the host: a
// plugin turns both into UNKNOWN_OUTCOME.
func (s *Server) Faults() *faults.Injector { return &s.faults }

// FaultAddr is the address the fault-arming endpoint listens on (fault_listen), or "".
func (s *Server) FaultAddr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faultAddr
}

func unknownOutcome(what, clientID string, executed bool) error {
	msg := fmt.Sprintf("%s %s: the answer was lost; resolve it by client id", what, clientID)
	if executed {
		return sdk.ExchangeError(exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME, "-1007", msg)
	}
	return sdk.ExchangeError(exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME, "-1001", msg)
}

// fault takes the fault armed for clientID. drop is true when the request must not execute.
func (s *Server) fault(clientID string) (armed, drop bool) {
	k, ok := s.faults.Take(clientID)
	return ok, ok && !k.Executes()
}

// checkLoopback accepts host:port addresses on the loopback interface only.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%q is not a loopback address", addr)
	}
	return nil
}

// serveFaults (re)starts the fault-arming endpoint on addr ("" stops it). The HTTP server belongs to the Server:
// Close stops it.
func (s *Server) serveFaults(addr string) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.New("the server is closed")
	}
	old, oldAddr := s.faultSrv, s.faultAddr
	s.mu.Unlock()
	if addr == oldAddr && old != nil {
		return nil
	}
	if old != nil {
		_ = old.Close()
	}
	s.mu.Lock()
	s.faultSrv, s.faultAddr = nil, ""
	s.mu.Unlock()
	if addr == "" {
		return nil
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(faults.Path, &s.faults)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	s.mu.Lock()
	s.faultSrv, s.faultAddr = srv, lis.Addr().String()
	s.mu.Unlock()
	s.wg.Add(1)
	go func() { // owned by the Server: Close (or a new fault_listen) closes srv, which ends Serve
		defer s.wg.Done()
		_ = srv.Serve(lis)
	}()
	return nil
}

// ---------------------------------------------------------------------------------------------------------------
// Idempotency

// sameDecimal compares two decimal strings by value ("1.0" equals "1"); both empty is equal.
func sameDecimal(a, b string) bool {
	if a == "" || b == "" {
		return a == b
	}
	x, err1 := decimal.NewFromString(a)
	y, err2 := decimal.NewFromString(b)
	return err1 == nil && err2 == nil && x.Equal(y)
}

// samePlaceRequest says whether a repeated client_order_id asks for the same order. Defaults count as given.
func samePlaceRequest(a, b *exchangev1.PlaceOrderRequest) bool {
	tif := func(r *exchangev1.PlaceOrderRequest) exchangev1.TimeInForce {
		switch {
		case r.GetType() == exchangev1.OrderType_ORDER_TYPE_MARKET:
			return exchangev1.TimeInForce_TIME_IN_FORCE_IOC
		case r.GetTimeInForce() == exchangev1.TimeInForce_TIME_IN_FORCE_UNSPECIFIED:
			return exchangev1.TimeInForce_TIME_IN_FORCE_GTC
		}
		return r.GetTimeInForce()
	}
	ps := func(r *exchangev1.PlaceOrderRequest) exchangev1.PositionSide {
		if r.GetPositionSide() == exchangev1.PositionSide_POSITION_SIDE_UNSPECIFIED && r.GetMarketType() == exchangev1.MarketType_MARKET_TYPE_SWAP {
			return exchangev1.PositionSide_POSITION_SIDE_NET
		}
		return r.GetPositionSide()
	}
	return a.GetMarketType() == b.GetMarketType() && a.GetSymbol() == b.GetSymbol() && a.GetSide() == b.GetSide() &&
		a.GetType() == b.GetType() && tif(a) == tif(b) && sameDecimal(a.GetPrice(), b.GetPrice()) &&
		sameDecimal(a.GetQty(), b.GetQty()) && sameDecimal(a.GetQuoteQty(), b.GetQuoteQty()) &&
		a.GetReduceOnly() == b.GetReduceOnly() && ps(a) == ps(b) &&
		(b.GetMarginMode() == exchangev1.MarginMode_MARGIN_MODE_UNSPECIFIED || a.GetMarginMode() == b.GetMarginMode()) &&
		a.GetExpireTime() == b.GetExpireTime()
}

func sameAlgoRequest(a, b *exchangev1.PlaceAlgoOrderRequest) bool {
	return a.GetMarketType() == b.GetMarketType() && a.GetSymbol() == b.GetSymbol() && a.GetSide() == b.GetSide() &&
		a.GetType() == b.GetType() && sameDecimal(a.GetTriggerPrice(), b.GetTriggerPrice()) &&
		sameDecimal(a.GetPrice(), b.GetPrice()) && sameDecimal(a.GetQty(), b.GetQty()) &&
		a.GetReduceOnly() == b.GetReduceOnly() && a.GetClosePosition() == b.GetClosePosition() &&
		a.GetPositionSide() == b.GetPositionSide()
}

func duplicateClientID(field, id string) error {
	return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID, field,
		"%s %q is already used by an order with other parameters", field, id)
}

// stripAccount copies a request without its credentials, to keep for idempotency checks.
func stripAccount[T proto.Message](m T) T {
	c := proto.Clone(m)
	c.ProtoReflect().Clear(c.ProtoReflect().Descriptor().Fields().ByName("account"))
	return c.(T)
}

// ---------------------------------------------------------------------------------------------------------------
// Margin mode on requests

// checkMarginMode validates a request's margin_mode: SWAP only, and a change of the symbol's mode only while
// nothing is open on it. It returns the mode to apply (UNSPECIFIED: keep the current one).
func (s *Server) checkMarginMode(a *account, in *instrument, mm exchangev1.MarginMode) (exchangev1.MarginMode, error) {
	switch mm {
	case exchangev1.MarginMode_MARGIN_MODE_UNSPECIFIED:
		return mm, nil
	case exchangev1.MarginMode_MARGIN_MODE_CROSS, exchangev1.MarginMode_MARGIN_MODE_ISOLATED:
	default:
		return 0, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "margin_mode", "unknown margin_mode %v", mm)
	}
	if !in.isSwap() {
		return 0, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "margin_mode", "spot orders have no margin mode")
	}
	if mm == a.mode4(in) {
		return exchangev1.MarginMode_MARGIN_MODE_UNSPECIFIED, nil
	}
	for _, p := range a.positions {
		if p.in == in && p.qty != 0 {
			return 0, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED, "margin_mode",
				"the %s position is %s: close it before trading it in %s", in.info.Symbol, a.mode4(in), mm)
		}
	}
	if len(s.openOrders(a, exchangev1.MarketType_MARKET_TYPE_SWAP, in.info.Symbol)) > 0 {
		return 0, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED, "margin_mode",
			"open %s orders are %s: cancel them before trading in %s", in.info.Symbol, a.mode4(in), mm)
	}
	return mm, nil
}

// ---------------------------------------------------------------------------------------------------------------
// Credentials

// tradeAccount is account for calls that move money: a read-only key is PERMISSION_DENIED.
func (s *Server) tradeAccount(ref *exchangev1.AccountRef) (*account, error) {
	a, err := s.account(ref)
	if err != nil {
		return nil, err
	}
	if a.readOnly {
		return nil, sdk.ExchangeError(exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED, "-2015",
			"this API key may read but not trade, transfer or withdraw")
	}
	return a, nil
}

// CheckCredentials says what the account's key may do. Paper keys may do everything unless they start with
// "readonly".
func (s *Server) CheckCredentials(_ context.Context, req *exchangev1.CheckCredentialsRequest) (*exchangev1.CheckCredentialsResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.account(req.GetAccount())
	if err != nil {
		return nil, err
	}
	return &exchangev1.CheckCredentialsResponse{
		CanRead: true, CanTrade: !a.readOnly, CanWithdraw: !a.readOnly, CanTransfer: !a.readOnly,
		PositionMode: a.mode, AccountMode: "paper", ExchangeAccountId: a.id,
	}, nil
}

// ---------------------------------------------------------------------------------------------------------------
// Batch orders

// checkBatch refuses an empty or oversized batch and an item that names another account than the batch.
func checkBatch[T interface{ GetAccount() *exchangev1.AccountRef }](batch *exchangev1.AccountRef, items []T) error {
	if n := len(items); n == 0 || n > batchMax {
		return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "orders",
			"a batch holds 1 to %d orders, got %d", batchMax, n)
	}
	for i, it := range items {
		if own := it.GetAccount(); own != nil && !proto.Equal(own, batch) {
			return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "orders",
				"order %d names another account than the batch", i)
		}
	}
	return nil
}

// errorDetail is the ErrorDetail of a batch item's error, with its message kept where the exchange's would be.
func errorDetail(err error) *exchangev1.ErrorDetail {
	d := proto.Clone(sdk.DetailOf(err)).(*exchangev1.ErrorDetail)
	if d.GetExchangeMessage() == "" {
		d.ExchangeMessage = sdk.MessageOf(err)
	}
	return d
}

// BatchPlaceOrders places up to 10 orders in request order; each succeeds or fails on its own.
func (s *Server) BatchPlaceOrders(_ context.Context, req *exchangev1.BatchPlaceOrdersRequest) (*exchangev1.BatchPlaceOrdersResponse, error) {
	if err := checkBatch(req.GetAccount(), req.GetOrders()); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.tradeAccount(req.GetAccount())
	if err != nil {
		return nil, err
	}
	now := s.nowMs()
	out := &exchangev1.BatchPlaceOrdersResponse{}
	touched := map[*instrument]bool{}
	for _, r := range req.GetOrders() {
		armed, drop := s.fault(r.GetClientOrderId())
		if drop {
			out.Results = append(out.Results, &exchangev1.BatchResult{Error: errorDetail(unknownOutcome("order", r.GetClientOrderId(), false))})
			continue
		}
		o, err := s.place(a, r, "", now)
		switch {
		case err != nil:
			out.Results = append(out.Results, &exchangev1.BatchResult{Error: errorDetail(err)})
		case armed:
			touched[o.in] = true
			out.Results = append(out.Results, &exchangev1.BatchResult{Error: errorDetail(unknownOutcome("order", r.GetClientOrderId(), true))})
		default:
			touched[o.in] = true
			out.Results = append(out.Results, &exchangev1.BatchResult{Order: o.proto()})
		}
	}
	for in := range touched {
		s.publish(in, now, false)
	}
	s.flushAccounts(now)
	return out, nil
}

// BatchCancelOrders cancels up to 10 orders in request order; each succeeds or fails on its own.
func (s *Server) BatchCancelOrders(_ context.Context, req *exchangev1.BatchCancelOrdersRequest) (*exchangev1.BatchCancelOrdersResponse, error) {
	if err := checkBatch(req.GetAccount(), req.GetOrders()); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.tradeAccount(req.GetAccount())
	if err != nil {
		return nil, err
	}
	now := s.nowMs()
	out := &exchangev1.BatchCancelOrdersResponse{}
	touched := map[*instrument]bool{}
	for _, r := range req.GetOrders() {
		o, err := s.findOrder(a, r.GetMarketType(), r.GetSymbol(), r.GetOrderId(), r.GetClientOrderId())
		if err == nil && !o.open() {
			err = sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED, "order_id", "order %s is already %s", o.id, o.status)
		}
		if err != nil {
			out.Results = append(out.Results, &exchangev1.BatchResult{Error: errorDetail(err)})
			continue
		}
		s.cancel(o, now)
		touched[o.in] = true
		out.Results = append(out.Results, &exchangev1.BatchResult{Order: o.proto()})
	}
	for in := range touched {
		s.publish(in, now, false)
	}
	s.flushAccounts(now)
	return out, nil
}

// ---------------------------------------------------------------------------------------------------------------
// Cancel-all-after and good-till-date

func cancelAfterKey(mt exchangev1.MarketType, symbol string) string {
	return marketTypeName(mt) + "|" + symbol
}

// CancelAllAfter arms the dead man's switch of a market type (and symbol): unless called again within timeout_ms,
// every open order in that scope is cancelled. timeout_ms 0 disarms it.
func (s *Server) CancelAllAfter(_ context.Context, req *exchangev1.CancelAllAfterRequest) (*exchangev1.CancelAllAfterResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.tradeAccount(req.GetAccount())
	if err != nil {
		return nil, err
	}
	switch req.GetMarketType() {
	case exchangev1.MarketType_MARKET_TYPE_SPOT, exchangev1.MarketType_MARKET_TYPE_SWAP:
	default:
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "market_type", "market_type is required")
	}
	if req.GetSymbol() != "" {
		if _, err := s.instrument(req.GetMarketType(), req.GetSymbol()); err != nil {
			return nil, err
		}
	}
	if t := req.GetTimeoutMs(); t < 0 || t > cancelAfterMaxMs {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "timeout_ms",
			"timeout_ms must be 0 (disarm) to %d", cancelAfterMaxMs)
	}
	key := cancelAfterKey(req.GetMarketType(), req.GetSymbol())
	if req.GetTimeoutMs() == 0 {
		delete(a.cancelAfter, key)
		return &exchangev1.CancelAllAfterResponse{}, nil
	}
	at := s.nowMs() + req.GetTimeoutMs()
	a.cancelAfter[key] = at
	return &exchangev1.CancelAllAfterResponse{TriggerTime: at}, nil
}

// expireOrders cancels what an elapsed dead man's switch covers and expires GTD orders past their time. Caller
// holds s.mu.
func (s *Server) expireOrders(now int64) {
	for _, a := range s.accounts {
		keys := make([]string, 0, len(a.cancelAfter))
		for k, at := range a.cancelAfter {
			if at <= now {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			delete(a.cancelAfter, k)
			mtName, symbol, _ := strings.Cut(k, "|")
			mt := exchangev1.MarketType_MARKET_TYPE_SPOT
			if mtName == "SWAP" {
				mt = exchangev1.MarketType_MARKET_TYPE_SWAP
			}
			for _, o := range s.openOrders(a, mt, symbol) {
				s.cancel(o, now)
			}
		}
		for _, o := range a.orders {
			if o.open() && o.tif == exchangev1.TimeInForce_TIME_IN_FORCE_GTD && o.expire <= now {
				o.in.removeResting(o)
				o.status, o.updated = exchangev1.OrderStatus_ORDER_STATUS_EXPIRED, now
				a.dirtyOrders[o] = true
				s.releaseLock(o)
			}
		}
	}
}

// ---------------------------------------------------------------------------------------------------------------
// The account snapshot

// accountSnapshot is the whole state of an account, for the start of StreamAccount and after a resync. Caller
// holds s.mu.
func (s *Server) accountSnapshot(a *account) *exchangev1.AccountSnapshot {
	snap := &exchangev1.AccountSnapshot{}
	for _, o := range s.openOrders(a, exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED, "") {
		snap.OpenOrders = append(snap.OpenOrders, o.proto())
	}
	keys := make([]string, 0, len(a.positions))
	for k, p := range a.positions {
		if p.qty != 0 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		snap.Positions = append(snap.Positions, s.positionProto(a, a.positions[k]))
	}
	bks := make([]balKey, 0, len(a.balances))
	for k := range a.balances {
		bks = append(bks, k)
	}
	sort.Slice(bks, func(i, j int) bool {
		if bks[i].wallet != bks[j].wallet {
			return bks[i].wallet < bks[j].wallet
		}
		return bks[i].asset < bks[j].asset
	})
	for _, k := range bks {
		snap.Balances = append(snap.Balances, balanceProto(k, a.balances[k]))
	}
	for _, g := range a.algos {
		if g.p.Status == exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_WAITING {
			snap.AlgoOrders = append(snap.AlgoOrders, cloneAlgo(g.p))
		}
	}
	return snap
}
