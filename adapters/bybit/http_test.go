package bybit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

func TestClientRetriesRateLimitAndTimeouts(t *testing.T) {
	var n atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) {
		case 1:
			_, _ = w.Write([]byte(`{"retCode":10006,"retMsg":"Too many visits","result":{},"time":1}`))
		case 2:
			_, _ = w.Write([]byte(`{"retCode":10000,"retMsg":"Server Timeout","result":{},"time":1}`))
		case 3:
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`access too frequent`))
		default:
			_, _ = w.Write([]byte(`{"retCode":0,"retMsg":"OK","result":{"timeSecond":"5","timeNano":"5000000000"},"time":5000}`))
		}
	}))
	defer ts.Close()
	c := NewClient(ts.URL, 5*time.Second, nil)
	c.BaseBackoff = time.Millisecond
	res, err := c.Get(context.Background(), pathMarketTime, nil)
	if err != nil || res.Time != 5000 || n.Load() != 4 {
		t.Fatalf("after three retries: %v %v (%d calls)", res, err, n.Load())
	}
	// Retries are bounded; the last error is kept, typed, with a retry hint.
	n.Store(0)
	c.MaxRetries = 0
	_, err = c.Get(context.Background(), pathMarketTime, nil)
	if d := sdk.DetailOf(err); d.GetReason() != exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED || d.GetExchangeCode() != "10006" || d.GetRetryAfterMs() <= 0 {
		t.Fatalf("rate limited: %v", d)
	}
	_, err = c.Get(context.Background(), pathMarketTime, nil)
	if d := sdk.DetailOf(err); d.GetReason() != exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE || d.GetExchangeCode() != "10000" {
		t.Fatalf("a read's server timeout is EXCHANGE_UNAVAILABLE, got %v", d)
	}
	_, err = c.Get(context.Background(), pathMarketTime, nil)
	if d := sdk.DetailOf(err); d.GetReason() != exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED || d.GetExchangeCode() != "403" {
		t.Fatalf("HTTP 403: %v", d)
	}
	// A parameter error is not retried.
	c.MaxRetries = 3
	var calls atomic.Int32
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		_, _ = w.Write([]byte(`{"retCode":10001,"retMsg":"params error: symbol invalid","result":{},"time":1}`))
	}))
	defer bad.Close()
	c2 := NewClient(bad.URL, 5*time.Second, nil)
	_, err = c2.Get(context.Background(), pathMarketKline, nil)
	if d := sdk.DetailOf(err); d.GetReason() != exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND || calls.Load() != 1 {
		t.Fatalf("params error: %v after %d calls", d, calls.Load())
	}
}

// TestLimitHeaders: when X-Bapi-Limit-Status reaches 0 the endpoint waits for X-Bapi-Limit-Reset-Timestamp.
func TestLimitHeaders(t *testing.T) {
	l := newLimiter()
	now := time.Unix(1000, 0)
	l.now = func() time.Time { return now }
	h := http.Header{}
	h.Set("X-Bapi-Limit", "10")
	h.Set("X-Bapi-Limit-Status", "3")
	h.Set("X-Bapi-Limit-Reset-Timestamp", strconv.FormatInt(now.Add(2*time.Second).UnixMilli(), 10))
	l.observe("/p", h)
	if len(l.blocked) != 0 {
		t.Fatal("blocked with quota left")
	}
	h.Set("X-Bapi-Limit-Status", "0")
	l.observe("/p", h)
	if got := l.blocked["/p"]; !got.Equal(now.Add(2 * time.Second)) {
		t.Fatalf("blocked until %v", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.wait(ctx, "/p"); err == nil {
		t.Fatal("a blocked endpoint went at once")
	}
	if err := l.wait(ctx, "/other"); err != nil {
		t.Fatalf("another endpoint is not blocked: %v", err)
	}
	now = now.Add(2 * time.Second)
	if err := l.wait(ctx, "/p"); err != nil {
		t.Fatalf("after the reset: %v", err)
	}
	// A reset far away is bounded to a minute.
	h.Set("X-Bapi-Limit-Reset-Timestamp", strconv.FormatInt(now.Add(time.Hour).UnixMilli(), 10))
	l.observe("/p", h)
	if got := l.blocked["/p"]; !got.Equal(now.Add(time.Minute)) {
		t.Fatalf("bounded: %v", got)
	}
}

// TestIPLimit: no more than n requests inside any window.
func TestIPLimit(t *testing.T) {
	l := newLimiter()
	l.n, l.span = 3, time.Second
	now := time.Unix(0, 0)
	l.now = func() time.Time { return now }
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 3 {
		if err := l.wait(ctx, "/a"); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if err := l.wait(ctx, "/b"); err == nil {
		t.Fatal("a fourth request inside the window went")
	}
	now = now.Add(time.Second)
	if err := l.wait(ctx, "/b"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}
