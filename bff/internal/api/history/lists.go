package history

import (
	"context"
	"slices"

	"github.com/exhub/exhub/bff/internal/trading"
)

// HistoryOrder is a finished order: the exchange's record joined with the journal.
type HistoryOrder struct {
	trading.Order
	Source string `json:"source" enum:"exhub,exchange" doc:"exhub: placed through exhub (id is its journal id); exchange: placed elsewhere"`
}

// HistoryFill is one execution of the member's orders on an exchange.
type HistoryFill struct {
	Exchange string `json:"exchange"`
	trading.Fill
}

// HistoryOrderList is a page of finished orders.
type HistoryOrderList struct {
	Orders     []HistoryOrder   `json:"orders"`
	NextCursor string           `json:"next_cursor,omitempty" doc:"Pass as cursor (with the same filters) for the next older page"`
	Failed     []HistoryFailure `json:"failed" doc:"Exchanges whose history could not be read (the rows of the others are answered)"`
}

// HistoryFillList is a page of fills.
type HistoryFillList struct {
	Fills      []HistoryFill    `json:"fills"`
	NextCursor string           `json:"next_cursor,omitempty"`
	Failed     []HistoryFailure `json:"failed"`
}

type listInput struct {
	Filters
	Cursor string `query:"cursor" maxLength:"512" doc:"next_cursor of the previous page"`
	Limit  int    `query:"limit" minimum:"1" maximum:"500" default:"100" doc:"Most rows"`
}

// walkOf is the walk of one page: the rows wanted (one more than the page, to know whether there are more) in the
// window cut at the cursor's time.
func (in *listInput) walkOf(c *cursor) trading.Walk {
	w := trading.Walk{Start: in.From, End: in.To, Need: in.Limit + 1}
	if c != nil && (w.End == 0 || c.T < w.End) {
		w.End = c.T
	}
	return w
}

// finished tells whether an order status is final (history lists only those).
func finished(status string) bool {
	switch status {
	case trading.StatusFilled, trading.StatusCancelled, trading.StatusRejected, trading.StatusExpired:
		return true
	}
	return false
}

func (r *routes) orders(ctx context.Context, in *listInput) (*reply[HistoryOrderList], error) {
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
	var rows []HistoryOrder
	complete := true
	failed, err := r.perExchange(ctx, member, in.Exchange, func(ex string) error {
		got, done, err := r.Trading.WalkOrderHistory(ctx, member, trading.Scope{Exchange: ex, MarketType: in.marketType(), Symbol: in.Symbol},
			in.walkOf(c), func(o trading.Order) bool {
				return finished(o.Status) && (in.Side == "" || o.Side == in.Side) && c.before(o.CreatedAt.UnixMilli(), ex, o.ExchangeOrderID)
			})
		if err != nil {
			return err
		}
		for _, o := range got {
			src := "exchange"
			if o.ID != "" {
				src = "exhub"
			}
			rows = append(rows, HistoryOrder{Order: o, Source: src})
		}
		complete = complete && done
		return nil
	})
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	slices.SortStableFunc(rows, func(a, b HistoryOrder) int {
		return newer(a.CreatedAt.UnixMilli(), a.Exchange, a.ExchangeOrderID, b.CreatedAt.UnixMilli(), b.Exchange, b.ExchangeOrderID)
	})
	out := HistoryOrderList{Orders: rows, Failed: failed}
	if len(rows) > in.Limit || (!complete && len(rows) > 0) {
		out.Orders = rows[:min(len(rows), in.Limit)]
		last := out.Orders[len(out.Orders)-1]
		out.NextCursor = cursor{T: last.CreatedAt.UnixMilli(), Ex: last.Exchange, ID: last.ExchangeOrderID}.encode()
	}
	if out.Orders == nil {
		out.Orders = []HistoryOrder{}
	}
	return ok(out), nil
}

func (r *routes) fills(ctx context.Context, in *listInput) (*reply[HistoryFillList], error) {
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
	var rows []HistoryFill
	complete := true
	failed, err := r.perExchange(ctx, member, in.Exchange, func(ex string) error {
		got, done, err := r.Trading.WalkFills(ctx, member, trading.Scope{Exchange: ex, MarketType: in.marketType(), Symbol: in.Symbol},
			in.walkOf(c), func(f trading.Fill) bool {
				return (in.Side == "" || f.Side == in.Side) && c.before(f.Time.UnixMilli(), ex, f.TradeID)
			})
		if err != nil {
			return err
		}
		for _, f := range got {
			rows = append(rows, HistoryFill{Exchange: ex, Fill: f})
		}
		complete = complete && done
		return nil
	})
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	slices.SortStableFunc(rows, func(a, b HistoryFill) int {
		return newer(a.Time.UnixMilli(), a.Exchange, a.TradeID, b.Time.UnixMilli(), b.Exchange, b.TradeID)
	})
	out := HistoryFillList{Fills: rows, Failed: failed}
	if len(rows) > in.Limit || (!complete && len(rows) > 0) {
		out.Fills = rows[:min(len(rows), in.Limit)]
		last := out.Fills[len(out.Fills)-1]
		out.NextCursor = cursor{T: last.Time.UnixMilli(), Ex: last.Exchange, ID: last.TradeID}.encode()
	}
	if out.Fills == nil {
		out.Fills = []HistoryFill{}
	}
	return ok(out), nil
}
