package binance

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/binance/emulator"
	"github.com/exhub/exhub/plugin-sdk/faults"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

var faultKinds = []faults.Kind{faults.AcceptThenError, faults.AcceptThenDrop, faults.DropBefore}

// TestEmulatorAmendUnknownOutcome: an amend whose answer is lost (futures PUT /fapi/v1/order, spot keepPriority and
// spot cancelReplace) answers UNKNOWN_OUTCOME, never a refusal, and reading the order afterwards shows the change
// exactly when the emulator executed it.
func TestEmulatorAmendUnknownOutcome(t *testing.T) {
	s, v, e := manualEmuCfg(t, emulator.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	acct := demoAccount()
	spot, swap := exchangev1.MarketType_MARKET_TYPE_SPOT, exchangev1.MarketType_MARKET_TYPE_SWAP
	books := map[exchangev1.MarketType]book{spot: buildBook(t, v, "BTC/USDT"), swap: buildBook(t, v, "BTC/USDT:PERP")}
	if err := v.SetMarkPrice("BTC/USDT:PERP", books[swap].ref); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		mt     exchangev1.MarketType
		newQty string // empty: the price changes
	}{
		{"futures", swap, ""},
		{"spot-keepPriority", spot, "0.01"},
		{"spot-cancelReplace", spot, ""},
	}
	for ci, c := range cases {
		b := books[c.mt]
		rest := b.bid.Sub(b.ref.Mul(decimal.RequireFromString("0.02"))).Round(0)
		moved := rest.Sub(decimal.NewFromInt(10)).String()
		for _, k := range faultKinds {
			name := fmt.Sprintf("%s/%s", c.name, k)
			cid := fmt.Sprintf("amd-%d-%s", ci, k)
			placed, err := s.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: acct, MarketType: c.mt, Symbol: "BTCUSDT",
				Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: rest.String(), Qty: "0.02", ClientOrderId: cid})
			if err != nil {
				t.Fatalf("%s: place: %v", name, err)
			}
			oid := placed.GetOrder().GetOrderId()
			armID := oid
			if k == faults.AcceptThenDrop {
				armID = cid // the amend carries the order's client id too
			}
			if err := e.Faults().Arm(armID, k); err != nil {
				t.Fatal(err)
			}
			am := &exchangev1.AmendOrderRequest{Account: acct, MarketType: c.mt, Symbol: "BTCUSDT", OrderId: oid}
			if c.newQty != "" {
				am.Qty = c.newQty
			} else {
				am.Price = moved
			}
			if _, err := s.AmendOrder(ctx, am); reason(err) != exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME {
				t.Fatalf("%s: amend: %v, want UNKNOWN_OUTCOME", name, err)
			}
			if e.Faults().Pending() != 0 {
				t.Fatalf("%s: the fault was not used by the amend", name)
			}
			got, err := s.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: acct, MarketType: c.mt, Symbol: "BTCUSDT", OrderId: oid})
			if err != nil {
				t.Fatalf("%s: read back: %v", name, err)
			}
			o := got.GetOrder()
			var changed bool
			switch c.name {
			case "futures":
				changed = decEqual(o.GetPrice(), moved)
			case "spot-keepPriority":
				changed = decEqual(o.GetQty(), c.newQty)
			default: // cancel-replace: the old order is cancelled when it ran
				changed = o.GetStatus() == exchangev1.OrderStatus_ORDER_STATUS_CANCELLED
			}
			if changed != k.Executes() {
				t.Fatalf("%s: changed %v, executed %v: %+v", name, changed, k.Executes(), o)
			}
			if o.GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_CANCELLED {
				if _, err := s.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: acct, MarketType: c.mt, Symbol: "BTCUSDT", OrderId: oid}); err != nil {
					t.Fatalf("%s: clean up: %v", name, err)
				}
			}
		}
	}
}

// TestEmulatorCancelLostAnswer: a cancel whose answer is lost answers UNKNOWN_OUTCOME; asking again ends with the
// order cancelled and no error, whether the first cancel ran (Binance then answers "unknown order", which the plugin
// checks by reading the order) or not. A cancel of a filled order answers the filled order; of an order Binance
// never had, ORDER_NOT_FOUND.
func TestEmulatorCancelLostAnswer(t *testing.T) {
	s, v, e := manualEmuCfg(t, emulator.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	acct := demoAccount()
	spot, swap := exchangev1.MarketType_MARKET_TYPE_SPOT, exchangev1.MarketType_MARKET_TYPE_SWAP
	books := map[exchangev1.MarketType]book{spot: buildBook(t, v, "BTC/USDT"), swap: buildBook(t, v, "BTC/USDT:PERP")}
	if err := v.SetMarkPrice("BTC/USDT:PERP", books[swap].ref); err != nil {
		t.Fatal(err)
	}
	for _, mt := range []exchangev1.MarketType{spot, swap} {
		b := books[mt]
		rest := b.bid.Sub(b.ref.Mul(decimal.RequireFromString("0.02"))).Round(0).String()
		for _, k := range faultKinds {
			name := fmt.Sprintf("%v/%s", mt, k)
			cid := "cxl-" + mt.String()[12:] + "-" + string(k)
			placed, err := s.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: acct, MarketType: mt, Symbol: "BTCUSDT",
				Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: rest, Qty: "0.01", ClientOrderId: cid})
			if err != nil {
				t.Fatalf("%s: place: %v", name, err)
			}
			if err := e.Faults().Arm(cid, k); err != nil {
				t.Fatal(err)
			}
			cr := &exchangev1.CancelOrderRequest{Account: acct, MarketType: mt, Symbol: "BTCUSDT", ClientOrderId: cid}
			if _, err := s.CancelOrder(ctx, cr); reason(err) != exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME {
				t.Fatalf("%s: cancel: %v, want UNKNOWN_OUTCOME", name, err)
			}
			again, err := s.CancelOrder(ctx, cr)
			if err != nil {
				t.Fatalf("%s: cancel again: %v", name, err)
			}
			if o := again.GetOrder(); o.GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_CANCELLED || o.GetOrderId() != placed.GetOrder().GetOrderId() {
				t.Fatalf("%s: cancel again answered %+v", name, o)
			}
		}
		// A filled order: "unknown order" from Binance, the filled order from the plugin.
		filled, err := s.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: acct, MarketType: mt, Symbol: "BTCUSDT",
			Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: b.ask.String(), Qty: "0.01", ClientOrderId: "cxl-filled-" + mt.String()[12:]})
		if err != nil {
			t.Fatal(err)
		}
		if filled.GetOrder().GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_FILLED {
			t.Fatalf("%v: crossing order not filled: %+v", mt, filled.GetOrder())
		}
		got, err := s.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: acct, MarketType: mt, Symbol: "BTCUSDT", OrderId: filled.GetOrder().GetOrderId()})
		if err != nil || got.GetOrder().GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_FILLED {
			t.Fatalf("%v: cancel of a filled order: %v %+v", mt, err, got.GetOrder())
		}
		if _, err := s.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: acct, MarketType: mt, Symbol: "BTCUSDT", ClientOrderId: "never-placed"}); reason(err) != exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND {
			t.Fatalf("%v: cancel of an unknown order: %v, want ORDER_NOT_FOUND", mt, err)
		}
	}
}
