package bybit

import (
	"fmt"
	"strconv"

	"github.com/shopspring/decimal"
)

// parseDec parses a Bybit decimal string. Bybit sends "" for "not applicable": that is zero with ok=false.
func parseDec(field, s string) (decimal.Decimal, bool, error) {
	if s == "" {
		return decimal.Zero, false, nil
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Zero, false, fmt.Errorf("bybit: %s %q is not a decimal: %w", field, s, err)
	}
	return d, true, nil
}

// mustDec parses a decimal that must be present.
func mustDec(field, s string) (decimal.Decimal, error) {
	d, ok, err := parseDec(field, s)
	if err != nil {
		return d, err
	}
	if !ok {
		return d, fmt.Errorf("bybit: %s is missing", field)
	}
	return d, nil
}

// canon formats a decimal in the contract's canonical form: no exponent, no trailing zeros, no "-0".
func canon(d decimal.Decimal) string {
	if d.IsZero() {
		return "0"
	}
	return d.String()
}

// canonStr re-formats a Bybit decimal string canonically; "" stays "".
func canonStr(field, s string) (string, error) {
	d, ok, err := parseDec(field, s)
	if err != nil || !ok {
		return "", err
	}
	return canon(d), nil
}

// parseMs parses a Bybit millisecond timestamp string (rows carry them as strings); "" is 0.
func parseMs(field, s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bybit: %s %q is not a millisecond time", field, s)
	}
	return v, nil
}

// msStr formats a millisecond time for a query parameter.
func msStr(ms int64) string { return strconv.FormatInt(ms, 10) }
