package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// ResyncReason says why an AccountStream started over.
type ResyncReason string

// Resync reasons.
const (
	// ResyncGap: an event's sequence was not the previous one plus one.
	ResyncGap ResyncReason = "sequence_gap"
	// ResyncNoSnapshot: the plugin stream did not start with a snapshot (or an announced resync was not followed by
	// one).
	ResyncNoSnapshot ResyncReason = "missing_snapshot"
	// ResyncStreamLost: the plugin stream broke (the plugin was restarted, crashed or closed the stream).
	ResyncStreamLost ResyncReason = "stream_lost"
	// ResyncConsumerStuck: the consumer did not take an event within AccountStreamOptions.StuckAfter.
	ResyncConsumerStuck ResyncReason = "consumer_stuck"
	// ResyncPlugin: the plugin announced STATE_RESYNCED (it lost events from its exchange) and sent a snapshot.
	ResyncPlugin ResyncReason = "plugin_resynced"
)

// AccountUpdate is one item of an AccountStream: an account event from the plugin, or a resync marker.
type AccountUpdate struct {
	// Event is the plugin's event (a snapshot, order, fill, position, balance, algo order, or a RECONNECTING or
	// ERROR status), nil on a resync marker. CONNECTED is not forwarded; RESYNCED becomes a marker.
	Event *exchangev1.AccountEvent
	// Resync marks the start of a new account state: what the consumer derived from earlier events may have missed
	// some. The next update is a snapshot that replaces the consumer's orders, positions, balances and algo orders;
	// fills are not part of a snapshot, so the consumer re-reads them (ListFills since its last known fill) and
	// reconciles its journal.
	Resync bool
	// Reason is why the stream started over (resync markers only).
	Reason ResyncReason
}

// AccountStreamOptions tune one AccountStream. Zero values take the defaults noted.
type AccountStreamOptions struct {
	// Buffer is how many updates wait for the consumer (256). When it is full the stream stops reading from the
	// plugin (gRPC flow control then holds the plugin back): nothing is dropped or merged.
	Buffer int
	// StuckAfter bounds how long one update may wait for room (2 min). A consumer that takes longer is considered
	// stuck: the plugin stream is closed and a new one opened, and the consumer's next updates are a resync marker
	// and that stream's snapshot instead of a backlog held by the plugin. Updates already buffered stay in order
	// before the marker.
	StuckAfter time.Duration
}

// AccountStreamStats are an AccountStream's counters (monotonic, for metrics).
type AccountStreamStats struct {
	// Events delivered to the consumer (resync markers not included).
	Events uint64
	// Resyncs: resync markers delivered.
	Resyncs uint64
	// Gaps: sequence gaps detected by the host.
	Gaps uint64
	// Reopens: plugin streams opened after the first.
	Reopens uint64
	// Stuck: times the consumer was too slow for StuckAfter.
	Stuck uint64
	// LastError is why the last plugin stream ended ("" before any ended), e.g. a plugin that keeps refusing the
	// account's credentials.
	LastError string
}

// ErrAccountStreamOpen is returned when the account already has a stream on this supervisor.
var ErrAccountStreamOpen = errors.New("account stream already open")

// AccountStream is one account's private stream (orders, fills, positions, balances, algo orders) that survives
// plugin restarts. Unlike a MarketStream it never drops or merges an event: Updates is a bounded channel and the
// reader of the plugin stream waits for the consumer.
//
// The stream checks what exchange.v1 1.1 promises: each plugin stream starts with a snapshot and every event's
// sequence is exactly the previous one plus one (from 1 on each StreamAccount call); status events may come before
// the snapshot, any other event may not. On a gap, a missing snapshot,
// a broken plugin stream (crash, restart) or a consumer stuck past StuckAfter it closes the plugin stream, opens a
// new one, and delivers a resync marker (AccountUpdate.Resync) immediately followed by the new stream's snapshot.
// A STATE_RESYNCED announced by the plugin becomes a resync marker too. The first snapshot of all comes without a
// marker. Nothing is lost silently: whatever the consumer may have missed lies between a marker and what it held
// before, and the snapshot plus a re-read of fills covers it.
//
// Updates is closed when the stream ends: Close, the context given to StreamAccount, or host shutdown.
type AccountStream struct {
	sup     *Supervisor
	key     string
	account *exchangev1.AccountRef
	opts    AccountStreamOptions
	updates chan AccountUpdate
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}

	// Owned by the run loop: synced, the consumer has been given a snapshot (so a restart owes it a marker);
	// pending, the marker owed before the next snapshot.
	synced  bool
	pending ResyncReason

	events, resyncs, gaps, reopens, stuck atomic.Uint64
	lastErr                               atomic.Pointer[string]
}

