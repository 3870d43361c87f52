package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// plan is how trading checks place orders: a small limit buy well below the market, so it rests and never fills.
type plan struct {
	in      *exchangev1.Instrument
	mt      exchangev1.MarketType
	price   decimal.Decimal
	qty     decimal.Decimal
	tick    decimal.Decimal
	step    decimal.Decimal
	posSide exchangev1.PositionSide
	// SWAP: the margin mode every order of the plan states (the symbol's current mode where the plugin reads it,
	// else the first mode it claims); UNSPECIFIED on spot.
	marginMode exchangev1.MarginMode
}

func (e *env) plan(ctx context.Context) (*plan, error) {
	if err := e.needTrading(); err != nil {
		return nil, err
	}
	return e.planFor(ctx, e.tradeSymbol())
}

// planFor prices resting orders on one instrument.
func (e *env) planFor(ctx context.Context, in *exchangev1.Instrument) (*plan, error) {
	p := &plan{in: in, mt: in.GetMarketType()}
	p.tick, _ = dec("tick_size", in.GetTickSize())
	p.step, _ = dec("step_size", in.GetStepSize())
	r, err := e.c.GetOrderBook(ctx, &exchangev1.GetOrderBookRequest{MarketType: p.mt, Symbol: in.GetSymbol(), Depth: 5})
	if err != nil {
		return nil, describeErr("GetOrderBook", err)
	}
	if len(r.GetBook().GetBids()) == 0 {
		return nil, errors.New("the book has no bids to price a resting order from")
	}
	bid, err := positive("bid", r.GetBook().GetBids()[0].GetPrice())
	if err != nil {
		return nil, err
	}
	p.price = bid.Mul(decimal.New(9, -1)).Div(p.tick).Floor().Mul(p.tick)
	if mp, err := dec("min_price", in.GetMinPrice()); in.GetMinPrice() != "" && err == nil && p.price.LessThan(mp) {
		p.price = mp
	}
	if !p.price.IsPositive() {
		p.price = p.tick
	}
	p.qty, _ = dec("min_qty", in.GetMinQty())
	// Order value: 1.5 x the declared minimum notional, and never under 10 quote units, because many exchanges
	// enforce a minimum order value they do not publish per instrument (OKX's 51020, for one).
	value := decimal.New(10, 0)
	if mn, err := dec("min_notional", in.GetMinNotional()); in.GetMinNotional() != "" && err == nil {
		value = decimal.Max(value, mn.Mul(decimal.New(15, -1)))
	}
	p.qty = decimal.Max(p.qty, value.Div(p.price).Div(p.step).Ceil().Mul(p.step))
	if p.mt == exchangev1.MarketType_MARKET_TYPE_SWAP {
		if m, err := e.c.GetPositionMode(ctx, &exchangev1.GetPositionModeRequest{Account: e.opts.Account}); err == nil &&
			m.GetMode() == exchangev1.PositionMode_POSITION_MODE_HEDGE {
			p.posSide = exchangev1.PositionSide_POSITION_SIDE_LONG
		}
		p.marginMode = e.marginModeFor(ctx, in)
	}
	return p, nil
}

// marginModeFor is the margin mode SWAP orders on in state: the symbol's current mode when GetLeverage reports one,
// else the first mode the plugin claims for SWAP, else CROSS.
func (e *env) marginModeFor(ctx context.Context, in *exchangev1.Instrument) exchangev1.MarginMode {
	if lv, err := e.c.GetLeverage(ctx, &exchangev1.GetLeverageRequest{Account: e.opts.Account, Symbol: in.GetSymbol()}); err == nil &&
		lv.GetMarginMode() != exchangev1.MarginMode_MARGIN_MODE_UNSPECIFIED {
		return lv.GetMarginMode()
	}
	t := e.trading()
	for _, m := range t.GetMarkets() {
		if m.GetMarketType() == exchangev1.MarketType_MARKET_TYPE_SWAP && len(m.GetMarginModes()) > 0 {
			return m.GetMarginModes()[0]
		}
	}
	if len(t.GetMarginModes()) > 0 {
		return t.GetMarginModes()[0]
	}
	return exchangev1.MarginMode_MARGIN_MODE_CROSS
}

