package pluginhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/plugintest"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func TestMain(m *testing.M) {
	os.Exit(plugintest.Run(m, nil, "bff/internal/pluginhost/testdata/testplugin", "reference"))
}

// recorder is an Observer that remembers what it saw.
type recorder struct {
	mu       sync.Mutex
	states   []State
	restarts int
	calls    map[string]int
}

func (r *recorder) PluginState(_ string, s State) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.states = append(r.states, s)
}

func (r *recorder) PluginRestart(string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.restarts++
}

func (r *recorder) PluginCall(_ string, method string, _ time.Duration, _ error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls = map[string]int{}
	}
	r.calls[method]++
}

type harness struct {
	t      *testing.T
	host   *Host
	sup    *Supervisor
	obs    *recorder
	log    string
	cancel context.CancelFunc
	done   chan struct{}
}

// wait is the bound of every wait in these tests: generous, so a loaded machine never fails them, while a normal
// run finishes each wait almost at once. The tests assert order and arrival, never how fast.
const wait = 60 * time.Second

func startHost(t *testing.T, env []string, opts Options) *harness {
	t.Helper()
	return startHostSpec(t, func(sp *Spec) { sp.Env = append(sp.Env, env...) }, opts)
}

// startHostSpec runs the test plugin under a host; edit adjusts its Spec.
func startHostSpec(t *testing.T, edit func(*Spec), opts Options) *harness {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "plugin.log")
	obs := &recorder{}
	opts.Observer = obs
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewJSONHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	sp := Spec{
		Key: 100, Slug: "test", Name: "Test", Path: plugintest.Path("testplugin"),
		Settings: map[string]string{"endpoint": "http://127.0.0.1:1"},
		Env:      []string{"TESTPLUGIN_LOG=" + logPath},
	}
	if edit != nil {
		edit(&sp)
	}
	h := New([]Spec{sp}, opts)
	ctx, cancel := context.WithCancel(context.Background())
	hs := &harness{t: t, host: h, obs: obs, log: logPath, cancel: cancel, done: make(chan struct{})}
	hs.sup, _ = h.Get("test")
	go func() {
		defer close(hs.done)
		h.Run(ctx)
	}()
	t.Cleanup(hs.stop)
	return hs
}

func (h *harness) stop() {
	h.cancel()
	select {
	case <-h.done:
	case <-time.After(wait):
		h.t.Errorf("host did not stop within %s", wait)
	}
}

func (h *harness) waitRunning() Status {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := h.sup.WaitRunning(ctx); err != nil {
		h.t.Fatalf("plugin not running after %s: %v (status %+v)", wait, err, h.sup.Status())
	}
	return h.sup.Status()
}

// waitRestarted waits until a process other than oldPid runs.
func (h *harness) waitRestarted(oldPid int) Status {
	h.t.Helper()
	return eventually(h.t, "plugin restarted", func() (Status, bool) {
		s := h.sup.Status()
		return s, s.State == StateRunning && s.Pid != oldPid && s.Pid != 0
	})
}

// eventually polls cond until it holds, failing the test after the generous bound.
func eventually[T any](t *testing.T, what string, cond func() (T, bool)) T {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		v, ok := cond()
		if ok {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s (last %+v)", what, wait, v)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// logLines returns the plugin log's lines that start with prefix.
func (h *harness) logLines(prefix string) []string {
	b, err := os.ReadFile(h.log)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		h.t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, prefix+" ") {
			out = append(out, l)
		}
	}
	return out
}

func (h *harness) logCount(prefix string) int { return len(h.logLines(prefix)) }

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

func processGone(pid int) bool {
	err := syscall.Kill(pid, 0)
	return errors.Is(err, syscall.ESRCH)
}

