package okx

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// rawOrder is an order row of /trade/order, orders-pending, orders-history and the orders channel.
type rawOrder struct {
	InstType        string `json:"instType"`
	InstID          string `json:"instId"`
	OrdID           string `json:"ordId"`
	ClOrdID         string `json:"clOrdId"`
	Px              string `json:"px"`
	Sz              string `json:"sz"`
	OrdType         string `json:"ordType"`
	Side            string `json:"side"`
	PosSide         string `json:"posSide"`
	TdMode          string `json:"tdMode"`
	TgtCcy          string `json:"tgtCcy"`
	AccFillSz       string `json:"accFillSz"`
	AvgPx           string `json:"avgPx"`
	State           string `json:"state"`
	Fee             string `json:"fee"`
	FeeCcy          string `json:"feeCcy"`
	ReduceOnly      string `json:"reduceOnly"`
	AlgoID          string `json:"algoId"`
	TpTriggerPx     string `json:"tpTriggerPx"`
	TpTriggerPxType string `json:"tpTriggerPxType"`
	TpOrdPx         string `json:"tpOrdPx"`
	SlTriggerPx     string `json:"slTriggerPx"`
	SlTriggerPxType string `json:"slTriggerPxType"`
	SlOrdPx         string `json:"slOrdPx"`
	CancelSource    string `json:"cancelSource"`
	CTime           string `json:"cTime"`
	UTime           string `json:"uTime"`
	// Fill fields of the orders channel.
	TradeID    string `json:"tradeId"`
	FillPx     string `json:"fillPx"`
	FillSz     string `json:"fillSz"`
	FillTime   string `json:"fillTime"`
	FillFee    string `json:"fillFee"`
	FillFeeCcy string `json:"fillFeeCcy"`
	FillPnl    string `json:"fillPnl"`
	ExecType   string `json:"execType"`
}

// ParseOrders decodes order rows.
func ParseOrders(data json.RawMessage) ([]rawOrder, error) { return decodeList[rawOrder](data) }

// sizeConv converts OKX sizes of one instrument to base units.
type sizeConv func(decimal.Decimal) decimal.Decimal

// orderProto converts an order row; conv turns OKX sizes into base units.
func orderProto(r rawOrder, conv sizeConv) (*exchangev1.Order, error) {
	var errs []error
	dec := func(f, s string) (decimal.Decimal, bool) {
		d, ok, err := parseDec(f, s)
		if err != nil {
			errs = append(errs, err)
		}
		return d, ok
	}
	px, okPx := dec("px", r.Px)
	sz, _ := dec("sz", r.Sz)
	filled, _ := dec("accFillSz", r.AccFillSz)
	avg, okAvg := dec("avgPx", r.AvgPx)
	fee, okFee := dec("fee", r.Fee)
	ct, err1 := parseMs("cTime", r.CTime)
	ut, err2 := parseMs("uTime", r.UTime)
	errs = append(errs, err1, err2)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if r.OrdID == "" || r.InstID == "" {
		return nil, fmt.Errorf("%w: order without ordId or instId", errMalformed)
	}
	typ, tif := orderTypeOf(r.OrdType)
	mt := marketTypeOf(r.InstType)
	if mt == exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED {
		mt = marketTypeOfSymbol(r.InstID)
	}
	qty := conv(sz)
	if mt == exchangev1.MarketType_MARKET_TYPE_SPOT && r.TgtCcy == "quote_ccy" && okAvg && avg.IsPositive() {
		// A spot market buy sized in quote currency: report the base amount it bought.
		qty = filled
	}
	o := &exchangev1.Order{OrderId: r.OrdID, ClientOrderId: r.ClOrdID, Symbol: r.InstID, MarketType: mt,
		Side: sideOf(r.Side), PositionSide: posSideOf(r.PosSide), Type: typ, TimeInForce: tif,
		Status: orderStatusOf(r.State, filled.IsPositive()), Qty: canon(qty), FilledQty: canon(conv(filled)),
		ReduceOnly: r.ReduceOnly == "true", FeeAsset: r.FeeCcy, CreatedTime: ct, UpdatedTime: ut, AlgoId: r.AlgoID}
	if o.Status == exchangev1.OrderStatus_ORDER_STATUS_CANCELLED && r.CancelSource != "" && !filled.IsPositive() && r.OrdType == "post_only" {
		o.RejectReason = "cancel source " + r.CancelSource
	}
	if okPx && px.IsPositive() {
		o.Price = canon(px)
	}
	if okAvg && avg.IsPositive() {
		o.AvgPrice = canon(avg)
		o.FilledQuote = canon(conv(filled).Mul(avg))
	}
	if okFee {
		o.Fee = canon(fee.Neg()) // OKX reports fees as negative amounts
	}
	if r.TpTriggerPx != "" {
		o.TakeProfit = &exchangev1.TpSl{TriggerPrice: mustCanon(r.TpTriggerPx), TriggerPriceType: triggerTypeOf(r.TpTriggerPxType), Price: limitPx(r.TpOrdPx)}
	}
	if r.SlTriggerPx != "" {
		o.StopLoss = &exchangev1.TpSl{TriggerPrice: mustCanon(r.SlTriggerPx), TriggerPriceType: triggerTypeOf(r.SlTriggerPxType), Price: limitPx(r.SlOrdPx)}
	}
	return o, nil
}

