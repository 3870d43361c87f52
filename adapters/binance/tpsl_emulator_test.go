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

// TestTpSlOnEntry: spot claims TP_SL_KIND_ON_ORDER and places a LIMIT entry with a take-profit and a stop-loss as
// an OTOCO order list (the entry fills, the pending pair waits; a retry with the same client id places nothing
// more); a single leg or a MARKET entry is NOT_SUPPORTED on spot. Futures has no TP/SL on the order (the BFF arms
// them after the fill, decision 0022): it claims none and answers NOT_SUPPORTED without placing anything.
func TestTpSlOnEntry(t *testing.T) {
	s, v, _ := manualEmuCfg(t, emulator.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, err := s.Describe(ctx, &exchangev1.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	tr := d.GetCapabilities().GetTrading()
	for _, m := range tr.GetMarkets() {
		if want := m.GetMarketType() == exchangev1.MarketType_MARKET_TYPE_SPOT; slices.Contains(m.GetTpslKinds(), exchangev1.TpSlKind_TP_SL_KIND_ON_ORDER) != want {
			t.Fatalf("%v TP/SL on the order: %v, want %v", m.GetMarketType(), m.GetTpslKinds(), want)
		}
	}
	acct := demoAccount()
	spot, swap := exchangev1.MarketType_MARKET_TYPE_SPOT, exchangev1.MarketType_MARKET_TYPE_SWAP
	pct := func(b book, f string) string { return b.ref.Mul(decimal.RequireFromString(f)).Round(0).String() }

	// Futures: refused, nothing placed.
	fb := buildBook(t, v, "BTC/USDT:PERP")
	_, err = s.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: acct, MarketType: swap, Symbol: "BTCUSDT",
		Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: fb.bid.String(), Qty: "0.01", ClientOrderId: "tpsl-swap",
		TakeProfit: &exchangev1.TpSl{TriggerPrice: pct(fb, "1.1")}})
	if reason(err) != exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED {
		t.Fatalf("futures: %v, want NOT_SUPPORTED", err)
	}
	if _, err := s.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: acct, MarketType: swap, Symbol: "BTCUSDT", ClientOrderId: "tpsl-swap"}); reason(err) != exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND {
		t.Fatalf("futures: an order refused as NOT_SUPPORTED was placed: %v", err)
	}

	// Spot: an OTOCO list. The entry buys at the best ask and fills.
	b := buildBook(t, v, "BTC/USDT")
	entry := func(cid string, typ exchangev1.OrderType, tp, sl *exchangev1.TpSl) (*exchangev1.Order, error) {
		r := &exchangev1.PlaceOrderRequest{Account: acct, MarketType: spot, Symbol: "BTCUSDT", Side: exchangev1.Side_SIDE_BUY,
			Type: typ, Qty: "0.01", ClientOrderId: cid, TakeProfit: tp, StopLoss: sl}
		if typ == exchangev1.OrderType_ORDER_TYPE_LIMIT {
			r.Price = b.ask.String()
		}
		resp, err := s.PlaceOrder(ctx, r)
		return resp.GetOrder(), err
	}
	tp := &exchangev1.TpSl{TriggerPrice: pct(b, "1.1"), TriggerPriceType: exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST}
	sl := &exchangev1.TpSl{TriggerPrice: pct(b, "0.9")}
	o, err := entry("otoco-1", exchangev1.OrderType_ORDER_TYPE_LIMIT, tp, sl)
	if err != nil || o.GetClientOrderId() != "otoco-1" || o.GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_FILLED {
		t.Fatalf("entry: %v %v", o, err)
	}
	legs := func() []*exchangev1.Order {
		t.Helper()
		r, err := s.ListOpenOrders(ctx, &exchangev1.ListOpenOrdersRequest{Account: acct, MarketType: spot, Symbol: "BTCUSDT"})
		if err != nil {
			t.Fatal(err)
		}
		var out []*exchangev1.Order
		for _, x := range r.GetOrders() {
			if x.GetClientOrderId() == "otoco-1-tp" || x.GetClientOrderId() == "otoco-1-sl" {
				out = append(out, x)
			}
		}
		return out
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(legs()) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // polling the emulator for the legs its event follower places
	}
	got := legs()
	if len(got) != 2 {
		t.Fatalf("pending legs %v", got)
	}
	for _, x := range got {
		if x.GetSide() != exchangev1.Side_SIDE_SELL || x.GetQty() != "0.01" {
			t.Fatalf("leg %v", x)
		}
	}
	// A retry with the same client id answers the working order and places no second list.
	again, err := entry("otoco-1", exchangev1.OrderType_ORDER_TYPE_LIMIT, tp, sl)
	if err != nil || again.GetOrderId() != o.GetOrderId() || len(legs()) != 2 {
		t.Fatalf("retry: %v %v, legs %d", again, err, len(legs()))
	}
	// Refusals on spot: one leg only, a market entry.
	if _, err := entry("otoco-2", exchangev1.OrderType_ORDER_TYPE_LIMIT, tp, nil); reason(err) != exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED {
		t.Fatalf("one leg: %v", err)
	}
	if _, err := entry("otoco-3", exchangev1.OrderType_ORDER_TYPE_MARKET, tp, sl); reason(err) != exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED {
		t.Fatalf("market entry: %v", err)
	}
}
