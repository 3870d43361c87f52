package emulator

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
)

// shape is a description of one response or event, written from OKX's documentation and recorded samples:
// the JSON type of every key of the envelope and of each data item ("string", "number", "boolean", "array",
// "object", "null"), or for array rows the row length and the type of every element. Optional keys may be absent.
type shape struct {
	Envelope map[string]string `json:"envelope"`
	Item     map[string]string `json:"item"`
	Optional []string          `json:"optional"`
	Row      *struct {
		Len  int    `json:"len"`
		Type string `json:"type"`
	} `json:"row"`
	// Nested describes keys of the item that hold arrays of objects (e.g. account details).
	Nested map[string]map[string]string `json:"nested"`
	// Levels names keys that hold book levels: arrays of 4 strings.
	Levels []string `json:"levels"`
}

func loadShape(t *testing.T, name string) shape {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "shapes", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var s shape
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("shape %s: %v", name, err)
	}
	return s
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64, json.Number:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// extensionKeys are keys the emulator adds to OKX's shapes: instruments carry the venue's minimum order value
// (minNotional, quote units), which OKX enforces (51020) but does not list.
var extensionKeys = map[string]bool{"minNotional": true}

// checkObject compares one object with a key->type description: every described key present (unless optional)
// with its type, and no key that the description does not know.
func checkObject(where string, o map[string]any, want map[string]string, optional []string) []string {
	var errs []string
	for k, typ := range want {
		v, ok := o[k]
		if !ok {
			if !slices.Contains(optional, k) {
				errs = append(errs, fmt.Sprintf("%s: missing key %q", where, k))
			}
			continue
		}
		if got := jsonType(v); got != typ {
			errs = append(errs, fmt.Sprintf("%s: key %q is %s, want %s", where, k, got, typ))
		}
	}
	for k := range o {
		if _, ok := want[k]; !ok && !extensionKeys[k] {
			errs = append(errs, fmt.Sprintf("%s: unexpected key %q", where, k))
		}
	}
	sort.Strings(errs)
	return errs
}

// checkShape checks a whole body (an envelope or a WebSocket push) against a shape.
func checkShape(t *testing.T, name string, body []byte) {
	t.Helper()
	s := loadShape(t, name)
	var top map[string]any
	if err := json.Unmarshal(body, &top); err != nil {
		t.Fatalf("%s: %v: %s", name, err, body)
	}
	errs := checkObject(name+" envelope", top, s.Envelope, nil)
	data, _ := top["data"].([]any)
	if len(data) == 0 {
		errs = append(errs, name+": data is empty, nothing to check")
	}
	for n, d := range data {
		where := fmt.Sprintf("%s data[%d]", name, n)
		if s.Row != nil {
			row, ok := d.([]any)
			if !ok || len(row) != s.Row.Len {
				errs = append(errs, fmt.Sprintf("%s: want a row of %d, got %v", where, s.Row.Len, d))
				continue
			}
			for k, x := range row {
				if jsonType(x) != s.Row.Type {
					errs = append(errs, fmt.Sprintf("%s[%d] is %s", where, k, jsonType(x)))
				}
			}
			continue
		}
		o, ok := d.(map[string]any)
		if !ok {
			errs = append(errs, where+": not an object")
			continue
		}
		errs = append(errs, checkObject(where, o, s.Item, s.Optional)...)
		for key, sub := range s.Nested {
			arr, _ := o[key].([]any)
			for m, x := range arr {
				xo, _ := x.(map[string]any)
				errs = append(errs, checkObject(fmt.Sprintf("%s.%s[%d]", where, key, m), xo, sub, s.Optional)...)
			}
		}
		for _, key := range s.Levels {
			arr, _ := o[key].([]any)
			for m, x := range arr {
				lv, _ := x.([]any)
				if len(lv) != 4 {
					errs = append(errs, fmt.Sprintf("%s.%s[%d]: want 4 elements", where, key, m))
					continue
				}
				for _, e := range lv {
					if jsonType(e) != "string" {
						errs = append(errs, fmt.Sprintf("%s.%s[%d]: element is %s", where, key, m, jsonType(e)))
					}
				}
			}
		}
	}
	for _, e := range errs {
		t.Error(e)
	}
}

func TestShapesPublicREST(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cases := []struct{ shape, path string }{
		{"instruments_spot", "/api/v5/public/instruments?instType=SPOT"},
		{"instruments_swap", "/api/v5/public/instruments?instType=SWAP"},
		{"ticker", "/api/v5/market/tickers?instType=SPOT"},
		{"ticker", "/api/v5/market/tickers?instType=SWAP"},
		{"ticker", "/api/v5/market/ticker?instId=BTC-USDT-SWAP"},
		{"mark_price", "/api/v5/public/mark-price?instType=SWAP"},
		{"index_tickers", "/api/v5/market/index-tickers?quoteCcy=USDT"},
		{"funding_rate", "/api/v5/public/funding-rate?instId=BTC-USDT-SWAP"},
		{"funding_rate_history", "/api/v5/public/funding-rate-history?instId=BTC-USDT-SWAP"},
		{"books", "/api/v5/market/books?instId=BTC-USDT&sz=20"},
		{"candles", "/api/v5/market/candles?instId=BTC-USDT&bar=1m"},
		{"candles", "/api/v5/market/history-candles?instId=ETH-USDT-SWAP&bar=1D"},
		{"trades", "/api/v5/market/trades?instId=BTC-USDT-SWAP"},
		{"time", "/api/v5/public/time"},
		{"open_interest", "/api/v5/public/open-interest?instType=SWAP&instId=BTC-USDT-SWAP"},
		{"rubik_ratio", "/api/v5/rubik/stat/contracts/long-short-account-ratio?ccy=BTC&period=5m"},
		{"rubik_taker", "/api/v5/rubik/stat/taker-volume?ccy=BTC&instType=CONTRACTS&period=5m"},
		{"rubik_taker", "/api/v5/rubik/stat/taker-volume?ccy=BTC&instType=SPOT&period=1H"},
		{"rubik_oi_volume", "/api/v5/rubik/stat/contracts/open-interest-volume?ccy=ETH&period=1H"},
		{"error", "/api/v5/market/ticker?instId=NOPE-USDT"},
	}
	for _, c := range cases {
		t.Run(c.shape+c.path, func(t *testing.T) {
			r := h.get(c.path)
			if c.shape == "error" {
				var top map[string]any
				_ = json.Unmarshal(r.raw, &top)
				if errs := checkObject("error", top, loadShape(t, "error").Envelope, nil); len(errs) > 0 {
					t.Error(errs)
				}
				return
			}
			if r.Status != 200 {
				t.Fatalf("HTTP %d %s", r.Status, r.raw)
			}
			checkShape(t, c.shape, r.raw)
		})
	}
}
