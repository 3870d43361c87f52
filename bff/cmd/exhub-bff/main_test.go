package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/exhub/exhub/bff/internal/app"
	"github.com/exhub/exhub/bff/internal/config"
)

func TestVersionAndOpenAPI(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run([]string{"version"}, &out, &errb); err != nil || strings.TrimSpace(out.String()) != version {
		t.Fatalf("version: %q %v", out.String(), err)
	}
	out.Reset()
	if err := run([]string{"openapi", "--config", "../../exhub.yaml"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi output: %v", err)
	}
	if err := run([]string{"frobnicate"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Fatalf("unknown command: %v", err)
	}
}

func TestPortInUseIsOneClearLine(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cfgPath := filepath.Join(t.TempDir(), "exhub.yaml")
	body := "http: {addr: \"" + l.Addr().String() + "\"}\nvalkey: {addr: \"\"}\nexchanges: [{key: 3, slug: bybit, name: Bybit, status: coming_soon}]\n"
	if err := os.WriteFile(cfgPath, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	err = run([]string{"--config", cfgPath}, &out, &errb)
	if err == nil {
		t.Fatal("serve succeeded on a busy port")
	}
	msg := err.Error()
	if !strings.Contains(msg, l.Addr().String()+" is already in use") || !strings.Contains(msg, "EXHUB_HTTP_ADDR") || strings.Contains(msg, "\n") {
		t.Fatalf("message %q", msg)
	}
}

// Serving builds the stream gateway from the config's stream section and exposes its metrics.
func TestServeWiresStreamSettingsAndMetrics(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfgPath := filepath.Join(t.TempDir(), "exhub.yaml")
	body := "http: {addr: \"" + addr + "\"}\nvalkey: {addr: \"\"}\nclickhouse: {addr: \"\", http_addr: \"\"}\n" +
		"exchanges: [{key: 3, slug: bybit, name: Bybit, status: coming_soon}]\n"
	if err := os.WriteFile(cfgPath, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("EXHUB_STREAM_MAX_SUBSCRIPTIONS", "7")
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Serve(ctx, cfg, version, io.Discard) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()

	base := "http://" + addr
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := http.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("BFF not up: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	ws, _, err := websocket.Dial(wctx, "ws://"+addr+"/api/v1/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	_, data, err := ws.Read(wctx)
	if err != nil {
		t.Fatal(err)
	}
	var hello struct {
		Type             string `json:"type"`
		MaxSubscriptions int    `json:"maxSubscriptions"`
	}
	if err := json.Unmarshal(data, &hello); err != nil || hello.Type != "hello" || hello.MaxSubscriptions != 7 {
		t.Fatalf("hello %s (%v): want maxSubscriptions 7 from EXHUB_STREAM_MAX_SUBSCRIPTIONS", data, err)
	}

	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metricsBody, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(metricsBody), "exhub_stream_connections 1") {
		t.Fatalf("/metrics has no exhub_stream_connections 1:\n%s", metricsBody)
	}
}
