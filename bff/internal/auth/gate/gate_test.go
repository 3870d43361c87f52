package gate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/auth/authtest"
	"github.com/exhub/exhub/bff/internal/auth/gate"
	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/kratostest"
	"github.com/exhub/exhub/bff/internal/ratelimit"
)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

type fixture struct {
	k       *kratostest.Server
	gateURL string // with the /.ory prefix
	clk     *clock
	checker *auth.Checker
	counter *authtest.Counter
}

// start runs Kratos, a checker (whoami through a counting proxy) and the gate on a loopback server.
func start(t *testing.T, limiter func(*clock) ratelimit.Limiter, tune func(*gate.Config)) *fixture {
	t.Helper()
	k := kratostest.Start(t)
	f := &fixture{k: k, clk: &clock{now: time.Now()}, counter: authtest.NewCounter(t, k.PublicURL)}
	acfg := auth.Defaults()
	acfg.KratosPublicURL, acfg.KratosAdminURL = f.counter.URL, k.AdminURL
	acfg.CSRFKey = secret.New("0123456789abcdef0123456789abcdef")
	var err error
	if f.checker, err = auth.NewChecker(acfg); err != nil {
		t.Fatal(err)
	}
	cfg := gate.Defaults()
	cfg.KratosPublicURL = k.PublicURL
	if tune != nil {
		tune(&cfg)
	}
	g, err := gate.New(cfg, gate.Deps{Limiter: limiter(f.clk), Forget: f.checker.Forget})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	f.gateURL = srv.URL + "/.ory"
	return f
}

func localLimiter(c *clock) ratelimit.Limiter {
	cfg := ratelimit.Defaults()
	cfg.Now = c.Now
	return ratelimit.NewLocal(cfg)
}

type result struct {
	status int
	header http.Header
	body   []byte
}

