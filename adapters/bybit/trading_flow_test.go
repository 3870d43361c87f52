package bybit_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/bybit/emulator"
	"github.com/exhub/exhub/adapters/venue"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

func reasonOf(err error) exchangev1.ErrorReason { return sdk.DetailOf(err).GetReason() }

func bestBid(t *testing.T, w *world, mt exchangev1.MarketType, sym string) decimal.Decimal {
	t.Helper()
	b, err := w.c.GetOrderBook(context.Background(), &exchangev1.GetOrderBookRequest{MarketType: mt, Symbol: sym, Depth: 1})
	if err != nil || len(b.GetBook().GetBids()) == 0 {
		t.Fatalf("book: %v", err)
	}
	return decimal.RequireFromString(b.GetBook().GetBids()[0].GetPrice())
}

// TestSpotLimitRestsAndMarketFills: a limit buy under the bid rests on the venue under the demo account; a market
// buy sized in the base coin fills at once (marketUnit baseCoin), one sized in the quote coin spends that much.
func TestSpotLimitRestsAndMarketFills(t *testing.T) {
	w := shared(t)
	ctx := context.Background()
	spot := exchangev1.MarketType_MARKET_TYPE_SPOT
	price := bestBid(t, w, spot, "BTCUSDT").Mul(decimal.RequireFromString("0.8")).Round(0)
	r, err := w.c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: demoAccount(), MarketType: spot, Symbol: "BTCUSDT",
		Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: price.String(), Qty: "0.001",
		ClientOrderId: "flow-limit-1"})
	if err != nil {
		t.Fatal(err)
	}
	o := r.GetOrder()
	if o.GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_NEW || o.GetClientOrderId() != "flow-limit-1" || o.GetPrice() != price.String() {
		t.Fatalf("placed: %v", o)
	}
	open, err := w.v.OpenOrders(emulator.DemoAccount, "BTC/USDT")
	if err != nil || !containsClient(open, "flow-limit-1") {
		t.Fatalf("the venue does not hold the order: %v %v", err, open)
	}
	if _, err := w.c.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: demoAccount(), MarketType: spot, Symbol: "BTCUSDT",
		ClientOrderId: "flow-limit-1"}); err != nil {
		t.Fatal(err)
	}
	m, err := w.c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: demoAccount(), MarketType: spot, Symbol: "BTCUSDT",
		Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_MARKET, Qty: "0.001", ClientOrderId: "flow-mkt-1"})
	if err != nil {
		t.Fatal(err)
	}
	if m.GetOrder().GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_FILLED || m.GetOrder().GetFilledQty() != "0.001" {
		t.Fatalf("market buy by base: %v", m.GetOrder())
	}
	q, err := w.c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: demoAccount(), MarketType: spot, Symbol: "BTCUSDT",
		Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_MARKET, QuoteQty: "50", ClientOrderId: "flow-mkt-2"})
	if err != nil {
		t.Fatal(err)
	}
	spent := decimal.RequireFromString(q.GetOrder().GetFilledQuote())
	if q.GetOrder().GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_FILLED || spent.GreaterThan(decimal.NewFromInt(50)) ||
		spent.LessThan(decimal.NewFromInt(49)) || q.GetOrder().GetQty() != q.GetOrder().GetFilledQty() {
		t.Fatalf("market buy by quote: %v", q.GetOrder())
	}
	fills, err := w.c.ListFills(ctx, &exchangev1.ListFillsRequest{Account: demoAccount(), MarketType: spot, Symbol: "BTCUSDT",
		Page: &exchangev1.HistoryPage{Limit: 100}})
	if err != nil {
		t.Fatal(err)
	}
	var filled decimal.Decimal
	for _, f := range fills.GetFills() {
		if f.GetOrderId() == m.GetOrder().GetOrderId() {
			filled = filled.Add(decimal.RequireFromString(f.GetQty()))
			if f.GetClientOrderId() != "flow-mkt-1" || f.GetFeeAsset() != "BTC" {
				t.Fatalf("fill: %v", f)
			}
		}
	}
	if !filled.Equal(decimal.RequireFromString("0.001")) {
		t.Fatalf("fills of the market buy add up to %s", filled)
	}
}

func containsClient(os []venue.Order, cid string) bool {
	for _, o := range os {
		if o.ClientID == cid {
			return true
		}
	}
	return false
}

// A second member's key on its own venue account, funded by the tests that need it.
const (
	otherKey     = "bybit-other-key"
	otherSecret  = "bybit-other-secret"
	otherAccount = "bybit-other"
)

func otherAccountRef() *exchangev1.AccountRef {
	return &exchangev1.AccountRef{AccountId: "other", ApiKey: otherKey, ApiSecret: otherSecret}
}

