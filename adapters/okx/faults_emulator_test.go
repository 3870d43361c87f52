package okx_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"google.golang.org/protobuf/proto"

	"github.com/exhub/exhub/adapters/okx/emulator"
	"github.com/exhub/exhub/plugin-sdk/faults"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

func uniqueID(prefix string) string {
	return fmt.Sprintf("%s%d", prefix, time.Now().UnixNano()%1e12)
}

// TestLostAnswersAreUnknownOutcomes arms each fault on the emulator, places a resting order with that client id,
// and checks the adapter answers UNKNOWN_OUTCOME; reading the order by client id afterwards finds it exactly when
// the emulator executed the request.
func TestLostAnswersAreUnknownOutcomes(t *testing.T) {
	w := shared(t)
	ctx := t.Context()
	spot := exchangev1.MarketType_MARKET_TYPE_SPOT
	bid, _ := bestBid(t, w, spot, "BTC-USDT")
	px := bid.Mul(decimal.RequireFromString("0.8")).Round(1)
	for _, k := range []faults.Kind{faults.AcceptThenError, faults.AcceptThenDrop, faults.DropBefore} {
		t.Run(string(k), func(t *testing.T) {
			cid := uniqueID("flt")
			if err := faults.Arm(nil, w.ts.URL, cid, k); err != nil {
				t.Fatal(err)
			}
			_, err := w.c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: w.acct, MarketType: spot, Symbol: "BTC-USDT",
				Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, TimeInForce: exchangev1.TimeInForce_TIME_IN_FORCE_GTC,
				Price: px.String(), Qty: "0.001", ClientOrderId: cid})
			d := sdk.DetailOf(err)
			if d.GetReason() != exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME {
				t.Fatalf("place: %v", err)
			}
			if k == faults.AcceptThenError && d.GetExchangeCode() != "50004" {
				t.Fatalf("raw code lost: %v", d)
			}
			got, err := w.c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: w.acct, MarketType: spot, Symbol: "BTC-USDT", ClientOrderId: cid})
			if k.Executes() {
				if err != nil || got.GetOrder().GetClientOrderId() != cid {
					t.Fatalf("executed order not found: %v %v", got, err)
				}
				if _, err := w.c.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: w.acct, MarketType: spot, Symbol: "BTC-USDT", OrderId: got.GetOrder().GetOrderId()}); err != nil {
					t.Fatal(err)
				}
			} else {
				wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND)
			}
		})
	}
}

