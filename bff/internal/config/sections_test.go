package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/exhub/exhub/bff/internal/store"
	"github.com/exhub/exhub/bff/internal/stream"
)

const dsn = "postgres://exhub:s3cr3t-pw@127.0.0.1:5432/exhub"

func TestNewSectionDefaults(t *testing.T) {
	cfg, err := LoadWith("", noEnv)
	if err != nil {
		t.Fatal(err)
	}
	// The store brings its own defaults; the loader gives it the data directory for the default SQLite file.
	if want := store.DefaultConfig(filepath.Join(cfg.Root, ".data")); !reflect.DeepEqual(cfg.Store, want) {
		t.Fatalf("store default %+v, want %+v", cfg.Store, want)
	}
	if cfg.Kratos.PublicURL != "http://127.0.0.1:4433" || cfg.Kratos.AdminURL != "http://127.0.0.1:4434" {
		t.Fatalf("kratos %+v", cfg.Kratos)
	}
	if !slices.Equal(cfg.Auth.AllowedOrigins, []string{"http://127.0.0.1:8080", "http://localhost:8080"}) ||
		cfg.Auth.CacheTTL != 10*time.Second || cfg.Auth.NoSessionTTL != 2*time.Second {
		t.Fatalf("auth %+v", cfg.Auth)
	}
	// The checker and the gate get the Kratos URLs of the kratos section and the cookie names of the auth section.
	a, g := cfg.AuthConfig(), cfg.GateConfig()
	if a.KratosPublicURL != cfg.Kratos.PublicURL || a.KratosAdminURL != cfg.Kratos.AdminURL ||
		g.KratosPublicURL != cfg.Kratos.PublicURL || g.SessionCookie != a.SessionCookie || g.CSRFCookie != a.CSRFCookie ||
		!slices.Equal(g.TrustedProxies, a.TrustedProxies) {
		t.Fatalf("shared settings: auth %+v gate %+v", a, g)
	}
	// Demo mode without a CSRF key: a random one, the same for every use of this configuration.
	if k := a.CSRFKey.Reveal(); len(k) < 32 || k != cfg.AuthConfig().CSRFKey.Reveal() {
		t.Fatalf("demo CSRF key %d bytes, stable %v", len(k), k == cfg.AuthConfig().CSRFKey.Reveal())
	}
	if cfg.Demo.InboxURL != "http://127.0.0.1:8025" {
		t.Fatalf("demo %+v", cfg.Demo)
	}
}

