package okx

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

func (s *Server) positions(ctx context.Context, creds *Credentials, instID string) ([]*exchangev1.Position, error) {
	q := url.Values{"instType": {instSwap}}
	if instID != "" {
		q.Set("instId", instID)
	}
	data, err := s.client().Get(ctx, "/api/v5/account/positions", q, creds)
	if err != nil {
		return nil, err
	}
	rows, err := decodeList[rawPosition](data)
	if err != nil {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "positions: %v", err)
	}
	var out []*exchangev1.Position
	for _, r := range rows {
		in, err := s.instrument(ctx, exchangev1.MarketType_MARKET_TYPE_SWAP, r.InstID)
		if err != nil {
			continue // not a linear USDT swap
		}
		p, err := positionProto(r, in.FromOKXSize)
		if err != nil {
			return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "positions: %v", err)
		}
		if d, _, _ := parseDec("qty", p.Qty); d.IsZero() {
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

// ListPositions lists open SWAP positions in base units.
func (s *Server) ListPositions(ctx context.Context, req *exchangev1.ListPositionsRequest) (*exchangev1.ListPositionsResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	instID := ""
	if req.GetSymbol() != "" {
		in, err := s.swap(ctx, req.GetSymbol())
		if err != nil {
			return nil, err
		}
		instID = in.InstID
	}
	ps, err := s.positions(ctx, creds, instID)
	if err != nil {
		return nil, err
	}
	return &exchangev1.ListPositionsResponse{Positions: ps}, nil
}

// ClosePosition closes a position at market with OKX's close-position (pending close orders are cancelled) and
// returns the closing order, found by the client id sent with it.
func (s *Server) ClosePosition(ctx context.Context, req *exchangev1.ClosePositionRequest) (*exchangev1.ClosePositionResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	if mt := req.GetMarketType(); mt != exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED && mt != exchangev1.MarketType_MARKET_TYPE_SWAP {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "market_type", "OKX closes SWAP positions only")
	}
	in, err := s.swap(ctx, req.GetSymbol())
	if err != nil {
		return nil, err
	}
	mgn, err := tdMode(in, req.GetMarginMode())
	if err != nil {
		return nil, err
	}
	cid := req.GetClientOrderId()
	if cid != "" && !clOrdIDRe.MatchString(cid) {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "client_order_id", "OKX client order ids are 1 to 32 letters and digits")
	}
	if cid != "" {
		// A close sent before with this id (an unknown outcome being retried) is not sent again.
		o, err := s.fetchOrder(ctx, creds, in, "", cid)
		switch {
		case err == nil && o.GetReduceOnly() && o.GetType() == exchangev1.OrderType_ORDER_TYPE_MARKET:
			return &exchangev1.ClosePositionResponse{Order: o}, nil
		case err == nil:
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID, "client_order_id",
				"client order id %q belongs to order %s, which is not a close", cid, o.GetOrderId())
		case reasonOf(err) != exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND:
			return nil, err
		}
	}
	ps, err := s.positions(ctx, creds, in.InstID)
	if err != nil {
		return nil, err
	}
	var pos *exchangev1.Position
	for _, p := range ps {
		if (req.GetPositionSide() == exchangev1.PositionSide_POSITION_SIDE_UNSPECIFIED || p.PositionSide == req.GetPositionSide()) &&
			p.MarginMode == req.GetMarginMode() {
			pos = p
			break
		}
	}
	if pos == nil {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED, "no open %v %s position in %s", req.GetPositionSide(), mgn, in.InstID)
	}
	posSide := posSideStr(pos.PositionSide)
	if posSide == "" {
		posSide = "net"
	}
	if cid == "" {
		cid = "cls" + strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	data, err := s.client().Post(ctx, "/api/v5/trade/close-position",
		map[string]any{"instId": in.InstID, "posSide": posSide, "mgnMode": mgn, "autoCxl": true, "clOrdId": cid}, creds)
	if err != nil {
		return nil, err
	}
	if _, err := decodeList[map[string]any](data); err != nil {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "close-position: %v", err)
	}
	if o, err := s.fetchOrder(ctx, creds, in, "", cid); err == nil {
		return &exchangev1.ClosePositionResponse{Order: o}, nil
	}
	qty, _, _ := parseDec("qty", pos.Qty)
	side := exchangev1.Side_SIDE_SELL
	if pos.PositionSide == exchangev1.PositionSide_POSITION_SIDE_SHORT || (pos.PositionSide == exchangev1.PositionSide_POSITION_SIDE_NET && qty.IsNegative()) {
		side = exchangev1.Side_SIDE_BUY
	}
	now := time.Now().UnixMilli()
	return &exchangev1.ClosePositionResponse{Order: &exchangev1.Order{ClientOrderId: cid, Symbol: in.InstID, MarketType: in.MarketType,
		Side: side, PositionSide: pos.PositionSide, Type: exchangev1.OrderType_ORDER_TYPE_MARKET, TimeInForce: exchangev1.TimeInForce_TIME_IN_FORCE_IOC,
		Status: exchangev1.OrderStatus_ORDER_STATUS_NEW, Qty: canon(qty.Abs()), FilledQty: "0", ReduceOnly: true, CreatedTime: now, UpdatedTime: now}}, nil
}

