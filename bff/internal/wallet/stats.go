package wallet

import "sync/atomic"

// Stats are the money-movement path's counters since the service was built (read by /metrics at each scrape).
type Stats struct {
	// Completed, Acknowledged, Rejected, Failed and Unknown count the answers of the one plugin call of each
	// journaled movement: done, taken and on its way, refused, reported failed, or unknown (answered pending).
	Completed, Acknowledged, Rejected, Failed, Unknown uint64
	// Resolved counts pending entries found at the exchange; NotExecuted those concluded "not executed" after the
	// grace; Arrived transfers to another exchange that showed in the target's deposits.
	Resolved, NotExecuted, Arrived uint64
	// InFlight is the number of plugin calls of journaled movements under way now.
	InFlight int
}

type counters struct {
	completed, acknowledged, rejected, failed, unknown atomic.Uint64
	resolved, notExecuted, arrived                     atomic.Uint64
}

// Stats reads the counters.
func (s *Service) Stats() Stats {
	s.mu.Lock()
	inflight := len(s.inflight)
	s.mu.Unlock()
	c := &s.stats
	return Stats{Completed: c.completed.Load(), Acknowledged: c.acknowledged.Load(), Rejected: c.rejected.Load(),
		Failed: c.failed.Load(), Unknown: c.unknown.Load(), Resolved: c.resolved.Load(),
		NotExecuted: c.notExecuted.Load(), Arrived: c.arrived.Load(), InFlight: inflight}
}
