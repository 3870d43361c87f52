package venue

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/shopspring/decimal"
)

// feeScale is the number of decimals fees and funding payments are rounded up to.
const feeScale = 8

// placeTargetLocked resolves a new order's account and instrument. A client id whose order is still open answers
// that order with an error wrapping ErrDuplicateClientID (see Place).
func (v *Venue) placeTargetLocked(req OrderRequest) (*account, *instState, Order, error) {
	a, err := v.userAccount(req.Account)
	if err != nil {
		return nil, nil, Order{}, err
	}
	st, err := v.inst(req.Instrument)
	if err != nil {
		return nil, nil, Order{}, err
	}
	if req.ClientID != "" {
		if o, ok := a.clientIDs[req.ClientID]; ok {
			if _, open := a.open[o.id]; open {
				return nil, nil, o.view(), fmt.Errorf("%w: %q", ErrDuplicateClientID, req.ClientID)
			}
		}
	}
	return a, st, Order{}, nil
}

// Place validates and places an order for a user account. A repeated non-empty ClientID of an order that is still
// open (resting or untriggered) returns that order and an error wrapping ErrDuplicateClientID, without placing
// anything. An id whose order has ended may be used again and places a new order, as on the real exchanges: a
// client that retries after a fill must look the id up first. Rejections return an error and leave no order behind.
func (v *Venue) Place(ctx context.Context, req OrderRequest) (Order, error) {
	if err := ctx.Err(); err != nil {
		return Order{}, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	defer v.flushLocked()
	a, st, dup, err := v.placeTargetLocked(req)
	if err != nil {
		return dup, err
	}
	o, err := v.buildOrder(a, st, req)
	if err != nil {
		return Order{}, err
	}
	if o.typ.conditional() {
		if err := v.placeConditional(o); err != nil {
			return Order{}, err
		}
		return o.view(), nil
	}
	if err := v.execute(o, true); err != nil {
		return Order{}, err
	}
	view := o.view()
	v.afterTrades(st)
	return view, nil
}

func (v *Venue) buildOrder(a *account, st *instState, req OrderRequest) (*order, error) {
	in := st.in
	if in.Status != Trading {
		return nil, fmt.Errorf("%w: %s is %s", ErrNotTrading, in.ID, in.Status)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidOrder, fmt.Sprintf(format, args...))
	}
	if req.Side != Buy && req.Side != Sell {
		return nil, bad("side")
	}
	if req.Type < Limit || req.Type > TakeProfitLimit {
		return nil, bad("order type")
	}
	o := &order{acct: a, inst: st, clientID: req.ClientID, side: req.Side, typ: req.Type, origType: req.Type,
		tif: req.TIF, trigger: req.TriggerBy, reduceOnly: req.ReduceOnly, closePos: req.ClosePosition,
		posSide: req.PositionSide, stp: req.STP, created: v.Now()}
	o.updated = o.created
	if o.tif == 0 {
		o.tif = GTC
	}
	if o.trigger == 0 {
		o.trigger = TriggerLast
	}
	if o.stp > STPNone {
		return nil, bad("self-trade prevention mode")
	}
	needPrice := req.Type == Limit || req.Type.limitAfter()
	var err error
	if needPrice {
		if o.price, err = in.Ticks(req.Price); err != nil {
			return nil, err
		}
	} else if !req.Price.IsZero() {
		return nil, bad("price not allowed for %s", req.Type)
	}
	if req.Type.conditional() {
		if o.stop, err = in.Ticks(req.StopPrice); err != nil {
			return nil, fmt.Errorf("stop price: %w", err)
		}
	} else if !req.StopPrice.IsZero() {
		return nil, bad("stop price not allowed for %s", req.Type)
	}
	if !needPrice && o.tif != GTC && o.tif != IOC {
		return nil, bad("time in force %s not allowed for %s", o.tif, req.Type)
	}
	if !needPrice {
		o.tif = IOC
	}
	// Quantity.
	switch {
	case req.ClosePosition:
		if in.Market != Perp || (req.Type != StopMarket && req.Type != TakeProfitMarket) {
			return nil, bad("close-position needs a perpetual stop-market or take-profit-market order")
		}
		if !req.Qty.IsZero() || req.ReduceOnly {
			return nil, bad("close-position takes no quantity or reduce-only flag")
		}
		o.reduceOnly = true
	case !req.QuoteQty.IsZero():
		if req.Type != Market || in.Market != Spot || !req.Qty.IsZero() {
			return nil, bad("quote quantity only for spot market orders without quantity")
		}
		if !req.QuoteQty.IsPositive() {
			return nil, bad("quote quantity must be positive")
		}
		o.quoteQty = req.QuoteQty.Div(in.unit).IntPart()
		if in.Notional(o.quoteQty).LessThan(in.MinNotional) {
			return nil, fmt.Errorf("%w: %s < %s", ErrMinNotional, req.QuoteQty, in.MinNotional)
		}
		o.qty = in.marketMax
	default:
		if o.qty, err = in.Lots(req.Qty); err != nil {
			return nil, err
		}
		maxQ := in.maxQty
		if !needPrice {
			maxQ = in.marketMax
		}
		if o.qty < in.minQty || o.qty > maxQ {
			return nil, fmt.Errorf("%s quantity %s outside [%s, %s]: %w", in.ID, req.Qty, in.Qty(in.minQty),
				in.Qty(maxQ), ErrOutOfRange)
		}
		ref := o.price
		if ref == 0 {
			ref = o.stop
		}
		if ref == 0 {
			ref = st.lastTicks()
		}
		if !o.reduceOnly && in.Notional(ref*o.qty).LessThan(in.MinNotional) {
			return nil, fmt.Errorf("%w: %s x %s < %s", ErrMinNotional, in.Price(ref), req.Qty, in.MinNotional)
		}
	}
	// Market-specific flags.
	if in.Market == Spot {
		if req.ReduceOnly || req.PositionSide != PosBoth {
			return nil, bad("reduce-only and position side are for perpetuals")
		}
		if o.trigger == TriggerMark {
			return nil, bad("spot orders trigger on the last price")
		}
		return o, nil
	}
	if a.hedge {
		if o.posSide == PosBoth {
			return nil, fmt.Errorf("%w: hedge mode needs LONG or SHORT", ErrPositionSide)
		}
		if req.ReduceOnly {
			return nil, bad("reduce-only is implied by the position side in hedge mode")
		}
		// Selling a long or buying a short closes it.
		if (o.posSide == PosLong) == (o.side == Sell) {
			o.reduceOnly = true
		}
	} else if o.posSide != PosBoth {
		return nil, fmt.Errorf("%w: one-way mode takes no position side", ErrPositionSide)
	}
	return o, nil
}

