package sdktest

import (
	"context"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// Fee rates, charged in USDT.
var (
	spotFee       = mustDec("0.001")
	swapTakerFee  = mustDec("0.0005")
	swapMakerFee  = mustDec("0.0002")
	maintenance   = mustDec("0.005") // maintenance margin rate
	defaultLevMax = int64(20)
)

const defaultLeverage = 10

// order is a regular (limit or market) order. Prices are in ticks and quantities in steps of its instrument.
type order struct {
	acct       *account
	in         *instrument
	id         string
	clientID   string
	algoID     string
	side       exchangev1.Side
	posSide    exchangev1.PositionSide
	typ        exchangev1.OrderType
	tif        exchangev1.TimeInForce
	status     exchangev1.OrderStatus
	price      int64 // 0 for market orders
	qty        int64
	filled     int64
	reduceOnly bool
	// expire is when a GTD order expires (Unix ms).
	expire int64
	// req is the request that created the order (without credentials): a repeated client_order_id must match it.
	req *exchangev1.PlaceOrderRequest
	// closing is true for orders that may only reduce a position: reduce-only orders, and hedge-mode orders on the
	// closing side (SELL LONG, BUY SHORT).
	closing bool

	filledQuote decimal.Decimal
	fee         decimal.Decimal
	// lockAsset/lockPerStep/locked: funds held for the unfilled part, released step by step as it fills.
	lockAsset   string
	lockPerStep decimal.Decimal
	locked      decimal.Decimal

	created, updated int64
	rejectReason     string
}

func (o *order) open() bool {
	return o.status == exchangev1.OrderStatus_ORDER_STATUS_NEW || o.status == exchangev1.OrderStatus_ORDER_STATUS_PARTIALLY_FILLED
}

func (o *order) proto() *exchangev1.Order {
	p := &exchangev1.Order{
		OrderId: o.id, ClientOrderId: o.clientID, Symbol: o.in.info.Symbol, MarketType: o.in.spec.marketType,
		Side: o.side, PositionSide: o.posSide, Type: o.typ, TimeInForce: o.tif, Status: o.status,
		Qty: o.in.qty(o.qty).String(), FilledQty: o.in.qty(o.filled).String(), FilledQuote: o.filledQuote.String(),
		ReduceOnly: o.reduceOnly, Fee: o.fee.String(), FeeAsset: "USDT", CreatedTime: o.created,
		UpdatedTime: o.updated, RejectReason: o.rejectReason, AlgoId: o.algoID, AvgPrice: "0", Price: "0",
	}
	if o.price > 0 {
		p.Price = o.in.price(o.price).String()
	}
	if o.filled > 0 {
		p.AvgPrice = o.filledQuote.Div(o.in.qty(o.filled)).Round(8).String()
	}
	return p
}

// position is one SWAP position. qty is signed in steps: positive long, negative short, in every mode.
type position struct {
	in       *instrument
	side     exchangev1.PositionSide
	qty      int64
	entry    decimal.Decimal
	margin   decimal.Decimal
	realized decimal.Decimal
	updated  int64
}

func positionKey(symbol string, side exchangev1.PositionSide) string {
	return symbol + "|" + side.String()
}

func (s *Server) unrealized(p *position) decimal.Decimal {
	if p.qty == 0 {
		return decimal.Zero
	}
	return s.markOf(p.in).mark.Sub(p.entry).Mul(p.in.qty(p.qty))
}

func (s *Server) positionProto(a *account, p *position) *exchangev1.Position {
	lev := a.lev(p.in)
	mark := s.markOf(p.in).mark
	qty := p.in.qty(p.qty)
	if p.side != exchangev1.PositionSide_POSITION_SIDE_NET {
		qty = qty.Abs()
	}
	notional := mark.Mul(p.in.qty(p.qty)).Abs()
	liq := decimal.Zero
	if p.qty != 0 {
		inv := decimal.NewFromInt(1).Div(decimal.NewFromInt(lev))
		if p.qty > 0 {
			liq = p.entry.Mul(decimal.NewFromInt(1).Sub(inv).Add(maintenance))
		} else {
			liq = p.entry.Mul(decimal.NewFromInt(1).Add(inv).Sub(maintenance))
		}
		liq = liq.Div(p.in.tick).Round(0).Mul(p.in.tick)
	}
	pos := &exchangev1.Position{
		Symbol: p.in.info.Symbol, PositionSide: p.side, Qty: qty.String(), EntryPrice: p.entry.String(),
		MarkPrice: mark.String(), LiquidationPrice: liq.String(), UnrealizedPnl: s.unrealized(p).String(),
		RealizedPnl: p.realized.String(), Leverage: itoa(lev), MarginMode: a.mode4(p.in), Margin: p.margin.String(),
		MaintenanceMargin: notional.Mul(maintenance).String(), Notional: notional.String(), UpdatedTime: p.updated,
	}
	if p.qty != 0 {
		// Break-even: the taker fee of opening and of closing, both on the entry notional. Margin ratio: maintenance
		// margin over the position's margin plus unrealized PnL (each position is margined on its own here).
		sign := int64(1)
		if p.qty < 0 {
			sign = -1
		}
		pos.BreakEvenPrice = p.entry.Add(p.entry.Mul(swapTakerFee).Mul(decimal.NewFromInt(2 * sign))).String()
		bal := p.margin.Add(s.unrealized(p))
		if bal.IsPositive() {
			pos.MarginRatio = notional.Mul(maintenance).DivRound(bal, 8).String()
		} else {
			pos.MarginRatio = "1"
		}
	}
	return pos
}

func (a *account) lev(in *instrument) int64 {
	if l, ok := a.leverage[in.info.Symbol]; ok {
		return l
	}
	return min(defaultLeverage, in.spec.maxLeverage)
}

func (a *account) mode4(in *instrument) exchangev1.MarginMode {
	if m, ok := a.marginMode[in.info.Symbol]; ok {
		return m
	}
	return exchangev1.MarginMode_MARGIN_MODE_CROSS
}

func (a *account) position(in *instrument, side exchangev1.PositionSide) *position {
	k := positionKey(in.info.Symbol, side)
	p, ok := a.positions[k]
	if !ok {
		p = &position{in: in, side: side}
		a.positions[k] = p
	}
	return p
}

// reducible is how many steps order o may still fill without growing its position.
func (o *order) reducible() int64 {
	if !o.in.isSwap() {
		return o.qty - o.filled
	}
	p, ok := o.acct.positions[positionKey(o.in.info.Symbol, o.posSide)]
	if !ok {
		return 0
	}
	if (o.side == exchangev1.Side_SIDE_BUY && p.qty < 0) || (o.side == exchangev1.Side_SIDE_SELL && p.qty > 0) {
		return min(abs(p.qty), o.qty-o.filled)
	}
	return 0
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

func dir(side exchangev1.Side) int64 {
	if side == exchangev1.Side_SIDE_BUY {
		return 1
	}
	return -1
}

// worstPrice is the last price a taker for qty steps would reach walking the book (limit bounds it).
func (in *instrument) worstPrice(side exchangev1.Side, qty, limit int64) int64 {
	worst := limit
	in.walk(side, func(p, q int64, _ *order) bool {
		if limit > 0 && !crosses(side, limit, p) {
			return false
		}
		worst = p
		qty -= q
		return qty > 0
	})
	return worst
}

// lockFor computes what an order must hold: the asset and the amount per step of quantity.
func (s *Server) lockFor(o *order) (string, decimal.Decimal) {
	in := o.in
	ref := o.price
	if o.typ == exchangev1.OrderType_ORDER_TYPE_MARKET || o.side == exchangev1.Side_SIDE_SELL {
		// A market order, or a sell that may trade above its limit: hold at the worst price it can reach.
		w := in.worstPrice(o.side, o.qty, o.price)
		if o.side == exchangev1.Side_SIDE_SELL {
			ref = max(ref, w)
		} else {
			ref = w
		}
	}
	if ref <= 0 {
		ref = in.mid()
	}
	perStepNotional := in.price(ref).Mul(in.step)
	switch {
	case !in.isSwap() && o.side == exchangev1.Side_SIDE_BUY:
		return "USDT", perStepNotional.Mul(decimal.NewFromInt(1).Add(spotFee))
	case !in.isSwap():
		return in.spec.base, in.step
	case o.closing:
		return "USDT", decimal.Zero
	default:
		lev := decimal.NewFromInt(o.acct.lev(in))
		return "USDT", perStepNotional.Div(lev).RoundUp(8).Add(perStepNotional.Mul(swapTakerFee))
	}
}

func (s *Server) lockFunds(o *order) error {
	asset, per := s.lockFor(o)
	need := per.Mul(decimal.NewFromInt(o.qty - o.filled))
	b := o.acct.trading(asset)
	if b.available().LessThan(need) {
		return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS, "qty",
			"%s %s available in the trading wallet, %s needed", b.available(), asset, need)
	}
	o.lockAsset, o.lockPerStep, o.locked = asset, per, need
	b.locked = b.locked.Add(need)
	return nil
}

func (s *Server) releaseLock(o *order) {
	if o.locked.IsZero() {
		return
	}
	b := o.acct.trading(o.lockAsset)
	b.locked = decimal.Max(b.locked.Sub(o.locked), decimal.Zero)
	o.locked = decimal.Zero
}

// fill applies q steps of order o at price: balances, position, fees, the fill record and the order's status.
func (s *Server) fill(o *order, q, price int64, maker bool, now int64) {
	a, in := o.acct, o.in
	release := o.lockPerStep.Mul(decimal.NewFromInt(q))
	if q >= o.qty-o.filled || release.GreaterThan(o.locked) {
		release = o.locked
	}
	o.locked = o.locked.Sub(release)
	if !release.IsZero() {
		b := a.trading(o.lockAsset)
		b.locked = decimal.Max(b.locked.Sub(release), decimal.Zero)
	}
	qty := in.qty(q)
	notional := in.price(price).Mul(qty)
	rate := spotFee
	if in.isSwap() {
		rate = swapTakerFee
		if maker {
			rate = swapMakerFee
		}
	}
	fee := notional.Mul(rate)
	usdt := a.trading("USDT")
	realized := decimal.Zero
	switch {
	case !in.isSwap() && o.side == exchangev1.Side_SIDE_BUY:
		usdt.total = usdt.total.Sub(notional).Sub(fee)
		base := a.trading(in.spec.base)
		base.total = base.total.Add(qty)
	case !in.isSwap():
		base := a.trading(in.spec.base)
		base.total = base.total.Sub(qty)
		usdt.total = usdt.total.Add(notional).Sub(fee)
	default:
		realized = s.applyPosition(o, q, price, now)
		usdt.total = decimal.Max(usdt.total.Add(realized).Sub(fee), decimal.Zero)
	}
	o.filled += q
	o.filledQuote = o.filledQuote.Add(notional)
	o.fee = o.fee.Add(fee)
	o.updated = now
	if o.filled >= o.qty {
		o.status = exchangev1.OrderStatus_ORDER_STATUS_FILLED
	} else {
		o.status = exchangev1.OrderStatus_ORDER_STATUS_PARTIALLY_FILLED
	}
	a.dirtyOrders[o] = true
	f := &exchangev1.Fill{
		TradeId: s.newID(), OrderId: o.id, ClientOrderId: o.clientID, Symbol: in.info.Symbol,
		MarketType: in.spec.marketType, Side: o.side, PositionSide: o.posSide, Price: in.price(price).String(),
		Qty: qty.String(), QuoteQty: notional.String(), Fee: fee.String(), FeeAsset: "USDT",
		RealizedPnl: realized.String(), Maker: maker, Time: now,
	}
	a.fills = append(a.fills, f)
	a.newFills = append(a.newFills, f)
}

// applyPosition moves a SWAP position by a fill and returns the realized PnL. The closing part realizes PnL and
// frees margin; the rest opens (or flips, in one-way mode) at the fill price with margin notional/leverage.
func (s *Server) applyPosition(o *order, q, price int64, now int64) decimal.Decimal {
	a, in := o.acct, o.in
	p := a.position(in, o.posSide)
	usdt := a.trading("USDT")
	px := in.price(price)
	d := dir(o.side)
	realized := decimal.Zero
	if p.qty != 0 && (p.qty > 0) != (d > 0) { // closing
		c := min(q, abs(p.qty))
		realized = px.Sub(p.entry).Mul(in.qty(c)).Mul(decimal.NewFromInt(sign(p.qty)))
		freed := p.margin
		if c < abs(p.qty) {
			freed = p.margin.Mul(decimal.NewFromInt(c)).Div(decimal.NewFromInt(abs(p.qty))).RoundDown(8)
		}
		p.margin = p.margin.Sub(freed)
		usdt.locked = decimal.Max(usdt.locked.Sub(freed), decimal.Zero)
		p.qty += d * c
		p.realized = p.realized.Add(realized)
		if p.qty == 0 {
			p.entry, p.margin = decimal.Zero, decimal.Zero
		}
		q -= c
	}
	if q > 0 { // opening
		lev := decimal.NewFromInt(a.lev(in))
		margin := px.Mul(in.qty(q)).Div(lev).RoundDown(8)
		oldAbs, newAbs := decimal.NewFromInt(abs(p.qty)), decimal.NewFromInt(abs(p.qty)+q)
		p.entry = p.entry.Mul(oldAbs).Add(px.Mul(decimal.NewFromInt(q))).Div(newAbs).Round(8)
		p.qty += d * q
		p.margin = p.margin.Add(margin)
		usdt.locked = usdt.locked.Add(margin)
	}
	p.updated = now
	a.dirtyPos[positionKey(in.info.Symbol, o.posSide)] = true
	return realized
}

func sign(n int64) int64 {
	if n < 0 {
		return -1
	}
	return 1
}

// finish ends an order that will not rest (any more): an unfilled remainder expires and the lock is released.
func (s *Server) finish(o *order, now int64) {
	o.in.removeResting(o)
	if o.open() {
		o.status = exchangev1.OrderStatus_ORDER_STATUS_EXPIRED
		o.updated = now
		o.acct.dirtyOrders[o] = true
	}
	s.releaseLock(o)
}

func (s *Server) cancel(o *order, now int64) {
	o.in.removeResting(o)
	o.status = exchangev1.OrderStatus_ORDER_STATUS_CANCELLED
	o.updated = now
	o.acct.dirtyOrders[o] = true
	s.releaseLock(o)
}

// match runs a taker (nil for the synthetic flow) against the book for up to qty steps, bounded by limit (0: no
// bound). Synthetic liquidity trades first at an equal price; resting orders fill in price-time priority.
func (s *Server) match(in *instrument, taker *order, side exchangev1.Side, limit, qty int64, now int64) int64 {
	synth, orders := &in.synthAsks, &in.asks
	if side == exchangev1.Side_SIDE_SELL {
		synth, orders = &in.synthBids, &in.bids
	}
	filled := int64(0)
	for filled < qty {
		want := qty - filled
		if taker != nil && taker.closing {
			if want = min(want, taker.reducible()); want == 0 {
				break
			}
		}
		price, ok := in.bestOpposite(side)
		if !ok || (limit > 0 && !crosses(side, limit, price)) {
			break
		}
		var q int64
		if len(*synth) > 0 && (*synth)[0].price == price {
			l := &(*synth)[0]
			q = min(want, l.qty)
			l.qty -= q
			if l.qty == 0 {
				*synth = (*synth)[1:]
			}
		} else {
			m := (*orders)[0]
			q = min(want, m.qty-m.filled)
			if m.closing {
				if q = min(q, m.reducible()); q == 0 {
					s.finish(m, now) // nothing left to reduce: the resting order expires
					continue
				}
			}
			s.fill(m, q, price, true, now)
			if !m.open() || (m.closing && m.reducible() == 0) {
				s.finish(m, now)
			}
		}
		if taker != nil {
			s.fill(taker, q, price, false, now)
		}
		in.recordTrade(price, q, side, now)
		filled += q
	}
	return filled
}

// fillCrossedResting fills resting orders the new synthetic book has traded through, at their own price.
func (s *Server) fillCrossedResting(in *instrument, now int64) {
	for _, side := range []exchangev1.Side{exchangev1.Side_SIDE_BUY, exchangev1.Side_SIDE_SELL} {
		list, synth := &in.bids, in.synthAsks
		takerSide := exchangev1.Side_SIDE_SELL
		if side == exchangev1.Side_SIDE_SELL {
			list, synth, takerSide = &in.asks, in.synthBids, exchangev1.Side_SIDE_BUY
		}
		for len(*list) > 0 && len(synth) > 0 && crosses(side, (*list)[0].price, synth[0].price) {
			o := (*list)[0]
			q := o.qty - o.filled
			if o.closing {
				q = o.reducible()
			}
			if q > 0 {
				s.fill(o, q, o.price, true, now)
				in.recordTrade(o.price, q, takerSide, now)
			}
			s.finish(o, now)
		}
	}
}

// ---------------------------------------------------------------------------------------------------------------
// Placing orders

// checkPositionSide validates position_side against the market and the account's position mode.
func checkPositionSide(a *account, in *instrument, ps exchangev1.PositionSide) (exchangev1.PositionSide, error) {
	if !in.isSwap() {
		if ps != exchangev1.PositionSide_POSITION_SIDE_UNSPECIFIED && ps != exchangev1.PositionSide_POSITION_SIDE_NET {
			return 0, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "position_side", "spot orders have no position side")
		}
		return exchangev1.PositionSide_POSITION_SIDE_UNSPECIFIED, nil
	}
	hedge := a.mode == exchangev1.PositionMode_POSITION_MODE_HEDGE
	switch {
	case hedge && (ps == exchangev1.PositionSide_POSITION_SIDE_LONG || ps == exchangev1.PositionSide_POSITION_SIDE_SHORT):
		return ps, nil
	case hedge:
		return 0, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH, "position_side",
			"the account is in hedge mode: position_side must be LONG or SHORT")
	case ps == exchangev1.PositionSide_POSITION_SIDE_UNSPECIFIED || ps == exchangev1.PositionSide_POSITION_SIDE_NET:
		return exchangev1.PositionSide_POSITION_SIDE_NET, nil
	default:
		return 0, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH, "position_side",
			"the account is in one-way mode: position_side must be NET or unset")
	}
}

