package binance

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// TestRESTClientUnknownOutcome: a non-idempotent call whose answer is lost after sending is UNKNOWN_OUTCOME and is
// sent exactly once; the same failure on a read, or a failure before sending, is EXCHANGE_UNAVAILABLE.
func TestRESTClientUnknownOutcome(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v3/time":
			w.Write([]byte(`{"serverTime":` + itoa(time.Now().UnixMilli()) + `}`))
			return
		}
		hits.Add(1)
		switch r.URL.Query().Get("case") {
		case "drop":
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		case "html5xx":
			w.WriteHeader(http.StatusBadGateway)
			w.Write([]byte(`<html>502 Bad Gateway</html>`))
		case "1007":
			w.WriteHeader(http.StatusRequestTimeout)
			w.Write([]byte(`{"code":-1007,"msg":"Timeout waiting for response from backend server. Send status unknown; execution status unknown."}`))
		case "slow":
			select {
			case <-r.Context().Done():
			case <-time.After(time.Minute):
			}
		}
	}))
	defer srv.Close()
	cr := Credentials{"key", "sec"}
	ctx := context.Background()
	c := NewRESTClient(Endpoints{SpotREST: srv.URL, FuturesREST: srv.URL}, 500*time.Millisecond, DefaultRecvWindow, nil)
	for _, tc := range []string{"drop", "html5xx", "1007", "slow"} {
		q := map[string][]string{"case": {tc}}
		before := hits.Load()
		_, err := c.write(ctx, Spot, http.MethodPost, pathSpotOrder, q, 1, cr)
		if d := sdk.DetailOf(err); d.GetReason() != exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME {
			t.Errorf("write %s: %v, want UNKNOWN_OUTCOME", tc, err)
		}
		if n := hits.Load() - before; n != 1 {
			t.Errorf("write %s: sent %d times, want exactly once (never retried)", tc, n)
		}
		if tc == "1007" && sdk.DetailOf(err).GetExchangeCode() != "-1007" {
			t.Errorf("write 1007: raw code lost: %v", err)
		}
		_, err = c.signed(ctx, Spot, http.MethodGet, pathSpotOrder, q, 1, cr)
		if d := sdk.DetailOf(err); d.GetReason() != exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE {
			t.Errorf("read %s: %v, want EXCHANGE_UNAVAILABLE", tc, err)
		}
	}
	// Nothing listens: the request never left, so nothing can have executed.
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	c2 := NewRESTClient(Endpoints{SpotREST: url, FuturesREST: url}, time.Second, DefaultRecvWindow, nil)
	_, err := c2.write(ctx, Spot, http.MethodPost, pathSpotOrder, nil, 1, cr)
	if d := sdk.DetailOf(err); d.GetReason() != exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE {
		t.Errorf("connection refused: %v, want EXCHANGE_UNAVAILABLE", err)
	}
}
