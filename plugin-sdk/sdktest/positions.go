package sdktest

import (
	"context"
	"maps"
	"slices"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// algo is a conditional order waiting for its trigger.
type algo struct {
	acct    *account
	in      *instrument
	p       *exchangev1.AlgoOrder
	trigger int64 // ticks
	// above: triggers when the reference price rises to the trigger; otherwise when it falls to it.
	above bool
	// req is the request that placed it (without credentials), for idempotency and the order placed on trigger.
	req *exchangev1.PlaceAlgoOrderRequest
}

// refPrice is the trigger reference of an algo order: the last trade, or the mark price (SWAP).
func (s *Server) refPrice(in *instrument, t exchangev1.TriggerPriceType) int64 {
	if t == exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK && in.isSwap() {
		m, _ := in.ticksOf("mark", s.markOf(in).mark)
		return m
	}
	return in.last
}

// PlaceAlgoOrder places a stop or take-profit order that becomes a market or limit order when triggered. A fault
// armed for its client_algo_id loses the answer (UNKNOWN_OUTCOME).
func (s *Server) PlaceAlgoOrder(_ context.Context, req *exchangev1.PlaceAlgoOrderRequest) (*exchangev1.PlaceAlgoOrderResponse, error) {
	armed, drop := s.fault(req.GetClientAlgoId())
	if drop {
		return nil, unknownOutcome("algo order", req.GetClientAlgoId(), false)
	}
	r, err := s.placeAlgo(req)
	if err == nil && armed {
		return nil, unknownOutcome("algo order", req.GetClientAlgoId(), true)
	}
	return r, err
}

func (s *Server) placeAlgo(req *exchangev1.PlaceAlgoOrderRequest) (*exchangev1.PlaceAlgoOrderResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.tradeAccount(req.GetAccount())
	if err != nil {
		return nil, err
	}
	if err := checkClientID("client_algo_id", req.GetClientAlgoId()); err != nil {
		return nil, err
	}
	if req.GetClientAlgoId() != "" {
		for _, g := range a.algos {
			if g.p.ClientAlgoId == req.GetClientAlgoId() {
				if !sameAlgoRequest(g.req, req) {
					return nil, duplicateClientID("client_algo_id", req.GetClientAlgoId())
				}
				return &exchangev1.PlaceAlgoOrderResponse{AlgoOrder: cloneAlgo(g.p)}, nil
			}
		}
	}
	in, err := s.instrument(req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	if _, err := s.checkMarginMode(a, in, req.GetMarginMode()); err != nil {
		return nil, err
	}
	limitType := false
	switch req.GetType() {
	case exchangev1.OrderType_ORDER_TYPE_STOP_MARKET, exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_MARKET:
	case exchangev1.OrderType_ORDER_TYPE_STOP_LIMIT, exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_LIMIT:
		limitType = true
	default:
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "type", "type must be a stop or take-profit type")
	}
	if req.GetSide() != exchangev1.Side_SIDE_BUY && req.GetSide() != exchangev1.Side_SIDE_SELL {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "side", "side is required")
	}
	ps, err := checkPositionSide(a, in, req.GetPositionSide())
	if err != nil {
		return nil, err
	}
	tt := req.GetTriggerPriceType()
	switch tt {
	case exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_UNSPECIFIED:
		tt = exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST
	case exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST:
	case exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK:
		if !in.isSwap() {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "trigger_price_type", "spot has no mark price")
		}
	default:
		return nil, sdk.NotSupported("trigger price type " + tt.String())
	}
	tp, err := parsePositive("trigger_price", req.GetTriggerPrice())
	if err != nil {
		return nil, err
	}
	trig, err := in.ticksOf("trigger_price", tp)
	if err != nil {
		return nil, err
	}
	if limitType {
		px, err := parsePositive("price", req.GetPrice())
		if err != nil {
			return nil, err
		}
		if _, err := in.ticksOf("price", px); err != nil {
			return nil, err
		}
	}
	if req.GetClosePosition() {
		if !in.isSwap() {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "close_position", "close_position is for SWAP")
		}
	} else {
		qd, err := parsePositive("qty", req.GetQty())
		if err != nil {
			return nil, err
		}
		steps, err := in.stepsOf("qty", qd)
		if err != nil {
			return nil, err
		}
		if steps < in.minQty || steps > in.maxQty {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_PRECISION, "qty", "qty %s is outside %s..%s",
				qd, in.qty(in.minQty), in.qty(in.maxQty))
		}
	}
	now := s.nowMs()
	ref := s.refPrice(in, tt)
	if trig == ref {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED, "trigger_price", "trigger price equals the current price")
	}
	g := &algo{acct: a, in: in, trigger: trig, above: trig > ref, req: stripAccount(req), p: &exchangev1.AlgoOrder{
		AlgoId: s.newID(), ClientAlgoId: req.GetClientAlgoId(), Symbol: in.info.Symbol, MarketType: in.spec.marketType,
		Side: req.GetSide(), PositionSide: ps, Type: req.GetType(), Status: exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_WAITING,
		TriggerPrice: tp.String(), TriggerPriceType: tt, Price: req.GetPrice(), Qty: req.GetQty(),
		ReduceOnly: req.GetReduceOnly(), ClosePosition: req.GetClosePosition(), CreatedTime: now, UpdatedTime: now,
	}}
	a.algos = append(a.algos, g)
	a.dirtyAlgos[g] = true
	s.flushAccounts(now)
	return &exchangev1.PlaceAlgoOrderResponse{AlgoOrder: cloneAlgo(g.p)}, nil
}

