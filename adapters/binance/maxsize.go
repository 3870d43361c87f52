package binance

import (
	"context"
	"net/http"
	"net/url"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// GetMaxOrderSize estimates the largest order the account can place now, in base units on the step grid, capped by
// the instrument's max quantity. Binance has no endpoint for it: spot divides the free quote balance by the price
// (buy) and takes the free base balance (sell); futures multiplies the available margin by the leverage and divides
// by the price, plus the position an order on that side would close first (one-way mode, or the matching hedge
// side). Fees are not deducted, so an order of exactly this size may still be refused for the fee.
func (s *Server) GetMaxOrderSize(ctx context.Context, req *exchangev1.GetMaxOrderSizeRequest) (*exchangev1.GetMaxOrderSizeResponse, error) {
	m, in, err := s.instrument(ctx, req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	if m == Futures {
		if err := s.checkMarginMode(ctx, req.GetAccount(), req.GetSymbol(), req.GetMarginMode(), modeDry); err != nil {
			return nil, err
		}
	}
	price := decimal.Zero
	if req.GetPrice() != "" {
		p, err := decParam("price", req.GetPrice(), true)
		if err != nil {
			return nil, err
		}
		price = decimal.RequireFromString(p)
	}
	buyPrice, sellPrice := price, price
	if price.IsZero() {
		d, err := s.fetchDepth(ctx, m, req.GetSymbol(), 5)
		if err != nil {
			return nil, err
		}
		if len(d.Asks) == 0 || len(d.Bids) == 0 {
			return nil, invalid("price", "the book is empty: give a price")
		}
		buyPrice, sellPrice = decimal.RequireFromString(d.Asks[0].GetPrice()), decimal.RequireFromString(d.Bids[0].GetPrice())
	}
	step := decimal.RequireFromString(in.GetStepSize())
	grid := func(q decimal.Decimal) string {
		if q.IsNegative() {
			q = decimal.Zero
		}
		q = q.Div(step).Floor().Mul(step)
		if in.GetMaxQty() != "" {
			q = decimal.Min(q, decimal.RequireFromString(in.GetMaxQty()))
		}
		return q.String()
	}
	c, _ := s.client()
	cr := creds(req.GetAccount())
	if m == Spot {
		body, err := c.signed(ctx, Spot, http.MethodGet, pathSpotAccount, url.Values{"omitZeroBalances": {"true"}}, 20, cr)
		if err != nil {
			return nil, err
		}
		bs, err := ParseSpotAccount(body)
		if err != nil {
			return nil, parseErr("account", err)
		}
		free := func(asset string) decimal.Decimal {
			for _, b := range bs {
				if b.GetAsset() == asset {
					return decimal.RequireFromString(b.GetAvailable())
				}
			}
			return decimal.Zero
		}
		return &exchangev1.GetMaxOrderSizeResponse{MaxBuyQty: grid(free(in.GetQuote()).Div(buyPrice)), MaxSellQty: grid(free(in.GetBase()))}, nil
	}
	fb, err := c.signed(ctx, Futures, http.MethodGet, pathFutAccount, nil, 5, cr)
	if err != nil {
		return nil, err
	}
	fa, err := ParseFuturesAccount(fb)
	if err != nil {
		return nil, parseErr("futures account", err)
	}
	lev, err := s.GetLeverage(ctx, &exchangev1.GetLeverageRequest{Account: req.GetAccount(), Symbol: req.GetSymbol()})
	if err != nil {
		return nil, err
	}
	ps, err := s.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: req.GetAccount(), Symbol: req.GetSymbol()})
	if err != nil {
		return nil, err
	}
	closeBuy, closeSell := decimal.Zero, decimal.Zero // position a buy (sell) closes before opening
	for _, p := range ps.GetPositions() {
		q := decimal.RequireFromString(p.GetQty())
		switch p.GetPositionSide() {
		case exchangev1.PositionSide_POSITION_SIDE_NET:
			if q.IsNegative() {
				closeBuy = q.Abs()
			} else {
				closeSell = q
			}
		case exchangev1.PositionSide_POSITION_SIDE_LONG:
			if req.GetPositionSide() == exchangev1.PositionSide_POSITION_SIDE_LONG {
				closeSell = q
			}
		case exchangev1.PositionSide_POSITION_SIDE_SHORT:
			if req.GetPositionSide() == exchangev1.PositionSide_POSITION_SIDE_SHORT {
				closeBuy = q
			}
		}
	}
	power := decimal.Zero
	if fa.AvailableMargin != "" {
		power = decimal.RequireFromString(fa.AvailableMargin).Mul(decimal.RequireFromString(lev.GetLeverage()))
	}
	buy, sell := power.Div(buyPrice).Add(closeBuy), power.Div(sellPrice).Add(closeSell)
	switch req.GetPositionSide() {
	case exchangev1.PositionSide_POSITION_SIDE_LONG: // hedge long: buys open, sells only close
		sell = closeSell
	case exchangev1.PositionSide_POSITION_SIDE_SHORT:
		buy = closeBuy
	}
	return &exchangev1.GetMaxOrderSizeResponse{MaxBuyQty: grid(buy), MaxSellQty: grid(sell)}, nil
}
