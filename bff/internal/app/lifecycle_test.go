package app

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// journal records lifecycle events from every component's goroutine.
type journal struct {
	mu     sync.Mutex
	events []string
}

func (j *journal) add(e string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, e)
}

func (j *journal) list() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.events)
}

// waitFor waits (generously bounded) until the journal holds e.
func (j *journal) waitFor(t *testing.T, e string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !slices.Contains(j.list(), e) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in %v", e, j.list())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// fake is a component that records Open, Run start and end, and Close; its Run blocks until its context ends
// unless runErr is set. A component's Run records its end only after checking that every later component has
// already closed, so an out-of-order stop shows in the journal.
type fake struct {
	name    string
	j       *journal
	openErr error
	runErr  chan error // when set, Run returns what it receives (before its context ends)
}

func (f *fake) Name() string { return f.name }
func (f *fake) Open(ctx context.Context) error {
	f.j.add("open " + f.name)
	return f.openErr
}
func (f *fake) Run(ctx context.Context) error {
	f.j.add("run " + f.name)
	if f.runErr != nil {
		select {
		case err := <-f.runErr:
			f.j.add("fail " + f.name)
			return err
		case <-ctx.Done():
		}
	}
	<-ctx.Done()
	f.j.add("end " + f.name)
	return nil
}
func (f *fake) Close() error {
	f.j.add("close " + f.name)
	return nil
}

func components(j *journal, names ...string) []*fake {
	out := make([]*fake, len(names))
	for i, n := range names {
		out[i] = &fake{name: n, j: j}
	}
	return out
}

func asComponents(fs []*fake) []Component {
	out := make([]Component, len(fs))
	for i, f := range fs {
		out[i] = f
	}
	return out
}

// stops is the journal without the Run starts (whose order across goroutines is not fixed).
func stops(events []string) []string {
	var out []string
	for _, e := range events {
		if !strings.HasPrefix(e, "run ") {
			out = append(out, e)
		}
	}
	return out
}

func TestStartsInOrderAndStopsInReverseOnCancel(t *testing.T) {
	j := &journal{}
	fs := components(j, "a", "b", "c")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- NewLifecycle(nil, asComponents(fs)...).Run(ctx) }()
	for _, f := range fs {
		j.waitFor(t, "run "+f.name) // every component runs while the context lives
	}
	if got := stops(j.list()); !slices.Equal(got, []string{"open a", "open b", "open c"}) {
		t.Fatalf("start: %v", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
	want := []string{"open a", "open b", "open c", "end c", "close c", "end b", "close b", "end a", "close a"}
	if got := stops(j.list()); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
}

func TestOpenFailureStopsTheStartedOnes(t *testing.T) {
	j := &journal{}
	fs := components(j, "a", "b", "c", "d")
	fs[2].openErr = errors.New("no database")
	err := NewLifecycle(nil, asComponents(fs)...).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "c: no database") {
		t.Fatalf("error %v, want the failing component named", err)
	}
	// c never opened, so it is neither run nor closed; d never started.
	want := []string{"open a", "open b", "open c", "end b", "close b", "end a", "close a"}
	if got := stops(j.list()); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
}

func TestRunFailureStopsEverything(t *testing.T) {
	j := &journal{}
	fs := components(j, "a", "b", "c")
	fs[1].runErr = make(chan error, 1)
	done := make(chan error, 1)
	go func() { done <- NewLifecycle(nil, asComponents(fs)...).Run(context.Background()) }()
	j.waitFor(t, "run c")
	j.waitFor(t, "run b")
	fs[1].runErr <- errors.New("listener died")
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "b: listener died") {
		t.Fatalf("error %v", err)
	}
	want := []string{"open a", "open b", "open c", "fail b", "end c", "close c", "close b", "end a", "close a"}
	if got := stops(j.list()); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
}

func TestCloseErrorsAreReportedAndEveryCloseRuns(t *testing.T) {
	var closed []string
	mk := func(name string, closeErr error) Component {
		return Func{ID: name, CloseFn: func() error { closed = append(closed, name); return closeErr }}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // stopped before it started: nothing opens, nothing fails
	if err := NewLifecycle(nil, mk("x", nil)).Run(ctx); err != nil || len(closed) != 0 {
		t.Fatalf("cancelled start: %v, closed %v", err, closed)
	}
	// Func components with no Run stop at once and are closed in reverse order when the context ends.
	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan error, 1)
	running := make(chan struct{})
	c := mk("c", nil).(Func)
	c.RunFn = func(ctx context.Context) error { close(running); <-ctx.Done(); return nil }
	l := NewLifecycle(nil, mk("a", nil), mk("b", errors.New("flush failed")), c)
	if !slices.Equal(l.Names(), []string{"a", "b", "c"}) {
		t.Fatalf("names %v", l.Names())
	}
	go func() { done <- l.Run(ctx) }()
	<-running
	cancel()
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "b: close: flush failed") {
		t.Fatalf("error %v", err)
	}
	if !slices.Equal(closed, []string{"c", "b", "a"}) {
		t.Fatalf("closed %v", closed)
	}
}

// A component's context keeps the caller's values but is cancelled only at its turn.
func TestComponentContextKeepsValues(t *testing.T) {
	type key struct{}
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	got := make(chan any, 1)
	done := make(chan error, 1)
	go func() {
		done <- NewLifecycle(nil, Func{ID: "a", RunFn: func(rctx context.Context) error {
			got <- rctx.Value(key{})
			<-rctx.Done()
			return nil
		}}).Run(ctx)
	}()
	if v := <-got; v != "v" {
		t.Fatalf("value %v", v)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
