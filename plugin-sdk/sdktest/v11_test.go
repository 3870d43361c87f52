package sdktest

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/exhub/exhub/plugin-sdk/faults"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func TestIdempotencyComparesParameters(t *testing.T) {
	_, c, _ := manual(t)
	ctx := context.Background()
	a := acct("idem")
	req := limit(a, spot, "BTCUSDT", buy, "50000", "0.01", 0)
	req.ClientOrderId = "same-1"
	first := must(c.PlaceOrder(ctx, req)).Order
	again := limit(a, spot, "BTCUSDT", buy, "50000.0", "0.010", exchangev1.TimeInForce_TIME_IN_FORCE_GTC)
	again.ClientOrderId = "same-1"
	if o := must(c.PlaceOrder(ctx, again)).Order; o.OrderId != first.OrderId {
		t.Fatalf("the same parameters created order %s beside %s", o.OrderId, first.OrderId)
	}
	other := limit(a, spot, "BTCUSDT", buy, "49000", "0.01", 0)
	other.ClientOrderId = "same-1"
	_, err := c.PlaceOrder(ctx, other)
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID)
	bad := limit(a, spot, "BTCUSDT", buy, "49000", "0.01", 0)
	bad.ClientOrderId = "has space"
	_, err = c.PlaceOrder(ctx, bad)
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)
	open := must(c.ListOpenOrders(ctx, &exchangev1.ListOpenOrdersRequest{Account: a})).Orders
	if len(open) != 1 {
		t.Fatalf("%d open orders, want 1", len(open))
	}
}

func TestBatchOrders(t *testing.T) {
	_, c, _ := manual(t)
	ctx := context.Background()
	a := acct("batch")
	good := limit(nil, spot, "BTCUSDT", buy, "50000", "0.01", 0)
	offGrid := limit(nil, spot, "BTCUSDT", buy, "50000.001", "0.01", 0)
	r := must(c.BatchPlaceOrders(ctx, &exchangev1.BatchPlaceOrdersRequest{Account: a, Orders: []*exchangev1.PlaceOrderRequest{good, offGrid}}))
	if len(r.Results) != 2 || r.Results[0].Order == nil || r.Results[1].Error.GetReason() != exchangev1.ErrorReason_ERROR_REASON_PRECISION {
		t.Fatalf("batch place: %v", r)
	}
	cr := must(c.BatchCancelOrders(ctx, &exchangev1.BatchCancelOrdersRequest{Account: a, Orders: []*exchangev1.CancelOrderRequest{
		{OrderId: r.Results[0].Order.OrderId}, {OrderId: "42"}}}))
	if cr.Results[0].Order.GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_CANCELLED ||
		cr.Results[1].Error.GetReason() != exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND {
		t.Fatalf("batch cancel: %v", cr)
	}
	many := make([]*exchangev1.PlaceOrderRequest, batchMax+1)
	for i := range many {
		many[i] = good
	}
	_, err := c.BatchPlaceOrders(ctx, &exchangev1.BatchPlaceOrdersRequest{Account: a, Orders: many})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)
	foreign := limit(acct("other"), spot, "BTCUSDT", buy, "50000", "0.01", 0)
	_, err = c.BatchPlaceOrders(ctx, &exchangev1.BatchPlaceOrdersRequest{Account: a, Orders: []*exchangev1.PlaceOrderRequest{foreign}})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)
}

