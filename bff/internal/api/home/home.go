// Package home serves the signed-in home's summary under /api/v1/home (OpenAPI tag "home"): the member's estimated
// balance in USDT across every exchange (the wallet overview's valuation, wallet.EstimateBalances) and today's change
// since the UTC day start: realized (the fills' realized PnL less their fees, plus funding payments, read from the
// exchanges by the trading service) and unrealized (the open positions' unrealized PnL now), per exchange and in
// total.
//
// The route needs a session; a member only reads their own accounts (the member id comes from the session, each
// account from the account sources). An exchange that cannot be read is an entry with status error, never a 500.
// Answers are Cache-Control: private, no-store. Money stays decimal strings and decimal arithmetic.
package home

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/bff/internal/api/apiutil"
	"github.com/exhub/exhub/bff/internal/api/wallet"
	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/trading"
)

// Tag is the OpenAPI tag of the home routes.
const Tag = "home"

const noStore = "private, no-store"

// maxWalkPages bounds the pages (100 rows each) of fills and funding payments read per exchange, market and symbol
// for one day's change; a longer day is cut (truncated).
const maxWalkPages = 20

// Deps are the home API's collaborators.
type Deps struct {
	// Guard checks the session; *auth.Checker is one.
	Guard apiutil.Guard
	// Wallet values the member's balances (the wallet routes' own dependencies).
	Wallet wallet.Deps
	// Trading reads fills, funding payments and positions; nil: today's change of every exchange is an error entry.
	Trading *trading.Service
	// Logger logs the exchanges that failed.
	Logger *slog.Logger
	// Now is the clock (nil: time.Now); DayStart the start of the day that contains now (nil: 00:00 UTC).
	Now      func() time.Time
	DayStart func(now time.Time) time.Time
}

