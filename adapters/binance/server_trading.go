package binance

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

func creds(a *exchangev1.AccountRef) Credentials {
	return Credentials{APIKey: a.GetApiKey(), APISecret: a.GetApiSecret()}
}

func invalid(field, format string, args ...any) error {
	return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, field, format, args...)
}

func decParam(field, v string, required bool) (string, error) {
	if v == "" {
		if required {
			return "", invalid(field, "%s is required", field)
		}
		return "", nil
	}
	d, err := decimal.NewFromString(v)
	if err != nil || !d.IsPositive() {
		return "", invalid(field, "%s %q is not a positive decimal", field, v)
	}
	return d.String(), nil
}

func orderPath(m Market) string {
	if m == Futures {
		return pathFutOrder
	}
	return pathSpotOrder
}

// PlaceOrder places a limit or market order.
func (s *Server) PlaceOrder(ctx context.Context, req *exchangev1.PlaceOrderRequest) (*exchangev1.PlaceOrderResponse, error) {
	m, _, err := s.instrument(ctx, req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	if m == Spot && (req.GetTakeProfit() != nil || req.GetStopLoss() != nil) {
		return s.placeOTOCO(ctx, req) // orderlist.go
	}
	q, err := orderParams(m, req)
	if err != nil {
		return nil, err
	}
	if cid := req.GetClientOrderId(); cid != "" {
		// Binance refuses a repeated newClientOrderId only while its order is open; after a fill or a cancel it
		// would place a second order. Look the id up first so a retry never trades twice.
		if o, err := s.existingOrder(ctx, m, req.GetAccount(), req.GetSymbol(), cid, q); o != nil || err != nil {
			if err != nil {
				return nil, err
			}
			return &exchangev1.PlaceOrderResponse{Order: o}, nil
		}
	}
	if m == Futures {
		if err := s.checkMarginMode(ctx, req.GetAccount(), req.GetSymbol(), req.GetMarginMode(), modeSwitch); err != nil {
			return nil, err
		}
	}
	c, _ := s.client()
	o, err := writeCall(ctx, c, rest{m: m, method: http.MethodPost, path: orderPath(m), q: q, weight: 1, acct: req.GetAccount(), what: "order"},
		inMarket(m, ParseOrder))
	if err != nil {
		if req.GetClientOrderId() != "" && duplicateClientID(m, err) {
			// Binance refuses a client order id already used by an open order: answer with that order, so a
			// retried request is idempotent.
			if got, gerr := s.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: req.GetAccount(), MarketType: req.GetMarketType(),
				Symbol: req.GetSymbol(), ClientOrderId: req.GetClientOrderId()}); gerr == nil {
				return &exchangev1.PlaceOrderResponse{Order: got.GetOrder()}, nil
			}
		}
		return nil, err
	}
	return &exchangev1.PlaceOrderResponse{Order: o}, nil
}

// orderParams builds the wire parameters of a limit or market order (POST /api/v3/order, /fapi/v1/order, an item of
// /fapi/v1/batchOrders).
func orderParams(m Market, req *exchangev1.PlaceOrderRequest) (url.Values, error) {
	side, ok := sideToWire(req.GetSide())
	if !ok {
		return nil, invalid("side", "side is required")
	}
	q := url.Values{"symbol": {req.GetSymbol()}, "side": {side}}
	switch req.GetType() {
	case exchangev1.OrderType_ORDER_TYPE_LIMIT:
		if pm := req.GetPriceMatch(); pm != exchangev1.PriceMatch_PRICE_MATCH_UNSPECIFIED {
			// priceMatch: Binance prices the order from its book (USD-M futures only); never with a price.
			if m != Futures {
				return nil, sdk.NotSupported("price match on spot")
			}
			wire, ok := priceMatchToWire(pm)
			if !ok {
				return nil, invalid("price_match", "price match %v is not offered", pm)
			}
			if req.GetPrice() != "" {
				return nil, invalid("price", "a price-match order takes no price")
			}
			q.Set("priceMatch", wire)
		} else {
			price, err := decParam("price", req.GetPrice(), true)
			if err != nil {
				return nil, err
			}
			q.Set("price", price)
		}
		q.Set("type", "LIMIT")
		switch req.GetTimeInForce() {
		case exchangev1.TimeInForce_TIME_IN_FORCE_UNSPECIFIED, exchangev1.TimeInForce_TIME_IN_FORCE_GTC:
			q.Set("timeInForce", "GTC")
		case exchangev1.TimeInForce_TIME_IN_FORCE_IOC:
			q.Set("timeInForce", "IOC")
		case exchangev1.TimeInForce_TIME_IN_FORCE_FOK:
			q.Set("timeInForce", "FOK")
		case exchangev1.TimeInForce_TIME_IN_FORCE_POST_ONLY:
			if m == Futures {
				q.Set("timeInForce", "GTX")
			} else {
				q.Set("type", "LIMIT_MAKER")
			}
		case exchangev1.TimeInForce_TIME_IN_FORCE_GTD:
			if m != Futures {
				return nil, sdk.NotSupported("good-till-date on spot")
			}
			if req.GetExpireTime() <= 0 {
				return nil, invalid("expire_time", "expire_time is required with TIME_IN_FORCE_GTD")
			}
			q.Set("timeInForce", "GTD")
			q.Set("goodTillDate", strconv.FormatInt(req.GetExpireTime(), 10))
		default:
			return nil, invalid("time_in_force", "time in force %v is not offered", req.GetTimeInForce())
		}
	case exchangev1.OrderType_ORDER_TYPE_MARKET:
		if req.GetPriceMatch() != exchangev1.PriceMatch_PRICE_MATCH_UNSPECIFIED {
			return nil, invalid("price_match", "price match is for limit orders")
		}
		q.Set("type", "MARKET")
	default:
		return nil, invalid("type", "PlaceOrder takes LIMIT or MARKET; conditional orders go through PlaceAlgoOrder")
	}
	if req.GetQuoteQty() != "" && m == Spot && req.GetType() == exchangev1.OrderType_ORDER_TYPE_MARKET {
		qq, err := decParam("quote_qty", req.GetQuoteQty(), true)
		if err != nil {
			return nil, err
		}
		q.Set("quoteOrderQty", qq)
	} else {
		qty, err := decParam("qty", req.GetQty(), true)
		if err != nil {
			return nil, err
		}
		q.Set("quantity", qty)
	}
	if req.GetClientOrderId() != "" {
		q.Set("newClientOrderId", req.GetClientOrderId())
	}
	if m == Futures {
		if req.GetReduceOnly() {
			q.Set("reduceOnly", "true")
		}
		if ps := positionSideToWire(req.GetPositionSide()); ps != "" {
			q.Set("positionSide", ps)
		}
		q.Set("newOrderRespType", "RESULT")
	} else {
		if req.GetReduceOnly() {
			return nil, invalid("reduce_only", "reduce-only does not apply to spot")
		}
		q.Set("newOrderRespType", "FULL")
	}
	if req.GetTakeProfit() != nil || req.GetStopLoss() != nil {
		return nil, sdk.NotSupported("take-profit/stop-loss attached to an order (use PlaceAlgoOrder)")
	}
	return q, nil
}

// lookupClientID reads the order a client order id names on a symbol: nil (and no error) when Binance knows none.
func (s *Server) lookupClientID(ctx context.Context, m Market, acct *exchangev1.AccountRef, symbol, cid string) (*wireOrder, error) {
	c, _ := s.client()
	w, err := call[wireOrder](ctx, c, rest{m: m, method: http.MethodGet, path: orderPath(m),
		q: url.Values{"symbol": {symbol}, "origClientOrderId": {cid}}, weight: 4, acct: acct, what: "order"}, nil)
	if err != nil {
		if reason := sdk.DetailOf(err).GetReason(); reason == exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND {
			return nil, nil
		}
		return nil, err
	}
	return &w, nil
}

// existingOrder returns the order a client order id already names when it was placed with the same parameters
// (a retry), DUPLICATE_CLIENT_ORDER_ID when the id names a different order, and nil, nil when the id is unused.
func (s *Server) existingOrder(ctx context.Context, m Market, acct *exchangev1.AccountRef, symbol, cid string, q url.Values) (*exchangev1.Order, error) {
	w, err := s.lookupClientID(ctx, m, acct, symbol, cid)
	if err != nil || w == nil {
		return nil, err
	}
	if field := wireDiff(q, w); field != "" {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID, "client_order_id",
			"client order id %q is already used by order %d with a different %s", cid, int64(*w.OrderID), field)
	}
	o, err := w.toOrder(m)
	if err != nil {
		return nil, parseErr("order", err)
	}
	return o, nil
}

