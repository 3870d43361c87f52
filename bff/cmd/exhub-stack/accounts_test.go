package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exhub/exhub/bff/internal/config"
)

func TestAccountsEnv(t *testing.T) {
	c := Config{DataDir: t.TempDir()}
	settings := map[string]map[string]string{
		"binance": {"api_key": "bkey", "api_secret": "bsecret", "broker": "true", "rest_url": "http://127.0.0.1:7001"},
		"okx":     {"api_key": "okey", "api_secret": "osecret", "passphrase": "opass"},
		"other":   {"api_key": "x", "api_secret": "y", "broker": "false"},
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
