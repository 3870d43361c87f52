package venue

import (
	"errors"
	"testing"
)

func TestPlaceMatched(t *testing.T) {
	f := newFixture(t)
	f.fund("u", "100000", "")
	const perp = "TST/USDT:PERP"
	for _, l := range []struct {
		side  Side
		price string
	}{{Buy, "99"}, {Buy, "98"}, {Buy, "97"}, {Sell, "101"}, {Sell, "102"}} {
		if _, err := f.v.AddLiquidity(perp, l.side, d(l.price), d("1")); err != nil {
			t.Fatal(err)
		}
	}
	req := func(side Side, cid string) OrderRequest {
		return OrderRequest{Account: "u", Instrument: perp, ClientID: cid, Side: side, Type: Limit, Qty: d("0.5")}
	}

	// QUEUE: the best price on its own side, resting as a maker.
	o, err := f.v.PlaceMatched(f.ctx, req(Buy, "q1"), MatchQueue, 1)
	if err != nil || !o.Price.Equal(d("99")) || o.Status != StatusNew || o.Type != Limit {
		t.Fatalf("queue buy: %+v %v", o, err)
	}
	// QUEUE_5 with three bid levels (and now our own order at 99): the deepest there is.
	o, err = f.v.PlaceMatched(f.ctx, req(Buy, "q5"), MatchQueue, 5)
	if err != nil || !o.Price.Equal(d("97")) {
		t.Fatalf("queue_5 buy: %+v %v", o, err)
	}
	// OPPONENT: the best ask, trading at once.
	o, err = f.v.PlaceMatched(f.ctx, req(Buy, "o1"), MatchOpponent, 1)
	if err != nil || !o.Price.Equal(d("101")) || o.Status != StatusFilled || !o.AvgPrice.Equal(d("101")) {
		t.Fatalf("opponent buy: %+v %v", o, err)
	}
	// A sell QUEUE joins the asks at the best ask, now 101 with half a lot left.
	o, err = f.v.PlaceMatched(f.ctx, req(Sell, "qs"), MatchQueue, 1)
	if err != nil || !o.Price.Equal(d("101")) || o.Status != StatusNew {
		t.Fatalf("queue sell: %+v %v", o, err)
	}
	// A price with price match, or another order type, is refused and leaves nothing behind.
	bad := req(Buy, "bad")
	bad.Price = d("99")
	if _, err := f.v.PlaceMatched(f.ctx, bad, MatchQueue, 1); !errors.Is(err, ErrInvalidOrder) {
		t.Fatalf("price with price match: %v", err)
	}
	bad = req(Buy, "bad")
	bad.Type = Market
	if _, err := f.v.PlaceMatched(f.ctx, bad, MatchOpponent, 1); !errors.Is(err, ErrInvalidOrder) {
		t.Fatalf("market with price match: %v", err)
	}
	// A repeated open client id returns that order.
	if o, err := f.v.PlaceMatched(f.ctx, req(Buy, "q1"), MatchQueue, 1); !errors.Is(err, ErrDuplicateClientID) || o.ClientID != "q1" {
		t.Fatalf("duplicate: %+v %v", o, err)
	}
	// An empty side has nothing to match.
	if _, err := f.v.PlaceMatched(f.ctx, OrderRequest{Account: "u", Instrument: "TST/USDT", Side: Buy, Type: Limit,
		Qty: d("0.5")}, MatchQueue, 1); !errors.Is(err, ErrNoPriceToMatch) {
		t.Fatalf("empty book: %v", err)
	}
	if px, err := f.v.MatchedPrice(perp, Sell, MatchOpponent, 1); err != nil || !px.Equal(d("99")) {
		t.Fatalf("matched price: %d %v", px, err)
	}
	open, _ := f.v.OpenOrders("u", "")
	if len(open) != 3 {
		t.Fatalf("open orders %d, want 3", len(open))
	}
}