// wireDiff names the first order parameter of a request that an existing order does not share ("" when the order
// is what the request asks for).
func wireDiff(q url.Values, w *wireOrder) string {
	if w.Symbol != q.Get("symbol") {
		return "symbol"
	}
	if w.Side != q.Get("side") {
		return "side"
	}
	if t := q.Get("type"); t != w.origOrType() && !(t == "LIMIT_MAKER" && w.Type == "LIMIT_MAKER") {
		return "type"
	}
	if tif := q.Get("timeInForce"); tif != "" && w.TimeInForce != "" && tif != w.TimeInForce && tif != "GTD" && w.TimeInForce != "GTD" {
		return "time_in_force"
	}
	for _, p := range []struct{ param, field, got string }{
		{"price", "price", string(w.Price)}, {"quantity", "qty", string(w.OrigQty)}, {"stopPrice", "trigger_price", string(w.StopPrice)},
	} {
		if v := q.Get(p.param); v != "" && !decEqual(v, p.got) {
			return p.field
		}
	}
	if (q.Get("reduceOnly") == "true") != w.ReduceOnly && !w.ClosePosition {
		return "reduce_only"
	}
	if (q.Get("closePosition") == "true") != w.ClosePosition {
		return "close_position"
	}
	if ps := q.Get("positionSide"); ps != "" && w.PositionSide != "" && ps != w.PositionSide {
		return "position_side"
	}
	if wt := q.Get("workingType"); wt != "" && w.WorkingType != "" && wt != w.WorkingType {
		return "trigger_price_type"
	}
	return ""
}

// duplicateClientID tells whether an order was refused for reusing an open order's client order id: spot -2010
// "Duplicate order sent.", futures -4116, or futures -4015 (which Binance also uses for it).
func duplicateClientID(m Market, err error) bool {
	d := sdk.DetailOf(err)
	if d.GetReason() == exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID {
		return true
	}
	return m == Futures && (d.GetExchangeCode() == "-4015" || d.GetExchangeCode() == "-4116")
}

func idParams(q url.Values, orderID, clientID string) error {
	switch {
	case orderID != "":
		q.Set("orderId", orderID)
	case clientID != "":
		q.Set("origClientOrderId", clientID)
	default:
		return invalid("order_id", "order_id or client_order_id is required")
	}
	return nil
}

// CancelOrder cancels one order. A cancel whose answer was lost after it was sent is UNKNOWN_OUTCOME: the caller may
// ask again, and the second answer is read right here. Binance answers "unknown order" (-2011, ORDER_NOT_FOUND) for
// an order that is no longer open, whether the first cancel took it or it filled meanwhile, so that answer is checked
// by reading the order: an order that exists comes back in its final state (cancelled or filled) as the answer; only
// an order Binance does not know at all stays ORDER_NOT_FOUND.
func (s *Server) CancelOrder(ctx context.Context, req *exchangev1.CancelOrderRequest) (*exchangev1.CancelOrderResponse, error) {
	o, err := s.oneOrder(ctx, http.MethodDelete, 1, req.GetAccount(), req.GetMarketType(), req.GetSymbol(), req.GetOrderId(), req.GetClientOrderId())
	if err != nil {
		if sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND {
			return nil, err
		}
		cur, gerr := s.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: req.GetAccount(), MarketType: req.GetMarketType(),
			Symbol: req.GetSymbol(), OrderId: req.GetOrderId(), ClientOrderId: req.GetClientOrderId()})
		if gerr != nil || cur.GetOrder() == nil || isOpenStatus(cur.GetOrder().GetStatus()) {
			return nil, err
		}
		return &exchangev1.CancelOrderResponse{Order: cur.GetOrder()}, nil
	}
	return &exchangev1.CancelOrderResponse{Order: o}, nil
}

// isOpenStatus reports whether an order in this state can still trade.
func isOpenStatus(st exchangev1.OrderStatus) bool {
	switch st {
	case exchangev1.OrderStatus_ORDER_STATUS_NEW, exchangev1.OrderStatus_ORDER_STATUS_PARTIALLY_FILLED,
		exchangev1.OrderStatus_ORDER_STATUS_UNSPECIFIED:
		return true
	}
	return false
}

// GetOrder queries one order.
func (s *Server) GetOrder(ctx context.Context, req *exchangev1.GetOrderRequest) (*exchangev1.GetOrderResponse, error) {
	o, err := s.oneOrder(ctx, http.MethodGet, 4, req.GetAccount(), req.GetMarketType(), req.GetSymbol(), req.GetOrderId(), req.GetClientOrderId())
	if err != nil {
		return nil, err
	}
	return &exchangev1.GetOrderResponse{Order: o}, nil
}

// oneOrder reads (GET) or cancels (DELETE) one order named by its order id or client order id. A cancel is a write:
// an answer lost after the request went out is UNKNOWN_OUTCOME, never EXCHANGE_UNAVAILABLE.
func (s *Server) oneOrder(ctx context.Context, method string, weight int, acct *exchangev1.AccountRef, mt exchangev1.MarketType,
	symbol, orderID, clientID string) (*exchangev1.Order, error) {
	m, _, err := s.instrument(ctx, mt, symbol)
	if err != nil {
		return nil, err
	}
	q := url.Values{"symbol": {symbol}}
	if err := idParams(q, orderID, clientID); err != nil {
		return nil, err
	}
	c, _ := s.client()
	r := rest{m: m, method: method, path: orderPath(m), q: q, weight: weight, acct: acct, what: "order"}
	if method != http.MethodGet {
		return writeCall(ctx, c, r, inMarket(m, ParseOrder))
	}
	return call(ctx, c, r, inMarket(m, ParseOrder))
}

// AmendOrder changes price and/or quantity. Futures: PUT /fapi/v1/order (same order id; both values sent). Spot:
// a quantity decrease at the same price keeps the order and its queue priority (order/amend/keepPriority); any
// other change is a cancel-replace, whose answer is the NEW order (a new order id; the old one is cancelled).
func (s *Server) AmendOrder(ctx context.Context, req *exchangev1.AmendOrderRequest) (*exchangev1.AmendOrderResponse, error) {
	cur, err := s.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: req.GetAccount(), MarketType: req.GetMarketType(),
		Symbol: req.GetSymbol(), OrderId: req.GetOrderId(), ClientOrderId: req.GetClientOrderId()})
	if err != nil {
		return nil, err
	}
	o := cur.GetOrder()
	price, qty := o.GetPrice(), o.GetQty()
	if req.GetPrice() != "" {
		if price, err = decParam("price", req.GetPrice(), true); err != nil {
			return nil, err
		}
	}
	if req.GetQty() != "" {
		if qty, err = decParam("qty", req.GetQty(), true); err != nil {
			return nil, err
		}
	}
	m, _ := marketOf(req.GetMarketType())
	side, _ := sideToWire(o.GetSide())
	c, _ := s.client()
	cr := creds(req.GetAccount())
	pm := req.GetPriceMatch()
	if pm != exchangev1.PriceMatch_PRICE_MATCH_UNSPECIFIED && (m != Futures || req.GetPrice() != "") {
		if m != Futures {
			return nil, sdk.NotSupported("price match on spot")
		}
		return nil, invalid("price", "a price-match amend takes no price")
	}
	if m == Futures {
		q := url.Values{"symbol": {req.GetSymbol()}, "side": {side}, "quantity": {qty}, "price": {price}, "orderId": {o.GetOrderId()}}
		if pm != exchangev1.PriceMatch_PRICE_MATCH_UNSPECIFIED {
			wire, ok := priceMatchToWire(pm)
			if !ok {
				return nil, invalid("price_match", "price match %v is not offered", pm)
			}
			q.Del("price")
			q.Set("priceMatch", wire)
		}
		setIfAny(q, "origClientOrderId", o.GetClientOrderId()) // orderId prevails; the client id names the call too
		// Not idempotent: an amend whose answer was lost may have changed the order (UNKNOWN_OUTCOME, resolved by
		// reading the order), and sending it again could change it twice.
		no, err := writeCall(ctx, c, rest{m: m, method: http.MethodPut, path: pathFutOrder, q: q, weight: 1, acct: req.GetAccount(), what: "order"}, inMarket(m, ParseOrder))
		if err != nil {
			return nil, err
		}
		return &exchangev1.AmendOrderResponse{Order: no}, nil
	}
	samePrice := decEqual(price, o.GetPrice())
	if samePrice && decLess(qty, o.GetQty()) {
		q := url.Values{"symbol": {req.GetSymbol()}, "orderId": {o.GetOrderId()}, "newQty": {qty}}
		setIfAny(q, "origClientOrderId", o.GetClientOrderId())
		body, err := c.write(ctx, m, http.MethodPut, pathSpotAmendKeep, q, 4, cr)
		if err != nil {
			return nil, err
		}
		var w struct {
			Amended *wireOrder `json:"amendedOrder"`
		}
		if err := decodeJSON(body, &w, "amend/keepPriority"); err != nil || w.Amended == nil {
			return nil, parseErr("amend/keepPriority", errors.Join(err, errors.New("no amendedOrder")))
		}
		no, err := w.Amended.toOrder(Spot)
		if err != nil {
			return nil, parseErr("amend/keepPriority", err)
		}
		return &exchangev1.AmendOrderResponse{Order: no}, nil
	}
	q := url.Values{"symbol": {req.GetSymbol()}, "side": {side}, "quantity": {qty}, "price": {price},
		"cancelReplaceMode": {"STOP_ON_FAILURE"}, "cancelOrderId": {o.GetOrderId()}, "type": {"LIMIT"}, "timeInForce": {"GTC"},
		"newOrderRespType": {"RESULT"}}
	setIfAny(q, "cancelOrigClientOrderId", o.GetClientOrderId()) // cancelOrderId prevails
	body, err := c.write(ctx, m, http.MethodPost, pathSpotAmend, q, 1, cr)
	if err != nil {
		return nil, err
	}
	var w struct {
		New *wireOrder `json:"newOrderResponse"`
	}
	if err := decodeJSON(body, &w, "cancelReplace"); err != nil || w.New == nil {
		return nil, parseErr("cancelReplace", errors.Join(err, errors.New("no newOrderResponse")))
	}
	no, err := w.New.toOrder(Spot)
	if err != nil {
		return nil, parseErr("cancelReplace", err)
	}
	return &exchangev1.AmendOrderResponse{Order: no}, nil
}

