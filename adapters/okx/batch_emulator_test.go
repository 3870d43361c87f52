package okx_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

var (
	deadmanOnce sync.Once
	deadmanErr  error
)

// deadman is the account of deadmanKey, given 1,000 USDT in its trading account once per test binary.
func deadman(t *testing.T, w *world) *exchangev1.AccountRef {
	t.Helper()
	acct := &exchangev1.AccountRef{AccountId: "dm", ApiKey: deadmanKey, ApiSecret: "dm-secret", Passphrase: "dm-pass"}
	deadmanOnce.Do(func() {
		ctx := context.Background()
		if _, deadmanErr = w.v.Deposit(ctx, deadmanAccount, "USDT", decimal.Zero); deadmanErr != nil {
			return
		}
		_, deadmanErr = w.c.Transfer(ctx, &exchangev1.TransferRequest{Account: acct, Asset: "USDT", Amount: "1000",
			From: exchangev1.WalletType_WALLET_TYPE_FUNDING, To: exchangev1.WalletType_WALLET_TYPE_TRADING})
	})
	if deadmanErr != nil {
		t.Fatal(deadmanErr)
	}
	return acct
}

func uniq(prefix string) string { return prefix + strconv.FormatInt(time.Now().UnixNano()%1e12, 10) }

// TestBatchPlaceAndCancel: one batch-orders call places the good orders and reports each bad one in its place;
// a client id used before returns the existing order without sending it again; cancel-batch-orders cancels the
// placed orders and reports an unknown one.
func TestBatchPlaceAndCancel(t *testing.T) {
	w := shared(t)
	ctx := t.Context()
	spot := exchangev1.MarketType_MARKET_TYPE_SPOT
	bid, _ := bestBid(t, w, spot, "BTC-USDT")
	px := bid.Mul(decimal.RequireFromString("0.8")).Round(1)
	limit := func(cid, qty string) *exchangev1.PlaceOrderRequest {
		return &exchangev1.PlaceOrderRequest{MarketType: spot, Symbol: "BTC-USDT", Side: exchangev1.Side_SIDE_BUY,
			Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, TimeInForce: exchangev1.TimeInForce_TIME_IN_FORCE_GTC, Price: px.String(), Qty: qty, ClientOrderId: cid}
	}
	first := uniq("bA")
	pre, err := w.c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: w.acct, MarketType: spot, Symbol: "BTC-USDT", Side: exchangev1.Side_SIDE_BUY,
		Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, TimeInForce: exchangev1.TimeInForce_TIME_IN_FORCE_GTC, Price: px.String(), Qty: "0.001", ClientOrderId: first})
	if err != nil {
		t.Fatal(err)
	}
	before := w.hits.get("/api/v5/trade/batch-orders")
	second, third := uniq("bB"), uniq("bC")
	r, err := w.c.BatchPlaceOrders(ctx, &exchangev1.BatchPlaceOrdersRequest{Account: w.acct, Orders: []*exchangev1.PlaceOrderRequest{
		limit(first, "0.001"),      // placed before: returned, not sent
		limit(second, "0.001"),     // placed
		limit(third, "0.00000001"), // below the lot: refused by the adapter
		limit(first, "0.002"),      // the first id with another size: duplicate
		limit("", "0.001"),         // placed, no client id
		limit("", "0.00001"),       // below the minimum value: refused by OKX (51020)
	}})
	if err != nil {
		t.Fatal(err)
	}
	res := r.GetResults()
	if len(res) != 6 {
		t.Fatalf("%d results", len(res))
	}
	if res[0].GetOrder().GetOrderId() != pre.GetOrder().GetOrderId() {
		t.Errorf("result 0: %v, want the order placed before", res[0])
	}
	if res[1].GetOrder().GetClientOrderId() != second || res[1].GetOrder().GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_NEW {
		t.Errorf("result 1: %v", res[1])
	}
	if res[2].GetError().GetReason() != exchangev1.ErrorReason_ERROR_REASON_PRECISION {
		t.Errorf("result 2: %v", res[2])
	}
	if res[3].GetError().GetReason() != exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID {
		t.Errorf("result 3: %v", res[3])
	}
	if res[4].GetOrder().GetOrderId() == "" || res[4].GetError() != nil {
		t.Errorf("result 4: %v", res[4])
	}
	if res[5].GetError().GetExchangeCode() != "51020" {
		t.Errorf("result 5: %v", res[5])
	}
	if got := w.hits.get("/api/v5/trade/batch-orders") - before; got != 1 {
		t.Errorf("%d batch-orders calls", got)
	}

	c, err := w.c.BatchCancelOrders(ctx, &exchangev1.BatchCancelOrdersRequest{Account: w.acct, Orders: []*exchangev1.CancelOrderRequest{
		{MarketType: spot, Symbol: "BTC-USDT", OrderId: pre.GetOrder().GetOrderId()},
		{MarketType: spot, Symbol: "BTC-USDT", ClientOrderId: second},
		{MarketType: spot, Symbol: "BTC-USDT", OrderId: res[4].GetOrder().GetOrderId()},
		{MarketType: spot, Symbol: "BTC-USDT", OrderId: "12345678901"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	cr := c.GetResults()
	if len(cr) != 4 {
		t.Fatalf("%d cancel results", len(cr))
	}
	for k := range 3 {
		if cr[k].GetOrder().GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_CANCELLED {
			t.Errorf("cancel result %d: %v", k, cr[k])
		}
	}
	if cr[3].GetError() == nil || cr[3].GetOrder() != nil {
		t.Errorf("cancel of an unknown order: %v", cr[3])
	}

	_, err = w.c.BatchPlaceOrders(ctx, &exchangev1.BatchPlaceOrdersRequest{Account: w.acct, Orders: make([]*exchangev1.PlaceOrderRequest, 21)})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)
}

// TestCancelAllAfter: an armed switch cancels the account's pending orders once its countdown runs out (the
// emulator of this test takes countdowns from 1 s); re-arming moves the deadline, 0 disarms, and OKX's 120 s
// maximum is refused.
func TestCancelAllAfter(t *testing.T) {
	w := shared(t)
	ctx := t.Context()
	acct := deadman(t, w)
	spot := exchangev1.MarketType_MARKET_TYPE_SPOT
	bid, _ := bestBid(t, w, spot, "BTC-USDT")
	px := bid.Mul(decimal.RequireFromString("0.8")).Round(1)

	off, err := w.c.CancelAllAfter(ctx, &exchangev1.CancelAllAfterRequest{Account: acct, TimeoutMs: 0})
	if err != nil || off.GetTriggerTime() != 0 {
		t.Fatalf("disarm: %v %v", off, err)
	}
	_, err = w.c.CancelAllAfter(ctx, &exchangev1.CancelAllAfterRequest{Account: acct, TimeoutMs: 121_000})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)
	_, err = w.c.CancelAllAfter(ctx, &exchangev1.CancelAllAfterRequest{Account: acct, Symbol: "BTC-USDT", TimeoutMs: 60_000})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED)

	o, err := w.c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: acct, MarketType: spot, Symbol: "BTC-USDT", Side: exchangev1.Side_SIDE_BUY,
		Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, TimeInForce: exchangev1.TimeInForce_TIME_IN_FORCE_GTC, Price: px.String(), Qty: "0.001"})
	if err != nil {
		t.Fatal(err)
	}
	long, err := w.c.CancelAllAfter(ctx, &exchangev1.CancelAllAfterRequest{Account: acct, TimeoutMs: 120_000})
	if err != nil {
		t.Fatal(err)
	}
	armed, err := w.c.CancelAllAfter(ctx, &exchangev1.CancelAllAfterRequest{Account: acct, TimeoutMs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if armed.GetTriggerTime() <= 0 || armed.GetTriggerTime() >= long.GetTriggerTime() {
		t.Fatalf("re-armed trigger time %d, first %d", armed.GetTriggerTime(), long.GetTriggerTime())
	}
	deadline := time.Now().Add(30 * time.Second) // generous: the countdown is 1 s of venue time
	for {
		g, err := w.c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: acct, MarketType: spot, Symbol: "BTC-USDT", OrderId: o.GetOrder().GetOrderId()})
		if err != nil {
			t.Fatal(err)
		}
		if g.GetOrder().GetStatus() == exchangev1.OrderStatus_ORDER_STATUS_CANCELLED {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("order still %v after the switch ran out", g.GetOrder().GetStatus())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAccountStreamAlgoOrders: the private orders-algo channel (instType ANY) carries algo orders to the account
// stream: a placed stop is WAITING, then CANCELLED once cancelled.
func TestAccountStreamAlgoOrders(t *testing.T) {
	w := shared(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	acct := deadman(t, w)
	st, err := w.c.StreamAccount(ctx, &exchangev1.StreamAccountRequest{Account: acct})
	if err != nil {
		t.Fatal(err)
	}
	first, err := st.Recv()
	if err != nil || first.GetSnapshot() == nil {
		t.Fatalf("first event %v %v, want a snapshot", first, err)
	}
	spot := exchangev1.MarketType_MARKET_TYPE_SPOT
	_, ask := bestBid(t, w, spot, "BTC-USDT")
	trig := ask.Mul(decimal.RequireFromString("1.5")).Round(1)
	g, err := w.c.PlaceAlgoOrder(ctx, &exchangev1.PlaceAlgoOrderRequest{Account: acct, MarketType: spot, Symbol: "BTC-USDT",
		Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_STOP_MARKET, TriggerPrice: trig.String(), Qty: "0.0001"})
	if err != nil {
		t.Fatal(err)
	}
	id := g.GetAlgoOrder().GetAlgoId()
	want := exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_WAITING
	for {
		ev, err := st.Recv() // bounded by ctx
		if err != nil {
			t.Fatalf("waiting for algo order %s %v: %v", id, want, err)
		}
		a := ev.GetAlgoOrder()
		if a.GetAlgoId() != id || a.GetStatus() != want {
			continue
		}
		if want == exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_CANCELLED {
			return
		}
		if _, err := w.c.CancelAlgoOrder(ctx, &exchangev1.CancelAlgoOrderRequest{Account: acct, MarketType: spot, Symbol: "BTC-USDT", AlgoId: id}); err != nil {
			t.Fatal(err)
		}
		want = exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_CANCELLED
	}
}
