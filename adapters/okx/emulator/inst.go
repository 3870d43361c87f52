package emulator

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
)

// inst is one venue instrument under its OKX name, with the contract conversion of swaps.
type inst struct {
	v    *venue.Instrument
	id   string // BTC-USDT or BTC-USDT-SWAP
	swap bool
	// ct is ctVal x ctMult: the base quantity of one contract (1 for spot).
	ct    decimal.Decimal
	ctVal decimal.Decimal
}

// ctMult is the contract multiplier the emulator lists; ctVal carries the whole contract size.
var ctMult = decimal.NewFromInt(1)

func newInst(in *venue.Instrument) *inst {
	i := &inst{v: in, ct: decimal.NewFromInt(1)}
	if in.Market == venue.Perp {
		i.swap = true
		i.id = in.Base + "-" + in.Quote + "-SWAP"
		i.ctVal = in.ContractValue
		if i.ctVal.IsZero() {
			i.ctVal = decimal.NewFromInt(1)
		}
		i.ct = i.ctVal.Mul(ctMult)
	} else {
		i.id = in.Base + "-" + in.Quote
	}
	return i
}

func (i *inst) instType() string {
	if i.swap {
		return "SWAP"
	}
	return "SPOT"
}

// family is the instFamily/uly of a swap ("BTC-USDT").
func (i *inst) family() string { return i.v.Base + "-" + i.v.Quote }

// toWire converts a venue (base unit) quantity to OKX's size: contracts for swaps. Exact: contract values are
// powers of ten and venue quantities are multiples of the step.
func (i *inst) toWire(q decimal.Decimal) decimal.Decimal {
	if !i.swap {
		return q
	}
	return q.DivRound(i.ct, 18)
}

// fromWire converts an OKX size to base units exactly.
func (i *inst) fromWire(sz decimal.Decimal) decimal.Decimal {
	if !i.swap {
		return sz
	}
	return sz.Mul(i.ct)
}

// szString renders a venue quantity as an OKX size string.
func (i *inst) szString(q decimal.Decimal) string { return dec(i.toWire(q)) }

// parseSz parses an OKX size (contracts for swaps) into base units and checks it against the lot size: it fails
// with a precision error unless the size is a whole number of lots.
func (i *inst) parseSz(s string) (decimal.Decimal, error) {
	d, err := venue.ParseDecimal(s)
	if err != nil {
		return decimal.Decimal{}, err
	}
	if !d.IsPositive() {
		return decimal.Decimal{}, fmt.Errorf("%w: size must be positive", venue.ErrOutOfRange)
	}
	base := i.fromWire(d)
	if _, err := i.v.Lots(base); err != nil {
		return decimal.Decimal{}, err
	}
	return base, nil
}

func (s *Server) lookup(id string) (*inst, bool) {
	i, ok := s.byID[strings.ToUpper(strings.TrimSpace(id))]
	if !ok || i.v.Status == venue.Delisted {
		return nil, false
	}
	return i, true
}

// perpOf returns the USDT swap of a coin, spotOf its spot pair.
func (s *Server) perpOf(ccy string) (*inst, bool) {
	i, ok := s.byID[strings.ToUpper(ccy)+"-USDT-SWAP"]
	return i, ok
}

func (s *Server) spotOf(ccy string) (*inst, bool) {
	i, ok := s.byID[strings.ToUpper(ccy)+"-USDT"]
	return i, ok
}

func stateOf(st venue.InstrumentStatus) string {
	switch st {
	case venue.Trading:
		return "live"
	case venue.Halted:
		return "suspend"
	}
	return "expired"
}
