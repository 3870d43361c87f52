package wallet_test

import (
	"os"
	"testing"

	"github.com/exhub/exhub/bff/internal/plugintest"
	"github.com/exhub/exhub/bff/internal/store/storetest"
)

// The reference exchange's plugin (plugins/reference: the in-memory paper exchange of plugin-sdk/sdktest, with its
// wallet, deposits, withdrawals, transfers and converts) and the Binance and OKX plugins, built once for this
// package.
func TestMain(m *testing.M) {
	os.Exit(plugintest.Run(m, storetest.Run, "reference", "binance", "okx"))
}
