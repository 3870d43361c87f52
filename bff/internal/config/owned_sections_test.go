package config

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/market"
	"github.com/exhub/exhub/bff/internal/ratelimit"
)

// The sections their packages own (stream, valkey, plugins, analytics, ratelimit, market) keep their YAML keys, EXHUB_*
// variables and messages naming the key.
func TestOwnedSections(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "exhub.yaml", `
stream:
  max_depth: 50
  origin_patterns: [app.example.com, "*.example.org"]
valkey:
  dial_timeout: 2s
plugins:
  stream_buffer: 64
analytics:
  backfill_periods: [1h]
ratelimit:
  prefix: "test:rl:"
  max_local_keys: 500
market:
  ticker_interval: 3s
  instruments_ttl: 1m
`)
	cfg, err := LoadWith(p, envOf(map[string]string{"EXHUB_RATELIMIT_MAX_LOCAL_KEYS": "700", "EXHUB_VALKEY_LOCAL_MAX_ENTRIES": "9",
		"EXHUB_MARKET_INSTRUMENTS_TTL": "2m", "EXHUB_MARKET_CALL_TIMEOUT": "4s"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Stream.MaxDepth != 50 || !slices.Equal(cfg.Stream.Origins(), []string{"app.example.com", "*.example.org"}) ||
		cfg.Valkey.DialTimeout.D() != 2*time.Second || cfg.Valkey.LocalMaxEntries != 9 || cfg.Plugins.StreamBuffer != 64 ||
		!slices.Equal(cfg.Analytics.BackfillPeriods, List{"1h"}) {
		t.Fatalf("sections: %+v %+v %+v %+v", cfg.Stream, cfg.Valkey, cfg.Plugins, cfg.Analytics)
	}
	if cfg.RateLimit.Prefix != "test:rl:" || cfg.RateLimit.MaxLocalKeys != 700 {
		t.Fatalf("ratelimit: %+v", cfg.RateLimit)
	}
	if o := cfg.Market.Options(); o.TickerInterval != 3*time.Second || o.InstrumentsTTL != 2*time.Minute ||
		o.CallTimeout != 4*time.Second || o.TickersMaxStale != market.DefaultConfig().TickersMaxStale.D() {
		t.Fatalf("market: %+v", cfg.Market)
	}
	def, err := LoadWith("", noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if d := ratelimit.Defaults(); def.RateLimit.Prefix != d.Prefix || def.RateLimit.MaxLocalKeys != d.MaxLocalKeys {
		t.Fatalf("default ratelimit %+v", def.RateLimit)
	}
	if def.Market != market.DefaultConfig() {
		t.Fatalf("default market %+v", def.Market)
	}

	bad := write(t, dir, "bad.yaml", `
stream: {max_depth: 0, origin_patterns: ["[x"]}
valkey: {addr: "nohostport"}
plugins: {backoff_initial: 2s, backoff_max: 1s}
analytics: {database: ""}
ratelimit: {prefix: "", max_local_keys: 0}
market: {ticker_interval: 0s, instruments_max_stale: -1s}
`)
	_, err = LoadWith(bad, noEnv)
	if err == nil {
		t.Fatal("bad sections loaded")
	}
	for _, want := range []string{
		"config: stream.max_depth: must be between 1 and 1000, got 0",
		`config: stream.origin_patterns: "[x" is not a valid pattern`,
		`config: valkey.addr: "nohostport" is not host:port`,
		"config: plugins.backoff_max: 1s is below plugins.backoff_initial 2s",
		"config: analytics.database: is required",
		"config: ratelimit.prefix: is required",
		"config: ratelimit.max_local_keys: must be at least 1, got 0",
		"config: market.ticker_interval: must be a positive duration",
		"config: market.instruments_max_stale: must be a positive duration",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	keys := strings.Join(EnvKeys(), " ")
	for _, k := range []string{"EXHUB_RATELIMIT_PREFIX", "EXHUB_RATELIMIT_MAX_LOCAL_KEYS", "EXHUB_STREAM_ORIGIN_PATTERNS",
		"EXHUB_VALKEY_ADDR", "EXHUB_PLUGINS_ENV_ALLOW", "EXHUB_ANALYTICS_SPOOL_DIR",
		"EXHUB_MARKET_TICKER_INTERVAL", "EXHUB_MARKET_INSTRUMENTS_MAX_STALE"} {
		if !strings.Contains(keys, k) {
			t.Errorf("EnvKeys lacks %s", k)
		}
	}
}