func (r result) problem(t *testing.T) (p struct {
	Status int    `json:"status"`
	Code   string `json:"code"`
	Errors []struct {
		Location, Value, Message string
	} `json:"errors"`
}) {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("content type %q, want problem+json (status %d): %s", ct, r.status, r.body)
	}
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// send posts body (JSON unless it is url.Values) to the gate with the browser's cookies.
func send(t *testing.T, b *authtest.Browser, method, target string, body any, header map[string]string) result {
	t.Helper()
	var rd io.Reader
	ct := "application/json"
	switch v := body.(type) {
	case nil:
	case url.Values:
		rd, ct = strings.NewReader(v.Encode()), "application/x-www-form-urlencoded"
	case string:
		rd = strings.NewReader(v)
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		rd = strings.NewReader(string(raw))
	}
	req, err := http.NewRequest(method, target, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", ct)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := b.Client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return result{resp.StatusCode, resp.Header, raw}
}

func TestPasswordPolicyAndRegistrationThroughTheGate(t *testing.T) {
	t.Parallel()
	f := start(t, localLimiter, nil)
	b := authtest.NewBrowser(t, f.gateURL) // flows are created through the gate as well
	email := authtest.RandomEmail(t)

	for _, tc := range []struct {
		password string
		broken   []string
	}{
		{"abc", []string{"length", "number", "uppercase", "special"}},
		{"Ab1!", []string{"length"}},
		{"Abcdefgh1!Abcdefgh", []string{"length"}},
		{"Abcdefg!", []string{"number"}},
		{"ABCDEF1!", []string{"lowercase"}},
		{"abcdef1!", []string{"uppercase"}},
		{"Abcdef12", []string{"special"}},
	} {
		for _, form := range []bool{false, true} {
			fl := b.Flow("registration", "")
			var body any = map[string]any{"method": "password", "csrf_token": fl.CSRF(), "password": tc.password,
				"traits": map[string]any{"email": email, "terms": true}}
			if form {
				body = url.Values{"method": {"password"}, "csrf_token": {fl.CSRF()}, "password": {tc.password},
					"traits.email": {email}, "traits.terms": {"true"}}
			}
			r := send(t, b, http.MethodPost, f.gateURL+"/self-service/registration?flow="+fl.ID, body, nil)
			if r.status != http.StatusUnprocessableEntity {
				t.Fatalf("%q (form %v): status %d, want 422: %s", tc.password, form, r.status, r.body)
			}
			p := r.problem(t)
			var got []string
			for _, e := range p.Errors {
				if e.Location != "body.password" || e.Message == "" {
					t.Errorf("error entry %+v", e)
				}
				got = append(got, e.Value)
			}
			if !reflect.DeepEqual(got, tc.broken) || p.Code != "password_policy" {
				t.Errorf("%q (form %v): rules %v code %q, want %v", tc.password, form, got, p.Code, tc.broken)
			}
		}
	}
	if n := f.countIdentities(t); n != 0 {
		t.Fatalf("%d identities after refused registrations", n)
	}

	// A good password passes through to Kratos, which creates the identity and sets the session cookie.
	fl := b.Flow("registration", "")
	r := send(t, b, http.MethodPost, f.gateURL+"/self-service/registration?flow="+fl.ID, map[string]any{
		"method": "password", "csrf_token": fl.CSRF(), "password": authtest.Password,
		"traits": map[string]any{"email": email, "terms": true},
	}, nil)
	if r.status != http.StatusOK {
		t.Fatalf("good registration: status %d: %s", r.status, r.body)
	}
	if n := f.countIdentities(t); n != 1 {
		t.Fatalf("%d identities after the good registration, want 1", n)
	}
	if b.SessionCookie() == "" {
		t.Fatal("no session cookie through the gate")
	}

	// Settings: a weak new password is refused the same way.
	sf := b.Flow("settings", "")
	r = send(t, b, http.MethodPost, f.gateURL+"/self-service/settings?flow="+sf.ID, map[string]any{
		"method": "password", "csrf_token": sf.CSRF(), "password": "weakpass",
	}, nil)
	if r.status != http.StatusUnprocessableEntity {
		t.Fatalf("weak settings password: status %d: %s", r.status, r.body)
	}
	// Another method of the settings flow is not a password submission.
	r = send(t, b, http.MethodPost, f.gateURL+"/self-service/settings?flow="+sf.ID, map[string]any{
		"method": "profile", "csrf_token": sf.CSRF(), "traits": map[string]any{"email": email, "nickname": "ok", "terms": true},
	}, nil)
	if r.status != http.StatusOK {
		t.Fatalf("profile settings through the gate: status %d: %s", r.status, r.body)
	}
}

func (f *fixture) countIdentities(t *testing.T) int {
	t.Helper()
	resp, err := http.Get(f.k.AdminURL + "/admin/identities")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ids []json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&ids); err != nil {
		t.Fatal(err)
	}
	return len(ids)
}

