package binance

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// pathSpotOTOCO places a spot order list: a working order whose fill places a pending OCO pair.
const pathSpotOTOCO = "/api/v3/orderList/otoco"

// placeOTOCO places a spot LIMIT entry with a take-profit and a stop-loss as Binance's OTOCO order list: the entry
// is the working order; once it fills, Binance places the pending pair on the other side for the entry's quantity,
// one above the market and one below (TAKE_PROFIT / STOP_LOSS, market on trigger), and cancels one when the other
// triggers. The answer is the working order. Both legs are required (OTOCO has no single-leg form here), on the last
// price, without a limit price; a MARKET entry has no order list on Binance (NOT_SUPPORTED).
func (s *Server) placeOTOCO(ctx context.Context, req *exchangev1.PlaceOrderRequest) (*exchangev1.PlaceOrderResponse, error) {
	tp, sl := req.GetTakeProfit(), req.GetStopLoss()
	if tp == nil || sl == nil {
		return nil, sdk.NotSupported("a take-profit without a stop-loss (or the other way) on spot: Binance's order list needs both")
	}
	if req.GetType() != exchangev1.OrderType_ORDER_TYPE_LIMIT {
		return nil, sdk.NotSupported("take-profit/stop-loss on a spot market order (Binance order lists start with a limit order)")
	}
	for _, x := range []struct {
		field string
		t     *exchangev1.TpSl
	}{{"take_profit", tp}, {"stop_loss", sl}} {
		if x.t.GetPrice() != "" {
			return nil, sdk.NotSupported(x.field + " with a limit price on spot")
		}
		if tt := x.t.GetTriggerPriceType(); tt != exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_UNSPECIFIED && tt != exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST {
			return nil, invalid(x.field+".trigger_price_type", "spot triggers on the last price only")
		}
	}
	tpStop, err := decParam("take_profit.trigger_price", tp.GetTriggerPrice(), true)
	if err != nil {
		return nil, err
	}
	slStop, err := decParam("stop_loss.trigger_price", sl.GetTriggerPrice(), true)
	if err != nil {
		return nil, err
	}
	plain := &exchangev1.PlaceOrderRequest{Account: req.GetAccount(), MarketType: req.GetMarketType(), Symbol: req.GetSymbol(),
		Side: req.GetSide(), Type: req.GetType(), TimeInForce: req.GetTimeInForce(), Price: req.GetPrice(), Qty: req.GetQty(),
		ClientOrderId: req.GetClientOrderId()}
	q, err := orderParams(Spot, plain)
	if err != nil {
		return nil, err
	}
	cid := req.GetClientOrderId()
	if cid != "" {
		// A retry of a list whose answer was lost: the working order answers (no second list).
		if o, err := s.existingOrder(ctx, Spot, req.GetAccount(), req.GetSymbol(), cid, q); o != nil || err != nil {
			if err != nil {
				return nil, err
			}
			return &exchangev1.PlaceOrderResponse{Order: o}, nil
		}
	}
	l := url.Values{"symbol": {req.GetSymbol()}, "workingSide": {q.Get("side")}, "workingType": {q.Get("type")},
		"workingPrice": {q.Get("price")}, "workingQuantity": {q.Get("quantity")}, "pendingQuantity": {q.Get("quantity")},
		"pendingAboveType": {"TAKE_PROFIT"}, "pendingAboveStopPrice": {tpStop}, "pendingBelowType": {"STOP_LOSS"},
		"pendingBelowStopPrice": {slStop}, "newOrderRespType": {"RESULT"}}
	l.Set("pendingSide", "SELL")
	if req.GetSide() == exchangev1.Side_SIDE_SELL {
		// Selling first: the pending buys are a stop-loss above the market and a take-profit below it.
		l.Set("pendingSide", "BUY")
		l.Set("pendingAboveType", "STOP_LOSS")
		l.Set("pendingAboveStopPrice", slStop)
		l.Set("pendingBelowType", "TAKE_PROFIT")
		l.Set("pendingBelowStopPrice", tpStop)
	}
	if tif := q.Get("timeInForce"); tif != "" {
		l.Set("workingTimeInForce", tif)
	}
	if cid != "" {
		l.Set("workingClientOrderId", cid)
		leg := cid
		if len(leg) > ClientIDMaxLen-3 {
			leg = leg[:ClientIDMaxLen-3]
		}
		l.Set("pendingAboveClientOrderId", leg+"-"+map[bool]string{true: "sl", false: "tp"}[req.GetSide() == exchangev1.Side_SIDE_SELL])
		l.Set("pendingBelowClientOrderId", leg+"-"+map[bool]string{true: "tp", false: "sl"}[req.GetSide() == exchangev1.Side_SIDE_SELL])
	}
	c, _ := s.client()
	// Sent once, like an order: a lost answer is UNKNOWN_OUTCOME, resolved by the working order's client id.
	o, err := writeCall(ctx, c, rest{m: Spot, method: http.MethodPost, path: pathSpotOTOCO, q: l, weight: 1, acct: req.GetAccount(), what: "order list"},
		func(b []byte) (*exchangev1.Order, error) {
			var w struct {
				Reports []wireOrder `json:"orderReports"`
			}
			if err := decodeJSON(b, &w, "order list"); err != nil {
				return nil, err
			}
			if len(w.Reports) == 0 {
				return nil, errors.New("order list: no order reports")
			}
			for _, r := range w.Reports {
				if cid == "" || r.ClientOrderID == cid {
					return r.toOrder(Spot)
				}
			}
			return w.Reports[0].toOrder(Spot)
		})
	if err != nil {
		return nil, err
	}
	o.TakeProfit, o.StopLoss = tp, sl
	return &exchangev1.PlaceOrderResponse{Order: o}, nil
}
