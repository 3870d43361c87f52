package account_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/api/account"
	"github.com/exhub/exhub/bff/internal/api/account/accounttest"
	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/auth/authtest"
	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/kratostest"
)

func TestMe(t *testing.T) {
	t.Parallel()
	k := kratostest.Start(t)
	cfg := auth.Defaults()
	cfg.KratosPublicURL, cfg.KratosAdminURL = k.PublicURL, k.AdminURL
	cfg.CSRFKey = secret.New("0123456789abcdef0123456789abcdef")
	checker, err := auth.NewChecker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	api := accounttest.New(t, account.Deps{Auth: checker})

	// No session, a forged one: 401 problem+json.
	for _, args := range [][]any{nil, {"Cookie: exhub_session=forged"}} {
		resp := api.Get("/api/v1/me", args...)
		var p struct {
			Status int    `json:"status"`
			Code   string `json:"code"`
		}
		if resp.Code != http.StatusUnauthorized || resp.Header().Get("Content-Type") != "application/problem+json" ||
			json.Unmarshal(resp.Body.Bytes(), &p) != nil || p.Code != "unauthorized" {
			t.Fatalf("without a session: %d %s %s", resp.Code, resp.Header().Get("Content-Type"), resp.Body)
		}
	}

	alice, bob := authtest.NewBrowser(t, k.PublicURL), authtest.NewBrowser(t, k.PublicURL)
	alice.SignUp("alice")
	bob.SignUp("bob")
	for _, b := range []*authtest.Browser{alice, bob, alice} {
		resp := api.Get("/api/v1/me", "Cookie: exhub_session="+b.SessionCookie())
		if resp.Code != http.StatusOK {
			t.Fatalf("me: %d %s", resp.Code, resp.Body)
		}
		var me account.Me
		if err := json.Unmarshal(resp.Body.Bytes(), &me); err != nil {
			t.Fatal(err)
		}
		if me.Email != b.Email || me.AAL != "aal1" || me.TwoFactor.TOTP || me.ID == "" || me.EmailVerified {
			t.Fatalf("me %+v for %s", me, b.Email)
		}
		if life := time.Until(me.SessionExpiresAt); life < 119*time.Hour || life > 121*time.Hour {
			t.Fatalf("session_expires_at in %s", life)
		}
		if cc := resp.Header().Get("Cache-Control"); cc != "private, no-store" {
			t.Fatalf("Cache-Control %q", cc)
		}
		var csrf *http.Cookie
		for _, c := range resp.Result().Cookies() {
			if c.Name == "exhub_csrf" {
				csrf = c
			}
		}
		m, err := checker.CheckCookie(context.Background(), b.SessionCookie())
		if err != nil {
			t.Fatal(err)
		}
		if csrf == nil || csrf.Value != checker.CSRFToken(m.SessionID) || csrf.HttpOnly || csrf.SameSite != http.SameSiteStrictMode {
			t.Fatalf("csrf cookie %+v", csrf)
		}
	}

	// The raw body names the contract's fields.
	resp := api.Get("/api/v1/me", "Cookie: exhub_session="+alice.SessionCookie())
	var raw map[string]any
	_ = json.Unmarshal(resp.Body.Bytes(), &raw)
	for _, f := range []string{"id", "email", "email_verified", "phone_verified", "nickname", "aal", "two_factor", "authenticated_at", "session_expires_at"} {
		if _, ok := raw[f]; !ok {
			t.Errorf("field %q missing: %s", f, resp.Body)
		}
	}

	// OpenAPI: tagged account, with the session cookie scheme.
	op := api.OpenAPI().Paths["/api/v1/me"].Get
	if op == nil || len(op.Tags) != 1 || op.Tags[0] != "account" || len(op.Security) != 1 {
		t.Fatalf("operation %+v", op)
	}
	if s := api.OpenAPI().Components.SecuritySchemes["session"]; s == nil || s.In != "cookie" || s.Name != "exhub_session" {
		t.Fatalf("security scheme %+v", s)
	}
}

func TestMeNeedsTheSecondFactor(t *testing.T) {
	t.Parallel()
	k := kratostest.Start(t)
	cfg := auth.Defaults()
	cfg.KratosPublicURL, cfg.KratosAdminURL = k.PublicURL, k.AdminURL
	cfg.CSRFKey = secret.New("0123456789abcdef0123456789abcdef")
	checker, err := auth.NewChecker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	api := accounttest.New(t, account.Deps{Auth: checker})
	first := authtest.NewBrowser(t, k.PublicURL)
	first.SignUp("two")
	secret := first.EnableTOTP()
	b := authtest.NewBrowser(t, k.PublicURL)
	b.Login(first.Email)
	b.TOTPSecret = secret

	resp := api.Get("/api/v1/me", "Cookie: exhub_session="+b.SessionCookie())
	var p struct {
		Code       string `json:"code"`
		RedirectTo string `json:"redirect_to"`
	}
	if resp.Code != http.StatusForbidden || json.Unmarshal(resp.Body.Bytes(), &p) != nil || p.Code != "aal2_required" || p.RedirectTo == "" {
		t.Fatalf("aal1 session of a TOTP member: %d %s", resp.Code, resp.Body)
	}
	b.SecondFactor()
	resp = api.Get("/api/v1/me", "Cookie: exhub_session="+b.SessionCookie())
	var me account.Me
	if resp.Code != http.StatusOK || json.Unmarshal(resp.Body.Bytes(), &me) != nil || me.AAL != "aal2" || !me.TwoFactor.TOTP {
		t.Fatalf("after the second factor: %d %s", resp.Code, resp.Body)
	}
}
