package binance

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

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
