package kratostest_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base32"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/kratostest"
)

const password = "Tr4de!Hub#2026"

type continueWith struct {
	Action string `json:"action"`
	Flow   struct {
		ID                string `json:"id"`
		VerifiableAddress string `json:"verifiable_address"`
		URL               string `json:"url"`
	} `json:"flow"`
	Token string `json:"ory_session_token"`
}

type registered struct {
	authResult
	ContinueWith []continueWith `json:"continue_with"`
}

// verificationFlowFor returns the id of the verification flow that
// registration started for address (the continue_with item the UI follows to /otp).
func (r registered) verificationFlowFor(t *testing.T, address string) continueWith {
	t.Helper()
	for _, c := range r.ContinueWith {
		if c.Action == "show_verification_ui" && c.Flow.VerifiableAddress == address {
			return c
		}
	}
	t.Fatalf("no show_verification_ui for %s in continue_with %+v", address, r.ContinueWith)
	return continueWith{}
}

func registerAPI(t *testing.T, k *kratostest.Server, traits map[string]any) registered {
	t.Helper()
	var f flow
	if code := call(t, http.MethodGet, k.PublicURL+"/self-service/registration/api", nil, nil, &f); code != http.StatusOK {
		t.Fatalf("create registration flow: status %d", code)
	}
	var res registered
	if code := call(t, http.MethodPost, k.PublicURL+"/self-service/registration?flow="+f.ID, nil, map[string]any{
		"method": "password", "password": password, "traits": traits,
	}, &res); code != http.StatusOK || res.SessionToken == "" {
		t.Fatalf("register %v: status %d\n%s", traits, code, k.Log())
	}
	return res
}

type verifiable struct {
	Value    string `json:"value"`
	Via      string `json:"via"`
	Verified bool   `json:"verified"`
}

func addresses(t *testing.T, k *kratostest.Server, id string) map[string]verifiable {
	t.Helper()
	var ident struct {
		VerifiableAddresses []verifiable `json:"verifiable_addresses"`
		RecoveryAddresses   []struct {
			Value string `json:"value"`
		} `json:"recovery_addresses"`
	}
	if code := call(t, http.MethodGet, k.AdminURL+"/admin/identities/"+id, nil, nil, &ident); code != http.StatusOK {
		t.Fatalf("admin get identity: status %d", code)
	}
	out := map[string]verifiable{}
	for _, a := range ident.VerifiableAddresses {
		out[a.Via+":"+a.Value] = a
	}
	return out
}

// lifespanIs30m checks the flow's own expiry: codes of a flow live as long as the flow.
func lifespanIs30m(t *testing.T, kind string, f flow) {
	t.Helper()
	if got := f.ExpiresAt.Sub(f.IssuedAt); got != 30*time.Minute {
		t.Errorf("%s flow lives %s (issued %s, expires %s), want 30m", kind, got, f.IssuedAt, f.ExpiresAt)
	}
}