// setIfAny sets a parameter that has a value.
func setIfAny(q url.Values, k, v string) {
	if v != "" {
		q.Set(k, v)
	}
}

func decEqual(a, b string) bool {
	x, y, err := decPair(a, b)
	return err == nil && x.Equal(y)
}

func decLess(a, b string) bool {
	x, y, err := decPair(a, b)
	return err == nil && x.LessThan(y)
}

// CancelAllOrders cancels the open orders of a symbol in one call (spot DELETE /api/v3/openOrders, futures DELETE
// /fapi/v1/allOpenOrders, which also cancels conditional orders). Without a symbol it does so for every symbol with
// open orders, as Binance needs one per call.
func (s *Server) CancelAllOrders(ctx context.Context, req *exchangev1.CancelAllOrdersRequest) (*exchangev1.CancelAllOrdersResponse, error) {
	m, err := marketOf(req.GetMarketType())
	if err != nil {
		return nil, invalid("market_type", "%v", err)
	}
	symbols := []string{req.GetSymbol()}
	if req.GetSymbol() == "" {
		open, err := s.ListOpenOrders(ctx, &exchangev1.ListOpenOrdersRequest{Account: req.GetAccount(), MarketType: req.GetMarketType()})
		if err != nil {
			return nil, err
		}
		symbols = symbols[:0]
		for _, o := range open.GetOrders() {
			if !slices.Contains(symbols, o.GetSymbol()) {
				symbols = append(symbols, o.GetSymbol())
			}
		}
	} else if _, _, err := s.instrument(ctx, req.GetMarketType(), req.GetSymbol()); err != nil {
		return nil, err
	}
	c, _ := s.client()
	cr := creds(req.GetAccount())
	out := &exchangev1.CancelAllOrdersResponse{}
	for _, sym := range symbols {
		q := url.Values{"symbol": {sym}}
		if m == Spot {
			// A write: an answer lost after the request left is UNKNOWN_OUTCOME (never sent again from here).
			body, err := c.write(ctx, m, http.MethodDelete, pathSpotOpenOrders, q, 1, cr)
			if err != nil {
				if sdk.DetailOf(err).GetReason() == exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND {
					continue // -2011: nothing open
				}
				return nil, err
			}
			os, err := ParseOrders(m, body)
			if err != nil {
				return nil, parseErr("openOrders cancel", err)
			}
			out.Orders = append(out.Orders, os...)
			continue
		}
		// Futures answers only {"code":200,"msg":...}: report the orders that were open just before.
		open, err := s.ListOpenOrders(ctx, &exchangev1.ListOpenOrdersRequest{Account: req.GetAccount(), MarketType: req.GetMarketType(), Symbol: sym})
		if err != nil {
			return nil, err
		}
		body, err := c.write(ctx, m, http.MethodDelete, pathFutAllOpen, q, 1, cr)
		if err != nil {
			return nil, err
		}
		if err := parseCodeOK(body); err != nil {
			return nil, parseErr("allOpenOrders", err)
		}
		for _, o := range open.GetOrders() {
			o.Status = exchangev1.OrderStatus_ORDER_STATUS_CANCELLED
			out.Orders = append(out.Orders, o)
		}
	}
	return out, nil
}

// parseCodeOK checks a {"code":200,"msg":"..."} answer.
func parseCodeOK(body []byte) error {
	var w struct {
		Code flexInt `json:"code"`
		Msg  string  `json:"msg"`
	}
	if err := decodeJSON(body, &w, "result"); err != nil {
		return err
	}
	if w.Code != 200 && w.Code != 0 {
		return fmt.Errorf("code %d: %s", w.Code, w.Msg)
	}
	return nil
}

// ListOpenOrders lists open (non-conditional) orders.
func (s *Server) ListOpenOrders(ctx context.Context, req *exchangev1.ListOpenOrdersRequest) (*exchangev1.ListOpenOrdersResponse, error) {
	m, err := marketOf(req.GetMarketType())
	if err != nil {
		return nil, invalid("market_type", "%v", err)
	}
	q := url.Values{}
	weight := 80
	if req.GetSymbol() != "" {
		if _, _, err := s.instrument(ctx, req.GetMarketType(), req.GetSymbol()); err != nil {
			return nil, err
		}
		q.Set("symbol", req.GetSymbol())
		weight = 6
	}
	path := pathSpotOpenOrders
	if m == Futures {
		path = pathFutOpenOrders
	}
	c, _ := s.client()
	os, err := call(ctx, c, rest{m: m, method: http.MethodGet, path: path, q: q, weight: weight, acct: req.GetAccount(), what: "openOrders"}, inMarket(m, ParseOrders))
	if err != nil {
		return nil, err
	}
	return &exchangev1.ListOpenOrdersResponse{Orders: os}, nil
}

// allOrders reads the newest orders of a symbol created at or before the window's end (allOrders with endTime and
// no startTime, from which Binance would page oldest first). more: Binance answered a full page.
func (s *Server) allOrders(ctx context.Context, m Market, acct *exchangev1.AccountRef, symbol string, w histWindow) ([]wireOrder, bool, error) {
	q := url.Values{"symbol": {symbol}, "limit": {strconv.Itoa(w.fetch(OrderHistoryLimit))}}
	if e := w.endParam(); e != "" {
		q.Set("endTime", e)
	}
	path := pathSpotAllOrders
	if m == Futures {
		path = pathFutAllOrders
	}
	c, _ := s.client()
	ws, err := call[[]wireOrder](ctx, c, rest{m: m, method: http.MethodGet, path: path, q: q, weight: 20, acct: acct, what: "allOrders"}, nil)
	if err != nil {
		return nil, false, err
	}
	return ws, len(ws) >= w.fetch(OrderHistoryLimit), nil
}

func wireOrderTime(w wireOrder) int64 {
	if w.Time != 0 {
		return int64(w.Time)
	}
	return int64(w.UpdateTime)
}

func wireOrderID(w wireOrder) string {
	if w.OrderID == nil {
		return ""
	}
	return strconv.FormatInt(int64(*w.OrderID), 10)
}

// orderHistoryCalls bounds the allOrders calls of one ListOrderHistory page (a run of conditional orders can make
// a page short; its cursor then carries on).
const orderHistoryCalls = 10

