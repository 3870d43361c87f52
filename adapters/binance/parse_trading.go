package binance

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

type wireFill struct {
	Price           flexStr `json:"price"`
	Qty             flexStr `json:"qty"`
	Commission      flexStr `json:"commission"`
	CommissionAsset string  `json:"commissionAsset"`
	TradeID         flexInt `json:"tradeId"`
}

type wireOrder struct {
	Symbol              string     `json:"symbol"`
	OrderID             *flexInt   `json:"orderId"`
	ClientOrderID       string     `json:"clientOrderId"`
	Price               flexStr    `json:"price"`
	AvgPrice            flexStr    `json:"avgPrice"`
	OrigQty             flexStr    `json:"origQty"`
	ExecutedQty         flexStr    `json:"executedQty"`
	CummulativeQuoteQty flexStr    `json:"cummulativeQuoteQty"`
	CumQuote            flexStr    `json:"cumQuote"`
	Status              string     `json:"status"`
	TimeInForce         string     `json:"timeInForce"`
	Type                string     `json:"type"`
	OrigType            string     `json:"origType"`
	Side                string     `json:"side"`
	PositionSide        string     `json:"positionSide"`
	StopPrice           flexStr    `json:"stopPrice"`
	WorkingType         string     `json:"workingType"`
	ReduceOnly          bool       `json:"reduceOnly"`
	ClosePosition       bool       `json:"closePosition"`
	PriceMatch          string     `json:"priceMatch"`
	Time                flexInt    `json:"time"`
	TransactTime        flexInt    `json:"transactTime"`
	UpdateTime          flexInt    `json:"updateTime"`
	Fills               []wireFill `json:"fills"`
}

func (w *wireOrder) toOrder(m Market) (*exchangev1.Order, error) {
	if w.OrderID == nil || w.Symbol == "" {
		return nil, errors.New("order: no orderId or symbol")
	}
	var d decs
	quote := w.CummulativeQuoteQty
	if quote == "" {
		quote = w.CumQuote
	}
	o := &exchangev1.Order{
		OrderId: strconv.FormatInt(int64(*w.OrderID), 10), ClientOrderId: w.ClientOrderID, Symbol: w.Symbol,
		MarketType: m.proto(), Side: sideFromWire(w.Side), Type: orderTypeFromWire(w.Type),
		TimeInForce: tifFromWire(w.TimeInForce, w.Type), Status: orderStatusFromWire(w.Status),
		Price: nonZero(d.c("price", w.Price)), Qty: d.c("origQty", w.OrigQty), FilledQty: d.c("executedQty", w.ExecutedQty),
		FilledQuote: d.c("cumQuote", quote), AvgPrice: nonZero(d.c("avgPrice", w.AvgPrice)), ReduceOnly: w.ReduceOnly,
		CreatedTime: int64(w.Time), UpdatedTime: int64(w.UpdateTime),
	}
	if m == Futures {
		o.PositionSide = positionSideFromWire(w.PositionSide)
		o.PriceMatch = priceMatchFromWire(w.PriceMatch)
	}
	if o.CreatedTime == 0 {
		o.CreatedTime = int64(w.TransactTime)
	}
	if o.UpdatedTime == 0 {
		o.UpdatedTime = o.CreatedTime
	}
	if d.err != nil {
		return nil, fmt.Errorf("order %s: %w", o.OrderId, d.err)
	}
	if o.Status == exchangev1.OrderStatus_ORDER_STATUS_UNSPECIFIED {
		return nil, fmt.Errorf("order %s: unknown status %q", o.OrderId, w.Status)
	}
	if o.FilledQty == "" {
		o.FilledQty = "0"
	}
	filled := decimal.RequireFromString(o.FilledQty)
	if o.AvgPrice == "" && filled.IsPositive() && o.FilledQuote != "" {
		o.AvgPrice = decimal.RequireFromString(o.FilledQuote).DivRound(filled, 16).String()
	}
	if len(w.Fills) > 0 {
		fee := decimal.Zero
		for i, f := range w.Fills {
			c, err := decimal.NewFromString(string(f.Commission))
			if err != nil {
				return nil, fmt.Errorf("order %s fill %d: bad commission %q", o.OrderId, i, f.Commission)
			}
			fee = fee.Add(c)
			o.FeeAsset = f.CommissionAsset
		}
		o.Fee = fee.String()
	}
	if w.Status == "EXPIRED" && w.TimeInForce == "GTX" {
		o.RejectReason = "post-only order would take liquidity"
	}
	return o, nil
}

