// Package kratostest starts a real Ory Kratos server for tests, alone (Start)
// or with a real Mailpit inbox receiving its e-mail and SMS (StartWithInbox).
//
// It builds nothing: it runs the binary named by EXHUB_KRATOS_BIN, or
// bin/kratos at the repository root, with the repository's configuration
// (bff/kratos/kratos.yml) on free loopback ports and a fresh SQLite database in
// a temporary directory; the inbox runs EXHUB_MAILPIT_BIN or bin/mailpit. A
// missing binary fails the test with the command that provides it.
package kratostest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BinEnv names the environment variable that overrides the Kratos binary path.
const BinEnv = "EXHUB_KRATOS_BIN"

// BuildHint is the command that builds the Kratos binary, from the repository root.
const BuildHint = "make build (or: cd bff/kratos && CGO_ENABLED=1 go build -tags sqlite -o ../../bin/kratos .)"

const (
	rootModule   = "module github.com/exhub/exhub\n"
	configPath   = "bff/kratos/kratos.yml"
	schemaPath   = "bff/kratos/identity.schema.json"
	smsBodyPath  = "bff/kratos/sms.jsonnet"
	readyTimeout = 30 * time.Second
	stopTimeout  = 10 * time.Second
)

// Server is a running Kratos instance owned by one test.
type Server struct {
	// PublicURL is the public API base, e.g. http://127.0.0.1:41234 (no trailing slash).
	PublicURL string
	// AdminURL is the admin API base (no trailing slash).
	AdminURL string
	// Dir holds the database and the server log.
	Dir string
	// LogPath is the file receiving the server's stdout and stderr.
	LogPath string

	cmd  *exec.Cmd
	done chan struct{}
}

// RepoRoot walks up from the working directory to the hub module's root.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(b), rootModule) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repository root (go.mod of github.com/exhub/exhub) not found above the working directory")
		}
		dir = parent
	}
}

// Binary returns the Kratos binary to run: $EXHUB_KRATOS_BIN or <root>/bin/kratos.
func Binary(root string) (string, error) {
	path := os.Getenv(BinEnv)
	if path == "" {
		path = filepath.Join(root, "bin", "kratos")
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("kratos binary %s: %w; build it with: %s", path, err, BuildHint)
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("kratos binary %s is not an executable file; build it with: %s", path, BuildHint)
	}
	return path, nil
}

// FreePort asks the kernel for an unused loopback TCP port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("reserve port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("release port: %w", err)
	}
	return port, nil
}

// Start migrates a fresh database and serves Kratos until the test ends. The
// server runs in a temporary directory; the identity schema is passed as an
// absolute file URL (IDENTITY_SCHEMAS), which works from any directory.
// extraEnv entries (KEY=value) override the configuration, e.g.
// "SESSION_LIFESPAN=1h".
//
// Its e-mail and SMS go nowhere (a closed loopback port), so a demo inbox
// running on this machine never sees test messages; they stay in the courier
// queue (admin API /admin/courier/messages). Use StartWithInbox to receive them.
func Start(t testing.TB, extraEnv ...string) *Server {
	t.Helper()
	return start(t, false, nowhere(t, extraEnv))
}

// StartFromRoot is Start with the repository root as working directory and
// the configuration's own relative schema and SMS body paths, as `make run`
// starts Kratos.
func StartFromRoot(t testing.TB, extraEnv ...string) *Server {
	t.Helper()
	dead, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	// Only the addresses change: the channel keeps the configuration's
	// relative body path, which must resolve from the repository root.
	env := append([]string{
		fmt.Sprintf("COURIER_SMTP_CONNECTION_URI=smtp://127.0.0.1:%d/?disable_starttls=true", dead),
		fmt.Sprintf(`COURIER_CHANNELS=[{"id":"sms","type":"http","request_config":{"url":"http://127.0.0.1:%d/api/v1/send","method":"POST","body":"file://./%s","headers":{"Content-Type":"application/json"}}}]`, dead, smsBodyPath),
	}, extraEnv...)
	return start(t, true, env)
}

// StartWithInbox starts a Mailpit inbox, then Kratos sending its e-mail to the
// inbox's SMTP port and its SMS to the inbox's send API, as the demo stack does.
// Read codes with inbox.WaitForCode(t, emailOrPhone).
func StartWithInbox(t testing.TB, extraEnv ...string) (*Server, *Inbox) {
	t.Helper()
	inbox := StartInbox(t)
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	env := append(CourierEnv(root, inbox.SMTPAddr, inbox.URL), extraEnv...)
	return start(t, false, env), inbox
}

// CourierEnv points Kratos' courier at an inbox: e-mail over SMTP to smtpAddr
// (host:port), SMS through the HTTP channel to httpURL's /api/v1/send, with the
// repository's SMS body template by absolute path.
func CourierEnv(root, smtpAddr, httpURL string) []string {
	return []string{
		"COURIER_SMTP_CONNECTION_URI=smtp://" + smtpAddr + "/?disable_starttls=true",
		"COURIER_CHANNELS=" + CourierChannelsJSON(root, strings.TrimSuffix(httpURL, "/")+"/api/v1/send"),
	}
}

// CourierChannelsJSON is the COURIER_CHANNELS value of the "sms" HTTP channel
// posting to sendURL with the repository's SMS body template (bff/kratos/sms.jsonnet).
func CourierChannelsJSON(root, sendURL string) string {
	body := "file://" + filepath.ToSlash(filepath.Join(root, smsBodyPath))
	return `[{"id":"sms","type":"http","request_config":{"url":"` + sendURL +
		`","method":"POST","body":"` + body + `","headers":{"Content-Type":"application/json"}}}]`
}