// triggerAlgos fires waiting algo orders whose reference price reached the trigger. Caller holds s.mu.
func (s *Server) triggerAlgos(now int64) {
	for _, a := range s.accounts {
		for _, g := range a.algos {
			if g.p.Status != exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_WAITING {
				continue
			}
			ref := s.refPrice(g.in, g.p.TriggerPriceType)
			if (g.above && ref < g.trigger) || (!g.above && ref > g.trigger) {
				continue
			}
			req := &exchangev1.PlaceOrderRequest{
				MarketType: g.p.MarketType, Symbol: g.p.Symbol, Side: g.p.Side, Qty: g.p.Qty,
				ReduceOnly: g.p.ReduceOnly || g.p.ClosePosition, PositionSide: g.p.PositionSide,
				Type: exchangev1.OrderType_ORDER_TYPE_MARKET, MarginMode: g.req.GetMarginMode(),
			}
			if g.p.Type == exchangev1.OrderType_ORDER_TYPE_STOP_LIMIT || g.p.Type == exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_LIMIT {
				req.Type, req.Price, req.TimeInForce = exchangev1.OrderType_ORDER_TYPE_LIMIT, g.p.Price, exchangev1.TimeInForce_TIME_IN_FORCE_GTC
			}
			if g.p.ClosePosition {
				p := a.positions[positionKey(g.p.Symbol, g.p.PositionSide)]
				if p != nil {
					req.Qty = g.in.qty(min(abs(p.qty), g.in.marketMax)).String()
				}
			}
			g.p.UpdatedTime = now
			a.dirtyAlgos[g] = true
			o, err := s.place(a, req, g.p.AlgoId, now)
			if err != nil {
				g.p.Status = exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_FAILED
				continue
			}
			g.p.Status = exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_TRIGGERED
			g.p.OrderId = o.id
		}
	}
}

func (s *Server) findAlgo(a *account, id, clientID string) (*algo, error) {
	for _, g := range a.algos {
		if (id != "" && g.p.AlgoId == id) || (id == "" && clientID != "" && g.p.ClientAlgoId == clientID) {
			return g, nil
		}
	}
	return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND, "algo_id", "algo order %s%s not found", id, clientID)
}