func TestCancelAllAfterAndGTD(t *testing.T) {
	s, c, clock := manual(t)
	ctx := context.Background()
	a := acct("dms")
	btc := must(c.PlaceOrder(ctx, limit(a, spot, "BTCUSDT", buy, "50000", "0.01", 0))).Order
	eth := must(c.PlaceOrder(ctx, limit(a, spot, "ETHUSDT", buy, "1000", "0.1", 0))).Order
	gtd := limit(a, swap, "BTCUSDT", buy, "50000", "0.01", exchangev1.TimeInForce_TIME_IN_FORCE_GTD)
	_, err := c.PlaceOrder(ctx, gtd)
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT) // no expire_time
	gtd.ExpireTime = clock.now().Add(2 * time.Second).UnixMilli()
	g := must(c.PlaceOrder(ctx, gtd)).Order
	r := must(c.CancelAllAfter(ctx, &exchangev1.CancelAllAfterRequest{Account: a, MarketType: spot, Symbol: "BTCUSDT", TimeoutMs: 1000}))
	if r.TriggerTime != clock.now().UnixMilli()+1000 {
		t.Fatalf("trigger time %d", r.TriggerTime)
	}
	step(s, clock, 4) // 1 s
	status := func(id string) exchangev1.OrderStatus {
		return must(c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: a, OrderId: id})).Order.Status
	}
	if status(btc.OrderId) != exchangev1.OrderStatus_ORDER_STATUS_CANCELLED || status(eth.OrderId) != exchangev1.OrderStatus_ORDER_STATUS_NEW {
		t.Fatalf("after the switch fired: BTC %v ETH %v", status(btc.OrderId), status(eth.OrderId))
	}
	if status(g.OrderId) != exchangev1.OrderStatus_ORDER_STATUS_NEW {
		t.Fatalf("GTD expired early")
	}
	step(s, clock, 4)
	if status(g.OrderId) != exchangev1.OrderStatus_ORDER_STATUS_EXPIRED {
		t.Fatalf("GTD order is %v after its expire time", status(g.OrderId))
	}
	if r := must(c.CancelAllAfter(ctx, &exchangev1.CancelAllAfterRequest{Account: a, MarketType: spot, TimeoutMs: 0})); r.TriggerTime != 0 {
		t.Fatalf("disarm: %v", r)
	}
}

func TestFaultsLoseAnswers(t *testing.T) {
	s, c, _ := manual(t)
	ctx := context.Background()
	a := acct("faulty")
	for _, k := range []faults.Kind{faults.AcceptThenError, faults.AcceptThenDrop, faults.DropBefore} {
		cid := "f-" + string(k)
		if err := s.Faults().Arm(cid, k); err != nil {
			t.Fatal(err)
		}
		req := limit(a, spot, "BTCUSDT", buy, "50000", "0.01", 0)
		req.ClientOrderId = cid
		_, err := c.PlaceOrder(ctx, req)
		wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME)
		_, err = c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: a, ClientOrderId: cid})
		if k.Executes() && err != nil {
			t.Fatalf("%s: the order should exist: %v", k, err)
		}
		if !k.Executes() {
			wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND)
		}
	}
}

func TestFaultListenSetting(t *testing.T) {
	s, c, _ := manual(t)
	ctx := context.Background()
	_, err := c.Configure(ctx, &exchangev1.ConfigureRequest{Settings: map[string]string{"fault_listen": "0.0.0.0:0"}})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)
	must(c.Configure(ctx, &exchangev1.ConfigureRequest{Settings: map[string]string{"fault_listen": "127.0.0.1:0"}}))
	addr := s.FaultAddr()
	if addr == "" {
		t.Fatal("no fault address")
	}
	if err := faults.Arm(http.DefaultClient, "http://"+addr, "over-http", faults.DropBefore); err != nil {
		t.Fatal(err)
	}
	req := limit(acct("h"), spot, "BTCUSDT", buy, "50000", "0.01", 0)
	req.ClientOrderId = "over-http"
	_, err = c.PlaceOrder(ctx, req)
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME)
	must(c.Configure(ctx, &exchangev1.ConfigureRequest{Settings: map[string]string{"fault_listen": ""}}))
	if s.FaultAddr() != "" {
		t.Fatal("fault endpoint still served")
	}
}

func TestCheckCredentialsAndReadOnlyKeys(t *testing.T) {
	_, c, _ := manual(t)
	ctx := context.Background()
	r := must(c.CheckCredentials(ctx, &exchangev1.CheckCredentialsRequest{Account: acct("rw")}))
	if !r.CanRead || !r.CanTrade || r.ExchangeAccountId != "rw" || r.PositionMode != exchangev1.PositionMode_POSITION_MODE_ONE_WAY {
		t.Fatalf("rw: %v", r)
	}
	ro := acct("readonly-1")
	r = must(c.CheckCredentials(ctx, &exchangev1.CheckCredentialsRequest{Account: ro}))
	if !r.CanRead || r.CanTrade || r.CanWithdraw {
		t.Fatalf("readonly: %v", r)
	}
	_, err := c.PlaceOrder(ctx, limit(ro, spot, "BTCUSDT", buy, "50000", "0.01", 0))
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED)
	_, err = c.CheckCredentials(ctx, &exchangev1.CheckCredentialsRequest{})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED)
}

