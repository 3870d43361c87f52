package app

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/config"
	"github.com/exhub/exhub/bff/internal/store"
)

func testConfig(t *testing.T, addr string) *config.Config {
	t.Helper()
	cfg, err := config.LoadWith("", func(k string) (string, bool) {
		v, ok := map[string]string{
			"EXHUB_HTTP_ADDR": addr, "EXHUB_VALKEY_ADDR": "", "EXHUB_CLICKHOUSE_ADDR": "", "EXHUB_CLICKHOUSE_HTTP_ADDR": "",
			"EXHUB_DATA_DIR": t.TempDir(), "EXHUB_KRATOS_PUBLIC_URL": "http://" + closedAddr(t),
			"EXHUB_KRATOS_ADMIN_URL": "http://" + closedAddr(t),
		}[k]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Exchanges = []config.Exchange{{Key: 3, Slug: "bybit", Name: "Bybit", Status: config.StatusComingSoon}}
	return cfg
}

// closedAddr is a loopback address nothing listens on (Kratos is not part of these tests).
func closedAddr(t *testing.T) string { return freeAddr(t) }

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func TestComponentOrder(t *testing.T) {
	var names []string
	for _, c := range New(testConfig(t, "127.0.0.1:0"), "test", nil).Components() {
		names = append(names, c.Name())
	}
	// The listener binds first (a busy port fails before anything opens); the store opens next (migrations) and so
	// closes after every component that uses it; the stream gateway needs the session checker and the account
	// streams (which need the accounts); HTTP serves last and so drains first.
	want := []string{"listener", "store", "content", "cache", "plugins", "market", "analytics", "auth", "members", "accounts",
		"account-streams", "trading", "rewards", "wallet", "stream", "http"}
	if !slices.Equal(names, want) {
		t.Fatalf("components %v, want %v", names, want)
	}
}

// Serve answers until its context ends, then stops every component and frees the port.
func TestServeStopsOnCancel(t *testing.T) {
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	cfg := testConfig(t, addr)
	go func() { done <- Serve(ctx, cfg, "test", io.Discard) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get("http://" + addr + "/api/v1/exchanges")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("BFF not up: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The private routes are mounted behind the session checker, the self-service gate in front of Kratos.
	res, err := http.Get("http://" + addr + "/api/v1/me")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized || res.Header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("GET /api/v1/me without a session: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	res, err = http.Post("http://"+addr+"/.ory/self-service/login?flow=f", "application/json",
		strings.NewReader(`{"method":"password","identifier":"a@example.com","password":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "identity_unavailable") {
		t.Fatalf("gate with Kratos down: %d %s", res.StatusCode, body)
	}
	// Kratos' web hooks reach the member service, which checks their secret.
	res, err = http.Post("http://"+addr+"/internal/kratos/hooks/login", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("hook without the secret: %d", res.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("port still held after Serve returned: %v", err)
	}
	l.Close()
	// The store was opened and migrated in the data directory (and closed: it opens again).
	st, err := store.Open(context.Background(), cfg.Store)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if v, err := st.SchemaVersion(context.Background()); err != nil || v < 1 {
		t.Fatalf("schema version %d %v: migrations did not run at start", v, err)
	}
	if _, err := os.Stat(filepath.Join(cfg.DataPath(), store.SQLiteFile)); err != nil {
		t.Fatalf("no SQLite file in the data directory: %v", err)
	}
}

func TestBusyPortStopsTheStart(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	err = New(testConfig(t, l.Addr().String()), "test", nil).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "is already in use") {
		t.Fatalf("busy port: %v", err)
	}
}
