package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/cache"
	"github.com/exhub/exhub/bff/internal/config"
	"github.com/exhub/exhub/bff/internal/metrics"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/plugintest"
)

func TestMain(m *testing.M) {
	os.Exit(plugintest.Run(m, nil, "bff/internal/pluginhost/testdata/testplugin", "reference"))
}

type env struct {
	srv  *httptest.Server
	host *pluginhost.Host
	logs *syncBuffer
}

// start runs the API with the test plugin (key 100, slug test), Bybit coming soon (no plugin) and a plugin whose
// binary does not exist (key 2, okx).
func start(t *testing.T, mutate func(*config.Config), checks []Check) *env {
	t.Helper()
	dir := t.TempDir()
	yaml := fmt.Sprintf(`
valkey: {addr: ""}
clickhouse: {addr: "", http_addr: ""}
api_docs: {dir: %q}
exchanges:
  - {key: 3, slug: bybit, name: Bybit, status: coming_soon, website: "https://www.bybit.com"}
  - {key: 100, slug: test, name: Configured Name, plugin: %q, settings: {endpoint: "http://127.0.0.1:1"}}
  - {key: 2, slug: okx, name: OKX, plugin: %q}
`, filepath.Join(dir, "docs"), plugintest.Path("testplugin"), filepath.Join(dir, "missing-plugin"))
	p := filepath.Join(dir, "exhub.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadWith(p, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(cfg)
	}
	m := metrics.New()
	var specs []pluginhost.Spec
	for _, e := range cfg.Exchanges {
		if e.Plugin != "" {
			specs = append(specs, pluginhost.Spec{Key: e.Key, Slug: e.Slug, Path: cfg.PluginPath(e), Settings: e.Settings})
		}
	}
	host := pluginhost.New(specs, pluginhost.Options{Observer: m, Backoff: pluginhost.Backoff{Initial: 50 * time.Millisecond, Max: time.Second}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); host.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	logs := &syncBuffer{}
	h, _ := New(Deps{Config: cfg, Host: host, Cache: cache.NewMemory(10), Metrics: m, Version: "test",
		Logger: slog.New(slog.NewJSONHandler(logs, nil)), Checks: checks})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	sup, _ := host.Get("test")
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	if err := sup.WaitRunning(wctx); err != nil {
		t.Fatalf("test plugin not running: %v", err)
	}
	return &env{srv: srv, host: host, logs: logs}
}

// syncBuffer is a log sink safe to read while the server writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func TestExchangesList(t *testing.T) {
	e := start(t, nil, []Check{})
	resp, body := get(t, e.srv.URL+"/api/v1/exchanges")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=10" {
		t.Fatalf("Cache-Control %q", cc)
	}
	if resp.Header.Get("X-Request-Id") == "" {
		t.Fatal("no request id")
	}
	var out struct {
		Exchanges []map[string]any `json:"exchanges"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Exchanges) != 3 {
		t.Fatalf("%d exchanges: %s", len(out.Exchanges), body)
	}
	var keys []float64
	for _, x := range out.Exchanges {
		keys = append(keys, x["key"].(float64))
	}
	if fmt.Sprint(keys) != "[2 3 100]" {
		t.Fatalf("not sorted by key: %v", keys)
	}
	okx, bybit, test := out.Exchanges[0], out.Exchanges[1], out.Exchanges[2]
	if bybit["slug"] != "bybit" || bybit["status"] != "coming_soon" || bybit["pluginState"] != "none" ||
		bybit["name"] != "Bybit" || bybit["website"] != "https://www.bybit.com" {
		t.Fatalf("bybit: %v", bybit)
	}
	if okx["status"] != "unavailable" || okx["pluginState"] != "failed" {
		t.Fatalf("okx with a missing plugin binary: %v", okx)
	}
	// From the plugin's Describe, not the config name.
	if test["name"] != "Test Exchange" || test["status"] != "available" || test["pluginState"] != "running" ||
		test["pluginVersion"] != "0.1.0" || !strings.HasPrefix(test["logoSvg"].(string), "<svg") {
		t.Fatalf("test: %v", test)
	}
	if fmt.Sprint(test["marketTypes"]) != "[SPOT]" {
		t.Fatalf("marketTypes %v", test["marketTypes"])
	}
	caps := test["capabilities"].(map[string]any)
	if caps["streams"].(map[string]any)["book"] != true {
		t.Fatalf("capabilities %v", caps)
	}
	// camelCase field names as agreed, and arrays never null.
	for _, k := range []string{"key", "slug", "name", "status", "pluginState", "pluginVersion", "logoSvg", "website", "marketTypes", "capabilities"} {
		if _, ok := bybit[k]; !ok {
			t.Errorf("bybit lacks %q", k)
		}
	}
	if bybit["marketTypes"] == nil {
		t.Error("marketTypes is null")
	}

	// One exchange; unknown and invalid slugs are problems.
	resp, body = get(t, e.srv.URL+"/api/v1/exchanges/bybit")
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"coming_soon"`) {
		t.Fatalf("get bybit: %d %s", resp.StatusCode, body)
	}
	resp, body = get(t, e.srv.URL+"/api/v1/exchanges/nope")
	assertProblem(t, resp, body, 404)
	resp, body = get(t, e.srv.URL+"/api/v1/exchanges/Not_A_Slug")
	assertProblem(t, resp, body, 422)
	if !strings.Contains(string(body), "slug") {
		t.Fatalf("422 does not name the parameter: %s", body)
	}
}