var fundOther sync.Once

// fundedOther gives the second account 20000 USDT in its trading wallet (once).
func fundedOther(t *testing.T, w *world) *exchangev1.AccountRef {
	t.Helper()
	fundOther.Do(func() {
		ctx := context.Background()
		if _, err := w.v.Deposit(ctx, otherAccount, "USDT", decimal.NewFromInt(20000)); err != nil {
			t.Fatal(err)
		}
		if _, err := w.v.Transfer(ctx, otherAccount, "USDT", decimal.NewFromInt(20000), venue.Funding, venue.TradingWallet); err != nil {
			t.Fatal(err)
		}
	})
	return otherAccountRef()
}

// TestLinearFlow on the second account: reduce-only with no position is refused (typed), a market buy opens a
// long, a limit sell above rests, a reduce-only market sell closes, and in hedge mode the position side is
// required (POSITION_MODE_MISMATCH without one) and an order on the LONG side opens a hedge long.
func TestLinearFlow(t *testing.T) {
	w := shared(t)
	ctx := context.Background()
	acct := fundedOther(t, w)
	swap := exchangev1.MarketType_MARKET_TYPE_SWAP
	sym := "ETHUSDT"
	place := func(r *exchangev1.PlaceOrderRequest) (*exchangev1.Order, error) {
		r.Account, r.MarketType, r.Symbol = acct, swap, sym
		o, err := w.c.PlaceOrder(ctx, r)
		return o.GetOrder(), err
	}
	mkt := exchangev1.OrderType_ORDER_TYPE_MARKET
	if _, err := place(&exchangev1.PlaceOrderRequest{Side: exchangev1.Side_SIDE_SELL, Type: mkt, Qty: "0.1", ReduceOnly: true}); reasonOf(err) != exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED {
		t.Fatalf("reduce-only with no position: %v", err)
	}
	o, err := place(&exchangev1.PlaceOrderRequest{Side: exchangev1.Side_SIDE_BUY, Type: mkt, Qty: "0.1", ClientOrderId: "lin-open"})
	if err != nil || o.GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_FILLED || o.GetPositionSide() != exchangev1.PositionSide_POSITION_SIDE_NET {
		t.Fatalf("market buy: %v %v", err, o)
	}
	ps, err := w.c.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: acct, Symbol: sym})
	if err != nil || len(ps.GetPositions()) != 1 || ps.GetPositions()[0].GetQty() != "0.1" {
		t.Fatalf("positions: %v %v", err, ps)
	}
	ask := bestBid(t, w, swap, sym).Mul(decimal.RequireFromString("1.2")).Round(0)
	l, err := place(&exchangev1.PlaceOrderRequest{Side: exchangev1.Side_SIDE_SELL, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT,
		TimeInForce: exchangev1.TimeInForce_TIME_IN_FORCE_POST_ONLY, Price: ask.String(), Qty: "0.1", ReduceOnly: true, ClientOrderId: "lin-tp"})
	if err != nil || l.GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_NEW || !l.GetReduceOnly() || l.GetTimeInForce() != exchangev1.TimeInForce_TIME_IN_FORCE_POST_ONLY {
		t.Fatalf("resting reduce-only sell: %v %v", err, l)
	}
	if _, err := w.c.CancelAllOrders(ctx, &exchangev1.CancelAllOrdersRequest{Account: acct, MarketType: swap}); err != nil {
		t.Fatal(err)
	}
	c, err := place(&exchangev1.PlaceOrderRequest{Side: exchangev1.Side_SIDE_SELL, Type: mkt, Qty: "0.1", ReduceOnly: true, ClientOrderId: "lin-close"})
	if err != nil || c.GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_FILLED {
		t.Fatalf("reduce-only close: %v %v", err, c)
	}
	if ps, err := w.c.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: acct}); err != nil || len(ps.GetPositions()) != 0 {
		t.Fatalf("flat after the close: %v %v", err, ps)
	}
	// Margin mode per symbol, read back with the leverage.
	if _, err := w.c.SetMarginMode(ctx, &exchangev1.SetMarginModeRequest{Account: acct, Symbol: sym, MarginMode: exchangev1.MarginMode_MARGIN_MODE_ISOLATED}); err != nil {
		t.Fatal(err)
	}
	if lv, err := w.c.GetLeverage(ctx, &exchangev1.GetLeverageRequest{Account: acct, Symbol: sym}); err != nil || lv.GetMarginMode() != exchangev1.MarginMode_MARGIN_MODE_ISOLATED {
		t.Fatalf("after switching to isolated: %v %v", err, lv)
	}
	if _, err := w.c.SetMarginMode(ctx, &exchangev1.SetMarginModeRequest{Account: acct, Symbol: sym, MarginMode: exchangev1.MarginMode_MARGIN_MODE_CROSS}); err != nil {
		t.Fatal(err)
	}
	// Hedge mode.
	if _, err := w.c.SetPositionMode(ctx, &exchangev1.SetPositionModeRequest{Account: acct, Mode: exchangev1.PositionMode_POSITION_MODE_HEDGE}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_, _ = w.c.SetPositionMode(ctx, &exchangev1.SetPositionModeRequest{Account: acct, Mode: exchangev1.PositionMode_POSITION_MODE_ONE_WAY})
	}()
	if m, err := w.c.GetPositionMode(ctx, &exchangev1.GetPositionModeRequest{Account: acct}); err != nil || m.GetMode() != exchangev1.PositionMode_POSITION_MODE_HEDGE {
		t.Fatalf("position mode: %v %v", err, m)
	}
	if _, err := place(&exchangev1.PlaceOrderRequest{Side: exchangev1.Side_SIDE_BUY, Type: mkt, Qty: "0.1"}); reasonOf(err) != exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH {
		t.Fatalf("hedge mode without a side: %v", err)
	}
	h, err := place(&exchangev1.PlaceOrderRequest{Side: exchangev1.Side_SIDE_BUY, Type: mkt, Qty: "0.1", PositionSide: exchangev1.PositionSide_POSITION_SIDE_LONG})
	if err != nil || h.GetPositionSide() != exchangev1.PositionSide_POSITION_SIDE_LONG {
		t.Fatalf("hedge long: %v %v", err, h)
	}
	ps, err = w.c.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: acct, Symbol: sym})
	if err != nil || len(ps.GetPositions()) != 1 || ps.GetPositions()[0].GetPositionSide() != exchangev1.PositionSide_POSITION_SIDE_LONG {
		t.Fatalf("hedge positions: %v %v", err, ps)
	}
	if _, err := w.c.ClosePosition(ctx, &exchangev1.ClosePositionRequest{Account: acct, Symbol: sym, MarketType: swap,
		PositionSide: exchangev1.PositionSide_POSITION_SIDE_LONG, ClientOrderId: "lin-hedge-close"}); err != nil {
		t.Fatal(err)
	}
}