// place validates and executes an order. Caller holds s.mu.
func (s *Server) place(a *account, req *exchangev1.PlaceOrderRequest, algoID string, now int64) (*order, error) {
	if err := checkClientID("client_order_id", req.GetClientOrderId()); err != nil {
		return nil, err
	}
	if req.GetClientOrderId() != "" {
		// Idempotent like a real exchange that is asked first: the same client_order_id with the same parameters
		// returns the order it created; with other parameters it is refused.
		if o, ok := a.byClient[req.GetClientOrderId()]; ok {
			if !samePlaceRequest(o.req, req) {
				return nil, duplicateClientID("client_order_id", req.GetClientOrderId())
			}
			return o, nil
		}
	}
	in, err := s.instrument(req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	marginMode, err := s.checkMarginMode(a, in, req.GetMarginMode())
	if err != nil {
		return nil, err
	}
	o := &order{acct: a, in: in, clientID: req.GetClientOrderId(), algoID: algoID, side: req.GetSide(),
		typ: req.GetType(), tif: req.GetTimeInForce(), reduceOnly: req.GetReduceOnly(), created: now, updated: now,
		status: exchangev1.OrderStatus_ORDER_STATUS_NEW}
	if o.side != exchangev1.Side_SIDE_BUY && o.side != exchangev1.Side_SIDE_SELL {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "side", "side is required")
	}
	if req.GetTakeProfit() != nil || req.GetStopLoss() != nil {
		return nil, sdk.NotSupported("take-profit/stop-loss attached to an order (use PlaceAlgoOrder)")
	}
	if o.posSide, err = checkPositionSide(a, in, req.GetPositionSide()); err != nil {
		return nil, err
	}
	if o.reduceOnly && !in.isSwap() {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "reduce_only", "reduce_only is for SWAP orders")
	}
	hedgeClose := (o.posSide == exchangev1.PositionSide_POSITION_SIDE_LONG && o.side == exchangev1.Side_SIDE_SELL) ||
		(o.posSide == exchangev1.PositionSide_POSITION_SIDE_SHORT && o.side == exchangev1.Side_SIDE_BUY)
	o.closing = o.reduceOnly || hedgeClose
	switch o.typ {
	case exchangev1.OrderType_ORDER_TYPE_LIMIT:
		switch o.tif {
		case exchangev1.TimeInForce_TIME_IN_FORCE_UNSPECIFIED:
			o.tif = exchangev1.TimeInForce_TIME_IN_FORCE_GTC
		case exchangev1.TimeInForce_TIME_IN_FORCE_GTC, exchangev1.TimeInForce_TIME_IN_FORCE_IOC,
			exchangev1.TimeInForce_TIME_IN_FORCE_FOK, exchangev1.TimeInForce_TIME_IN_FORCE_POST_ONLY:
		case exchangev1.TimeInForce_TIME_IN_FORCE_GTD:
			if req.GetExpireTime() <= now {
				return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "expire_time",
					"a GTD order needs an expire_time in the future")
			}
			o.expire = req.GetExpireTime()
		default:
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "time_in_force", "unknown time_in_force %v", o.tif)
		}
		px, err := parsePositive("price", req.GetPrice())
		if err != nil {
			return nil, err
		}
		if o.price, err = in.ticksOf("price", px); err != nil {
			return nil, err
		}
	case exchangev1.OrderType_ORDER_TYPE_MARKET:
		if o.tif == exchangev1.TimeInForce_TIME_IN_FORCE_GTD {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "time_in_force", "a market order cannot be GTD")
		}
		o.tif = exchangev1.TimeInForce_TIME_IN_FORCE_IOC
	default:
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "type",
			"type must be LIMIT or MARKET; conditional orders go through PlaceAlgoOrder")
	}
	if err := s.orderQty(o, req); err != nil {
		return nil, err
	}
	best, ok := in.bestOpposite(o.side)
	if o.tif == exchangev1.TimeInForce_TIME_IN_FORCE_POST_ONLY && ok && crosses(o.side, o.price, best) {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED, "price",
			"post-only order at %s would take liquidity (best opposite %s)", in.price(o.price), in.price(best))
	}
	if o.closing {
		if r := o.reducible(); r == 0 {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED, "reduce_only",
				"the order would not reduce a %s position", o.posSide)
		}
	}
	if err := s.lockFunds(o); err != nil {
		return nil, err
	}
	if marginMode != exchangev1.MarginMode_MARGIN_MODE_UNSPECIFIED {
		a.marginMode[in.info.Symbol] = marginMode
	}
	o.req = stripAccount(req)
	o.id = s.newID()
	a.orders = append(a.orders, o)
	a.byID[o.id] = o
	if o.clientID != "" {
		a.byClient[o.clientID] = o
	}
	a.dirtyOrders[o] = true
	if o.tif == exchangev1.TimeInForce_TIME_IN_FORCE_FOK && in.available(o.side, o.price) < o.qty {
		s.finish(o, now) // fill or kill: not enough liquidity, nothing trades
		return o, nil
	}
	s.match(in, o, o.side, o.price, o.qty, now)
	if o.open() && o.typ == exchangev1.OrderType_ORDER_TYPE_LIMIT && (o.tif == exchangev1.TimeInForce_TIME_IN_FORCE_GTC ||
		o.tif == exchangev1.TimeInForce_TIME_IN_FORCE_POST_ONLY || o.tif == exchangev1.TimeInForce_TIME_IN_FORCE_GTD) {
		in.insertResting(o)
	} else {
		s.finish(o, now)
	}
	return o, nil
}