// ParseOrder parses one order (new/cancel/amend/query answers) of either market.
func ParseOrder(m Market, body []byte) (*exchangev1.Order, error) {
	var w wireOrder
	if err := decodeJSON(body, &w, "order"); err != nil {
		return nil, err
	}
	return w.toOrder(m)
}

// ParseOrders parses an array of orders (openOrders, allOrders); conditional futures orders are left out (they are
// algo orders). Spot's conditional orders (STOP_LOSS, TAKE_PROFIT, e.g. an order list's legs) are orders.
func ParseOrders(m Market, body []byte) ([]*exchangev1.Order, error) {
	var ws []wireOrder
	if err := decodeJSON(body, &ws, "orders"); err != nil {
		return nil, err
	}
	out := make([]*exchangev1.Order, 0, len(ws))
	for i := range ws {
		if m == Futures && isConditional(ws[i].Type) {
			continue
		}
		o, err := ws[i].toOrder(m)
		if err != nil {
			return nil, fmt.Errorf("orders row %d: %w", i, err)
		}
		out = append(out, o)
	}
	return out, nil
}

func (w *wireOrder) toAlgo() (*exchangev1.AlgoOrder, error) {
	if w.OrderID == nil || w.Symbol == "" {
		return nil, errors.New("algo order: no orderId or symbol")
	}
	var d decs
	a := &exchangev1.AlgoOrder{
		AlgoId: strconv.FormatInt(int64(*w.OrderID), 10), ClientAlgoId: w.ClientOrderID, Symbol: w.Symbol,
		MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Side: sideFromWire(w.Side),
		PositionSide: positionSideFromWire(w.PositionSide), Type: orderTypeFromWire(w.origOrType()),
		TriggerPrice: nonZero(d.c("stopPrice", w.StopPrice)), TriggerPriceType: workingTypeFromWire(w.WorkingType),
		Price: nonZero(d.c("price", w.Price)), Qty: nonZero(d.c("origQty", w.OrigQty)), ReduceOnly: w.ReduceOnly,
		ClosePosition: w.ClosePosition, CreatedTime: int64(w.Time), UpdatedTime: int64(w.UpdateTime),
	}
	if a.CreatedTime == 0 {
		a.CreatedTime = a.UpdatedTime
	}
	if d.err != nil {
		return nil, fmt.Errorf("algo order %s: %w", a.AlgoId, d.err)
	}
	switch w.Status {
	case "NEW":
		a.Status = exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_WAITING
	case "CANCELED", "EXPIRED":
		a.Status = exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_CANCELLED
	case "REJECTED":
		a.Status = exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_FAILED
	case "PARTIALLY_FILLED", "FILLED":
		a.Status = exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_TRIGGERED
		a.OrderId = a.AlgoId
	default:
		return nil, fmt.Errorf("algo order %s: unknown status %q", a.AlgoId, w.Status)
	}
	return a, nil
}

func (w *wireOrder) origOrType() string {
	if w.OrigType != "" {
		return w.OrigType
	}
	return w.Type
}

// ParseAlgoOrder parses a conditional futures order (STOP_MARKET, TAKE_PROFIT_MARKET, ...).
func ParseAlgoOrder(body []byte) (*exchangev1.AlgoOrder, error) {
	var w wireOrder
	if err := decodeJSON(body, &w, "algo order"); err != nil {
		return nil, err
	}
	return w.toAlgo()
}

// ParseAlgoOrders keeps the conditional orders of an order list.
func ParseAlgoOrders(body []byte) ([]*exchangev1.AlgoOrder, error) {
	var ws []wireOrder
	if err := decodeJSON(body, &ws, "algo orders"); err != nil {
		return nil, err
	}
	var out []*exchangev1.AlgoOrder
	for i := range ws {
		if !isConditional(ws[i].origOrType()) {
			continue
		}
		a, err := ws[i].toAlgo()
		if err != nil {
			return nil, fmt.Errorf("algo orders row %d: %w", i, err)
		}
		out = append(out, a)
	}
	return out, nil
}

