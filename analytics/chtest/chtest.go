// Package chtest starts real local ClickHouse servers for integration tests: Start builds cmd/exhub-clickhouse
// (once per test binary), runs it as a child process on free loopback ports with a temporary data directory, waits
// until it answers, and stops it by PID when the test ends. A missing ClickHouse library fails the test with the
// install command; it never skips.
//
//	srv := chtest.Start(t)
//	db := srv.NewDatabase(t)
//	err := srv.Conn.Exec(ctx, "CREATE TABLE "+db+".t (...) ENGINE = MergeTree ORDER BY ...")
package chtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/exhub/exhub/analytics/chserver"
)

// BinEnv names a prebuilt exhub-clickhouse binary to use instead of building one.
const BinEnv = "EXHUB_CLICKHOUSE_BIN"

const (
	readyTimeout = 60 * time.Second
	stopTimeout  = 20 * time.Second
)

// Server is a running exhub-clickhouse child process.
type Server struct {
	TCPAddr  string      // native protocol, host:port
	HTTPAddr string      // HTTP interface, host:port
	DataDir  string      // the server's data directory
	Conn     driver.Conn // an open native-protocol connection to the default database, closed by Stop
	Proc     *Process
}

// Start launches a server with a fresh data directory and returns it with an open native connection. The server is
// stopped when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartAt(t, t.TempDir())
}

// StartAt launches a server on dataDir (reusing whatever an earlier server left there).
func StartAt(t testing.TB, dataDir string) *Server {
	t.Helper()
	p := Launch(t, dataDir)
	s := &Server{TCPAddr: p.TCPAddr, HTTPAddr: p.HTTPAddr, DataDir: dataDir, Proc: p}
	s.Conn = s.open(t, clickhouse.Native, s.TCPAddr)
	t.Cleanup(func() { s.Stop(t) })
	return s
}

// OpenHTTP returns a clickhouse-go connection over the HTTP interface, closed when the test ends.
func (s *Server) OpenHTTP(t testing.TB) driver.Conn {
	t.Helper()
	c := s.open(t, clickhouse.HTTP, s.HTTPAddr)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func (s *Server) open(t testing.TB, proto clickhouse.Protocol, addr string) driver.Conn {
	t.Helper()
	c, err := clickhouse.Open(&clickhouse.Options{
		Protocol:    proto,
		Addr:        []string{addr},
		Auth:        clickhouse.Auth{Database: "default", Username: "default"},
		DialTimeout: 5 * time.Second,
		ReadTimeout: 60 * time.Second,
	})
	if err != nil {
		t.Fatalf("chtest: open %s connection to %s: %v", proto, addr, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Ping(ctx); err != nil {
		_ = c.Close()
		t.Fatalf("chtest: ping %s connection to %s: %v", proto, addr, err)
	}
	return c
}

// HTTPURL is the base URL of the HTTP interface.
func (s *Server) HTTPURL() string { return "http://" + s.HTTPAddr }

var dbSeq atomic.Int64

// NewDatabase creates a database with a unique name on the server and returns the name.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t_%d_%d", os.Getpid(), dbSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("chtest: create database: %v", err)
	}
	return name
}

// Stop closes the connection and stops the server (SIGTERM, then SIGKILL after a bound). Safe to call twice.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if s.Conn != nil {
		_ = s.Conn.Close()
	}
	s.Proc.Stop(t)
}

// Process is an exhub-clickhouse child process.
type Process struct {
	TCPAddr  string
	HTTPAddr string
	PID      int
	LogPath  string // the child's combined stdout and stderr

	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	stopMu  sync.Mutex
	stopped bool
}

