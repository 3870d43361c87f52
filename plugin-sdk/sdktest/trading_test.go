package sdktest

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func TestLimitOrderWalksTheBook(t *testing.T) {
	_, c, _ := manual(t)
	ctx := context.Background()
	a := acct("taker")
	usdt0 := d(balanceOf(t, c, a, trading, "USDT").Total)
	btc0 := d(balanceOf(t, c, a, trading, "BTC").Total)
	b := book(t, c, spot, "BTCUSDT", 5)
	// Take all of the first ask level and part of the second, limited at the third level's price.
	qty := d(b.Asks[0].Qty).Add(d(b.Asks[1].Qty).Div(d("2")).Truncate(5))
	o := must(c.PlaceOrder(ctx, limit(a, spot, "BTCUSDT", buy, b.Asks[2].Price, qty.String(), exchangev1.TimeInForce_TIME_IN_FORCE_GTC))).Order
	if o.Status != exchangev1.OrderStatus_ORDER_STATUS_FILLED || o.FilledQty != qty.String() {
		t.Fatalf("order should fill at once: %v", o)
	}
	want := d(b.Asks[0].Price).Mul(d(b.Asks[0].Qty)).Add(d(b.Asks[1].Price).Mul(qty.Sub(d(b.Asks[0].Qty))))
	if !d(o.FilledQuote).Equal(want) {
		t.Fatalf("filled quote %s, want %s (taker gets the book's prices, not its limit)", o.FilledQuote, want)
	}
	fee := want.Mul(spotFee)
	if !d(o.Fee).Equal(fee) {
		t.Fatalf("fee %s, want %s", o.Fee, fee)
	}
	if got := d(balanceOf(t, c, a, trading, "USDT").Total); !got.Equal(usdt0.Sub(want).Sub(fee)) {
		t.Fatalf("USDT %s, want %s", got, usdt0.Sub(want).Sub(fee))
	}
	if got := d(balanceOf(t, c, a, trading, "BTC").Total); !got.Equal(btc0.Add(qty)) {
		t.Fatalf("BTC %s, want %s", got, btc0.Add(qty))
	}
	after := book(t, c, spot, "BTCUSDT", 5)
	if after.Asks[0].Price != b.Asks[1].Price || after.Sequence <= b.Sequence {
		t.Fatalf("the first ask level should be consumed and the sequence advance: %v", after)
	}
	fills := must(c.ListFills(ctx, &exchangev1.ListFillsRequest{Account: a})).Fills
	if len(fills) != 2 || fills[0].Maker || fills[0].OrderId != o.OrderId {
		t.Fatalf("want two taker fills, newest first: %v", fills)
	}
}

func TestTimeInForce(t *testing.T) {
	_, c, _ := manual(t)
	ctx := context.Background()
	a := acct("tif")
	b := book(t, c, swap, "ETHUSDT", 5)
	over := d(b.Asks[0].Qty).Add(d("0.001")).String()
	// IOC takes what the best level has and expires the rest.
	o := must(c.PlaceOrder(ctx, limit(a, swap, "ETHUSDT", buy, b.Asks[0].Price, over, exchangev1.TimeInForce_TIME_IN_FORCE_IOC))).Order
	if o.Status != exchangev1.OrderStatus_ORDER_STATUS_EXPIRED || o.FilledQty != b.Asks[0].Qty {
		t.Fatalf("IOC: %v", o)
	}
	// FOK with too little liquidity at the limit does nothing.
	b = book(t, c, swap, "ETHUSDT", 5)
	usdt := balanceOf(t, c, a, trading, "USDT")
	o = must(c.PlaceOrder(ctx, limit(a, swap, "ETHUSDT", buy, b.Asks[0].Price, d(b.Asks[0].Qty).Add(d("0.001")).String(), exchangev1.TimeInForce_TIME_IN_FORCE_FOK))).Order
	if o.Status != exchangev1.OrderStatus_ORDER_STATUS_EXPIRED || o.FilledQty != "0" {
		t.Fatalf("FOK: %v", o)
	}
	if after := balanceOf(t, c, a, trading, "USDT"); after.Total != usdt.Total || after.Locked != usdt.Locked {
		t.Fatalf("FOK changed the balance: %v -> %v", usdt, after)
	}
	// Post-only that would take is rejected; inside the spread it rests at the top of the book.
	_, err := c.PlaceOrder(ctx, limit(a, swap, "ETHUSDT", buy, b.Asks[0].Price, "0.01", exchangev1.TimeInForce_TIME_IN_FORCE_POST_ONLY))
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED)
	inside := d(b.Bids[0].Price).Add(d("0.01")).String()
	o = must(c.PlaceOrder(ctx, limit(a, swap, "ETHUSDT", buy, inside, "0.5", exchangev1.TimeInForce_TIME_IN_FORCE_POST_ONLY))).Order
	if o.Status != exchangev1.OrderStatus_ORDER_STATUS_NEW {
		t.Fatalf("post-only inside the spread: %v", o)
	}
	top := book(t, c, swap, "ETHUSDT", 1)
	if top.Bids[0].Price != inside || top.Bids[0].Qty != "0.5" {
		t.Fatalf("resting order should be the best bid: %v", top.Bids[0])
	}
}

