package account_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/api/account"
	"github.com/exhub/exhub/bff/internal/auth/authtest"
	"github.com/exhub/exhub/bff/internal/member"
	"github.com/exhub/exhub/bff/internal/store"
)

// signUpWith registers by browser flow with extra traits (a referral code, say).
func (b *bff) signUpWith(traits map[string]any) *session {
	t := b.t
	t.Helper()
	s := &session{Browser: authtest.NewBrowser(t, b.k.PublicURL), b: b}
	s.Email = authtest.RandomEmail(t)
	all := map[string]any{"email": s.Email, "terms": true}
	for k, v := range traits {
		all[k] = v
	}
	f := s.Flow("registration", "")
	resp := s.Do(http.MethodPost, "/self-service/registration?flow="+f.ID, map[string]any{
		"method": "password", "csrf_token": f.CSRF(), "password": authtest.Password, "traits": all,
	}, nil)
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		t.Fatalf("registration: %d %s", resp.StatusCode, raw)
	}
	return s
}

// settings submits a settings flow with body (method and its fields).
func (s *session) settings(body map[string]any) {
	t := s.b.t
	t.Helper()
	f := s.Flow("settings", "")
	body["csrf_token"] = f.CSRF()
	resp := s.Do(http.MethodPost, "/self-service/settings?flow="+f.ID, body, nil)
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		t.Fatalf("settings %v: %d %s", body["method"], resp.StatusCode, raw)
	}
}

func (b *bff) row(id string) store.Member {
	m, err := b.st.Member(context.Background(), id)
	if err != nil && !member.IsNotFound(err) {
		b.t.Fatal(err)
	}
	return m
}

func TestKratosHooksReachTheBFF(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, st *store.Store, dataDir string) {
		b := startBFF(t, st, dataDir)

		// Registration: the hook creates the row before any API call.
		alice := b.signUpWith(map[string]any{"nickname": "alice", "locale": "ja-JP"})
		aliceID := alice.id()
		eventually(t, "alice's row from the registration hook", func() (bool, string) {
			r := b.row(aliceID)
			return r.ID == aliceID && r.Nickname == "alice" && r.Locale == "ja-JP", kratosLog(b)
		})
		code := b.row(aliceID).ReferralCode

		// A referral code of an existing member is applied (the store normalises case); an unknown one is ignored.
		bob := b.signUpWith(map[string]any{"nickname": "bob", "referral_code": code})
		bobID := bob.id()
		eventually(t, "bob referred by alice", func() (bool, string) {
			r := b.row(bobID)
			return r.ReferredBy == aliceID, kratosLog(b)
		})
		carol := b.signUpWith(map[string]any{"nickname": "carol", "referral_code": "NOSUCH22"})
		carolID := carol.id()
		eventually(t, "carol's row", func() (bool, string) { return b.row(carolID).ID == carolID, kratosLog(b) })
		if r := b.row(carolID); r.ReferredBy != "" {
			t.Fatalf("unknown referral code applied: %+v", r)
		}

		// The registration's session is recorded lazily by its first API call (no hook records it).
		if resp := b.api.Get("/api/v1/me", alice.read()); resp.Code != http.StatusOK {
			t.Fatalf("me: %d %s", resp.Code, resp.Body)
		}
		first := b.row(aliceID).LastLogin
		if first.SessionID == "" || first.At.IsZero() {
			t.Fatalf("first session not recorded: %+v", first)
		}

		// Login: the hook records the session, its time and address; the previous login moves down.
		again := &session{Browser: authtest.NewBrowser(t, b.k.PublicURL), b: b}
		again.Login(alice.Email)
		sid, err := b.checker.CheckCookie(context.Background(), again.SessionCookie())
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "login recorded by the hook", func() (bool, string) {
			r := b.row(aliceID)
			return r.LastLogin.At.Equal(sid.AuthenticatedAt.Truncate(time.Microsecond)) && r.LastLogin.IP != "" && r.PreviousLogin.At.Equal(first.At),
				fmt.Sprintf("%+v want session %s\n%s", r, sid.SessionID, kratosLog(b))
		})
		// GET /me shows the login before this session's as last_login.
		resp := b.api.Get("/api/v1/me", again.read())
		var me account.Me
		if resp.Code != http.StatusOK || json.Unmarshal(resp.Body.Bytes(), &me) != nil {
			t.Fatalf("me: %d %s", resp.Code, resp.Body)
		}
		if me.ReferralCode != code || me.KYCState != "none" || me.WithdrawLockedUntil != nil || me.Locale != "ja-JP" {
			t.Fatalf("me %s", resp.Body)
		}
		if me.LastLogin == nil || !me.LastLogin.At.Equal(first.At) || me.LastLogin.IP != first.IP {
			t.Fatalf("me without the previous login: %s", resp.Body)
		}

		// A password change through Kratos' settings flow starts the 24-hour lockout (settings hook).
		before := time.Now()
		again.settings(map[string]any{"method": "password", "password": "N3w!Passw0rd"})
		eventually(t, "lockout after the password change", func() (bool, string) {
			r := b.row(aliceID)
			return r.WithdrawLockedUntil.After(before.Add(23 * time.Hour)), kratosLog(b)
		})
		if u := b.row(aliceID).WithdrawLockedUntil; u.After(time.Now().Add(24*time.Hour + time.Minute)) {
			t.Fatalf("lockout until %s", u)
		}
		resp = b.api.Get("/api/v1/me/security", again.read())
		var sec account.Security
		if resp.Code != http.StatusOK || json.Unmarshal(resp.Body.Bytes(), &sec) != nil || !sec.WithdrawLocked ||
			len(sec.Events) != 1 || sec.Events[0].Kind != store.SecurityPassword {
			t.Fatalf("security: %d %s", resp.Code, resp.Body)
		}

		// An e-mail change (profile method) is a security change too; a nickname-only change is not.
		bob.settings(map[string]any{"method": "profile", "traits": map[string]any{"email": bob.Email, "nickname": "bobby",
			"referral_code": code, "terms": true}})
		newEmail := authtest.RandomEmail(t)
		bob.settings(map[string]any{"method": "profile", "traits": map[string]any{"email": newEmail, "nickname": "bobby",
			"referral_code": code, "terms": true}})
		eventually(t, "lockout after the e-mail change", func() (bool, string) {
			evs, err := st.SecurityEvents(context.Background(), bobID, 10)
			if err != nil {
				t.Fatal(err)
			}
			return len(evs) == 1 && evs[0].Kind == store.SecurityEmail, kratosLog(b)
		})

		// TOTP enrolment is one too.
		carol.EnableTOTP()
		eventually(t, "lockout after enabling TOTP", func() (bool, string) {
			evs, _ := st.SecurityEvents(context.Background(), carolID, 10)
			return len(evs) == 1 && evs[0].Kind == store.SecurityTOTP, kratosLog(b)
		})
	})
}

