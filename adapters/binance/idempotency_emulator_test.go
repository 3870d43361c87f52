package binance

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"google.golang.org/protobuf/proto"

	"github.com/exhub/exhub/adapters/venue"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// ordersWithClientID counts the venue orders (open and ended) of the demo account carrying a client id.
func ordersWithClientID(t *testing.T, v *venue.Venue, id, cid string) int {
	t.Helper()
	n := 0
	hist, err := v.OrderHistory("binance-demo", id, 0)
	if err != nil {
		t.Fatal(err)
	}
	open, err := v.OpenOrders("binance-demo", id)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range append(hist, open...) {
		if o.ClientID == cid {
			n++
		}
	}
	return n
}

// TestEmulatorClientIDAfterFill: Binance refuses a repeated client order id only while its order is open. A retry
// of a FILLED order must answer that order, not trade again; the same id with other parameters is refused.
func TestEmulatorClientIDAfterFill(t *testing.T) {
	s, v := manualEmu(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	acct := demoAccount()
	for _, c := range []struct {
		mt exchangev1.MarketType
		id string
	}{{exchangev1.MarketType_MARKET_TYPE_SPOT, "BTC/USDT"}, {exchangev1.MarketType_MARKET_TYPE_SWAP, "BTC/USDT:PERP"}} {
		b := buildBook(t, v, c.id)
		if c.mt == exchangev1.MarketType_MARKET_TYPE_SWAP {
			if err := v.SetMarkPrice(c.id, b.ref); err != nil {
				t.Fatal(err)
			}
		}
		cid := "idem-" + c.mt.String()[12:]
		req := &exchangev1.PlaceOrderRequest{Account: acct, MarketType: c.mt, Symbol: "BTCUSDT", Side: exchangev1.Side_SIDE_BUY,
			Type: exchangev1.OrderType_ORDER_TYPE_MARKET, Qty: "0.01", ClientOrderId: cid}
		first, err := s.PlaceOrder(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if first.Order.Status != exchangev1.OrderStatus_ORDER_STATUS_FILLED {
			t.Fatalf("%v: first order %+v, want FILLED", c.mt, first.Order)
		}
		again, err := s.PlaceOrder(ctx, req)
		if err != nil || again.Order.OrderId != first.Order.OrderId {
			t.Fatalf("%v: retry after the fill: %v %+v, want order %s", c.mt, err, again, first.Order.OrderId)
		}
		if n := ordersWithClientID(t, v, c.id, cid); n != 1 {
			t.Fatalf("%v: %d orders on the venue with client id %s, want exactly 1", c.mt, n, cid)
		}
		other := proto.Clone(req).(*exchangev1.PlaceOrderRequest)
		other.Qty = "0.02"
		if _, err := s.PlaceOrder(ctx, other); reason(err) != exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID {
			t.Fatalf("%v: same id, other quantity: %v, want DUPLICATE_CLIENT_ORDER_ID", c.mt, err)
		}
		if n := ordersWithClientID(t, v, c.id, cid); n != 1 {
			t.Fatalf("%v: %d orders with client id %s after a refused reuse", c.mt, n, cid)
		}
	}

	// ClosePosition with a client id: the retry answers the closing order and opens nothing.
	swap := exchangev1.MarketType_MARKET_TYPE_SWAP
	cl := &exchangev1.ClosePositionRequest{Account: acct, Symbol: "BTCUSDT", ClientOrderId: "idem-close", MarketType: swap}
	closed, err := s.ClosePosition(ctx, cl)
	if err != nil || closed.Order.ClientOrderId != "idem-close" {
		t.Fatalf("close: %v %+v", err, closed)
	}
	again, err := s.ClosePosition(ctx, cl)
	if err != nil || again.Order.OrderId != closed.Order.OrderId {
		t.Fatalf("close retry: %v %+v, want order %s", err, again, closed.Order.OrderId)
	}
	ps, err := s.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: acct, Symbol: "BTCUSDT"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps.Positions {
		if !decimal.RequireFromString(p.Qty).IsZero() {
			t.Fatalf("position after close and retry: %+v", p)
		}
	}
	if n := ordersWithClientID(t, v, "BTC/USDT:PERP", "idem-close"); n != 1 {
		t.Fatalf("%d closing orders, want 1", n)
	}
	// An id of an ordinary order is not a close.
	if _, err := s.ClosePosition(ctx, &exchangev1.ClosePositionRequest{Account: acct, Symbol: "BTCUSDT", ClientOrderId: "idem-SWAP"}); reason(err) != exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID {
		t.Fatalf("close with an order's id: %v", err)
	}
}

// TestEmulatorMarginModePerOrder: an order's margin mode switches the symbol's mode when nothing is open on it, and
// is refused with ACCOUNT_MODE_MISMATCH (nothing placed) when something is.
func TestEmulatorMarginModePerOrder(t *testing.T) {
	s, v := manualEmu(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	acct := demoAccount()
	const sym = "ETHUSDT"
	b := buildBook(t, v, "ETH/USDT:PERP")
	if err := v.SetMarkPrice("ETH/USDT:PERP", b.ref); err != nil {
		t.Fatal(err)
	}
	rest := b.bid.Sub(b.ref.Mul(decimal.RequireFromString("0.02"))).Round(0).String()
	iso := &exchangev1.PlaceOrderRequest{Account: acct, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: sym,
		Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: rest, Qty: "0.1",
		MarginMode: exchangev1.MarginMode_MARGIN_MODE_ISOLATED}
	if _, err := s.PlaceOrder(ctx, iso); err != nil {
		t.Fatal(err)
	}
	l, err := s.GetLeverage(ctx, &exchangev1.GetLeverageRequest{Account: acct, Symbol: sym})
	if err != nil || l.MarginMode != exchangev1.MarginMode_MARGIN_MODE_ISOLATED {
		t.Fatalf("margin mode after an isolated order: %v %+v", err, l)
	}
	cross := proto.Clone(iso).(*exchangev1.PlaceOrderRequest)
	cross.MarginMode = exchangev1.MarginMode_MARGIN_MODE_CROSS
	_, err = s.PlaceOrder(ctx, cross)
	if reason(err) != exchangev1.ErrorReason_ERROR_REASON_ACCOUNT_MODE_MISMATCH || sdk.DetailOf(err).GetField() != "margin_mode" {
		t.Fatalf("cross order while an isolated order is open: %v", err)
	}
	if open, _ := s.ListOpenOrders(ctx, &exchangev1.ListOpenOrdersRequest{Account: acct, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: sym}); len(open.GetOrders()) != 1 {
		t.Fatalf("open orders after a refused cross order: %d", len(open.GetOrders()))
	}
	if _, err := s.GetMaxOrderSize(ctx, &exchangev1.GetMaxOrderSizeRequest{Account: acct, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP,
		Symbol: sym, Price: rest, MarginMode: exchangev1.MarginMode_MARGIN_MODE_CROSS}); reason(err) != exchangev1.ErrorReason_ERROR_REASON_ACCOUNT_MODE_MISMATCH {
		t.Fatalf("max size in the other mode while orders are open: %v", err)
	}
	// The same mode as the symbol's trades as before.
	if _, err := s.PlaceOrder(ctx, iso); err != nil {
		t.Fatal(err)
	}
}
