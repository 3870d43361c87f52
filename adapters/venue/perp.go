package venue

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/shopspring/decimal"
)

// Positions lists an account's open perpetual positions sorted by instrument and side.
func (v *Venue) Positions(account string) ([]Position, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	a, err := v.userAccount(account)
	if err != nil {
		return nil, err
	}
	var out []Position
	for _, p := range a.positions {
		if p.qty != 0 {
			out = append(out, p.view())
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Instrument != out[j].Instrument {
			return out[i].Instrument < out[j].Instrument
		}
		return out[i].Side < out[j].Side
	})
	return out, nil
}

// PerpSettings is an account's leverage and margin mode on one perpetual, plus its position mode.
type PerpSettings struct {
	Leverage int
	Isolated bool
	Hedge    bool
}

// Settings returns the account's settings for an instrument.
func (v *Venue) Settings(account, instrument string) (PerpSettings, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	a, st, err := v.perpAccount(account, instrument)
	if err != nil {
		return PerpSettings{}, err
	}
	s := a.settingsFor(st)
	return PerpSettings{Leverage: s.leverage, Isolated: s.isolated, Hedge: a.hedge}, nil
}

func (v *Venue) perpAccount(account, instrument string) (*account, *instState, error) {
	a, err := v.userAccount(account)
	if err != nil {
		return nil, nil, err
	}
	st, err := v.inst(instrument)
	if err != nil {
		return nil, nil, err
	}
	if st.in.Market != Perp {
		return nil, nil, fmt.Errorf("%w: %s is not a perpetual", ErrInvalidOrder, instrument)
	}
	return a, st, nil
}

func (a *account) hasActivity(st *instState) bool {
	for _, o := range a.open {
		if st == nil || o.inst == st {
			if o.inst.in.Market == Perp {
				return true
			}
		}
	}
	for k, p := range a.positions {
		if (st == nil || k.inst == st) && p.qty != 0 {
			return true
		}
	}
	return false
}

// SetLeverage sets the leverage for an instrument. It must be within the tier the current position's notional
// falls in, and the account must have the margin the new leverage needs for the position.
func (v *Venue) SetLeverage(account, instrument string, lev int) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	defer v.flushLocked()
	a, st, err := v.perpAccount(account, instrument)
	if err != nil {
		return err
	}
	if lev < 1 || lev > st.in.MaxLeverage {
		return fmt.Errorf("%w: %d outside 1..%d", ErrLeverage, lev, st.in.MaxLeverage)
	}
	var notional decimal.Decimal
	for k, p := range a.positions {
		if k.inst == st {
			notional = notional.Add(p.notional())
		}
	}
	if t := st.in.Tier(notional); lev > t.MaxLeverage {
		return fmt.Errorf("%w: position notional %s allows at most %dx", ErrLeverage, notional, t.MaxLeverage)
	}
	s := a.settingsFor(st)
	old := s.leverage
	s.leverage = lev
	if lev < old && v.availableMargin(a, st.in.Quote).IsNegative() {
		s.leverage = old
		return fmt.Errorf("%w: not enough margin for %dx", ErrInsufficientFunds, lev)
	}
	return nil
}

// SetMarginMode switches an instrument between cross and isolated margin; not allowed with open orders or a
// position on it.
func (v *Venue) SetMarginMode(account, instrument string, isolated bool) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	a, st, err := v.perpAccount(account, instrument)
	if err != nil {
		return err
	}
	s := a.settingsFor(st)
	if s.isolated == isolated {
		return nil
	}
	if a.hasActivity(st) {
		return ErrModeChange
	}
	s.isolated = isolated
	return nil
}

// SetPositionMode switches between one-way (hedge=false) and hedge mode; not allowed with any open perpetual
// order or position.
func (v *Venue) SetPositionMode(account string, hedge bool) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	a, err := v.userAccount(account)
	if err != nil {
		return err
	}
	if a.hedge == hedge {
		return nil
	}
	if a.hasActivity(nil) {
		return ErrModeChange
	}
	a.hedge = hedge
	return nil
}

// AdjustMargin adds (positive) or removes (negative) isolated margin of a position.
func (v *Venue) AdjustMargin(account, instrument string, side PositionSide, amount decimal.Decimal) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	defer v.flushLocked()
	a, st, err := v.perpAccount(account, instrument)
	if err != nil {
		return err
	}
	p := a.positions[posKey{st, side}]
	if p == nil || p.qty == 0 || !p.isolated {
		return fmt.Errorf("%w: no isolated position", ErrInvalidOrder)
	}
	if amount.IsPositive() {
		if err := v.lockFunds(a, TradingWallet, st.in.Quote, amount); err != nil {
			return err
		}
		p.margin = p.margin.Add(amount)
	} else {
		rel := amount.Neg()
		// Keep at least the initial margin.
		if p.margin.Sub(rel).LessThan(p.initialMargin()) {
			return fmt.Errorf("%w: margin would fall below the initial margin", ErrInsufficientFunds)
		}
		p.margin = p.margin.Sub(rel)
		v.unlockFunds(a, TradingWallet, st.in.Quote, rel)
	}
	v.emitPosition(p)
	return nil
}