func (e *env) limitBuy(p *plan, price, qty decimal.Decimal, clientID string) *exchangev1.PlaceOrderRequest {
	return &exchangev1.PlaceOrderRequest{
		Account: e.opts.Account, MarketType: p.mt, Symbol: p.in.GetSymbol(), Side: exchangev1.Side_SIDE_BUY,
		Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, TimeInForce: exchangev1.TimeInForce_TIME_IN_FORCE_GTC,
		Price: price.String(), Qty: qty.String(), ClientOrderId: clientID, PositionSide: p.posSide, MarginMode: p.marginMode,
	}
}

// place sends an order and remembers it for the clean-up at the end of the run.
func (e *env) place(ctx context.Context, req *exchangev1.PlaceOrderRequest) (*exchangev1.Order, error) {
	r, err := e.c.PlaceOrder(ctx, req)
	if err != nil {
		return nil, err
	}
	e.orderIDs = append(e.orderIDs, r.GetOrder().GetOrderId())
	return r.GetOrder(), nil
}

func sameDec(field, got string, want decimal.Decimal) error {
	g, err := dec(field, got)
	if err != nil {
		return err
	}
	if !g.Equal(want) {
		return fmt.Errorf("%s is %s, want %s", field, got, want)
	}
	return nil
}

func (e *env) getOrder(ctx context.Context, p *plan, id, clientID string) (*exchangev1.Order, error) {
	r, err := e.c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: e.opts.Account, MarketType: p.mt, Symbol: p.in.GetSymbol(), OrderId: id, ClientOrderId: clientID})
	if err != nil {
		return nil, describeErr("GetOrder", err)
	}
	return r.GetOrder(), nil
}

func (e *env) isOpen(ctx context.Context, p *plan, id string) (bool, error) {
	r, err := e.c.ListOpenOrders(ctx, &exchangev1.ListOpenOrdersRequest{Account: e.opts.Account, MarketType: p.mt, Symbol: p.in.GetSymbol()})
	if err != nil {
		return false, describeErr("ListOpenOrders", err)
	}
	return slices.ContainsFunc(r.GetOrders(), func(o *exchangev1.Order) bool { return o.GetOrderId() == id }), nil
}

