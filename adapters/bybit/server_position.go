package bybit

import (
	"context"
	"net/url"
	"strconv"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// positionRows reads /v5/position/list of one symbol (every row, flat ones too) or of every USDT perpetual.
func (s *Server) positionRows(ctx context.Context, creds *Credentials, symbol string) ([]rawPosition, error) {
	q := url.Values{"category": {catLinear}, "limit": {"200"}}
	if symbol != "" {
		q.Set("symbol", symbol)
	} else {
		q.Set("settleCoin", settleUSDT)
	}
	var out []rawPosition
	for range maxOpenOrderPages {
		res, err := s.client().PrivateGet(ctx, pathPositionList, q, creds)
		if err != nil {
			return nil, err
		}
		rows, next, err := ParsePositions(res.Result)
		if err != nil {
			return nil, malformed("positions", err)
		}
		out = append(out, rows...)
		if next == "" {
			break
		}
		q.Set("cursor", next)
	}
	return out, nil
}

func (s *Server) swap(ctx context.Context, symbol string) (*Instrument, error) {
	return s.instrument(ctx, exchangev1.MarketType_MARKET_TYPE_SWAP, symbol)
}

// ListPositions lists the open USDT perpetual positions (size above 0), of one symbol or all.
func (s *Server) ListPositions(ctx context.Context, req *exchangev1.ListPositionsRequest) (*exchangev1.ListPositionsResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	sym := ""
	if req.GetSymbol() != "" {
		in, err := s.swap(ctx, req.GetSymbol())
		if err != nil {
			return nil, err
		}
		sym = in.Symbol
	}
	rows, err := s.positionRows(ctx, creds, sym)
	if err != nil {
		return nil, err
	}
	var out []*exchangev1.Position
	for _, r := range rows {
		if d, err := decimal.NewFromString(r.Size); err == nil && d.IsZero() {
			continue
		}
		p, err := positionProto(r)
		if err != nil {
			return nil, malformed("position", err)
		}
		out = append(out, p)
	}
	return &exchangev1.ListPositionsResponse{Positions: out}, nil
}

// GetLeverage reads the symbol's leverage and margin mode from its position rows.
func (s *Server) GetLeverage(ctx context.Context, req *exchangev1.GetLeverageRequest) (*exchangev1.GetLeverageResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	in, err := s.swap(ctx, req.GetSymbol())
	if err != nil {
		return nil, err
	}
	rows, err := s.positionRows(ctx, creds, in.Symbol)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "bybit: position/list of %s has no row", in.Symbol)
	}
	lev, err := canonStr("leverage", rows[0].Leverage)
	if err != nil {
		return nil, malformed("position leverage", err)
	}
	return &exchangev1.GetLeverageResponse{Leverage: lev, MaxLeverage: canon(in.MaxLeverage), MarginMode: marginModeOf(rows[0].TradeMode)}, nil
}

// SetLeverage sets buy and sell leverage alike (/v5/position/set-leverage; 110043 "not modified" is success). A
// margin mode given switches the symbol first (/v5/position/switch-isolated).
func (s *Server) SetLeverage(ctx context.Context, req *exchangev1.SetLeverageRequest) (*exchangev1.SetLeverageResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	in, err := s.swap(ctx, req.GetSymbol())
	if err != nil {
		return nil, err
	}
	lev, err := decimal.NewFromString(req.GetLeverage())
	if err != nil || !lev.IsPositive() || lev.GreaterThan(in.MaxLeverage) && in.MaxLeverage.IsPositive() {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "leverage", "leverage %q is not between 1 and %s", req.GetLeverage(), in.MaxLeverage)
	}
	if mm := req.GetMarginMode(); mm != exchangev1.MarginMode_MARGIN_MODE_UNSPECIFIED {
		if err := s.switchIsolated(ctx, creds, in, mm, lev); err != nil {
			return nil, err
		}
	}
	_, err = s.client().Write(ctx, pathSetLeverage, map[string]any{"category": catLinear, "symbol": in.Symbol,
		"buyLeverage": lev.String(), "sellLeverage": lev.String()}, creds)
	if err != nil && rawCode(err) != codeLeverageNotModified {
		return nil, err
	}
	return &exchangev1.SetLeverageResponse{Leverage: canon(lev)}, nil
}

