package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The tests run the real pluginctl binary against the real reference plugin (and a broken one), built once.
var bins struct{ pluginctl, reference, broken string }

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "exhub-pluginctl-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bins.pluginctl = filepath.Join(dir, "pluginctl")
	bins.reference = filepath.Join(dir, "reference")
	bins.broken = filepath.Join(dir, "broken")
	for _, b := range []struct{ out, pkg string }{
		{bins.pluginctl, "."},
		{bins.reference, "github.com/exhub/exhub/plugins/reference"},
		{bins.broken, "./testdata/brokenplugin"},
	} {
		if out, err := exec.Command("go", "build", "-o", b.out, b.pkg).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", b.pkg, err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// pluginctl runs the binary and returns stdout, stderr and the exit status.
func pluginctl(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), bins.pluginctl, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Stdin = &out, &errb, strings.NewReader(stdin)
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func TestDescribe(t *testing.T) {
	out, errs, code := pluginctl(t, "", "describe", bins.reference, "--set", "seed=5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var d struct {
		Exchange struct {
			Key  int    `json:"key"`
			Slug string `json:"slug"`
		} `json:"exchange"`
		Capabilities struct {
			MarketTypes []string `json:"marketTypes"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if d.Exchange.Key != 100 || d.Exchange.Slug != "reference" || len(d.Capabilities.MarketTypes) != 2 {
		t.Fatalf("describe: %+v", d)
	}
}

func TestCall(t *testing.T) {
	out, errs, code := pluginctl(t, "", "call", bins.reference, "GetCandles",
		`{"marketType":"MARKET_TYPE_SPOT","symbol":"BTCUSDT","interval":"1h","limit":3}`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r struct {
		Candles []struct {
			OpenTime string `json:"openTime"`
			Close    string `json:"close"`
		} `json:"candles"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Candles) != 3 {
		t.Fatalf("candles: %v %s", err, out)
	}
	// The request can come from stdin, and method names forgive case.
	out, errs, code = pluginctl(t, `{"symbol":"ETHUSDT"}`, "call", bins.reference, "getfundingrate", "-")
	if code != 0 || !strings.Contains(out, `"symbol":"ETHUSDT"`) {
		t.Fatalf("stdin call: exit %d %s %s", code, out, errs)
	}
	// A plugin error shows its typed reason and field, exit status 1.
	_, errs, code = pluginctl(t, "", "call", bins.reference, "PlaceOrder",
		`{"account":{"apiKey":"p"},"marketType":"MARKET_TYPE_SPOT","symbol":"BTCUSDT","side":"SIDE_BUY","type":"ORDER_TYPE_LIMIT","price":"100.001","qty":"1"}`)
	if code != 1 || !strings.Contains(errs, "reason: precision") || !strings.Contains(errs, "field: price") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	// Usage errors: exit status 2 with help.
	_, errs, code = pluginctl(t, "", "call", bins.reference, "NoSuchMethod")
	if code != 2 || !strings.Contains(errs, "GetOrderBook") {
		t.Fatalf("unknown method: exit %d, stderr %q", code, errs)
	}
	_, errs, code = pluginctl(t, "", "call", bins.reference, "GetTickers", `{"nope":1}`)
	if code != 2 || !strings.Contains(errs, "GetTickersRequest") {
		t.Fatalf("bad JSON: exit %d, stderr %q", code, errs)
	}
	_, errs, code = pluginctl(t, "", "call", bins.reference, "StreamMarket")
	if code != 2 || !strings.Contains(errs, "pluginctl stream") {
		t.Fatalf("streaming method: exit %d, stderr %q", code, errs)
	}
}

func TestStream(t *testing.T) {
	out, errs, code := pluginctl(t, "", "stream", bins.reference, "--sub", "book:SWAP:BTCUSDT:5", "--sub", "trades:SPOT:ETHUSDT",
		"--count", "8", "--set", "tick_interval=20ms")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 8 {
		t.Fatalf("want 8 JSON lines, got %d:\n%s", len(lines), out)
	}
	snapshot := false
	for _, l := range lines {
		var ev map[string]any
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("line is not JSON: %q", l)
		}
		if _, ok := ev["bookSnapshot"]; ok {
			snapshot = true
		}
	}
	if !snapshot {
		t.Fatalf("no book snapshot among:\n%s", out)
	}
	out, _, code = pluginctl(t, "", "stream", bins.reference, "--account-key", "paper", "--duration", "300ms")
	if code != 0 || !strings.HasPrefix(out, `{"time":`) || !strings.Contains(out, `"snapshot":`) || !strings.Contains(out, `"sequence":"1"`) {
		t.Fatalf("account stream should start with a snapshot: exit %d %s", code, out)
	}
	_, errs, code = pluginctl(t, "", "stream", bins.reference, "--sub", "book:FUTURES:BTCUSDT")
	if code != 2 || !strings.Contains(errs, "SPOT or SWAP") {
		t.Fatalf("bad sub: exit %d %s", code, errs)
	}
}

func TestConformanceExitStatus(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	expect := filepath.Join("..", "..", "..", "plugins", "reference", "conformance.expect")
	out, errs, code := pluginctl(t, "", "conformance", bins.reference, "--account-key", "paper", "--set", "tick_interval=50ms",
		"--set", "funding_interval=2s", "--set", "fault_listen="+addr, "--fault-url", "http://"+addr, "--expect", expect)
	if code != 0 || !strings.Contains(out, "PASS reference: ") || !strings.Contains(out, " 0 failed, 0 not applicable") {
		t.Fatalf("reference: exit %d\n%s\n%s", code, out, errs)
	}
	// Without the fault endpoint the unknown-outcome check does not apply, and the expect file lists it.
	out, _, code = pluginctl(t, "", "conformance", bins.reference, "--account-key", "paper", "--expect", expect, "--check", "unknown-outcome")
	if code != 1 || !strings.Contains(out, "must pass, but not applicable") {
		t.Fatalf("a listed n/a check should fail: exit %d\n%s", code, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.expect")
	if err := os.WriteFile(bad, []byte("health\nno-such-check # typo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errs, code = pluginctl(t, "", "conformance", bins.reference, "--expect", bad)
	if code != 2 || !strings.Contains(errs, "no-such-check") {
		t.Fatalf("an unknown check in the expect file: exit %d %s", code, errs)
	}
	out, _, code = pluginctl(t, "", "conformance", bins.broken, "--json", "--set", "tick_interval=50ms")
	if code != 1 {
		t.Fatalf("broken plugin: exit %d, want 1\n%s", code, out)
	}
	var rep struct {
		Failed  int `json:"failed"`
		Results []struct {
			Check  string `json:"check"`
			Status string `json:"status"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	failed := map[string]bool{}
	for _, r := range rep.Results {
		failed[r.Check] = r.Status == "fail"
	}
	if !failed["candles"] || !failed["candle-paging"] || !failed["candle-range"] || failed["order-book"] || rep.Failed != 3 {
		t.Fatalf("broken plugin report: %+v", rep)
	}
}

func TestChecksumAndSettings(t *testing.T) {
	b, err := os.ReadFile(bins.reference)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	_, errs, code := pluginctl(t, "", "describe", bins.reference, "--sha256", hex.EncodeToString(sum[:]))
	if code != 0 {
		t.Fatalf("right checksum refused: %s", errs)
	}
	_, errs, code = pluginctl(t, "", "describe", bins.reference, "--sha256", strings.Repeat("0", 64))
	if code != 1 || !strings.Contains(errs, "SHA-256") {
		t.Fatalf("wrong checksum: exit %d %q", code, errs)
	}
	_, errs, code = pluginctl(t, "", "describe", bins.reference, "--set", "colour=blue")
	if code != 1 || !strings.Contains(errs, "unknown setting") || !strings.Contains(errs, "reason: invalid_argument") {
		t.Fatalf("unknown setting: exit %d %q", code, errs)
	}
	out, _, code := pluginctl(t, "", "methods")
	if code != 0 || !strings.Contains(out, "PlaceOrder") || !strings.Contains(out, "bidirectional stream") {
		t.Fatalf("methods: %s", out)
	}
	out, _, code = pluginctl(t, "", "help", "stream")
	if code != 0 || !strings.Contains(out, "channel:MARKET:SYMBOL") {
		t.Fatalf("help stream: %s", out)
	}
}