func checkRoundTrip(ctx context.Context, e *env) error {
	p, err := e.plan(ctx)
	if err != nil {
		return err
	}
	cid := e.clientID("rt")
	o, err := e.place(ctx, e.limitBuy(p, p.price, p.qty, cid))
	if err != nil {
		return describeErr(fmt.Sprintf("PlaceOrder %s %s @ %s", p.in.GetSymbol(), p.qty, p.price), err)
	}
	if o.GetOrderId() == "" {
		return errors.New("PlaceOrder returned no order_id")
	}
	if o.GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_NEW {
		return fmt.Errorf("a limit buy 10%% below the bid is %v, want NEW", o.GetStatus())
	}
	if err := errors.Join(sameDec("price", o.GetPrice(), p.price), sameDec("qty", o.GetQty(), p.qty)); err != nil {
		return fmt.Errorf("placed order: %w", err)
	}
	if o.GetClientOrderId() != cid || o.GetSide() != exchangev1.Side_SIDE_BUY || o.GetSymbol() != p.in.GetSymbol() {
		return fmt.Errorf("placed order does not echo client_order_id/side/symbol: %q %v %q", o.GetClientOrderId(), o.GetSide(), o.GetSymbol())
	}
	got, err := e.getOrder(ctx, p, o.GetOrderId(), "")
	if err != nil {
		return err
	}
	if got.GetOrderId() != o.GetOrderId() || got.GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_NEW {
		return fmt.Errorf("GetOrder by id: %s %v", got.GetOrderId(), got.GetStatus())
	}
	if byClient, err := e.getOrder(ctx, p, "", cid); err != nil {
		return fmt.Errorf("by client_order_id: %w", err)
	} else if byClient.GetOrderId() != o.GetOrderId() {
		return fmt.Errorf("GetOrder by client_order_id returned order %s, want %s", byClient.GetOrderId(), o.GetOrderId())
	}
	if open, err := e.isOpen(ctx, p, o.GetOrderId()); err != nil || !open {
		return errors.Join(err, errors.New("the order is missing from ListOpenOrders"))
	}
	if e.trading().GetAmend() {
		price2 := decimal.Max(p.price.Sub(p.tick), p.tick)
		qty2 := p.qty.Mul(decimal.NewFromInt(2))
		r, err := e.c.AmendOrder(ctx, &exchangev1.AmendOrderRequest{Account: e.opts.Account, MarketType: p.mt, Symbol: p.in.GetSymbol(),
			OrderId: o.GetOrderId(), Price: price2.String(), Qty: qty2.String()})
		if err != nil {
			return describeErr("AmendOrder", err)
		}
		if err := errors.Join(sameDec("amended price", r.GetOrder().GetPrice(), price2), sameDec("amended qty", r.GetOrder().GetQty(), qty2)); err != nil {
			return err
		}
		got, err := e.getOrder(ctx, p, o.GetOrderId(), "")
		if err != nil {
			return err
		}
		if err := errors.Join(sameDec("price after amend (GetOrder)", got.GetPrice(), price2),
			sameDec("qty after amend (GetOrder)", got.GetQty(), qty2)); err != nil {
			return err
		}
	}
	c, err := e.c.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: e.opts.Account, MarketType: p.mt, Symbol: p.in.GetSymbol(), OrderId: o.GetOrderId()})
	if err != nil {
		return describeErr("CancelOrder", err)
	}
	if c.GetOrder().GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_CANCELLED {
		return fmt.Errorf("CancelOrder returned status %v", c.GetOrder().GetStatus())
	}
	if got, err := e.getOrder(ctx, p, o.GetOrderId(), ""); err != nil {
		return err
	} else if got.GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_CANCELLED {
		return fmt.Errorf("GetOrder after cancel: status %v", got.GetStatus())
	}
	if open, err := e.isOpen(ctx, p, o.GetOrderId()); err != nil || open {
		return errors.Join(err, errors.New("the cancelled order is still in ListOpenOrders"))
	}
	h, err := e.c.ListOrderHistory(ctx, &exchangev1.ListOrderHistoryRequest{Account: e.opts.Account, MarketType: p.mt, Symbol: p.in.GetSymbol(),
		Page: &exchangev1.HistoryPage{StartTime: time.Now().Add(-time.Hour).UnixMilli(), Limit: 50}})
	if err != nil {
		return describeErr("ListOrderHistory", err)
	}
	if !slices.ContainsFunc(h.GetOrders(), func(x *exchangev1.Order) bool { return x.GetOrderId() == o.GetOrderId() }) {
		return errors.New("the cancelled order is missing from ListOrderHistory")
	}
	return nil
}

// countClientID counts the orders of the plan's symbol that carry clientID: open ones and the recent history
// (some exchanges list only finished orders in their history), each order once.
func (e *env) countClientID(ctx context.Context, p *plan, clientID string) (int, error) {
	open, err := e.c.ListOpenOrders(ctx, &exchangev1.ListOpenOrdersRequest{Account: e.opts.Account, MarketType: p.mt, Symbol: p.in.GetSymbol()})
	if err != nil {
		return 0, describeErr("ListOpenOrders", err)
	}
	h, err := e.c.ListOrderHistory(ctx, &exchangev1.ListOrderHistoryRequest{Account: e.opts.Account, MarketType: p.mt, Symbol: p.in.GetSymbol(),
		Page: &exchangev1.HistoryPage{StartTime: time.Now().Add(-time.Hour).UnixMilli(), Limit: 100}})
	if err != nil {
		return 0, describeErr("ListOrderHistory", err)
	}
	ids := map[string]bool{}
	for _, o := range append(open.GetOrders(), h.GetOrders()...) {
		if o.GetClientOrderId() == clientID {
			ids[o.GetOrderId()] = true
		}
	}
	return len(ids), nil
}