func accountKey(a *exchangev1.AccountRef) string {
	if a.GetAccountId() != "" {
		return "id:" + a.GetAccountId()
	}
	return "key:" + a.GetApiKey()
}

// StreamAccount opens the durable stream of one account. It returns at once; the stream connects (and reconnects)
// in the background until ctx ends or Close is called. An account has at most one stream per supervisor (keyed by
// account_id, or api_key without one).
func (s *Supervisor) StreamAccount(ctx context.Context, account *exchangev1.AccountRef, opts AccountStreamOptions) (*AccountStream, error) {
	if account == nil || (account.GetAccountId() == "" && account.GetApiKey() == "") {
		return nil, errors.New("account stream needs an account_id or an api_key")
	}
	if opts.Buffer <= 0 {
		opts.Buffer = 256
	}
	if opts.StuckAfter <= 0 {
		opts.StuckAfter = 2 * time.Minute
	}
	key := accountKey(account)
	s.mu.Lock()
	if s.accounts == nil {
		s.accounts = map[string]bool{}
	}
	if s.accounts[key] {
		s.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", s.spec.Slug, ErrAccountStreamOpen)
	}
	s.accounts[key] = true
	s.mu.Unlock()
	sctx, cancel := context.WithCancel(ctx)
	a := &AccountStream{
		sup: s, key: key, account: account, opts: opts,
		updates: make(chan AccountUpdate, opts.Buffer),
		ctx:     sctx, cancel: cancel, done: make(chan struct{}),
	}
	go a.run() // owned by the AccountStream; ends with its context
	return a, nil
}

// Updates delivers the stream's updates in order; it is closed when the stream ends.
func (a *AccountStream) Updates() <-chan AccountUpdate { return a.updates }

// Stats returns the stream's counters.
func (a *AccountStream) Stats() AccountStreamStats {
	st := AccountStreamStats{
		Events: a.events.Load(), Resyncs: a.resyncs.Load(), Gaps: a.gaps.Load(),
		Reopens: a.reopens.Load(), Stuck: a.stuck.Load(),
	}
	if e := a.lastErr.Load(); e != nil {
		st.LastError = *e
	}
	return st
}

// Close ends the stream and waits for its goroutine.
func (a *AccountStream) Close() {
	a.cancel()
	<-a.done
}

func (a *AccountStream) run() {
	defer close(a.done)
	defer func() {
		a.sup.mu.Lock()
		delete(a.sup.accounts, a.key)
		a.sup.mu.Unlock()
	}()
	defer close(a.updates)
	defer a.cancel()
	var (
		minGen  uint64
		retries int
		opened  bool
	)
	retry := Backoff{Initial: 50 * time.Millisecond, Max: 2 * time.Second}
	for {
		client, gen, err := a.sup.waitGeneration(a.ctx, minGen, 0)
		if err != nil {
			return
		}
		if opened {
			a.reopens.Add(1)
		}
		opened = true
		healthy, reason, err := a.session(client)
		if a.ctx.Err() != nil {
			return
		}
		if a.synced && a.pending == "" {
			a.pending = reason
		}
		if healthy {
			retries = 0
		}
		msg := string(reason)
		if err != nil {
			msg += ": " + err.Error()
		}
		a.lastErr.Store(&msg)
		a.sup.log.Debug("account stream restarting", "account", a.account.GetAccountId(), "reason", string(reason), "err", err)
		if reason == ResyncStreamLost {
			a.sup.checkNow()
		}
		// Wait for a new process, or retry on the same one after a short delay (a break that was not a crash, or a
		// stream that broke the contract: the delay keeps a misbehaving plugin from spinning the loop).
		delay := retry.Delay(retries)
		retries++
		if _, _, err := a.sup.waitGeneration(a.ctx, gen+1, delay); err == nil {
			minGen = gen + 1
		} else if a.ctx.Err() != nil {
			return
		} else {
			minGen = 0
		}
	}
}

