package ingest

import (
	"math/big"
	"math/bits"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

// decScale is the scale of schema.Decimal, Decimal(38, 18): the wire value is the number times 10^18 as a signed
// 128-bit integer.
const decScale = 18

// decMaxDigits is the precision of schema.Decimal: at most 38 significant digits (20 before the point).
const decMaxDigits = 38

var pow10 = [20]uint64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// parseDecimal128 turns a decimal string into its Decimal(38, 18) wire value (low and high 64 bits of the two's
// complement int128 of the number times 10^18), exactly and without allocating. It accepts an optional sign,
// digits with at most one point (at least one digit) and, through a slower exact path, exponent notation. It
// reports false, never rounding, for anything else: junk, more than 18 fractional digits unless the extra ones
// are zeros, or more than 38 significant digits.
func parseDecimal128(s string) (lo, hi uint64, ok bool) {
	i, neg := 0, false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		i = 1
	}
	var (
		digits   int  // significant digits taken into (hi, lo)
		frac     int  // of those, fractional
		point    bool // seen '.'
		anyDigit bool
	)
	for ; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			if point {
				return 0, 0, false
			}
			point = true
			continue
		}
		if c == 'e' || c == 'E' {
			return parseDecimal128Slow(s)
		}
		if c < '0' || c > '9' {
			return 0, 0, false
		}
		anyDigit = true
		d := uint64(c - '0')
		if point {
			if frac == decScale { // beyond the scale: only zeros are exact
				if d != 0 {
					return 0, 0, false
				}
				continue
			}
			frac++
		} else if digits == 0 && d == 0 {
			continue // leading zero
		}
		if digits == decMaxDigits {
			return 0, 0, false
		}
		digits++
		// (hi, lo) = (hi, lo) * 10 + d; 38 digits stay below 2^127.
		h, l := bits.Mul64(lo, 10)
		var carry uint64
		lo, carry = bits.Add64(l, d, 0)
		hi = hi*10 + h + carry
	}
	if !anyDigit {
		return 0, 0, false
	}
	if pad := decScale - frac; pad > 0 {
		if digits > 0 && digits+pad > decMaxDigits {
			return 0, 0, false
		}
		p := pow10[pad]
		h, l := bits.Mul64(lo, p)
		lo, hi = l, hi*p+h
	}
	if neg {
		var borrow uint64
		lo, borrow = bits.Sub64(0, lo, 0)
		hi, _ = bits.Sub64(0, hi, borrow)
	}
	return lo, hi, true
}

var (
	decLimit = new(big.Int).Exp(big.NewInt(10), big.NewInt(decMaxDigits), nil) // exclusive bound of the scaled value
	mask64   = new(big.Int).SetUint64(^uint64(0))
)

// parseDecimal128Slow is the exact path for exponent notation (never sent by the plugins, kept for completeness).
func parseDecimal128Slow(s string) (lo, hi uint64, ok bool) {
	if strings.ContainsAny(s, " _") || !smallExponent(s) {
		return 0, 0, false
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return 0, 0, false
	}
	scaled := d.Shift(decScale)
	if !scaled.Equal(scaled.Truncate(0)) { // more than 18 fractional digits that are not zeros
		return 0, 0, false
	}
	v := scaled.BigInt()
	abs := new(big.Int).Abs(v)
	if abs.Cmp(decLimit) >= 0 {
		return 0, 0, false
	}
	lo = new(big.Int).And(abs, mask64).Uint64()
	hi = new(big.Int).Rsh(abs, 64).Uint64()
	if v.Sign() < 0 {
		var borrow uint64
		lo, borrow = bits.Sub64(0, lo, 0)
		hi, _ = bits.Sub64(0, hi, borrow)
	}
	return lo, hi, true
}

// smallExponent reports whether the exponent of s (after its first 'e' or 'E') is at most 100 in magnitude: a larger
// one cannot give an exact Decimal(38, 18) but 0, and would make shopspring/decimal work on a huge number.
func smallExponent(s string) bool {
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return true
	}
	e, err := strconv.Atoi(s[i+1:])
	return err == nil && e >= -100 && e <= 100
}
