package binance

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/binance/emulator"
	"github.com/exhub/exhub/adapters/venue"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// manualEmu runs the emulator on a venue without the synthetic market: the test builds the book by hand and moves
// the mark price itself, so fills and triggers are deterministic.
func manualEmu(t *testing.T) (*Server, *venue.Venue) {
	t.Helper()
	s, v, _ := manualEmuCfg(t, emulator.Config{})
	return s, v
}

func manualEmuCfg(t *testing.T, cfg emulator.Config) (*Server, *venue.Venue, *emulator.Server) {
	t.Helper()
	return manualEmuVenue(t, venue.Config{Profile: "binance", Seed: 3}, cfg)
}

// manualEmuVenue is manualEmuCfg on a venue built from vc (e.g. with a manual clock).
func manualEmuVenue(t *testing.T, vc venue.Config, cfg emulator.Config) (*Server, *venue.Venue, *emulator.Server) {
	t.Helper()
	v, err := venue.New(vc)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg.Venue, cfg.Logger = v, log
	e, err := emulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(e.Handler())
	t.Cleanup(func() { hs.Close(); e.Close(); v.Close() })
	s := New(Options{Logger: log})
	if _, err := s.Configure(context.Background(), &exchangev1.ConfigureRequest{Settings: emulator.PluginSettings(hs.URL)}); err != nil {
		t.Fatal(err)
	}
	return s, v, e
}

// book rests house liquidity around ref: bids at ref-1%, asks at ref+1%, on the instrument's tick grid.
type book struct {
	ref, bid, ask decimal.Decimal
}

