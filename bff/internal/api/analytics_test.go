package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/exhub/exhub/analytics/chtest"
	"github.com/exhub/exhub/analytics/ingest"
	"github.com/exhub/exhub/analytics/query"
	"github.com/exhub/exhub/analytics/schema"
	"github.com/exhub/exhub/bff/internal/config"
)

type fixedAnalytics struct {
	store *query.Store
	exp   *query.Exporter
}

func (f fixedAnalytics) Store() (*query.Store, error)       { return f.store, nil }
func (f fixedAnalytics) Exporter() (*query.Exporter, error) { return f.exp, nil }

func TestAnalyticsRoutes(t *testing.T) {
	srv := chtest.Start(t)
	ctx := context.Background()
	if err := schema.Apply(ctx, srv.Conn, schema.Options{Database: "api"}, nil); err != nil {
		t.Fatal(err)
	}
	w, err := ingest.New(ingest.Config{Conn: srv.Conn, Database: "api", SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	const t0 = int64(1_767_225_600_000)
	var oi [][]any
	for i := int64(0); i < 24; i++ {
		oi = append(oi, []any{"binance", "BTCUSDT", "1h", t0 + i*3_600_000, strconv.FormatInt(1000+i, 10) + ".125", "65000000.5", int64(1)})
	}
	if _, err := w.WriteNow(ctx, schema.OpenInterest, oi); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	h, _ := New(Deps{Config: &cfg, Checks: []Check{}, Analytics: fixedAnalytics{
		store: &query.Store{Conn: srv.Conn, Database: "api"}, exp: &query.Exporter{HTTPAddr: srv.HTTPAddr, Database: "api"}}})
	ts := httptest.NewServer(h)
	defer ts.Close()

	get := func(path string) (*http.Response, string) {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	q := "exchange=binance&symbol=BTCUSDT&from=" + strconv.FormatInt(t0, 10) + "&to=" + strconv.FormatInt(t0+86_400_000, 10)
	resp, body := get("/api/v1/analytics/open-interest?period=4h&" + q)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Cache-Control"), "public") {
		t.Fatalf("open interest: %d %s", resp.StatusCode, body)
	}
	var oiOut struct {
		Period string                    `json:"period"`
		Points []query.OpenInterestPoint `json:"points"`
	}
	if err := json.Unmarshal([]byte(body), &oiOut); err != nil || len(oiOut.Points) != 6 || oiOut.Points[0].OpenInterest != "1003.125" || oiOut.Period != "4h" {
		t.Fatalf("4h open interest: %v %s", err, body)
	}
	// Series with nothing stored are empty arrays, not null.
	for _, p := range []string{"long-short-ratio", "taker-volume", "funding-rate"} {
		resp, body = get("/api/v1/analytics/" + p + "?period=1h&" + q)
		if resp.StatusCode != 200 || !strings.Contains(body, `"points":[]`) {
			t.Fatalf("%s: %d %s", p, resp.StatusCode, body)
		}
	}
	if resp, body = get("/api/v1/analytics/open-interest?exchange=nope&symbol=BTCUSDT"); resp.StatusCode != 422 || !strings.Contains(body, "query.exchange") {
		t.Fatalf("unknown exchange: %d %s", resp.StatusCode, body)
	}
	if resp, body = get("/api/v1/analytics/open-interest?exchange=binance&symbol=BTCUSDT&period=5m&from=1&to=" + strconv.FormatInt(t0, 10)); resp.StatusCode != 422 {
		t.Fatalf("too many points: %d %s", resp.StatusCode, body)
	}
	if resp, body = get("/api/v1/analytics/open-interest?exchange=binance&symbol=BTCUSDT&period=7m"); resp.StatusCode != 422 {
		t.Fatalf("bad period: %d %s", resp.StatusCode, body)
	}
	resp, body = get("/api/v1/analytics/export?dataset=open_interest&format=csv&" + q)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/csv; charset=utf-8" ||
		!strings.Contains(resp.Header.Get("Content-Disposition"), "binance_open_interest_BTCUSDT_") ||
		strings.Count(body, "\n") != 25 {
		t.Fatalf("export: %d %v\n%s", resp.StatusCode, resp.Header, body)
	}

	// Without analytics the routes answer 503.
	h2, _ := New(Deps{Config: &cfg, Checks: []Check{}})
	ts2 := httptest.NewServer(h2)
	defer ts2.Close()
	r2, err := http.Get(ts2.URL + "/api/v1/analytics/funding-rate?exchange=binance&symbol=BTCUSDT")
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.StatusCode != 503 {
		t.Fatalf("no analytics: %d", r2.StatusCode)
	}
}
