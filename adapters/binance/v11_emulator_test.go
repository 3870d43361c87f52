package binance

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/binance/emulator"
	"github.com/exhub/exhub/adapters/venue"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func TestDescribe11(t *testing.T) {
	d, err := New(Options{}).Describe(context.Background(), &exchangev1.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	tr := d.Capabilities.Trading
	if d.SdkVersion != "1.2" || !tr.CheckCredentials || tr.ClientOrderIdFormat.GetMaxLength() != 36 || len(tr.Markets) != 2 {
		t.Fatalf("describe: %v", d)
	}
	for _, m := range tr.Markets {
		switch m.MarketType {
		case exchangev1.MarketType_MARKET_TYPE_SPOT:
			if m.Amend || len(m.AlgoOrderTypes) != 0 || m.BatchPlaceMax != 0 || m.CancelAllAfter {
				t.Fatalf("spot: %v", m)
			}
		case exchangev1.MarketType_MARKET_TYPE_SWAP:
			if !m.Amend || m.BatchPlaceMax != 5 || m.BatchCancelMax != 10 || !m.CancelAllAfter || len(m.AlgoOrderTypes) == 0 {
				t.Fatalf("swap: %v", m)
			}
		}
	}
}

// TestEmulatorContract11: CheckCredentials, batch place and cancel, cancel-all-after and good-till-date.
func TestEmulatorContract11(t *testing.T) {
	s, v, e := manualEmuCfg(t, emulator.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	acct := demoAccount()
	swap := exchangev1.MarketType_MARKET_TYPE_SWAP

	cc, err := s.CheckCredentials(ctx, &exchangev1.CheckCredentialsRequest{Account: acct})
	if err != nil || !cc.CanRead || !cc.CanTrade || cc.CanWithdraw || cc.PositionMode != exchangev1.PositionMode_POSITION_MODE_ONE_WAY {
		t.Fatalf("demo key: %v %v", err, cc)
	}
	p := emulator.DefaultPermissions
	p.EnableWithdrawals, p.IPRestrict = true, true
	e.SetPermissions(emulator.DemoAPIKey, p)
	if cc, err := s.CheckCredentials(ctx, &exchangev1.CheckCredentialsRequest{Account: acct}); err != nil || !cc.CanWithdraw || !cc.IpRestricted {
		t.Fatalf("withdraw-enabled key: %v %v", err, cc)
	}

	b := buildBook(t, v, "BTC/USDT:PERP")
	if err := v.SetMarkPrice("BTC/USDT:PERP", b.ref); err != nil {
		t.Fatal(err)
	}
	rest := b.bid.Sub(b.ref.Mul(decimal.RequireFromString("0.02"))).Round(0).String()
	lim := func(cid, qty string) *exchangev1.PlaceOrderRequest {
		return &exchangev1.PlaceOrderRequest{MarketType: swap, Symbol: "BTCUSDT", Side: exchangev1.Side_SIDE_BUY,
			Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: rest, Qty: qty, ClientOrderId: cid}
	}
	bp, err := s.BatchPlaceOrders(ctx, &exchangev1.BatchPlaceOrdersRequest{Account: acct, Orders: []*exchangev1.PlaceOrderRequest{
		lim("b-1", "0.01"), lim("b-2", "0.0000001"), lim("b-3", "0.02")}})
	if err != nil || len(bp.Results) != 3 || bp.Results[0].Order == nil || bp.Results[1].Error == nil || bp.Results[2].Order.GetClientOrderId() != "b-3" {
		t.Fatalf("batch place: %v %v", err, bp)
	}
	// A repeated batch never places a second order: the same parameters answer with the existing order, other
	// parameters with DUPLICATE_CLIENT_ORDER_ID for that item; a new id in the same batch is placed.
	again, err := s.BatchPlaceOrders(ctx, &exchangev1.BatchPlaceOrdersRequest{Account: acct, Orders: []*exchangev1.PlaceOrderRequest{
		lim("b-1", "0.01"), lim("b-3", "0.03"), lim("b-4", "0.01"), lim("b-4", "0.01")}})
	if err != nil || len(again.Results) != 4 || again.Results[0].Order.GetOrderId() != bp.Results[0].Order.GetOrderId() ||
		again.Results[1].Error.GetReason() != exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID ||
		again.Results[2].Order.GetClientOrderId() != "b-4" ||
		again.Results[3].Error.GetReason() != exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID {
		t.Fatalf("repeated batch: %v %v", err, again)
	}
	if open, err := s.ListOpenOrders(ctx, &exchangev1.ListOpenOrdersRequest{Account: acct, MarketType: swap, Symbol: "BTCUSDT"}); err != nil || len(open.Orders) != 3 {
		t.Fatalf("open orders after the repeated batch (want b-1, b-3, b-4): %v %v", err, open)
	}
	spot := lim("s-1", "0.01")
	spot.MarketType = exchangev1.MarketType_MARKET_TYPE_SPOT
	if _, err := s.BatchPlaceOrders(ctx, &exchangev1.BatchPlaceOrdersRequest{Account: acct, Orders: []*exchangev1.PlaceOrderRequest{spot}}); reason(err) != exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED {
		t.Fatalf("spot batch: %v", err)
	}
	bc, err := s.BatchCancelOrders(ctx, &exchangev1.BatchCancelOrdersRequest{Account: acct, Orders: []*exchangev1.CancelOrderRequest{
		{MarketType: swap, Symbol: "BTCUSDT", ClientOrderId: "b-1"}, {MarketType: swap, Symbol: "BTCUSDT", ClientOrderId: "b-3"}}})
	if err != nil || len(bc.Results) != 2 || bc.Results[0].Order.GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_CANCELLED {
		t.Fatalf("batch cancel: %v %v", err, bc)
	}

	// Good till date: rests until its expiry.
	gtd := lim("gtd-1", "0.01")
	gtd.Account = acct
	gtd.TimeInForce, gtd.ExpireTime = exchangev1.TimeInForce_TIME_IN_FORCE_GTD, time.Now().Add(time.Hour).UnixMilli()
	g, err := s.PlaceOrder(ctx, gtd)
	if err != nil || g.Order.Status != exchangev1.OrderStatus_ORDER_STATUS_NEW || g.Order.TimeInForce != exchangev1.TimeInForce_TIME_IN_FORCE_GTD {
		t.Fatalf("GTD: %v %v", err, g)
	}
	if o, err := s.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: acct, MarketType: swap, Symbol: "BTCUSDT", ClientOrderId: "gtd-1"}); err != nil ||
		o.Order.TimeInForce != exchangev1.TimeInForce_TIME_IN_FORCE_GTD {
		t.Fatalf("GTD order read back: %v %v", err, o)
	}
	spotGTD := lim("gtd-2", "0.01")
	spotGTD.Account = acct
	spotGTD.MarketType, spotGTD.TimeInForce, spotGTD.ExpireTime = exchangev1.MarketType_MARKET_TYPE_SPOT, exchangev1.TimeInForce_TIME_IN_FORCE_GTD, gtd.ExpireTime
	if _, err := s.PlaceOrder(ctx, spotGTD); reason(err) != exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED {
		t.Fatalf("spot GTD: %v", err)
	}

	// Cancel-all-after: once the countdown runs out every open order of the symbol is cancelled.
	ca, err := s.CancelAllAfter(ctx, &exchangev1.CancelAllAfterRequest{Account: acct, MarketType: swap, Symbol: "BTCUSDT", TimeoutMs: 300})
	if err != nil || ca.TriggerTime == 0 {
		t.Fatalf("cancel-all-after: %v %v", err, ca)
	}
	for {
		open, err := s.ListOpenOrders(ctx, &exchangev1.ListOpenOrdersRequest{Account: acct, MarketType: swap, Symbol: "BTCUSDT"})
		if err != nil {
			t.Fatal(err)
		}
		if len(open.Orders) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the countdown never cancelled %d orders", len(open.Orders))
		case <-time.After(50 * time.Millisecond):
		}
	}
	if o, err := s.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: acct, MarketType: swap, Symbol: "BTCUSDT", ClientOrderId: "gtd-1"}); err != nil ||
		o.Order.Status != exchangev1.OrderStatus_ORDER_STATUS_CANCELLED {
		t.Fatalf("GTD order after the countdown: %v %v", err, o)
	}
}

