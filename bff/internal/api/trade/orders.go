package trade

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/exhub/exhub/bff/internal/store"
	"github.com/exhub/exhub/bff/internal/trading"
)

// PlaceBody is a new order.
type PlaceBody struct {
	Exchange     string        `json:"exchange" pattern:"^[a-z0-9]+(-[a-z0-9]+)*$" maxLength:"40" example:"binance"`
	MarketType   string        `json:"market_type" enum:"SPOT,SWAP"`
	Symbol       string        `json:"symbol" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$" example:"BTCUSDT"`
	Side         string        `json:"side" enum:"BUY,SELL"`
	Type         string        `json:"type" enum:"LIMIT,MARKET"`
	TimeInForce  string        `json:"time_in_force,omitempty" enum:"GTC,IOC,FOK,POST_ONLY" doc:"Default GTC for a limit order"`
	Price        string        `json:"price,omitempty" maxLength:"40" doc:"Limit price (decimal string)"`
	PriceMatch   string        `json:"price_match,omitempty" enum:"QUEUE,QUEUE_5,QUEUE_10,QUEUE_20,OPPONENT,OPPONENT_5,OPPONENT_10,OPPONENT_20" doc:"LIMIT without price: the exchange prices the order from its book when it takes it (QUEUE: best price on the order's side; OPPONENT: best opposite price). Only where the market's capabilities say price_match"`
	Qty          string        `json:"qty,omitempty" maxLength:"40" doc:"Size in base units (decimal string)"`
	QuoteQty     string        `json:"quote_qty,omitempty" maxLength:"40" doc:"Spot market buy by quote amount instead of qty"`
	ReduceOnly   bool          `json:"reduce_only,omitempty"`
	PositionSide string        `json:"position_side,omitempty" enum:"LONG,SHORT,NET" doc:"Hedge mode: LONG or SHORT (Open/Close Long/Short)"`
	MarginMode   string        `json:"margin_mode,omitempty" enum:"CROSS,ISOLATED" doc:"SWAP: default the symbol's current mode"`
	TakeProfit   *trading.TpSl `json:"take_profit,omitempty"`
	StopLoss     *trading.TpSl `json:"stop_loss,omitempty"`
}

type placeInput struct {
	IdempotencyKey string `header:"Idempotency-Key" required:"true" minLength:"1" maxLength:"255" doc:"A key the client makes per order; a retry with the same key and request answers the same order"`
	Body           PlaceBody
}

// IDParam is the journal id in the path.
type IDParam struct {
	ID string `path:"id" maxLength:"64" doc:"Journal id of the order"`
}

type amendInput struct {
	IDParam
	IdempotencyKey string `header:"Idempotency-Key" maxLength:"255" doc:"Optional: a retry with the same key answers the first amend"`
	Body           struct {
		Price string `json:"price,omitempty" maxLength:"40" doc:"New price (empty keeps it)"`
		Qty   string `json:"qty,omitempty" maxLength:"40" doc:"New size in base units (empty keeps it)"`
	}
}

type listInput struct {
	MarketParams
	PageParams
	Status string `query:"status" enum:"open,history" default:"open" doc:"open: resting and pending orders; history: past orders, newest first"`
}

// OrderList is a page of orders.
type OrderList struct {
	Orders     []trading.Order `json:"orders"`
	NextCursor string          `json:"next_cursor,omitempty" doc:"Pass as cursor for the next older page (history)"`
}

// FillList is a page of fills.
type FillList struct {
	Fills      []trading.Fill `json:"fills"`
	NextCursor string         `json:"next_cursor,omitempty"`
}

// statusFor is the HTTP status of a journal entry's answer: 201 placed, 202 pending, 200 otherwise (a replay of an
// order resolved as not placed, say).
func statusFor(o store.Order, created bool) int {
	switch trading.StatusOf(o) {
	case trading.StatusPending:
		return http.StatusAccepted
	case trading.StatusNotPlaced:
		return http.StatusOK
	}
	if created {
		return http.StatusCreated
	}
	return http.StatusOK
}

