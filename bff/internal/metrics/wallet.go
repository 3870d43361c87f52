package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/exhub/exhub/bff/internal/wallet"
)

// WalletSource is the money-movement path as its collector reads it (*wallet.Service).
type WalletSource interface {
	Stats() wallet.Stats
}

func walletDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName("exhub", "wallet", name), help, labels, nil)
}

var (
	walletMovements = walletDesc("movements_total", "Answers to the one plugin call of each journaled money movement, "+
		"by outcome: completed, acknowledged (taken, on its way), rejected, failed (the exchange reports it failed), "+
		"unknown (answered pending).", "outcome")
	walletResolved    = walletDesc("resolved_total", "Pending movements found at the exchange by the resolver.")
	walletNotExecuted = walletDesc("not_executed_total",
		"Pending movements concluded not executed (the exchange did not know them after the grace).")
	walletArrived  = walletDesc("arrived_total", "Transfers to another exchange seen in the target's deposits.")
	walletInFlight = walletDesc("calls_in_flight", "Plugin calls of journaled movements under way on this replica.")
)

// RegisterWallet exports the money-movement path's counters (exhub_wallet_*), read from the service at each scrape.
func (m *Metrics) RegisterWallet(src WalletSource) {
	m.Registry.MustRegister(&walletCollector{src: src})
}

type walletCollector struct{ src WalletSource }

func (c *walletCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{walletMovements, walletResolved, walletNotExecuted, walletArrived, walletInFlight} {
		ch <- d
	}
}

func (c *walletCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.src.Stats()
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	counter(walletMovements, s.Completed, "completed")
	counter(walletMovements, s.Acknowledged, "acknowledged")
	counter(walletMovements, s.Rejected, "rejected")
	counter(walletMovements, s.Failed, "failed")
	counter(walletMovements, s.Unknown, "unknown")
	counter(walletResolved, s.Resolved)
	counter(walletNotExecuted, s.NotExecuted)
	counter(walletArrived, s.Arrived)
	ch <- prometheus.MustNewConstMetric(walletInFlight, prometheus.GaugeValue, float64(s.InFlight))
}