func buildBook(t *testing.T, v *venue.Venue, id string) book {
	t.Helper()
	in, err := v.Instrument(id)
	if err != nil {
		t.Fatal(err)
	}
	mk, err := v.Mark(id)
	if err != nil {
		t.Fatal(err)
	}
	ref := mk.Mark
	if !ref.IsPositive() {
		ref, _ = v.LastPrice(id)
	}
	grid := func(d decimal.Decimal) decimal.Decimal { return d.Div(in.TickSize).Floor().Mul(in.TickSize) }
	b := book{ref: grid(ref), bid: grid(ref.Mul(decimal.RequireFromString("0.99"))), ask: grid(ref.Mul(decimal.RequireFromString("1.01")))}
	for _, l := range []struct {
		side  venue.Side
		price decimal.Decimal
	}{{venue.Buy, b.bid}, {venue.Sell, b.ask}} {
		if _, err := v.AddLiquidity(id, l.side, l.price, decimal.NewFromInt(1000)); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func reason(err error) exchangev1.ErrorReason { return sdk.DetailOf(err).GetReason() }

func TestEmulatorFuturesFlow(t *testing.T) {
	s, v := manualEmu(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	acct := demoAccount()
	const sym = "BTCUSDT"
	swap := exchangev1.MarketType_MARKET_TYPE_SWAP
	b := buildBook(t, v, "BTC/USDT:PERP")
	if err := v.SetMarkPrice("BTC/USDT:PERP", b.ref); err != nil {
		t.Fatal(err)
	}
	order := func(side exchangev1.Side, typ exchangev1.OrderType, price, qty string) *exchangev1.PlaceOrderRequest {
		return &exchangev1.PlaceOrderRequest{Account: acct, MarketType: swap, Symbol: sym, Side: side, Type: typ, Price: price, Qty: qty}
	}
	if _, err := s.SetLeverage(ctx, &exchangev1.SetLeverageRequest{Account: acct, Symbol: sym, Leverage: "5",
		MarginMode: exchangev1.MarginMode_MARGIN_MODE_CROSS}); err != nil {
		t.Fatal(err)
	}
	if l, err := s.GetLeverage(ctx, &exchangev1.GetLeverageRequest{Account: acct, Symbol: sym}); err != nil || l.Leverage != "5" ||
		l.MarginMode != exchangev1.MarginMode_MARGIN_MODE_CROSS {
		t.Fatalf("leverage: %v %+v", err, l)
	}

	// A limit buy under the ask rests; amend moves it in place; cancel-all cancels it and a second one.
	restPrice := b.bid.Sub(b.ref.Mul(decimal.RequireFromString("0.01"))).Round(0)
	r1, err := s.PlaceOrder(ctx, order(exchangev1.Side_SIDE_BUY, exchangev1.OrderType_ORDER_TYPE_LIMIT, restPrice.String(), "0.01"))
	if err != nil {
		t.Fatal(err)
	}
	if r1.Order.Status != exchangev1.OrderStatus_ORDER_STATUS_NEW {
		t.Fatalf("resting limit: %+v", r1.Order)
	}
	am, err := s.AmendOrder(ctx, &exchangev1.AmendOrderRequest{Account: acct, MarketType: swap, Symbol: sym, OrderId: r1.Order.OrderId,
		Price: restPrice.Sub(decimal.NewFromInt(10)).String(), Qty: "0.02"})
	if err != nil {
		t.Fatal(err)
	}
	if am.Order.OrderId != r1.Order.OrderId || am.Order.Qty != "0.02" || am.Order.Price != restPrice.Sub(decimal.NewFromInt(10)).String() {
		t.Fatalf("amend: %+v", am.Order)
	}
	if _, err := s.PlaceOrder(ctx, order(exchangev1.Side_SIDE_BUY, exchangev1.OrderType_ORDER_TYPE_LIMIT, restPrice.String(), "0.01")); err != nil {
		t.Fatal(err)
	}
	ca, err := s.CancelAllOrders(ctx, &exchangev1.CancelAllOrdersRequest{Account: acct, MarketType: swap, Symbol: sym})
	if err != nil || len(ca.Orders) != 2 {
		t.Fatalf("cancel-all: %v %+v", err, ca)
	}
	if o, err := s.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: acct, MarketType: swap, Symbol: sym, OrderId: r1.Order.OrderId}); err != nil ||
		o.Order.Status != exchangev1.OrderStatus_ORDER_STATUS_CANCELLED {
		t.Fatalf("after cancel-all: %v %+v", err, o)
	}
	if open, _ := s.ListOpenOrders(ctx, &exchangev1.ListOpenOrdersRequest{Account: acct, MarketType: swap, Symbol: sym}); len(open.GetOrders()) != 0 {
		t.Fatalf("open after cancel-all: %+v", open.GetOrders())
	}

	// A market buy fills at the ask and opens a long.
	mb, err := s.PlaceOrder(ctx, order(exchangev1.Side_SIDE_BUY, exchangev1.OrderType_ORDER_TYPE_MARKET, "", "0.01"))
	if err != nil {
		t.Fatal(err)
	}
	if mb.Order.Status != exchangev1.OrderStatus_ORDER_STATUS_FILLED || mb.Order.FilledQty != "0.01" || !decimal.RequireFromString(mb.Order.AvgPrice).Equal(b.ask) {
		t.Fatalf("market buy: %+v (ask %s)", mb.Order, b.ask)
	}
	long := func() decimal.Decimal {
		t.Helper()
		ps, err := s.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: acct, Symbol: sym})
		if err != nil {
			t.Fatal(err)
		}
		q := decimal.Zero
		for _, p := range ps.Positions {
			q = q.Add(decimal.RequireFromString(p.Qty))
		}
		return q
	}
	if q := long(); !q.Equal(decimal.RequireFromString("0.01")) {
		t.Fatalf("position %s after buying 0.01", q)
	}
	// Break-even price and the cross margin ratio arrive as the venue computes them.
	vps, err := v.Positions(emulator.DemoAccount)
	if err != nil || len(vps) != 1 {
		t.Fatalf("venue positions: %v %+v", err, vps)
	}
	ps, err := s.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: acct, Symbol: sym})
	if err != nil || len(ps.Positions) != 1 {
		t.Fatalf("positions: %v %+v", err, ps)
	}
	if p := ps.Positions[0]; p.BreakEvenPrice != vps[0].BreakEven.String() || !vps[0].BreakEven.GreaterThan(b.ask) ||
		p.MarginRatio != vps[0].MarginRatio.String() || !vps[0].MarginRatio.IsPositive() {
		t.Fatalf("break-even %q / margin ratio %q; the venue says %s / %s", p.BreakEvenPrice, p.MarginRatio, vps[0].BreakEven, vps[0].MarginRatio)
	}
	fills, err := s.ListFills(ctx, &exchangev1.ListFillsRequest{Account: acct, MarketType: swap, Symbol: sym})
	if err != nil || len(fills.Fills) == 0 || fills.Fills[0].OrderId != mb.Order.OrderId {
		t.Fatalf("fills: %v %+v", err, fills)
	}

	// Reduce-only may not increase the long nor flip it.
	ro := order(exchangev1.Side_SIDE_BUY, exchangev1.OrderType_ORDER_TYPE_MARKET, "", "0.01")
	ro.ReduceOnly = true
	if _, err := s.PlaceOrder(ctx, ro); reason(err) != exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED {
		t.Fatalf("reduce-only buy on a long: %v", err)
	}
	if q := long(); !q.Equal(decimal.RequireFromString("0.01")) {
		t.Fatalf("position %s after a refused reduce-only", q)
	}

	// Take-profit on mark price: closes the long when the mark crosses it.
	tp, err := s.PlaceAlgoOrder(ctx, &exchangev1.PlaceAlgoOrderRequest{Account: acct, MarketType: swap, Symbol: sym, Side: exchangev1.Side_SIDE_SELL,
		Type: exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_MARKET, TriggerPrice: b.ref.Mul(decimal.RequireFromString("1.02")).Round(0).String(),
		TriggerPriceType: exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK, ClosePosition: true})
	if err != nil {
		t.Fatal(err)
	}
	if al, err := s.ListAlgoOrders(ctx, &exchangev1.ListAlgoOrdersRequest{Account: acct, Symbol: sym}); err != nil || len(al.AlgoOrders) != 1 ||
		al.AlgoOrders[0].AlgoId != tp.AlgoOrder.AlgoId {
		t.Fatalf("algo orders: %v %+v", err, al)
	}
	if err := v.SetMarkPrice("BTC/USDT:PERP", b.ref.Mul(decimal.RequireFromString("1.03"))); err != nil {
		t.Fatal(err)
	}
	if q := long(); !q.IsZero() {
		t.Fatalf("position %s after the take-profit triggered", q)
	}
	if al, _ := s.ListAlgoOrders(ctx, &exchangev1.ListAlgoOrdersRequest{Account: acct, Symbol: sym}); len(al.GetAlgoOrders()) != 0 {
		t.Fatalf("take-profit still waiting: %+v", al.GetAlgoOrders())
	}

	// Stop-loss on mark price, quantity-based and reduce-only.
	if err := v.SetMarkPrice("BTC/USDT:PERP", b.ref); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PlaceOrder(ctx, order(exchangev1.Side_SIDE_BUY, exchangev1.OrderType_ORDER_TYPE_MARKET, "", "0.02")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PlaceAlgoOrder(ctx, &exchangev1.PlaceAlgoOrderRequest{Account: acct, MarketType: swap, Symbol: sym, Side: exchangev1.Side_SIDE_SELL,
		Type: exchangev1.OrderType_ORDER_TYPE_STOP_MARKET, TriggerPrice: b.ref.Mul(decimal.RequireFromString("0.98")).Round(0).String(),
		TriggerPriceType: exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK, Qty: "0.02", ReduceOnly: true}); err != nil {
		t.Fatal(err)
	}
	if q := long(); !q.Equal(decimal.RequireFromString("0.02")) {
		t.Fatalf("position %s before the stop", q)
	}
	if err := v.SetMarkPrice("BTC/USDT:PERP", b.ref.Mul(decimal.RequireFromString("0.97"))); err != nil {
		t.Fatal(err)
	}
	if q := long(); !q.IsZero() {
		t.Fatalf("position %s after the stop-loss triggered", q)
	}
	if err := v.SetMarkPrice("BTC/USDT:PERP", b.ref); err != nil {
		t.Fatal(err)
	}

	// Hedge mode: an order needs its position side; ClosePosition closes one side.
	if _, err := s.SetPositionMode(ctx, &exchangev1.SetPositionModeRequest{Account: acct, Mode: exchangev1.PositionMode_POSITION_MODE_HEDGE}); err != nil {
		t.Fatal(err)
	}
	if m, err := s.GetPositionMode(ctx, &exchangev1.GetPositionModeRequest{Account: acct}); err != nil || m.Mode != exchangev1.PositionMode_POSITION_MODE_HEDGE {
		t.Fatalf("position mode: %v %+v", err, m)
	}
	if _, err := s.PlaceOrder(ctx, order(exchangev1.Side_SIDE_BUY, exchangev1.OrderType_ORDER_TYPE_MARKET, "", "0.01")); reason(err) != exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH {
		t.Fatalf("hedge-mode order without position side: %v", err)
	}
	hl := order(exchangev1.Side_SIDE_BUY, exchangev1.OrderType_ORDER_TYPE_MARKET, "", "0.01")
	hl.PositionSide = exchangev1.PositionSide_POSITION_SIDE_LONG
	if _, err := s.PlaceOrder(ctx, hl); err != nil {
		t.Fatal(err)
	}
	cp, err := s.ClosePosition(ctx, &exchangev1.ClosePositionRequest{Account: acct, Symbol: sym, PositionSide: exchangev1.PositionSide_POSITION_SIDE_LONG})
	if err != nil || cp.Order.Status != exchangev1.OrderStatus_ORDER_STATUS_FILLED || cp.Order.Side != exchangev1.Side_SIDE_SELL {
		t.Fatalf("close position: %v %+v", err, cp)
	}
	if q := long(); !q.IsZero() {
		t.Fatalf("position %s after ClosePosition", q)
	}
	if _, err := s.ClosePosition(ctx, &exchangev1.ClosePositionRequest{Account: acct, Symbol: sym}); reason(err) != exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED {
		t.Fatalf("close without a position: %v", err)
	}
	if _, err := s.SetPositionMode(ctx, &exchangev1.SetPositionModeRequest{Account: acct, Mode: exchangev1.PositionMode_POSITION_MODE_ONE_WAY}); err != nil {
		t.Fatal(err)
	}

	// An order beyond the margin is a typed insufficient-funds error.
	if _, err := s.PlaceOrder(ctx, order(exchangev1.Side_SIDE_BUY, exchangev1.OrderType_ORDER_TYPE_LIMIT, restPrice.String(), "900")); reason(err) != exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS {
		t.Fatalf("unaffordable order: %v", err)
	}
	bal, err := s.GetBalances(ctx, &exchangev1.GetBalancesRequest{Account: acct, Wallet: exchangev1.WalletType_WALLET_TYPE_TRADING})
	if err != nil || bal.Equity == "" || !decimal.RequireFromString(bal.AvailableMargin).IsPositive() {
		t.Fatalf("balances: %v %+v", err, bal)
	}
}

