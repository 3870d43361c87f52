package edge_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// seen is one request as an upstream received it.
type seen struct {
	method, uri, body                            string
	cookie, auth, xff, realIP, forwarded, xfHost string
	// otherIP: the other client-address headers some servers (Kratos among them) trust before X-Real-IP.
	otherIP string
}

// recorder is a stub upstream that keeps every request it gets and answers with answer.
type recorder struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []seen
}

func newRecorder(t *testing.T, answer func(w http.ResponseWriter, r *http.Request, s seen, n int)) *recorder {
	rec := &recorder{}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s := seen{
			method: r.Method, uri: r.URL.RequestURI(), body: string(b),
			cookie: r.Header.Get("Cookie"), auth: r.Header.Get("Authorization"),
			xff: strings.Join(r.Header.Values("X-Forwarded-For"), ","), realIP: r.Header.Get("X-Real-IP"),
			forwarded: r.Header.Get("Forwarded"), xfHost: r.Header.Get("X-Forwarded-Host"),
			otherIP: r.Header.Get("True-Client-IP") + r.Header.Get("CF-Connecting-IP") + r.Header.Get("Fastly-Client-IP") +
				r.Header.Get("X-Client-IP") + r.Header.Get("X-Original-Forwarded-For"),
		}
		rec.mu.Lock()
		rec.got = append(rec.got, s)
		n := len(rec.got)
		rec.mu.Unlock()
		answer(w, r, s, n)
	}))
	t.Cleanup(rec.srv.Close)
	return rec
}

func (rec *recorder) addr() string { return strings.TrimPrefix(rec.srv.URL, "http://") }

// requests returns what reached the stub, in order.
func (rec *recorder) requests() []seen {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]seen(nil), rec.got...)
}

// last returns the latest request, failing when there is none.
func (rec *recorder) last(t *testing.T) seen {
	t.Helper()
	got := rec.requests()
	if len(got) == 0 {
		t.Fatal("the upstream got no request")
	}
	return got[len(got)-1]
}

// do sends one request through the edge; headers are name/value pairs.
func (e *edge) do(t *testing.T, method, path, body string, headers ...string) reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	resp, err := rawClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s %s: %v", method, path, err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// spoofed are forwarding headers a client might send to pose as another address; no upstream may see them.
var spoofed = []string{"X-Forwarded-For", "203.0.113.9", "X-Real-IP", "203.0.113.9", "Forwarded", "for=203.0.113.9",
	"True-Client-IP", "203.0.113.9", "CF-Connecting-IP", "203.0.113.9", "Fastly-Client-IP", "203.0.113.9",
	"X-Client-IP", "203.0.113.9", "X-Original-Forwarded-For", "203.0.113.9"}

// checkClientAddress: the upstream learnt the client's address as the edge saw it (the test client is 127.0.0.1),
// not what the client claimed.
func checkClientAddress(t *testing.T, what string, s seen) {
	t.Helper()
	if s.xff != "127.0.0.1" || s.realIP != "127.0.0.1" || s.forwarded != "" || s.otherIP != "" {
		t.Errorf("%s: upstream saw X-Forwarded-For %q, X-Real-IP %q, Forwarded %q, other address headers %q; "+
			"want 127.0.0.1, 127.0.0.1 and none", what, s.xff, s.realIP, s.forwarded, s.otherIP)
	}
}

// newSignedInBFF is a stub BFF: /api/v1/me answers per cookie (labelled cacheable on purpose: the edge must not store
// it anyway), the public market routes answer the same to everybody, and POST /.ory/self-service/* stands for the
// BFF's self-service gate (it sets a session cookie as Kratos would through it).
func newSignedInBFF(t *testing.T) *recorder {
	return newRecorder(t, func(w http.ResponseWriter, r *http.Request, s seen, n int) {
		switch {
		case r.URL.Path == "/api/v1/me":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "public, max-age=30")
			if s.cookie == "" && s.auth == "" {
				w.WriteHeader(http.StatusUnauthorized)
			}
			fmt.Fprintf(w, `{"me":%q,"auth":%q,"served":%d}`, s.cookie, s.auth, n)
		case r.URL.Path == "/api/v1/tickers" || strings.HasPrefix(r.URL.Path, "/api/v1/analytics/"):
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "public, max-age=30")
			fmt.Fprintf(w, `{"path":%q,"cookie":%q,"auth":%q,"served":%d,"pad":%q}`, r.URL.Path, s.cookie, s.auth, n,
				strings.Repeat("0123456789", 200))
		case strings.HasPrefix(r.URL.Path, "/.ory/self-service/"):
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Set-Cookie", "exhub_session=new-session; Path=/; HttpOnly; SameSite=Lax")
			w.WriteHeader(http.StatusUnprocessableEntity)
			fmt.Fprintf(w, `{"gate":%q}`, s.uri)
		default:
			w.Header().Set("Cache-Control", "public, max-age=30")
			fmt.Fprintf(w, `{"bff":%q,"served":%d}`, s.uri, n)
		}
	})
}