// ListOrderHistory lists orders of one symbol, newest first: the newest `limit` created in the page's window, and a
// cursor to the older ones.
func (s *Server) ListOrderHistory(ctx context.Context, req *exchangev1.ListOrderHistoryRequest) (*exchangev1.ListOrderHistoryResponse, error) {
	m, _, err := s.instrument(ctx, req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	w, err := newWindow(req.GetPage(), OrderHistoryLimit)
	if err != nil {
		return nil, err
	}
	// Conditional orders are rows of allOrders but are listed by ListAlgoOrders: they are dropped, and older rows
	// are read on (up to orderHistoryCalls calls) until the page holds `limit` orders or the history ends.
	var rows []wireOrder
	cur, next := w, ""
	for range orderHistoryCalls {
		ws, full, err := s.allOrders(ctx, m, req.GetAccount(), req.GetSymbol(), cur)
		if err != nil {
			return nil, err
		}
		var got []wireOrder
		got, next = newestPage(cur, ws, full, wireOrderTime, wireOrderID)
		for _, r := range got {
			if m == Spot || !isConditional(r.Type) {
				rows = append(rows, r)
			}
		}
		if len(rows) >= w.limit || next == "" {
			break
		}
		if cur, err = newWindow(&exchangev1.HistoryPage{StartTime: w.start, Limit: int32(w.limit), Cursor: next}, OrderHistoryLimit); err != nil {
			return nil, err
		}
	}
	page := rows
	if len(rows) > w.limit {
		// More than a page: cut it, and the cursor continues after the last order returned.
		page, next = newestPage(w, rows, true, wireOrderTime, wireOrderID)
	} // else every row down to the last call's cursor was read: that cursor continues
	out := make([]*exchangev1.Order, 0, len(page))
	for i := range page {
		if m == Futures && isConditional(page[i].Type) {
			continue
		}
		o, err := page[i].toOrder(m)
		if err != nil {
			return nil, parseErr("allOrders", err)
		}
		out = append(out, o)
	}
	return &exchangev1.ListOrderHistoryResponse{Orders: out, NextCursor: next}, nil
}

// ListFills lists the account's trades of one symbol, newest first, with a cursor to older ones.
func (s *Server) ListFills(ctx context.Context, req *exchangev1.ListFillsRequest) (*exchangev1.ListFillsResponse, error) {
	m, _, err := s.instrument(ctx, req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	w, err := newWindow(req.GetPage(), FillsLimit)
	if err != nil {
		return nil, err
	}
	q := url.Values{"symbol": {req.GetSymbol()}, "limit": {strconv.Itoa(w.fetch(FillsLimit))}}
	if e := w.endParam(); e != "" {
		q.Set("endTime", e)
	}
	path := pathSpotMyTrades
	if m == Futures {
		path = pathFutUserTrades
	}
	c, _ := s.client()
	fs, err := call(ctx, c, rest{m: m, method: http.MethodGet, path: path, q: q, weight: 20, acct: req.GetAccount(), what: "trades"}, inMarket(m, ParseFills))
	if err != nil {
		return nil, err
	}
	page, next := newestPage(w, fs, len(fs) >= w.fetch(FillsLimit),
		func(f *exchangev1.Fill) int64 { return f.GetTime() }, func(f *exchangev1.Fill) string { return f.GetTradeId() })
	return &exchangev1.ListFillsResponse{Fills: page, NextCursor: next}, nil
}

// PlaceAlgoOrder places STOP_MARKET / TAKE_PROFIT_MARKET futures orders (optionally closePosition).
func (s *Server) PlaceAlgoOrder(ctx context.Context, req *exchangev1.PlaceAlgoOrderRequest) (*exchangev1.PlaceAlgoOrderResponse, error) {
	if req.GetMarketType() != exchangev1.MarketType_MARKET_TYPE_SWAP {
		return nil, sdk.NotSupported("conditional orders on spot")
	}
	if _, _, err := s.instrument(ctx, req.GetMarketType(), req.GetSymbol()); err != nil {
		return nil, err
	}
	side, ok := sideToWire(req.GetSide())
	if !ok {
		return nil, invalid("side", "side is required")
	}
	var typ string
	switch req.GetType() {
	case exchangev1.OrderType_ORDER_TYPE_STOP_MARKET:
		typ = "STOP_MARKET"
	case exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_MARKET:
		typ = "TAKE_PROFIT_MARKET"
	default:
		return nil, sdk.NotSupported("algo order type " + req.GetType().String())
	}
	trig, err := decParam("trigger_price", req.GetTriggerPrice(), true)
	if err != nil {
		return nil, err
	}
	wt, ok := workingTypeToWire(req.GetTriggerPriceType())
	if !ok {
		return nil, sdk.NotSupported("trigger price type " + req.GetTriggerPriceType().String())
	}
	q := url.Values{"symbol": {req.GetSymbol()}, "side": {side}, "type": {typ}, "stopPrice": {trig}, "workingType": {wt}}
	if req.GetClosePosition() {
		q.Set("closePosition", "true")
	} else {
		qty, err := decParam("qty", req.GetQty(), true)
		if err != nil {
			return nil, err
		}
		q.Set("quantity", qty)
		if req.GetReduceOnly() {
			q.Set("reduceOnly", "true")
		}
	}
	if ps := positionSideToWire(req.GetPositionSide()); ps != "" {
		q.Set("positionSide", ps)
	}
	if cid := req.GetClientAlgoId(); cid != "" {
		q.Set("newClientOrderId", cid)
		// As for PlaceOrder: a retried id answers the order it already placed, never a second one.
		w, err := s.lookupClientID(ctx, Futures, req.GetAccount(), req.GetSymbol(), cid)
		if err != nil {
			return nil, err
		}
		if w != nil {
			if field := wireDiff(q, w); field != "" {
				return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID, "client_algo_id",
					"client algo id %q is already used by order %d with a different %s", cid, int64(*w.OrderID), field)
			}
			a, err := w.toAlgo()
			if err != nil {
				return nil, parseErr("algo order", err)
			}
			return &exchangev1.PlaceAlgoOrderResponse{AlgoOrder: a}, nil
		}
	}
	if err := s.checkMarginMode(ctx, req.GetAccount(), req.GetSymbol(), req.GetMarginMode(), modeSwitch); err != nil {
		return nil, err
	}
	c, _ := s.client()
	a, err := writeCall(ctx, c, rest{m: Futures, method: http.MethodPost, path: pathFutOrder, q: q, weight: 1, acct: req.GetAccount(), what: "algo order"}, ParseAlgoOrder)
	if err != nil {
		return nil, err
	}
	return &exchangev1.PlaceAlgoOrderResponse{AlgoOrder: a}, nil
}

// CancelAlgoOrder cancels a conditional order.
func (s *Server) CancelAlgoOrder(ctx context.Context, req *exchangev1.CancelAlgoOrderRequest) (*exchangev1.CancelAlgoOrderResponse, error) {
	if _, _, err := s.instrument(ctx, exchangev1.MarketType_MARKET_TYPE_SWAP, req.GetSymbol()); err != nil {
		return nil, err
	}
	q := url.Values{"symbol": {req.GetSymbol()}}
	if err := idParams(q, req.GetAlgoId(), req.GetClientAlgoId()); err != nil {
		return nil, err
	}
	c, _ := s.client()
	a, err := call(ctx, c, rest{m: Futures, method: http.MethodDelete, path: pathFutOrder, q: q, weight: 1, acct: req.GetAccount(), what: "algo order"}, ParseAlgoOrder)
	if err != nil {
		return nil, err
	}
	return &exchangev1.CancelAlgoOrderResponse{AlgoOrder: a}, nil
}

// ListAlgoOrders lists waiting conditional orders (and, with include_history, the symbol's past ones too, newest
// first, with a cursor to older ones).
func (s *Server) ListAlgoOrders(ctx context.Context, req *exchangev1.ListAlgoOrdersRequest) (*exchangev1.ListAlgoOrdersResponse, error) {
	if req.GetIncludeHistory() {
		if req.GetSymbol() == "" {
			return nil, invalid("symbol", "history needs a symbol on Binance")
		}
		if _, _, err := s.instrument(ctx, exchangev1.MarketType_MARKET_TYPE_SWAP, req.GetSymbol()); err != nil {
			return nil, err
		}
		w, err := newWindow(req.GetPage(), OrderHistoryLimit)
		if err != nil {
			return nil, err
		}
		ws, more, err := s.allOrders(ctx, Futures, req.GetAccount(), req.GetSymbol(), w)
		if err != nil {
			return nil, err
		}
		page, next := newestPage(w, ws, more, wireOrderTime, wireOrderID)
		var out []*exchangev1.AlgoOrder
		for i := range page {
			if !isConditional(page[i].origOrType()) {
				continue
			}
			a, err := page[i].toAlgo()
			if err != nil {
				return nil, parseErr("algo orders", err)
			}
			out = append(out, a)
		}
		return &exchangev1.ListAlgoOrdersResponse{AlgoOrders: out, NextCursor: next}, nil
	}
	q := url.Values{}
	weight := 40
	if req.GetSymbol() != "" {
		if _, _, err := s.instrument(ctx, exchangev1.MarketType_MARKET_TYPE_SWAP, req.GetSymbol()); err != nil {
			return nil, err
		}
		q.Set("symbol", req.GetSymbol())
		weight = 1
	}
	c, _ := s.client()
	as, err := call(ctx, c, rest{m: Futures, method: http.MethodGet, path: pathFutOpenOrders, q: q, weight: weight, acct: req.GetAccount(), what: "algo orders"}, ParseAlgoOrders)
	if err != nil {
		return nil, err
	}
	slices.Reverse(as)
	return &exchangev1.ListAlgoOrdersResponse{AlgoOrders: as}, nil
}

// ListPositions lists open perpetual positions with leverage and margin mode from symbolConfig.
func (s *Server) ListPositions(ctx context.Context, req *exchangev1.ListPositionsRequest) (*exchangev1.ListPositionsResponse, error) {
	q := url.Values{}
	if req.GetSymbol() != "" {
		if err := s.perp(ctx, req.GetSymbol()); err != nil {
			return nil, err
		}
		q.Set("symbol", req.GetSymbol())
	}
	c, _ := s.client()
	ps, err := call(ctx, c, rest{m: Futures, method: http.MethodGet, path: pathFutPositionRisk, q: q, weight: 5, acct: req.GetAccount(), what: "positionRisk"}, ParsePositionRisk)
	if err != nil {
		return nil, err
	}
	if len(ps) > 0 {
		if cb, err := c.signed(ctx, Futures, http.MethodGet, pathFutSymbolConfig, q, 5, creds(req.GetAccount())); err == nil {
			if cfgs, err := ParseSymbolConfig(cb); err == nil {
				by := map[string]SymbolConfig{}
				for _, sc := range cfgs {
					by[sc.Symbol] = sc
				}
				for _, p := range ps {
					if sc, ok := by[p.Symbol]; ok {
						if p.Leverage == "" {
							p.Leverage = sc.Leverage
						}
						if p.MarginMode == exchangev1.MarginMode_MARGIN_MODE_UNSPECIFIED {
							p.MarginMode = sc.MarginMode
						}
					}
				}
			}
		}
		s.crossMarginRatio(ctx, c, req.GetAccount(), ps)
	}
	return &exchangev1.ListPositionsResponse{Positions: ps}, nil
}

// crossMarginRatio sets the account's cross margin ratio (from /fapi/v3/account) on the cross positions; the
// positions stay without it when the account cannot be read.
func (s *Server) crossMarginRatio(ctx context.Context, c *RESTClient, acct *exchangev1.AccountRef, ps []*exchangev1.Position) {
	var cross []*exchangev1.Position
	for _, p := range ps {
		if p.MarginMode != exchangev1.MarginMode_MARGIN_MODE_ISOLATED {
			cross = append(cross, p)
		}
	}
	if len(cross) == 0 {
		return
	}
	b, err := c.signed(ctx, Futures, http.MethodGet, pathFutAccount, url.Values{}, 5, creds(acct))
	if err != nil {
		return
	}
	r, err := ParseCrossMarginRatio(b)
	if err != nil {
		return
	}
	for _, p := range cross {
		p.MarginRatio = r
	}
}

// ClosePosition closes a position with a reduce-only market order. With a client_order_id a retry answers the order
// the first call placed (the position it closed is gone by then), and an id used by another order is refused.
func (s *Server) ClosePosition(ctx context.Context, req *exchangev1.ClosePositionRequest) (*exchangev1.ClosePositionResponse, error) {
	if mt := req.GetMarketType(); mt != exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED && mt != exchangev1.MarketType_MARKET_TYPE_SWAP {
		return nil, invalid("market_type", "positions exist on SWAP only")
	}
	if err := s.perp(ctx, req.GetSymbol()); err != nil {
		return nil, err
	}
	if cid := req.GetClientOrderId(); cid != "" {
		w, err := s.lookupClientID(ctx, Futures, req.GetAccount(), req.GetSymbol(), cid)
		if err != nil {
			return nil, err
		}
		if w != nil {
			if w.origOrType() != "MARKET" || (!w.ReduceOnly && (w.PositionSide == "" || w.PositionSide == "BOTH")) {
				return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID, "client_order_id",
					"client order id %q is already used by order %d, which is not a position close", cid, int64(*w.OrderID))
			}
			o, err := w.toOrder(Futures)
			if err != nil {
				return nil, parseErr("order", err)
			}
			return &exchangev1.ClosePositionResponse{Order: o}, nil
		}
	}
	if err := s.checkMarginMode(ctx, req.GetAccount(), req.GetSymbol(), req.GetMarginMode(), modeStrict); err != nil {
		return nil, err
	}
	ps, err := s.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: req.GetAccount(), Symbol: req.GetSymbol()})
	if err != nil {
		return nil, err
	}
	for _, p := range ps.GetPositions() {
		if req.GetPositionSide() != exchangev1.PositionSide_POSITION_SIDE_UNSPECIFIED && p.GetPositionSide() != req.GetPositionSide() {
			continue
		}
		qty := decimal.RequireFromString(p.GetQty())
		side := exchangev1.Side_SIDE_SELL
		if p.GetPositionSide() == exchangev1.PositionSide_POSITION_SIDE_SHORT || (p.GetPositionSide() == exchangev1.PositionSide_POSITION_SIDE_NET && qty.IsNegative()) {
			side = exchangev1.Side_SIDE_BUY
		}
		r, err := s.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: req.GetAccount(), MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP,
			Symbol: req.GetSymbol(), Side: side, Type: exchangev1.OrderType_ORDER_TYPE_MARKET, Qty: qty.Abs().String(),
			ReduceOnly: p.GetPositionSide() == exchangev1.PositionSide_POSITION_SIDE_NET, PositionSide: p.GetPositionSide(),
			ClientOrderId: req.GetClientOrderId()})
		if err != nil {
			return nil, err
		}
		return &exchangev1.ClosePositionResponse{Order: r.GetOrder()}, nil
	}
	return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED, "no open %s position", req.GetSymbol())
}

