package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// accountReader reads an AccountStream and checks what every consumer may rely on: the first update is a snapshot,
// a resync marker is always followed by a snapshot, and after a snapshot the test plugin's fills come with trade ids
// 1, 2, 3, ... without a hole.
type accountReader struct {
	t  *testing.T
	st *AccountStream
	// afterMarker: the next update must be a snapshot.
	afterMarker bool
	started     bool
	// lastFill is the trade id of the last fill since the last snapshot.
	lastFill int
	// snapshot is the open order id of the last snapshot ("<pid>-<call>").
	snapshot string
	markers  []ResyncReason
}

func (r *accountReader) next() AccountUpdate {
	r.t.Helper()
	select {
	case u, ok := <-r.st.Updates():
		if !ok {
			r.t.Fatal("account stream closed")
		}
		switch {
		case u.Resync:
			if !r.started {
				r.t.Fatalf("a resync marker (%s) before the first snapshot", u.Reason)
			}
			r.afterMarker = true
			r.markers = append(r.markers, u.Reason)
		case u.Event.GetSnapshot() != nil:
			r.started, r.afterMarker, r.lastFill = true, false, 0
			r.snapshot = u.Event.GetSnapshot().GetOpenOrders()[0].GetOrderId()
		case u.Event.GetFill() != nil:
			if !r.started || r.afterMarker {
				r.t.Fatalf("fill %s where a snapshot was due", u.Event.GetFill().GetTradeId())
			}
			id, _ := strconv.Atoi(u.Event.GetFill().GetTradeId())
			if id != r.lastFill+1 {
				r.t.Fatalf("fill %d after fill %d: an event was lost or reordered", id, r.lastFill)
			}
			r.lastFill = id
		}
		return u
	case <-time.After(wait):
		r.t.Fatalf("no account update within %s (stats %+v)", wait, r.st.Stats())
		return AccountUpdate{}
	}
}

// until reads until cond holds for the reader.
func (r *accountReader) until(what string, cond func() bool) {
	r.t.Helper()
	for !cond() {
		r.next()
	}
}

func testAccount(id string, extra map[string]string) *exchangev1.AccountRef {
	return &exchangev1.AccountRef{AccountId: id, ApiKey: "key-" + id, ApiSecret: "secret", Extra: extra}
}

