package wallet_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/exhub/exhub/bff/internal/store/storetest"
)

// referencePlugin is the reference exchange's plugin binary (plugins/reference: the in-memory paper exchange of
// plugin-sdk/sdktest, with its wallet, deposits, withdrawals, transfers and converts), built once for this package.
var referencePlugin string

func TestMain(m *testing.M) {
	if dir := os.Getenv("EXHUB_TEST_PLUGIN_DIR"); dir != "" { // already built plugins (bin/plugins)
		referencePlugin = filepath.Join(dir, "reference")
		storetest.Main(m)
		return
	}
	dir, err := os.MkdirTemp("", "wallet-api-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	referencePlugin = filepath.Join(dir, "reference")
	cmd := exec.Command("go", "build", "-o", referencePlugin, "../../../../plugins/reference")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the reference plugin:", err)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	if err := storetest.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "storetest:", err)
		code = max(code, 1)
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