func TestBackoffGrowsWithJitterAndCaps(t *testing.T) {
	b := Backoff{Initial: 100 * time.Millisecond, Max: 30 * time.Second}
	wantCeil := []time.Duration{100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 30000, 30000}
	for i, w := range wantCeil {
		if got := b.Ceiling(i); got != w*time.Millisecond {
			t.Errorf("Ceiling(%d) = %s, want %s", i, got, w*time.Millisecond)
		}
	}
	if got := b.Ceiling(1000); got != 30*time.Second {
		t.Errorf("Ceiling(1000) = %s, want the 30s cap", got)
	}
	lo := Backoff{Initial: b.Initial, Max: b.Max, Rand: func() float64 { return 0 }}
	hi := Backoff{Initial: b.Initial, Max: b.Max, Rand: func() float64 { return 0.999999 }}
	for i := 0; i < 12; i++ {
		c := b.Ceiling(i)
		if got := lo.Delay(i); got != c/2 {
			t.Errorf("Delay(%d) with rand 0 = %s, want %s", i, got, c/2)
		}
		if got := hi.Delay(i); got > c || got < c-time.Millisecond {
			t.Errorf("Delay(%d) with rand ~1 = %s, want ~%s", i, got, c)
		}
	}
	// Real jitter: 200 draws of the first delay are spread over [50ms, 100ms], not all equal.
	seen := map[time.Duration]bool{}
	for i := 0; i < 200; i++ {
		d := b.Delay(0)
		if d < 50*time.Millisecond || d > 100*time.Millisecond {
			t.Fatalf("Delay(0) = %s, outside [50ms, 100ms]", d)
		}
		seen[d] = true
	}
	if len(seen) < 50 {
		t.Errorf("Delay(0) gave only %d distinct values in 200 draws: no jitter", len(seen))
	}
}

func TestDescribeIsCachedPerLaunch(t *testing.T) {
	h := startHost(t, nil, Options{HealthInterval: 50 * time.Millisecond})
	st := h.waitRunning()
	if st.Describe.GetExchange().GetName() != "Test Exchange" {
		t.Fatalf("describe not cached: %+v", st.Describe)
	}
	for i := 0; i < 100; i++ {
		if d := h.sup.Describe(); d.GetExchange().GetSlug() != "test" {
			t.Fatalf("Describe() = %v", d)
		}
		_ = h.sup.Status()
	}
	// Periodic health checks pass meanwhile, without further Describe calls.
	eventually(t, "two health checks", func() (int, bool) {
		h.obs.mu.Lock()
		defer h.obs.mu.Unlock()
		return h.obs.calls["Health"], h.obs.calls["Health"] >= 2
	})
	if n := h.logCount("describe"); n != 1 {
		t.Fatalf("plugin saw %d Describe calls, want exactly 1 per launch", n)
	}
	if n := h.logCount("configure"); n != 1 {
		t.Fatalf("plugin saw %d Configure calls, want 1", n)
	}
	b, _ := os.ReadFile(h.log)
	if !strings.Contains(string(b), "endpoint=http://127.0.0.1:1") {
		t.Fatalf("settings did not reach Configure: %s", b)
	}
	if !h.sup.Status().Healthy {
		t.Error("status not healthy after passing health checks")
	}

	// After a crash the new process is described once more, and the cache survives the outage.
	pid := st.Pid
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, "plugin restarted", func() (Status, bool) {
		s := h.sup.Status()
		if s.State != StateRunning && s.Describe.GetExchange().GetName() != "Test Exchange" {
			t.Fatalf("cached Describe lost while the plugin is down: %+v", s)
		}
		return s, s.State == StateRunning && s.Pid != pid
	})
	if n := h.logCount("describe"); n != 2 {
		t.Fatalf("plugin saw %d Describe calls after one restart, want 2", n)
	}
}

