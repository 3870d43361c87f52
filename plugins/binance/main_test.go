package main_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/exhub/exhub/adapters/binance/emulator"
	"github.com/exhub/exhub/adapters/venue"
	"github.com/exhub/exhub/plugin-sdk/conformance"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// TestPluginBinary builds the plugin, launches it as the host does, points it at an in-process emulator and runs
// the whole conformance kit (market data, streams, trading and wallet with the demo account) through the process.
func TestPluginBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "binance")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// A few instruments, not the whole profile: every simulation step holds the venue lock for all of them, and a
	// REST call over all symbols (tickers, premium index) takes that lock once per symbol, so with the race detector
	// and parallel packages sharing two cores a 100-instrument venue queued one tickers call behind 100 steps.
	prof, err := venue.LoadProfile("binance")
	if err != nil {
		t.Fatal(err)
	}
	// Funding every 5 s, so the funding-payments check sees a settlement.
	vc := venue.Config{Profile: "binance", Seed: 11, Simulate: true, HistoryDays: 1, FundingInterval: 5 * time.Second}
	for _, in := range prof.Instruments {
		if in.Base == "BTC" || in.Base == "ETH" || in.Base == "SOL" {
			vc.Instruments = append(vc.Instruments, in)
		}
	}
	v, err := venue.New(vc)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = v.Run(ctx) }()
	defer func() { cancel(); <-done }()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	emu, err := emulator.New(emulator.Config{Venue: v, Logger: log})
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
	if err != nil || d.GetExchange().GetKey() != 1 || d.GetExchange().GetSlug() != "binance" || d.GetCapabilities().GetPageLimits().GetCandles() != 1000 {
		t.Fatalf("describe: %v %v", err, d)
	}
	settings := emulator.PluginSettings(ts.URL)
	settings["http_timeout"] = "90s" // generous: the race detector and parallel packages share the cores
	if _, err := p.Exchange.Configure(ctx, &exchangev1.ConfigureRequest{Settings: settings}); err != nil {
		t.Fatal(err)
	}
	acct := &exchangev1.AccountRef{ApiKey: emulator.DemoAPIKey, ApiSecret: emulator.DemoAPISecret}
	f, err := os.Open("conformance.expect")
	if err != nil {
		t.Fatal(err)
	}
	mustPass, err := conformance.ParseExpect(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	// Every check the plugin must pass, the unknown-outcome section against the emulator's fault endpoint included.
	conformance.Test(t, p.Exchange, conformance.Options{Account: acct, StreamWait: 20 * time.Second, CheckTimeout: 2 * time.Minute,
		MustPass: mustPass, FaultURL: ts.URL})
}
