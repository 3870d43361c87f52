package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// service is one child process of the stack.
type service struct {
	name  string
	path  string
	args  []string
	env   []string
	setup []*exec.Cmd // run to completion before the service starts (migrations)
	// prepare, when set, runs after every binary and port check passed, before anything starts.
	prepare func(svc *service) error
	// ready probes once; Start polls it until it succeeds or readyTimeout passes.
	ready        func(ctx context.Context) error
	readyTimeout time.Duration
	// hint is said when the binary is missing.
	hint string
}

type death struct {
	name string
	err  error
}

type proc struct {
	svc  *service
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has been waited for
	err  error
}

// Stack owns the child processes. Start and Stop are called from one goroutine; each child has one waiter
// goroutine owned by the Stack that ends when the child ends.
type Stack struct {
	cfg Config
	log *slog.Logger
	out io.Writer

	outMu    sync.Mutex
	procs    []*proc
	died     chan death
	stopping chan struct{}
	stopOnce sync.Once
}

// Died delivers the first child that exits while the stack is meant to run.
func (s *Stack) Died() <-chan death { return s.died }

func (s *Stack) services() ([]*service, error) {
	c := s.cfg
	var svcs []*service

	svcs = append(svcs, &service{
		name: "clickhouse",
		path: c.bin("exhub-clickhouse"),
		// The read-only analyst user may read the BFF's analytics database (its password: the launcher's
		// EXHUB_CLICKHOUSE_ANALYST_PASSWORD, passed through the environment, or the demo default).
		args: []string{"--path", c.data("clickhouse"), "--tcp-port", c.CHNativePort, "--http-port", c.CHHTTPPort,
			"--analyst-database", c.AnalyticsDB},
		ready: func(ctx context.Context) error {
			return httpProbe(ctx, "http://"+c.chHTTP()+"/ping", "Ok.")
		},
		readyTimeout: 90 * time.Second,
		hint:         "run `make build` (and `make deps` for the ClickHouse library)",
	})

	valkeyAddr := ""
	if !c.NoValkey {
		vk, err := findValkey()
		if err != nil {
			s.log.Warn("valkey-server is not installed: the BFF will use its in-process cache and fan-out fallback (single replica only); `make deps` installs it")
		} else {
			valkeyAddr = c.valkey()
			svcs = append(svcs, &service{
				name: "valkey",
				path: vk,
				args: []string{"--bind", "127.0.0.1", "--port", c.ValkeyPort, "--dir", c.data("valkey"),
					"--save", "", "--appendonly", "no", "--protected-mode", "yes", "--loglevel", "warning"},
				ready:        func(ctx context.Context) error { return respPing(ctx, c.valkey()) },
				readyTimeout: 15 * time.Second,
			})
		}
	}

	svcs = append(svcs, identityServices(c)...)

	svcs = append(svcs, &service{
		name: "emulators",
		path: c.bin("exhub-emulators"),
		args: []string{"--binance", c.BinanceEmuAddr, "--okx", c.OKXEmuAddr, "--seed", "1", "--history-days", "30"},
		ready: func(ctx context.Context) error {
			if err := httpProbe(ctx, "http://"+c.BinanceEmuAddr+"/-/ready", "ok"); err != nil {
				return err
			}
			return httpProbe(ctx, "http://"+c.OKXEmuAddr+"/-/ready", "ok")
		},
		readyTimeout: 60 * time.Second,
		hint:         "run `make build`",
	})

	// The plugins follow the emulators wherever they listen: their settings come from the emulators themselves,
	// asked once the binaries are known to exist (see prepare).
	svcs = append(svcs, &service{
		name: "bff",
		path: c.bin("exhub-bff"),
		args: []string{"--config", filepath.Join(c.Root, "bff", "exhub.yaml")},
		env: []string{
			"EXHUB_HTTP_ADDR=" + c.BFFAddr,
			"EXHUB_VALKEY_ADDR=" + valkeyAddr,
			"EXHUB_CLICKHOUSE_ADDR=" + c.chNative(),
			// The HTTP port too: the BFF's readiness probes it (else the default 127.0.0.1:8123, another stack's).
			"EXHUB_CLICKHOUSE_HTTP_ADDR=" + c.chHTTP(),
			"EXHUB_KRATOS_PUBLIC_URL=http://" + c.KratosPublicAddr,
			"EXHUB_KRATOS_ADMIN_URL=http://" + c.KratosAdminAddr,
			"EXHUB_AUTH_ALLOWED_ORIGINS=" + strings.Join(c.Origins(), ","),
			"EXHUB_DEMO_INBOX_URL=http://" + c.MailpitAddr,
			"EXHUB_PLUGIN_DIR=" + filepath.Join(c.BinDir, "plugins"),
		},
		prepare: func(svc *service) error {
			all, err := emulatorPluginSettings(c)
			if err != nil {
				return err
			}
			svc.env = append(svc.env, settingsEnv(all)...)
			// Exchange accounts: a demo key-encryption key kept in the data directory, and broker mode with the
			// emulators' master credentials, so every new member gets a funded sub-account on every exchange.
			masters, err := emulatorAccounts(c)
			if err != nil {
				return err
			}
			env, err := accountsEnv(c, masters)
			svc.env = append(svc.env, env...)
			return err
		},
		ready:        func(ctx context.Context) error { return httpProbe(ctx, "http://"+c.BFFAddr+"/readyz", "") },
		readyTimeout: 60 * time.Second,
		hint:         "run `make build`",
	})

	uiDir := filepath.Join(c.Root, "ui", "build", "client")
	if _, err := os.Stat(filepath.Join(uiDir, "index.html")); err != nil {
		return nil, fmt.Errorf("the UI is not built (%s/index.html missing): run `make build`", uiDir)
	}
	svcs = append(svcs, &service{
		name: "edge",
		path: c.bin("exhub-edge"),
		args: []string{"run", "--config", filepath.Join(c.Root, "edge", "Caddyfile"), "--adapter", "caddyfile"},
		env: []string{
			"EXHUB_EDGE_ADDR=" + c.EdgeAddr,
			"EXHUB_UI_DIR=" + uiDir,
			"EXHUB_BFF_ADDR=" + c.BFFAddr,
			"EXHUB_KRATOS_PUBLIC_ADDR=" + c.KratosPublicAddr,
			"EXHUB_VALKEY_ADDR=" + valkeyAddr,
			"EXHUB_DEMO_INBOX=on",
			"EXHUB_MAILPIT_ADDR=" + c.MailpitAddr,
			"XDG_DATA_HOME=" + c.data("caddy/data"),
			"XDG_CONFIG_HOME=" + c.data("caddy/config"),
		},
		ready:        func(ctx context.Context) error { return httpProbe(ctx, c.PublicURL()+"/", "") },
		readyTimeout: 30 * time.Second,
		hint:         "run `make build` (the edge takes a minute or two to build the first time)",
	})
	return svcs, nil
}