// orderQty validates the quantity (or a spot market buy's quote amount) against the grid and the limits.
func (s *Server) orderQty(o *order, req *exchangev1.PlaceOrderRequest) error {
	in := o.in
	if req.GetQty() == "" && req.GetQuoteQty() != "" {
		if in.isSwap() || o.typ != exchangev1.OrderType_ORDER_TYPE_MARKET || o.side != exchangev1.Side_SIDE_BUY {
			return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "quote_qty", "quote_qty is only for spot market buys")
		}
		budget, err := parsePositive("quote_qty", req.GetQuoteQty())
		if err != nil {
			return err
		}
		budget = budget.Div(decimal.NewFromInt(1).Add(spotFee))
		in.walk(o.side, func(p, q int64, _ *order) bool { // spend the budget level by level
			afford := budget.Div(in.price(p).Mul(in.step)).IntPart()
			take := min(afford, q)
			o.qty += take
			budget = budget.Sub(in.price(p).Mul(in.qty(take)))
			return take == q
		})
		if o.qty == 0 {
			return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_PRECISION, "quote_qty", "quote_qty buys less than one step")
		}
	} else {
		qd, err := parsePositive("qty", req.GetQty())
		if err != nil {
			return err
		}
		if o.qty, err = in.stepsOf("qty", qd); err != nil {
			return err
		}
	}
	maxQty := in.maxQty
	if o.typ == exchangev1.OrderType_ORDER_TYPE_MARKET {
		maxQty = in.marketMax
	}
	if o.qty < in.minQty || o.qty > maxQty {
		return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_PRECISION, "qty", "qty %s is outside %s..%s",
			in.qty(o.qty), in.qty(in.minQty), in.qty(maxQty))
	}
	ref := o.price
	if ref == 0 {
		ref = in.mid()
	}
	if !o.closing && in.price(ref).Mul(in.qty(o.qty)).LessThan(in.minNotional) {
		return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_PRECISION, "qty", "order value %s is below the minimum %s",
			in.price(ref).Mul(in.qty(o.qty)), in.minNotional)
	}
	return nil
}