// TestTradingStopTriggers: a stop-loss on the position (mark price trigger) closes it when the mark crosses.
func TestTradingStopTriggers(t *testing.T) {
	w := shared(t)
	ctx := context.Background()
	acct := fundedOther(t, w)
	swap := exchangev1.MarketType_MARKET_TYPE_SWAP
	sym := "SOLUSDT"
	if _, err := w.c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: acct, MarketType: swap, Symbol: sym, Side: exchangev1.Side_SIDE_BUY,
		Type: exchangev1.OrderType_ORDER_TYPE_MARKET, Qty: "1", ClientOrderId: "ts-open"}); err != nil {
		t.Fatal(err)
	}
	mark, err := w.v.Mark("SOL/USDT:PERP")
	if err != nil {
		t.Fatal(err)
	}
	stop := mark.Mark.Mul(decimal.RequireFromString("0.97")).Round(2)
	if err := w.srv.SetTradingStop(ctx, acct, sym, exchangev1.PositionSide_POSITION_SIDE_UNSPECIFIED, nil,
		&exchangev1.TpSl{TriggerPrice: stop.String(), TriggerPriceType: exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK}); err != nil {
		t.Fatal(err)
	}
	ps, err := w.c.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: acct, Symbol: sym})
	if err != nil || len(ps.GetPositions()) != 1 || ps.GetPositions()[0].GetStopLoss().GetTriggerPrice() != stop.String() {
		t.Fatalf("position with its stop-loss: %v %v", err, ps)
	}
	if err := w.v.SetMarkPrice("SOL/USDT:PERP", stop.Mul(decimal.RequireFromString("0.99"))); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ps, err := w.c.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: acct, Symbol: sym})
		if err != nil {
			t.Fatal(err)
		}
		if len(ps.GetPositions()) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stop-loss did not close the position: %v", ps)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAccountsAreSeparate: another member's key neither sees nor cancels the demo account's order, and an
