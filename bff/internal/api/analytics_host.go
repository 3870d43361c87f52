package api

import (
	"context"

	"github.com/exhub/exhub/analytics/service"
	"github.com/exhub/exhub/bff/internal/config"
	"github.com/exhub/exhub/bff/internal/pluginhost"
)

// hostExchange adapts a plugin supervisor to analytics' Exchange.
type hostExchange struct{ *pluginhost.Supervisor }

func (h hostExchange) OpenStream(ctx context.Context) service.Stream { return h.StreamMarket(ctx) }

// AnalyticsConfig builds the analytics service configuration from the BFF configuration and its plugin host.
func AnalyticsConfig(cfg *config.Config, host *pluginhost.Host) service.Config {
	a := cfg.Analytics
	sc := service.Config{
		Addr: cfg.ClickHouse.Addr, HTTPAddr: cfg.ClickHouse.HTTPAddr,
		SpoolDir: cfg.AnalyticsSpoolPath(), SpoolMaxBytes: int64(a.SpoolMaxMB) << 20,
		BatchRows: a.BatchRows, FlushInterval: a.FlushInterval.D(), Live: a.Live,
		BackfillDays: a.BackfillDays, BackfillPeriods: append([]string(nil), a.BackfillPeriods...),
		BackfillInterval: a.BackfillInterval.D(), Symbols: append([]string(nil), a.Symbols...), MaxSymbols: a.MaxSymbols,
	}
	sc.Schema.Database, sc.Schema.Cluster = a.Database, a.Cluster
	if host != nil {
		for _, sup := range host.Supervisors() {
			sc.Exchanges = append(sc.Exchanges, hostExchange{sup})
		}
	}
	return sc
}