func checkIdempotent(ctx context.Context, e *env) error {
	p, err := e.plan(ctx)
	if err != nil {
		return err
	}
	if !e.marketCaps(p.mt).idempotent {
		return na("the plugin does not claim idempotent client order ids on %v", p.mt)
	}
	// A resting order: the same request twice is one order on the exchange.
	cid := e.clientID("idem")
	req := e.limitBuy(p, p.price, p.qty, cid)
	a, err := e.place(ctx, req)
	if err != nil {
		return describeErr("PlaceOrder", err)
	}
	b, err := e.place(ctx, req)
	if err != nil {
		return describeErr("PlaceOrder again with the same client_order_id", err)
	}
	if a.GetOrderId() != b.GetOrderId() {
		return fmt.Errorf("the same client_order_id created two orders: %s and %s", a.GetOrderId(), b.GetOrderId())
	}
	if n, err := e.countClientID(ctx, p, cid); err != nil || n != 1 {
		return errors.Join(err, fmt.Errorf("the exchange holds %d orders with client_order_id %s, want exactly 1", n, cid))
	}
	// The same id with other parameters is refused, never a second order.
	other := e.limitBuy(p, decimal.Max(p.price.Sub(p.tick), p.tick), p.qty, cid)
	_, err = e.place(ctx, other)
	if err := reasonIs(err, exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID); err != nil {
		return fmt.Errorf("the same client_order_id at another price: %w", err)
	}
	if n, err := e.countClientID(ctx, p, cid); err != nil || n != 1 {
		return errors.Join(err, fmt.Errorf("after a refused duplicate the exchange holds %d orders with client_order_id %s, want 1", n, cid))
	}
	if _, err = e.c.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: e.opts.Account, MarketType: p.mt, Symbol: p.in.GetSymbol(), OrderId: a.GetOrderId()}); err != nil {
		return describeErr("CancelOrder", err)
	}
	// A filled order: repeating it must not trade again (exchanges that only refuse duplicates of open orders
	// need the plugin to look the id up first).
	fcid := e.clientID("idemf")
	buy := e.marketOrder(p, exchangev1.Side_SIDE_BUY, p.qty, fcid, false)
	f1, err := e.place(ctx, buy)
	if err != nil {
		return describeErr("market PlaceOrder", err)
	}
	defer e.flatten(ctx, p, p.qty)
	f2, err := e.place(ctx, buy)
	if err != nil {
		return describeErr("market PlaceOrder again with the same client_order_id", err)
	}
	if f1.GetOrderId() != f2.GetOrderId() {
		return fmt.Errorf("the same client_order_id of a filled order created a second order: %s and %s", f1.GetOrderId(), f2.GetOrderId())
	}
	if n, err := e.countClientID(ctx, p, fcid); err != nil || n != 1 {
		return errors.Join(err, fmt.Errorf("the exchange holds %d orders with client_order_id %s after a fill, want exactly 1", n, fcid))
	}
	return nil
}

// marketOrder is a market order on the plan's instrument. reduce marks a closing SWAP order (reduce_only in one-way
// mode; in hedge mode the position side says it).
func (e *env) marketOrder(p *plan, side exchangev1.Side, qty decimal.Decimal, clientID string, reduce bool) *exchangev1.PlaceOrderRequest {
	r := &exchangev1.PlaceOrderRequest{
		Account: e.opts.Account, MarketType: p.mt, Symbol: p.in.GetSymbol(), Side: side, Type: exchangev1.OrderType_ORDER_TYPE_MARKET,
		Qty: qty.String(), ClientOrderId: clientID, PositionSide: p.posSide, MarginMode: p.marginMode,
	}
	if reduce && p.mt == exchangev1.MarketType_MARKET_TYPE_SWAP && p.posSide != exchangev1.PositionSide_POSITION_SIDE_LONG {
		r.ReduceOnly = true
	}
	return r
}

// flatten sells back what a check bought (best effort: the check's verdict does not depend on it).
func (e *env) flatten(ctx context.Context, p *plan, qty decimal.Decimal) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_, _ = e.c.PlaceOrder(cctx, e.marketOrder(p, exchangev1.Side_SIDE_SELL, qty, "", true))
}

