package emulator

import (
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

type env[T any] struct {
	RetCode int    `json:"retCode"`
	RetMsg  string `json:"retMsg"`
	Result  T      `json:"result"`
	Time    int64  `json:"time"`
}

type page[T any] struct {
	List           []T    `json:"list"`
	NextPageCursor string `json:"nextPageCursor"`
}

func TestInstrumentPages(t *testing.T) {
	h := newHarness(t)
	var all env[page[map[string]any]]
	h.getJSON("/v5/market/instruments-info?category=linear&limit=1000", &all)
	if all.RetCode != 0 || len(all.Result.List) < 10 || all.Result.NextPageCursor != "" {
		t.Fatalf("one page: %d rows, cursor %q", len(all.Result.List), all.Result.NextPageCursor)
	}
	var got []string
	cursor := ""
	for n := 0; n < 100; n++ {
		var p env[page[map[string]any]]
		h.getJSON("/v5/market/instruments-info?category=linear&limit=7&cursor="+url.QueryEscape(cursor), &p)
		if p.RetCode != 0 || len(p.Result.List) > 7 {
			t.Fatalf("page %d: %+v", n, p)
		}
		for _, r := range p.Result.List {
			got = append(got, r["symbol"].(string))
		}
		if cursor = p.Result.NextPageCursor; cursor == "" {
			break
		}
	}
	if len(got) != len(all.Result.List) {
		t.Fatalf("%d symbols in pages of 7, %d in one", len(got), len(all.Result.List))
	}
	for i, r := range all.Result.List {
		if r["symbol"] != got[i] || r["status"] != "Trading" || r["contractType"] != "LinearPerpetual" {
			t.Fatalf("row %d: %v vs %s", i, r, got[i])
		}
	}
	var bad env[map[string]any]
	h.getJSON("/v5/market/instruments-info?category=linear&cursor=nonsense", &bad)
	if bad.RetCode != 10001 {
		t.Errorf("bad cursor: %+v", bad)
	}
	h.getJSON("/v5/market/instruments-info", &bad)
	if bad.RetCode != 10001 {
		t.Errorf("no category: %+v", bad)
	}
}

func TestKlineWindow(t *testing.T) {
	h := newHarness(t)
	var newest env[struct {
		List [][]string `json:"list"`
	}]
	h.getJSON("/v5/market/kline?category=spot&symbol=BTCUSDT&interval=1&limit=3", &newest)
	if newest.RetCode != 0 || len(newest.Result.List) != 3 {
		t.Fatalf("%+v", newest)
	}
	top, _ := strconv.ParseInt(newest.Result.List[0][0], 10, 64)
	end := top - 10*60_000
	start := end - 100*60_000
	var w env[struct {
		List [][]string `json:"list"`
	}]
	h.getJSON("/v5/market/kline?category=spot&symbol=BTCUSDT&interval=1&limit=20&start="+strconv.FormatInt(start, 10)+"&end="+strconv.FormatInt(end, 10), &w)
	if len(w.Result.List) != 20 || w.Result.List[0][0] != strconv.FormatInt(end, 10) || w.Result.List[19][0] != strconv.FormatInt(end-19*60_000, 10) {
		t.Fatalf("window: newest first from end, got %v..%v (%d)", w.Result.List[0][0], w.Result.List[len(w.Result.List)-1][0], len(w.Result.List))
	}
	h.getJSON("/v5/market/kline?category=spot&symbol=BTCUSDT&interval=1&limit=1000&start="+strconv.FormatInt(end-5*60_000, 10)+"&end="+strconv.FormatInt(end, 10), &w)
	if len(w.Result.List) != 6 {
		t.Fatalf("start bounds the window: %d rows", len(w.Result.List))
	}
	// The default category is linear.
	var lin env[struct {
		Category string `json:"category"`
	}]
	h.getJSON("/v5/market/kline?symbol=BTCUSDT&interval=D&limit=2", &lin)
	if lin.RetCode != 0 || lin.Result.Category != "linear" {
		t.Fatalf("default category: %+v", lin)
	}
}

func TestAnalyticsCursorAndFunding(t *testing.T) {
	h := newHarness(t)
	seen := map[string]bool{}
	var prev int64
	cursor := ""
	for n := 0; n < 3; n++ {
		var p env[page[map[string]string]]
		h.getJSON("/v5/market/open-interest?category=linear&symbol=ETHUSDT&intervalTime=5min&limit=4&cursor="+url.QueryEscape(cursor), &p)
		if p.RetCode != 0 || len(p.Result.List) != 4 || p.Result.NextPageCursor == "" {
			t.Fatalf("page %d: %+v", n, p)
		}
		for _, r := range p.Result.List {
			ts, _ := strconv.ParseInt(r["timestamp"], 10, 64)
			if seen[r["timestamp"]] || (prev != 0 && ts != prev-300_000) {
				t.Fatalf("page %d: %s after %d", n, r["timestamp"], prev)
			}
			seen[r["timestamp"]], prev = true, ts
		}
		cursor = p.Result.NextPageCursor
	}
	var ar env[page[map[string]string]]
	h.getJSON("/v5/market/account-ratio?category=linear&symbol=ETHUSDT&period=1d&limit=2", &ar)
	for _, r := range ar.Result.List {
		b, s := decimal.RequireFromString(r["buyRatio"]), decimal.RequireFromString(r["sellRatio"])
		if !b.Add(s).Equal(decimal.NewFromInt(1)) {
			t.Errorf("ratios %v", r)
		}
	}
	var f env[map[string]any]
	h.getJSON("/v5/market/funding/history?category=linear&symbol=ETHUSDT&startTime=1", &f)
	if f.RetCode != 10001 {
		t.Errorf("startTime without endTime: %+v", f)
	}
	h.getJSON("/v5/market/funding/history?category=spot&symbol=ETHUSDT", &f)
	if f.RetCode != 10001 {
		t.Errorf("spot funding: %+v", f)
	}
}

// TestIPLimit: 600 requests per IP in a 5 s window, then HTTP 403 until the next window.
func TestIPLimit(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.DisableRateLimits = false })
	now := time.Unix(1_000_000, 0)
	var mu sync.Mutex
	h.s.limits.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	get := func() int {
		resp, err := http.Get(h.ts.URL + "/v5/market/time")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for i := range ipLimit {
		if st := get(); st != http.StatusOK {
			t.Fatalf("request %d: HTTP %d", i, st)
		}
	}
	if st := get(); st != http.StatusForbidden {
		t.Fatalf("request %d: HTTP %d, want 403", ipLimit+1, st)
	}
	mu.Lock()
	now = now.Add(limitWindow)
	mu.Unlock()
	if st := get(); st != http.StatusOK {
		t.Fatalf("next window: HTTP %d", st)
	}
}