// newSignedInKratos is a stub Kratos public API whose answers claim to be cacheable (the edge must not cache them).
func newSignedInKratos(t *testing.T) *recorder {
	return newRecorder(t, func(w http.ResponseWriter, r *http.Request, s seen, n int) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=30")
		fmt.Fprintf(w, `{"kratos":%q,"method":%q,"cookie":%q,"served":%d}`, s.uri, s.method, s.cookie, n)
	})
}

// TestEdgeSignedIn covers the signed-in half with both cache stores: public market answers are shared by every
// client with credentials removed, a private route is never stored nor served to anybody else (the stub answers
// differently per cookie), /.ory is never cached, self-service submissions reach the BFF's gate intact, and every
// upstream sees the client's address as the edge saw it.
func TestEdgeSignedIn(t *testing.T) {
	for _, store := range []string{"memory", "valkey"} {
		t.Run(store, func(t *testing.T) {
			valkey := ""
			if store == "valkey" {
				valkey = startValkey(t)
			}
			bff, kratos := newSignedInBFF(t), newSignedInKratos(t)
			e := startEdge(t, writeUI(t), bff.addr(), kratos.addr(), valkey)
			checkSignedIn(t, e, bff, kratos, valkey)
		})
	}
}

func checkSignedIn(t *testing.T, e *edge, bff, kratos *recorder, valkey string) {
	t.Run("a private route is never stored or served to another client", func(t *testing.T) {
		clients := [][]string{
			{"Cookie", "exhub_session=user-a"},
			{"Cookie", "exhub_session=user-b"},
			{"Cookie", "exhub_session=user-a"},
			{"Authorization", "Bearer user-c"},
			{},
			{"Cookie", "exhub_session=user-b"},
		}
		before := len(bff.requests())
		for i, h := range clients {
			r := e.get(t, "/api/v1/me", h...)
			if isHit(r) {
				t.Fatalf("%v: answered from the cache (%s)", h, r.header.Get("Cache-Status"))
			}
			want := fmt.Sprintf(`"served":%d}`, before+i+1)
			if !strings.HasSuffix(r.body, want) {
				t.Fatalf("%v: %q did not come fresh from the BFF (want %s)", h, r.body, want)
			}
			switch {
			case len(h) == 0:
				if r.status != http.StatusUnauthorized || !strings.Contains(r.body, `"me":"","auth":""`) {
					t.Fatalf("anonymous: %d %q", r.status, r.body)
				}
			case h[0] == "Cookie":
				if !strings.Contains(r.body, fmt.Sprintf(`"me":%q`, h[1])) {
					t.Fatalf("%v got someone else's answer: %q", h, r.body)
				}
			default:
				if !strings.Contains(r.body, fmt.Sprintf(`"auth":%q`, h[1])) {
					t.Fatalf("%v got someone else's answer: %q", h, r.body)
				}
			}
			assertSecurityHeaders(t, "GET /api/v1/me", r.header)
		}
		if valkey != "" {
			keys, err := valkeyKeys(valkey)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(keys, "/api/v1/me") {
				t.Fatalf("a private answer was stored in Valkey:\n%s", keys)
			}
		}
	})

	t.Run("public market answers are shared, per Accept-Encoding, whatever the credentials", func(t *testing.T) {
		const path = "/api/v1/analytics/open-interest?exchange=binance&symbol=BTCUSDT"
		for _, c := range []struct{ accept, encoding string }{{"gzip", "gzip"}, {"zstd", "zstd"}, {"", ""}} {
			// A signed-in user warms this encoding's entry; the BFF gets no credentials.
			first := e.get(t, path, "Accept-Encoding", c.accept, "Cookie", "exhub_session=user-a",
				"Authorization", "Bearer user-a")
			plain := decode(t, first.header.Get("Content-Encoding"), first.body)
			if first.header.Get("Content-Encoding") != c.encoding || !strings.Contains(plain, `"cookie":"","auth":""`) {
				t.Fatalf("Accept-Encoding %q: Content-Encoding %q, BFF saw %.80q", c.accept,
					first.header.Get("Content-Encoding"), plain)
			}
			if !strings.Contains(first.header.Get("Vary"), "Accept-Encoding") {
				t.Errorf("Accept-Encoding %q: Vary %q", c.accept, first.header.Get("Vary"))
			}
			hit := hitWith(t, e, path, c.accept)
			for _, h := range [][]string{{"Cookie", "exhub_session=user-b"}, {"Authorization", "Bearer user-c"}} {
				r := e.get(t, path, append([]string{"Accept-Encoding", c.accept}, h...)...)
				if !isHit(r) || r.body != hit.body || r.header.Get("Content-Encoding") != c.encoding {
					t.Fatalf("Accept-Encoding %q, %v: not the stored %q answer (%s)", c.accept, h, c.encoding,
						r.header.Get("Cache-Status"))
				}
				if !strings.Contains(r.header.Get("Vary"), "Accept-Encoding") {
					t.Errorf("Accept-Encoding %q, %v: Vary %q", c.accept, h, r.header.Get("Vary"))
				}
				assertSecurityHeaders(t, "cached public answer", r.header)
			}
		}
		for _, s := range bff.requests() {
			if strings.HasPrefix(s.uri, "/api/v1/analytics/") && (s.cookie != "" || s.auth != "") {
				t.Fatalf("the BFF got credentials on a public route: %+v", s)
			}
		}
		if valkey != "" {
			keys, err := valkeyKeys(valkey)
			if err != nil {
				t.Fatal(err)
			}
			for _, enc := range []string{"gzip", "zstd", ""} {
				if !strings.Contains(keys, "{-VARY-}Accept-Encoding:"+enc+"\n") {
					t.Errorf("no Valkey entry for Accept-Encoding %q in:\n%s", enc, keys)
				}
			}
		}
	})

	t.Run("other methods on public paths reach the BFF with their credentials", func(t *testing.T) {
		r := e.do(t, http.MethodPost, "/api/v1/tickers", `{}`, "Cookie", "exhub_session=user-a")
		s := bff.last(t)
		if s.method != http.MethodPost || s.uri != "/api/v1/tickers" || s.cookie != "exhub_session=user-a" || isHit(r) {
			t.Fatalf("POST /api/v1/tickers: BFF saw %+v (%s)", s, r.header.Get("Cache-Status"))
		}
	})

	t.Run("identity answers are never cached", func(t *testing.T) {
		before := len(kratos.requests())
		for i := range 3 {
			r := e.get(t, "/.ory/sessions/whoami", "Cookie", "exhub_session=user-a")
			if isHit(r) || !strings.Contains(r.body, fmt.Sprintf(`"served":%d`, before+i+1)) {
				t.Fatalf("whoami answered from the cache: %q (%s)", r.body, r.header.Get("Cache-Status"))
			}
			if s := kratos.last(t); s.cookie != "exhub_session=user-a" || s.uri != "/sessions/whoami" {
				t.Fatalf("Kratos saw %+v", s)
			}
		}
	})

	t.Run("self-service submissions go to the BFF with path and query intact", func(t *testing.T) {
		kratosBefore := len(kratos.requests())
		for _, path := range []string{
			"/.ory/self-service/login?flow=0f6e5ab1-8d2c-4f3e-9a7b-1c2d3e4f5a6b",
			"/.ory/self-service/registration?flow=abc&return_to=%2Fdashboard",
			"/.ory/self-service/recovery?flow=r1&token=t%2Bk",
			"/.ory/self-service/verification",
			"/.ory/self-service/settings?flow=s1",
		} {
			body := "csrf_token=tok&identifier=a%40example.com&password=Secret%401a&method=password"
			h := append([]string{"Content-Type", "application/x-www-form-urlencoded",
				"Cookie", "csrf_token_x=tok; exhub_session=old"}, spoofed...)
			r := e.do(t, http.MethodPost, path, body, h...)
			if r.status != http.StatusUnprocessableEntity || r.body != fmt.Sprintf(`{"gate":%q}`, path) {
				t.Fatalf("POST %s: %d %q", path, r.status, r.body)
			}
			if sc := r.header.Get("Set-Cookie"); !strings.HasPrefix(sc, "exhub_session=new-session") {
				t.Errorf("POST %s: the gate's Set-Cookie did not reach the browser: %q", path, sc)
			}
			assertSecurityHeaders(t, "POST "+path, r.header)
			s := bff.last(t)
			if s.method != http.MethodPost || s.uri != path || s.body != body || s.cookie != "csrf_token_x=tok; exhub_session=old" {
				t.Fatalf("POST %s: the BFF saw %+v", path, s)
			}
			checkClientAddress(t, "POST "+path, s)
			if s.xfHost != strings.TrimPrefix(e.base, "http://") {
				t.Errorf("POST %s: X-Forwarded-Host %q", path, s.xfHost)
			}
		}
		// Spellings of the same path (the edge matches the cleaned, case-folded path) go to the gate too, never to
		// Kratos around it. Sent raw: a client library would clean some of them itself.
		host := strings.TrimPrefix(e.base, "http://")
		for _, path := range []string{
			"/.ory/x/../self-service/login", "/.ory//self-service/login", "/.ORY/Self-Service/login",
			"/.ory/%73elf-service/login", "/.ory/./self-service/registration", "//.ory/self-service/recovery",
		} {
			c, err := net.DialTimeout("tcp", host, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"+
				"Connection: close\r\n\r\n{}", path, host)
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				c.Close()
				t.Fatalf("POST %s: %v", path, err)
			}
			resp.Body.Close()
			c.Close()
			if s := bff.last(t); s.method != http.MethodPost || s.uri != path {
				t.Fatalf("POST %s: the BFF's last request is %+v", path, s)
			}
		}
		if n := len(kratos.requests()); n != kratosBefore {
			t.Fatalf("self-service submissions reached Kratos directly (%d requests)", n-kratosBefore)
		}
	})

	t.Run("a settings submission and the logout by GET go to the BFF's gate, never to Kratos", func(t *testing.T) {
		kratosBefore := len(kratos.requests())
		for _, path := range []string{
			"/.ory/self-service/settings?flow=s1&method=password&password=x",
			"/.ORY/self-service/Settings?flow=s1&method=password&password=x",
			"/.ory/self-service/logout?token=t1&return_to=%2Flogin",
		} {
			e.do(t, http.MethodGet, path, "", "Cookie", "exhub_session=user-a")
			s := bff.last(t)
			if s.method != http.MethodGet || !strings.EqualFold(strings.SplitN(s.uri, "?", 2)[0], strings.SplitN(path, "?", 2)[0]) || s.cookie != "exhub_session=user-a" {
				t.Fatalf("GET %s: the BFF saw %+v", path, s)
			}
		}
		if n := len(kratos.requests()); n != kratosBefore {
			t.Fatalf("a GET submission reached Kratos directly (%d requests)", n-kratosBefore)
		}
	})

	t.Run("every other identity request goes to Kratos, prefix stripped", func(t *testing.T) {
		bffBefore := len(bff.requests())
		for _, c := range []struct{ method, path, want string }{
			{http.MethodGet, "/.ory/self-service/login/browser?refresh=true&return_to=%2Fotp", "/self-service/login/browser?refresh=true&return_to=%2Fotp"},
			{http.MethodGet, "/.ory/self-service/login?flow=abc", "/self-service/login?flow=abc"},
			{http.MethodGet, "/.ory/self-service/logout/browser", "/self-service/logout/browser"},
			{http.MethodDelete, "/.ory/sessions", "/sessions"},
			{http.MethodPost, "/.ory/sessions/token-exchange", "/sessions/token-exchange"},
		} {
			r := e.do(t, c.method, c.path, "", append([]string{"Cookie", "exhub_session=user-a"}, spoofed...)...)
			s := kratos.last(t)
			if r.status != http.StatusOK || s.method != c.method || s.uri != c.want || s.cookie != "exhub_session=user-a" {
				t.Fatalf("%s %s: %d, Kratos saw %+v", c.method, c.path, r.status, s)
			}
			checkClientAddress(t, c.method+" "+c.path, s)
			assertSecurityHeaders(t, c.method+" "+c.path, r.header)
		}
		if n := len(bff.requests()); n != bffBefore {
			t.Fatalf("%d identity requests reached the BFF", n-bffBefore)
		}
	})

	t.Run("the BFF never sees a client-sent address", func(t *testing.T) {
		for _, path := range []string{"/api/v1/me", "/api/v1/orders?x=1"} {
			e.get(t, path, append([]string{"Cookie", "exhub_session=user-a"}, spoofed...)...)
			checkClientAddress(t, "GET "+path, bff.last(t))
		}
		// A public market miss too (a fresh query string, so the BFF is asked).
		e.get(t, "/api/v1/tickers?probe=address", spoofed...)
		checkClientAddress(t, "GET /api/v1/tickers", bff.last(t))
	})
}

