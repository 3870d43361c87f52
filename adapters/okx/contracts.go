package okx

import (
	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// ToOKXSize converts a base quantity to OKX's order size: contracts for SWAP (qty / (ctVal x ctMult)), base for
// SPOT. The result must be a whole multiple of lotSz, else a PRECISION error names the field.
func (in *Instrument) ToOKXSize(field string, qty decimal.Decimal) (decimal.Decimal, error) {
	if !qty.IsPositive() {
		return decimal.Zero, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, field, "%s %s must be positive", field, qty)
	}
	step := in.LotSz.Mul(in.ContractSize)
	if !qty.Mod(step).IsZero() {
		return decimal.Zero, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_PRECISION, field,
			"%s %s is not a multiple of the lot size %s (%s contracts of %s %s)", field, qty, step, in.LotSz, in.ContractSize, in.Base)
	}
	// qty is a whole number of lots, so the division is exact.
	sz := qty.Div(step).Round(0).Mul(in.LotSz)
	if sz.LessThan(in.MinSz) {
		return decimal.Zero, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_PRECISION, field,
			"%s %s is below the minimum %s", field, qty, in.MinSz.Mul(in.ContractSize))
	}
	return sz, nil
}

// FromOKXSize converts an OKX size (contracts for SWAP) to base units.
func (in *Instrument) FromOKXSize(sz decimal.Decimal) decimal.Decimal {
	return sz.Mul(in.ContractSize)
}

// CheckPrice refuses a price off the tick grid.
func (in *Instrument) CheckPrice(field string, px decimal.Decimal) error {
	if !px.IsPositive() {
		return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, field, "%s %s must be positive", field, px)
	}
	if !px.Mod(in.TickSz).IsZero() {
		return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_PRECISION, field, "%s %s is not a multiple of the tick size %s", field, px, in.TickSz)
	}
	return nil
}