func TestStoreSection(t *testing.T) {
	for _, c := range []struct{ dsn, want string }{
		{"members.sqlite", "/srv/exhub/members.sqlite"},
		{"/var/lib/exhub.sqlite", "/var/lib/exhub.sqlite"},
		{"file:x.db?_pragma=busy_timeout(5000)", "file:x.db?_pragma=busy_timeout(5000)"},
	} {
		cfg, err := LoadWith("", envOf(map[string]string{"EXHUB_ROOT": "/srv/exhub", "EXHUB_STORE_DSN": c.dsn}))
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Store.DSN.Reveal(); got != c.want {
			t.Errorf("sqlite dsn %q resolves to %q, want %q", c.dsn, got, c.want)
		}
	}
	p := write(t, t.TempDir(), "exhub.yaml", "store:\n  driver: postgres\n  max_open_conns: 20\n  conn_max_lifetime: 1h\n")
	cfg, err := LoadWith(p, envOf(map[string]string{"EXHUB_STORE_DSN": dsn, "EXHUB_STORE_BUSY_TIMEOUT": "3s"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Store.DSN.Reveal() != dsn || cfg.Store.Driver != store.DriverPostgres || cfg.Store.MaxOpenConns != 20 ||
		cfg.Store.ConnMaxLifetime != time.Hour || cfg.Store.BusyTimeout != 3*time.Second {
		t.Fatalf("postgres store %+v", cfg.Store)
	}
}

func TestListValues(t *testing.T) {
	// YAML lists, one item per line or inline.
	p := write(t, t.TempDir(), "exhub.yaml", `
auth:
  allowed_origins:
    - https://exhub.example
    - https://www.exhub.example:8443
analytics:
  backfill_periods: [1h, 1d]
  symbols: [BTCUSDT, ETHUSDT]
stream:
  origin_patterns: [app.example.com, "*.example.org"]
`)
	cfg, err := LoadWith(p, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Auth.AllowedOrigins, []string{"https://exhub.example", "https://www.exhub.example:8443"}) ||
		!slices.Equal(cfg.Analytics.BackfillPeriods, List{"1h", "1d"}) ||
		!slices.Equal(cfg.Analytics.Symbols, List{"BTCUSDT", "ETHUSDT"}) ||
		!slices.Equal(cfg.Stream.Origins(), []string{"app.example.com", "*.example.org"}) {
		t.Fatalf("lists: %+v %+v %q", cfg.Auth, cfg.Analytics, cfg.Stream.Origins())
	}
	// Files written when these were comma-separated strings still load.
	p = write(t, t.TempDir(), "exhub.yaml", "analytics:\n  backfill_periods: 5m, 1h\nstream:\n  origin_patterns: a.example.com,b.example.com\n")
	cfg, err = LoadWith(p, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Analytics.BackfillPeriods, List{"5m", "1h"}) || !slices.Equal(cfg.Stream.Origins(), []string{"a.example.com", "b.example.com"}) {
		t.Fatalf("comma strings: %q %q", cfg.Analytics.BackfillPeriods, cfg.Stream.Origins())
	}
	// The environment is comma separated, trimmed; empty clears.
	cfg, err = LoadWith(p, envOf(map[string]string{
		"EXHUB_AUTH_ALLOWED_ORIGINS": " https://a.example , https://b.example,", "EXHUB_ANALYTICS_SYMBOLS": "SOLUSDT",
		"EXHUB_ANALYTICS_BACKFILL_PERIODS": "", "EXHUB_STREAM_ORIGIN_PATTERNS": "*.c.example",
		"EXHUB_AUTH_NO_SESSION_TTL": "500ms",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Auth.AllowedOrigins, []string{"https://a.example", "https://b.example"}) ||
		!slices.Equal(cfg.Analytics.Symbols, List{"SOLUSDT"}) || len(cfg.Analytics.BackfillPeriods) != 0 ||
		!slices.Equal(cfg.Stream.Origins(), []string{"*.c.example"}) || cfg.Auth.NoSessionTTL != 500*time.Millisecond {
		t.Fatalf("env lists: %+v %+v %q", cfg.Auth, cfg.Analytics, cfg.Stream.Origins())
	}
	// A list where a scalar belongs is an error naming the line.
	p = write(t, t.TempDir(), "exhub.yaml", "auth:\n  allowed_origins: {a: b}\n")
	if _, err := LoadWith(p, noEnv); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("a map as a list: %v", err)
	}
}

func TestSecretFromFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "dsn")
	if err := os.WriteFile(f, []byte(dsn+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadWith("", envOf(map[string]string{"EXHUB_STORE_DRIVER": "postgres", "EXHUB_STORE_DSN_FILE": f}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Store.DSN.Reveal() != dsn {
		t.Fatalf("dsn from file %q (trailing newline must be trimmed)", cfg.Store.DSN.Reveal())
	}
	// Both set: an error naming both variables.
	_, err = LoadWith("", envOf(map[string]string{"EXHUB_STORE_DSN": dsn, "EXHUB_STORE_DSN_FILE": f}))
	if err == nil || !strings.Contains(err.Error(), "EXHUB_STORE_DSN and EXHUB_STORE_DSN_FILE") || !strings.Contains(err.Error(), "store.dsn") {
		t.Fatalf("both set: %v", err)
	}
	// An unreadable file: an error naming the variable, never a value.
	_, err = LoadWith("", envOf(map[string]string{"EXHUB_STORE_DSN_FILE": filepath.Join(dir, "missing")}))
	if err == nil || !strings.Contains(err.Error(), "EXHUB_STORE_DSN_FILE") {
		t.Fatalf("missing file: %v", err)
	}
	// A file may hold a value the YAML also sets: the environment wins, like every override.
	p := write(t, dir, "exhub.yaml", "store:\n  driver: postgres\n  dsn: postgres://other\n")
	cfg, err = LoadWith(p, envOf(map[string]string{"EXHUB_STORE_DSN_FILE": f}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Store.DSN.Reveal() != dsn {
		t.Fatalf("file over yaml: %q", cfg.Store.DSN.Reveal())
	}
	keys := strings.Join(EnvKeys(), " ")
	for _, k := range []string{"EXHUB_STORE_DSN", "EXHUB_STORE_DSN_FILE", "EXHUB_AUTH_ALLOWED_ORIGINS", "EXHUB_DEMO_INBOX_URL",
		"EXHUB_AUTH_CACHE_TTL", "EXHUB_AUTH_CSRF_KEY", "EXHUB_AUTH_CSRF_KEY_FILE", "EXHUB_GATE_LIMITS_LOGIN_IP_N",
		"EXHUB_ANALYTICS_SYMBOLS"} {
		if !strings.Contains(keys, k) {
			t.Errorf("EnvKeys lacks %s", k)
		}
	}
	if !slices.Contains(SecretKeys(), "store.dsn") || !slices.Contains(SecretKeys(), "auth.csrf_key") ||
		!slices.Contains(SecretKeys(), "member.hook_secret") {
		t.Errorf("SecretKeys = %v", SecretKeys())
	}
}

// A loaded configuration can be printed, logged and dumped without its secrets.
func TestConfigDumpsHideSecrets(t *testing.T) {
	cfg, err := LoadWith("", envOf(map[string]string{"EXHUB_STORE_DRIVER": "postgres", "EXHUB_STORE_DSN": dsn}))
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("config", "cfg", cfg, "store", cfg.Store, "dsn", cfg.Store.DSN)
	j, _ := json.Marshal(cfg)
	y, _ := yaml.Marshal(cfg)
	for name, out := range map[string]string{
		"%v": fmt.Sprintf("%v", cfg), "%+v": fmt.Sprintf("%+v", cfg), "%#v": fmt.Sprintf("%#v", cfg),
		"%v store": fmt.Sprintf("%v", cfg.Store), "%s dsn": fmt.Sprintf("%s", cfg.Store.DSN), "slog": logs.String(), "json": string(j), "yaml": string(y),
	} {
		if strings.Contains(out, "s3cr3t") {
			t.Errorf("%s shows the secret: %s", name, out)
		}
	}
	// An error about a bad DSN names the key, not the value.
	_, err = LoadWith("", envOf(map[string]string{"EXHUB_STORE_DRIVER": "mysql", "EXHUB_STORE_DSN": dsn}))
	if err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("error %v", err)
	}
}

func TestSectionValidationNamesTheKey(t *testing.T) {
	cases := []struct {
		yaml string
		env  map[string]string
		want []string
	}{
		{yaml: "store:\n  driver: mysql\n", want: []string{"config: store.driver: \"mysql\""}},
		{yaml: "store:\n  driver: postgres\n", want: []string{"config: store.dsn: required"}},
		{yaml: "store:\n  max_open_conns: 0\n", want: []string{"config: store.max_open_conns"}},
		{yaml: "auth:\n  allowed_origins: [https://ok.example, https://x.example/path, \"*\"]\n",
			want: []string{"config: auth.allowed_origins: \"https://x.example/path\"", "\"*\""}},
		{yaml: "auth:\n  cache_ttl: -1s\n", want: []string{"config: auth.cache_ttl"}},
		{yaml: "auth:\n  no_session_ttl: -1s\n", want: []string{"config: auth.no_session_ttl"}},
		{yaml: "auth:\n  kratos_public_url: http://127.0.0.1:9\n", want: []string{"auth.kratos_public_url", "set kratos.public_url only"}},
		{yaml: "gate:\n  session_cookie: other\n", want: []string{"gate.session_cookie", "set auth.session_cookie only"}},
		{yaml: "gate:\n  max_body: 10\n", want: []string{"config: gate.max_body"}},
		{yaml: "mode: live\n", want: []string{"config: auth.csrf_key: required in live mode", "config: member.hook_secret: the development secret"}},
		{yaml: "member:\n  withdraw_lockout: 1m\n  hook_secret: short\n", want: []string{"config: member.withdraw_lockout", "config: member.hook_secret: 5 bytes"}},
		{yaml: "kyc:\n  max_documents: 0\n", want: []string{"config: kyc.max_documents"}},
		{yaml: "auth:\n  csrf_key: short\n", want: []string{"config: auth.csrf_key: 5 bytes"}},
		{yaml: "demo:\n  inbox_url: 127.0.0.1:8025\n", want: []string{"demo.inbox_url"}},
		{yaml: "market:\n  call_timeout: 0s\n", want: []string{"config: market.call_timeout: must be a positive duration"}},
		{yaml: "analytics:\n  backfill_days: -1\n  database: \"\"\n", want: []string{"analytics.backfill_days", "analytics.database"}},
		{yaml: "", env: map[string]string{"EXHUB_AUTH_CACHE_TTL": "soon"}, want: []string{"auth.cache_ttl", "EXHUB_AUTH_CACHE_TTL"}},
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
	// Each section validates alone, with keys relative to it.
	if err := (Demo{InboxURL: "x"}).Validate(); err == nil || !strings.HasPrefix(err.Error(), "inbox_url: ") {
		t.Fatalf("Demo.Validate: %v", err)
	}
	if err := stream.DefaultSettings().Validate(); err != nil {
		t.Fatalf("default stream: %v", err)
	}
}