// CancelAlgoOrder cancels a waiting algo order.
func (s *Server) CancelAlgoOrder(_ context.Context, req *exchangev1.CancelAlgoOrderRequest) (*exchangev1.CancelAlgoOrderResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.tradeAccount(req.GetAccount())
	if err != nil {
		return nil, err
	}
	g, err := s.findAlgo(a, req.GetAlgoId(), req.GetClientAlgoId())
	if err != nil {
		return nil, err
	}
	if g.p.Status != exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_WAITING {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED, "algo_id", "algo order %s is %s", g.p.AlgoId, g.p.Status)
	}
	now := s.nowMs()
	g.p.Status, g.p.UpdatedTime = exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_CANCELLED, now
	a.dirtyAlgos[g] = true
	s.flushAccounts(now)
	return &exchangev1.CancelAlgoOrderResponse{AlgoOrder: cloneAlgo(g.p)}, nil
}

// ListAlgoOrders lists waiting algo orders, or with include_history every one, newest first.
func (s *Server) ListAlgoOrders(_ context.Context, req *exchangev1.ListAlgoOrdersRequest) (*exchangev1.ListAlgoOrdersResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.account(req.GetAccount())
	if err != nil {
		return nil, err
	}
	var sel []*exchangev1.AlgoOrder
	for _, g := range a.algos {
		if (req.GetIncludeHistory() || g.p.Status == exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_WAITING) &&
			(req.GetMarketType() == exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED || g.p.MarketType == req.GetMarketType()) &&
			(req.GetSymbol() == "" || g.p.Symbol == req.GetSymbol()) {
			sel = append(sel, cloneAlgo(g.p))
		}
	}
	page, next, err := pageOf(sel, func(g *exchangev1.AlgoOrder) int64 { return g.CreatedTime }, req.GetPage(), 100, 500)
	if err != nil {
		return nil, err
	}
	return &exchangev1.ListAlgoOrdersResponse{AlgoOrders: page, NextCursor: next}, nil
}

// ---------------------------------------------------------------------------------------------------------------
// Positions, leverage and modes

// ListPositions lists open SWAP positions.
func (s *Server) ListPositions(_ context.Context, req *exchangev1.ListPositionsRequest) (*exchangev1.ListPositionsResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.account(req.GetAccount())
	if err != nil {
		return nil, err
	}
	out := &exchangev1.ListPositionsResponse{}
	for _, k := range slices.Sorted(maps.Keys(a.positions)) {
		p := a.positions[k]
		if p.qty != 0 && (req.GetSymbol() == "" || p.in.info.Symbol == req.GetSymbol()) {
			out.Positions = append(out.Positions, s.positionProto(a, p))
		}
	}
	return out, nil
}

