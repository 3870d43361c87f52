package venue

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/shopspring/decimal"
)

// Side is the direction of an order; its value is the sign of the position change.
type Side int8

const (
	Buy  Side = 1
	Sell Side = -1
)

func (s Side) String() string {
	if s == Buy {
		return "BUY"
	}
	if s == Sell {
		return "SELL"
	}
	return fmt.Sprintf("Side(%d)", int8(s))
}

// OrderType is the kind of order.
type OrderType uint8

const (
	Limit OrderType = iota + 1
	Market
	// StopMarket becomes a market order when the trigger price is crossed against the position direction
	// (a buy triggers at or above the stop, a sell at or below).
	StopMarket
	// StopLimit becomes a limit order at Price when triggered like StopMarket.
	StopLimit
	// TakeProfitMarket becomes a market order when the trigger price is crossed in the profit direction
	// (a sell triggers at or above, a buy at or below).
	TakeProfitMarket
	// TakeProfitLimit becomes a limit order at Price when triggered like TakeProfitMarket.
	TakeProfitLimit
)

var orderTypeNames = [...]string{"", "LIMIT", "MARKET", "STOP_MARKET", "STOP_LIMIT", "TAKE_PROFIT_MARKET", "TAKE_PROFIT_LIMIT"}

func (t OrderType) String() string {
	if int(t) < len(orderTypeNames) && t > 0 {
		return orderTypeNames[t]
	}
	return fmt.Sprintf("OrderType(%d)", uint8(t))
}

func (t OrderType) conditional() bool { return t >= StopMarket }
func (t OrderType) takeProfit() bool  { return t == TakeProfitMarket || t == TakeProfitLimit }
func (t OrderType) limitAfter() bool  { return t == StopLimit || t == TakeProfitLimit }

// TimeInForce of limit orders.
type TimeInForce uint8

const (
	GTC TimeInForce = iota + 1
	IOC
	FOK
	// PostOnly rests only if it would not trade on arrival; otherwise it is expired (rejected) whole.
	PostOnly
)

var tifNames = [...]string{"", "GTC", "IOC", "FOK", "POST_ONLY"}

func (t TimeInForce) String() string {
	if int(t) < len(tifNames) && t > 0 {
		return tifNames[t]
	}
	return fmt.Sprintf("TimeInForce(%d)", uint8(t))
}

// TriggerPrice selects the price that triggers conditional orders.
type TriggerPrice uint8

const (
	TriggerLast TriggerPrice = iota + 1
	TriggerMark
)

// STPMode is the self-trade prevention mode: what happens when a taker would trade against a resting order of the
// same account. The default (zero value) is STPExpireTaker, which cancels the rest of the incoming order.
type STPMode uint8

const (
	STPExpireTaker STPMode = iota
	STPExpireMaker
	STPExpireBoth
	STPNone
)

// PositionSide of a perpetual order or position: Both in one-way mode, Long or Short in hedge mode.
type PositionSide uint8

const (
	PosBoth PositionSide = iota
	PosLong
	PosShort
)

func (p PositionSide) String() string {
	return [...]string{"BOTH", "LONG", "SHORT"}[p]
}

// OrderStatus is the life-cycle state of an order.
type OrderStatus uint8

const (
	StatusNew OrderStatus = iota + 1
	StatusPartiallyFilled
	StatusFilled
	StatusCanceled
	// StatusExpired: IOC/FOK remainder, post-only that would cross, self-trade prevention, market order without
	// liquidity.
	StatusExpired
	StatusRejected
	// StatusUntriggered: a conditional order waiting for its trigger.
	StatusUntriggered
)

var statusNames = [...]string{"", "NEW", "PARTIALLY_FILLED", "FILLED", "CANCELED", "EXPIRED", "REJECTED", "UNTRIGGERED"}

func (s OrderStatus) String() string {
	if int(s) < len(statusNames) && s > 0 {
		return statusNames[s]
	}
	return fmt.Sprintf("OrderStatus(%d)", uint8(s))
}

