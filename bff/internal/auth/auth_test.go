package auth_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/auth/authtest"
	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/kratostest"
)

const testKey = "0123456789abcdef0123456789abcdef-test-key"

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }
func (c *clock) Set(t time.Time)     { c.mu.Lock(); c.now = t; c.mu.Unlock() }

func config(public, admin string) auth.Config {
	cfg := auth.Defaults()
	cfg.KratosPublicURL = public
	cfg.KratosAdminURL = admin
	cfg.CSRFKey = secret.New(testKey)
	return cfg
}

func newChecker(t *testing.T, cfg auth.Config, opts ...auth.Option) *auth.Checker {
	t.Helper()
	c, err := auth.NewChecker(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// echo answers with the member's id and e-mail.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	m, ok := auth.MemberFrom(r.Context())
	if !ok {
		http.Error(w, "no member", http.StatusInternalServerError)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]string{"id": m.ID, "email": m.Email, "ip": m.ClientIP})
})

type problem struct {
	Status     int    `json:"status"`
	Code       string `json:"code"`
	RedirectTo string `json:"redirect_to"`
}

func serve(t *testing.T, h http.Handler, r *http.Request) (*http.Response, []byte) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	resp := w.Result()
	raw, _ := io.ReadAll(resp.Body)
	return resp, raw
}

func wantProblem(t *testing.T, resp *http.Response, raw []byte, status int, code string) problem {
	t.Helper()
	var p problem
	if resp.StatusCode != status || resp.Header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("status %d (%s), want %d problem+json: %s", resp.StatusCode, resp.Header.Get("Content-Type"), status, raw)
	}
	if err := json.Unmarshal(raw, &p); err != nil || p.Code != code || p.Status != status {
		t.Fatalf("problem %s (%v), want code %q", raw, err, code)
	}
	return p
}

func TestSessionCacheHitExpiryAndForget(t *testing.T) {
	t.Parallel()
	k := kratostest.Start(t)
	counter := authtest.NewCounter(t, k.PublicURL)
	clk := &clock{now: time.Now()}
	c := newChecker(t, config(counter.URL, k.AdminURL), auth.WithClock(clk.Now))

	b := authtest.NewBrowser(t, k.PublicURL)
	b.SignUp("hodl")
	ctx := context.Background()

	m, err := c.CheckCookie(ctx, b.SessionCookie())
	if err != nil {
		t.Fatal(err)
	}
	if m.Email != b.Email || m.Nickname != "hodl" || m.AAL != "aal1" || m.ID == "" || m.SessionID == "" ||
		m.TOTP || m.LookupSecret || m.EmailVerified {
		t.Fatalf("member %+v", m)
	}
	if life := time.Until(m.ExpiresAt); life < 119*time.Hour || life > 121*time.Hour {
		t.Errorf("session expires in %s, want about 120h", life)
	}
	if time.Since(m.AuthenticatedAt) > time.Minute {
		t.Errorf("authenticated_at %s", m.AuthenticatedAt)
	}
	if n := counter.Whoami(); n != 1 {
		t.Fatalf("%d whoami calls after the first check", n)
	}

	// Concurrent checks within the TTL share one answer.
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if got, err := c.CheckCookie(ctx, b.SessionCookie()); err != nil || got.ID != m.ID {
				t.Errorf("cached check: %+v, %v", got, err)
			}
		})
	}
	wg.Wait()
	clk.Add(9 * time.Second)
	if _, err := c.CheckCookie(ctx, b.SessionCookie()); err != nil {
		t.Fatal(err)
	}
	if n := counter.Whoami(); n != 1 {
		t.Fatalf("%d whoami calls within the TTL, want 1 (cache hits)", n)
	}

	clk.Add(2 * time.Second) // 11 s: past the 10 s TTL
	if _, err := c.CheckCookie(ctx, b.SessionCookie()); err != nil {
		t.Fatal(err)
	}
	if n := counter.Whoami(); n != 2 {
		t.Fatalf("%d whoami calls after the TTL, want 2", n)
	}

	// Logout: Kratos ends the session; the cached answer would still say yes until Forget drops it.

	cookie := b.SessionCookie()
	b.Logout()
	if _, err := c.CheckCookie(ctx, cookie); err != nil {
		t.Fatalf("cached answer before Forget: %v", err)
	}
	c.Forget(cookie)
	if c.Cached() != 0 {
		t.Fatalf("%d entries after Forget", c.Cached())
	}
	if _, err := c.CheckCookie(ctx, cookie); !errors.Is(err, auth.ErrNoSession) {
		t.Fatalf("after logout and Forget: %v, want ErrNoSession", err)
	}
	if n := counter.Whoami(); n != 3 {
		t.Fatalf("%d whoami calls, want 3", n)
	}
}

