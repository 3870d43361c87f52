package main_test

import (
	"bytes"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exhub/exhub/analytics/chtest"
)

// runFail runs the binary with args, expects it to fail fast with status 1, and returns its single output line.
func runFail(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(chtest.Binary(t), args...)
	cmd.Dir = dir
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("exit = %v, want status 1; output:\n%s", err, out.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("did not exit; output:\n%s", out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("want one line of output, got %d:\n%s", len(lines), out.String())
	}
	return lines[0]
}

func envWithout(keys ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		keep := true
		for _, k := range keys {
			if strings.HasPrefix(kv, k+"=") {
				keep = false
			}
		}
		if keep {
			env = append(env, kv)
		}
	}
	return env
}

func TestPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	busy := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	free := strconv.Itoa(chtest.FreePorts(t, 1)[0])
	line := runFail(t, t.TempDir(), os.Environ(), "--path", t.TempDir(), "--tcp-port", busy, "--http-port", free, "--lib", chtest.Lib(t))
	for _, want := range []string{`"level":"ERROR"`, "127.0.0.1:" + busy, "port already in use", "--tcp-port"} {
		if !strings.Contains(line, want) {
			t.Errorf("output %s lacks %q", line, want)
		}
	}
}

func TestLibMissing(t *testing.T) {
	ports := chtest.FreePorts(t, 2)
	args := []string{"--path", t.TempDir(), "--tcp-port", strconv.Itoa(ports[0]), "--http-port", strconv.Itoa(ports[1])}
	t.Run("explicit", func(t *testing.T) {
		line := runFail(t, t.TempDir(), os.Environ(), append(args, "--lib", "/nonexistent/libchdb.so")...)
		if !strings.Contains(line, "/nonexistent/libchdb.so") || !strings.Contains(line, "make deps") {
			t.Errorf("output %s should name the path and `make deps`", line)
		}
	})
	t.Run("search", func(t *testing.T) {
		// A copy of the binary outside the checkout, started outside it, finds no library.
		dir := t.TempDir()
		bin, err := os.ReadFile(chtest.Binary(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "exhub-clickhouse"), bin, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(filepath.Join(dir, "exhub-clickhouse"), args...)
		cmd.Dir = dir
		cmd.Env = envWithout("EXHUB_CLICKHOUSE_LIB")
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("exit = %v, want status 1: %s", err, out)
		}
		if !strings.Contains(string(out), "libchdb.so not found") || !strings.Contains(string(out), "make deps") {
			t.Errorf("output %s should say the library is missing and name `make deps`", out)
		}
	})
}

func TestNonLoopbackRefused(t *testing.T) {
	ports := chtest.FreePorts(t, 2)
	line := runFail(t, t.TempDir(), os.Environ(), "--path", t.TempDir(), "--listen-host", "0.0.0.0",
		"--tcp-port", strconv.Itoa(ports[0]), "--http-port", strconv.Itoa(ports[1]), "--lib", chtest.Lib(t))
	if !strings.Contains(line, "not a loopback address") {
		t.Errorf("output %s", line)
	}
}

func TestDataDirInUse(t *testing.T) {
	dir := t.TempDir()
	first := chtest.Launch(t, dir)
	ports := chtest.FreePorts(t, 2)
	line := runFail(t, t.TempDir(), os.Environ(), "--path", dir, "--tcp-port", strconv.Itoa(ports[0]),
		"--http-port", strconv.Itoa(ports[1]), "--lib", chtest.Lib(t))
	if !strings.Contains(line, "data directory in use") || !strings.Contains(line, "pid "+strconv.Itoa(first.PID)) {
		t.Errorf("output %s should name the directory conflict and pid %d", line, first.PID)
	}
	// The first server is unharmed.
	if !chtest.Ping(http.DefaultClient, first.HTTPAddr) {
		t.Fatal("first server stopped answering")
	}
	http.DefaultClient.CloseIdleConnections()
}

func TestSignalsStopCleanly(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			p := chtest.Launch(t, t.TempDir())
			t0 := time.Now()
			if err := syscall.Kill(p.PID, sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-p.Exited():
			case <-time.After(10 * time.Second):
				t.Fatalf("pid %d still running 10s after %s", p.PID, sig)
			}
			if err := p.ExitErr(); err != nil {
				t.Fatalf("exit after %s: %v, want status 0", sig, err)
			}
			log, _ := os.ReadFile(p.LogPath)
			if !strings.Contains(string(log), `"msg":"clickhouse stopped"`) {
				t.Fatalf("no stop message in output:\n%s", log)
			}
			t.Logf("stopped %s after %s", sig, time.Since(t0).Round(time.Millisecond))
			if l, err := net.Listen("tcp", p.HTTPAddr); err != nil {
				t.Fatalf("http port still bound after exit: %v", err)
			} else {
				_ = l.Close()
			}
		})
	}
}

func TestRestartsWhenHoldingQueryEnds(t *testing.T) {
	p := chtest.Launch(t, t.TempDir())
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Post("http://"+p.HTTPAddr+"/", "text/plain",
		strings.NewReader("KILL QUERY WHERE query_id = 'exhub-clickhouse-hold' SYNC FORMAT Null"))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("kill: %s", resp.Status)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		log, _ := os.ReadFile(p.LogPath)
		if strings.Count(string(log), `"msg":"clickhouse ready"`) == 2 && chtest.Ping(client, p.HTTPAddr) {
			if !strings.Contains(string(log), "restarting") {
				t.Fatalf("ready twice without a restart message:\n%s", log)
			}
			break
		}
		select {
		case <-p.Exited():
			t.Fatalf("process exited instead of restarting: %v\n%s", p.ExitErr(), log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("not serving again within 30s:\n%s", log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Same process (re-executed in place), so a supervisor tracking the PID keeps tracking it.
	if err := syscall.Kill(p.PID, 0); err != nil {
		t.Fatalf("pid %d gone: %v", p.PID, err)
	}
}