func TestRestingOrdersMatchEachOther(t *testing.T) {
	_, c, _ := manual(t)
	ctx := context.Background()
	maker, taker := acct("maker"), acct("taker")
	b := book(t, c, spot, "BTCUSDT", 1)
	if gap := d(b.Asks[0].Price).Sub(d(b.Bids[0].Price)); gap.LessThanOrEqual(d("0.01")) {
		t.Fatalf("the BTCUSDT spread %s leaves no room inside", gap)
	}
	price := d(b.Asks[0].Price).Sub(d("0.01")).String()
	m := must(c.PlaceOrder(ctx, limit(maker, spot, "BTCUSDT", sell, price, "0.2", exchangev1.TimeInForce_TIME_IN_FORCE_GTC))).Order
	if m.Status != exchangev1.OrderStatus_ORDER_STATUS_NEW {
		t.Fatalf("maker should rest: %v", m)
	}
	if got := balanceOf(t, c, maker, trading, "BTC"); got.Locked != "0.2" {
		t.Fatalf("0.2 BTC should be locked: %v", got)
	}
	tk := must(c.PlaceOrder(ctx, limit(taker, spot, "BTCUSDT", buy, price, "0.2", exchangev1.TimeInForce_TIME_IN_FORCE_GTC))).Order
	if tk.Status != exchangev1.OrderStatus_ORDER_STATUS_FILLED || tk.AvgPrice != price {
		t.Fatalf("taker: %v", tk)
	}
	m = must(c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: maker, OrderId: m.OrderId})).Order
	if m.Status != exchangev1.OrderStatus_ORDER_STATUS_FILLED {
		t.Fatalf("maker: %v", m)
	}
	f := must(c.ListFills(ctx, &exchangev1.ListFillsRequest{Account: maker})).Fills
	if len(f) != 1 || !f[0].Maker || f[0].Price != price {
		t.Fatalf("maker fill: %v", f)
	}
	if got := balanceOf(t, c, maker, trading, "BTC"); got.Locked != "0" || got.Total != "0.3" {
		t.Fatalf("maker BTC after the sale: %v", got)
	}
}

