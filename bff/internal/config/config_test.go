package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/config/secret"
)

func noEnv(string) (string, bool) { return "", false }

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The committed bff/exhub.yaml is exactly the built-in defaults, so the documented file never drifts.
func TestCommittedFileMatchesDefaults(t *testing.T) {
	cfg, err := LoadWith("../../exhub.yaml", noEnv)
	if err != nil {
		t.Fatal(err)
	}
	def, err := LoadWith("", noEnv)
	if err != nil {
		t.Fatal(err)
	}
	repoRoot, _ := filepath.Abs("../../..")
	if cfg.Root != repoRoot {
		t.Fatalf("root %s, want the repository root %s", cfg.Root, repoRoot)
	}
	cfg.File, cfg.Root, def.File, def.Root = "", "", "", ""
	// Both resolve the data directory against their own root.
	cfg.Store, def.Store = cfg.Store.WithDataDir(""), def.Store.WithDataDir("")
	// Each holds its own random demo CSRF key.
	cfg.demoCSRFKey, def.demoCSRFKey = secret.Secret{}, secret.Secret{}
	if !reflect.DeepEqual(cfg, def) {
		t.Fatalf("bff/exhub.yaml differs from Default():\nfile    %+v\ndefault %+v", cfg, def)
	}
	if cfg.HTTP.Addr != "127.0.0.1:8090" || cfg.Mode != "demo" {
		t.Fatalf("defaults: %+v", cfg)
	}
	ex := cfg.Exchanges
	if len(ex) != 3 || ex[0].Slug != "binance" || ex[0].Key != 1 || ex[1].Slug != "okx" || ex[1].Key != 2 ||
		ex[2].Key != 3 || ex[2].Status != StatusComingSoon || ex[2].Plugin != "" {
		t.Fatalf("default exchanges: %+v", ex)
	}
}

