package auth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/auth/authtest"
	"github.com/exhub/exhub/bff/internal/kratostest"
)

// TestSecondFactorAtAndRecheck: the member carries when the session last completed the second factor (Kratos'
// authentication_methods); a refresh login with the authenticator moves it on; Recheck sees that past the cache
// (which Kratos' new cookie value would bypass anyway, but the old value names the same session) and refreshes it.
func TestSecondFactorAtAndRecheck(t *testing.T) {
	t.Parallel()
	k := kratostest.Start(t)
	cfg := config(k.PublicURL, k.AdminURL)
	cfg.CacheTTL = time.Hour
	c := newChecker(t, cfg)
	ctx := context.Background()

	b := authtest.NewBrowser(t, k.PublicURL)
	b.SignUp("stepup")
	m, err := c.CheckCookie(ctx, b.SessionCookie())
	if err != nil {
		t.Fatal(err)
	}
	if !m.SecondFactorAt.IsZero() {
		t.Fatalf("no authenticator, yet a second factor at %s", m.SecondFactorAt)
	}
	before := time.Now()
	b.EnableTOTP() // completes the second factor in this session
	c.Forget(b.SessionCookie())
	m, err = c.CheckCookie(ctx, b.SessionCookie())
	if err != nil {
		t.Fatal(err)
	}
	enrolled := m.SecondFactorAt
	if m.AAL != "aal2" || !m.TOTP || enrolled.Before(before.Add(-time.Second)) || time.Since(enrolled) > time.Minute {
		t.Fatalf("after enrolling: aal %s totp %v second factor at %s", m.AAL, m.TOTP, enrolled)
	}

	// The handler reads the member of the request (cached) and asks again.
	type seen struct {
		Cached, Fresh time.Time
		StepUp        string
	}
	h := c.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cached, _ := auth.MemberFrom(r.Context())
		fresh, err := auth.Recheck(r.Context())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if fresh.ID != cached.ID || fresh.ClientIP != cached.ClientIP {
			http.Error(w, "another member", http.StatusInternalServerError)
			return
		}
		_ = json.NewEncoder(w).Encode(seen{cached.SecondFactorAt, fresh.SecondFactorAt, auth.StepUpURL(r.Context())})
	}))
	ask := func(cookie string) seen {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, "/api/v1/x", nil)
		req.AddCookie(&http.Cookie{Name: "exhub_session", Value: cookie})
		resp, raw := serve(t, h, req)
		var s seen
		if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &s) != nil {
			t.Fatalf("%d %s", resp.StatusCode, raw)
		}
		return s
	}
	if s := ask(b.SessionCookie()); !s.Cached.Equal(enrolled) || !s.Fresh.Equal(enrolled) || s.StepUp != "/otpauth?refresh=true" {
		t.Fatalf("before the step-up: %+v, want %s", s, enrolled)
	}

	old := b.SessionCookie()
	b.StepUp()
	s := ask(old)
	if !s.Cached.Equal(enrolled) || !s.Fresh.After(enrolled) {
		t.Fatalf("after the step-up, the cookie from before: %+v, want cached %s and a later fresh one", s, enrolled)
	}
	// Recheck refreshed the cache: the next check sees the new time without asking.
	if m, err := c.CheckCookie(ctx, old); err != nil || !m.SecondFactorAt.Equal(s.Fresh) {
		t.Fatalf("cached after Recheck: %v %v, want %s", m, err, s.Fresh)
	}
	if m, err := c.CheckCookie(ctx, b.SessionCookie()); err != nil || !m.SecondFactorAt.Equal(s.Fresh) {
		t.Fatalf("the new cookie value: %v %v, want %s", m, err, s.Fresh)
	}

	// Outside a checked request there is nothing to ask about.
	if _, err := auth.Recheck(ctx); !errors.Is(err, auth.ErrNotChecked) {
		t.Fatalf("Recheck without a checked session: %v", err)
	}
	if auth.StepUpURL(ctx) != "" {
		t.Fatal("StepUpURL without a checked session")
	}
	cfg.AAL2URL = "/otpauth?via=app"
	if got := newChecker(t, cfg).StepUpURL(); got != "/otpauth?refresh=true&via=app" {
		t.Fatalf("StepUpURL %q", got)
	}
}
