package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/exhub/exhub/analytics/ingest"
	"github.com/exhub/exhub/analytics/service"
)

type fakeAnalytics struct {
	st ingest.Stats
	ex []service.ExchangeStatus
}

func (f *fakeAnalytics) Stats() ingest.Stats                 { return f.st }
func (f *fakeAnalytics) Exchanges() []service.ExchangeStatus { return f.ex }

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, err := io.ReadAll(rec.Body)
	if err != nil || rec.Code != 200 {
		t.Fatalf("scrape: %d %v", rec.Code, err)
	}
	return string(b)
}

func TestAnalyticsMetrics(t *testing.T) {
	src := &fakeAnalytics{
		st: ingest.Stats{Added: 1500, Written: 1200, WrittenByTable: map[string]uint64{"trades": 1000, "candles_1m": 200},
			Spooled: 300, Replayed: 100, InsertErrors: 3, Rejected: 2, Pending: 7, SpoolFiles: 2, SpoolRows: 200,
			SpoolBytes: 4096, SpoolFull: true},
		ex: []service.ExchangeStatus{{Exchange: "binance", Leading: true, LiveRows: map[string]uint64{"trades": 900},
			BackfillInstruments: 40, BackfillDone: 12, BackfillRows: 5000, BackfillPasses: 2, BackfillLastPass: 1767225600000},
			{Exchange: "okx"}},
	}
	m := New()
	m.RegisterAnalytics(src)
	out := scrape(t, m)
	for _, want := range []string{
		`exhub_analytics_rows_written_total{table="trades"} 1000`,
		`exhub_analytics_rows_written_total{table="candles_1m"} 200`,
		`exhub_analytics_rows_added_total 1500`,
		`exhub_analytics_insert_errors_total 3`,
		`exhub_analytics_rows_rejected_total 2`,
		`exhub_analytics_rows_spooled_total 300`,
		`exhub_analytics_rows_replayed_total 100`,
		`exhub_analytics_pending_rows 7`,
		`exhub_analytics_spool_bytes 4096`,
		`exhub_analytics_spool_batches 2`,
		`exhub_analytics_spool_rows 200`,
		`exhub_analytics_spool_full 1`,
		`exhub_analytics_ingest_leader{exchange="binance"} 1`,
		`exhub_analytics_ingest_leader{exchange="okx"} 0`,
		`exhub_analytics_live_rows_total{exchange="binance",table="trades"} 900`,
		`exhub_analytics_backfill_instruments{exchange="binance"} 40`,
		`exhub_analytics_backfill_instruments_done{exchange="binance"} 12`,
		`exhub_analytics_backfill_rows_total{exchange="binance"} 5000`,
		`exhub_analytics_backfill_passes_total{exchange="binance"} 2`,
		`exhub_analytics_backfill_last_pass_timestamp_seconds{exchange="binance"} 1.7672256e+09`,
		"# TYPE exhub_analytics_spool_full gauge",
		"# TYPE exhub_analytics_rows_written_total counter",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// Values are read at each scrape: the alarm clears when the spool drains.
	src.st.SpoolFull, src.st.SpoolBytes = false, 0
	if out = scrape(t, m); !strings.Contains(out, "exhub_analytics_spool_full 0\n") || !strings.Contains(out, "exhub_analytics_spool_bytes 0\n") {
		t.Error("spool alarm did not clear")
	}
}
