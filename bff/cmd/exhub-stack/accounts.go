package main

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/exhub/exhub/bff/internal/accounts"
)

// demoKeyID names the demo key-encryption key.
const demoKeyID = "demo1"

// accountsEnv gives the stack's BFF its exchange accounts: the demo key-encryption key (made once, kept in
// <data>/accounts/key-ring, mode 0600, so sealed credentials open again after a restart) and broker mode with the
// master credentials the emulators announce (exhub-emulators --print-accounts: api_key, api_secret, passphrase;
// broker "true"), written to <data>/accounts/broker-credentials. Both reach the BFF as _FILE variables, never as values.
func accountsEnv(c Config, demo map[string]map[string]string) ([]string, error) {
	dir := c.data("accounts")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("accounts: %w", err)
	}
	ring := filepath.Join(dir, "key-ring")
	if _, err := os.Stat(ring); errors.Is(err, fs.ErrNotExist) {
		if err := writeSecretFile(ring, demoKeyID+":"+accounts.NewKey()+"\n"); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, fmt.Errorf("accounts: %w", err)
	}
	var masters []string
	for _, slug := range slices.Sorted(maps.Keys(demo)) {
		s := demo[slug]
		if s["api_key"] == "" || s["api_secret"] == "" || s["broker"] != "true" {
			continue
		}
		m := slug + ":" + s["api_key"] + ":" + s["api_secret"]
		if s["passphrase"] != "" {
			m += ":" + s["passphrase"]
		}
		masters = append(masters, m)
	}
	creds := filepath.Join(dir, "broker-credentials")
	if err := writeSecretFile(creds, strings.Join(masters, ",")+"\n"); err != nil {
		return nil, err
	}
	return []string{
		"EXHUB_ACCOUNTS_KEY_RING_FILE=" + ring,
		"EXHUB_ACCOUNTS_ACTIVE_KEY=" + demoKeyID,
		"EXHUB_ACCOUNTS_BROKER_ENABLED=" + fmt.Sprint(len(masters) > 0),
		"EXHUB_ACCOUNTS_BROKER_CREDENTIALS_FILE=" + creds,
	}, nil
}

// writeSecretFile replaces path with content, readable by this user only.
func writeSecretFile(path, content string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		return fmt.Errorf("accounts: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("accounts: %w", err)
	}
	return nil
}
