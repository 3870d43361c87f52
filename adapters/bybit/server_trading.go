package bybit

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"strconv"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// Private REST paths.
const (
	pathOrderCreate     = "/v5/order/create"
	pathOrderAmend      = "/v5/order/amend"
	pathOrderCancel     = "/v5/order/cancel"
	pathOrderCancelAll  = "/v5/order/cancel-all"
	pathOrderRealtime   = "/v5/order/realtime"
	pathOrderHistory    = "/v5/order/history"
	pathExecutionList   = "/v5/execution/list"
	pathPositionList    = "/v5/position/list"
	pathSetLeverage     = "/v5/position/set-leverage"
	pathSwitchMode      = "/v5/position/switch-mode"
	pathSwitchIsolated  = "/v5/position/switch-isolated"
	pathTradingStop     = "/v5/position/trading-stop"
	pathQueryAPI        = "/v5/user/query-api"
	settleUSDT          = "USDT"
	realtimePageLimit   = 50
	historyPageLimit    = 50
	executionPageLimit  = 100
	maxOpenOrderPages   = 20
	clientOrderIDMaxLen = 36
)

// clientIDPattern is Bybit's orderLinkId: at most 36 letters, digits, "-" and "_".
var clientIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,36}$`)

const clientIDRE2 = `^[A-Za-z0-9_-]{1,36}$`

// Codes that Bybit answers for a no-op setting change: the wanted state holds already.
const (
	codeLeverageNotModified   = "110043"
	codePositionModeUnchanged = "110025"
	codeMarginModeUnchanged   = "110026"
)

func rawCode(err error) string { return sdk.DetailOf(err).GetExchangeCode() }

func malformed(what string, err error) error { return internalf("bybit: %s: %v", what, err) }

// tradeTarget reads the credentials and the instrument of a trading call.
func (s *Server) tradeTarget(ctx context.Context, acct *exchangev1.AccountRef, mt exchangev1.MarketType, symbol string) (*Credentials, *Instrument, error) {
	creds, err := credsOf(acct)
	if err != nil {
		return nil, nil, err
	}
	in, err := s.instrument(ctx, mt, symbol)
	if err != nil {
		return nil, nil, err
	}
	return creds, in, nil
}

// orderRows reads one page of order rows.
func (s *Server) orderRows(ctx context.Context, path string, q url.Values, creds *Credentials) ([]rawOrder, string, error) {
	res, err := s.client().PrivateGet(ctx, path, q, creds)
	if err != nil {
		return nil, "", err
	}
	rows, next, err := ParseOrders(res.Result)
	if err != nil {
		return nil, "", malformed(path, err)
	}
	return rows, next, nil
}

// fetchOrder finds one order by orderId or orderLinkId: among the open orders, then the recently closed ones
// (order/realtime openOnly=1), then the order history.
func (s *Server) fetchOrder(ctx context.Context, creds *Credentials, in *Instrument, orderID, linkID string) (*exchangev1.Order, error) {
	if orderID == "" && linkID == "" {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "order_id", "order_id or client_order_id is required")
	}
	for _, step := range []struct{ path, openOnly string }{{pathOrderRealtime, "0"}, {pathOrderRealtime, "1"}, {pathOrderHistory, ""}} {
		q := url.Values{"category": {in.Category}, "symbol": {in.Symbol}, "orderFilter": {"Order"}}
		if step.openOnly != "" {
			q.Set("openOnly", step.openOnly)
		}
		if orderID != "" {
			q.Set("orderId", orderID)
		} else {
			q.Set("orderLinkId", linkID)
		}
		rows, _, err := s.orderRows(ctx, step.path, q, creds)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if (orderID != "" && r.OrderID == orderID) || (orderID == "" && r.OrderLinkID == linkID) {
				o, err := orderProto(r, in)
				if err != nil {
					return nil, malformed("order", err)
				}
				return o, nil
			}
		}
	}
	return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND, "no %s order %s%s on Bybit", in.Symbol, orderID, linkID)
}

// orderBody is the /v5/order/create body of a request.
func orderBody(req *exchangev1.PlaceOrderRequest, in *Instrument) (map[string]any, error) {
	b := map[string]any{"category": in.Category, "symbol": in.Symbol}
	switch req.GetSide() {
	case exchangev1.Side_SIDE_BUY:
		b["side"] = "Buy"
	case exchangev1.Side_SIDE_SELL:
		b["side"] = "Sell"
	default:
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "side", "side is required")
	}
	if req.GetPriceMatch() != exchangev1.PriceMatch_PRICE_MATCH_UNSPECIFIED {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED, "price_match", "Bybit takes no price match")
	}
	if req.GetTakeProfit() != nil || req.GetStopLoss() != nil {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED, "take_profit", "TP/SL on a new order is not offered yet; set them on the position")
	}
	if req.GetClientOrderId() != "" {
		b["orderLinkId"] = req.GetClientOrderId()
	}
	linear := in.Category == catLinear
	qty, hasQty, err := parseDec("qty", req.GetQty())
	if err != nil {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "qty", "%v", err)
	}
	quote, hasQuote, err := parseDec("quote_qty", req.GetQuoteQty())
	if err != nil {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "quote_qty", "%v", err)
	}
	switch req.GetType() {
	case exchangev1.OrderType_ORDER_TYPE_LIMIT:
		b["orderType"] = "Limit"
		price, ok, err := parseDec("price", req.GetPrice())
		if err != nil || !ok || !price.IsPositive() {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "price", "a limit order needs a positive price")
		}
		b["price"] = price.String()
		tif := req.GetTimeInForce()
		if tif == exchangev1.TimeInForce_TIME_IN_FORCE_UNSPECIFIED {
			tif = exchangev1.TimeInForce_TIME_IN_FORCE_GTC
		}
		name, ok := tifName(tif)
		if !ok {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED, "time_in_force", "Bybit takes no %v", tif)
		}
		b["timeInForce"] = name
		if hasQuote {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "quote_qty", "quote_qty is for spot market buys")
		}
	case exchangev1.OrderType_ORDER_TYPE_MARKET:
		b["orderType"] = "Market"
		if tif := req.GetTimeInForce(); tif != exchangev1.TimeInForce_TIME_IN_FORCE_UNSPECIFIED && tif != exchangev1.TimeInForce_TIME_IN_FORCE_IOC {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED, "time_in_force", "a market order is IOC")
		}
		if req.GetPrice() != "" {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "price", "a market order takes no price")
		}
	default:
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED, "type", "PlaceOrder takes LIMIT or MARKET")
	}
	switch {
	case hasQty && hasQuote:
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "quote_qty", "qty or quote_qty, not both")
	case hasQuote:
		if linear || req.GetType() != exchangev1.OrderType_ORDER_TYPE_MARKET || !quote.IsPositive() {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "quote_qty", "quote_qty is for spot market orders")
		}
		b["qty"], b["marketUnit"] = quote.String(), "quoteCoin"
	case hasQty && qty.IsPositive():
		b["qty"] = qty.String()
		if !linear && req.GetType() == exchangev1.OrderType_ORDER_TYPE_MARKET {
			// Bybit sizes a spot market buy in the quote coin unless told otherwise.
			b["marketUnit"] = "baseCoin"
		}
	default:
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "qty", "a positive qty is required")
	}
	if linear {
		switch req.GetPositionSide() {
		case exchangev1.PositionSide_POSITION_SIDE_LONG:
			b["positionIdx"] = 1
		case exchangev1.PositionSide_POSITION_SIDE_SHORT:
			b["positionIdx"] = 2
		default:
			b["positionIdx"] = 0
		}
		if req.GetReduceOnly() {
			b["reduceOnly"] = true
		}
	} else {
		if req.GetReduceOnly() {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED, "reduce_only", "reduce-only is for perpetuals")
		}
		if ps := req.GetPositionSide(); ps != exchangev1.PositionSide_POSITION_SIDE_UNSPECIFIED && ps != exchangev1.PositionSide_POSITION_SIDE_NET {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "position_side", "spot has no position side")
		}
	}
	return b, nil
}

// orderDiffers names the first field where an existing order differs from a new request with its client id.
func orderDiffers(req *exchangev1.PlaceOrderRequest, o *exchangev1.Order) string {
	same := func(a, b string) bool {
		x, err1 := decimal.NewFromString(a)
		y, err2 := decimal.NewFromString(b)
		return err1 == nil && err2 == nil && x.Equal(y)
	}
	switch {
	case req.GetSide() != o.GetSide():
		return "side"
	case req.GetType() != o.GetType():
		return "type"
	case req.GetType() == exchangev1.OrderType_ORDER_TYPE_LIMIT && !same(req.GetPrice(), o.GetPrice()):
		return "price"
	case req.GetQty() != "" && o.GetQty() != "" && !same(req.GetQty(), o.GetQty()):
		return "qty"
	case req.GetReduceOnly() != o.GetReduceOnly():
		return "reduce_only"
	}
	return ""
}

// PlaceOrder sends /v5/order/create once. A client id is looked up first: the order it names is returned when the
// request matches it, DUPLICATE_CLIENT_ORDER_ID when it does not (never a second order, also after a fill). A lost
// answer is UNKNOWN_OUTCOME: the host resolves it with GetOrder by client id.
func (s *Server) PlaceOrder(ctx context.Context, req *exchangev1.PlaceOrderRequest) (*exchangev1.PlaceOrderResponse, error) {
	creds, in, err := s.tradeTarget(ctx, req.GetAccount(), req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	cid := req.GetClientOrderId()
	if cid != "" && !clientIDPattern.MatchString(cid) {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "client_order_id",
			"Bybit's orderLinkId is at most %d letters, digits, - or _", clientOrderIDMaxLen)
	}
	body, err := orderBody(req, in)
	if err != nil {
		return nil, err
	}
	if cid != "" {
		o, err := s.fetchOrder(ctx, creds, in, "", cid)
		switch {
		case err == nil:
			if f := orderDiffers(req, o); f != "" {
				return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID, "client_order_id",
					"client order id %s names order %s with another %s", cid, o.GetOrderId(), f)
			}
			return &exchangev1.PlaceOrderResponse{Order: o}, nil
		case reasonOf(err) != exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND:
			return nil, err
		}
	}
	res, err := s.client().Write(ctx, pathOrderCreate, body, creds)
	if err != nil {
		return nil, err
	}
	ack, err := parseAck(res)
	if err != nil {
		// Bybit took the order (retCode 0) but its answer is unreadable: the id is unknown, the outcome is not.
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME, "order/create: %v", err)
	}
	o, err := s.fetchOrder(ctx, creds, in, ack.OrderID, "")
	if err != nil {
		// Placed; its state could not be read back yet.
		s.log.Warn("bybit: read back a placed order", "order_id", ack.OrderID, "error", err)
		return &exchangev1.PlaceOrderResponse{Order: placedOrder(req, in, ack)}, nil
	}
	return &exchangev1.PlaceOrderResponse{Order: o}, nil
}

type orderAck struct {
	OrderID     string `json:"orderId"`
	OrderLinkID string `json:"orderLinkId"`
}

func parseAck(res Response) (orderAck, error) {
	var a orderAck
	if err := jsonUnmarshal(res.Result, &a); err != nil || a.OrderID == "" {
		return a, errors.Join(errMalformed, err, errors.New("no orderId"))
	}
	return a, nil
}

// placedOrder is the order as requested, for when it cannot be read back.
func placedOrder(req *exchangev1.PlaceOrderRequest, in *Instrument, a orderAck) *exchangev1.Order {
	return &exchangev1.Order{OrderId: a.OrderID, ClientOrderId: a.OrderLinkID, Symbol: in.Symbol, MarketType: in.MarketType,
		Side: req.GetSide(), PositionSide: req.GetPositionSide(), Type: req.GetType(), TimeInForce: req.GetTimeInForce(),
		Status: exchangev1.OrderStatus_ORDER_STATUS_NEW, Price: req.GetPrice(), Qty: req.GetQty(), FilledQty: "0",
		ReduceOnly: req.GetReduceOnly()}
}

func refBody(in *Instrument, orderID, linkID string) map[string]any {
	b := map[string]any{"category": in.Category, "symbol": in.Symbol}
	if orderID != "" {
		b["orderId"] = orderID
	} else {
		b["orderLinkId"] = linkID
	}
	return b
}

// AmendOrder changes price and/or quantity (/v5/order/amend) and reads the order back. A lost answer is
// UNKNOWN_OUTCOME (the amend may have happened).
func (s *Server) AmendOrder(ctx context.Context, req *exchangev1.AmendOrderRequest) (*exchangev1.AmendOrderResponse, error) {
	creds, in, err := s.tradeTarget(ctx, req.GetAccount(), req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	if req.GetOrderId() == "" && req.GetClientOrderId() == "" {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "order_id", "order_id or client_order_id is required")
	}
	if req.GetPriceMatch() != exchangev1.PriceMatch_PRICE_MATCH_UNSPECIFIED {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED, "price_match", "Bybit takes no price match")
	}
	b := refBody(in, req.GetOrderId(), req.GetClientOrderId())
	for _, f := range []struct{ name, v string }{{"price", req.GetPrice()}, {"qty", req.GetQty()}} {
		if f.v == "" {
			continue
		}
		d, err := decimal.NewFromString(f.v)
		if err != nil || !d.IsPositive() {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, f.name, "%s %q is not a positive decimal", f.name, f.v)
		}
		b[f.name] = d.String()
	}
	if _, ok := b["price"]; !ok {
		if _, ok := b["qty"]; !ok {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "price", "nothing to amend")
		}
	}
	res, err := s.client().Write(ctx, pathOrderAmend, b, creds)
	if err != nil {
		return nil, err
	}
	id := req.GetOrderId()
	if a, err := parseAck(res); err == nil {
		id = a.OrderID
	}
	o, err := s.fetchOrder(ctx, creds, in, id, req.GetClientOrderId())
	if err != nil {
		return nil, err
	}
	return &exchangev1.AmendOrderResponse{Order: o}, nil
}

// CancelOrder cancels one order (/v5/order/cancel) and reads it back.
func (s *Server) CancelOrder(ctx context.Context, req *exchangev1.CancelOrderRequest) (*exchangev1.CancelOrderResponse, error) {
	creds, in, err := s.tradeTarget(ctx, req.GetAccount(), req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	if req.GetOrderId() == "" && req.GetClientOrderId() == "" {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "order_id", "order_id or client_order_id is required")
	}
	res, err := s.client().Write(ctx, pathOrderCancel, refBody(in, req.GetOrderId(), req.GetClientOrderId()), creds)
	if err != nil {
		return nil, err
	}
	id := req.GetOrderId()
	if a, err := parseAck(res); err == nil {
		id = a.OrderID
	}
	o, err := s.fetchOrder(ctx, creds, in, id, req.GetClientOrderId())
	if err != nil {
		return nil, err
	}
	return &exchangev1.CancelOrderResponse{Order: o}, nil
}

// categories is the categories a market type names (UNSPECIFIED: both).
func categories(mt exchangev1.MarketType) ([]exchangev1.MarketType, error) {
	if mt == exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED {
		return []exchangev1.MarketType{exchangev1.MarketType_MARKET_TYPE_SPOT, exchangev1.MarketType_MARKET_TYPE_SWAP}, nil
	}
	if _, err := categoryOf(mt); err != nil {
		return nil, err
	}
	return []exchangev1.MarketType{mt}, nil
}

// CancelAllOrders cancels the open orders of a symbol, or of a whole market type (/v5/order/cancel-all; linear
// names settleCoin USDT), and returns them as cancelled.
func (s *Server) CancelAllOrders(ctx context.Context, req *exchangev1.CancelAllOrdersRequest) (*exchangev1.CancelAllOrdersResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	mts, err := categories(req.GetMarketType())
	if err != nil {
		return nil, err
	}
	var out []*exchangev1.Order
	for _, mt := range mts {
		cat, _ := categoryOf(mt)
		b := map[string]any{"category": cat}
		var in *Instrument
		if req.GetSymbol() != "" {
			if in, err = s.instrument(ctx, mt, req.GetSymbol()); err != nil {
				return nil, err
			}
			b["symbol"] = in.Symbol
		} else if cat == catLinear {
			b["settleCoin"] = settleUSDT
		}
		// Without a symbol the answer names ids only: the open orders read first give their symbols.
		symOf := map[string]string{}
		if in == nil {
			open, err := s.ListOpenOrders(ctx, &exchangev1.ListOpenOrdersRequest{Account: req.GetAccount(), MarketType: mt})
			if err != nil {
				return nil, err
			}
			for _, o := range open.GetOrders() {
				symOf[o.GetOrderId()] = o.GetSymbol()
			}
		}
		res, err := s.client().Write(ctx, pathOrderCancelAll, b, creds)
		if err != nil {
			return nil, err
		}
		var r struct {
			List []orderAck `json:"list"`
		}
		if err := jsonUnmarshal(res.Result, &r); err != nil {
			return nil, malformed("cancel-all", err)
		}
		for _, a := range r.List {
			oin := in
			if oin == nil {
				sym, ok := symOf[a.OrderID]
				if !ok {
					continue // placed after the listing: cancelled, but its symbol is unknown here
				}
				if oin, err = s.instrument(ctx, mt, sym); err != nil {
					return nil, err
				}
			}
			o, err := s.fetchOrder(ctx, creds, oin, a.OrderID, "")
			if err != nil {
				return nil, err
			}
			out = append(out, o)
		}
	}
	return &exchangev1.CancelAllOrdersResponse{Orders: out}, nil
}

// GetOrder reads one order by id or client id.
func (s *Server) GetOrder(ctx context.Context, req *exchangev1.GetOrderRequest) (*exchangev1.GetOrderResponse, error) {
	creds, in, err := s.tradeTarget(ctx, req.GetAccount(), req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	o, err := s.fetchOrder(ctx, creds, in, req.GetOrderId(), req.GetClientOrderId())
	if err != nil {
		return nil, err
	}
	return &exchangev1.GetOrderResponse{Order: o}, nil
}

// rowInstrument finds the instrument of a row of a category.
func (s *Server) rowInstrument(ctx context.Context, mt exchangev1.MarketType, symbol string) (*Instrument, error) {
	in, err := s.instrument(ctx, mt, symbol)
	if err != nil && reasonOf(err) == exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND {
		return nil, nil // delisted or filtered out (dated futures): skipped
	}
	return in, err
}

// ListOpenOrders lists the open orders of a symbol or of a market type (UNSPECIFIED: both), following
// nextPageCursor.
func (s *Server) ListOpenOrders(ctx context.Context, req *exchangev1.ListOpenOrdersRequest) (*exchangev1.ListOpenOrdersResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	mts, err := categories(req.GetMarketType())
	if err != nil {
		return nil, err
	}
	var out []*exchangev1.Order
	for _, mt := range mts {
		cat, _ := categoryOf(mt)
		q := url.Values{"category": {cat}, "openOnly": {"0"}, "orderFilter": {"Order"}, "limit": {strconv.Itoa(realtimePageLimit)}}
		if req.GetSymbol() != "" {
			in, err := s.instrument(ctx, mt, req.GetSymbol())
			if err != nil {
				return nil, err
			}
			q.Set("symbol", in.Symbol)
		} else if cat == catLinear {
			q.Set("settleCoin", settleUSDT)
		}
		for range maxOpenOrderPages {
			rows, next, err := s.orderRows(ctx, pathOrderRealtime, q, creds)
			if err != nil {
				return nil, err
			}
			for _, r := range rows {
				in, err := s.rowInstrument(ctx, mt, r.Symbol)
				if err != nil {
					return nil, err
				}
				if in == nil {
					continue
				}
				o, err := orderProto(r, in)
				if err != nil {
					return nil, malformed("open order", err)
				}
				out = append(out, o)
			}
			if next == "" {
				break
			}
			q.Set("cursor", next)
		}
	}
	return &exchangev1.ListOpenOrdersResponse{Orders: out}, nil
}

// historyQuery builds the query of a history page: one market type, its window and Bybit's cursor.
func (s *Server) historyQuery(ctx context.Context, mt exchangev1.MarketType, symbol string, p *exchangev1.HistoryPage, maxLimit int) (url.Values, exchangev1.MarketType, error) {
	if mt == exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED {
		mt = exchangev1.MarketType_MARKET_TYPE_SPOT
	}
	cat, err := categoryOf(mt)
	if err != nil {
		return nil, mt, err
	}
	q := url.Values{"category": {cat}}
	if symbol != "" {
		in, err := s.instrument(ctx, mt, symbol)
		if err != nil {
			return nil, mt, err
		}
		q.Set("symbol", in.Symbol)
	} else if cat == catLinear {
		q.Set("settleCoin", settleUSDT)
	}
	limit := int(p.GetLimit())
	if limit <= 0 || limit > maxLimit {
		limit = maxLimit
	}
	q.Set("limit", strconv.Itoa(limit))
	const week = 7 * 24 * 3600 * 1000
	start, end := p.GetStartTime(), p.GetEndTime()
	if start > 0 && end > 0 && end-start > week {
		start = end - week // Bybit's window is at most 7 days
	}
	if start > 0 {
		q.Set("startTime", msStr(start))
	}
	if end > 0 {
		q.Set("endTime", msStr(end))
	}
	if p.GetCursor() != "" {
		q.Set("cursor", p.GetCursor())
	}
	return q, mt, nil
}

// ListOrderHistory pages /v5/order/history, newest first (a window of at most 7 days; the last 7 days without one).
func (s *Server) ListOrderHistory(ctx context.Context, req *exchangev1.ListOrderHistoryRequest) (*exchangev1.ListOrderHistoryResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	q, mt, err := s.historyQuery(ctx, req.GetMarketType(), req.GetSymbol(), req.GetPage(), historyPageLimit)
	if err != nil {
		return nil, err
	}
	rows, next, err := s.orderRows(ctx, pathOrderHistory, q, creds)
	if err != nil {
		return nil, err
	}
	out := make([]*exchangev1.Order, 0, len(rows))
	for _, r := range rows {
		in, err := s.rowInstrument(ctx, mt, r.Symbol)
		if err != nil {
			return nil, err
		}
		if in == nil {
			continue
		}
		o, err := orderProto(r, in)
		if err != nil {
			return nil, malformed("order history", err)
		}
		out = append(out, o)
	}
	return &exchangev1.ListOrderHistoryResponse{Orders: out, NextCursor: next}, nil
}

// ListFills pages /v5/execution/list (trades only), newest first.
func (s *Server) ListFills(ctx context.Context, req *exchangev1.ListFillsRequest) (*exchangev1.ListFillsResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	q, mt, err := s.historyQuery(ctx, req.GetMarketType(), req.GetSymbol(), req.GetPage(), executionPageLimit)
	if err != nil {
		return nil, err
	}
	q.Set("execType", "Trade")
	res, err := s.client().PrivateGet(ctx, pathExecutionList, q, creds)
	if err != nil {
		return nil, err
	}
	rows, next, err := ParseExecutions(res.Result)
	if err != nil {
		return nil, malformed("executions", err)
	}
	out := make([]*exchangev1.Fill, 0, len(rows))
	for _, r := range rows {
		if r.ExecType != "" && r.ExecType != "Trade" {
			continue
		}
		in, err := s.rowInstrument(ctx, mt, r.Symbol)
		if err != nil {
			return nil, err
		}
		if in == nil {
			continue
		}
		f, err := fillProto(r, in)
		if err != nil {
			return nil, malformed("execution", err)
		}
		out = append(out, f)
	}
	return &exchangev1.ListFillsResponse{Fills: out, NextCursor: next}, nil
}
