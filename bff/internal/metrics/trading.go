package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/exhub/exhub/bff/internal/accountstream"
	"github.com/exhub/exhub/bff/internal/trading"
)

// TradingSource is the order path as its collector reads it (*trading.Service).
type TradingSource interface {
	Stats() trading.Stats
}

// AccountStreamSource is the private account stream manager as its collector reads it (*accountstream.Manager).
type AccountStreamSource interface {
	Stats() accountstream.Stats
}

func tradingDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName("exhub", "trading", name), help, labels, nil)
}

func accountStreamDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName("exhub", "account_stream", name), help, labels, nil)
}

var (
	tradingOrders = tradingDesc("orders_total", "Answers to the one plugin call of each journaled order, position "+
		"close and algo order, by outcome: placed (acknowledged), rejected, unknown (answered pending).", "outcome")
	tradingResolved = tradingDesc("resolved_total", "Pending orders found on the exchange, by how: lookup (by client "+
		"id) or stream (an order event on the account stream).", "by")
	tradingNotPlaced = tradingDesc("not_placed_total",
		"Pending orders concluded not placed (the exchange did not know them after the grace).")
	tradingReconciled       = tradingDesc("reconciliations_total", "Accounts whose open orders were re-read against the journal.")
	tradingReconcileUpdates = tradingDesc("reconcile_updates_total",
		"Journal entries a reconciliation changed (status, fills).")
	tradingActionsUnknown = tradingDesc("actions_unknown_total",
		"Amends and cancels whose outcome stayed unknown, by action.", "action")
	tradingIntentWrites  = tradingDesc("journal_intent_writes_total", "Journal writes of new intents (before the plugin call).")
	tradingIntentSeconds = tradingDesc("journal_intent_write_seconds_total",
		"Total time of the journal writes of new intents (divide by journal_intent_writes_total for the mean).")
	tradingInFlight = tradingDesc("calls_in_flight", "Plugin calls of journaled intents under way on this replica.")

	acctTopics      = accountStreamDesc("topics", "Accounts with subscribers on this replica.")
	acctSubscribers = accountStreamDesc("subscribers", "Subscribers of account streams on this replica (browser "+
		"subscriptions and in-process consumers such as the order journal).")
	acctLeading   = accountStreamDesc("leading", "Account streams this replica leads (holds the plugin's upstream).")
	acctPublished = accountStreamDesc("published_total", "Account stream messages this replica published as leader.")
	acctResyncs   = accountStreamDesc("resyncs_total", "Resync markers fanned out to subscribers.")
	acctSlow      = accountStreamDesc("slow_subscribers_total",
		"Subscribers cut off from their backlog (resync marker and snapshot) for not keeping up.")
	acctGaps = accountStreamDesc("gaps_total", "Holes between replicas (the kept state was read again).")
)

// RegisterTrading exports the order path's counters (exhub_trading_*), read from the service at each scrape.
func (m *Metrics) RegisterTrading(src TradingSource) {
	m.Registry.MustRegister(&tradingCollector{src: src})
}

// RegisterAccountStream exports the account stream manager's gauges and counters (exhub_account_stream_*), read
// at each scrape.
func (m *Metrics) RegisterAccountStream(src AccountStreamSource) {
	m.Registry.MustRegister(&accountStreamCollector{src: src})
}

type tradingCollector struct{ src TradingSource }

func (c *tradingCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{tradingOrders, tradingResolved, tradingNotPlaced, tradingReconciled,
		tradingReconcileUpdates, tradingActionsUnknown, tradingIntentWrites, tradingIntentSeconds, tradingInFlight} {
		ch <- d
	}
}

func (c *tradingCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.src.Stats()
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	counter(tradingOrders, s.Placed, "placed")
	counter(tradingOrders, s.Rejected, "rejected")
	counter(tradingOrders, s.Unknown, "unknown")
	counter(tradingResolved, s.ResolvedByLookup, "lookup")
	counter(tradingResolved, s.ResolvedByStream, "stream")
	counter(tradingNotPlaced, s.NotPlaced)
	counter(tradingReconciled, s.Reconciliations)
	counter(tradingReconcileUpdates, s.ReconcileUpdates)
	counter(tradingActionsUnknown, s.AmendsUnknown, "amend")
	counter(tradingActionsUnknown, s.CancelsUnknown, "cancel")
	counter(tradingIntentWrites, s.IntentWrites)
	ch <- prometheus.MustNewConstMetric(tradingIntentSeconds, prometheus.CounterValue, s.IntentWriteTime.Seconds())
	ch <- prometheus.MustNewConstMetric(tradingInFlight, prometheus.GaugeValue, float64(s.InFlight))
}

type accountStreamCollector struct{ src AccountStreamSource }

func (c *accountStreamCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{acctTopics, acctSubscribers, acctLeading, acctPublished, acctResyncs,
		acctSlow, acctGaps} {
		ch <- d
	}
}

func (c *accountStreamCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.src.Stats()
	gauge := func(d *prometheus.Desc, v int) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v))
	}
	counter := func(d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v))
	}
	gauge(acctTopics, s.Topics)
	gauge(acctSubscribers, s.Subscribers)
	gauge(acctLeading, s.Leading)
	counter(acctPublished, s.Published)
	counter(acctResyncs, s.Resyncs)
	counter(acctSlow, s.SlowSubscribers)
	counter(acctGaps, s.Gaps)
}
