package okx_test

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/plugin-sdk/faults"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// TestLostAmendIsUnknownOutcome: an amend-order whose answer is lost answers UNKNOWN_OUTCOME (never a refusal), on
// spot and swap, and reading the order afterwards shows the new price exactly when the emulator executed it.
func TestLostAmendIsUnknownOutcome(t *testing.T) {
	w := shared(t)
	ctx := t.Context()
	for _, c := range []struct {
		mt      exchangev1.MarketType
		sym     string
		qty     string
		decimal int32
	}{
		{exchangev1.MarketType_MARKET_TYPE_SPOT, "BTC-USDT", "0.001", 1},
		{exchangev1.MarketType_MARKET_TYPE_SWAP, "SOL-USDT-SWAP", "1", 2},
	} {
		bid, _ := bestBid(t, w, c.mt, c.sym)
		px := bid.Mul(decimal.RequireFromString("0.8")).Round(c.decimal)
		moved := bid.Mul(decimal.RequireFromString("0.7")).Round(c.decimal)
		for _, k := range []faults.Kind{faults.AcceptThenError, faults.AcceptThenDrop, faults.DropBefore} {
			name := c.sym + "/" + string(k)
			cid := uniqueID("amd")
			placed, err := w.c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: w.acct, MarketType: c.mt, Symbol: c.sym,
				Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: px.String(), Qty: c.qty,
				ClientOrderId: cid, MarginMode: marginFor(c.mt)})
			if err != nil {
				t.Fatalf("%s: place: %v", name, err)
			}
			if err := faults.Arm(nil, w.ts.URL, cid, k); err != nil {
				t.Fatal(err)
			}
			_, err = w.c.AmendOrder(ctx, &exchangev1.AmendOrderRequest{Account: w.acct, MarketType: c.mt, Symbol: c.sym,
				ClientOrderId: cid, Price: moved.String()})
			wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME)
			got, err := w.c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: w.acct, MarketType: c.mt, Symbol: c.sym,
				OrderId: placed.GetOrder().GetOrderId()})
			if err != nil {
				t.Fatalf("%s: read back: %v", name, err)
			}
			p, err := decimal.NewFromString(got.GetOrder().GetPrice())
			if err != nil {
				t.Fatalf("%s: price %q", name, got.GetOrder().GetPrice())
			}
			if changed := p.Equal(moved); changed != k.Executes() {
				t.Fatalf("%s: amended %v, executed %v: %+v", name, changed, k.Executes(), got.GetOrder())
			}
			if _, err := w.c.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: w.acct, MarketType: c.mt, Symbol: c.sym, ClientOrderId: cid}); err != nil {
				t.Fatalf("%s: clean up: %v", name, err)
			}
		}
	}
}

// TestLostCancelAskedAgain: a cancel-order whose answer is lost answers UNKNOWN_OUTCOME; asking again ends with the
// order cancelled and no error whether the first cancel ran (OKX then answers 51400, which the adapter checks by
// reading the order) or not. A cancel of a filled order answers it filled; of an order never placed, ORDER_NOT_FOUND.
func TestLostCancelAskedAgain(t *testing.T) {
	w := shared(t)
	ctx := t.Context()
	spot := exchangev1.MarketType_MARKET_TYPE_SPOT
	bid, ask := bestBid(t, w, spot, "BTC-USDT")
	px := bid.Mul(decimal.RequireFromString("0.8")).Round(1).String()
	for _, k := range []faults.Kind{faults.AcceptThenError, faults.AcceptThenDrop, faults.DropBefore} {
		cid := uniqueID("cxl")
		placed, err := w.c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: w.acct, MarketType: spot, Symbol: "BTC-USDT",
			Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: px, Qty: "0.001", ClientOrderId: cid})
		if err != nil {
			t.Fatalf("%s: place: %v", k, err)
		}
		if err := faults.Arm(nil, w.ts.URL, cid, k); err != nil {
			t.Fatal(err)
		}
		cr := &exchangev1.CancelOrderRequest{Account: w.acct, MarketType: spot, Symbol: "BTC-USDT", ClientOrderId: cid}
		_, err = w.c.CancelOrder(ctx, cr)
		wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME)
		again, err := w.c.CancelOrder(ctx, cr)
		if err != nil {
			t.Fatalf("%s: cancel again: %v", k, err)
		}
		if o := again.GetOrder(); o.GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_CANCELLED || o.GetOrderId() != placed.GetOrder().GetOrderId() {
			t.Fatalf("%s: cancel again answered %+v", k, o)
		}
	}
	filled, err := w.c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: w.acct, MarketType: spot, Symbol: "BTC-USDT",
		Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: ask.Mul(decimal.RequireFromString("1.01")).Round(1).String(),
		Qty: "0.001", ClientOrderId: uniqueID("cxf")})
	if err != nil {
		t.Fatal(err)
	}
	got, err := w.c.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: w.acct, MarketType: spot, Symbol: "BTC-USDT", OrderId: filled.GetOrder().GetOrderId()})
	if err != nil || got.GetOrder().GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_FILLED {
		t.Fatalf("cancel of a filled order: %v %+v", err, got.GetOrder())
	}
	_, err = w.c.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: w.acct, MarketType: spot, Symbol: "BTC-USDT", ClientOrderId: "neverplaced1"})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND)
}

func marginFor(mt exchangev1.MarketType) exchangev1.MarginMode {
	if mt == exchangev1.MarketType_MARKET_TYPE_SWAP {
		return exchangev1.MarginMode_MARGIN_MODE_CROSS
	}
	return exchangev1.MarginMode_MARGIN_MODE_UNSPECIFIED
}
