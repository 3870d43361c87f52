// Package accountstream runs the private account streams of the BFF: one plugin account stream per exchange
// account that someone wants (a browser of the member through the stream gateway's private channels, the order
// journal), led by one replica through the stream package's broker (Valkey interest and leases, or in-process),
// published with a per-account sequence beside the state it leads to, and fanned out on every replica to local
// subscribers that start from that state. Nothing is dropped or merged: a subscriber that falls behind, a hole
// between replicas, a plugin restart or a new leader ends in a resync marker and a fresh snapshot. See README.md.
package accountstream

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/exhub/exhub/bff/internal/accountstream/feed"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/stream"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// Account is one exchange account of a member.
type Account struct {
	// ID is the BFF's id of the account (AccountRef.account_id).
	ID       string
	Exchange string
}

// Accounts looks up a member's exchange accounts (the accounts service, through a small adapter).
type Accounts interface {
	// Accounts lists the member's accounts.
	Accounts(ctx context.Context, memberID string) ([]Account, error)
	// AccountRef returns the credentials-bearing reference of the member's account on exchange (an error
	// wrapping feed.ErrNoAccount when there is none). The reference never leaves the leader's memory.
	AccountRef(ctx context.Context, memberID, exchange string) (*exchangev1.AccountRef, error)
}

// Upstream is one open account stream (a *pluginhost.AccountStream).
type Upstream interface {
	Updates() <-chan pluginhost.AccountUpdate
	Close()
}

// Source opens account streams.
type Source interface {
	Open(ctx context.Context, exchange string, ref *exchangev1.AccountRef) (Upstream, error)
}

// HostSource opens account streams on the plugin host: Host.Get(exchange).StreamAccount.
type HostSource struct {
	Host    *pluginhost.Host
	Options pluginhost.AccountStreamOptions
}

// Open implements Source.
func (h HostSource) Open(ctx context.Context, exchange string, ref *exchangev1.AccountRef) (Upstream, error) {
	sup, ok := h.Host.Get(exchange)
	if !ok {
		return nil, fmt.Errorf("exchange %q has no plugin", exchange)
	}
	st, err := sup.StreamAccount(ctx, ref, h.Options)
	if err != nil {
		return nil, fmt.Errorf("stream account on %s: %w", exchange, err)
	}
	return st, nil
}

// Options builds a Manager. Source and Accounts are required.
type Options struct {
	Source   Source
	Accounts Accounts
	// Broker connects replicas: a stream.ValkeyBroker of its own (prefix "exhub:account:", not the market
	// gateway's) or nil for the in-process broker (one replica). The manager binds it (stream.BindTopics).
	Broker stream.Broker
	// Linger keeps an account's stream open this long after its last subscriber left (30 s).
	Linger time.Duration
	// RecentFills is how many of the latest fills a snapshot carries (100).
	RecentFills int
	// MaxBatch bounds the updates published together (256).
	MaxBatch int
	// RecoverBuffer bounds the messages held while a replica re-reads an account's state after a hole (4096);
	// beyond it the replica re-reads again.
	RecoverBuffer int
	// StateRefresh is how often a leader stores the account's state again although nothing changed (1 min), so
	// that it outlives a quiet hour in Valkey (keep the broker's LastTTL several times longer).
	StateRefresh time.Duration
	Logger       *slog.Logger
}

// Manager is the account stream manager of one BFF replica. It implements feed.Subscriber.
type Manager struct {
	o      Options
	log    *slog.Logger
	broker stream.Broker
	ctx    context.Context // ends when Run returns
	stop   context.CancelFunc
	wg     sync.WaitGroup // leaders and recoveries

	mu     sync.Mutex
	topics map[string]*topic

	lmu     sync.Mutex
	leaders map[string]context.CancelFunc

	published, resyncs, slow, gaps atomic.Uint64
	// keepState: the broker carries messages between processes, so receivers may miss some and re-read the state
	// kept beside them (the in-process broker delivers every message synchronously: nothing to keep).
	keepState bool
}

var _ feed.Subscriber = (*Manager)(nil)

