// Package feed holds the types of the private account stream that its consumers share (the stream gateway's
// private channels, the order journal) without depending on the manager (bff/internal/accountstream): an Update,
// the Sink a subscriber gives, a ready-made bounded Queue sink, and the Subscriber interface the manager satisfies.
package feed

import (
	"context"
	"errors"
	"sync"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// ErrNoAccount: the member has no account on the exchange (the gateway answers 404). Account lookups return an
// error wrapping it.
var ErrNoAccount = errors.New("no account on this exchange")

// Kind says what an Update carries.
type Kind string

// Update kinds.
const (
	// KindSnapshot: Snapshot holds the account's whole state; it replaces what the subscriber held.
	KindSnapshot Kind = "snapshot"
	// KindResync: what the subscriber derived from earlier updates may have missed some (Reason says why); a
	// snapshot follows. Fills between the two may be missing from the subscriber's view: it re-reads them
	// (Snapshot.Fills holds the most recent ones, ListFills the rest).
	KindResync   Kind = "resync"
	KindOrder    Kind = "order"
	KindFill     Kind = "fill"
	KindPosition Kind = "position"
	KindBalance  Kind = "balance"
	KindAlgo     Kind = "algoOrder"
	// KindStatus: the plugin's RECONNECTING or ERROR status for the account (Event.Status); no state change.
	KindStatus Kind = "status"
)

// Update is one item of an account's private stream as a subscriber on this replica sees it.
type Update struct {
	// Exchange is the exchange's slug.
	Exchange string
	// Seq numbers the account's updates on this replica: each snapshot and delta has the previous one's plus one
	// (resync markers and statuses have none). A subscriber that joins gets the current snapshot with the current
	// Seq.
	Seq  int64
	Kind Kind
	// Snapshot (KindSnapshot).
	Snapshot *Snapshot
	// Event is the plugin's event (deltas and statuses): Event.GetOrder(), GetFill(), GetPosition(), GetBalance(),
	// GetAlgoOrder(), GetStatus(). Shared between subscribers: never modify it.
	Event *exchangev1.AccountEvent
	// Reason of a resync: sequence_gap, missing_snapshot, stream_lost, consumer_stuck, plugin_resynced (the plugin
	// host's), leader_changed (another replica took the account over), broker_gap (published messages were
	// missed between replicas), slow_subscriber (this subscriber did not keep up).
	Reason string
}

// Snapshot is an account's state. Shared between subscribers: never modify it.
type Snapshot struct {
	// Orders are the open orders.
	Orders     []*exchangev1.Order
	Positions  []*exchangev1.Position
	Balances   []*exchangev1.Balance
	AlgoOrders []*exchangev1.AlgoOrder
	// Fills are the most recent fills the stream carried (oldest first, bounded): not the exchange's history.
	Fills []*exchangev1.Fill
	// Time is the exchange time of the last event applied (ms).
	Time int64
}

// Sink receives one subscriber's updates. Its methods are called in order, one at a time, and must not block.
type Sink interface {
	// Offer queues u; false when the subscriber's queue is full. The manager then calls Reset instead: the
	// subscriber is cut off from its backlog and starts over from state, it never silently skips an update.
	Offer(u Update) bool
	// Reset drops every update not yet read and queues us instead (a resync marker and a snapshot).
	Reset(us []Update)
}

// Subscriber opens account subscriptions (the accountstream Manager).
type Subscriber interface {
	// Subscribe attaches sink to the member's account on exchange: it receives the current snapshot (once the
	// account's stream has one), then every update. Errors: ErrNoAccount (wrapped). cancel ends the subscription
	// (the sink is not called after it returns).
	Subscribe(ctx context.Context, memberID, exchange string, sink Sink) (cancel func(), err error)
}

// Queue is a bounded Sink for an in-process consumer (the order journal): Offer fails when Size updates are
// unread; Notify signals that updates are waiting and Take returns them in order.
type Queue struct {
	size   int
	mu     sync.Mutex
	items  []Update
	notify chan struct{}
}

// NewQueue returns a queue that holds up to size updates (at least 2: a marker and a snapshot).
func NewQueue(size int) *Queue {
	return &Queue{size: max(size, 2), notify: make(chan struct{}, 1)}
}

// Offer implements Sink.
func (q *Queue) Offer(u Update) bool {
	q.mu.Lock()
	if len(q.items) >= q.size {
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, u)
	q.mu.Unlock()
	q.signal()
	return true
}

// Reset implements Sink.
func (q *Queue) Reset(us []Update) {
	q.mu.Lock()
	q.items = append(q.items[:0:0], us...)
	q.mu.Unlock()
	q.signal()
}

func (q *Queue) signal() {
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

// Notify receives a value when updates are waiting.
func (q *Queue) Notify() <-chan struct{} { return q.notify }

// Take returns the waiting updates in order (nil when none).
func (q *Queue) Take() []Update {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.items
	q.items = nil
	return out
}
