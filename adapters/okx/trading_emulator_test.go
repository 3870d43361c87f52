package okx_test

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/okx"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

func bestBid(t *testing.T, w *world, mt exchangev1.MarketType, sym string) (bid, ask decimal.Decimal) {
	t.Helper()
	b, err := w.c.GetOrderBook(t.Context(), &exchangev1.GetOrderBookRequest{MarketType: mt, Symbol: sym, Depth: 5})
	if err != nil {
		t.Fatal(err)
	}
	return decimal.RequireFromString(b.GetBook().GetBids()[0].GetPrice()), decimal.RequireFromString(b.GetBook().GetAsks()[0].GetPrice())
}

func wantReason(t *testing.T, err error, r exchangev1.ErrorReason) {
	t.Helper()
	if got := sdk.DetailOf(err).GetReason(); got != r {
		t.Fatalf("got %v (%v), want %v", got, err, r)
	}
}

// TestSpotOrderLifecycle: a resting limit buy in base units, read back by id and client id, amended, listed,
// cancelled (by id only), and found in history.
func TestSpotOrderLifecycle(t *testing.T) {
	w := shared(t)
	ctx := t.Context()
	spot := exchangev1.MarketType_MARKET_TYPE_SPOT
	bid, _ := bestBid(t, w, spot, "BTC-USDT")
	px := bid.Mul(decimal.RequireFromString("0.9")).Round(1)
	cid := "spotlc" + decimal.NewFromInt(time.Now().UnixNano()%1e9).String()
	o, err := w.c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: w.acct, MarketType: spot, Symbol: "BTC-USDT", Side: exchangev1.Side_SIDE_BUY,
		Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, TimeInForce: exchangev1.TimeInForce_TIME_IN_FORCE_GTC, Price: px.String(), Qty: "0.001", ClientOrderId: cid})
	if err != nil {
		t.Fatal(err)
	}
	if o.GetOrder().GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_NEW || o.GetOrder().GetQty() != "0.001" || o.GetOrder().GetClientOrderId() != cid {
		t.Fatalf("placed %v", o.GetOrder())
	}
	id := o.GetOrder().GetOrderId()
	byCid, err := w.c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: w.acct, MarketType: spot, Symbol: "BTC-USDT", ClientOrderId: cid})
	if err != nil || byCid.GetOrder().GetOrderId() != id {
		t.Fatalf("by client id: %v %v", byCid, err)
	}
	am, err := w.c.AmendOrder(ctx, &exchangev1.AmendOrderRequest{Account: w.acct, MarketType: spot, Symbol: "BTC-USDT", OrderId: id,
		Price: px.Sub(decimal.RequireFromString("0.1")).String(), Qty: "0.002"})
	if err != nil || am.GetOrder().GetQty() != "0.002" {
		t.Fatalf("amend: %v %v", am, err)
	}
	open, err := w.c.ListOpenOrders(ctx, &exchangev1.ListOpenOrdersRequest{Account: w.acct, MarketType: spot, Symbol: "BTC-USDT"})
	if err != nil || len(open.GetOrders()) == 0 {
		t.Fatalf("open orders: %v %v", open, err)
	}
	c, err := w.c.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: w.acct, OrderId: id})
	if err != nil || c.GetOrder().GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_CANCELLED {
		t.Fatalf("cancel by id only: %v %v", c, err)
	}
	h, err := w.c.ListOrderHistory(ctx, &exchangev1.ListOrderHistoryRequest{Account: w.acct, MarketType: spot, Symbol: "BTC-USDT",
		Page: &exchangev1.HistoryPage{StartTime: time.Now().Add(-time.Hour).UnixMilli(), Limit: 50}})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, x := range h.GetOrders() {
		found = found || x.GetOrderId() == id
	}
	if !found {
		t.Fatal("cancelled order missing from history")
	}
	_, err = w.c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: w.acct, MarketType: spot, Symbol: "BTC-USDT", Side: exchangev1.Side_SIDE_BUY,
		Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: px.String(), Qty: "0.0010001"})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_PRECISION)
	_, err = w.c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: w.acct, MarketType: spot, Symbol: "BTC-USDT", Side: exchangev1.Side_SIDE_BUY,
		Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: px.String(), Qty: "500"})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS)
	_, err = w.c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: w.acct, MarketType: spot, Symbol: "BTC-USDT", OrderId: "123456789"})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND)
}