// New builds a manager; Run must run for it to work across replicas (the in-process broker needs no Run).
func New(o Options) *Manager {
	if o.Linger <= 0 {
		o.Linger = 30 * time.Second
	}
	if o.RecentFills <= 0 {
		o.RecentFills = 100
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 256
	}
	if o.RecoverBuffer <= 0 {
		o.RecoverBuffer = 4096
	}
	if o.StateRefresh <= 0 {
		o.StateRefresh = time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Broker == nil {
		o.Broker = stream.NewMemoryBroker()
	}
	ctx, stop := context.WithCancel(context.Background())
	m := &Manager{o: o, log: o.Logger, broker: o.Broker, ctx: ctx, stop: stop, topics: map[string]*topic{},
		leaders: map[string]context.CancelFunc{}}
	_, inProcess := o.Broker.(*stream.MemoryBroker)
	m.keepState = !inProcess
	stream.BindTopics(o.Broker, stream.TopicHandler{Deliver: m.deliver, Lead: m.lead, Unlead: m.unlead})
	return m
}

// Run runs the broker until ctx ends, then stops every leader and recovery.
func (m *Manager) Run(ctx context.Context) error {
	err := m.broker.Run(ctx)
	m.lmu.Lock() // no goroutine starts after this (see spawn)
	m.stop()
	m.lmu.Unlock()
	m.mu.Lock()
	for _, t := range m.topics {
		if t.linger != nil {
			t.linger.Stop()
		}
	}
	m.mu.Unlock()
	m.wg.Wait()
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("account stream broker: %w", err)
	}
	return nil
}

// Stats are the manager's gauges and counters.
type Stats struct {
	Topics, Subscribers, Leading int
	// Published: messages this replica published as leader. Resyncs: resync points fanned out (markers);
	// SlowSubscribers: subscribers cut off for not keeping up; Gaps: holes between replicas (re-read state).
	Published, Resyncs, SlowSubscribers, Gaps uint64
}

// Stats returns the manager's gauges and counters.
func (m *Manager) Stats() Stats {
	st := Stats{Published: m.published.Load(), Resyncs: m.resyncs.Load(), SlowSubscribers: m.slow.Load(), Gaps: m.gaps.Load()}
	m.mu.Lock()
	st.Topics = len(m.topics)
	for _, t := range m.topics {
		t.mu.Lock()
		st.Subscribers += len(t.subs)
		t.mu.Unlock()
	}
	m.mu.Unlock()
	m.lmu.Lock()
	st.Leading = len(m.leaders)
	m.lmu.Unlock()
	return st
}

// topicKey names an account's stream: exchange|member|account.
func topicKey(exchange, memberID, accountID string) string {
	return exchange + "|" + memberID + "|" + accountID
}

func parseTopic(t string) (exchange, memberID, accountID string, ok bool) {
	parts := strings.Split(t, "|")
	if len(parts) != 3 {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

// topic is one account's stream on this replica: its subscribers and the state they start from.
type topic struct {
	key, exchange string

	// guarded by Manager.mu
	linger *time.Timer
	joined bool

	mu      sync.Mutex
	subs    map[*sub]struct{}
	model   *model
	local   int64  // this replica's sequence of the account's updates
	epoch   string // the leader run whose messages this replica follows
	seq     int64  // last message sequence applied in epoch
	pending string // resync reason owed with the next snapshot
	// recovering: the state is being re-read (Broker.Last); messages wait in held (bounded).
	recovering bool
	held       []*envelope
	overflow   bool
}

type sub struct {
	sink   feed.Sink
	synced bool // has been given a snapshot
}

// Subscribe implements feed.Subscriber.
func (m *Manager) Subscribe(ctx context.Context, memberID, exchange string, sink feed.Sink) (func(), error) {
	if memberID == "" {
		return nil, errors.New("accountstream: no member")
	}
	accts, err := m.o.Accounts.Accounts(ctx, memberID)
	if err != nil {
		return nil, fmt.Errorf("accounts of the member: %w", err)
	}
	var acct *Account
	for i := range accts {
		if accts[i].Exchange == exchange {
			acct = &accts[i]
			break
		}
	}
	if acct == nil {
		return nil, fmt.Errorf("%s: %w", exchange, feed.ErrNoAccount)
	}
	key := topicKey(exchange, memberID, acct.ID)
	s := &sub{sink: sink}
	m.mu.Lock()
	t, ok := m.topics[key]
	if !ok {
		t = &topic{key: key, exchange: exchange, subs: map[*sub]struct{}{}, model: newModel(m.o.RecentFills)}
		m.topics[key] = t
	}
	if t.linger != nil {
		t.linger.Stop()
		t.linger = nil
	}
	t.mu.Lock()
	t.subs[s] = struct{}{}
	if t.model.synced {
		s.synced = true
		if !sink.Offer(feed.Update{Exchange: exchange, Seq: t.local, Kind: feed.KindSnapshot, Snapshot: t.model.snapshot()}) {
			sink.Reset([]feed.Update{{Exchange: exchange, Seq: t.local, Kind: feed.KindSnapshot, Snapshot: t.model.snapshot()}})
		}
	}
	t.mu.Unlock()
	if !t.joined {
		t.joined = true
		m.broker.Join(key)
	}
	m.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { m.unsubscribe(t, s) }) }, nil
}