// fillOf is the fill carried by an orders-channel row: nil when the row carries none, an error when it carries
// one whose price, size, fee or time cannot be read (never a fill with a made-up zero).
func fillOf(r rawOrder, conv sizeConv) (*exchangev1.Fill, error) {
	sz, ok, err := parseDec("fillSz", r.FillSz)
	if err != nil {
		return nil, err
	}
	if !ok || sz.IsZero() {
		return nil, nil
	}
	if r.TradeID == "" || !sz.IsPositive() {
		return nil, fmt.Errorf("%w: fill of order %s without tradeId or with fillSz %q", errMalformed, r.OrdID, r.FillSz)
	}
	px, fee, ts, err := fillFields(r.FillPx, r.FillFee, "fillFee", r.FillTime, "fillTime")
	if err != nil {
		return nil, err
	}
	q := conv(sz)
	f := &exchangev1.Fill{TradeId: r.TradeID, OrderId: r.OrdID, ClientOrderId: r.ClOrdID, Symbol: r.InstID,
		MarketType: marketTypeOfSymbol(r.InstID), Side: sideOf(r.Side), PositionSide: posSideOf(r.PosSide),
		Price: canon(px), Qty: canon(q), QuoteQty: canon(q.Mul(px)), Fee: canon(fee.Neg()), FeeAsset: r.FillFeeCcy,
		Maker: r.ExecType == "M", Time: ts}
	pnl, ok, err := parseDec("fillPnl", r.FillPnl)
	if err != nil {
		return nil, err
	}
	if ok {
		f.RealizedPnl = canon(pnl)
	}
	return f, nil
}

// fillFields reads a fill's price (positive), fee and time; each must be present and well formed.
func fillFields(pxs, fees, feeName, tss, tsName string) (px, fee decimal.Decimal, ts int64, err error) {
	px, okPx, err1 := parseDec("fillPx", pxs)
	fee, okFee, err2 := parseDec(feeName, fees)
	ts, err3 := parseMs(tsName, tss)
	if err := errors.Join(err1, err2, err3); err != nil {
		return px, fee, 0, err
	}
	switch {
	case !okPx || !px.IsPositive():
		return px, fee, 0, fmt.Errorf("%w: fill price %q is not a positive price", errMalformed, pxs)
	case !okFee:
		return px, fee, 0, fmt.Errorf("%w: fill without %s", errMalformed, feeName)
	case ts <= 0:
		return px, fee, 0, fmt.Errorf("%w: fill without %s", errMalformed, tsName)
	}
	return px, fee, ts, nil
}

func mustCanon(s string) string {
	v, err := canonStr("price", s)
	if err != nil {
		return ""
	}
	return v
}

// limitPx: OKX's "-1" order price means market on trigger (the contract's empty price).
func limitPx(s string) string {
	if s == "-1" || s == "" {
		return ""
	}
	return mustCanon(s)
}

// rawFill is a row of /trade/fills.
type rawFill struct {
	InstType string `json:"instType"`
	InstID   string `json:"instId"`
	TradeID  string `json:"tradeId"`
	OrdID    string `json:"ordId"`
	ClOrdID  string `json:"clOrdId"`
	BillID   string `json:"billId"`
	FillPx   string `json:"fillPx"`
	FillSz   string `json:"fillSz"`
	Side     string `json:"side"`
	PosSide  string `json:"posSide"`
	ExecType string `json:"execType"`
	FeeCcy   string `json:"feeCcy"`
	Fee      string `json:"fee"`
	FillPnl  string `json:"fillPnl"`
	Ts       string `json:"ts"`
}

