package binance

import (
	"context"
	"net/http"
	"net/url"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// modeAction says what checkMarginMode may do when a request's margin mode differs from the symbol's.
type modeAction int

const (
	modeStrict modeAction = iota // refuse: the request acts on what exists in the symbol's mode (close position)
	modeDry                      // report whether the mode could be switched, without switching (max order size)
	modeSwitch                   // switch the symbol's mode when nothing is open on it (placing an order)
)

func marginTypeWire(m exchangev1.MarginMode) string {
	switch m {
	case exchangev1.MarginMode_MARGIN_MODE_CROSS:
		return "CROSSED"
	case exchangev1.MarginMode_MARGIN_MODE_ISOLATED:
		return "ISOLATED"
	}
	return ""
}

// checkMarginMode makes sure a futures request with a margin mode trades in that mode. Binance sets the margin type
// per symbol: when it differs and the symbol has no position and no open orders, modeSwitch sets it (POST
// /fapi/v1/marginType) before the order goes out; otherwise the request is refused with ACCOUNT_MODE_MISMATCH, never
// traded in the other mode. UNSPECIFIED trades in the symbol's current mode.
func (s *Server) checkMarginMode(ctx context.Context, acct *exchangev1.AccountRef, symbol string, want exchangev1.MarginMode, act modeAction) error {
	if want == exchangev1.MarginMode_MARGIN_MODE_UNSPECIFIED {
		return nil
	}
	mt := marginTypeWire(want)
	if mt == "" {
		return invalid("margin_mode", "unknown margin mode %v", want)
	}
	c, _ := s.client()
	cr := creds(acct)
	body, err := c.signed(ctx, Futures, http.MethodGet, pathFutSymbolConfig, url.Values{"symbol": {symbol}}, 5, cr)
	if err != nil {
		return err
	}
	cfgs, err := ParseSymbolConfig(body)
	if err != nil {
		return parseErr("symbolConfig", err)
	}
	for _, sc := range cfgs {
		if sc.Symbol == symbol && sc.MarginMode == want {
			return nil
		}
	}
	mismatch := func(why string) error {
		return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_ACCOUNT_MODE_MISMATCH, "margin_mode",
			"%s trades in the other margin mode and %s; Binance sets the margin mode per symbol, so the %s order cannot be placed",
			symbol, why, mt)
	}
	if act == modeStrict {
		return mismatch("the request acts on what exists in that mode")
	}
	pb, err := c.signed(ctx, Futures, http.MethodGet, pathFutPositionRisk, url.Values{"symbol": {symbol}}, 5, cr)
	if err != nil {
		return err
	}
	ps, err := ParsePositionRisk(pb)
	if err != nil {
		return parseErr("positionRisk", err)
	}
	for _, p := range ps {
		if q, err := decimal.NewFromString(p.GetQty()); err == nil && !q.IsZero() {
			return mismatch("it has an open position")
		}
	}
	ob, err := c.signed(ctx, Futures, http.MethodGet, pathFutOpenOrders, url.Values{"symbol": {symbol}}, 1, cr)
	if err != nil {
		return err
	}
	var open []wireOrder
	if err := decodeJSON(ob, &open, "openOrders"); err != nil {
		return parseErr("openOrders", err)
	}
	if len(open) > 0 {
		return mismatch("it has open orders")
	}
	if act == modeDry {
		return nil
	}
	_, err = c.signed(ctx, Futures, http.MethodPost, pathFutMarginType, url.Values{"symbol": {symbol}, "marginType": {mt}}, 1, cr)
	if err != nil && sdk.DetailOf(err).GetExchangeCode() != "-4046" {
		return err
	}
	return nil
}