// ClosePosition closes a position with a reduce-only market order. client_order_id names that order, so an
// unknown outcome can be resolved with GetOrder; a repeated id returns the order it created.
func (s *Server) ClosePosition(_ context.Context, req *exchangev1.ClosePositionRequest) (*exchangev1.ClosePositionResponse, error) {
	armed, drop := s.fault(req.GetClientOrderId())
	if drop {
		return nil, unknownOutcome("close order", req.GetClientOrderId(), false)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.tradeAccount(req.GetAccount())
	if err != nil {
		return nil, err
	}
	if mt := req.GetMarketType(); mt != exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED && mt != exchangev1.MarketType_MARKET_TYPE_SWAP {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "market_type", "positions exist on SWAP only")
	}
	in, err := s.swapInstrument(req.GetSymbol())
	if err != nil {
		return nil, err
	}
	if err := checkClientID("client_order_id", req.GetClientOrderId()); err != nil {
		return nil, err
	}
	if o, ok := a.byClient[req.GetClientOrderId()]; ok && req.GetClientOrderId() != "" {
		if o.in != in || !o.reduceOnly || o.typ != exchangev1.OrderType_ORDER_TYPE_MARKET {
			return nil, duplicateClientID("client_order_id", req.GetClientOrderId())
		}
		return &exchangev1.ClosePositionResponse{Order: o.proto()}, nil
	}
	ps, err := checkPositionSide(a, in, req.GetPositionSide())
	if err != nil {
		return nil, err
	}
	if mm := req.GetMarginMode(); mm != exchangev1.MarginMode_MARGIN_MODE_UNSPECIFIED && mm != a.mode4(in) {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED, "margin_mode",
			"the %s position is %s, not %s", in.info.Symbol, a.mode4(in), mm)
	}
	p := a.positions[positionKey(in.info.Symbol, ps)]
	if p == nil || p.qty == 0 {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED, "symbol", "no open %s position on %s", ps, in.info.Symbol)
	}
	side := exchangev1.Side_SIDE_SELL
	if p.qty < 0 {
		side = exchangev1.Side_SIDE_BUY
	}
	now := s.nowMs()
	o, err := s.place(a, &exchangev1.PlaceOrderRequest{
		MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: in.info.Symbol, Side: side,
		Type: exchangev1.OrderType_ORDER_TYPE_MARKET, Qty: in.qty(min(abs(p.qty), in.marketMax)).String(),
		ReduceOnly: true, PositionSide: req.GetPositionSide(), ClientOrderId: req.GetClientOrderId(),
	}, "", now)
	if err != nil {
		return nil, err
	}
	s.publish(in, now, false)
	s.flushAccounts(now)
	if armed {
		return nil, unknownOutcome("close order", req.GetClientOrderId(), true)
	}
	return &exchangev1.ClosePositionResponse{Order: o.proto()}, nil
}

// GetLeverage returns the account's leverage and margin mode on a SWAP symbol.
func (s *Server) GetLeverage(_ context.Context, req *exchangev1.GetLeverageRequest) (*exchangev1.GetLeverageResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.account(req.GetAccount())
	if err != nil {
		return nil, err
	}
	in, err := s.swapInstrument(req.GetSymbol())
	if err != nil {
		return nil, err
	}
	return &exchangev1.GetLeverageResponse{Leverage: itoa(a.lev(in)), MaxLeverage: in.info.MaxLeverage, MarginMode: a.mode4(in)}, nil
}

// SetLeverage sets a whole-number leverage; open positions re-margin at once (more margin must be available).
func (s *Server) SetLeverage(_ context.Context, req *exchangev1.SetLeverageRequest) (*exchangev1.SetLeverageResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.tradeAccount(req.GetAccount())
	if err != nil {
		return nil, err
	}
	in, err := s.swapInstrument(req.GetSymbol())
	if err != nil {
		return nil, err
	}
	// Leverage is per symbol on the reference: in hedge mode a side may be named (both sides get it).
	switch ps := req.GetPositionSide(); {
	case ps == exchangev1.PositionSide_POSITION_SIDE_UNSPECIFIED:
	case a.mode == exchangev1.PositionMode_POSITION_MODE_HEDGE && ps != exchangev1.PositionSide_POSITION_SIDE_LONG && ps != exchangev1.PositionSide_POSITION_SIDE_SHORT:
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH, "position_side",
			"the account is in hedge mode: position_side must be LONG, SHORT or unset")
	case a.mode != exchangev1.PositionMode_POSITION_MODE_HEDGE && ps != exchangev1.PositionSide_POSITION_SIDE_NET:
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH, "position_side",
			"the account is in one-way mode: position_side must be NET or unset")
	}
	lv, err := parsePositive("leverage", req.GetLeverage())
	if err != nil {
		return nil, err
	}
	if !lv.IsInteger() || lv.IntPart() < 1 || lv.IntPart() > in.spec.maxLeverage {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "leverage",
			"leverage must be a whole number from 1 to %d", in.spec.maxLeverage)
	}
	if mm := req.GetMarginMode(); mm != exchangev1.MarginMode_MARGIN_MODE_UNSPECIFIED && mm != a.mode4(in) {
		if err := s.setMarginMode(a, in, mm); err != nil {
			return nil, err
		}
	}
	lev := lv.IntPart()
	usdt := a.trading("USDT")
	delta := decimal.Zero
	newMargins := map[*position]decimal.Decimal{}
	for _, p := range a.positions {
		if p.in != in || p.qty == 0 {
			continue
		}
		m := p.entry.Mul(in.qty(abs(p.qty))).Div(decimal.NewFromInt(lev)).RoundDown(8)
		newMargins[p] = m
		delta = delta.Add(m.Sub(p.margin))
	}
	if delta.GreaterThan(usdt.available()) {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS, "leverage",
			"lowering leverage to %d needs %s USDT more margin, %s available", lev, delta, usdt.available())
	}
	for p, m := range newMargins {
		p.margin = m
		a.dirtyPos[positionKey(in.info.Symbol, p.side)] = true
	}
	usdt.locked = decimal.Max(usdt.locked.Add(delta), decimal.Zero)
	a.leverage[in.info.Symbol] = lev
	s.flushAccounts(s.nowMs())
	return &exchangev1.SetLeverageResponse{Leverage: itoa(lev)}, nil
}

