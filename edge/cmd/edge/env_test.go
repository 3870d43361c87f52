package main

import (
	"crypto/sha256"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type mapEnv map[string]string

func (m mapEnv) LookupEnv(k string) (string, bool) { v, ok := m[k]; return v, ok }
func (m mapEnv) Setenv(k, v string) error          { m[k] = v; return nil }

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

func TestPrepareEnvSplitsListenAddress(t *testing.T) {
	cases := []struct {
		addr, host, port string
	}{
		{"", "127.0.0.1", "8080"},
		{"127.0.0.1:18080", "127.0.0.1", "18080"},
		{"[::1]:9443", "::1", "9443"},
		{"localhost:8081", "localhost", "8081"},
	}
	for _, c := range cases {
		e := mapEnv{envUIDir: t.TempDir()}
		if c.addr != "" {
			e[envAddr] = c.addr
		}
		if err := prepareEnv(e); err != nil {
			t.Fatalf("%q: %v", c.addr, err)
		}
		if e[envHost] != c.host || e[envPort] != c.port {
			t.Errorf("%q: host %q port %q, want %q %q", c.addr, e[envHost], e[envPort], c.host, c.port)
		}
	}
}

func TestPrepareEnvRejectsBadAddress(t *testing.T) {
	for _, addr := range []string{"8080", ":8080", "127.0.0.1:0", "127.0.0.1:70000", "127.0.0.1:http"} {
		e := mapEnv{envAddr: addr, envUIDir: t.TempDir()}
		if err := prepareEnv(e); err == nil || !strings.Contains(err.Error(), envAddr) {
			t.Errorf("%q: err %v, want an error naming %s", addr, err, envAddr)
		}
	}
}

func TestPrepareEnvKeepsCallerValues(t *testing.T) {
	e := mapEnv{envAddr: "bad", envHost: "127.0.0.2", envPort: "9000", envScriptHash: "'sha256-x'"}
	if err := prepareEnv(e); err != nil {
		t.Fatal(err)
	}
	if e[envHost] != "127.0.0.2" || e[envPort] != "9000" || e[envScriptHash] != "'sha256-x'" {
		t.Fatalf("caller values overwritten: %v", e)
	}
}

func TestPrepareEnvHashesInlineScripts(t *testing.T) {
	dir := t.TempDir()
	a := `(function(){document.documentElement.setAttribute("data-theme","dark")})();`
	b := "\nimport \"/assets/manifest.js\";\nimport(\"/assets/entry.client.js\");"
	html := `<!DOCTYPE html><html><head><script>` + a + `</script>` +
		`<script type="module" src="/assets/app.js"></script>` +
		`<SCRIPT type="module" async="">` + b + `</SCRIPT >` +
		`<script>` + a + `</script>` + // duplicate: listed once
		`<script data-src="x">` + a + `</script>` + // data-src is not src
		`</head><body></body></html>`
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	e := mapEnv{envUIDir: dir}
	if err := prepareEnv(e); err != nil {
		t.Fatal(err)
	}
	want := hashOf(a) + " " + hashOf(b)
	if e[envScriptHash] != want {
		t.Fatalf("hashes %q, want %q", e[envScriptHash], want)
	}
}

func TestPrepareEnvWithoutUIBuild(t *testing.T) {
	e := mapEnv{envUIDir: filepath.Join(t.TempDir(), "missing")}
	if err := prepareEnv(e); err != nil {
		t.Fatal(err)
	}
	if v, ok := e[envScriptHash]; !ok || v != "" {
		t.Fatalf("hash variable %q (set %v), want set and empty", v, ok)
	}
}

func TestPrepareEnvCacheStore(t *testing.T) {
	cases := []struct {
		store, entries         string
		wantStore, wantEntries string
	}{
		{"", "", "memory", "2000"},
		{"memory", "", "memory", "2000"},
		{"valkey", "", "valkey", "2000"},
		{"", "50000", "memory", "50000"},
	}
	for _, c := range cases {
		e := mapEnv{envUIDir: t.TempDir(), envCache: c.store, envEntries: c.entries}
		if err := prepareEnv(e); err != nil {
			t.Fatalf("%q/%q: %v", c.store, c.entries, err)
		}
		if e[envCache] != c.wantStore || e[envEntries] != c.wantEntries {
			t.Errorf("%q/%q: got %q/%q, want %q/%q", c.store, c.entries, e[envCache], e[envEntries], c.wantStore, c.wantEntries)
		}
	}
	// Unset (not just empty) gets the defaults too.
	e := mapEnv{envUIDir: t.TempDir()}
	if err := prepareEnv(e); err != nil || e[envCache] != "memory" || e[envEntries] != "2000" {
		t.Fatalf("unset: err %v, %q/%q", err, e[envCache], e[envEntries])
	}
}

func TestPrepareEnvRejectsBadCacheSettings(t *testing.T) {
	bad := []mapEnv{
		{envCache: "redis"},
		{envCache: "Memory"},
		{envCache: "../x"},
		{envEntries: "0"},
		{envEntries: "-5"},
		{envEntries: "1e3"},
		{envEntries: "2000000"},
	}
	for _, e := range bad {
		e[envUIDir] = t.TempDir()
		want := envCache
		if _, ok := e[envEntries]; ok {
			want = envEntries
		}
		if err := prepareEnv(e); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: err %v, want an error naming %s", e, err, want)
		}
	}
}

