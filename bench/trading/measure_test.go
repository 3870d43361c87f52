package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func TestPercentileNearestRank(t *testing.T) {
	var s []time.Duration
	for i := 1; i <= 100; i++ {
		s = append(s, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{0.5, 50 * time.Millisecond}, {0.9, 90 * time.Millisecond}, {0.99, 99 * time.Millisecond}, {1, 100 * time.Millisecond}, {0.001, time.Millisecond}} {
		if got := Percentile(s, c.p); got != c.want {
			t.Errorf("p%v of 1..100 ms = %v, want %v", c.p, got, c.want)
		}
	}
	if got := Percentile([]time.Duration{7}, 0.99); got != 7 {
		t.Errorf("one sample: %v", got)
	}
	if got := Percentile(nil, 0.5); got != 0 {
		t.Errorf("no sample: %v", got)
	}
}

func TestRecorderSummaryAndBound(t *testing.T) {
	r := NewRecorder(1000)
	// Added out of order, with one slow outlier.
	for i := 1000; i >= 2; i-- {
		r.Add(time.Duration(i) * time.Microsecond)
	}
	r.Add(2 * time.Second)
	r.Add(time.Second) // over the bound: counted, not kept
	s := r.Summary()
	if s.Count != 1000 || s.Dropped != 1 {
		t.Fatalf("count %d dropped %d, want 1000 and 1", s.Count, s.Dropped)
	}
	if s.P50Ms != 0.501 || s.P99Ms != 0.991 || s.MaxMs != 2000 {
		t.Fatalf("summary %+v", s)
	}
	if z := NewRecorder(10).Summary(); z.Count != 0 || z.P99Ms != 0 {
		t.Fatalf("empty recorder: %+v", z)
	}
}

// fakeClock advances only when slept on, so the schedule's due times and sends can be checked exactly.
type fakeClock struct{ now time.Time }

func (c *fakeClock) sleep(_ context.Context, d time.Duration) error { c.now = c.now.Add(d); return nil }
func (c *fakeClock) Now() time.Time                                 { return c.now }

func TestScheduleOpenLoop(t *testing.T) {
	start := time.Unix(1000, 0)
	clk := &fakeClock{now: start}
	s := Schedule{Start: start, Rate: 4, N: 6}
	var dues, sentAt []time.Duration
	n := s.Run(context.Background(), clk.sleep, clk.Now, func(i int, due time.Time) bool {
		dues = append(dues, due.Sub(start))
		sentAt = append(sentAt, clk.now.Sub(start))
		if i == 1 {
			// A send that blocks for 600 ms (a full queue): the next ones go out late, keeping their due times.
			clk.now = clk.now.Add(600 * time.Millisecond)
		}
		return true
	})
	if n != 6 {
		t.Fatalf("sent %d, want 6", n)
	}
	ms := time.Millisecond
	wantDue := []time.Duration{0, 250 * ms, 500 * ms, 750 * ms, 1000 * ms, 1250 * ms}
	if !slices.Equal(dues, wantDue) {
		t.Fatalf("due times %v, want %v", dues, wantDue)
	}
	// Request 2 and 3 were due while request 1's send blocked: sent at once, late; 4 and 5 on time again.
	wantSent := []time.Duration{0, 250 * ms, 850 * ms, 850 * ms, 1000 * ms, 1250 * ms}
	if !slices.Equal(sentAt, wantSent) {
		t.Fatalf("sent at %v, want %v", sentAt, wantSent)
	}
}

func TestScheduleStops(t *testing.T) {
	start := time.Unix(1000, 0)
	clk := &fakeClock{now: start}
	s := Schedule{Start: start, Rate: 100, N: 50}
	if n := s.Run(context.Background(), clk.sleep, clk.Now, func(i int, _ time.Time) bool { return i < 9 }); n != 9 {
		t.Fatalf("a refused send stops the schedule: sent %d, want 9", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if n := s.Run(ctx, clk.sleep, clk.Now, func(int, time.Time) bool { return true }); n != 0 {
		t.Fatalf("an ended context sends nothing: sent %d", n)
	}
}

func TestSizeFor(t *testing.T) {
	d := decimal.RequireFromString
	for _, c := range []struct{ want, step, min, out string }{
		{"0.00013", "0.0001", "0.0001", "0.0002"},
		{"0.00001", "0.0001", "0.001", "0.001"},
		{"3", "1", "1", "3"},
		{"0.25", "0.1", "0.1", "0.3"},
	} {
		if got := sizeFor(d(c.want), d(c.step), d(c.min)); !got.Equal(d(c.out)) {
			t.Errorf("sizeFor(%s, %s, %s) = %s, want %s", c.want, c.step, c.min, got, c.out)
		}
	}
}

func TestProblemCode(t *testing.T) {
	for _, c := range []struct {
		status int
		body   string
		want   string
	}{
		{422, `{"type":"about:blank","title":"Unprocessable Entity","status":422,"code":"min_notional"}`, "min_notional"},
		{403, `{"title":"Forbidden","status":403}`, "403 Forbidden"},
		{502, `<html>bad gateway</html>`, "status 502"},
	} {
		if got := problemCode(c.status, []byte(c.body)); got != c.want {
			t.Errorf("problemCode(%d, %s) = %q, want %q", c.status, c.body, got, c.want)
		}
	}
}

// TestMachineBusy: the machine's busy CPU time from /proc/stat is read and grows while this test computes.
func TestMachineBusy(t *testing.T) {
	a := machineBusyMs()
	if a <= 0 {
		t.Fatalf("machine busy time %v", a)
	}
	deadline := time.Now().Add(30 * time.Second)
	x := 0
	for machineBusyMs() <= a {
		for i := range 1_000_000 {
			x += i
		}
		if time.Now().After(deadline) {
			t.Fatalf("the machine's busy time did not grow in 30 s of computing (%d)", x)
		}
	}
}

// TestStackPorts: every listener of the bench's stack gets a loopback port of its own (none of the usual ones such
// as 8080).
func TestStackPorts(t *testing.T) {
	for _, k := range append(append([]string{}, stackAddrs...), stackPortVars...) {
		t.Setenv(k, "")
	}
	env, named, err := stackPorts()
	if err != nil || len(named) != 0 {
		t.Fatalf("%v %v", named, err)
	}
	got := map[string]string{}
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		got[k] = v
	}
	for _, k := range stackAddrs {
		if !strings.HasPrefix(got[k], "127.0.0.1:") || got[k] == "127.0.0.1:8080" {
			t.Fatalf("%s=%q", k, got[k])
		}
	}
	if got["EXHUB_CLICKHOUSE_HTTP_PORT"] == "" || got["EXHUB_CLICKHOUSE_HTTP_PORT"] == "8123" {
		t.Fatalf("clickhouse http port %q", got["EXHUB_CLICKHOUSE_HTTP_PORT"])
	}
	t.Setenv("EXHUB_EDGE_ADDR", "127.0.0.1:18080")
	if _, named, _ := stackPorts(); len(named) != 1 || named[0] != "127.0.0.1:18080" {
		t.Fatalf("named %v", named)
	}
}
