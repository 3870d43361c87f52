package emulator

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// A shape is a description of one response or message written from Bybit's documentation and recorded samples,
// as JSON: a string names the JSON type of a value ("string", "number", "boolean"), an object describes an object
// key by key (a key starting with "?" may be absent; no other key may appear), and an array of one element
// describes an array of such elements (a row of strings: [["string"]]).
func loadShape(t *testing.T, name string) any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "shapes", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var s any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("shape %s: %v", name, err)
	}
	return s
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
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

// conform checks v against the description d and returns every difference.
func conform(where string, v, d any) []string {
	switch want := d.(type) {
	case string:
		if got := jsonType(v); got != want {
			return []string{fmt.Sprintf("%s is %s, want %s", where, got, want)}
		}
		return nil
	case []any:
		arr, ok := v.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s is %s, want array", where, jsonType(v))}
		}
		var errs []string
		for i, x := range arr {
			if len(want) > 0 {
				errs = append(errs, conform(fmt.Sprintf("%s[%d]", where, i), x, want[0])...)
			}
		}
		return errs
	case map[string]any:
		o, ok := v.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s is %s, want object", where, jsonType(v))}
		}
		var errs []string
		known := map[string]bool{}
		for k, sub := range want {
			name, optional := strings.CutPrefix(k, "?")
			known[name] = true
			x, ok := o[name]
			if !ok {
				if !optional {
					errs = append(errs, fmt.Sprintf("%s: missing key %q", where, name))
				}
				continue
			}
			errs = append(errs, conform(where+"."+name, x, sub)...)
		}
		for k := range o {
			if !known[k] {
				errs = append(errs, fmt.Sprintf("%s: key %q is not in Bybit's shape", where, k))
			}
		}
		sort.Strings(errs)
		return errs
	}
	return []string{fmt.Sprintf("%s: bad description %v", where, d)}
}

func checkShape(t *testing.T, name string, v any) {
	t.Helper()
	errs := conform(name, v, loadShape(t, name))
	if len(errs) > 5 {
		errs = append(errs[:5], fmt.Sprintf("... and %d more", len(errs)-5))
	}
	for _, e := range errs {
		t.Error(e)
	}
}

func TestRESTShapes(t *testing.T) {
	h := newHarness(t)
	h.live(t)
	for _, c := range []struct{ shape, path string }{
		{"instruments_spot", "/v5/market/instruments-info?category=spot"},
		{"instruments_linear", "/v5/market/instruments-info?category=linear&limit=5"},
		{"tickers_spot", "/v5/market/tickers?category=spot"},
		{"tickers_linear", "/v5/market/tickers?category=linear&symbol=BTCUSDT"},
		{"orderbook", "/v5/market/orderbook?category=linear&symbol=BTCUSDT&limit=50"},
		{"orderbook", "/v5/market/orderbook?category=spot&symbol=ETHUSDT"},
		{"kline", "/v5/market/kline?category=spot&symbol=BTCUSDT&interval=60&limit=5"},
		{"recent_trade", "/v5/market/recent-trade?category=linear&symbol=BTCUSDT&limit=5"},
		{"time", "/v5/market/time"},
		{"funding_history", "/v5/market/funding/history?category=linear&symbol=BTCUSDT&limit=3"},
		{"open_interest", "/v5/market/open-interest?category=linear&symbol=BTCUSDT&intervalTime=1h&limit=3"},
		{"account_ratio", "/v5/market/account-ratio?category=linear&symbol=BTCUSDT&period=1h&limit=3"},
		{"error", "/v5/market/orderbook?category=linear&symbol=NOPEUSDT"},
		{"error", "/v5/market/kline?category=linear&symbol=BTCUSDT&interval=7"},
	} {
		var v map[string]any
		h.getJSON(c.path, &v)
		checkShape(t, c.shape, v)
		if c.shape != "error" {
			if v["retCode"] != float64(0) {
				t.Errorf("%s: %v", c.path, v)
				continue
			}
			// Lists are not empty, so the rows were checked too.
			if res, ok := v["result"].(map[string]any); ok {
				if l, ok := res["list"].([]any); ok && len(l) == 0 {
					t.Errorf("%s: empty list", c.path)
				}
			}
		} else if v["retCode"] != float64(10001) {
			t.Errorf("%s: retCode %v", c.path, v["retCode"])
		}
	}
}