// identityServices are the demo inbox (Mailpit) and Kratos, in that order: Kratos' courier delivers to the inbox
// from its first message on. Kratos migrates its database before it starts.
func identityServices(c Config) []*service {
	// Kratos reads a copy of bff/kratos/kratos.yml whose web hooks go to this stack's BFF (Kratos' environment
	// overrides cannot reach into the hook lists); relative paths in it still resolve against the root, where
	// Kratos runs.
	kratosCfg := c.data("kratos/kratos.yml")
	kEnv := kratosEnv(c)
	migrate := exec.Command(c.bin("kratos"), "migrate", "sql", "-e", "--yes", "--config", kratosCfg)
	migrate.Env = append(os.Environ(), kEnv...)
	return []*service{{
		name: "mailpit",
		path: c.bin("mailpit"),
		args: mailpitArgs(c),
		ready: func(ctx context.Context) error {
			return httpProbe(ctx, "http://"+c.MailpitAddr+"/readyz", "")
		},
		readyTimeout: 30 * time.Second,
		hint:         "run `make build` (it installs Mailpit pinned: scripts/tools.sh mailpit)",
	}, {
		name:  "kratos",
		path:  c.bin("kratos"),
		args:  []string{"serve", "--config", kratosCfg, "--dev", "--watch-courier", "--sqa-opt-out"},
		env:   kEnv,
		setup: []*exec.Cmd{migrate},
		prepare: func(*service) error {
			return writeKratosConfig(filepath.Join(c.Root, "bff", "kratos", "kratos.yml"), kratosCfg, c.BFFAddr)
		},
		ready: func(ctx context.Context) error {
			return httpProbe(ctx, "http://"+c.KratosAdminAddr+"/admin/health/ready", "")
		},
		readyTimeout: 60 * time.Second,
		hint:         "run `make build` (Kratos takes a few minutes to build the first time)",
	}}
}