func (s *Server) switchIsolated(ctx context.Context, creds *Credentials, in *Instrument, mm exchangev1.MarginMode, lev decimal.Decimal) error {
	mode := 0
	switch mm {
	case exchangev1.MarginMode_MARGIN_MODE_CROSS:
	case exchangev1.MarginMode_MARGIN_MODE_ISOLATED:
		mode = 1
	default:
		return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "margin_mode", "margin mode %v", mm)
	}
	_, err := s.client().Write(ctx, pathSwitchIsolated, map[string]any{"category": catLinear, "symbol": in.Symbol, "tradeMode": mode,
		"buyLeverage": lev.String(), "sellLeverage": lev.String()}, creds)
	if err != nil && rawCode(err) != codeMarginModeUnchanged {
		return err
	}
	return nil
}

// SetMarginMode switches a symbol between cross and isolated margin (/v5/position/switch-isolated, keeping its
// leverage); "not modified" is success.
func (s *Server) SetMarginMode(ctx context.Context, req *exchangev1.SetMarginModeRequest) (*exchangev1.SetMarginModeResponse, error) {
	lv, err := s.GetLeverage(ctx, &exchangev1.GetLeverageRequest{Account: req.GetAccount(), Symbol: req.GetSymbol()})
	if err != nil {
		return nil, err
	}
	if lv.GetMarginMode() == req.GetMarginMode() {
		return &exchangev1.SetMarginModeResponse{}, nil
	}
	creds, _ := credsOf(req.GetAccount())
	in, err := s.swap(ctx, req.GetSymbol())
	if err != nil {
		return nil, err
	}
	lev, _ := decimal.NewFromString(lv.GetLeverage())
	if err := s.switchIsolated(ctx, creds, in, req.GetMarginMode(), lev); err != nil {
		return nil, err
	}
	return &exchangev1.SetMarginModeResponse{}, nil
}

// GetPositionMode reads the mode from the position rows of the first USDT perpetual: positionIdx 1/2 is hedge.
func (s *Server) GetPositionMode(ctx context.Context, req *exchangev1.GetPositionModeRequest) (*exchangev1.GetPositionModeResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	insts, err := s.instruments(ctx, catLinear, false)
	if err != nil {
		return nil, err
	}
	if len(insts) == 0 {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED, "no USDT perpetual to read the position mode from")
	}
	rows, err := s.positionRows(ctx, creds, insts[0].Symbol)
	if err != nil {
		return nil, err
	}
	mode := exchangev1.PositionMode_POSITION_MODE_ONE_WAY
	for _, r := range rows {
		if r.PositionIdx != 0 {
			mode = exchangev1.PositionMode_POSITION_MODE_HEDGE
		}
	}
	return &exchangev1.GetPositionModeResponse{Mode: mode}, nil
}

// SetPositionMode switches the USDT perpetuals between one-way (mode 0) and hedge (mode 3) with
// /v5/position/switch-mode by coin; "not modified" (110025) is success.
func (s *Server) SetPositionMode(ctx context.Context, req *exchangev1.SetPositionModeRequest) (*exchangev1.SetPositionModeResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	mode := 0
	switch req.GetMode() {
	case exchangev1.PositionMode_POSITION_MODE_ONE_WAY:
	case exchangev1.PositionMode_POSITION_MODE_HEDGE:
		mode = 3
	default:
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "mode", "position mode is required")
	}
	_, err = s.client().Write(ctx, pathSwitchMode, map[string]any{"category": catLinear, "coin": settleUSDT, "mode": mode}, creds)
	if err != nil && rawCode(err) != codePositionModeUnchanged {
		return nil, err
	}
	return &exchangev1.SetPositionModeResponse{}, nil
}

