package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
	"github.com/exhub/exhub/plugin-sdk/faults"
)

type answer struct {
	RetCode int             `json:"retCode"`
	RetMsg  string          `json:"retMsg"`
	Result  json.RawMessage `json:"result"`
	Ext     json.RawMessage `json:"retExtInfo"`
	Time    int64           `json:"time"`
}

// signed sends a request signed with key/secret at the venue's clock plus skew; body is a POST's JSON.
func (h *harness) signed(t *testing.T, method, path string, q url.Values, body any, key, secret string, skew time.Duration) (answer, error) {
	t.Helper()
	var raw []byte
	if body != nil {
		raw, _ = json.Marshal(body)
	}
	target := h.ts.URL + path
	payload := string(raw)
	if method == http.MethodGet {
		payload = q.Encode()
		if payload != "" {
			target += "?" + payload
		}
	}
	req, _ := http.NewRequest(method, target, bytes.NewReader(raw))
	ts := strconv.FormatInt(h.v.Now()+skew.Milliseconds(), 10)
	req.Header.Set("X-BAPI-API-KEY", key)
	req.Header.Set("X-BAPI-TIMESTAMP", ts)
	req.Header.Set("X-BAPI-RECV-WINDOW", "5000")
	req.Header.Set("X-BAPI-SIGN", Sign(secret, ts, key, "5000", payload))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var a answer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("%s %s: %v: %s", method, path, err, b)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: HTTP %d", method, path, resp.StatusCode)
	}
	return a, nil
}

func (h *harness) demo(t *testing.T, method, path string, q url.Values, body any) answer {
	t.Helper()
	a, err := h.signed(t, method, path, q, body, DemoAPIKey, DemoAPISecret, 0)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestSignatureChecks: Bybit's refusals of a request it cannot authenticate, each with its retCode.
func TestSignatureChecks(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.Credentials = []Credentials{{APIKey: "ro-key", Secret: "ro-secret", Account: "bybit-ro", ReadOnly: true}}
	})
	q := url.Values{"category": {"spot"}}
	check := func(name string, a answer, err error, code int) {
		t.Helper()
		if err != nil || a.RetCode != code {
			t.Errorf("%s: retCode %d (%s), err %v; want %d", name, a.RetCode, a.RetMsg, err, code)
		}
	}
	a, err := h.signed(t, http.MethodGet, "/v5/order/realtime", q, nil, DemoAPIKey, DemoAPISecret, 0)
	check("good signature", a, err, 0)
	a, err = h.signed(t, http.MethodGet, "/v5/order/realtime", q, nil, DemoAPIKey, "wrong-secret", 0)
	check("wrong secret", a, err, 10004)
	a, err = h.signed(t, http.MethodGet, "/v5/order/realtime", q, nil, "no-such-key", DemoAPISecret, 0)
	check("unknown key", a, err, 10003)
	a, err = h.signed(t, http.MethodGet, "/v5/order/realtime", q, nil, DemoAPIKey, DemoAPISecret, -time.Minute)
	check("timestamp older than the recv window", a, err, 10002)
	a, err = h.signed(t, http.MethodGet, "/v5/order/realtime", q, nil, DemoAPIKey, DemoAPISecret, 10*time.Second)
	check("timestamp in the future", a, err, 10002)
	a, err = h.signed(t, http.MethodPost, "/v5/order/cancel-all", nil, obj{"category": "spot"}, "ro-key", "ro-secret", 0)
	check("read-only key trading", a, err, 10005)
	// No headers at all.
	resp, err := http.Get(h.ts.URL + "/v5/order/realtime?category=spot")
	if err != nil {
		t.Fatal(err)
	}
	var bare answer
	_ = json.NewDecoder(resp.Body).Decode(&bare)
	resp.Body.Close()
	check("unsigned", bare, nil, 10001)
	// The body is what is signed: a body changed after signing is refused.
	body := `{"category":"spot","symbol":"BTCUSDT"}`
	ts := strconv.FormatInt(h.v.Now(), 10)
	req, _ := http.NewRequest(http.MethodPost, h.ts.URL+"/v5/order/cancel-all", bytes.NewReader([]byte(body+" ")))
	req.Header.Set("X-BAPI-API-KEY", DemoAPIKey)
	req.Header.Set("X-BAPI-TIMESTAMP", ts)
	req.Header.Set("X-BAPI-RECV-WINDOW", "5000")
	req.Header.Set("X-BAPI-SIGN", Sign(DemoAPISecret, ts, DemoAPIKey, "5000", body))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var tampered answer
	_ = json.NewDecoder(resp.Body).Decode(&tampered)
	resp.Body.Close()
	check("tampered body", tampered, nil, 10004)
}