// ParseFills parses /api/v3/myTrades or /fapi/v1/userTrades.
func ParseFills(m Market, body []byte) ([]*exchangev1.Fill, error) {
	var rows []struct {
		Symbol          string   `json:"symbol"`
		ID              *flexInt `json:"id"`
		OrderID         flexInt  `json:"orderId"`
		Side            string   `json:"side"`
		IsBuyer         *bool    `json:"isBuyer"`
		PositionSide    string   `json:"positionSide"`
		Price           flexStr  `json:"price"`
		Qty             flexStr  `json:"qty"`
		QuoteQty        flexStr  `json:"quoteQty"`
		Commission      flexStr  `json:"commission"`
		CommissionAsset string   `json:"commissionAsset"`
		RealizedPnl     flexStr  `json:"realizedPnl"`
		Maker           *bool    `json:"maker"`
		IsMaker         *bool    `json:"isMaker"`
		Time            flexInt  `json:"time"`
	}
	if err := decodeJSON(body, &rows, "trades"); err != nil {
		return nil, err
	}
	out := make([]*exchangev1.Fill, 0, len(rows))
	for i, r := range rows {
		if r.ID == nil {
			return nil, fmt.Errorf("fills row %d: no id", i)
		}
		var d decs
		f := &exchangev1.Fill{TradeId: strconv.FormatInt(int64(*r.ID), 10), OrderId: strconv.FormatInt(int64(r.OrderID), 10),
			Symbol: r.Symbol, MarketType: m.proto(), Side: sideFromWire(r.Side), Price: d.c("price", r.Price),
			Qty: d.c("qty", r.Qty), QuoteQty: d.c("quoteQty", r.QuoteQty), Fee: d.c("commission", r.Commission),
			FeeAsset: r.CommissionAsset, RealizedPnl: d.c("realizedPnl", r.RealizedPnl), Time: int64(r.Time)}
		if d.err != nil {
			return nil, fmt.Errorf("fills row %d: %w", i, d.err)
		}
		if f.Side == exchangev1.Side_SIDE_UNSPECIFIED && r.IsBuyer != nil {
			f.Side = exchangev1.Side_SIDE_SELL
			if *r.IsBuyer {
				f.Side = exchangev1.Side_SIDE_BUY
			}
		}
		if r.Maker != nil {
			f.Maker = *r.Maker
		} else if r.IsMaker != nil {
			f.Maker = *r.IsMaker
		}
		if m == Futures {
			f.PositionSide = positionSideFromWire(r.PositionSide)
		}
		out = append(out, f)
	}
	return out, nil
}

