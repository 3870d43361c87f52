package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuf) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuf) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func newTestStack(t *testing.T) (*Stack, *syncBuf) {
	t.Helper()
	out := &syncBuf{}
	s := &Stack{cfg: defaultConfig(t.TempDir()), log: slog.New(slog.NewTextHandler(io.Discard, nil)), out: out}
	t.Cleanup(s.Stop)
	return s, out
}

// sh runs a shell snippet as a service; ready succeeds once the file it names exists.
func shService(name, script, readyFile string) *service {
	return &service{
		name: name,
		path: "/bin/sh",
		args: []string{"-c", script},
		ready: func(context.Context) error {
			if _, err := os.Stat(readyFile); err != nil {
				return err
			}
			return nil
		},
		readyTimeout: time.Minute, // ends as soon as the file exists; only a broken test waits it out
	}
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestStartsInOrderPrefixesOutputAndStopsInReverse(t *testing.T) {
	s, out := newTestStack(t)
	dir := t.TempDir()
	order := dir + "/order"
	// Each child installs its TERM trap before it signals ready: Stop may come the moment the ready file exists.
	a := shService("alpha", "trap 'echo alpha >>"+order+"; exit 0' TERM; echo hello from alpha; touch "+dir+"/a; while :; do sleep 0.05; done", dir+"/a")
	b := shService("beta", "trap 'echo beta >>"+order+"; exit 0' TERM; test -f "+dir+"/a || exit 3; echo beta up; touch "+dir+"/b; while :; do sleep 0.05; done", dir+"/b")
	if err := s.startAll(context.Background(), []*service{a, b}); err != nil {
		t.Fatalf("start: %v", err)
	}
	pids := []int{s.procs[0].cmd.Process.Pid, s.procs[1].cmd.Process.Pid}
	s.Stop()
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("pid %d still alive after Stop", pid)
		}
	}
	got, err := os.ReadFile(order)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "beta\nalpha\n" {
		t.Errorf("stop order = %q, want beta then alpha", got)
	}
	if !strings.Contains(out.String(), "alpha      | hello from alpha\n") || !strings.Contains(out.String(), "beta       | beta up\n") {
		t.Errorf("output not prefixed per service:\n%s", out.String())
	}
	select {
	case d := <-s.Died():
		t.Errorf("a deliberate stop reported a death: %v", d)
	default:
	}
}

func TestChildExitingDuringStartIsAClearError(t *testing.T) {
	s, _ := newTestStack(t)
	dir := t.TempDir()
	bad := shService("broken", "echo cannot open config >&2; exit 7", dir+"/never")
	err := s.startAll(context.Background(), []*service{bad})
	if err == nil || !strings.Contains(err.Error(), "broken exited during start-up") || !strings.Contains(err.Error(), "exit status 7") {
		t.Fatalf("err = %v, want a start-up exit naming the service and status", err)
	}
}

func TestReadyTimeout(t *testing.T) {
	s, _ := newTestStack(t)
	dir := t.TempDir()
	slow := shService("slow", "while :; do sleep 0.05; done", dir+"/never")
	slow.readyTimeout = 400 * time.Millisecond
	err := s.startAll(context.Background(), []*service{slow})
	if err == nil || !strings.Contains(err.Error(), "slow not ready after 400ms") {
		t.Fatalf("err = %v", err)
	}
	pid := s.procs[0].cmd.Process.Pid
	s.Stop()
	if alive(pid) {
		t.Errorf("pid %d alive after Stop", pid)
	}
}

func TestUnexpectedDeathIsReported(t *testing.T) {
	s, _ := newTestStack(t)
	dir := t.TempDir()
	// The child exits only once the test says so, after start-up is over: a death during start-up is another case.
	svc := shService("flaky", "touch "+dir+"/r; while [ ! -f "+dir+"/go ]; do sleep 0.02; done; exit 4", dir+"/r")
	if err := s.startAll(context.Background(), []*service{svc}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/go", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-s.Died():
		if d.name != "flaky" || !strings.Contains(d.err.Error(), "exit status 4") {
			t.Errorf("death = %+v", d)
		}
	case <-time.After(time.Minute):
		t.Fatal("no death reported")
	}
}

