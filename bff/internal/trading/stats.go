package trading

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/exhub/exhub/bff/internal/store"
)

// Stats are the order path's counters since the service was built (read by /metrics at each scrape).
type Stats struct {
	// Placed, Rejected and Unknown count the answers of the one plugin call of each journaled order, position close
	// and algo order: acknowledged by the exchange, refused, or unknown (answered pending).
	Placed, Rejected, Unknown uint64
	// ResolvedByLookup and ResolvedByStream count pending entries found on the exchange (GetOrder or ListAlgoOrders
	// by client id; an order event on the account stream); NotPlaced those concluded "not placed" after the grace.
	ResolvedByLookup, ResolvedByStream, NotPlaced uint64
	// Reconciliations counts accounts whose open orders were re-read; ReconcileUpdates the journal entries they
	// changed.
	Reconciliations, ReconcileUpdates uint64
	// AmendsUnknown and CancelsUnknown count amends and cancels still unknown after reading the order back (amend)
	// or asking twice (cancel).
	AmendsUnknown, CancelsUnknown uint64
	// IntentWrites and IntentWriteTime are the journal writes of new intents (before the plugin call) and their
	// total duration.
	IntentWrites    uint64
	IntentWriteTime time.Duration
	// InFlight is the number of plugin calls of journaled intents under way now.
	InFlight int
}

type counters struct {
	placed, rejected, unknown         atomic.Uint64
	byLookup, byStream, notPlaced     atomic.Uint64
	reconciliations, reconcileUpdates atomic.Uint64
	amendsUnknown, cancelsUnknown     atomic.Uint64
	intentWrites                      atomic.Uint64
	intentNanos                       atomic.Int64
}

// Stats returns the order path's counters.
func (s *Service) Stats() Stats {
	c := &s.stats
	st := Stats{Placed: c.placed.Load(), Rejected: c.rejected.Load(), Unknown: c.unknown.Load(),
		ResolvedByLookup: c.byLookup.Load(), ResolvedByStream: c.byStream.Load(), NotPlaced: c.notPlaced.Load(),
		Reconciliations: c.reconciliations.Load(), ReconcileUpdates: c.reconcileUpdates.Load(),
		AmendsUnknown: c.amendsUnknown.Load(), CancelsUnknown: c.cancelsUnknown.Load(),
		IntentWrites: c.intentWrites.Load(), IntentWriteTime: time.Duration(c.intentNanos.Load())}
	s.mu.Lock()
	st.InFlight = len(s.inflight)
	s.mu.Unlock()
	return st
}

// journalIntent writes a new intent (store.CreateOrder), timing the write.
func (s *Service) journalIntent(ctx context.Context, intent store.Order) (store.Order, bool, error) {
	start := time.Now()
	o, created, err := s.st.CreateOrder(ctx, intent)
	s.stats.intentNanos.Add(int64(time.Since(start)))
	s.stats.intentWrites.Add(1)
	return o, created, err
}
