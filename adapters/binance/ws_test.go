package binance

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// wsServer is a small combined-stream server: each connection sends numbered frames; dropAfter > 0 closes the
// first connection after that many frames.
type wsServer struct {
	mu        sync.Mutex
	opened    []time.Time
	closed    []time.Time
	conns     atomic.Int32
	dropAfter int
	seq       atomic.Int64
}

func (w *wsServer) handler(t *testing.T) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(rw, r, nil)
		if err != nil {
			return
		}
		n := w.conns.Add(1)
		w.mu.Lock()
		w.opened = append(w.opened, time.Now())
		w.mu.Unlock()
		defer func() {
			w.mu.Lock()
			w.closed = append(w.closed, time.Now())
			w.mu.Unlock()
		}()
		ctx := c.CloseRead(r.Context())
		streams := r.URL.Query().Get("streams")
		for i := 0; ; i++ {
			if n == 1 && w.dropAfter > 0 && i == w.dropAfter {
				c.CloseNow()
				return
			}
			id := w.seq.Add(1)
			msg := fmt.Sprintf(`{"stream":%q,"data":{"e":"trade","E":1,"T":1,"t":%d,"p":"1","q":"1","m":false}}`, streams, id)
			if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	})
}

func runFeed(t *testing.T, srv *httptest.Server, lifetime time.Duration) (*feed, context.CancelFunc, chan struct{}) {
	base := "ws" + strings.TrimPrefix(srv.URL, "http")
	f := newFeed("test", func(s []string) string { return combinedStreamURL(base, s) }, lifetime, slog.Default())
	f.overlap = 100 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.run(ctx) }()
	f.SetStreams([]string{"btcusdt@trade"})
	return f, cancel, done
}

func TestFeedReconnectsAfterDrop(t *testing.T) {
	ws := &wsServer{dropAfter: 3}
	srv := httptest.NewServer(ws.handler(t))
	defer srv.Close()
	f, cancel, done := runFeed(t, srv, time.Hour)
	defer func() { cancel(); <-done }()
	var states []feedState
	data := 0
	deadline := time.After(30 * time.Second)
	for data < 10 {
		select {
		case m := <-f.out:
			if m.state != feedData {
				states = append(states, m.state)
			} else {
				data++
				if _, err := ParseStreamMessage(m.data); err != nil {
					t.Fatal(err)
				}
			}
		case <-deadline:
			t.Fatalf("only %d frames, states %v", data, states)
		}
	}
	if len(states) != 2 || states[0] != feedReconnecting || states[1] != feedResynced {
		t.Fatalf("want reconnecting then resynced, got %v", states)
	}
	if ws.conns.Load() < 2 {
		t.Fatal("no second connection")
	}
}

func TestFeedRolloverWithoutGap(t *testing.T) {
	ws := &wsServer{}
	srv := httptest.NewServer(ws.handler(t))
	defer srv.Close()
	f, cancel, done := runFeed(t, srv, 300*time.Millisecond)
	deadline := time.After(30 * time.Second)
	for ws.conns.Load() < 3 {
		select {
		case m := <-f.out:
			if m.state != feedData {
				t.Fatalf("a rollover must not look like a reconnect: %v", m.state)
			}
		case <-deadline:
			t.Fatal("no rollover")
		}
	}
	cancel()
	<-done
	ws.mu.Lock()
	defer ws.mu.Unlock()
	// Connection i+1 opened before connection i closed: no moment without a live connection.
	for i := 0; i+1 < len(ws.opened) && i < len(ws.closed); i++ {
		if !ws.opened[i+1].Before(ws.closed[i]) {
			t.Fatalf("connection %d opened after %d closed", i+1, i)
		}
	}
}

func TestBackoffBounds(t *testing.T) {
	for a := 0; a < 20; a++ {
		d := backoff(a)
		if d < 180*time.Millisecond || d > 38*time.Second {
			t.Fatalf("attempt %d: %v", a, d)
		}
	}
}