// PlaceOrder places a limit or market order. A fault armed for its client_order_id loses the answer
// (UNKNOWN_OUTCOME), after or without executing it.
func (s *Server) PlaceOrder(_ context.Context, req *exchangev1.PlaceOrderRequest) (*exchangev1.PlaceOrderResponse, error) {
	armed, drop := s.fault(req.GetClientOrderId())
	if drop {
		return nil, unknownOutcome("order", req.GetClientOrderId(), false)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.tradeAccount(req.GetAccount())
	if err != nil {
		return nil, err
	}
	now := s.nowMs()
	o, err := s.place(a, req, "", now)
	if err != nil {
		return nil, err
	}
	s.publish(o.in, now, false)
	s.flushAccounts(now)
	if armed {
		return nil, unknownOutcome("order", req.GetClientOrderId(), true)
	}
	return &exchangev1.PlaceOrderResponse{Order: o.proto()}, nil
}

// findOrder finds an order by id or client id; symbol and market type, when given, must match.
func (s *Server) findOrder(a *account, mt exchangev1.MarketType, symbol, id, clientID string) (*order, error) {
	var o *order
	switch {
	case id != "":
		o = a.byID[id]
	case clientID != "":
		o = a.byClient[clientID]
	default:
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "order_id", "order_id or client_order_id is required")
	}
	if o == nil || (symbol != "" && o.in.info.Symbol != symbol) ||
		(mt != exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED && o.in.spec.marketType != mt) {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND, "order_id", "order %s%s not found", id, clientID)
	}
	return o, nil
}

