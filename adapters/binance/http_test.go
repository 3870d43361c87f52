package binance

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

func TestErrorMapping(t *testing.T) {
	cases := []struct {
		status int
		body   string
		want   exchangev1.ErrorReason
	}{
		{400, `{"code":-1121,"msg":"Invalid symbol."}`, exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND},
		{400, `{"code":-2010,"msg":"Account has insufficient balance for requested action."}`, exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS},
		{400, `{"code":-2010,"msg":"Duplicate order sent."}`, exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID},
		{400, `{"code":-2011,"msg":"Unknown order sent."}`, exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND},
		{400, `{"code":-2013,"msg":"Order does not exist."}`, exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND},
		{400, `{"code":-2019,"msg":"Margin is insufficient."}`, exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS},
		{400, `{"code":-2022,"msg":"ReduceOnly Order is rejected."}`, exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED},
		{400, `{"code":-4061,"msg":"Order's position side does not match user's setting."}`, exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH},
		{400, `{"code":-4116,"msg":"ClientOrderId is duplicated."}`, exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID},
		{400, `{"code":-1013,"msg":"Filter failure: LOT_SIZE"}`, exchangev1.ErrorReason_ERROR_REASON_PRECISION},
		{400, `{"code":-4014,"msg":"Price not increased by tick size."}`, exchangev1.ErrorReason_ERROR_REASON_PRECISION},
		{400, `{"code":-1102,"msg":"Mandatory parameter 'side' was not sent."}`, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT},
		{401, `{"code":-2015,"msg":"Invalid API-key, IP, or permissions for action."}`, exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED},
		{400, `{"code":-2014,"msg":"API-key format invalid."}`, exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED},
		{401, `{"code":-1002,"msg":"You are not authorized to execute this request."}`, exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED},
		{400, `{"code":-1021,"msg":"Timestamp for this request is outside of the recvWindow."}`, exchangev1.ErrorReason_ERROR_REASON_CLOCK_SKEW},
		{408, `{"code":-1007,"msg":"Timeout waiting for response from backend server. Send status unknown; execution status unknown."}`, exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME},
		{500, `{"code":-1006,"msg":"An unexpected response was received from the message bus. Execution status unknown."}`, exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME},
		{400, `{"code":-4168,"msg":"Unable to adjust to isolated-margined mode under the Multi-Assets mode."}`, exchangev1.ErrorReason_ERROR_REASON_ACCOUNT_MODE_MISMATCH},
		{400, `{"code":-4061,"msg":"Order's position side does not match user's setting."}`, exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH},
		{400, `{"code":-1022,"msg":"Signature for this request is not valid."}`, exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED},
		{429, `{"code":-1003,"msg":"Too many requests."}`, exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED},
		{418, `{"code":-1003,"msg":"Way too many requests; IP banned."}`, exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED},
		{503, `<html>Service Unavailable</html>`, exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE},
		{403, ``, exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE},
		{400, `{"code":-5022,"msg":"Due to the order could not be executed as maker, the Post Only order will be rejected."}`, exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED},
		{400, `{"code":-1020,"msg":"This operation is not supported."}`, exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED},
		{400, `{"code":-3041,"msg":"Balance is not enough"}`, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT},
	}
	for _, c := range cases {
		h := http.Header{}
		h.Set("Retry-After", "7")
		e := parseAPIError(c.status, []byte(c.body), h).ToSDK()
		if e.Detail.Reason != c.want {
			t.Errorf("%d %s: reason %v, want %v", c.status, c.body, e.Detail.Reason, c.want)
		}
		if strings.HasPrefix(c.body, "{") && (e.Detail.ExchangeCode == "" || e.Detail.ExchangeMessage == "") {
			t.Errorf("%s: raw code/message lost: %+v", c.body, e.Detail)
		}
		if c.want == exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED && e.Detail.RetryAfterMs != 7000 {
			t.Errorf("%s: retry after %d", c.body, e.Detail.RetryAfterMs)
		}
	}
}

