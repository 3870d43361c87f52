package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "exhub-emulators")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
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

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServesBothExchangesAndStopsOnSIGTERM(t *testing.T) {
	bin := buildBinary(t)
	bAddr, oAddr := freeAddr(t), freeAddr(t)
	cmd := exec.Command(bin, "--binance", bAddr, "--okx", oAddr, "--history-days", "1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
	})

	deadline := time.Now().Add(20 * time.Second)
	for {
		c1, _ := get(t, "http://"+bAddr+"/-/ready")
		c2, _ := get(t, "http://"+oAddr+"/-/ready")
		if c1 == 200 && c2 == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("emulators not ready: %s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	code, body := get(t, "http://"+bAddr+"/api/v3/time")
	var bt struct {
		ServerTime int64 `json:"serverTime"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &bt) != nil || bt.ServerTime < time.Now().Add(-time.Minute).UnixMilli() {
		t.Errorf("binance /api/v3/time = %d %s", code, body)
	}
	code, body = get(t, "http://"+oAddr+"/api/v5/public/time")
	var ot struct {
		Code string `json:"code"`
		Data []struct {
			Ts string `json:"ts"`
		} `json:"data"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &ot) != nil || ot.Code != "0" || len(ot.Data) != 1 || ot.Data[0].Ts == "" {
		t.Errorf("okx /api/v5/public/time = %d %s", code, body)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("did not stop within 10 s of SIGTERM")
	}
}

func TestBusyPortIsAOneLineError(t *testing.T) {
	bin := buildBinary(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	out, err := exec.Command(bin, "--binance", l.Addr().String(), "--okx", "").CombinedOutput()
	if err == nil {
		t.Fatal("started on a busy port")
	}
	msg := strings.TrimSpace(string(out))
	if strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "already in use") || !strings.Contains(msg, "--binance") {
		t.Errorf("error = %q", msg)
	}
}

func TestRefusesNonLoopback(t *testing.T) {
	bin := buildBinary(t)
	out, err := exec.Command(bin, "--binance", "0.0.0.0:7001").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "loopback") {
		t.Errorf("err = %v, out = %s", err, out)
	}
}

func TestParseReserve(t *testing.T) {
	r, err := parseReserve(defaultReserve)
	if err != nil || len(r) != 3 || r["USDT"].String() != "20000000" || r["BTC"].String() != "200" {
		t.Fatalf("default reserve %v %v", r, err)
	}
	if r, err := parseReserve("none"); err != nil || len(r) != 0 {
		t.Fatalf("none: %v %v", r, err)
	}
	if r, err := parseReserve("usdt=1.5"); err != nil || r["USDT"].String() != "1.5" {
		t.Fatalf("lower case asset: %v %v", r, err)
	}
	for _, bad := range []string{"USDT", "USDT=x", "=5", "USDT=-1"} {
		if _, err := parseReserve(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}