// ParsePositionRisk parses /fapi/v2|v3/positionRisk; empty positions (amount 0) are left out.
func ParsePositionRisk(body []byte) ([]*exchangev1.Position, error) {
	var rows []struct {
		Symbol           string  `json:"symbol"`
		PositionSide     string  `json:"positionSide"`
		PositionAmt      flexStr `json:"positionAmt"`
		EntryPrice       flexStr `json:"entryPrice"`
		BreakEvenPrice   flexStr `json:"breakEvenPrice"`
		MarkPrice        flexStr `json:"markPrice"`
		UnRealizedProfit flexStr `json:"unRealizedProfit"`
		LiquidationPrice flexStr `json:"liquidationPrice"`
		Leverage         flexStr `json:"leverage"`
		MarginType       string  `json:"marginType"`
		IsolatedMargin   flexStr `json:"isolatedMargin"`
		InitialMargin    flexStr `json:"initialMargin"`
		MaintMargin      flexStr `json:"maintMargin"`
		Notional         flexStr `json:"notional"`
		UpdateTime       flexInt `json:"updateTime"`
	}
	if err := decodeJSON(body, &rows, "positionRisk"); err != nil {
		return nil, err
	}
	out := make([]*exchangev1.Position, 0, len(rows))
	for i, r := range rows {
		var d decs
		p := &exchangev1.Position{Symbol: r.Symbol, PositionSide: positionSideFromWire(r.PositionSide),
			Qty: d.c("positionAmt", r.PositionAmt), EntryPrice: d.c("entryPrice", r.EntryPrice),
			MarkPrice: d.c("markPrice", r.MarkPrice), LiquidationPrice: nonZero(d.c("liquidationPrice", r.LiquidationPrice)),
			UnrealizedPnl: d.c("unRealizedProfit", r.UnRealizedProfit), Leverage: d.c("leverage", r.Leverage),
			MaintenanceMargin: d.c("maintMargin", r.MaintMargin), Notional: d.c("notional", r.Notional),
			MarginMode: marginModeFromWire(r.MarginType), UpdatedTime: int64(r.UpdateTime),
			BreakEvenPrice: nonZero(d.c("breakEvenPrice", r.BreakEvenPrice))}
		iso := d.c("isolatedMargin", r.IsolatedMargin)
		im := d.c("initialMargin", r.InitialMargin)
		if d.err != nil {
			return nil, fmt.Errorf("positionRisk row %d: %w", i, d.err)
		}
		if r.Symbol == "" || p.Qty == "" {
			return nil, fmt.Errorf("positionRisk row %d: no symbol or positionAmt", i)
		}
		if nonZero(p.Qty) == "" {
			continue
		}
		if nonZero(iso) != "" {
			p.Margin = iso
			if p.MarginMode == exchangev1.MarginMode_MARGIN_MODE_UNSPECIFIED {
				p.MarginMode = exchangev1.MarginMode_MARGIN_MODE_ISOLATED
			}
			// isolatedMargin is the isolated wallet plus unrealized PnL: the position's margin balance.
			p.MarginRatio = marginRatio(p.MaintenanceMargin, iso)
		} else {
			p.Margin = im
		}
		if p.PositionSide != exchangev1.PositionSide_POSITION_SIDE_NET {
			p.Qty = decimal.RequireFromString(p.Qty).Abs().String()
		}
		out = append(out, p)
	}
	return out, nil
}

// marginRatioScale is the decimals of a margin ratio.
const marginRatioScale = 8

// marginRatio is maintenance margin over margin balance (Binance's margin ratio; liquidation at 1): "" when either
// is unknown or there is no maintenance margin, "1" when the balance is at or below zero.
func marginRatio(maint, balance string) string {
	m, err1 := decimal.NewFromString(maint)
	b, err2 := decimal.NewFromString(balance)
	if err1 != nil || err2 != nil || !m.IsPositive() {
		return ""
	}
	if !b.IsPositive() {
		return "1"
	}
	return m.DivRound(b, marginRatioScale).String()
}

// ParseCrossMarginRatio reads the cross margin ratio from /fapi/v3/account (or v2): the maintenance margin of the
// cross positions (isolatedWallet 0) over totalCrossWalletBalance + totalCrossUnPnl. Empty without cross positions.
func ParseCrossMarginRatio(body []byte) (string, error) {
	var w struct {
		TotalCrossWalletBalance flexStr `json:"totalCrossWalletBalance"`
		TotalCrossUnPnl         flexStr `json:"totalCrossUnPnl"`
		Positions               []struct {
			IsolatedWallet flexStr `json:"isolatedWallet"`
			MaintMargin    flexStr `json:"maintMargin"`
		} `json:"positions"`
	}
	if err := decodeJSON(body, &w, "futures account"); err != nil {
		return "", err
	}
	var d decs
	wallet := d.c("totalCrossWalletBalance", w.TotalCrossWalletBalance)
	upnl := d.c("totalCrossUnPnl", w.TotalCrossUnPnl)
	maint := decimal.Zero
	for _, p := range w.Positions {
		iw := d.c("isolatedWallet", p.IsolatedWallet)
		mm := d.c("maintMargin", p.MaintMargin)
		if d.err != nil {
			break
		}
		if nonZero(iw) == "" && mm != "" {
			maint = maint.Add(decimal.RequireFromString(mm))
		}
	}
	if d.err != nil {
		return "", fmt.Errorf("futures account: %w", d.err)
	}
	if wallet == "" {
		return "", errors.New("futures account: no totalCrossWalletBalance")
	}
	balance := decimal.RequireFromString(wallet)
	if upnl != "" {
		balance = balance.Add(decimal.RequireFromString(upnl))
	}
	return marginRatio(maint.String(), balance.String()), nil
}

