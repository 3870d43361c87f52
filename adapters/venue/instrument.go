// Package venue is an exchange-agnostic simulated trading venue: instruments, a price-time priority matching
// engine on int64 fixed-point, accounts with wallets, spot balances and perpetual positions, a living synthetic
// market (market makers, takers, candles, funding, statistics) and generated history. Exchange emulators translate
// their own wire dialects into calls on a *Venue. See README.md for the model.
package venue

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/shopspring/decimal"
)

// Kind is the kind of instrument: spot or perpetual.
type Kind uint8

const (
	// Spot trades the base coin against the quote coin from spot balances.
	Spot Kind = 1
	// Perp is a USDT-margined perpetual: positions, margin, funding, liquidation.
	Perp Kind = 2
)

func (m Kind) String() string {
	switch m {
	case Spot:
		return "SPOT"
	case Perp:
		return "PERP"
	}
	return fmt.Sprintf("Kind(%d)", uint8(m))
}

// InstrumentStatus is the trading status of an instrument.
type InstrumentStatus uint8

const (
	// Trading accepts orders and matches them.
	Trading InstrumentStatus = 1
	// Halted rejects new orders; resting orders stay.
	Halted InstrumentStatus = 2
	// Delisted rejects everything.
	Delisted InstrumentStatus = 3
)

func (s InstrumentStatus) String() string {
	switch s {
	case Trading:
		return "TRADING"
	case Halted:
		return "HALTED"
	case Delisted:
		return "DELISTED"
	}
	return fmt.Sprintf("InstrumentStatus(%d)", uint8(s))
}

// MarginTier is one bracket of the maintenance margin table: positions with notional up to MaxNotional use
// MaintRate, and may use at most MaxLeverage. MaintAmount is the deduction that keeps the requirement continuous
// across brackets (requirement = notional*MaintRate - MaintAmount).
type MarginTier struct {
	MaxNotional decimal.Decimal
	MaintRate   decimal.Decimal
	MaintAmount decimal.Decimal
	MaxLeverage int
}

// Instrument is a venue-neutral tradable symbol. Prices are multiples of TickSize and quantities multiples of
// StepSize; the engine works on int64 ticks and lots derived from them.
type Instrument struct {
	// ID is the venue-neutral name: "BTC/USDT" for spot, "BTC/USDT:PERP" for the perpetual.
	ID     string
	Market Kind
	Base   string
	Quote  string
	Status InstrumentStatus

	TickSize    decimal.Decimal
	StepSize    decimal.Decimal
	MinQty      decimal.Decimal
	MaxQty      decimal.Decimal // for limit orders
	MarketMax   decimal.Decimal // for market orders
	MinNotional decimal.Decimal
	MinPrice    decimal.Decimal
	MaxPrice    decimal.Decimal

	// ContractValue is the base quantity of one contract (1 where the exchange counts in base units); emulators
	// whose exchange counts in contracts divide by it. Venue quantities are always in base units.
	ContractValue decimal.Decimal
	MaxLeverage   int
	Tiers         []MarginTier
	MakerFee      decimal.Decimal // rate, e.g. 0.0002
	TakerFee      decimal.Decimal

	// RefPrice is the starting price of the synthetic market.
	RefPrice decimal.Decimal
	// Listed is the listing time in Unix milliseconds (history does not go before it).
	Listed int64

	priceScale int32
	qtyScale   int32
	minQty     int64
	maxQty     int64
	marketMax  int64
	minPrice   int64
	maxPrice   int64
	// notional of (1 tick, 1 lot) = TickSize*StepSize; minNotional in those units, rounded up.
	minNotional int64
	unit        decimal.Decimal
}

// Errors returned by conversions and validation. They are wrapped with details; test with errors.Is.
var (
	ErrPrecision    = errors.New("venue: value is not a multiple of the instrument's increment")
	ErrOutOfRange   = errors.New("venue: value out of range")
	ErrBadNumber    = errors.New("venue: not a decimal number")
	ErrInstrument   = errors.New("venue: unknown instrument")
	ErrInvalidInstr = errors.New("venue: invalid instrument definition")
)