// TestKillMidStreamRecovers: a SIGKILL mid-stream ends in RECONNECTING, RESYNCED, a fresh snapshot and contiguous
// deltas from a new process. How long that takes is a benchmark's business, not this test's.
func TestKillMidStreamRecovers(t *testing.T) {
	h := startHost(t, nil, Options{})
	first := h.waitRunning()

	ctx := t.Context()
	ms := h.sup.StreamMarket(ctx)
	defer ms.Close()
	book := &exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_BOOK, MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT, Symbol: "BTCUSDT"}
	trades := &exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_TRADES, MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT, Symbol: "BTCUSDT"}
	if err := ms.Subscribe(ctx, book, trades); err != nil {
		t.Fatal(err)
	}

	var (
		lastSeq      int64
		haveSnapshot bool
		statuses     []exchangev1.StreamStatus_State
		deltas       int
		tradesSeen   int
	)
	// consume reads one event and checks the book's integrity as a consumer would.
	consume := func() *exchangev1.MarketEvent {
		t.Helper()
		select {
		case ev, ok := <-ms.Events():
			if !ok {
				t.Fatal("events closed")
			}
			switch e := ev.GetEvent().(type) {
			case *exchangev1.MarketEvent_BookSnapshot:
				haveSnapshot, lastSeq = true, e.BookSnapshot.GetSequence()
			case *exchangev1.MarketEvent_BookDelta:
				if !haveSnapshot {
					t.Fatal("book delta before any snapshot")
				}
				if e.BookDelta.GetPrevSequence() != lastSeq {
					t.Fatalf("sequence gap: prev %d after %d", e.BookDelta.GetPrevSequence(), lastSeq)
				}
				lastSeq = e.BookDelta.GetSequence()
				deltas++
			case *exchangev1.MarketEvent_Trade:
				tradesSeen++
			case *exchangev1.MarketEvent_Status:
				statuses = append(statuses, e.Status.GetState())
				if e.Status.GetState() == exchangev1.StreamStatus_STATE_RESYNCED {
					haveSnapshot = false // a fresh snapshot must come next for the book
				}
			default:
				t.Fatalf("unexpected event %T", e)
			}
			return ev
		case <-time.After(wait):
			t.Fatalf("no event within %s (status %+v)", wait, h.sup.Status())
			return nil
		}
	}
	for deltas < 20 || tradesSeen < 5 {
		consume()
	}
	if len(statuses) != 0 {
		t.Fatalf("status events before the kill: %v", statuses)
	}

	if err := syscall.Kill(first.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Back and streaming: RECONNECTING, RESYNCED, a fresh snapshot and contiguous deltas again.
	deltasBefore, tradesBefore := deltas, tradesSeen
	for {
		consume()
		resynced := len(statuses) > 0 && statuses[len(statuses)-1] == exchangev1.StreamStatus_STATE_RESYNCED
		if resynced && haveSnapshot && deltas >= deltasBefore+5 && tradesSeen > tradesBefore {
			break
		}
	}
	want := []exchangev1.StreamStatus_State{exchangev1.StreamStatus_STATE_RECONNECTING, exchangev1.StreamStatus_STATE_RESYNCED}
	if fmt.Sprint(statuses) != fmt.Sprint(want) {
		t.Fatalf("status events = %v, want exactly %v", statuses, want)
	}
	st := h.sup.Status()
	if st.State != StateRunning || st.Pid == first.Pid || st.Pid == 0 {
		t.Fatalf("after restart: %+v (old pid %d)", st, first.Pid)
	}
	if st.Restarts != 1 || st.LastError != "process exited" {
		t.Fatalf("restarts %d, last error %q", st.Restarts, st.LastError)
	}
	if ms.Reconnects() != 1 {
		t.Fatalf("Reconnects() = %d", ms.Reconnects())
	}
	if !processGone(first.Pid) {
		t.Fatalf("killed process %d still exists", first.Pid)
	}
	h.obs.mu.Lock()
	restarts := h.obs.restarts
	h.obs.mu.Unlock()
	if restarts != 1 {
		t.Fatalf("observer saw %d restarts", restarts)
	}
}

// TestFailingPluginBacksOff checks the delays the supervisor waits between failed launches (from its log, with a
// jitter source fixed at 0): they follow the backoff, attempt after attempt, up to its cap.
func TestFailingPluginBacksOff(t *testing.T) {
	logs := &lockedBuffer{}
	bo := Backoff{Initial: 8 * time.Millisecond, Max: 32 * time.Millisecond, Rand: func() float64 { return 0 }}
	h := startHost(t, []string{"TESTPLUGIN_EXIT=1"}, Options{
		Backoff: bo,
		Logger:  slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	delays := eventually(t, "five failed launches", func() ([]string, bool) {
		var d []string
		for _, rec := range logs.records() {
			if rec["msg"] == "plugin launch failed" {
				d = append(d, fmt.Sprint(rec["retry_in"]))
			}
		}
		return d, len(d) >= 5
	})
	for i, got := range delays[:5] {
		if want := bo.Delay(i).String(); got != want {
			t.Fatalf("retry %d waited %s, want %s (all: %v)", i+1, got, want, delays)
		}
	}
	if n := h.logCount("start"); n < 5 {
		t.Fatalf("%d launches logged by the plugin, want at least 5", n)
	}
	// Each retry passes through "starting" while the process is launched; wait for the state between attempts.
	st := eventually(t, "a state between attempts", func() (Status, bool) {
		s := h.sup.Status()
		return s, s.State == StateFailed || s.State == StateRestarting
	})
	if !strings.Contains(st.LastError, "launch") {
		t.Fatalf("last error %q does not say the launch failed", st.LastError)
	}
	if _, err := h.sup.Client(); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Client() on a failed plugin: %v", err)
	}
}

// lockedBuffer collects JSON log lines from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// records parses the JSON lines written so far.
func (l *lockedBuffer) records() []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(l.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil {
			out = append(out, rec)
		}
	}
	return out
}