// deliver hands one update to the consumer, waiting up to StuckAfter for room. It returns false when the consumer
// is stuck or the stream is closing.
func (a *AccountStream) deliver(u AccountUpdate, timer *time.Timer) bool {
	// Counted before the hand-over, so that a consumer which has received an update never reads stats without it;
	// taken back when the update is not delivered.
	counter := &a.events
	if u.Resync {
		counter = &a.resyncs
	}
	counter.Add(1)
	select {
	case a.updates <- u:
		return true
	default:
	}
	timer.Reset(a.opts.StuckAfter)
	defer timer.Stop()
	select {
	case a.updates <- u:
		return true
	case <-timer.C:
		a.stuck.Add(1)
	case <-a.ctx.Done():
	}
	counter.Add(^uint64(0))
	return false
}

// session reads one plugin stream until it breaks or breaks the contract. healthy says this plugin stream started
// with a snapshot; reason is why it ended.
func (a *AccountStream) session(client exchangev1.ExchangeClient) (healthy bool, reason ResyncReason, err error) {
	sctx, cancel := context.WithCancel(a.ctx)
	defer cancel()
	st, err := client.StreamAccount(sctx, &exchangev1.StreamAccountRequest{Account: a.account})
	if err != nil {
		return false, ResyncStreamLost, fmt.Errorf("open account stream: %w", err)
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var (
		seq     int64
		started bool // this plugin stream has sent its first snapshot
		expect  bool // the plugin announced RESYNCED: the next event must be a snapshot
	)
	stuck := errors.New("consumer stuck")
	for {
		ev, err := st.Recv()
		if err != nil {
			return started, ResyncStreamLost, err
		}
		if ev.GetSequence() != seq+1 {
			a.gaps.Add(1)
			return started, ResyncGap, fmt.Errorf("sequence %d after %d", ev.GetSequence(), seq)
		}
		seq = ev.GetSequence()
		switch {
		case ev.GetStatus() != nil:
			switch ev.GetStatus().GetState() {
			case exchangev1.StreamStatus_STATE_RESYNCED:
				// Becomes a resync marker in front of the snapshot that must follow.
				expect = started
				continue
			case exchangev1.StreamStatus_STATE_CONNECTED:
				continue // an acknowledgement, like the market stream's
			}
		case ev.GetSnapshot() != nil:
			marker := a.pending
			if expect && marker == "" {
				marker = ResyncPlugin
			}
			if a.synced && marker != "" {
				if !a.deliver(AccountUpdate{Resync: true, Reason: marker}, timer) {
					return started, ResyncConsumerStuck, stuck
				}
				a.pending = ""
			}
			started, expect = true, false
			if !a.deliver(AccountUpdate{Event: ev}, timer) {
				return started, ResyncConsumerStuck, stuck
			}
			a.synced = true
			continue
		case !started || expect:
			return started, ResyncNoSnapshot, fmt.Errorf("%T before a snapshot", ev.GetEvent())
		}
		if !a.deliver(AccountUpdate{Event: ev}, timer) {
			return started, ResyncConsumerStuck, stuck
		}
	}
}

// waitGeneration waits for a running plugin of generation >= minGen (timeout 0: no limit).
func (s *Supervisor) waitGeneration(ctx context.Context, minGen uint64, timeout time.Duration) (exchangev1.ExchangeClient, uint64, error) {
	var expire <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expire = t.C
	}
	for {
		c, gen, changed, stopped := s.running(minGen)
		if c != nil {
			return c, gen, nil
		}
		if stopped {
			return nil, 0, errStopped
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		case <-expire:
			return nil, 0, context.DeadlineExceeded
		}
	}
}
