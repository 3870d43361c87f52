package trading

import (
	"context"
	"testing"

	"github.com/exhub/exhub/bff/internal/store"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
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
	// The exchange chose the price (the order may have filled meanwhile: the market moves).
	sup, _ := e.host.Get("binance")
	acct, _ := e.acc.AccountRef(ctx, "a", "binance")
	err = sup.Call(ctx, "GetOrder", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		r, err := c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: acct, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP,
			Symbol: m.symbol, ClientOrderId: o.ClientOrderID})
		if err == nil && (!dec(r.GetOrder().GetPrice()).IsPositive() || r.GetOrder().GetPriceMatch() != exchangev1.PriceMatch_PRICE_MATCH_QUEUE) {
			t.Errorf("the exchange's order: %v", r.GetOrder())
		}
		return err
	})
	if err != nil {
		t.Fatalf("GetOrder: %v", err)
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