func TestEmulatorSpotFlow(t *testing.T) {
	s, v := manualEmu(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	acct := demoAccount()
	const sym = "BTCUSDT"
	spot := exchangev1.MarketType_MARKET_TYPE_SPOT
	b := buildBook(t, v, "BTC/USDT")
	order := func(side exchangev1.Side, typ exchangev1.OrderType, price, qty, cid string) *exchangev1.PlaceOrderRequest {
		return &exchangev1.PlaceOrderRequest{Account: acct, MarketType: spot, Symbol: sym, Side: side, Type: typ, Price: price, Qty: qty, ClientOrderId: cid}
	}
	btc0 := avail(t, s, exchangev1.WalletType_WALLET_TYPE_TRADING, "BTC")

	// Market buy fills at the ask; the BTC balance grows by the quantity net of the fee in BTC if any.
	mb, err := s.PlaceOrder(ctx, order(exchangev1.Side_SIDE_BUY, exchangev1.OrderType_ORDER_TYPE_MARKET, "", "0.01", ""))
	if err != nil {
		t.Fatal(err)
	}
	if mb.Order.Status != exchangev1.OrderStatus_ORDER_STATUS_FILLED || !decimal.RequireFromString(mb.Order.AvgPrice).Equal(b.ask) {
		t.Fatalf("market buy: %+v", mb.Order)
	}
	gained := avail(t, s, exchangev1.WalletType_WALLET_TYPE_TRADING, "BTC").Sub(btc0)
	if !gained.IsPositive() || gained.GreaterThan(decimal.RequireFromString("0.01")) {
		t.Fatalf("BTC gained %s after buying 0.01", gained)
	}

	// A resting limit: a size cut keeps the order id, a price change replaces the order.
	price := b.bid.Sub(b.ref.Mul(decimal.RequireFromString("0.01"))).Round(0)
	r, err := s.PlaceOrder(ctx, order(exchangev1.Side_SIDE_BUY, exchangev1.OrderType_ORDER_TYPE_LIMIT, price.String(), "0.003", "spot-rest-1"))
	if err != nil || r.Order.Status != exchangev1.OrderStatus_ORDER_STATUS_NEW {
		t.Fatalf("resting limit: %v %+v", err, r)
	}
	again, err := s.PlaceOrder(ctx, order(exchangev1.Side_SIDE_BUY, exchangev1.OrderType_ORDER_TYPE_LIMIT, price.String(), "0.003", "spot-rest-1"))
	if err != nil || again.Order.OrderId != r.Order.OrderId {
		t.Fatalf("repeated client order id: %v %+v", err, again)
	}
	cut, err := s.AmendOrder(ctx, &exchangev1.AmendOrderRequest{Account: acct, MarketType: spot, Symbol: sym, OrderId: r.Order.OrderId, Qty: "0.002"})
	if err != nil || cut.Order.OrderId != r.Order.OrderId || cut.Order.Qty != "0.002" {
		t.Fatalf("size cut: %v %+v", err, cut)
	}
	moved, err := s.AmendOrder(ctx, &exchangev1.AmendOrderRequest{Account: acct, MarketType: spot, Symbol: sym, OrderId: r.Order.OrderId,
		Price: price.Sub(decimal.NewFromInt(5)).String()})
	if err != nil || moved.Order.OrderId == r.Order.OrderId || moved.Order.Qty != "0.002" || moved.Order.Status != exchangev1.OrderStatus_ORDER_STATUS_NEW {
		t.Fatalf("price change: %v %+v", err, moved)
	}
	if old, err := s.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: acct, MarketType: spot, Symbol: sym, OrderId: r.Order.OrderId}); err != nil ||
		old.Order.Status != exchangev1.OrderStatus_ORDER_STATUS_CANCELLED {
		t.Fatalf("replaced order: %v %+v", err, old)
	}
	ca, err := s.CancelAllOrders(ctx, &exchangev1.CancelAllOrdersRequest{Account: acct, MarketType: spot, Symbol: sym})
	if err != nil || len(ca.Orders) != 1 || ca.Orders[0].OrderId != moved.Order.OrderId || ca.Orders[0].Status != exchangev1.OrderStatus_ORDER_STATUS_CANCELLED {
		t.Fatalf("cancel-all: %v %+v", err, ca)
	}
	if ca, err := s.CancelAllOrders(ctx, &exchangev1.CancelAllOrdersRequest{Account: acct, MarketType: spot, Symbol: sym}); err != nil || len(ca.Orders) != 0 {
		t.Fatalf("cancel-all with nothing open: %v %+v", err, ca)
	}
	if _, err := s.PlaceOrder(ctx, order(exchangev1.Side_SIDE_BUY, exchangev1.OrderType_ORDER_TYPE_LIMIT, price.String(), "5000", "")); reason(err) != exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS {
		t.Fatalf("unaffordable spot order: %v", err)
	}
	h, err := s.ListOrderHistory(ctx, &exchangev1.ListOrderHistoryRequest{Account: acct, MarketType: spot, Symbol: sym})
	if err != nil || len(h.Orders) != 3 || h.Orders[0].OrderId != moved.Order.OrderId {
		t.Fatalf("history newest first: %v %+v", err, h)
	}
}