// UTCDayStart is 00:00 UTC of the day of t.
func UTCDayStart(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// HomeSummary is the signed-in home's card.
type HomeSummary struct {
	TotalUSDT  string         `json:"total_usdt" doc:"The estimated balance in USDT across every exchange that answered (as GET /api/v1/wallet/overview)" example:"10150.5"`
	DayStart   int64          `json:"day_start" doc:"Start of today's change (Unix ms, 00:00 UTC)"`
	Time       int64          `json:"time" doc:"When the figures were read (Unix ms)"`
	Realized   string         `json:"realized" doc:"Today's realized change in USDT: realized PnL of fills less their fees, plus funding payments" example:"100.25"`
	Unrealized string         `json:"unrealized" doc:"Unrealized PnL of the open positions now, USDT" example:"50.25"`
	Change     string         `json:"change" doc:"realized + unrealized" example:"150.5"`
	ChangePct  string         `json:"change_pct" doc:"change as a percentage of the balance at the day's start (total_usdt - change), 2 decimals; empty when that is not positive" example:"1.51"`
	Exchanges  []HomeExchange `json:"exchanges" doc:"In the configured order; exchanges without a plugin (coming soon) are left out"`
}

// HomeExchange is one exchange's part of the summary.
type HomeExchange struct {
	Exchange string `json:"exchange" example:"binance"`
	Status   string `json:"status" enum:"ok,no_account,error" doc:"ok; no_account: the member has no account there (yet); error: a part could not be read (see error; the parts that were read are still given)"`
	// Error names the part that failed.
	Error       *HomeExchangeError `json:"error,omitempty" doc:"Set when status is error"`
	BalanceUSDT string             `json:"balance_usdt" doc:"The estimated balance here in USDT (\"0\" when it could not be read)"`
	RealizedPnl string             `json:"realized_pnl" doc:"Realized PnL of today's fills, USDT; empty when today's change could not be read"`
	Fees        string             `json:"fees" doc:"Fees of today's fills valued in USDT (paid is positive); empty when not read"`
	Funding     string             `json:"funding" doc:"Today's funding payments, USDT (received is positive); empty when not read"`
	Realized    string             `json:"realized" doc:"realized_pnl - fees + funding; empty when not read"`
	Unrealized  string             `json:"unrealized" doc:"Unrealized PnL of the open positions now, USDT; empty when not read"`
	Change      string             `json:"change" doc:"realized + unrealized; empty when not read"`
	// Unvalued are fee coins with no USDT price on the exchange (left out of fees).
	Unvalued       []string `json:"unvalued" doc:"Coins fees were paid in that have no USDT price on the exchange (not in fees)"`
	FundingMissing bool     `json:"funding_missing" doc:"The exchange does not report funding payments"`
	Truncated      bool     `json:"truncated" doc:"The day had more fills or payments than are read: the sums cover its newest part"`
}

// HomeExchangeError says which part of an exchange's summary is missing and why.
type HomeExchangeError struct {
	Part   string `json:"part" enum:"balance,change" doc:"balance: the estimated balance; change: today's change"`
	Code   string `json:"code" example:"exchange_unavailable"`
	Detail string `json:"detail"`
}

type routes struct{ Deps }

type reply[T any] struct {
	CacheControl string `header:"Cache-Control"`
	Body         T
}

// Register adds the home routes to api.
func Register(api huma.API, d Deps) {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.DayStart == nil {
		d.DayStart = UTCDayStart
	}
	if d.Wallet.Logger == nil {
		d.Wallet.Logger = d.Logger
	}
	d.Guard.RegisterSecurityScheme(api)
	r := &routes{Deps: d}
	huma.Register(api, apiutil.Private(r.Guard, huma.Operation{
		OperationID: "get-home-summary", Method: http.MethodGet, Path: "/api/v1/home/summary",
		Summary: "Estimated balance and today's change",
		Description: "The member's estimated balance in USDT across every exchange (valued as GET /api/v1/wallet/overview " +
			"values it) and today's change since 00:00 UTC: realized (the realized PnL of today's fills less their fees " +
			"valued in USDT, plus today's funding payments) and unrealized (the open positions' unrealized PnL now), " +
			"per exchange and in total. An exchange that cannot be read is an entry with status error naming the part " +
			"that failed (never a 500).",
		Tags: []string{Tag},
	}), r.summary)
}

// today is one exchange's change since the day start.
type today struct {
	pnl, fees, funding, unrealized decimal.Decimal
	unvalued                       []string
	fundingMissing, truncated      bool
}

func (r *routes) summary(ctx context.Context, _ *struct{}) (*reply[HomeSummary], error) {
	m, ok := auth.MemberFrom(ctx)
	if !ok {
		return nil, auth.Unauthorized()
	}
	now := r.Now()
	from := r.DayStart(now)
	var (
		wg        sync.WaitGroup
		overview  wallet.Overview
		ovErr     error
		mu        sync.Mutex
		changes   = map[string]today{}
		changeErr = map[string]error{}
	)
	wg.Add(1)
	go func() { // owned: the handler waits for it below
		defer wg.Done()
		overview, ovErr = wallet.EstimateBalances(ctx, r.Wallet)
	}()
	if r.Trading != nil {
		for _, ex := range r.Trading.HistoryExchanges() {
			wg.Add(1)
			go func() { // owned: the handler waits for every exchange below
				defer wg.Done()
				c, err := r.today(ctx, m.ID, ex, from.UnixMilli(), now.UnixMilli())
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					changeErr[ex] = err
				} else {
					changes[ex] = c
				}
			}()
		}
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, apiutil.Error("the home summary failed", ctx.Err())
	}
	if ovErr != nil {
		var se huma.StatusError
		if errors.As(ovErr, &se) {
			return nil, se
		}
		r.Logger.ErrorContext(ctx, "home summary: the balances failed", "err", ovErr)
		return nil, apiutil.Error("the home summary failed", ovErr)
	}

	out := HomeSummary{TotalUSDT: overview.TotalUSDT, DayStart: from.UnixMilli(), Time: now.UnixMilli(),
		Exchanges: make([]HomeExchange, 0, len(overview.Exchanges))}
	realized, unrealized := decimal.Zero, decimal.Zero
	for _, b := range overview.Exchanges {
		e := HomeExchange{Exchange: b.Exchange, Status: b.Status, BalanceUSDT: "0", Unvalued: []string{}}
		switch b.Status {
		case "no_account":
			out.Exchanges = append(out.Exchanges, e)
			continue
		case "ok":
			e.BalanceUSDT = b.TotalUSDT
		default:
			e.Status = "error"
			e.Error = &HomeExchangeError{Part: "balance", Code: "internal", Detail: "The balances of this exchange could not be read."}
			if b.Error != nil {
				e.Error.Code, e.Error.Detail = b.Error.Code, b.Error.Detail
			}
		}
		c, read := changes[b.Exchange]
		if !read {
			if e.Error == nil {
				e.Status = "error"
				e.Error = r.changeError(ctx, b.Exchange, changeErr[b.Exchange])
			}
			out.Exchanges = append(out.Exchanges, e)
			continue
		}
		re := c.pnl.Sub(c.fees).Add(c.funding)
		e.RealizedPnl, e.Fees, e.Funding, e.Realized = c.pnl.String(), c.fees.String(), c.funding.String(), re.String()
		e.Unrealized, e.Change = c.unrealized.String(), re.Add(c.unrealized).String()
		e.Unvalued, e.FundingMissing, e.Truncated = c.unvalued, c.fundingMissing, c.truncated
		realized, unrealized = realized.Add(re), unrealized.Add(c.unrealized)
		out.Exchanges = append(out.Exchanges, e)
	}
	change := realized.Add(unrealized)
	out.Realized, out.Unrealized, out.Change = realized.String(), unrealized.String(), change.String()
	if total, err := decimal.NewFromString(out.TotalUSDT); err == nil {
		if start := total.Sub(change); start.IsPositive() {
			out.ChangePct = change.Mul(decimal.NewFromInt(100)).DivRound(start, 2).String()
		}
	}
	return &reply[HomeSummary]{CacheControl: noStore, Body: out}, nil
}