// AmendOrder changes an open order's price and/or quantity. The order keeps its id, loses its time priority, and
// trades at once if the new price crosses.
func (s *Server) AmendOrder(_ context.Context, req *exchangev1.AmendOrderRequest) (*exchangev1.AmendOrderResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.tradeAccount(req.GetAccount())
	if err != nil {
		return nil, err
	}
	o, err := s.findOrder(a, req.GetMarketType(), req.GetSymbol(), req.GetOrderId(), req.GetClientOrderId())
	if err != nil {
		return nil, err
	}
	// A fault armed for the order's client id loses the amend's answer, after or without executing it.
	armed, drop := s.fault(o.clientID)
	if drop {
		return nil, unknownOutcome("amend", o.clientID, false)
	}
	resp, err := s.amend(a, o, req)
	if armed && (err == nil || !sdk.IsUnknownOutcome(err)) {
		return nil, unknownOutcome("amend", o.clientID, err == nil)
	}
	return resp, err
}

// amend changes a found order's price and/or quantity (AmendOrder, under the lock).
func (s *Server) amend(a *account, o *order, req *exchangev1.AmendOrderRequest) (*exchangev1.AmendOrderResponse, error) {
	if !o.open() {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED, "order_id", "order %s is %s", o.id, o.status)
	}
	in := o.in
	price, qty := o.price, o.qty
	if req.GetPrice() != "" {
		px, err := parsePositive("price", req.GetPrice())
		if err != nil {
			return nil, err
		}
		if price, err = in.ticksOf("price", px); err != nil {
			return nil, err
		}
	}
	if req.GetQty() != "" {
		qd, err := parsePositive("qty", req.GetQty())
		if err != nil {
			return nil, err
		}
		if qty, err = in.stepsOf("qty", qd); err != nil {
			return nil, err
		}
		if qty <= o.filled || qty > in.maxQty {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "qty",
				"qty must be above the filled %s and at most %s", in.qty(o.filled), in.qty(in.maxQty))
		}
	}
	if best, ok := in.bestOpposite(o.side); o.tif == exchangev1.TimeInForce_TIME_IN_FORCE_POST_ONLY && ok && crosses(o.side, price, best) {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED, "price", "post-only order would take liquidity")
	}
	now := s.nowMs()
	// Cancel-replace under the lock: take it out, re-hold funds for the new terms, put it back.
	in.removeResting(o)
	oldPrice, oldQty := o.price, o.qty
	s.releaseLock(o)
	o.price, o.qty = price, qty
	if err := s.lockFunds(o); err != nil {
		o.price, o.qty = oldPrice, oldQty
		if err2 := s.lockFunds(o); err2 != nil { // cannot happen: the old lock was just released
			s.cancel(o, now)
		} else {
			in.insertResting(o)
		}
		return nil, err
	}
	o.updated = now
	a.dirtyOrders[o] = true
	s.match(in, o, o.side, o.price, o.qty-o.filled, now)
	if o.open() {
		in.insertResting(o)
	} else {
		s.finish(o, now)
	}
	s.publish(in, now, false)
	s.flushAccounts(now)
	return &exchangev1.AmendOrderResponse{Order: o.proto()}, nil
}

