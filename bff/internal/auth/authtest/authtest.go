// Package authtest drives a real Kratos (kratostest.Start) as a browser does, for the tests of the BFF's auth:
// browser registration and login with cookies, TOTP enrolment through the settings flow, the second factor, logout,
// and a counting proxy in front of Kratos.
package authtest

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base32"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Password is a password that passes the spec's policy.
const Password = "Tr4de!Hub#26"

// Browser is a cookie-keeping client of one Kratos public API.
type Browser struct {
	t      testing.TB
	Public string
	Client *http.Client
	Jar    *cookiejar.Jar
	Email  string
	// TOTPSecret is the enrolled authenticator secret (after EnableTOTP).
	TOTPSecret string
}

// NewBrowser returns a browser with an empty cookie jar.
func NewBrowser(t testing.TB, publicURL string) *Browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Browser{t: t, Public: strings.TrimSuffix(publicURL, "/"), Jar: jar,
		Client: &http.Client{Jar: jar, Timeout: 15 * time.Second}}
}

// RandomEmail is a fresh address.
func RandomEmail(t testing.TB) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "member-" + hex.EncodeToString(b) + "@example.com"
}

// Flow is the part of a Kratos flow the helpers read.
type Flow struct {
	ID string `json:"id"`
	UI struct {
		Action string `json:"action"`
		Nodes  []struct {
			Group      string `json:"group"`
			Attributes struct {
				ID    string `json:"id"`
				Name  string `json:"name"`
				Value any    `json:"value"`
				Text  struct {
					Text string `json:"text"`
				} `json:"text"`
			} `json:"attributes"`
		} `json:"nodes"`
		Messages []struct {
			ID   int    `json:"id"`
			Text string `json:"text"`
		} `json:"messages"`
	} `json:"ui"`
}

// CSRF is the flow's csrf_token.
func (f Flow) CSRF() string {
	for _, n := range f.UI.Nodes {
		if n.Attributes.Name == "csrf_token" {
			s, _ := n.Attributes.Value.(string)
			return s
		}
	}
	return ""
}

// Do sends a JSON request to Kratos (path relative to the public URL) and decodes a JSON answer into out.
func (b *Browser) Do(method, path string, body, out any) *http.Response {
	b.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			b.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, b.Public+path, rd)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := b.Client.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			b.t.Fatalf("%s %s: status %d: %v\n%s", method, path, resp.StatusCode, err, raw)
		}
	}
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	return resp
}

// Flow starts a browser flow (registration, login, settings, ...) with extra query (e.g. "aal=aal2").
func (b *Browser) Flow(kind, query string) Flow {
	b.t.Helper()
	var f Flow
	path := "/self-service/" + kind + "/browser"
	if query != "" {
		path += "?" + query
	}
	if resp := b.Do(http.MethodGet, path, nil, &f); resp.StatusCode != http.StatusOK || f.ID == "" {
		raw, _ := io.ReadAll(resp.Body)
		b.t.Fatalf("start %s flow: status %d\n%s", kind, resp.StatusCode, raw)
	}
	return f
}

// SignUp registers a new member by browser flow with Password and keeps the session cookie.
func (b *Browser) SignUp(nickname string) {
	b.t.Helper()
	b.Email = RandomEmail(b.t)
	f := b.Flow("registration", "")
	resp := b.Do(http.MethodPost, "/self-service/registration?flow="+f.ID, map[string]any{
		"method": "password", "csrf_token": f.CSRF(), "password": Password,
		"traits": map[string]any{"email": b.Email, "nickname": nickname, "terms": true},
	}, nil)
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		b.t.Fatalf("registration: status %d\n%s", resp.StatusCode, raw)
	}
	if b.SessionCookie() == "" {
		b.t.Fatal("registration set no session cookie")
	}
}

// SessionCookie is the jar's exhub_session value.
func (b *Browser) SessionCookie() string {
	u, _ := url.Parse(b.Public)
	for _, c := range b.Jar.Cookies(u) {
		if c.Name == "exhub_session" {
			return c.Value
		}
	}
	return ""
}

