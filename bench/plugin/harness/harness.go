// Package harness starts what the exhub load tools measure: the synthetic load plugin (bench/plugin/loadplugin)
// under the real plugin host, the stream gateway on a loopback HTTP server, and helpers for figures.
package harness

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// RaiseNoFile lifts the open-file limit to its hard maximum and returns the new soft limit.
func RaiseNoFile() uint64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0
	}
	l.Cur = l.Max
	_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l)
	return l.Cur
}

// Root is the repository root (the directory of go.mod).
func Root() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("run from inside the exhub repository")
	}
	return filepath.Dir(mod), nil
}

// Build builds the BFF and the load plugin into dir and returns their paths.
func Build(dir string) (bff, plugin string, err error) {
	root, err := Root()
	if err != nil {
		return "", "", err
	}
	bff, plugin = filepath.Join(dir, "exhub-bff"), filepath.Join(dir, "loadplugin")
	for _, b := range [][2]string{{bff, "./bff/cmd/exhub-bff"}, {plugin, "./bench/plugin/loadplugin"}} {
		cmd := exec.Command("go", "build", "-o", b[0], b[1])
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("go build %s: %w\n%s", b[1], err, out)
		}
	}
	return bff, plugin, nil
}

// BFF is a running exhub-bff process serving only the load plugin.
type BFF struct {
	cmd  *exec.Cmd
	Addr string // host:port
	done chan struct{}
	Log  string
}

// StartBFF writes a config serving the load plugin with settings (Valkey and ClickHouse off) and starts the BFF
// on a free loopback port. It returns once the plugin runs.
func StartBFF(dir, bff, plugin string, settings map[string]string, streamBuffer int) (*BFF, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	var sb strings.Builder
	fmt.Fprintf(&sb, "http:\n  addr: %s\nlog:\n  level: error\nvalkey:\n  addr: \"\"\nclickhouse:\n  addr: \"\"\n  http_addr: \"\"\n", addr)
	fmt.Fprintf(&sb, "plugins:\n  stream_buffer: %d\nexchanges:\n  - key: 900\n    slug: load\n    name: Load generator\n    plugin: %s\n    settings:\n", streamBuffer, plugin)
	for k, v := range settings {
		fmt.Fprintf(&sb, "      %s: %q\n", k, v)
	}
	cfg := filepath.Join(dir, "bench.yaml")
	if err := os.WriteFile(cfg, []byte(sb.String()), 0o644); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "bff.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bff, "--config", cfg)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start exhub-bff: %w", err)
	}
	b := &BFF{cmd: cmd, Addr: addr, done: make(chan struct{}), Log: logPath}
	go func() { _ = cmd.Wait(); logf.Close(); close(b.done) }() // owned by the BFF; ends when the process exits
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/api/v1/exchanges")
		if err == nil {
			var body struct {
				Exchanges []struct {
					Slug        string `json:"slug"`
					PluginState string `json:"pluginState"`
				} `json:"exchanges"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			for _, e := range body.Exchanges {
				if e.Slug == "load" && e.PluginState == "running" {
					return b, nil
				}
			}
		}
		select {
		case <-b.done:
			return nil, fmt.Errorf("exhub-bff exited; see %s", logPath)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			b.Stop()
			return nil, fmt.Errorf("load plugin not running after 30 s; see %s", logPath)
		}
	}
}

// URL of the stream gateway.
func (b *BFF) URL() string { return "ws://" + b.Addr + "/api/v1/stream" }

// Stop ends the BFF (SIGTERM, then SIGKILL after 10 s) and waits for it.
func (b *BFF) Stop() {
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.done:
	case <-time.After(10 * time.Second):
		_ = b.cmd.Process.Kill()
		<-b.done
	}
}

// CPUSeconds is the user+system CPU the BFF process used so far (its plugin children not included).
func (b *BFF) CPUSeconds() float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", b.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+2:])
	if len(f) < 13 {
		return 0
	}
	var ut, st float64
	fmt.Sscan(f[11], &ut)
	fmt.Sscan(f[12], &st)
	return (ut + st) / 100
}

// Percentile of sorted values (q in 0..1).
func Percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q * float64(len(sorted)-1))
	return sorted[i]
}

// Summary of a latency sample in milliseconds.
type Summary struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50Ms"`
	P90   float64 `json:"p90Ms"`
	P99   float64 `json:"p99Ms"`
	P999  float64 `json:"p999Ms"`
	Max   float64 `json:"maxMs"`
}

// Summarize sorts ms and summarizes it.
func Summarize(ms []float64) Summary {
	slices.Sort(ms)
	s := Summary{Count: len(ms), P50: Percentile(ms, 0.5), P90: Percentile(ms, 0.9), P99: Percentile(ms, 0.99), P999: Percentile(ms, 0.999)}
	if len(ms) > 0 {
		s.Max = ms[len(ms)-1]
	}
	return s
}

// WriteJSON writes v to bench/results/<name>.json under the repository root and returns the path.
func WriteJSON(name string, v any) (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "bench", "results")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, name+".json")
	return p, os.WriteFile(p, append(b, '\n'), 0o644)
}

// Machine describes where a figure was measured.
type Machine struct {
	CPUs      int    `json:"cpus"`
	GoVersion string `json:"goVersion"`
	OS        string `json:"os"`
}

// LoadAverage is the 1-minute load average (-1 when unknown): how busy the machine was besides the benchmark.
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	var v float64
	if _, err := fmt.Sscan(string(b), &v); err != nil {
		return -1
	}
	return v
}
