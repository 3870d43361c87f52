package bybit

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// TestSign checks the signature against vectors computed independently with openssl:
//
//	printf '%s' '1658384314791XXXXXXXXXX5000category=option&symbol=BTC-29JUL22-25000-C' |
//	  openssl dgst -sha256 -hmac XXXXXXXXXX
//	printf '%s' '1658385579423XXXXXXXXXX5000{"category": "option"}' | openssl dgst -sha256 -hmac XXXXXXXXXX
//	printf '%s' 'GET/realtime1662350400000' | openssl dgst -sha256 -hmac secret-x
//
// (the first two are the GET and POST examples of Bybit's v5 documentation: timestamp, key, recv window, payload).
func TestSign(t *testing.T) {
	cases := []struct{ got, want string }{
		{Sign("XXXXXXXXXX", "1658384314791", "XXXXXXXXXX", "5000", "category=option&symbol=BTC-29JUL22-25000-C"),
			"c00720f96c5934ca7057ac28ae65b823f83b8b67a8fe784e7795ca0fa3c148ec"},
		{Sign("XXXXXXXXXX", "1658385579423", "XXXXXXXXXX", "5000", `{"category": "option"}`),
			"fbb4648b585b3e62de2c4eaecc8f3b6066aa18e98cc300eaff4d87f15b55724a"},
		{WSAuthSign("secret-x", 1662350400000), "a2024178f0c9079f8493a3472c768ff2ca682def5bb2144056c2dbaf14e6d4b8"},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: %s, want %s", i, c.got, c.want)
		}
	}
}

// TestSignedRequests: a GET signs its query string exactly as sent, a POST its raw body; both carry the four
// X-BAPI headers with the recv window, and the timestamp follows the server-time offset.
func TestSignedRequests(t *testing.T) {
	creds := &Credentials{APIKey: "key-1", Secret: "secret-1"}
	var bad atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == pathMarketTime {
			_, _ = w.Write([]byte(`{"retCode":0,"retMsg":"OK","result":{"timeSecond":"4102444800","timeNano":"4102444800000000000"},"time":4102444800000}`))
			return
		}
		body, _ := io.ReadAll(r.Body)
		payload := string(body)
		if r.Method == http.MethodGet {
			payload = r.URL.RawQuery
		}
		h := r.Header
		if h.Get("X-BAPI-API-KEY") != "key-1" || h.Get("X-BAPI-RECV-WINDOW") != "5000" ||
			h.Get("X-BAPI-SIGN") != Sign("secret-1", h.Get("X-BAPI-TIMESTAMP"), "key-1", "5000", payload) {
			bad.Add(1)
			_, _ = w.Write([]byte(`{"retCode":10004,"retMsg":"error sign!","result":{},"time":1}`))
			return
		}
		at, _ := strconv.ParseInt(h.Get("X-BAPI-TIMESTAMP"), 10, 64)
		if d := at - 4102444800000; d < -60_000 || d > 60_000 {
			_, _ = w.Write([]byte(`{"retCode":10002,"retMsg":"invalid request, please check your server timestamp","result":{},"time":1}`))
			return
		}
		_, _ = w.Write([]byte(`{"retCode":0,"retMsg":"OK","result":{"orderId":"1","orderLinkId":"a"},"time":1}`))
	}))
	defer ts.Close()
	c := NewClient(ts.URL, 5*time.Second, nil)
	ctx := context.Background()
	// Our clock is far from the server's (year 2100): the first call gets 10002, re-reads the clock and succeeds.
	if _, err := c.PrivateGet(ctx, "/v5/order/realtime", map[string][]string{"category": {"spot"}, "symbol": {"BTCUSDT"}}, creds); err != nil {
		t.Fatalf("signed GET after a clock resync: %v", err)
	}
	if _, err := c.Write(ctx, "/v5/order/create", map[string]any{"category": "spot", "symbol": "BTCUSDT", "qty": "0.1"}, creds); err != nil {
		t.Fatalf("signed POST: %v", err)
	}
	if bad.Load() != 0 {
		t.Fatalf("%d requests with a wrong signature", bad.Load())
	}
}

// TestWriteOutcomes: a POST is sent once; a timeout code or a lost answer is UNKNOWN_OUTCOME, a refusal keeps its
// reason, and a connection that never opened did nothing.
func TestWriteOutcomes(t *testing.T) {
	var calls atomic.Int32
	var answer atomic.Value
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		switch a := answer.Load().(string); a {
		case "drop":
			conn, _, _ := http.NewResponseController(w).Hijack()
			_ = conn.Close()
		case "502":
			w.WriteHeader(http.StatusBadGateway)
		default:
			_, _ = w.Write([]byte(a))
		}
	}))
	defer ts.Close()
	c := NewClient(ts.URL, 5*time.Second, nil)
	creds := &Credentials{APIKey: "k", Secret: "s"}
	for _, tc := range []struct {
		answer string
		want   exchangev1.ErrorReason
	}{
		{`{"retCode":10000,"retMsg":"Server Timeout","result":{},"time":1}`, exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME},
		{`{"retCode":10016,"retMsg":"Internal System Error","result":{},"time":1}`, exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME},
		{"drop", exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME},
		{"502", exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME},
		{`{"retCode":10006,"retMsg":"Too many visits","result":{},"time":1}`, exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED},
		{`{"retCode":110007,"retMsg":"ab not enough for new order","result":{},"time":1}`, exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS},
		{`{"retCode":170131,"retMsg":"Insufficient balance.","result":{},"time":1}`, exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS},
		{`{"retCode":110072,"retMsg":"OrderLinkedID is duplicate","result":{},"time":1}`, exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID},
		{`{"retCode":10001,"retMsg":"position idx not match position mode","result":{},"time":1}`, exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH},
		{`{"retCode":10001,"retMsg":"params error: qty or price has too many decimals","result":{},"time":1}`, exchangev1.ErrorReason_ERROR_REASON_PRECISION},
	} {
		answer.Store(tc.answer)
		calls.Store(0)
		_, err := c.Write(context.Background(), "/v5/order/create", map[string]string{"orderLinkId": "x"}, creds)
		if got := reasonOf(err); got != tc.want || calls.Load() != 1 {
			t.Errorf("%s: %v after %d calls, want %v after 1 (%v)", tc.answer, got, calls.Load(), tc.want, err)
		}
	}
	// Nothing listens: the request never left.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c2 := NewClient("http://"+addr, 5*time.Second, nil)
	if _, err := c2.Write(context.Background(), "/v5/order/create", map[string]string{}, creds); reasonOf(err) != exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE {
		t.Fatalf("no connection: %v", err)
	}
}
