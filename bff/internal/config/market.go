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