func fillProto(r rawFill, conv sizeConv) (*exchangev1.Fill, error) {
	sz, ok, err := parseDec("fillSz", r.FillSz)
	if err != nil {
		return nil, err
	}
	if !ok || !sz.IsPositive() || r.TradeID == "" {
		return nil, fmt.Errorf("%w: fill without tradeId or a positive fillSz", errMalformed)
	}
	px, fee, ts, err := fillFields(r.FillPx, r.Fee, "fee", r.Ts, "ts")
	if err != nil {
		return nil, err
	}
	q := conv(sz)
	f := &exchangev1.Fill{TradeId: r.TradeID, OrderId: r.OrdID, ClientOrderId: r.ClOrdID, Symbol: r.InstID,
		MarketType: marketTypeOfSymbol(r.InstID), Side: sideOf(r.Side), PositionSide: posSideOf(r.PosSide),
		Price: canon(px), Qty: canon(q), QuoteQty: canon(q.Mul(px)), Fee: canon(fee.Neg()), FeeAsset: r.FeeCcy,
		Maker: r.ExecType == "M", Time: ts}
	pnl, ok, err := parseDec("fillPnl", r.FillPnl)
	if err != nil {
		return nil, err
	}
	if ok {
		f.RealizedPnl = canon(pnl)
	}
	return f, nil
}

// rawAlgo is a row of the algo order endpoints.
type rawAlgo struct {
	InstType        string `json:"instType"`
	InstID          string `json:"instId"`
	AlgoID          string `json:"algoId"`
	AlgoClOrdID     string `json:"algoClOrdId"`
	OrdType         string `json:"ordType"`
	Side            string `json:"side"`
	PosSide         string `json:"posSide"`
	Sz              string `json:"sz"`
	State           string `json:"state"`
	TpTriggerPx     string `json:"tpTriggerPx"`
	TpTriggerPxType string `json:"tpTriggerPxType"`
	TpOrdPx         string `json:"tpOrdPx"`
	SlTriggerPx     string `json:"slTriggerPx"`
	SlTriggerPxType string `json:"slTriggerPxType"`
	SlOrdPx         string `json:"slOrdPx"`
	TriggerPx       string `json:"triggerPx"`
	TriggerPxType   string `json:"triggerPxType"`
	OrdPx           string `json:"ordPx"`
	ReduceOnly      string `json:"reduceOnly"`
	CloseFraction   string `json:"closeFraction"`
	OrdID           string `json:"ordId"`
	CTime           string `json:"cTime"`
	UTime           string `json:"uTime"`
}

func algoProto(r rawAlgo, conv sizeConv) (*exchangev1.AlgoOrder, error) {
	sz, _, err1 := parseDec("sz", r.Sz)
	ct, err2 := parseMs("cTime", r.CTime)
	ut, err3 := parseMs("uTime", r.UTime)
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, err
	}
	if r.AlgoID == "" {
		return nil, fmt.Errorf("%w: algo order without algoId", errMalformed)
	}
	a := &exchangev1.AlgoOrder{AlgoId: r.AlgoID, ClientAlgoId: r.AlgoClOrdID, Symbol: r.InstID, MarketType: marketTypeOfSymbol(r.InstID),
		Side: sideOf(r.Side), PositionSide: posSideOf(r.PosSide), Status: algoStatusOf(r.State), Qty: canon(conv(sz)),
		ReduceOnly: r.ReduceOnly == "true", ClosePosition: r.CloseFraction == "1", OrderId: r.OrdID, CreatedTime: ct, UpdatedTime: ut}
	trig, trigType, ordPx := r.TriggerPx, r.TriggerPxType, r.OrdPx
	stop := true
	switch {
	case r.SlTriggerPx != "":
		trig, trigType, ordPx = r.SlTriggerPx, r.SlTriggerPxType, r.SlOrdPx
	case r.TpTriggerPx != "":
		trig, trigType, ordPx, stop = r.TpTriggerPx, r.TpTriggerPxType, r.TpOrdPx, false
	}
	a.TriggerPrice, a.TriggerPriceType, a.Price = mustCanon(trig), triggerTypeOf(trigType), limitPx(ordPx)
	switch {
	case stop && a.Price == "":
		a.Type = exchangev1.OrderType_ORDER_TYPE_STOP_MARKET
	case stop:
		a.Type = exchangev1.OrderType_ORDER_TYPE_STOP_LIMIT
	case a.Price == "":
		a.Type = exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_MARKET
	default:
		a.Type = exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_LIMIT
	}
	return a, nil
}

// rawPosition is a row of /account/positions and the positions channel.
type rawPosition struct {
	InstType    string `json:"instType"`
	InstID      string `json:"instId"`
	MgnMode     string `json:"mgnMode"`
	PosSide     string `json:"posSide"`
	Pos         string `json:"pos"`
	AvgPx       string `json:"avgPx"`
	BePx        string `json:"bePx"`
	MarkPx      string `json:"markPx"`
	LiqPx       string `json:"liqPx"`
	MgnRatio    string `json:"mgnRatio"`
	Upl         string `json:"upl"`
	RealizedPnl string `json:"realizedPnl"`
	Lever       string `json:"lever"`
	Margin      string `json:"margin"`
	Imr         string `json:"imr"`
	Mmr         string `json:"mmr"`
	NotionalUsd string `json:"notionalUsd"`
	UTime       string `json:"uTime"`
}

