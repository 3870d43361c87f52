package app

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/accounts"
	"github.com/exhub/exhub/bff/internal/config/secret"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Live mode without a key-encryption key does not start, and says what to set.
func TestLiveModeNeedsAnAccountsKey(t *testing.T) {
	cfg := testConfig(t, "127.0.0.1:0")
	cfg.Mode = "live"
	b := New(cfg, "test", nil)
	err := b.newAccounts(context.Background())
	if err == nil || !strings.Contains(err.Error(), "EXHUB_ACCOUNTS_KEY_RING_FILE") || !strings.Contains(err.Error(), "accounts.key_ring") {
		t.Fatalf("live mode without a key: %v", err)
	}
	cfg.Accounts.KeyRing = secret.New("k1:tooshort")
	cfg.Accounts.ActiveKey = "k1"
	if err := New(cfg, "test", nil).newAccounts(context.Background()); err == nil || !strings.Contains(err.Error(), "accounts") {
		t.Fatalf("a malformed key: %v", err)
	}
}

// With a key the accounts component opens between members and http, and its key never reaches the log.
func TestServeWithAccountsKey(t *testing.T) {
	key := accounts.NewKey()
	cfg := testConfig(t, freeAddr(t))
	cfg.Accounts.KeyRing = secret.New("demo1:" + key)
	cfg.Accounts.ActiveKey = "demo1"
	logs := &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, cfg, "test", logs) }()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(logs.String(), "exhub-bff listening") {
		if time.Now().After(deadline) {
			t.Fatalf("not up:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	got := logs.String()
	if !strings.Contains(got, "exchange accounts ready") || !strings.Contains(got, `"active_key":"demo1"`) {
		t.Fatalf("accounts not opened:\n%s", got)
	}
	if strings.Contains(got, key) {
		t.Fatal("the key-encryption key is in the log")
	}
}
