// Package chserver runs a real ClickHouse server inside the current process from the ClickHouse engine library
// (libchdb.so, installed by `npm ci` in analytics/clickhouse). It loads the library with purego (no cgo) and runs
// clickhouse-local with a data path and TCP/HTTP ports; the command line starts the TCP and HTTP listeners and then
// runs a long "holding" query, and the server serves clients for as long as that query runs. Stopping kills the
// holding query, after which the engine shuts down and the process may exit.
//
// The engine can be started only once per process; to restart, start a new process (cmd/exhub-clickhouse re-executes
// itself when the holding query ends on its own). When the holding query ends while clients still hold connections,
// the engine shuts the server down forcefully and exits the process itself (with status 0 or 1) instead of returning
// to the caller; the data already written is on disk either way.
package chserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// HoldQueryID is the query id of the holding query.
const HoldQueryID = "exhub-clickhouse-hold"

// holdSleep is the pause per row of the holding query; it bounds how long a KILL QUERY takes to land.
const holdSleep = "0.5"

// holdRows makes the holding query run for thousands of years.
const holdRows uint64 = 1 << 40

var (
	// ErrPortInUse reports that a configured port is already bound by another process.
	ErrPortInUse = errors.New("port already in use")
	// ErrPathInUse reports that another ClickHouse server holds the data directory.
	ErrPathInUse = errors.New("data directory in use by another ClickHouse server")
	// ErrHoldEnded reports that the holding query ended without being asked to, so the server stopped listening.
	ErrHoldEnded = errors.New("ClickHouse holding query ended")
	// ErrStartedBefore reports a second start in one process, which the engine does not support.
	ErrStartedBefore = errors.New("the ClickHouse engine already ran in this process; start a new process instead")
)

// Config says where the server keeps its data and where it listens.
type Config struct {
	Path         string        // data directory, created if missing (required)
	ListenHost   string        // loopback address to bind; default 127.0.0.1
	TCPPort      int           // native protocol port (required)
	HTTPPort     int           // HTTP interface port (required)
	LibPath      string        // libchdb.so; empty means FindLib()
	ReadyTimeout time.Duration // how long to wait for /ping; default 60s
	StopTimeout  time.Duration // how long to wait for the engine to stop; default 15s
	Logger       *slog.Logger  // default slog.Default()
	// The read-only analyst user: readonly = 1, SELECT on AnalystDatabase only. Defaults: user "analyst",
	// password DefaultAnalystPassword, database "exhub".
	AnalystUser, AnalystPassword, AnalystDatabase string
}

// DefaultAnalystPassword is the demo password of the read-only analyst user; set another one with
// --analyst-password (EXHUB_CLICKHOUSE_ANALYST_PASSWORD) for anything but a demo.
const DefaultAnalystPassword = "analyst"