func TestHooksNeedTheSecret(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := openStore(t, store.DefaultConfig(dir))
	cfg := member.DefaultConfig()
	cfg.HookSecret = hookSecretValue()
	h := member.New(st, cfg, nil).Hooks()
	post := func(path, secret, body string) int {
		r, _ := http.NewRequest(http.MethodPost, "http://bff"+path, strings.NewReader(body))
		if secret != "" {
			r.SetBasicAuth(member.HookUser, secret)
		}
		w := newRecorder()
		h.ServeHTTP(w, r)
		return w.code
	}
	body := `{"identity_id":"0b7f8a1e-0000-4000-8000-000000000001","traits":{"nickname":"x"}}`
	if c := post(member.HookPathPrefix+"registration", "", body); c != http.StatusUnauthorized {
		t.Fatalf("no secret: %d", c)
	}
	if c := post(member.HookPathPrefix+"registration", "wrong-secret-wrong-secret", body); c != http.StatusUnauthorized {
		t.Fatalf("wrong secret: %d", c)
	}
	if _, err := st.Member(context.Background(), "0b7f8a1e-0000-4000-8000-000000000001"); !member.IsNotFound(err) {
		t.Fatalf("a refused hook wrote: %v", err)
	}
	if c := post(member.HookPathPrefix+"nosuch", hookSecret, body); c != http.StatusNotFound {
		t.Fatalf("unknown hook: %d", c)
	}
	if c := post(member.HookPathPrefix+"registration", hookSecret, "{"); c != http.StatusBadRequest {
		t.Fatalf("bad body: %d", c)
	}
	if c := post(member.HookPathPrefix+"registration", hookSecret, body); c != http.StatusNoContent {
		t.Fatalf("good hook: %d", c)
	}
	// Without a configured secret the hooks do not exist.
	cfg.HookSecret = emptySecret()
	h = member.New(st, cfg, nil).Hooks()
	if c := post(member.HookPathPrefix+"registration", "", body); c != http.StatusNotFound {
		t.Fatalf("hooks off: %d", c)
	}
}