func TestConfigStatusOverrideWinsAndPluginDownIsListed(t *testing.T) {
	e := start(t, func(c *config.Config) { c.Exchanges[1].Status = config.StatusMaintenance }, []Check{})
	_, body := get(t, e.srv.URL+"/api/v1/exchanges/test")
	if !strings.Contains(string(body), `"status":"maintenance"`) {
		t.Fatalf("override not applied: %s", body)
	}
}

func assertProblem(t *testing.T, resp *http.Response, body []byte, status int) {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("content type %q for %d", ct, status)
	}
	var p struct {
		Title  string `json:"title"`
		Status int    `json:"status"`
		Detail string `json:"detail"`
	}
	if err := json.Unmarshal(body, &p); err != nil || p.Status != status || p.Title == "" {
		t.Fatalf("not a problem document: %s (%v)", body, err)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "private, no-store" {
		t.Fatalf("error Cache-Control %q", cc)
	}
}

func TestUnknownAPIPathsAreProblems(t *testing.T) {
	e := start(t, nil, []Check{})
	resp, body := get(t, e.srv.URL+"/api/v1/nothing-here")
	assertProblem(t, resp, body, 404)
	resp, body = get(t, e.srv.URL+"/api/")
	assertProblem(t, resp, body, 404)
	r, err := http.Post(e.srv.URL+"/api/v1/exchanges", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(r.Body)
	r.Body.Close()
	assertProblem(t, r, body, 405)
	if r.Header.Get("Allow") != "GET" {
		t.Fatalf("Allow %q", r.Header.Get("Allow"))
	}
}

func TestOpenAPIAndDocs(t *testing.T) {
	e := start(t, nil, []Check{})
	resp, body := get(t, e.srv.URL+"/api/openapi.json")
	if resp.StatusCode != 200 {
		t.Fatalf("openapi.json %d", resp.StatusCode)
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi version %v", doc["openapi"])
	}
	paths := doc["paths"].(map[string]any)
	if _, ok := paths["/api/v1/exchanges"]; !ok {
		t.Fatalf("paths %v", paths)
	}
	resp, body = get(t, e.srv.URL+"/api/openapi.yaml")
	if resp.StatusCode != 200 || !strings.Contains(string(body), "openapi: 3.1.0") {
		t.Fatalf("openapi.yaml %d", resp.StatusCode)
	}
	// The document served equals the one `exhub-bff openapi` prints.
	cfg, _ := config.LoadWith("", func(string) (string, bool) { return "", false })
	printed, err := OpenAPI(cfg, "test")
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(printed, &p); err != nil || fmt.Sprint(p["paths"]) != fmt.Sprint(doc["paths"]) {
		t.Fatalf("printed document differs: %v", err)
	}
	// Huma's CDN docs page is off.
	if resp, _ := get(t, e.srv.URL+"/docs"); resp.StatusCode != 404 {
		t.Fatalf("/docs: %d", resp.StatusCode)
	}

	// Bundle missing: the page says how to install it.
	resp, body = get(t, e.srv.URL+"/api/docs")
	if resp.StatusCode != 503 || !strings.Contains(string(body), "make deps") {
		t.Fatalf("docs without bundle: %d %s", resp.StatusCode, body)
	}
}

func TestDocsServedOffline(t *testing.T) {
	var docsDir string
	e := start(t, func(c *config.Config) { docsDir = c.APIDocsDir() }, []Check{})
	if err := os.MkdirAll(docsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"web-components.min.js": "/* elements */", "styles.min.css": "body{}"} {
		if err := os.WriteFile(filepath.Join(docsDir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	resp, body := get(t, e.srv.URL+"/api/docs")
	if resp.StatusCode != 200 || !strings.Contains(string(body), `apiDescriptionUrl="/api/openapi.json"`) {
		t.Fatalf("docs page %d %s", resp.StatusCode, body)
	}
	if strings.Contains(string(body), "https://") || strings.Contains(string(body), "http://") {
		t.Fatalf("docs page references a remote URL: %s", body)
	}
	resp, body = get(t, e.srv.URL+"/api/docs/assets/web-components.min.js")
	if resp.StatusCode != 200 || string(body) != "/* elements */" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") {
		t.Fatalf("asset %d %q %s", resp.StatusCode, body, resp.Header.Get("Content-Type"))
	}
	resp, body = get(t, e.srv.URL+"/api/docs/assets/..%2fexhub.yaml")
	assertProblem(t, resp, body, 404)
}

func TestHealthReadyMetrics(t *testing.T) {
	failing := false
	checks := []Check{{Name: "clickhouse", Probe: func(context.Context) (string, error) {
		if failing {
			return "127.0.0.1:8123", errors.New("connection refused")
		}
		return "127.0.0.1:8123", nil
	}}}
	e := start(t, func(c *config.Config) { c.Exchanges = c.Exchanges[:2] }, checks) // without the broken okx
	resp, body := get(t, e.srv.URL+"/healthz")
	if resp.StatusCode != 200 || !strings.Contains(string(body), "ok") {
		t.Fatalf("healthz %d %s", resp.StatusCode, body)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("healthz Cache-Control %q", cc)
	}
	resp, body = get(t, e.srv.URL+"/readyz")
	var rd Readiness
	if err := json.Unmarshal(body, &rd); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || rd.Status != "ready" || !rd.Components["plugin:test"].Ready || !rd.Components["clickhouse"].Ready {
		t.Fatalf("readyz %d %s", resp.StatusCode, body)
	}
	failing = true
	resp, body = get(t, e.srv.URL+"/readyz")
	if resp.StatusCode != 503 || !strings.Contains(string(body), "connection refused") {
		t.Fatalf("readyz with clickhouse down: %d %s", resp.StatusCode, body)
	}

	get(t, e.srv.URL+"/api/v1/exchanges")
	get(t, e.srv.URL+"/api/v1/nope")
	resp, body = get(t, e.srv.URL+"/metrics")
	if resp.StatusCode != 200 {
		t.Fatalf("metrics %d", resp.StatusCode)
	}
	for _, want := range []string{
		`exhub_http_request_duration_seconds_count{code="200",method="GET",route="GET /api/v1/exchanges"} 1`,
		`exhub_http_request_duration_seconds_count{code="404",method="GET",route="unmatched"} 1`,
		`exhub_plugin_state{plugin="test",state="running"} 1`,
		`exhub_plugin_state{plugin="test",state="starting"} 0`,
		`exhub_plugin_call_duration_seconds_count{method="Describe",outcome="ok",plugin="test"} 1`,
		`exhub_plugin_call_duration_seconds_count{method="Configure",outcome="ok",plugin="test"} 1`,
		"go_goroutines",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if !strings.Contains(e.logs.String(), `"msg":"http request"`) || !strings.Contains(e.logs.String(), `"request_id"`) {
		t.Fatalf("no request log: %s", e.logs.String())
	}
}

func TestReadyzFailsWhilePluginDown(t *testing.T) {
	e := start(t, nil, []Check{})
	resp, body := get(t, e.srv.URL+"/readyz")
	if resp.StatusCode != 503 || !strings.Contains(string(body), `"plugin:okx"`) {
		t.Fatalf("readyz with a failed plugin: %d %s", resp.StatusCode, body)
	}
}

func TestDefaultChecksProbeClickHouseHTTP(t *testing.T) {
	ch := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ping" {
			_, _ = io.WriteString(w, "Ok.\n")
			return
		}
		http.NotFound(w, r)
	}))
	defer ch.Close()
	cfg := config.Default()
	cfg.Valkey.Addr = ""
	cfg.ClickHouse.HTTPAddr = strings.TrimPrefix(ch.URL, "http://")
	checks := defaultChecks(&cfg, cache.NewMemory(1))
	if len(checks) != 1 || checks[0].Name != "clickhouse" {
		t.Fatalf("checks %+v", checks)
	}
	if _, err := checks[0].Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	ch.Close()
	if _, err := checks[0].Probe(context.Background()); err == nil {
		t.Fatal("probe passed with ClickHouse down")
	}
}
