package sdktest

import (
	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// unitsPerUSDT is the resolution of the underlying price: 1 unit = 0.0001 USDT. Every instrument tick is a whole
// number of units, so converting the underlying to an instrument's grid is integer arithmetic.
const unitsPerUSDT = 10_000

// baseSpec describes one base asset of the synthetic market.
type baseSpec struct {
	asset string
	name  string
	// start is the price the history ends at, in units (see unitsPerUSDT).
	start int64
	// volBps is the standard deviation of one minute's move in basis points.
	volBps float64
}

var bases = []baseSpec{
	{asset: "BTC", name: "Bitcoin", start: 65_000 * unitsPerUSDT, volBps: 8},
	{asset: "ETH", name: "Ether", start: 3_400 * unitsPerUSDT, volBps: 10},
	{asset: "SOL", name: "Solana", start: 150 * unitsPerUSDT, volBps: 14},
}

// instrumentSpec is the static definition of one instrument: its grid and limits as decimal strings, exactly as
// ListInstruments returns them.
type instrumentSpec struct {
	base        string
	marketType  exchangev1.MarketType
	tickSize    string
	stepSize    string
	minQty      string
	maxQty      string
	marketMax   string
	minNotional string
	maxLeverage int64
	// levelGap is the distance between two synthetic book levels, in ticks.
	levelGap int64
	// levelQty is the typical size of one synthetic level, in steps.
	levelQty int64
}

var instrumentSpecs = []instrumentSpec{
	{base: "BTC", marketType: exchangev1.MarketType_MARKET_TYPE_SPOT, tickSize: "0.01", stepSize: "0.00001",
		minQty: "0.00001", maxQty: "9000", marketMax: "100", minNotional: "5", levelGap: 50, levelQty: 20_000},
	{base: "ETH", marketType: exchangev1.MarketType_MARKET_TYPE_SPOT, tickSize: "0.01", stepSize: "0.0001",
		minQty: "0.0001", maxQty: "90000", marketMax: "1000", minNotional: "5", levelGap: 10, levelQty: 30_000},
	{base: "SOL", marketType: exchangev1.MarketType_MARKET_TYPE_SPOT, tickSize: "0.01", stepSize: "0.001",
		minQty: "0.001", maxQty: "900000", marketMax: "10000", minNotional: "5", levelGap: 1, levelQty: 50_000},
	{base: "BTC", marketType: exchangev1.MarketType_MARKET_TYPE_SWAP, tickSize: "0.1", stepSize: "0.001",
		minQty: "0.001", maxQty: "1000", marketMax: "120", minNotional: "5", maxLeverage: 100, levelGap: 5,
		levelQty: 400},
	{base: "ETH", marketType: exchangev1.MarketType_MARKET_TYPE_SWAP, tickSize: "0.01", stepSize: "0.001",
		minQty: "0.001", maxQty: "10000", marketMax: "2000", minNotional: "5", maxLeverage: 75, levelGap: 10,
		levelQty: 3_000},
	{base: "SOL", marketType: exchangev1.MarketType_MARKET_TYPE_SWAP, tickSize: "0.001", stepSize: "0.1",
		minQty: "0.1", maxQty: "100000", marketMax: "20000", minNotional: "5", maxLeverage: 50, levelGap: 10,
		levelQty: 500},
}

// grid converts between decimals on the wire and integers on an instrument's price and quantity grids. The market
// works in whole ticks and steps; balances are decimals.
type grid struct {
	tick decimal.Decimal
	step decimal.Decimal
	// unitsPerTick is how many underlying units one tick is.
	unitsPerTick int64
}

func (g grid) price(ticks int64) decimal.Decimal { return g.tick.Mul(decimal.NewFromInt(ticks)) }
func (g grid) qty(steps int64) decimal.Decimal   { return g.step.Mul(decimal.NewFromInt(steps)) }

// ticksOf converts a request price to ticks; a price off the grid is a PRECISION error.
func (g grid) ticksOf(field string, d decimal.Decimal) (int64, error) {
	if !d.Mod(g.tick).IsZero() {
		return 0, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_PRECISION, field,
			"%s %s is not a multiple of the tick size %s", field, d, g.tick)
	}
	return d.Div(g.tick).IntPart(), nil
}

// stepsOf converts a request quantity to steps; a quantity off the grid is a PRECISION error.
func (g grid) stepsOf(field string, d decimal.Decimal) (int64, error) {
	if !d.Mod(g.step).IsZero() {
		return 0, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_PRECISION, field,
			"%s %s is not a multiple of the step size %s", field, d, g.step)
	}
	return d.Div(g.step).IntPart(), nil
}

// parseDecimal reads a decimal request field. Empty is an error; the caller decides what empty means before.
func parseDecimal(field, s string) (decimal.Decimal, error) {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Decimal{}, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, field,
			"%s %q is not a decimal", field, s)
	}
	return d, nil
}

// parsePositive reads a decimal request field that must be > 0.
func parsePositive(field, s string) (decimal.Decimal, error) {
	if s == "" {
		return decimal.Decimal{}, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, field,
			"%s is required", field)
	}
	d, err := parseDecimal(field, s)
	if err != nil {
		return d, err
	}
	if !d.IsPositive() {
		return d, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, field,
			"%s must be positive, got %s", field, s)
	}
	return d, nil
}

func mustDec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// marketTypeName is the short name used in keys and messages ("SPOT", "SWAP").
func marketTypeName(t exchangev1.MarketType) string {
	switch t {
	case exchangev1.MarketType_MARKET_TYPE_SPOT:
		return "SPOT"
	case exchangev1.MarketType_MARKET_TYPE_SWAP:
		return "SWAP"
	default:
		return "UNSPECIFIED"
	}
}

func instKey(t exchangev1.MarketType, symbol string) string { return marketTypeName(t) + ":" + symbol }
