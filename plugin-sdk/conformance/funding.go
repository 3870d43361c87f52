package conformance

import (
	"context"
	"errors"
	"fmt"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// checkFundingPayments opens a small long on the SWAP symbol, waits for the next funding settlement (when it comes
// within Options.FundingWait: point the plugin at an emulator with a short funding interval), and reads the
// payment back with ListFundingPayments: the symbol, a signed canonical amount (a long pays a positive rate and
// receives a negative one), the asset, the rate and size where given, newest first, and the cursor.
func checkFundingPayments(ctx context.Context, e *env) error {
	if err := e.needTrading(); err != nil {
		return err
	}
	if !e.trading().GetFundingPayments() {
		return na("the plugin does not claim funding_payments")
	}
	in, ok := e.symbols[exchangev1.MarketType_MARKET_TYPE_SWAP]
	if !ok {
		return na("the plugin offers no SWAP market")
	}
	// Every row of the account's history must be well formed, whatever is there already.
	all, err := e.c.ListFundingPayments(ctx, &exchangev1.ListFundingPaymentsRequest{Account: e.opts.Account,
		Page: &exchangev1.HistoryPage{Limit: 50}})
	if err != nil {
		return describeErr("ListFundingPayments", err)
	}
	if err := checkPaymentRows(all.GetPayments(), ""); err != nil {
		return err
	}
	next, err := e.nextFunding(ctx, in)
	if err != nil {
		return err
	}
	if until := time.Until(time.UnixMilli(next)); until > e.opts.FundingWait {
		return na("the next funding settlement of %s is %s away, beyond the wait of %s (Options.FundingWait)",
			in.GetSymbol(), until.Round(time.Second), e.opts.FundingWait)
	}
	p, err := e.planFor(ctx, in)
	if err != nil {
		return err
	}
	if pos, err := e.position(ctx, p); err != nil || pos != nil {
		return errors.Join(err, fmt.Errorf("the account already holds a %s position; run on a flat account", in.GetSymbol()))
	}
	if _, err := e.place(ctx, e.marketOrder(p, exchangev1.Side_SIDE_BUY, p.qty, e.clientID("fp"), false)); err != nil {
		return describeErr("market PlaceOrder", err)
	}
	defer e.flatten(ctx, p, p.qty)
	// The first settlement after the position opened (read again: one may have passed while it opened).
	if next, err = e.nextFunding(ctx, in); err != nil {
		return err
	}
	deadline := time.UnixMilli(next).Add(e.opts.FundingWait)
	for {
		r, err := e.c.ListFundingPayments(ctx, &exchangev1.ListFundingPaymentsRequest{Account: e.opts.Account,
			Symbol: in.GetSymbol(), Page: &exchangev1.HistoryPage{StartTime: next, Limit: 10}})
		if err != nil {
			return describeErr("ListFundingPayments", err)
		}
		if len(r.GetPayments()) > 0 {
			if err := checkPaymentRows(r.GetPayments(), in.GetSymbol()); err != nil {
				return err
			}
			pay := r.GetPayments()[len(r.GetPayments())-1] // the oldest since the position opened
			if pay.GetTime() < next {
				return fmt.Errorf("ListFundingPayments from %d returned a payment at %d", next, pay.GetTime())
			}
			if pay.GetPositionSize() != "" {
				if sz, _ := dec("position_size", pay.GetPositionSize()); !sz.Equal(p.qty) {
					return fmt.Errorf("funding paid on a position of %s, the position is %s", pay.GetPositionSize(), p.qty)
				}
			}
			if pay.GetFundingRate() != "" {
				amt, _ := dec("amount", pay.GetAmount())
				rate, _ := dec("funding_rate", pay.GetFundingRate())
				if amt.Sign() != -rate.Sign() {
					return fmt.Errorf("a long was paid %s at a funding rate of %s (a long pays a positive rate)", pay.GetAmount(), pay.GetFundingRate())
				}
			}
			return e.checkPaymentPaging(ctx, in.GetSymbol())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no funding payment on %s by %s (the settlement was due at %s)", in.GetSymbol(),
				deadline.UTC().Format(time.RFC3339), time.UnixMilli(next).UTC().Format(time.RFC3339))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// nextFunding is the symbol's next settlement time from GetFundingRate.
func (e *env) nextFunding(ctx context.Context, in *exchangev1.Instrument) (int64, error) {
	fr, err := e.c.GetFundingRate(ctx, &exchangev1.GetFundingRateRequest{Symbol: in.GetSymbol()})
	if err != nil {
		return 0, describeErr("GetFundingRate", err)
	}
	if fr.GetNextFundingTime() <= 0 {
		return 0, fmt.Errorf("GetFundingRate %s: no next_funding_time", in.GetSymbol())
	}
	return fr.GetNextFundingTime(), nil
}

// checkPaymentRows checks funding payments are well formed, on symbol (when given) and newest first.
func checkPaymentRows(ps []*exchangev1.FundingPayment, symbol string) error {
	for i, p := range ps {
		what := fmt.Sprintf("funding payment %d (%s)", i, p.GetId())
		if p.GetId() == "" || p.GetSymbol() == "" || p.GetAsset() == "" || p.GetTime() <= 0 {
			return fmt.Errorf("%s: id, symbol, asset and time are required: %v", what, p)
		}
		if symbol != "" && p.GetSymbol() != symbol {
			return fmt.Errorf("%s: symbol %s, asked for %s", what, p.GetSymbol(), symbol)
		}
		if _, err := dec(what+" amount", p.GetAmount()); err != nil {
			return err
		}
		if err := optional(what+" funding_rate", p.GetFundingRate()); err != nil {
			return err
		}
		if p.GetPositionSize() != "" {
			if _, err := positive(what+" position_size", p.GetPositionSize()); err != nil {
				return err
			}
		}
		if i > 0 && p.GetTime() > ps[i-1].GetTime() {
			return fmt.Errorf("funding payments are not newest first: %d after %d", p.GetTime(), ps[i-1].GetTime())
		}
	}
	return nil
}

// checkPaymentPaging walks the symbol's payments one per page: every page holds one row, older than (or as old as,
// with another id) the one before, and the walk ends.
func (e *env) checkPaymentPaging(ctx context.Context, symbol string) error {
	var prev *exchangev1.FundingPayment
	seen := map[string]bool{}
	cursor := ""
	for range 5 {
		r, err := e.c.ListFundingPayments(ctx, &exchangev1.ListFundingPaymentsRequest{Account: e.opts.Account, Symbol: symbol,
			Page: &exchangev1.HistoryPage{Limit: 1, Cursor: cursor}})
		if err != nil {
			return describeErr("ListFundingPayments page", err)
		}
		if len(r.GetPayments()) != 1 {
			if prev == nil || len(r.GetPayments()) > 1 {
				return fmt.Errorf("a page of limit 1 held %d funding payments", len(r.GetPayments()))
			}
			return nil
		}
		p := r.GetPayments()[0]
		if seen[p.GetId()] || prev != nil && p.GetTime() > prev.GetTime() {
			return fmt.Errorf("paging repeated or went forward: %s at %d after %s at %d", p.GetId(), p.GetTime(), prev.GetId(), prev.GetTime())
		}
		seen[p.GetId()], prev = true, p
		if cursor = r.GetNextCursor(); cursor == "" {
			return nil
		}
	}
	return nil
}
