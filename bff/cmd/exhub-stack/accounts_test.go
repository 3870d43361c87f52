package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exhub/exhub/bff/internal/config"
)

func TestAccountsEnv(t *testing.T) {
	c := Config{DataDir: t.TempDir()}
	settings := map[string]map[string]string{
		"binance": {"api_key": "bkey", "api_secret": "bsecret", "broker": "true", "rest_url": "http://127.0.0.1:7001"},
		"okx":     {"api_key": "okey", "api_secret": "osecret", "passphrase": "opass", "broker": "true"},
		"other":   {"api_key": "x", "api_secret": "y", "broker": "false"},
		"paper":   {"api_key": "p", "api_secret": "q"},
	}
	env, err := accountsEnv(c, settings)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
		if strings.Contains(v, "secret") || strings.Contains(v, "bkey") {
			t.Fatalf("a credential is in the environment: %s", kv)
		}
	}
	ring := vars["EXHUB_ACCOUNTS_KEY_RING_FILE"]
	first, err := os.ReadFile(ring)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(ring); fi.Mode().Perm() != 0o600 {
		t.Fatalf("key ring mode %v", fi.Mode().Perm())
	}
	// The key is made once: a second start keeps it, so sealed credentials still open.
	if _, err := accountsEnv(c, settings); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(ring); string(again) != string(first) {
		t.Fatal("the demo key changed on the second start")
	}
	// The BFF's loader reads them as the accounts section.
	cfg, err := config.LoadWith("", func(k string) (string, bool) {
		v, ok := vars[k]
		if k == "EXHUB_DATA_DIR" {
			return c.DataDir, true
		}
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := cfg.Accounts.Keyring()
	if err != nil || keys.Active() != demoKeyID {
		t.Fatalf("keyring %v", err)
	}
	masters, err := cfg.Accounts.Broker.Masters()
	if err != nil || !cfg.Accounts.Broker.Enabled || len(masters) != 2 || masters["okx"].Passphrase.Reveal() != "opass" ||
		masters["binance"].Secret.Reveal() != "bsecret" {
		t.Fatalf("masters %v %v enabled %v", masters, err, cfg.Accounts.Broker.Enabled)
	}
	if filepath.Dir(ring) != filepath.Join(c.DataDir, "accounts") {
		t.Fatalf("key ring at %s", ring)
	}
}

// The masters come from the emulators themselves: the stack's BFF gets broker mode with both exchanges' master
// credentials as the real exhub-emulators binary prints them.
func TestEmulatorAccountsGiveBrokerMode(t *testing.T) {
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "exhub-emulators"), "github.com/exhub/exhub/adapters/cmd/exhub-emulators")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build exhub-emulators: %v\n%s", err, out)
	}
	c := Config{DataDir: t.TempDir(), BinDir: bin}
	demo, err := emulatorAccounts(c)
	if err != nil {
		t.Fatal(err)
	}
	env, err := accountsEnv(c, demo)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	if vars["EXHUB_ACCOUNTS_BROKER_ENABLED"] != "true" {
		t.Fatalf("broker mode off with the emulators' accounts %v", env)
	}
	creds, err := os.ReadFile(vars["EXHUB_ACCOUNTS_BROKER_CREDENTIALS_FILE"])
	if err != nil {
		t.Fatal(err)
	}
	for _, slug := range []string{"binance:", "okx:"} {
		if !strings.Contains(string(creds), slug) {
			t.Fatalf("no %s master among the broker credentials", strings.TrimSuffix(slug, ":"))
		}
	}
}