func TestCacheNeverOutlivesTheSession(t *testing.T) {
	t.Parallel()
	k := kratostest.Start(t, "SESSION_LIFESPAN=1m")
	counter := authtest.NewCounter(t, k.PublicURL)
	clk := &clock{now: time.Now()}
	cfg := config(counter.URL, k.AdminURL)
	cfg.CacheTTL = time.Hour
	c := newChecker(t, cfg, auth.WithClock(clk.Now))
	b := authtest.NewBrowser(t, k.PublicURL)
	b.SignUp("short")
	m, err := c.CheckCookie(context.Background(), b.SessionCookie())
	if err != nil {
		t.Fatal(err)
	}
	// The clock is moved relative to the session's own expiry: a slow sign-up on a loaded machine must not shift it.
	clk.Set(m.ExpiresAt.Add(-20 * time.Second))
	_, _ = c.CheckCookie(context.Background(), b.SessionCookie())
	if n := counter.Whoami(); n != 1 {
		t.Fatalf("%d whoami calls within the session, want 1", n)
	}
	clk.Set(m.ExpiresAt.Add(time.Second)) // past expires_at, far within the 1 h TTL
	_, _ = c.CheckCookie(context.Background(), b.SessionCookie())
	if n := counter.Whoami(); n != 2 {
		t.Fatalf("%d whoami calls after the session's expiry, want 2 (the cache must not outlive the session)", n)
	}
}

func TestAAL2RequiredAfterTOTP(t *testing.T) {
	t.Parallel()
	k := kratostest.Start(t)
	c := newChecker(t, config(k.PublicURL, k.AdminURL))
	h := c.Middleware(echo)
	first := authtest.NewBrowser(t, k.PublicURL)
	first.SignUp("totp")
	secret := first.EnableTOTP() // Kratos raises the enrolling session itself to aal2

	// A new sign-in with the password alone is aal1, and whoami wants the second factor.
	b := authtest.NewBrowser(t, k.PublicURL)
	b.Login(first.Email)
	b.TOTPSecret = secret

	req := httptest.NewRequest(http.MethodGet, "/api/v1/me", nil)
	req.AddCookie(&http.Cookie{Name: "exhub_session", Value: b.SessionCookie()})
	resp, raw := serve(t, h, req)
	p := wantProblem(t, resp, raw, http.StatusForbidden, auth.CodeAAL2Required)
	if p.RedirectTo != "/otpauth" {
		t.Fatalf("redirect_to %q", p.RedirectTo)
	}

	// With the second factor the session is aal2 and the member shows the authenticator.
	b.SecondFactor()
	m, err := c.CheckCookie(context.Background(), b.SessionCookie())
	if err != nil {
		t.Fatal(err)
	}
	if m.AAL != "aal2" || !m.TOTP {
		t.Fatalf("after the second factor: aal %q totp %v", m.AAL, m.TOTP)
	}
}

func TestMembersNeverSeeEachOther(t *testing.T) {
	t.Parallel()
	k := kratostest.Start(t)
	c := newChecker(t, config(k.PublicURL, k.AdminURL))
	h := c.Middleware(echo)
	alice, bob := authtest.NewBrowser(t, k.PublicURL), authtest.NewBrowser(t, k.PublicURL)
	alice.SignUp("alice")
	bob.SignUp("bob")
	for range 3 { // cold and cached
		for _, who := range []*authtest.Browser{alice, bob} {
			req := httptest.NewRequest(http.MethodGet, "/api/v1/x", nil)
			// Another cookie beside the session must not confuse the lookup.
			req.Header.Set("Cookie", "theme=dark; exhub_session="+who.SessionCookie())
			resp, raw := serve(t, h, req)
			var got map[string]string
			if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &got) != nil || got["email"] != who.Email {
				t.Fatalf("%s: status %d %s", who.Email, resp.StatusCode, raw)
			}
		}
	}
	// A forged or missing cookie is 401.
	for _, cookie := range []string{"", "exhub_session=forged"} {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/x", nil)
		if cookie != "" {
			req.Header.Set("Cookie", cookie)
		}
		resp, raw := serve(t, h, req)
		wantProblem(t, resp, raw, http.StatusUnauthorized, auth.CodeUnauthorized)
	}
}

