package venue

import (
	"fmt"

	"github.com/shopspring/decimal"
)

// FundingPayment is one funding fee settled on a perpetual position.
type FundingPayment struct {
	// ID grows with every payment of the venue (unique across accounts), so it orders payments like their time.
	ID         uint64
	Account    string
	Instrument string
	Asset      string
	// Amount is what the account received (positive) or paid (negative). A payment the account could not cover
	// in full records what was actually paid.
	Amount decimal.Decimal
	Rate   decimal.Decimal
	// Qty is the position size it was paid on, in base units: signed in one-way mode (negative short), absolute in
	// hedge mode (Side says the direction).
	Qty  decimal.Decimal
	Side PositionSide
	// Mark is the mark price the fee was computed at (fee = mark × |qty| × rate).
	Mark decimal.Decimal
	Time int64
}

// fundingKeep is how many funding payments an account remembers (newest kept): about 4 months of 8-hourly
// settlements on 40 perpetuals.
const fundingKeep = 15000

// recordFunding remembers a settled payment on the position's account.
func (v *Venue) recordFunding(p *position, rate, amount decimal.Decimal, at int64) {
	a := p.acct
	if a.funding == nil {
		r := newRing[FundingPayment](fundingKeep)
		a.funding = &r
	}
	v.nextFunding++
	qty := p.inst.in.Qty(abs64(p.qty))
	if p.side == PosBoth && p.qty < 0 {
		qty = qty.Neg()
	}
	a.funding.push(FundingPayment{ID: v.nextFunding, Account: a.id, Instrument: p.inst.in.ID, Asset: p.inst.in.Quote,
		Amount: amount, Rate: rate, Qty: qty, Side: p.side, Mark: p.inst.mark, Time: at})
}

// FundingQuery selects funding payments: Instrument "" means all; From/To bound the time (0: unbounded, both
// inclusive); BeforeID/AfterID keep payments with a smaller/larger id (0: no bound); Limit 0 means all.
type FundingQuery struct {
	Instrument string
	From, To   int64
	BeforeID   uint64
	AfterID    uint64
	Limit      int
	// OldestFirst returns the oldest matching payments first (the limit then keeps the oldest ones).
	OldestFirst bool
}

// FundingPayments lists an account's funding payments, newest first unless q.OldestFirst.
func (v *Venue) FundingPayments(account string, q FundingQuery) ([]FundingPayment, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	a, ok := v.accounts[account]
	if !ok || a.system {
		return nil, fmt.Errorf("%w: %q", ErrUnknownAccount, account)
	}
	if a.funding == nil {
		return nil, nil
	}
	all := a.funding.last(0) // oldest first
	match := func(f FundingPayment) bool {
		return (q.Instrument == "" || f.Instrument == q.Instrument) && (q.From == 0 || f.Time >= q.From) &&
			(q.To == 0 || f.Time <= q.To) && (q.BeforeID == 0 || f.ID < q.BeforeID) && (q.AfterID == 0 || f.ID > q.AfterID)
	}
	var out []FundingPayment
	if q.OldestFirst {
		for _, f := range all {
			if match(f) {
				out = append(out, f)
				if q.Limit > 0 && len(out) == q.Limit {
					break
				}
			}
		}
		return out, nil
	}
	for i := len(all) - 1; i >= 0; i-- {
		if match(all[i]) {
			out = append(out, all[i])
			if q.Limit > 0 && len(out) == q.Limit {
				break
			}
		}
	}
	return out, nil
}