func (st *instState) lastTicks() int64 {
	if st.last != 0 {
		return st.last
	}
	t := st.in.RefPrice.Div(st.in.TickSize).IntPart()
	return max(t, 1)
}

func (st *instState) markTicks() int64 {
	return max(st.mark.Div(st.in.TickSize).IntPart(), 1)
}

// triggerTicks returns the price a conditional order watches.
func (st *instState) triggerTicks(tp TriggerPrice) int64 {
	if tp == TriggerMark {
		return st.markTicks()
	}
	return st.lastTicks()
}

func triggered(o *order, px int64) bool {
	up := o.side == Buy
	if o.typ.takeProfit() {
		up = !up
	}
	if up {
		return px >= o.stop
	}
	return px <= o.stop
}

func (v *Venue) placeConditional(o *order) error {
	st := o.inst
	if triggered(o, st.triggerTicks(o.trigger)) {
		return fmt.Errorf("%w: %s stop %s", ErrWouldTrigger, o.typ, st.in.Price(o.stop))
	}
	// Spot conditional orders reserve their funds now, like a limit order would; perpetual ones check margin
	// when they trigger.
	if st.in.Market == Spot {
		if err := v.lockSpot(o); err != nil {
			return err
		}
	}
	v.register(o)
	o.status = StatusUntriggered
	st.conds = append(st.conds, o)
	v.emitOrder(o)
	return nil
}

// register gives the order its id and records it as open.
func (v *Venue) register(o *order) {
	v.nextOrderID++
	o.id = v.nextOrderID
	if o.clientID == "" {
		o.clientID = "v" + strconv.FormatUint(o.id, 10)
	}
	o.acct.open[o.id] = o
	o.acct.clientIDs[o.clientID] = o
}

// lockSpot reserves what a spot order may spend: quote for a limit buy, base for a sell. Market buys sized by
// quantity are checked against the book when they execute.
func (v *Venue) lockSpot(o *order) error {
	in := o.inst.in
	if o.side == Sell {
		o.lockAsset = in.Base
		o.lock = in.Qty(o.remaining())
	} else if o.price != 0 {
		o.lockAsset = in.Quote
		o.lock = in.Notional(o.price * o.remaining())
	} else if o.quoteQty != 0 {
		o.lockAsset = in.Quote
		o.lock = in.Notional(o.quoteQty - o.cumQuote)
	} else {
		return nil
	}
	if err := v.lockFunds(o.acct, TradingWallet, o.lockAsset, o.lock); err != nil {
		o.lock = decimal.Zero
		return err
	}
	return nil
}