// settleFunding pays funding on every open position of a perpetual: longs pay shorts when the rate is positive
// (here both pay to or receive from the house).
func (v *Venue) settleFunding(st *instState, at int64) {
	rate := st.funding
	if len(st.fundHist) < 3*365*10 {
		st.fundHist[at] = rate
	}
	ref := "funding:" + strconv.FormatInt(at, 10)
	for _, p := range sortedPositions(st) {
		if p.qty == 0 {
			continue
		}
		amt := st.mark.Mul(st.in.Qty(abs64(p.qty))).Mul(rate).Mul(decimal.NewFromInt(p.sign())).RoundCeil(feeScale)
		// amt > 0: the position pays.
		if amt.IsPositive() {
			if p.isolated {
				take := decimal.Min(amt, p.margin)
				p.margin = p.margin.Sub(take)
				v.unlockFunds(p.acct, TradingWallet, st.in.Quote, take)
			}
			if paid := v.payUpTo(p.acct, st.in.Quote, amt, v.house, LedgerFunding, ref); paid.IsPositive() {
				v.recordFunding(p, rate, paid.Neg(), at)
			}
		} else if amt.IsNegative() {
			mustOK(v.move(LedgerFunding, v.house, TradingWallet, p.acct, TradingWallet, st.in.Quote, amt.Neg(), false, ref))
			v.recordFunding(p, rate, amt.Neg(), at)
		}
		v.emitPosition(p)
	}
	if len(v.subs) > 0 {
		m := st.markView(at)
		v.emit(Event{Kind: EvMark, Instrument: st.in.ID, Mark: &m})
	}
}

func sortedPositions(st *instState) []*position {
	out := make([]*position, 0, len(st.positions))
	for p := range st.positions {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].acct.id != out[j].acct.id {
			return out[i].acct.id < out[j].acct.id
		}
		return out[i].side < out[j].side
	})
	return out
}

// checkLiquidations liquidates positions whose margin no longer covers the maintenance requirement at the mark
// price: an isolated position on its own margin, cross positions on the account's whole trading balance.
func (v *Venue) checkLiquidations(st *instState, now int64) {
	// Equity moves with the mark; between mark changes there is nothing new to check (fills that worsen equity
	// are checked at the next mark update, as on real venues whose liquidation engines run on the mark).
	if len(st.positions) == 0 || st.mark.Equal(st.liqMark) {
		return
	}
	st.liqMark = st.mark
	for _, p := range sortedPositions(st) {
		if p.qty == 0 {
			continue
		}
		if p.isolated {
			if p.margin.Add(p.upnl()).LessThanOrEqual(p.inst.in.MaintMargin(p.inst.mark.Mul(p.inst.in.Qty(abs64(p.qty))))) {
				v.liquidate(p, now)
			}
			continue
		}
		a := p.acct
		equity, maint := v.crossEquity(a, st.in.Quote)
		if equity.LessThanOrEqual(maint) {
			for _, q := range a.crossPositions(st.in.Quote) {
				v.liquidate(q, now)
			}
		}
	}
}

// crossEquity is the cross-margin equity (wallet balance without isolated margin, plus cross unrealized PnL) and
// the total cross maintenance margin.
func (v *Venue) crossEquity(a *account, quote string) (equity, maint decimal.Decimal) {
	return a.crossEquity(quote)
}

func (a *account) crossEquity(quote string) (equity, maint decimal.Decimal) {
	b := a.bal(TradingWallet, quote)
	equity = b.total
	for _, p := range a.positions {
		if p.qty == 0 || p.inst.in.Quote != quote {
			continue
		}
		if p.isolated {
			equity = equity.Sub(p.margin)
			continue
		}
		equity = equity.Add(p.upnl())
		maint = maint.Add(p.inst.in.MaintMargin(p.inst.mark.Mul(p.inst.in.Qty(abs64(p.qty)))))
	}
	return
}

func (a *account) crossPositions(quote string) []*position {
	var out []*position
	for _, p := range a.positions {
		if !p.isolated && p.qty != 0 && p.inst.in.Quote == quote {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].inst.in.ID != out[j].inst.in.ID {
			return out[i].inst.in.ID < out[j].inst.in.ID
		}
		return out[i].side < out[j].side
	})
	return out
}

// liquidate closes a position at the mark price against the house, after cancelling the account's orders on the
// instrument. The loss is paid from the account's balance; any shortfall is absorbed by the house.
func (v *Venue) liquidate(p *position, now int64) {
	a := p.acct
	st := p.inst
	for _, o := range sortedOrders(a.open) {
		if o.inst == st {
			o.reason = "liquidation"
			v.cancelLocked(o)
		}
	}
	if p.qty == 0 {
		return
	}
	side := Sell
	if p.sign() < 0 {
		side = Buy
	}
	o := &order{acct: a, inst: st, side: side, typ: Market, origType: Market, tif: IOC, qty: abs64(p.qty),
		reduceOnly: true, posSide: p.side, created: now, updated: now, liquidation: true}
	v.register(o)
	delete(a.clientIDs, o.clientID)
	o.clientID = "liquidation-" + strconv.FormatUint(o.id, 10)
	a.clientIDs[o.clientID] = o
	px := st.markTicks()
	o.filled = o.qty
	v.nextTradeID++
	o.cumQuote = px * o.qty
	v.settlePerp(o, px, o.qty, false, v.nextTradeID)
	v.finish(o, StatusFilled)
}

// SetMarkPrice overrides the mark and index price of an instrument (tests and scripted scenarios; the synthetic
// market sets them itself) and runs the mark-price triggers and liquidation checks.
func (v *Venue) SetMarkPrice(id string, mark decimal.Decimal) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	defer v.flushLocked()
	st, err := v.inst(id)
	if err != nil {
		return err
	}
	if !mark.IsPositive() {
		return fmt.Errorf("%w: mark %s", ErrOutOfRange, mark)
	}
	st.mark, st.index = mark, mark
	st.liqMark = decimal.Zero
	now := v.Now()
	v.checkTriggers(st, now)
	if st.in.Market == Perp {
		v.checkLiquidations(st, now)
	}
	return nil
}
