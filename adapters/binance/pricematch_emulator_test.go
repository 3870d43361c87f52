package binance

import (
	"context"
	"testing"
	"time"

	"github.com/exhub/exhub/adapters/binance/emulator"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// TestPriceMatch: USD-M futures claims price_match and sends priceMatch (QUEUE joins the best bid, OPPONENT takes
// the best ask, an amend re-prices); spot claims nothing and answers NOT_SUPPORTED without placing anything.
func TestPriceMatch(t *testing.T) {
	s, v, _ := manualEmuCfg(t, emulator.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, err := s.Describe(ctx, &exchangev1.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range d.GetCapabilities().GetTrading().GetMarkets() {
		if want := m.GetMarketType() == exchangev1.MarketType_MARKET_TYPE_SWAP; m.GetPriceMatch() != want {
			t.Fatalf("%v price_match %v, want %v", m.GetMarketType(), m.GetPriceMatch(), want)
		}
	}
	acct := demoAccount()
	swap, spot := exchangev1.MarketType_MARKET_TYPE_SWAP, exchangev1.MarketType_MARKET_TYPE_SPOT
	b := buildBook(t, v, "BTC/USDT:PERP")
	place := func(mt exchangev1.MarketType, side exchangev1.Side, pm exchangev1.PriceMatch, cid string) (*exchangev1.Order, error) {
		r, err := s.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: acct, MarketType: mt, Symbol: "BTCUSDT", Side: side,
			Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Qty: "0.01", ClientOrderId: cid, PriceMatch: pm})
		return r.GetOrder(), err
	}
	o, err := place(swap, exchangev1.Side_SIDE_BUY, exchangev1.PriceMatch_PRICE_MATCH_QUEUE, "pm-queue")
	if err != nil || o.GetPrice() != b.bid.String() || o.GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_NEW ||
		o.GetPriceMatch() != exchangev1.PriceMatch_PRICE_MATCH_QUEUE {
		t.Fatalf("QUEUE: %v %v (best bid %s)", o, err, b.bid)
	}
	// The same client id again is the same order (looked up first), not a second one.
	again, err := place(swap, exchangev1.Side_SIDE_BUY, exchangev1.PriceMatch_PRICE_MATCH_QUEUE, "pm-queue")
	if err != nil || again.GetOrderId() != o.GetOrderId() {
		t.Fatalf("retry: %v %v", again, err)
	}
	o, err = place(swap, exchangev1.Side_SIDE_BUY, exchangev1.PriceMatch_PRICE_MATCH_OPPONENT, "pm-opp")
	if err != nil || o.GetPrice() != b.ask.String() || o.GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_FILLED {
		t.Fatalf("OPPONENT: %v %v (best ask %s)", o, err, b.ask)
	}
	// Amend with priceMatch: a resting sell far above moves to the best ask.
	far := b.ask.Mul(b.ask.Div(b.ref)).Round(0)
	r, err := s.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: acct, MarketType: swap, Symbol: "BTCUSDT", Side: exchangev1.Side_SIDE_SELL,
		Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Qty: "0.005", Price: far.String(), ClientOrderId: "pm-far"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.AmendOrder(ctx, &exchangev1.AmendOrderRequest{Account: acct, MarketType: swap, Symbol: "BTCUSDT",
		OrderId: r.GetOrder().GetOrderId(), PriceMatch: exchangev1.PriceMatch_PRICE_MATCH_QUEUE})
	if err != nil || a.GetOrder().GetPrice() != b.ask.String() {
		t.Fatalf("amend QUEUE: %v %v (best ask %s)", a.GetOrder(), err, b.ask)
	}
	// A price with price match is INVALID_ARGUMENT; spot is NOT_SUPPORTED and places nothing.
	if _, err := s.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: acct, MarketType: swap, Symbol: "BTCUSDT", Side: exchangev1.Side_SIDE_BUY,
		Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Qty: "0.01", Price: b.bid.String(), PriceMatch: exchangev1.PriceMatch_PRICE_MATCH_QUEUE}); reason(err) != exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT {
		t.Fatalf("price with price match: %v", err)
	}
	if _, err := place(spot, exchangev1.Side_SIDE_BUY, exchangev1.PriceMatch_PRICE_MATCH_QUEUE, "pm-spot"); reason(err) != exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED {
		t.Fatalf("spot: %v, want NOT_SUPPORTED", err)
	}
	if _, err := s.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: acct, MarketType: spot, Symbol: "BTCUSDT", ClientOrderId: "pm-spot"}); reason(err) != exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND {
		t.Fatalf("spot order placed: %v", err)
	}
}
