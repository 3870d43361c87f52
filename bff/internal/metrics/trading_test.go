package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/accountstream"
	"github.com/exhub/exhub/bff/internal/trading"
)

type fakeTrading struct{ s trading.Stats }

func (f *fakeTrading) Stats() trading.Stats { return f.s }

type fakeAccountStream struct{ s accountstream.Stats }

func (f *fakeAccountStream) Stats() accountstream.Stats { return f.s }

// TestTradingAndAccountStreamMetrics: every field of trading.Stats and accountstream.Stats reaches /metrics under
// its name and labels, read again at each scrape.
func TestTradingAndAccountStreamMetrics(t *testing.T) {
	tr := &fakeTrading{trading.Stats{Placed: 41, Rejected: 3, Unknown: 5, ResolvedByLookup: 2, ResolvedByStream: 2,
		NotPlaced: 1, Reconciliations: 9, ReconcileUpdates: 4, AmendsUnknown: 6, CancelsUnknown: 7, IntentWrites: 49,
		IntentWriteTime: 1500 * time.Millisecond, InFlight: 8}}
	as := &fakeAccountStream{accountstream.Stats{Topics: 3, Subscribers: 5, Leading: 2, Published: 120, Resyncs: 4,
		SlowSubscribers: 1, Gaps: 2}}
	m := New()
	m.RegisterTrading(tr)
	m.RegisterAccountStream(as)
	out := scrape(t, m)
	for _, want := range []string{
		`exhub_trading_orders_total{outcome="placed"} 41`,
		`exhub_trading_orders_total{outcome="rejected"} 3`,
		`exhub_trading_orders_total{outcome="unknown"} 5`,
		`exhub_trading_resolved_total{by="lookup"} 2`,
		`exhub_trading_resolved_total{by="stream"} 2`,
		`exhub_trading_not_placed_total 1`,
		`exhub_trading_reconciliations_total 9`,
		`exhub_trading_reconcile_updates_total 4`,
		`exhub_trading_actions_unknown_total{action="amend"} 6`,
		`exhub_trading_actions_unknown_total{action="cancel"} 7`,
		`exhub_trading_journal_intent_writes_total 49`,
		`exhub_trading_journal_intent_write_seconds_total 1.5`,
		`exhub_trading_calls_in_flight 8`,
		"# TYPE exhub_trading_orders_total counter",
		"# TYPE exhub_trading_calls_in_flight gauge",
		`exhub_account_stream_topics 3`,
		`exhub_account_stream_subscribers 5`,
		`exhub_account_stream_leading 2`,
		`exhub_account_stream_published_total 120`,
		`exhub_account_stream_resyncs_total 4`,
		`exhub_account_stream_slow_subscribers_total 1`,
		`exhub_account_stream_gaps_total 2`,
		"# TYPE exhub_account_stream_subscribers gauge",
		"# TYPE exhub_account_stream_gaps_total counter",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	tr.s.Placed, tr.s.InFlight, as.s.Subscribers = 42, 0, 0
	out = scrape(t, m)
	for _, want := range []string{`exhub_trading_orders_total{outcome="placed"} 42`, "exhub_trading_calls_in_flight 0",
		"exhub_account_stream_subscribers 0"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("second scrape lacks %q", want)
		}
	}
}
