package kratostest_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/kratostest"
)

var client = &http.Client{Timeout: 10 * time.Second}

// call sends a JSON request and decodes a JSON answer into out (when not nil).
func call(t *testing.T, method, url string, headers map[string]string, body, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatalf("encode body: %v", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s %s: %v", method, url, err)
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("decode %s %s (status %d): %v\n%s", method, url, resp.StatusCode, err, raw)
		}
	}
	return resp.StatusCode
}

type flow struct {
	ID        string    `json:"id"`
	IssuedAt  time.Time `json:"issued_at"`
	ExpiresAt time.Time `json:"expires_at"`
	State     string    `json:"state"`
	UI        struct {
		Action string `json:"action"`
		Nodes  []struct {
			Group      string `json:"group"`
			Attributes struct {
				Name  string `json:"name"`
				Value any    `json:"value"`
				ID    string `json:"id"`
				Text  struct {
					Text string `json:"text"`
				} `json:"text"`
			} `json:"attributes"`
			Messages []struct {
				ID   int    `json:"id"`
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"messages"`
		} `json:"nodes"`
		Messages []struct {
			ID   int    `json:"id"`
			Text string `json:"text"`
		} `json:"messages"`
	} `json:"ui"`
}

// fieldErrors maps each form field to the ids of its error messages.
func (f flow) fieldErrors() map[string][]int {
	e := map[string][]int{}
	for _, n := range f.UI.Nodes {
		for _, m := range n.Messages {
			if m.Type == "error" {
				e[n.Attributes.Name] = append(e[n.Attributes.Name], m.ID)
			}
		}
	}
	return e
}

func (f flow) groups() map[string]bool {
	g := map[string]bool{}
	for _, n := range f.UI.Nodes {
		g[n.Group] = true
	}
	return g
}

type session struct {
	ID                          string    `json:"id"`
	Active                      bool      `json:"active"`
	ExpiresAt                   time.Time `json:"expires_at"`
	AuthenticatedAt             time.Time `json:"authenticated_at"`
	AuthenticatorAssuranceLevel string    `json:"authenticator_assurance_level"`
	Identity                    struct {
		ID     string         `json:"id"`
		Traits map[string]any `json:"traits"`
	} `json:"identity"`
}

type authResult struct {
	SessionToken string  `json:"session_token"`
	Session      session `json:"session"`
}

func randomEmail(t *testing.T) string {
	t.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "trader-" + hex.EncodeToString(b) + "@example.com"
}

func whoami(t *testing.T, k *kratostest.Server, token string) (session, int) {
	t.Helper()
	var s session
	code := call(t, http.MethodGet, k.PublicURL+"/sessions/whoami",
		map[string]string{"X-Session-Token": token}, nil, &s)
	return s, code
}

func login(t *testing.T, k *kratostest.Server, identifier, password string) (authResult, int) {
	t.Helper()
	var f flow
	if code := call(t, http.MethodGet, k.PublicURL+"/self-service/login/api", nil, nil, &f); code != http.StatusOK {
		t.Fatalf("create login flow: status %d", code)
	}
	if !f.groups()["password"] {
		t.Fatalf("login flow offers no password method: %+v", f.groups())
	}
	var res authResult
	code := call(t, http.MethodPost, k.PublicURL+"/self-service/login?flow="+f.ID, nil, map[string]string{
		"method":     "password",
		"identifier": identifier,
		"password":   password,
	}, &res)
	return res, code
}

func TestRegistrationLoginWhoami(t *testing.T) {
	t.Parallel()
	k := kratostest.Start(t)

	email := randomEmail(t)
	const password = "Tr4de!Hub#2026"
	const phone = "+819012345678"

	// Registration (API flow) returns a session token at once: the session hook is on.
	var reg flow
	if code := call(t, http.MethodGet, k.PublicURL+"/self-service/registration/api", nil, nil, &reg); code != http.StatusOK {
		t.Fatalf("create registration flow: status %d\n%s", code, k.Log())
	}
	if reg.ID == "" || !reg.groups()["password"] {
		t.Fatalf("registration flow without id or password method: %+v", reg)
	}
	registered := time.Now()
	var res authResult
	code := call(t, http.MethodPost, k.PublicURL+"/self-service/registration?flow="+reg.ID, nil, map[string]any{
		"method":   "password",
		"password": password,
		"traits":   map[string]any{"email": email, "phone": phone, "nickname": "satoshi", "terms": true},
	}, &res)
	if code != http.StatusOK {
		t.Fatalf("register: status %d, response %+v\n%s", code, res, k.Log())
	}
	if !strings.HasPrefix(res.SessionToken, "ory_st_") {
		t.Fatalf("register: no session token in %+v", res)
	}
	if got := res.Session.Identity.Traits; got["email"] != email || got["phone"] != phone || got["nickname"] != "satoshi" {
		t.Fatalf("register: traits %v", got)
	}

	// The session lasts five days ("stay logged in for 5 days").
	me, status := whoami(t, k, res.SessionToken)
	if status != http.StatusOK || !me.Active {
		t.Fatalf("whoami after registration: status %d, session %+v", status, me)
	}
	if me.Identity.ID != res.Session.Identity.ID {
		t.Fatalf("whoami identity %q, registered %q", me.Identity.ID, res.Session.Identity.ID)
	}
	if life := me.ExpiresAt.Sub(registered); life < 120*time.Hour-time.Minute || life > 120*time.Hour+time.Minute {
		t.Fatalf("session lifespan %s, want 120h", life)
	}
	if me.AuthenticatorAssuranceLevel != "aal1" {
		t.Fatalf("assurance level %q after password registration, want aal1", me.AuthenticatorAssuranceLevel)
	}

	// Registration queued a verification e-mail (and an SMS). Start's courier
	// delivers nowhere, so it stays in the courier queue, readable through the
	// admin API; its code completes the verification flow.
	mailedCode, flowID := verificationMail(t, k, email)
	var verified struct {
		State string `json:"state"`
	}
	if status := call(t, http.MethodPost, k.PublicURL+"/self-service/verification?flow="+flowID, nil,
		map[string]string{"method": "code", "code": mailedCode}, &verified); status != http.StatusOK || verified.State != "passed_challenge" {
		t.Fatalf("verify with the mailed code: status %d, state %q\n%s", status, verified.State, k.Log())
	}
	var ident struct {
		Traits              map[string]any `json:"traits"`
		VerifiableAddresses []struct {
			Value    string `json:"value"`
			Via      string `json:"via"`
			Verified bool   `json:"verified"`
		} `json:"verifiable_addresses"`
	}
	if status := call(t, http.MethodGet, k.AdminURL+"/admin/identities/"+me.Identity.ID, nil, nil, &ident); status != http.StatusOK {
		t.Fatalf("admin get identity: status %d", status)
	}
	// Both addresses are verifiable: the e-mail now verified, the phone (by SMS) not yet.
	isVerified := map[string]bool{}
	for _, a := range ident.VerifiableAddresses {
		isVerified[a.Via+":"+a.Value] = a.Verified
	}
	if ident.Traits["email"] != email || len(isVerified) != 2 || !isVerified["email:"+email] || isVerified["sms:"+phone] {
		t.Fatalf("identity after verification: %+v", ident)
	}

	// Login with the e-mail, then with the phone number (both are identifiers).
	for _, id := range []string{email, phone} {
		got, code := login(t, k, id, password)
		if code != http.StatusOK || got.SessionToken == "" {
			t.Fatalf("login as %s: status %d, %+v\n%s", id, code, got, k.Log())
		}
		if got.SessionToken == res.SessionToken {
			t.Fatalf("login as %s reused the registration token", id)
		}
		s, code := whoami(t, k, got.SessionToken)
		if code != http.StatusOK || s.Identity.ID != me.Identity.ID {
			t.Fatalf("whoami after login as %s: status %d, identity %q, want %q", id, code, s.Identity.ID, me.Identity.ID)
		}
	}

	// A wrong password is refused with a flow message, no token.
	bad, code := login(t, k, email, "Wr0ng!password")
	if code != http.StatusBadRequest || bad.SessionToken != "" {
		t.Fatalf("login with wrong password: status %d, token %q", code, bad.SessionToken)
	}

	// Unknown tokens are unauthorized.
	if _, code := whoami(t, k, "ory_st_not-a-real-token"); code != http.StatusUnauthorized {
		t.Fatalf("whoami with a bogus token: status %d, want 401", code)
	}

	// The settings flow offers the second factors the UI needs:
	// an authenticator app (TOTP) and recovery codes (lookup secrets).
	var settings flow
	code = call(t, http.MethodGet, k.PublicURL+"/self-service/settings/api",
		map[string]string{"X-Session-Token": res.SessionToken}, nil, &settings)
	if code != http.StatusOK {
		t.Fatalf("create settings flow: status %d", code)
	}
	for _, g := range []string{"password", "profile", "totp", "lookup_secret"} {
		if !settings.groups()[g] {
			t.Errorf("settings flow lacks the %q method; groups %v", g, settings.groups())
		}
	}

	// Recovery and verification flows are enabled and use one-time codes.
	for _, kind := range []string{"recovery", "verification"} {
		var f flow
		if code := call(t, http.MethodGet, k.PublicURL+"/self-service/"+kind+"/api", nil, nil, &f); code != http.StatusOK {
			t.Fatalf("create %s flow: status %d", kind, code)
		}
		if !f.groups()["code"] {
			t.Errorf("%s flow does not use codes; groups %v", kind, f.groups())
		}
	}

	// Logout revokes the token.
	if code := call(t, http.MethodDelete, k.PublicURL+"/self-service/logout/api", nil,
		map[string]string{"session_token": res.SessionToken}, nil); code != http.StatusNoContent {
		t.Fatalf("logout: status %d, want 204", code)
	}
	if _, code := whoami(t, k, res.SessionToken); code != http.StatusUnauthorized {
		t.Fatalf("whoami after logout: status %d, want 401", code)
	}
}

func TestRegistrationRejectsBadTraits(t *testing.T) {
	t.Parallel()
	k := kratostest.Start(t)
	const good = "Tr4de!Hub#2026"
	cases := []struct {
		name   string
		traits map[string]any
		pass   string
		field  string // the form field that carries the error
	}{
		{"neither email nor phone", map[string]any{"nickname": "x", "terms": true}, good, "traits.email"},
		{"phone not in E.164 form", map[string]any{"phone": "0901234567", "terms": true}, good, "traits.phone"},
		{"phone too short to be a number", map[string]any{"phone": "+8190123", "terms": true}, good, "traits.phone"},
		{"malformed email", map[string]any{"email": "not-an-address", "terms": true}, good, "traits.email"},
		{"terms not accepted", map[string]any{"email": randomEmail(t), "terms": false}, good, "traits.terms"},
		{"terms missing", map[string]any{"email": randomEmail(t)}, good, "traits.terms"},
		{"unsupported locale", map[string]any{"email": randomEmail(t), "terms": true, "locale": "ko-KR"}, good, "traits.locale"},
		{"lower-case referral code", map[string]any{"email": randomEmail(t), "terms": true, "referral_code": "kol2026"}, good, "traits.referral_code"},
		{"nickname over 32 characters", map[string]any{"email": randomEmail(t), "terms": true, "nickname": strings.Repeat("n", 33)}, good, "traits.nickname"},
		{"short password", map[string]any{"email": randomEmail(t), "terms": true}, "Ab1!", "password"},
		{"unknown trait", map[string]any{"email": randomEmail(t), "terms": true, "role": "admin"}, good, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var f flow
			if code := call(t, http.MethodGet, k.PublicURL+"/self-service/registration/api", nil, nil, &f); code != http.StatusOK {
				t.Fatalf("create registration flow: status %d", code)
			}
			var res struct {
				authResult
				flow
			}
			code := call(t, http.MethodPost, k.PublicURL+"/self-service/registration?flow="+f.ID, nil, map[string]any{
				"method": "password", "password": tc.pass, "traits": tc.traits,
			}, &res)
			if code != http.StatusBadRequest || res.SessionToken != "" {
				t.Fatalf("status %d token %q, want 400 and no session", code, res.SessionToken)
			}
			if tc.field != "" && len(res.fieldErrors()[tc.field]) == 0 {
				t.Fatalf("no error on %s; field errors %v, flow messages %v", tc.field, res.fieldErrors(), res.UI.Messages)
			}
		})
	}

	// Either identifier alone is enough, with every optional trait valid.
	for _, traits := range []map[string]any{
		{"email": randomEmail(t), "terms": true},
		{"phone": "+818011112222", "terms": true, "locale": "ja-JP", "referral_code": "KOL2026", "nickname": strings.Repeat("n", 32)},
	} {
		var f flow
		if code := call(t, http.MethodGet, k.PublicURL+"/self-service/registration/api", nil, nil, &f); code != http.StatusOK {
			t.Fatalf("create registration flow: status %d", code)
		}
		var res authResult
		if code := call(t, http.MethodPost, k.PublicURL+"/self-service/registration?flow="+f.ID, nil, map[string]any{
			"method": "password", "password": good, "traits": traits,
		}, &res); code != http.StatusOK {
			t.Fatalf("register with %v: status %d\n%s", traits, code, k.Log())
		}
		for key, want := range traits {
			if got := res.Session.Identity.Traits[key]; got != want {
				t.Errorf("trait %s = %v, want %v", key, got, want)
			}
		}
	}
}

// TestConfigFromRepoRoot runs Kratos the way `make run` does: from the
// repository root, with the configuration's relative schema path.
func TestConfigFromRepoRoot(t *testing.T) {
	t.Parallel()
	k := kratostest.StartFromRoot(t)
	var reg flow
	if code := call(t, http.MethodGet, k.PublicURL+"/self-service/registration/api", nil, nil, &reg); code != http.StatusOK {
		t.Fatalf("create registration flow: status %d\n%s", code, k.Log())
	}
	email := randomEmail(t)
	var res authResult
	code := call(t, http.MethodPost, k.PublicURL+"/self-service/registration?flow="+reg.ID, nil, map[string]any{
		"method": "password", "password": "Tr4de!Hub#2026", "traits": map[string]any{"email": email, "terms": true},
	}, &res)
	if code != http.StatusOK || res.Session.Identity.Traits["email"] != email {
		t.Fatalf("register from the repository root: status %d, %+v\n%s", code, res, k.Log())
	}
}

func TestBinaryMissingNamesTheBuildCommand(t *testing.T) {
	t.Setenv(kratostest.BinEnv, t.TempDir()+"/no-such-kratos")
	root, err := kratostest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	_, err = kratostest.Binary(root)
	if err == nil {
		t.Fatal("Binary accepted a missing file")
	}
	if !strings.Contains(err.Error(), "go build -tags sqlite") {
		t.Fatalf("error %q does not name the build command", err)
	}
}

var (
	mailCode = regexp.MustCompile(`(?m)^\s*([0-9]{6})\s*$`)
	mailFlow = regexp.MustCompile(`[?&]flow=([0-9a-f-]{36})`)
)

// verificationMail waits for the verification message to a recipient in the
// courier queue and returns its code and flow id.
func verificationMail(t *testing.T, k *kratostest.Server, recipient string) (code, flowID string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var msgs []struct {
			Recipient    string `json:"recipient"`
			TemplateType string `json:"template_type"`
			Body         string `json:"body"`
		}
		if status := call(t, http.MethodGet, k.AdminURL+"/admin/courier/messages?recipient="+url.QueryEscape(recipient),
			nil, nil, &msgs); status != http.StatusOK {
			t.Fatalf("list courier messages: status %d", status)
		}
		for _, m := range msgs {
			if m.Recipient != recipient || m.TemplateType != "verification_code_valid" {
				continue
			}
			c, f := mailCode.FindStringSubmatch(m.Body), mailFlow.FindStringSubmatch(m.Body)
			if c == nil || f == nil {
				t.Fatalf("verification mail without code or flow: %q", m.Body)
			}
			return c[1], f[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no verification mail for %s in the courier queue (%d messages)", recipient, len(msgs))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