// nowhere prepends courier settings that deliver to a closed port.
func nowhere(t testing.TB, extraEnv []string) []string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dead, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", dead)
	return append(CourierEnv(root, addr, "http://"+addr), extraEnv...)
}

// IdentitySchemasEnv is the IDENTITY_SCHEMAS value that points Kratos at the
// repository's identity schema by absolute path.
func IdentitySchemasEnv(root string) string {
	return `IDENTITY_SCHEMAS=[{"id":"default","url":"file://` + filepath.ToSlash(filepath.Join(root, schemaPath)) + `"}]`
}

func start(t testing.TB, fromRoot bool, extraEnv []string) *Server {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := Binary(root)
	if err != nil {
		t.Fatal(err)
	}
	publicPort, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	adminPort, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	for adminPort == publicPort {
		if adminPort, err = FreePort(); err != nil {
			t.Fatal(err)
		}
	}

	s := &Server{
		PublicURL: fmt.Sprintf("http://127.0.0.1:%d", publicPort),
		AdminURL:  fmt.Sprintf("http://127.0.0.1:%d", adminPort),
		Dir:       t.TempDir(),
	}
	s.LogPath = filepath.Join(s.Dir, "kratos.log")
	env := append(os.Environ(),
		"DSN=sqlite://"+filepath.Join(s.Dir, "kratos.sqlite")+"?_fk=true&mode=rwc&_journal_mode=WAL&_txlock=immediate&_busy_timeout=60000",
		fmt.Sprintf("SERVE_PUBLIC_PORT=%d", publicPort),
		fmt.Sprintf("SERVE_ADMIN_PORT=%d", adminPort),
		"SERVE_PUBLIC_BASE_URL="+s.PublicURL+"/",
		"SERVE_ADMIN_BASE_URL="+s.AdminURL+"/",
		"SQA_OPT_OUT=true",
		"LOG_LEVEL=info",
	)
	workDir := s.Dir
	if fromRoot {
		workDir = root
	} else {
		env = append(env, IdentitySchemasEnv(root))
	}
	env = append(env, extraEnv...)
	cfg := filepath.Join(root, configPath)

	logFile, err := os.Create(s.LogPath)
	if err != nil {
		t.Fatalf("create kratos log: %v", err)
	}
	t.Cleanup(func() { _ = logFile.Close() })

	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	migrate := exec.CommandContext(ctx, bin, "migrate", "sql", "-e", "--yes", "--config", cfg)
	migrate.Dir = workDir
	migrate.Env = env
	if out, err := migrate.CombinedOutput(); err != nil {
		t.Fatalf("kratos migrate sql: %v\n%s", err, tail(string(out), 40))
	}

	s.cmd = exec.Command(bin, "serve", "--config", cfg, "--dev", "--watch-courier", "--sqa-opt-out")
	s.cmd.Dir = workDir
	s.cmd.Env = env
	s.cmd.Stdout = logFile
	s.cmd.Stderr = logFile
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start kratos serve: %v", err)
	}
	s.done = make(chan struct{})
	go func() {
		_ = s.cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() { s.stop(t) })

	if err := s.waitReady(ctx); err != nil {
		t.Fatalf("kratos not ready: %v\n--- kratos log ---\n%s", err, s.Log())
	}
	return s
}

// waitReady polls the admin readiness endpoint until it answers 200.
func (s *Server) waitReady(ctx context.Context) error {
	return waitHTTPReady(ctx, s.AdminURL+"/admin/health/ready", "kratos", s.cmd, s.done)
}

// stop ends the server by its PID: SIGTERM, then SIGKILL after stopTimeout.
func (s *Server) stop(t testing.TB) { stopChild(t, "kratos", s.cmd, s.done) }

// waitHTTPReady polls url until it answers 200, the child (cmd, done closed when it was waited for) exits, or ctx
// ends.
func waitHTTPReady(ctx context.Context, url, name string, cmd *exec.Cmd, done <-chan struct{}) error {
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("readiness request: %w", err)
		}
		resp, err := client.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Errorf("readiness status %d", resp.StatusCode)
		} else {
			last = err
		}
		select {
		case <-done:
			return fmt.Errorf("%s exited early (%v)", name, cmd.ProcessState)
		case <-ctx.Done():
			return fmt.Errorf("timed out after %s: %w", readyTimeout, last)
		case <-tick.C:
		}
	}
}

// stopChild ends a child by its PID: SIGTERM, then SIGKILL after stopTimeout.
func stopChild(t testing.TB, name string, cmd *exec.Cmd, done <-chan struct{}) {
	select {
	case <-done:
		return
	default:
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Logf("signal %s (pid %d): %v", name, cmd.Process.Pid, err)
	}
	select {
	case <-done:
	case <-time.After(stopTimeout):
		t.Logf("%s (pid %d) ignored SIGTERM for %s; killing it", name, cmd.Process.Pid, stopTimeout)
		_ = cmd.Process.Kill()
		<-done
	}
}

// Log returns the last lines of the server log, for failure messages.
func (s *Server) Log() string {
	b, err := os.ReadFile(s.LogPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return tail(string(b), 60)
}

func tail(text string, lines int) string {
	var all []string
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		all = append(all, sc.Text())
	}
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
