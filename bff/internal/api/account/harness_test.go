package account_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2/humatest"

	"github.com/exhub/exhub/bff/internal/api/account"
	"github.com/exhub/exhub/bff/internal/api/account/accounttest"
	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/auth/authtest"
	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/kratostest"
	"github.com/exhub/exhub/bff/internal/kyc"
	"github.com/exhub/exhub/bff/internal/member"
	"github.com/exhub/exhub/bff/internal/store"
	"github.com/exhub/exhub/bff/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

const (
	origin     = "Origin: http://127.0.0.1:8080"
	hookSecret = "test-hook-secret-0123456789"
)

// engines runs fn on SQLite (a temp dir) and on a fresh PostgreSQL database.
func engines(t *testing.T, fn func(t *testing.T, st *store.Store, dataDir string)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		fn(t, openStore(t, store.DefaultConfig(dir)), dir)
	})
	t.Run("postgres", func(t *testing.T) {
		cfg := store.DefaultConfig("")
		cfg.Driver, cfg.DSN = store.DriverPostgres, secret.New(storetest.Postgres(t))
		fn(t, openStore(t, cfg), t.TempDir())
	})
}

func openStore(t *testing.T, cfg store.Config) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), cfg, store.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(st.Close)
	return st
}

// bff is a real Kratos whose web hooks post to a real listener serving the account API and the hooks.
type bff struct {
	t       *testing.T
	k       *kratostest.Server
	st      *store.Store
	members *member.Service
	kyc     *kyc.Service
	checker *auth.Checker
	api     humatest.TestAPI
	url     string
	dataDir string
	hooks   atomic.Int64 // hook requests answered 2xx
}

// hookEnv points the web hooks of bff/kratos/kratos.yml at base with secret (Kratos' indexed environment keys).
func hookEnv(base, secret string) []string {
	var env []string
	for key, kind := range map[string]string{
		"SELFSERVICE_FLOWS_REGISTRATION_AFTER_PASSWORD_HOOKS_0":  "registration",
		"SELFSERVICE_FLOWS_LOGIN_AFTER_HOOKS_0":                  "login",
		"SELFSERVICE_FLOWS_SETTINGS_AFTER_PASSWORD_HOOKS_0":      "settings?method=password",
		"SELFSERVICE_FLOWS_SETTINGS_AFTER_TOTP_HOOKS_0":          "settings?method=totp",
		"SELFSERVICE_FLOWS_SETTINGS_AFTER_LOOKUP_SECRET_HOOKS_0": "settings?method=lookup_secret",
		"SELFSERVICE_FLOWS_SETTINGS_AFTER_PROFILE_HOOKS_0":       "settings?method=profile",
	} {
		env = append(env, key+"_CONFIG_URL="+base+member.HookPathPrefix+kind, key+"_CONFIG_AUTH_CONFIG_PASSWORD="+secret)
	}
	return env
}

func startBFF(t *testing.T, st *store.Store, dataDir string) *bff {
	t.Helper()
	b := &bff{t: t, st: st, dataDir: dataDir}
	var handler atomic.Pointer[http.Handler]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := handler.Load()
		if h == nil {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		(*h).ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	b.url = srv.URL
	// From the repository root, so the hooks' jsonnet bodies (file://./bff/kratos/hooks/...) resolve as in `make run`.
	b.k = kratostest.StartFromRoot(t, hookEnv(srv.URL, hookSecret)...)
	cfg := auth.Defaults()
	cfg.KratosPublicURL, cfg.KratosAdminURL = b.k.PublicURL, b.k.AdminURL
	cfg.CSRFKey = secret.New("0123456789abcdef0123456789abcdef")
	cfg.CacheTTL = time.Millisecond // every request asks Kratos: tests see changes at once
	checker, err := auth.NewChecker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.checker = checker
	mcfg := member.DefaultConfig()
	mcfg.HookSecret = secret.New(hookSecret)
	b.members = member.New(st, mcfg, slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})))
	kcfg := kyc.DefaultConfig()
	kcfg.MaxDocuments = 3
	kcfg.Exchanges = []string{"binance", "okx"}
	b.kyc = kyc.New(st, dataDir, kcfg, slog.New(slog.DiscardHandler))
	api, h := accounttest.NewHandler(t, account.Deps{Auth: checker, Members: b.members, KYC: b.kyc,
		Exchanges: []string{"binance", "okx"}})
	b.api = api
	mux := http.NewServeMux()
	hooks := b.members.Hooks()
	mux.Handle(member.HookPathPrefix, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		hooks.ServeHTTP(rec, r)
		if rec.status < 300 {
			b.hooks.Add(1)
		}
	}))
	mux.Handle("/", h)
	var hh http.Handler = mux
	handler.Store(&hh)
	return b
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(p)
}

// session is a signed-in browser with the headers a state-changing call needs.
type session struct {
	*authtest.Browser
	b *bff
}

func (b *bff) signUp(nickname string) *session {
	s := &session{Browser: authtest.NewBrowser(b.t, b.k.PublicURL), b: b}
	s.SignUp(nickname)
	return s
}

func (s *session) id() string {
	m, err := s.b.checker.CheckCookie(context.Background(), s.SessionCookie())
	if err != nil {
		s.b.t.Fatal(err)
	}
	return m.ID
}

// read is the cookie header of a GET.
func (s *session) read() string { return "Cookie: exhub_session=" + s.SessionCookie() }

// write are the headers of a state-changing call: session and CSRF cookies, CSRF header and Origin.
func (s *session) write() []any {
	m, err := s.b.checker.CheckCookie(context.Background(), s.SessionCookie())
	if err != nil {
		s.b.t.Fatal(err)
	}
	tok := s.b.checker.CSRFToken(m.SessionID)
	return []any{"Cookie: exhub_session=" + s.SessionCookie() + "; exhub_csrf=" + tok, "X-CSRF-Token: " + tok, origin}
}

// eventually polls cond until it holds, failing after a generous bound.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: not reached; last state: %s", what, last)
}

func kratosLog(b *bff) string {
	raw, _ := os.ReadFile(b.k.LogPath)
	lines := strings.Split(string(raw), "\n")
	var out []string
	for _, l := range lines {
		if strings.Contains(l, "ebhook") || strings.Contains(l, "web_hook") || strings.Contains(l, "settings") || strings.Contains(l, "level\":\"error") || strings.Contains(l, "warn") {
			out = append(out, l)
		}
	}
	return fmt.Sprint(strings.Join(out, "\n"))
}

func hookSecretValue() secret.Secret { return secret.New(hookSecret) }
func emptySecret() secret.Secret     { return secret.Secret{} }

type recorder struct {
	*httptest.ResponseRecorder
	code int
}

func newRecorder() *recorder { return &recorder{ResponseRecorder: httptest.NewRecorder()} }

func (r *recorder) WriteHeader(c int) {
	if r.code == 0 {
		r.code = c
	}
	r.ResponseRecorder.WriteHeader(c)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseRecorder.Write(p)
}

// tWriter sends log lines to the test's log.
type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func mustMember(t *testing.T, b *bff, s *session) *auth.Member {
	t.Helper()
	m, err := b.checker.CheckCookie(context.Background(), s.SessionCookie())
	if err != nil {
		t.Fatal(err)
	}
	return m
}