func orderRows(t *testing.T, a answer) []map[string]any {
	t.Helper()
	var r struct {
		List []map[string]any `json:"list"`
	}
	if a.RetCode != 0 || json.Unmarshal(a.Result, &r) != nil {
		t.Fatalf("answer: %d %s %s", a.RetCode, a.RetMsg, a.Result)
	}
	return r.List
}

func (h *harness) bid(t *testing.T, id string) decimal.Decimal {
	t.Helper()
	h.live(t)
	b, err := h.v.BookSnapshot(id, 1)
	if err != nil || len(b.Bids) == 0 {
		t.Fatalf("book of %s: %v", id, err)
	}
	return b.Bids[0].Price
}

// TestOrderLifecycle: create answers only the ids; the order reads back from order/realtime in Bybit's shape
// (strings for numbers and times), is found by orderLinkId, refuses a second create with the same orderLinkId,
// amends, cancels and then shows in openOnly=1 and order/history.
func TestOrderLifecycle(t *testing.T) {
	h := newHarness(t)
	price := h.bid(t, "BTC/USDT").Mul(decimal.RequireFromString("0.8")).Floor()
	create := obj{"category": "spot", "symbol": "BTCUSDT", "side": "Buy", "orderType": "Limit", "qty": "0.001",
		"price": price.String(), "timeInForce": "GTC", "orderLinkId": "life-1"}
	a := h.demo(t, http.MethodPost, "/v5/order/create", nil, create)
	var ack map[string]string
	if a.RetCode != 0 || json.Unmarshal(a.Result, &ack) != nil || ack["orderId"] == "" || ack["orderLinkId"] != "life-1" || len(ack) != 2 {
		t.Fatalf("create: %d %s %s", a.RetCode, a.RetMsg, a.Result)
	}
	if d := h.demo(t, http.MethodPost, "/v5/order/create", nil, create); d.RetCode != 170141 {
		t.Fatalf("duplicate orderLinkId: %d %s", d.RetCode, d.RetMsg)
	}
	rows := orderRows(t, h.demo(t, http.MethodGet, "/v5/order/realtime", url.Values{"category": {"spot"}, "orderLinkId": {"life-1"}}, nil))
	if len(rows) != 1 {
		t.Fatalf("realtime by orderLinkId: %v", rows)
	}
	r := rows[0]
	for _, f := range []string{"orderId", "price", "qty", "cumExecQty", "createdTime", "updatedTime", "leavesQty"} {
		if _, ok := r[f].(string); !ok {
			t.Errorf("%s is %T, want a string", f, r[f])
		}
	}
	if r["orderStatus"] != "New" || r["orderId"] != ack["orderId"] || r["positionIdx"] != float64(0) || r["reduceOnly"] != false {
		t.Fatalf("row: %v", r)
	}
	newPrice := price.Sub(decimal.NewFromInt(1))
	if a := h.demo(t, http.MethodPost, "/v5/order/amend", nil, obj{"category": "spot", "symbol": "BTCUSDT", "orderLinkId": "life-1",
		"price": newPrice.String()}); a.RetCode != 0 {
		t.Fatalf("amend: %d %s", a.RetCode, a.RetMsg)
	}
	if a := h.demo(t, http.MethodPost, "/v5/order/cancel", nil, obj{"category": "spot", "symbol": "BTCUSDT", "orderId": ack["orderId"]}); a.RetCode != 0 {
		t.Fatalf("cancel: %d %s", a.RetCode, a.RetMsg)
	}
	if a := h.demo(t, http.MethodPost, "/v5/order/cancel", nil, obj{"category": "spot", "symbol": "BTCUSDT", "orderId": ack["orderId"]}); a.RetCode != 170213 {
		t.Fatalf("cancel again: %d %s", a.RetCode, a.RetMsg)
	}
	if rows := orderRows(t, h.demo(t, http.MethodGet, "/v5/order/realtime", url.Values{"category": {"spot"}, "orderLinkId": {"life-1"}}, nil)); len(rows) != 0 {
		t.Fatalf("a cancelled order among the open ones: %v", rows)
	}
	closed := orderRows(t, h.demo(t, http.MethodGet, "/v5/order/realtime", url.Values{"category": {"spot"}, "openOnly": {"1"}, "orderLinkId": {"life-1"}}, nil))
	hist := orderRows(t, h.demo(t, http.MethodGet, "/v5/order/history", url.Values{"category": {"spot"}, "orderLinkId": {"life-1"}}, nil))
	if len(closed) != 1 || len(hist) != 1 || hist[0]["orderStatus"] != "Cancelled" || hist[0]["price"] != newPrice.String() {
		t.Fatalf("closed %v history %v", closed, hist)
	}
	// A linear symbol read as spot is another order book: not found there.
	if a := h.demo(t, http.MethodPost, "/v5/order/cancel", nil, obj{"category": "linear", "symbol": "BTCUSDT", "orderLinkId": "life-1"}); a.RetCode != 110001 {
		t.Fatalf("cancel in the other category: %d %s", a.RetCode, a.RetMsg)
	}
}