// TestLostAnswersOnOtherCalls: algo orders, batch orders and transfers answer UNKNOWN_OUTCOME too.
func TestLostAnswersOnOtherCalls(t *testing.T) {
	w := shared(t)
	ctx := t.Context()
	spot := exchangev1.MarketType_MARKET_TYPE_SPOT
	bid, _ := bestBid(t, w, spot, "BTC-USDT")

	aid := uniqueID("fla")
	if err := faults.Arm(nil, w.ts.URL, aid, faults.AcceptThenDrop); err != nil {
		t.Fatal(err)
	}
	_, err := w.c.PlaceAlgoOrder(ctx, &exchangev1.PlaceAlgoOrderRequest{Account: w.acct, MarketType: spot, Symbol: "BTC-USDT",
		Side: exchangev1.Side_SIDE_SELL, Type: exchangev1.OrderType_ORDER_TYPE_STOP_MARKET,
		TriggerPrice: bid.Mul(decimal.RequireFromString("0.5")).Round(1).String(), Qty: "0.001", ClientAlgoId: aid})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME)
	algos, err := w.c.ListAlgoOrders(ctx, &exchangev1.ListAlgoOrdersRequest{Account: w.acct, MarketType: spot, Symbol: "BTC-USDT"})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, a := range algos.GetAlgoOrders() {
		if a.GetClientAlgoId() == aid {
			found = true
			if _, err := w.c.CancelAlgoOrder(ctx, &exchangev1.CancelAlgoOrderRequest{Account: w.acct, MarketType: spot, Symbol: "BTC-USDT", AlgoId: a.GetAlgoId()}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !found {
		t.Fatal("executed algo order not listed")
	}

	tid := uniqueID("flt")
	if err := faults.Arm(nil, w.ts.URL, tid, faults.AcceptThenError); err != nil {
		t.Fatal(err)
	}
	_, err = w.c.Transfer(ctx, &exchangev1.TransferRequest{Account: w.acct, Asset: "USDT", Amount: "1",
		From: exchangev1.WalletType_WALLET_TYPE_FUNDING, To: exchangev1.WalletType_WALLET_TYPE_TRADING, ClientId: tid})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME)
}

// TestRepeatedClientIDPlacesOnce: an order that filled (so OKX would accept its client id again) is returned when
// placed again with the same id and parameters; exactly one order exists on the venue. Other parameters with the
// same id are DUPLICATE_CLIENT_ORDER_ID.
func TestRepeatedClientIDPlacesOnce(t *testing.T) {
	w := shared(t)
	ctx := t.Context()
	spot := exchangev1.MarketType_MARKET_TYPE_SPOT
	cid := uniqueID("rep")
	req := &exchangev1.PlaceOrderRequest{Account: w.acct, MarketType: spot, Symbol: "BTC-USDT", Side: exchangev1.Side_SIDE_BUY,
		Type: exchangev1.OrderType_ORDER_TYPE_MARKET, Qty: "0.001", ClientOrderId: cid}
	first, err := w.c.PlaceOrder(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		o, err := w.c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: w.acct, MarketType: spot, Symbol: "BTC-USDT", ClientOrderId: cid})
		if err != nil {
			t.Fatal(err)
		}
		if o.GetOrder().GetStatus() == exchangev1.OrderStatus_ORDER_STATUS_FILLED {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("order never filled: %v", o.GetOrder())
		}
	}
	posts := w.hits.get("POST /api/v5/trade/order")
	again, err := w.c.PlaceOrder(ctx, req)
	if err != nil || again.GetOrder().GetOrderId() != first.GetOrder().GetOrderId() {
		t.Fatalf("placed again: %v %v, first %v", again, err, first)
	}
	if n := w.hits.get("POST /api/v5/trade/order") - posts; n != 0 {
		t.Fatalf("the repeated order was sent to OKX %d times", n)
	}
	open, err := w.v.OpenOrders(emulator.DemoAccount, "")
	if err != nil {
		t.Fatal(err)
	}
	closed, err := w.v.OrderHistory(emulator.DemoAccount, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, o := range append(open, closed...) {
		if o.ClientID == cid {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d orders with client id %s on the venue, want 1", n, cid)
	}
	other := proto.Clone(req).(*exchangev1.PlaceOrderRequest)
	other.Qty = "0.002"
	_, err = w.c.PlaceOrder(ctx, other)
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID)
}

// TestHistoryPagesThroughARange: orders and fills inside [start, end] come newest first, a page at a time, with
// next_cursor; reading until the cursor is empty returns every row exactly once and nothing outside the range.
func TestHistoryPagesThroughARange(t *testing.T) {
	w := shared(t)
	ctx := t.Context()
	spot := exchangev1.MarketType_MARKET_TYPE_SPOT
	before := w.v.Now() - 1
	ids := map[string]bool{}
	for range 7 {
		o, err := w.c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: w.acct, MarketType: spot, Symbol: "ETH-USDT", Side: exchangev1.Side_SIDE_BUY,
			Type: exchangev1.OrderType_ORDER_TYPE_MARKET, Qty: "0.01", ClientOrderId: uniqueID("pg")})
		if err != nil {
			t.Fatal(err)
		}
		ids[o.GetOrder().GetOrderId()] = true
	}
	// An order after the range that must not show up.
	var end int64
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		h, err := w.c.ListOrderHistory(ctx, &exchangev1.ListOrderHistoryRequest{Account: w.acct, MarketType: spot, Symbol: "ETH-USDT",
			Page: &exchangev1.HistoryPage{StartTime: before, Limit: 100}})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, o := range h.GetOrders() {
			if ids[o.GetOrderId()] {
				n++
				end = max(end, o.GetCreatedTime(), o.GetUpdatedTime()) // fills come at most at the last update
			}
		}
		if n == len(ids) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d orders in history", n, len(ids))
		}
	}
	for w.v.Now() <= end {
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := w.c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: w.acct, MarketType: spot, Symbol: "ETH-USDT", Side: exchangev1.Side_SIDE_SELL,
		Type: exchangev1.OrderType_ORDER_TYPE_MARKET, Qty: "0.01"}); err != nil {
		t.Fatal(err)
	}
	page := &exchangev1.HistoryPage{StartTime: before, EndTime: end, Limit: 3}
	seen := map[string]int{}
	for range 10 {
		h, err := w.c.ListOrderHistory(ctx, &exchangev1.ListOrderHistoryRequest{Account: w.acct, MarketType: spot, Symbol: "ETH-USDT", Page: page})
		if err != nil {
			t.Fatal(err)
		}
		for k, o := range h.GetOrders() {
			seen[o.GetOrderId()]++
			if k > 0 && o.GetCreatedTime() > h.GetOrders()[k-1].GetCreatedTime() {
				t.Fatalf("page not newest first: %v", h.GetOrders())
			}
		}
		if h.GetNextCursor() == "" {
			break
		}
		page = &exchangev1.HistoryPage{StartTime: before, EndTime: end, Limit: 3, Cursor: h.GetNextCursor()}
	}
	for id := range ids {
		if seen[id] != 1 {
			t.Fatalf("order %s seen %d times (all: %v)", id, seen[id], seen)
		}
	}
	if len(seen) != len(ids) {
		t.Fatalf("rows outside the range: %v", seen)
	}
	fillPage := &exchangev1.HistoryPage{StartTime: before, EndTime: end, Limit: 2}
	fillsSeen := map[string]int{}
	for range 20 {
		f, err := w.c.ListFills(ctx, &exchangev1.ListFillsRequest{Account: w.acct, MarketType: spot, Symbol: "ETH-USDT", Page: fillPage})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range f.GetFills() {
			fillsSeen[x.GetTradeId()]++
			if !ids[x.GetOrderId()] {
				t.Fatalf("fill of order %s outside the range", x.GetOrderId())
			}
		}
		if f.GetNextCursor() == "" {
			break
		}
		fillPage = &exchangev1.HistoryPage{StartTime: before, EndTime: end, Limit: 2, Cursor: f.GetNextCursor()}
	}
	for id, n := range fillsSeen {
		if n != 1 {
			t.Fatalf("fill %s seen %d times", id, n)
		}
	}
	if len(fillsSeen) < len(ids) {
		t.Fatalf("%d fills for %d filled orders", len(fillsSeen), len(ids))
	}
}