func TestAccountStreamDeliversEveryEventToASlowConsumer(t *testing.T) {
	h := startHost(t, nil, Options{})
	h.waitRunning()
	const n = 2000
	st, err := h.sup.StreamAccount(t.Context(), testAccount("a1", map[string]string{"events": strconv.Itoa(n)}), AccountStreamOptions{Buffer: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := h.sup.StreamAccount(t.Context(), testAccount("a1", nil), AccountStreamOptions{}); !errors.Is(err, ErrAccountStreamOpen) {
		t.Fatalf("a second stream for the same account: %v", err)
	}
	r := &accountReader{t: t, st: st}
	if u := r.next(); u.Event.GetSnapshot() == nil || u.Event.GetSequence() != 2 {
		t.Fatalf("first update %+v, want the snapshot (sequence 2, after CONNECTED, which is not forwarded)", u)
	}
	for r.lastFill < n {
		r.next()
		if r.lastFill%100 == 0 {
			time.Sleep(2 * time.Millisecond) // a slow consumer: the plugin waits, nothing is dropped
		}
	}
	if len(r.markers) != 0 {
		t.Fatalf("resyncs without a cause: %v", r.markers)
	}
	s := st.Stats()
	if s.Events != n+1 || s.Resyncs != 0 || s.Gaps != 0 || s.Reopens != 0 {
		t.Fatalf("stats %+v, want %d events and nothing else", s, n+1)
	}
	st.Close()
	if _, ok := <-st.Updates(); ok {
		t.Fatal("updates not closed after Close")
	}
	// Closed, the account may be streamed again.
	again, err := h.sup.StreamAccount(t.Context(), testAccount("a1", nil), AccountStreamOptions{})
	if err != nil {
		t.Fatalf("reopen after Close: %v", err)
	}
	again.Close()
}

func TestAccountStreamResyncsOnAGap(t *testing.T) {
	h := startHost(t, nil, Options{})
	st0 := h.waitRunning()
	st, err := h.sup.StreamAccount(t.Context(), testAccount("a2", map[string]string{"events": "20", "gap_at": "5"}), AccountStreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := &accountReader{t: t, st: st}
	r.until("the fill before the gap", func() bool { return r.lastFill == 5 })
	first := r.snapshot
	if u := r.next(); !u.Resync || u.Reason != ResyncGap {
		t.Fatalf("after the gap: %+v, want a resync marker for the gap", u)
	}
	if u := r.next(); u.Event.GetSnapshot() == nil {
		t.Fatalf("after the marker: %+v, want a snapshot", u)
	}
	if r.snapshot == first || r.snapshot != fmt.Sprintf("%d-2", st0.Pid) {
		t.Fatalf("snapshot %s after the gap, want the second stream of process %d", r.snapshot, st0.Pid)
	}
	r.until("all fills of the new stream", func() bool { return r.lastFill == 20 })
	if s := st.Stats(); s.Gaps != 1 || s.Resyncs != 1 || s.Reopens != 1 || !strings.HasPrefix(s.LastError, string(ResyncGap)) {
		t.Fatalf("stats %+v", s)
	}
}

func TestAccountStreamRequiresASnapshotFirst(t *testing.T) {
	h := startHost(t, nil, Options{})
	st0 := h.waitRunning()
	st, err := h.sup.StreamAccount(t.Context(), testAccount("a3", map[string]string{"events": "3", "no_snapshot": "1"}), AccountStreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := &accountReader{t: t, st: st}
	// The fill sent without a snapshot never reaches the consumer; the reopened stream starts with one.
	if u := r.next(); u.Event.GetSnapshot() == nil || r.snapshot != fmt.Sprintf("%d-2", st0.Pid) {
		t.Fatalf("first update %+v (snapshot %s), want the second stream's snapshot", u, r.snapshot)
	}
	r.until("three fills", func() bool { return r.lastFill == 3 })
	if s := st.Stats(); s.Reopens != 1 || s.Events != 4 {
		t.Fatalf("stats %+v", s)
	}
}

func TestAccountStreamSurvivesSIGKILL(t *testing.T) {
	h := startHost(t, nil, Options{})
	first := h.waitRunning()
	st, err := h.sup.StreamAccount(t.Context(), testAccount("a4", map[string]string{"events": "5"}), AccountStreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := &accountReader{t: t, st: st}
	r.until("five fills", func() bool { return r.lastFill == 5 })
	if err := syscall.Kill(first.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if u := r.next(); !u.Resync || u.Reason != ResyncStreamLost {
		t.Fatalf("after SIGKILL: %+v, want a resync marker", u)
	}
	if u := r.next(); u.Event.GetSnapshot() == nil {
		t.Fatalf("after the marker: %+v, want a snapshot", u)
	}
	now := h.sup.Status()
	if !strings.HasPrefix(r.snapshot, fmt.Sprintf("%d-", now.Pid)) || now.Pid == first.Pid {
		t.Fatalf("snapshot %s, want one from the restarted process (pid %d, killed %d)", r.snapshot, now.Pid, first.Pid)
	}
	r.until("five fills from the new process", func() bool { return r.lastFill == 5 })
	if s := st.Stats(); s.Resyncs != 1 || s.Gaps != 0 || s.Events != 12 {
		t.Fatalf("stats %+v", s)
	}
}

func TestAccountStreamRestartsForAStuckConsumer(t *testing.T) {
	h := startHost(t, nil, Options{})
	h.waitRunning()
	const n = 50
	st, err := h.sup.StreamAccount(t.Context(), testAccount("a5", map[string]string{"events": strconv.Itoa(n)}),
		AccountStreamOptions{Buffer: 1, StuckAfter: 250 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := &accountReader{t: t, st: st}
	r.next() // the snapshot
	// Stop reading until the stream has given up on this consumer.
	eventually(t, "the consumer declared stuck", func() (AccountStreamStats, bool) { return st.Stats(), st.Stats().Stuck > 0 })
	// What was buffered comes first and in order, then a marker and a fresh snapshot. Reading under load may be
	// slow enough to be stuck again: every marker must still be followed by a snapshot, and the fills restart at 1.
	r.until("a stuck marker", func() bool { return len(r.markers) > 0 })
	if r.markers[0] != ResyncConsumerStuck {
		t.Fatalf("markers %v, want consumer_stuck first", r.markers)
	}
	r.until("all fills after a snapshot", func() bool { return !r.afterMarker && r.lastFill == n })
}

func TestAccountStreamEndsWithTheHost(t *testing.T) {
	h := startHost(t, nil, Options{})
	h.waitRunning()
	st, err := h.sup.StreamAccount(context.Background(), testAccount("a6", nil), AccountStreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := &accountReader{t: t, st: st}
	r.next()
	h.stop()
	select {
	case _, ok := <-st.Updates():
		if ok {
			t.Fatal("an update after shutdown")
		}
	case <-time.After(wait):
		t.Fatal("account stream not closed after host shutdown")
	}
	st.Close()
}