// TestEmulatorGTDExpires: a good-till-date order rests until its expiry on the emulator's clock, then reads back
// EXPIRED (still TIME_IN_FORCE_GTD). The clock is moved by the test; nothing sleeps.
func TestEmulatorGTDExpires(t *testing.T) {
	clock := venue.NewManualClock(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	s, v, _ := manualEmuVenue(t, venue.Config{Profile: "binance", Seed: 3, Clock: clock}, emulator.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	acct := demoAccount()
	swap := exchangev1.MarketType_MARKET_TYPE_SWAP
	b := buildBook(t, v, "BTC/USDT:PERP")
	if err := v.SetMarkPrice("BTC/USDT:PERP", b.ref); err != nil {
		t.Fatal(err)
	}
	expire := clock.Now().Add(15 * time.Minute)
	g, err := s.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: acct, MarketType: swap, Symbol: "BTCUSDT", Side: exchangev1.Side_SIDE_BUY,
		Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: b.bid.Sub(b.ref.Mul(decimal.RequireFromString("0.02"))).Round(0).String(),
		Qty: "0.01", ClientOrderId: "gtd-x", TimeInForce: exchangev1.TimeInForce_TIME_IN_FORCE_GTD, ExpireTime: expire.UnixMilli()})
	if err != nil || g.Order.Status != exchangev1.OrderStatus_ORDER_STATUS_NEW {
		t.Fatalf("GTD: %v %v", err, g)
	}
	get := func() *exchangev1.Order {
		t.Helper()
		o, err := s.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: acct, MarketType: swap, Symbol: "BTCUSDT", ClientOrderId: "gtd-x"})
		if err != nil {
			t.Fatal(err)
		}
		return o.Order
	}
	clock.Advance(14 * time.Minute) // before the expiry: still resting
	if o := get(); o.Status != exchangev1.OrderStatus_ORDER_STATUS_NEW || o.TimeInForce != exchangev1.TimeInForce_TIME_IN_FORCE_GTD {
		t.Fatalf("before expiry: %v", o)
	}
	clock.Advance(2 * time.Minute)
	for {
		o := get()
		if o.Status == exchangev1.OrderStatus_ORDER_STATUS_EXPIRED {
			if o.TimeInForce != exchangev1.TimeInForce_TIME_IN_FORCE_GTD {
				t.Fatalf("expired GTD order: %v", o)
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the GTD order never expired: %v", o)
		case <-time.After(20 * time.Millisecond): // the emulator's timer runs on its own goroutine
		}
	}
}