func TestHistoryCursorSurvivesNewRows(t *testing.T) {
	_, c, _ := manual(t)
	ctx := context.Background()
	a := acct("pager")
	var ids []string
	for i := range 5 {
		o := must(c.PlaceOrder(ctx, limit(a, spot, "BTCUSDT", buy, "5000"+string(rune('0'+i)), "0.01", 0))).Order
		ids = append(ids, o.OrderId)
	}
	p1 := must(c.ListOrderHistory(ctx, &exchangev1.ListOrderHistoryRequest{Account: a, Page: &exchangev1.HistoryPage{Limit: 2}}))
	if len(p1.Orders) != 2 || p1.Orders[0].OrderId != ids[4] || p1.NextCursor == "" {
		t.Fatalf("page 1: %v", p1)
	}
	must(c.PlaceOrder(ctx, limit(a, spot, "BTCUSDT", buy, "49000", "0.01", 0))) // a newer row arrives meanwhile
	var got []string
	cursor := p1.NextCursor
	for cursor != "" {
		p := must(c.ListOrderHistory(ctx, &exchangev1.ListOrderHistoryRequest{Account: a, Page: &exchangev1.HistoryPage{Limit: 2, Cursor: cursor}}))
		for _, o := range p.Orders {
			got = append(got, o.OrderId)
		}
		cursor = p.NextCursor
	}
	if len(got) != 3 || got[0] != ids[2] || got[2] != ids[0] {
		t.Fatalf("older pages %v, want %v %v %v", got, ids[2], ids[1], ids[0])
	}
}

func TestMarginModeAndClosePosition(t *testing.T) {
	_, c, _ := manual(t)
	ctx := context.Background()
	a := acct("mm")
	req := market(a, swap, "BTCUSDT", buy, "0.01")
	req.MarginMode = exchangev1.MarginMode_MARGIN_MODE_ISOLATED
	must(c.PlaceOrder(ctx, req))
	if l := must(c.GetLeverage(ctx, &exchangev1.GetLeverageRequest{Account: a, Symbol: "BTCUSDT"})); l.MarginMode != exchangev1.MarginMode_MARGIN_MODE_ISOLATED {
		t.Fatalf("margin mode %v", l.MarginMode)
	}
	cross := market(a, swap, "BTCUSDT", buy, "0.01")
	cross.MarginMode = exchangev1.MarginMode_MARGIN_MODE_CROSS
	_, err := c.PlaceOrder(ctx, cross)
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED)
	_, err = c.SetLeverage(ctx, &exchangev1.SetLeverageRequest{Account: a, Symbol: "BTCUSDT", Leverage: "5", PositionSide: exchangev1.PositionSide_POSITION_SIDE_LONG})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH)
	cl := must(c.ClosePosition(ctx, &exchangev1.ClosePositionRequest{Account: a, Symbol: "BTCUSDT", ClientOrderId: "close-1",
		MarketType: swap, MarginMode: exchangev1.MarginMode_MARGIN_MODE_ISOLATED})).Order
	if cl.ClientOrderId != "close-1" || cl.Status != exchangev1.OrderStatus_ORDER_STATUS_FILLED {
		t.Fatalf("close order: %v", cl)
	}
	again := must(c.ClosePosition(ctx, &exchangev1.ClosePositionRequest{Account: a, Symbol: "BTCUSDT", ClientOrderId: "close-1"})).Order
	if again.OrderId != cl.OrderId {
		t.Fatalf("a repeated close created order %s", again.OrderId)
	}
	_, err = c.ClosePosition(ctx, &exchangev1.ClosePositionRequest{Account: a, Symbol: "BTCUSDT", MarketType: spot})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)
}
