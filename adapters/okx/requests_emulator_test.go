package okx_test

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"google.golang.org/protobuf/proto"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// requests is a copy of the per-method counts ("GET /api/v5/...") of the emulator's REST requests.
func (p *pathCounter) requests() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for k, n := range p.n {
		if strings.Contains(k, " ") {
			out[k] = n
		}
	}
	return out
}

// sent is the requests made since before: count per method and path, without the unchanged ones.
func sent(before, after map[string]int) map[string]int {
	out := map[string]int{}
	for k, n := range after {
		if d := n - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

func wantSent(t *testing.T, what string, got map[string]int, want map[string]int) {
	t.Helper()
	if !maps.Equal(got, want) {
		t.Fatalf("%s sent %v to OKX, want %v", what, got, want)
	}
}

const (
	getOrder    = "GET /api/v5/trade/order"
	postOrder   = "POST /api/v5/trade/order"
	postCancel  = "POST /api/v5/trade/cancel-order"
	instruments = "GET /api/v5/public/instruments"
)

// TestEmulatorOrderRequestCount: the requests one order costs on OKX's rate limits. A resting limit order with a
// client id is its client id looked up (so a repeat never places a second order) and the order placed: its answer
// is built from the request and OKX's acknowledgement, not read back. A cancel is the cancel alone. Instruments
// come from the plugin's cache. A market order is read back once (its answer says how it ended). The tests of this
// package run one at a time, so the emulator's counts between two calls are the calls' own.
func TestEmulatorOrderRequestCount(t *testing.T) {
	w := shared(t)
	ctx := t.Context()
	for _, m := range []struct {
		mt     exchangev1.MarketType
		sym    string
		margin exchangev1.MarginMode
	}{
		{exchangev1.MarketType_MARKET_TYPE_SWAP, "BTC-USDT-SWAP", exchangev1.MarginMode_MARGIN_MODE_CROSS},
		{exchangev1.MarketType_MARKET_TYPE_SPOT, "BTC-USDT", exchangev1.MarginMode_MARGIN_MODE_UNSPECIFIED},
	} {
		t.Run(m.sym, func(t *testing.T) {
			ins, err := w.c.ListInstruments(ctx, &exchangev1.ListInstrumentsRequest{MarketType: m.mt, Symbol: m.sym})
			if err != nil || len(ins.GetInstruments()) != 1 {
				t.Fatalf("instrument: %v %v", ins, err)
			}
			in := ins.GetInstruments()[0]
			step := decimal.RequireFromString(in.GetStepSize())
			tick := decimal.RequireFromString(in.GetTickSize())
			bid, _ := bestBid(t, w, m.mt, m.sym)
			px := bid.Mul(decimal.RequireFromString("0.8")).Div(tick).Floor().Mul(tick)
			notional := decimal.NewFromInt(20)
			if mn, err := decimal.NewFromString(in.GetMinNotional()); err == nil {
				notional = decimal.Max(notional, mn.Mul(decimal.NewFromInt(2)))
			}
			qty := decimal.Max(decimal.RequireFromString(in.GetMinQty()), notional.Div(px).Div(step).Ceil().Mul(step))
			cid := fmt.Sprintf("rq%d", time.Now().UnixNano()%1e12)
			req := &exchangev1.PlaceOrderRequest{Account: w.acct, MarketType: m.mt, Symbol: m.sym, Side: exchangev1.Side_SIDE_BUY,
				Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, TimeInForce: exchangev1.TimeInForce_TIME_IN_FORCE_GTC,
				Price: px.String(), Qty: qty.String(), ClientOrderId: cid, MarginMode: m.margin}

			before := w.hits.requests()
			placed, err := w.c.PlaceOrder(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			wantSent(t, "a limit order with a client id", sent(before, w.hits.requests()), map[string]int{getOrder: 1, postOrder: 1})

			// The answer built from the acknowledgement says what reading the order says.
			o := placed.GetOrder()
			got, err := w.c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: w.acct, MarketType: m.mt, Symbol: m.sym, OrderId: o.GetOrderId()})
			if err != nil {
				t.Fatal(err)
			}
			read := got.GetOrder()
			if o.GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_NEW || o.GetFilledQty() != "0" || o.GetCreatedTime() <= 0 {
				t.Fatalf("placed %v", o)
			}
			for _, f := range []struct{ name, a, b string }{
				{"order_id", o.GetOrderId(), read.GetOrderId()}, {"client_order_id", o.GetClientOrderId(), cid},
				{"symbol", o.GetSymbol(), read.GetSymbol()}, {"market_type", o.GetMarketType().String(), read.GetMarketType().String()},
				{"side", o.GetSide().String(), read.GetSide().String()}, {"position_side", o.GetPositionSide().String(), read.GetPositionSide().String()},
				{"type", o.GetType().String(), read.GetType().String()}, {"time_in_force", o.GetTimeInForce().String(), read.GetTimeInForce().String()},
				{"price", o.GetPrice(), read.GetPrice()}, {"qty", o.GetQty(), read.GetQty()}, {"status", o.GetStatus().String(), read.GetStatus().String()},
				{"reduce_only", fmt.Sprint(o.GetReduceOnly()), fmt.Sprint(read.GetReduceOnly())},
			} {
				if f.a != f.b {
					t.Errorf("placed %s %q, read back %q", f.name, f.a, f.b)
				}
			}

			// Cancelled by id: one request, the order's parameters in the answer.
			before = w.hits.requests()
			c, err := w.c.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: w.acct, MarketType: m.mt, Symbol: m.sym, OrderId: o.GetOrderId()})
			if err != nil {
				t.Fatal(err)
			}
			wantSent(t, "a cancel", sent(before, w.hits.requests()), map[string]int{postCancel: 1})
			co := c.GetOrder()
			want := proto.Clone(read).(*exchangev1.Order)
			if co.GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_CANCELLED || co.GetOrderId() != want.GetOrderId() ||
				co.GetClientOrderId() != cid || co.GetPrice() != want.GetPrice() || co.GetQty() != want.GetQty() || co.GetSide() != want.GetSide() {
				t.Fatalf("cancel answered %v, placed %v", co, want)
			}
			if g, err := w.c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: w.acct, MarketType: m.mt, Symbol: m.sym, OrderId: o.GetOrderId()}); err != nil ||
				g.GetOrder().GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_CANCELLED {
				t.Fatalf("after the cancel the order reads %v %v", g, err)
			}

			// Without a client id nothing is looked up; cancelled by client id alone, still one request.
			req.ClientOrderId = ""
			before = w.hits.requests()
			placed, err = w.c.PlaceOrder(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			wantSent(t, "a limit order without a client id", sent(before, w.hits.requests()), map[string]int{postOrder: 1})
			before = w.hits.requests()
			if _, err := w.c.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: w.acct, MarketType: m.mt, Symbol: m.sym,
				OrderId: placed.GetOrder().GetOrderId()}); err != nil {
				t.Fatal(err)
			}
			wantSent(t, "a cancel", sent(before, w.hits.requests()), map[string]int{postCancel: 1})
		})
	}
}