// TestWSBookDeltas follows orderbook.50: u grows by one per message, and the book built from the snapshot and the
// deltas keeps at most 50 levels a side, best first, never crossed.
func TestWSBookDeltas(t *testing.T) {
	h := newHarness(t)
	h.live(t)
	conn := h.dial(t, "linear")
	if a := conn.request(t, map[string]any{"op": "subscribe", "args": []string{"orderbook.50.BTCUSDT"}}); a["success"] != true {
		t.Fatalf("ack %v", a)
	}
	bids, asks := map[string]decimal.Decimal{}, map[string]decimal.Decimal{}
	apply := func(m map[string]decimal.Decimal, rows []any) {
		for _, r := range rows {
			x := r.([]any)
			q := decimal.RequireFromString(x[1].(string))
			if q.IsZero() {
				if _, ok := m[x[0].(string)]; !ok {
					t.Fatalf("delete of an unknown level %v", x)
				}
				delete(m, x[0].(string))
			} else {
				m[x[0].(string)] = q
			}
		}
	}
	var u float64
	deltas := 0
	for deltas < 5 {
		m := conn.next(t, "orderbook.50.BTCUSDT")
		d := m["data"].(map[string]any)
		if m["type"] == "snapshot" {
			clear(bids)
			clear(asks)
		} else if d["u"].(float64) != u+1 {
			t.Fatalf("u %v after %v", d["u"], u)
		} else {
			deltas++
		}
		u = d["u"].(float64)
		apply(bids, d["b"].([]any))
		apply(asks, d["a"].([]any))
		if len(bids) > 50 || len(asks) > 50 {
			t.Fatalf("%d bids, %d asks in a book of 50", len(bids), len(asks))
		}
		best := func(m map[string]decimal.Decimal, hi bool) decimal.Decimal {
			var b decimal.Decimal
			first := true
			for p := range m {
				x := decimal.RequireFromString(p)
				if first || (hi && x.GreaterThan(b)) || (!hi && x.LessThan(b)) {
					b, first = x, false
				}
			}
			return b
		}
		if len(bids) > 0 && len(asks) > 0 && !best(bids, true).LessThan(best(asks, false)) {
			t.Fatalf("crossed book after u %v", u)
		}
	}
}

// TestWSOps: more than 10 topics in one spot request is refused, unsubscribing an unknown topic is refused, and
// an unknown op is answered with success false.
func TestWSOps(t *testing.T) {
	h := newHarness(t)
	conn := h.dial(t, "spot")
	args := make([]string, 11)
	for i := range args {
		args[i] = "publicTrade.BTCUSDT"
	}
	if a := conn.request(t, map[string]any{"op": "subscribe", "args": args}); a["success"] != false {
		t.Errorf("11 args on spot: %v", a)
	}
	if a := conn.request(t, map[string]any{"op": "unsubscribe", "args": []string{"tickers.BTCUSDT"}}); a["success"] != false {
		t.Errorf("unsubscribe of a topic not subscribed: %v", a)
	}
	if a := conn.request(t, map[string]any{"op": "subscribe", "args": []string{"orderbook.7.BTCUSDT", "kline.2.BTCUSDT", "tickers.NOPE"}}); a["success"] != false {
		t.Errorf("unknown depth, interval and symbol: %v", a)
	}
	if a := conn.request(t, map[string]any{"op": "dance"}); a["success"] != false || a["op"] != "dance" {
		t.Errorf("unknown op: %v", a)
	}
	if a := conn.request(t, map[string]any{"op": "subscribe", "args": []string{"tickers.BTCUSDT"}}); a["success"] != true {
		t.Errorf("subscribe: %v", a)
	}
	if a := conn.request(t, map[string]any{"op": "unsubscribe", "args": []string{"tickers.BTCUSDT"}}); a["success"] != true {
		t.Errorf("unsubscribe: %v", a)
	}
}