func TestWSShapes(t *testing.T) {
	h := newHarness(t, func(c *Config) {})
	h.live(t)
	for _, c := range []struct {
		category, topic, snapshot, delta string
	}{
		{"linear", "orderbook.50.BTCUSDT", "ws_orderbook", "ws_orderbook"},
		{"spot", "orderbook.1.BTCUSDT", "ws_orderbook", "ws_orderbook"},
		{"linear", "publicTrade.BTCUSDT", "ws_public_trade", ""},
		{"linear", "tickers.BTCUSDT", "ws_tickers_linear_snapshot", "ws_tickers_linear_snapshot"},
		{"spot", "tickers.BTCUSDT", "ws_tickers_spot", ""},
		{"linear", "kline.1.BTCUSDT", "ws_kline", ""},
	} {
		t.Run(c.topic+"/"+c.category, func(t *testing.T) {
			conn := h.dial(t, c.category)
			ack := conn.request(t, map[string]any{"op": "subscribe", "args": []string{c.topic}, "req_id": "7"})
			checkShape(t, "ws_op", ack)
			if ack["success"] != true || ack["req_id"] != "7" {
				t.Fatalf("ack %v", ack)
			}
			// The first message is a snapshot; topics with deltas are read until one arrives.
			first := conn.next(t, c.topic)
			if first["type"] != "snapshot" {
				t.Fatalf("first message %v", first)
			}
			checkShape(t, c.snapshot, first)
			for n := 0; c.delta != "" || n < 2; n++ {
				m := conn.next(t, c.topic)
				if m["type"] == "snapshot" {
					checkShape(t, c.snapshot, m)
					continue
				}
				if m["type"] != "delta" || c.delta == "" {
					t.Fatalf("%s: unexpected %v", c.topic, m)
				}
				checkSubset(t, c.delta, m) // a delta carries a subset of the snapshot's keys
				break
			}
		})
	}
	conn := h.dial(t, "linear")
	checkShape(t, "ws_op", conn.request(t, map[string]any{"op": "ping", "req_id": "p1"}))
	bad := conn.request(t, map[string]any{"op": "subscribe", "args": []string{"invalid.topic.BTCUSDT"}})
	checkShape(t, "ws_op", bad)
	if bad["success"] != false || !strings.Contains(fmt.Sprint(bad["ret_msg"]), "invalid.topic.BTCUSDT") {
		t.Errorf("bad topic: %v", bad)
	}
}

// checkSubset checks a delta message: every key it has is in the description with its type.
func checkSubset(t *testing.T, name string, v map[string]any) {
	t.Helper()
	d := loadShape(t, name).(map[string]any)
	relaxed := map[string]any{}
	for k, sub := range d {
		name, _ := strings.CutPrefix(k, "?")
		if name == "data" {
			if obj, ok := sub.(map[string]any); ok {
				inner := map[string]any{}
				for k2, s2 := range obj {
					n2, _ := strings.CutPrefix(k2, "?")
					inner["?"+n2] = s2
				}
				sub = inner
			}
		}
		relaxed["?"+name] = sub
	}
	for _, e := range conform(name+" (delta)", v, relaxed) {
		t.Error(e)
	}
}

// wsClient is a test WebSocket client.
type wsClient struct {
	c   *websocket.Conn
	ctx context.Context
}

func (h *harness) dial(t *testing.T, category string) *wsClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(h.ts.URL, "http")+"/v5/public/"+category, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return &wsClient{c: c, ctx: ctx}
}

func (w *wsClient) read(t *testing.T) map[string]any {
	t.Helper()
	_, b, err := w.c.Read(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// request sends an op and returns its answer (topic messages in between are skipped).
func (w *wsClient) request(t *testing.T, req map[string]any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(req)
	if err := w.c.Write(w.ctx, websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
	for {
		m := w.read(t)
		if _, ok := m["op"]; ok {
			return m
		}
	}
}

// next returns the next message of a topic.
func (w *wsClient) next(t *testing.T, topic string) map[string]any {
	t.Helper()
	for {
		m := w.read(t)
		if m["topic"] == topic {
			return m
		}
	}
}