// TestSwapPositionFlow: a market buy in base units becomes a position of the same base size; a stop-loss algo
// order waits; close-position flattens it.
func TestSwapPositionFlow(t *testing.T) {
	w := shared(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	swap := exchangev1.MarketType_MARKET_TYPE_SWAP
	const sym = "ETH-USDT-SWAP"
	ins, err := w.c.ListInstruments(ctx, &exchangev1.ListInstrumentsRequest{MarketType: swap, Symbol: sym})
	if err != nil {
		t.Fatal(err)
	}
	in := ins.GetInstruments()[0]
	step := decimal.RequireFromString(in.GetStepSize())
	bid, _ := bestBid(t, w, swap, sym)
	qty := decimal.NewFromInt(50).Div(bid).Div(step).Ceil().Mul(step) // about 50 USDT
	if _, err := w.c.SetPositionMode(ctx, &exchangev1.SetPositionModeRequest{Account: w.acct, Mode: exchangev1.PositionMode_POSITION_MODE_ONE_WAY}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.c.SetLeverage(ctx, &exchangev1.SetLeverageRequest{Account: w.acct, Symbol: sym, Leverage: "5", MarginMode: exchangev1.MarginMode_MARGIN_MODE_CROSS}); err != nil {
		t.Fatal(err)
	}
	lev, err := w.c.GetLeverage(ctx, &exchangev1.GetLeverageRequest{Account: w.acct, Symbol: sym})
	if err != nil || lev.GetLeverage() != "5" {
		t.Fatalf("leverage %v %v", lev, err)
	}
	o, err := w.c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: w.acct, MarketType: swap, Symbol: sym, Side: exchangev1.Side_SIDE_BUY,
		Type: exchangev1.OrderType_ORDER_TYPE_MARKET, Qty: qty.String(), MarginMode: exchangev1.MarginMode_MARGIN_MODE_CROSS})
	if err != nil {
		t.Fatal(err)
	}
	if o.GetOrder().GetQty() != qty.String() {
		t.Fatalf("order qty %s, want %s", o.GetOrder().GetQty(), qty)
	}
	var pos *exchangev1.Position
	for deadline := time.Now().Add(5 * time.Second); pos == nil && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		ps, err := w.c.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: w.acct, Symbol: sym})
		if err != nil {
			t.Fatal(err)
		}
		if len(ps.GetPositions()) > 0 {
			pos = ps.GetPositions()[0]
		}
	}
	if pos == nil || !decimal.RequireFromString(pos.GetQty()).Equal(qty) {
		t.Fatalf("position %v, want %s base", pos, qty)
	}
	// A long breaks even a little above its entry (the fees); its cross margin ratio is well below 1.
	entry := decimal.RequireFromString(pos.GetEntryPrice())
	if be, err := decimal.NewFromString(pos.GetBreakEvenPrice()); err != nil || !be.GreaterThan(entry) || !be.LessThan(entry.Mul(decimal.RequireFromString("1.01"))) {
		t.Fatalf("break-even %q for entry %s", pos.GetBreakEvenPrice(), entry)
	}
	if r, err := decimal.NewFromString(pos.GetMarginRatio()); err != nil || !r.IsPositive() || !r.LessThan(decimal.RequireFromString("0.5")) {
		t.Fatalf("margin ratio %q", pos.GetMarginRatio())
	}
	stop := bid.Mul(decimal.RequireFromString("0.8")).Div(decimal.RequireFromString(in.GetTickSize())).Floor().Mul(decimal.RequireFromString(in.GetTickSize()))
	a, err := w.c.PlaceAlgoOrder(ctx, &exchangev1.PlaceAlgoOrderRequest{Account: w.acct, MarketType: swap, Symbol: sym, Side: exchangev1.Side_SIDE_SELL,
		Type: exchangev1.OrderType_ORDER_TYPE_STOP_MARKET, TriggerPrice: stop.String(), TriggerPriceType: exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK,
		Qty: qty.String(), ReduceOnly: true, MarginMode: exchangev1.MarginMode_MARGIN_MODE_CROSS})
	if err != nil {
		t.Fatal(err)
	}
	if a.GetAlgoOrder().GetStatus() != exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_WAITING || a.GetAlgoOrder().GetTriggerPriceType() != exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK {
		t.Fatalf("algo %v", a.GetAlgoOrder())
	}
	list, err := w.c.ListAlgoOrders(ctx, &exchangev1.ListAlgoOrdersRequest{Account: w.acct, MarketType: swap, Symbol: sym})
	if err != nil || len(list.GetAlgoOrders()) == 0 {
		t.Fatalf("algo list %v %v", list, err)
	}
	if _, err := w.c.CancelAlgoOrder(ctx, &exchangev1.CancelAlgoOrderRequest{Account: w.acct, MarketType: swap, Symbol: sym, AlgoId: a.GetAlgoOrder().GetAlgoId()}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.c.ClosePosition(ctx, &exchangev1.ClosePositionRequest{Account: w.acct, Symbol: sym, MarginMode: exchangev1.MarginMode_MARGIN_MODE_CROSS}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		ps, err := w.c.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: w.acct, Symbol: sym})
		if err != nil {
			t.Fatal(err)
		}
		if len(ps.GetPositions()) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("position still open: %v", ps.GetPositions())
		}
	}
	fills, err := w.c.ListFills(ctx, &exchangev1.ListFillsRequest{Account: w.acct, MarketType: swap, Symbol: sym, Page: &exchangev1.HistoryPage{Limit: 10}})
	if err != nil || len(fills.GetFills()) < 2 {
		t.Fatalf("fills %v %v", fills, err)
	}
}