// TestEmulatorMarketOrderReadBack: a market order's outcome is decided at placement, so its answer is read back
// once: it comes back filled.
func TestEmulatorMarketOrderReadBack(t *testing.T) {
	w := shared(t)
	ctx := t.Context()
	spot := exchangev1.MarketType_MARKET_TYPE_SPOT
	if _, err := w.c.ListInstruments(ctx, &exchangev1.ListInstrumentsRequest{MarketType: spot, Symbol: "BTC-USDT"}); err != nil {
		t.Fatal(err)
	}
	buy := &exchangev1.PlaceOrderRequest{Account: w.acct, MarketType: spot, Symbol: "BTC-USDT", Side: exchangev1.Side_SIDE_BUY,
		Type: exchangev1.OrderType_ORDER_TYPE_MARKET, Qty: "0.001", ClientOrderId: fmt.Sprintf("rqm%d", time.Now().UnixNano()%1e12)}
	before := w.hits.requests()
	o, err := w.c.PlaceOrder(ctx, buy)
	if err != nil {
		t.Fatal(err)
	}
	wantSent(t, "a market order with a client id", sent(before, w.hits.requests()), map[string]int{getOrder: 2, postOrder: 1})
	if o.GetOrder().GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_FILLED || o.GetOrder().GetFilledQty() != "0.001" {
		t.Fatalf("market order answered %v", o.GetOrder())
	}
	sell := proto.Clone(buy).(*exchangev1.PlaceOrderRequest)
	sell.Side, sell.ClientOrderId = exchangev1.Side_SIDE_SELL, ""
	if _, err := w.c.PlaceOrder(ctx, sell); err != nil {
		t.Fatal(err)
	}
}