func TestOrderLifecycleAndErrors(t *testing.T) {
	_, c, _ := manual(t)
	ctx := context.Background()
	a := acct("life")
	b := book(t, c, spot, "BTCUSDT", 1)
	low := d(b.Bids[0].Price).Mul(d("0.9")).Round(2)
	req := limit(a, spot, "BTCUSDT", buy, low.String(), "0.1", exchangev1.TimeInForce_TIME_IN_FORCE_GTC)
	req.ClientOrderId = "c1"
	o := must(c.PlaceOrder(ctx, req)).Order
	again := must(c.PlaceOrder(ctx, req)).Order
	if again.OrderId != o.OrderId {
		t.Fatal("client_order_id is not idempotent")
	}
	lock := low.Mul(d("0.1")).Mul(d("1.001"))
	if got := balanceOf(t, c, a, trading, "USDT"); !d(got.Locked).Equal(lock) {
		t.Fatalf("locked %s, want %s", got.Locked, lock)
	}
	am := must(c.AmendOrder(ctx, &exchangev1.AmendOrderRequest{Account: a, ClientOrderId: "c1", Price: low.Sub(d("1")).String(), Qty: "0.2"})).Order
	lock = low.Sub(d("1")).Mul(d("0.2")).Mul(d("1.001"))
	if am.Qty != "0.2" || am.OrderId != o.OrderId || !d(balanceOf(t, c, a, trading, "USDT").Locked).Equal(lock) {
		t.Fatalf("amend: %v, locked %s want %s", am, balanceOf(t, c, a, trading, "USDT").Locked, lock)
	}
	cx := must(c.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: a, OrderId: o.OrderId})).Order
	if cx.Status != exchangev1.OrderStatus_ORDER_STATUS_CANCELLED || balanceOf(t, c, a, trading, "USDT").Locked != "0" {
		t.Fatal("cancel should release the whole lock")
	}
	_, err := c.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: a, OrderId: o.OrderId})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED)
	_, err = c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: a, OrderId: "42"})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND)
	_, err = c.PlaceOrder(ctx, limit(a, spot, "BTCUSDT", buy, "100.001", "0.1", 0))
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_PRECISION)
	_, err = c.PlaceOrder(ctx, limit(a, spot, "BTCUSDT", buy, "100", "0.000001", 0))
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_PRECISION)
	_, err = c.PlaceOrder(ctx, limit(a, spot, "XYZUSDT", buy, "100", "1", 0))
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND)
	_, err = c.PlaceOrder(ctx, limit(a, spot, "BTCUSDT", buy, low.String(), "5", 0))
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS)
	_, err = c.PlaceOrder(ctx, limit(a, spot, "BTCUSDT", 0, low.String(), "0.1", 0))
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)
	_, err = c.PlaceOrder(ctx, limit(nil, spot, "BTCUSDT", buy, low.String(), "0.1", 0))
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED)
	hedgeReq := limit(a, swap, "BTCUSDT", buy, "50000", "0.01", 0)
	hedgeReq.PositionSide = exchangev1.PositionSide_POSITION_SIDE_LONG
	_, err = c.PlaceOrder(ctx, hedgeReq)
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH)
	// Cancel-all takes every open order of the symbol.
	for _, p := range []string{"50000", "50001"} {
		must(c.PlaceOrder(ctx, limit(a, spot, "BTCUSDT", buy, p, "0.01", 0)))
	}
	all := must(c.CancelAllOrders(ctx, &exchangev1.CancelAllOrdersRequest{Account: a, MarketType: spot, Symbol: "BTCUSDT"})).Orders
	open := must(c.ListOpenOrders(ctx, &exchangev1.ListOpenOrdersRequest{Account: a})).Orders
	if len(all) != 2 || len(open) != 0 {
		t.Fatalf("cancel-all cancelled %d, %d still open", len(all), len(open))
	}
	hist := must(c.ListOrderHistory(ctx, &exchangev1.ListOrderHistoryRequest{Account: a, Page: &exchangev1.HistoryPage{Limit: 2}}))
	if len(hist.Orders) != 2 || hist.NextCursor == "" {
		t.Fatalf("history page: %d orders, cursor %q", len(hist.Orders), hist.NextCursor)
	}
	rest := must(c.ListOrderHistory(ctx, &exchangev1.ListOrderHistoryRequest{Account: a, Page: &exchangev1.HistoryPage{Limit: 2, Cursor: hist.NextCursor}}))
	if len(rest.Orders) != 1 || rest.Orders[0].OrderId != o.OrderId || rest.NextCursor != "" {
		t.Fatalf("second page: %v", rest)
	}
}