func TestStartRefusesBusyPortWithOneLine(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	root := t.TempDir()
	// Every other address on a port that is free now, so only the edge's is busy whatever else runs here.
	for _, k := range []string{"EXHUB_HTTP_ADDR", "EXHUB_KRATOS_PUBLIC_ADDR", "EXHUB_KRATOS_ADMIN_ADDR",
		"EXHUB_MAILPIT_SMTP_ADDR", "EXHUB_MAILPIT_ADDR", "EXHUB_EMULATOR_BINANCE_ADDR", "EXHUB_EMULATOR_OKX_ADDR"} {
		t.Setenv(k, freeAddr(t))
	}
	for _, k := range []string{"EXHUB_CLICKHOUSE_TCP_PORT", "EXHUB_CLICKHOUSE_HTTP_PORT", "EXHUB_VALKEY_PORT"} {
		_, p, _ := net.SplitHostPort(freeAddr(t))
		t.Setenv(k, p)
	}
	t.Setenv("EXHUB_EDGE_ADDR", l.Addr().String())
	t.Setenv("EXHUB_BIN_DIR", root+"/bin")
	cfg := defaultConfig(root)
	cfg.NoValkey = true
	// Fake binaries and a UI build so the port check is what fails.
	for _, name := range []string{"exhub-clickhouse", "mailpit", "kratos", "exhub-emulators", "exhub-bff", "exhub-edge"} {
		if err := os.MkdirAll(root+"/bin", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(root+"/bin/"+name, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(root+"/ui/build/client", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(root+"/ui/build/client/index.html", []byte("<html></html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &Stack{cfg: cfg, log: slog.New(slog.NewTextHandler(io.Discard, nil)), out: io.Discard}
	err = s.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "edge: "+l.Addr().String()+" is already in use") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v", err)
	}
	if len(s.procs) != 0 {
		t.Errorf("started %d processes despite the busy port", len(s.procs))
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func TestMissingBinaryNamesTheFix(t *testing.T) {
	root := t.TempDir()
	t.Setenv("EXHUB_BIN_DIR", root+"/bin")
	if err := os.MkdirAll(root+"/ui/build/client", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(root+"/ui/build/client/index.html", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := defaultConfig(root)
	cfg.NoValkey = true
	s := &Stack{cfg: cfg, log: slog.New(slog.NewTextHandler(io.Discard, nil)), out: io.Discard}
	err := s.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "exhub-clickhouse not found") || !strings.Contains(err.Error(), "make build") {
		t.Fatalf("err = %v", err)
	}
}

func TestPrefixWriterBoundsARunawayLine(t *testing.T) {
	out := &syncBuf{}
	s := &Stack{out: out}
	w := &prefixWriter{s: s, prefix: "x"}
	chunk := bytes.Repeat([]byte("a"), 10<<10)
	for i := 0; i < 10; i++ {
		if _, err := w.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if len(w.buf) > 64<<10 {
		t.Errorf("buffer grew to %d bytes", len(w.buf))
	}
	w.flush()
	if got := strings.Count(out.String(), "a"); got != 100<<10 {
		t.Errorf("lost output: %d of %d bytes", got, 100<<10)
	}
}

func TestRespPingAgainstAFakeServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 64)
		n, _ := c.Read(buf)
		if string(buf[:n]) == "PING\r\n" {
			_, _ = c.Write([]byte("+PONG\r\n"))
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := respPing(ctx, l.Addr().String()); err != nil {
		t.Fatal(err)
	}
	if err := respPing(ctx, "127.0.0.1:1"); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("closed port: err = %v", err)
	}
}

func TestReadyFileAppearsWhole(t *testing.T) {
	path := t.TempDir() + "/ready"
	if err := writeAtomic(path, []byte("http://127.0.0.1:8080\n")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "http://127.0.0.1:8080\n" {
		t.Fatalf("ready file = %q, %v", got, err)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("temporary file left behind: %v", err)
	}
}

// TestBFFIsToldEveryClickHousePort: moved ClickHouse ports reach the BFF, the HTTP one included (its readiness probes
// it; left out, the BFF would probe the default port: another stack's ClickHouse, or nothing).
func TestBFFIsToldEveryClickHousePort(t *testing.T) {
	t.Setenv("EXHUB_CLICKHOUSE_TCP_PORT", "19000")
	t.Setenv("EXHUB_CLICKHOUSE_HTTP_PORT", "18123")
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "ui", "build", "client"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "ui", "build", "client", "index.html"), []byte("<html></html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &Stack{cfg: defaultConfig(root)}
	svcs, err := s.services()
	if err != nil {
		t.Fatal(err)
	}
	for _, svc := range svcs {
		if svc.name != "bff" {
			continue
		}
		for _, want := range []string{"EXHUB_CLICKHOUSE_ADDR=127.0.0.1:19000", "EXHUB_CLICKHOUSE_HTTP_ADDR=127.0.0.1:18123"} {
			if !slices.Contains(svc.env, want) {
				t.Errorf("the BFF's environment lacks %s: %v", want, svc.env)
			}
		}
		return
	}
	t.Fatal("no bff service")
}