// newMailpit is a stub of Mailpit's API; its answers claim to be cacheable and set a cookie, which the edge must
// neither cache nor pass on.
func newMailpit(t *testing.T) *recorder {
	return newRecorder(t, func(w http.ResponseWriter, r *http.Request, s seen, n int) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=60")
		w.Header().Set("Expires", "Thu, 01 Jan 2099 00:00:00 GMT")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; connect-src 'self' ws: wss:")
		w.Header().Set("Set-Cookie", "mailpit=1; Path=/")
		fmt.Fprintf(w, `{"mailpit":%q,"method":%q,"served":%d}`, s.uri, s.method, n)
	})
}

// TestEdgeDemoInbox: with EXHUB_DEMO_INBOX=on, /demo/inbox/api/* reaches Mailpit's /api/* (GET and DELETE only,
// never cached, no cookies either way); with the default (off) it is a 404 and Mailpit is never asked. The inbox
// page itself is the UI's, in both cases.
func TestEdgeDemoInbox(t *testing.T) {
	t.Run("on", func(t *testing.T) {
		mailpit := newMailpit(t)
		bff, kratos := newSignedInBFF(t), newSignedInKratos(t)
		e := startEdge(t, writeUI(t), bff.addr(), kratos.addr(), "",
			"EXHUB_DEMO_INBOX=on", "EXHUB_MAILPIT_ADDR="+mailpit.addr())

		for i := range 3 {
			r := e.get(t, "/demo/inbox/api/v1/messages?limit=50&start=0", append([]string{
				"Cookie", "exhub_session=user-a", "Authorization", "Bearer user-a"}, spoofed...)...)
			want := fmt.Sprintf(`{"mailpit":"/api/v1/messages?limit=50&start=0","method":"GET","served":%d}`, i+1)
			if r.status != http.StatusOK || r.body != want {
				t.Fatalf("GET %d: %d %q, want %q", i, r.status, r.body, want)
			}
			if cc := r.header.Values("Cache-Control"); len(cc) != 1 || cc[0] != "no-store" || r.header.Get("Expires") != "" {
				t.Errorf("Cache-Control %q, Expires %q; want only no-store", cc, r.header.Get("Expires"))
			}
			if csp := r.header.Values("Content-Security-Policy"); len(csp) != 1 || strings.Contains(csp[0], "ws:") {
				t.Errorf("Content-Security-Policy %q, want the edge's only", csp)
			}
			if r.header.Get("Set-Cookie") != "" || r.header.Get("Cache-Status") != "" {
				t.Errorf("Set-Cookie %q, Cache-Status %q", r.header.Get("Set-Cookie"), r.header.Get("Cache-Status"))
			}
			assertSecurityHeaders(t, "demo inbox GET", r.header)
			s := mailpit.last(t)
			if s.cookie != "" || s.auth != "" {
				t.Fatalf("Mailpit got the user's credentials: %+v", s)
			}
			checkClientAddress(t, "demo inbox GET", s)
		}
		r := e.get(t, "/demo/inbox/api/v1/message/AbC123", "Accept-Encoding", "gzip")
		if r.status != http.StatusOK || !strings.Contains(decode(t, r.header.Get("Content-Encoding"), r.body),
			`"mailpit":"/api/v1/message/AbC123"`) {
			t.Fatalf("GET one message: %d %q", r.status, r.body)
		}

		d := e.do(t, http.MethodDelete, "/demo/inbox/api/v1/messages", `{"IDs":["AbC123"]}`)
		if s := mailpit.last(t); d.status != http.StatusOK || s.method != http.MethodDelete ||
			s.uri != "/api/v1/messages" || s.body != `{"IDs":["AbC123"]}` {
			t.Fatalf("DELETE: %d, Mailpit saw %+v", d.status, s)
		}

		before := len(mailpit.requests())
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodHead} {
			r := e.do(t, m, "/demo/inbox/api/v1/send", `{"To":[{"Email":"x@example.com"}]}`)
			if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "GET, DELETE" {
				t.Fatalf("%s: %d Allow %q", m, r.status, r.header.Get("Allow"))
			}
			assertSecurityHeaders(t, m+" demo inbox", r.header)
		}
		if n := len(mailpit.requests()); n != before {
			t.Fatalf("%d refused requests reached Mailpit", n-before)
		}

		page := e.get(t, "/demo/inbox")
		if page.status != http.StatusOK || page.body != indexHTML {
			t.Fatalf("the inbox page is not the UI's: %d %.60q", page.status, page.body)
		}
		// The page reads the inbox same-origin: the UI's CSP stays connect-src 'self'.
		if csp := page.header.Get("Content-Security-Policy"); !strings.Contains(csp, "; connect-src 'self';") {
			t.Fatalf("UI CSP %q lacks connect-src 'self' alone", csp)
		}
		assertSecurityHeaders(t, "GET /demo/inbox", page.header)
	})

	t.Run("off", func(t *testing.T) {
		mailpit := newMailpit(t)
		bff, kratos := newSignedInBFF(t), newSignedInKratos(t)
		// Off is the default: the address is set but unused.
		e := startEdge(t, writeUI(t), bff.addr(), kratos.addr(), "", "EXHUB_MAILPIT_ADDR="+mailpit.addr())
		for _, m := range []string{http.MethodGet, http.MethodDelete, http.MethodPost} {
			r := e.do(t, m, "/demo/inbox/api/v1/messages", "")
			if r.status != http.StatusNotFound || strings.Contains(r.body, "<html") {
				t.Fatalf("%s: %d %.60q", m, r.status, r.body)
			}
			if cc := r.header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("%s: Cache-Control %q", m, cc)
			}
			assertSecurityHeaders(t, m+" demo inbox (off)", r.header)
		}
		if n := len(mailpit.requests()); n != 0 {
			t.Fatalf("Mailpit was asked %d times with the inbox off", n)
		}
		if n := len(bff.requests()); n != 0 {
			t.Fatalf("the BFF was asked %d times", n)
		}
		if r := e.get(t, "/demo/inbox"); r.status != http.StatusOK || r.body != indexHTML {
			t.Fatalf("the inbox page is not the UI's: %d %.60q", r.status, r.body)
		}
	})

	t.Run("a bad switch stops the edge", func(t *testing.T) {
		for _, env := range [][]string{
			{"EXHUB_DEMO_INBOX=yes"},
			{"EXHUB_DEMO_INBOX=on", "EXHUB_MAILPIT_ADDR=8025"},
		} {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			caddyfile, err := filepath.Abs("Caddyfile")
			if err != nil {
				t.Fatal(err)
			}
			home := t.TempDir()
			cmd := exec.CommandContext(ctx, edgeBin, "run", "--config", caddyfile, "--adapter", "caddyfile")
			cmd.Dir = home
			cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "XDG_DATA_HOME="+home,
				fmt.Sprintf("EXHUB_EDGE_ADDR=127.0.0.1:%d", freePort(t)), "EXHUB_UI_DIR="+home, "EXHUB_MAILPIT_ADDR=")
			cmd.Env = append(cmd.Env, env...)
			out, err := cmd.CombinedOutput()
			timedOut := ctx.Err() != nil
			cancel()
			name, _, _ := strings.Cut(env[len(env)-1], "=")
			if err == nil || timedOut || !strings.Contains(string(out), name) {
				t.Fatalf("%v: err %v, output %q; want an exit naming %s", env, err, out, name)
			}
		}
	})
}
