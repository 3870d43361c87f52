package emulator

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/exhub/exhub/adapters/venue"
)

// t0 is the start of the test venues: 10:30 UTC, so UTC and UTC+8 day starts differ.
var t0 = time.Date(2026, 3, 10, 10, 30, 0, 0, time.UTC)

type harness struct {
	t     *testing.T
	v     *venue.Venue
	clock *venue.ManualClock
	s     *Server
	ts    *httptest.Server
}

// newHarness runs an emulator over a simulated okx-profile venue with a manual clock and two days of history, the
// market advanced a couple of minutes so there are live trades.
func newHarness(t *testing.T, mut ...func(*Config)) *harness {
	t.Helper()
	clock := venue.NewManualClock(t0)
	v, err := venue.New(venue.Config{Profile: "okx", Seed: 7, Simulate: true, HistoryDays: 2, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	for range 8 {
		clock.Advance(time.Second)
		v.AdvanceTo(clock.Now())
	}
	cfg := Config{Venue: v, DisableRateLimits: true}
	for _, m := range mut {
		m(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		ts.Close()
		s.Close()
		v.Close()
	})
	return &harness{t: t, v: v, clock: clock, s: s, ts: ts}
}

// step advances the venue clock by d in simulation steps.
func (h *harness) step(d time.Duration) {
	for end := h.clock.Now().Add(d); h.clock.Now().Before(end); {
		h.clock.Advance(250 * time.Millisecond)
		h.v.AdvanceTo(h.clock.Now())
	}
}

type reply struct {
	Status  int
	Code    string          `json:"code"`
	Msg     string          `json:"msg"`
	Data    json.RawMessage `json:"data"`
	InTime  string          `json:"inTime"`
	OutTime string          `json:"outTime"`
	raw     []byte
}

func (h *harness) do(req *http.Request) reply {
	h.t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var r reply
	if err := json.Unmarshal(b, &r); err != nil {
		h.t.Fatalf("%s %s: body %q: %v", req.Method, req.URL, b, err)
	}
	r.Status = res.StatusCode
	r.raw = b
	return r
}

func (h *harness) get(path string) reply {
	h.t.Helper()
	req, _ := http.NewRequest("GET", h.ts.URL+path, nil)
	return h.do(req)
}

// signed sends a request signed with the demo key (or creds) at the venue clock.
func (h *harness) signed(method, path string, body any, creds ...Credentials) reply {
	h.t.Helper()
	c := Credentials{APIKey: DemoAPIKey, Secret: DemoAPISecret, Passphrase: DemoPassphrase}
	if len(creds) > 0 {
		c = creds[0]
	}
	var b []byte
	if body != nil {
		b, _ = json.Marshal(body)
	}
	req, _ := http.NewRequest(method, h.ts.URL+path, bytes.NewReader(b))
	ts := time.UnixMilli(h.v.Now()).UTC().Format("2006-01-02T15:04:05.000Z")
	req.Header.Set("OK-ACCESS-KEY", c.APIKey)
	req.Header.Set("OK-ACCESS-PASSPHRASE", c.Passphrase)
	req.Header.Set("OK-ACCESS-TIMESTAMP", ts)
	req.Header.Set("OK-ACCESS-SIGN", Sign(c.Secret, ts, method, path, string(b)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-simulated-trading", "1")
	return h.do(req)
}

// ok asserts a success envelope and decodes data.
func (r reply) ok(t *testing.T, into any) {
	t.Helper()
	if r.Status != 200 || r.Code != "0" {
		t.Fatalf("want success, got HTTP %d body %s", r.Status, r.raw)
	}
	if into != nil {
		if err := json.Unmarshal(r.Data, into); err != nil {
			t.Fatalf("data %s: %v", r.Data, err)
		}
	}
}

func (r reply) objects(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	r.ok(t, &out)
	return out
}

func (r reply) rows(t *testing.T) [][]string {
	t.Helper()
	var out [][]string
	r.ok(t, &out)
	return out
}