// ClosePosition closes a position with a reduce-only market order carrying the client id.
func (s *Server) ClosePosition(ctx context.Context, req *exchangev1.ClosePositionRequest) (*exchangev1.ClosePositionResponse, error) {
	if mt := req.GetMarketType(); mt != exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED && mt != exchangev1.MarketType_MARKET_TYPE_SWAP {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "market_type", "only perpetual positions close")
	}
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	in, err := s.swap(ctx, req.GetSymbol())
	if err != nil {
		return nil, err
	}
	rows, err := s.positionRows(ctx, creds, in.Symbol)
	if err != nil {
		return nil, err
	}
	ps := req.GetPositionSide()
	for _, r := range rows {
		side := positionSideOf(r.PositionIdx, true)
		size, err := decimal.NewFromString(r.Size)
		if err != nil || size.IsZero() || (ps != exchangev1.PositionSide_POSITION_SIDE_UNSPECIFIED && ps != side) {
			continue
		}
		close := exchangev1.Side_SIDE_SELL
		if r.Side == "Sell" {
			close = exchangev1.Side_SIDE_BUY
		}
		o, err := s.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: req.GetAccount(), MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP,
			Symbol: in.Symbol, Side: close, Type: exchangev1.OrderType_ORDER_TYPE_MARKET, Qty: size.String(),
			ClientOrderId: req.GetClientOrderId(), ReduceOnly: true, PositionSide: side})
		if err != nil {
			return nil, err
		}
		return &exchangev1.ClosePositionResponse{Order: o.GetOrder()}, nil
	}
	return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED, "no open %s position to close", in.Symbol)
}

// SetTradingStop sets the take-profit and/or stop-loss of a whole position (/v5/position/trading-stop, Full mode:
// each closes the position at market on its trigger). A nil leg is kept, a TpSl with trigger price "0" removes it.
// Not a contract RPC yet: the contract's position TP/SL goes through algo orders, which this adapter does not
// offer.
func (s *Server) SetTradingStop(ctx context.Context, acct *exchangev1.AccountRef, symbol string, side exchangev1.PositionSide, tp, sl *exchangev1.TpSl) error {
	creds, err := credsOf(acct)
	if err != nil {
		return err
	}
	in, err := s.swap(ctx, symbol)
	if err != nil {
		return err
	}
	idx := 0
	switch side {
	case exchangev1.PositionSide_POSITION_SIDE_LONG:
		idx = 1
	case exchangev1.PositionSide_POSITION_SIDE_SHORT:
		idx = 2
	}
	b := map[string]any{"category": catLinear, "symbol": in.Symbol, "tpslMode": "Full", "positionIdx": idx}
	if tp != nil {
		b["takeProfit"], b["tpTriggerBy"] = tp.GetTriggerPrice(), triggerName(tp.GetTriggerPriceType())
	}
	if sl != nil {
		b["stopLoss"], b["slTriggerBy"] = sl.GetTriggerPrice(), triggerName(sl.GetTriggerPriceType())
	}
	_, err = s.client().Write(ctx, pathTradingStop, b, creds)
	return err
}

// CheckCredentials reads the key's permissions (/v5/user/query-api).
func (s *Server) CheckCredentials(ctx context.Context, req *exchangev1.CheckCredentialsRequest) (*exchangev1.CheckCredentialsResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	res, err := s.client().PrivateGet(ctx, pathQueryAPI, nil, creds)
	if err != nil {
		return nil, err
	}
	var r struct {
		ReadOnly    int                 `json:"readOnly"`
		Permissions map[string][]string `json:"permissions"`
		IPs         []string            `json:"ips"`
		UserID      int64               `json:"userID"`
		UTA         int                 `json:"uta"`
		ExpiredAt   string              `json:"expiredAt"`
	}
	if err := jsonUnmarshal(res.Result, &r); err != nil {
		return nil, malformed("query-api", err)
	}
	has := func(group, p string) bool {
		for _, x := range r.Permissions[group] {
			if x == p {
				return true
			}
		}
		return false
	}
	var ips []string
	for _, ip := range r.IPs {
		if ip != "" && ip != "*" {
			ips = append(ips, ip)
		}
	}
	mode := "classic"
	if r.UTA == 1 {
		mode = "unified"
	}
	pm, err := s.GetPositionMode(ctx, &exchangev1.GetPositionModeRequest{Account: req.GetAccount()})
	if err != nil {
		return nil, err
	}
	trade := r.ReadOnly == 0 && (has("Spot", "SpotTrade") || has("ContractTrade", "Order"))
	return &exchangev1.CheckCredentialsResponse{CanRead: true, CanTrade: trade, CanWithdraw: r.ReadOnly == 0 && has("Wallet", "Withdraw"),
		CanTransfer: r.ReadOnly == 0 && has("Wallet", "AccountTransfer"), IpRestricted: len(ips) > 0, IpAllowlist: ips,
		PositionMode: pm.GetMode(), AccountMode: mode, ExchangeAccountId: strconv.FormatInt(r.UserID, 10)}, nil
}
