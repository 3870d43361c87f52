package edge_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// edgeBin is the binary under test: $EXHUB_EDGE_BIN, or a fresh build of
// ./cmd/edge made once by TestMain (cheap when the Go build cache is warm).
var edgeBin string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if bin := os.Getenv("EXHUB_EDGE_BIN"); bin != "" {
		edgeBin = bin
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "exhub-edge-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	edgeBin = filepath.Join(dir, "exhub-edge")
	build := exec.Command("go", "build", "-o", edgeBin, "./cmd/edge")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	start := time.Now()
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "build exhub-edge: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "built exhub-edge in %s\n", time.Since(start).Round(time.Millisecond))
	return m.Run()
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}

// proc is a child process stopped by its PID when the test ends.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
	log  *bytes.Buffer
	mu   *sync.Mutex
}

type lockedWriter struct {
	mu  *sync.Mutex
	buf *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func startProc(t *testing.T, dir string, env []string, name string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(name, args...), done: make(chan struct{}), log: &bytes.Buffer{}, mu: &sync.Mutex{}}
	p.cmd.Dir = dir
	p.cmd.Env = env
	w := lockedWriter{mu: p.mu, buf: p.log}
	p.cmd.Stdout, p.cmd.Stderr = w, w
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
			return
		default:
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// startValkey runs a throw-away Valkey (or Redis) server on a free port.
func startValkey(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("valkey-server")
	if err != nil {
		if bin, err = exec.LookPath("redis-server"); err != nil {
			t.Fatal("valkey-server not found: install it with `apt-get install valkey-server` (bookworm-backports) or run `make deps`")
		}
	}
	port := freePort(t)
	dir := t.TempDir()
	p := startProc(t, dir, os.Environ(), bin,
		"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--save", "", "--appendonly", "no", "--dir", dir)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if reply, err := valkeyCmd(addr, "PING"); err == nil && reply == "+PONG" {
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("valkey on %s not ready:\n%s", addr, p.output())
		}
		select {
		case <-p.done:
			t.Fatalf("valkey exited:\n%s", p.output())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// valkeyCmd sends one inline command and returns the first reply line.
func valkeyCmd(addr, cmd string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(c, cmd+"\r\n"); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimRight(line, "\r\n"), err
}

// upstream is a fake BFF or Kratos that records what reached it.
type upstream struct {
	srv   *httptest.Server
	mu    sync.Mutex
	paths []string
	hits  map[string]*atomic.Int64
}

func (u *upstream) hit(path string) int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.paths = append(u.paths, path)
	c, ok := u.hits[path]
	if !ok {
		c = &atomic.Int64{}
		u.hits[path] = c
	}
	return c.Add(1)
}

func (u *upstream) count(path string) int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	if c, ok := u.hits[path]; ok {
		return c.Load()
	}
	return 0
}

func (u *upstream) addr() string { return strings.TrimPrefix(u.srv.URL, "http://") }

var bigBody = strings.Repeat(`{"symbol":"BTCUSDT","price":"64250.10","qty":"0.015"},`, 400)

func newBFF(t *testing.T) *upstream {
	u := &upstream{hits: map[string]*atomic.Int64{}}
	mux := http.NewServeMux()
	// Public market data, cacheable by shared caches.
	public := func(w http.ResponseWriter, r *http.Request) {
		n := u.hit(r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=30")
		w.Header().Set("Set-Cookie", "tracker=1; Path=/")
		fmt.Fprintf(w, `{"path":%q,"query":%q,"served":%d,"cookie":%q}`, r.URL.Path, r.URL.RawQuery, n, r.Header.Get("Cookie"))
	}
	mux.HandleFunc("/api/v1/tickers", public)
	mux.HandleFunc("/api/v1/exchanges", public)
	mux.HandleFunc("/api/v1/candles", public)
	mux.HandleFunc("/api/v1/instruments", public)
	// Same headers but not a market route: the edge must not cache it.
	mux.HandleFunc("/api/v1/account/summary", public)
	// A market route whose answer is private.
	mux.HandleFunc("/api/v1/movers", func(w http.ResponseWriter, r *http.Request) {
		n := u.hit(r.URL.Path)
		w.Header().Set("Cache-Control", "private, no-store")
		fmt.Fprintf(w, `{"served":%d}`, n)
	})
	// A market route with no Cache-Control at all.
	mux.HandleFunc("/api/v1/trades", func(w http.ResponseWriter, r *http.Request) {
		n := u.hit(r.URL.Path)
		fmt.Fprintf(w, `{"served":%d}`, n)
	})
	mux.HandleFunc("/api/v1/big", func(w http.ResponseWriter, r *http.Request) {
		u.hit(r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "private, no-store")
		io.WriteString(w, bigBody)
	})
	mux.HandleFunc("/api/v1/echo", func(w http.ResponseWriter, r *http.Request) {
		u.hit(r.URL.Path)
		w.Header().Set("X-Upstream", "bff")
		fmt.Fprintf(w, "%s %s?%s xff=%s", r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("X-Forwarded-For"))
	})
	// A WebSocket-style upgrade: answer 101, then echo bytes in upper case.
	mux.HandleFunc("/api/v1/stream", func(w http.ResponseWriter, r *http.Request) {
		u.hit(r.URL.Path)
		if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			http.Error(w, "upgrade required", http.StatusUpgradeRequired)
			return
		}
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		fmt.Fprint(rw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		if err := rw.Flush(); err != nil {
			return
		}
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		line, err := rw.ReadString('\n')
		if err != nil {
			return
		}
		fmt.Fprint(rw, strings.ToUpper(line))
		_ = rw.Flush()
	})
	u.srv = httptest.NewServer(mux)
	t.Cleanup(u.srv.Close)
	return u
}

func newKratos(t *testing.T) *upstream {
	u := &upstream{hits: map[string]*atomic.Int64{}}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hit(r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"kratos_saw":%q,"host":%q}`, r.URL.Path, r.Host)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

const indexHTML = `<!DOCTYPE html><html><head><script>document.documentElement.dataset.theme="dark";</script>` +
	`<script type="module" src="/assets/app-3f9a1c.js"></script></head><body><div id="root"></div>` +
	`<script>window.__boot = {"ssr":false};</script></body></html>`

const appJS = `console.log("exhub ui");` + "\n"

func writeUI(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "assets"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"index.html":           indexHTML,
		"assets/app-3f9a1c.js": appJS,
		"favicon.svg":          `<svg xmlns="http://www.w3.org/2000/svg"/>`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type edge struct {
	base string
	proc *proc
}

// startEdge runs the edge with the repository's Caddyfile: with the Valkey
// cache store at valkey, or with the default in-memory store when valkey is
// empty. extraEnv is appended last.
func startEdge(t *testing.T, uiDir, bff, kratos, valkey string, extraEnv ...string) *edge {
	t.Helper()
	store := []string{"EXHUB_EDGE_CACHE=", "EXHUB_VALKEY_ADDR="}
	if valkey != "" {
		store = []string{"EXHUB_EDGE_CACHE=valkey", "EXHUB_VALKEY_ADDR=" + valkey}
	}
	caddyfile, err := filepath.Abs("Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	home := t.TempDir()
	env := append(os.Environ(),
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_DATA_HOME="+filepath.Join(home, "data"),
		fmt.Sprintf("EXHUB_EDGE_ADDR=127.0.0.1:%d", port),
		"EXHUB_UI_DIR="+uiDir,
		"EXHUB_BFF_ADDR="+bff,
		"EXHUB_KRATOS_PUBLIC_ADDR="+kratos,
		"EXHUB_EDGE_CACHE_ENTRIES=",
		"EXHUB_DEMO_INBOX=",
		"EXHUB_MAILPIT_ADDR=",
	)
	env = append(append(env, store...), extraEnv...)
	p := startProc(t, home, env, edgeBin, "run", "--config", caddyfile, "--adapter", "caddyfile")
	e := &edge{base: fmt.Sprintf("http://127.0.0.1:%d", port), proc: p}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(e.base + "/edge/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return e
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("edge not ready on %s:\n%s", e.base, p.output())
		}
		select {
		case <-p.done:
			t.Fatalf("edge exited:\n%s", p.output())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// rawClient never negotiates compression itself, so Content-Encoding is visible.
var rawClient = &http.Client{
	Timeout:   10 * time.Second,
	Transport: &http.Transport{DisableCompression: true},
}

type reply struct {
	status int
	header http.Header
	body   string
}

func (e *edge) get(t *testing.T, path string, headers ...string) reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := rawClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

func cspHash(script string) string {
	sum := sha256.Sum256([]byte(script))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

func scriptSrc(csp string) string {
	for _, d := range strings.Split(csp, ";") {
		d = strings.TrimSpace(d)
		if strings.HasPrefix(d, "script-src ") {
			return d
		}
	}
	return ""
}

func assertSecurityHeaders(t *testing.T, what string, h http.Header) {
	t.Helper()
	want := map[string]string{
		"X-Content-Type-Options": "nosniff",
		"Referrer-Policy":        "strict-origin-when-cross-origin",
		"X-Frame-Options":        "DENY",
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s: %s = %q, want %q", what, k, got, v)
		}
	}
	if pp := h.Get("Permissions-Policy"); !strings.Contains(pp, "camera=()") || !strings.Contains(pp, "microphone=()") {
		t.Errorf("%s: Permissions-Policy = %q", what, pp)
	}
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("%s: Content-Security-Policy = %q lacks frame-ancestors 'none'", what, csp)
	}
	if s := h.Get("Server"); s != "" {
		t.Errorf("%s: Server header %q leaked", what, s)
	}
}

func TestEdge(t *testing.T) {
	valkey := startValkey(t)
	bff, kratos := newBFF(t), newKratos(t)
	e := startEdge(t, writeUI(t), bff.addr(), kratos.addr(), valkey)

	t.Run("SPA fallback serves index.html for client routes", func(t *testing.T) {
		for _, path := range []string{"/", "/futures/binance/BTCUSDT", "/spot/okx/BTC-USDT", "/login"} {
			r := e.get(t, path)
			if r.status != http.StatusOK || r.body != indexHTML {
				t.Fatalf("GET %s: status %d, body %.80q", path, r.status, r.body)
			}
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
				t.Errorf("GET %s: Content-Type %q", path, ct)
			}
			if cc := r.header.Get("Cache-Control"); cc != "no-cache" {
				t.Errorf("GET %s: Cache-Control %q, want no-cache", path, cc)
			}
			assertSecurityHeaders(t, "GET "+path, r.header)
		}
	})

	t.Run("CSP allows exactly the shell's inline scripts", func(t *testing.T) {
		r := e.get(t, "/futures/okx/BTC-USDT-SWAP")
		src := scriptSrc(r.header.Get("Content-Security-Policy"))
		for _, s := range []string{`document.documentElement.dataset.theme="dark";`, `window.__boot = {"ssr":false};`} {
			if !strings.Contains(src, cspHash(s)) {
				t.Errorf("script-src %q lacks the hash of %q", src, s)
			}
		}
		if strings.Contains(src, "unsafe-inline") || strings.Contains(src, "unsafe-eval") {
			t.Errorf("script-src too loose: %q", src)
		}
		if got := strings.Count(src, "'sha256-"); got != 2 {
			t.Errorf("script-src has %d hashes, want 2 (external scripts need none): %q", got, src)
		}
	})

	t.Run("hashed assets are immutable, missing ones 404", func(t *testing.T) {
		r := e.get(t, "/assets/app-3f9a1c.js")
		if r.status != http.StatusOK || r.body != appJS {
			t.Fatalf("asset: status %d body %q", r.status, r.body)
		}
		if ct := r.header.Get("Content-Type"); !strings.Contains(ct, "javascript") {
			t.Errorf("asset Content-Type %q", ct)
		}
		if cc := r.header.Get("Cache-Control"); !strings.Contains(cc, "immutable") || !strings.Contains(cc, "max-age=31536000") {
			t.Errorf("asset Cache-Control %q", cc)
		}
		miss := e.get(t, "/assets/app-0000.js")
		if miss.status != http.StatusNotFound || strings.Contains(miss.body, "<html") {
			t.Errorf("missing asset: status %d body %.60q", miss.status, miss.body)
		}
		if cc := miss.header.Get("Cache-Control"); strings.Contains(cc, "immutable") {
			t.Errorf("missing asset cached as immutable: %q", cc)
		}
		fav := e.get(t, "/favicon.svg")
		if fav.status != http.StatusOK || !strings.Contains(fav.body, "<svg") || fav.header.Get("Cache-Control") != "public, max-age=3600" {
			t.Errorf("favicon: status %d cache %q", fav.status, fav.header.Get("Cache-Control"))
		}
	})

	t.Run("api is proxied to the BFF", func(t *testing.T) {
		r := e.get(t, "/api/v1/echo?exchange=okx&type=SWAP")
		if r.status != http.StatusOK || r.header.Get("X-Upstream") != "bff" {
			t.Fatalf("status %d upstream %q", r.status, r.header.Get("X-Upstream"))
		}
		if !strings.HasPrefix(r.body, "GET /api/v1/echo?exchange=okx&type=SWAP xff=127.0.0.1") {
			t.Fatalf("BFF saw %q", r.body)
		}
		assertSecurityHeaders(t, "api", r.header)
	})

	t.Run("ory prefix is stripped and proxied to Kratos", func(t *testing.T) {
		r := e.get(t, "/.ory/sessions/whoami")
		if r.status != http.StatusOK || !strings.Contains(r.body, `"kratos_saw":"/sessions/whoami"`) {
			t.Fatalf("status %d body %q", r.status, r.body)
		}
		if !strings.Contains(r.body, `"host":"`+strings.TrimPrefix(e.base, "http://")+`"`) {
			t.Errorf("Kratos did not see the browser's Host: %q", r.body)
		}
		r = e.get(t, "/.ory/self-service/login/browser")
		if !strings.Contains(r.body, `"kratos_saw":"/self-service/login/browser"`) {
			t.Fatalf("body %q", r.body)
		}
		if bff.count("/.ory/sessions/whoami") != 0 || kratos.count("/.ory/sessions/whoami") != 0 {
			t.Error("the /.ory prefix reached an upstream")
		}
	})

	t.Run("compression", func(t *testing.T) {
		gz := e.get(t, "/api/v1/big", "Accept-Encoding", "gzip")
		if gz.header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("gzip: Content-Encoding %q", gz.header.Get("Content-Encoding"))
		}
		zr, err := gzip.NewReader(strings.NewReader(gz.body))
		if err != nil {
			t.Fatal(err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil || string(plain) != bigBody {
			t.Fatalf("gzip body does not decode to the original (%v)", err)
		}
		if len(gz.body) >= len(bigBody)/4 {
			t.Errorf("gzip body %d bytes for %d plain", len(gz.body), len(bigBody))
		}

		zs := e.get(t, "/api/v1/big", "Accept-Encoding", "zstd")
		if zs.header.Get("Content-Encoding") != "zstd" {
			t.Fatalf("zstd: Content-Encoding %q", zs.header.Get("Content-Encoding"))
		}
		dec, err := zstd.NewReader(strings.NewReader(zs.body))
		if err != nil {
			t.Fatal(err)
		}
		defer dec.Close()
		plain, err = io.ReadAll(dec)
		if err != nil || string(plain) != bigBody {
			t.Fatalf("zstd body does not decode to the original (%v)", err)
		}

		none := e.get(t, "/api/v1/big")
		if none.header.Get("Content-Encoding") != "" || none.body != bigBody {
			t.Errorf("no Accept-Encoding: got Content-Encoding %q", none.header.Get("Content-Encoding"))
		}
		html := e.get(t, "/", "Accept-Encoding", "gzip")
		if html.header.Get("Content-Encoding") != "" && html.header.Get("Content-Encoding") != "gzip" {
			t.Errorf("index: Content-Encoding %q", html.header.Get("Content-Encoding"))
		}
	})

	t.Run("public market GET is cached in Valkey", func(t *testing.T) {
		before, err := valkeyCmd(valkey, "DBSIZE")
		if err != nil {
			t.Fatal(err)
		}
		first := e.get(t, "/api/v1/tickers?exchange=binance&type=SPOT")
		if first.status != http.StatusOK || !strings.Contains(first.body, `"served":1`) {
			t.Fatalf("first: status %d body %q", first.status, first.body)
		}
		if first.header.Get("Set-Cookie") != "" {
			t.Errorf("public market response kept Set-Cookie %q", first.header.Get("Set-Cookie"))
		}
		second := waitForHit(t, e, "/api/v1/tickers?exchange=binance&type=SPOT")
		if second.body != first.body {
			t.Fatalf("cached body %q differs from %q", second.body, first.body)
		}
		if n := bff.count("/api/v1/tickers"); n != 1 {
			t.Fatalf("BFF served the ticker %d times, want 1", n)
		}
		if cs := second.header.Get("Cache-Status"); !strings.Contains(cs, "detail=REDIS") {
			t.Errorf("hit not from the Valkey store: Cache-Status %q", cs)
		}
		after, err := valkeyCmd(valkey, "DBSIZE")
		if err != nil {
			t.Fatal(err)
		}
		if after == before {
			t.Errorf("Valkey key count unchanged (%s)", after)
		}
		// Another query string is another key.
		other := e.get(t, "/api/v1/tickers?exchange=okx&type=SPOT")
		if !strings.Contains(other.body, `"served":2`) {
			t.Errorf("different query served from cache: %q", other.body)
		}
	})

	t.Run("public market GETs drop Cookie and Authorization and share the anonymous answer", func(t *testing.T) {
		// Warm the cache anonymously.
		anon := e.get(t, "/api/v1/candles?symbol=BTCUSDT")
		waitForHit(t, e, "/api/v1/candles?symbol=BTCUSDT")
		base := bff.count("/api/v1/candles")

		for _, hdr := range [][2]string{
			{"Cookie", "exhub_session=user-a"},
			{"Cookie", "exhub_session=user-b; csrf_token_abc=xyz"},
			{"Authorization", "Bearer user-c"},
		} {
			r := e.get(t, "/api/v1/candles?symbol=BTCUSDT", hdr[0], hdr[1])
			if r.body != anon.body || !isHit(r) {
				t.Fatalf("%s request did not get the cached anonymous answer: %q (%s)", hdr[0], r.body, r.header.Get("Cache-Status"))
			}
		}
		if got := bff.count("/api/v1/candles"); got != base {
			t.Fatalf("requests with credentials reached the BFF (%d more)", got-base)
		}

		// A signed-in user asking first: the BFF never sees the cookie, the
		// answer is the anonymous one and is stored for everybody.
		userA := e.get(t, "/api/v1/exchanges", "Cookie", "exhub_session=user-a")
		if userA.status != http.StatusOK || strings.Contains(userA.body, "user-a") || !strings.Contains(userA.body, `"cookie":""`) {
			t.Fatalf("the BFF saw the session cookie on a public route: %q", userA.body)
		}
		if userA.header.Get("Set-Cookie") != "" {
			t.Errorf("public answer kept Set-Cookie %q", userA.header.Get("Set-Cookie"))
		}
		hit := waitForHit(t, e, "/api/v1/exchanges")
		if hit.body != userA.body {
			t.Fatalf("anonymous hit %q differs from %q", hit.body, userA.body)
		}
		if r := e.get(t, "/api/v1/exchanges", "Cookie", "exhub_session=user-b"); r.body != userA.body || !isHit(r) {
			t.Fatalf("user-b did not get the shared answer: %q (%s)", r.body, r.header.Get("Cache-Status"))
		}
		if n := bff.count("/api/v1/exchanges"); n != 1 {
			t.Fatalf("the BFF answered /api/v1/exchanges %d times, want 1", n)
		}
	})

	t.Run("private and non-market responses are not cached", func(t *testing.T) {
		for _, path := range []string{"/api/v1/movers", "/api/v1/trades", "/api/v1/account/summary"} {
			for i := 0; i < 3; i++ {
				if r := e.get(t, path); isHit(r) {
					t.Fatalf("%s answered from cache: %s", path, r.header.Get("Cache-Status"))
				}
			}
			if n := bff.count(path); n != 3 {
				t.Errorf("%s reached the BFF %d times, want 3", path, n)
			}
		}
	})

	t.Run("websocket upgrade passes through", func(t *testing.T) {
		c, err := net.DialTimeout("tcp", strings.TrimPrefix(e.base, "http://"), 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "GET /api/v1/stream HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAccept-Encoding: gzip\r\n\r\n",
			strings.TrimPrefix(e.base, "http://"))
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("status %d, want 101", resp.StatusCode)
		}
		fmt.Fprint(c, "subscribe book\n")
		line, err := br.ReadString('\n')
		if err != nil || line != "SUBSCRIBE BOOK\n" {
			t.Fatalf("tunnel echo %q (%v)", line, err)
		}
	})
}

