package bybit

import (
	"context"
	"net/url"
	"strconv"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// Conditional orders are Bybit orders with a triggerPrice (linear): a buy stop waits for a rise (triggerDirection
// 1), a buy take-profit for a fall (2), a sell the other way round. They list under orderFilter=StopOrder.

var algoStatusOf = map[string]exchangev1.AlgoOrderStatus{
	"Untriggered":             exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_WAITING,
	"Triggered":               exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_TRIGGERED,
	"New":                     exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_TRIGGERED,
	"PartiallyFilled":         exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_TRIGGERED,
	"Filled":                  exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_TRIGGERED,
	"Cancelled":               exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_CANCELLED,
	"Deactivated":             exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_CANCELLED,
	"PartiallyFilledCanceled": exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_TRIGGERED,
	"Rejected":                exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_FAILED,
}

// algoProto converts a conditional order row.
func algoProto(r rawOrder, in *Instrument) (*exchangev1.AlgoOrder, error) {
	st, ok := algoStatusOf[r.OrderStatus]
	side := sideOf(r.Side)
	if !ok || r.OrderID == "" || side == exchangev1.Side_SIDE_UNSPECIFIED || (r.TriggerDirection != 1 && r.TriggerDirection != 2) {
		return nil, internalf("bybit: conditional order %s: status %q side %q direction %d", r.OrderID, r.OrderStatus, r.Side, r.TriggerDirection)
	}
	stop := (side == exchangev1.Side_SIDE_BUY) == (r.TriggerDirection == 1)
	g := &exchangev1.AlgoOrder{AlgoId: r.OrderID, ClientAlgoId: r.OrderLinkID, Symbol: in.Symbol, MarketType: in.MarketType, Side: side,
		PositionSide: positionSideOf(r.PositionIdx, in.Category == catLinear), Status: st, ReduceOnly: r.ReduceOnly}
	switch {
	case r.OrderType == "Market" && stop:
		g.Type = exchangev1.OrderType_ORDER_TYPE_STOP_MARKET
	case r.OrderType == "Market":
		g.Type = exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_MARKET
	case stop:
		g.Type = exchangev1.OrderType_ORDER_TYPE_STOP_LIMIT
	default:
		g.Type = exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_LIMIT
	}
	var err error
	if g.TriggerPrice, err = canonStr("triggerPrice", r.TriggerPrice); err != nil || g.TriggerPrice == "" {
		return nil, internalf("bybit: conditional order %s: triggerPrice %q", r.OrderID, r.TriggerPrice)
	}
	g.TriggerPriceType = triggerOf[r.TriggerBy]
	if g.TriggerPriceType == exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_UNSPECIFIED {
		g.TriggerPriceType = exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST
	}
	if r.OrderType == "Limit" {
		if g.Price, err = canonStr("price", r.Price); err != nil {
			return nil, malformed("conditional order price", err)
		}
	}
	if g.Qty, err = canonStr("qty", r.Qty); err != nil {
		return nil, malformed("conditional order qty", err)
	}
	if st == exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_TRIGGERED {
		g.OrderId = r.OrderID
	}
	if g.CreatedTime, err = parseMs("createdTime", r.CreatedTime); err != nil {
		return nil, malformed("conditional order", err)
	}
	if g.UpdatedTime, err = parseMs("updatedTime", r.UpdatedTime); err != nil {
		return nil, malformed("conditional order", err)
	}
	return g, nil
}

// fetchAlgo finds one conditional order by id or client id.
func (s *Server) fetchAlgo(ctx context.Context, creds *Credentials, in *Instrument, id, link string) (*exchangev1.AlgoOrder, error) {
	for _, step := range []struct{ path, openOnly string }{{pathOrderRealtime, "0"}, {pathOrderRealtime, "1"}, {pathOrderHistory, ""}} {
		q := url.Values{"category": {in.Category}, "symbol": {in.Symbol}, "orderFilter": {"StopOrder"}}
		if step.openOnly != "" {
			q.Set("openOnly", step.openOnly)
		}
		if id != "" {
			q.Set("orderId", id)
		} else {
			q.Set("orderLinkId", link)
		}
		rows, _, err := s.orderRows(ctx, step.path, q, creds)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if (id != "" && r.OrderID == id) || (id == "" && r.OrderLinkID == link) {
				return algoProto(r, in)
			}
		}
	}
	return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND, "no conditional %s order %s%s on Bybit", in.Symbol, id, link)
}