func TestConfigureErrorIsAFailedLaunch(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "plugin.log")
	h := New([]Spec{{Key: 100, Slug: "test", Path: plugintest.Path("testplugin"), Settings: map[string]string{"bogus": "1"},
		Env: []string{"TESTPLUGIN_LOG=" + logPath}}}, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()
	defer func() { cancel(); <-done }()
	sup, _ := h.Get("test")
	eventually(t, "state failed", func() (Status, bool) {
		s := sup.Status()
		return s, s.State == StateFailed
	})
	if le := sup.Status().LastError; !strings.Contains(le, "configure") || !strings.Contains(le, "invalid_argument") {
		t.Fatalf("last error %q", le)
	}
}

func TestShutdownLeavesNoProcess(t *testing.T) {
	h := startHost(t, nil, Options{})
	st := h.waitRunning()
	ms := h.sup.StreamMarket(context.Background())
	if err := ms.Subscribe(t.Context(), &exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_TRADES, Symbol: "X"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ms.Events():
	case <-time.After(wait):
		t.Fatal("no trade")
	}
	h.stop()
	if s := h.sup.Status(); s.State != StateStopped {
		t.Fatalf("state after shutdown %s", s.State)
	}
	if !processGone(st.Pid) {
		t.Fatalf("plugin process %d still running after shutdown", st.Pid)
	}
	// The stream ends too: its channel is drained and closed, without an error event.
	timeout := time.After(wait)
	for {
		select {
		case ev, ok := <-ms.Events():
			if !ok {
				ms.Close()
				return
			}
			if s := ev.GetStatus(); s != nil && s.GetState() == exchangev1.StreamStatus_STATE_ERROR {
				t.Fatalf("error event at shutdown: %v", s)
			}
		case <-timeout:
			t.Fatal("stream not closed after host shutdown")
		}
	}
}

func TestSlowConsumerDropsAndResyncsBook(t *testing.T) {
	h := startHost(t, []string{"TESTPLUGIN_PERIOD=0"}, Options{})
	h.waitRunning()
	ms := h.sup.StreamMarketBuffer(t.Context(), 32)
	defer ms.Close()
	book := &exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_BOOK, Symbol: "BTCUSDT"}
	if err := ms.Subscribe(t.Context(), book); err != nil {
		t.Fatal(err)
	}
	// Do not read: the plugin floods, the buffer fills, events are dropped, the reader never blocks.
	eventually(t, "events dropped while nobody reads", func() (uint64, bool) { return ms.Dropped(), ms.Dropped() > 0 })
	var (
		synced  bool
		lastSeq int64
		good    int
		resyncs int
	)
	// The plugin keeps flooding faster than a -race reader on a busy machine drains, so further drops and resyncs
	// may follow; what must hold is that every delta after a snapshot chains, and that the stream keeps delivering.
	deadline := time.After(wait)
	for good < 200 {
		select {
		case ev := <-ms.Events():
			switch e := ev.GetEvent().(type) {
			case *exchangev1.MarketEvent_Status:
				if e.Status.GetState() != exchangev1.StreamStatus_STATE_RESYNCED {
					t.Fatalf("status %v", e.Status)
				}
				if ev.GetSubscription().GetSymbol() != "BTCUSDT" {
					t.Fatalf("book resync without its subscription: %v", ev)
				}
				resyncs++
				synced = false
			case *exchangev1.MarketEvent_BookSnapshot:
				synced, lastSeq = true, e.BookSnapshot.GetSequence()
			case *exchangev1.MarketEvent_BookDelta:
				if !synced {
					continue // deltas buffered before the resync announcement belong to the old book
				}
				if e.BookDelta.GetPrevSequence() != lastSeq {
					t.Fatalf("gap after resync: prev %d, last %d", e.BookDelta.GetPrevSequence(), lastSeq)
				}
				lastSeq = e.BookDelta.GetSequence()
				good++
			}
		case <-deadline:
			t.Fatalf("only %d contiguous deltas after resync (resyncs %d, dropped %d)", good, resyncs, ms.Dropped())
		}
	}
	if resyncs == 0 {
		t.Fatal("book was never resynced after drops")
	}
}