func checkCancelAll(ctx context.Context, e *env) error {
	p, err := e.plan(ctx)
	if err != nil {
		return err
	}
	if !e.trading().GetCancelAll() {
		return na("the plugin does not claim cancel-all")
	}
	// An order on another symbol of the same market type must survive a cancel-all of this symbol.
	var otherID string
	var other *plan
	for _, in := range e.insts[p.mt] {
		if in.GetSymbol() == p.in.GetSymbol() || in.GetStatus() != exchangev1.InstrumentStatus_INSTRUMENT_STATUS_TRADING || in.GetQuote() != p.in.GetQuote() {
			continue
		}
		op, err := e.planFor(ctx, in)
		if err != nil {
			continue
		}
		o, err := e.place(ctx, e.limitBuy(op, op.price, op.qty, e.clientID("cax")))
		if err != nil {
			continue // the other symbol may need more funds than the account holds: test without it
		}
		otherID, other = o.GetOrderId(), op
		break
	}
	var ids []string
	for i, price := range []decimal.Decimal{p.price, decimal.Max(p.price.Sub(p.tick), p.tick)} {
		o, err := e.place(ctx, e.limitBuy(p, price, p.qty, e.clientID(fmt.Sprintf("ca%d", i))))
		if err != nil {
			return describeErr("PlaceOrder", err)
		}
		ids = append(ids, o.GetOrderId())
	}
	if _, err := e.c.CancelAllOrders(ctx, &exchangev1.CancelAllOrdersRequest{Account: e.opts.Account, MarketType: p.mt, Symbol: p.in.GetSymbol()}); err != nil {
		return describeErr("CancelAllOrders", err)
	}
	for _, id := range ids {
		o, err := e.getOrder(ctx, p, id, "")
		if err != nil {
			return err
		}
		if o.GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_CANCELLED {
			return fmt.Errorf("order %s is %v after CancelAllOrders", id, o.GetStatus())
		}
	}
	if other != nil {
		o, err := e.getOrder(ctx, other, otherID, "")
		if err != nil {
			return err
		}
		if o.GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_NEW {
			return fmt.Errorf("CancelAllOrders of %s also touched order %s on %s (now %v)", p.in.GetSymbol(), otherID, other.in.GetSymbol(), o.GetStatus())
		}
		if _, err := e.c.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: e.opts.Account, MarketType: other.mt, Symbol: other.in.GetSymbol(), OrderId: otherID}); err != nil {
			return describeErr("CancelOrder", err)
		}
	}
	return nil
}

func checkPrecision(ctx context.Context, e *env) error {
	p, err := e.plan(ctx)
	if err != nil {
		return err
	}
	offTick := p.price.Add(p.tick.Div(decimal.NewFromInt(10)))
	if _, err := e.place(ctx, e.limitBuy(p, offTick, p.qty, "")); reasonIs(err, exchangev1.ErrorReason_ERROR_REASON_PRECISION) != nil {
		return fmt.Errorf("price %s off the %s tick grid: %w", offTick, p.tick, reasonIs(err, exchangev1.ErrorReason_ERROR_REASON_PRECISION))
	}
	offStep := p.qty.Add(p.step.Div(decimal.NewFromInt(10)))
	if _, err := e.place(ctx, e.limitBuy(p, p.price, offStep, "")); reasonIs(err, exchangev1.ErrorReason_ERROR_REASON_PRECISION) != nil {
		return fmt.Errorf("qty %s off the %s step grid: %w", offStep, p.step, reasonIs(err, exchangev1.ErrorReason_ERROR_REASON_PRECISION))
	}
	return nil
}

func checkOrderNotFound(ctx context.Context, e *env) error {
	p, err := e.plan(ctx)
	if err != nil {
		return err
	}
	const missing = "987654321987654321"
	_, err = e.c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: e.opts.Account, MarketType: p.mt, Symbol: p.in.GetSymbol(), OrderId: missing})
	if err := reasonIs(err, exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND); err != nil {
		return fmt.Errorf("GetOrder of an unknown id: %w", err)
	}
	_, err = e.c.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: e.opts.Account, MarketType: p.mt, Symbol: p.in.GetSymbol(), OrderId: missing})
	if err := reasonIs(err, exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND); err != nil {
		return fmt.Errorf("CancelOrder of an unknown id: %w", err)
	}
	return nil
}