func (m *Manager) unsubscribe(t *topic, s *sub) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t.mu.Lock()
	delete(t.subs, s)
	empty := len(t.subs) == 0
	t.mu.Unlock()
	if !empty || m.ctx.Err() != nil {
		return
	}
	var timer *time.Timer
	timer = time.AfterFunc(m.o.Linger, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if t.linger != timer {
			return // a subscriber came back
		}
		t.linger = nil
		t.mu.Lock()
		empty := len(t.subs) == 0
		t.mu.Unlock()
		if !empty || !t.joined {
			return
		}
		t.joined = false
		delete(m.topics, t.key)
		m.broker.Leave(t.key)
	})
	t.linger = timer
}

// --- messages between replicas --------------------------------------------------------------------------------

// envelope is one message of an account topic. A leader run (epoch) numbers its messages from 1 (S); statuses are
// not numbered (S 0).
type envelope struct {
	E  string     `json:"e"`
	S  int64      `json:"s,omitempty"`
	K  string     `json:"k"` // snapshot, event, resync, status, state, tick
	R  string     `json:"r,omitempty"`
	Ev []byte     `json:"ev,omitempty"` // exchange.v1 AccountEvent (event, status)
	St *wireState `json:"st,omitempty"` // snapshot, state
}

const (
	kSnapshot = "snapshot"
	kEvent    = "event"
	kResync   = "resync"
	kStatus   = "status"
	kState    = "state"
	kTick     = "tick" // the run's last sequence, unchanged (StateRefresh)
)

// --- leading ---------------------------------------------------------------------------------------------------

func (m *Manager) lead(key string) {
	m.lmu.Lock()
	defer m.lmu.Unlock()
	if _, ok := m.leaders[key]; ok || m.ctx.Err() != nil {
		return
	}
	ctx, cancel := context.WithCancel(m.ctx)
	m.leaders[key] = cancel
	m.wg.Add(1)
	go func() { // owned by the manager; ends with unlead or Run
		defer m.wg.Done()
		m.runLeader(ctx, key)
	}()
}

// spawn runs f in a goroutine owned by the manager (Run waits for it) unless the manager has stopped.
func (m *Manager) spawn(f func()) {
	m.lmu.Lock()
	defer m.lmu.Unlock()
	if m.ctx.Err() != nil {
		return
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		f()
	}()
}

func (m *Manager) unlead(key string) {
	m.lmu.Lock()
	cancel := m.leaders[key]
	delete(m.leaders, key)
	m.lmu.Unlock()
	if cancel != nil {
		cancel()
	}
}