func (s *Server) setMarginMode(a *account, in *instrument, mm exchangev1.MarginMode) error {
	if mm != exchangev1.MarginMode_MARGIN_MODE_CROSS && mm != exchangev1.MarginMode_MARGIN_MODE_ISOLATED {
		return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "margin_mode", "margin_mode is required")
	}
	for _, p := range a.positions {
		if p.in == in && p.qty != 0 {
			return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED, "margin_mode",
				"close the %s position before changing its margin mode", in.info.Symbol)
		}
	}
	if len(s.openOrders(a, exchangev1.MarketType_MARKET_TYPE_SWAP, in.info.Symbol)) > 0 {
		return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED, "margin_mode",
			"cancel the open %s orders before changing the margin mode", in.info.Symbol)
	}
	a.marginMode[in.info.Symbol] = mm
	return nil
}

// SetMarginMode switches a SWAP symbol between cross and isolated margin (no position or order may be open).
func (s *Server) SetMarginMode(_ context.Context, req *exchangev1.SetMarginModeRequest) (*exchangev1.SetMarginModeResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.tradeAccount(req.GetAccount())
	if err != nil {
		return nil, err
	}
	in, err := s.swapInstrument(req.GetSymbol())
	if err != nil {
		return nil, err
	}
	if err := s.setMarginMode(a, in, req.GetMarginMode()); err != nil {
		return nil, err
	}
	return &exchangev1.SetMarginModeResponse{}, nil
}

// GetPositionMode returns one-way or hedge.
func (s *Server) GetPositionMode(_ context.Context, req *exchangev1.GetPositionModeRequest) (*exchangev1.GetPositionModeResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.account(req.GetAccount())
	if err != nil {
		return nil, err
	}
	return &exchangev1.GetPositionModeResponse{Mode: a.mode}, nil
}

// SetPositionMode switches between one-way and hedge mode (no SWAP position or order may be open).
func (s *Server) SetPositionMode(_ context.Context, req *exchangev1.SetPositionModeRequest) (*exchangev1.SetPositionModeResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.tradeAccount(req.GetAccount())
	if err != nil {
		return nil, err
	}
	m := req.GetMode()
	if m != exchangev1.PositionMode_POSITION_MODE_ONE_WAY && m != exchangev1.PositionMode_POSITION_MODE_HEDGE {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "mode", "mode is required")
	}
	if m == a.mode {
		return &exchangev1.SetPositionModeResponse{}, nil
	}
	for _, p := range a.positions {
		if p.qty != 0 {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED, "mode", "close every position before changing the position mode")
		}
	}
	if len(s.openOrders(a, exchangev1.MarketType_MARKET_TYPE_SWAP, "")) > 0 {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED, "mode", "cancel every SWAP order before changing the position mode")
	}
	a.mode = m
	a.positions = map[string]*position{}
	return &exchangev1.SetPositionModeResponse{}, nil
}