// kratosHookBase is the BFF address the web hooks of bff/kratos/kratos.yml are written for.
const kratosHookBase = "http://127.0.0.1:8090/internal/kratos/hooks/"

// writeKratosConfig copies Kratos' configuration with its web hooks pointed at the BFF on bffAddr.
func writeKratosConfig(src, dst, bffAddr string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("kratos config: %w", err)
	}
	if !bytes.Contains(b, []byte(kratosHookBase)) {
		return fmt.Errorf("kratos config: %s has no web hook to %s; the stack cannot point them at its BFF", src, kratosHookBase)
	}
	b = bytes.ReplaceAll(b, []byte(kratosHookBase), []byte("http://"+bffAddr+"/internal/kratos/hooks/"))
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		return fmt.Errorf("kratos config: %w", err)
	}
	return nil
}

// mailpitArgs runs the demo inbox on loopback with its messages under .data/mailpit, at most 500 kept (the oldest
// go first), without reverse DNS lookups or release checks (demo mode needs no internet).
func mailpitArgs(c Config) []string {
	return []string{"--smtp", c.MailpitSMTPAddr, "--listen", c.MailpitAddr, "--database", c.data("mailpit/mailpit.db"),
		"--max", "500", "--smtp-disable-rdns", "--disable-version-check", "--label", "exhub demo inbox"}
}

// kratosEnv overrides bff/kratos/kratos.yml for this stack: listeners, database, every browser-facing URL on the
// edge's address, e-mail to the demo inbox's SMTP port and SMS through the HTTP courier channel to its send API.
func kratosEnv(c Config) []string {
	ui := c.PublicURL()
	channels, _ := json.Marshal([]map[string]any{{
		"id": "sms", "type": "http",
		"request_config": map[string]any{
			"url":     "http://" + c.MailpitAddr + "/api/v1/send",
			"method":  "POST",
			"body":    "file://" + filepath.ToSlash(filepath.Join(c.Root, "bff", "kratos", "sms.jsonnet")),
			"headers": map[string]string{"Content-Type": "application/json"},
		},
	}})
	returnURLs, _ := json.Marshal(c.Origins())
	return []string{
		"DSN=sqlite://" + c.data("kratos/kratos.sqlite") + "?_fk=true&mode=rwc&_journal_mode=WAL&_txlock=immediate&_busy_timeout=60000",
		"SERVE_PUBLIC_HOST=" + host(c.KratosPublicAddr), "SERVE_PUBLIC_PORT=" + port(c.KratosPublicAddr),
		"SERVE_ADMIN_HOST=" + host(c.KratosAdminAddr), "SERVE_ADMIN_PORT=" + port(c.KratosAdminAddr),
		"SERVE_PUBLIC_BASE_URL=" + ui + "/.ory/",
		"SERVE_ADMIN_BASE_URL=http://" + c.KratosAdminAddr + "/",
		"SELFSERVICE_DEFAULT_BROWSER_RETURN_URL=" + ui + "/",
		"SELFSERVICE_ALLOWED_RETURN_URLS=" + string(returnURLs),
		"SELFSERVICE_FLOWS_ERROR_UI_URL=" + ui + "/error",
		"SELFSERVICE_FLOWS_LOGIN_UI_URL=" + ui + "/login",
		"SELFSERVICE_FLOWS_REGISTRATION_UI_URL=" + ui + "/regist",
		"SELFSERVICE_FLOWS_SETTINGS_UI_URL=" + ui + "/dashboard/security",
		"SELFSERVICE_FLOWS_RECOVERY_UI_URL=" + ui + "/forgotPassword_A",
		"SELFSERVICE_FLOWS_VERIFICATION_UI_URL=" + ui + "/otp",
		"SELFSERVICE_FLOWS_VERIFICATION_AFTER_DEFAULT_BROWSER_RETURN_URL=" + ui + "/",
		"SELFSERVICE_FLOWS_LOGOUT_AFTER_DEFAULT_BROWSER_RETURN_URL=" + ui + "/login",
		"COURIER_SMTP_CONNECTION_URI=smtp://" + c.MailpitSMTPAddr + "/?disable_starttls=true",
		"COURIER_CHANNELS=" + string(channels),
		"LOG_FORMAT=json", "LOG_LEVEL=warning", "SQA_OPT_OUT=true",
	}
}