// CancelOrder cancels an open order. Cancelling a finished order returns ORDER_NOT_FOUND for an unknown id and
// ORDER_REJECTED for a known one.
func (s *Server) CancelOrder(_ context.Context, req *exchangev1.CancelOrderRequest) (*exchangev1.CancelOrderResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.tradeAccount(req.GetAccount())
	if err != nil {
		return nil, err
	}
	o, err := s.findOrder(a, req.GetMarketType(), req.GetSymbol(), req.GetOrderId(), req.GetClientOrderId())
	if err != nil {
		return nil, err
	}
	if !o.open() {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED, "order_id", "order %s is already %s", o.id, o.status)
	}
	now := s.nowMs()
	s.cancel(o, now)
	s.publish(o.in, now, false)
	s.flushAccounts(now)
	return &exchangev1.CancelOrderResponse{Order: o.proto()}, nil
}

// CancelAllOrders cancels every open order of a market type (and symbol, when given).
func (s *Server) CancelAllOrders(_ context.Context, req *exchangev1.CancelAllOrdersRequest) (*exchangev1.CancelAllOrdersResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.tradeAccount(req.GetAccount())
	if err != nil {
		return nil, err
	}
	if req.GetSymbol() != "" {
		if _, err := s.instrument(req.GetMarketType(), req.GetSymbol()); err != nil {
			return nil, err
		}
	}
	now := s.nowMs()
	out := &exchangev1.CancelAllOrdersResponse{}
	touched := map[*instrument]bool{}
	for _, o := range s.openOrders(a, req.GetMarketType(), req.GetSymbol()) {
		s.cancel(o, now)
		touched[o.in] = true
		out.Orders = append(out.Orders, o.proto())
	}
	for in := range touched {
		s.publish(in, now, false)
	}
	s.flushAccounts(now)
	return out, nil
}

