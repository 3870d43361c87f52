package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/exhub/exhub/analytics/ingest"
	"github.com/exhub/exhub/analytics/service"
)

// AnalyticsSource is what the analytics metrics read at each scrape; *service.Service implements it.
type AnalyticsSource interface {
	Stats() ingest.Stats
	Exchanges() []service.ExchangeStatus
}

// analyticsCollector turns the analytics writer's counters and the service's per-exchange status into metrics at
// scrape time.
type analyticsCollector struct {
	src AnalyticsSource

	written, added, insertErrors, rejected, spooled, replayed         *prometheus.Desc
	pending, spoolBytes, spoolBatches, spoolRows, spoolFull           *prometheus.Desc
	leader, liveRows, bfInstruments, bfDone, bfRows, bfPasses, bfLast *prometheus.Desc
}

// RegisterAnalytics adds the analytics ingest metrics (exhub_analytics_*) to the registry.
func (m *Metrics) RegisterAnalytics(src AnalyticsSource) {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("exhub_analytics_"+name, help, labels, nil)
	}
	m.Registry.MustRegister(&analyticsCollector{
		src:           src,
		written:       d("rows_written_total", "Rows ClickHouse acknowledged (inserted directly or replayed from the spool), by table.", "table"),
		added:         d("rows_added_total", "Rows handed to the writer (live stream and backfill)."),
		insertErrors:  d("insert_errors_total", "Failed ClickHouse inserts (each failed batch counts once; its rows go to the spool)."),
		rejected:      d("rows_rejected_total", "Rows dropped because they do not fit their table."),
		spooled:       d("rows_spooled_total", "Rows written to the disk spool while ClickHouse failed."),
		replayed:      d("rows_replayed_total", "Rows replayed from the disk spool into ClickHouse."),
		pending:       d("pending_rows", "Rows in memory waiting for the next insert."),
		spoolBytes:    d("spool_bytes", "Bytes waiting in the disk spool."),
		spoolBatches:  d("spool_batches", "Batches (files) waiting in the disk spool."),
		spoolRows:     d("spool_rows", "Rows waiting in the disk spool."),
		spoolFull:     d("spool_full", "1 while the disk spool is at its bound (rows are held in memory and ingest blocks): alarm."),
		leader:        d("ingest_leader", "1 while this replica runs the exchange's live ingest and backfill (the ingest lease holder).", "exchange"),
		liveRows:      d("live_rows_total", "Rows taken from the exchange's live stream by this replica, by table.", "exchange", "table"),
		bfInstruments: d("backfill_instruments", "Instruments in the backfill pass under way (or the last one).", "exchange"),
		bfDone:        d("backfill_instruments_done", "Instruments of that pass already backfilled.", "exchange"),
		bfRows:        d("backfill_rows_total", "Rows written by backfill.", "exchange"),
		bfPasses:      d("backfill_passes_total", "Completed backfill passes.", "exchange"),
		bfLast:        d("backfill_last_pass_timestamp_seconds", "When the last backfill pass ended (Unix seconds; 0: none yet).", "exchange"),
	})
}

func (c *analyticsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.written, c.added, c.insertErrors, c.rejected, c.spooled, c.replayed,
		c.pending, c.spoolBytes, c.spoolBatches, c.spoolRows, c.spoolFull,
		c.leader, c.liveRows, c.bfInstruments, c.bfDone, c.bfRows, c.bfPasses, c.bfLast} {
		ch <- d
	}
}

func (c *analyticsCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.src.Stats()
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for table, n := range st.WrittenByTable {
		counter(c.written, n, table)
	}
	counter(c.added, st.Added)
	counter(c.insertErrors, st.InsertErrors)
	counter(c.rejected, st.Rejected)
	counter(c.spooled, st.Spooled)
	counter(c.replayed, st.Replayed)
	gauge(c.pending, float64(st.Pending))
	gauge(c.spoolBytes, float64(st.SpoolBytes))
	gauge(c.spoolBatches, float64(st.SpoolFiles))
	gauge(c.spoolRows, float64(st.SpoolRows))
	full := 0.0
	if st.SpoolFull {
		full = 1
	}
	gauge(c.spoolFull, full)
	for _, e := range c.src.Exchanges() {
		lead := 0.0
		if e.Leading {
			lead = 1
		}
		gauge(c.leader, lead, e.Exchange)
		for table, n := range e.LiveRows {
			counter(c.liveRows, n, e.Exchange, table)
		}
		gauge(c.bfInstruments, float64(e.BackfillInstruments), e.Exchange)
		gauge(c.bfDone, float64(e.BackfillDone), e.Exchange)
		counter(c.bfRows, e.BackfillRows, e.Exchange)
		counter(c.bfPasses, e.BackfillPasses, e.Exchange)
		gauge(c.bfLast, float64(e.BackfillLastPass)/1000, e.Exchange)
	}
}