func TestPositionsOneWayAndHedge(t *testing.T) {
	_, c, _ := manual(t)
	ctx := context.Background()
	a := acct("pos")
	must(c.PlaceOrder(ctx, market(a, swap, "BTCUSDT", buy, "0.01")))
	ps := must(c.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: a})).Positions
	if len(ps) != 1 || ps[0].Qty != "0.01" || ps[0].PositionSide != exchangev1.PositionSide_POSITION_SIDE_NET {
		t.Fatalf("after a buy: %v", ps)
	}
	entry := d(ps[0].EntryPrice)
	// Selling more than the position flips it; the closed part realizes PnL.
	sold := must(c.PlaceOrder(ctx, market(a, swap, "BTCUSDT", sell, "0.03"))).Order
	ps = must(c.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: a})).Positions
	if len(ps) != 1 || ps[0].Qty != "-0.02" {
		t.Fatalf("after the flip: %v", ps)
	}
	fills := must(c.ListFills(ctx, &exchangev1.ListFillsRequest{Account: a})).Fills
	realized := decimal.Zero
	for _, f := range fills {
		if f.OrderId == sold.OrderId {
			realized = realized.Add(d(f.RealizedPnl))
		}
	}
	if want := d(sold.AvgPrice).Sub(entry).Mul(d("0.01")); !realized.Round(6).Equal(want.Round(6)) {
		t.Fatalf("realized %s, want about %s", realized, want)
	}
	_, err := c.SetPositionMode(ctx, &exchangev1.SetPositionModeRequest{Account: a, Mode: exchangev1.PositionMode_POSITION_MODE_HEDGE})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED)
	must(c.ClosePosition(ctx, &exchangev1.ClosePositionRequest{Account: a, Symbol: "BTCUSDT"}))
	if ps := must(c.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: a})).Positions; len(ps) != 0 {
		t.Fatalf("closed, but: %v", ps)
	}
	if got := balanceOf(t, c, a, trading, "USDT"); got.Locked != "0" {
		t.Fatalf("no position, no order, but %s locked", got.Locked)
	}
	// Hedge mode: a long and a short side by side; closing more than the long closes only the long.
	must(c.SetPositionMode(ctx, &exchangev1.SetPositionModeRequest{Account: a, Mode: exchangev1.PositionMode_POSITION_MODE_HEDGE}))
	long := market(a, swap, "BTCUSDT", buy, "0.01")
	long.PositionSide = exchangev1.PositionSide_POSITION_SIDE_LONG
	must(c.PlaceOrder(ctx, long))
	short := market(a, swap, "BTCUSDT", sell, "0.02")
	short.PositionSide = exchangev1.PositionSide_POSITION_SIDE_SHORT
	must(c.PlaceOrder(ctx, short))
	if ps := must(c.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: a})).Positions; len(ps) != 2 {
		t.Fatalf("hedge positions: %v", ps)
	}
	closeLong := market(a, swap, "BTCUSDT", sell, "0.05")
	closeLong.PositionSide = exchangev1.PositionSide_POSITION_SIDE_LONG
	o := must(c.PlaceOrder(ctx, closeLong)).Order
	if o.FilledQty != "0.01" || o.Status != exchangev1.OrderStatus_ORDER_STATUS_EXPIRED {
		t.Fatalf("closing order should fill only the long's 0.01: %v", o)
	}
	ps = must(c.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: a})).Positions
	if len(ps) != 1 || ps[0].PositionSide != exchangev1.PositionSide_POSITION_SIDE_SHORT || ps[0].Qty != "0.02" {
		t.Fatalf("only the short should remain: %v", ps)
	}
	_, err = c.PlaceOrder(ctx, market(a, swap, "BTCUSDT", buy, "0.01"))
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH)
	// Leverage: going from 10x to 20x halves the short's margin.
	before := d(ps[0].Margin)
	must(c.SetLeverage(ctx, &exchangev1.SetLeverageRequest{Account: a, Symbol: "BTCUSDT", Leverage: "20"}))
	ps = must(c.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: a})).Positions
	if half := before.Div(d("2")).Round(8); d(ps[0].Margin).Sub(half).Abs().GreaterThan(d("0.00000002")) || ps[0].Leverage != "20" {
		t.Fatalf("margin %s at 20x, want about %s", ps[0].Margin, half)
	}
	_, err = c.SetLeverage(ctx, &exchangev1.SetLeverageRequest{Account: a, Symbol: "BTCUSDT", Leverage: "1000"})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)
	_, err = c.SetMarginMode(ctx, &exchangev1.SetMarginModeRequest{Account: a, Symbol: "BTCUSDT", MarginMode: exchangev1.MarginMode_MARGIN_MODE_ISOLATED})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED)
}