func (s *Server) openOrders(a *account, mt exchangev1.MarketType, symbol string) []*order {
	var out []*order
	for _, o := range a.orders {
		if o.open() && (mt == exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED || o.in.spec.marketType == mt) &&
			(symbol == "" || o.in.info.Symbol == symbol) {
			out = append(out, o)
		}
	}
	return out
}

// GetOrder returns one order by id or client order id.
func (s *Server) GetOrder(_ context.Context, req *exchangev1.GetOrderRequest) (*exchangev1.GetOrderResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.account(req.GetAccount())
	if err != nil {
		return nil, err
	}
	o, err := s.findOrder(a, req.GetMarketType(), req.GetSymbol(), req.GetOrderId(), req.GetClientOrderId())
	if err != nil {
		return nil, err
	}
	return &exchangev1.GetOrderResponse{Order: o.proto()}, nil
}

// ListOpenOrders lists open orders, oldest first.
func (s *Server) ListOpenOrders(_ context.Context, req *exchangev1.ListOpenOrdersRequest) (*exchangev1.ListOpenOrdersResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.account(req.GetAccount())
	if err != nil {
		return nil, err
	}
	out := &exchangev1.ListOpenOrdersResponse{}
	for _, o := range s.openOrders(a, req.GetMarketType(), req.GetSymbol()) {
		out.Orders = append(out.Orders, o.proto())
	}
	return out, nil
}

