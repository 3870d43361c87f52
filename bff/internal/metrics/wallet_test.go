package metrics

import (
	"strings"
	"testing"

	"github.com/exhub/exhub/bff/internal/wallet"
)

type fakeWallet struct{ s wallet.Stats }

func (f *fakeWallet) Stats() wallet.Stats { return f.s }

// TestWalletMetrics: every field of wallet.Stats reaches /metrics under its name and labels.
func TestWalletMetrics(t *testing.T) {
	m := New()
	m.RegisterWallet(&fakeWallet{wallet.Stats{Completed: 11, Acknowledged: 4, Rejected: 3, Failed: 1, Unknown: 2,
		Resolved: 2, NotExecuted: 1, Arrived: 5, InFlight: 6}})
	out := scrape(t, m)
	for _, want := range []string{
		`exhub_wallet_movements_total{outcome="completed"} 11`,
		`exhub_wallet_movements_total{outcome="acknowledged"} 4`,
		`exhub_wallet_movements_total{outcome="rejected"} 3`,
		`exhub_wallet_movements_total{outcome="failed"} 1`,
		`exhub_wallet_movements_total{outcome="unknown"} 2`,
		`exhub_wallet_resolved_total 2`,
		`exhub_wallet_not_executed_total 1`,
		`exhub_wallet_arrived_total 5`,
		`exhub_wallet_calls_in_flight 6`,
		"# TYPE exhub_wallet_movements_total counter",
		"# TYPE exhub_wallet_calls_in_flight gauge",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
