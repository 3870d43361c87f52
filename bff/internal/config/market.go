package config

import "time"

// Market tunes the market data service (instruments, tickers, candles, books, trades).
type Market struct {
	// TickerInterval is how often the ticker lists of every exchange and market type are refreshed.
	TickerInterval Duration `yaml:"ticker_interval"`
	// InstrumentsTTL is how long an instrument list is reused before it is fetched again.
	InstrumentsTTL Duration `yaml:"instruments_ttl"`
	// TickersMaxStale bounds the age of a ticker list served (marked stale) while its exchange fails.
	TickersMaxStale Duration `yaml:"tickers_max_stale"`
	// InstrumentsMaxStale is the same bound for instrument lists.
	InstrumentsMaxStale Duration `yaml:"instruments_max_stale"`
	// CallTimeout bounds one market data call to a plugin.
	CallTimeout Duration `yaml:"call_timeout"`
}

// DefaultMarket refreshes tickers every 10 s.
func DefaultMarket() Market {
	return Market{
		TickerInterval:      Duration(10 * time.Second),
		InstrumentsTTL:      Duration(5 * time.Minute),
		TickersMaxStale:     Duration(2 * time.Minute),
		InstrumentsMaxStale: Duration(24 * time.Hour),
		CallTimeout:         Duration(10 * time.Second),
	}
}

// Validate names each bad key relative to the section.
func (m Market) Validate() error {
	var p Problems
	p.Positive(KeyDuration{Key: "ticker_interval", D: m.TickerInterval}, KeyDuration{Key: "instruments_ttl", D: m.InstrumentsTTL},
		KeyDuration{Key: "tickers_max_stale", D: m.TickersMaxStale}, KeyDuration{Key: "instruments_max_stale", D: m.InstrumentsMaxStale},
		KeyDuration{Key: "call_timeout", D: m.CallTimeout})
	return p.Err()
}

// Analytics is market history in ClickHouse (clickhouse.addr): ingest, backfill and the analytics API.
type Analytics struct {
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
	BatchRows     int      `yaml:"batch_rows"`
	FlushInterval Duration `yaml:"flush_interval"`
	// Live ingests the plugins' live streams (trades, 1m candles, tickers, mark prices).
	Live bool `yaml:"live"`
	// BackfillDays of history are kept complete from the plugins' history calls (0: no backfill).
	BackfillDays int `yaml:"backfill_days"`
	// BackfillPeriods lists the derivatives series periods to backfill.
	BackfillPeriods List `yaml:"backfill_periods"`
	// BackfillInterval is the time between gap checks.
	BackfillInterval Duration `yaml:"backfill_interval"`
	// Symbols restricts ingest to these symbols; empty: every instrument up to max_symbols per exchange and market
	// type.
	Symbols    List `yaml:"symbols"`
	MaxSymbols int  `yaml:"max_symbols"`
}

// DefaultAnalytics keeps 30 days of history of at most 20 symbols per exchange and market type.
func DefaultAnalytics() Analytics {
	return Analytics{
		Enabled: true, Database: "exhub", SpoolDir: ".data/analytics-spool", SpoolMaxMB: 1024,
		BatchRows: 10000, FlushInterval: Duration(time.Second), Live: true, BackfillDays: 30,
		BackfillPeriods: List{"5m", "15m", "1h", "4h", "1d"}, BackfillInterval: Duration(10 * time.Minute),
		MaxSymbols: 20,
	}
}

// Validate names each bad key relative to the section.
func (a Analytics) Validate() error {
	var p Problems
	p.Positive(KeyDuration{Key: "flush_interval", D: a.FlushInterval}, KeyDuration{Key: "backfill_interval", D: a.BackfillInterval})
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