// GetLeverage reads leverage and margin mode from /fapi/v1/symbolConfig.
func (s *Server) GetLeverage(ctx context.Context, req *exchangev1.GetLeverageRequest) (*exchangev1.GetLeverageResponse, error) {
	if err := s.perp(ctx, req.GetSymbol()); err != nil {
		return nil, err
	}
	c, _ := s.client()
	cfgs, err := call(ctx, c, rest{m: Futures, method: http.MethodGet, path: pathFutSymbolConfig, q: url.Values{"symbol": {req.GetSymbol()}},
		weight: 5, acct: req.GetAccount(), what: "symbolConfig"}, func(b []byte) ([]SymbolConfig, error) {
		cs, err := ParseSymbolConfig(b)
		if err == nil && len(cs) == 0 {
			err = errors.New("no row")
		}
		return cs, err
	})
	if err != nil {
		return nil, err
	}
	return &exchangev1.GetLeverageResponse{Leverage: cfgs[0].Leverage, MarginMode: cfgs[0].MarginMode}, nil
}

// SetLeverage sets the symbol's leverage (whole numbers on Binance); a margin mode given is applied first.
func (s *Server) SetLeverage(ctx context.Context, req *exchangev1.SetLeverageRequest) (*exchangev1.SetLeverageResponse, error) {
	if err := s.perp(ctx, req.GetSymbol()); err != nil {
		return nil, err
	}
	l, err := decimal.NewFromString(req.GetLeverage())
	if err != nil || !l.IsInteger() || l.LessThan(decimal.NewFromInt(1)) {
		return nil, invalid("leverage", "leverage %q must be a whole number >= 1", req.GetLeverage())
	}
	if req.GetMarginMode() != exchangev1.MarginMode_MARGIN_MODE_UNSPECIFIED {
		if _, err := s.SetMarginMode(ctx, &exchangev1.SetMarginModeRequest{Account: req.GetAccount(), Symbol: req.GetSymbol(), MarginMode: req.GetMarginMode()}); err != nil {
			return nil, err
		}
	}
	c, _ := s.client()
	got, err := call(ctx, c, rest{m: Futures, method: http.MethodPost, path: pathFutLeverage, q: url.Values{"symbol": {req.GetSymbol()}, "leverage": {l.String()}}, weight: 1, acct: req.GetAccount(), what: "leverage"}, ParseLeverage)
	if err != nil {
		return nil, err
	}
	return &exchangev1.SetLeverageResponse{Leverage: got}, nil
}