// TestEmailRegistrationVerifiesThroughInbox is the SPA's path to /otp: a
// browser registration (JSON, cookies) signs the member in with a
// browser-session cookie, points at the verification UI, and the e-mailed code
// read from the inbox verifies the address.
func TestEmailRegistrationVerifiesThroughInbox(t *testing.T) {
	t.Parallel()
	k, inbox := kratostest.StartWithInbox(t)

	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	browser := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	do := func(method, url string, body, out any) *http.Response {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, err := http.NewRequest(method, url, rd)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", "application/json")
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := browser.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, url, err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if out != nil && len(raw) > 0 {
			if err := json.Unmarshal(raw, out); err != nil {
				t.Fatalf("%s %s: status %d: %v\n%s", method, url, resp.StatusCode, err, raw)
			}
		}
		return resp
	}
	csrf := func(f flow) string {
		for _, n := range f.UI.Nodes {
			if n.Attributes.Name == "csrf_token" {
				if s, ok := n.Attributes.Value.(string); ok {
					return s
				}
			}
		}
		t.Fatalf("flow %s has no csrf_token", f.ID)
		return ""
	}

	var reg flow
	if resp := do(http.MethodGet, k.PublicURL+"/self-service/registration/browser", nil, &reg); resp.StatusCode != http.StatusOK {
		t.Fatalf("create browser registration flow: status %d", resp.StatusCode)
	}
	lifespanIs30m(t, "registration", reg)
	// The form offers every trait of the schema, the terms as a checkbox.
	fields := map[string]bool{}
	for _, n := range reg.UI.Nodes {
		fields[n.Attributes.Name] = true
	}
	for _, name := range []string{"traits.email", "traits.phone", "traits.nickname", "traits.locale", "traits.referral_code", "traits.terms", "password"} {
		if !fields[name] {
			t.Errorf("registration form lacks %s; fields %v", name, fields)
		}
	}

	email := randomEmail(t)
	var res registered
	resp := do(http.MethodPost, k.PublicURL+"/self-service/registration?flow="+reg.ID, map[string]any{
		"method": "password", "csrf_token": csrf(reg), "password": password,
		"traits": map[string]any{"email": email, "terms": true, "locale": "ja-JP"},
	}, &res)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("browser registration: status %d\n%s", resp.StatusCode, k.Log())
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "exhub_session" {
			cookie = c
		}
	}
	if cookie == nil {
		t.Fatalf("no exhub_session cookie: %v", resp.Cookies())
	}
	// Not persistent by default: the BFF adds Max-Age for "stay logged in".
	if !cookie.Expires.IsZero() || cookie.MaxAge != 0 {
		t.Errorf("session cookie Expires=%v MaxAge=%d, want a browser-session cookie", cookie.Expires, cookie.MaxAge)
	}
	if life := time.Until(res.Session.ExpiresAt); life < 119*time.Hour || life > 121*time.Hour {
		t.Errorf("session expires in %s, want about 120h", life)
	}

	// The UI goes to /otp with the verification flow.
	next := res.verificationFlowFor(t, email)
	if want := "http://127.0.0.1:8080/otp?flow=" + next.Flow.ID; next.Flow.URL != want {
		t.Errorf("verification UI URL %q, want %q", next.Flow.URL, want)
	}
	var vf flow
	if resp := do(http.MethodGet, k.PublicURL+"/self-service/verification/flows?id="+next.Flow.ID, nil, &vf); resp.StatusCode != http.StatusOK {
		t.Fatalf("get verification flow: status %d", resp.StatusCode)
	}
	lifespanIs30m(t, "verification", vf)
	if vf.State != "sent_email" {
		t.Errorf("verification flow state %q, want sent_email", vf.State)
	}

	// The code arrives by e-mail in the inbox.
	msg := inbox.WaitForMessage(t, email)
	if !strings.Contains(msg.Subject, "verify") && !strings.Contains(msg.Subject, "Verify") {
		t.Errorf("verification mail subject %q", msg.Subject)
	}
	code := msg.Code()
	if code == "" {
		t.Fatalf("verification mail without a code:\n%s", msg.Text)
	}
	// A wrong code is refused, the right one passes.
	wrong := fmt.Sprintf("%06d", (atoi(code)+1)%1000000)
	var after flow
	do(http.MethodPost, k.PublicURL+"/self-service/verification?flow="+vf.ID,
		map[string]any{"method": "code", "code": wrong, "csrf_token": csrf(vf)}, &after)
	if after.State == "passed_challenge" {
		t.Fatal("a wrong code passed verification")
	}
	if resp := do(http.MethodPost, k.PublicURL+"/self-service/verification?flow="+vf.ID,
		map[string]any{"method": "code", "code": code, "csrf_token": csrf(vf)}, &after); resp.StatusCode != http.StatusOK || after.State != "passed_challenge" {
		t.Fatalf("verify: status %d state %q", resp.StatusCode, after.State)
	}
	if a := addresses(t, k, res.Session.Identity.ID)["email:"+email]; !a.Verified {
		t.Fatalf("e-mail not verified: %+v", a)
	}
	if got := res.Session.Identity.Traits["locale"]; got != "ja-JP" {
		t.Errorf("locale trait %v, want ja-JP", got)
	}
}