func TestRateLimitsWithValkey(t *testing.T) {
	t.Parallel()
	addr := authtest.StartValkey(t)
	vc, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{addr}, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(vc.Close)
	f := start(t, func(c *clock) ratelimit.Limiter {
		cfg := ratelimit.Defaults()
		cfg.Now = c.Now
		l, err := ratelimit.NewValkey(cfg, vc, nil)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}, func(c *gate.Config) { c.Limits.LoginIP = ratelimit.Limit{N: 12, Per: 15 * time.Minute} })
	owner := authtest.NewBrowser(t, f.k.PublicURL)
	owner.SignUp("target")

	b := authtest.NewBrowser(t, f.gateURL)
	login := func(identifier, password, xff string) result {
		fl := b.Flow("login", "")
		h := map[string]string{}
		if xff != "" {
			h["X-Forwarded-For"] = xff
		}
		return send(t, b, http.MethodPost, f.gateURL+"/self-service/login?flow="+fl.ID, map[string]any{
			"method": "password", "csrf_token": fl.CSRF(), "identifier": identifier, "password": password,
		}, h)
	}
	// 10 wrong passwords for one identifier (spelled differently) reach Kratos; the 11th is refused.
	spellings := []string{owner.Email, strings.ToUpper(owner.Email), "  " + owner.Email + " "}
	for i := range 10 {
		if r := login(spellings[i%3], "Wrong!pass1", "198.51.100.1"); r.status != http.StatusBadRequest {
			t.Fatalf("wrong password %d: status %d, want Kratos' 400: %s", i+1, r.status, r.body)
		}
	}
	r := login(owner.Email, authtest.Password, "198.51.100.2") // another IP: the identifier limit still holds
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != "90" {
		t.Fatalf("11th attempt: status %d Retry-After %q, want 429 and 90 s: %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	if p := r.problem(t); p.Code != "rate_limited" {
		t.Fatalf("code %q", p.Code)
	}
	// Time passes (the limiter's clock, no sleeping): one attempt is allowed again, and the right password works.
	f.clk.Add(90 * time.Second)
	if r := login(owner.Email, authtest.Password, "198.51.100.2"); r.status != http.StatusOK {
		t.Fatalf("after Retry-After: status %d: %s", r.status, r.body)
	}
	b = authtest.NewBrowser(t, f.gateURL) // signed in now; the rest runs in a fresh browser

	// Per IP: 12 per 15 min from one forwarded address, whatever the identifiers; another address is not affected.
	f.clk.Add(time.Hour)
	for i := range 12 {
		if r := login(fmt.Sprintf("nobody%d@example.com", i), "Wrong!pass1", "203.0.113.7"); r.status != http.StatusBadRequest {
			t.Fatalf("ip attempt %d: status %d", i+1, r.status)
		}
	}
	if r := login("someone@example.com", "Wrong!pass1", "203.0.113.7"); r.status != http.StatusTooManyRequests {
		t.Fatalf("13th attempt from one IP: status %d, want 429", r.status)
	}
	if r := login("someone@example.com", "Wrong!pass1", "203.0.113.8"); r.status != http.StatusBadRequest {
		t.Fatalf("another IP: status %d, want Kratos' 400", r.status)
	}

	// Recovery code sends: 5 per address per 30 min.
	for i := range 5 {
		fl := b.Flow("recovery", "")
		r := send(t, b, http.MethodPost, f.gateURL+"/self-service/recovery?flow="+fl.ID, map[string]any{
			"method": "code", "csrf_token": fl.CSRF(), "email": owner.Email,
		}, map[string]string{"X-Forwarded-For": fmt.Sprintf("192.0.2.%d", i+1)})
		if r.status != http.StatusOK {
			t.Fatalf("recovery send %d: status %d: %s", i+1, r.status, r.body)
		}
	}
	fl := b.Flow("recovery", "")
	r = send(t, b, http.MethodPost, f.gateURL+"/self-service/recovery?flow="+fl.ID, map[string]any{
		"method": "code", "csrf_token": fl.CSRF(), "email": strings.ToUpper(owner.Email),
	}, nil)
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != "360" {
		t.Fatalf("6th recovery send: status %d Retry-After %q, want 429 / 360", r.status, r.header.Get("Retry-After"))
	}
}

func sessionSetCookie(t *testing.T, h http.Header, name string) *http.Cookie {
	t.Helper()
	var found *http.Cookie
	for _, line := range h.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(line)
		if err == nil && c.Name == name {
			found = c
		}
	}
	return found
}

