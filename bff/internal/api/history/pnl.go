package history

import (
	"context"
	"slices"

	"github.com/danielgtaylor/huma/v2"
	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/bff/internal/trading"
)

// HistoryFunding is one funding payment of the member on an exchange.
type HistoryFunding struct {
	Exchange string `json:"exchange"`
	trading.FundingPayment
}

// HistoryFundingList is a page of funding payments.
type HistoryFundingList struct {
	Payments   []HistoryFunding `json:"payments"`
	NextCursor string           `json:"next_cursor,omitempty"`
	Failed     []HistoryFailure `json:"failed" doc:"Exchanges whose funding payments could not be read (not_supported: the exchange's plugin does not offer them)"`
}

type fundingInput struct {
	Exchange string `query:"exchange" pattern:"^[a-z0-9]+(-[a-z0-9]+)*$" maxLength:"40" doc:"Exchange slug; empty: every exchange where the member has an account" example:"binance"`
	Symbol   string `query:"symbol" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$" doc:"Perpetual symbol; empty: every one"`
	Range
	Cursor string `query:"cursor" maxLength:"512" doc:"next_cursor of the previous page"`
	Limit  int    `query:"limit" minimum:"1" maximum:"500" default:"100" doc:"Most rows"`
}

func (r *routes) registerFunding(api huma.API) {
	huma.Register(api, r.op("history-funding", "/api/v1/history/funding", "Funding payments",
		"Funding fees paid (negative) or received (positive) on the member's perpetual positions, merged newest "+
			"first across exchanges, paged with cursor."), r.funding)
}

func (r *routes) funding(ctx context.Context, in *fundingInput) (*reply[HistoryFundingList], error) {
	member, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.check(); err != nil {
		return nil, err
	}
	c, err := decodeCursor(in.Cursor)
	if err != nil {
		return nil, err
	}
	w := trading.Walk{Start: in.From, End: in.To, Need: in.Limit + 1}
	if c != nil && (w.End == 0 || c.T < w.End) {
		w.End = c.T
	}
	var rows []HistoryFunding
	complete := true
	failed, err := r.perExchange(ctx, member, in.Exchange, func(ex string) error {
		got, done, err := r.Trading.WalkFunding(ctx, member, trading.Scope{Exchange: ex, Symbol: in.Symbol}, w,
			func(f trading.FundingPayment) bool { return c.before(f.Time.UnixMilli(), ex, f.ID) })
		if err != nil {
			return err
		}
		for _, f := range got {
			rows = append(rows, HistoryFunding{Exchange: ex, FundingPayment: f})
		}
		complete = complete && done
		return nil
	})
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	slices.SortStableFunc(rows, func(a, b HistoryFunding) int {
		return newer(a.Time.UnixMilli(), a.Exchange, a.ID, b.Time.UnixMilli(), b.Exchange, b.ID)
	})
	out := HistoryFundingList{Payments: rows, Failed: failed}
	if len(rows) > in.Limit || (!complete && len(rows) > 0) {
		out.Payments = rows[:min(len(rows), in.Limit)]
		last := out.Payments[len(out.Payments)-1]
		out.NextCursor = cursor{T: last.Time.UnixMilli(), Ex: last.Exchange, ID: last.ID}.encode()
	}
	if out.Payments == nil {
		out.Payments = []HistoryFunding{}
	}
	return ok(out), nil
}

// HistoryExchangePnl is the realized PnL and equity of the member on one exchange.
type HistoryExchangePnl struct {
	Exchange    string `json:"exchange"`
	RealizedPnl string `json:"realized_pnl" doc:"Realized PnL of the futures fills in the range (USDT)"`
	Funding     string `json:"funding" doc:"Funding payments in the range (USDT; 0 where the exchange does not report them)"`
	TotalRpnl   string `json:"total_rpnl" doc:"realized_pnl + funding"`
	Equity      string `json:"equity" doc:"Every balance (funding and trading wallets) valued in USDT at the spot last price, plus the unrealized PnL of open positions"`
	// Unvalued are coins held that have no USDT price on the exchange (left out of equity).
	Unvalued       []string `json:"unvalued" doc:"Coins held with no USDT price on the exchange (not in equity)"`
	FundingMissing bool     `json:"funding_missing" doc:"The exchange does not report funding payments"`
	Truncated      bool     `json:"truncated" doc:"A history longer than the bound was cut: the sums cover its newest part only"`
}