// scaleOf returns the number of decimal places of a positive increment such as 0.001 (3) or 5 (0).
func scaleOf(d decimal.Decimal) int32 {
	s := d.String() // trailing zeros trimmed
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return int32(len(s) - i - 1)
	}
	return 0
}

// Init validates the definition and derives the fixed-point bounds. Profiles call it; callers that build their own
// instruments must call it before adding them to a venue.
func (in *Instrument) Init() error {
	if in.ID == "" || in.Base == "" || in.Quote == "" {
		return fmt.Errorf("%w: missing id, base or quote", ErrInvalidInstr)
	}
	if !in.TickSize.IsPositive() || !in.StepSize.IsPositive() {
		return fmt.Errorf("%w %s: tick and step must be positive", ErrInvalidInstr, in.ID)
	}
	if in.Status == 0 {
		in.Status = Trading
	}
	if in.ContractValue.IsZero() {
		in.ContractValue = decimal.NewFromInt(1)
	}
	in.priceScale = scaleOf(in.TickSize)
	in.qtyScale = scaleOf(in.StepSize)
	in.unit = in.TickSize.Mul(in.StepSize)
	var err error
	conv := func(d decimal.Decimal, inc decimal.Decimal, name string, up bool) int64 {
		if err != nil {
			return 0
		}
		q := d.Div(inc)
		if up {
			q = q.Ceil()
		} else {
			q = q.Floor()
		}
		if !q.IsInteger() || q.Cmp(decimal.NewFromInt(math.MaxInt64/4)) > 0 || q.IsNegative() {
			err = fmt.Errorf("%w %s: %s %s", ErrInvalidInstr, in.ID, name, d)
			return 0
		}
		return q.IntPart()
	}
	in.minQty = max(conv(in.MinQty, in.StepSize, "min qty", true), 1)
	in.maxQty = conv(in.MaxQty, in.StepSize, "max qty", false)
	in.marketMax = conv(in.MarketMax, in.StepSize, "market max qty", false)
	in.minPrice = max(conv(in.MinPrice, in.TickSize, "min price", true), 1)
	in.maxPrice = conv(in.MaxPrice, in.TickSize, "max price", false)
	in.minNotional = conv(in.MinNotional, in.unit, "min notional", true)
	if err != nil {
		return err
	}
	if in.marketMax == 0 {
		in.marketMax = in.maxQty
	}
	if in.maxQty < in.minQty || in.maxPrice < in.minPrice {
		return fmt.Errorf("%w %s: max below min", ErrInvalidInstr, in.ID)
	}
	// Every notional the engine computes (price ticks x qty lots, summed over a few orders) must fit in int64.
	if hi, _ := mulCheck(in.maxPrice, max(in.maxQty, in.marketMax)); hi {
		return fmt.Errorf("%w %s: max price x max qty overflows int64 fixed point", ErrInvalidInstr, in.ID)
	}
	if in.Market == Perp {
		if in.MaxLeverage < 1 {
			return fmt.Errorf("%w %s: perpetual needs max leverage", ErrInvalidInstr, in.ID)
		}
		if len(in.Tiers) == 0 {
			return fmt.Errorf("%w %s: perpetual needs margin tiers", ErrInvalidInstr, in.ID)
		}
	}
	return nil
}

// mulCheck reports whether a*b exceeds 2^61 (leaving head-room for sums), and the product otherwise.
func mulCheck(a, b int64) (bool, int64) {
	if a == 0 || b == 0 {
		return false, 0
	}
	const lim = int64(1) << 61
	if a > lim/b {
		return true, 0
	}
	return false, a * b
}

// PriceScale is the number of decimal places of prices.
func (in *Instrument) PriceScale() int32 { return in.priceScale }

// QtyScale is the number of decimal places of quantities.
func (in *Instrument) QtyScale() int32 { return in.qtyScale }

