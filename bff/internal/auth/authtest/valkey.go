package authtest

import (
	"net"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// StartValkey runs valkey-server on a free loopback port until the test ends (stopped by its PID) and returns its
// address. A missing binary fails the test with the command that installs it.
func StartValkey(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("valkey-server")
	if err != nil {
		t.Fatalf("valkey-server not found (install it with `make deps`): %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_ = c.Close()
			return addr
		}
		select {
		case <-done:
			t.Fatalf("valkey-server on %s exited", addr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("valkey-server did not listen on %s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