func atoi(s string) int {
	n := 0
	for _, r := range s {
		n = n*10 + int(r-'0')
	}
	return n
}

// TestPhoneRegistrationVerifiesBySMS registers with a mobile number only: the
// SMS leaves through Kratos' HTTP courier channel into the inbox, its code
// verifies the number, and the number with the password signs in.
func TestPhoneRegistrationVerifiesBySMS(t *testing.T) {
	t.Parallel()
	k, inbox := kratostest.StartWithInbox(t)
	const phone = "+819011112222"
	res := registerAPI(t, k, map[string]any{"phone": phone, "terms": true, "nickname": "mobile"})
	if _, ok := res.Session.Identity.Traits["email"]; ok {
		t.Fatalf("traits %v carry an e-mail", res.Session.Identity.Traits)
	}
	next := res.verificationFlowFor(t, phone)

	msg := inbox.WaitForMessage(t, phone)
	if want := "819011112222@" + kratostest.SMSDomain; !slices.Contains(msg.To, want) {
		t.Errorf("SMS addressed to %v, want %s", msg.To, want)
	}
	if !slices.Contains(msg.Tags, "sms") || msg.From != "sms@exhub.local" {
		t.Errorf("SMS tags %v from %q, want tag sms from sms@exhub.local", msg.Tags, msg.From)
	}
	code := msg.Code()
	if code == "" || !strings.Contains(msg.Text, "verification code") {
		t.Fatalf("SMS text %q without a verification code", msg.Text)
	}

	var vf flow
	if status := call(t, http.MethodGet, k.PublicURL+"/self-service/verification/flows?id="+next.Flow.ID, nil, nil, &vf); status != http.StatusOK {
		t.Fatalf("get verification flow: status %d", status)
	}
	lifespanIs30m(t, "verification", vf)
	var after flow
	if status := call(t, http.MethodPost, k.PublicURL+"/self-service/verification?flow="+next.Flow.ID, nil,
		map[string]any{"method": "code", "code": code}, &after); status != http.StatusOK || after.State != "passed_challenge" {
		t.Fatalf("verify by SMS code: status %d state %q\n%s", status, after.State, k.Log())
	}
	if a := addresses(t, k, res.Session.Identity.ID)["sms:"+phone]; !a.Verified {
		t.Fatalf("phone not verified: %+v", a)
	}

	got, status := login(t, k, phone, password)
	if status != http.StatusOK || got.Session.Identity.ID != res.Session.Identity.ID {
		t.Fatalf("login by phone: status %d identity %q, want %q", status, got.Session.Identity.ID, res.Session.Identity.ID)
	}
	if _, status := login(t, k, phone, "Wr0ng!pass"); status != http.StatusBadRequest {
		t.Fatalf("login by phone with a wrong password: status %d, want 400", status)
	}
}

