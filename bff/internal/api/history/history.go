// Package history serves the signed-in member's trading history under /api/v1/history (OpenAPI tag "history"):
// closed orders and fills from the exchanges' history calls (read page after page by cursor and merged across
// exchanges, newest first, joined with the order journal), their sub-totals (the spec's OrderHistorySubTotal),
// realized PnL with the current equity (the spec's GetRpnl) and funding payments of futures positions.
//
// Every route needs a session; a member only reads their own accounts: the member id comes from the session and
// each exchange's account from the trading service's account source (an exchange where the member has no account is
// left out). Answers are Cache-Control: private, no-store. Money stays decimal strings and decimal arithmetic.
package history

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/exhub/exhub/bff/internal/api/apiutil"
	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/market"
	"github.com/exhub/exhub/bff/internal/trading"
)

// Tag is the OpenAPI tag of the history routes.
const Tag = "history"

const noStore = "private, no-store"

// Prices values coins in USDT: the spot instruments and tickers of an exchange (*market.Service is one).
type Prices interface {
	Instruments(ctx context.Context, slug, typ string) ([]market.Instrument, market.Freshness, error)
	Tickers(ctx context.Context, slug, typ string) ([]market.Ticker, market.Freshness, error)
}

// Deps are the history API's collaborators.
type Deps struct {
	// Guard checks the session; *auth.Checker is one.
	Guard apiutil.Guard
	// Trading reads the exchanges' history for the member. Nil: every route answers 503.
	Trading *trading.Service
	// Prices values balances for the equity of GET /history/rpnl; nil values USDT only.
	Prices Prices
	// Logger logs failures the member only sees as a 500.
	Logger *slog.Logger
}

type routes struct{ Deps }

// Register adds the history routes to api.
func Register(api huma.API, d Deps) {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	d.Guard.RegisterSecurityScheme(api)
	r := &routes{Deps: d}
	huma.Register(api, r.op("history-orders", "/api/v1/history/orders", "Closed orders",
		"The member's finished orders (filled, cancelled, rejected, expired) on spot or futures, from each "+
			"exchange's order history (read page after page by cursor) merged newest first, each with its journal "+
			"id and source exhub when it was placed through exhub. Without exchange: every exchange where the member "+
			"has an account (one that fails is named in failed). Paged with cursor (next_cursor)."), r.orders)
	huma.Register(api, r.op("history-fills", "/api/v1/history/fills", "Trade details",
		"The member's executions (fills) with fee, fee asset and realized PnL, merged newest first like "+
			"/history/orders, paged with cursor."), r.fills)
	huma.Register(api, r.op("history-subtotal", "/api/v1/history/subtotal", "Sub-totals of the history",
		"The spec's OrderHistorySubTotal over the filters' range, from the fills: trades, orders, buys and sells, "+
			"volume, quote volume, fees per fee asset and realized PnL, per exchange and symbol and overall. Exact "+
			"decimal arithmetic. truncated: a history longer than the walk's bound was cut."), r.subtotal)
	huma.Register(api, r.op("history-rpnl", "/api/v1/history/rpnl", "Realized PnL and equity",
		"The spec's GetRpnl: the realized PnL of futures fills (and funding payments where the exchange reports "+
			"them) between from and to (Unix ms), and the current equity (every balance valued in USDT at the spot "+
			"last price, plus unrealized PnL), per exchange and in total."), r.rpnl)
	r.registerFunding(api)
}

func (r *routes) op(id, path, summary, description string) huma.Operation {
	return apiutil.Private(r.Guard, huma.Operation{
		OperationID: id, Method: http.MethodGet, Path: path, Summary: summary, Description: description,
		Tags:   []string{Tag},
		Errors: []int{http.StatusUnprocessableEntity, http.StatusNotFound, http.StatusConflict, http.StatusBadGateway},
	})
}