// TestSpotMarketUnit: a spot market buy without marketUnit is sized in the quote coin (Bybit's default), with
// marketUnit baseCoin in the base coin.
func TestSpotMarketUnit(t *testing.T) {
	h := newHarness(t)
	h.live(t)
	for _, c := range []struct {
		unit, qty string
		check     func(o venue.Order) bool
	}{
		{"", "20", func(o venue.Order) bool {
			return o.CumQuote.LessThanOrEqual(decimal.NewFromInt(20)) && o.CumQuote.GreaterThan(decimal.NewFromInt(19))
		}},
		{"baseCoin", "0.001", func(o venue.Order) bool { return o.Filled.Equal(decimal.RequireFromString("0.001")) }},
	} {
		link := "unit-" + c.unit + "x"
		body := obj{"category": "spot", "symbol": "BTCUSDT", "side": "Buy", "orderType": "Market", "qty": c.qty, "orderLinkId": link}
		if c.unit != "" {
			body["marketUnit"] = c.unit
		}
		if a := h.demo(t, http.MethodPost, "/v5/order/create", nil, body); a.RetCode != 0 {
			t.Fatalf("%q: %d %s", c.unit, a.RetCode, a.RetMsg)
		}
		o, err := h.v.GetOrder(DemoAccount, 0, link)
		if err != nil || o.Status != venue.StatusFilled || !c.check(o) {
			t.Fatalf("marketUnit %q: %v %+v", c.unit, err, o)
		}
	}
}

