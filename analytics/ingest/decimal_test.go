package ingest

import (
	"math/big"
	"testing"

	"github.com/shopspring/decimal"
)

// int128 is the signed value of a Decimal128 wire value.
func int128(lo, hi uint64) *big.Int {
	v := new(big.Int).SetUint64(hi)
	v.Lsh(v, 64).Or(v, new(big.Int).SetUint64(lo))
	if hi>>63 == 1 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), 128))
	}
	return v
}

// reference is what the parser must produce for s, from shopspring/decimal: the value times 10^18 when s is a
// decimal with at most 18 fractional digits (other than trailing zeros) and at most 38 significant digits.
func reference(s string) (*big.Int, bool) {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return nil, false
	}
	scaled := d.Shift(decScale)
	if !scaled.Equal(scaled.Truncate(0)) {
		return nil, false
	}
	v := scaled.BigInt()
	if new(big.Int).Abs(v).Cmp(decLimit) >= 0 {
		return nil, false
	}
	return v, true
}

var decimalSeeds = []string{
	"0", "1", "-1", "+1", "65000.1", "0.002", "130.0002", "-0", "0.0", "00012.3400",
	"0.000000000000000001", "-0.000000000000000001", "0.0000000000000000001", "0.1000000000000000000000",
	"12345678901234567890.123456789012345678", "-12345678901234567890.123456789012345678",
	"99999999999999999999.999999999999999999", "100000000000000000000", "123456789012345678901",
	"18446744073709551615", "18446744073709551616", "170141183460469231731.687303715884105727",
	".5", "5.", "-.5", "1e3", "1.5E-3", "1e-19", "1e20", "1e19", "-2.5e2",
	"", "-", "+", ".", "1.2.3", "1,5", " 1", "1 ", "abc", "0x10", "NaN", "Inf", "--1", "1-", "1e", "e5", "1_000", "1e999999999", "0e-99999",
	"0.00000000000000000000000000000000000000000000001", "000000000000000000000000000000000000000000001",
}

func TestParseDecimal128MatchesShopspring(t *testing.T) {
	for _, s := range decimalSeeds {
		checkDecimal(t, s)
	}
}

func TestParseDecimal128Values(t *testing.T) {
	for s, want := range map[string]string{
		"65000.1": "65000100000000000000000",
		"-0.002":  "-2000000000000000",
		"1e-18":   "1",
		"0.10":    "100000000000000000",
		"99999999999999999999.999999999999999999": "99999999999999999999999999999999999999",
	} {
		lo, hi, ok := parseDecimal128(s)
		if !ok || int128(lo, hi).String() != want {
			t.Errorf("%q: got %v %v, want %s", s, int128(lo, hi), ok, want)
		}
	}
	for _, s := range []string{"0.0000000000000000001", "100000000000000000000", "1.5.", "", "1e-19", "12a"} {
		if _, _, ok := parseDecimal128(s); ok {
			t.Errorf("%q accepted", s)
		}
	}
}

func TestParseDecimal128DoesNotAllocate(t *testing.T) {
	var sink uint64
	n := testing.AllocsPerRun(1000, func() {
		lo, hi, _ := parseDecimal128("-65000.123456789")
		sink += lo ^ hi
	})
	if n != 0 {
		t.Fatalf("%v allocations per parse", n)
	}
	_ = sink
}

func FuzzParseDecimal128(f *testing.F) {
	for _, s := range decimalSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkDecimal(t, s) })
}

func checkDecimal(t *testing.T, s string) {
	t.Helper()
	lo, hi, ok := parseDecimal128(s)
	if !smallExponent(s) {
		if ok {
			t.Fatalf("%q: parsed to %s despite its exponent", s, int128(lo, hi))
		}
		return
	}
	want, wok := reference(s)
	switch {
	case ok && !wok:
		t.Fatalf("%q: parsed to %s, shopspring/decimal says it is not an exact Decimal(38, 18)", s, int128(lo, hi))
	case !ok && wok:
		if isPlain(s) {
			t.Fatalf("%q rejected, shopspring/decimal reads %s", s, want)
		}
	case ok && int128(lo, hi).Cmp(want) != 0:
		t.Fatalf("%q: parsed to %s, want %s", s, int128(lo, hi), want)
	}
}

// isPlain reports whether s is an optionally signed decimal with digits and at most one point, which the parser
// must accept whenever its value fits.
func isPlain(s string) bool {
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	digits, points := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.':
			points++
		case c >= '0' && c <= '9':
			digits++
		default:
			return false
		}
	}
	return digits > 0 && points <= 1
}
