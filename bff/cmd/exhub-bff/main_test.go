package main

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