// changeError is the entry's error for today's change of an exchange that failed (err nil: it was not read).
func (r *routes) changeError(ctx context.Context, exchange string, err error) *HomeExchangeError {
	var te *trading.Error
	switch {
	case err == nil:
		return &HomeExchangeError{Part: "change", Code: "unavailable", Detail: "Today's change is not available right now."}
	case errors.As(err, &te):
		return &HomeExchangeError{Part: "change", Code: te.Code, Detail: te.Message}
	default:
		r.Logger.WarnContext(ctx, "home summary: today's change failed", "exchange", exchange, "err", err)
		return &HomeExchangeError{Part: "change", Code: "internal", Detail: "Today's change of this exchange could not be read."}
	}
}

// today reads the member's change on one exchange between from and to (Unix ms): the fills of both markets, the
// funding payments and the open positions.
func (r *routes) today(ctx context.Context, member, exchange string, from, to int64) (today, error) {
	out := today{unvalued: []string{}}
	has, err := r.Trading.HasAccount(ctx, member, exchange)
	if err != nil || !has {
		return out, err // no account: nothing changed there
	}
	walk := trading.Walk{Start: from, End: to, MaxPages: maxWalkPages}
	var prices map[string]decimal.Decimal
	for _, mt := range []string{"SPOT", "SWAP"} {
		fills, done, err := r.Trading.WalkFills(ctx, member, trading.Scope{Exchange: exchange, MarketType: mt}, walk, nil)
		if err != nil {
			return today{}, err
		}
		out.truncated = out.truncated || !done
		for _, f := range fills {
			out.pnl = out.pnl.Add(dec(f.RealizedPnl))
			fee := dec(f.Fee)
			if fee.IsZero() {
				continue
			}
			if prices == nil {
				prices = wallet.USDTPrices(ctx, r.Wallet, exchange)
			}
			p, ok := prices[f.FeeAsset]
			if !ok {
				if !slices.Contains(out.unvalued, f.FeeAsset) {
					out.unvalued = append(out.unvalued, f.FeeAsset)
				}
				continue
			}
			out.fees = out.fees.Add(fee.Mul(p))
		}
	}
	pays, done, err := r.Trading.WalkFunding(ctx, member, trading.Scope{Exchange: exchange}, walk, nil)
	switch {
	case trading.IsNotSupported(err):
		out.fundingMissing = true
	case err != nil:
		return today{}, err
	default:
		out.truncated = out.truncated || !done
		for _, p := range pays {
			out.funding = out.funding.Add(dec(p.Amount))
		}
	}
	positions, err := r.Trading.Positions(ctx, member, trading.Scope{Exchange: exchange})
	if err != nil {
		return today{}, err
	}
	for _, p := range positions {
		out.unrealized = out.unrealized.Add(dec(p.UnrealizedPnl))
	}
	slices.Sort(out.unvalued)
	return out, nil
}

// dec reads a decimal string; empty or malformed is 0 (an exchange that leaves a figure out).
func dec(s string) decimal.Decimal {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Zero
	}
	return d
}
