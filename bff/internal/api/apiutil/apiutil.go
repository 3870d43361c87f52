// Package apiutil is what the BFF's API packages (market, account, and the coming trade, wallet and content)
// share: RFC 9457 problem+json answers, the mapping of common errors to problems, and the hook that puts a route
// behind the session check.
//
// Each API package registers its own routes with its own dependencies through one function of the same shape,
// Register(api huma.API, deps Deps); bff/internal/api mounts them all on one huma API (one OpenAPI document).
package apiutil

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"
)

// StatusClientClosed is the status logged for a request its client abandoned (nginx's 499; never seen by the
// client).
const StatusClientClosed = 499

// CacheCandlesLive is the Cache-Control of candles whose newest one may still be forming (the market and the
// analytics candles routes).
const CacheCandlesLive = "public, max-age=5, stale-while-revalidate=10"

// Problem writes an RFC 9457 problem document from a plain net/http handler (huma handlers return huma errors).
func Problem(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(&huma.ErrorModel{
		Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail,
	})
}

// Unavailable is a 502/503 problem with Retry-After in whole seconds (at least 1).
func Unavailable(status int, retryAfter time.Duration, detail string) error {
	secs := int(math.Ceil(retryAfter.Seconds()))
	if secs < 1 {
		secs = 1
	}
	return huma.ErrorWithHeaders(huma.NewError(status, detail), http.Header{"Retry-After": {strconv.Itoa(secs)}})
}

// Error maps the errors every area shares: a request its client abandoned is 499; anything else is a 500 whose
// detail names what failed (what) and never the error's text.
func Error(what string, err error) error {
	if errors.Is(err, context.Canceled) {
		return huma.NewError(StatusClientClosed, "request canceled")
	}
	return huma.Error500InternalServerError(what, err)
}

// Field is a 422 problem naming the offending input (location such as "query.symbol" or "body.password").
func Field(location, message string, value any) error {
	return huma.Error422UnprocessableEntity(fmt.Sprintf("%s: %s", location, message),
		&huma.ErrorDetail{Message: message, Location: location, Value: value})
}

// Guard is what a private route needs from the session check: a huma middleware that answers 401/403/503 problems
// and puts the member in the context, and the OpenAPI security scheme it stands for. *auth.Checker is one.
type Guard interface {
	Huma() func(huma.Context, func(huma.Context))
	RegisterSecurityScheme(api huma.API)
}

// SecurityScheme is the OpenAPI name of the session cookie scheme (auth.SecurityScheme).
const SecurityScheme = "session"

// Private puts op behind g: g's middleware first, the session security requirement, and the problems the check
// answers (401, 403, 503) added to op's errors. Call g.RegisterSecurityScheme(api) once per API.
func Private(g Guard, op huma.Operation) huma.Operation {
	op.Middlewares = append(huma.Middlewares{g.Huma()}, op.Middlewares...)
	op.Security = append(op.Security, map[string][]string{SecurityScheme: {}})
	for _, s := range []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusServiceUnavailable} {
		if !slices.Contains(op.Errors, s) {
			op.Errors = append(op.Errors, s)
		}
	}
	return op
}

// ExchangeQuery and SymbolQuery are the query parameters shared by the market and analytics routes.
type ExchangeQuery struct {
	Exchange string `query:"exchange" required:"true" pattern:"^[a-z0-9]+(-[a-z0-9]+)*$" maxLength:"40" doc:"Exchange slug (GET /api/v1/exchanges lists them)." example:"binance"`
	Type     string `query:"type" required:"true" enum:"SPOT,SWAP" doc:"Market type: SPOT, or SWAP for USDT-margined perpetual futures." example:"SWAP"`
}

type SymbolQuery struct {
	ExchangeQuery
	Symbol string `query:"symbol" required:"true" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$" doc:"Exchange symbol as listed by GET /api/v1/instruments." example:"BTCUSDT"`
}
