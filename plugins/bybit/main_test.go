package main_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/exhub/exhub/adapters/bybit/emulator"
	"github.com/exhub/exhub/adapters/venue"
	"github.com/exhub/exhub/plugin-sdk/conformance"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// TestPluginBinary builds the plugin, launches it as the host does (go-plugin, AutoMTLS), points it at an
// in-process emulator and runs the conformance kit through the real process with the emulator's demo key and its
// fault endpoint: every check of conformance.expect must pass (market data, trading, unknown outcomes); the account
// stream, wallet and broker checks do not apply (not claimed).
func TestPluginBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "bybit")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	v, err := venue.New(venue.Config{Profile: "bybit", Seed: 5, Simulate: true, HistoryDays: 1, StepInterval: 250 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	go func() { _ = v.Run(ctx) }() // stops with cancel
	emu, err := emulator.New(emulator.Config{Venue: v, DisableRateLimits: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(emu.Handler())
	defer ts.Close()
	defer emu.Close()

	p, err := sdk.Launch(ctx, sdk.LaunchConfig{Path: bin})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	d, err := p.Exchange.Describe(ctx, &exchangev1.DescribeRequest{})
	if err != nil || d.GetExchange().GetKey() != 3 || d.GetExchange().GetSlug() != "bybit" || d.GetCapabilities().GetPageLimits().GetCandles() != 1000 ||
		!d.GetCapabilities().GetTrading().GetEnabled() || d.GetCapabilities().GetWallet() != nil || d.GetCapabilities().GetStreams().GetAccount() {
		t.Fatalf("describe: %v %v", err, d)
	}
	settings := emulator.PluginSettings(ts.URL)
	settings["rest_timeout"] = "90s" // generous: the race detector and parallel packages share two cores
	if _, err := p.Exchange.Configure(ctx, &exchangev1.ConfigureRequest{Settings: settings}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("conformance.expect")
	if err != nil {
		t.Fatal(err)
	}
	mustPass, err := conformance.ParseExpect(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	conformance.Test(t, p.Exchange, conformance.Options{StreamWait: 20 * time.Second, CheckTimeout: 2 * time.Minute, MustPass: mustPass,
		Account:  &exchangev1.AccountRef{AccountId: "demo", ApiKey: emulator.DemoAPIKey, ApiSecret: emulator.DemoAPISecret},
		FaultURL: ts.URL})
}
