package accountstream_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/exhub/exhub/bff/internal/accountstream"
	"github.com/exhub/exhub/bff/internal/accountstream/feed"
	"github.com/exhub/exhub/bff/internal/auth/authtest"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// fakeSource hands out one in-memory upstream per Open; the test writes its updates.
type fakeSource struct {
	ups chan *fakeUpstream
}

type fakeUpstream struct {
	ch  chan pluginhost.AccountUpdate
	ctx context.Context // the context it was opened with
}

func (u *fakeUpstream) Updates() <-chan pluginhost.AccountUpdate { return u.ch }
func (u *fakeUpstream) Close()                                   {}

func newFakeSource() *fakeSource { return &fakeSource{ups: make(chan *fakeUpstream, 4)} }

func (f *fakeSource) Open(ctx context.Context, _ string, _ *exchangev1.AccountRef) (accountstream.Upstream, error) {
	up := &fakeUpstream{ch: make(chan pluginhost.AccountUpdate, 10000), ctx: ctx}
	select {
	case f.ups <- up:
		return up, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (f *fakeSource) upstream(t *testing.T) *fakeUpstream {
	t.Helper()
	select {
	case up := <-f.ups:
		return up
	case <-t.Context().Done():
		t.Fatal("no upstream opened")
	}
	return nil
}

func snapshotEvent() pluginhost.AccountUpdate {
	return pluginhost.AccountUpdate{Event: &exchangev1.AccountEvent{Event: &exchangev1.AccountEvent_Snapshot{
		Snapshot: &exchangev1.AccountSnapshot{Balances: []*exchangev1.Balance{{Asset: "USDT", Total: "100", Available: "100", Locked: "0"}}}}}}
}

func fillEvent(id int) pluginhost.AccountUpdate {
	return pluginhost.AccountUpdate{Event: &exchangev1.AccountEvent{Time: int64(id), Event: &exchangev1.AccountEvent_Fill{
		Fill: &exchangev1.Fill{TradeId: strconv.Itoa(id), OrderId: "o", Symbol: "BTCUSDT", Price: "1", Qty: "1"}}}}
}

// fillReader reads a queue and checks that no fill goes missing without a resync marker, and that the snapshot
// after a marker carries every fill since the last one it was given (its recent fills reach up to the next).
type fillReader struct {
	t        *testing.T
	q        *feed.Queue
	last     int // last fill id known (delivered or in a snapshot)
	synced   bool
	marked   bool
	reasons  []string
	lastSeq  int64
	snapshot int
}

func (r *fillReader) read() {
	r.t.Helper()
	for _, u := range r.q.Take() {
		switch u.Kind {
		case feed.KindResync:
			r.marked = true
			r.reasons = append(r.reasons, u.Reason)
		case feed.KindSnapshot:
			if r.synced && !r.marked {
				r.t.Fatalf("a snapshot without a resync marker")
			}
			r.synced, r.marked = true, false
			r.snapshot++
			if n := len(u.Snapshot.Fills); n > 0 {
				first, _ := strconv.Atoi(u.Snapshot.Fills[0].GetTradeId())
				last, _ := strconv.Atoi(u.Snapshot.Fills[n-1].GetTradeId())
				if first > r.last+1 {
					r.t.Fatalf("fills %d..%d lost before a snapshot starting at %d", r.last+1, first-1, first)
				}
				r.last = max(r.last, last)
			}
			r.lastSeq = u.Seq
		case feed.KindFill:
			if !r.synced || r.marked {
				r.t.Fatalf("fill %s where a snapshot was due", u.Event.GetFill().GetTradeId())
			}
			id, _ := strconv.Atoi(u.Event.GetFill().GetTradeId())
			if id != r.last+1 || u.Seq != r.lastSeq+1 {
				r.t.Fatalf("fill %d (seq %d) after fill %d (seq %d): lost or reordered without a resync", id, u.Seq, r.last, r.lastSeq)
			}
			r.last, r.lastSeq = id, u.Seq
		}
	}
}

// TestSlowSubscriberIsResynced: a subscriber that does not read is cut off with a resync marker and a snapshot
// (whose recent fills cover what it missed), never silently skipped; a fast one gets every fill; a resync of the
// plugin stream reaches both as a marker and a snapshot.
func TestSlowSubscriberIsResynced(t *testing.T) {
	src := newFakeSource()
	accts := newAccounts()
	accts.add("m", "reference", "acct")
	m, _ := startManager(t, accountstream.Options{Source: src, Accounts: accts, RecentFills: 100})
	fast, slow := feed.NewQueue(100000), feed.NewQueue(8)
	for _, q := range []*feed.Queue{fast, slow} {
		cancel, err := m.Subscribe(t.Context(), "m", "reference", q)
		if err != nil {
			t.Fatal(err)
		}
		defer cancel()
	}
	if _, err := m.Subscribe(t.Context(), "m", "elsewhere", feed.NewQueue(2)); err == nil {
		t.Fatal("subscribed to an exchange without an account")
	}
	up := src.upstream(t)
	up.ch <- snapshotEvent()
	const n = 60
	fr, sr := &fillReader{t: t, q: fast}, &fillReader{t: t, q: slow}
	for i := 1; i <= n; i++ {
		up.ch <- fillEvent(i)
		if i%20 == 0 {
			waitFor(t, "the fast subscriber to read fill "+strconv.Itoa(i), func() bool { fr.read(); return fr.last == i })
			sr.read() // the slow one reads now and then: it was cut off meanwhile
			if sr.last != i {
				t.Fatalf("slow subscriber knows fills up to %d after reading, want %d", sr.last, i)
			}
		}
	}
	if len(fr.reasons) != 0 || len(sr.reasons) == 0 {
		t.Fatalf("resyncs: fast %v, slow %v", fr.reasons, sr.reasons)
	}
	for _, r := range sr.reasons {
		if r != "slow_subscriber" {
			t.Fatalf("slow subscriber resync reason %q", r)
		}
	}
	if m.Stats().SlowSubscribers == 0 {
		t.Fatal("slow subscriber not counted")
	}

	// The plugin stream started over: both get the marker and the new snapshot, then the next fill.
	up.ch <- pluginhost.AccountUpdate{Resync: true, Reason: pluginhost.ResyncStreamLost}
	up.ch <- snapshotEvent()
	up.ch <- fillEvent(n + 1)
	waitFor(t, "the resync", func() bool { fr.read(); sr.read(); return fr.last == n+1 && sr.last == n+1 })
	if fr.reasons[len(fr.reasons)-1] != "stream_lost" || sr.reasons[len(sr.reasons)-1] != "stream_lost" {
		t.Fatalf("resync reasons %v, %v", fr.reasons, sr.reasons)
	}

	// A new subscriber starts from the state: a snapshot holding the recent fills.
	late := feed.NewQueue(10)
	cancel, err := m.Subscribe(t.Context(), "m", "reference", late)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	us := late.Take()
	if len(us) != 1 || us[0].Kind != feed.KindSnapshot || len(us[0].Snapshot.Fills) != n+1 ||
		us[0].Snapshot.Fills[n].GetTradeId() != strconv.Itoa(n+1) {
		t.Fatalf("late subscriber got %+v", us)
	}
}

// TestBrokerGapResyncs: a replica that misses a published message of an account re-reads the kept state and
// gives its subscribers a resync and that state, then follows the leader again.
func TestBrokerGapResyncs(t *testing.T) {
	addr := authtest.StartValkey(t)
	accts := newAccounts()
	accts.add("m", "reference", "acct")
	srcA := newFakeSource()
	mA, _ := startManager(t, accountstream.Options{Source: srcA, Accounts: accts, Broker: valkeyBroker(t, addr, "a"),
		StateRefresh: 100 * time.Millisecond})
	qa := feed.NewQueue(1000)
	cancelA, err := mA.Subscribe(t.Context(), "m", "reference", qa)
	if err != nil {
		t.Fatal(err)
	}
	defer cancelA()
	up := srcA.upstream(t)
	up.ch <- snapshotEvent()
	up.ch <- fillEvent(1)
	ra := &fillReader{t: t, q: qa}
	waitFor(t, "replica A's subscriber", func() bool { ra.read(); return ra.last == 1 })

	mB, _ := startManager(t, accountstream.Options{Source: newFakeSource(), Accounts: accts, Broker: valkeyBroker(t, addr, "b")})
	qb := feed.NewQueue(1000)
	cancelB, err := mB.Subscribe(t.Context(), "m", "reference", qb)
	if err != nil {
		t.Fatal(err)
	}
	defer cancelB()
	rb := &fillReader{t: t, q: qb}
	waitFor(t, "replica B's snapshot from the kept state", func() bool { rb.read(); return rb.synced })
	up.ch <- fillEvent(2)
	waitFor(t, "fill 2 on B", func() bool { rb.read(); return rb.last == 2 })

	// The leader's periodic ticks (its last sequence, unchanged) resync nobody.
	published := mA.Stats().Published
	waitFor(t, "three ticks", func() bool { return mA.Stats().Published >= published+3 })
	ra.read()
	rb.read()
	if len(ra.reasons)+len(rb.reasons) != 0 {
		t.Fatalf("resyncs on ticks: %v, %v", ra.reasons, rb.reasons)
	}

	// Forge a hole: a message of the leader's run numbered two past the last.
	vc, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{addr}, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer vc.Close()
	topic := "reference|m|acct"
	forge := func(k string, ahead int64) {
		t.Helper()
		raw, err := vc.Do(t.Context(), vc.B().Get().Key("exhub:account:last:"+topic).Build()).AsBytes()
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			E string `json:"e"`
			S int64  `json:"s"`
		}
		if err := json.Unmarshal(raw, &st); err != nil || st.E == "" {
			t.Fatalf("kept state %s: %v", raw, err)
		}
		forged, _ := json.Marshal(map[string]any{"e": st.E, "s": st.S + ahead, "k": k})
		if err := vc.Do(t.Context(), vc.B().Publish().Channel("exhub:account:ev:"+topic).Message(string(forged)).Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	forge("event", 2)
	// Every replica receives the forged message (the leader's own too): each re-reads the state.
	waitFor(t, "the resyncs", func() bool {
		ra.read()
		rb.read()
		return len(ra.reasons) == 1 && ra.synced && len(rb.reasons) == 1 && rb.synced
	})
	if rb.reasons[0] != "broker_gap" || ra.reasons[0] != "broker_gap" {
		t.Fatalf("resync reasons %v, %v", ra.reasons, rb.reasons)
	}
	up.ch <- fillEvent(3)
	waitFor(t, "fill 3 on both", func() bool { ra.read(); rb.read(); return ra.last == 3 && rb.last == 3 })
	if len(ra.reasons) != 1 || len(rb.reasons) != 1 {
		t.Fatalf("more resyncs: %v, %v", ra.reasons, rb.reasons)
	}

	// A tick ahead of what a replica applied (its last messages were lost) resyncs it too.
	forge("tick", 1)
	waitFor(t, "the resyncs after the tick", func() bool {
		ra.read()
		rb.read()
		return len(ra.reasons) == 2 && ra.synced && len(rb.reasons) == 2 && rb.synced
	})
	up.ch <- fillEvent(4)
	waitFor(t, "fill 4 on both", func() bool { ra.read(); rb.read(); return ra.last == 4 && rb.last == 4 })
}

// TestUnwantedStreamCloses: the upstream stays open for Linger after its last subscriber leaves (a returning
// subscriber finds it), then closes.
func TestUnwantedStreamCloses(t *testing.T) {
	src := newFakeSource()
	accts := newAccounts()
	accts.add("m", "reference", "acct")
	m, _ := startManager(t, accountstream.Options{Source: src, Accounts: accts, Linger: 300 * time.Millisecond})
	q := feed.NewQueue(100)
	cancel, err := m.Subscribe(t.Context(), "m", "reference", q)
	if err != nil {
		t.Fatal(err)
	}
	up := src.upstream(t)
	up.ch <- snapshotEvent()
	waitFor(t, "the snapshot", func() bool { return len(q.Take()) == 1 })
	cancel()
	cancel() // twice is harmless
	// Back within the linger: the same upstream, its state at once.
	again := feed.NewQueue(100)
	cancel, err = m.Subscribe(t.Context(), "m", "reference", again)
	if err != nil {
		t.Fatal(err)
	}
	if us := again.Take(); len(us) != 1 || us[0].Kind != feed.KindSnapshot {
		t.Fatalf("returning subscriber got %+v", us)
	}
	cancel()
	waitFor(t, "the upstream to close", func() bool {
		select {
		case <-up.ctx.Done():
			return true
		default:
			return false
		}
	})
	if st := m.Stats(); st.Topics != 0 || st.Leading != 0 || st.Subscribers != 0 {
		t.Fatalf("after the linger: %+v", st)
	}
	select {
	case <-src.ups:
		t.Fatal("a second upstream was opened")
	default:
	}
}