// GetMaxOrderSize is the largest quantity the trading wallet can fund, per side, capped by the instrument limits.
func (s *Server) GetMaxOrderSize(_ context.Context, req *exchangev1.GetMaxOrderSizeRequest) (*exchangev1.GetMaxOrderSizeResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.account(req.GetAccount())
	if err != nil {
		return nil, err
	}
	in, err := s.instrument(req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	if _, err := s.checkMarginMode(a, in, req.GetMarginMode()); err != nil {
		return nil, err
	}
	ref := in.mid()
	maxQty := in.maxQty
	if req.GetPrice() != "" {
		px, err := parsePositive("price", req.GetPrice())
		if err != nil {
			return nil, err
		}
		if ref, err = in.ticksOf("price", px); err != nil {
			return nil, err
		}
	} else {
		maxQty = in.marketMax
	}
	per := in.price(ref).Mul(in.step)
	usdt := a.bal(exchangev1.WalletType_WALLET_TYPE_TRADING, "USDT").available()
	var buy, sell int64
	if in.isSwap() {
		perMargin := per.Div(decimal.NewFromInt(a.lev(in))).RoundUp(8).Add(per.Mul(swapTakerFee))
		buy = usdt.Div(perMargin).IntPart()
		sell = buy
	} else {
		buy = usdt.Div(per.Mul(decimal.NewFromInt(1).Add(spotFee))).IntPart()
		sell = a.bal(exchangev1.WalletType_WALLET_TYPE_TRADING, in.spec.base).available().Div(in.step).IntPart()
	}
	return &exchangev1.GetMaxOrderSizeResponse{
		MaxBuyQty: in.qty(min(buy, maxQty)).String(), MaxSellQty: in.qty(min(sell, maxQty)).String(),
	}, nil
}

// markPositions liquidates positions whose margin no longer covers maintenance: isolated positions one by one,
// cross positions together when the account's cross equity falls below their maintenance margin. Caller holds s.mu.
func (s *Server) markPositions(now int64) {
	for _, a := range s.accounts {
		usdt := a.bal(exchangev1.WalletType_WALLET_TYPE_TRADING, "USDT")
		crossEquity, crossMaint := usdt.total, decimal.Zero
		var cross []*position
		for _, k := range slices.Sorted(maps.Keys(a.positions)) {
			p := a.positions[k]
			if p.qty == 0 {
				continue
			}
			upnl := s.unrealized(p)
			maint := s.markOf(p.in).mark.Mul(p.in.qty(abs(p.qty))).Mul(maintenance)
			if a.mode4(p.in) == exchangev1.MarginMode_MARGIN_MODE_ISOLATED {
				crossEquity = crossEquity.Sub(p.margin)
				if p.margin.Add(upnl).LessThan(maint) {
					s.liquidate(a, p, now)
				}
				continue
			}
			crossEquity = crossEquity.Add(upnl)
			crossMaint = crossMaint.Add(maint)
			cross = append(cross, p)
		}
		if len(cross) > 0 && crossEquity.LessThan(crossMaint) {
			for _, p := range cross {
				s.liquidate(a, p, now)
			}
		}
	}
}

// liquidate closes a position at the mark price, cancels the account's SWAP orders on it, and never lets the
// wallet go below zero (the loss beyond it is absorbed).
func (s *Server) liquidate(a *account, p *position, now int64) {
	for _, o := range s.openOrders(a, exchangev1.MarketType_MARKET_TYPE_SWAP, p.in.info.Symbol) {
		s.cancel(o, now)
	}
	usdt := a.trading("USDT")
	usdt.total = decimal.Max(usdt.total.Add(s.unrealized(p)), decimal.Zero)
	usdt.locked = decimal.Max(usdt.locked.Sub(p.margin), decimal.Zero)
	p.realized = p.realized.Add(s.unrealized(p))
	p.qty, p.entry, p.margin, p.updated = 0, decimal.Zero, decimal.Zero, now
	a.dirtyPos[positionKey(p.in.info.Symbol, p.side)] = true
}
