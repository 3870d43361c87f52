package conformance

// The tpsl-on-entry check: where a market claims TP_SL_KIND_ON_ORDER, a new order with the take-profit / stop-loss
// its tpsl_on_entry allows is accepted (a limit buy under the market that rests, is read back and cancelled), and
// where both legs are required a single leg is refused and places nothing; where a market does not claim it, an
// entry with a take-profit is refused and places nothing.

import (
	"context"
	"fmt"
	"slices"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func checkTpSlOnEntry(ctx context.Context, e *env) error {
	if err := e.needTrading(); err != nil {
		return err
	}
	markets := map[exchangev1.MarketType]*exchangev1.MarketTradingCapabilities{}
	for _, m := range e.trading().GetMarkets() {
		markets[m.GetMarketType()] = m
	}
	if len(markets) == 0 {
		return na("no per-market trading capabilities (1.1)")
	}
	var errs []error
	for _, mt := range e.marketTypes() {
		in, mc := e.symbols[mt], markets[mt]
		if in == nil || mc == nil {
			continue
		}
		claims := slices.Contains(mc.GetTpslKinds(), exchangev1.TpSlKind_TP_SL_KIND_ON_ORDER)
		if err := tpslRulesConsistent(mc, claims); err != nil {
			errs = append(errs, fmt.Errorf("%v: %w", mt, err))
			continue
		}
		p, err := e.planFor(ctx, in)
		if err != nil {
			errs = append(errs, fmt.Errorf("%v: %w", mt, err))
			continue
		}
		if claims {
			errs = append(errs, e.tpslEntryPlaced(ctx, p, mc.GetTpslOnEntry(), mc.GetTriggerPriceTypes()))
		} else {
			errs = append(errs, e.tpslEntryRefused(ctx, p, e.tpslEntry(p, "tpn", true, false, 0), "an entry with a take-profit where TP_SL_KIND_ON_ORDER is not claimed"))
		}
	}
	return errorsJoin(errs)
}

// tpslRulesConsistent: tpsl_on_entry only with TP_SL_KIND_ON_ORDER, naming order types and trigger price types the
// market itself takes.
func tpslRulesConsistent(mc *exchangev1.MarketTradingCapabilities, claims bool) error {
	r := mc.GetTpslOnEntry()
	if r == nil {
		return nil
	}
	if !claims {
		return fmt.Errorf("tpsl_on_entry without TP_SL_KIND_ON_ORDER")
	}
	for _, t := range r.GetOrderTypes() {
		if len(mc.GetOrderTypes()) > 0 && !slices.Contains(mc.GetOrderTypes(), t) {
			return fmt.Errorf("tpsl_on_entry names order type %v, which the market does not take", t)
		}
	}
	for _, t := range r.GetTriggerPriceTypes() {
		if len(mc.GetTriggerPriceTypes()) > 0 && !slices.Contains(mc.GetTriggerPriceTypes(), t) {
			return fmt.Errorf("tpsl_on_entry names trigger price type %v, which the market does not take", t)
		}
	}
	return nil
}

// tpslEntry is a limit buy 10% under the bid (it rests) with a take-profit 20% over the bid and/or a stop-loss 5%
// under the order's price, market on trigger.
func (e *env) tpslEntry(p *plan, name string, tp, sl bool, tt exchangev1.TriggerPriceType) *exchangev1.PlaceOrderRequest {
	req := e.limitBuy(p, p.price, p.qty, e.clientID(name+p.mt.String()[12:]))
	bid := p.price.Div(decimal.New(9, -1))
	if tp {
		trig := bid.Mul(decimal.New(12, -1)).Div(p.tick).Floor().Mul(p.tick)
		req.TakeProfit = &exchangev1.TpSl{TriggerPrice: trig.String(), TriggerPriceType: tt}
	}
	if sl {
		trig := p.price.Mul(decimal.New(95, -2)).Div(p.tick).Floor().Mul(p.tick)
		req.StopLoss = &exchangev1.TpSl{TriggerPrice: trig.String(), TriggerPriceType: tt}
	}
	return req
}

// tpslEntryPlaced: the entry with what the rules allow (a take-profit alone unless both legs are required, on the
// first trigger price type they name) is accepted, rests, reads back and is cancelled; with both legs required a
// take-profit alone is refused.
func (e *env) tpslEntryPlaced(ctx context.Context, p *plan, r *exchangev1.TpSlOnEntry, marketTriggers []exchangev1.TriggerPriceType) error {
	if len(r.GetOrderTypes()) > 0 && !slices.Contains(r.GetOrderTypes(), exchangev1.OrderType_ORDER_TYPE_LIMIT) {
		return na("%v takes TP/SL on entry only on orders that would fill at once", p.mt)
	}
	tt := exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST
	switch {
	case len(r.GetTriggerPriceTypes()) > 0:
		tt = r.GetTriggerPriceTypes()[0]
	case len(marketTriggers) > 0 && !slices.Contains(marketTriggers, tt):
		tt = marketTriggers[0]
	}
	both := r.GetBothLegsRequired()
	req := e.tpslEntry(p, "tpe", true, both, tt)
	o, err := e.place(ctx, req)
	if err != nil {
		return describeErr(fmt.Sprintf("%v: PlaceOrder with the TP/SL its tpsl_on_entry allows", p.mt), err)
	}
	switch o.GetStatus() {
	case exchangev1.OrderStatus_ORDER_STATUS_REJECTED, exchangev1.OrderStatus_ORDER_STATUS_EXPIRED,
		exchangev1.OrderStatus_ORDER_STATUS_UNSPECIFIED:
		return fmt.Errorf("%v: an entry with TP/SL is %v", p.mt, o.GetStatus())
	}
	got, err := e.getOrder(ctx, p, o.GetOrderId(), "")
	if err != nil {
		return err
	}
	if got.GetClientOrderId() != req.GetClientOrderId() {
		return fmt.Errorf("%v: an entry with TP/SL reads back with client id %q, want %q", p.mt, got.GetClientOrderId(), req.GetClientOrderId())
	}
	if got.GetStatus() == exchangev1.OrderStatus_ORDER_STATUS_NEW || got.GetStatus() == exchangev1.OrderStatus_ORDER_STATUS_PARTIALLY_FILLED {
		if _, err := e.c.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: e.opts.Account, MarketType: p.mt,
			Symbol: p.in.GetSymbol(), OrderId: o.GetOrderId()}); err != nil {
			return describeErr("CancelOrder", err)
		}
	}
	if both {
		return e.tpslEntryRefused(ctx, p, e.tpslEntry(p, "tp1", true, false, tt), "a take-profit alone where both legs are required")
	}
	return nil
}

// tpslEntryRefused: the entry is refused (NOT_SUPPORTED, or INVALID_ARGUMENT naming the missing part) and nothing
// is placed.
func (e *env) tpslEntryRefused(ctx context.Context, p *plan, req *exchangev1.PlaceOrderRequest, what string) error {
	if _, err := e.place(ctx, req); err == nil {
		return fmt.Errorf("%v: %s was placed", p.mt, what)
	} else if err := reasonIs(err, exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT); err != nil {
		return fmt.Errorf("%v: %s: %w", p.mt, what, err)
	}
	_, err := e.c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: e.opts.Account, MarketType: p.mt, Symbol: p.in.GetSymbol(),
		ClientOrderId: req.GetClientOrderId()})
	if err == nil {
		return fmt.Errorf("%v: %s was refused, yet placed", p.mt, what)
	} else if reasonIs(err, exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND) != nil {
		return fmt.Errorf("%v: reading a refused entry with TP/SL: %w", p.mt, err)
	}
	return nil
}