// reducible is how many lots the order may close of its position.
func (v *Venue) reducible(o *order) int64 {
	a := o.acct
	if a.hedge {
		p := a.positions[posKey{o.inst, o.posSide}]
		if p == nil {
			return 0
		}
		return p.qty
	}
	p := a.positions[posKey{o.inst, PosBoth}]
	if p == nil {
		return 0
	}
	if (p.qty > 0 && o.side == Sell) || (p.qty < 0 && o.side == Buy) {
		return abs64(p.qty)
	}
	return 0
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// orderMargin is the initial margin a perpetual order holds for the part of its remaining quantity that would
// open or increase a position, plus the taker fee on it.
func (v *Venue) orderMargin(o *order, px int64) decimal.Decimal {
	if o.reduceOnly {
		return decimal.Zero
	}
	inc := o.remaining()
	if !o.acct.hedge {
		inc = max(0, inc-v.reducible(o))
	}
	if inc == 0 {
		return decimal.Zero
	}
	in := o.inst.in
	lev := o.acct.settingsFor(o.inst).leverage
	n := in.Notional(px * inc)
	return n.Div(decimal.NewFromInt(int64(lev))).Add(n.Mul(in.TakerFee)).RoundCeil(feeScale)
}

// setPerpLock recomputes a perpetual order's margin lock at price px.
func (v *Venue) setPerpLock(o *order, px int64) error {
	want := v.orderMargin(o, px)
	quote := o.inst.in.Quote
	o.lockAsset = quote
	if d := want.Sub(o.lock); d.IsPositive() {
		if err := v.lockFunds(o.acct, TradingWallet, quote, d); err != nil {
			return err
		}
	} else if d.IsNegative() {
		v.unlockFunds(o.acct, TradingWallet, quote, d.Neg())
	}
	o.lock = want
	return nil
}

// available returns an account's free margin in a quote asset: free wallet balance plus unrealized PnL of cross
// positions minus their initial margin.
func (v *Venue) availableMargin(a *account, quote string) decimal.Decimal {
	b := a.bal(TradingWallet, quote)
	av := b.total.Sub(b.locked)
	for _, p := range a.positions {
		if p.isolated || p.qty == 0 || p.inst.in.Quote != quote {
			continue
		}
		av = av.Add(p.upnl()).Sub(p.initialMargin())
	}
	return av
}

// releaseLock gives back whatever an order still holds.
func (v *Venue) releaseLock(o *order) {
	if o.lock.IsPositive() {
		v.unlockFunds(o.acct, TradingWallet, o.lockAsset, o.lock)
	}
	o.lock = decimal.Zero
}

// execute runs a market or limit order against the book and rests what remains of a GTC/post-only limit order.
// fresh is set for orders arriving from Place (they get an id only once accepted); triggered orders are already
// registered and hold their spot lock.
func (v *Venue) execute(o *order, fresh bool) error {
	st := o.inst
	in := st.in
	book := st.book
	reject := func(err error) error {
		if fresh {
			v.releaseLock(o)
			return err
		}
		o.reason = err.Error()
		v.finish(o, StatusRejected)
		return nil
	}
	if o.reduceOnly && in.Market == Perp {
		r := v.reducible(o)
		if o.closePos {
			o.qty = r
		}
		if r == 0 {
			return reject(fmt.Errorf("%w: no position to reduce", ErrReduceOnly))
		}
		if o.qty > r {
			if o.acct.hedge || !o.closePos && o.typ == Limit {
				return reject(fmt.Errorf("%w: quantity %s above position %s", ErrReduceOnly, in.Qty(o.qty), in.Qty(r)))
			}
			o.qty = r
		}
	}
	// Post-only must not trade on arrival.
	if o.tif == PostOnly {
		if bp, ok := oppBest(book, o.side); ok && crosses(o.side == Buy, o.price, bp) {
			if fresh {
				v.register(o)
			}
			o.reason = "post-only order would trade"
			v.finish(o, StatusExpired)
			return nil
		}
	}
	// Funds.
	budget := int64(0)
	if in.Market == Spot {
		if o.price == 0 && o.side == Buy {
			if o.quoteQty != 0 {
				if fresh {
					if err := v.lockSpot(o); err != nil {
						return reject(err)
					}
				}
				budget = o.quoteQty
			} else {
				free := o.acct.bal(TradingWallet, in.Quote)
				freeUnits := free.total.Sub(free.locked).Div(in.unit).IntPart()
				cost, got := v.marketCost(book, o)
				if got == 0 {
					budget = 1 // nothing to buy; expires below
				} else if cost > freeUnits {
					return reject(fmt.Errorf("%w: market buy needs %s %s", ErrInsufficientFunds, in.Notional(cost), in.Quote))
				} else {
					budget = freeUnits
				}
			}
		} else if fresh {
			if err := v.lockSpot(o); err != nil {
				return reject(err)
			}
		}
	} else {
		px := o.price
		if px == 0 {
			px = st.lastTicks()
			if bp, ok := oppBest(book, o.side); ok && bp > px == (o.side == Buy) {
				px = bp
			}
		}
		if !o.reduceOnly {
			need := v.orderMargin(o, px)
			if v.availableMargin(o.acct, in.Quote).LessThan(need) {
				return reject(fmt.Errorf("%w: margin %s %s needed", ErrInsufficientFunds, need, in.Quote))
			}
		}
		if o.price != 0 {
			if err := v.setPerpLock(o, o.price); err != nil {
				return reject(err)
			}
		}
	}
	if o.tif == FOK && book.available(o, o.price, budget, o.qty) < o.qty {
		if fresh {
			v.register(o)
		}
		o.reason = "fill-or-kill could not fill completely"
		v.releaseLock(o)
		v.finish(o, StatusExpired)
		return nil
	}
	if fresh {
		v.register(o)
	}
	o.status = StatusNew
	_, stpStop := book.match(o, o.price, budget, func(m *order, price, q int64) {
		v.settleFill(o, m, price, q)
	}, func(m *order) {
		m.reason = "self-trade prevention"
		v.releaseLock(m)
		v.finish(m, StatusExpired)
	})
	if o.filled > 0 {
		o.status = StatusPartiallyFilled
	}
	switch {
	case o.filled == o.qty:
		v.finish(o, StatusFilled)
	case stpStop:
		o.reason = "self-trade prevention"
		v.releaseLock(o)
		v.finish(o, StatusExpired)
	case o.quoteQty != 0 && o.filled > 0:
		// A quote-sized market order is done when its budget is spent down to less than one lot.
		v.releaseLock(o)
		v.finish(o, StatusFilled)
	case o.price == 0 || o.tif == IOC || o.tif == FOK:
		o.reason = "no more liquidity within the order's limit"
		v.releaseLock(o)
		v.finish(o, StatusExpired)
	default:
		book.rest(o)
		v.emitOrder(o)
	}
	return nil
}

func oppBest(b *Book, s Side) (int64, bool) {
	if s == Buy {
		return b.BestAsk()
	}
	return b.BestBid()
}

// marketCost walks the book for a market order by quantity: the notional it would pay and the lots it would get.
func (v *Venue) marketCost(b *Book, o *order) (cost, got int64) {
	side := b.side(o.side != Buy)
	for i := len(side.levels) - 1; i >= 0 && got < o.qty; i-- {
		l := side.levels[i]
		q := min(l.total, o.qty-got)
		cost += q * l.price
		got += q
	}
	return
}

// finish moves an order to a final status, out of the open set, and emits its update.
func (v *Venue) finish(o *order, s OrderStatus) {
	o.status = s
	o.updated = v.Now()
	if o.lock.IsPositive() {
		v.releaseLock(o)
	}
	a := o.acct
	if !a.house {
		if _, ok := a.open[o.id]; ok {
			delete(a.open, o.id)
		}
		if a.closed.len() == len(a.closed.buf) {
			old := a.closed.buf[a.closed.next]
			if cur, ok := a.clientIDs[old.clientID]; ok && cur == old {
				delete(a.clientIDs, old.clientID)
			}
		}
		a.closed.push(o)
	}
	v.emitOrder(o)
}

func (v *Venue) emitOrder(o *order) {
	if o.acct.house || len(v.subs) == 0 {
		return
	}
	view := o.view()
	v.emit(Event{Kind: EvOrder, Account: o.acct.id, Instrument: o.inst.in.ID, Order: &view})
}

// settleFill books one fill for both sides and records the public trade.
func (v *Venue) settleFill(taker, maker *order, price, q int64) {
	st := taker.inst
	now := v.Now()
	v.nextTradeID++
	tid := v.nextTradeID
	taker.cumQuote += price * q
	maker.cumQuote += price * q
	taker.updated, maker.updated = now, now
	st.last = price
	st.lastQty = q
	tr := Trade{ID: tid, Instrument: st.in.ID, Price: st.in.Price(price), Qty: st.in.Qty(q), TakerSide: taker.side, Time: now}
	st.trades.push(tr)
	if st.live != nil {
		st.live.add(st, price, q, taker.side, now)
	}
	if len(v.subs) > 0 {
		v.emit(Event{Kind: EvTrade, Instrument: st.in.ID, Trade: &tr})
	}
	for _, side := range [2]struct {
		o     *order
		maker bool
	}{{taker, false}, {maker, true}} {
		o := side.o
		if o.acct.house {
			continue
		}
		if o != taker && o.filled == o.qty {
			// A fully filled maker is final after its settlement below.
			defer v.finish(o, StatusFilled)
		} else if o != taker {
			o.status = StatusPartiallyFilled
			defer v.emitOrder(o)
		}
		if st.in.Market == Spot {
			v.settleSpot(o, price, q, side.maker, tid)
		} else {
			v.settlePerp(o, price, q, side.maker, tid)
		}
	}
}

func (v *Venue) settleSpot(o *order, price, q int64, maker bool, tid uint64) {
	in := o.inst.in
	a := o.acct
	rate := in.TakerFee
	if maker {
		rate = in.MakerFee
	}
	qty := in.Qty(q)
	notional := in.Notional(price * q)
	ref := strconv.FormatUint(o.id, 10)
	var fee decimal.Decimal
	var feeAsset string
	if o.side == Buy {
		// Pay quote (from the lock when there is one), receive base minus the fee.
		paid := notional
		if o.lockAsset == in.Quote && o.lock.IsPositive() {
			release := notional
			if o.price != 0 {
				release = in.Notional(o.price * q)
			}
			release = decimal.Min(release, o.lock)
			o.lock = o.lock.Sub(release)
			mustOK(v.move(LedgerTrade, a, TradingWallet, v.house, TradingWallet, in.Quote, paid, true, ref))
			// The lock was taken at the limit price; give back the price improvement.
			v.unlockFunds(a, TradingWallet, in.Quote, release.Sub(paid))
		} else {
			mustOK(v.move(LedgerTrade, a, TradingWallet, v.house, TradingWallet, in.Quote, paid, false, ref))
		}
		mustOK(v.move(LedgerTrade, v.house, TradingWallet, a, TradingWallet, in.Base, qty, false, ref))
		fee = decimal.Min(qty.Mul(rate).RoundCeil(feeScale), qty)
		feeAsset = in.Base
	} else {
		fromLock := o.lockAsset == in.Base && o.lock.GreaterThanOrEqual(qty)
		if fromLock {
			o.lock = o.lock.Sub(qty)
		}
		mustOK(v.move(LedgerTrade, a, TradingWallet, v.house, TradingWallet, in.Base, qty, fromLock, ref))
		mustOK(v.move(LedgerTrade, v.house, TradingWallet, a, TradingWallet, in.Quote, notional, false, ref))
		fee = decimal.Min(notional.Mul(rate).RoundCeil(feeScale), notional)
		feeAsset = in.Quote
	}
	mustOK(v.move(LedgerFee, a, TradingWallet, v.fees, TradingWallet, feeAsset, fee, false, ref))
	v.recordFill(o, price, q, maker, tid, fee, feeAsset, decimal.Zero)
}

// mustOK panics on a settlement error: settlement runs after the funds were checked and locked, so an error here
// is a broken invariant, and continuing would corrupt the ledger.
func mustOK(err error) {
	if err != nil {
		panic(fmt.Sprintf("venue: settlement invariant broken: %v", err))
	}
}

func (v *Venue) recordFill(o *order, price, q int64, maker bool, tid uint64, fee decimal.Decimal, feeAsset string,
	pnl decimal.Decimal) {
	in := o.inst.in
	f := Fill{TradeID: tid, OrderID: o.id, ClientID: o.clientID, Account: o.acct.id, Instrument: in.ID, Side: o.side,
		PositionSide: o.posSide, Price: in.Price(price), Qty: in.Qty(q), Quote: in.Notional(price * q), Fee: fee,
		FeeAsset: feeAsset, Maker: maker, RealizedPnL: pnl, Time: v.Now()}
	o.acct.fills.push(f)
	if len(v.subs) > 0 {
		v.emit(Event{Kind: EvFill, Account: o.acct.id, Instrument: in.ID, Fill: &f})
	}
}

func (p *position) notional() decimal.Decimal {
	return p.entry.Mul(p.inst.in.Qty(abs64(p.qty)))
}

func (p *position) initialMargin() decimal.Decimal {
	lev := p.acct.settingsFor(p.inst).leverage
	return p.notional().Div(decimal.NewFromInt(int64(lev))).RoundCeil(feeScale)
}

// sign is +1 for long exposure, -1 for short.
func (p *position) sign() int64 {
	switch {
	case p.side == PosShort:
		return -1
	case p.side == PosLong:
		return 1
	case p.qty < 0:
		return -1
	}
	return 1
}

func (p *position) upnl() decimal.Decimal {
	if p.qty == 0 {
		return decimal.Zero
	}
	q := p.inst.in.Qty(abs64(p.qty))
	return p.inst.mark.Sub(p.entry).Mul(q).Mul(decimal.NewFromInt(p.sign()))
}

func (v *Venue) positionFor(a *account, st *instState, ps PositionSide) *position {
	k := posKey{st, ps}
	p := a.positions[k]
	if p == nil {
		s := a.settingsFor(st)
		p = &position{acct: a, inst: st, side: ps, isolated: s.isolated}
		a.positions[k] = p
	}
	return p
}

// settlePerp applies a fill to the order's position: it closes (realising PnL against the house) and/or opens at
// the fill price, pays the fee and keeps isolated margin and the order's margin lock in step.
func (v *Venue) settlePerp(o *order, price, q int64, maker bool, tid uint64) {
	in := o.inst.in
	a := o.acct
	st := o.inst
	ref := strconv.FormatUint(o.id, 10)
	p := v.positionFor(a, st, o.posSide)
	px := in.Price(price)
	signed := int64(o.side) * q
	var closeQ int64
	if p.side == PosBoth {
		if p.qty != 0 && (p.qty > 0) != (signed > 0) {
			closeQ = min(abs64(p.qty), q)
		}
	} else if o.reduceOnly {
		closeQ = min(p.qty, q)
	}
	openQ := q - closeQ
	pnl := decimal.Zero
	if closeQ > 0 {
		pnl = px.Sub(p.entry).Mul(in.Qty(closeQ)).Mul(decimal.NewFromInt(p.sign()))
		size := abs64(p.qty)
		if p.isolated {
			rel := p.margin
			if closeQ < size {
				rel = p.margin.Mul(decimal.NewFromInt(closeQ)).Div(decimal.NewFromInt(size)).RoundFloor(feeScale)
			}
			p.margin = p.margin.Sub(rel)
			v.unlockFunds(a, TradingWallet, in.Quote, rel)
		}
		if p.side == PosBoth {
			if p.qty > 0 {
				p.qty -= closeQ
			} else {
				p.qty += closeQ
			}
		} else {
			p.qty -= closeQ
		}
		p.realized = p.realized.Add(pnl)
		v.payPnL(a, in.Quote, pnl, ref)
	}
	if openQ > 0 {
		cur := abs64(p.qty)
		newQ := cur + openQ
		p.entry = p.entry.Mul(decimal.NewFromInt(cur)).Add(px.Mul(decimal.NewFromInt(openQ))).
			Div(decimal.NewFromInt(newQ)).Round(in.priceScale + 8)
		if p.side == PosBoth {
			if p.qty == 0 {
				p.qty = int64(o.side) * openQ
			} else if p.qty > 0 {
				p.qty += openQ
			} else {
				p.qty -= openQ
			}
		} else {
			p.qty += openQ
		}
		p.isolated = a.settingsFor(st).isolated
		if p.isolated {
			lev := a.settingsFor(st).leverage
			need := in.Notional(price * openQ).Div(decimal.NewFromInt(int64(lev))).RoundCeil(feeScale)
			// The order's margin lock covers this; move it from the order to the position.
			fromOrder := decimal.Min(o.lock, need)
			o.lock = o.lock.Sub(fromOrder)
			b := a.bal(TradingWallet, in.Quote)
			extra := decimal.Min(need.Sub(fromOrder), b.total.Sub(b.locked))
			if extra.IsPositive() {
				b.locked = b.locked.Add(extra)
			}
			p.margin = p.margin.Add(fromOrder).Add(extra)
		}
	}
	if p.qty == 0 {
		p.entry = decimal.Zero
		if p.margin.IsPositive() {
			v.unlockFunds(a, TradingWallet, in.Quote, p.margin)
			p.margin = decimal.Zero
		}
		delete(st.positions, p)
	} else {
		st.positions[p] = struct{}{}
	}
	p.updated = v.Now()
	// Fee.
	rate := in.TakerFee
	if maker {
		rate = in.MakerFee
	}
	fee := in.Notional(price * q).Mul(rate).RoundCeil(feeScale)
	// The order's lock included the taker fee on the increasing part; release the lock first so the fee is paid
	// from free funds.
	if o.price != 0 && !o.reduceOnly {
		if o.status != StatusFilled && o.filled < o.qty {
			_ = v.setPerpLock(o, o.price)
		} else {
			v.releaseLock(o)
		}
	}
	fee = v.payUpTo(a, in.Quote, fee, v.fees, LedgerFee, ref)
	v.recordFill(o, price, q, maker, tid, fee, in.Quote, pnl)
	v.emitPosition(p)
	v.clampReduceOnly(a, st)
}

// payPnL settles realised PnL with the house. A loss larger than the free balance first cancels the account's
// open perpetual orders (to free their margin); what still cannot be paid is absorbed by the house (insurance).
func (v *Venue) payPnL(a *account, quote string, pnl decimal.Decimal, ref string) {
	if pnl.IsPositive() {
		mustOK(v.move(LedgerRealized, v.house, TradingWallet, a, TradingWallet, quote, pnl, false, ref))
		return
	}
	if pnl.IsZero() {
		return
	}
	loss := pnl.Neg()
	b := a.bal(TradingWallet, quote)
	if b.total.Sub(b.locked).LessThan(loss) {
		v.cancelPerpOrders(a, "margin needed to settle a loss")
	}
	v.payUpTo(a, quote, loss, v.house, LedgerRealized, ref)
}

// payUpTo pays amount (or the free balance, if smaller) to another account and returns what was paid.
func (v *Venue) payUpTo(a *account, asset string, amount decimal.Decimal, to *account, kind LedgerKind, ref string) decimal.Decimal {
	b := a.bal(TradingWallet, asset)
	pay := decimal.Min(amount, b.total.Sub(b.locked))
	if pay.IsNegative() {
		pay = decimal.Zero
	}
	mustOK(v.move(kind, a, TradingWallet, to, TradingWallet, asset, pay, false, ref))
	return pay
}

func (v *Venue) cancelPerpOrders(a *account, reason string) {
	for _, o := range sortedOrders(a.open) {
		if o.inst.in.Market == Perp && o.filled < o.qty && o.lvl != nil || o.status == StatusUntriggered && o.inst.in.Market == Perp {
			if o.lock.IsPositive() || o.status == StatusUntriggered {
				o.reason = reason
				v.cancelLocked(o)
			}
		}
	}
}

// clampReduceOnly shrinks resting reduce-only orders so together they never exceed the position they reduce.
func (v *Venue) clampReduceOnly(a *account, st *instState) {
	var left = map[PositionSide]int64{}
	for _, o := range sortedOrders(a.open) {
		if o.inst != st || !o.reduceOnly || o.lvl == nil {
			continue
		}
		k := o.posSide
		if _, ok := left[k]; !ok {
			left[k] = v.reducible(o)
		}
		r := o.remaining()
		if r <= left[k] {
			left[k] -= r
			continue
		}
		cut := r - left[k]
		left[k] = 0
		if cut == r {
			o.reason = "reduce-only order exceeds the position"
			v.cancelLocked(o)
			continue
		}
		st.book.reduce(o, cut)
		o.qty -= cut
		v.emitOrder(o)
	}
}

func sortedOrders(m map[uint64]*order) []*order {
	out := make([]*order, 0, len(m))
	for _, o := range m {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

func (v *Venue) emitPosition(p *position) {
	if len(v.subs) == 0 {
		return
	}
	view := p.view()
	v.emit(Event{Kind: EvPosition, Account: p.acct.id, Instrument: p.inst.in.ID, Position: &view})
}

func (p *position) view() Position {
	in := p.inst.in
	s := p.acct.settingsFor(p.inst)
	q := in.Qty(p.qty)
	notional := p.inst.mark.Mul(in.Qty(abs64(p.qty)))
	pos := Position{Account: p.acct.id, Instrument: in.ID, Side: p.side, Qty: q, EntryPrice: p.entry,
		MarkPrice: p.inst.mark, UnrealizedPnL: p.upnl(), RealizedPnL: p.realized, Leverage: s.leverage,
		Isolated: p.isolated, Margin: p.margin, MaintMargin: in.MaintMargin(notional), Notional: notional,
		Updated: p.updated}
	if !p.isolated {
		pos.Margin = p.initialMargin()
	}
	if p.qty != 0 {
		pos.BreakEven = p.breakEven()
		pos.MarginRatio = p.marginRatio(pos.MaintMargin)
	}
	if p.isolated && p.qty != 0 {
		// Liquidation when margin + (liq - entry) * q * sign = maint(at entry notional, approximately).
		qd := in.Qty(abs64(p.qty))
		sign := decimal.NewFromInt(p.sign())
		mm := in.MaintMargin(p.entry.Mul(qd))
		liq := p.entry.Sub(p.margin.Sub(mm).Div(qd).Mul(sign))
		if liq.IsNegative() {
			liq = decimal.Zero
		}
		pos.LiqPrice = liq.Round(in.priceScale)
	}
	return pos
}

// breakEven is the price at which closing the whole position nets zero after the taker fee of opening it and of
// closing it, both taken on the entry notional (Binance's formula): long entry * (1 + 2 * taker), short
// entry * (1 - 2 * taker). Fees actually paid as maker are not tracked per position.
func (p *position) breakEven() decimal.Decimal {
	in := p.inst.in
	move := p.entry.Mul(in.TakerFee).Mul(decimal.NewFromInt(2 * p.sign()))
	return p.entry.Add(move).Round(in.priceScale + 4)
}

// marginRatio is the maintenance margin over the margin balance (Binance's margin ratio; liquidation at 1):
// isolated, the position's maintenance margin over its margin plus unrealized PnL; cross, the account's cross
// maintenance margin over its cross equity (see crossEquity). A margin balance at or below zero is 1.
func (p *position) marginRatio(maint decimal.Decimal) decimal.Decimal {
	balance := p.margin.Add(p.upnl())
	if !p.isolated {
		balance, maint = p.acct.crossEquity(p.inst.in.Quote)
	}
	if !balance.IsPositive() {
		return decimal.NewFromInt(1)
	}
	return maint.DivRound(balance, ratioScale)
}

// ratioScale is the decimals of a margin ratio.
const ratioScale = 8

func (o *order) view() Order {
	in := o.inst.in
	v := Order{ID: o.id, ClientID: o.clientID, Account: o.acct.id, Instrument: in.ID, Side: o.side, Type: o.typ,
		OrigType: o.origType, TIF: o.tif, Qty: in.Qty(o.qty), Filled: in.Qty(o.filled),
		CumQuote: in.Notional(o.cumQuote), TriggerBy: o.trigger, ReduceOnly: o.reduceOnly, ClosePosition: o.closePos,
		PositionSide: o.posSide, STP: o.stp, Status: o.status, Reason: o.reason, Liquidation: o.liquidation,
		Created: o.created, Updated: o.updated}
	if o.price != 0 {
		v.Price = in.Price(o.price)
	}
	if o.stop != 0 {
		v.StopPrice = in.Price(o.stop)
	}
	if o.quoteQty != 0 {
		v.QuoteQty = in.Notional(o.quoteQty)
	}
	if o.closePos && o.status == StatusUntriggered {
		v.Qty = decimal.Zero
	}
	if o.filled > 0 {
		v.AvgPrice = in.Notional(o.cumQuote).Div(in.Qty(o.filled)).Round(in.priceScale + 4)
	}
	return v
}

// afterTrades fires conditional orders that the last trades triggered, repeatedly (a triggered order trades and
// may trigger others), bounded so a pathological cascade cannot spin.
func (v *Venue) afterTrades(st *instState) {
	for range 64 {
		if !v.checkTriggers(st, v.Now()) {
			return
		}
	}
}

// checkTriggers fires due conditional orders of one instrument; it reports whether any fired.
func (v *Venue) checkTriggers(st *instState, now int64) bool {
	if len(st.conds) == 0 {
		return false
	}
	var due []*order
	kept := st.conds[:0]
	for _, o := range st.conds {
		if triggered(o, st.triggerTicks(o.trigger)) {
			due = append(due, o)
		} else {
			kept = append(kept, o)
		}
	}
	clear(st.conds[len(kept):])
	st.conds = kept
	for _, o := range due {
		if o.typ.limitAfter() {
			o.typ = Limit
		} else {
			o.typ = Market
			o.tif = IOC
		}
		o.status = StatusNew
		o.updated = now
		_ = v.execute(o, false)
	}
	return len(due) > 0
}

// Cancel cancels an open order by id (or by client id when id is 0).
func (v *Venue) Cancel(ctx context.Context, account, instrument string, id uint64, clientID string) (Order, error) {
	if err := ctx.Err(); err != nil {
		return Order{}, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	defer v.flushLocked()
	o, err := v.findOpen(account, instrument, id, clientID)
	if err != nil {
		return Order{}, err
	}
	v.cancelLocked(o)
	return o.view(), nil
}

func (v *Venue) findOpen(account, instrument string, id uint64, clientID string) (*order, error) {
	a, err := v.userAccount(account)
	if err != nil {
		return nil, err
	}
	var o *order
	if id != 0 {
		o = a.open[id]
	} else if clientID != "" {
		o = a.clientIDs[clientID]
	}
	if o == nil || o.status.Final() || (instrument != "" && o.inst.in.ID != instrument) {
		return nil, fmt.Errorf("%w: id %d client id %q", ErrOrderNotFound, id, clientID)
	}
	return o, nil
}

func (v *Venue) cancelLocked(o *order) {
	if o.lvl != nil {
		o.inst.book.unlink(o)
	}
	if o.status == StatusUntriggered {
		for i, c := range o.inst.conds {
			if c == o {
				o.inst.conds = append(o.inst.conds[:i], o.inst.conds[i+1:]...)
				break
			}
		}
	}
	v.releaseLock(o)
	v.finish(o, StatusCanceled)
}

// CancelAll cancels every open order of the account on one instrument ("" = all instruments) and returns them.
func (v *Venue) CancelAll(ctx context.Context, account, instrument string) ([]Order, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	defer v.flushLocked()
	a, err := v.userAccount(account)
	if err != nil {
		return nil, err
	}
	var out []Order
	for _, o := range sortedOrders(a.open) {
		if instrument != "" && o.inst.in.ID != instrument {
			continue
		}
		v.cancelLocked(o)
		out = append(out, o.view())
	}
	return out, nil
}

// Amend changes a resting limit order's price and/or quantity (zero keeps the current value), or an untriggered
// conditional order's stop price and quantity. A quantity decrease keeps time priority; a price change or a
// quantity increase loses it (the order goes to the back of its new level, and may trade if it now crosses; a
// post-only order that would cross is refused). The new quantity must exceed what is already filled.
func (v *Venue) Amend(ctx context.Context, account, instrument string, id uint64, clientID string,
	price, qty, stop decimal.Decimal) (Order, error) {
	if err := ctx.Err(); err != nil {
		return Order{}, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	defer v.flushLocked()
	o, err := v.findOpen(account, instrument, id, clientID)
	if err != nil {
		return Order{}, err
	}
	st := o.inst
	in := st.in
	newPrice, newQty, newStop := o.price, o.qty, o.stop
	if !price.IsZero() {
		if o.price == 0 {
			return Order{}, fmt.Errorf("%w: order has no limit price", ErrInvalidOrder)
		}
		if newPrice, err = in.Ticks(price); err != nil {
			return Order{}, err
		}
	}
	if !qty.IsZero() {
		if o.closePos {
			return Order{}, fmt.Errorf("%w: close-position orders have no quantity", ErrInvalidOrder)
		}
		if newQty, err = in.Lots(qty); err != nil {
			return Order{}, err
		}
		if newQty <= o.filled || newQty > in.maxQty {
			return Order{}, fmt.Errorf("%w: new quantity %s must exceed filled %s and stay within %s",
				ErrInvalidOrder, qty, in.Qty(o.filled), in.MaxQty)
		}
	}
	if !stop.IsZero() {
		if o.status != StatusUntriggered {
			return Order{}, fmt.Errorf("%w: only untriggered orders have a stop price", ErrInvalidOrder)
		}
		if newStop, err = in.Ticks(stop); err != nil {
			return Order{}, err
		}
	}
	if newPrice == o.price && newQty == o.qty && newStop == o.stop {
		return o.view(), nil
	}
	if newPrice != 0 && !o.reduceOnly && in.Notional(newPrice*(newQty)).LessThan(in.MinNotional) {
		return Order{}, fmt.Errorf("%w", ErrMinNotional)
	}
	if o.status == StatusUntriggered {
		old := *o
		o.stop, o.qty, o.price = newStop, newQty, newPrice
		if triggered(o, st.triggerTicks(o.trigger)) {
			o.stop, o.qty, o.price = old.stop, old.qty, old.price
			return Order{}, ErrWouldTrigger
		}
		if in.Market == Spot {
			v.releaseLock(o)
			if err := v.lockSpot(o); err != nil {
				o.stop, o.qty, o.price = old.stop, old.qty, old.price
				mustOK(v.lockSpot(o))
				return Order{}, err
			}
		}
		o.updated = v.Now()
		v.emitOrder(o)
		return o.view(), nil
	}
	if o.tif == PostOnly && newPrice != o.price {
		if bp, ok := oppBest(st.book, o.side); ok && crosses(o.side == Buy, newPrice, bp) {
			return Order{}, fmt.Errorf("%w: post-only order would trade at the new price", ErrInvalidOrder)
		}
	}
	if newPrice == o.price && newQty < o.qty {
		// Decrease in place: keeps priority.
		cut := o.qty - newQty
		st.book.reduce(o, cut)
		o.qty = newQty
		v.relock(o)
		o.updated = v.Now()
		v.emitOrder(o)
		return o.view(), nil
	}
	// Re-queue: take it out, check funds at the new terms, and run it again as a taker.
	oldPrice, oldQty := o.price, o.qty
	st.book.unlink(o)
	o.price, o.qty = newPrice, newQty
	if err := v.relock(o); err != nil {
		o.price, o.qty = oldPrice, oldQty
		_ = v.relock(o)
		st.book.rest(o)
		return Order{}, err
	}
	o.updated = v.Now()
	_, stpStop := st.book.match(o, o.price, 0, func(m *order, p, q int64) { v.settleFill(o, m, p, q) },
		func(m *order) { m.reason = "self-trade prevention"; v.releaseLock(m); v.finish(m, StatusExpired) })
	switch {
	case o.filled == o.qty:
		v.finish(o, StatusFilled)
	case stpStop:
		o.reason = "self-trade prevention"
		v.finish(o, StatusExpired)
	default:
		if o.filled > 0 {
			o.status = StatusPartiallyFilled
		}
		st.book.rest(o)
		v.emitOrder(o)
	}
	view := o.view()
	v.afterTrades(st)
	return view, nil
}

// relock recomputes a resting order's lock after its terms changed.
func (v *Venue) relock(o *order) error {
	if o.inst.in.Market == Perp {
		return v.setPerpLock(o, o.price)
	}
	in := o.inst.in
	var want decimal.Decimal
	if o.side == Sell {
		want = in.Qty(o.remaining())
	} else {
		want = in.Notional(o.price * o.remaining())
	}
	d := want.Sub(o.lock)
	if d.IsPositive() {
		if err := v.lockFunds(o.acct, TradingWallet, o.lockAsset, d); err != nil {
			return err
		}
	} else if d.IsNegative() {
		v.unlockFunds(o.acct, TradingWallet, o.lockAsset, d.Neg())
	}
	o.lock = want
	return nil
}

// GetOrder returns an order of the account by id (or client id when id is 0), open or recently closed.
func (v *Venue) GetOrder(account string, id uint64, clientID string) (Order, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	a, err := v.userAccount(account)
	if err != nil {
		return Order{}, err
	}
	if id != 0 {
		if o, ok := a.open[id]; ok {
			return o.view(), nil
		}
		for _, o := range a.closed.last(0) {
			if o.id == id {
				return o.view(), nil
			}
		}
	} else if o, ok := a.clientIDs[clientID]; ok {
		return o.view(), nil
	}
	return Order{}, fmt.Errorf("%w: id %d client id %q", ErrOrderNotFound, id, clientID)
}

// OpenOrders lists an account's open orders (resting and untriggered), oldest first; instrument "" = all.
func (v *Venue) OpenOrders(account, instrument string) ([]Order, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	a, err := v.userAccount(account)
	if err != nil {
		return nil, err
	}
	var out []Order
	for _, o := range sortedOrders(a.open) {
		if instrument == "" || o.inst.in.ID == instrument {
			out = append(out, o.view())
		}
	}
	return out, nil
}

// OrderHistory lists recently closed orders, oldest first (up to limit, 0 = all kept).
func (v *Venue) OrderHistory(account, instrument string, limit int) ([]Order, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	a, err := v.userAccount(account)
	if err != nil {
		return nil, err
	}
	var out []Order
	for _, o := range a.closed.last(0) {
		if instrument == "" || o.inst.in.ID == instrument {
			out = append(out, o.view())
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, nil
}

// Fills lists recent fills, oldest first (up to limit, 0 = all kept).
func (v *Venue) Fills(account, instrument string, limit int) ([]Fill, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	a, err := v.userAccount(account)
	if err != nil {
		return nil, err
	}
	var out []Fill
	for _, f := range a.fills.last(0) {
		if instrument == "" || f.Instrument == instrument {
			out = append(out, f)
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, nil
}

// placeHouse rests (or trades) a house limit order: synthetic liquidity with no funds behind it.
func (v *Venue) placeHouse(st *instState, side Side, price, lots int64) *order {
	now := v.Now()
	o := &order{acct: v.house, inst: st, side: side, typ: Limit, origType: Limit, tif: GTC, price: price, qty: lots,
		stp: STPNone, status: StatusNew, created: now, updated: now}
	v.nextOrderID++
	o.id = v.nextOrderID
	st.book.match(o, price, 0, func(m *order, p, q int64) { v.settleFill(o, m, p, q) }, func(*order) {})
	if o.filled < o.qty {
		st.book.rest(o)
	}
	return o
}

// houseMarket sends a synthetic market order (a taker) of lots; it returns the lots filled.
func (v *Venue) houseMarket(st *instState, side Side, lots int64) int64 {
	now := v.Now()
	o := &order{acct: v.house, inst: st, side: side, typ: Market, origType: Market, tif: IOC, qty: lots,
		stp: STPNone, status: StatusNew, created: now, updated: now}
	f, _ := st.book.match(o, 0, 0, func(m *order, p, q int64) { v.settleFill(o, m, p, q) }, func(*order) {})
	return f
}

// AddLiquidity rests a house limit order (synthetic liquidity without funds) and returns its id. Emulator tests
// and scripted scenarios use it to build a book by hand; CancelLiquidity removes it.
func (v *Venue) AddLiquidity(instrument string, side Side, price, qty decimal.Decimal) (uint64, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	defer v.flushLocked()
	st, err := v.inst(instrument)
	if err != nil {
		return 0, err
	}
	p, err := st.in.Ticks(price)
	if err != nil {
		return 0, err
	}
	q, err := st.in.Lots(qty)
	if err != nil {
		return 0, err
	}
	o := v.placeHouse(st, side, p, q)
	v.afterTrades(st)
	return o.id, nil
}