// SymbolConfig is one row of /fapi/v1/symbolConfig.
type SymbolConfig struct {
	Symbol     string
	Leverage   string
	MarginMode exchangev1.MarginMode
}

// ParseSymbolConfig parses /fapi/v1/symbolConfig.
func ParseSymbolConfig(body []byte) ([]SymbolConfig, error) {
	var rows []struct {
		Symbol     string  `json:"symbol"`
		MarginType string  `json:"marginType"`
		Leverage   flexStr `json:"leverage"`
	}
	if err := decodeJSON(body, &rows, "symbolConfig"); err != nil {
		return nil, err
	}
	out := make([]SymbolConfig, 0, len(rows))
	for i, r := range rows {
		l, err := canon(string(r.Leverage))
		if err != nil || r.Symbol == "" {
			return nil, fmt.Errorf("symbolConfig row %d: bad row", i)
		}
		out = append(out, SymbolConfig{Symbol: r.Symbol, Leverage: l, MarginMode: marginModeFromWire(r.MarginType)})
	}
	return out, nil
}

// ParseLeverage parses the answer of POST /fapi/v1/leverage.
func ParseLeverage(body []byte) (string, error) {
	var w struct {
		Leverage flexStr `json:"leverage"`
		Symbol   string  `json:"symbol"`
	}
	if err := decodeJSON(body, &w, "leverage"); err != nil {
		return "", err
	}
	l, err := canon(string(w.Leverage))
	if err != nil || l == "" {
		return "", fmt.Errorf("leverage: bad leverage %q", w.Leverage)
	}
	return l, nil
}

// ParseDualSide parses GET /fapi/v1/positionSide/dual.
func ParseDualSide(body []byte) (bool, error) {
	var w struct {
		Dual *bool `json:"dualSidePosition"`
	}
	if err := decodeJSON(body, &w, "positionSide/dual"); err != nil {
		return false, err
	}
	if w.Dual == nil {
		return false, errors.New("positionSide/dual: no dualSidePosition")
	}
	return *w.Dual, nil
}

// ParseSpotAccount parses the balances of /api/v3/account.
func ParseSpotAccount(body []byte) ([]*exchangev1.Balance, error) {
	var w struct {
		Balances *[]struct {
			Asset  string  `json:"asset"`
			Free   flexStr `json:"free"`
			Locked flexStr `json:"locked"`
		} `json:"balances"`
	}
	if err := decodeJSON(body, &w, "account"); err != nil {
		return nil, err
	}
	if w.Balances == nil {
		return nil, errors.New("account: no balances")
	}
	var out []*exchangev1.Balance
	for i, b := range *w.Balances {
		free, err1 := decimal.NewFromString(string(b.Free))
		locked, err2 := decimal.NewFromString(string(b.Locked))
		if err1 != nil || err2 != nil || b.Asset == "" {
			return nil, fmt.Errorf("account balance %d: bad row", i)
		}
		if free.IsZero() && locked.IsZero() {
			continue
		}
		out = append(out, &exchangev1.Balance{Asset: b.Asset, Wallet: exchangev1.WalletType_WALLET_TYPE_TRADING,
			Total: free.Add(locked).String(), Available: free.String(), Locked: locked.String()})
	}
	return out, nil
}

// FuturesAccount is the summary of /fapi/v2|v3/account.
type FuturesAccount struct {
	Equity, UnrealizedPnl, AvailableMargin string
	Assets                                 []*exchangev1.Balance
}