func checkUnknownSymbolOrder(ctx context.Context, e *env) error {
	p, err := e.plan(ctx)
	if err != nil {
		return err
	}
	req := e.limitBuy(p, p.price, p.qty, "")
	req.Symbol = "CONFORMANCENOSUCHSYMBOL"
	_, err = e.place(ctx, req)
	return reasonIs(err, exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND)
}

func checkInsufficientFunds(ctx context.Context, e *env) error {
	p, err := e.plan(ctx)
	if err != nil {
		return err
	}
	maxQty, err := dec("max_qty", p.in.GetMaxQty())
	if p.in.GetMaxQty() == "" || err != nil {
		return na("the instrument has no max_qty to size an unaffordable order with")
	}
	qty := maxQty
	m, err := e.c.GetMaxOrderSize(ctx, &exchangev1.GetMaxOrderSizeRequest{Account: e.opts.Account, MarketType: p.mt,
		Symbol: p.in.GetSymbol(), Price: p.price.String(), PositionSide: p.posSide, MarginMode: p.marginMode})
	if err == nil {
		buy, err := dec("max_buy_qty", m.GetMaxBuyQty())
		if err != nil {
			return err
		}
		qty = decimal.Min(maxQty, buy.Mul(decimal.NewFromInt(2)).Add(p.step).Div(p.step).Floor().Mul(p.step))
		if !qty.GreaterThan(buy) {
			return na("max_qty %s is within the account's buying power %s", maxQty, buy)
		}
	}
	_, err = e.place(ctx, e.limitBuy(p, p.price, qty, ""))
	if err := reasonIs(err, exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS); err != nil {
		return fmt.Errorf("buying %s %s at %s: %w", qty, p.in.GetSymbol(), p.price, err)
	}
	return nil
}

// ---------------------------------------------------------------------------------------------------------------
// Wallet

func (e *env) needWallet(claimed bool, what string) error {
	if err := e.needDescribe(); err != nil {
		return err
	}
	if !claimed {
		return na("the plugin does not claim %s", what)
	}
	if e.opts.Account == nil {
		return na("no account given (set Options.Account / --account-key)")
	}
	return nil
}

func (e *env) wallet() *exchangev1.WalletCapabilities {
	return e.desc.GetCapabilities().GetWallet()
}

func checkBalances(ctx context.Context, e *env) error {
	if err := e.needWallet(e.desc != nil && e.wallet().GetBalances(), "balances"); err != nil {
		return err
	}
	r, err := e.c.GetBalances(ctx, &exchangev1.GetBalancesRequest{Account: e.opts.Account})
	if err != nil {
		return describeErr("GetBalances", err)
	}
	for _, b := range r.GetBalances() {
		if b.GetAsset() == "" || b.GetWallet() == exchangev1.WalletType_WALLET_TYPE_UNSPECIFIED {
			return fmt.Errorf("balance without asset or wallet: %v", b)
		}
		t, err1 := dec(b.GetAsset()+" total", b.GetTotal())
		a, err2 := dec(b.GetAsset()+" available", b.GetAvailable())
		l, err3 := dec(b.GetAsset()+" locked", b.GetLocked())
		if err := errors.Join(err1, err2, err3); err != nil {
			return err
		}
		if t.IsNegative() || a.IsNegative() || l.IsNegative() {
			return fmt.Errorf("%s %v: negative balance (total %s available %s locked %s)", b.GetAsset(), b.GetWallet(), t, a, l)
		}
		if a.GreaterThan(t) || l.GreaterThan(t) {
			return fmt.Errorf("%s %v: available %s or locked %s above total %s", b.GetAsset(), b.GetWallet(), a, l, t)
		}
	}
	return nil
}

