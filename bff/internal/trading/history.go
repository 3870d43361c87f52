package trading

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/exhub/exhub/bff/internal/store"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// History reads for /history: the member's past orders and fills on one market of an exchange, read page after
// page by cursor, and the member's balances. Like the other reads they take the member id from the session and the
// account from the account source: a member only ever reads their own accounts.

// historyPageSize is the page asked of the plugin on each call of a walk (every exchange takes 100).
const historyPageSize = 100

// Walk bounds a history walk: the window [Start, End] in Unix ms (0: unbounded), the rows wanted (Need, after the
// walk's filter) and the calls made per symbol (MaxPages).
type Walk struct {
	Start, End int64
	Need       int
	MaxPages   int
}

func (w Walk) pages() int {
	if w.MaxPages <= 0 {
		return 20
	}
	return w.MaxPages
}

// HistoryExchanges are the slugs of the exchanges whose plugin the host runs, in its order.
func (s *Service) HistoryExchanges() []string {
	sups := s.plugins.Supervisors()
	out := make([]string, 0, len(sups))
	for _, sup := range sups {
		out = append(out, sup.Slug())
	}
	return out
}

// HasAccount tells whether the member has an account on exchange (false, nil: none; an error: could not tell).
func (s *Service) HasAccount(ctx context.Context, memberID, exchange string) (bool, error) {
	if _, err := s.account(ctx, memberID, exchange); err != nil {
		var te *Error
		if errors.As(err, &te) && te.Code == "no_account" {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// symbolRequired tells whether err is the plugin's refusal of a history call without a symbol (Binance's history
// endpoints take one symbol at a time).
func symbolRequired(err error) bool {
	var te *Error
	return errors.As(err, &te) && te.Field == "symbol" && te.Code == "invalid_argument"
}

// tradedSymbols are the symbols the member's journal has entries for on one market of an exchange, newest first,
// plus the symbols of open positions on SWAP: where history is read from when the exchange needs a symbol.
func (s *Service) tradedSymbols(ctx context.Context, memberID string, sc Scope) ([]string, error) {
	entries, err := s.st.ListOrders(ctx, memberID, store.OrderFilter{Exchange: sc.Exchange, MarketType: sc.MarketType, Limit: store.MaxOrderList})
	if err != nil {
		return nil, fmt.Errorf("trading: journal: %w", err)
	}
	var out []string
	for _, e := range entries {
		if !slices.Contains(out, e.Symbol) {
			out = append(out, e.Symbol)
		}
	}
	if sc.MarketType == "SWAP" {
		ps, err := s.Positions(ctx, memberID, Scope{Exchange: sc.Exchange})
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			if !slices.Contains(out, p.Symbol) {
				out = append(out, p.Symbol)
			}
		}
	}
	return out, nil
}

// walk reads pages of one kind of history newest first until need rows pass keep, the history ends or the call
// budget is spent. complete: the history of the window was read to its end. When the exchange needs a symbol and
// sc names none, each symbol the member traded there is walked and the rows merged newest first.
func walk[T any](ctx context.Context, s *Service, memberID string, sc Scope, w Walk, keep func(T) bool,
	page func(context.Context, Scope, Page) ([]T, string, error), newer func(a, b T) int) ([]T, bool, error) {
	one := func(sc Scope) ([]T, bool, error) {
		var out []T
		cursor := ""
		for range w.pages() {
			rows, next, err := page(ctx, sc, Page{StartTime: w.Start, EndTime: w.End, Limit: historyPageSize, Cursor: cursor})
			if err != nil {
				return nil, false, err
			}
			for _, r := range rows {
				if keep == nil || keep(r) {
					out = append(out, r)
				}
			}
			if next == "" || len(rows) == 0 {
				return out, true, nil
			}
			if w.Need > 0 && len(out) >= w.Need {
				return out, false, nil
			}
			cursor = next
		}
		return out, false, nil
	}
	out, complete, err := one(sc)
	if err == nil || sc.Symbol != "" || !symbolRequired(err) {
		return out, complete, err
	}
	syms, err := s.tradedSymbols(ctx, memberID, sc)
	if err != nil {
		return nil, false, err
	}
	complete = true
	for _, sym := range syms {
		rows, done, err := one(Scope{Exchange: sc.Exchange, MarketType: sc.MarketType, Symbol: sym})
		if err != nil {
			return nil, false, err
		}
		out = append(out, rows...)
		complete = complete && done
	}
	slices.SortStableFunc(out, newer)
	return out, complete, nil
}

// WalkOrderHistory reads the member's past orders on one market of an exchange (sc.Symbol empty: every symbol),
// newest first, with their journal ids where exhub placed them; keep (nil: all) filters the rows counted toward
// w.Need.
func (s *Service) WalkOrderHistory(ctx context.Context, memberID string, sc Scope, w Walk, keep func(Order) bool) ([]Order, bool, error) {
	return walk(ctx, s, memberID, sc, w, keep, func(ctx context.Context, sc Scope, p Page) ([]Order, string, error) {
		return s.OrderHistory(ctx, memberID, sc, p)
	}, func(a, b Order) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ExchangeOrderID, a.ExchangeOrderID))
	})
}

