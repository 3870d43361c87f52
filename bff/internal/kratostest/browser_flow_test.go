package kratostest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/kratostest"
)

const edgeBuildHint = "make build (or: cd edge && go build -o ../bin/exhub-edge ./cmd/edge)"

// startEdge runs bin/exhub-edge (or $EXHUB_EDGE_BIN) with the repository's
// Caddyfile on addr, proxying /.ory to kratosAddr. The BFF's place is taken by
// passThroughBFF: the edge sends self-service submissions (POST
// /.ory/self-service/*) to the BFF, whose gate forwards them to Kratos.
func startEdge(t *testing.T, addr, kratosAddr string) {
	t.Helper()
	root, err := kratostest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := os.Getenv("EXHUB_EDGE_BIN")
	if bin == "" {
		bin = filepath.Join(root, "bin", "exhub-edge")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("edge binary %s: %v; build it with: %s", bin, err, edgeBuildHint)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("<!DOCTYPE html><title>exhub</title>"), 0o644); err != nil {
		t.Fatal(err)
	}
	deadPort, err := kratostest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	bffAddr := passThroughBFF(t, kratosAddr)
	var log bytes.Buffer
	cmd := exec.Command(bin, "run", "--config", filepath.Join(root, "edge", "Caddyfile"), "--adapter", "caddyfile")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"EXHUB_EDGE_ADDR="+addr,
		"EXHUB_UI_DIR="+dir,
		"EXHUB_KRATOS_PUBLIC_ADDR="+kratosAddr,
		"EXHUB_BFF_ADDR="+bffAddr,
		fmt.Sprintf("EXHUB_VALKEY_ADDR=127.0.0.1:%d", deadPort),
		"XDG_DATA_HOME="+filepath.Join(dir, "data"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
	)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start edge: %v", err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/edge/healthz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-done:
			t.Fatalf("edge exited:\n%s", log.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("edge not ready on %s", addr)
		}
	}
}

// passThroughBFF serves, on a loopback port, what the BFF's self-service gate
// does when every check passes: /.ory/* forwarded to Kratos without the prefix
// (the client address headers as the edge set them). Everything else is 404.
func passThroughBFF(t *testing.T, kratosAddr string) string {
	t.Helper()
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: kratosAddr})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, "/.ory/")
		if !ok {
			http.NotFound(w, r)
			return
		}
		r.URL.Path = "/" + rest
		r.URL.RawPath = ""
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestBrowserFlowThroughEdge is the browser's path: Kratos reached
// same-origin at /.ory through the edge, CSRF and session cookies, no tokens.
func TestBrowserFlowThroughEdge(t *testing.T) {
	t.Parallel()
	edgePort, err := kratostest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	origin := fmt.Sprintf("http://127.0.0.1:%d", edgePort)
	k := kratostest.Start(t, "SERVE_PUBLIC_BASE_URL="+origin+"/.ory/")
	startEdge(t, strings.TrimPrefix(origin, "http://"), strings.TrimPrefix(k.PublicURL, "http://"))

	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	browser := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	do := func(method, path string, body any, out any) *http.Response {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			rd = bytes.NewReader(b)
		}
		req, err := http.NewRequest(method, origin+path, rd)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Origin", origin)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := browser.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if out != nil && len(raw) > 0 {
			if err := json.Unmarshal(raw, out); err != nil {
				t.Fatalf("%s %s: status %d: %v\n%s", method, path, resp.StatusCode, err, raw)
			}
		}
		return resp
	}

	// The SPA starts a browser registration flow with fetch (JSON, no redirect).
	var reg struct {
		ID string `json:"id"`
		UI struct {
			Action string `json:"action"`
			Nodes  []struct {
				Attributes struct {
					Name  string `json:"name"`
					Value any    `json:"value"`
				} `json:"attributes"`
			} `json:"nodes"`
		} `json:"ui"`
	}
	resp := do(http.MethodGet, "/.ory/self-service/registration/browser", nil, &reg)
	if resp.StatusCode != http.StatusOK || reg.ID == "" {
		t.Fatalf("create browser registration flow: status %d\n%s", resp.StatusCode, k.Log())
	}
	// Form actions point back through the edge, so the browser stays same-origin.
	if want := origin + "/.ory/self-service/registration?flow=" + reg.ID; reg.UI.Action != want {
		t.Fatalf("flow action %q, want %q", reg.UI.Action, want)
	}
	csrf := ""
	for _, n := range reg.UI.Nodes {
		if n.Attributes.Name == "csrf_token" {
			csrf, _ = n.Attributes.Value.(string)
		}
	}
	if csrf == "" {
		t.Fatal("browser flow has no csrf_token")
	}

	email := randomEmail(t)
	body := map[string]any{
		"method": "password", "csrf_token": csrf, "password": "Tr4de!Hub#2026",
		"traits": map[string]any{"email": email, "nickname": "hodl", "terms": true},
	}

	// Without the CSRF cookie (another browser) the same submission is refused.
	stranger := &http.Client{Timeout: 10 * time.Second}
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, origin+"/.ory/self-service/registration?flow="+reg.ID, bytes.NewReader(b))
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	sr, err := stranger.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = sr.Body.Close()
	if sr.StatusCode == http.StatusOK {
		t.Fatal("registration without the CSRF cookie was accepted")
	}

	resp = do(http.MethodPost, "/.ory/self-service/registration?flow="+reg.ID, body, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("browser registration: status %d\n%s", resp.StatusCode, k.Log())
	}
	var session *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "exhub_session" {
			session = c
		}
	}
	if session == nil {
		t.Fatalf("no exhub_session cookie; got %v", resp.Cookies())
	}
	if !session.HttpOnly || session.Path != "/" || session.SameSite != http.SameSiteLaxMode {
		t.Errorf("session cookie HttpOnly=%v Path=%q SameSite=%v, want true / Lax", session.HttpOnly, session.Path, session.SameSite)
	}
	// A browser-session cookie: no Expires, no Max-Age (the BFF adds Max-Age
	// for "stay logged in for 5 days"); the session itself lasts 120h.
	if !session.Expires.IsZero() || session.MaxAge != 0 {
		t.Errorf("session cookie Expires=%v MaxAge=%d, want a browser-session cookie", session.Expires, session.MaxAge)
	}

	// The cookie alone identifies the user on whoami, through the edge.
	var me struct {
		Active   bool `json:"active"`
		Identity struct {
			Traits map[string]any `json:"traits"`
		} `json:"identity"`
	}
	if resp := do(http.MethodGet, "/.ory/sessions/whoami", nil, &me); resp.StatusCode != http.StatusOK || !me.Active || me.Identity.Traits["email"] != email {
		t.Fatalf("whoami with the cookie: status %d, %+v", resp.StatusCode, me)
	}
	if got := resp.Header.Get("X-Frame-Options"); got != "DENY" {
		t.Errorf("edge security header missing on /.ory: X-Frame-Options %q", got)
	}

	// Browser logout: a logout URL with a token, then the cookie is dead.
	var logout struct {
		Token string `json:"logout_token"`
	}
	if resp := do(http.MethodGet, "/.ory/self-service/logout/browser", nil, &logout); resp.StatusCode != http.StatusOK || logout.Token == "" {
		t.Fatalf("create logout: status %d", resp.StatusCode)
	}
	if resp := do(http.MethodGet, "/.ory/self-service/logout?token="+logout.Token, nil, nil); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("logout: status %d, want 204", resp.StatusCode)
	}
	if resp := do(http.MethodGet, "/.ory/sessions/whoami", nil, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("whoami after logout: status %d, want 401", resp.StatusCode)
	}
}