func TestEnvOverrides(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "exhub.yaml", "exchanges:\n  - {key: 1, slug: binance, name: Binance, plugin: binance, settings: {rest_url: x}}\n")
	cfg, err := LoadWith(p, envOf(map[string]string{
		"EXHUB_HTTP_ADDR":                         "127.0.0.1:9999",
		"EXHUB_VALKEY_ADDR":                       "",
		"EXHUB_CLICKHOUSE_ADDR":                   "127.0.0.1:19000",
		"EXHUB_KRATOS_PUBLIC_URL":                 "http://127.0.0.1:14433",
		"EXHUB_KRATOS_ADMIN_URL":                  "http://127.0.0.1:14434",
		"EXHUB_PLUGIN_DIR":                        "/opt/plugins",
		"EXHUB_LOG_LEVEL":                         "debug",
		"EXHUB_MODE":                              "live",
		"EXHUB_AUTH_CSRF_KEY":                     "0123456789abcdef0123456789abcdef",
		"EXHUB_MEMBER_HOOK_SECRET":                "a-production-hook-secret",
		"EXHUB_PLUGINS_HEALTH_INTERVAL":           "2s",
		"EXHUB_VALKEY_REQUIRED":                   "false",
		"EXHUB_PLUGINS_STREAM_BUFFER":             "64",
		"EXHUB_EXCHANGE_BINANCE_STATUS":           "maintenance",
		"EXHUB_EXCHANGE_BINANCE_SETTINGS":         "ws_url=ws://127.0.0.1:1, timeout=5s",
		"EXHUB_EXCHANGE_BINANCE_SETTING_REST_URL": "http://127.0.0.1:2",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.HTTP.Addr != "127.0.0.1:9999" || cfg.Valkey.Addr != "" || cfg.ClickHouse.Addr != "127.0.0.1:19000" ||
		cfg.Kratos.PublicURL != "http://127.0.0.1:14433" || cfg.Kratos.AdminURL != "http://127.0.0.1:14434" ||
		cfg.PluginDir != "/opt/plugins" || cfg.Log.Level != "debug" || cfg.Mode != "live" ||
		cfg.Plugins.HealthInterval.D() != 2*time.Second || cfg.Plugins.StreamBuffer != 64 {
		t.Fatalf("overrides not applied: %+v", cfg)
	}
	e := cfg.Exchanges[0]
	want := map[string]string{"rest_url": "http://127.0.0.1:2", "ws_url": "ws://127.0.0.1:1", "timeout": "5s"}
	if e.Status != StatusMaintenance || !reflect.DeepEqual(e.Settings, want) {
		t.Fatalf("exchange overrides: %+v", e)
	}
	if got := cfg.PluginPath(e); got != "/opt/plugins/binance" {
		t.Fatalf("plugin path %s", got)
	}
	for _, k := range []string{"EXHUB_HTTP_ADDR", "EXHUB_VALKEY_ADDR", "EXHUB_CLICKHOUSE_ADDR", "EXHUB_KRATOS_PUBLIC_URL",
		"EXHUB_KRATOS_ADMIN_URL", "EXHUB_PLUGIN_DIR", "EXHUB_LOG_LEVEL", "EXHUB_MODE", "EXHUB_ROOT"} {
		found := false
		for _, e := range EnvKeys() {
			found = found || e == k
		}
		if !found {
			t.Errorf("EnvKeys lacks %s", k)
		}
	}
}

func TestRelativePaths(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "go.mod", "module x\n")
	p := write(t, dir, "bff/exhub.yaml", "exchanges:\n  - {key: 100, slug: reference, name: R, plugin: reference}\n  - {key: 101, slug: other, name: O, plugin: ./build/other}\n")
	cfg, err := LoadWith(p, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Root != dir {
		t.Fatalf("root %s, want %s (the go.mod directory)", cfg.Root, dir)
	}
	if got := cfg.PluginPath(cfg.Exchanges[0]); got != filepath.Join(dir, "bin/plugins/reference") {
		t.Fatalf("named plugin: %s", got)
	}
	if got := cfg.PluginPath(cfg.Exchanges[1]); got != filepath.Join(dir, "build/other") {
		t.Fatalf("plugin path: %s", got)
	}
	if got := cfg.APIDocsDir(); got != filepath.Join(dir, "bff/apidocs/dist") {
		t.Fatalf("docs dir: %s", got)
	}
	// An explicit root is relative to the config file.
	cfg, err = LoadWith(p, envOf(map[string]string{"EXHUB_ROOT": ".."}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Root != dir {
		t.Fatalf("explicit root %s", cfg.Root)
	}
	// Without go.mod above, the config file's own directory is the root.
	other := t.TempDir()
	q := write(t, other, "conf/exhub.yaml", "mode: demo\n")
	cfg, err = LoadWith(q, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Root != filepath.Join(other, "conf") {
		t.Fatalf("root without go.mod: %s", cfg.Root)
	}
	if !reflect.DeepEqual(cfg.Exchanges, Default().Exchanges) {
		t.Fatalf("a file without an exchanges key keeps the default list, got %+v", cfg.Exchanges)
	}
}

func TestValidationNamesTheKey(t *testing.T) {
	cases := []struct {
		yaml string
		env  map[string]string
		want []string
	}{
		{yaml: "mode: prod\n", want: []string{"mode: \"prod\""}},
		{yaml: "http:\n  addr: 8090\n", want: []string{"http.addr"}},
		{yaml: "http:\n  addr: \":8090\"\n", want: []string{"http.addr", "127.0.0.1"}},
		{yaml: "log:\n  level: loud\n", want: []string{"log.level"}},
		{yaml: "plugins:\n  health_interval: 0s\n", want: []string{"plugins.health_interval"}},
		{yaml: "plugins:\n  health_interval: soon\n", want: []string{"soon", "duration"}},
		{yaml: "kratos:\n  admin_url: localhost:4434\n", want: []string{"kratos.admin_url"}},
		{yaml: "valkey:\n  addr: nope\n", want: []string{"valkey.addr"}},
		{yaml: "htp:\n  addr: x\n", want: []string{"htp"}},
		{yaml: "exchanges:\n  - {key: 1, slug: a, name: A, plugin: a}\n  - {key: 1, slug: a, name: B, plugin: b}\n",
			want: []string{"exchanges[1].key", "exchanges[1].slug"}},
		{yaml: "exchanges:\n  - {key: 0, slug: Bad_Slug, name: \"\", status: soon, sha256: zz}\n",
			want: []string{"exchanges[0].key", "exchanges[0].slug", "exchanges[0].name", "exchanges[0].status", "exchanges[0].sha256"}},
		{yaml: "exchanges:\n  - {key: 3, slug: bybit, name: Bybit}\n", want: []string{"exchanges[0].status", "needs a status"}},
		{yaml: "exchanges:\n  - {key: 1, slug: a, name: A, plugin: a, gates: {trading: [two_factor, kycc], lending: [kyc]}}\n",
			want: []string{"exchanges[0].gates", "kycc", "lending"}},
		{yaml: "", env: map[string]string{"EXHUB_PLUGINS_STREAM_BUFFER": "many"}, want: []string{"plugins.stream_buffer", "EXHUB_PLUGINS_STREAM_BUFFER"}},
		{yaml: "", env: map[string]string{"EXHUB_VALKEY_ADDR": "", "EXHUB_VALKEY_REQUIRED": "true"}, want: []string{"valkey.required"}},
		{yaml: "stream:\n  max_subscriptions: 0\n  max_message_bytes: 10\n  ping_interval: 0s\n  lease_ttl: 10ms\n",
			want: []string{"stream.max_subscriptions", "stream.max_message_bytes", "stream.ping_interval", "stream.lease_ttl"}},
		{yaml: "stream:\n  ping_interval: 5s\n  pong_timeout: 6s\n  upstream_linger: 1s\n  max_frame_bytes: 100\n",
			want: []string{"stream.pong_timeout", "stream.upstream_linger", "stream.max_frame_bytes"}},
		{yaml: "stream:\n  max_depth: 5000\n  origin_patterns: \"a.example.com, [x\"\n", want: []string{"stream.max_depth", "stream.origin_patterns", "[x"}},
		{yaml: "stream:\n  valkey_prefix: \"\"\n", want: []string{"stream.valkey_prefix"}},
		{yaml: "stream:\n  max_conections: 5\n", want: []string{"max_conections"}},
		{yaml: "", env: map[string]string{"EXHUB_STREAM_MAX_PENDING_CONTROL": "-1"}, want: []string{"stream.max_pending_control"}},
		{yaml: "", env: map[string]string{"EXHUB_STREAM_WRITE_TIMEOUT": "later"}, want: []string{"stream.write_timeout", "EXHUB_STREAM_WRITE_TIMEOUT"}},
	}
	for _, c := range cases {
		p := write(t, t.TempDir(), "exhub.yaml", c.yaml)
		env := noEnv
		if c.env != nil {
			env = envOf(c.env)
		}
		_, err := LoadWith(p, env)
		if err == nil {
			t.Errorf("%q: no error", c.yaml)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q does not mention %q", c.yaml, err, w)
			}
		}
	}
}

func TestAnalyticsOverrides(t *testing.T) {
	env := map[string]string{"EXHUB_ANALYTICS_ENABLED": "false", "EXHUB_ANALYTICS_CLUSTER": "main",
		"EXHUB_ANALYTICS_BATCH_ROWS": "500", "EXHUB_ANALYTICS_FLUSH_INTERVAL": "250ms", "EXHUB_ANALYTICS_BACKFILL_DAYS": "7"}
	cfg, err := LoadWith("", func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Analytics
	if a.Enabled || a.Cluster != "main" || a.BatchRows != 500 || a.FlushInterval.D() != 250*time.Millisecond || a.BackfillDays != 7 {
		t.Fatalf("analytics overrides: %+v", a)
	}
	if !strings.HasSuffix(cfg.AnalyticsSpoolPath(), "/.data/analytics-spool") {
		t.Fatalf("spool path %s", cfg.AnalyticsSpoolPath())
	}
	if _, err := LoadWith("", func(k string) (string, bool) {
		if k == "EXHUB_ANALYTICS_BATCH_ROWS" {
			return "0", true
		}
		return "", false
	}); err == nil || !strings.Contains(err.Error(), "analytics.batch_rows") {
		t.Fatalf("batch_rows 0: %v", err)
	}
}

func TestStreamOverrides(t *testing.T) {
	env := map[string]string{"EXHUB_STREAM_MAX_SUBSCRIPTIONS": "16", "EXHUB_STREAM_PING_INTERVAL": "5s",
		"EXHUB_STREAM_PONG_TIMEOUT": "2s", "EXHUB_STREAM_LEASE_TTL": "1500ms", "EXHUB_STREAM_VALKEY_PREFIX": "t:",
		"EXHUB_STREAM_UPSTREAM_LINGER": "0s", "EXHUB_STREAM_ORIGIN_PATTERNS": " app.example.com ,*.example.org,"}
	p := write(t, t.TempDir(), "exhub.yaml", "stream:\n  max_message_bytes: 8192\n  max_subscriptions: 32\n")
	cfg, err := LoadWith(p, envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Stream
	if s.MaxSubscriptions != 16 || s.MaxMessageBytes != 8192 || s.PingInterval.D() != 5*time.Second ||
		s.PongTimeout.D() != 2*time.Second || s.LeaseTTL.D() != 1500*time.Millisecond || s.ValkeyPrefix != "t:" ||
		s.UpstreamLinger != 0 {
		t.Fatalf("stream overrides: %+v", s)
	}
	// Keys the file and the environment leave alone keep their defaults.
	if s.MaxConnections != 20000 || s.WriteTimeout.D() != 10*time.Second || s.MaxFrameBytes != 64<<10 {
		t.Fatalf("stream defaults: %+v", s)
	}
	if got := cfg.Stream.Origins(); !reflect.DeepEqual(got, []string{"app.example.com", "*.example.org"}) {
		t.Fatalf("origins %q", got)
	}
	keys := strings.Join(EnvKeys(), " ")
	for _, k := range []string{"EXHUB_STREAM_MAX_CONNECTIONS", "EXHUB_STREAM_LEASE_TTL", "EXHUB_STREAM_MAX_COALESCED_TRADES"} {
		if !strings.Contains(keys, k) {
			t.Errorf("EnvKeys lacks %s", k)
		}
	}
}

func TestExchangeGates(t *testing.T) {
	p := write(t, t.TempDir(), "exhub.yaml", "exchanges:\n  - {key: 1, slug: binance, name: Binance, plugin: binance, gates: {trading: [two_factor], withdraw: [two_factor, kyc]}}\n  - {key: 2, slug: okx, name: OKX, plugin: okx}\n")
	cfg, err := LoadWith(p, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	rules, names := GateRules(cfg.Exchanges)
	if len(rules) != 1 || len(rules["binance"]["trading"]) != 1 || len(rules["binance"]["withdraw"]) != 2 || names["okx"] != "OKX" {
		t.Fatalf("rules %+v names %+v", rules, names)
	}
	if r, _ := GateRules(Default().Exchanges); len(r) != 0 {
		t.Fatalf("the default (demo) exchanges gate nothing: %+v", r)
	}
}
