package binance

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/binance/emulator"
	"github.com/exhub/exhub/plugin-sdk/faults"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// TestEmulatorFaultsUnknownOutcome: when the emulator loses the answer to an order placement (after executing it or
// before), PlaceOrder and PlaceAlgoOrder answer UNKNOWN_OUTCOME, and GetOrder by client id afterwards finds the
// order exactly when it was executed.
func TestEmulatorFaultsUnknownOutcome(t *testing.T) {
	s, v, e := manualEmuCfg(t, emulator.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	acct := demoAccount()
	kinds := []faults.Kind{faults.AcceptThenError, faults.AcceptThenDrop, faults.DropBefore}
	for _, mt := range []exchangev1.MarketType{exchangev1.MarketType_MARKET_TYPE_SPOT, exchangev1.MarketType_MARKET_TYPE_SWAP} {
		id := "BTC/USDT"
		if mt == exchangev1.MarketType_MARKET_TYPE_SWAP {
			id = "BTC/USDT:PERP"
		}
		b := buildBook(t, v, id)
		if mt == exchangev1.MarketType_MARKET_TYPE_SWAP {
			if err := v.SetMarkPrice(id, b.ref); err != nil {
				t.Fatal(err)
			}
		}
		rest := b.bid.Sub(b.ref.Mul(decimal.RequireFromString("0.02"))).Round(0).String()
		for _, k := range kinds {
			cid := "flt-" + mt.String()[12:] + "-" + string(k)
			if err := e.Faults().Arm(cid, k); err != nil {
				t.Fatal(err)
			}
			_, err := s.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: acct, MarketType: mt, Symbol: "BTCUSDT",
				Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: rest, Qty: "0.01", ClientOrderId: cid})
			if reason(err) != exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME {
				t.Fatalf("%v %s: %v, want UNKNOWN_OUTCOME", mt, k, err)
			}
			got, gerr := s.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: acct, MarketType: mt, Symbol: "BTCUSDT", ClientOrderId: cid})
			switch {
			case k.Executes() && (gerr != nil || got.GetOrder().GetClientOrderId() != cid):
				t.Fatalf("%v %s: executed order not found by client id: %v", mt, k, gerr)
			case !k.Executes() && reason(gerr) != exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND:
				t.Fatalf("%v %s: an order dropped before execution exists: %v %+v", mt, k, gerr, got)
			}
		}
		if e.Faults().Pending() != 0 {
			t.Fatalf("faults left armed: %d", e.Faults().Pending())
		}
	}

	// Conditional orders (futures) take the same path.
	swap := exchangev1.MarketType_MARKET_TYPE_SWAP
	mk, err := v.Mark("BTC/USDT:PERP")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		cid := "flt-algo-" + string(k)
		if err := e.Faults().Arm(cid, k); err != nil {
			t.Fatal(err)
		}
		_, err := s.PlaceAlgoOrder(ctx, &exchangev1.PlaceAlgoOrderRequest{Account: acct, MarketType: swap, Symbol: "BTCUSDT",
			Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_STOP_MARKET,
			TriggerPrice: mk.Mark.Mul(decimal.RequireFromString("1.5")).Round(0).String(), Qty: "0.01",
			TriggerPriceType: exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK, ClientAlgoId: cid})
		if reason(err) != exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME {
			t.Fatalf("algo %s: %v, want UNKNOWN_OUTCOME", k, err)
		}
		al, err := s.ListAlgoOrders(ctx, &exchangev1.ListAlgoOrdersRequest{Account: acct, MarketType: swap, Symbol: "BTCUSDT"})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, a := range al.GetAlgoOrders() {
			found = found || a.GetClientAlgoId() == cid
		}
		if found != k.Executes() {
			t.Fatalf("algo %s: found %v, executed %v", k, found, k.Executes())
		}
	}
}
