package member

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/store"
)

const id = "0191f7a0-0000-7000-8000-0000000000aa"

func newService(t *testing.T, now func() time.Time) (*Service, *store.Store) {
	t.Helper()
	st, err := store.Open(context.Background(), store.DefaultConfig(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	cfg := DefaultConfig()
	cfg.HookSecret = secret.New("unit-test-hook-secret")
	return New(st, cfg, nil, WithClock(now)), st
}

func hook(t *testing.T, s *Service, path, body string) int {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, HookPathPrefix+path, strings.NewReader(body))
	r.SetBasicAuth(HookUser, "unit-test-hook-secret")
	w := httptest.NewRecorder()
	s.Hooks().ServeHTTP(w, r)
	return w.Code
}

func TestCleanIP(t *testing.T) {
	for in, want := range map[string]string{"203.0.113.7": "203.0.113.7", "203.0.113.7:5555": "203.0.113.7",
		"[2001:db8::1]:80": "2001:db8::1", "::ffff:192.0.2.1": "192.0.2.1", "": "", "not an ip": "", "1.2.3": ""} {
		if got := cleanIP(in); got != want {
			t.Errorf("cleanIP(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSessionSetIsBounded(t *testing.T) {
	s := newSessionSet(3)
	for _, id := range []string{"a", "b", "c"} {
		s.add(id)
	}
	if !s.has("a") || !s.has("c") {
		t.Fatal("forgot within the bound")
	}
	s.add("d")
	if s.has("a") || !s.has("d") || len(s.m) != 1 {
		t.Fatalf("over the bound: %v", s.m)
	}
}

func TestLoginRecordedOncePerSignIn(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	s, st := newService(t, func() time.Time { return now })
	ctx := context.Background()
	signIn := now.Add(-time.Minute)
	// The hook (no session id yet: Kratos sends the nil UUID) and then the session's first request.
	if c := hook(t, s, "login", `{"identity_id":"`+id+`","session_id":"`+nilUUID+`","authenticated_at":"`+
		signIn.Format(time.RFC3339Nano)+`","ip":"203.0.113.7:443"}`); c != http.StatusNoContent {
		t.Fatalf("login hook: %d", c)
	}
	// Both carry the session's authentication time, to the nanosecond.
	m := &auth.Member{ID: id, SessionID: "s1", AuthenticatedAt: signIn, ClientIP: "198.51.100.1"}
	row, err := s.Ensure(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	if row.LastLogin.IP != "203.0.113.7" || !row.PreviousLogin.At.IsZero() {
		t.Fatalf("one sign-in recorded twice: %+v", row)
	}
	// A later sign-in moves the first to PreviousLogin.
	m2 := &auth.Member{ID: id, SessionID: "s2", AuthenticatedAt: now, ClientIP: "198.51.100.2"}
	if row, err = s.Ensure(ctx, m2); err != nil {
		t.Fatal(err)
	}
	if row.LastLogin.IP != "198.51.100.2" || row.PreviousLogin.IP != "203.0.113.7" {
		t.Fatalf("second sign-in: %+v", row)
	}
	// Further requests of the session change nothing.
	if row, err = s.Ensure(ctx, m2); err != nil || row.PreviousLogin.IP != "203.0.113.7" {
		t.Fatalf("repeat: %+v %v", row, err)
	}
	// The hook may come after the session's first request (Kratos runs it asynchronously): still one sign-in.
	if c := hook(t, s, "login", `{"identity_id":"`+id+`","session_id":"s2","authenticated_at":"`+
		now.Format(time.RFC3339Nano)+`","ip":"198.51.100.2"}`); c != http.StatusNoContent {
		t.Fatalf("late login hook: %d", c)
	}
	// A second sign-in moments later (another browser) is its own, whichever report comes first.
	quick := now.Add(400 * time.Millisecond)
	if c := hook(t, s, "login", `{"identity_id":"`+id+`","session_id":"s3","authenticated_at":"`+
		quick.Format(time.RFC3339Nano)+`","ip":"198.51.100.3"}`); c != http.StatusNoContent {
		t.Fatalf("quick login hook: %d", c)
	}
	if row, err = s.Ensure(ctx, &auth.Member{ID: id, SessionID: "s3", AuthenticatedAt: quick, ClientIP: "198.51.100.3"}); err != nil {
		t.Fatal(err)
	}
	if row.LastLogin.IP != "198.51.100.3" || !row.LastLogin.At.Equal(quick) || row.PreviousLogin.IP != "198.51.100.2" {
		t.Fatalf("quick second sign-in: %+v", row)
	}
	if _, err := st.Member(ctx, id); err != nil {
		t.Fatal(err)
	}
}

func TestSettingsHookKinds(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	s, st := newService(t, func() time.Time { return now })
	ctx := context.Background()
	issued := now.Add(-time.Minute).Format(time.RFC3339Nano)
	old := now.Add(-48 * time.Hour).Format(time.RFC3339Nano)
	fresh := now.Add(-time.Second).Format(time.RFC3339Nano)
	cases := []struct {
		method, body string
		want         []string
	}{
		{"profile", `"addresses":[{"via":"email","created_at":"` + old + `"}]`, nil}, // nickname only
		{"profile", `"addresses":[{"via":"email","created_at":"` + fresh + `"},{"via":"sms","created_at":"` + fresh + `"}]`,
			[]string{store.SecurityMobile, store.SecurityEmail}},
		{"password", ``, []string{store.SecurityPassword}},
		{"totp", ``, []string{store.SecurityTOTP}},
		{"lookup_secret", ``, []string{store.SecurityRecoveryCodes}},
	}
	total := 0
	for _, c := range cases {
		body := `{"identity_id":"` + id + `","flow_issued_at":"` + issued + `"`
		if c.body != "" {
			body += "," + c.body
		}
		body += "}"
		if code := hook(t, s, "settings?method="+c.method, body); code != http.StatusNoContent {
			t.Fatalf("%s: %d", c.method, code)
		}
		total += len(c.want)
		evs, err := st.SecurityEvents(ctx, id, 100)
		if err != nil || len(evs) != total {
			t.Fatalf("%s: events %+v %v", c.method, evs, err)
		}
		for i, k := range c.want {
			if evs[i].Kind != k && evs[len(c.want)-1-i].Kind != k {
				t.Fatalf("%s: events %+v, want %v", c.method, evs, c.want)
			}
		}
	}
	m, _ := st.Member(ctx, id)
	if !m.WithdrawLockedUntil.Equal(now.Add(24 * time.Hour)) {
		t.Fatalf("locked until %s", m.WithdrawLockedUntil)
	}
	if code := hook(t, s, "settings?method=webauthn", `{"identity_id":"`+id+`"}`); code != http.StatusBadRequest {
		t.Fatalf("unknown method: %d", code)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	c := DefaultConfig()
	c.HookSecret, c.WithdrawLockout, c.SecurityEvents = secret.New("short"), time.Minute, 0
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "hook_secret") || !strings.Contains(err.Error(), "withdraw_lockout") ||
		!strings.Contains(err.Error(), "security_events") || strings.Contains(err.Error(), "short") {
		t.Fatalf("validate: %v", err)
	}
}
