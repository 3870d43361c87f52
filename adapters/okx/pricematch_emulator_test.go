package okx_test

import (
	"testing"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// TestPriceMatchNotSupported: OKX claims price_match on no market and answers NOT_SUPPORTED on place and amend.
func TestPriceMatchNotSupported(t *testing.T) {
	w := shared(t)
	d, err := w.c.Describe(t.Context(), &exchangev1.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range d.GetCapabilities().GetTrading().GetMarkets() {
		if m.GetPriceMatch() {
			t.Fatalf("%v claims price_match", m.GetMarketType())
		}
	}
	for _, mt := range []exchangev1.MarketType{exchangev1.MarketType_MARKET_TYPE_SPOT, exchangev1.MarketType_MARKET_TYPE_SWAP} {
		sym := "BTC-USDT"
		if mt == exchangev1.MarketType_MARKET_TYPE_SWAP {
			sym = "BTC-USDT-SWAP"
		}
		_, err := w.c.PlaceOrder(t.Context(), &exchangev1.PlaceOrderRequest{Account: w.acct, MarketType: mt, Symbol: sym,
			Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Qty: "0.01",
			PriceMatch: exchangev1.PriceMatch_PRICE_MATCH_QUEUE})
		wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED)
		_, err = w.c.AmendOrder(t.Context(), &exchangev1.AmendOrderRequest{Account: w.acct, MarketType: mt, Symbol: sym,
			OrderId: "1", PriceMatch: exchangev1.PriceMatch_PRICE_MATCH_OPPONENT})
		wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED)
	}
}
