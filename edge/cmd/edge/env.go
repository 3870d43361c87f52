package main

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Environment variables read or derived here; the Caddyfile uses them.
const (
	envAddr       = "EXHUB_EDGE_ADDR"
	envHost       = "EXHUB_EDGE_HOST"
	envPort       = "EXHUB_EDGE_PORT"
	envUIDir      = "EXHUB_UI_DIR"
	envScriptHash = "EXHUB_CSP_SCRIPT_HASHES"
	envCache      = "EXHUB_EDGE_CACHE"
	envEntries    = "EXHUB_EDGE_CACHE_ENTRIES"
	envDemoInbox  = "EXHUB_DEMO_INBOX"
	envMailpit    = "EXHUB_MAILPIT_ADDR"

	defaultAddr    = "127.0.0.1:8080"
	defaultUIDir   = "ui/build/client"
	defaultCache   = "memory"
	defaultEntries = "2000"
	defaultInbox   = "off"
	// maxEntries bounds the in-memory store's entry count; an entry is one
	// cached answer (a few KiB to a few hundred KiB for market data).
	maxEntries = 1_000_000
)

// cacheStores are the values of EXHUB_EDGE_CACHE; the Caddyfile imports the
// snippet cache_store_<value>.
var cacheStores = []string{"memory", "valkey"}

// inboxSwitch are the values of EXHUB_DEMO_INBOX; the Caddyfile imports the
// snippet demo_inbox_<value>.
var inboxSwitch = []string{"on", "off"}

// env is the process environment, abstracted for tests.
type env interface {
	LookupEnv(key string) (string, bool)
	Setenv(key, value string) error
}

type osEnv struct{}

func (osEnv) LookupEnv(key string) (string, bool) { return os.LookupEnv(key) }
func (osEnv) Setenv(key, value string) error      { return os.Setenv(key, value) }

// prepareEnv fills in what a Caddyfile cannot compute itself:
//
//   - EXHUB_EDGE_HOST and EXHUB_EDGE_PORT from EXHUB_EDGE_ADDR (host:port). A
//     Caddyfile site address with a host would also match on the Host header,
//     so the Caddyfile listens on :PORT and binds to HOST instead.
//   - EXHUB_CSP_SCRIPT_HASHES: the CSP hash sources ('sha256-...') of the
//     inline <script> elements of index.html in EXHUB_UI_DIR. The React
//     Router SPA shell carries small inline scripts; allowing exactly those
//     keeps 'unsafe-inline' out of script-src. Restart the edge after a new UI
//     build.
//   - EXHUB_EDGE_CACHE (the HTTP cache store, memory or valkey) and
//     EXHUB_EDGE_CACHE_ENTRIES (entries of the in-memory store) are checked
//     and their defaults set when unset or empty: a typo must stop the edge,
//     not silently change the store or its bound.
//   - EXHUB_DEMO_INBOX (on or off, default off) is checked the same way; with
//     on, EXHUB_MAILPIT_ADDR must be empty (the default) or host:port.
//
// Variables already set by the caller are left alone.
func prepareEnv(e env) error {
	if err := prepareCacheEnv(e); err != nil {
		return err
	}
	if err := prepareInboxEnv(e); err != nil {
		return err
	}
	_, hostSet := e.LookupEnv(envHost)
	_, portSet := e.LookupEnv(envPort)
	if !hostSet || !portSet {
		addr, ok := e.LookupEnv(envAddr)
		if !ok || addr == "" {
			addr = defaultAddr
		}
		host, port, err := splitListenAddr(addr)
		if err != nil {
			return fmt.Errorf("%s=%q: %w", envAddr, addr, err)
		}
		if !hostSet {
			if err := e.Setenv(envHost, host); err != nil {
				return fmt.Errorf("set %s: %w", envHost, err)
			}
		}
		if !portSet {
			if err := e.Setenv(envPort, port); err != nil {
				return fmt.Errorf("set %s: %w", envPort, err)
			}
		}
	}

	if _, ok := e.LookupEnv(envScriptHash); !ok {
		dir, ok := e.LookupEnv(envUIDir)
		if !ok || dir == "" {
			dir = defaultUIDir
		}
		hashes, err := inlineScriptHashes(filepath.Join(dir, "index.html"))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// No UI build (yet): nothing inline to allow.
			fmt.Fprintf(os.Stderr, "exhub-edge: no %s; the UI is not built, serving without inline-script hashes\n",
				filepath.Join(dir, "index.html"))
		case err != nil:
			return err
		}
		if err := e.Setenv(envScriptHash, strings.Join(hashes, " ")); err != nil {
			return fmt.Errorf("set %s: %w", envScriptHash, err)
		}
	}
	return nil
}

