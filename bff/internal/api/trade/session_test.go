package trade_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/auth/authtest"
	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/kratostest"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// paperAccounts gives every member a reference paper account of their own.
type paperAccounts struct{}

func (paperAccounts) AccountRef(_ context.Context, member, exchange string) (*exchangev1.AccountRef, error) {
	if exchange != "reference" {
		return nil, fmt.Errorf("no account on %s", exchange)
	}
	return &exchangev1.AccountRef{AccountId: "ref-" + member, ApiKey: "paper-" + member}, nil
}

const origin = "http://127.0.0.1:8080"

// TestRealSessions: with real Kratos sessions and the BFF's session check, a member trades with session, Origin and
// CSRF token; without the token or the session the request is refused; another member's session gets 404 on the
// order for every call and never sees it.
func TestRealSessions(t *testing.T) {
	k := kratostest.Start(t)
	cfg := auth.Defaults()
	cfg.KratosPublicURL, cfg.KratosAdminURL = k.PublicURL, k.AdminURL
	cfg.CSRFKey = secret.New("0123456789abcdef0123456789abcdef")
	cfg.CacheTTL = time.Millisecond
	checker, err := auth.NewChecker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, false, checker, paperAccounts{})
	alice := authtest.NewBrowser(t, k.PublicURL)
	alice.SignUp("alice")
	bob := authtest.NewBrowser(t, k.PublicURL)
	bob.SignUp("bob")

	call := func(b *authtest.Browser, method, path, key, body string, csrf bool) answer {
		t.Helper()
		req, _ := http.NewRequest(method, e.url+path, strings.NewReader(body))
		cookie := "exhub_session=" + b.SessionCookie()
		if csrf {
			m, err := checker.CheckCookie(context.Background(), b.SessionCookie())
			if err != nil {
				t.Fatal(err)
			}
			tok := checker.CSRFToken(m.SessionID)
			cookie += "; exhub_csrf=" + tok
			req.Header.Set("X-CSRF-Token", tok)
		}
		req.Header.Set("Cookie", cookie)
		req.Header.Set("Origin", origin)
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		a := answer{status: resp.StatusCode, raw: string(raw)}
		_ = json.Unmarshal(raw, &a.body)
		return a
	}
	body := `{"exchange":"reference","market_type":"SPOT","symbol":"BTCUSDT","side":"BUY","type":"LIMIT","price":"20000","qty":"0.01"}`

	if a := call(alice, http.MethodPost, "/api/v1/orders", key(), body, false); a.status != http.StatusForbidden {
		t.Fatalf("no CSRF token: %d %s", a.status, a.raw)
	}
	placed := call(alice, http.MethodPost, "/api/v1/orders", key(), body, true)
	if placed.status != http.StatusCreated || placed.str("status") != "open" {
		t.Fatalf("place: %d %s", placed.status, placed.raw)
	}
	id := placed.str("id")
	if a := call(alice, http.MethodGet, "/api/v1/orders/"+id, "", "", false); a.status != 200 || a.str("id") != id {
		t.Fatalf("alice reads her order: %d %s", a.status, a.raw)
	}
	for _, m := range []string{http.MethodGet, http.MethodPatch, http.MethodDelete} {
		b := ""
		if m == http.MethodPatch {
			b = `{"price":"19000"}`
		}
		if a := call(bob, m, "/api/v1/orders/"+id, "", b, true); a.status != http.StatusNotFound {
			t.Fatalf("bob %s alice's order: %d %s", m, a.status, a.raw)
		}
	}
	if a := call(bob, http.MethodGet, "/api/v1/orders?exchange=reference&market_type=SPOT&symbol=BTCUSDT", "", "", false); a.status != 200 || strings.Contains(a.raw, id) {
		t.Fatalf("bob's open orders: %d %s", a.status, a.raw)
	}
	req, _ := http.NewRequest(http.MethodGet, e.url+"/api/v1/orders/"+id, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no session: %d", resp.StatusCode)
	}
	if a := call(alice, http.MethodDelete, "/api/v1/orders/"+id, "", "", true); a.status != 200 || a.str("status") != "cancelled" {
		t.Fatalf("alice cancels: %d %s", a.status, a.raw)
	}
}
