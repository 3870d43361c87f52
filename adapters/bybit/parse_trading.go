package bybit

import (
	"encoding/json"
	"fmt"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// listPage is a private list answer: {"category","list":[...],"nextPageCursor"}.
type listPage[T any] struct {
	Category       string `json:"category"`
	List           []T    `json:"list"`
	NextPageCursor string `json:"nextPageCursor"`
}

func parseList[T any](what string, result json.RawMessage) (listPage[T], error) {
	var p listPage[T]
	if err := json.Unmarshal(result, &p); err != nil {
		return p, fmt.Errorf("%w: %s: %v", errMalformed, what, err)
	}
	return p, nil
}

// rawOrder is a row of /v5/order/realtime and /v5/order/history.
type rawOrder struct {
	OrderID          string            `json:"orderId"`
	OrderLinkID      string            `json:"orderLinkId"`
	Symbol           string            `json:"symbol"`
	Price            string            `json:"price"`
	Qty              string            `json:"qty"`
	Side             string            `json:"side"`
	PositionIdx      int               `json:"positionIdx"`
	OrderStatus      string            `json:"orderStatus"`
	RejectReason     string            `json:"rejectReason"`
	AvgPrice         string            `json:"avgPrice"`
	CumExecQty       string            `json:"cumExecQty"`
	CumExecValue     string            `json:"cumExecValue"`
	CumExecFee       string            `json:"cumExecFee"`
	CumFeeDetail     map[string]string `json:"cumFeeDetail"`
	TimeInForce      string            `json:"timeInForce"`
	OrderType        string            `json:"orderType"`
	ReduceOnly       bool              `json:"reduceOnly"`
	TakeProfit       string            `json:"takeProfit"`
	StopLoss         string            `json:"stopLoss"`
	TpTriggerBy      string            `json:"tpTriggerBy"`
	SlTriggerBy      string            `json:"slTriggerBy"`
	MarketUnit       string            `json:"marketUnit"`
	TriggerPrice     string            `json:"triggerPrice"`
	TriggerDirection int               `json:"triggerDirection"`
	TriggerBy        string            `json:"triggerBy"`
	CreatedTime      string            `json:"createdTime"`
	UpdatedTime      string            `json:"updatedTime"`
}

// ParseOrders reads an order list answer.
func ParseOrders(result json.RawMessage) ([]rawOrder, string, error) {
	p, err := parseList[rawOrder]("orders", result)
	return p.List, p.NextPageCursor, err
}

var orderStatusOf = map[string]exchangev1.OrderStatus{
	"New":                     exchangev1.OrderStatus_ORDER_STATUS_NEW,
	"Untriggered":             exchangev1.OrderStatus_ORDER_STATUS_NEW,
	"Triggered":               exchangev1.OrderStatus_ORDER_STATUS_NEW,
	"PartiallyFilled":         exchangev1.OrderStatus_ORDER_STATUS_PARTIALLY_FILLED,
	"Filled":                  exchangev1.OrderStatus_ORDER_STATUS_FILLED,
	"Cancelled":               exchangev1.OrderStatus_ORDER_STATUS_CANCELLED,
	"PartiallyFilledCanceled": exchangev1.OrderStatus_ORDER_STATUS_CANCELLED,
	"Deactivated":             exchangev1.OrderStatus_ORDER_STATUS_CANCELLED,
	"Rejected":                exchangev1.OrderStatus_ORDER_STATUS_REJECTED,
}

var tifOf = map[string]exchangev1.TimeInForce{
	"GTC": exchangev1.TimeInForce_TIME_IN_FORCE_GTC, "IOC": exchangev1.TimeInForce_TIME_IN_FORCE_IOC,
	"FOK": exchangev1.TimeInForce_TIME_IN_FORCE_FOK, "PostOnly": exchangev1.TimeInForce_TIME_IN_FORCE_POST_ONLY,
}

func tifName(t exchangev1.TimeInForce) (string, bool) {
	for k, v := range tifOf {
		if v == t {
			return k, true
		}
	}
	return "", false
}

var triggerOf = map[string]exchangev1.TriggerPriceType{
	"LastPrice": exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST, "MarkPrice": exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK,
	"IndexPrice": exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_INDEX,
}

func triggerName(t exchangev1.TriggerPriceType) string {
	switch t {
	case exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK:
		return "MarkPrice"
	case exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_INDEX:
		return "IndexPrice"
	}
	return "LastPrice"
}

// positionSideOf maps positionIdx: 0 one-way (NET), 1 the buy side of hedge mode (LONG), 2 the sell side (SHORT).
func positionSideOf(idx int, linear bool) exchangev1.PositionSide {
	if !linear {
		return exchangev1.PositionSide_POSITION_SIDE_UNSPECIFIED
	}
	switch idx {
	case 1:
		return exchangev1.PositionSide_POSITION_SIDE_LONG
	case 2:
		return exchangev1.PositionSide_POSITION_SIDE_SHORT
	}
	return exchangev1.PositionSide_POSITION_SIDE_NET
}

// optDec reads an optional decimal ("" and "0" mean none for trigger prices).
func tpslOf(price, by string) (*exchangev1.TpSl, error) {
	d, ok, err := parseDec("trigger price", price)
	if err != nil || !ok || !d.IsPositive() {
		return nil, err
	}
	t := triggerOf[by]
	if t == exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_UNSPECIFIED {
		t = exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST
	}
	return &exchangev1.TpSl{TriggerPrice: canon(d), TriggerPriceType: t}, nil
}

// orderProto converts an order row of in's category.
func orderProto(r rawOrder, in *Instrument) (*exchangev1.Order, error) {
	st, ok := orderStatusOf[r.OrderStatus]
	if !ok {
		return nil, fmt.Errorf("%w: order %s: unknown orderStatus %q", errMalformed, r.OrderID, r.OrderStatus)
	}
	side := sideOf(r.Side)
	if r.OrderID == "" || side == exchangev1.Side_SIDE_UNSPECIFIED {
		return nil, fmt.Errorf("%w: order without orderId or side", errMalformed)
	}
	linear := in.Category == catLinear
	o := &exchangev1.Order{OrderId: r.OrderID, ClientOrderId: r.OrderLinkID, Symbol: in.Symbol, MarketType: in.MarketType,
		Side: side, PositionSide: positionSideOf(r.PositionIdx, linear), Status: st, ReduceOnly: r.ReduceOnly,
		TimeInForce: tifOf[r.TimeInForce]}
	switch r.OrderType {
	case "Limit":
		o.Type = exchangev1.OrderType_ORDER_TYPE_LIMIT
	case "Market":
		o.Type = exchangev1.OrderType_ORDER_TYPE_MARKET
	default:
		return nil, fmt.Errorf("%w: order %s: unknown orderType %q", errMalformed, r.OrderID, r.OrderType)
	}
	var err error
	filled, err := mustDec("cumExecQty", r.CumExecQty)
	if err != nil {
		return nil, err
	}
	o.FilledQty = canon(filled)
	if o.Type == exchangev1.OrderType_ORDER_TYPE_LIMIT {
		if o.Price, err = canonStr("price", r.Price); err != nil {
			return nil, err
		}
	}
	if r.MarketUnit == "quoteCoin" {
		// A spot market buy sized in the quote coin: the base quantity is what it bought.
		o.Qty = o.FilledQty
	} else if o.Qty, err = canonStr("qty", r.Qty); err != nil {
		return nil, err
	}
	if avg, ok, err := parseDec("avgPrice", r.AvgPrice); err != nil {
		return nil, err
	} else if ok && avg.IsPositive() {
		o.AvgPrice = canon(avg)
	}
	if v, ok, err := parseDec("cumExecValue", r.CumExecValue); err != nil {
		return nil, err
	} else if ok {
		o.FilledQuote = canon(v)
	}
	fee, _, err := parseDec("cumExecFee", r.CumExecFee)
	if err != nil {
		return nil, err
	}
	o.Fee = canon(fee)
	switch {
	case len(r.CumFeeDetail) == 1:
		for a := range r.CumFeeDetail {
			o.FeeAsset = a
		}
	case linear:
		o.FeeAsset = in.Settle
	case side == exchangev1.Side_SIDE_BUY:
		o.FeeAsset = in.Base
	default:
		o.FeeAsset = in.Quote
	}
	if o.TakeProfit, err = tpslOf(r.TakeProfit, r.TpTriggerBy); err != nil {
		return nil, err
	}
	if o.StopLoss, err = tpslOf(r.StopLoss, r.SlTriggerBy); err != nil {
		return nil, err
	}
	if o.CreatedTime, err = parseMs("createdTime", r.CreatedTime); err != nil {
		return nil, err
	}
	if o.UpdatedTime, err = parseMs("updatedTime", r.UpdatedTime); err != nil {
		return nil, err
	}
	if st == exchangev1.OrderStatus_ORDER_STATUS_REJECTED && r.RejectReason != "" && r.RejectReason != "EC_NoError" {
		o.RejectReason = r.RejectReason
	}
	return o, nil
}

// rawExec is a row of /v5/execution/list.
type rawExec struct {
	Symbol      string `json:"symbol"`
	OrderID     string `json:"orderId"`
	OrderLinkID string `json:"orderLinkId"`
	Side        string `json:"side"`
	ExecID      string `json:"execId"`
	ExecPrice   string `json:"execPrice"`
	ExecQty     string `json:"execQty"`
	ExecValue   string `json:"execValue"`
	ExecFee     string `json:"execFee"`
	FeeCurrency string `json:"feeCurrency"`
	ExecType    string `json:"execType"`
	ExecTime    string `json:"execTime"`
	IsMaker     bool   `json:"isMaker"`
	ExecPnl     string `json:"execPnl"`
}

// ParseExecutions reads an execution list answer.
func ParseExecutions(result json.RawMessage) ([]rawExec, string, error) {
	p, err := parseList[rawExec]("executions", result)
	return p.List, p.NextPageCursor, err
}

func fillProto(r rawExec, in *Instrument) (*exchangev1.Fill, error) {
	side := sideOf(r.Side)
	if r.ExecID == "" || side == exchangev1.Side_SIDE_UNSPECIFIED {
		return nil, fmt.Errorf("%w: execution without execId or side", errMalformed)
	}
	f := &exchangev1.Fill{TradeId: r.ExecID, OrderId: r.OrderID, ClientOrderId: r.OrderLinkID, Symbol: in.Symbol,
		MarketType: in.MarketType, Side: side, Maker: r.IsMaker, FeeAsset: r.FeeCurrency}
	var err error
	if f.Price, err = canonStr("execPrice", r.ExecPrice); err != nil {
		return nil, err
	}
	if f.Qty, err = canonStr("execQty", r.ExecQty); err != nil {
		return nil, err
	}
	if f.QuoteQty, err = canonStr("execValue", r.ExecValue); err != nil {
		return nil, err
	}
	if f.Fee, err = canonStr("execFee", r.ExecFee); err != nil {
		return nil, err
	}
	if pnl, ok, err := parseDec("execPnl", r.ExecPnl); err != nil {
		return nil, err
	} else if ok && in.Category == catLinear {
		f.RealizedPnl = canon(pnl)
	}
	if f.FeeAsset == "" {
		switch {
		case in.Category == catLinear:
			f.FeeAsset = in.Settle
		case side == exchangev1.Side_SIDE_BUY:
			f.FeeAsset = in.Base
		default:
			f.FeeAsset = in.Quote
		}
	}
	if f.Time, err = parseMs("execTime", r.ExecTime); err != nil {
		return nil, err
	}
	return f, nil
}

// rawPosition is a row of /v5/position/list.
type rawPosition struct {
	PositionIdx    int    `json:"positionIdx"`
	Symbol         string `json:"symbol"`
	Side           string `json:"side"`
	Size           string `json:"size"`
	AvgPrice       string `json:"avgPrice"`
	PositionValue  string `json:"positionValue"`
	TradeMode      int    `json:"tradeMode"`
	Leverage       string `json:"leverage"`
	MarkPrice      string `json:"markPrice"`
	LiqPrice       string `json:"liqPrice"`
	PositionIM     string `json:"positionIM"`
	PositionMM     string `json:"positionMM"`
	UnrealisedPnl  string `json:"unrealisedPnl"`
	CumRealisedPnl string `json:"cumRealisedPnl"`
	TakeProfit     string `json:"takeProfit"`
	StopLoss       string `json:"stopLoss"`
	UpdatedTime    string `json:"updatedTime"`
}

// ParsePositions reads a position list answer.
func ParsePositions(result json.RawMessage) ([]rawPosition, string, error) {
	p, err := parseList[rawPosition]("positions", result)
	return p.List, p.NextPageCursor, err
}

func marginModeOf(tradeMode int) exchangev1.MarginMode {
	if tradeMode == 1 {
		return exchangev1.MarginMode_MARGIN_MODE_ISOLATED
	}
	return exchangev1.MarginMode_MARGIN_MODE_CROSS
}

// positionProto converts an open position (size > 0); the quantity is signed in one-way mode (a Sell is short).
func positionProto(r rawPosition) (*exchangev1.Position, error) {
	size, err := mustDec("size", r.Size)
	if err != nil {
		return nil, err
	}
	qty := size
	if r.PositionIdx == 0 && r.Side == "Sell" {
		qty = size.Neg()
	}
	p := &exchangev1.Position{Symbol: r.Symbol, PositionSide: positionSideOf(r.PositionIdx, true), Qty: canon(qty),
		Leverage: r.Leverage, MarginMode: marginModeOf(r.TradeMode)}
	fields := []struct {
		dst  *string
		name string
		src  string
	}{{&p.EntryPrice, "avgPrice", r.AvgPrice}, {&p.MarkPrice, "markPrice", r.MarkPrice}, {&p.LiquidationPrice, "liqPrice", r.LiqPrice},
		{&p.UnrealizedPnl, "unrealisedPnl", r.UnrealisedPnl}, {&p.RealizedPnl, "cumRealisedPnl", r.CumRealisedPnl},
		{&p.Margin, "positionIM", r.PositionIM}, {&p.MaintenanceMargin, "positionMM", r.PositionMM}, {&p.Notional, "positionValue", r.PositionValue}}
	for _, f := range fields {
		d, ok, err := parseDec(f.name, f.src)
		if err != nil {
			return nil, err
		}
		if ok {
			*f.dst = canon(d)
		}
	}
	if _, err := decimal.NewFromString(r.Leverage); err != nil {
		return nil, fmt.Errorf("%w: position leverage %q", errMalformed, r.Leverage)
	}
	if p.TakeProfit, err = tpslOf(r.TakeProfit, ""); err != nil {
		return nil, err
	}
	if p.StopLoss, err = tpslOf(r.StopLoss, ""); err != nil {
		return nil, err
	}
	if p.UpdatedTime, err = parseMs("updatedTime", r.UpdatedTime); err != nil {
		return nil, err
	}
	return p, nil
}
