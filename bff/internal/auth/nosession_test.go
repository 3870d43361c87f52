package auth_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/auth"
)

// fakeKratos is a whoami that counts the calls per cookie value: 200 for the cookies it was told are sessions, 401
// for every other.
type fakeKratos struct {
	t     *testing.T
	URL   string
	clock *clock

	mu       sync.Mutex
	calls    map[string]int
	sessions map[string]string // cookie value -> identity id
}

func newFakeKratos(t *testing.T, clk *clock) *fakeKratos {
	t.Helper()
	f := &fakeKratos{t: t, clock: clk, calls: map[string]int{}, sessions: map[string]string{}}
	srv := httptest.NewServer(http.HandlerFunc(f.whoami))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

func (f *fakeKratos) whoami(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/sessions/whoami" {
		f.t.Errorf("unexpected call %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	ck, err := r.Cookie("exhub_session")
	if err != nil || len(r.Cookies()) != 1 {
		f.t.Errorf("whoami got cookies %v, want the session cookie only", r.Cookies())
		http.Error(w, "bad cookies", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.calls[ck.Value]++
	id, ok := f.sessions[ck.Value]
	f.mu.Unlock()
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":{"id":"session_inactive","code":401,"reason":"No active session was found in this request."}}`))
		return
	}
	now := f.clock.Now()
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "session-of-" + id, "active": true, "authenticator_assurance_level": "aal1",
		"expires_at": now.Add(time.Hour), "authenticated_at": now,
		"identity": map[string]any{"id": id, "traits": map[string]any{"email": id + "@example.com"},
			"credentials": map[string]any{"password": map[string]any{}}},
	})
}

// login makes cookie a session of identity id.
func (f *fakeKratos) login(cookie, id string) {
	f.mu.Lock()
	f.sessions[cookie] = id
	f.mu.Unlock()
}

func (f *fakeKratos) count(cookie string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[cookie]
}

func (f *fakeKratos) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		n += c
	}
	return n
}

func get(t *testing.T, h http.Handler, cookie string) (*http.Response, []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/api/v1/me", nil)
	req.AddCookie(&http.Cookie{Name: "exhub_session", Value: cookie})
	req.AddCookie(&http.Cookie{Name: "other", Value: "never-forwarded"})
	return serve(t, h, req)
}

func wantMember(t *testing.T, resp *http.Response, raw []byte, id string) {
	t.Helper()
	var body map[string]string
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &body) != nil || body["id"] != id {
		t.Fatalf("status %d %s, want member %s", resp.StatusCode, raw, id)
	}
}

// A storm of requests with one dead or forged cookie asks Kratos once per no_session_ttl; a login afterwards with
// a new cookie works at once, and so does the old cookie once Forget (the gate's call after a login) dropped it.
func TestNoSessionAnswersCached(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)}
	k := newFakeKratos(t, clk)
	cfg := config(k.URL, k.URL)
	c := newChecker(t, cfg, auth.WithClock(clk.Now))
	h := c.Middleware(echo)
	const bad = "forged-or-expired-cookie"

	// Concurrent requests share one whoami (one in flight per cookie), later ones hit the cached answer.
	const n = 40
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest(http.MethodGet, "/api/v1/me", nil)
			req.AddCookie(&http.Cookie{Name: "exhub_session", Value: bad})
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			codes[i] = w.Code
		}()
	}
	wg.Wait()
	for i, code := range codes {
		if code != http.StatusUnauthorized {
			t.Fatalf("request %d: status %d, want 401", i, code)
		}
	}
	for range n {
		resp, raw := get(t, h, bad)
		wantProblem(t, resp, raw, http.StatusUnauthorized, auth.CodeUnauthorized)
	}
	if got := k.count(bad); got != 1 {
		t.Fatalf("%d whoami calls for one bad cookie within the TTL, want 1", got)
	}
	if c.CachedNoSession() != 1 || c.Cached() != 0 {
		t.Fatalf("cache holds %d no-session and %d sessions, want 1 and 0", c.CachedNoSession(), c.Cached())
	}

	// A good login afterwards, with a new cookie: accepted at once.
	k.login("fresh-session", "alice")
	resp, raw := get(t, h, "fresh-session")
	wantMember(t, resp, raw, "alice")
	if got := k.count("fresh-session"); got != 1 {
		t.Fatalf("%d whoami calls for the new session, want 1", got)
	}

	// Just before no_session_ttl the answer is still reused; at it, Kratos is asked again.
	clk.Add(cfg.NoSessionTTL - time.Millisecond)
	resp, raw = get(t, h, bad)
	wantProblem(t, resp, raw, http.StatusUnauthorized, auth.CodeUnauthorized)
	if got := k.count(bad); got != 1 {
		t.Fatalf("%d whoami calls before no_session_ttl passed, want 1", got)
	}
	clk.Add(time.Millisecond)
	resp, raw = get(t, h, bad)
	wantProblem(t, resp, raw, http.StatusUnauthorized, auth.CodeUnauthorized)
	if got := k.count(bad); got != 2 {
		t.Fatalf("%d whoami calls after no_session_ttl passed, want 2", got)
	}

	// The same cookie value becoming a session (a login through the gate, which then calls Forget): at once.
	k.login(bad, "bob")
	c.Forget(bad)
	if c.CachedNoSession() != 0 {
		t.Fatalf("Forget left %d no-session answers", c.CachedNoSession())
	}
	resp, raw = get(t, h, bad)
	wantMember(t, resp, raw, "bob")
	if got := k.count(bad); got != 3 {
		t.Fatalf("%d whoami calls after Forget, want 3", got)
	}
	// The good answer replaced the cached "no session".
	resp, raw = get(t, h, bad)
	wantMember(t, resp, raw, "bob")
	if got := k.count(bad); got != 3 || c.Cached() != 2 || c.CachedNoSession() != 0 {
		t.Fatalf("%d whoami calls, %d sessions, %d no-session cached; want 3, 2, 0", got, c.Cached(), c.CachedNoSession())
	}
}