// GetLeverage reads the leverage of the instrument in the account's margin mode for it.
func (s *Server) GetLeverage(ctx context.Context, req *exchangev1.GetLeverageRequest) (*exchangev1.GetLeverageResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	in, err := s.swap(ctx, req.GetSymbol())
	if err != nil {
		return nil, err
	}
	// OKX keeps a leverage per margin mode: report the one of the open position, else the cross leverage (and say
	// so in margin_mode).
	mgn := "cross"
	if ps, err := s.positions(ctx, creds, in.InstID); err == nil && len(ps) > 0 {
		mgn = marginModeStr(ps[0].MarginMode)
	} else if err != nil {
		return nil, err
	}
	data, err := s.client().Get(ctx, "/api/v5/account/leverage-info", url.Values{"instId": {in.InstID}, "mgnMode": {mgn}}, creds)
	if err != nil {
		return nil, err
	}
	type row struct {
		Lever   string `json:"lever"`
		MgnMode string `json:"mgnMode"`
	}
	rows, err := decodeList[row](data)
	if err != nil || len(rows) == 0 {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "leverage-info: malformed response")
	}
	lev, err := canonStr("lever", rows[0].Lever)
	if err != nil {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "leverage-info: %v", err)
	}
	return &exchangev1.GetLeverageResponse{Leverage: lev, MaxLeverage: in.Proto().MaxLeverage, MarginMode: marginModeOf(rows[0].MgnMode)}, nil
}

// SetLeverage sets the leverage for the instrument in a margin mode (isolated hedge-mode positions get both sides).
func (s *Server) SetLeverage(ctx context.Context, req *exchangev1.SetLeverageRequest) (*exchangev1.SetLeverageResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	in, err := s.swap(ctx, req.GetSymbol())
	if err != nil {
		return nil, err
	}
	lev, ok, err := parseDec("leverage", req.GetLeverage())
	if err != nil || !ok || !lev.IsPositive() {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "leverage", "leverage must be a positive number")
	}
	if max, ok, _ := parseDec("lever", in.Lever); ok && lev.GreaterThan(max) {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "leverage", "leverage %s is above the maximum %s", lev, max)
	}
	mgn, err := tdMode(in, req.GetMarginMode())
	if err != nil {
		return nil, err
	}
	bodies := []map[string]any{{"instId": in.InstID, "lever": canon(lev), "mgnMode": mgn}}
	switch ps := req.GetPositionSide(); {
	case mgn != "isolated":
		// Cross leverage is one per instrument; OKX takes no posSide for it.
	case ps == exchangev1.PositionSide_POSITION_SIDE_LONG || ps == exchangev1.PositionSide_POSITION_SIDE_SHORT:
		// Hedge mode with isolated margin: one side's leverage.
		bodies[0]["posSide"] = posSideStr(ps)
	default:
		if mode, err := s.positionMode(ctx, creds); err != nil {
			return nil, err
		} else if mode == "long_short_mode" {
			// No side named in hedge mode: both sides get the leverage.
			bodies = []map[string]any{
				{"instId": in.InstID, "lever": canon(lev), "mgnMode": mgn, "posSide": "long"},
				{"instId": in.InstID, "lever": canon(lev), "mgnMode": mgn, "posSide": "short"},
			}
		}
	}
	for _, b := range bodies {
		if _, err := s.client().Post(ctx, "/api/v5/account/set-leverage", b, creds); err != nil {
			return nil, err
		}
	}
	return &exchangev1.SetLeverageResponse{Leverage: canon(lev)}, nil
}

// SetMarginMode is not an OKX operation: OKX has no margin mode setting per account or instrument, the mode
// travels with every order as tdMode (margin_mode on PlaceOrder, PlaceAlgoOrder, ClosePosition, GetMaxOrderSize).
func (s *Server) SetMarginMode(context.Context, *exchangev1.SetMarginModeRequest) (*exchangev1.SetMarginModeResponse, error) {
	return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED,
		"OKX has no margin mode setting: pass margin_mode with each order")
}

// accountConfig is GET /api/v5/account/config: the key's permissions and IPs, the account mode and position mode.
type accountConfig struct {
	UID     string `json:"uid"`
	AcctLv  string `json:"acctLv"`
	PosMode string `json:"posMode"`
	Perm    string `json:"perm"`
	IP      string `json:"ip"`
}