// Ticks converts a price to ticks; it must be a positive multiple of TickSize within the price bounds.
func (in *Instrument) Ticks(price decimal.Decimal) (int64, error) {
	t, err := toUnits(price, in.TickSize)
	if err != nil {
		return 0, fmt.Errorf("%s price %s: %w", in.ID, price, err)
	}
	if t < in.minPrice || t > in.maxPrice {
		return 0, fmt.Errorf("%s price %s outside [%s, %s]: %w", in.ID, price, in.MinPrice, in.MaxPrice, ErrOutOfRange)
	}
	return t, nil
}

// Lots converts a quantity to lots; it must be a positive multiple of StepSize (range checks are per order type).
func (in *Instrument) Lots(qty decimal.Decimal) (int64, error) {
	l, err := toUnits(qty, in.StepSize)
	if err != nil {
		return 0, fmt.Errorf("%s quantity %s: %w", in.ID, qty, err)
	}
	return l, nil
}

func toUnits(v, inc decimal.Decimal) (int64, error) {
	if !v.IsPositive() {
		return 0, fmt.Errorf("must be positive: %w", ErrOutOfRange)
	}
	if !v.Mod(inc).IsZero() {
		return 0, fmt.Errorf("increment %s: %w", inc, ErrPrecision)
	}
	q := v.Div(inc)
	if q.Cmp(decimal.NewFromInt(math.MaxInt64/4)) > 0 {
		return 0, ErrOutOfRange
	}
	return q.IntPart(), nil
}

// Price converts ticks back to a decimal price.
func (in *Instrument) Price(ticks int64) decimal.Decimal {
	return decimal.New(ticks, 0).Mul(in.TickSize)
}

// Qty converts lots back to a decimal quantity.
func (in *Instrument) Qty(lots int64) decimal.Decimal {
	return decimal.New(lots, 0).Mul(in.StepSize)
}

// Notional converts a notional in (tick x lot) units to quote currency.
func (in *Instrument) Notional(units int64) decimal.Decimal {
	return decimal.New(units, 0).Mul(in.unit)
}

// PriceString formats ticks with exactly PriceScale decimals, the canonical form used on the wire.
func (in *Instrument) PriceString(ticks int64) string {
	return in.Price(ticks).StringFixed(in.priceScale)
}

// QtyString formats lots with exactly QtyScale decimals.
func (in *Instrument) QtyString(lots int64) string { return in.Qty(lots).StringFixed(in.qtyScale) }

// ParseDecimal parses a canonical decimal string (no exponent, no sign other than '-', no spaces).
func ParseDecimal(s string) (decimal.Decimal, error) {
	if s == "" || len(s) > 64 {
		return decimal.Decimal{}, fmt.Errorf("%q: %w", s, ErrBadNumber)
	}
	dot := false
	for i, c := range s {
		switch {
		case c >= '0' && c <= '9':
		case c == '.' && !dot && i > 0 && i < len(s)-1:
			dot = true
		case c == '-' && i == 0 && len(s) > 1:
		default:
			return decimal.Decimal{}, fmt.Errorf("%q: %w", s, ErrBadNumber)
		}
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("%q: %w: %w", s, ErrBadNumber, err)
	}
	return d, nil
}

// Tier returns the margin tier for a position notional (the last tier for anything larger).
func (in *Instrument) Tier(notional decimal.Decimal) MarginTier {
	for _, t := range in.Tiers {
		if notional.LessThanOrEqual(t.MaxNotional) {
			return t
		}
	}
	return in.Tiers[len(in.Tiers)-1]
}

// MaintMargin is the maintenance margin requirement of a position with the given absolute notional.
func (in *Instrument) MaintMargin(notional decimal.Decimal) decimal.Decimal {
	t := in.Tier(notional)
	m := notional.Mul(t.MaintRate).Sub(t.MaintAmount)
	if m.IsNegative() {
		return decimal.Zero
	}
	return m
}
