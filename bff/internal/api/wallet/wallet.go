// Package wallet serves the signed-in member's wallets under /api/v1/wallet (OpenAPI tag "wallet"): balances per
// exchange and wallet with their USDT estimate, coins and networks, deposit addresses, the exchanges' deposit,
// withdrawal, transfer and convert histories, the member's deposit exchange and the per-kind coin history (read
// routes, reads.go), and the money movements (write routes, movements.go).
//
// Every route needs a session (state-changing ones also the Origin and the CSRF token: the Guard checks them).
// A member only ever reads their own accounts: the member id comes from the session and the account from the
// account source; a request never names an account. Answers are never cached (Cache-Control: private, no-store).
// Refusals are problem+json with code and field.
package wallet

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/exhub/exhub/bff/internal/api/apiutil"
	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/market"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/store"
	walletsvc "github.com/exhub/exhub/bff/internal/wallet"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// Tag is the OpenAPI tag of the wallet routes.
const Tag = "wallet"

const noStore = "private, no-store"

// AccountSource opens a member's account on an exchange for plugin calls (*accounts.Service is one). An error
// wrapping Deps.NoAccount means the member has no active account there.
type AccountSource interface {
	AccountRef(ctx context.Context, memberID, exchange string) (*exchangev1.AccountRef, error)
}

// Plugins are the running exchange plugins (*pluginhost.Host is one).
type Plugins interface {
	Get(slug string) (*pluginhost.Supervisor, bool)
}

// Prices are the market's instruments and tickers, for the USDT estimate of balances (*market.Service is one).
type Prices interface {
	Instruments(ctx context.Context, slug, typ string) ([]market.Instrument, market.Freshness, error)
	Tickers(ctx context.Context, slug, typ string) ([]market.Ticker, market.Freshness, error)
}

// Deps are the wallet API's collaborators.
type Deps struct {
	// Guard checks the session (and Origin and CSRF on state-changing calls); *auth.Checker is one.
	Guard apiutil.Guard
	// Exchanges are the configured exchange slugs, in display order.
	Exchanges []string
	// Accounts opens the member's account per exchange; nil: the routes that need one answer 503.
	Accounts AccountSource
	// NoAccount is Accounts' "no account" sentinel (accounts.ErrNoAccount); nil matches nothing.
	NoAccount error
	// Plugins are the exchanges' plugins; nil: the routes that need one answer 503.
	Plugins Plugins
	// Prices values balances in USDT; nil: no estimate (usdt_value empty except for USDT itself).
	Prices Prices
	// Store keeps the coin history and the deposit exchange; nil: those routes answer 503.
	Store *store.Store
	// Logger logs failures the member only sees as a 500.
	Logger *slog.Logger
	// Settings are what the wallet pages show of the configuration (GET /api/v1/wallet/settings).
	Settings Settings
	// Wallet is the money-movement journal's service (the write routes and the member's movements, movements.go);
	// nil: those routes answer 503.
	Wallet *walletsvc.Service
}

// Settings are the operator's wallet settings the member's pages need: whether demo funds can be had, and the
// fee-free route to a partner exchange.
type Settings struct {
	// Faucet: demo funds can be asked for (demo mode with the money-movement service).
	Faucet       bool   `json:"faucet" doc:"POST /api/v1/wallet/faucet is open (demo mode)"`
	FaucetAsset  string `json:"faucet_asset,omitempty" example:"USDT"`
	FaucetAmount string `json:"faucet_amount,omitempty" doc:"One grant" example:"10000"`
	// FeeFree is the partner exchange transfers go to without a fee (absent: none).
	FeeFree *FeeFree `json:"fee_free,omitempty"`
}

// FeeFree is the fee-free route of transfers to another exchange.
type FeeFree struct {
	Exchange string `json:"exchange" example:"binance"`
	Asset    string `json:"asset" example:"USDT"`
	Min      string `json:"min" example:"20"`
	Max      string `json:"max" example:"20000"`
}

type routes struct{ Deps }

// Problem is the problem+json of a refusal: RFC 9457 fields plus code, exchange_code and field.
type Problem struct {
	Type         string `json:"type" doc:"about:blank"`
	Title        string `json:"title"`
	Status       int    `json:"status"`
	Detail       string `json:"detail" doc:"A sentence the member understands"`
	Code         string `json:"code" doc:"Why: a stable code (no_account, exchange_not_found, exchange_unavailable, invalid_argument, ...)"`
	ExchangeCode string `json:"exchange_code,omitempty" doc:"The exchange's own error code, when the exchange refused"`
	Field        string `json:"field,omitempty" doc:"The request field at fault"`
	StepUp       string `json:"step_up,omitempty" doc:"second_factor_stale: the UI page where the member enters an authenticator code again (add return_to), then confirms once more"`
}

func (p *Problem) Error() string               { return p.Detail }
func (p *Problem) GetStatus() int              { return p.Status }
func (p *Problem) ContentType(_ string) string { return "application/problem+json" }

func problem(status int, code, field, detail string) *Problem {
	return &Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Code: code, Field: field, Detail: detail}
}

func unavailable(what string) *Problem {
	return problem(http.StatusServiceUnavailable, "unavailable", "", what+" is not available right now.")
}

// Register adds the wallet routes to api.
func Register(api huma.API, d Deps) {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	d.Guard.RegisterSecurityScheme(api)
	r := &routes{Deps: d}
	r.registerReads(api)
	r.registerMovements(api)
}

// op is a wallet operation: tagged, behind the session guard, with the refusals every route may answer.
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

// memberID is the session's member id.
func memberID(ctx context.Context) (string, error) {
	m, ok := auth.MemberFrom(ctx)
	if !ok {
		return "", auth.Unauthorized()
	}
	return m.ID, nil
}

// fail maps an error to its answer: a problem as itself, anything else to a 500 that names no detail.
func (r *routes) fail(ctx context.Context, err error) error {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	var se huma.StatusError
	if errors.As(err, &se) {
		return se
	}
	if !errors.Is(err, context.Canceled) {
		r.Logger.ErrorContext(ctx, "wallet request failed", "err", err)
	}
	return apiutil.Error("the wallet request failed", err)
}