// Start checks everything it can before starting anything, then starts the services in order, each ready before
// the next. On error the caller calls Stop.
func (s *Stack) Start(ctx context.Context) error {
	s.died = make(chan death, 8)
	s.stopping = make(chan struct{})
	svcs, err := s.services()
	if err != nil {
		return err
	}
	for _, svc := range svcs {
		if _, err := os.Stat(svc.path); err != nil {
			return fmt.Errorf("%s: %s not found: %s", svc.name, svc.path, svc.hint)
		}
	}
	for _, p := range s.cfg.ports() {
		if err := portFree(p[1]); err != nil {
			return fmt.Errorf("%s: %s is already in use (is another exhub running? stop it, or move this one with the EXHUB_*_ADDR / _PORT variables in the README)", p[0], p[1])
		}
	}
	if err := os.MkdirAll(s.cfg.DataDir, 0o755); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	for _, d := range []string{"clickhouse", "valkey", "mailpit", "kratos", "caddy/data", "caddy/config"} {
		if err := os.MkdirAll(s.cfg.data(d), 0o755); err != nil {
			return fmt.Errorf("data dir: %w", err)
		}
	}
	for _, svc := range svcs {
		if svc.prepare != nil {
			if err := svc.prepare(svc); err != nil {
				return err
			}
		}
	}
	s.log.Info("starting exhub", "root", s.cfg.Root, "ports", s.cfg.String())
	return s.startAll(ctx, svcs)
}

// startAll starts services in order, each ready before the next.
func (s *Stack) startAll(ctx context.Context, svcs []*service) error {
	if s.died == nil {
		s.died = make(chan death, 8)
		s.stopping = make(chan struct{})
	}
	for _, svc := range svcs {
		if err := s.startOne(ctx, svc); err != nil {
			return err
		}
	}
	return nil
}

func (s *Stack) startOne(ctx context.Context, svc *service) error {
	t0 := time.Now()
	for _, setup := range svc.setup {
		setup.Dir = s.cfg.Root
		var buf bytes.Buffer
		setup.Stdout, setup.Stderr = &buf, &buf
		if err := setup.Run(); err != nil {
			return fmt.Errorf("%s: %s failed: %w\n%s", svc.name, strings.Join(setup.Args[1:], " "), err, lastLines(buf.String(), 20))
		}
	}
	cmd := exec.Command(svc.path, svc.args...)
	cmd.Dir = s.cfg.Root
	cmd.Env = append(os.Environ(), svc.env...)
	pw := &prefixWriter{s: s, prefix: svc.name}
	cmd.Stdout, cmd.Stderr = pw, pw
	// Own process group: a terminal Ctrl-C reaches only the supervisor, which stops children in order. Pdeathsig
	// ends a child if the supervisor itself is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: start: %w", svc.name, err)
	}
	p := &proc{svc: svc, cmd: cmd, done: make(chan struct{})}
	s.procs = append(s.procs, p)
	go func() { // owned by the Stack: ends when the child ends
		p.err = cmd.Wait()
		pw.flush()
		close(p.done)
		select {
		case <-s.stopping:
		default:
			select {
			case s.died <- death{name: svc.name, err: exitErr(p.err)}:
			default:
			}
		}
	}()

	deadline := time.Now().Add(svc.readyTimeout)
	var last error
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		last = svc.ready(pctx)
		cancel()
		if last == nil {
			s.log.Info("ready", "service", svc.name, "pid", cmd.Process.Pid, "after", time.Since(t0).Round(time.Millisecond).String())
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.done:
			return fmt.Errorf("%s exited during start-up (%v); its log is above", svc.name, exitErr(p.err))
		case <-time.After(150 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s: %v", svc.name, svc.readyTimeout, last)
		}
	}
}

