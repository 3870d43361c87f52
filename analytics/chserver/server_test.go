package chserver

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestNormalize(t *testing.T) {
	ok := Config{Path: "rel/dir", TCPPort: 9000, HTTPPort: 8123}
	if err := ok.normalize(); err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(ok.Path) || ok.ListenHost != "127.0.0.1" || ok.ReadyTimeout <= 0 || ok.StopTimeout <= 0 || ok.Logger == nil {
		t.Fatalf("defaults not applied: %+v", ok)
	}
	for name, c := range map[string]Config{
		"no path":      {TCPPort: 1, HTTPPort: 2},
		"public host":  {Path: "x", ListenHost: "0.0.0.0", TCPPort: 1, HTTPPort: 2},
		"lan host":     {Path: "x", ListenHost: "192.168.1.5", TCPPort: 1, HTTPPort: 2},
		"same ports":   {Path: "x", TCPPort: 9000, HTTPPort: 9000},
		"port too big": {Path: "x", TCPPort: 70000, HTTPPort: 2},
		"no port":      {Path: "x", HTTPPort: 2},
	} {
		if err := c.normalize(); err == nil {
			t.Errorf("%s: accepted %+v", name, c)
		}
	}
	for _, h := range []string{"localhost", "127.0.0.1", "127.0.0.2", "::1"} {
		c := Config{Path: "x", ListenHost: h, TCPPort: 1, HTTPPort: 2}
		if err := c.normalize(); err != nil {
			t.Errorf("loopback %s refused: %v", h, err)
		}
	}
}

func TestArgs(t *testing.T) {
	c := Config{Path: "/d", ListenHost: "127.0.0.1", TCPPort: 19000, HTTPPort: 18123}
	args := strings.Join(c.Args(), " ")
	for _, want := range []string{"--path=/d", "--listen_host=127.0.0.1", "--tcp_port=19000", "--http_port=18123",
		"--query_id=" + HoldQueryID, "SYSTEM START LISTEN TCP", "SYSTEM START LISTEN HTTP", "sleepEachRow"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	if c.TCPAddr() != "127.0.0.1:19000" || c.HTTPAddr() != "127.0.0.1:18123" {
		t.Fatal(c.TCPAddr(), c.HTTPAddr())
	}
}

func TestFindLibEnv(t *testing.T) {
	t.Setenv(LibEnv, filepath.Join(t.TempDir(), "missing.so"))
	_, err := FindLib()
	if !errors.Is(err, ErrLibMissing) || !strings.Contains(err.Error(), "make deps") {
		t.Fatalf("err = %v", err)
	}
	lib := filepath.Join(t.TempDir(), "libchdb.so")
	if err := os.WriteFile(lib, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(LibEnv, lib)
	if got, err := FindLib(); err != nil || got != lib {
		t.Fatalf("FindLib = %q, %v", got, err)
	}
}

func TestFindLibWalksUp(t *testing.T) {
	root := t.TempDir()
	lib := filepath.Join(root, LibRelPath)
	if err := os.MkdirAll(filepath.Dir(lib), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lib, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	deep := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(LibEnv, "")
	t.Chdir(deep)
	if got, err := FindLib(); err != nil || got != lib {
		t.Fatalf("FindLib = %q, %v; want %q", got, err, lib)
	}
}

func TestCheckPathFree(t *testing.T) {
	dir := t.TempDir()
	if err := checkPathFree(dir); err != nil {
		t.Fatal(err)
	}
	// Hold the lock the way a running server does.
	f, err := os.OpenFile(filepath.Join(dir, "status"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("PID: 4242\nStarted at: now\n"); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	err = checkPathFree(dir)
	if !errors.Is(err, ErrPathInUse) || !strings.Contains(err.Error(), "pid 4242") {
		t.Fatalf("err = %v", err)
	}
}
