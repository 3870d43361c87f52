package binance

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// User data stream events, decoded with case-exact keys (see decodeExact).

type wireExecutionReport struct {
	E         string   `json:"e"`
	EventTime flexInt  `json:"E"`
	Symbol    string   `json:"s"`
	Client    string   `json:"c"`
	Side      string   `json:"S"`
	Type      string   `json:"o"`
	TIF       string   `json:"f"`
	Qty       flexStr  `json:"q"`
	Price     flexStr  `json:"p"`
	StopPrice flexStr  `json:"P"`
	OrigCl    string   `json:"C"`
	ExecType  string   `json:"x"`
	Status    string   `json:"X"`
	Reject    string   `json:"r"`
	OrderID   *flexInt `json:"i"`
	LastQty   flexStr  `json:"l"`
	CumQty    flexStr  `json:"z"`
	LastPrice flexStr  `json:"L"`
	Fee       flexStr  `json:"n"`
	FeeAsset  *string  `json:"N"`
	TxTime    flexInt  `json:"T"`
	TradeID   flexInt  `json:"t"`
	Ignore1   flexInt  `json:"I"`
	Working   bool     `json:"w"`
	Maker     bool     `json:"m"`
	Ignore2   bool     `json:"M"`
	Created   flexInt  `json:"O"`
	CumQuote  flexStr  `json:"Z"`
	LastQuote flexStr  `json:"Y"`
	QuoteQty  flexStr  `json:"Q"`
	WorkTime  flexInt  `json:"W"`
	STP       string   `json:"V"`
}

type wireFuturesOrderUpdate struct {
	Symbol      string   `json:"s"`
	Client      string   `json:"c"`
	Side        string   `json:"S"`
	Type        string   `json:"o"`
	TIF         string   `json:"f"`
	Qty         flexStr  `json:"q"`
	Price       flexStr  `json:"p"`
	AvgPrice    flexStr  `json:"ap"`
	StopPrice   flexStr  `json:"sp"`
	ExecType    string   `json:"x"`
	Status      string   `json:"X"`
	OrderID     *flexInt `json:"i"`
	LastQty     flexStr  `json:"l"`
	CumQty      flexStr  `json:"z"`
	LastPrice   flexStr  `json:"L"`
	FeeAsset    string   `json:"N"`
	Fee         flexStr  `json:"n"`
	TxTime      flexInt  `json:"T"`
	TradeID     flexInt  `json:"t"`
	Maker       bool     `json:"m"`
	ReduceOnly  bool     `json:"R"`
	WorkingType string   `json:"wt"`
	OrigType    string   `json:"ot"`
	PosSide     string   `json:"ps"`
	ClosePos    bool     `json:"cp"`
	RealizedPnl flexStr  `json:"rp"`
}

type wireAccountUpdate struct {
	Reason    string `json:"m"`
	Positions []struct {
		Symbol      string  `json:"s"`
		Amount      flexStr `json:"pa"`
		Entry       flexStr `json:"ep"`
		BreakEven   flexStr `json:"bep"`
		Accumulated flexStr `json:"cr"`
		Unrealized  flexStr `json:"up"`
		MarginType  string  `json:"mt"`
		Isolated    flexStr `json:"iw"`
		Side        string  `json:"ps"`
	} `json:"P"`
}

// UserEvent is what one user data message says: account events to forward, or that the listen key expired.
type UserEvent struct {
	Events     []*exchangev1.AccountEvent
	KeyExpired bool
}

func orderEv(t int64, o *exchangev1.Order) *exchangev1.AccountEvent {
	return &exchangev1.AccountEvent{Time: t, Event: &exchangev1.AccountEvent_Order{Order: o}}
}

func fillEv(t int64, f *exchangev1.Fill) *exchangev1.AccountEvent {
	return &exchangev1.AccountEvent{Time: t, Event: &exchangev1.AccountEvent_Fill{Fill: f}}
}

// ParseUserEvent parses one user data stream message of a market. Unknown event types give no events and no error
// (Binance adds types; balanceUpdate is followed by outboundAccountPosition, which carries the balances).
func ParseUserEvent(m Market, b []byte) (*UserEvent, error) {
	var head struct {
		E         string  `json:"e"`
		EventTime flexInt `json:"E"`
	}
	if err := decodeExact(b, &head, "user event"); err != nil {
		return nil, err
	}
	switch head.E {
	case "listenKeyExpired":
		return &UserEvent{KeyExpired: true}, nil
	case "executionReport":
		return parseExecutionReport(b)
	case "outboundAccountPosition":
		return parseAccountPosition(b)
	case "ORDER_TRADE_UPDATE":
		return parseOrderTradeUpdate(b)
	case "ACCOUNT_UPDATE":
		return parseAccountUpdate(b)
	case "":
		return nil, errors.New("user event: no event type")
	}
	return &UserEvent{}, nil
}

