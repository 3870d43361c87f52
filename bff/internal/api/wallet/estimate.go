package wallet

import (
	"context"
	"log/slog"

	"github.com/shopspring/decimal"
)

// The wallet overview's valuation for other routes that show it (the signed-in home's summary): the same reads and
// prices as GET /api/v1/wallet/overview, not a copy of them.

// EstimateBalances is what GET /api/v1/wallet/overview answers to the member of ctx (the session's member, set by
// the Guard): every exchange's wallets with their USDT estimate and the total across exchanges. An exchange that
// fails is an entry with status error; the error is only ctx's or a missing session.
func EstimateBalances(ctx context.Context, d Deps) (Overview, error) {
	out, err := newRoutes(d).overview(ctx, nil)
	if err != nil {
		return Overview{}, err
	}
	return out.Body, nil
}

// USDTPrices are the last prices in USDT of the coins the exchange lists against USDT on its spot market, USDT
// itself 1: the prices the overview values balances at (only USDT without d.Prices or when they cannot be read).
func USDTPrices(ctx context.Context, d Deps, exchange string) map[string]decimal.Decimal {
	return newRoutes(d).usdtPrices(ctx, exchange)
}

func newRoutes(d Deps) *routes {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	return &routes{Deps: d}
}