func newEpoch() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// runLeader holds the account's one upstream while this replica leads the topic: it opens the plugin account
// stream (again after it ends), numbers its updates, keeps the state they lead to and publishes both.
func (m *Manager) runLeader(ctx context.Context, key string) {
	exchange, memberID, accountID, ok := parseTopic(key)
	if !ok {
		m.log.Error("accountstream: bad topic", "topic", key)
		return
	}
	l := &leader{m: m, key: key, epoch: newEpoch(), model: newModel(m.o.RecentFills)}
	retry := pluginhost.Backoff{Initial: 100 * time.Millisecond, Max: 5 * time.Second}
	for attempt := 0; ctx.Err() == nil; attempt++ {
		if attempt > 0 && !sleep(ctx, retry.Delay(attempt-1)) {
			return
		}
		ref, err := m.o.Accounts.AccountRef(ctx, memberID, exchange)
		if err != nil {
			m.log.Warn("accountstream: account lookup", "exchange", exchange, "member", memberID, "err", err)
			continue
		}
		if ref.GetAccountId() != "" && ref.GetAccountId() != accountID {
			// The member replaced the account: this topic's subscribers move to the new one when they resubscribe.
			l.status(exchangev1.StreamStatus_STATE_ERROR, "the account was replaced; subscribe again")
			<-ctx.Done()
			return
		}
		up, err := m.o.Source.Open(ctx, exchange, ref)
		if err != nil {
			m.log.Warn("accountstream: open account stream", "exchange", exchange, "member", memberID, "err", err)
			continue
		}
		if l.pump(ctx, up) {
			attempt = 0
		}
		up.Close()
	}
}

type leader struct {
	m     *Manager
	key   string
	epoch string
	seq   int64
	model *model
	// opened: an upstream delivered a snapshot in this run; a later upstream owes a resync marker.
	opened bool
}

// pump publishes one upstream's updates until it ends (false when it never delivered anything).
func (l *leader) pump(ctx context.Context, up Upstream) bool {
	batch := make([]*envelope, 0, l.m.o.MaxBatch)
	got := false
	first := true
	refresh := time.NewTicker(l.m.o.StateRefresh)
	defer refresh.Stop()
	for {
		var (
			u  pluginhost.AccountUpdate
			ok bool
		)
		select {
		case <-ctx.Done():
			return got
		case <-refresh.C:
			// Keep the state alive in the broker for replicas that join a quiet account, and tell every replica
			// where the run stands: one that missed the last messages notices now, not at the next update.
			if l.model.synced {
				l.publish([]*envelope{{E: l.epoch, S: l.seq, K: kTick}})
			}
			continue
		case u, ok = <-up.Updates():
		}
		if !ok {
			return got
		}
		got = true
		batch = batch[:0]
		for {
			if first && l.opened && !u.Resync && u.Event.GetSnapshot() != nil {
				// A new upstream of this run starts with a snapshot without a marker: the host's markers only
				// cover restarts within one upstream.
				batch = append(batch, l.next(&envelope{K: kResync, R: string(pluginhost.ResyncStreamLost)}))
			}
			if env := l.envelope(u); env != nil {
				batch = append(batch, env)
			}
			if u.Event.GetSnapshot() != nil {
				first = false
			}
			if len(batch) >= l.m.o.MaxBatch {
				break
			}
			select {
			case u, ok = <-up.Updates():
				if ok {
					continue
				}
			default:
			}
			break
		}
		l.publish(batch)
		if !ok {
			return got
		}
	}
}

func (l *leader) next(env *envelope) *envelope {
	l.seq++
	env.E, env.S = l.epoch, l.seq
	return env
}

// envelope turns one upstream update into its message and applies it to the leader's state.
func (l *leader) envelope(u pluginhost.AccountUpdate) *envelope {
	if u.Resync {
		return l.next(&envelope{K: kResync, R: string(u.Reason)})
	}
	ev := u.Event
	if ev.GetStatus() != nil {
		b, err := proto.Marshal(ev)
		if err != nil {
			return nil
		}
		return &envelope{E: l.epoch, K: kStatus, Ev: b}
	}
	if s := ev.GetSnapshot(); s != nil {
		l.model.reset(s, ev.GetTime())
		l.opened = true
		w, err := l.model.wire()
		if err != nil {
			l.m.log.Error("accountstream: encode state", "err", err)
			return nil
		}
		return l.next(&envelope{K: kSnapshot, St: w})
	}
	b, err := proto.Marshal(ev)
	if err != nil {
		l.m.log.Error("accountstream: encode event", "err", err)
		return nil
	}
	l.model.apply(ev)
	return l.next(&envelope{K: kEvent, Ev: b})
}