// ListOrderHistory pages every order (open and finished), newest first.
func (s *Server) ListOrderHistory(_ context.Context, req *exchangev1.ListOrderHistoryRequest) (*exchangev1.ListOrderHistoryResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.account(req.GetAccount())
	if err != nil {
		return nil, err
	}
	var sel []*order
	for _, o := range a.orders {
		if (req.GetMarketType() == exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED || o.in.spec.marketType == req.GetMarketType()) &&
			(req.GetSymbol() == "" || o.in.info.Symbol == req.GetSymbol()) {
			sel = append(sel, o)
		}
	}
	page, next, err := pageOf(sel, func(o *order) int64 { return o.created }, req.GetPage(), 100, 500)
	if err != nil {
		return nil, err
	}
	out := &exchangev1.ListOrderHistoryResponse{NextCursor: next}
	for _, o := range page {
		out.Orders = append(out.Orders, o.proto())
	}
	return out, nil
}

// ListFills pages fills, newest first.
func (s *Server) ListFills(_ context.Context, req *exchangev1.ListFillsRequest) (*exchangev1.ListFillsResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.account(req.GetAccount())
	if err != nil {
		return nil, err
	}
	var sel []*exchangev1.Fill
	for _, f := range a.fills {
		if (req.GetMarketType() == exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED || f.MarketType == req.GetMarketType()) &&
			(req.GetSymbol() == "" || f.Symbol == req.GetSymbol()) {
			sel = append(sel, f)
		}
	}
	page, next, err := pageOf(sel, func(f *exchangev1.Fill) int64 { return f.Time }, req.GetPage(), 100, 500)
	if err != nil {
		return nil, err
	}
	return &exchangev1.ListFillsResponse{Fills: page, NextCursor: next}, nil
}
