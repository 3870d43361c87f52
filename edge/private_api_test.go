package edge_test

import (
	"bufio"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// orderSeen is one request to the trading API as the BFF received it.
type orderSeen struct {
	method, uri, body, cookie, idemKey, csrf, host, origin, upgrade string
}

// tradingBFF is a stub of the BFF's trading routes and stream: every answer is built for the session cookie it
// got and says how many requests the BFF has served, marked private, no-store as the BFF marks them.
// /api/v1/stream applies the gateway's Origin rule (an Origin must name the Host the browser used) and upgrades to
// a WebSocket whose first text message names the cookie the upgrade carried.
type tradingBFF struct {
	srv *http.Server
	ln  net.Listener
	mu  sync.Mutex
	got []orderSeen
}

const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

func wsAccept(key string) string {
	h := sha1.Sum([]byte(key + wsGUID))
	return base64.StdEncoding.EncodeToString(h[:])
}

func newTradingBFF(t *testing.T) *tradingBFF {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &tradingBFF{ln: ln}
	b.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(b.serve)}
	go func() { _ = b.srv.Serve(ln) }() // ends when the test closes the server
	t.Cleanup(func() { _ = b.srv.Close() })
	return b
}

func (b *tradingBFF) addr() string { return b.ln.Addr().String() }

func (b *tradingBFF) requests() []orderSeen {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]orderSeen(nil), b.got...)
}

func (b *tradingBFF) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s := orderSeen{method: r.Method, uri: r.URL.RequestURI(), body: string(body), cookie: r.Header.Get("Cookie"),
		idemKey: r.Header.Get("Idempotency-Key"), csrf: r.Header.Get("X-CSRF-Token"), host: r.Host,
		origin: r.Header.Get("Origin"), upgrade: r.Header.Get("Upgrade")}
	b.mu.Lock()
	b.got = append(b.got, s)
	n := len(b.got)
	b.mu.Unlock()
	if r.URL.Path == "/api/v1/stream" {
		b.stream(w, r, s)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "private, no-store")
	w.Header().Set("Vary", "Cookie")
	if r.Method == http.MethodPost {
		w.WriteHeader(http.StatusCreated)
	}
	fmt.Fprintf(w, `{"cookie":%q,"key":%q,"served":%d}`, s.cookie, s.idemKey, n)
}

// stream is the upgrade: 403 for a foreign Origin (the gateway's rule, before any upgrade), else 101 and one text
// frame.
func (b *tradingBFF) stream(w http.ResponseWriter, r *http.Request, s orderSeen) {
	if s.origin != "" && !strings.EqualFold(strings.TrimPrefix(strings.TrimPrefix(s.origin, "http://"), "https://"), s.host) {
		http.Error(w, "origin not allowed", http.StatusForbidden)
		return
	}
	if !strings.EqualFold(s.upgrade, "websocket") || r.Header.Get("Sec-WebSocket-Key") == "" {
		http.Error(w, "not a WebSocket upgrade", http.StatusBadRequest)
		return
	}
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	fmt.Fprintf(rw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
		wsAccept(r.Header.Get("Sec-WebSocket-Key")))
	msg, _ := json.Marshal(map[string]string{"type": "hello", "cookie": s.cookie})
	if len(msg) > 125 {
		msg = msg[:125]
	}
	rw.Write([]byte{0x81, byte(len(msg))}) // FIN + text, unmasked (server to client), short length
	rw.Write(msg)
	_ = rw.Flush()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, _ = rw.Read(make([]byte, 1)) // hold the socket until the client closes it
}