// SetMarginMode sets cross or isolated; "no need to change" (-4046) is success.
func (s *Server) SetMarginMode(ctx context.Context, req *exchangev1.SetMarginModeRequest) (*exchangev1.SetMarginModeResponse, error) {
	if err := s.perp(ctx, req.GetSymbol()); err != nil {
		return nil, err
	}
	var mt string
	switch req.GetMarginMode() {
	case exchangev1.MarginMode_MARGIN_MODE_CROSS:
		mt = "CROSSED"
	case exchangev1.MarginMode_MARGIN_MODE_ISOLATED:
		mt = "ISOLATED"
	default:
		return nil, invalid("margin_mode", "margin_mode is required")
	}
	c, _ := s.client()
	_, err := c.signed(ctx, Futures, http.MethodPost, pathFutMarginType, url.Values{"symbol": {req.GetSymbol()}, "marginType": {mt}}, 1, creds(req.GetAccount()))
	if err != nil && sdk.DetailOf(err).GetExchangeCode() != "-4046" {
		return nil, err
	}
	return &exchangev1.SetMarginModeResponse{}, nil
}

// GetPositionMode reads dualSidePosition.
func (s *Server) GetPositionMode(ctx context.Context, req *exchangev1.GetPositionModeRequest) (*exchangev1.GetPositionModeResponse, error) {
	c, _ := s.client()
	dual, err := call(ctx, c, rest{m: Futures, method: http.MethodGet, path: pathFutDual, weight: 30, acct: req.GetAccount(), what: "positionSide/dual"}, ParseDualSide)
	if err != nil {
		return nil, err
	}
	mode := exchangev1.PositionMode_POSITION_MODE_ONE_WAY
	if dual {
		mode = exchangev1.PositionMode_POSITION_MODE_HEDGE
	}
	return &exchangev1.GetPositionModeResponse{Mode: mode}, nil
}

// SetPositionMode sets one-way or hedge; "no need to change" (-4059) is success.
func (s *Server) SetPositionMode(ctx context.Context, req *exchangev1.SetPositionModeRequest) (*exchangev1.SetPositionModeResponse, error) {
	var dual string
	switch req.GetMode() {
	case exchangev1.PositionMode_POSITION_MODE_ONE_WAY:
		dual = "false"
	case exchangev1.PositionMode_POSITION_MODE_HEDGE:
		dual = "true"
	default:
		return nil, invalid("mode", "mode is required")
	}
	c, _ := s.client()
	_, err := c.signed(ctx, Futures, http.MethodPost, pathFutDual, url.Values{"dualSidePosition": {dual}}, 1, creds(req.GetAccount()))
	if err != nil && sdk.DetailOf(err).GetExchangeCode() != "-4059" {
		return nil, err
	}
	return &exchangev1.SetPositionModeResponse{}, nil
}

// History calls return the NEWEST `limit` rows of [start_time, end_time], newest first, whatever Binance's own
// default is (Binance answers the OLDEST page from startTime). The adapter therefore never sends startTime where
// Binance pages from it: it asks for the rows up to an end time and drops those before start_time. next_cursor
// carries on towards older rows: the oldest time returned becomes the next end time, and the ids already returned at
// exactly that time are skipped, so rows sharing a millisecond are neither lost nor repeated.

// histCursor is the opaque next_cursor: base64 of {"e": end time, "s": ids at e already returned}.
type histCursor struct {
	End  int64    `json:"e"`
	Skip []string `json:"s,omitempty"`
}

func (c histCursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// histWindow is one page request after its cursor is applied.
type histWindow struct {
	start, end int64 // inclusive; end 0: up to now
	limit      int   // rows wanted
	skip       map[string]bool
}

// fetch is how many rows to ask Binance for: the page plus the rows skipped at the end time, within max.
func (w histWindow) fetch(max int) int { return min(w.limit+len(w.skip), max) }

// newWindow reads a HistoryPage (and its cursor) for an endpoint returning at most max rows per call.
func newWindow(p *exchangev1.HistoryPage, max int) (histWindow, error) {
	w := histWindow{start: p.GetStartTime(), end: p.GetEndTime(), limit: int(p.GetLimit())}
	if w.limit <= 0 || w.limit > max {
		w.limit = max
	}
	if p.GetCursor() != "" {
		raw, err := base64.RawURLEncoding.DecodeString(p.GetCursor())
		var c histCursor
		if err == nil {
			err = json.Unmarshal(raw, &c)
		}
		if err != nil || c.End <= 0 {
			return w, invalid("page.cursor", "cursor %q was not made by this plugin", p.GetCursor())
		}
		w.end = c.End
		if len(c.Skip) >= max {
			// More rows share one millisecond than a call returns: move past it.
			w.end, c.Skip = c.End-1, nil
		}
		w.skip = make(map[string]bool, len(c.Skip))
		for _, id := range c.Skip {
			w.skip[id] = true
		}
	}
	return w, nil
}

// endParam is the endTime to send ("" for none).
func (w histWindow) endParam() string {
	if w.end <= 0 {
		return ""
	}
	return strconv.FormatInt(w.end, 10)
}

// newestPage keeps the rows of the window (minus those skipped by the cursor), newest first, cut to the limit,
// and returns the cursor of the next older page ("" when there is none). more says whether Binance may hold older
// rows than those it returned (its answer was a full page).
func newestPage[T any](w histWindow, rows []T, more bool, timeOf func(T) int64, idOf func(T) string) ([]T, string) {
	out := make([]T, 0, len(rows))
	for _, r := range rows {
		t := timeOf(r)
		if t < w.start || (w.end > 0 && t > w.end) || (t == w.end && w.skip[idOf(r)]) {
			continue
		}
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b T) int {
		if c := compareInt64(timeOf(b), timeOf(a)); c != 0 {
			return c
		}
		return compareID(idOf(b), idOf(a))
	})
	if len(out) > w.limit {
		out, more = out[:w.limit], true
	}
	if !more || len(out) == 0 {
		return out, ""
	}
	oldest := timeOf(out[len(out)-1])
	c := histCursor{End: oldest}
	if oldest == w.end {
		for id := range w.skip {
			c.Skip = append(c.Skip, id)
		}
	}
	for _, r := range out {
		if timeOf(r) == oldest {
			c.Skip = append(c.Skip, idOf(r))
		}
	}
	slices.Sort(c.Skip)
	return out, c.encode()
}

// compareID orders ids numerically when both are numbers (Binance's order and trade ids grow), else as strings.
func compareID(a, b string) int {
	x, errA := strconv.ParseInt(a, 10, 64)
	y, errB := strconv.ParseInt(b, 10, 64)
	if errA == nil && errB == nil {
		return cmp.Compare(x, y)
	}
	return strings.Compare(a, b)
}

// modeAction says what checkMarginMode may do when a request's margin mode differs from the symbol's.
type modeAction int

const (
	modeStrict modeAction = iota // refuse: the request acts on what exists in the symbol's mode (close position)
	modeDry                      // report whether the mode could be switched, without switching (max order size)
	modeSwitch                   // switch the symbol's mode when nothing is open on it (placing an order)
)

func marginTypeWire(m exchangev1.MarginMode) string {
	switch m {
	case exchangev1.MarginMode_MARGIN_MODE_CROSS:
		return "CROSSED"
	case exchangev1.MarginMode_MARGIN_MODE_ISOLATED:
		return "ISOLATED"
	}
	return ""
}

