package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
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
		{yaml: "", env: map[string]string{"EXHUB_PLUGINS_STREAM_BUFFER": "many"}, want: []string{"plugins.stream_buffer", "EXHUB_PLUGINS_STREAM_BUFFER"}},
		{yaml: "", env: map[string]string{"EXHUB_VALKEY_ADDR": "", "EXHUB_VALKEY_REQUIRED": "true"}, want: []string{"valkey.required"}},
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