// TestRecoveryCodeByEmail resets access with the code e-mailed to the member.
func TestRecoveryCodeByEmail(t *testing.T) {
	t.Parallel()
	k, inbox := kratostest.StartWithInbox(t)
	email := randomEmail(t)
	res := registerAPI(t, k, map[string]any{"email": email, "terms": true})
	verification := inbox.WaitForMessage(t, email) // registration's verification mail comes first

	var rf flow
	if status := call(t, http.MethodGet, k.PublicURL+"/self-service/recovery/api", nil, nil, &rf); status != http.StatusOK {
		t.Fatalf("create recovery flow: status %d", status)
	}
	lifespanIs30m(t, "recovery", rf)
	var sent flow
	if status := call(t, http.MethodPost, k.PublicURL+"/self-service/recovery?flow="+rf.ID, nil,
		map[string]any{"method": "code", "email": email}, &sent); status != http.StatusOK || sent.State != "sent_email" {
		t.Fatalf("request recovery code: status %d state %q\n%s", status, sent.State, k.Log())
	}
	msg := inbox.WaitForMessage(t, email)
	code := msg.Code()
	if code == "" || msg.ID == verification.ID || !strings.Contains(strings.ToLower(msg.Subject), "recover") {
		t.Fatalf("recovery mail %q without a code:\n%s", msg.Subject, msg.Text)
	}

	var done struct {
		flow
		ContinueWith []continueWith `json:"continue_with"`
	}
	status := call(t, http.MethodPost, k.PublicURL+"/self-service/recovery?flow="+rf.ID, nil,
		map[string]any{"method": "code", "code": code}, &done)
	if status != http.StatusOK || done.State != "passed_challenge" {
		t.Fatalf("submit recovery code: status %d state %q\n%s", status, done.State, k.Log())
	}
	// The member is signed in to set a new password (the settings UI).
	token := ""
	for _, c := range done.ContinueWith {
		if c.Action == "set_ory_session_token" {
			token = c.Token
		}
	}
	if token == "" {
		t.Fatalf("recovery gave no session: %+v", done.ContinueWith)
	}
	settingsURL := ""
	for _, c := range done.ContinueWith {
		if c.Action == "show_settings_ui" {
			settingsURL = c.Flow.URL
		}
	}
	if !strings.HasPrefix(settingsURL, "http://127.0.0.1:8080/dashboard/security?flow=") {
		t.Errorf("recovery continues at %q, want the settings UI", settingsURL)
	}
	me, status := whoami(t, k, token)
	if status != http.StatusOK || me.Identity.ID != res.Session.Identity.ID {
		t.Fatalf("whoami after recovery: status %d identity %q", status, me.Identity.ID)
	}
	// The recovered session sets a new password, which then signs in.
	const newPassword = "N3w!Pass#2026"
	sf := settingsFlow(t, k, token)
	var changed flow
	if status := call(t, http.MethodPost, k.PublicURL+"/self-service/settings?flow="+sf.ID, map[string]string{"X-Session-Token": token},
		map[string]any{"method": "password", "password": newPassword}, &changed); status != http.StatusOK || changed.State != "success" {
		t.Fatalf("set a new password: status %d state %q messages %v", status, changed.State, changed.UI.Messages)
	}
	if _, status := login(t, k, email, password); status != http.StatusBadRequest {
		t.Errorf("old password after recovery: status %d, want 400", status)
	}
	if _, status := login(t, k, email, newPassword); status != http.StatusOK {
		t.Errorf("new password after recovery: status %d, want 200", status)
	}

	// The same code does not work twice.
	var again flow
	if status := call(t, http.MethodGet, k.PublicURL+"/self-service/recovery/api", nil, nil, &again); status != http.StatusOK {
		t.Fatalf("create recovery flow: status %d", status)
	}
	if status := call(t, http.MethodPost, k.PublicURL+"/self-service/recovery?flow="+again.ID, nil,
		map[string]any{"method": "code", "code": code}, &again); status == http.StatusOK && again.State == "passed_challenge" {
		t.Fatal("a used recovery code passed again")
	}
}

// totpCode computes the RFC 6238 code (SHA-1, 30 s, 6 digits) of a base32 secret at t.
func totpCode(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	key, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(strings.TrimRight(secret, "=")))
	if err != nil {
		t.Fatalf("decode TOTP secret %q: %v", secret, err)
	}
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(at.Unix()/30))
	mac := hmac.New(sha1.New, key)
	mac.Write(msg[:])
	sum := mac.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	v := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	return fmt.Sprintf("%06d", v%1000000)
}

func TestTOTPCodeMatchesRFC6238(t *testing.T) {
	// RFC 6238 appendix B, SHA-1 seed "12345678901234567890", T = 59 s: 94287082 (8 digits), so 287082.
	secret := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString([]byte("12345678901234567890"))
	if got := totpCode(t, secret, time.Unix(59, 0)); got != "287082" {
		t.Fatalf("totpCode = %s, want 287082", got)
	}
}

func nodeText(f flow, id string) string {
	for _, n := range f.UI.Nodes {
		if n.Attributes.ID == id {
			return n.Attributes.Text.Text
		}
	}
	return ""
}

