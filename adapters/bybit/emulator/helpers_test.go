package emulator

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/exhub/exhub/adapters/venue"
)

type harness struct {
	v  *venue.Venue
	s  *Server
	ts *httptest.Server
}

var (
	sharedOnce sync.Once
	sharedH    *harness
	sharedErr  error
)

// newHarness returns the package's emulator over a bybit-profile venue moving in real time (one day of history),
// shared by the tests; mut is applied to a fresh emulator over the same venue when given.
func newHarness(t *testing.T, mut ...func(*Config)) *harness {
	t.Helper()
	sharedOnce.Do(func() {
		v, err := venue.New(venue.Config{Profile: "bybit", Seed: 9, Simulate: true, HistoryDays: 1, StepInterval: 100 * time.Millisecond})
		if err != nil {
			sharedErr = err
			return
		}
		go func() { _ = v.Run(context.Background()) }() // lives for the test binary
		s, err := New(Config{Venue: v, DisableRateLimits: true})
		if err != nil {
			sharedErr = err
			return
		}
		sharedH = &harness{v: v, s: s, ts: httptest.NewServer(s.Handler())}
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	if len(mut) == 0 {
		return sharedH
	}
	cfg := Config{Venue: sharedH.v, DisableRateLimits: true}
	for _, m := range mut {
		m(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() { ts.Close(); s.Close() })
	return &harness{v: sharedH.v, s: s, ts: ts}
}

// live waits until the venue trades the BTC perpetual and spot pair, so feeds and trade lists have something.
func (h *harness) live(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, id := range []string{"BTC/USDT:PERP", "BTC/USDT"} {
		if tr, err := h.v.RecentTrades(id, 1); err == nil && len(tr) > 0 {
			continue
		}
		sub := h.v.Subscribe(ctx, venue.Filter{Kinds: []venue.EventKind{venue.EvTrade}, Instruments: []string{id}}, 16)
		if _, ok := <-sub.C; !ok {
			t.Fatalf("%s did not trade: %v", id, sub.Err())
		}
	}
}

// getJSON GETs a path and decodes the body.
func (h *harness) getJSON(path string, v any) int {
	resp, err := http.Get(h.ts.URL + path)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, v); err != nil {
		panic(path + ": " + err.Error() + ": " + string(b))
	}
	return resp.StatusCode
}