func parseExecutionReport(b []byte) (*UserEvent, error) {
	var w wireExecutionReport
	if err := decodeExact(b, &w, "executionReport"); err != nil {
		return nil, err
	}
	if w.OrderID == nil || w.Symbol == "" {
		return nil, errors.New("executionReport: no order id or symbol")
	}
	client := w.Client
	if w.OrigCl != "" { // a cancel reports the cancel request's id in c and the order's in C
		client = w.OrigCl
	}
	wo := wireOrder{Symbol: w.Symbol, OrderID: w.OrderID, ClientOrderID: client, Price: w.Price, OrigQty: w.Qty,
		ExecutedQty: w.CumQty, CummulativeQuoteQty: w.CumQuote, Status: w.Status, TimeInForce: w.TIF, Type: w.Type,
		Side: w.Side, StopPrice: w.StopPrice, Time: w.Created, UpdateTime: w.TxTime}
	o, err := wo.toOrder(Spot)
	if err != nil {
		return nil, fmt.Errorf("executionReport: %w", err)
	}
	if w.Reject != "" && w.Reject != "NONE" {
		o.RejectReason = w.Reject
	}
	ev := &UserEvent{Events: []*exchangev1.AccountEvent{orderEv(int64(w.EventTime), o)}}
	if w.ExecType == "TRADE" {
		var d decs
		f := &exchangev1.Fill{TradeId: strconv.FormatInt(int64(w.TradeID), 10), OrderId: o.OrderId, ClientOrderId: client,
			Symbol: w.Symbol, MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT, Side: o.Side, Price: d.c("L", w.LastPrice),
			Qty: d.c("l", w.LastQty), QuoteQty: d.c("Y", w.LastQuote), Fee: d.c("n", w.Fee), Maker: w.Maker, Time: int64(w.TxTime)}
		if w.FeeAsset != nil {
			f.FeeAsset = *w.FeeAsset
		}
		if d.err != nil {
			return nil, fmt.Errorf("executionReport fill: %w", d.err)
		}
		if f.QuoteQty == "" {
			f.QuoteQty = mulDec(f.Price, f.Qty)
		}
		ev.Events = append(ev.Events, fillEv(int64(w.EventTime), f))
	}
	return ev, nil
}

func mulDec(a, b string) string {
	x, y, err := decPair(a, b)
	if err != nil {
		return ""
	}
	return x.Mul(y).String()
}

func parseAccountPosition(b []byte) (*UserEvent, error) {
	var w struct {
		EventTime flexInt `json:"E"`
		Balances  []struct {
			Asset  string  `json:"a"`
			Free   flexStr `json:"f"`
			Locked flexStr `json:"l"`
		} `json:"B"`
	}
	if err := decodeExact(b, &w, "outboundAccountPosition"); err != nil {
		return nil, err
	}
	ev := &UserEvent{}
	for i, r := range w.Balances {
		free, lockd, err := decPair(string(r.Free), string(r.Locked))
		if err != nil || r.Asset == "" {
			return nil, fmt.Errorf("outboundAccountPosition: bad balance %d", i)
		}
		ev.Events = append(ev.Events, &exchangev1.AccountEvent{Time: int64(w.EventTime), Event: &exchangev1.AccountEvent_Balance{
			Balance: &exchangev1.Balance{Asset: r.Asset, Wallet: exchangev1.WalletType_WALLET_TYPE_TRADING,
				Total: free.Add(lockd).String(), Available: free.String(), Locked: lockd.String()}}})
	}
	return ev, nil
}

