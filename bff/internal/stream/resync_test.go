package stream

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// readBook reads client messages into lb, showing each to see first, until done says so; it fails on an error
// message.
func readBook(t *testing.T, c *client, lb *localBook, see func(map[string]any), what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		m := c.nextBy(deadline)
		if m["type"] == "error" {
			t.Fatalf("error: %v", m)
		}
		see(m)
		lb.apply(m)
	}
}

// TestBookResyncAfterGapAndCrossedBook: the exchange's stream loses an update (a sequence gap), later sends an
// update that crosses the book. Each time the gateway drops the book, tells the client (status "resyncing"), asks
// the exchange for a fresh snapshot and sends it on; the client never sees an update that does not chain or a
// crossed book (localBook checks both), and the resyncs are counted by reason.
func TestBookResyncAfterGapAndCrossedBook(t *testing.T) {
	src := newFakeSource("BTCUSDT")
	gw, srv := startFakeGateway(t, Config{InsecureSkipOriginCheck: true}, src)
	c := dial(t, srv)
	c.send(fakeSub("BTCUSDT", "depth", 5))
	lb := newLocalBook(t, 5)
	statuses := 0
	apply := func(m map[string]any) {
		if m["type"] == "status" {
			if m["state"] != "resyncing" {
				t.Fatalf("status %v, want resyncing", m)
			}
			statuses++
		}
	}
	read := func(what string, done func() bool) {
		t.Helper()
		readBook(t, c, lb, apply, what, done)
	}
	read("the first snapshot", func() bool { return lb.snapshots == 1 })
	ex := src.ex
	ex.delta("BTCUSDT", "3")
	read("an update", func() bool { return lb.updates == 1 })

	// A gap: status, a new subscription upstream, a new snapshot.
	ex.gap("BTCUSDT")
	read("the resync after the gap", func() bool { return statuses == 1 && lb.snapshots == 2 && lb.have })
	if n := ex.subscribes("BTCUSDT"); n != 2 {
		t.Fatalf("%d upstream subscriptions after the gap, want a second one for the snapshot", n)
	}
	ex.delta("BTCUSDT", "4")
	read("an update after the resync", func() bool { return lb.updates == 2 })

	// A crossed book: the same.
	ex.cross("BTCUSDT")
	read("the resync after the crossed book", func() bool { return statuses == 2 && lb.snapshots == 3 && lb.have })
	ex.delta("BTCUSDT", "5")
	read("an update after the second resync", func() bool { return lb.updates == 3 })

	// A gap right after a resync (within the spacing between two resyncs) is resynced too, a little later.
	ex.gap("BTCUSDT")
	read("the resync after a second gap", func() bool { return statuses == 3 && lb.snapshots == 4 && lb.have })

	st := gw.Stats()
	if st.Resyncs["gap"] != 2 || st.Resyncs["crossed"] != 1 || st.Resyncs["invalid"] != 0 {
		t.Fatalf("resyncs %v, want 2 gap and 1 crossed", st.Resyncs)
	}
	if st.Leading != 1 {
		t.Fatalf("leading %d topics, want 1", st.Leading)
	}
}

// TestOriginChecked: a browser page of another site cannot open the stream (403 before any upgrade); the page's
// own host and the configured origin patterns can, and so can a client that sends no Origin (not a browser).
func TestOriginChecked(t *testing.T) {
	_, srv := startFakeGateway(t, Config{OriginPatterns: []string{"app.example.com"}}, newFakeSource("BTCUSDT"))
	open := func(origin string) (*websocket.Conn, *http.Response, error) {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		h := http.Header{}
		if origin != "" {
			h.Set("Origin", origin)
		}
		return websocket.Dial(ctx, wsURL(srv), &websocket.DialOptions{HTTPHeader: h})
	}
	ws, resp, err := open("http://evil.example.net")
	if err == nil {
		ws.CloseNow()
		t.Fatal("a disallowed origin was upgraded")
	}
	if resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("disallowed origin: response %v, err %v; want 403", resp, err)
	}
	for _, origin := range []string{"", srv.URL, "https://app.example.com"} {
		ws, _, err := open(origin)
		if err != nil {
			t.Fatalf("origin %q refused: %v", origin, err)
		}
		ws.CloseNow()
	}
}

// TestConnectionLimit: at MaxConnections the next connection is refused with 503 and Retry-After before the
// upgrade; once one closes, a new one is admitted.
func TestConnectionLimit(t *testing.T) {
	gw, srv := startFakeGateway(t, Config{MaxConnections: 2, InsecureSkipOriginCheck: true}, newFakeSource("BTCUSDT"))
	a := dial(t, srv)
	dial(t, srv)
	waitFor(t, "two connections", func() bool { return gw.Stats().Connections == 2 })
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, wsURL(srv), nil)
	if err == nil {
		ws.CloseNow()
		t.Fatal("a connection over the limit was upgraded")
	}
	if resp == nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("over the limit: response %v, err %v; want 503 with Retry-After", resp, err)
	}
	if n := gw.Stats().Connections; n != 2 {
		t.Fatalf("%d connections after a refusal, want 2", n)
	}
	_ = a.ws.Close(websocket.StatusNormalClosure, "")
	waitFor(t, "the closed connection to be gone", func() bool { return gw.Stats().Connections == 1 })
	c := dial(t, srv)
	c.send(map[string]any{"op": "ping", "id": "p"})
	c.until(func(m map[string]any) bool { return m["type"] == "pong" })
}