func TestRememberMeAndLogout(t *testing.T) {
	t.Parallel()
	f := start(t, localLimiter, nil)
	owner := authtest.NewBrowser(t, f.k.PublicURL)
	owner.SignUp("remember")

	login := func(b *authtest.Browser, remember bool) result {
		fl := b.Flow("login", "")
		h := map[string]string{}
		if remember {
			h["X-Exhub-Remember"] = "1"
		}
		r := send(t, b, http.MethodPost, f.gateURL+"/self-service/login?flow="+fl.ID, map[string]any{
			"method": "password", "csrf_token": fl.CSRF(), "identifier": owner.Email, "password": authtest.Password,
		}, h)
		if r.status != http.StatusOK {
			t.Fatalf("login: status %d: %s", r.status, r.body)
		}
		return r
	}

	// Without the header: a browser-session cookie, and no remember cookie.
	plain := authtest.NewBrowser(t, f.gateURL)
	r := login(plain, false)
	sc := sessionSetCookie(t, r.header, "exhub_session")
	if sc == nil || sc.MaxAge != 0 || !sc.Expires.IsZero() || !sc.HttpOnly {
		t.Fatalf("session cookie without remember: %+v", sc)
	}
	if rc := sessionSetCookie(t, r.header, "exhub_remember"); rc != nil && rc.Value != "" {
		t.Fatalf("remember cookie without the header: %+v", rc)
	}

	// With it: 5 days, and the remember cookie.
	kept := authtest.NewBrowser(t, f.gateURL)
	r = login(kept, true)
	sc = sessionSetCookie(t, r.header, "exhub_session")
	if sc == nil || sc.MaxAge != 432000 || !sc.HttpOnly || sc.SameSite != http.SameSiteLaxMode {
		t.Fatalf("session cookie with remember: %+v", sc)
	}
	if life := time.Until(sc.Expires); life < 119*time.Hour || life > 121*time.Hour {
		t.Fatalf("session cookie expires in %s", life)
	}
	rc := sessionSetCookie(t, r.header, "exhub_remember")
	if rc == nil || rc.Value != "1" || !rc.HttpOnly || rc.SameSite != http.SameSiteLaxMode || rc.MaxAge != 432000 {
		t.Fatalf("remember cookie %+v", rc)
	}

	// The checker caches kept's session; logout through the gate drops it and clears the remember cookie.
	cookie := kept.SessionCookie()
	if _, err := f.checker.CheckCookie(context.Background(), cookie); err != nil {
		t.Fatal(err)
	}
	if f.checker.Cached() != 1 {
		t.Fatalf("%d cached", f.checker.Cached())
	}
	var lo struct {
		Token string `json:"logout_token"`
	}
	if r := kept.Do(http.MethodGet, "/self-service/logout/browser", nil, &lo); r.StatusCode != http.StatusOK {
		t.Fatalf("logout flow: %d", r.StatusCode)
	}
	r = send(t, kept, http.MethodGet, f.gateURL+"/self-service/logout?token="+url.QueryEscape(lo.Token), nil, nil)
	if r.status != http.StatusNoContent {
		t.Fatalf("logout: status %d: %s", r.status, r.body)
	}
	if f.checker.Cached() != 0 {
		t.Fatal("logout through the gate left the session cached")
	}
	if rc := sessionSetCookie(t, r.header, "exhub_remember"); rc == nil || rc.MaxAge >= 0 {
		t.Fatalf("remember cookie not cleared on logout: %+v", rc)
	}
	if _, err := f.checker.CheckCookie(context.Background(), cookie); err == nil {
		t.Fatal("the logged-out session still checks")
	}
}

func TestBadBodiesAndKratosDown(t *testing.T) {
	t.Parallel()
	port, err := kratostest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	cfg := gate.Defaults()
	cfg.KratosPublicURL = fmt.Sprintf("http://127.0.0.1:%d", port)
	g, err := gate.New(cfg, gate.Deps{Limiter: ratelimit.NewLocal(ratelimit.Defaults())})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	b := authtest.NewBrowser(t, srv.URL)

	r := send(t, b, http.MethodPost, srv.URL+"/.ory/self-service/login?flow=x", map[string]any{
		"method": "password", "identifier": "a@example.com", "password": "x",
	}, nil)
	if r.status != http.StatusServiceUnavailable || r.problem(t).Code != "identity_unavailable" {
		t.Fatalf("kratos down: status %d: %s", r.status, r.body)
	}
	big := `{"method":"password","password":"` + strings.Repeat("x", 70<<10) + `"}`
	if r := send(t, b, http.MethodPost, srv.URL+"/.ory/self-service/registration?flow=x", big, nil); r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("big body: status %d", r.status)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/.ory/self-service/registration?flow=x", strings.NewReader("--x--"))
	req.Header.Set("Content-Type", "multipart/form-data; boundary=x")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("multipart body: status %d, want 415 (the policy must not be bypassed)", resp.StatusCode)
	}
}