func settingsFlow(t *testing.T, k *kratostest.Server, token string) flow {
	t.Helper()
	var f flow
	if status := call(t, http.MethodGet, k.PublicURL+"/self-service/settings/api",
		map[string]string{"X-Session-Token": token}, nil, &f); status != http.StatusOK {
		t.Fatalf("create settings flow: status %d\n%s", status, k.Log())
	}
	return f
}

// TestTOTPThenAAL2AndLookupSecrets enrols an authenticator app, after which the
// session needs a second factor (aal2), then recovery codes (lookup secrets)
// that stand in for the app once each.
func TestTOTPThenAAL2AndLookupSecrets(t *testing.T) {
	t.Parallel()
	k := kratostest.Start(t)
	const phone = "+819033334444"
	res := registerAPI(t, k, map[string]any{"phone": phone, "terms": true})
	token := res.SessionToken
	auth := map[string]string{"X-Session-Token": token}

	// Enrol TOTP: the settings flow shows the secret (and a QR code).
	sf := settingsFlow(t, k, token)
	secret := nodeText(sf, "totp_secret_key")
	if secret == "" {
		t.Fatalf("settings flow shows no TOTP secret; nodes %+v", sf.UI.Nodes)
	}
	var enrolled flow
	if status := call(t, http.MethodPost, k.PublicURL+"/self-service/settings?flow="+sf.ID, auth,
		map[string]any{"method": "totp", "totp_code": totpCode(t, secret, time.Now())}, &enrolled); status != http.StatusOK || enrolled.State != "success" {
		t.Fatalf("enrol TOTP: status %d state %q messages %v\n%s", status, enrolled.State, enrolled.UI.Messages, k.Log())
	}

	// The enrolling session proved the code, so it is aal2; from now on a
	// password-only (aal1) session is not enough.
	if me, status := whoami(t, k, token); status != http.StatusOK || me.AuthenticatorAssuranceLevel != "aal2" {
		t.Fatalf("whoami of the enrolling session: status %d aal %q, want 200 aal2", status, me.AuthenticatorAssuranceLevel)
	}
	first, status := login(t, k, phone, password)
	if status != http.StatusOK {
		t.Fatalf("password login: status %d", status)
	}
	if _, status := whoami(t, k, first.SessionToken); status != http.StatusForbidden {
		t.Fatalf("whoami after password only: status %d, want 403", status)
	}
	secondFactor := func(sessionToken string, body map[string]any) (session, int) {
		t.Helper()
		var f flow
		if status := call(t, http.MethodGet, k.PublicURL+"/self-service/login/api?aal=aal2",
			map[string]string{"X-Session-Token": sessionToken}, nil, &f); status != http.StatusOK {
			t.Fatalf("create aal2 login flow: status %d", status)
		}
		var out authResult
		status := call(t, http.MethodPost, k.PublicURL+"/self-service/login?flow="+f.ID,
			map[string]string{"X-Session-Token": sessionToken}, body, &out)
		return out.Session, status
	}
	if _, status := secondFactor(first.SessionToken, map[string]any{"method": "totp", "totp_code": "000000"}); status == http.StatusOK {
		// One chance in a million that 000000 is the current code; a second try settles it.
		if totpCode(t, secret, time.Now()) != "000000" {
			t.Fatal("a wrong TOTP code was accepted")
		}
	}
	s, status := secondFactor(first.SessionToken, map[string]any{"method": "totp", "totp_code": totpCode(t, secret, time.Now())})
	if status != http.StatusOK || s.AuthenticatorAssuranceLevel != "aal2" {
		t.Fatalf("TOTP step: status %d aal %q\n%s", status, s.AuthenticatorAssuranceLevel, k.Log())
	}
	me, status := whoami(t, k, first.SessionToken)
	if status != http.StatusOK || me.AuthenticatorAssuranceLevel != "aal2" {
		t.Fatalf("whoami at aal2: status %d aal %q", status, me.AuthenticatorAssuranceLevel)
	}

	// Recovery codes: generate, confirm.
	aal2 := map[string]string{"X-Session-Token": first.SessionToken}
	sf = settingsFlow(t, k, first.SessionToken)
	var shown flow
	if status := call(t, http.MethodPost, k.PublicURL+"/self-service/settings?flow="+sf.ID, aal2,
		map[string]any{"method": "lookup_secret", "lookup_secret_regenerate": true}, &shown); status != http.StatusOK {
		t.Fatalf("generate lookup secrets: status %d messages %v\n%s", status, shown.UI.Messages, k.Log())
	}
	var codes []string
	for _, n := range shown.UI.Nodes {
		if n.Attributes.ID == "lookup_secret_codes" {
			codes = strings.Fields(strings.ReplaceAll(n.Attributes.Text.Text, ",", " "))
		}
	}
	if len(codes) < 10 {
		t.Fatalf("got %d lookup secrets, want at least 10; nodes %+v", len(codes), shown.UI.Nodes)
	}
	var confirmed flow
	if status := call(t, http.MethodPost, k.PublicURL+"/self-service/settings?flow="+sf.ID, aal2,
		map[string]any{"method": "lookup_secret", "lookup_secret_confirm": true}, &confirmed); status != http.StatusOK || confirmed.State != "success" {
		t.Fatalf("confirm lookup secrets: status %d state %q", status, confirmed.State)
	}

	// A recovery code replaces the app once.
	second, status := login(t, k, phone, password)
	if status != http.StatusOK {
		t.Fatalf("password login: status %d", status)
	}
	s, status = secondFactor(second.SessionToken, map[string]any{"method": "lookup_secret", "lookup_secret": codes[0]})
	if status != http.StatusOK || s.AuthenticatorAssuranceLevel != "aal2" {
		t.Fatalf("lookup secret step: status %d aal %q", status, s.AuthenticatorAssuranceLevel)
	}
	third, status := login(t, k, phone, password)
	if status != http.StatusOK {
		t.Fatalf("password login: status %d", status)
	}
	if _, status := secondFactor(third.SessionToken, map[string]any{"method": "lookup_secret", "lookup_secret": codes[0]}); status == http.StatusOK {
		t.Fatal("a used recovery code was accepted again")
	}
}

