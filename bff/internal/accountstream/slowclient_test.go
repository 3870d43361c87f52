package accountstream_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/exhub/exhub/bff/internal/accountstream"
	"github.com/exhub/exhub/bff/internal/stream"
)

// TestSlowClientIsResynced: a browser that stops reading its socket while fills stream is cut off from its backlog
// with status resyncing and a snapshot (again and again while it stays behind); when it reads, every hole in its
// fills lies behind a resyncing, and the last fill arrives.
func TestSlowClientIsResynced(t *testing.T) {
	src := newFakeSource()
	accts := newAccounts()
	accts.add("member-a", "reference", "acct-a")
	id := startIdentity(t)
	id.login("cookie-a", "member-a")
	m, _ := startManager(t, accountstream.Options{Source: src, Accounts: accts})
	h := startHost(t)
	srv := startGateway(t, h, m, id.checker(t), stream.Config{MaxPrivatePending: 16, WriteTimeout: 10 * time.Minute})

	// A client with a tiny receive buffer, so the server's writes block soon after it stops reading.
	dialer := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		if err != nil {
			return err
		}
		return serr
	}}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &websocket.DialOptions{
		HTTPHeader: http.Header{"Cookie": {"exhub_session=cookie-a"}},
		HTTPClient: &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(1 << 24)
	b, _ := json.Marshal(privSub("1", "fills", "reference"))
	if err := ws.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
	var queue []map[string]any
	read := func() map[string]any {
		t.Helper()
		for len(queue) == 0 {
			_, b, err := ws.Read(ctx)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if b[0] == '[' {
				var ms []map[string]any
				if err := json.Unmarshal(b, &ms); err != nil {
					t.Fatal(err)
				}
				queue = append(queue, ms...)
			} else {
				var m map[string]any
				if err := json.Unmarshal(b, &m); err != nil {
					t.Fatal(err)
				}
				queue = append(queue, m)
			}
		}
		m := queue[0]
		queue = queue[1:]
		return m
	}
	up := src.upstream(t)
	up.ch <- snapshotEvent()
	for msg := read(); msg["type"] != "snapshot"; msg = read() {
	}

	// The client stops reading; fills flow until it has been cut off.
	n := 0
	for m.Stats().SlowSubscribers == 0 {
		n++
		up.ch <- fillEvent(n)
		if n%500 == 0 {
			waitFor(t, "the manager to take the fills", func() bool { return len(up.ch) == 0 })
		}
		if n > 2_000_000 {
			t.Fatal("never cut off")
		}
	}
	n++
	up.ch <- fillEvent(n) // and one more after it

	// Now it reads: every hole lies behind a resyncing; the last fill comes.
	last, resyncs, marked := 0, 0, false
	for last != n {
		msg := read()
		switch msg["type"] {
		case "status":
			if msg["state"] == "resyncing" {
				if msg["reason"] != "slow_subscriber" {
					t.Fatalf("resync %v", msg)
				}
				resyncs++
				marked = true
			}
		case "snapshot":
			if !marked {
				t.Fatalf("a snapshot without resyncing: %v", msg)
			}
			marked = false
			fs, _ := msg["fills"].([]any)
			if len(fs) > 0 {
				id, _ := strconv.Atoi(fs[len(fs)-1].(map[string]any)["tradeId"].(string))
				last = max(last, id)
			}
		case "fill":
			if marked {
				t.Fatalf("a fill where a snapshot was due: %v", msg)
			}
			id, _ := strconv.Atoi(field(msg, "fill", "tradeId").(string))
			if id != last+1 {
				t.Fatalf("fill %d after %d without a resync", id, last)
			}
			last = id
		}
	}
	if resyncs == 0 {
		t.Fatal("no resync seen")
	}
	t.Logf("%d fills, %d resyncs", n, resyncs)
}