func TestAlgoOrdersTrigger(t *testing.T) {
	s, c, clock := manual(t)
	ctx := context.Background()
	a := acct("algo")
	last := d(must(c.GetTickers(ctx, &exchangev1.GetTickersRequest{MarketType: swap, Symbols: []string{"BTCUSDT"}})).Tickers[0].Last)
	up := last.Mul(d("1.0004")).Round(1).String()
	down := last.Mul(d("0.9996")).Round(1).String()
	var ids []string
	for _, x := range []struct {
		side    exchangev1.Side
		trigger string
		tt      exchangev1.TriggerPriceType
	}{{buy, up, exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST}, {sell, down, exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK}} {
		g := must(c.PlaceAlgoOrder(ctx, &exchangev1.PlaceAlgoOrderRequest{Account: a, MarketType: swap, Symbol: "BTCUSDT", Side: x.side,
			Type: exchangev1.OrderType_ORDER_TYPE_STOP_MARKET, TriggerPrice: x.trigger, TriggerPriceType: x.tt, Qty: "0.01"})).AlgoOrder
		ids = append(ids, g.AlgoId)
	}
	var triggered *exchangev1.AlgoOrder
	for i := 0; i < 20_000 && triggered == nil; i++ {
		step(s, clock, 1)
		for _, g := range must(c.ListAlgoOrders(ctx, &exchangev1.ListAlgoOrdersRequest{Account: a, IncludeHistory: true})).AlgoOrders {
			if g.Status == exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_TRIGGERED {
				triggered = g
			}
		}
	}
	if triggered == nil {
		t.Fatal("neither stop triggered in 20000 ticks")
	}
	o := must(c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: a, OrderId: triggered.OrderId})).Order
	if o.AlgoId != triggered.AlgoId || o.Status != exchangev1.OrderStatus_ORDER_STATUS_FILLED || o.Type != exchangev1.OrderType_ORDER_TYPE_MARKET {
		t.Fatalf("triggered order: %v", o)
	}
	for _, id := range ids {
		if id != triggered.AlgoId {
			g := must(c.CancelAlgoOrder(ctx, &exchangev1.CancelAlgoOrderRequest{Account: a, AlgoId: id})).AlgoOrder
			if g.Status != exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_CANCELLED {
				t.Fatalf("cancel algo: %v", g)
			}
		}
	}
	_, err := c.PlaceAlgoOrder(ctx, &exchangev1.PlaceAlgoOrderRequest{Account: a, MarketType: spot, Symbol: "BTCUSDT", Side: buy,
		Type: exchangev1.OrderType_ORDER_TYPE_STOP_MARKET, TriggerPrice: up, TriggerPriceType: exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK, Qty: "0.01"})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)
}

// TestBalancesNeverNegative drives random orders, amends, cancels and ticks, and checks after every step that
// no balance is negative and that locked funds are exactly what open orders and positions hold.
func TestBalancesNeverNegative(t *testing.T) {
	s, c, clock := manual(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	accounts := []*exchangev1.AccountRef{acct("r1"), acct("r2"), acct("r3")}
	for _, a := range accounts {
		must(c.SetLeverage(ctx, &exchangev1.SetLeverageRequest{Account: a, Symbol: "SOLUSDT", Leverage: "50"}))
	}
	var open []struct {
		a  *exchangev1.AccountRef
		id string
	}
	placed, filled := 0, 0
	for i := range 1500 {
		a := accounts[rng.IntN(len(accounts))]
		in := s.ordered[rng.IntN(len(s.ordered))]
		mt, sym := in.spec.marketType, in.info.Symbol
		side := buy
		if rng.IntN(2) == 0 {
			side = sell
		}
		qty := in.qty(in.minQty * int64(1+rng.IntN(3000))).String()
		switch rng.IntN(6) {
		case 0, 1:
			s.mu.Lock()
			px := in.price(in.mid() + int64(rng.IntN(41)-20)*in.spec.levelGap).String()
			s.mu.Unlock()
			if o, err := c.PlaceOrder(ctx, limit(a, mt, sym, side, px, qty, exchangev1.TimeInForce(1+rng.IntN(4)))); err == nil {
				placed++
				open = append(open, struct {
					a  *exchangev1.AccountRef
					id string
				}{a, o.Order.OrderId})
			}
		case 2:
			if o, err := c.PlaceOrder(ctx, market(a, mt, sym, side, qty)); err == nil && o.Order.FilledQty != "0" {
				filled++
			}
		case 3:
			if len(open) > 0 {
				k := rng.IntN(len(open))
				_, _ = c.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: open[k].a, OrderId: open[k].id})
			}
		case 4:
			if len(open) > 0 {
				k := rng.IntN(len(open))
				_, _ = c.AmendOrder(ctx, &exchangev1.AmendOrderRequest{Account: open[k].a, OrderId: open[k].id, Qty: qty})
			}
		default:
			step(s, clock, 1+rng.IntN(20))
		}
		checkInvariants(t, s, i)
	}
	if placed < 100 || filled < 50 {
		t.Fatalf("the random walk exercised too little: %d limit orders placed, %d market orders filled", placed, filled)
	}
}