// checkMarginMode makes sure a futures request with a margin mode trades in that mode. Binance sets the margin type
// per symbol: when it differs and the symbol has no position and no open orders, modeSwitch sets it (POST
// /fapi/v1/marginType) before the order goes out; otherwise the request is refused with ACCOUNT_MODE_MISMATCH, never
// traded in the other mode. UNSPECIFIED trades in the symbol's current mode.
func (s *Server) checkMarginMode(ctx context.Context, acct *exchangev1.AccountRef, symbol string, want exchangev1.MarginMode, act modeAction) error {
	if want == exchangev1.MarginMode_MARGIN_MODE_UNSPECIFIED {
		return nil
	}
	mt := marginTypeWire(want)
	if mt == "" {
		return invalid("margin_mode", "unknown margin mode %v", want)
	}
	c, _ := s.client()
	cr := creds(acct)
	cfgs, err := call(ctx, c, rest{m: Futures, method: http.MethodGet, path: pathFutSymbolConfig, q: url.Values{"symbol": {symbol}}, weight: 5, acct: acct, what: "symbolConfig"}, ParseSymbolConfig)
	if err != nil {
		return err
	}
	for _, sc := range cfgs {
		if sc.Symbol == symbol && sc.MarginMode == want {
			return nil
		}
	}
	mismatch := func(why string) error {
		return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_ACCOUNT_MODE_MISMATCH, "margin_mode",
			"%s trades in the other margin mode and %s; Binance sets the margin mode per symbol, so the %s order cannot be placed",
			symbol, why, mt)
	}
	if act == modeStrict {
		return mismatch("the request acts on what exists in that mode")
	}
	ps, err := call(ctx, c, rest{m: Futures, method: http.MethodGet, path: pathFutPositionRisk, q: url.Values{"symbol": {symbol}}, weight: 5, acct: acct, what: "positionRisk"}, ParsePositionRisk)
	if err != nil {
		return err
	}
	for _, p := range ps {
		if q, err := decimal.NewFromString(p.GetQty()); err == nil && !q.IsZero() {
			return mismatch("it has an open position")
		}
	}
	open, err := call[[]wireOrder](ctx, c, rest{m: Futures, method: http.MethodGet, path: pathFutOpenOrders, q: url.Values{"symbol": {symbol}}, weight: 1, acct: acct, what: "openOrders"}, nil)
	if err != nil {
		return err
	}
	if len(open) > 0 {
		return mismatch("it has open orders")
	}
	if act == modeDry {
		return nil
	}
	_, err = c.signed(ctx, Futures, http.MethodPost, pathFutMarginType, url.Values{"symbol": {symbol}, "marginType": {mt}}, 1, cr)
	if err != nil && sdk.DetailOf(err).GetExchangeCode() != "-4046" {
		return err
	}
	return nil
}

// BatchPlaceOrders places up to 5 futures orders in one POST /fapi/v1/batchOrders; each result is the order or
// Binance's error for it, in request order. Spot has no batch call. The call as a whole is not idempotent: a lost
// answer is UNKNOWN_OUTCOME (resolve each order by its client id).
func (s *Server) BatchPlaceOrders(ctx context.Context, req *exchangev1.BatchPlaceOrdersRequest) (*exchangev1.BatchPlaceOrdersResponse, error) {
	n := len(req.GetOrders())
	if n == 0 || n > FuturesBatchPlaceMax {
		return nil, invalid("orders", "a batch holds 1 to %d orders, not %d", FuturesBatchPlaceMax, n)
	}
	// Like PlaceOrder, every client id is looked up first: Binance refuses a repeated newClientOrderId only while
	// its order is open, so a retried batch would otherwise place a second order for an item that already filled.
	// An item whose id names an order with the same parameters answers with that order, one with other
	// parameters (or an id repeated inside the batch) with DUPLICATE_CLIENT_ORDER_ID; only the rest is sent.
	results := make([]*exchangev1.BatchResult, n)
	seen := map[string]bool{}
	var sent []int
	items := make([]map[string]string, 0, n)
	for i, o := range req.GetOrders() {
		if o.GetMarketType() != exchangev1.MarketType_MARKET_TYPE_SWAP {
			return nil, sdk.NotSupported("batch orders on spot")
		}
		if a := o.GetAccount(); a != nil && (a.GetApiKey() != req.GetAccount().GetApiKey() || a.GetApiSecret() != req.GetAccount().GetApiSecret()) {
			return nil, invalid("orders", "order %d names another account", i)
		}
		if _, _, err := s.instrument(ctx, o.GetMarketType(), o.GetSymbol()); err != nil {
			return nil, err
		}
		q, err := orderParams(Futures, o)
		if err != nil {
			return nil, err
		}
		if cid := o.GetClientOrderId(); cid != "" {
			if seen[cid] {
				results[i] = &exchangev1.BatchResult{Error: sdk.DetailOf(sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID,
					"client_order_id", "client order id %q is repeated in the batch", cid))}
				continue
			}
			seen[cid] = true
			got, err := s.existingOrder(ctx, Futures, req.GetAccount(), o.GetSymbol(), cid, q)
			switch {
			case sdk.DetailOf(err).GetReason() == exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID:
				results[i] = &exchangev1.BatchResult{Error: sdk.DetailOf(err)}
				continue
			case err != nil:
				return nil, err
			case got != nil:
				results[i] = &exchangev1.BatchResult{Order: got}
				continue
			}
			q.Set("newClientOrderId", cid)
		}
		if err := s.checkMarginMode(ctx, req.GetAccount(), o.GetSymbol(), o.GetMarginMode(), modeSwitch); err != nil {
			return nil, err
		}
		it := map[string]string{}
		for k, v := range q {
			it[k] = v[0]
		}
		items = append(items, it)
		sent = append(sent, i)
	}
	if len(items) == 0 {
		return &exchangev1.BatchPlaceOrdersResponse{Results: results}, nil
	}
	raw, err := json.Marshal(items)
	if err != nil {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "binance batch: %v", err)
	}
	c, _ := s.client()
	body, err := c.write(ctx, Futures, http.MethodPost, pathFutBatchOrders, url.Values{"batchOrders": {string(raw)}}, 5, creds(req.GetAccount()))
	if err != nil {
		return nil, err
	}
	placed, err := parseBatch(body, len(items))
	if err != nil {
		return nil, err
	}
	for k, i := range sent {
		results[i] = placed[k]
	}
	return &exchangev1.BatchPlaceOrdersResponse{Results: results}, nil
}

// parseBatch reads a batchOrders answer: per item an order or {"code":..,"msg":..}.
func parseBatch(body []byte, n int) ([]*exchangev1.BatchResult, error) {
	var items []json.RawMessage
	if err := decodeJSON(body, &items, "batchOrders"); err != nil {
		return nil, parseErr("batchOrders", err)
	}
	if len(items) != n {
		return nil, parseErr("batchOrders", errCount(len(items), n))
	}
	out := make([]*exchangev1.BatchResult, 0, n)
	for _, it := range items {
		var e struct {
			Code flexInt `json:"code"`
			Msg  string  `json:"msg"`
		}
		if json.Unmarshal(it, &e) == nil && e.Code != 0 {
			out = append(out, &exchangev1.BatchResult{Error: (&APIError{Status: http.StatusBadRequest, Code: int(e.Code), Msg: e.Msg}).ToSDK().Detail})
			continue
		}
		o, err := ParseOrder(Futures, it)
		if err != nil {
			return nil, parseErr("batchOrders", err)
		}
		out = append(out, &exchangev1.BatchResult{Order: o})
	}
	return out, nil
}

type countError struct{ got, want int }

func (e countError) Error() string {
	return "batch answer has " + strconv.Itoa(e.got) + " items for " + strconv.Itoa(e.want) + " orders"
}

func errCount(got, want int) error { return countError{got, want} }

// BatchCancelOrders cancels up to 10 futures orders of one symbol in one DELETE /fapi/v1/batchOrders (by order id,
// or by client id when no order id is given).
func (s *Server) BatchCancelOrders(ctx context.Context, req *exchangev1.BatchCancelOrdersRequest) (*exchangev1.BatchCancelOrdersResponse, error) {
	n := len(req.GetOrders())
	if n == 0 || n > FuturesBatchCancelMax {
		return nil, invalid("orders", "a batch cancel holds 1 to %d orders, not %d", FuturesBatchCancelMax, n)
	}
	sym := req.GetOrders()[0].GetSymbol()
	var ids []int64
	var cids []string
	for i, o := range req.GetOrders() {
		if o.GetMarketType() != exchangev1.MarketType_MARKET_TYPE_SWAP {
			return nil, sdk.NotSupported("batch cancel on spot")
		}
		if o.GetSymbol() != sym {
			return nil, invalid("orders", "order %d: Binance cancels a batch of one symbol", i)
		}
		switch {
		case o.GetOrderId() != "":
			id, err := strconv.ParseInt(o.GetOrderId(), 10, 64)
			if err != nil {
				return nil, invalid("orders", "order %d: order_id %q is not a Binance order id", i, o.GetOrderId())
			}
			ids = append(ids, id)
		case o.GetClientOrderId() != "":
			cids = append(cids, o.GetClientOrderId())
		default:
			return nil, invalid("orders", "order %d: order_id or client_order_id is required", i)
		}
	}
	if len(ids) > 0 && len(cids) > 0 {
		return nil, invalid("orders", "Binance takes order ids or client ids in one batch, not both")
	}
	if _, _, err := s.instrument(ctx, exchangev1.MarketType_MARKET_TYPE_SWAP, sym); err != nil {
		return nil, err
	}
	q := url.Values{"symbol": {sym}}
	if len(ids) > 0 {
		raw, _ := json.Marshal(ids)
		q.Set("orderIdList", string(raw))
	} else {
		raw, _ := json.Marshal(cids)
		q.Set("origClientOrderIdList", string(raw))
	}
	c, _ := s.client()
	body, err := c.signed(ctx, Futures, http.MethodDelete, pathFutBatchOrders, q, 1, creds(req.GetAccount()))
	if err != nil {
		return nil, err
	}
	results, err := parseBatch(body, n)
	if err != nil {
		return nil, err
	}
	return &exchangev1.BatchCancelOrdersResponse{Results: results}, nil
}

