package okx_test

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// TestTpSlOnEntryArmsAlgo: PlaceOrder with a take-profit and a stop-loss on a swap entry sends attachAlgoOrds, and
// once the market entry fills the emulator lists a reduce-only algo order on the opposite side for the entry's size.
func TestTpSlOnEntryArmsAlgo(t *testing.T) {
	w := shared(t)
	ctx := t.Context()
	swap := exchangev1.MarketType_MARKET_TYPE_SWAP
	const sym = "SOL-USDT-SWAP"
	known := map[string]bool{}
	before, err := w.c.ListAlgoOrders(ctx, &exchangev1.ListAlgoOrdersRequest{Account: w.acct, MarketType: swap, Symbol: sym})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range before.GetAlgoOrders() {
		known[a.GetAlgoId()] = true
	}
	bid, _ := bestBid(t, w, swap, sym)
	tp := bid.Mul(decimal.RequireFromString("3")).Round(2).String()
	sl := bid.Mul(decimal.RequireFromString("0.3")).Round(2).String()
	o, err := w.c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: w.acct, MarketType: swap, Symbol: sym,
		Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_MARKET, Qty: "1", ClientOrderId: uniqueID("tpe"),
		MarginMode: exchangev1.MarginMode_MARGIN_MODE_CROSS,
		TakeProfit: &exchangev1.TpSl{TriggerPrice: tp, TriggerPriceType: exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK},
		StopLoss:   &exchangev1.TpSl{TriggerPrice: sl, TriggerPriceType: exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { // undo the entry: the algo order and the contract it bought
		ctx := context.WithoutCancel(ctx)
		_, _ = w.c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: w.acct, MarketType: swap, Symbol: sym,
			Side: exchangev1.Side_SIDE_SELL, Type: exchangev1.OrderType_ORDER_TYPE_MARKET, Qty: o.GetOrder().GetQty(), ReduceOnly: true,
			MarginMode: exchangev1.MarginMode_MARGIN_MODE_CROSS})
	}()
	deadline := time.Now().Add(30 * time.Second) // generous: the emulator arms it on its own goroutine
	for {
		l, err := w.c.ListAlgoOrders(ctx, &exchangev1.ListAlgoOrdersRequest{Account: w.acct, MarketType: swap, Symbol: sym})
		if err != nil {
			t.Fatal(err)
		}
		var got []*exchangev1.AlgoOrder
		for _, a := range l.GetAlgoOrders() {
			if !known[a.GetAlgoId()] {
				got = append(got, a)
			}
		}
		if len(got) > 0 {
			for _, a := range got {
				if a.GetSide() != exchangev1.Side_SIDE_SELL || !a.GetReduceOnly() || !decimal.RequireFromString(a.GetQty()).Equal(decimal.RequireFromString(o.GetOrder().GetQty())) {
					t.Fatalf("attached algo %+v for entry %+v", a, o.GetOrder())
				}
				if _, err := w.c.CancelAlgoOrder(ctx, &exchangev1.CancelAlgoOrderRequest{Account: w.acct, MarketType: swap, Symbol: sym, AlgoId: a.GetAlgoId()}); err != nil {
					t.Fatal(err)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no algo order armed after the entry filled: %+v", l.GetAlgoOrders())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