func parseOrderTradeUpdate(b []byte) (*UserEvent, error) {
	var w struct {
		EventTime flexInt                 `json:"E"`
		O         *wireFuturesOrderUpdate `json:"o"`
	}
	if err := decodeExact(b, &w, "ORDER_TRADE_UPDATE"); err != nil {
		return nil, err
	}
	u := w.O
	if u == nil || u.OrderID == nil || u.Symbol == "" {
		return nil, errors.New("ORDER_TRADE_UPDATE: no order")
	}
	t := int64(w.EventTime)
	wo := wireOrder{Symbol: u.Symbol, OrderID: u.OrderID, ClientOrderID: u.Client, Price: u.Price, AvgPrice: u.AvgPrice,
		OrigQty: u.Qty, ExecutedQty: u.CumQty, Status: u.Status, TimeInForce: u.TIF, Type: u.Type, OrigType: u.OrigType,
		Side: u.Side, PositionSide: u.PosSide, StopPrice: u.StopPrice, WorkingType: u.WorkingType, ReduceOnly: u.ReduceOnly,
		ClosePosition: u.ClosePos, UpdateTime: u.TxTime}
	ev := &UserEvent{}
	if isConditional(u.Type) {
		// Still waiting for its trigger (or cancelled/expired while waiting): an algo order.
		a, err := wo.toAlgo()
		if err != nil {
			return nil, fmt.Errorf("ORDER_TRADE_UPDATE: %w", err)
		}
		ev.Events = append(ev.Events, &exchangev1.AccountEvent{Time: t, Event: &exchangev1.AccountEvent_AlgoOrder{AlgoOrder: a}})
		return ev, nil
	}
	o, err := wo.toOrder(Futures)
	if err != nil {
		return nil, fmt.Errorf("ORDER_TRADE_UPDATE: %w", err)
	}
	if z, ap, err := decPair(o.FilledQty, nonEmpty(o.AvgPrice, "0")); err == nil && z.IsPositive() {
		o.FilledQuote = z.Mul(ap).String()
	}
	if isConditional(u.OrigType) {
		// Created by a triggered stop/take-profit: Binance keeps the id; report the trigger once, on its NEW.
		o.AlgoId = o.OrderId
		if u.ExecType == "NEW" {
			if a, err := wo.toAlgo(); err == nil {
				a.Type = orderTypeFromWire(u.OrigType)
				a.Status = exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_TRIGGERED
				a.OrderId = o.OrderId
				ev.Events = append(ev.Events, &exchangev1.AccountEvent{Time: t, Event: &exchangev1.AccountEvent_AlgoOrder{AlgoOrder: a}})
			}
		}
	}
	ev.Events = append(ev.Events, orderEv(t, o))
	if u.ExecType == "TRADE" {
		var d decs
		f := &exchangev1.Fill{TradeId: strconv.FormatInt(int64(u.TradeID), 10), OrderId: o.OrderId, ClientOrderId: u.Client,
			Symbol: u.Symbol, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Side: o.Side, PositionSide: o.PositionSide,
			Price: d.c("L", u.LastPrice), Qty: d.c("l", u.LastQty), Fee: d.c("n", u.Fee), FeeAsset: u.FeeAsset,
			RealizedPnl: d.c("rp", u.RealizedPnl), Maker: u.Maker, Time: int64(u.TxTime)}
		if d.err != nil {
			return nil, fmt.Errorf("ORDER_TRADE_UPDATE fill: %w", d.err)
		}
		f.QuoteQty = mulDec(f.Price, f.Qty)
		ev.Events = append(ev.Events, fillEv(t, f))
	}
	return ev, nil
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// parseAccountUpdate forwards the positions of an ACCOUNT_UPDATE. Its balances (the futures wallet) are not
// forwarded: GetBalances reports the trading wallet from the spot account, and the two must not disagree.
func parseAccountUpdate(b []byte) (*UserEvent, error) {
	var w struct {
		EventTime flexInt            `json:"E"`
		TxTime    flexInt            `json:"T"`
		A         *wireAccountUpdate `json:"a"`
	}
	if err := decodeExact(b, &w, "ACCOUNT_UPDATE"); err != nil {
		return nil, err
	}
	if w.A == nil {
		return nil, errors.New("ACCOUNT_UPDATE: no a")
	}
	ev := &UserEvent{}
	for i, p := range w.A.Positions {
		var d decs
		pos := &exchangev1.Position{Symbol: p.Symbol, PositionSide: positionSideFromWire(p.Side), Qty: d.c("pa", p.Amount),
			EntryPrice: nonZero(d.c("ep", p.Entry)), UnrealizedPnl: d.c("up", p.Unrealized), RealizedPnl: d.c("cr", p.Accumulated),
			MarginMode: marginModeFromWire(p.MarginType), UpdatedTime: int64(w.TxTime),
			BreakEvenPrice: nonZero(d.c("bep", p.BreakEven))}
		if pos.MarginMode == exchangev1.MarginMode_MARGIN_MODE_ISOLATED {
			pos.Margin = d.c("iw", p.Isolated)
		}
		if d.err != nil || p.Symbol == "" || pos.Qty == "" {
			return nil, fmt.Errorf("ACCOUNT_UPDATE position %d: bad row (%v)", i, d.err)
		}
		if pos.PositionSide != exchangev1.PositionSide_POSITION_SIDE_NET {
			pos.Qty = decimal.RequireFromString(pos.Qty).Abs().String()
		}
		ev.Events = append(ev.Events, &exchangev1.AccountEvent{Time: int64(w.EventTime), Event: &exchangev1.AccountEvent_Position{Position: pos}})
	}
	return ev, nil
}
