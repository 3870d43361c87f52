package market

import (
	"time"

	"github.com/exhub/exhub/bff/internal/config/setting"
)

// Exchange status values of the configuration (exchanges[].status) and of Exchange.Status. Empty means: use the
// plugin's own status.
const (
	StatusAvailable   = "available"
	StatusComingSoon  = "coming_soon"
	StatusMaintenance = "maintenance"
)

// Config is the `market` section: how the market data service (instruments, tickers, candles, books, trades)
// refreshes and how long it serves a last good value while an exchange fails.
type Config struct {
	// TickerInterval is how often the ticker lists of every exchange and market type are refreshed.
	TickerInterval setting.Duration `yaml:"ticker_interval"`
	// InstrumentsTTL is how long an instrument list is reused before it is fetched again.
	InstrumentsTTL setting.Duration `yaml:"instruments_ttl"`
	// TickersMaxStale bounds the age of a ticker list served (marked stale) while its exchange fails.
	TickersMaxStale setting.Duration `yaml:"tickers_max_stale"`
	// InstrumentsMaxStale is the same bound for instrument lists.
	InstrumentsMaxStale setting.Duration `yaml:"instruments_max_stale"`
	// CallTimeout bounds one market data call to a plugin.
	CallTimeout setting.Duration `yaml:"call_timeout"`
}

// DefaultConfig refreshes tickers every 10 s and reuses instrument lists for 5 minutes.
func DefaultConfig() Config {
	return Config{
		TickerInterval:      setting.Duration(10 * time.Second),
		InstrumentsTTL:      setting.Duration(5 * time.Minute),
		TickersMaxStale:     setting.Duration(2 * time.Minute),
		InstrumentsMaxStale: setting.Duration(24 * time.Hour),
		CallTimeout:         setting.Duration(10 * time.Second),
	}
}

// Validate names each bad key relative to the section.
func (c Config) Validate() error {
	var p setting.Problems
	p.Positive(setting.KeyDuration{Key: "ticker_interval", D: c.TickerInterval},
		setting.KeyDuration{Key: "instruments_ttl", D: c.InstrumentsTTL},
		setting.KeyDuration{Key: "tickers_max_stale", D: c.TickersMaxStale},
		setting.KeyDuration{Key: "instruments_max_stale", D: c.InstrumentsMaxStale},
		setting.KeyDuration{Key: "call_timeout", D: c.CallTimeout})
	return p.Err()
}

// Options are the service options this section sets; the caller adds Exchanges, Cache and Logger.
func (c Config) Options() Options {
	return Options{
		TickerInterval:      c.TickerInterval.D(),
		InstrumentsTTL:      c.InstrumentsTTL.D(),
		TickersMaxStale:     c.TickersMaxStale.D(),
		InstrumentsMaxStale: c.InstrumentsMaxStale.D(),
		CallTimeout:         c.CallTimeout.D(),
	}
}
