package venue

import (
	"context"
	"errors"
	"fmt"

	"github.com/shopspring/decimal"
)

// PriceMatch prices a limit order from the book at the moment the venue takes it, instead of a price the client
// sends (Binance USD-M futures' priceMatch). The order then rests and trades as an ordinary limit order.
type PriceMatch uint8

const (
	MatchNone PriceMatch = iota
	// MatchQueue takes a price on the order's own side: the best bid for a buy, the best ask for a sell.
	MatchQueue
	// MatchOpponent takes a price on the opposite side: the best ask for a buy, the best bid for a sell (the order
	// trades at once, as a taker, for what that level and better hold).
	MatchOpponent
)

// ErrNoPriceToMatch: the side of the book a price-match order takes its price from is empty.
var ErrNoPriceToMatch = errors.New("venue: no price on the book to match")

// MatchedPrice is the price a price-match order of side would get now: level depth (1 = best; 5, 10, 20 = that
// many levels from the best, or the deepest level there is when the side holds fewer) of its own side (MatchQueue)
// or the opposite side (MatchOpponent).
func (v *Venue) MatchedPrice(instrument string, side Side, m PriceMatch, depth int) (decimal.Decimal, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	st, err := v.inst(instrument)
	if err != nil {
		return decimal.Zero, err
	}
	px, err := matchTicks(st, side, m, depth)
	if err != nil {
		return decimal.Zero, err
	}
	return st.in.Price(px), nil
}

func matchTicks(st *instState, side Side, m PriceMatch, depth int) (int64, error) {
	if depth < 1 {
		depth = 1
	}
	var bid bool
	switch m {
	case MatchQueue:
		bid = side == Buy
	case MatchOpponent:
		bid = side == Sell
	default:
		return 0, fmt.Errorf("%w: price match %d", ErrInvalidOrder, m)
	}
	levels := st.book.depth(bid, depth)
	if len(levels) == 0 {
		return 0, fmt.Errorf("%w: %s has no %s", ErrNoPriceToMatch, st.in.ID, map[bool]string{true: "bids", false: "asks"}[bid])
	}
	return levels[len(levels)-1][0], nil
}

// PlaceMatched places a limit order priced by m at depth (see MatchedPrice) from the book as it is when the venue
// takes the order, under the same lock as the placement: nothing trades in between. req.Price must be zero and
// req.Type Limit; everything else is as for Place (the same checks, client ids and events).
func (v *Venue) PlaceMatched(ctx context.Context, req OrderRequest, m PriceMatch, depth int) (Order, error) {
	if m == MatchNone {
		return v.Place(ctx, req)
	}
	if err := ctx.Err(); err != nil {
		return Order{}, err
	}
	if req.Type != Limit {
		return Order{}, fmt.Errorf("%w: price match is for limit orders", ErrInvalidOrder)
	}
	if !req.Price.IsZero() {
		return Order{}, fmt.Errorf("%w: price match takes no price", ErrInvalidOrder)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	defer v.flushLocked()
	a, st, dup, err := v.placeTargetLocked(req)
	if err != nil {
		return dup, err
	}
	px, err := matchTicks(st, req.Side, m, depth)
	if err != nil {
		return Order{}, err
	}
	req.Price = st.in.Price(px)
	o, err := v.buildOrder(a, st, req)
	if err != nil {
		return Order{}, err
	}
	if err := v.execute(o, true); err != nil {
		return Order{}, err
	}
	view := o.view()
	v.afterTrades(st)
	return view, nil
}
