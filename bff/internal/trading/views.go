package trading

import (
	"strings"
	"time"

	"github.com/exhub/exhub/bff/internal/store"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// API statuses of an order.
const (
	// StatusPending: exhub does not know the outcome yet (the call is under way or its answer was lost and is being
	// resolved). Never a failure.
	StatusPending         = "pending"
	StatusOpen            = "open"
	StatusPartiallyFilled = "partially_filled"
	StatusFilled          = "filled"
	StatusCancelled       = "cancelled"
	StatusRejected        = "rejected"
	StatusExpired         = "expired"
	// StatusNotPlaced: an answer was lost and the exchange, asked afterwards, never had the order.
	StatusNotPlaced = "not_placed"
	// Algo orders.
	StatusWaiting   = "waiting"
	StatusTriggered = "triggered"
	StatusFailed    = "failed"
)

// TpSl is a take-profit or stop-loss: a trigger price, what it compares with, and a limit price (empty: market).
type TpSl struct {
	TriggerPrice     string `json:"trigger_price" doc:"Trigger price (decimal string)"`
	TriggerPriceType string `json:"trigger_price_type,omitempty" enum:"LAST,MARK,INDEX" doc:"What the trigger compares with (default LAST)"`
	Price            string `json:"price,omitempty" doc:"Limit price once triggered; empty for a market order"`
}

// Order is an order as the API shows it: a journal entry, an order read from the exchange, or both.
type Order struct {
	ID              string    `json:"id,omitempty" doc:"Journal id (absent for an order placed outside exhub)"`
	Exchange        string    `json:"exchange"`
	MarketType      string    `json:"market_type" enum:"SPOT,SWAP"`
	Symbol          string    `json:"symbol"`
	Kind            string    `json:"kind,omitempty" enum:"order,close,algo" doc:"order, close (a position close) or algo (conditional)"`
	Side            string    `json:"side,omitempty" doc:"BUY or SELL (CLOSE for a position close not yet acknowledged)"`
	PositionSide    string    `json:"position_side,omitempty" doc:"LONG or SHORT in hedge mode, NET in one-way mode"`
	Type            string    `json:"type"`
	TimeInForce     string    `json:"time_in_force,omitempty"`
	Status          string    `json:"status" doc:"pending (outcome being confirmed: not a failure), open, partially_filled, filled, cancelled, rejected, expired, not_placed; algo orders: waiting, triggered, cancelled, failed"`
	Price           string    `json:"price,omitempty"`
	PriceMatch      string    `json:"price_match,omitempty" doc:"The exchange priced the order from its book: QUEUE (best price on its side), OPPONENT (best opposite price), or _5/_10/_20 levels deep"`
	Qty             string    `json:"qty,omitempty" doc:"Size in base units"`
	QuoteQty        string    `json:"quote_qty,omitempty"`
	FilledQty       string    `json:"filled_qty,omitempty"`
	AvgPrice        string    `json:"avg_price,omitempty"`
	ReduceOnly      bool      `json:"reduce_only,omitempty"`
	TriggerPrice    string    `json:"trigger_price,omitempty"`
	TakeProfit      *TpSl     `json:"take_profit,omitempty"`
	StopLoss        *TpSl     `json:"stop_loss,omitempty"`
	ClientOrderID   string    `json:"client_order_id,omitempty"`
	AttachedTo      string    `json:"attached_to,omitempty" doc:"The journal id of the entry whose take-profit or stop-loss exhub armed as this order once the entry filled"`
	ExchangeOrderID string    `json:"exchange_order_id,omitempty"`
	RejectCode      string    `json:"reject_code,omitempty" doc:"Why it was refused (the typed reason)"`
	ExchangeCode    string    `json:"exchange_code,omitempty" doc:"The exchange's own error code"`
	RejectMessage   string    `json:"reject_message,omitempty"`
	CreatedAt       time.Time `json:"created_at,omitzero"`
	UpdatedAt       time.Time `json:"updated_at,omitzero"`
}

func enumName[T ~int32](names map[int32]string, v T, prefix string) string {
	n, ok := names[int32(v)]
	if !ok || int32(v) == 0 {
		return ""
	}
	return strings.TrimPrefix(n, prefix)
}

func marketName(m exchangev1.MarketType) string {
	return enumName(exchangev1.MarketType_name, m, "MARKET_TYPE_")
}

func statusOfExchange(s string) string {
	switch s {
	case "NEW":
		return StatusOpen
	case "PARTIALLY_FILLED":
		return StatusPartiallyFilled
	case "FILLED":
		return StatusFilled
	case "CANCELLED":
		return StatusCancelled
	case "REJECTED":
		return StatusRejected
	case "EXPIRED":
		return StatusExpired
	case "WAITING":
		return StatusWaiting
	case "TRIGGERED":
		return StatusTriggered
	case "FAILED":
		return StatusFailed
	}
	return StatusPending
}

// StatusOf is the API status of a journal entry.
func StatusOf(o store.Order) string {
	switch o.State {
	case store.OrderSent, store.OrderUnknown:
		return StatusPending
	case store.OrderRejected:
		return StatusRejected
	case store.OrderNotPlaced:
		return StatusNotPlaced
	}
	return statusOfExchange(o.OrderStatus)
}

// View is the API shape of a journal entry.
func View(o store.Order) Order {
	v := Order{ID: o.ID, Exchange: o.Exchange, MarketType: o.MarketType, Symbol: o.Symbol, Kind: o.Kind, Side: o.Side,
		PositionSide: o.PositionSide, Type: o.Type, TimeInForce: o.TimeInForce, Status: StatusOf(o), Price: o.Price,
		Qty: o.Qty, QuoteQty: o.QuoteQty, FilledQty: o.FilledQty, AvgPrice: o.AvgPrice, ReduceOnly: o.ReduceOnly,
		TriggerPrice: o.TriggerPrice, TakeProfit: decodeTpSl(o.TakeProfit), StopLoss: decodeTpSl(o.StopLoss),
		ClientOrderID: o.ClientOrderID, ExchangeOrderID: o.ExchangeOrderID, RejectCode: o.RejectCode,
		ExchangeCode: o.ExchangeCode, RejectMessage: o.RejectMessage, CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt,
		PriceMatch: o.PriceMatch, AttachedTo: attachedTo(o)}
	return v
}

// viewOf is the API shape of an order read from the exchange.
func viewOf(exchange string, x *exchangev1.Order) Order {
	v := Order{Exchange: exchange, MarketType: marketName(x.GetMarketType()), Symbol: x.GetSymbol(), Kind: store.OrderKindOrder,
		Side:         enumName(exchangev1.Side_name, x.GetSide(), "SIDE_"),
		PositionSide: enumName(exchangev1.PositionSide_name, x.GetPositionSide(), "POSITION_SIDE_"),
		Type:         enumName(exchangev1.OrderType_name, x.GetType(), "ORDER_TYPE_"),
		TimeInForce:  enumName(exchangev1.TimeInForce_name, x.GetTimeInForce(), "TIME_IN_FORCE_"),
		Status:       statusOfExchange(enumName(exchangev1.OrderStatus_name, x.GetStatus(), "ORDER_STATUS_")),
		Price:        x.GetPrice(), Qty: x.GetQty(), FilledQty: x.GetFilledQty(), AvgPrice: x.GetAvgPrice(),
		ReduceOnly: x.GetReduceOnly(), ClientOrderID: x.GetClientOrderId(), ExchangeOrderID: x.GetOrderId(),
		RejectMessage: x.GetRejectReason(), TakeProfit: tpslView(x.GetTakeProfit()), StopLoss: tpslView(x.GetStopLoss())}
	if x.GetCreatedTime() > 0 {
		v.CreatedAt = time.UnixMilli(x.GetCreatedTime()).UTC()
	}
	if x.GetUpdatedTime() > 0 {
		v.UpdatedAt = time.UnixMilli(x.GetUpdatedTime()).UTC()
	}
	return v
}

func algoViewOf(exchange string, a *exchangev1.AlgoOrder) Order {
	v := Order{Exchange: exchange, MarketType: marketName(a.GetMarketType()), Symbol: a.GetSymbol(), Kind: store.OrderKindAlgo,
		Side:         enumName(exchangev1.Side_name, a.GetSide(), "SIDE_"),
		PositionSide: enumName(exchangev1.PositionSide_name, a.GetPositionSide(), "POSITION_SIDE_"),
		Type:         enumName(exchangev1.OrderType_name, a.GetType(), "ORDER_TYPE_"),
		Status:       statusOfExchange(enumName(exchangev1.AlgoOrderStatus_name, a.GetStatus(), "ALGO_ORDER_STATUS_")),
		Price:        a.GetPrice(), Qty: a.GetQty(), ReduceOnly: a.GetReduceOnly(), TriggerPrice: a.GetTriggerPrice(),
		ClientOrderID: a.GetClientAlgoId(), ExchangeOrderID: a.GetAlgoId()}
	if a.GetCreatedTime() > 0 {
		v.CreatedAt = time.UnixMilli(a.GetCreatedTime()).UTC()
	}
	if a.GetUpdatedTime() > 0 {
		v.UpdatedAt = time.UnixMilli(a.GetUpdatedTime()).UTC()
	}
	return v
}

func tpslView(t *exchangev1.TpSl) *TpSl {
	if t.GetTriggerPrice() == "" {
		return nil
	}
	return &TpSl{TriggerPrice: t.GetTriggerPrice(), Price: t.GetPrice(),
		TriggerPriceType: enumName(exchangev1.TriggerPriceType_name, t.GetTriggerPriceType(), "TRIGGER_PRICE_TYPE_")}
}

// outcomeOf is what the journal keeps of an order the exchange answered with.
func outcomeOf(x *exchangev1.Order) store.OrderOutcome {
	return store.OrderOutcome{ExchangeOrderID: x.GetOrderId(),
		OrderStatus: enumName(exchangev1.OrderStatus_name, x.GetStatus(), "ORDER_STATUS_"),
		FilledQty:   x.GetFilledQty(), AvgPrice: x.GetAvgPrice()}
}

func algoOutcomeOf(a *exchangev1.AlgoOrder) store.OrderOutcome {
	return store.OrderOutcome{ExchangeOrderID: a.GetAlgoId(),
		OrderStatus: enumName(exchangev1.AlgoOrderStatus_name, a.GetStatus(), "ALGO_ORDER_STATUS_")}
}

// Fill is one execution of the member's orders.
type Fill struct {
	TradeID       string    `json:"trade_id"`
	OrderID       string    `json:"order_id"`
	ClientOrderID string    `json:"client_order_id,omitempty"`
	Symbol        string    `json:"symbol"`
	MarketType    string    `json:"market_type"`
	Side          string    `json:"side"`
	PositionSide  string    `json:"position_side,omitempty"`
	Price         string    `json:"price"`
	Qty           string    `json:"qty"`
	QuoteQty      string    `json:"quote_qty,omitempty"`
	Fee           string    `json:"fee,omitempty"`
	FeeAsset      string    `json:"fee_asset,omitempty"`
	RealizedPnl   string    `json:"realized_pnl,omitempty"`
	Maker         bool      `json:"maker"`
	Time          time.Time `json:"time"`
}

func fillOf(f *exchangev1.Fill) Fill {
	return Fill{TradeID: f.GetTradeId(), OrderID: f.GetOrderId(), ClientOrderID: f.GetClientOrderId(), Symbol: f.GetSymbol(),
		MarketType: marketName(f.GetMarketType()), Side: enumName(exchangev1.Side_name, f.GetSide(), "SIDE_"),
		PositionSide: enumName(exchangev1.PositionSide_name, f.GetPositionSide(), "POSITION_SIDE_"),
		Price:        f.GetPrice(), Qty: f.GetQty(), QuoteQty: f.GetQuoteQty(), Fee: f.GetFee(), FeeAsset: f.GetFeeAsset(),
		RealizedPnl: f.GetRealizedPnl(), Maker: f.GetMaker(), Time: time.UnixMilli(f.GetTime()).UTC()}
}

// Position is one open position (SWAP).
type Position struct {
	Symbol            string    `json:"symbol"`
	PositionSide      string    `json:"position_side" doc:"NET (one-way mode: qty signed, negative is short), LONG or SHORT"`
	Qty               string    `json:"qty" doc:"Size in base units"`
	EntryPrice        string    `json:"entry_price,omitempty"`
	MarkPrice         string    `json:"mark_price,omitempty"`
	LiquidationPrice  string    `json:"liquidation_price,omitempty"`
	UnrealizedPnl     string    `json:"unrealized_pnl,omitempty"`
	RealizedPnl       string    `json:"realized_pnl,omitempty"`
	Leverage          string    `json:"leverage,omitempty"`
	MarginMode        string    `json:"margin_mode,omitempty"`
	Margin            string    `json:"margin,omitempty"`
	MaintenanceMargin string    `json:"maintenance_margin,omitempty"`
	Notional          string    `json:"notional,omitempty"`
	BreakEvenPrice    string    `json:"break_even_price,omitempty" doc:"The price at which closing the whole position nets zero after the fees of opening and closing it"`
	MarginRatio       string    `json:"margin_ratio,omitempty" doc:"Maintenance margin over margin balance as a fraction (0.0315 is 3.15%); liquidation at 1. Isolated: the position's own; cross: the account's cross margin ratio"`
	TakeProfit        *TpSl     `json:"take_profit,omitempty"`
	StopLoss          *TpSl     `json:"stop_loss,omitempty"`
	UpdatedAt         time.Time `json:"updated_at,omitzero"`
}

func positionOf(p *exchangev1.Position) Position {
	v := Position{Symbol: p.GetSymbol(),
		PositionSide: enumName(exchangev1.PositionSide_name, p.GetPositionSide(), "POSITION_SIDE_"),
		Qty:          p.GetQty(), EntryPrice: p.GetEntryPrice(), MarkPrice: p.GetMarkPrice(),
		LiquidationPrice: p.GetLiquidationPrice(), UnrealizedPnl: p.GetUnrealizedPnl(), RealizedPnl: p.GetRealizedPnl(),
		Leverage: p.GetLeverage(), MarginMode: enumName(exchangev1.MarginMode_name, p.GetMarginMode(), "MARGIN_MODE_"),
		Margin: p.GetMargin(), MaintenanceMargin: p.GetMaintenanceMargin(), Notional: p.GetNotional(),
		BreakEvenPrice: p.GetBreakEvenPrice(), MarginRatio: p.GetMarginRatio(),
		TakeProfit: tpslView(p.GetTakeProfit()), StopLoss: tpslView(p.GetStopLoss())}
	if p.GetUpdatedTime() > 0 {
		v.UpdatedAt = time.UnixMilli(p.GetUpdatedTime()).UTC()
	}
	return v
}
