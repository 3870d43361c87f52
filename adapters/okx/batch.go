package okx

import (
	"context"
	"strconv"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// batchAccount checks that every order of a batch is for the batch's account (or names none) and returns the
// credentials.
func batchAccount(acct *exchangev1.AccountRef, n int, accountOf func(int) *exchangev1.AccountRef) (*Credentials, error) {
	creds, err := credsOf(acct)
	if err != nil {
		return nil, err
	}
	if n == 0 || n > batchPlaceLimit {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "orders", "a batch holds 1 to %d orders, not %d", batchPlaceLimit, n)
	}
	for i := range n {
		a := accountOf(i)
		if a != nil && (a.GetApiKey() != "" || a.GetAccountId() != "") && (a.GetApiKey() != acct.GetApiKey() || a.GetAccountId() != acct.GetAccountId()) {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "orders", "order %d is for another account than the batch", i)
		}
	}
	return creds, nil
}

// BatchPlaceOrders places up to 20 orders with one trade/batch-orders call. Each order is checked as PlaceOrder
// checks it, and an order with a client id is looked up first (the same parameters return the existing order,
// others are DUPLICATE_CLIENT_ORDER_ID): only the rest is sent. Results come in request order; OKX's per-order
// sCode becomes that order's error (50004 is UNKNOWN_OUTCOME). A batch that fails as a whole may have placed any
// of the orders it sent and is never retried.
func (s *Server) BatchPlaceOrders(ctx context.Context, req *exchangev1.BatchPlaceOrdersRequest) (*exchangev1.BatchPlaceOrdersResponse, error) {
	orders := req.GetOrders()
	creds, err := batchAccount(req.GetAccount(), len(orders), func(i int) *exchangev1.AccountRef { return orders[i].GetAccount() })
	if err != nil {
		return nil, err
	}
	results := make([]*exchangev1.BatchResult, len(orders))
	plans := make([]*orderPlan, len(orders))
	var send []int
	seen := map[string]bool{}
	for i, o := range orders {
		p, err := s.orderPlan(ctx, o)
		if err == nil && p.cid != "" && seen[p.cid] {
			err = sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID, "client_order_id", "client order id %q appears twice in the batch", p.cid)
		}
		if err == nil && p.cid != "" {
			seen[p.cid] = true
			var got *exchangev1.Order
			if got, err = s.existingOrder(ctx, creds, p.in, o); err == nil && got != nil {
				results[i] = &exchangev1.BatchResult{Order: got}
				continue
			}
		}
		if err != nil {
			results[i] = &exchangev1.BatchResult{Error: sdk.DetailOf(err)}
			continue
		}
		plans[i] = p
		send = append(send, i)
	}
	if len(send) == 0 {
		return &exchangev1.BatchPlaceOrdersResponse{Results: results}, nil
	}
	body := make([]map[string]any, len(send))
	for k, i := range send {
		body[k] = plans[i].body
	}
	data, err := s.client().PostBatch(ctx, "/api/v5/trade/batch-orders", body, creds)
	if err != nil {
		return nil, err
	}
	acks, err := decodeList[orderAck](data)
	if err != nil || len(acks) != len(send) {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME,
			"batch-orders: %d acknowledgements for %d orders; resolve the orders by client id", len(acks), len(send))
	}
	for k, i := range send {
		if err := checkItems([]itemStatus{acks[k].itemStatus}); err != nil {
			results[i] = &exchangev1.BatchResult{Error: sdk.DetailOf(err)}
			continue
		}
		results[i] = &exchangev1.BatchResult{Order: s.placedOrder(ctx, creds, plans[i], orders[i], acks[k])}
	}
	return &exchangev1.BatchPlaceOrdersResponse{Results: results}, nil
}