// prepareCacheEnv checks the cache store variables and fills in defaults.
func prepareCacheEnv(e env) error {
	store, _ := e.LookupEnv(envCache)
	if store == "" {
		store = defaultCache
	}
	if !slices.Contains(cacheStores, store) {
		return fmt.Errorf("%s=%q: want one of %s", envCache, store, strings.Join(cacheStores, ", "))
	}
	if err := e.Setenv(envCache, store); err != nil {
		return fmt.Errorf("set %s: %w", envCache, err)
	}
	entries, _ := e.LookupEnv(envEntries)
	if entries == "" {
		entries = defaultEntries
	}
	if n, err := strconv.Atoi(entries); err != nil || n < 1 || n > maxEntries {
		return fmt.Errorf("%s=%q: want a whole number in 1..%d", envEntries, entries, maxEntries)
	}
	if err := e.Setenv(envEntries, entries); err != nil {
		return fmt.Errorf("set %s: %w", envEntries, err)
	}
	return nil
}

// prepareInboxEnv checks the demo inbox switch and fills in its default.
func prepareInboxEnv(e env) error {
	v, _ := e.LookupEnv(envDemoInbox)
	if v == "" {
		v = defaultInbox
	}
	if !slices.Contains(inboxSwitch, v) {
		return fmt.Errorf("%s=%q: want one of %s", envDemoInbox, v, strings.Join(inboxSwitch, ", "))
	}
	if err := e.Setenv(envDemoInbox, v); err != nil {
		return fmt.Errorf("set %s: %w", envDemoInbox, err)
	}
	if v == "on" {
		if addr, _ := e.LookupEnv(envMailpit); addr != "" {
			if _, _, err := splitListenAddr(addr); err != nil {
				return fmt.Errorf("%s=%q: %w", envMailpit, addr, err)
			}
		}
	}
	return nil
}

// splitListenAddr checks host:port and returns its parts.
func splitListenAddr(addr string) (host, port string, err error) {
	host, port, err = net.SplitHostPort(addr)
	if err != nil {
		return "", "", fmt.Errorf("want host:port: %w", err)
	}
	if host == "" {
		return "", "", errors.New("want host:port with an explicit host, e.g. 127.0.0.1:8080")
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return "", "", fmt.Errorf("port %q is not in 1..65535", port)
	}
	return host, port, nil
}

// scriptElement matches one <script ...>body</script>; group 1 is the
// attribute text, group 2 the body.
var scriptElement = regexp.MustCompile(`(?is)<script\b([^>]*)>(.*?)</script\s*>`)

// srcAttr finds a src attribute among a tag's attributes.
var srcAttr = regexp.MustCompile(`(?i)(^|\s)src\s*=`)

// inlineScriptHashes returns the distinct CSP hash sources of the inline
// scripts in an HTML file, in document order.
func inlineScriptHashes(indexPath string) ([]string, error) {
	b, err := os.ReadFile(indexPath)
	if err != nil {
		return nil, fmt.Errorf("read UI shell: %w", err)
	}
	var out []string
	seen := map[string]bool{}
	for _, m := range scriptElement.FindAllSubmatch(b, -1) {
		if srcAttr.Match(m[1]) {
			continue
		}
		sum := sha256.Sum256(m[2])
		src := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
		if !seen[src] {
			seen[src] = true
			out = append(out, src)
		}
	}
	return out, nil
}
