// Package storetest gives tests a real PostgreSQL database.
//
// Postgres(t) returns the DSN of a fresh, empty database that is dropped when the test ends. The server is, in order:
//   - the one EXHUB_TEST_POSTGRES_DSN names (a role allowed to CREATE DATABASE; `make go-test` starts one with
//     scripts/postgres.sh and sets it), or
//   - a throwaway cluster this test binary starts once from Debian's server binaries (/usr/lib/postgresql/<v>/bin,
//     or the directory EXHUB_POSTGRES_BIN names) in a temporary directory, listening on a free 127.0.0.1 port.
//     PostgreSQL refuses to run as root, so under uid 0 it runs as the "postgres" system user. Call Main from
//     TestMain so the cluster is stopped (by its PID) when the tests end; the server also gets SIGINT if the test
//     binary dies first.
//
// Missing binaries fail the test with the command that installs them; nothing is skipped.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
)

// EnvDSN names an existing server to use instead of starting one.
const EnvDSN = "EXHUB_TEST_POSTGRES_DSN"

// EnvBin names a directory holding initdb and postgres (default: the newest /usr/lib/postgresql/<v>/bin).
const EnvBin = "EXHUB_POSTGRES_BIN"

// InstallHint is what a missing PostgreSQL tells the developer to run.
const InstallHint = "sudo scripts/apt-deps.sh   (installs the Debian package postgresql)"

var (
	once     sync.Once
	mu       sync.Mutex
	running  *cluster
	startErr error
)

// Postgres returns the DSN of a new empty database for this test; it is dropped at the test's cleanup.
func Postgres(t testing.TB) string {
	t.Helper()
	admin := os.Getenv(EnvDSN)
	if admin == "" {
		once.Do(func() {
			c, err := startCluster()
			mu.Lock()
			running, startErr = c, err
			mu.Unlock()
		})
		mu.Lock()
		c, err := running, startErr
		mu.Unlock()
		if err != nil {
			t.Fatalf("storetest: PostgreSQL: %v", err)
		}
		admin = c.adminDSN
	}
	name := "exhub_test_" + randomHex(8)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := adminExec(ctx, admin, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("storetest: create database on the PostgreSQL of %s: %v", source(), err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := adminExec(ctx, admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("storetest: drop database %s: %v", name, err)
		}
	})
	dsn, err := withDatabase(admin, name)
	if err != nil {
		t.Fatalf("storetest: %s: %v", EnvDSN, err)
	}
	return dsn
}

// Main runs the tests, then stops the cluster Postgres started (if any) and exits. Call it from TestMain.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run runs the tests, then stops the cluster Postgres started (if any), and returns the exit code: for a TestMain
// with more to clean up after the tests (plugintest.Run takes it).
func Run(m *testing.M) int {
	code := m.Run()
	if err := Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "storetest:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Stop stops the cluster started by Postgres and removes its files. It is a no-op when none was started.
func Stop() error {
	mu.Lock()
	c := running
	running = nil
	mu.Unlock()
	if c == nil {
		return nil
	}
	return c.stop()
}

func source() string {
	if os.Getenv(EnvDSN) != "" {
		return EnvDSN
	}
	return "the test cluster"
}

func adminExec(ctx context.Context, dsn, stmt string) error {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return errors.New("the DSN does not parse")
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, stmt)
	return err
}

// withDatabase points a URL or key=value DSN at another database.
func withDatabase(dsn, name string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", errors.New("the DSN URL does not parse")
		}
		u.Path = "/" + name
		u.RawPath = ""
		return u.String(), nil
	}
	return dsn + " dbname=" + name, nil // a later key wins in key=value DSNs
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ---- throwaway cluster ------------------------------------------------------------------------------------------

type cluster struct {
	adminDSN string
	dir      string
	cmd      *exec.Cmd
	done     chan struct{} // closed when the server process exited
	logPath  string
}

// binDir finds initdb and postgres.
func binDir() (string, error) {
	if d := os.Getenv(EnvBin); d != "" {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err != nil {
			return "", fmt.Errorf("%s=%s holds no postgres binary; install PostgreSQL with: %s", EnvBin, d, InstallHint)
		}
		return d, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	if len(matches) == 0 {
		return "", fmt.Errorf("no PostgreSQL server binaries in /usr/lib/postgresql/<version>/bin; install them with: %s "+
			"(or set %s to a server)", InstallHint, EnvDSN)
	}
	sort.Slice(matches, func(i, j int) bool { return version(matches[i]) > version(matches[j]) })
	return filepath.Dir(matches[0]), nil
}

func version(bin string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(bin))))
	return v
}

func startCluster() (*cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "exhub-pg-")
	if err != nil {
		return nil, err
	}
	var cred *syscall.Credential
	if os.Getuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root, PostgreSQL needs the postgres system user (%v); install it with: %s",
				err, InstallHint)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8",
		"--locale=C", "--no-sync")
	initdb.Dir = dir
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	var last error
	for range 3 { // a free port may be taken between choosing and binding it
		c, err := runServer(bin, dir, data, cred)
		if err == nil {
			return c, nil
		}
		last = err
	}
	os.RemoveAll(dir)
	return nil, last
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func runServer(bin, dir, data string, cred *syscall.Credential) (*cluster, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "postgres.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port), "-k", dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "max_connections=200")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	// SIGINT is PostgreSQL's fast shutdown; the kernel sends it if this process dies without calling Stop.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGINT}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	c := &cluster{
		adminDSN: "postgres://postgres@127.0.0.1:" + strconv.Itoa(port) + "/postgres?sslmode=disable&connect_timeout=5",
		dir:      dir, cmd: cmd, done: make(chan struct{}), logPath: logPath,
	}
	go func() { _ = cmd.Wait(); close(c.done) }()

	deadline := time.Now().Add(2 * time.Minute)
	for {
		select {
		case <-c.done:
			return nil, fmt.Errorf("postgres exited while starting:\n%s", tail(logPath))
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := adminExec(ctx, c.adminDSN, "SELECT 1")
		cancel()
		if err == nil {
			return c, nil
		}
		if time.Now().After(deadline) {
			_ = c.kill()
			return nil, fmt.Errorf("postgres did not accept connections within 2 minutes (%v):\n%s", err, tail(logPath))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (c *cluster) stop() error {
	defer os.RemoveAll(c.dir)
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.done:
		return nil
	case <-time.After(time.Minute):
		return c.kill()
	}
}

func (c *cluster) kill() error {
	_ = c.cmd.Process.Kill()
	select {
	case <-c.done:
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("postgres (pid %d) did not exit", c.cmd.Process.Pid)
	}
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