// Launch starts exhub-clickhouse on dataDir and free loopback ports and waits until /ping answers. It does not open
// a connection. The process is stopped when the test ends.
func Launch(t testing.TB, dataDir string) *Process {
	t.Helper()
	bin := Binary(t)
	lib := Lib(t)
	logDir, err := os.MkdirTemp("", "exhub-chtest-log-")
	if err != nil {
		t.Fatalf("chtest: %v", err)
	}
	logPath := filepath.Join(logDir, "clickhouse.log")
	out, err := os.Create(logPath)
	if err != nil {
		t.Fatalf("chtest: %v", err)
	}
	ports := FreePorts(t, 2)
	p := &Process{
		TCPAddr:  net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])),
		HTTPAddr: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1])),
		LogPath:  logPath,
		exited:   make(chan struct{}),
	}
	p.cmd = exec.Command(bin, "--path", dataDir, "--tcp-port", strconv.Itoa(ports[0]),
		"--http-port", strconv.Itoa(ports[1]), "--lib", lib)
	p.cmd.Stdout = out
	p.cmd.Stderr = out
	started := time.Now()
	if err := p.cmd.Start(); err != nil {
		_ = out.Close()
		t.Fatalf("chtest: start %s: %v", bin, err)
	}
	p.PID = p.cmd.Process.Pid
	// Owned by the Process: ends when the child exits, which Stop guarantees.
	go func() {
		p.waitErr = p.cmd.Wait()
		_ = out.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.Stop(t)
		if t.Failed() {
			t.Logf("chtest: clickhouse output (%s):\n%s", logPath, tail(logPath, 8<<10))
		}
		_ = os.RemoveAll(logDir)
	})
	if err := p.waitReady(); err != nil {
		t.Fatalf("chtest: %v\n%s", err, tail(logPath, 8<<10))
	}
	t.Logf("chtest: clickhouse pid %d ready in %s (tcp %s, http %s)", p.PID, time.Since(started).Round(time.Millisecond), p.TCPAddr, p.HTTPAddr)
	return p
}

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// ExitErr is the process's exit status after Exited is closed.
func (p *Process) ExitErr() error { <-p.exited; return p.waitErr }

func (p *Process) waitReady() error {
	deadline := time.Now().Add(readyTimeout)
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for {
		if Ping(client, p.HTTPAddr) {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("exhub-clickhouse exited before it was ready: %v", p.waitErr)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("exhub-clickhouse (pid %d) did not answer /ping within %s", p.PID, readyTimeout)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// Ping reports whether the HTTP interface at addr answers GET /ping with "Ok.".
func Ping(client *http.Client, addr string) bool {
	resp, err := client.Get("http://" + addr + "/ping")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64))
	return err == nil && resp.StatusCode == http.StatusOK && strings.TrimSpace(string(body)) == "Ok."
}

// Stop sends SIGTERM to the process by PID and waits for it to exit, sending SIGKILL after a bound.
func (p *Process) Stop(t testing.TB) {
	t.Helper()
	p.stopMu.Lock()
	defer p.stopMu.Unlock()
	if p.stopped {
		return
	}
	p.stopped = true
	select {
	case <-p.exited:
		return
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("chtest: SIGTERM pid %d: %v", p.PID, err)
	}
	select {
	case <-p.exited:
	case <-time.After(stopTimeout):
		t.Errorf("chtest: pid %d did not stop within %s after SIGTERM; killing it", p.PID, stopTimeout)
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// FreePorts returns n distinct free TCP ports on 127.0.0.1.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("chtest: free port: %v", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// Lib returns the ClickHouse library path, failing the test with the install command when it is missing.
func Lib(t testing.TB) string {
	t.Helper()
	lib, err := chserver.FindLib()
	if err != nil {
		t.Fatalf("chtest: %v", err)
	}
	return lib
}

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// Binary returns the path of an exhub-clickhouse binary: $EXHUB_CLICKHOUSE_BIN when set, else one built from this
// checkout once per test binary (go's build cache makes repeat builds a link step).
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(BinEnv); p != "" {
		return p
	}
	buildOnce.Do(func() { buildPath, buildErr = build() })
	if buildErr != nil {
		t.Fatalf("chtest: %v", buildErr)
	}
	return buildPath
}

func build() (string, error) {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("cannot locate the chtest source to find the module")
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("exhub-chtest-%d", os.Getuid()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("build dir: %w", err)
	}
	// Build to a private name, then rename: test binaries of several packages may build at the same time.
	tmp := filepath.Join(dir, fmt.Sprintf("exhub-clickhouse.%d", os.Getpid()))
	final := filepath.Join(dir, "exhub-clickhouse")
	cmd := exec.Command("go", "build", "-o", tmp, "github.com/exhub/exhub/analytics/cmd/exhub-clickhouse")
	cmd.Dir = filepath.Dir(self)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build exhub-clickhouse: %w\n%s", err, out.String())
	}
	if err := os.Rename(tmp, final); err != nil {
		return "", fmt.Errorf("install test binary: %w", err)
	}
	return final, nil
}

func tail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > n {
		_, _ = f.Seek(st.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}