func (r *routes) registerOrders(api huma.API) {
	huma.Register(api, r.op("place-order", http.MethodPost, "/api/v1/orders", "Place an order",
		"Journals the order, then sends it to the member's account on the exchange. 201 with the order when the "+
			"exchange took it; 202 with status pending when its answer was lost (resolved by client id: GET the "+
			"order later; never a failure). The instrument's tick, step, minimum size and minimum notional are "+
			"checked first (422 precision, min_size, min_notional). The same Idempotency-Key with the same body "+
			"answers the same order; with another body 422 idempotency_key_reused.", http.StatusBadRequest,
		http.StatusConflict, http.StatusNotFound, http.StatusTooManyRequests), r.place)
	huma.Register(api, r.op("get-order", http.MethodGet, "/api/v1/orders/{id}", "One order of the member",
		"The journal entry: pending until the outcome is known, then the exchange's status as last read.",
		http.StatusNotFound), r.get)
	huma.Register(api, r.op("amend-order", http.MethodPatch, "/api/v1/orders/{id}", "Amend an open order",
		"Changes price and/or size. 200 with the order; 202 pending when the exchange's answer was lost and "+
			"reading the order back did not show the change yet.", http.StatusNotFound, http.StatusConflict), r.amend)
	huma.Register(api, r.op("cancel-order", http.MethodDelete, "/api/v1/orders/{id}", "Cancel an order",
		"Cancels an open order (cancelling a finished one answers it as it is). 202 pending when the exchange's "+
			"answer was lost twice.", http.StatusNotFound, http.StatusConflict), r.cancel)
	huma.Register(api, r.op("cancel-all-orders", http.MethodDelete, "/api/v1/orders", "Cancel all open orders",
		"Cancels the member's open orders on one market: one symbol, or every symbol when symbol is empty. 200 with "+
			"the orders cancelled; 202 when the exchange's answer was lost: the cancellation is not sent again, and "+
			"the body lists the orders read back as still open.",
		http.StatusNotFound), r.cancelAll)
	huma.Register(api, r.op("list-orders", http.MethodGet, "/api/v1/orders", "Open orders or order history",
		"status=open: the orders resting on the exchange (each with its journal id when placed through exhub) and "+
			"the journal's orders still pending; status=history: past orders, newest first, paged with cursor.",
		http.StatusNotFound), r.list)
	huma.Register(api, r.op("list-fills", http.MethodGet, "/api/v1/fills", "Trade history",
		"The member's executions on one market, newest first, paged with cursor.", http.StatusNotFound), r.fills)
}

func (r *routes) place(ctx context.Context, in *placeInput) (*statusReply[trading.Order], error) {
	member, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	b := in.Body
	if err := r.gate(ctx, b.Exchange); err != nil {
		return nil, err
	}
	prior, _ := r.Trading.OrderByKey(ctx, member, in.IdempotencyKey)
	o, err := r.Trading.Place(ctx, member, in.IdempotencyKey, trading.PlaceRequest{Exchange: b.Exchange, MarketType: b.MarketType,
		Symbol: b.Symbol, Side: b.Side, Type: b.Type, TimeInForce: b.TimeInForce, Price: b.Price, Qty: b.Qty,
		QuoteQty: b.QuoteQty, ReduceOnly: b.ReduceOnly, PositionSide: b.PositionSide, MarginMode: b.MarginMode,
		TakeProfit: b.TakeProfit, StopLoss: b.StopLoss, PriceMatch: b.PriceMatch})
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	return &statusReply[trading.Order]{Status: statusFor(o, prior.ID == ""), CacheControl: noStore, Body: trading.View(o)}, nil
}

func (r *routes) get(ctx context.Context, in *IDParam) (*reply[trading.Order], error) {
	member, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	o, err := r.Trading.Order(ctx, member, in.ID)
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	return ok(trading.View(o)), nil
}

func (r *routes) amend(ctx context.Context, in *amendInput) (*statusReply[trading.Order], error) {
	member, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	if r.Gates != nil {
		cur, err := r.Trading.Order(ctx, member, in.ID)
		if err != nil {
			return nil, r.fail(ctx, err)
		}
		if err := r.gate(ctx, cur.Exchange); err != nil {
			return nil, err
		}
	}
	o, pending, err := r.Trading.Amend(ctx, member, in.ID, in.IdempotencyKey, trading.AmendRequest{Price: in.Body.Price, Qty: in.Body.Qty})
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	return &statusReply[trading.Order]{Status: pendingStatus(pending), CacheControl: noStore, Body: trading.View(o)}, nil
}

func pendingStatus(pending bool) int {
	if pending {
		return http.StatusAccepted
	}
	return http.StatusOK
}

func (r *routes) cancel(ctx context.Context, in *IDParam) (*statusReply[trading.Order], error) {
	member, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	o, pending, err := r.Trading.Cancel(ctx, member, in.ID)
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	return &statusReply[trading.Order]{Status: pendingStatus(pending), CacheControl: noStore, Body: trading.View(o)}, nil
}

func (r *routes) cancelAll(ctx context.Context, in *MarketParams) (*statusReply[OrderList], error) {
	member, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	list, pending, err := r.Trading.CancelAll(ctx, member, in.scope())
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	return &statusReply[OrderList]{Status: pendingStatus(pending), CacheControl: noStore, Body: OrderList{Orders: nonNil(list)}}, nil
}

func (r *routes) list(ctx context.Context, in *listInput) (*reply[OrderList], error) {
	member, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	if in.Status == "history" {
		list, next, err := r.Trading.OrderHistory(ctx, member, in.scope(), in.page())
		if err != nil {
			return nil, r.fail(ctx, err)
		}
		return ok(OrderList{Orders: nonNil(list), NextCursor: next}), nil
	}
	list, err := r.Trading.OpenOrders(ctx, member, in.scope())
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	return ok(OrderList{Orders: nonNil(list)}), nil
}

func (r *routes) fills(ctx context.Context, in *struct {
	MarketParams
	PageParams
}) (*reply[FillList], error) {
	member, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	list, next, err := r.Trading.Fills(ctx, member, in.scope(), in.page())
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	if list == nil {
		list = []trading.Fill{}
	}
	return ok(FillList{Fills: list, NextCursor: next}), nil
}

func nonNil(l []trading.Order) []trading.Order {
	if l == nil {
		return []trading.Order{}
	}
	return l
}