// GetMaxOrderSize: an order above the answer is refused for funds, one below it rests.
func TestEmulatorMaxOrderSize(t *testing.T) {
	s, v := manualEmu(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	acct := demoAccount()
	for _, c := range []struct {
		mt exchangev1.MarketType
		id string
	}{{exchangev1.MarketType_MARKET_TYPE_SPOT, "BTC/USDT"}, {exchangev1.MarketType_MARKET_TYPE_SWAP, "BTC/USDT:PERP"}} {
		b := buildBook(t, v, c.id)
		price := b.bid.Sub(b.ref.Mul(decimal.RequireFromString("0.02"))).Round(0)
		m, err := s.GetMaxOrderSize(ctx, &exchangev1.GetMaxOrderSizeRequest{Account: acct, MarketType: c.mt, Symbol: "BTCUSDT", Price: price.String()})
		if err != nil {
			t.Fatal(err)
		}
		maxBuy := decimal.RequireFromString(m.MaxBuyQty)
		if !maxBuy.IsPositive() || m.MaxSellQty == "" {
			t.Fatalf("%v max size: %+v", c.mt, m)
		}
		place := func(q decimal.Decimal) error {
			_, err := s.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: acct, MarketType: c.mt, Symbol: "BTCUSDT", Side: exchangev1.Side_SIDE_BUY,
				Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: price.String(), Qty: q.String()})
			return err
		}
		if err := place(maxBuy.Mul(decimal.RequireFromString("1.2")).Round(3)); reason(err) != exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS {
			t.Fatalf("%v: 1.2 x max buy %s: %v", c.mt, maxBuy, err)
		}
		if err := place(maxBuy.Mul(decimal.RequireFromString("0.8")).Round(3)); err != nil {
			t.Fatalf("%v: 0.8 x max buy %s: %v", c.mt, maxBuy, err)
		}
		if _, err := s.CancelAllOrders(ctx, &exchangev1.CancelAllOrdersRequest{Account: acct, MarketType: c.mt, Symbol: "BTCUSDT"}); err != nil {
			t.Fatal(err)
		}
		if m2, err := s.GetMaxOrderSize(ctx, &exchangev1.GetMaxOrderSizeRequest{Account: acct, MarketType: c.mt, Symbol: "BTCUSDT"}); err != nil ||
			!decimal.RequireFromString(m2.MaxBuyQty).LessThan(maxBuy) {
			t.Fatalf("%v at the ask (higher than %s): %v %+v vs %s", c.mt, price, err, m2, maxBuy)
		}
	}
}