// TestWallet: balances in both wallets, a transfer that moves 1 USDT, a deposit address and a convert quote.
func TestWallet(t *testing.T) {
	w := shared(t)
	ctx := t.Context()
	bal := func(wt exchangev1.WalletType) decimal.Decimal {
		r, err := w.c.GetBalances(ctx, &exchangev1.GetBalancesRequest{Account: w.acct, Wallet: wt})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range r.GetBalances() {
			if b.GetAsset() == "USDT" && b.GetWallet() == wt {
				return decimal.RequireFromString(b.GetAvailable())
			}
		}
		return decimal.Zero
	}
	before := bal(exchangev1.WalletType_WALLET_TYPE_TRADING)
	r, err := w.c.Transfer(ctx, &exchangev1.TransferRequest{Account: w.acct, Asset: "USDT", Amount: "1", From: exchangev1.WalletType_WALLET_TYPE_FUNDING,
		To: exchangev1.WalletType_WALLET_TYPE_TRADING})
	if err != nil {
		t.Fatal(err)
	}
	if r.GetTransfer().GetStatus() == exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS && !bal(exchangev1.WalletType_WALLET_TYPE_TRADING).Sub(before).Equal(decimal.NewFromInt(1)) {
		t.Fatal("transfer did not move 1 USDT")
	}
	addr, err := w.c.GetDepositAddress(ctx, &exchangev1.GetDepositAddressRequest{Account: w.acct, Asset: "USDT"})
	if err != nil || addr.GetAddress() == "" || addr.GetNetwork() == "" {
		t.Fatalf("deposit address %v %v", addr, err)
	}
	q, err := w.c.GetConvertQuote(ctx, &exchangev1.GetConvertQuoteRequest{Account: w.acct, FromAsset: "USDT", ToAsset: "BTC", FromAmount: "20"})
	if err != nil || q.GetQuote().GetFromAmount() != "20" {
		t.Fatalf("quote %v %v", q, err)
	}
	cv, err := w.c.Convert(ctx, &exchangev1.ConvertRequest{Account: w.acct, QuoteId: q.GetQuote().GetQuoteId()})
	if err != nil || cv.GetConvert().GetFromAsset() != "USDT" || cv.GetConvert().GetToAsset() != "BTC" {
		t.Fatalf("convert %v %v", cv, err)
	}
}