// Forged cookies by the thousand never push a signed-in member out of the cache: "no session" answers have their
// own bounded table.
func TestNoSessionFloodKeepsSessions(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)}
	k := newFakeKratos(t, clk)
	cfg := config(k.URL, k.URL)
	cfg.CacheSize = 8
	c := newChecker(t, cfg, auth.WithClock(clk.Now))
	h := c.Middleware(echo)
	k.login("alice-cookie", "alice")
	resp, raw := get(t, h, "alice-cookie")
	wantMember(t, resp, raw, "alice")

	const forged = 100
	for i := range forged {
		resp, raw := get(t, h, fmt.Sprintf("forged-%d", i))
		wantProblem(t, resp, raw, http.StatusUnauthorized, auth.CodeUnauthorized)
	}
	if got := c.CachedNoSession(); got != cfg.CacheSize {
		t.Fatalf("%d no-session answers cached, want the bound %d", got, cfg.CacheSize)
	}
	resp, raw = get(t, h, "alice-cookie")
	wantMember(t, resp, raw, "alice")
	if got := k.count("alice-cookie"); got != 1 || c.Cached() != 1 {
		t.Fatalf("%d whoami calls for the member after the flood (cached sessions %d), want 1", got, c.Cached())
	}
	if got := k.total(); got != 1+forged {
		t.Fatalf("%d whoami calls in all, want %d", got, 1+forged)
	}
}

// no_session_ttl never outlasts cache_ttl, and 0 turns the "no session" cache off.
func TestNoSessionTTLBounds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		cacheTTL, ttl time.Duration
		// reused is how long after the first answer a request is still answered from the cache.
		reused, asked time.Duration
	}{
		{name: "capped by cache_ttl", cacheTTL: 500 * time.Millisecond, ttl: 2 * time.Second, reused: 499 * time.Millisecond, asked: 500 * time.Millisecond},
		{name: "off", cacheTTL: 10 * time.Second, ttl: 0, asked: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &clock{now: time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)}
			k := newFakeKratos(t, clk)
			cfg := config(k.URL, k.URL)
			cfg.CacheTTL, cfg.NoSessionTTL = tc.cacheTTL, tc.ttl
			c := newChecker(t, cfg, auth.WithClock(clk.Now))
			h := c.Middleware(echo)
			start := clk.Now()
			resp, raw := get(t, h, "dead")
			wantProblem(t, resp, raw, http.StatusUnauthorized, auth.CodeUnauthorized)
			want := 1
			if tc.reused > 0 {
				clk.Add(tc.reused)
				resp, raw = get(t, h, "dead")
				wantProblem(t, resp, raw, http.StatusUnauthorized, auth.CodeUnauthorized)
				if got := k.count("dead"); got != want {
					t.Fatalf("%d whoami calls %s after the first, want %d", got, tc.reused, want)
				}
			}
			clk.Add(tc.asked - clk.Now().Sub(start))
			resp, raw = get(t, h, "dead")
			wantProblem(t, resp, raw, http.StatusUnauthorized, auth.CodeUnauthorized)
			want++
			if got := k.count("dead"); got != want {
				t.Fatalf("%d whoami calls %s after the first, want %d", got, tc.asked, want)
			}
		})
	}
}
