package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx" for the bench database
)

// stack is a bin/exhub-stack process this tool started, on a temporary data dir.
type stack struct {
	cmd     *exec.Cmd
	exited  chan struct{}
	dir     string
	logf    *os.File
	logPath string
	edge    string
}

// stackEnv is what the bench adds to the stack's environment: no analytics ingest (the order path does not use it,
// and on two CPUs its start-up backfill would compete with the measurement), and the self-service gate's
// registration and login limits per address raised, since every bench member signs up from 127.0.0.1.
func stackEnv(dataDir string, store []string) []string {
	env := []string{
		"EXHUB_DATA_DIR=" + dataDir,
		"EXHUB_ANALYTICS_SPOOL_DIR=" + filepath.Join(filepath.Dir(dataDir), "spool"),
		"EXHUB_ANALYTICS_ENABLED=false",
		"EXHUB_GATE_LIMITS_REGISTRATION_IP_N=100000",
		"EXHUB_GATE_LIMITS_LOGIN_IP_N=100000",
	}
	return append(env, store...)
}

// stackAddrs are the stack's listen addresses (bff/cmd/exhub-stack's Config) and stackPortVars its bare ports.
var (
	stackAddrs = []string{"EXHUB_EDGE_ADDR", "EXHUB_HTTP_ADDR", "EXHUB_KRATOS_PUBLIC_ADDR", "EXHUB_KRATOS_ADMIN_ADDR",
		"EXHUB_MAILPIT_SMTP_ADDR", "EXHUB_MAILPIT_ADDR", "EXHUB_EMULATOR_BINANCE_ADDR", "EXHUB_EMULATOR_OKX_ADDR"}
	stackPortVars = []string{"EXHUB_CLICKHOUSE_TCP_PORT", "EXHUB_CLICKHOUSE_HTTP_PORT", "EXHUB_VALKEY_PORT"}
)

// stackPorts gives every stack listener not named in the environment a free loopback port (env entries), and
// lists the addresses that are named (to wait for when another process holds them).
func stackPorts() (env, named []string, err error) {
	for _, k := range append(append([]string{}, stackAddrs...), stackPortVars...) {
		if v := os.Getenv(k); v != "" {
			if !slices.Contains(stackPortVars, k) {
				named = append(named, v)
			}
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, nil, fmt.Errorf("a free port for %s: %w", k, err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if slices.Contains(stackPortVars, k) {
			env = append(env, fmt.Sprintf("%s=%d", k, port))
		} else {
			env = append(env, fmt.Sprintf("%s=127.0.0.1:%d", k, port))
		}
	}
	return env, named, nil
}

// waitPorts waits (up to wait) until none of addrs accepts connections: another stack may be running there (the
// tool never stops what it did not start).
func waitPorts(ctx context.Context, addrs []string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		busy := ""
		for _, a := range addrs {
			if c, err := net.DialTimeout("tcp", a, time.Second); err == nil {
				c.Close()
				busy = a
				break
			}
		}
		if busy == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s is still in use after %s (another stack?): move this one with the EXHUB_* port variables", busy, wait)
		}
		fmt.Fprintf(os.Stderr, "bench/trading: %s is in use; waiting for it to be free (until %s)\n", busy, deadline.UTC().Format("15:04:05"))
		if err := sleepCtx(ctx, 10*time.Second); err != nil {
			return err
		}
	}
}

// startStack runs bin/exhub-stack with a fresh data dir and the given extra environment, and waits for its ready
// file (bounded).
func startStack(ctx context.Context, root, name string, extra []string) (*stack, error) {
	bin := filepath.Join(envOr("EXHUB_BIN_DIR", filepath.Join(root, "bin")), "exhub-stack")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%s is missing: run make build first", bin)
	}
	dir, err := os.MkdirTemp("", "bench-trading-")
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(root, ".data", "bench", "trading-stack-"+name+".log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	ready := filepath.Join(dir, "ready")
	s := &stack{exited: make(chan struct{}), dir: dir, logf: logf, logPath: logPath}
	s.cmd = exec.Command(bin, "--root", root, "--ready-file", ready)
	s.cmd.Dir = root
	s.cmd.Env = append(os.Environ(), stackEnv(filepath.Join(dir, "data"), extra)...)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() { // owned by the stack's stop, which waits for it
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	fmt.Fprintf(os.Stderr, "bench/trading: starting the stack (pid %d, journal %s, log %s)\n", s.cmd.Process.Pid, name, logPath)
	deadline := time.Now().Add(4 * time.Minute)
	for {
		if b, err := os.ReadFile(ready); err == nil && len(b) > 0 {
			s.edge = strings.TrimRight(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]), "/")
			return s, nil
		}
		select {
		case <-s.exited:
			s.stop()
			return nil, fmt.Errorf("the stack exited before it was ready; see %s", logPath)
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("the stack was not ready in 4 min; see %s", logPath)
		}
	}
}

