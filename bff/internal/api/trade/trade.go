// Package trade serves the signed-in member's trading under /api/v1 (OpenAPI tag "trade"): orders, algo orders,
// fills, positions, leverage, margin and position modes, and the largest order size. Every route needs a session
// (and, for state-changing ones, the Origin and CSRF token: the Guard checks them). A member only ever acts on their
// own accounts: the member id comes from the session, the account from the trading service's account source, and
// another member's order id is 404.
//
// Placing an order needs an Idempotency-Key header: the same key with the same request answers the same order and
// never places a second one; with a different request it is 422 (code idempotency_key_reused). An order whose
// outcome is not known yet (the exchange's answer was lost) is 202 with status "pending" and its journal id; GET
// /api/v1/orders/{id} shows the resolved state later. Refusals are problem+json with code (the typed reason),
// exchange_code and a sentence a trader understands.
package trade

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/exhub/exhub/bff/internal/api/apiutil"
	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/servicegate"
	"github.com/exhub/exhub/bff/internal/trading"
)

// Tag is the OpenAPI tag of the trade routes.
const Tag = "trade"

const noStore = "private, no-store"

// Deps are the trade API's collaborators.
type Deps struct {
	// Guard checks the session (and Origin and CSRF on state-changing calls); *auth.Checker is one.
	Guard apiutil.Guard
	// Trading is the order path. Nil: every route answers 503.
	Trading *trading.Service
	// Logger logs failures the member only sees as a 500.
	Logger *slog.Logger
	// Gates refuses trading on an exchange whose config needs two-factor authentication or a verified KYC the
	// member lacks (placing, amending, conditional orders, leverage and modes; cancelling, closing and reading stay
	// open). Nil gates nothing.
	Gates *servicegate.Checker
}

type routes struct{ Deps }

// Problem is the problem+json of a refusal: RFC 9457 fields plus code, exchange_code and field.
type Problem struct {
	Type         string `json:"type" doc:"about:blank"`
	Title        string `json:"title"`
	Status       int    `json:"status"`
	Detail       string `json:"detail" doc:"A sentence a trader understands"`
	Code         string `json:"code" doc:"Why: the typed reason (insufficient_funds, position_mode_mismatch, precision, min_size, order_not_found, idempotency_key_reused, two_factor_required, kyc_required, ...)"`
	ExchangeCode string `json:"exchange_code,omitempty" doc:"The exchange's own error code, when the exchange refused"`
	Field        string `json:"field,omitempty" doc:"The request field at fault"`
}

func (p *Problem) Error() string               { return p.Detail }
func (p *Problem) GetStatus() int              { return p.Status }
func (p *Problem) ContentType(_ string) string { return "application/problem+json" }

func problemOf(e *trading.Error) *Problem {
	return &Problem{Type: "about:blank", Title: http.StatusText(e.Status), Status: e.Status, Detail: e.Message,
		Code: e.Code, ExchangeCode: e.ExchangeCode, Field: e.Field}
}

// fail maps a service error to its answer: a refusal to its problem, anything else to a 500 that names no detail.
func (r *routes) fail(ctx context.Context, err error) error {
	var te *trading.Error
	if errors.As(err, &te) {
		return problemOf(te)
	}
	if !errors.Is(err, context.Canceled) {
		r.Logger.ErrorContext(ctx, "trade request failed", "err", err)
	}
	return apiutil.Error("the trading request failed", err)
}

// member is the session's member id; 503 without the trading service.
func (r *routes) member(ctx context.Context) (string, error) {
	m, ok := auth.MemberFrom(ctx)
	if !ok {
		return "", auth.Unauthorized()
	}
	if r.Trading == nil {
		return "", &Problem{Type: "about:blank", Title: http.StatusText(http.StatusServiceUnavailable),
			Status: http.StatusServiceUnavailable, Code: "unavailable", Detail: "Trading is not available right now."}
	}
	return m.ID, nil
}

// Register adds the trade routes to api.
func Register(api huma.API, d Deps) {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	d.Guard.RegisterSecurityScheme(api)
	r := &routes{Deps: d}
	r.registerOrders(api)
	r.registerAlgo(api)
	r.registerPositions(api)
	r.registerGates(api)
}

func (r *routes) op(id, method, path, summary, description string, errs ...int) huma.Operation {
	return apiutil.Private(r.Guard, huma.Operation{
		OperationID: id, Method: method, Path: path, Summary: summary, Description: description,
		Tags:   []string{Tag},
		Errors: append([]int{http.StatusUnprocessableEntity, http.StatusBadGateway}, errs...),
	})
}

// reply is an answer with a body and the no-store header.
type reply[T any] struct {
	CacheControl string `header:"Cache-Control"`
	Body         T
}

func ok[T any](body T) *reply[T] { return &reply[T]{CacheControl: noStore, Body: body} }

// statusReply is an answer whose status depends on the outcome.
type statusReply[T any] struct {
	Status       int
	CacheControl string `header:"Cache-Control"`
	Body         T
}

// ExchangeParam is the exchange query parameter.
type ExchangeParam struct {
	Exchange string `query:"exchange" required:"true" pattern:"^[a-z0-9]+(-[a-z0-9]+)*$" maxLength:"40" doc:"Exchange slug" example:"binance"`
}

// MarketParams name one market (and optionally one symbol) of an exchange.
type MarketParams struct {
	ExchangeParam
	MarketType string `query:"market_type" required:"true" enum:"SPOT,SWAP" doc:"SPOT, or SWAP for USDT-margined perpetuals"`
	Symbol     string `query:"symbol" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$" doc:"Exchange symbol; empty: every symbol" example:"BTCUSDT"`
}

func (p MarketParams) scope() trading.Scope {
	return trading.Scope{Exchange: p.Exchange, MarketType: p.MarketType, Symbol: p.Symbol}
}

// PageParams select a window of history.
type PageParams struct {
	Start  int64  `query:"start" minimum:"0" doc:"Oldest time (Unix ms); 0: unbounded"`
	End    int64  `query:"end" minimum:"0" doc:"Newest time (Unix ms); 0: unbounded"`
	Limit  int32  `query:"limit" minimum:"0" maximum:"500" doc:"Most rows (0: the exchange's default)"`
	Cursor string `query:"cursor" maxLength:"512" doc:"next_cursor of the previous page, for older rows"`
}

func (p PageParams) page() trading.Page {
	return trading.Page{StartTime: p.Start, EndTime: p.End, Limit: p.Limit, Cursor: p.Cursor}
}