// TestEdgeWithoutValkey shows the cache falling back to memory when the
// Valkey address answers nothing: the edge still starts and caches.
func TestEdgeWithoutValkey(t *testing.T) {
	dead := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	bff, kratos := newBFF(t), newKratos(t)
	e := startEdge(t, writeUI(t), bff.addr(), kratos.addr(), dead)

	first := e.get(t, "/api/v1/instruments?exchange=reference")
	second := waitForHit(t, e, "/api/v1/instruments?exchange=reference")
	if second.body != first.body || bff.count("/api/v1/instruments") != 1 {
		t.Fatalf("in-memory fallback did not cache: %q vs %q", first.body, second.body)
	}
	if cs := second.header.Get("Cache-Status"); strings.Contains(cs, "REDIS") {
		t.Errorf("hit claims the Valkey store that is down: %q", cs)
	}
	if r := e.get(t, "/futures/binance/BTCUSDT"); r.status != http.StatusOK || r.body != indexHTML {
		t.Errorf("UI not served without Valkey: %d", r.status)
	}
}

func isHit(r reply) bool {
	for _, part := range strings.Split(r.header.Get("Cache-Status"), ";") {
		if strings.TrimSpace(part) == "hit" {
			return true
		}
	}
	return false
}

// waitForHit repeats a GET until the cache answers it (the store may finish
// writing just after the first response), for at most two seconds.
func waitForHit(t *testing.T, e *edge, path string) reply {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for {
		r := e.get(t, path)
		if isHit(r) {
			return r
		}
		select {
		case <-ctx.Done():
			t.Fatalf("GET %s never hit the cache; last Cache-Status %q\n%s", path, r.header.Get("Cache-Status"), e.proc.output())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