// HistoryProblem is the problem+json of a refusal: RFC 9457 fields plus code.
type HistoryProblem struct {
	Type   string `json:"type" doc:"about:blank"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Code   string `json:"code,omitempty" doc:"The typed reason (no_account, exchange_not_found, exchange_unavailable, ...)"`
	Field  string `json:"field,omitempty"`
}

func (p *HistoryProblem) Error() string               { return p.Detail }
func (p *HistoryProblem) GetStatus() int              { return p.Status }
func (p *HistoryProblem) ContentType(_ string) string { return "application/problem+json" }

func problem(status int, code, field, detail string) *HistoryProblem {
	return &HistoryProblem{Type: "about:blank", Title: http.StatusText(status), Status: status, Code: code, Field: field, Detail: detail}
}

func (r *routes) fail(ctx context.Context, err error) error {
	var te *trading.Error
	if errors.As(err, &te) {
		return problem(te.Status, te.Code, te.Field, te.Message)
	}
	var p *HistoryProblem
	if errors.As(err, &p) {
		return p
	}
	if !errors.Is(err, context.Canceled) {
		r.Logger.ErrorContext(ctx, "history request failed", "err", err)
	}
	return apiutil.Error("the history request failed", err)
}

func (r *routes) member(ctx context.Context) (string, error) {
	m, ok := auth.MemberFrom(ctx)
	if !ok {
		return "", auth.Unauthorized()
	}
	if r.Trading == nil {
		return "", problem(http.StatusServiceUnavailable, "unavailable", "", "History is not available right now.")
	}
	return m.ID, nil
}

type reply[T any] struct {
	CacheControl string `header:"Cache-Control"`
	Body         T
}

func ok[T any](body T) *reply[T] { return &reply[T]{CacheControl: noStore, Body: body} }

// HistoryFailure is an exchange whose history could not be read; the other exchanges' rows are still answered.
type HistoryFailure struct {
	Exchange string `json:"exchange"`
	Code     string `json:"code" doc:"The typed reason (exchange_unavailable, ...)"`
	Detail   string `json:"detail"`
}

// Range is the date range of every history route.
type Range struct {
	From int64 `query:"from" minimum:"0" doc:"Oldest time (Unix ms, inclusive); 0: unbounded"`
	To   int64 `query:"to" minimum:"0" doc:"Newest time (Unix ms, inclusive); 0: now"`
}

func (rg Range) check() error {
	if rg.From > 0 && rg.To > 0 && rg.From > rg.To {
		return apiutil.Field("query.from", "from is after to", rg.From)
	}
	return nil
}

// Filters select the rows of the orders, fills and sub-total routes.
type Filters struct {
	Market   string `query:"market" required:"true" enum:"spot,futures" doc:"spot, or futures (USDT-margined perpetuals)"`
	Exchange string `query:"exchange" pattern:"^[a-z0-9]+(-[a-z0-9]+)*$" maxLength:"40" doc:"Exchange slug; empty: every exchange where the member has an account" example:"binance"`
	Symbol   string `query:"symbol" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$" doc:"Exchange symbol; empty: every symbol" example:"BTCUSDT"`
	Side     string `query:"side" enum:"BUY,SELL" doc:"Only buys or only sells; empty: both"`
	Range
}

func (f Filters) marketType() string {
	if f.Market == "futures" {
		return "SWAP"
	}
	return "SPOT"
}

// exchanges are the exchanges the request covers: the one named (which must exist), or every exchange the host
// runs where the member has an account.
func (r *routes) exchanges(ctx context.Context, member, named string) ([]string, []HistoryFailure, error) {
	all := r.Trading.HistoryExchanges()
	if named != "" {
		found := false
		for _, s := range all {
			found = found || s == named
		}
		if !found {
			return nil, nil, problem(http.StatusNotFound, "exchange_not_found", "exchange", "This exchange is not available.")
		}
		return []string{named}, nil, nil
	}
	var out []string
	var failed []HistoryFailure
	for _, s := range all {
		has, err := r.Trading.HasAccount(ctx, member, s)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			failed = append(failed, failure(s, err))
			continue
		}
		if has {
			out = append(out, s)
		}
	}
	return out, failed, nil
}

// failure names an exchange that could not be read, without the error's internals.
func failure(exchange string, err error) HistoryFailure {
	var te *trading.Error
	if errors.As(err, &te) {
		return HistoryFailure{Exchange: exchange, Code: te.Code, Detail: te.Message}
	}
	return HistoryFailure{Exchange: exchange, Code: "internal", Detail: "The exchange's history could not be read."}
}

// perExchange runs read for each exchange of the request; a single named exchange that fails fails the request,
// otherwise a failing exchange is reported and the others answered.
func (r *routes) perExchange(ctx context.Context, member, named string, read func(exchange string) error) ([]HistoryFailure, error) {
	exs, failed, err := r.exchanges(ctx, member, named)
	if err != nil {
		return nil, err
	}
	for _, ex := range exs {
		if err := read(ex); err != nil {
			if named != "" || ctx.Err() != nil {
				return nil, err
			}
			r.Logger.WarnContext(ctx, "history: an exchange failed", "exchange", ex, "err", err)
			failed = append(failed, failure(ex, err))
		}
	}
	if failed == nil {
		failed = []HistoryFailure{}
	}
	return failed, nil
}

// cursor is the position after the last row of a page: its time, exchange and id (rows are ordered newest first by
// that key).
type cursor struct {
	T  int64  `json:"t"`
	Ex string `json:"e"`
	ID string `json:"i"`
}

func (c cursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (*cursor, error) {
	if s == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	var c cursor
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.T <= 0 {
		return nil, apiutil.Field("query.cursor", "not a cursor of this list", s)
	}
	return &c, nil
}

// before tells whether a row's key comes after c in newest-first order.
func (c *cursor) before(t int64, ex, id string) bool {
	if c == nil {
		return true
	}
	if t != c.T {
		return t < c.T
	}
	if ex != c.Ex {
		return ex > c.Ex
	}
	return id > c.ID
}

// newer orders rows newest first by (time desc, exchange asc, id asc): the inverse of cursor.before.
func newer(ta int64, exa, ida string, tb int64, exb, idb string) int {
	switch {
	case ta != tb:
		if ta > tb {
			return -1
		}
		return 1
	case exa != exb:
		return strings.Compare(exa, exb)
	default:
		return strings.Compare(ida, idb)
	}
}
