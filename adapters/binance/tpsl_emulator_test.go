package binance

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/binance/emulator"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// TestTpSlOnEntryNotSupported: Binance has no take-profit/stop-loss attached to an order, so no market claims
// TP_SL_KIND_ON_ORDER (on futures the BFF arms them itself after the fill, decision 0022), and an order that carries
// one answers NOT_SUPPORTED without placing anything, on spot and on futures.
func TestTpSlOnEntryNotSupported(t *testing.T) {
	s, v, _ := manualEmuCfg(t, emulator.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, err := s.Describe(ctx, &exchangev1.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	tr := d.GetCapabilities().GetTrading()
	if tr.GetTpsl() {
		t.Fatal("flat tpsl claimed")
	}
	seen := map[exchangev1.MarketType]bool{}
	for _, m := range tr.GetMarkets() {
		seen[m.GetMarketType()] = true
		if slices.Contains(m.GetTpslKinds(), exchangev1.TpSlKind_TP_SL_KIND_ON_ORDER) {
			t.Fatalf("%v claims TP/SL on the order", m.GetMarketType())
		}
	}
	if !seen[exchangev1.MarketType_MARKET_TYPE_SPOT] || !seen[exchangev1.MarketType_MARKET_TYPE_SWAP] {
		t.Fatalf("capabilities per market missing: %v", seen)
	}
	acct := demoAccount()
	spot, swap := exchangev1.MarketType_MARKET_TYPE_SPOT, exchangev1.MarketType_MARKET_TYPE_SWAP
	books := map[exchangev1.MarketType]book{spot: buildBook(t, v, "BTC/USDT"), swap: buildBook(t, v, "BTC/USDT:PERP")}
	for _, mt := range []exchangev1.MarketType{spot, swap} {
		b := books[mt]
		rest := b.bid.Sub(b.ref.Mul(decimal.RequireFromString("0.02"))).Round(0)
		cid := "tpsl-" + mt.String()[12:]
		_, err := s.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: acct, MarketType: mt, Symbol: "BTCUSDT",
			Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: rest.String(), Qty: "0.01", ClientOrderId: cid,
			TakeProfit: &exchangev1.TpSl{TriggerPrice: b.ref.String(), TriggerPriceType: exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST}})
		if reason(err) != exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED {
			t.Fatalf("%v: %v, want NOT_SUPPORTED", mt, err)
		}
		if _, err := s.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: acct, MarketType: mt, Symbol: "BTCUSDT", ClientOrderId: cid}); reason(err) != exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND {
			t.Fatalf("%v: an order refused as NOT_SUPPORTED was placed: %v", mt, err)
		}
	}
}
