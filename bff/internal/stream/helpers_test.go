package stream

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/plugintest"
)

// patience bounds every wait in these tests: what they wait for normally comes at once or within a tick of the
// gateway; only a broken gateway reaches the bound, so it is generous enough for a loaded machine under -race.
const patience = time.Minute

func TestMain(m *testing.M) { os.Exit(plugintest.Run(m, nil, "reference")) }

// replica is one BFF gateway with its own plugin host and HTTP server.
type replica struct {
	host *pluginhost.Host
	gw   *Gateway
	srv  *httptest.Server
	stop func()
}

func startReplica(t *testing.T, broker Broker, cfg Config, settings map[string]string) *replica {
	t.Helper()
	h := pluginhost.New([]pluginhost.Spec{{Key: 100, Slug: "reference", Name: "Reference Exchange", Path: plugintest.Path("reference"),
		Settings: settings}}, pluginhost.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	hostDone := make(chan struct{})
	go func() { defer close(hostDone); h.Run(ctx) }()
	sup, _ := h.Get("reference")
	wctx, wcancel := context.WithTimeout(ctx, patience)
	defer wcancel()
	if err := sup.WaitRunning(wctx); err != nil {
		cancel()
		<-hostDone
		t.Fatalf("reference plugin: %v", err)
	}
	cfg.InsecureSkipOriginCheck = true
	gw := New(Options{Config: cfg, Source: HostSource{Host: h}, Broker: broker})
	gwDone := make(chan struct{})
	gctx, gcancel := context.WithCancel(context.Background())
	go func() { defer close(gwDone); _ = gw.Run(gctx) }()
	srv := httptest.NewServer(gw)
	r := &replica{host: h, gw: gw, srv: srv}
	stopped := false
	r.stop = func() {
		if stopped {
			return
		}
		stopped = true
		gcancel()
		<-gwDone
		srv.Close()
		cancel()
		<-hostDone
	}
	t.Cleanup(r.stop)
	waitFor(t, "the gateway to run", func() bool {
		gw.mu.Lock()
		defer gw.mu.Unlock()
		return gw.ctx != nil
	})
	return r
}

// client is a test WebSocket client.
type client struct {
	t    *testing.T
	ws   *websocket.Conn
	msgs chan map[string]any
	done chan error
}

func dial(t *testing.T, srv *httptest.Server) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	ws.SetReadLimit(1 << 22)
	c := &client{t: t, ws: ws, msgs: make(chan map[string]any, 10000), done: make(chan error, 1)}
	go func() { // owned by the client; ends when the connection closes
		for {
			_, b, err := ws.Read(context.Background())
			if err != nil {
				c.done <- err
				close(c.msgs)
				return
			}
			// A frame is one message, or an array of messages when the server batched them.
			var batch []map[string]any
			if len(b) > 0 && b[0] == '[' {
				err = json.Unmarshal(b, &batch)
			} else {
				var m map[string]any
				err = json.Unmarshal(b, &m)
				batch = append(batch, m)
			}
			if err != nil {
				c.done <- err
				close(c.msgs)
				return
			}
			for _, m := range batch {
				select {
				case c.msgs <- m:
				default:
					c.done <- fmt.Errorf("test client buffer full")
					close(c.msgs)
					return
				}
			}
		}
	}()
	t.Cleanup(func() { _ = ws.CloseNow() })
	hello := c.next()
	if hello["type"] != "hello" {
		t.Fatalf("first message %v", hello)
	}
	return c
}

func (c *client) send(v any) {
	c.t.Helper()
	b, _ := json.Marshal(v)
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// next returns the next message.
func (c *client) next() map[string]any {
	c.t.Helper()
	return c.nextBy(time.Now().Add(patience))
}

func (c *client) nextBy(deadline time.Time) map[string]any {
	c.t.Helper()
	select {
	case m, ok := <-c.msgs:
		if !ok {
			c.t.Fatalf("connection ended: %v", <-c.done)
		}
		return m
	case <-time.After(time.Until(deadline)):
		c.t.Fatalf("no message within %s", patience)
	}
	return nil
}

// until reads messages until f returns true (skipping others).
func (c *client) until(f func(map[string]any) bool) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(patience)
	for {
		if m := c.nextBy(deadline); f(m) {
			return m
		}
	}
}

func sub(channel, symbol string, extra ...any) map[string]any {
	m := map[string]any{"op": "subscribe", "id": channel + symbol, "channel": channel, "exchange": "reference",
		"marketType": "SPOT", "symbol": symbol}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i].(string)] = extra[i+1]
	}
	return m
}

func waitFor(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