// unaffordable order is INSUFFICIENT_FUNDS.
func TestAccountsAreSeparate(t *testing.T) {
	w := shared(t)
	ctx := context.Background()
	spot := exchangev1.MarketType_MARKET_TYPE_SPOT
	price := bestBid(t, w, spot, "ETHUSDT").Mul(decimal.RequireFromString("0.8")).Round(0)
	r, err := w.c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: demoAccount(), MarketType: spot, Symbol: "ETHUSDT",
		Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: price.String(), Qty: "0.01", ClientOrderId: "sep-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_, _ = w.c.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: demoAccount(), MarketType: spot, Symbol: "ETHUSDT", OrderId: r.GetOrder().GetOrderId()})
	}()
	other := otherAccountRef()
	if _, err := w.c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: other, MarketType: spot, Symbol: "ETHUSDT", OrderId: r.GetOrder().GetOrderId()}); reasonOf(err) != exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND {
		t.Fatalf("another account reads the order: %v", err)
	}
	if _, err := w.c.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: other, MarketType: spot, Symbol: "ETHUSDT", OrderId: r.GetOrder().GetOrderId()}); reasonOf(err) != exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND {
		t.Fatalf("another account cancels the order: %v", err)
	}
	open, err := w.c.ListOpenOrders(ctx, &exchangev1.ListOpenOrdersRequest{Account: other, MarketType: spot})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range open.GetOrders() {
		if o.GetOrderId() == r.GetOrder().GetOrderId() {
			t.Fatal("another account lists the order")
		}
	}
	if _, err := w.c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: other, MarketType: spot, Symbol: "ETHUSDT",
		Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: price.String(), Qty: "1000"}); reasonOf(err) != exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS {
		t.Fatalf("an unaffordable order: %v", err)
	}
	if _, err := w.c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: &exchangev1.AccountRef{ApiKey: otherKey, ApiSecret: "wrong"}, MarketType: spot,
		Symbol: "ETHUSDT", Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: price.String(), Qty: "0.01"}); reasonOf(err) != exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED {
		t.Fatalf("a wrong secret: %v", err)
	}
}

// TestAlgoStopTriggers: a reduce-only STOP_MARKET sell on the mark price waits (listed, not among the plain open
// orders), then closes the long when the mark falls through it and reads back TRIGGERED.
func TestAlgoStopTriggers(t *testing.T) {
	w := shared(t)
	ctx := context.Background()
	acct := fundedOther(t, w)
	swap := exchangev1.MarketType_MARKET_TYPE_SWAP
	sym := "XRPUSDT"
	if _, err := w.c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: acct, MarketType: swap, Symbol: sym, Side: exchangev1.Side_SIDE_BUY,
		Type: exchangev1.OrderType_ORDER_TYPE_MARKET, Qty: "100", ClientOrderId: "algo-open"}); err != nil {
		t.Fatal(err)
	}
	mark, err := w.v.Mark("XRP/USDT:PERP")
	if err != nil {
		t.Fatal(err)
	}
	trig := mark.Mark.Mul(decimal.RequireFromString("0.97")).Round(4)
	r, err := w.c.PlaceAlgoOrder(ctx, &exchangev1.PlaceAlgoOrderRequest{Account: acct, MarketType: swap, Symbol: sym, Side: exchangev1.Side_SIDE_SELL,
		Type: exchangev1.OrderType_ORDER_TYPE_STOP_MARKET, TriggerPrice: trig.String(), TriggerPriceType: exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK,
		Qty: "100", ReduceOnly: true, ClientAlgoId: "algo-stop"})
	if err != nil {
		t.Fatal(err)
	}
	g := r.GetAlgoOrder()
	if g.GetStatus() != exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_WAITING || g.GetType() != exchangev1.OrderType_ORDER_TYPE_STOP_MARKET ||
		g.GetTriggerPrice() != trig.String() || g.GetTriggerPriceType() != exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK || g.GetClientAlgoId() != "algo-stop" {
		t.Fatalf("placed: %v", g)
	}
	open, err := w.c.ListOpenOrders(ctx, &exchangev1.ListOpenOrdersRequest{Account: acct, MarketType: swap, Symbol: sym})
	if err != nil || len(open.GetOrders()) != 0 {
		t.Fatalf("a conditional order among the plain open orders: %v %v", err, open)
	}
	if err := w.v.SetMarkPrice("XRP/USDT:PERP", trig.Mul(decimal.RequireFromString("0.99"))); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		l, err := w.c.ListAlgoOrders(ctx, &exchangev1.ListAlgoOrdersRequest{Account: acct, MarketType: swap, Symbol: sym, IncludeHistory: true,
			Page: &exchangev1.HistoryPage{Limit: 50}})
		if err != nil {
			t.Fatal(err)
		}
		var got *exchangev1.AlgoOrder
		for _, x := range l.GetAlgoOrders() {
			if x.GetAlgoId() == g.GetAlgoId() {
				got = x
			}
		}
		if got != nil && got.GetStatus() == exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_TRIGGERED {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stop did not trigger: %v", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if ps, err := w.c.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: acct, Symbol: sym}); err != nil || len(ps.GetPositions()) != 0 {
		t.Fatalf("the triggered stop left a position: %v %v", err, ps)
	}
}
