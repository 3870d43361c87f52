package conformance

// The price-match check: a limit order the exchange prices from its own book (PlaceOrderRequest.price_match) where
// a market claims MarketTradingCapabilities.price_match, and a refusal that places nothing where it does not.

import (
	"context"
	"fmt"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func checkPriceMatch(ctx context.Context, e *env) error {
	if err := e.needTrading(); err != nil {
		return err
	}
	claims := map[exchangev1.MarketType]bool{}
	for _, m := range e.trading().GetMarkets() {
		claims[m.GetMarketType()] = m.GetPriceMatch()
	}
	var errs []error
	for _, mt := range e.marketTypes() {
		in := e.symbols[mt]
		if in == nil {
			continue
		}
		p, err := e.planFor(ctx, in)
		if err != nil {
			errs = append(errs, fmt.Errorf("%v: %w", mt, err))
			continue
		}
		if claims[mt] {
			errs = append(errs, e.priceMatchPlaced(ctx, p))
		} else {
			errs = append(errs, e.priceMatchRefused(ctx, p))
		}
	}
	return errorsJoin(errs)
}

// priceMatchPlaced: a QUEUE buy sent without a price rests as a LIMIT order at a price on the tick grid near the
// bid the plan read (within 10%: the market may move), reads back the same, and is cancelled; a price-match order
// that also names a price is INVALID_ARGUMENT.
func (e *env) priceMatchPlaced(ctx context.Context, p *plan) error {
	cid := e.clientID("pm" + p.mt.String()[12:])
	req := e.limitBuy(p, decimal.Zero, p.qty, cid)
	req.Price, req.PriceMatch = "", exchangev1.PriceMatch_PRICE_MATCH_QUEUE
	o, err := e.place(ctx, req)
	if err != nil {
		return describeErr(fmt.Sprintf("%v: PlaceOrder with price_match QUEUE", p.mt), err)
	}
	if o.GetType() != exchangev1.OrderType_ORDER_TYPE_LIMIT {
		return fmt.Errorf("%v: a price-match order is %v, want LIMIT", p.mt, o.GetType())
	}
	switch o.GetStatus() {
	case exchangev1.OrderStatus_ORDER_STATUS_REJECTED, exchangev1.OrderStatus_ORDER_STATUS_EXPIRED,
		exchangev1.OrderStatus_ORDER_STATUS_UNSPECIFIED:
		return fmt.Errorf("%v: a QUEUE buy is %v", p.mt, o.GetStatus())
	}
	price, err := positive("price of a price-match order", o.GetPrice())
	if err != nil {
		return fmt.Errorf("%v: %w", p.mt, err)
	}
	if err := gridOK("price", price, p.in.GetTickSize()); err != nil {
		return fmt.Errorf("%v: %w", p.mt, err)
	}
	// p.price is 90% of the bid the plan read.
	bid := p.price.Div(decimal.New(9, -1))
	if price.LessThan(p.price) || price.GreaterThan(bid.Mul(decimal.New(11, -1))) {
		return fmt.Errorf("%v: a QUEUE buy priced %s, far from the bid %s", p.mt, price, bid.Round(8))
	}
	got, err := e.getOrder(ctx, p, o.GetOrderId(), "")
	if err != nil {
		return err
	}
	if err := sameDec("price read back", got.GetPrice(), price); err != nil {
		return fmt.Errorf("%v: %w", p.mt, err)
	}
	if got.GetStatus() == exchangev1.OrderStatus_ORDER_STATUS_NEW || got.GetStatus() == exchangev1.OrderStatus_ORDER_STATUS_PARTIALLY_FILLED {
		if _, err := e.c.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: e.opts.Account, MarketType: p.mt,
			Symbol: p.in.GetSymbol(), OrderId: o.GetOrderId()}); err != nil {
			return describeErr("CancelOrder", err)
		}
	}
	bad := e.limitBuy(p, p.price, p.qty, e.clientID("pmx"+p.mt.String()[12:]))
	bad.PriceMatch = exchangev1.PriceMatch_PRICE_MATCH_QUEUE
	if _, err := e.place(ctx, bad); err == nil {
		return fmt.Errorf("%v: a price-match order with a price was placed", p.mt)
	} else if err := reasonIs(err, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT); err != nil {
		return fmt.Errorf("%v: price-match order with a price: %w", p.mt, err)
	}
	return nil
}

// priceMatchRefused: a market that does not claim price_match refuses such an order (NOT_SUPPORTED, or
// INVALID_ARGUMENT for the missing price) and places nothing.
func (e *env) priceMatchRefused(ctx context.Context, p *plan) error {
	cid := e.clientID("pmn" + p.mt.String()[12:])
	req := e.limitBuy(p, decimal.Zero, p.qty, cid)
	req.Price, req.PriceMatch = "", exchangev1.PriceMatch_PRICE_MATCH_QUEUE
	if _, err := e.place(ctx, req); err == nil {
		return fmt.Errorf("%v does not claim price_match, yet placed a price-match order", p.mt)
	} else if err := reasonIs(err, exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT); err != nil {
		return fmt.Errorf("%v: price-match order where not claimed: %w", p.mt, err)
	}
	_, err := e.c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: e.opts.Account, MarketType: p.mt, Symbol: p.in.GetSymbol(), ClientOrderId: cid})
	if err == nil {
		return fmt.Errorf("%v: a refused price-match order was placed", p.mt)
	} else if reasonIs(err, exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND) != nil {
		return fmt.Errorf("%v: reading a refused price-match order: %w", p.mt, err)
	}
	return nil
}
