package conformance_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/exhub/exhub/plugin-sdk/conformance"
	"github.com/exhub/exhub/plugin-sdk/faults"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdktest"
)

// reference starts a reference exchange served in-process and its fault endpoint on loopback.
func reference(t *testing.T, wrap func(*sdktest.Server) exchangev1.ExchangeServer) (exchangev1.ExchangeClient, string) {
	t.Helper()
	// Funding every 2 s, so the funding-payments check sees a settlement.
	ref := sdktest.New(sdktest.Options{TickInterval: 20 * time.Millisecond, FundingInterval: 2 * time.Second})
	t.Cleanup(ref.Close)
	var impl exchangev1.ExchangeServer = ref
	if wrap != nil {
		impl = wrap(ref)
	}
	client, stop, err := sdktest.ServeInProcess(impl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	mux := http.NewServeMux()
	mux.Handle(faults.Path, ref.Faults())
	fs := httptest.NewServer(mux)
	t.Cleanup(fs.Close)
	return client, fs.URL
}

func TestReferenceExchangeConforms(t *testing.T) {
	client, faultURL := reference(t, nil)
	// The reference must pass every check: nothing it offers may be n/a.
	conformance.Test(t, client, conformance.Options{Account: &exchangev1.AccountRef{ApiKey: "conformance"},
		FaultURL: faultURL, MustPass: conformance.CheckNames()})
}

func TestKitCatchesViolations(t *testing.T) {
	client, _ := reference(t, func(s *sdktest.Server) exchangev1.ExchangeServer { return multiBroken(s) })
	rep := conformance.Run(t.Context(), client, conformance.Options{Account: &exchangev1.AccountRef{ApiKey: "k"}})
	failed := map[string]string{}
	for _, r := range rep.Results {
		if r.Status == conformance.Fail {
			failed[r.Check] = r.Detail
		}
	}
	for _, want := range []string{"candles", "candle-paging", "order-book", "error-order-not-found"} {
		if _, ok := failed[want]; !ok {
			t.Errorf("check %s should fail against a broken plugin; failures: %v", want, failed)
		}
	}
	for _, mustPass := range []string{"describe", "instruments", "trades", "stream-book", "trading-round-trip"} {
		if d, ok := failed[mustPass]; ok {
			t.Errorf("check %s should still pass, failed with %s", mustPass, d)
		}
	}
	if rep.OK() || rep.Failed != len(failed) {
		t.Errorf("report OK=%v failed=%d, want not OK with %d failures", rep.OK(), rep.Failed, len(failed))
	}
	if !strings.Contains(failed["error-order-not-found"], "ORDER_NOT_FOUND") {
		t.Errorf("detail should name the expected reason: %q", failed["error-order-not-found"])
	}
}

// TestEveryCheckCanFail runs each check against the reference with exactly one defect that check exists to catch,
// and wants exactly that check to fail. A check without a broken variant fails the test.
func TestEveryCheckCanFail(t *testing.T) {
	for _, name := range conformance.CheckNames() {
		t.Run(name, func(t *testing.T) {
			wrap, ok := defects[name]
			if !ok {
				t.Fatalf("check %s has no broken variant in defects: nothing proves it can fail", name)
			}
			t.Parallel()
			client, faultURL := reference(t, wrap)
			rep := conformance.Run(t.Context(), client, conformance.Options{Account: &exchangev1.AccountRef{ApiKey: "broken-" + name},
				FaultURL: faultURL, Only: []string{name}})
			for _, r := range rep.Results {
				switch {
				case r.Check == name && r.Status != conformance.Fail:
					t.Errorf("%s: %s against its broken variant (%s), want fail", name, r.Status, r.Detail)
				case r.Check != name && r.Status != conformance.Pass && name != "describe": // everything needs Describe
					t.Errorf("%s: prerequisite %s is %s: %s", name, r.Check, r.Status, r.Detail)
				}
			}
		})
	}
	for name := range defects {
		if !slices.Contains(conformance.CheckNames(), name) {
			t.Errorf("defects has a variant for %q, which is not a check", name)
		}
	}
}

func TestMustPass(t *testing.T) {
	client, _ := reference(t, nil)
	// Without an account the trading checks do not apply: listed as must pass, that fails the run.
	rep := conformance.Run(t.Context(), client, conformance.Options{MustPass: []string{"health", "trading-round-trip"},
		Only: []string{"health", "trading-round-trip"}})
	status := map[string]conformance.Status{}
	for _, r := range rep.Results {
		status[r.Check] = r.Status
	}
	if rep.OK() || status["trading-round-trip"] != conformance.Fail || status["health"] != conformance.Pass {
		t.Fatalf("must-pass n/a should fail: %+v", rep.Results)
	}
	rep = conformance.Run(t.Context(), client, conformance.Options{MustPass: []string{"no-such-check"}, Only: []string{"health"}})
	if rep.OK() || rep.Results[0].Check != "expect" || !strings.Contains(rep.Results[0].Detail, "no-such-check") {
		t.Fatalf("an unknown must-pass name should fail the run: %+v", rep.Results)
	}
	names, err := conformance.ParseExpect(strings.NewReader("# comment\nhealth   # trailing\n\n  describe\n"))
	if err != nil || !slices.Equal(names, []string{"health", "describe"}) {
		t.Fatalf("ParseExpect: %v %v", names, err)
	}
	if _, err := conformance.ParseExpect(strings.NewReader("health\nhelth\n")); err == nil || !strings.Contains(err.Error(), "helth") {
		t.Fatalf("ParseExpect should refuse an unknown check: %v", err)
	}
	if _, err := conformance.ParseExpect(strings.NewReader("health\nhealth\n")); err == nil {
		t.Fatal("ParseExpect should refuse a repeated check")
	}
	// The reference exchange's expect file lists every check.
	f, err := os.Open(filepath.Join("..", "..", "plugins", "reference", "conformance.expect"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ref, err := conformance.ParseExpect(f)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ref)
	all := slices.Sorted(slices.Values(conformance.CheckNames()))
	if !slices.Equal(ref, all) {
		t.Errorf("plugins/reference/conformance.expect lists %v, want every check %v", ref, all)
	}
}

func TestReportFormats(t *testing.T) {
	client, _ := reference(t, nil)
	rep := conformance.Run(t.Context(), client, conformance.Options{})
	if !rep.OK() {
		t.Fatalf("reference without an account should pass: %+v", rep)
	}
	// Without an account the trading and wallet checks do not apply.
	if rep.Skipped == 0 || rep.Passed+rep.Skipped != len(conformance.CheckNames()) {
		t.Errorf("passed %d + n/a %d != %d checks", rep.Passed, rep.Skipped, len(conformance.CheckNames()))
	}
	var buf bytes.Buffer
	if err := rep.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"CHECK", "RESULT", "DURATION", "stream-book", "PASS reference:", "N/A"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	js, err := rep.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back conformance.Report
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if back.Passed != rep.Passed || len(back.Results) != len(rep.Results) || back.Exchange != "reference" {
		t.Errorf("JSON round trip lost data: %s", js)
	}
}