func TestLimiterWaitsAndBans(t *testing.T) {
	l := newWeightLimiter(10)
	now := time.Unix(1_000_000*60+59, 0)
	l.now = func() time.Time { return now }
	ctx := context.Background()
	if err := l.acquire(ctx, 8); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	err := l.acquire(short, 5)
	if d := sdk.DetailOf(err); d.GetReason() != exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED || d.RetryAfterMs != 1000 {
		t.Fatalf("spent budget: %v", err)
	}
	now = now.Add(time.Second) // a new minute: budget back
	if err := l.acquire(ctx, 10); err != nil {
		t.Fatal(err)
	}
	l.observe(3)
	if used, _ := l.state(); used != 3 {
		t.Fatalf("header must win: used %d", used)
	}
	l.ban(30 * time.Second)
	if err := l.acquire(ctx, 1); sdk.DetailOf(err).GetRetryAfterMs() != 30000 {
		t.Fatalf("banned: %v", err)
	}
}

func TestRESTClientSignsAndHandles429(t *testing.T) {
	var calls, timeCalls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v3/time":
			timeCalls.Add(1)
			w.Write([]byte(`{"serverTime":` + itoa(time.Now().Add(time.Hour).UnixMilli()) + `}`))
		case "/api/v3/account":
			calls.Add(1)
			raw := r.URL.RawQuery
			i := strings.LastIndex(raw, "&signature=")
			if i < 0 || Sign("sec", raw[:i]) != raw[i+len("&signature="):] || r.Header.Get("X-MBX-APIKEY") != "key" {
				w.WriteHeader(400)
				w.Write([]byte(`{"code":-1022,"msg":"Signature for this request is not valid."}`))
				return
			}
			ts, _ := url.ParseQuery(raw)
			ms := ts.Get("timestamp")
			if ms == "" || ts.Get("recvWindow") != "5000" {
				w.WriteHeader(400)
				return
			}
			// The client must be on server time (one hour ahead of the local clock).
			if n := atoi(ms); n < time.Now().Add(59*time.Minute).UnixMilli() {
				w.WriteHeader(400)
				w.Write([]byte(`{"code":-1021,"msg":"Timestamp for this request is outside of the recvWindow."}`))
				return
			}
			w.Header().Set("X-MBX-USED-WEIGHT-1M", "42")
			w.Write([]byte(`{"balances":[]}`))
		case "/api/v3/depth":
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(429)
			w.Write([]byte(`{"code":-1003,"msg":"Too many requests."}`))
		}
	}))
	defer srv.Close()
	c := NewRESTClient(Endpoints{SpotREST: srv.URL, FuturesREST: srv.URL}, 5*time.Second, DefaultRecvWindow, nil)
	ctx := context.Background()
	if _, err := c.signed(ctx, Spot, http.MethodGet, pathSpotAccount, url.Values{"omitZeroBalances": {"true"}}, 20, Credentials{"key", "sec"}); err != nil {
		t.Fatal(err)
	}
	if used, _ := c.limiters[Spot].state(); used != 42 {
		t.Fatalf("used weight header not applied: %d", used)
	}
	_, err := c.signed(ctx, Spot, http.MethodGet, pathSpotAccount, nil, 20, Credentials{"key", "wrong"})
	var se *sdk.Error
	if !errors.As(err, &se) || se.Detail.Reason != exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED || se.Detail.ExchangeCode != "-1022" {
		t.Fatalf("bad secret: %v", err)
	}
	if _, err := c.signed(ctx, Spot, http.MethodGet, pathSpotAccount, nil, 20, Credentials{}); sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED {
		t.Fatalf("missing credentials: %v", err)
	}
	_, err = c.get(ctx, Spot, pathSpotDepth, nil, 5)
	if d := sdk.DetailOf(err); d.GetReason() != exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED || d.RetryAfterMs != 3000 {
		t.Fatalf("429: %v", err)
	}
	before := calls.Load()
	_, err = c.signed(ctx, Spot, http.MethodGet, pathSpotAccount, nil, 20, Credentials{"key", "sec"})
	if sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED || calls.Load() != before {
		t.Fatalf("during a ban no request may leave: %v (calls %d -> %d)", err, before, calls.Load())
	}
	if timeCalls.Load() != 1 {
		t.Fatalf("server time measured %d times, want once", timeCalls.Load())
	}
}
