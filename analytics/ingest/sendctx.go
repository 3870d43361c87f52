package ingest

import (
	"context"
	"sync"
	"time"
)

// sendContext is the context one insert hands to clickhouse-go. It ends only while the insert is in flight.
//
// clickhouse-go's batch Send starts a goroutine that closes the batch's TCP connection when the batch's context
// ends, and stops it by closing a channel when Send returns. If that goroutine has not run yet when Send returns
// (a busy scheduler, a GC pause) and the context then ends, its select finds both cases ready and picks one at
// random: half of the time it closes the connection, which Send has already given back to the pool and another
// insert is using by then ("write: use of closed network connection" in the middle of that insert). A per-insert
// context.WithTimeout with the usual deferred cancel ends right after every successful Send, so under load inserts
// failed and went to the spool. This context never ends once the insert returned; while the insert runs it ends when
// the insert timeout passes or the caller's context ends, so a hung insert is still interrupted.
//
// Its deadline is the insert's deadline, which clickhouse-go also applies to the socket while it waits for the
// server (an expired socket deadline fails the insert and closes only that connection).
type sendContext struct {
	context.Context // the caller's values; never done itself
	deadline        time.Time
	done            chan struct{}

	mu       sync.Mutex
	err      error
	finished bool
}

// newSendContext returns the context for one insert and the function to call once the insert returned.
func newSendContext(parent context.Context, timeout time.Duration) (*sendContext, func()) {
	limit, cancel := context.WithTimeout(parent, timeout)
	deadline, _ := limit.Deadline()
	c := &sendContext{Context: context.WithoutCancel(parent), deadline: deadline, done: make(chan struct{})}
	stop := context.AfterFunc(limit, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.finished {
			c.err = limit.Err()
			close(c.done)
		}
	})
	return c, func() {
		c.mu.Lock()
		c.finished = true
		c.mu.Unlock()
		stop()
		cancel()
	}
}

func (c *sendContext) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *sendContext) Done() <-chan struct{} { return c.done }

func (c *sendContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}