func checkInvariants(t *testing.T, s *Server, step int) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.accounts {
		held := map[string]decimal.Decimal{}
		for _, o := range a.orders {
			if o.open() {
				held[o.lockAsset] = held[o.lockAsset].Add(o.locked)
			} else if !o.locked.IsZero() {
				t.Fatalf("step %d: finished order %s still holds %s", step, o.id, o.locked)
			}
		}
		for _, p := range a.positions {
			held["USDT"] = held["USDT"].Add(p.margin)
			if p.qty == 0 && !p.margin.IsZero() {
				t.Fatalf("step %d: flat position with margin %s", step, p.margin)
			}
		}
		for k, b := range a.balances {
			if b.total.IsNegative() || b.locked.IsNegative() || b.available().IsNegative() {
				t.Fatalf("step %d: %s %v %s negative: total %s locked %s", step, a.id, k.wallet, k.asset, b.total, b.locked)
			}
			if k.wallet == exchangev1.WalletType_WALLET_TYPE_TRADING && !b.locked.Equal(held[k.asset]) {
				t.Fatalf("step %d: %s %s locked %s but orders and positions hold %s", step, a.id, k.asset, b.locked, held[k.asset])
			}
			if k.wallet == exchangev1.WalletType_WALLET_TYPE_TRADING && b.locked.GreaterThan(b.total) && k.asset != "USDT" {
				t.Fatalf("step %d: %s %s locked %s above total %s", step, a.id, k.asset, b.locked, b.total)
			}
		}
	}
}

func TestLiquidationKeepsBalancesNonNegative(t *testing.T) {
	for _, mode := range []exchangev1.MarginMode{exchangev1.MarginMode_MARGIN_MODE_CROSS, exchangev1.MarginMode_MARGIN_MODE_ISOLATED} {
		t.Run(mode.String(), func(t *testing.T) {
			s, c, clock := manual(t)
			ctx := context.Background()
			a := acct("risky")
			// Keep only 200 USDT in trading and open about 9000 USDT of SOL at 50x.
			must(c.Transfer(ctx, &exchangev1.TransferRequest{Account: a, Asset: "USDT", Amount: "49800", From: trading, To: funding}))
			must(c.SetLeverage(ctx, &exchangev1.SetLeverageRequest{Account: a, Symbol: "SOLUSDT", Leverage: "50", MarginMode: mode}))
			must(c.PlaceOrder(ctx, market(a, swap, "SOLUSDT", buy, "60")))
			// Park an order too: liquidation must release its lock.
			must(c.PlaceOrder(ctx, limit(a, swap, "SOLUSDT", buy, "100", "1", 0)))
			if ps := must(c.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: a})).Positions; len(ps) != 1 {
				t.Fatalf("positions: %v", ps)
			}
			// Crash the underlying by 10%: far beyond a 50x position's margin.
			s.mu.Lock()
			s.unds["SOL"].price = s.unds["SOL"].price * 9 / 10
			s.mu.Unlock()
			step(s, clock, 1)
			if ps := must(c.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: a})).Positions; len(ps) != 0 {
				t.Fatalf("the position should be liquidated: %v", ps)
			}
			b := balanceOf(t, c, a, trading, "USDT")
			if d(b.Total).IsNegative() || b.Locked != "0" || d(b.Available).IsNegative() {
				t.Fatalf("after liquidation: %v", b)
			}
			if open := must(c.ListOpenOrders(ctx, &exchangev1.ListOpenOrdersRequest{Account: a})).Orders; len(open) != 0 {
				t.Fatalf("liquidation should cancel the SOL orders: %v", open)
			}
			checkInvariants(t, s, 0)
		})
	}
}