func TestUnknownOrUncleanPathsAreRefused(t *testing.T) {
	t.Parallel()
	f := start(t, localLimiter, nil)
	b := authtest.NewBrowser(t, f.gateURL)
	fl := b.Flow("registration", "")
	weak := map[string]any{"method": "password", "csrf_token": fl.CSRF(), "password": "weak",
		"traits": map[string]any{"email": authtest.RandomEmail(t), "terms": true}}
	for _, p := range []string{
		"//self-service/registration", "/self-service//registration", "/x/../self-service/registration",
		"/Self-Service/Registration", "/self-service/Registration", "/admin/identities", "/self-service/unknown",
	} {
		if r := send(t, b, http.MethodPost, f.gateURL+p+"?flow="+fl.ID, weak, nil); r.status != http.StatusNotFound {
			t.Errorf("POST %s: status %d, want 404: %s", p, r.status, r.body)
		}
	}
	// A settings submission by GET would pass the policy by: refused.
	sb := authtest.NewBrowser(t, f.gateURL)
	sb.SignUp("getter")
	sf := sb.Flow("settings", "")
	q := url.Values{"flow": {sf.ID}, "method": {"password"}, "password": {"weak"}, "csrf_token": {sf.CSRF()}}
	if r := send(t, sb, http.MethodGet, f.gateURL+"/self-service/settings?"+q.Encode(), nil, nil); r.status != http.StatusMethodNotAllowed {
		t.Fatalf("GET settings submission: status %d: %s", r.status, r.body)
	}
	if n := f.countIdentities(t); n != 1 {
		t.Fatalf("%d identities", n)
	}
}

func TestBrokenRules(t *testing.T) {
	for pw, want := range map[string][]string{
		"Tr4de!Hub#26":     nil,
		"Aa1!aa":           nil,
		"Aa1!aaaaaaaaaaa":  nil,
		"Aa1!aaaaaaaaaaaa": {"length"},
		"Ａａ１！ａａ":           nil, // full-width letters and digits count
		"Aa1 aaa":          {"special"},
		"":                 {"length", "number", "lowercase", "uppercase", "special"},
	} {
		if got := gate.BrokenRules(pw); !reflect.DeepEqual(got, want) {
			t.Errorf("BrokenRules(%q) = %v, want %v", pw, got, want)
		}
	}
	if err := gate.Defaults().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := gate.Defaults()
	bad.Limits.LoginIP.N = 0
	bad.Prefix = "ory/"
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "login_ip") || !strings.Contains(err.Error(), "prefix") {
		t.Fatalf("validate: %v", err)
	}
}

// A settings submission that went through changes what whoami says of the session: the gate drops the cached answer,
// so the member's next request sees the new traits at once instead of after the cache's TTL.
func TestSubmissionThroughTheGateRefreshesTheCachedSession(t *testing.T) {
	t.Parallel()
	f := start(t, localLimiter, nil)
	b := authtest.NewBrowser(t, f.gateURL)
	b.SignUp("before")
	cookie := b.SessionCookie()
	m, err := f.checker.CheckCookie(context.Background(), cookie)
	if err != nil || m.Nickname != "before" || f.checker.Cached() != 1 {
		t.Fatalf("first check: %+v %v, %d cached", m, err, f.checker.Cached())
	}

	fl := b.Flow("settings", "")
	r := send(t, b, http.MethodPost, f.gateURL+"/self-service/settings?flow="+fl.ID, map[string]any{
		"method": "profile", "csrf_token": fl.CSRF(),
		"traits": map[string]any{"email": b.Email, "nickname": "after", "terms": true},
	}, nil)
	if r.status != http.StatusOK {
		t.Fatalf("settings: status %d: %s", r.status, r.body)
	}
	if f.checker.Cached() != 0 {
		t.Fatal("a settings submission through the gate left the session cached")
	}
	if m, err = f.checker.CheckCookie(context.Background(), cookie); err != nil || m.Nickname != "after" {
		t.Fatalf("after settings: %+v %v", m, err)
	}

	// A refused submission (the password policy) changes nothing and keeps the cached answer.
	fl = b.Flow("settings", "")
	r = send(t, b, http.MethodPost, f.gateURL+"/self-service/settings?flow="+fl.ID, map[string]any{
		"method": "password", "csrf_token": fl.CSRF(), "password": "short",
	}, nil)
	if r.status != http.StatusUnprocessableEntity || f.checker.Cached() != 1 {
		t.Fatalf("refused settings: status %d, %d cached", r.status, f.checker.Cached())
	}
}
