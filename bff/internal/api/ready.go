package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/exhub/exhub/bff/internal/cache"
	"github.com/exhub/exhub/bff/internal/config"
	"github.com/exhub/exhub/bff/internal/pluginhost"
)

func contextWithID(r *http.Request, id string) context.Context {
	return context.WithValue(r.Context(), ctxKey{}, id)
}

// Check is one readiness probe of an external service.
type Check struct {
	Name string
	// Probe returns a short detail and an error when the service is not usable.
	Probe func(ctx context.Context) (string, error)
}

// Component is one line of the /readyz answer.
type Component struct {
	Ready  bool   `json:"ready"`
	Detail string `json:"detail,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Readiness is the /readyz body.
type Readiness struct {
	Status     string               `json:"status"`
	Components map[string]Component `json:"components"`
}

// defaultChecks probes what is configured: Valkey (when the cache runs on it), ClickHouse.
func defaultChecks(cfg *config.Config, c cache.Cache) []Check {
	var checks []Check
	if cfg == nil {
		return nil
	}
	if cfg.Valkey.Addr != "" && c != nil {
		checks = append(checks, Check{Name: "valkey", Probe: func(ctx context.Context) (string, error) {
			if c.Backend() != "valkey" {
				return "unreachable at start; using the in-process fallback cache", nil
			}
			return cfg.Valkey.Addr, c.Ping(ctx)
		}})
	}
	switch {
	case cfg.ClickHouse.HTTPAddr != "":
		addr := cfg.ClickHouse.HTTPAddr
		checks = append(checks, Check{Name: "clickhouse", Probe: func(ctx context.Context) (string, error) {
			return addr, pingClickHouseHTTP(ctx, addr)
		}})
	case cfg.ClickHouse.Addr != "":
		addr := cfg.ClickHouse.Addr
		checks = append(checks, Check{Name: "clickhouse", Probe: func(ctx context.Context) (string, error) {
			var d net.Dialer
			conn, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				return addr, fmt.Errorf("clickhouse native port: %w", err)
			}
			return addr, conn.Close()
		}})
	}
	return checks
}

func pingClickHouseHTTP(ctx context.Context, addr string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/ping", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("clickhouse http: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1024))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("clickhouse http /ping: status %d", resp.StatusCode)
	}
	return nil
}

// readiness evaluates every component; plugins must be running.
func (s *server) readiness(ctx context.Context) Readiness {
	out := Readiness{Status: "ready", Components: map[string]Component{}}
	if s.host != nil {
		for _, sup := range s.host.Supervisors() {
			st := sup.Status()
			c := Component{Ready: st.State == pluginhost.StateRunning, Detail: string(st.State)}
			if !c.Ready {
				c.Error = st.LastError
			}
			out.Components["plugin:"+st.Slug] = c
		}
	}
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for _, ch := range s.checks {
		wg.Add(1)
		go func() { // owned by readiness; bounded by the probe timeout
			defer wg.Done()
			pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			detail, err := ch.Probe(pctx)
			c := Component{Ready: err == nil, Detail: detail}
			if err != nil {
				c.Error = err.Error()
			}
			mu.Lock()
			out.Components[ch.Name] = c
			mu.Unlock()
		}()
	}
	wg.Wait()
	names := make([]string, 0, len(out.Components))
	for n := range out.Components {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !out.Components[n].Ready {
			out.Status = "not_ready"
		}
	}
	return out
}

func (s *server) readyz(w http.ResponseWriter, r *http.Request) {
	rd := s.readiness(r.Context())
	w.Header().Set("Content-Type", "application/json")
	if rd.Status != "ready" {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(rd)
}

// --- offline API docs -------------------------------------------------------------------------------------------

var docsAssets = map[string]string{
	"web-components.min.js": "text/javascript; charset=utf-8",
	"styles.min.css":        "text/css; charset=utf-8",
}

const docsHTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>exhub | API reference</title>
<link rel="stylesheet" href="/api/docs/assets/styles.min.css">
<script src="/api/docs/assets/web-components.min.js"></script>
<style>html,body{margin:0;height:100%}</style>
</head>
<body>
<elements-api apiDescriptionUrl="/api/openapi.json" router="hash" layout="sidebar" tryItCredentialsPolicy="same-origin"></elements-api>
</body>
</html>
`

const docsMissingHTML = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>exhub | API reference</title></head>
<body style="font-family:sans-serif;max-width:42em;margin:3em auto;line-height:1.5">
<h1>API reference not installed</h1>
<p>The offline API reference page needs its browser bundle, which is not installed in <code>%s</code>.</p>
<p>Install it with <code>make deps</code> (or run <code>bff/apidocs/install.sh</code>), then reload this page.</p>
<p>The OpenAPI document itself is available now: <a href="/api/openapi.json">/api/openapi.json</a>
(<a href="/api/openapi.yaml">YAML</a>).</p>
</body>
</html>
`

func (s *server) docsInstalled() bool {
	for f := range docsAssets {
		if _, err := os.Stat(filepath.Join(s.cfg.APIDocsDir(), f)); err != nil {
			return false
		}
	}
	return true
}

func (s *server) docsPage(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if !s.docsInstalled() {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = fmt.Fprintf(w, docsMissingHTML, s.cfg.APIDocsDir())
		return
	}
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = io.WriteString(w, docsHTML)
}

func (s *server) docsAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	ctype, ok := docsAssets[name]
	if !ok {
		problem(w, http.StatusNotFound, fmt.Sprintf("no docs asset %q", name))
		return
	}
	path := filepath.Join(s.cfg.APIDocsDir(), name)
	if _, err := os.Stat(path); err != nil {
		problem(w, http.StatusNotFound, "the API reference bundle is not installed: run `make deps`")
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "public, max-age=3600")
	http.ServeFile(w, r, path)
}