func TestCSRFAndOrigin(t *testing.T) {
	t.Parallel()
	k := kratostest.Start(t)
	c := newChecker(t, config(k.PublicURL, k.AdminURL))
	h := c.Middleware(echo)
	alice, bob := authtest.NewBrowser(t, k.PublicURL), authtest.NewBrowser(t, k.PublicURL)
	alice.SignUp("alice")
	bob.SignUp("bob")
	ctx := context.Background()
	am, err := c.CheckCookie(ctx, alice.SessionCookie())
	if err != nil {
		t.Fatal(err)
	}
	bm, err := c.CheckCookie(ctx, bob.SessionCookie())
	if err != nil {
		t.Fatal(err)
	}
	aliceToken, bobToken := c.CSRFToken(am.SessionID), c.CSRFToken(bm.SessionID)
	if aliceToken == bobToken {
		t.Fatal("two sessions share a token")
	}
	ck := c.CSRFCookie(am)
	if ck.Name != "exhub_csrf" || ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/" || ck.Value != aliceToken {
		t.Fatalf("csrf cookie %+v", ck)
	}

	post := func(origin, referer, header, cookieToken string) (*http.Response, []byte) {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/me/favorites", strings.NewReader("{}"))
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if referer != "" {
			req.Header.Set("Referer", referer)
		}
		if header != "" {
			req.Header.Set("X-CSRF-Token", header)
		}
		cookie := "exhub_session=" + alice.SessionCookie()
		if cookieToken != "" {
			cookie += "; exhub_csrf=" + cookieToken
		}
		req.Header.Set("Cookie", cookie)
		return serve(t, h, req)
	}
	good := "http://127.0.0.1:8080"
	for _, tc := range []struct {
		name, origin, referer, header, cookie, code string
	}{
		{"no origin nor referer", "", "", aliceToken, aliceToken, auth.CodeOriginRefused},
		{"foreign origin", "https://evil.example", "", aliceToken, aliceToken, auth.CodeOriginRefused},
		{"foreign referer", "", "https://evil.example/x", aliceToken, aliceToken, auth.CodeOriginRefused},
		{"sibling port", "http://127.0.0.1:8081", "", aliceToken, aliceToken, auth.CodeOriginRefused},
		{"no token", good, "", "", "", auth.CodeCSRFRefused},
		{"header only", good, "", aliceToken, "", auth.CodeCSRFRefused},
		{"cookie only", good, "", "", aliceToken, auth.CodeCSRFRefused},
		{"wrong token", good, "", "AAAA", "AAAA", auth.CodeCSRFRefused},
		{"other session's token", good, "", bobToken, bobToken, auth.CodeCSRFRefused},
		{"header and cookie differ", good, "", aliceToken, bobToken, auth.CodeCSRFRefused},
	} {
		resp, raw := post(tc.origin, tc.referer, tc.header, tc.cookie)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", tc.name, resp.StatusCode)
			continue
		}
		wantProblem(t, resp, raw, http.StatusForbidden, tc.code)
	}
	for _, tc := range []struct{ origin, referer string }{{good, ""}, {"", "http://localhost:8080/dashboard"}} {
		if resp, raw := post(tc.origin, tc.referer, aliceToken, aliceToken); resp.StatusCode != http.StatusOK ||
			!strings.Contains(string(raw), alice.Email) {
			t.Fatalf("good request (origin %q referer %q): status %d %s", tc.origin, tc.referer, resp.StatusCode, raw)
		}
	}
	// Safe methods need neither.
	req := httptest.NewRequest(http.MethodGet, "/api/v1/me", nil)
	req.AddCookie(&http.Cookie{Name: "exhub_session", Value: alice.SessionCookie()})
	if resp, raw := serve(t, h, req); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: %d %s", resp.StatusCode, raw)
	}
}

func TestKratosDownIs503(t *testing.T) {
	t.Parallel()
	port, err := kratostest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dead := fmt.Sprintf("http://127.0.0.1:%d", port)
	c := newChecker(t, config(dead, dead))
	req := httptest.NewRequest(http.MethodGet, "/api/v1/me", nil)
	req.AddCookie(&http.Cookie{Name: "exhub_session", Value: "some-session"})
	resp, raw := serve(t, c.Middleware(echo), req)
	wantProblem(t, resp, raw, http.StatusServiceUnavailable, auth.CodeUnavailable)
}

func TestClientIP(t *testing.T) {
	trusted, err := auth.ParsePrefixes([]string{"127.0.0.0/8", "::1", "10.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ remote, xff, want string }{
		{"203.0.113.9:5000", "", "203.0.113.9"},
		{"203.0.113.9:5000", "1.2.3.4", "203.0.113.9"},              // untrusted peer: its header is ignored
		{"127.0.0.1:5000", "198.51.100.7", "198.51.100.7"},          // the edge's header
		{"127.0.0.1:5000", "6.6.6.6, 198.51.100.7", "198.51.100.7"}, // a client-written hop is not believed
		{"127.0.0.1:5000", "198.51.100.7, 10.1.2.3", "198.51.100.7"},
		{"[::1]:5000", "2001:db8::1", "2001:db8::1"},
		{"127.0.0.1:5000", "garbage", "127.0.0.1"},
		{"127.0.0.1:5000", "", "127.0.0.1"},
	} {
		if got := auth.ClientIP(tc.remote, tc.xff, trusted); got != tc.want {
			t.Errorf("ClientIP(%q, %q) = %q, want %q", tc.remote, tc.xff, got, tc.want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	cfg := auth.Defaults()
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "CSRF key") {
		t.Fatalf("defaults without a key: %v", err)
	}
	cfg.CSRFKey = secret.New(testKey)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if s := fmt.Sprintf("%v %+v %#v", cfg, cfg, cfg); strings.Contains(s, testKey) {
		t.Fatalf("the configuration prints its CSRF key: %s", s)
	}
	bad := cfg
	bad.AllowedOrigins = []string{"http://127.0.0.1:8080/path"}
	bad.TrustedProxies = []string{"nope"}
	bad.KratosPublicURL = "ftp://x"
	bad.NoSessionTTL = -time.Second
	err := bad.Validate()
	for _, want := range []string{"allowed_origins", "trusted_proxies", "kratos_public_url", "no_session_ttl"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("validate: %v, want it to name %s", err, want)
		}
	}
}