// Final reports whether the order can no longer change.
func (s OrderStatus) Final() bool {
	return s == StatusFilled || s == StatusCanceled || s == StatusExpired || s == StatusRejected
}

// Wallet selects one of an account's wallets.
type Wallet uint8

const (
	Funding Wallet = 1
	// TradingWallet holds spot balances and the USDT margin of perpetual positions.
	TradingWallet Wallet = 2
)

func (w Wallet) String() string {
	switch w {
	case Funding:
		return "FUNDING"
	case TradingWallet:
		return "TRADING"
	}
	return fmt.Sprintf("Wallet(%d)", uint8(w))
}

// Errors. Emulators map them to their exchange's codes; test with errors.Is.
var (
	ErrInsufficientFunds = errors.New("venue: insufficient balance")
	ErrOrderNotFound     = errors.New("venue: order not found")
	ErrDuplicateClientID = errors.New("venue: duplicate client order id")
	ErrInvalidOrder      = errors.New("venue: invalid order")
	ErrMinNotional       = errors.New("venue: notional below minimum")
	ErrReduceOnly        = errors.New("venue: reduce-only order would increase the position")
	ErrPositionSide      = errors.New("venue: position side does not match the position mode")
	ErrWouldTrigger      = errors.New("venue: conditional order would trigger immediately")
	ErrLeverage          = errors.New("venue: leverage not allowed")
	ErrModeChange        = errors.New("venue: cannot change mode with open orders or positions")
	ErrNotTrading        = errors.New("venue: instrument not trading")
	ErrUnknownAccount    = errors.New("venue: unknown account")
	ErrUnknownAsset      = errors.New("venue: unknown asset")
	ErrQuoteExpired      = errors.New("venue: conversion quote expired or unknown")
	ErrWithdrawMin       = errors.New("venue: withdrawal below minimum")
	ErrSlowConsumer      = errors.New("venue: subscriber queue overflowed")
	ErrClosed            = errors.New("venue: closed")
)

// Clock gives the venue its notion of now. Tests and history generation use a ManualClock.
type Clock interface {
	Now() time.Time
}

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// ManualClock is a clock moved only by Set and Advance; safe for concurrent use.
type ManualClock struct {
	mu sync.Mutex
	t  time.Time
}

// NewManualClock starts a manual clock at t.
func NewManualClock(t time.Time) *ManualClock { return &ManualClock{t: t} }