func (s *Server) accountConfig(ctx context.Context, creds *Credentials) (accountConfig, error) {
	data, err := s.client().Get(ctx, "/api/v5/account/config", nil, creds)
	if err != nil {
		return accountConfig{}, err
	}
	rows, err := decodeList[accountConfig](data)
	if err != nil || len(rows) == 0 {
		return accountConfig{}, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "account config: malformed response")
	}
	return rows[0], nil
}

func (s *Server) positionMode(ctx context.Context, creds *Credentials) (string, error) {
	c, err := s.accountConfig(ctx, creds)
	return c.PosMode, err
}

// CheckCredentials reads what the key may do from the account configuration: perm lists "read_only", "trade"
// and "withdraw" (transfers between the funding and trading accounts need "trade"); ip lists the addresses the key
// is bound to. OKX keys bound to no IP expire after 14 days of inactivity, which is not an expiry time.
func (s *Server) CheckCredentials(ctx context.Context, req *exchangev1.CheckCredentialsRequest) (*exchangev1.CheckCredentialsResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	c, err := s.accountConfig(ctx, creds)
	if err != nil {
		return nil, err
	}
	perms := map[string]bool{}
	for _, p := range strings.Split(c.Perm, ",") {
		if p = strings.TrimSpace(p); p != "" {
			perms[p] = true
		}
	}
	var ips []string
	for _, ip := range strings.Split(c.IP, ",") {
		if ip = strings.TrimSpace(ip); ip != "" {
			ips = append(ips, ip)
		}
	}
	mode := positionModeOf(c.PosMode)
	if mode == exchangev1.PositionMode_POSITION_MODE_UNSPECIFIED {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "account config: unknown posMode %q", c.PosMode)
	}
	// Every valid key reads (OKX lists read_only for all of them); the call above succeeded with this one.
	return &exchangev1.CheckCredentialsResponse{CanRead: true, CanTrade: perms["trade"], CanWithdraw: perms["withdraw"],
		CanTransfer: perms["trade"], IpRestricted: len(ips) > 0, IpAllowlist: ips, PositionMode: mode,
		AccountMode: c.AcctLv, ExchangeAccountId: c.UID}, nil
}

// GetPositionMode reads posMode from the account configuration.
func (s *Server) GetPositionMode(ctx context.Context, req *exchangev1.GetPositionModeRequest) (*exchangev1.GetPositionModeResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	m, err := s.positionMode(ctx, creds)
	if err != nil {
		return nil, err
	}
	return &exchangev1.GetPositionModeResponse{Mode: positionModeOf(m)}, nil
}

// SetPositionMode switches between net_mode and long_short_mode.
func (s *Server) SetPositionMode(ctx context.Context, req *exchangev1.SetPositionModeRequest) (*exchangev1.SetPositionModeResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	m, err := positionModeStr(req.GetMode())
	if err != nil {
		return nil, err
	}
	if _, err := s.client().Post(ctx, "/api/v5/account/set-position-mode", map[string]string{"posMode": m}, creds); err != nil {
		return nil, err
	}
	return &exchangev1.SetPositionModeResponse{}, nil
}

// GetMaxOrderSize reads max-size (contracts for SWAP) and converts to base units.
func (s *Server) GetMaxOrderSize(ctx context.Context, req *exchangev1.GetMaxOrderSizeRequest) (*exchangev1.GetMaxOrderSizeResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	in, err := s.instrument(ctx, req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	td, err := tdMode(in, req.GetMarginMode())
	if err != nil {
		return nil, err
	}
	q := url.Values{"instId": {in.InstID}, "tdMode": {td}}
	if req.GetPrice() != "" {
		q.Set("px", req.GetPrice())
	}
	data, err := s.client().Get(ctx, "/api/v5/account/max-size", q, creds)
	if err != nil {
		return nil, err
	}
	type row struct {
		MaxBuy  string `json:"maxBuy"`
		MaxSell string `json:"maxSell"`
	}
	rows, err := decodeList[row](data)
	if err != nil || len(rows) == 0 {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "max-size: malformed response")
	}
	buy, _, err1 := parseDec("maxBuy", rows[0].MaxBuy)
	sell, _, err2 := parseDec("maxSell", rows[0].MaxSell)
	if err1 != nil || err2 != nil {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "max-size: malformed response")
	}
	// Whole lots only.
	floor := func(d decimal.Decimal) decimal.Decimal { return d.Div(in.LotSz).Floor().Mul(in.LotSz) }
	return &exchangev1.GetMaxOrderSizeResponse{MaxBuyQty: canon(in.FromOKXSize(floor(buy))), MaxSellQty: canon(in.FromOKXSize(floor(sell)))}, nil
}