// TestFaults: an armed orderLinkId loses the answer: accept_then_error executes and answers 10000, drop_before
// never executes.
func TestFaults(t *testing.T) {
	h := newHarness(t)
	price := h.bid(t, "BTC/USDT").Mul(decimal.RequireFromString("0.8")).Floor()
	for _, c := range []struct {
		kind faults.Kind
		link string
	}{{faults.AcceptThenError, "fault-e"}, {faults.DropBefore, "fault-d"}, {faults.AcceptThenDrop, "fault-a"}} {
		if err := faults.Arm(nil, h.ts.URL, c.link, c.kind); err != nil {
			t.Fatal(err)
		}
		a, err := h.signed(t, http.MethodPost, "/v5/order/create", nil, obj{"category": "spot", "symbol": "BTCUSDT", "side": "Buy",
			"orderType": "Limit", "qty": "0.001", "price": price.String(), "orderLinkId": c.link}, DemoAPIKey, DemoAPISecret, 0)
		switch c.kind {
		case faults.AcceptThenError:
			if err != nil || a.RetCode != 10000 {
				t.Fatalf("%s: %v %d", c.kind, err, a.RetCode)
			}
		default:
			if err == nil {
				t.Fatalf("%s: an answer came back: %d", c.kind, a.RetCode)
			}
		}
		_, err = h.v.GetOrder(DemoAccount, 0, c.link)
		if (err == nil) != c.kind.Executes() {
			t.Fatalf("%s: order on the venue: %v", c.kind, err)
		}
		if err == nil {
			_, _ = h.v.CancelAll(context.Background(), DemoAccount, "BTC/USDT")
		}
	}
}

// TestPrivateShapes checks the private answers against descriptions written from Bybit's samples (order create,
// order/realtime, position/list; execution/list from its documentation): every key Bybit sends, no other.
func TestPrivateShapes(t *testing.T) {
	h := newHarness(t)
	h.live(t)
	var raw map[string]any
	decode := func(a answer) map[string]any {
		b, _ := json.Marshal(a)
		raw = nil
		_ = json.Unmarshal(b, &raw)
		return raw
	}
	ack := h.demo(t, http.MethodPost, "/v5/order/create", nil, obj{"category": "linear", "symbol": "BTCUSDT", "side": "Buy",
		"orderType": "Market", "qty": "0.01", "orderLinkId": "shape-1"})
	checkShape(t, "order_create", decode(ack))
	for _, c := range []struct {
		shape, path string
		q           url.Values
	}{
		{"order_realtime", "/v5/order/realtime", url.Values{"category": {"linear"}, "symbol": {"BTCUSDT"}, "openOnly": {"1"}, "orderLinkId": {"shape-1"}}},
		{"order_realtime", "/v5/order/history", url.Values{"category": {"linear"}, "orderLinkId": {"shape-1"}}},
		{"execution_list", "/v5/execution/list", url.Values{"category": {"linear"}, "orderLinkId": {"shape-1"}}},
		{"position_list", "/v5/position/list", url.Values{"category": {"linear"}, "symbol": {"BTCUSDT"}}},
	} {
		a := h.demo(t, http.MethodGet, c.path, c.q, nil)
		if len(orderRows(t, a)) == 0 {
			t.Fatalf("%s: no rows to check", c.path)
		}
		checkShape(t, c.shape, decode(a))
	}
	lev := h.demo(t, http.MethodPost, "/v5/position/set-leverage", nil, obj{"category": "linear", "symbol": "BTCUSDT", "buyLeverage": "7", "sellLeverage": "7"})
	checkShape(t, "private_empty", decode(lev))
	if again := h.demo(t, http.MethodPost, "/v5/position/set-leverage", nil, obj{"category": "linear", "symbol": "BTCUSDT", "buyLeverage": "7", "sellLeverage": "7"}); again.RetCode != 110043 {
		t.Fatalf("the same leverage again: %d %s", again.RetCode, again.RetMsg)
	}
	_ = h.demo(t, http.MethodPost, "/v5/order/create", nil, obj{"category": "linear", "symbol": "BTCUSDT", "side": "Sell",
		"orderType": "Market", "qty": "0.01", "reduceOnly": true, "orderLinkId": "shape-2"})
}
