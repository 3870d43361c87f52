package trade

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/exhub/exhub/bff/internal/store"
	"github.com/exhub/exhub/bff/internal/trading"
)

// AlgoBody is a conditional order.
type AlgoBody struct {
	Exchange         string `json:"exchange" pattern:"^[a-z0-9]+(-[a-z0-9]+)*$" maxLength:"40"`
	MarketType       string `json:"market_type" enum:"SPOT,SWAP"`
	Symbol           string `json:"symbol" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$"`
	Side             string `json:"side" enum:"BUY,SELL"`
	Type             string `json:"type" enum:"STOP_MARKET,TAKE_PROFIT_MARKET,STOP_LIMIT,TAKE_PROFIT_LIMIT"`
	TriggerPrice     string `json:"trigger_price" maxLength:"40"`
	TriggerPriceType string `json:"trigger_price_type,omitempty" enum:"LAST,MARK,INDEX"`
	Price            string `json:"price,omitempty" maxLength:"40" doc:"Limit price for the *_LIMIT types"`
	Qty              string `json:"qty,omitempty" maxLength:"40" doc:"Size in base units (not with close_position)"`
	ReduceOnly       bool   `json:"reduce_only,omitempty"`
	ClosePosition    bool   `json:"close_position,omitempty" doc:"Close the whole position on trigger"`
	PositionSide     string `json:"position_side,omitempty" enum:"LONG,SHORT,NET"`
	MarginMode       string `json:"margin_mode,omitempty" enum:"CROSS,ISOLATED"`
}

type algoInput struct {
	IdempotencyKey string `header:"Idempotency-Key" required:"true" minLength:"1" maxLength:"255"`
	Body           AlgoBody
}

type algoListInput struct {
	MarketParams
	PageParams
	History bool `query:"history" doc:"Include triggered and cancelled algo orders, newest first"`
}

type positionsInput struct {
	ExchangeParam
	Symbol string `query:"symbol" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$" doc:"One symbol; empty: every position"`
}

// PositionList is the member's open positions.
type PositionList struct {
	Positions []trading.Position `json:"positions"`
}

type closeInput struct {
	IdempotencyKey string `header:"Idempotency-Key" required:"true" minLength:"1" maxLength:"255"`
	Body           struct {
		Exchange     string `json:"exchange" pattern:"^[a-z0-9]+(-[a-z0-9]+)*$" maxLength:"40"`
		Symbol       string `json:"symbol" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$"`
		PositionSide string `json:"position_side" enum:"LONG,SHORT,NET" doc:"NET in one-way mode"`
		MarginMode   string `json:"margin_mode,omitempty" enum:"CROSS,ISOLATED"`
	}
}

type symbolInput struct {
	ExchangeParam
	Symbol string `query:"symbol" required:"true" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$"`
}

type leverageInput struct {
	Body struct {
		Exchange     string `json:"exchange" pattern:"^[a-z0-9]+(-[a-z0-9]+)*$" maxLength:"40"`
		Symbol       string `json:"symbol" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$"`
		Leverage     string `json:"leverage" maxLength:"10" example:"5" doc:"1 to the instrument's maximum"`
		MarginMode   string `json:"margin_mode,omitempty" enum:"CROSS,ISOLATED"`
		PositionSide string `json:"position_side,omitempty" enum:"LONG,SHORT" doc:"Per side in hedge mode with isolated margin (OKX)"`
	}
}

type marginModeInput struct {
	Body struct {
		Exchange   string `json:"exchange" pattern:"^[a-z0-9]+(-[a-z0-9]+)*$" maxLength:"40"`
		Symbol     string `json:"symbol" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$"`
		MarginMode string `json:"margin_mode" enum:"CROSS,ISOLATED"`
	}
}

// PositionMode is the account's position mode on an exchange.
type PositionMode struct {
	Mode string `json:"mode" enum:"ONE_WAY,HEDGE"`
}

type positionModeInput struct {
	Body struct {
		Exchange string `json:"exchange" pattern:"^[a-z0-9]+(-[a-z0-9]+)*$" maxLength:"40"`
		Mode     string `json:"mode" enum:"ONE_WAY,HEDGE"`
	}
}

