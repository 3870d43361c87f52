package analytics

import (
	"time"

	"github.com/exhub/exhub/bff/internal/config/setting"
)

// Settings is the analytics section of the BFF configuration (bff/exhub.yaml, EXHUB_ANALYTICS_*): market history in
// ClickHouse (clickhouse.addr): ingest, backfill and the analytics API.
type Settings struct {
	// Enabled runs analytics when clickhouse.addr is set.
	Enabled bool `yaml:"enabled"`
	// Database holds the analytics tables.
	Database string `yaml:"database"`
	// Cluster, when set, creates replicated and Distributed tables ON CLUSTER this cluster.
	Cluster string `yaml:"cluster"`
	// SpoolDir keeps batches while ClickHouse is down (relative to the root).
	SpoolDir string `yaml:"spool_dir"`
	// SpoolMaxMB bounds the spool.
	SpoolMaxMB int `yaml:"spool_max_mb"`
	// BatchRows and FlushInterval: a batch is written at this many rows or after this long.
	BatchRows     int              `yaml:"batch_rows"`
	FlushInterval setting.Duration `yaml:"flush_interval"`
	// Live ingests the plugins' live streams (trades, 1m candles, tickers, mark prices).
	Live bool `yaml:"live"`
	// BackfillDays of history are kept complete from the plugins' history calls (0: no backfill).
	BackfillDays int `yaml:"backfill_days"`
	// BackfillPeriods lists the derivatives series periods to backfill.
	BackfillPeriods setting.List `yaml:"backfill_periods"`
	// BackfillInterval is the time between gap checks.
	BackfillInterval setting.Duration `yaml:"backfill_interval"`
	// Symbols restricts ingest to these symbols; empty: every instrument up to max_symbols per exchange and market
	// type.
	Symbols    setting.List `yaml:"symbols"`
	MaxSymbols int          `yaml:"max_symbols"`
}

// DefaultSettings keep 30 days of history of at most 20 symbols per exchange and market type.
func DefaultSettings() Settings {
	return Settings{
		Enabled: true, Database: "exhub", SpoolDir: ".data/analytics-spool", SpoolMaxMB: 1024,
		BatchRows: 10000, FlushInterval: setting.Duration(time.Second), Live: true, BackfillDays: 30,
		BackfillPeriods: setting.List{"5m", "15m", "1h", "4h", "1d"}, BackfillInterval: setting.Duration(10 * time.Minute),
		MaxSymbols: 20,
	}
}

// Validate names each bad key relative to the section.
func (a Settings) Validate() error {
	var p setting.Problems
	p.Positive(setting.KeyDuration{Key: "flush_interval", D: a.FlushInterval}, setting.KeyDuration{Key: "backfill_interval", D: a.BackfillInterval})
	if !a.Enabled {
		return p.Err()
	}
	if a.Database == "" {
		p.Add("database", "is required")
	}
	if a.SpoolDir == "" {
		p.Add("spool_dir", "is required")
	}
	for _, n := range []struct {
		key string
		v   int
	}{{"spool_max_mb", a.SpoolMaxMB}, {"batch_rows", a.BatchRows}, {"max_symbols", a.MaxSymbols}} {
		if n.v < 1 {
			p.Add(n.key, "must be at least 1, got %d", n.v)
		}
	}
	if a.BackfillDays < 0 {
		p.Add("backfill_days", "must not be negative")
	}
	return p.Err()
}
