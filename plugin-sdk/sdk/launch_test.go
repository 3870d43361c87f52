package sdk_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exhub/exhub/plugin-sdk/conformance"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// referenceBin is the reference plugin, built once for this package's tests.
var referenceBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "exhub-sdk-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	referenceBin = filepath.Join(dir, "reference")
	out, err := exec.Command("go", "build", "-o", referenceBin, "github.com/exhub/exhub/plugins/reference").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build the reference plugin: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func sha256Of(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestLaunchedReferencePluginConforms(t *testing.T) {
	ctx := t.Context()
	p, err := sdk.Launch(ctx, sdk.LaunchConfig{Path: referenceBin, SHA256: sha256Of(t, referenceBin)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	if p.Protocol != sdk.ProtocolVersion || p.Pid() <= 0 {
		t.Fatalf("protocol %d pid %d", p.Protocol, p.Pid())
	}
	if _, err := p.Exchange.Configure(ctx, &exchangev1.ConfigureRequest{Settings: map[string]string{"tick_interval": "50ms"}}); err != nil {
		t.Fatal(err)
	}
	d, err := p.Exchange.Describe(ctx, &exchangev1.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Exchange.Slug != "reference" || d.Exchange.Key != 100 {
		t.Fatalf("describe: %v", d.Exchange)
	}
	// Typed errors survive the process boundary with their detail.
	_, err = p.Exchange.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: &exchangev1.AccountRef{ApiKey: "x"}, OrderId: "1"})
	if det := sdk.DetailOf(err); det.GetReason() != exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND || det.GetField() != "order_id" {
		t.Fatalf("error detail across the process: %v (%v)", det, err)
	}
	conformance.Test(t, p.Exchange, conformance.Options{Account: &exchangev1.AccountRef{ApiKey: "conformance"}})
	p.Kill()
	deadline := time.Now().Add(5 * time.Second)
	for !p.Exited() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !p.Exited() {
		t.Fatal("the plugin process did not exit after Kill")
	}
}

func TestLaunchRefusesAWrongChecksum(t *testing.T) {
	wrong := strings.Repeat("ab", 32)
	_, err := sdk.Launch(t.Context(), sdk.LaunchConfig{Path: referenceBin, SHA256: wrong})
	if err == nil || !strings.Contains(err.Error(), "SHA-256") {
		t.Fatalf("want a checksum error, got %v", err)
	}
	_, err = sdk.Launch(t.Context(), sdk.LaunchConfig{Path: referenceBin, SHA256: "xyz"})
	if err == nil || !strings.Contains(err.Error(), "64 hex digits") {
		t.Fatalf("want a malformed checksum error, got %v", err)
	}
}

func TestLaunchFailsClearlyOnANonPlugin(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct{ name, path, want string }{
		{"exits at once", script("exits", "exit 3"), "handshake"},
		{"prints garbage", script("garbage", "echo this is not a plugin; exec sleep 30"), "Unrecognized remote plugin message"},
		{"missing file", filepath.Join(dir, "nope"), "make plugins"},
		{"not executable", func() string {
			p := filepath.Join(dir, "plain")
			_ = os.WriteFile(p, []byte("x"), 0o644)
			return p
		}(), "not an executable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The bounds are generous: each case fails on its own cause (the message says which), never by a timeout.
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			p, err := sdk.Launch(ctx, sdk.LaunchConfig{Path: tc.path, StartTimeout: time.Minute})
			if err == nil {
				p.Kill()
				t.Fatal("launching a non-plugin succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q should mention %q", err, tc.want)
			}
		})
	}
}

func TestServeByHandPrintsAHint(t *testing.T) {
	out, err := exec.Command(referenceBin).CombinedOutput()
	if err == nil {
		t.Fatal("running a plugin by hand should fail")
	}
	if !strings.Contains(string(out), "plugin") {
		t.Fatalf("output should say it is a plugin: %s", out)
	}
}
