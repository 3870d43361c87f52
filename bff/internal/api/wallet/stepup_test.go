package wallet_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/auth/authtest"
	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/config/setting"
	"github.com/exhub/exhub/bff/internal/kratostest"
	walletsvc "github.com/exhub/exhub/bff/internal/wallet"
)

// TestSecondFactorWindowRealSessions: with real Kratos sessions, money leaves the account of a member with an
// authenticator app only while the session's last second factor is within second_factor_window (a short one
// here); past it withdrawals and gifts are refused with second_factor_stale and the step-up page, and after the
// member enters a code again (Kratos' refresh login flow, straight to Kratos: the BFF's gate never forgets the
// cached session, which lives a minute) the next withdrawal goes through. A member without an authenticator is not
// asked, and another member's fresh code never counts for a stale session.
func TestSecondFactorWindowRealSessions(t *testing.T) {
	const window = 8 * time.Second
	k := kratostest.Start(t)
	cfg := auth.Defaults()
	cfg.KratosPublicURL, cfg.KratosAdminURL = k.PublicURL, k.AdminURL
	cfg.CSRFKey = secret.New("0123456789abcdef0123456789abcdef")
	cfg.CacheTTL = time.Minute // the cache would hide a new code for a minute: the route must ask Kratos again
	checker, err := auth.NewChecker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := newMoveEnvWith(t, checker, func(c *walletsvc.Config) { c.SecondFactorWindow = setting.Duration(window) })

	// send posts with a session cookie value, its CSRF token and an allowed Origin.
	send := func(cookie, path, key, body string) reply {
		t.Helper()
		m, err := checker.CheckCookie(context.Background(), cookie)
		if err != nil {
			t.Fatal(err)
		}
		tok := checker.CSRFToken(m.SessionID)
		req, _ := http.NewRequest(http.MethodPost, e.url+path, strings.NewReader(body))
		req.Header.Set("Cookie", "exhub_session="+cookie+"; exhub_csrf="+tok)
		req.Header.Set("X-CSRF-Token", tok)
		req.Header.Set("Origin", "http://127.0.0.1:8080")
		req.Header.Set("Idempotency-Key", key)
		req.Header.Set("Content-Type", "application/json")
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
	call := func(b *authtest.Browser, path, key, body string) reply {
		t.Helper()
		return send(b.SessionCookie(), path, key, body)
	}
	const withdrawal = `{"exchange":"reference","asset":"USDT","network":"TRC20","amount":"25","address":"TXdestination"}`
	withdraw := func(b *authtest.Browser, key string) reply {
		return call(b, "/api/v1/wallet/withdrawals", key, withdrawal)
	}
	// passed: the request got past the second-factor rule. The env's accounts are linked API keys, which the
	// wallet then refuses to withdraw with (409 withdraw_linked_key) or the exchange takes (201).
	passed := func(who string, r reply) {
		t.Helper()
		if r.status == http.StatusForbidden || r.status == http.StatusUnauthorized || r.status >= 500 ||
			r.str("code") == walletsvc.CodeSecondFactorStale || r.str("code") == "aal2_required" {
			t.Fatalf("%s: %d %s, want past the second-factor rule", who, r.status, r.raw)
		}
	}
	stale := func(r reply) {
		t.Helper()
		wantStatus(t, r, http.StatusForbidden)
		if r.str("code") != walletsvc.CodeSecondFactorStale || r.str("step_up") != "/otpauth?refresh=true" ||
			r.header.Get("Content-Type") != "application/problem+json" {
			t.Fatalf("want second_factor_stale with step_up: %s %s", r.header.Get("Content-Type"), r.raw)
		}
	}
	// waitStale waits (bounded) until the session's last second factor is older than the window.
	waitStale := func(b *authtest.Browser) {
		t.Helper()
		m, err := checker.CheckCookie(context.Background(), b.SessionCookie())
		if err != nil {
			t.Fatal(err)
		}
		if m.SecondFactorAt.IsZero() {
			t.Fatalf("no second factor time for %s", b.Email)
		}
		deadline := time.Now().Add(time.Minute)
		for time.Since(m.SecondFactorAt) <= window+time.Second {
			if time.Now().After(deadline) {
				t.Fatal("the second factor never aged past the window")
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	alice := authtest.NewBrowser(t, k.PublicURL)
	alice.SignUp("alice")
	alice.EnableTOTP() // completes the second factor in this session now
	bob := authtest.NewBrowser(t, k.PublicURL)
	bob.SignUp("bob") // no authenticator
	carol := authtest.NewBrowser(t, k.PublicURL)
	carol.SignUp("carol")
	carol.EnableTOTP()

	// A fresh factor: accepted.
	passed("fresh factor", withdraw(alice, "a1"))

	waitStale(alice)
	waitStale(carol)
	// Past the window: refused before anything is journaled, for withdrawals and gifts alike.
	stale(withdraw(alice, "a2"))
	stale(call(alice, "/api/v1/wallet/gifts", "a3", `{"exchange":"reference","asset":"USDT","amount":"1","recipient":"b"}`))
	// A member without an authenticator is not asked, however old the session.
	passed("member without 2FA", withdraw(bob, "b1"))

	// Another member's fresh code never counts for alice's stale session.
	carol.StepUp()
	passed("carol after her step-up", withdraw(carol, "c1"))
	stale(withdraw(alice, "a2"))

	// Alice enters a code again, straight to Kratos (not through the gate, so nothing drops the cached session).
	// Kratos sets a new cookie value, which no cache holds; the old value still names the same session, whose
	// stale answer the cache keeps for a minute: the route asks Kratos again past it. Both are accepted, with the
	// key of a refused request (a refusal journals nothing, so it is a new request, not a replay).
	old := alice.SessionCookie()
	alice.StepUp()
	if alice.SessionCookie() == old {
		t.Fatal("the step-up kept the cookie value: the old-cookie case below proves nothing")
	}
	passed("alice after her step-up, the cookie from before", send(old, "/api/v1/wallet/withdrawals", "a2", withdrawal))
	passed("alice after her step-up", withdraw(alice, "a4"))
}
