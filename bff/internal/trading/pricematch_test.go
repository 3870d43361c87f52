package trading

import (
	"testing"

	"github.com/exhub/exhub/bff/internal/store"
)

// TestPriceMatch: a binance SWAP limit order with price_match QUEUE is sent without a price, journaled with its
// choice, and rests at the price the exchange chose; markets without the capability, a price with it, and a market
// order with it are refused before anything is journaled or sent.
func TestPriceMatch(t *testing.T) {
	e := newEnv(t, false)
	ctx := ctxT(t)
	m := e.market(t, "binance", "SWAP")
	req := m.limit("BUY", "", m.qty(m.price(1), 1))
	req.PriceMatch = "QUEUE"
	o, err := e.svc.Place(ctx, "a", newKey(), req)
	if err != nil {
		t.Fatalf("place: %v", err)
	}
	if o.State != store.OrderAcknowledged || o.PriceMatch != "QUEUE" || o.Price != "" {
		t.Fatalf("journaled %+v", o)
	}
	if v := View(o); v.PriceMatch != "QUEUE" {
		t.Fatalf("view %+v", v)
	}
	list, err := e.svc.OpenOrders(ctx, "a", Scope{Exchange: m.ex.slug, MarketType: m.mt, Symbol: m.symbol})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, x := range list {
		if x.ClientOrderID == o.ClientOrderID {
			found = true
			if !dec(x.Price).IsPositive() {
				t.Fatalf("the exchange's order has no price: %+v", x)
			}
		}
	}
	if !found && StatusOf(o) == StatusOpen {
		t.Fatal("the price-match order is not among the open orders")
	}

	for _, c := range []struct {
		slug, mt, field, code string
		edit                  func(*PlaceRequest)
	}{
		{"binance", "SPOT", "price_match", "not_supported", nil},
		{"okx", "SWAP", "price_match", "not_supported", nil},
		{"binance", "SWAP", "price", "invalid_argument", func(r *PlaceRequest) { r.Price = m.price(1) }},
		{"binance", "SWAP", "price_match", "invalid_argument", func(r *PlaceRequest) { r.Type = "MARKET" }},
		{"binance", "SWAP", "price_match", "invalid_argument", func(r *PlaceRequest) { r.PriceMatch = "NEAREST" }},
	} {
		mk := e.market(t, c.slug, c.mt)
		r := mk.limit("BUY", "", mk.qty(mk.price(1), 1))
		r.PriceMatch = "OPPONENT"
		if c.edit != nil {
			c.edit(&r)
		}
		_, err := e.svc.Place(ctx, "a", newKey(), r)
		if ex := wantCode(t, err, c.code); ex.Field != c.field {
			t.Fatalf("%s %s: field %q, want %q", c.slug, c.mt, ex.Field, c.field)
		}
	}
}