func (c *Config) normalize() error {
	if c.Path == "" {
		return errors.New("clickhouse: data path is required")
	}
	abs, err := filepath.Abs(c.Path)
	if err != nil {
		return fmt.Errorf("clickhouse: data path %q: %w", c.Path, err)
	}
	c.Path = abs
	if c.ListenHost == "" {
		c.ListenHost = "127.0.0.1"
	}
	if !isLoopback(c.ListenHost) {
		return fmt.Errorf("clickhouse: listen host %q is not a loopback address (the server has a password-less default user)", c.ListenHost)
	}
	for _, p := range []struct {
		name string
		port int
	}{{"tcp", c.TCPPort}, {"http", c.HTTPPort}} {
		if p.port < 1 || p.port > 65535 {
			return fmt.Errorf("clickhouse: %s port %d out of range 1-65535", p.name, p.port)
		}
	}
	if c.TCPPort == c.HTTPPort {
		return fmt.Errorf("clickhouse: tcp and http ports are both %d", c.TCPPort)
	}
	if c.AnalystUser == "" {
		c.AnalystUser = "analyst"
	}
	if c.AnalystPassword == "" {
		c.AnalystPassword = DefaultAnalystPassword
	}
	if c.AnalystDatabase == "" {
		c.AnalystDatabase = "exhub"
	}
	if !identRe.MatchString(c.AnalystUser) || c.AnalystUser == "default" {
		return fmt.Errorf("clickhouse: analyst user %q: use letters, digits and underscores, not \"default\"", c.AnalystUser)
	}
	if !identRe.MatchString(c.AnalystDatabase) {
		return fmt.Errorf("clickhouse: analyst database %q: use letters, digits and underscores", c.AnalystDatabase)
	}
	if c.ReadyTimeout <= 0 {
		c.ReadyTimeout = 60 * time.Second
	}
	if c.StopTimeout <= 0 {
		c.StopTimeout = 15 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// TCPAddr is host:port of the native protocol.
func (c Config) TCPAddr() string { return net.JoinHostPort(c.ListenHost, strconv.Itoa(c.TCPPort)) }

// HTTPAddr is host:port of the HTTP interface.
func (c Config) HTTPAddr() string { return net.JoinHostPort(c.ListenHost, strconv.Itoa(c.HTTPPort)) }

// Args is the clickhouse-local command line that turns the engine into a listening server.
func (c Config) Args() []string {
	hold := fmt.Sprintf("SELECT sleepEachRow(%s) FROM numbers(%d) SETTINGS max_block_size = 1 FORMAT Null", holdSleep, holdRows)
	return []string{
		"clickhouse",
		"--path=" + c.Path,
		"--listen_host=" + c.ListenHost,
		"--tcp_port=" + strconv.Itoa(c.TCPPort),
		"--http_port=" + strconv.Itoa(c.HTTPPort),
		"--config-file=" + c.ConfigFile(),
		"--query_id=" + HoldQueryID,
		"--query", "SYSTEM START LISTEN TCP; SYSTEM START LISTEN HTTP; " + hold,
	}
}

// Server is a running engine. Stop it with Stop; Done is closed when the engine has returned.
type Server struct {
	cfg     Config
	started time.Time
	done    chan struct{}
	msg     string // engine message, valid after done
	elapsed time.Duration
	stopped atomic.Bool
	stopMu  sync.Mutex
}

var startedOnce atomic.Bool

// noKeepAlive is used for the launcher's own requests: a client connection still open when the holding query ends
// makes the engine end the whole process instead of returning.
var noKeepAlive = &http.Transport{DisableKeepAlives: true}

// Start validates cfg, checks the ports and the data directory, starts the engine and waits until /ping answers.
// It returns a clear error (wrapping ErrLibMissing, ErrPortInUse, ErrPathInUse...) when the server cannot start.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if cfg.LibPath == "" {
		p, err := FindLib()
		if err != nil {
			return nil, err
		}
		cfg.LibPath = p
	} else if err := CheckLib(cfg.LibPath); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Path, 0o755); err != nil {
		return nil, fmt.Errorf("clickhouse: create data path: %w", err)
	}
	if err := writeAccessConfig(cfg); err != nil {
		return nil, err
	}
	if err := checkPorts(cfg); err != nil {
		return nil, err
	}
	if err := checkPathFree(cfg.Path); err != nil {
		return nil, err
	}
	eng, err := loadEngine(cfg.LibPath)
	if err != nil {
		return nil, err
	}
	if !startedOnce.CompareAndSwap(false, true) {
		return nil, ErrStartedBefore
	}

	s := &Server{cfg: cfg, started: time.Now(), done: make(chan struct{})}
	log.Info("clickhouse starting", "path", cfg.Path, "tcp", cfg.TCPAddr(), "http", cfg.HTTPAddr(), "lib", cfg.LibPath)
	args := cfg.Args()
	// The engine call blocks for the server's whole life. This goroutine is owned by the Server: it ends when the
	// holding query ends, which Stop causes (or the process exits).
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		msg := eng.runCmdline(args)
		s.msg = strings.TrimSpace(msg)
		s.elapsed = time.Since(s.started)
		close(s.done)
	}()

	if err := s.waitReady(ctx); err != nil {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.StopTimeout)
		defer cancel()
		_ = s.Stop(stopCtx)
		return nil, err
	}
	log.Info("clickhouse ready", "tcp", cfg.TCPAddr(), "http", cfg.HTTPAddr(),
		"ready_ms", time.Since(s.started).Milliseconds())
	return s, nil
}

// Config returns the effective configuration (absolute path, library path filled in).
func (s *Server) Config() Config { return s.cfg }

// Done is closed when the engine has returned (after Stop, or when the holding query ended on its own).
func (s *Server) Done() <-chan struct{} { return s.done }

// Err is nil while the server runs and after a requested stop; it wraps ErrHoldEnded when the holding query ended on
// its own.
func (s *Server) Err() error {
	select {
	case <-s.done:
	default:
		return nil
	}
	if s.stopped.Load() {
		return nil
	}
	if s.msg != "" {
		return fmt.Errorf("%w after %s: %s", ErrHoldEnded, s.elapsed.Round(time.Millisecond), s.msg)
	}
	return fmt.Errorf("%w after %s", ErrHoldEnded, s.elapsed.Round(time.Millisecond))
}