// TestCodesLive30Minutes reads the expiry of every flow that carries a code or
// a form: each lives 30 minutes (the spec's code lifetime).
func TestCodesLive30Minutes(t *testing.T) {
	t.Parallel()
	k := kratostest.Start(t)
	for _, kind := range []string{"login", "registration", "recovery", "verification"} {
		var f flow
		if status := call(t, http.MethodGet, k.PublicURL+"/self-service/"+kind+"/api", nil, nil, &f); status != http.StatusOK {
			t.Fatalf("create %s flow: status %d", kind, status)
		}
		lifespanIs30m(t, kind, f)
	}
	// A verification flow that sent a code keeps the 30-minute expiry.
	email := randomEmail(t)
	registerAPI(t, k, map[string]any{"email": email, "terms": true})
	_, flowID := verificationMail(t, k, email)
	var vf flow
	if status := call(t, http.MethodGet, k.PublicURL+"/self-service/verification/flows?id="+flowID, nil, nil, &vf); status != http.StatusOK {
		t.Fatalf("get verification flow: status %d", status)
	}
	lifespanIs30m(t, "sent verification", vf)
}

func TestMailpitMissingNamesTheInstallCommand(t *testing.T) {
	t.Setenv(kratostest.MailpitBinEnv, t.TempDir()+"/no-such-mailpit")
	root, err := kratostest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	_, err = kratostest.MailpitBinary(root)
	if err == nil || !strings.Contains(err.Error(), "scripts/tools.sh mailpit") {
		t.Fatalf("err = %v, want the install command", err)
	}
}

func TestInboxAddress(t *testing.T) {
	for in, want := range map[string]string{
		"+819012345678":      "819012345678@sms.exhub.local",
		"Trader@Example.com": "trader@example.com",
	} {
		if got := kratostest.InboxAddress(in); got != want {
			t.Errorf("InboxAddress(%q) = %q, want %q", in, got, want)
		}
	}
}