// HistoryRpnl is the spec's GetRpnl answer.
type HistoryRpnl struct {
	From      int64                `json:"from"`
	To        int64                `json:"to"`
	TotalRpnl string               `json:"total_rpnl" doc:"Total realized PnL (fills and funding) of every exchange, USDT"`
	Equity    string               `json:"equity" doc:"Total current equity in USDT"`
	Exchanges []HistoryExchangePnl `json:"exchanges"`
	Failed    []HistoryFailure     `json:"failed"`
}

type rpnlInput struct {
	Exchange string `query:"exchange" pattern:"^[a-z0-9]+(-[a-z0-9]+)*$" maxLength:"40" doc:"Exchange slug; empty: every exchange where the member has an account"`
	Range
}

func (r *routes) rpnl(ctx context.Context, in *rpnlInput) (*reply[HistoryRpnl], error) {
	member, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.check(); err != nil {
		return nil, err
	}
	total, equity := decimal.Zero, decimal.Zero
	out := HistoryRpnl{From: in.From, To: in.To, Exchanges: []HistoryExchangePnl{}}
	walk := trading.Walk{Start: in.From, End: in.To, MaxPages: maxWalkPages}
	failed, err := r.perExchange(ctx, member, in.Exchange, func(ex string) error {
		fills, done, err := r.Trading.WalkFills(ctx, member, trading.Scope{Exchange: ex, MarketType: "SWAP"}, walk, nil)
		if err != nil {
			return err
		}
		pnl := decimal.Zero
		for _, f := range fills {
			pnl = pnl.Add(dec(f.RealizedPnl))
		}
		e := HistoryExchangePnl{Exchange: ex, RealizedPnl: pnl.String(), Truncated: !done, Unvalued: []string{}}
		fund := decimal.Zero
		pays, fdone, err := r.Trading.WalkFunding(ctx, member, trading.Scope{Exchange: ex}, walk, nil)
		switch {
		case trading.IsNotSupported(err):
			e.FundingMissing = true
		case err != nil:
			return err
		default:
			for _, p := range pays {
				fund = fund.Add(dec(p.Amount))
			}
			e.Truncated = e.Truncated || !fdone
		}
		e.Funding = fund.String()
		e.TotalRpnl = pnl.Add(fund).String()
		eq, unvalued, err := r.equity(ctx, member, ex)
		if err != nil {
			return err
		}
		e.Equity, e.Unvalued = eq.String(), unvalued
		total = total.Add(pnl).Add(fund)
		equity = equity.Add(eq)
		out.Exchanges = append(out.Exchanges, e)
		return nil
	})
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	out.TotalRpnl, out.Equity, out.Failed = total.String(), equity.String(), failed
	return ok(out), nil
}

// equity values the member's balances on an exchange in USDT: USDT at 1, another coin at the last price of its
// COIN/USDT spot pair there; plus the unrealized PnL of open positions. Coins without a price are named.
func (r *routes) equity(ctx context.Context, member, ex string) (decimal.Decimal, []string, error) {
	bs, err := r.Trading.Balances(ctx, member, ex)
	if err != nil {
		return decimal.Zero, nil, err
	}
	prices := map[string]decimal.Decimal{"USDT": decimal.NewFromInt(1)}
	needPrices := false
	for _, b := range bs.Balances {
		if b.Asset != "USDT" && !dec(b.Total).IsZero() {
			needPrices = true
		}
	}
	if needPrices && r.Prices != nil {
		if ins, _, err := r.Prices.Instruments(ctx, ex, "SPOT"); err == nil {
			base := map[string]string{}
			for _, i := range ins {
				if i.Quote == "USDT" {
					base[i.Symbol] = i.Base
				}
			}
			if ts, _, err := r.Prices.Tickers(ctx, ex, "SPOT"); err == nil {
				for _, t := range ts {
					if b, ok := base[t.Symbol]; ok && t.Last != "" {
						if p := dec(t.Last); p.IsPositive() {
							prices[b] = p
						}
					}
				}
			}
		}
	}
	eq := dec(bs.UnrealizedPnl)
	unvalued := []string{}
	for _, b := range bs.Balances {
		amt := dec(b.Total)
		if amt.IsZero() {
			continue
		}
		p, ok := prices[b.Asset]
		if !ok {
			if !slices.Contains(unvalued, b.Asset) {
				unvalued = append(unvalued, b.Asset)
			}
			continue
		}
		eq = eq.Add(amt.Mul(p))
	}
	return eq, unvalued, nil
}