func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ReadyTimeout)
	defer cancel()
	client := &http.Client{Timeout: 300 * time.Millisecond, Transport: noKeepAlive}
	url := "http://" + s.cfg.HTTPAddr() + "/ping"
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		if ping(ctx, client, url) {
			return nil
		}
		select {
		case <-s.done:
			if s.msg != "" {
				return fmt.Errorf("clickhouse stopped during startup: %s", s.msg)
			}
			return errors.New("clickhouse stopped during startup (see the ClickHouse message above)")
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("clickhouse: %s did not answer within %s", url, s.cfg.ReadyTimeout)
			}
			return fmt.Errorf("clickhouse: waiting for readiness: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// Ping reports whether url answers "Ok.".
func ping(ctx context.Context, client *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64))
	return err == nil && resp.StatusCode == http.StatusOK && strings.TrimSpace(string(body)) == "Ok."
}

// Stop kills the holding query and waits (bounded by ctx) for the engine to shut down. Safe to call more than once.
func (s *Server) Stop(ctx context.Context) error {
	s.stopMu.Lock()
	defer s.stopMu.Unlock()
	select {
	case <-s.done:
		return nil
	default:
	}
	s.stopped.Store(true)
	t0 := time.Now()
	// The kill is retried: right after start the holding query may not be registered yet.
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := s.killHold(ctx); err != nil {
			s.cfg.Logger.Debug("clickhouse kill holding query", "err", err)
		}
		select {
		case <-s.done:
			s.cfg.Logger.Info("clickhouse stopped", "stop_ms", time.Since(t0).Milliseconds())
			return nil
		case <-ctx.Done():
			return fmt.Errorf("clickhouse: engine did not stop: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

func (s *Server) killHold(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	q := "KILL QUERY WHERE query_id = '" + HoldQueryID + "' SYNC FORMAT Null"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+s.cfg.HTTPAddr()+"/", strings.NewReader(q))
	if err != nil {
		return fmt.Errorf("build kill request: %w", err)
	}
	resp, err := (&http.Client{Transport: noKeepAlive}).Do(req)
	if err != nil {
		return fmt.Errorf("kill request: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("kill request: %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// Run starts the server, keeps it until ctx is cancelled, then stops it. It returns nil after a requested stop and an
// error wrapping ErrHoldEnded when the holding query ended on its own.
func Run(ctx context.Context, cfg Config) error {
	s, err := Start(ctx, cfg)
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.StopTimeout)
		defer cancel()
		return s.Stop(stopCtx)
	case <-s.Done():
		return s.Err()
	}
}

func checkPorts(cfg Config) error {
	for _, p := range []struct {
		name string
		addr string
		flag string
	}{{"native tcp", cfg.TCPAddr(), "--tcp-port"}, {"http", cfg.HTTPAddr(), "--http-port"}} {
		l, err := net.Listen("tcp", p.addr)
		if err != nil {
			if errors.Is(err, syscall.EADDRINUSE) {
				return fmt.Errorf("clickhouse: %s port %s: %w by another process: stop it or pick another with %s", p.name, p.addr, ErrPortInUse, p.flag)
			}
			return fmt.Errorf("clickhouse: cannot bind %s port %s: %w", p.name, p.addr, err)
		}
		if err := l.Close(); err != nil {
			return fmt.Errorf("clickhouse: release probe on %s: %w", p.addr, err)
		}
	}
	return nil
}

// checkPathFree takes and releases the same lock ClickHouse takes on <path>/status, so a second server on one data
// directory fails with a clear message instead of a ClickHouse stack of errors.
func checkPathFree(path string) error {
	status := filepath.Join(path, "status")
	f, err := os.OpenFile(status, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("clickhouse: open %s: %w", status, err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			owner, _ := os.ReadFile(status)
			pid := ""
			for _, line := range strings.Split(string(owner), "\n") {
				if v, ok := strings.CutPrefix(line, "PID: "); ok {
					pid = " (pid " + strings.TrimSpace(v) + ")"
				}
			}
			return fmt.Errorf("clickhouse: %s: %w%s", path, ErrPathInUse, pid)
		}
		return fmt.Errorf("clickhouse: lock %s: %w", status, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		return fmt.Errorf("clickhouse: unlock %s: %w", status, err)
	}
	return nil
}