// positionProto converts a position row; NET positions keep their sign.
func positionProto(r rawPosition, conv sizeConv) (*exchangev1.Position, error) {
	pos, _, err1 := parseDec("pos", r.Pos)
	ut, err2 := parseMs("uTime", r.UTime)
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	ps := posSideOf(r.PosSide)
	if ps == exchangev1.PositionSide_POSITION_SIDE_UNSPECIFIED {
		ps = exchangev1.PositionSide_POSITION_SIDE_NET
	}
	q := conv(pos)
	if ps != exchangev1.PositionSide_POSITION_SIDE_NET {
		q = q.Abs()
	}
	p := &exchangev1.Position{Symbol: r.InstID, PositionSide: ps, Qty: canon(q), MarginMode: marginModeOf(r.MgnMode), UpdatedTime: ut}
	var errs []error
	set := func(dst *string, f, s string) {
		v, err := canonStr(f, s)
		errs = append(errs, err)
		*dst = v
	}
	set(&p.EntryPrice, "avgPx", r.AvgPx)
	set(&p.MarkPrice, "markPx", r.MarkPx)
	set(&p.LiquidationPrice, "liqPx", r.LiqPx)
	set(&p.UnrealizedPnl, "upl", r.Upl)
	set(&p.RealizedPnl, "realizedPnl", r.RealizedPnl)
	set(&p.Leverage, "lever", r.Lever)
	set(&p.MaintenanceMargin, "mmr", r.Mmr)
	set(&p.Notional, "notionalUsd", r.NotionalUsd)
	if r.MgnMode == "isolated" {
		set(&p.Margin, "margin", r.Margin)
	} else {
		set(&p.Margin, "imr", r.Imr)
	}
	set(&p.BreakEvenPrice, "bePx", r.BePx)
	ratio, err := marginRatioOf(r.MgnRatio)
	errs = append(errs, err)
	p.MarginRatio = ratio
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if p.BreakEvenPrice == "0" {
		p.BreakEvenPrice = ""
	}
	return p, nil
}

// marginRatioScale is the decimals of a margin ratio.
const marginRatioScale = 8

// marginRatioOf turns OKX's mgnRatio (margin balance over maintenance margin; liquidation at 1, shown as 100%) into
// the contract's margin ratio, maintenance margin over margin balance: 1 / mgnRatio. Empty (no maintenance margin)
// stays empty; zero or below is "1" (nothing left above the requirement).
func marginRatioOf(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return "", fmt.Errorf("mgnRatio: bad decimal %q", s)
	}
	if !d.IsPositive() {
		return "1", nil
	}
	return decimal.NewFromInt(1).DivRound(d, marginRatioScale).String(), nil
}

// rawBill is a row of GET /api/v5/account/bills.
type rawBill struct {
	InstType string `json:"instType"`
	InstID   string `json:"instId"`
	BillID   string `json:"billId"`
	Type     string `json:"type"`
	SubType  string `json:"subType"`
	Ccy      string `json:"ccy"`
	BalChg   string `json:"balChg"`
	Sz       string `json:"sz"`
	Px       string `json:"px"`
	Ts       string `json:"ts"`
}

// billTypeFunding is the bill type of funding fees (sub-types 173 expense, 174 income).
const billTypeFunding = "8"

// ParseBills reads the data of GET /api/v5/account/bills.
func ParseBills(data []byte) ([]rawBill, error) { return decodeList[rawBill](data) }

// fundingPaymentProto turns a funding fee bill into a FundingPayment: balChg is the signed amount, sz the position
// size in contracts (conv turns it into base units), px the funding rate.
func fundingPaymentProto(r rawBill, conv sizeConv) (*exchangev1.FundingPayment, error) {
	if r.Type != billTypeFunding || r.BillID == "" || r.InstID == "" || r.Ccy == "" {
		return nil, fmt.Errorf("%w: funding bill without type 8, billId, instId or ccy", errMalformed)
	}
	amt, ok, err := parseDec("balChg", r.BalChg)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: funding bill %s without balChg", errMalformed, r.BillID)
	}
	ts, err := parseMs("ts", r.Ts)
	if err != nil {
		return nil, err
	}
	if ts <= 0 {
		return nil, fmt.Errorf("%w: funding bill %s without ts", errMalformed, r.BillID)
	}
	p := &exchangev1.FundingPayment{Id: r.BillID, Symbol: r.InstID, Amount: canon(amt), Asset: r.Ccy, Time: ts}
	if p.FundingRate, err = canonStr("px", r.Px); err != nil {
		return nil, err
	}
	sz, ok, err := parseDec("sz", r.Sz)
	if err != nil {
		return nil, err
	}
	if ok && !sz.IsZero() {
		p.PositionSize = canon(conv(sz.Abs()))
	}
	return p, nil
}