func (s *Server) algoTarget(ctx context.Context, acct *exchangev1.AccountRef, mt exchangev1.MarketType, symbol string) (*Credentials, *Instrument, error) {
	if mt != exchangev1.MarketType_MARKET_TYPE_SWAP {
		return nil, nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED, "market_type", "conditional orders are offered on SWAP only")
	}
	return s.tradeTarget(ctx, acct, mt, symbol)
}

// PlaceAlgoOrder places a conditional order (STOP_MARKET, TAKE_PROFIT_MARKET, STOP_LIMIT, TAKE_PROFIT_LIMIT) on a
// USDT perpetual: order/create with triggerPrice, triggerDirection and triggerBy. The client algo id is the
// orderLinkId, looked up first like PlaceOrder's; a lost answer is UNKNOWN_OUTCOME.
func (s *Server) PlaceAlgoOrder(ctx context.Context, req *exchangev1.PlaceAlgoOrderRequest) (*exchangev1.PlaceAlgoOrderResponse, error) {
	creds, in, err := s.algoTarget(ctx, req.GetAccount(), req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	if req.GetClosePosition() {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED, "close_position", "give the qty with reduce_only")
	}
	cid := req.GetClientAlgoId()
	if cid != "" && !clientIDPattern.MatchString(cid) {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "client_algo_id", "Bybit's orderLinkId is at most %d letters, digits, - or _", clientOrderIDMaxLen)
	}
	b := map[string]any{"category": in.Category, "symbol": in.Symbol}
	buy := req.GetSide() == exchangev1.Side_SIDE_BUY
	switch req.GetSide() {
	case exchangev1.Side_SIDE_BUY:
		b["side"] = "Buy"
	case exchangev1.Side_SIDE_SELL:
		b["side"] = "Sell"
	default:
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "side", "side is required")
	}
	var stop bool
	switch req.GetType() {
	case exchangev1.OrderType_ORDER_TYPE_STOP_MARKET:
		stop, b["orderType"] = true, "Market"
	case exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_MARKET:
		b["orderType"] = "Market"
	case exchangev1.OrderType_ORDER_TYPE_STOP_LIMIT:
		stop, b["orderType"] = true, "Limit"
	case exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_LIMIT:
		b["orderType"] = "Limit"
	default:
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED, "type", "conditional types only")
	}
	if b["orderType"] == "Limit" {
		p, err := decimal.NewFromString(req.GetPrice())
		if err != nil || !p.IsPositive() {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "price", "a limit price is required")
		}
		b["price"] = p.String()
	}
	trig, err := decimal.NewFromString(req.GetTriggerPrice())
	if err != nil || !trig.IsPositive() {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "trigger_price", "a positive trigger price is required")
	}
	qty, err := decimal.NewFromString(req.GetQty())
	if err != nil || !qty.IsPositive() {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "qty", "a positive qty is required")
	}
	dir := 2
	if stop == buy {
		dir = 1
	}
	switch req.GetTriggerPriceType() {
	case exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_UNSPECIFIED, exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST,
		exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK:
	default:
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED, "trigger_price_type", "last or mark price")
	}
	b["triggerPrice"], b["triggerDirection"], b["triggerBy"], b["qty"] = trig.String(), dir, triggerName(req.GetTriggerPriceType()), qty.String()
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
	if cid != "" {
		b["orderLinkId"] = cid
		g, err := s.fetchAlgo(ctx, creds, in, "", cid)
		switch {
		case err == nil:
			if g.GetType() != req.GetType() || g.GetSide() != req.GetSide() || g.GetTriggerPrice() != canon(trig) || g.GetQty() != canon(qty) {
				return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID, "client_algo_id", "client algo id %s names another order", cid)
			}
			return &exchangev1.PlaceAlgoOrderResponse{AlgoOrder: g}, nil
		case reasonOf(err) != exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND:
			return nil, err
		}
	}
	res, err := s.client().Write(ctx, pathOrderCreate, b, creds)
	if err != nil {
		return nil, err
	}
	ack, err := parseAck(res)
	if err != nil {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME, "order/create: %v", err)
	}
	g, err := s.fetchAlgo(ctx, creds, in, ack.OrderID, "")
	if err != nil {
		return nil, err
	}
	return &exchangev1.PlaceAlgoOrderResponse{AlgoOrder: g}, nil
}