func (e *env) balance(ctx context.Context, w exchangev1.WalletType, asset string) (decimal.Decimal, error) {
	r, err := e.c.GetBalances(ctx, &exchangev1.GetBalancesRequest{Account: e.opts.Account, Wallet: w})
	if err != nil {
		return decimal.Zero, describeErr("GetBalances", err)
	}
	for _, b := range r.GetBalances() {
		if b.GetAsset() == asset && b.GetWallet() == w {
			return dec("available", b.GetAvailable())
		}
	}
	return decimal.Zero, nil
}

func checkTransfer(ctx context.Context, e *env) error {
	if err := e.needWallet(e.desc != nil && e.wallet().GetTransfer(), "transfers"); err != nil {
		return err
	}
	const asset = "USDT"
	one := decimal.NewFromInt(1)
	from, to := exchangev1.WalletType_WALLET_TYPE_FUNDING, exchangev1.WalletType_WALLET_TYPE_TRADING
	avail, err := e.balance(ctx, from, asset)
	if err != nil {
		return err
	}
	if avail.LessThan(one) {
		from, to = to, from
		if avail, err = e.balance(ctx, from, asset); err != nil {
			return err
		}
		if avail.LessThan(one) {
			return na("no wallet holds 1 USDT to move")
		}
	}
	before, err := e.balance(ctx, to, asset)
	if err != nil {
		return err
	}
	for i, leg := range [][2]exchangev1.WalletType{{from, to}, {to, from}} {
		r, err := e.c.Transfer(ctx, &exchangev1.TransferRequest{Account: e.opts.Account, Asset: asset, Amount: "1", From: leg[0], To: leg[1],
			ClientId: e.clientID(fmt.Sprintf("tr%d", i))})
		if err != nil {
			return describeErr("Transfer", err)
		}
		if st := r.GetTransfer().GetStatus(); st != exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS && st != exchangev1.TransferStatus_TRANSFER_STATUS_PENDING {
			return fmt.Errorf("transfer status %v", st)
		}
		if i == 0 && r.GetTransfer().GetStatus() == exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS {
			after, err := e.balance(ctx, to, asset)
			if err != nil {
				return err
			}
			if !after.Sub(before).Equal(one) {
				return fmt.Errorf("available %s in %v went from %s to %s after moving 1 in", asset, to, before, after)
			}
		}
	}
	return nil
}

func checkDepositAddress(ctx context.Context, e *env) error {
	if err := e.needWallet(e.desc != nil && e.wallet().GetDeposit(), "deposits"); err != nil {
		return err
	}
	r, err := e.c.GetDepositAddress(ctx, &exchangev1.GetDepositAddressRequest{Account: e.opts.Account, Asset: "USDT"})
	if err != nil {
		return describeErr("GetDepositAddress USDT", err)
	}
	if r.GetAddress() == "" || r.GetNetwork() == "" {
		return fmt.Errorf("deposit address %q on network %q", r.GetAddress(), r.GetNetwork())
	}
	if _, err := e.c.ListDeposits(ctx, &exchangev1.ListDepositsRequest{Account: e.opts.Account, Page: &exchangev1.HistoryPage{Limit: 10}}); err != nil {
		return describeErr("ListDeposits", err)
	}
	return nil
}

func checkConvertQuote(ctx context.Context, e *env) error {
	if err := e.needWallet(e.desc != nil && e.wallet().GetConvert(), "convert"); err != nil {
		return err
	}
	if err := e.needSymbols(); err != nil {
		return err
	}
	to := e.tradeSymbol().GetBase()
	r, err := e.c.GetConvertQuote(ctx, &exchangev1.GetConvertQuoteRequest{Account: e.opts.Account, FromAsset: "USDT", ToAsset: to, FromAmount: "10"})
	if err != nil {
		return describeErr("GetConvertQuote USDT->"+to, err)
	}
	q := r.GetQuote()
	if q.GetQuoteId() == "" {
		return errors.New("quote without quote_id")
	}
	_, err1 := positive("from_amount", q.GetFromAmount())
	_, err2 := positive("to_amount", q.GetToAmount())
	_, err3 := positive("price", q.GetPrice())
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	if q.GetExpiresTime() <= time.Now().Add(-time.Minute).UnixMilli() {
		return fmt.Errorf("quote already expired (%d)", q.GetExpiresTime())
	}
	return nil
}