// Now returns the clock's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t.
func (c *ManualClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// Advance moves the clock forward by d.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// order is the engine's internal order, in ticks and lots.
type order struct {
	id       uint64
	clientID string
	acct     *account
	inst     *instState

	side        Side
	typ         OrderType // current type (a triggered stop becomes Market or Limit)
	origType    OrderType
	tif         TimeInForce
	price       int64 // limit price in ticks (0 for market)
	qty         int64 // lots
	filled      int64
	quoteQty    int64 // market order by quote amount, in tick x lot units
	cumQuote    int64 // sum of price x qty of fills, tick x lot units
	stop        int64
	trigger     TriggerPrice
	reduceOnly  bool
	closePos    bool
	posSide     PositionSide
	stp         STPMode
	status      OrderStatus
	created     int64
	updated     int64
	reason      string // why it expired or was rejected
	liquidation bool

	// lock is what the order holds: the locked asset amount for spot, the order margin for perpetuals.
	lock      decimal.Decimal
	lockAsset string

	// book links
	lvl        *level
	prev, next *order
	prio       uint64
}

func (o *order) remaining() int64 { return o.qty - o.filled }

// OrderRequest places an order. Decimal fields are in the instrument's units; zero means unset.
type OrderRequest struct {
	Account    string
	Instrument string
	ClientID   string
	Side       Side
	Type       OrderType
	TIF        TimeInForce // limit orders; defaults to GTC
	Price      decimal.Decimal
	Qty        decimal.Decimal
	// QuoteQty sizes a spot market order in quote currency instead of Qty.
	QuoteQty      decimal.Decimal
	StopPrice     decimal.Decimal
	TriggerBy     TriggerPrice // defaults to TriggerLast
	ReduceOnly    bool
	ClosePosition bool // conditional perpetual orders: close the whole position when triggered
	PositionSide  PositionSide
	STP           STPMode
}

// Order is a snapshot of an order with decimal values.
type Order struct {
	ID            uint64
	ClientID      string
	Account       string
	Instrument    string
	Side          Side
	Type          OrderType
	OrigType      OrderType
	TIF           TimeInForce
	Price         decimal.Decimal
	Qty           decimal.Decimal
	Filled        decimal.Decimal
	QuoteQty      decimal.Decimal
	CumQuote      decimal.Decimal
	AvgPrice      decimal.Decimal
	StopPrice     decimal.Decimal
	TriggerBy     TriggerPrice
	ReduceOnly    bool
	ClosePosition bool
	PositionSide  PositionSide
	STP           STPMode
	Status        OrderStatus
	Reason        string
	Liquidation   bool
	Created       int64
	Updated       int64
}

// Fill is one execution of an account's order.
type Fill struct {
	TradeID      uint64
	OrderID      uint64
	ClientID     string
	Account      string
	Instrument   string
	Side         Side
	PositionSide PositionSide
	Price        decimal.Decimal
	Qty          decimal.Decimal
	Quote        decimal.Decimal
	Fee          decimal.Decimal
	FeeAsset     string
	Maker        bool
	RealizedPnL  decimal.Decimal
	Time         int64
}

// Trade is a public trade print.
type Trade struct {
	ID         uint64
	Instrument string
	Price      decimal.Decimal
	Qty        decimal.Decimal
	// TakerSide is the aggressor's side.
	TakerSide Side
	Time      int64
}

// Level is one aggregated price level.
type Level struct {
	Price decimal.Decimal
	Qty   decimal.Decimal
}

// BookDelta lists levels whose total changed; Qty zero removes the level. Seq increases by one per delta and
// PrevSeq is the previous delta's Seq, so gaps are detectable.
type BookDelta struct {
	Instrument string
	Seq        uint64
	PrevSeq    uint64
	Bids       []Level
	Asks       []Level
	Time       int64
}

// BookSnapshot is the top of a book at a sequence number.
type BookSnapshot struct {
	Instrument string
	Seq        uint64
	Bids       []Level // best first
	Asks       []Level
	Time       int64
}

// Position is a snapshot of a perpetual position.
type Position struct {
	Account       string
	Instrument    string
	Side          PositionSide
	Qty           decimal.Decimal // signed in one-way mode; positive in hedge mode
	EntryPrice    decimal.Decimal
	MarkPrice     decimal.Decimal
	UnrealizedPnL decimal.Decimal
	RealizedPnL   decimal.Decimal
	Leverage      int
	Isolated      bool
	Margin        decimal.Decimal // isolated margin, or initial margin for cross
	MaintMargin   decimal.Decimal
	LiqPrice      decimal.Decimal
	Notional      decimal.Decimal
	// BreakEven is the price at which closing the whole position nets zero after the taker fees of opening and
	// closing it (both on the entry notional): long entry*(1+2*taker), short entry*(1-2*taker).
	BreakEven decimal.Decimal
	// MarginRatio is maintenance margin over margin balance (liquidation at 1): isolated, the position's own;
	// cross, the account's cross maintenance margin over its cross equity.
	MarginRatio decimal.Decimal
	Updated     int64
}

// Balance is one asset in one wallet.
type Balance struct {
	Account string
	Wallet  Wallet
	Asset   string
	Total   decimal.Decimal
	Locked  decimal.Decimal
	Free    decimal.Decimal
}

// MarkPrice is the mark, index and funding state of a perpetual.
type MarkPrice struct {
	Instrument  string
	Mark        decimal.Decimal
	Index       decimal.Decimal
	FundingRate decimal.Decimal
	NextFunding int64
	Time        int64
}