// ParseFuturesAccount parses /fapi/v3/account (or v2).
func ParseFuturesAccount(body []byte) (*FuturesAccount, error) {
	var w struct {
		TotalMarginBalance    flexStr `json:"totalMarginBalance"`
		TotalUnrealizedProfit flexStr `json:"totalUnrealizedProfit"`
		AvailableBalance      flexStr `json:"availableBalance"`
		Assets                []struct {
			Asset            string  `json:"asset"`
			WalletBalance    flexStr `json:"walletBalance"`
			AvailableBalance flexStr `json:"availableBalance"`
		} `json:"assets"`
	}
	if err := decodeJSON(body, &w, "futures account"); err != nil {
		return nil, err
	}
	var d decs
	fa := &FuturesAccount{Equity: d.c("totalMarginBalance", w.TotalMarginBalance),
		UnrealizedPnl: d.c("totalUnrealizedProfit", w.TotalUnrealizedProfit), AvailableMargin: d.c("availableBalance", w.AvailableBalance)}
	for _, a := range w.Assets {
		tot := d.c("walletBalance", a.WalletBalance)
		av := d.c("availableBalance", a.AvailableBalance)
		if d.err != nil {
			break
		}
		if nonZero(tot) == "" && nonZero(av) == "" {
			continue
		}
		locked := decimal.RequireFromString(tot).Sub(decimal.RequireFromString(av))
		if locked.IsNegative() {
			locked = decimal.Zero
		}
		fa.Assets = append(fa.Assets, &exchangev1.Balance{Asset: a.Asset, Wallet: exchangev1.WalletType_WALLET_TYPE_TRADING,
			Total: tot, Available: av, Locked: locked.String()})
	}
	if d.err != nil {
		return nil, fmt.Errorf("futures account: %w", d.err)
	}
	return fa, nil
}

// ParseFundingAssets parses POST /sapi/v1/asset/get-funding-asset.
func ParseFundingAssets(body []byte) ([]*exchangev1.Balance, error) {
	var rows []struct {
		Asset  string  `json:"asset"`
		Free   flexStr `json:"free"`
		Locked flexStr `json:"locked"`
		Freeze flexStr `json:"freeze"`
	}
	if err := decodeJSON(body, &rows, "funding assets"); err != nil {
		return nil, err
	}
	var out []*exchangev1.Balance
	for i, r := range rows {
		free, err := decimal.NewFromString(string(r.Free))
		if err != nil || r.Asset == "" {
			return nil, fmt.Errorf("funding asset %d: bad row", i)
		}
		locked := decimal.Zero
		for _, s := range []flexStr{r.Locked, r.Freeze} {
			if s != "" {
				v, err := decimal.NewFromString(string(s))
				if err != nil {
					return nil, fmt.Errorf("funding asset %d: bad locked %q", i, s)
				}
				locked = locked.Add(v)
			}
		}
		out = append(out, &exchangev1.Balance{Asset: r.Asset, Wallet: exchangev1.WalletType_WALLET_TYPE_FUNDING,
			Total: free.Add(locked).String(), Available: free.String(), Locked: locked.String()})
	}
	return out, nil
}

// ParseListenKey parses the listenKey answer.
func ParseListenKey(body []byte) (string, error) {
	var w struct {
		ListenKey string `json:"listenKey"`
	}
	if err := decodeJSON(body, &w, "listenKey"); err != nil {
		return "", err
	}
	if strings.TrimSpace(w.ListenKey) == "" {
		return "", errors.New("listenKey: empty")
	}
	return w.ListenKey, nil
}

// ParseIncome reads GET /fapi/v1/income rows of incomeType FUNDING_FEE as funding payments, in Binance's order.
// Other income types in the answer are dropped. Binance says neither the rate nor the position size.
func ParseIncome(body []byte) ([]*exchangev1.FundingPayment, error) {
	var rows []struct {
		Symbol     string   `json:"symbol"`
		IncomeType string   `json:"incomeType"`
		Income     flexStr  `json:"income"`
		Asset      string   `json:"asset"`
		Time       *flexInt `json:"time"`
		TranID     *flexInt `json:"tranId"`
	}
	if err := decodeJSON(body, &rows, "income"); err != nil {
		return nil, err
	}
	out := make([]*exchangev1.FundingPayment, 0, len(rows))
	for i, r := range rows {
		if r.IncomeType != "FUNDING_FEE" {
			continue
		}
		if r.TranID == nil || r.Time == nil || r.Symbol == "" || r.Asset == "" || r.Income == "" {
			return nil, fmt.Errorf("income row %d: tranId, time, symbol, asset and income are required", i)
		}
		var d decs
		p := &exchangev1.FundingPayment{Id: strconv.FormatInt(int64(*r.TranID), 10), Symbol: r.Symbol,
			Amount: d.c("income", r.Income), Asset: r.Asset, Time: int64(*r.Time)}
		if d.err != nil {
			return nil, fmt.Errorf("income row %d: %w", i, d.err)
		}
		out = append(out, p)
	}
	return out, nil
}