// TestAccountStream: a market order on the account shows up on StreamAccount as an order update and a fill, in
// base units.
// TestAccountStream: the stream starts with a snapshot, a filled order then arrives as order and fill events with
// contiguous sequences, and a dropped WebSocket gives RESYNCED followed by a fresh snapshot.
func TestAccountStream(t *testing.T) {
	w := shared(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	st, err := w.c.StreamAccount(ctx, &exchangev1.StreamAccountRequest{Account: w.acct})
	if err != nil {
		t.Fatal(err)
	}
	var seq int64
	recv := func() *exchangev1.AccountEvent {
		t.Helper()
		ev, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if ev.GetSequence() != seq+1 {
			t.Fatalf("sequence %d after %d: %v", ev.GetSequence(), seq, ev)
		}
		seq = ev.GetSequence()
		return ev
	}
	if ev := recv(); ev.GetSnapshot() == nil {
		t.Fatalf("first event %v, want a snapshot", ev)
	}
	o, err := w.c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: w.acct, MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT, Symbol: "ETH-USDT",
		Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_MARKET, Qty: "0.01"})
	if err != nil {
		t.Fatal(err)
	}
	var sawOrder, sawFill bool
	for !sawOrder || !sawFill {
		switch e := recv().GetEvent().(type) {
		case *exchangev1.AccountEvent_Order:
			sawOrder = sawOrder || e.Order.GetOrderId() == o.GetOrder().GetOrderId()
		case *exchangev1.AccountEvent_Fill:
			if e.Fill.GetOrderId() == o.GetOrder().GetOrderId() {
				if !sawOrder {
					t.Fatal("fill before its order")
				}
				if e.Fill.GetQty() == "" || decimal.RequireFromString(e.Fill.GetQty()).GreaterThan(decimal.RequireFromString("0.01")) {
					t.Fatalf("fill %v", e.Fill)
				}
				sawFill = true
			}
		case *exchangev1.AccountEvent_Snapshot:
			t.Fatalf("unexpected snapshot before the order's events")
		}
	}
	w.emu.DropConnections()
	var resynced bool
	for {
		ev := recv()
		if ev.GetStatus().GetState() == exchangev1.StreamStatus_STATE_RESYNCED {
			resynced = true
			continue
		}
		if ev.GetSnapshot() != nil {
			if !resynced {
				t.Fatal("snapshot without RESYNCED before it")
			}
			break
		}
		if resynced {
			t.Fatalf("%v between RESYNCED and the snapshot", ev)
		}
	}
}

func TestHedgeModeNeedsPositionSide(t *testing.T) {
	w := shared(t)
	ctx := t.Context()
	swap := exchangev1.MarketType_MARKET_TYPE_SWAP
	if _, err := w.c.SetPositionMode(ctx, &exchangev1.SetPositionModeRequest{Account: w.acct, Mode: exchangev1.PositionMode_POSITION_MODE_HEDGE}); err != nil {
		t.Fatal(err)
	}
	defer w.c.SetPositionMode(context.WithoutCancel(ctx), &exchangev1.SetPositionModeRequest{Account: w.acct, Mode: exchangev1.PositionMode_POSITION_MODE_ONE_WAY})
	m, err := w.c.GetPositionMode(ctx, &exchangev1.GetPositionModeRequest{Account: w.acct})
	if err != nil || m.GetMode() != exchangev1.PositionMode_POSITION_MODE_HEDGE {
		t.Fatalf("mode %v %v", m, err)
	}
	bid, _ := bestBid(t, w, swap, "SOL-USDT-SWAP")
	req := &exchangev1.PlaceOrderRequest{Account: w.acct, MarketType: swap, Symbol: "SOL-USDT-SWAP", Side: exchangev1.Side_SIDE_BUY,
		Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: bid.Mul(decimal.RequireFromString("0.9")).Round(2).String(), Qty: "1", MarginMode: exchangev1.MarginMode_MARGIN_MODE_CROSS}
	_, err = w.c.PlaceOrder(ctx, req)
	d := sdk.DetailOf(err)
	if d.GetReason() != exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH || d.GetExchangeCode() != "51000" {
		t.Fatalf("order without position side in hedge mode: %v", err)
	}
	req.PositionSide = exchangev1.PositionSide_POSITION_SIDE_LONG
	o, err := w.c.PlaceOrder(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if o.GetOrder().GetPositionSide() != exchangev1.PositionSide_POSITION_SIDE_LONG {
		t.Fatalf("order %v", o.GetOrder())
	}
	if _, err := w.c.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: w.acct, MarketType: swap, Symbol: "SOL-USDT-SWAP", OrderId: o.GetOrder().GetOrderId()}); err != nil {
		t.Fatal(err)
	}

	// A long opened at market is closed by close-position naming its side (reduce-only is implied there).
	req.Type, req.Price = exchangev1.OrderType_ORDER_TYPE_MARKET, ""
	if _, err := w.c.PlaceOrder(ctx, req); err != nil {
		t.Fatal(err)
	}
	long := func() string {
		ps, err := w.c.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: w.acct, Symbol: "SOL-USDT-SWAP"})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps.GetPositions() {
			if p.GetPositionSide() == exchangev1.PositionSide_POSITION_SIDE_LONG {
				return p.GetQty()
			}
		}
		return "0"
	}
	if q := long(); q == "0" {
		t.Fatal("no long position after a market buy in hedge mode")
	}
	if _, err := w.c.ClosePosition(ctx, &exchangev1.ClosePositionRequest{Account: w.acct, Symbol: "SOL-USDT-SWAP",
		PositionSide: exchangev1.PositionSide_POSITION_SIDE_LONG, MarginMode: exchangev1.MarginMode_MARGIN_MODE_CROSS}); err != nil {
		t.Fatalf("closing the long in hedge mode: %v", err)
	}
	if q := long(); q != "0" && !decimal.RequireFromString(q).IsZero() {
		t.Fatalf("long of %s left after close-position", q)
	}
}

