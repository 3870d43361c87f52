package wallet_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/auth/authtest"
	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/kratostest"
	walletsvc "github.com/exhub/exhub/bff/internal/wallet"
)

// TestMovementsRealSessions: with real Kratos sessions and the BFF's session check, a member moves money with
// session, Origin and CSRF token; without the token or the session the request is refused; another member's session
// gets 404 on the movement and never sees it listed. Kratos' admin API finds a member by e-mail (gift recipients).
func TestMovementsRealSessions(t *testing.T) {
	k := kratostest.Start(t)
	cfg := auth.Defaults()
	cfg.KratosPublicURL, cfg.KratosAdminURL = k.PublicURL, k.AdminURL
	cfg.CSRFKey = secret.New("0123456789abcdef0123456789abcdef")
	cfg.CacheTTL = time.Millisecond
	checker, err := auth.NewChecker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := newMoveEnvWith(t, checker)
	alice := authtest.NewBrowser(t, k.PublicURL)
	alice.SignUp("alice")
	bob := authtest.NewBrowser(t, k.PublicURL)
	bob.SignUp("bob")

	call := func(b *authtest.Browser, method, path, key, body string, csrf bool) reply {
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
		req.Header.Set("Origin", "http://127.0.0.1:8080")
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
		r := reply{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
		_ = json.Unmarshal(raw, &r.body)
		return r
	}
	body := `{"exchange":"reference","asset":"USDT","amount":"10","from":"FUNDING","to":"TRADING"}`
	if r := call(alice, http.MethodPost, "/api/v1/wallet/transfers", "s1", body, false); r.status != http.StatusForbidden {
		t.Fatalf("no CSRF token: %d %s", r.status, r.raw)
	}
	moved := call(alice, http.MethodPost, "/api/v1/wallet/transfers", "s1", body, true)
	if moved.status != http.StatusCreated || moved.str("status") != "completed" {
		t.Fatalf("transfer: %d %s", moved.status, moved.raw)
	}
	id := moved.str("id")
	if r := call(alice, http.MethodGet, "/api/v1/wallet/movements/"+id, "", "", false); r.status != http.StatusOK || r.str("id") != id {
		t.Fatalf("alice reads her movement: %d %s", r.status, r.raw)
	}
	if r := call(bob, http.MethodGet, "/api/v1/wallet/movements/"+id, "", "", false); r.status != http.StatusNotFound {
		t.Fatalf("bob reads alice's movement: %d %s", r.status, r.raw)
	}
	if r := call(bob, http.MethodGet, "/api/v1/wallet/movements", "", "", false); r.status != http.StatusOK || strings.Contains(r.raw, id) {
		t.Fatalf("bob's movements: %d %s", r.status, r.raw)
	}
	req, _ := http.NewRequest(http.MethodGet, e.url+"/api/v1/wallet/movements/"+id, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no session: %d", resp.StatusCode)
	}

	// Gift recipients by e-mail.
	m, err := checker.CheckCookie(context.Background(), bob.SessionCookie())
	if err != nil {
		t.Fatal(err)
	}
	dir := walletsvc.KratosDirectory{AdminURL: k.AdminURL}
	if got, err := dir.MemberIDByEmail(context.Background(), strings.ToUpper(bob.Email)); err != nil || got != m.ID {
		t.Fatalf("bob by e-mail: %q %v, want %q", got, err, m.ID)
	}
	if _, err := dir.MemberIDByEmail(context.Background(), "nobody-"+bob.Email); !errors.Is(err, walletsvc.ErrNoMember) {
		t.Fatalf("unknown e-mail: %v", err)
	}
}
