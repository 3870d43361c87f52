package emulator

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/exhub/exhub/adapters/venue"
)

var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

type env struct {
	t     testing.TB
	v     *venue.Venue
	clock *venue.ManualClock
	s     *Server
	ts    *httptest.Server
}

// newEnv runs an emulator on a small simulated venue (BTC, ETH, SOL) driven by a manual clock.
func newEnv(t testing.TB, opts ...func(*Config)) *env {
	t.Helper()
	clock := venue.NewManualClock(t0)
	p, err := venue.LoadProfile("binance")
	if err != nil {
		t.Fatal(err)
	}
	vc := venue.Config{Profile: "binance", Seed: 7, Clock: clock, Simulate: true, HistoryDays: 3,
		StepInterval: time.Second}
	for _, in := range p.Instruments {
		if in.Base == "BTC" || in.Base == "ETH" || in.Base == "SOL" {
			vc.Instruments = append(vc.Instruments, in)
		}
	}
	v, err := venue.New(vc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	// A little live market so trades and tickers exist.
	clock.Advance(30 * time.Second)
	v.AdvanceTo(clock.Now())
	cfg := Config{Venue: v, Logger: discardLogger()}
	for _, o := range opts {
		o(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		s.Close()
		ts.Close()
	})
	return &env{t: t, v: v, clock: clock, s: s, ts: ts}
}

// advance moves the market forward by d.
func (e *env) advance(d time.Duration) {
	e.clock.Advance(d)
	e.v.AdvanceTo(e.clock.Now())
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// get calls a public endpoint.
func (e *env) get(path string, params url.Values) resp {
	e.t.Helper()
	u := e.ts.URL + path
	if len(params) > 0 {
		u += "?" + params.Encode()
	}
	return e.do(http.MethodGet, u, nil, "")
}

func (e *env) do(method, u string, header http.Header, body string) resp {
	e.t.Helper()
	r, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	for k, vs := range header {
		r.Header[k] = vs
	}
	if body != "" {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

// signed calls a signed endpoint with the demo key: params go in the query string for GET/DELETE and in the
// body otherwise, with timestamp and signature appended.
func (e *env) signed(method, path string, params url.Values) resp {
	e.t.Helper()
	return e.signedWith(DemoAPIKey, DemoAPISecret, method, path, params)
}

func (e *env) signedWith(key, secret, method, path string, params url.Values) resp {
	e.t.Helper()
	if params == nil {
		params = url.Values{}
	}
	if params.Get("timestamp") == "" {
		params.Set("timestamp", strconv.FormatInt(e.v.Now(), 10))
	}
	payload := params.Encode()
	payload += "&signature=" + Sign(secret, payload)
	h := http.Header{"X-Mbx-Apikey": {key}}
	if method == http.MethodGet || method == http.MethodDelete {
		return e.do(method, e.ts.URL+path+"?"+payload, h, "")
	}
	return e.do(method, e.ts.URL+path, h, payload)
}

// expectOK fails unless the response is 200.
func (r resp) expectOK(t testing.TB) resp {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	return r
}

// expectErr checks a Binance error body.
func (r resp) expectErr(t testing.TB, status, code int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	var e struct {
		Code int    `json:"code"`
		Msg  string `json:"msg"`
	}
	r.decode(t, &e)
	if e.Code != code || e.Msg == "" {
		t.Fatalf("error %d %q, want code %d", e.Code, e.Msg, code)
	}
	checkShape(t, "error", r.body)
}

// checkShape compares a JSON document with testdata/shapes/<name>.json.
func checkShape(t testing.TB, name string, doc []byte) {
	t.Helper()
	shape, err := loadShape(name)
	if err != nil {
		t.Fatal(err)
	}
	var val any
	if err := json.Unmarshal(doc, &val); err != nil {
		t.Fatalf("%s: response is not JSON: %v: %s", name, err, doc)
	}
	var errs []string
	matchShape("$", shape, val, &errs)
	if len(errs) > 0 {
		if len(errs) > 10 {
			errs = errs[:10]
		}
		t.Fatalf("%s does not match its shape:\n%s", name, strings.Join(errs, "\n"))
	}
}

func loadShape(name string) (any, error) {
	raw, err := os.ReadFile(filepath.Join("testdata", "shapes", name+".json"))
	if err != nil {
		return nil, err
	}
	var shape any
	if err := json.Unmarshal(raw, &shape); err != nil {
		return nil, fmt.Errorf("shape %s: %w", name, err)
	}
	return shape, nil
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func matchShape(path string, shape, val any, errs *[]string) {
	fail := func(format string, args ...any) { *errs = append(*errs, path+": "+fmt.Sprintf(format, args...)) }
	switch sh := shape.(type) {
	case string:
		got := jsonType(val)
		for _, alt := range strings.Split(sh, "|") {
			if alt == got {
				return
			}
		}
		fail("type %s, want %s", got, sh)
	case []any:
		arr, ok := val.([]any)
		if !ok {
			fail("type %s, want array", jsonType(val))
			return
		}
		if len(sh) == 0 {
			if len(arr) != 0 {
				fail("want an empty array, got %d elements", len(arr))
			}
			return
		}
		for i, el := range arr {
			matchShape(fmt.Sprintf("%s[%d]", path, i), sh[0], el, errs)
		}
	case map[string]any:
		if tup, ok := sh["$tuple"].([]any); ok {
			arr, ok := val.([]any)
			if !ok || len(arr) != len(tup) {
				fail("want a tuple of %d, got %s", len(tup), jsonType(val))
				return
			}
			for i := range tup {
				matchShape(fmt.Sprintf("%s[%d]", path, i), tup[i], arr[i], errs)
			}
			return
		}
		if ref, ok := sh["$listOf"].(string); ok {
			el, err := loadShape(ref)
			if err != nil {
				fail("%v", err)
				return
			}
			matchShape(path, []any{el}, val, errs)
			return
		}
		if key, ok := sh["$variants"].(string); ok {
			obj, ok := val.(map[string]any)
			if !ok {
				fail("type %s, want object", jsonType(val))
				return
			}
			sel, _ := obj[key].(string)
			variant, ok := sh["of"].(map[string]any)[sel]
			if !ok {
				fail("unknown %s %q", key, sel)
				return
			}
			matchShape(path+"<"+sel+">", variant, val, errs)
			return
		}
		obj, ok := val.(map[string]any)
		if !ok {
			fail("type %s, want object", jsonType(val))
			return
		}
		want := map[string]bool{}
		for k, sub := range sh {
			opt := strings.HasSuffix(k, "?")
			name := strings.TrimSuffix(k, "?")
			want[name] = true
			v, present := obj[name]
			if !present {
				if !opt {
					fail("missing key %q", name)
				}
				continue
			}
			matchShape(path+"."+name, sub, v, errs)
		}
		var extra []string
		for k := range obj {
			if !want[k] {
				extra = append(extra, k)
			}
		}
		sort.Strings(extra)
		for _, k := range extra {
			fail("unexpected key %q", k)
		}
	default:
		fail("bad shape %v", shape)
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.NewJSONHandler(io.Discard, nil)) }

// waitWhile polls cond until it is false. The bound only catches a hang; it is not a timing budget.
func waitWhile(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition still holds after 30 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