// Stop ends the children in reverse start order: SIGTERM, then SIGKILL to the child's process group after 15 s.
func (s *Stack) Stop() {
	s.stopOnce.Do(func() {
		if s.stopping != nil {
			close(s.stopping)
		}
		for i := len(s.procs) - 1; i >= 0; i-- {
			p := s.procs[i]
			select {
			case <-p.done:
				continue
			default:
			}
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(15 * time.Second):
				s.log.Warn("did not stop in time; killing", "service", p.svc.name, "pid", p.cmd.Process.Pid)
				_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
				<-p.done
			}
			s.log.Info("stopped", "service", p.svc.name)
		}
	})
}

// emulatorPluginSettings asks exhub-emulators for each plugin's settings at the configured addresses.
func emulatorPluginSettings(c Config) (map[string]map[string]string, error) {
	out, err := exec.Command(c.bin("exhub-emulators"), "--print-settings", "--binance", c.BinanceEmuAddr, "--okx", c.OKXEmuAddr).Output()
	if err != nil {
		return nil, fmt.Errorf("emulators: %s --print-settings: %w (run `make build`)", c.bin("exhub-emulators"), err)
	}
	var all map[string]map[string]string
	if err := json.Unmarshal(out, &all); err != nil {
		return nil, fmt.Errorf("emulators: settings: %w", err)
	}
	return all, nil
}

// emulatorAccounts asks the emulators for their demo paper accounts' credentials (--print-accounts: api_key,
// api_secret, passphrase, and broker "true" for the masters that may make sub-accounts).
func emulatorAccounts(c Config) (map[string]map[string]string, error) {
	out, err := exec.Command(c.bin("exhub-emulators"), "--print-accounts").Output()
	if err != nil {
		return nil, fmt.Errorf("emulators: %s --print-accounts: %w (run `make build`)", c.bin("exhub-emulators"), err)
	}
	var all map[string]map[string]string
	if err := json.Unmarshal(out, &all); err != nil {
		return nil, fmt.Errorf("emulators: accounts: %w", err)
	}
	return all, nil
}

// settingsEnv turns the emulators' plugin settings into EXHUB_EXCHANGE_<SLUG>_SETTINGS variables for the BFF.
func settingsEnv(all map[string]map[string]string) []string {
	var env []string
	for _, slug := range slices.Sorted(maps.Keys(all)) {
		kv := make([]string, 0, len(all[slug]))
		for _, k := range slices.Sorted(maps.Keys(all[slug])) {
			kv = append(kv, k+"="+all[slug][k])
		}
		env = append(env, "EXHUB_EXCHANGE_"+strings.ToUpper(slug)+"_SETTINGS="+strings.Join(kv, ","))
	}
	return env
}

func exitErr(err error) error {
	if err == nil {
		return errors.New("exit status 0")
	}
	return err
}

func findValkey() (string, error) {
	for _, name := range []string{"valkey-server", "redis-server"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("valkey-server not found")
}

func portFree(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return l.Close()
}

func httpProbe(ctx context.Context, url, want string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d: %s", url, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	if want != "" && !strings.Contains(string(body), want) {
		return fmt.Errorf("%s: unexpected answer %q", url, body)
	}
	return nil
}

func respPing(ctx context.Context, addr string) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("unexpected PING answer %q", line)
	}
	return nil
}

func host(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return h
}

func port(addr string) string {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	return p
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// prefixWriter writes each complete line of a child's output as "name | line".
type prefixWriter struct {
	s      *Stack
	prefix string
	mu     sync.Mutex
	buf    []byte
}

func (w *prefixWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.emit(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 64<<10 { // a runaway line without a newline: emit it rather than grow without bound
		w.emit(w.buf)
		w.buf = w.buf[:0]
	}
	return len(b), nil
}

func (w *prefixWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.emit(w.buf)
		w.buf = nil
	}
}

func (w *prefixWriter) emit(line []byte) {
	w.s.outMu.Lock()
	defer w.s.outMu.Unlock()
	fmt.Fprintf(w.s.out, "%-10s | %s\n", w.prefix, bytes.TrimRight(line, "\r"))
}