// Login signs in by browser flow with email and Password (the first factor), keeping the session cookie.
func (b *Browser) Login(email string) {
	b.t.Helper()
	f := b.Flow("login", "")
	resp := b.Do(http.MethodPost, "/self-service/login?flow="+f.ID, map[string]any{
		"method": "password", "csrf_token": f.CSRF(), "identifier": email, "password": Password,
	}, nil)
	raw, _ := io.ReadAll(resp.Body)
	// With an authenticator enrolled, Kratos answers 422 browser_location_change_required (on to the second
	// factor) and sets the aal1 session cookie.
	if resp.StatusCode != http.StatusOK &&
		!(resp.StatusCode == http.StatusUnprocessableEntity && bytes.Contains(raw, []byte("browser_location_change_required"))) {
		b.t.Fatalf("login: status %d\n%s", resp.StatusCode, raw)
	}
	if b.SessionCookie() == "" {
		b.t.Fatal("login set no session cookie")
	}
	b.Email = email
}

// EnableTOTP enrols an authenticator through the settings flow and returns its secret.
func (b *Browser) EnableTOTP() string {
	b.t.Helper()
	f := b.Flow("settings", "")
	secret := ""
	for _, n := range f.UI.Nodes {
		if n.Attributes.ID == "totp_secret_key" {
			secret = n.Attributes.Text.Text
		}
	}
	if secret == "" {
		b.t.Fatalf("settings flow shows no totp_secret_key: %+v", f.UI.Nodes)
	}
	resp := b.Do(http.MethodPost, "/self-service/settings?flow="+f.ID, map[string]any{
		"method": "totp", "csrf_token": f.CSRF(), "totp_code": TOTP(b.t, secret, time.Now()),
	}, nil)
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		b.t.Fatalf("enable totp: status %d\n%s", resp.StatusCode, raw)
	}
	b.TOTPSecret = secret
	return secret
}

// SecondFactor completes aal2 with the enrolled authenticator.
func (b *Browser) SecondFactor() {
	b.t.Helper()
	f := b.Flow("login", "aal=aal2")
	resp := b.Do(http.MethodPost, "/self-service/login?flow="+f.ID, map[string]any{
		"method": "totp", "csrf_token": f.CSRF(), "totp_code": TOTP(b.t, b.TOTPSecret, time.Now()),
	}, nil)
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		b.t.Fatalf("second factor: status %d\n%s", resp.StatusCode, raw)
	}
}

// StepUp completes the second factor again in a signed-in aal2 session (Kratos' login flow with refresh=true and
// aal=aal2, as the UI's /otpauth?refresh=true does): the session gets a new totp entry in authentication_methods.
func (b *Browser) StepUp() {
	b.t.Helper()
	f := b.Flow("login", "refresh=true&aal=aal2")
	resp := b.Do(http.MethodPost, "/self-service/login?flow="+f.ID, map[string]any{
		"method": "totp", "csrf_token": f.CSRF(), "totp_code": TOTP(b.t, b.TOTPSecret, time.Now()),
	}, nil)
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		b.t.Fatalf("step up: status %d\n%s", resp.StatusCode, raw)
	}
}

// Logout ends the session by the browser logout flow.
func (b *Browser) Logout() {
	b.t.Helper()
	var l struct {
		Token string `json:"logout_token"`
	}
	if resp := b.Do(http.MethodGet, "/self-service/logout/browser", nil, &l); resp.StatusCode != http.StatusOK || l.Token == "" {
		b.t.Fatalf("create logout: status %d", resp.StatusCode)
	}
	if resp := b.Do(http.MethodGet, "/self-service/logout?token="+url.QueryEscape(l.Token), nil, nil); resp.StatusCode != http.StatusNoContent {
		b.t.Fatalf("logout: status %d", resp.StatusCode)
	}
}

// TOTP computes the RFC 6238 code (SHA-1, 6 digits, 30 s) of a base32 secret at t.
func TOTP(t testing.TB, secret string, at time.Time) string {
	t.Helper()
	key, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(strings.TrimRight(secret, "=")))
	if err != nil {
		t.Fatalf("totp secret %q: %v", secret, err)
	}
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(at.Unix()/30))
	mac := hmac.New(sha1.New, key)
	mac.Write(msg[:])
	sum := mac.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	code := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	return fmt.Sprintf("%06d", code%1_000_000)
}

// Counter is a reverse proxy in front of Kratos that counts the requests per path.
type Counter struct {
	URL   string
	whoam atomic.Int64
	all   atomic.Int64
}

// Whoami is how many whoami calls passed.
func (c *Counter) Whoami() int64 { return c.whoam.Load() }

// All is how many calls passed.
func (c *Counter) All() int64 { return c.all.Load() }

// NewCounter proxies to target until the test ends.
func NewCounter(t testing.TB, target string) *Counter {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	c := &Counter{}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.all.Add(1)
		if r.URL.Path == "/sessions/whoami" {
			c.whoam.Add(1)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c.URL = srv.URL
	return c
}
