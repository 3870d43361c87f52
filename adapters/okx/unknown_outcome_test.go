package okx

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

var testCreds = &Credentials{"k", "s", "p"}

// serve answers every request with h and counts the calls.
func serve(t *testing.T, h http.HandlerFunc) (*Client, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		h(w, r)
	}))
	t.Cleanup(ts.Close)
	c := NewClient(ts.URL, 5*time.Second, quiet())
	c.BaseBackoff = time.Millisecond
	return c, &calls
}

func hangUp(w http.ResponseWriter, _ *http.Request) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

func TestUnknownOutcomeOnNonIdempotentCalls(t *testing.T) {
	const timeout50004 = `{"code":"50004","msg":"API endpoint request timeout (does not mean that the request was successful or failed, please check the request result).","data":[]}`
	cases := []struct {
		name string
		h    http.HandlerFunc
	}{
		{"50004", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, timeout50004)
		}},
		{"sCode 50004", func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprint(w, `{"code":"1","msg":"All operations failed","data":[{"ordId":"","clOrdId":"a1","sCode":"50004","sMsg":"API endpoint request timeout"}]}`)
		}},
		{"connection closed before the answer", hangUp},
		{"HTTP 502 without JSON", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprint(w, "<html>bad gateway</html>")
		}},
		{"timeout", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body) // a read body lets the server notice the client going away
			select {
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
		}},
	}
	paths := []string{"/api/v5/trade/order", "/api/v5/trade/order-algo", "/api/v5/trade/batch-orders",
		"/api/v5/trade/close-position", "/api/v5/asset/transfer", "/api/v5/asset/withdrawal", "/api/v5/asset/convert/trade"}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, calls := serve(t, tc.h)
			c.HTTP.Timeout = time.Second // generous: under load the request must reach the server before the client gives up
			for _, p := range paths {
				before := calls.Load()
				_, err := c.Post(context.Background(), p, map[string]string{"clOrdId": "a1"}, testCreds)
				d := sdk.DetailOf(err)
				if d.GetReason() != exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME {
					t.Fatalf("%s: %v", p, err)
				}
				if n := calls.Load() - before; n != 1 {
					t.Fatalf("%s: sent %d times, want once", p, n)
				}
				if tc.name == "50004" && (d.GetExchangeCode() != "50004" || d.GetExchangeMessage() == "") {
					t.Fatalf("%s: raw code and message lost: %v", p, d)
				}
			}
			// Reads are EXCHANGE_UNAVAILABLE: nothing happened that a retry could repeat.
			_, err := c.Get(context.Background(), "/api/v5/trade/order", nil, testCreds)
			if r := sdk.DetailOf(err).GetReason(); r != exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE {
				t.Fatalf("read: %v", err)
			}
		})
	}
}

func TestNotSentIsUnavailable(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	url := ts.URL
	ts.Close() // nothing listens: the dial fails before anything is sent
	c := NewClient(url, time.Second, quiet())
	_, err := c.Post(context.Background(), "/api/v5/trade/order", map[string]string{"instId": "X"}, testCreds)
	if r := sdk.DetailOf(err).GetReason(); r != exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE {
		t.Fatalf("%v", err)
	}
	// A context that is already over never sends either.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c2, calls := serve(t, func(w http.ResponseWriter, _ *http.Request) {})
	_, err = c2.Post(ctx, "/api/v5/trade/order", map[string]string{"instId": "X"}, testCreds)
	if r := sdk.DetailOf(err).GetReason(); r != exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE || calls.Load() != 0 {
		t.Fatalf("%v after %d calls", err, calls.Load())
	}
}

func TestOrdersAreNeverRetried(t *testing.T) {
	c, calls := serve(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"code":"50011","msg":"Too Many Requests","data":[]}`)
	})
	_, err := c.Post(context.Background(), "/api/v5/trade/order", map[string]string{"instId": "X"}, testCreds)
	d := sdk.DetailOf(err)
	if d.GetReason() != exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED || d.GetRetryAfterMs() <= 0 || calls.Load() != 1 {
		t.Fatalf("%v after %d calls", err, calls.Load())
	}
}

func TestErrorCodeMapping(t *testing.T) {
	for code, want := range map[string]exchangev1.ErrorReason{
		"50004": exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME,
		"50102": exchangev1.ErrorReason_ERROR_REASON_CLOCK_SKEW,
		"50110": exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED,
		"50120": exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED,
		"50121": exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED,
		"50111": exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED,
		"50113": exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED,
		"50105": exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED,
		"51010": exchangev1.ErrorReason_ERROR_REASON_ACCOUNT_MODE_MISMATCH,
		"59000": exchangev1.ErrorReason_ERROR_REASON_ACCOUNT_MODE_MISMATCH,
		"59013": exchangev1.ErrorReason_ERROR_REASON_ACCOUNT_MODE_MISMATCH,
		"51156": exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH,
		"59102": exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT,
		"51008": exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS,
	} {
		e := apiError(code, "message "+code)
		if e.Detail.GetReason() != want || e.Detail.GetExchangeCode() != code || e.Detail.GetExchangeMessage() != "message "+code {
			t.Errorf("%s: %v, want %v", code, e.Detail, want)
		}
	}
	if r := apiError("51000", "Parameter posSide error").Detail.GetReason(); r != exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH {
		t.Errorf("posSide: %v", r)
	}
}