type maxSizeInput struct {
	MarketParams
	Price        string `query:"price" maxLength:"40" doc:"Limit price; empty for a market order"`
	PositionSide string `query:"position_side" enum:"LONG,SHORT,NET"`
	MarginMode   string `query:"margin_mode" enum:"CROSS,ISOLATED"`
}

type emptyReply struct {
	CacheControl string `header:"Cache-Control"`
}

func (r *routes) registerAlgo(api huma.API) {
	huma.Register(api, r.op("place-algo-order", http.MethodPost, "/api/v1/algo-orders", "Place a conditional order",
		"A stop or take-profit order (journaled like an order, with an Idempotency-Key). 201 placed; 202 pending "+
			"when the exchange's answer was lost.", http.StatusBadRequest, http.StatusNotFound, http.StatusConflict), r.placeAlgo)
	huma.Register(api, r.op("list-algo-orders", http.MethodGet, "/api/v1/algo-orders", "Conditional orders",
		"Waiting conditional orders of one market (history=true: past ones too, newest first).", http.StatusNotFound), r.listAlgo)
	huma.Register(api, r.op("cancel-algo-order", http.MethodDelete, "/api/v1/algo-orders/{id}", "Cancel a conditional order",
		"Cancels a waiting conditional order placed through exhub (its journal id).", http.StatusNotFound, http.StatusConflict), r.cancel)
}

func (r *routes) registerPositions(api huma.API) {
	huma.Register(api, r.op("list-positions", http.MethodGet, "/api/v1/positions", "Open positions",
		"The member's open positions on an exchange (one symbol or all), sizes in base units.", http.StatusNotFound), r.positions)
	huma.Register(api, r.op("close-position", http.MethodPost, "/api/v1/positions/close", "Close a position at market",
		"Closes a whole position with a market order, journaled like an order (Idempotency-Key required). 201 "+
			"placed; 202 pending when the exchange's answer was lost.", http.StatusBadRequest, http.StatusNotFound), r.closePosition)
	huma.Register(api, r.op("get-leverage", http.MethodGet, "/api/v1/leverage", "Leverage of a symbol",
		"The member's leverage, the instrument's maximum and the margin mode of a symbol.", http.StatusNotFound), r.getLeverage)
	huma.Register(api, r.op("set-leverage", http.MethodPut, "/api/v1/leverage", "Set the leverage of a symbol",
		"Saves the leverage on the exchange.", http.StatusNotFound), r.setLeverage)
	huma.Register(api, r.op("set-margin-mode", http.MethodPut, "/api/v1/margin-mode", "Set the margin mode of a symbol",
		"Cross or Isolated, saved on the exchange.", http.StatusNotFound), r.setMarginMode)
	huma.Register(api, r.op("get-position-mode", http.MethodGet, "/api/v1/position-mode", "Position mode",
		"One-Way or Hedge on an exchange.", http.StatusNotFound), r.getPositionMode)
	huma.Register(api, r.op("set-position-mode", http.MethodPut, "/api/v1/position-mode", "Set the position mode",
		"One-Way or Hedge, saved on the exchange (exchanges refuse it while positions or orders are open).",
		http.StatusNotFound), r.setPositionMode)
	huma.Register(api, r.op("get-max-order-size", http.MethodGet, "/api/v1/max-order-size", "Largest order size",
		"The largest buy and sell the account can place now at a price (empty: market), in base units.",
		http.StatusNotFound), r.maxSize)
}

func (r *routes) journaled(ctx context.Context, member, key string, o store.Order, err error, prior store.Order) (*statusReply[trading.Order], error) {
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	return &statusReply[trading.Order]{Status: statusFor(o, prior.ID == ""), CacheControl: noStore, Body: trading.View(o)}, nil
}