func TestPrepareEnvDemoInbox(t *testing.T) {
	cases := []struct{ set, want string }{{"", "off"}, {"off", "off"}, {"on", "on"}}
	for _, c := range cases {
		e := mapEnv{envUIDir: t.TempDir(), envDemoInbox: c.set}
		if err := prepareEnv(e); err != nil {
			t.Fatalf("%q: %v", c.set, err)
		}
		if e[envDemoInbox] != c.want {
			t.Errorf("%q: got %q, want %q", c.set, e[envDemoInbox], c.want)
		}
	}
	e := mapEnv{envUIDir: t.TempDir()}
	if err := prepareEnv(e); err != nil || e[envDemoInbox] != "off" {
		t.Fatalf("unset: err %v, %q", err, e[envDemoInbox])
	}
	// A Mailpit address is checked only when the inbox is on (it is unused otherwise).
	e = mapEnv{envUIDir: t.TempDir(), envDemoInbox: "on", envMailpit: "127.0.0.1:18025"}
	if err := prepareEnv(e); err != nil {
		t.Fatalf("on with a good address: %v", err)
	}
	e = mapEnv{envUIDir: t.TempDir(), envDemoInbox: "off", envMailpit: "nonsense"}
	if err := prepareEnv(e); err != nil {
		t.Fatalf("off with an unused address: %v", err)
	}
}

func TestPrepareEnvRejectsBadDemoInbox(t *testing.T) {
	bad := []struct {
		e    mapEnv
		name string
	}{
		{mapEnv{envDemoInbox: "yes"}, envDemoInbox},
		{mapEnv{envDemoInbox: "On"}, envDemoInbox},
		{mapEnv{envDemoInbox: "1"}, envDemoInbox},
		{mapEnv{envDemoInbox: "../cache_store_memory"}, envDemoInbox},
		{mapEnv{envDemoInbox: "on", envMailpit: "8025"}, envMailpit},
		{mapEnv{envDemoInbox: "on", envMailpit: ":8025"}, envMailpit},
		{mapEnv{envDemoInbox: "on", envMailpit: "127.0.0.1:0"}, envMailpit},
	}
	for _, c := range bad {
		c.e[envUIDir] = t.TempDir()
		if err := prepareEnv(c.e); err == nil || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%v: err %v, want an error naming %s", c.e, err, c.name)
		}
	}
}