// CancelAlgoOrder cancels a waiting conditional order and reads it back.
func (s *Server) CancelAlgoOrder(ctx context.Context, req *exchangev1.CancelAlgoOrderRequest) (*exchangev1.CancelAlgoOrderResponse, error) {
	creds, in, err := s.algoTarget(ctx, req.GetAccount(), req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	if req.GetAlgoId() == "" && req.GetClientAlgoId() == "" {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "algo_id", "algo_id or client_algo_id is required")
	}
	b := refBody(in, req.GetAlgoId(), req.GetClientAlgoId())
	b["orderFilter"] = "StopOrder"
	if _, err := s.client().Write(ctx, pathOrderCancel, b, creds); err != nil {
		return nil, err
	}
	g, err := s.fetchAlgo(ctx, creds, in, req.GetAlgoId(), req.GetClientAlgoId())
	if err != nil {
		return nil, err
	}
	return &exchangev1.CancelAlgoOrderResponse{AlgoOrder: g}, nil
}

// ListAlgoOrders lists the waiting conditional orders (orderFilter=StopOrder) of a symbol or of every USDT
// perpetual; include_history adds the page of order/history.
func (s *Server) ListAlgoOrders(ctx context.Context, req *exchangev1.ListAlgoOrdersRequest) (*exchangev1.ListAlgoOrdersResponse, error) {
	mt := req.GetMarketType()
	if mt == exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED {
		mt = exchangev1.MarketType_MARKET_TYPE_SWAP
	}
	if mt != exchangev1.MarketType_MARKET_TYPE_SWAP {
		return &exchangev1.ListAlgoOrdersResponse{}, nil
	}
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	q := url.Values{"category": {catLinear}, "orderFilter": {"StopOrder"}, "openOnly": {"0"}, "limit": {strconv.Itoa(realtimePageLimit)}}
	if req.GetSymbol() != "" {
		in, err := s.swap(ctx, req.GetSymbol())
		if err != nil {
			return nil, err
		}
		q.Set("symbol", in.Symbol)
	} else {
		q.Set("settleCoin", settleUSDT)
	}
	var out []*exchangev1.AlgoOrder
	add := func(rows []rawOrder) error {
		for _, r := range rows {
			in, err := s.rowInstrument(ctx, mt, r.Symbol)
			if err != nil {
				return err
			}
			if in == nil {
				continue
			}
			g, err := algoProto(r, in)
			if err != nil {
				return err
			}
			out = append(out, g)
		}
		return nil
	}
	for range maxOpenOrderPages {
		rows, next, err := s.orderRows(ctx, pathOrderRealtime, q, creds)
		if err != nil {
			return nil, err
		}
		if err := add(rows); err != nil {
			return nil, err
		}
		if next == "" {
			break
		}
		q.Set("cursor", next)
	}
	if !req.GetIncludeHistory() {
		return &exchangev1.ListAlgoOrdersResponse{AlgoOrders: out}, nil
	}
	hq, _, err := s.historyQuery(ctx, mt, req.GetSymbol(), req.GetPage(), historyPageLimit)
	if err != nil {
		return nil, err
	}
	hq.Set("orderFilter", "StopOrder")
	rows, next, err := s.orderRows(ctx, pathOrderHistory, hq, creds)
	if err != nil {
		return nil, err
	}
	if err := add(rows); err != nil {
		return nil, err
	}
	return &exchangev1.ListAlgoOrdersResponse{AlgoOrders: out, NextCursor: next}, nil
}
