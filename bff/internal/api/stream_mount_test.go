package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/exhub/exhub/bff/internal/config"
)

// A WebSocket handler given as Deps.Stream is reachable at GET /api/v1/stream through the middleware (upgrade and
// hijack work), and stays out of the OpenAPI document.
func TestStreamHandlerIsMounted(t *testing.T) {
	cfg := config.Default()
	cfg.Exchanges = nil
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		typ, b, err := c.Read(r.Context())
		if err != nil {
			return
		}
		_ = c.Write(r.Context(), typ, append([]byte("echo:"), b...))
		_ = c.Close(websocket.StatusNormalClosure, "")
	})
	h, api := New(Deps{Config: &cfg, Checks: []Check{}, Stream: echo})
	srv := httptest.NewServer(h)
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/api/v1/stream", nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.CloseNow()
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if err := c.Write(ctx, websocket.MessageText, []byte("hi")); err != nil {
		t.Fatal(err)
	}
	_, b, err := c.Read(ctx)
	if err != nil || string(b) != "echo:hi" {
		t.Fatalf("read %q %v", b, err)
	}
	if _, ok := api.OpenAPI().Paths["/api/v1/stream"]; ok {
		t.Fatal("the WebSocket route must not be a JSON route in OpenAPI")
	}

	// Without a Stream handler the path is a plain 404 problem.
	h2, _ := New(Deps{Config: &cfg, Checks: []Check{}})
	rec := httptest.NewRecorder()
	h2.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/stream", nil))
	if rec.Code != http.StatusNotFound {
		t.Fatalf("no stream handler: %d", rec.Code)
	}
}
