package history

import (
	"context"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/bff/internal/trading"
)

// maxWalkPages bounds the pages read per exchange and symbol for a sub-total or a realized PnL (100 rows each).
const maxWalkPages = 100

// HistoryAmount is a sum in one asset.
type HistoryAmount struct {
	Asset  string `json:"asset"`
	Amount string `json:"amount" doc:"Decimal string"`
}

// HistorySubTotal is the spec's OrderHistorySubTotal of one exchange and symbol, or of every row (exchange and symbol
// empty).
type HistorySubTotal struct {
	Exchange    string          `json:"exchange,omitempty"`
	Symbol      string          `json:"symbol,omitempty"`
	Trades      int             `json:"trades" doc:"Fills"`
	Orders      int             `json:"orders" doc:"Distinct orders filled"`
	Buys        int             `json:"buys" doc:"Buy fills"`
	Sells       int             `json:"sells" doc:"Sell fills"`
	Volume      string          `json:"volume,omitempty" doc:"Filled size in base units (per symbol only: the overall row mixes assets)"`
	QuoteVolume string          `json:"quote_volume" doc:"Filled value in the quote asset (USDT)"`
	Fees        []HistoryAmount `json:"fees" doc:"Fees per fee asset (positive: paid)"`
	RealizedPnl string          `json:"realized_pnl" doc:"Realized PnL of the fills (futures; 0 on spot)"`
}

// HistorySubTotals are the sub-totals of a history range.
type HistorySubTotals struct {
	Total     HistorySubTotal   `json:"total"`
	Symbols   []HistorySubTotal `json:"symbols" doc:"Per exchange and symbol, by exchange then symbol"`
	Truncated bool              `json:"truncated" doc:"A history longer than the bound was cut: the sums cover its newest part only"`
	Failed    []HistoryFailure  `json:"failed"`
}

// tally adds fills up in exact decimals.
type tally struct {
	trades, buys, sells int
	orders              map[string]bool
	volume, quote, pnl  decimal.Decimal
	fees                map[string]decimal.Decimal
}

func newTally() *tally {
	return &tally{orders: map[string]bool{}, fees: map[string]decimal.Decimal{}}
}

func dec(s string) decimal.Decimal {
	d, err := decimal.NewFromString(strings.TrimSpace(s))
	if err != nil {
		return decimal.Zero
	}
	return d
}

func (t *tally) add(ex string, f trading.Fill) {
	t.trades++
	switch f.Side {
	case "BUY":
		t.buys++
	case "SELL":
		t.sells++
	}
	t.orders[ex+"\x00"+f.OrderID] = true
	q := dec(f.Qty)
	t.volume = t.volume.Add(q)
	if f.QuoteQty != "" {
		t.quote = t.quote.Add(dec(f.QuoteQty))
	} else {
		t.quote = t.quote.Add(q.Mul(dec(f.Price)))
	}
	t.pnl = t.pnl.Add(dec(f.RealizedPnl))
	if f.Fee != "" && f.FeeAsset != "" {
		t.fees[f.FeeAsset] = t.fees[f.FeeAsset].Add(dec(f.Fee))
	}
}

func (t *tally) subTotal(ex, sym string, withVolume bool) HistorySubTotal {
	st := HistorySubTotal{Exchange: ex, Symbol: sym, Trades: t.trades, Orders: len(t.orders), Buys: t.buys, Sells: t.sells,
		QuoteVolume: t.quote.String(), RealizedPnl: t.pnl.String(), Fees: []HistoryAmount{}}
	if withVolume {
		st.Volume = t.volume.String()
	}
	assets := make([]string, 0, len(t.fees))
	for a := range t.fees {
		assets = append(assets, a)
	}
	slices.Sort(assets)
	for _, a := range assets {
		st.Fees = append(st.Fees, HistoryAmount{Asset: a, Amount: t.fees[a].String()})
	}
	return st
}

func (r *routes) subtotal(ctx context.Context, in *Filters) (*reply[HistorySubTotals], error) {
	member, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.check(); err != nil {
		return nil, err
	}
	total := newTally()
	per := map[[2]string]*tally{}
	truncated := false
	failed, err := r.perExchange(ctx, member, in.Exchange, func(ex string) error {
		got, done, err := r.Trading.WalkFills(ctx, member, trading.Scope{Exchange: ex, MarketType: in.marketType(), Symbol: in.Symbol},
			trading.Walk{Start: in.From, End: in.To, MaxPages: maxWalkPages}, func(f trading.Fill) bool {
				return in.Side == "" || f.Side == in.Side
			})
		if err != nil {
			return err
		}
		truncated = truncated || !done
		for _, f := range got {
			k := [2]string{ex, f.Symbol}
			if per[k] == nil {
				per[k] = newTally()
			}
			per[k].add(ex, f)
			total.add(ex, f)
		}
		return nil
	})
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	keys := make([][2]string, 0, len(per))
	for k := range per {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]string) int {
		if c := strings.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return strings.Compare(a[1], b[1])
	})
	out := HistorySubTotals{Total: total.subTotal("", "", false), Symbols: []HistorySubTotal{}, Truncated: truncated, Failed: failed}
	for _, k := range keys {
		out.Symbols = append(out.Symbols, per[k].subTotal(k[0], k[1], true))
	}
	return ok(out), nil
}