// TestOCO places a take-profit / stop-loss pair on a long position as one OKX oco order and cancels it.
func TestOCO(t *testing.T) {
	w := shared(t)
	ctx := t.Context()
	swap := exchangev1.MarketType_MARKET_TYPE_SWAP
	const sym = "SOL-USDT-SWAP"
	in, err := w.srv.LookupInstrument(ctx, swap, sym)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: w.acct, MarketType: swap, Symbol: sym, Side: exchangev1.Side_SIDE_BUY,
		Type: exchangev1.OrderType_ORDER_TYPE_MARKET, Qty: in.FromOKXSize(in.MinSz.Mul(decimal.NewFromInt(10))).String(), MarginMode: exchangev1.MarginMode_MARGIN_MODE_CROSS}); err != nil {
		t.Fatal(err)
	}
	bid, _ := bestBid(t, w, swap, sym)
	tick := in.TickSz
	up := bid.Mul(decimal.RequireFromString("1.2")).Div(tick).Floor().Mul(tick)
	down := bid.Mul(decimal.RequireFromString("0.8")).Div(tick).Floor().Mul(tick)
	id, err := w.srv.PlaceOCO(ctx, w.acct, okx.AlgoRequest{Inst: in, TdMode: "cross", Side: "sell", Size: in.MinSz.Mul(decimal.NewFromInt(10)), ReduceOnly: true,
		TP: &okx.TpSlLeg{TriggerPrice: up, TriggerType: exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST},
		SL: &okx.TpSlLeg{TriggerPrice: down, TriggerType: exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK}})
	if err != nil || id == "" {
		t.Fatalf("oco: %q %v", id, err)
	}
	list, err := w.c.ListAlgoOrders(ctx, &exchangev1.ListAlgoOrdersRequest{Account: w.acct, MarketType: swap, Symbol: sym})
	if err != nil {
		t.Fatal(err)
	}
	var found *exchangev1.AlgoOrder
	for _, a := range list.GetAlgoOrders() {
		if a.GetAlgoId() == id {
			found = a
		}
	}
	if found == nil || found.GetStatus() != exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_WAITING || found.GetTriggerPrice() != down.String() {
		t.Fatalf("oco listed as %v", found)
	}
	if _, err := w.c.CancelAlgoOrder(ctx, &exchangev1.CancelAlgoOrderRequest{Account: w.acct, MarketType: swap, Symbol: sym, AlgoId: id}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.c.ClosePosition(ctx, &exchangev1.ClosePositionRequest{Account: w.acct, Symbol: sym, MarginMode: exchangev1.MarginMode_MARGIN_MODE_CROSS}); err != nil {
		t.Fatal(err)
	}
}
