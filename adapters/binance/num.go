package binance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

// flexInt is an integer Binance sends either as a JSON number or as a numeric string (recorded captures and some
// documented examples quote ids and times). null leaves it zero.
type flexInt int64

func (f *flexInt) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	if b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("integer: %w", err)
		}
		if s == "" {
			return nil
		}
		b = []byte(s)
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		// Some fields come as a float-looking number ("1.0"): accept whole values only.
		d, derr := decimal.NewFromString(string(b))
		if derr != nil || !d.IsInteger() {
			return fmt.Errorf("integer: %q is not an integer", string(b))
		}
		n = d.IntPart()
	}
	*f = flexInt(n)
	return nil
}

// flexStr is a decimal Binance usually sends as a string; numbers are accepted too (leverage, some docs).
type flexStr string

func (f *flexStr) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	if b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("decimal: %w", err)
		}
		*f = flexStr(s)
		return nil
	}
	if _, err := decimal.NewFromString(string(b)); err != nil {
		return fmt.Errorf("decimal: %q is not a number", string(b))
	}
	*f = flexStr(b)
	return nil
}

// canon turns a Binance decimal string into canonical form ("0.01000000" -> "0.01"). Empty stays empty.
func canon(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return "", fmt.Errorf("bad decimal %q", s)
	}
	return d.String(), nil
}

// decs canonicalises several decimals at once, naming the first bad one.
type decs struct{ err error }

func (d *decs) c(field string, s flexStr) string {
	if d.err != nil {
		return ""
	}
	out, err := canon(string(s))
	if err != nil {
		d.err = fmt.Errorf("%s: %w", field, err)
	}
	return out
}

// step canonicalises an increment: "" when absent or zero (not said), an error when negative.
func (d *decs) step(field string, s flexStr) string {
	out := nonZero(d.c(field, s))
	if out != "" && strings.HasPrefix(out, "-") && d.err == nil {
		d.err = fmt.Errorf("%s: negative %q", field, out)
		return ""
	}
	return out
}

// nonZero returns "" for a zero decimal ("0.00000000" means "not set" in many Binance fields).
func nonZero(s string) string {
	if s == "" {
		return ""
	}
	if d, err := decimal.NewFromString(s); err == nil && d.IsZero() {
		return ""
	}
	return s
}

// decString renders a decimal for a request parameter.
func decString(d decimal.Decimal) string { return d.String() }

func decPair(a, b string) (decimal.Decimal, decimal.Decimal, error) {
	x, err := decimal.NewFromString(a)
	if err != nil {
		return x, x, err
	}
	y, err := decimal.NewFromString(b)
	return x, y, err
}

// flexID is an identifier Binance sends as a string or as a JSON number (convert order ids, deposit ids).
type flexID string

func (f *flexID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	if b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("id: %w", err)
		}
		*f = flexID(s)
		return nil
	}
	if _, err := strconv.ParseInt(string(b), 10, 64); err != nil {
		return fmt.Errorf("id: %q is not an integer", string(b))
	}
	*f = flexID(b)
	return nil
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
