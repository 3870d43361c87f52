package bybit_test

import (
	"testing"
	"time"

	"github.com/exhub/exhub/adapters/bybit/emulator"
	"github.com/exhub/exhub/plugin-sdk/conformance"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func demoAccount() *exchangev1.AccountRef {
	return &exchangev1.AccountRef{AccountId: "demo", ApiKey: emulator.DemoAPIKey, ApiSecret: emulator.DemoAPISecret}
}

// tradingChecks are the conformance kit's checks of what the adapter claims for trading.
var tradingChecks = []string{"market-capabilities", "check-credentials", "trading-round-trip", "idempotent-client-order-id",
	"cancel-all", "error-precision", "error-order-not-found", "error-unknown-symbol-order", "error-insufficient-funds",
	"positions-leverage", "algo-orders", "fills-history", "unknown-outcome", "unknown-outcome-amend", "price-match", "tpsl-on-entry"}

// TestConformanceTrading runs the kit's trading and unknown-outcome checks with the demo key, the emulator's fault
// endpoint arming lost answers.
func TestConformanceTrading(t *testing.T) {
	w := shared(t)
	conformance.Test(t, w.c, conformance.Options{Account: demoAccount(), FaultURL: w.ts.URL, StreamWait: 20 * time.Second,
		CheckTimeout: 2 * time.Minute, Only: tradingChecks, MustPass: tradingChecks})
}