// CancelAllAfter arms Binance's countdownCancelAll for a futures symbol (Binance scopes it per symbol): unless it is
// called again within timeout_ms, every open order of the symbol is cancelled; 0 disarms.
func (s *Server) CancelAllAfter(ctx context.Context, req *exchangev1.CancelAllAfterRequest) (*exchangev1.CancelAllAfterResponse, error) {
	if req.GetMarketType() != exchangev1.MarketType_MARKET_TYPE_SWAP {
		return nil, sdk.NotSupported("cancel-all-after on spot")
	}
	if req.GetSymbol() == "" {
		return nil, invalid("symbol", "Binance arms the countdown per symbol: symbol is required")
	}
	if req.GetTimeoutMs() < 0 {
		return nil, invalid("timeout_ms", "timeout_ms must not be negative")
	}
	if err := s.perp(ctx, req.GetSymbol()); err != nil {
		return nil, err
	}
	c, _ := s.client()
	q := url.Values{"symbol": {req.GetSymbol()}, "countdownTime": {strconv.FormatInt(req.GetTimeoutMs(), 10)}}
	if _, err := c.signed(ctx, Futures, http.MethodPost, pathFutCountdown, q, 10, creds(req.GetAccount())); err != nil {
		return nil, err
	}
	out := &exchangev1.CancelAllAfterResponse{}
	if req.GetTimeoutMs() > 0 {
		out.TriggerTime = c.serverNow(Futures).UnixMilli() + req.GetTimeoutMs()
	}
	return out, nil
}

// CheckCredentials reads what the key may do (GET /sapi/v1/account/apiRestrictions) and the futures position mode.
func (s *Server) CheckCredentials(ctx context.Context, req *exchangev1.CheckCredentialsRequest) (*exchangev1.CheckCredentialsResponse, error) {
	c, _ := s.client()
	body, err := c.signed(ctx, Spot, http.MethodGet, pathAPIRestrictions, nil, 1, creds(req.GetAccount()))
	if err != nil {
		return nil, err
	}
	var w struct {
		IPRestrict             bool    `json:"ipRestrict"`
		EnableReading          bool    `json:"enableReading"`
		EnableSpotAndMargin    bool    `json:"enableSpotAndMarginTrading"`
		EnableFutures          bool    `json:"enableFutures"`
		EnableWithdrawals      bool    `json:"enableWithdrawals"`
		EnableInternalTransfer bool    `json:"enableInternalTransfer"`
		PermitsUniversal       bool    `json:"permitsUniversalTransfer"`
		TradingAuthorityExpiry flexInt `json:"tradingAuthorityExpirationTime"`
	}
	if err := decodeJSON(body, &w, "apiRestrictions"); err != nil {
		return nil, parseErr("apiRestrictions", err)
	}
	out := &exchangev1.CheckCredentialsResponse{CanRead: w.EnableReading, CanTrade: w.EnableSpotAndMargin || w.EnableFutures,
		CanWithdraw: w.EnableWithdrawals, CanTransfer: w.EnableInternalTransfer || w.PermitsUniversal, IpRestricted: w.IPRestrict,
		ExpiresTime: int64(w.TradingAuthorityExpiry)}
	if w.EnableFutures {
		pm, err := s.GetPositionMode(ctx, &exchangev1.GetPositionModeRequest{Account: req.GetAccount()})
		if err != nil {
			return nil, err
		}
		out.PositionMode = pm.GetMode()
	}
	return out, nil
}

// GetMaxOrderSize estimates the largest order the account can place now, in base units on the step grid, capped by
// the instrument's max quantity. Binance has no endpoint for it: spot divides the free quote balance by the price
// (buy) and takes the free base balance (sell); futures multiplies the available margin by the leverage and divides
// by the price, plus the position an order on that side would close first (one-way mode, or the matching hedge
// side). Fees are not deducted, so an order of exactly this size may still be refused for the fee.
func (s *Server) GetMaxOrderSize(ctx context.Context, req *exchangev1.GetMaxOrderSizeRequest) (*exchangev1.GetMaxOrderSizeResponse, error) {
	m, in, err := s.instrument(ctx, req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	if m == Futures {
		if err := s.checkMarginMode(ctx, req.GetAccount(), req.GetSymbol(), req.GetMarginMode(), modeDry); err != nil {
			return nil, err
		}
	}
	price := decimal.Zero
	if req.GetPrice() != "" {
		p, err := decParam("price", req.GetPrice(), true)
		if err != nil {
			return nil, err
		}
		price = decimal.RequireFromString(p)
	}
	buyPrice, sellPrice := price, price
	if price.IsZero() {
		d, err := s.fetchDepth(ctx, m, req.GetSymbol(), 5)
		if err != nil {
			return nil, err
		}
		if len(d.Asks) == 0 || len(d.Bids) == 0 {
			return nil, invalid("price", "the book is empty: give a price")
		}
		buyPrice, sellPrice = decimal.RequireFromString(d.Asks[0].GetPrice()), decimal.RequireFromString(d.Bids[0].GetPrice())
	}
	step := decimal.RequireFromString(in.GetStepSize())
	grid := func(q decimal.Decimal) string {
		if q.IsNegative() {
			q = decimal.Zero
		}
		q = q.Div(step).Floor().Mul(step)
		if in.GetMaxQty() != "" {
			q = decimal.Min(q, decimal.RequireFromString(in.GetMaxQty()))
		}
		return q.String()
	}
	c, _ := s.client()
	if m == Spot {
		bs, err := call(ctx, c, rest{m: Spot, method: http.MethodGet, path: pathSpotAccount, q: url.Values{"omitZeroBalances": {"true"}}, weight: 20, acct: req.GetAccount(), what: "account"}, ParseSpotAccount)
		if err != nil {
			return nil, err
		}
		free := func(asset string) decimal.Decimal {
			for _, b := range bs {
				if b.GetAsset() == asset {
					return decimal.RequireFromString(b.GetAvailable())
				}
			}
			return decimal.Zero
		}
		return &exchangev1.GetMaxOrderSizeResponse{MaxBuyQty: grid(free(in.GetQuote()).Div(buyPrice)), MaxSellQty: grid(free(in.GetBase()))}, nil
	}
	fa, err := call(ctx, c, rest{m: Futures, method: http.MethodGet, path: pathFutAccount, weight: 5, acct: req.GetAccount(), what: "futures account"}, ParseFuturesAccount)
	if err != nil {
		return nil, err
	}
	lev, err := s.GetLeverage(ctx, &exchangev1.GetLeverageRequest{Account: req.GetAccount(), Symbol: req.GetSymbol()})
	if err != nil {
		return nil, err
	}
	ps, err := s.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: req.GetAccount(), Symbol: req.GetSymbol()})
	if err != nil {
		return nil, err
	}
	closeBuy, closeSell := decimal.Zero, decimal.Zero // position a buy (sell) closes before opening
	for _, p := range ps.GetPositions() {
		q := decimal.RequireFromString(p.GetQty())
		switch p.GetPositionSide() {
		case exchangev1.PositionSide_POSITION_SIDE_NET:
			if q.IsNegative() {
				closeBuy = q.Abs()
			} else {
				closeSell = q
			}
		case exchangev1.PositionSide_POSITION_SIDE_LONG:
			if req.GetPositionSide() == exchangev1.PositionSide_POSITION_SIDE_LONG {
				closeSell = q
			}
		case exchangev1.PositionSide_POSITION_SIDE_SHORT:
			if req.GetPositionSide() == exchangev1.PositionSide_POSITION_SIDE_SHORT {
				closeBuy = q
			}
		}
	}
	power := decimal.Zero
	if fa.AvailableMargin != "" {
		power = decimal.RequireFromString(fa.AvailableMargin).Mul(decimal.RequireFromString(lev.GetLeverage()))
	}
	buy, sell := power.Div(buyPrice).Add(closeBuy), power.Div(sellPrice).Add(closeSell)
	switch req.GetPositionSide() {
	case exchangev1.PositionSide_POSITION_SIDE_LONG: // hedge long: buys open, sells only close
		sell = closeSell
	case exchangev1.PositionSide_POSITION_SIDE_SHORT:
		buy = closeBuy
	}
	return &exchangev1.GetMaxOrderSizeResponse{MaxBuyQty: grid(buy), MaxSellQty: grid(sell)}, nil
}