func (l *leader) status(state exchangev1.StreamStatus_State, msg string) {
	b, _ := proto.Marshal(&exchangev1.AccountEvent{Time: time.Now().UnixMilli(),
		Event: &exchangev1.AccountEvent_Status{Status: &exchangev1.StreamStatus{State: state, Message: msg}}})
	l.publish([]*envelope{{E: l.epoch, K: kStatus, Ev: b}})
}

// publish sends a batch, preceded by the state it leads to (kept by the broker, not published) once the run has a
// snapshot.
func (l *leader) publish(batch []*envelope) {
	msgs := make([]stream.Message, 0, len(batch)+1)
	if l.model.synced && l.m.keepState {
		w, err := l.model.wire()
		if err == nil {
			b, err := json.Marshal(&envelope{E: l.epoch, S: l.seq, K: kState, St: w})
			if err == nil {
				msgs = append(msgs, stream.Message{Topic: l.key, Payload: b, State: true, StateOnly: true})
			}
		}
	}
	for _, env := range batch {
		b, err := json.Marshal(env)
		if err != nil {
			continue
		}
		msgs = append(msgs, stream.Message{Topic: l.key, Payload: b})
	}
	l.m.published.Add(uint64(len(batch)))
	l.m.broker.Publish(msgs)
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// --- receiving -------------------------------------------------------------------------------------------------

// deliver takes one message of a topic (from this replica's leader or another's, through the broker).
func (m *Manager) deliver(key string, payload []byte, initial bool) bool {
	m.mu.Lock()
	t := m.topics[key]
	m.mu.Unlock()
	if t == nil {
		return true // nobody here wants it any more
	}
	env := &envelope{}
	if err := json.Unmarshal(payload, env); err != nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.recovering {
		if len(t.held) >= m.o.RecoverBuffer {
			t.overflow = true
			t.held = nil
		} else if !t.overflow {
			t.held = append(t.held, env)
		}
		return true
	}
	m.receive(t, env)
	return true
}

// receive applies one message in order, or starts re-reading the state after a hole. Caller holds t.mu.
func (m *Manager) receive(t *topic, env *envelope) {
	if env.K == kStatus {
		ev := &exchangev1.AccountEvent{}
		if proto.Unmarshal(env.Ev, ev) == nil {
			m.fan(t, feed.Update{Exchange: t.exchange, Kind: feed.KindStatus, Event: ev})
		}
		return
	}
	if env.K == kTick {
		switch {
		case env.E != t.epoch:
			m.recover(t, "leader_changed")
		case env.S > t.seq:
			m.recover(t, "broker_gap")
		}
		return
	}
	isState := env.K == kSnapshot || env.K == kState
	switch {
	case env.E != t.epoch:
		if !isState {
			m.recover(t, "leader_changed")
			return
		}
		if t.epoch != "" && t.pending == "" {
			t.pending = "leader_changed"
		}
	case env.S <= t.seq:
		return // already applied (a kept state that we had, or a message repeated)
	case env.S != t.seq+1 && !isState:
		m.recover(t, "broker_gap")
		return
	case env.S != t.seq+1 && t.pending == "":
		t.pending = "broker_gap"
	}
	t.epoch, t.seq = env.E, env.S
	switch env.K {
	case kResync:
		t.pending = env.R
	case kSnapshot, kState:
		if env.St == nil || t.model.load(env.St) != nil {
			m.log.Error("accountstream: undecodable state", "topic", t.key)
			m.recover(t, "broker_gap")
			return
		}
		m.fanSnapshot(t)
	case kEvent:
		ev := &exchangev1.AccountEvent{}
		if err := proto.Unmarshal(env.Ev, ev); err != nil {
			m.log.Error("accountstream: undecodable event", "topic", t.key, "err", err)
			m.recover(t, "broker_gap")
			return
		}
		if !t.model.synced {
			return // before any state: the state this replica reads first covers it
		}
		t.model.apply(ev)
		t.local++
		m.fan(t, feed.Update{Exchange: t.exchange, Seq: t.local, Kind: kindOf(ev), Event: ev})
	}
}

func kindOf(ev *exchangev1.AccountEvent) feed.Kind {
	switch ev.GetEvent().(type) {
	case *exchangev1.AccountEvent_Order:
		return feed.KindOrder
	case *exchangev1.AccountEvent_Fill:
		return feed.KindFill
	case *exchangev1.AccountEvent_Position:
		return feed.KindPosition
	case *exchangev1.AccountEvent_Balance:
		return feed.KindBalance
	case *exchangev1.AccountEvent_AlgoOrder:
		return feed.KindAlgo
	}
	return feed.KindStatus
}

// fan offers u to every subscriber; one whose queue is full is cut off: its backlog is replaced by a resync
// marker and the current snapshot. Caller holds t.mu.
func (m *Manager) fan(t *topic, u feed.Update) {
	for s := range t.subs {
		if u.Kind != feed.KindStatus && !s.synced {
			continue // its snapshot comes first
		}
		if !s.sink.Offer(u) {
			m.slow.Add(1)
			m.resyncs.Add(1)
			s.sink.Reset([]feed.Update{{Exchange: t.exchange, Kind: feed.KindResync, Reason: "slow_subscriber"},
				{Exchange: t.exchange, Seq: t.local, Kind: feed.KindSnapshot, Snapshot: t.model.snapshot()}})
		}
	}
}

// fanSnapshot gives every subscriber the new state: after a resync marker for those that had one. Caller holds
// t.mu.
func (m *Manager) fanSnapshot(t *topic) {
	t.local++
	snap := feed.Update{Exchange: t.exchange, Seq: t.local, Kind: feed.KindSnapshot, Snapshot: t.model.snapshot()}
	reason := t.pending
	t.pending = ""
	if reason == "" {
		reason = "resynced"
	}
	marker := feed.Update{Exchange: t.exchange, Kind: feed.KindResync, Reason: reason}
	counted := false
	for s := range t.subs {
		if !s.synced {
			s.synced = true
			if !s.sink.Offer(snap) {
				s.sink.Reset([]feed.Update{snap})
			}
			continue
		}
		if !counted {
			m.resyncs.Add(1)
			counted = true
		}
		if !s.sink.Offer(marker) || !s.sink.Offer(snap) {
			m.slow.Add(1)
			s.sink.Reset([]feed.Update{marker, snap})
		}
	}
}

// recover re-reads the topic's state from the broker after a hole; messages wait meanwhile. Caller holds t.mu.
func (m *Manager) recover(t *topic, reason string) {
	if t.recovering || m.ctx.Err() != nil {
		return
	}
	m.gaps.Add(1)
	t.recovering, t.held, t.overflow = true, nil, false
	if t.model.synced && t.pending == "" {
		t.pending = reason
	}
	m.spawn(func() { // ends when the state is read or Run ends
		retry := pluginhost.Backoff{Initial: 50 * time.Millisecond, Max: 2 * time.Second}
		for attempt := 0; ; attempt++ {
			if attempt > 0 && !sleep(m.ctx, retry.Delay(attempt-1)) {
				return
			}
			cctx, cancel := context.WithTimeout(m.ctx, 5*time.Second)
			b, ok, err := m.broker.Last(cctx, t.key)
			cancel()
			if err != nil || !ok {
				if err != nil {
					m.log.Warn("accountstream: read state", "topic", t.key, "err", err)
				}
				continue
			}
			env := &envelope{}
			if err := json.Unmarshal(b, env); err != nil || env.K != kState {
				continue
			}
			t.mu.Lock()
			if t.overflow {
				// Too much arrived meanwhile: read again, newer.
				t.held, t.overflow = nil, false
				t.mu.Unlock()
				continue
			}
			held := t.held
			t.recovering, t.held = false, nil
			// The kept state is a snapshot of the epoch it names: take it whatever we followed before.
			t.epoch, t.seq = "", 0
			m.receive(t, env)
			for _, h := range held {
				if t.recovering {
					t.held = append(t.held, h)
					continue
				}
				m.receive(t, h)
			}
			t.mu.Unlock()
			return
		}
	})
}