// TestLostCancelAllAskedAgain: cancel-all's batch cancel names each order, so a lost answer is asked once more and
// the orders the first request cancelled come back cancelled (read back, not assumed); lost twice, the outcome is
// UNKNOWN_OUTCOME, never EXCHANGE_UNAVAILABLE.
func TestLostCancelAllAskedAgain(t *testing.T) {
	w := shared(t)
	ctx := t.Context()
	spot := exchangev1.MarketType_MARKET_TYPE_SPOT
	const sym = "SOL-USDT"
	bid, _ := bestBid(t, w, spot, sym)
	rest := func() []string {
		t.Helper()
		var ids []string
		for _, f := range []string{"0.7", "0.71"} {
			o, err := w.c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: w.acct, MarketType: spot, Symbol: sym,
				Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, TimeInForce: exchangev1.TimeInForce_TIME_IN_FORCE_GTC,
				Price: bid.Mul(decimal.RequireFromString(f)).Round(2).String(), Qty: "1", ClientOrderId: uniqueID("cxa")})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, o.GetOrder().GetOrderId())
		}
		return ids
	}

	ids := rest()
	if err := faults.Arm(nil, w.ts.URL, ids[0], faults.AcceptThenDrop); err != nil {
		t.Fatal(err)
	}
	got, err := w.c.CancelAllOrders(ctx, &exchangev1.CancelAllOrdersRequest{Account: w.acct, MarketType: spot, Symbol: sym})
	if err != nil {
		t.Fatalf("cancel-all after one lost answer: %v", err)
	}
	if len(got.GetOrders()) != 2 {
		t.Fatalf("cancel-all reported %d orders, want 2: %v", len(got.GetOrders()), got.GetOrders())
	}
	for _, o := range got.GetOrders() {
		if o.GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_CANCELLED {
			t.Fatalf("order %s reported %s", o.GetOrderId(), o.GetStatus())
		}
	}

	ids = rest()
	for _, id := range ids { // one fault per request: both requests lose their answer
		if err := faults.Arm(nil, w.ts.URL, id, faults.AcceptThenDrop); err != nil {
			t.Fatal(err)
		}
	}
	_, err = w.c.CancelAllOrders(ctx, &exchangev1.CancelAllOrdersRequest{Account: w.acct, MarketType: spot, Symbol: sym})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME)
	open, err := w.c.ListOpenOrders(ctx, &exchangev1.ListOpenOrdersRequest{Account: w.acct, MarketType: spot, Symbol: sym})
	if err != nil || len(open.GetOrders()) != 0 {
		t.Fatalf("open orders after the lost cancel-all: %v %v (the exchange cancelled them)", open.GetOrders(), err)
	}
}