// BatchCancelOrders cancels up to 20 orders with one trade/cancel-batch-orders call and reads each cancelled
// order back. Results come in request order; an order OKX could not cancel carries its sCode as the error.
func (s *Server) BatchCancelOrders(ctx context.Context, req *exchangev1.BatchCancelOrdersRequest) (*exchangev1.BatchCancelOrdersResponse, error) {
	orders := req.GetOrders()
	creds, err := batchAccount(req.GetAccount(), len(orders), func(i int) *exchangev1.AccountRef { return orders[i].GetAccount() })
	if err != nil {
		return nil, err
	}
	results := make([]*exchangev1.BatchResult, len(orders))
	insts := make([]*Instrument, len(orders))
	var send []int
	var body []map[string]string
	for i, o := range orders {
		in, err := s.resolveOrderInst(ctx, creds, o.GetMarketType(), o.GetSymbol(), o.GetOrderId())
		if err == nil && o.GetOrderId() == "" && o.GetClientOrderId() == "" {
			err = sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "order_id", "order_id or client_order_id is required")
		}
		if err != nil {
			results[i] = &exchangev1.BatchResult{Error: sdk.DetailOf(err)}
			continue
		}
		item := map[string]string{"instId": in.InstID}
		if o.GetOrderId() != "" {
			item["ordId"] = o.GetOrderId()
		} else {
			item["clOrdId"] = o.GetClientOrderId()
		}
		insts[i] = in
		send = append(send, i)
		body = append(body, item)
	}
	if len(send) == 0 {
		return &exchangev1.BatchCancelOrdersResponse{Results: results}, nil
	}
	data, err := s.client().PostBatch(ctx, "/api/v5/trade/cancel-batch-orders", body, creds)
	if err != nil {
		return nil, err
	}
	acks, err := decodeList[orderAck](data)
	if err != nil || len(acks) != len(send) {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "cancel-batch-orders: %d answers for %d orders", len(acks), len(send))
	}
	for k, i := range send {
		if err := checkItems([]itemStatus{acks[k].itemStatus}); err != nil {
			results[i] = &exchangev1.BatchResult{Error: sdk.DetailOf(err)}
			continue
		}
		o, err := s.fetchOrder(ctx, creds, insts[i], orders[i].GetOrderId(), orders[i].GetClientOrderId())
		if err != nil {
			results[i] = &exchangev1.BatchResult{Error: sdk.DetailOf(err)}
			continue
		}
		results[i] = &exchangev1.BatchResult{Order: o}
	}
	return &exchangev1.BatchCancelOrdersResponse{Results: results}, nil
}

// CancelAllAfter arms OKX's dead man's switch (trade/cancel-all-after, timeOut in whole seconds, which OKX takes
// from 10 to 120; a timeout_ms that is not a whole second is rounded up) or disarms it (timeout_ms 0). OKX's switch covers every
// pending order of the account, spot and swaps alike, so a symbol cannot narrow it (NOT_SUPPORTED).
func (s *Server) CancelAllAfter(ctx context.Context, req *exchangev1.CancelAllAfterRequest) (*exchangev1.CancelAllAfterResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	if req.GetSymbol() != "" {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED, "symbol",
			"OKX's cancel-all-after covers every pending order of the account; it cannot be limited to a symbol")
	}
	if mt := req.GetMarketType(); mt != exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED {
		if _, err := instTypeOf(mt); err != nil {
			return nil, err
		}
	}
	ms := req.GetTimeoutMs()
	secs := (ms + 999) / 1000
	if ms < 0 {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "timeout_ms", "timeout_ms %d is negative", ms)
	}
	data, err := s.client().Post(ctx, "/api/v5/trade/cancel-all-after", map[string]string{"timeOut": strconv.FormatInt(secs, 10)}, creds)
	if err != nil {
		return nil, err
	}
	type row struct {
		TriggerTime string `json:"triggerTime"`
	}
	rows, err := decodeList[row](data)
	if err != nil || len(rows) != 1 {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "cancel-all-after: malformed answer")
	}
	at, err := parseMs("triggerTime", rows[0].TriggerTime)
	if err != nil {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "cancel-all-after: %v", err)
	}
	return &exchangev1.CancelAllAfterResponse{TriggerTime: at}, nil
}