func (r *routes) placeAlgo(ctx context.Context, in *algoInput) (*statusReply[trading.Order], error) {
	member, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	b := in.Body
	if err := r.gate(ctx, b.Exchange); err != nil {
		return nil, err
	}
	prior, _ := r.Trading.OrderByKey(ctx, member, in.IdempotencyKey)
	o, err := r.Trading.PlaceAlgo(ctx, member, in.IdempotencyKey, trading.AlgoRequest{Exchange: b.Exchange,
		MarketType: b.MarketType, Symbol: b.Symbol, Side: b.Side, Type: b.Type, TriggerPrice: b.TriggerPrice,
		TriggerPriceType: b.TriggerPriceType, Price: b.Price, Qty: b.Qty, ReduceOnly: b.ReduceOnly,
		ClosePosition: b.ClosePosition, PositionSide: b.PositionSide, MarginMode: b.MarginMode})
	return r.journaled(ctx, member, in.IdempotencyKey, o, err, prior)
}

func (r *routes) listAlgo(ctx context.Context, in *algoListInput) (*reply[OrderList], error) {
	member, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	list, next, err := r.Trading.AlgoOrders(ctx, member, in.scope(), in.History, in.page())
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	return ok(OrderList{Orders: nonNil(list), NextCursor: next}), nil
}

func (r *routes) positions(ctx context.Context, in *positionsInput) (*reply[PositionList], error) {
	member, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	list, err := r.Trading.Positions(ctx, member, trading.Scope{Exchange: in.Exchange, Symbol: in.Symbol})
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	if list == nil {
		list = []trading.Position{}
	}
	return ok(PositionList{Positions: list}), nil
}

func (r *routes) closePosition(ctx context.Context, in *closeInput) (*statusReply[trading.Order], error) {
	member, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	b := in.Body
	prior, _ := r.Trading.OrderByKey(ctx, member, in.IdempotencyKey)
	o, err := r.Trading.ClosePosition(ctx, member, in.IdempotencyKey, trading.ClosePositionRequest{Exchange: b.Exchange,
		Symbol: b.Symbol, PositionSide: b.PositionSide, MarginMode: b.MarginMode})
	return r.journaled(ctx, member, in.IdempotencyKey, o, err, prior)
}

func (r *routes) getLeverage(ctx context.Context, in *symbolInput) (*reply[trading.Leverage], error) {
	member, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	l, err := r.Trading.GetLeverage(ctx, member, trading.Scope{Exchange: in.Exchange, Symbol: in.Symbol})
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	return ok(l), nil
}

func (r *routes) setLeverage(ctx context.Context, in *leverageInput) (*reply[trading.Leverage], error) {
	member, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	b := in.Body
	if err := r.gate(ctx, b.Exchange); err != nil {
		return nil, err
	}
	l, err := r.Trading.SetLeverage(ctx, member, trading.Scope{Exchange: b.Exchange, Symbol: b.Symbol}, b.Leverage, b.MarginMode, b.PositionSide)
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	return ok(l), nil
}

func (r *routes) setMarginMode(ctx context.Context, in *marginModeInput) (*emptyReply, error) {
	member, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	b := in.Body
	if err := r.gate(ctx, b.Exchange); err != nil {
		return nil, err
	}
	if err := r.Trading.SetMarginMode(ctx, member, trading.Scope{Exchange: b.Exchange, Symbol: b.Symbol}, b.MarginMode); err != nil {
		return nil, r.fail(ctx, err)
	}
	return &emptyReply{CacheControl: noStore}, nil
}

func (r *routes) getPositionMode(ctx context.Context, in *ExchangeParam) (*reply[PositionMode], error) {
	member, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	mode, err := r.Trading.PositionMode(ctx, member, trading.Scope{Exchange: in.Exchange})
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	return ok(PositionMode{Mode: mode}), nil
}

func (r *routes) setPositionMode(ctx context.Context, in *positionModeInput) (*reply[PositionMode], error) {
	member, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	if err := r.gate(ctx, in.Body.Exchange); err != nil {
		return nil, err
	}
	if err := r.Trading.SetPositionMode(ctx, member, trading.Scope{Exchange: in.Body.Exchange}, in.Body.Mode); err != nil {
		return nil, r.fail(ctx, err)
	}
	return ok(PositionMode{Mode: in.Body.Mode}), nil
}

func (r *routes) maxSize(ctx context.Context, in *maxSizeInput) (*reply[trading.MaxOrderSize], error) {
	member, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	m, err := r.Trading.MaxOrderSize(ctx, member, in.scope(), in.Price, in.PositionSide, in.MarginMode)
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	return ok(m), nil
}