// stop interrupts the stack by its PID (it stops its services in order) and waits; SIGKILL after two minutes.
func (s *stack) stop() {
	select {
	case <-s.exited:
	default:
		_ = s.cmd.Process.Signal(os.Interrupt)
		select {
		case <-s.exited:
		case <-time.After(2 * time.Minute):
			fmt.Fprintf(os.Stderr, "bench/trading: stack pid %d did not stop in 2 min; killing it\n", s.cmd.Process.Pid)
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	}
	s.logf.Close()
	os.RemoveAll(s.dir)
}

// procStat reads a process's parent pid, command name and CPU time (user + system, in clock ticks) from
// /proc/<pid>/stat.
func procStat(pid int) (ppid int, comm string, ticks int64, err error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, "", 0, err
	}
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return 0, "", 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	comm = s[open+1 : end]
	// Fields after the command: state(3) ppid(4) ... utime(14) stime(15).
	f := strings.Fields(s[end+1:])
	if len(f) < 13 {
		return 0, "", 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	ppid, _ = strconv.Atoi(f[1])
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, "", 0, fmt.Errorf("/proc/%d/stat: bad CPU times", pid)
	}
	return ppid, comm, ut + st, nil
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat's CPU times (100 on Linux).
const clockTicks = 100

// cpuMs is a process's CPU time so far in milliseconds.
func cpuMs(pid int) (float64, error) {
	_, _, t, err := procStat(pid)
	if err != nil {
		return 0, err
	}
	return float64(t) * 1000 / clockTicks, nil
}

// findBFF returns the pid of the exhub-bff process: the one under ancestor when ancestor > 0, else the only one
// running.
func findBFF(ancestor int) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	var found []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		_, comm, _, err := procStat(pid)
		if err != nil || comm != "exhub-bff" {
			continue
		}
		if ancestor > 0 && !descends(pid, ancestor) {
			continue
		}
		found = append(found, pid)
	}
	if len(found) != 1 {
		return 0, fmt.Errorf("found %d exhub-bff processes (want one; name it with --bff-pid)", len(found))
	}
	return found[0], nil
}

// descends says whether pid has ancestor among its parents.
func descends(pid, ancestor int) bool {
	for range 64 {
		ppid, _, _, err := procStat(pid)
		if err != nil || ppid <= 1 {
			return false
		}
		if ppid == ancestor {
			return true
		}
		pid = ppid
	}
	return false
}

// benchDB is a fresh PostgreSQL database for one run's journal, on scripts/postgres.sh's cluster.
type benchDB struct {
	admin, dsn, name string
	startedPG        bool
	root             string
}

// newBenchDB starts the local cluster when it is not running (scripts/postgres.sh start, idempotent) and creates a
// database for this run.
func newBenchDB(ctx context.Context, root string) (*benchDB, error) {
	port := envOr("EXHUB_POSTGRES_PORT", "55432")
	running := false
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second); err == nil {
		c.Close()
		running = true
	}
	script := filepath.Join(root, "scripts", "postgres.sh")
	if !running {
		// Started here, stopped by drop. A server already on the port (this checkout's or another's) is used as
		// it is: scripts/postgres.sh would try to start this checkout's cluster beside it.
		if out, err := exec.CommandContext(ctx, script, "start").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("scripts/postgres.sh start: %w\n%s", err, out)
		}
	}
	out, err := exec.CommandContext(ctx, script, "dsn", "postgres").Output()
	if err != nil {
		return nil, fmt.Errorf("scripts/postgres.sh dsn: %w", err)
	}
	d := &benchDB{admin: strings.TrimSpace(string(out)), name: fmt.Sprintf("exhub_bench_trading_%d", time.Now().Unix()),
		startedPG: !running, root: root}
	db, err := sql.Open("pgx", d.admin)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+d.name); err != nil {
		return nil, fmt.Errorf("create database %s: %w", d.name, err)
	}
	d.dsn = strings.Replace(d.admin, "/postgres?", "/"+d.name+"?", 1)
	if d.dsn == d.admin {
		return nil, errors.New("unexpected DSN from scripts/postgres.sh: " + d.admin)
	}
	return d, nil
}

// drop removes the run's database, and stops the cluster when this run started it.
func (d *benchDB) drop() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if db, err := sql.Open("pgx", d.admin); err == nil {
		if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+d.name+" WITH (FORCE)"); err != nil {
			fmt.Fprintf(os.Stderr, "bench/trading: drop database %s: %v\n", d.name, err)
		}
		db.Close()
	}
	if d.startedPG {
		_ = exec.CommandContext(ctx, filepath.Join(d.root, "scripts", "postgres.sh"), "stop").Run()
	}
}

func envOr(k, def string) string {
	if v, ok := os.LookupEnv(k); ok && v != "" {
		return v
	}
	return def
}

// treeCPU sums the CPU time (ms) of ancestor's descendant processes by command name (exhub-bff, exhub-edge, the
// plugins, the emulators, ...): where the machine's CPU went during a step. Zero ancestor: nothing.
func treeCPU(ancestor int) map[string]float64 {
	out := map[string]float64{}
	if ancestor <= 0 {
		return out
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		_, comm, ticks, err := procStat(pid)
		if err != nil || !descends(pid, ancestor) {
			continue
		}
		out[comm] += float64(ticks) * 1000 / clockTicks
	}
	return out
}