// wsDial opens a WebSocket on the edge by hand (no client library in this module): it returns the answer's status
// line and headers and, after a 101, the first text message.
func wsDial(t *testing.T, e *edge, path string, headers ...string) (*http.Response, string) {
	t.Helper()
	host := strings.TrimPrefix(e.base, "http://")
	c, err := net.DialTimeout("tcp", host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(15 * time.Second))
	k := make([]byte, 16)
	_, _ = rand.Read(k)
	key := base64.StdEncoding.EncodeToString(k)
	var sb strings.Builder
	fmt.Fprintf(&sb, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: %s\r\n", path, host, key)
	for i := 0; i+1 < len(headers); i += 2 {
		fmt.Fprintf(&sb, "%s: %s\r\n", headers[i], headers[i+1])
	}
	sb.WriteString("\r\n")
	if _, err := io.WriteString(c, sb.String()); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("upgrade %s: %v", path, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp, ""
	}
	if got := resp.Header.Get("Sec-WebSocket-Accept"); got != wsAccept(key) {
		t.Fatalf("Sec-WebSocket-Accept %q, want %q", got, wsAccept(key))
	}
	hdr := make([]byte, 2)
	if _, err := io.ReadFull(br, hdr); err != nil {
		t.Fatalf("first frame: %v", err)
	}
	if hdr[0] != 0x81 || hdr[1]&0x80 != 0 || hdr[1]&0x7f > 125 {
		t.Fatalf("first frame header %x: want an unmasked short text frame", hdr)
	}
	msg := make([]byte, hdr[1]&0x7f)
	if _, err := io.ReadFull(br, msg); err != nil {
		t.Fatalf("first frame: %v", err)
	}
	return resp, string(msg)
}

// TestEdgeTradingAPI: with both cache stores, an order sent through the edge reaches the BFF with its
// Idempotency-Key, CSRF token, session cookie and body; its private, no-store answer is passed on as such and
// never stored: the same request again, and another member's identical request, each reach the BFF and get their
// own answer. The WebSocket upgrade of /api/v1/stream carries the session cookie through (private channels need
// it), keeps the browser's Origin and Host so the BFF's Origin check holds, and a foreign Origin is refused.
func TestEdgeTradingAPI(t *testing.T) {
	for _, store := range []string{"memory", "valkey"} {
		t.Run(store, func(t *testing.T) {
			valkey := ""
			if store == "valkey" {
				valkey = startValkey(t)
			}
			bff := newTradingBFF(t)
			kratos := newSignedInKratos(t)
			e := startEdge(t, writeUI(t), bff.addr(), kratos.addr(), valkey)
			checkOrdersThroughEdge(t, e, bff, valkey)
			checkStreamThroughEdge(t, e, bff)
		})
	}
}

func checkOrdersThroughEdge(t *testing.T, e *edge, bff *tradingBFF, valkey string) {
	const order = `{"exchange":"binance","market_type":"SWAP","symbol":"BTCUSDT","side":"BUY","type":"LIMIT","price":"50000","qty":"0.01"}`
	send := func(cookie, csrf string) (reply, orderSeen) {
		t.Helper()
		before := len(bff.requests())
		r := e.do(t, http.MethodPost, "/api/v1/orders", order, append([]string{"Content-Type", "application/json",
			"Cookie", cookie, "Idempotency-Key", "k-7f3a", "X-CSRF-Token", csrf, "Accept-Encoding", "gzip"}, spoofed...)...)
		got := bff.requests()
		if len(got) != before+1 {
			t.Fatalf("POST /api/v1/orders as %q: the BFF got %d requests, want 1 (answer %d %q, Cache-Status %q)",
				cookie, len(got)-before, r.status, r.body, r.header.Get("Cache-Status"))
		}
		return r, got[len(got)-1]
	}
	check := func(what, cookie, csrf string) {
		t.Helper()
		r, s := send(cookie, csrf)
		if s.method != http.MethodPost || s.uri != "/api/v1/orders" || s.body != order || s.cookie != cookie ||
			s.idemKey != "k-7f3a" || s.csrf != csrf {
			t.Fatalf("%s: the BFF saw %+v", what, s)
		}
		plain := decode(t, r.header.Get("Content-Encoding"), r.body)
		want := fmt.Sprintf(`{"cookie":%q,"key":"k-7f3a","served":%d}`, cookie, len(bff.requests()))
		if r.status != http.StatusCreated || plain != want {
			t.Fatalf("%s: %d %q, want 201 %q", what, r.status, plain, want)
		}
		if cc := r.header.Values("Cache-Control"); len(cc) != 1 || cc[0] != "private, no-store" {
			t.Fatalf("%s: Cache-Control %q, want private, no-store as the BFF sent it", what, cc)
		}
		if isHit(r) {
			t.Fatalf("%s: answered from the cache (%s)", what, r.header.Get("Cache-Status"))
		}
		assertSecurityHeaders(t, what, r.header)
	}
	check("member a", "exhub_session=member-a", "csrf-a")
	check("member a again (a retried click)", "exhub_session=member-a", "csrf-a")
	check("member b, the same order and key", "exhub_session=member-b", "csrf-b")

	// Reads of private order state are never shared either.
	for i, cookie := range []string{"exhub_session=member-a", "exhub_session=member-b", "exhub_session=member-a"} {
		before := len(bff.requests())
		r := e.get(t, "/api/v1/orders?status=open", "Cookie", cookie)
		want := fmt.Sprintf(`{"cookie":%q,"key":"","served":%d}`, cookie, before+1)
		if r.status != http.StatusOK || r.body != want || isHit(r) {
			t.Fatalf("GET open orders %d as %s: %d %q (%s), want %q", i, cookie, r.status, r.body,
				r.header.Get("Cache-Status"), want)
		}
		if cc := r.header.Get("Cache-Control"); cc != "private, no-store" {
			t.Fatalf("GET open orders: Cache-Control %q", cc)
		}
	}
	if valkey != "" {
		keys, err := valkeyKeys(valkey)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(keys, "/api/v1/orders") {
			t.Fatalf("an order answer was stored in Valkey:\n%s", keys)
		}
	}
}

func checkStreamThroughEdge(t *testing.T, e *edge, bff *tradingBFF) {
	host := strings.TrimPrefix(e.base, "http://")
	resp, msg := wsDial(t, e, "/api/v1/stream", "Cookie", "exhub_session=member-a", "Origin", e.base)
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("same-origin upgrade: %s\n%s", resp.Status, e.proc.output())
	}
	if want := `{"cookie":"exhub_session=member-a","type":"hello"}`; msg != want {
		t.Fatalf("first message %q, want %q", msg, want)
	}
	s := bff.requests()[len(bff.requests())-1]
	if s.uri != "/api/v1/stream" || s.cookie != "exhub_session=member-a" || s.origin != e.base || s.host != host ||
		!strings.EqualFold(s.upgrade, "websocket") {
		t.Fatalf("the BFF saw the upgrade as %+v; want the cookie, Origin %s and Host %s", s, e.base, host)
	}

	// Without a session the stream still opens (market channels); the BFF sees no cookie.
	if resp, msg := wsDial(t, e, "/api/v1/stream", "Origin", e.base); resp.StatusCode != http.StatusSwitchingProtocols ||
		msg != `{"cookie":"","type":"hello"}` {
		t.Fatalf("anonymous upgrade: %s %q", resp.Status, msg)
	}

	// Another site's page: refused before any upgrade, its cookie notwithstanding.
	for _, origin := range []string{"http://evil.example", "http://127.0.0.1:1", "null"} {
		resp, _ := wsDial(t, e, "/api/v1/stream", "Cookie", "exhub_session=member-a", "Origin", origin)
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("Origin %s: %s, want 403", origin, resp.Status)
		}
		if s := bff.requests()[len(bff.requests())-1]; s.origin != origin {
			t.Fatalf("Origin %s reached the BFF as %q", origin, s.origin)
		}
	}
}
