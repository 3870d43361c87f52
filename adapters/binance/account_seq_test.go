package binance

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/binance/emulator"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdktest"
)

// TestStreamAccountSequenced: the stream starts with a snapshot (sequence 1) holding what is open, then sends the
// order and fill events of a filled order with contiguous sequences; a dropped socket brings RESYNCED directly
// followed by a fresh snapshot, and the sequences stay contiguous throughout.
func TestStreamAccountSequenced(t *testing.T) {
	s, v, e := manualEmuCfg(t, emulator.Config{})
	c, stop, err := sdktest.ServeInProcess(s)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	acct := demoAccount()
	sb := buildBook(t, v, "BTC/USDT")
	// Something open before the stream starts must be in the first snapshot.
	rest, err := s.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: acct, MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT, Symbol: "BTCUSDT",
		Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: sb.bid.Mul(decimal.RequireFromString("0.98")).Round(0).String(), Qty: "0.002"})
	if err != nil {
		t.Fatal(err)
	}
	w := watchAccount(t, ctx, c, acct)
	var next int64 = 1
	check := func(evs []*exchangev1.AccountEvent) {
		t.Helper()
		for _, ev := range evs {
			if ev.Sequence != next {
				t.Fatalf("event %v has sequence %d, want %d", ev, ev.Sequence, next)
			}
			next++
		}
	}
	first := w.until("snapshot", func(ev *exchangev1.AccountEvent) bool { return true })
	check(first)
	snap := first[0].GetSnapshot()
	if snap == nil {
		t.Fatalf("first event %v, want a snapshot", first[0])
	}
	found := false
	for _, o := range snap.OpenOrders {
		found = found || o.OrderId == rest.Order.OrderId
	}
	if !found || len(snap.Balances) == 0 {
		t.Fatalf("snapshot without the open order %s or balances: %v", rest.Order.OrderId, snap)
	}
	check(w.until("CONNECTED", isStatus(exchangev1.StreamStatus_STATE_CONNECTED)))

	mb, err := s.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: acct, MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT, Symbol: "BTCUSDT",
		Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_MARKET, Qty: "0.01", ClientOrderId: "seq-1"})
	if err != nil {
		t.Fatal(err)
	}
	check(w.untilAll("filled order and its fill", func(ev *exchangev1.AccountEvent) bool {
		o := ev.GetOrder()
		return o.GetOrderId() == mb.Order.OrderId && o.GetStatus() == exchangev1.OrderStatus_ORDER_STATUS_FILLED
	}, func(ev *exchangev1.AccountEvent) bool { return ev.GetFill().GetOrderId() == mb.Order.OrderId }))

	if n := e.DropConnections(); n < 2 {
		t.Fatalf("dropped %d connections, want both user streams", n)
	}
	evs := w.until("RESYNCED", isStatus(exchangev1.StreamStatus_STATE_RESYNCED))
	check(evs)
	after := w.until("snapshot after RESYNCED", func(*exchangev1.AccountEvent) bool { return true })
	check(after)
	if after[0].GetSnapshot() == nil {
		t.Fatalf("after RESYNCED: %v, want a snapshot", after[0])
	}
}