// WalkFills reads the member's executions on one market of an exchange like WalkOrderHistory.
func (s *Service) WalkFills(ctx context.Context, memberID string, sc Scope, w Walk, keep func(Fill) bool) ([]Fill, bool, error) {
	return walk(ctx, s, memberID, sc, w, keep, func(ctx context.Context, sc Scope, p Page) ([]Fill, string, error) {
		return s.Fills(ctx, memberID, sc, p)
	}, func(a, b Fill) int {
		return cmp.Or(b.Time.Compare(a.Time), cmp.Compare(b.TradeID, a.TradeID))
	})
}

// Balance is one coin of one wallet.
type Balance struct {
	Asset     string `json:"asset"`
	Wallet    string `json:"wallet" enum:"FUNDING,TRADING"`
	Total     string `json:"total"`
	Available string `json:"available,omitempty"`
	Locked    string `json:"locked,omitempty"`
}

// Balances are the member's balances on an exchange, both wallets, and the trading account's unrealized PnL in
// USDT.
type Balances struct {
	Balances      []Balance
	UnrealizedPnl string
}

// Balances reads the member's balances on exchange.
func (s *Service) Balances(ctx context.Context, memberID, exchange string) (Balances, error) {
	sup, acct, _, err := s.scope(ctx, memberID, Scope{Exchange: exchange}, false)
	if err != nil {
		return Balances{}, err
	}
	var resp *exchangev1.GetBalancesResponse
	err = s.call(ctx, sup, "GetBalances", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		var err error
		resp, err = c.GetBalances(ctx, &exchangev1.GetBalancesRequest{Account: acct})
		return err
	})
	if err != nil {
		return Balances{}, readError(ctx, err)
	}
	out := Balances{UnrealizedPnl: resp.GetUnrealizedPnl()}
	for _, b := range resp.GetBalances() {
		out.Balances = append(out.Balances, Balance{Asset: b.GetAsset(),
			Wallet: enumName(exchangev1.WalletType_name, b.GetWallet(), "WALLET_TYPE_"),
			Total:  b.GetTotal(), Available: b.GetAvailable(), Locked: b.GetLocked()})
	}
	return out, nil
}

// FundingPayment is one funding fee settled on a perpetual position of the member.
type FundingPayment struct {
	ID           string    `json:"id" doc:"The exchange's id of the payment"`
	Symbol       string    `json:"symbol"`
	Amount       string    `json:"amount" doc:"Signed decimal: positive received, negative paid"`
	Asset        string    `json:"asset"`
	FundingRate  string    `json:"funding_rate,omitempty" doc:"The rate applied, where the exchange says"`
	PositionSize string    `json:"position_size,omitempty" doc:"The position size the fee was paid on (base units), where the exchange says"`
	PositionSide string    `json:"position_side,omitempty" doc:"LONG, SHORT or NET, where the exchange says"`
	Time         time.Time `json:"time"`
}

// FundingPayments lists one page of the member's funding payments on an exchange (sc.Symbol empty: every
// perpetual), newest first. An exchange whose plugin does not offer them answers code not_supported.
func (s *Service) FundingPayments(ctx context.Context, memberID string, sc Scope, p Page) ([]FundingPayment, string, error) {
	sup, acct, _, err := s.scope(ctx, memberID, Scope{Exchange: sc.Exchange}, false)
	if err != nil {
		return nil, "", err
	}
	var got []*exchangev1.FundingPayment
	var next string
	err = s.call(ctx, sup, "ListFundingPayments", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.ListFundingPayments(ctx, &exchangev1.ListFundingPaymentsRequest{Account: acct, Symbol: sc.Symbol, Page: p.proto()})
		got, next = resp.GetPayments(), resp.GetNextCursor()
		return err
	})
	if err != nil {
		return nil, "", readError(ctx, err)
	}
	out := make([]FundingPayment, 0, len(got))
	for _, f := range got {
		out = append(out, FundingPayment{ID: f.GetId(), Symbol: f.GetSymbol(), Amount: f.GetAmount(), Asset: f.GetAsset(),
			FundingRate: f.GetFundingRate(), PositionSize: f.GetPositionSize(),
			PositionSide: enumName(exchangev1.PositionSide_name, f.GetPositionSide(), "POSITION_SIDE_"),
			Time:         time.UnixMilli(f.GetTime()).UTC()})
	}
	return out, next, nil
}

// WalkFunding reads the member's funding payments on an exchange like WalkOrderHistory.
func (s *Service) WalkFunding(ctx context.Context, memberID string, sc Scope, w Walk, keep func(FundingPayment) bool) ([]FundingPayment, bool, error) {
	sc.MarketType = "SWAP"
	return walk(ctx, s, memberID, sc, w, keep, func(ctx context.Context, sc Scope, p Page) ([]FundingPayment, string, error) {
		return s.FundingPayments(ctx, memberID, sc, p)
	}, func(a, b FundingPayment) int {
		return cmp.Or(b.Time.Compare(a.Time), cmp.Compare(b.ID, a.ID))
	})
}

// IsNotSupported tells whether err is an exchange's answer that it does not offer the call.
func IsNotSupported(err error) bool {
	var te *Error
	return errors.As(err, &te) && te.Code == "not_supported"
}
