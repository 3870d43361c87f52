package venue

import (
	"context"
	"sync"
)

// EventKind is the type of an Event.
type EventKind uint8

const (
	EvOrder EventKind = iota + 1
	EvFill
	EvPosition
	EvBalance
	EvBook
	EvTrade
	EvMark
	EvCandle
)

// Event is one venue event. Exactly one payload field is set, matching Kind. Account events carry the account id;
// market events carry the instrument id.
type Event struct {
	Kind       EventKind
	Account    string
	Instrument string
	Order      *Order
	Fill       *Fill
	Position   *Position
	Balance    *Balance
	Book       *BookDelta
	Trade      *Trade
	Mark       *MarkPrice
	Candle     *Candle
}

// Filter selects events for a subscription. Empty fields match everything of that dimension.
type Filter struct {
	Kinds       []EventKind
	Account     string   // account events of this account only; market events are not filtered by it
	Instruments []string // market events of these instruments only
}

func (f *Filter) match(e *Event) bool {
	if len(f.Kinds) > 0 {
		ok := false
		for _, k := range f.Kinds {
			if k == e.Kind {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if e.Account != "" {
		return f.Account == "" || f.Account == e.Account
	}
	if len(f.Instruments) > 0 {
		for _, id := range f.Instruments {
			if id == e.Instrument {
				return true
			}
		}
		return false
	}
	return true
}

// Subscription is a bounded event queue. Slow-consumer policy: events are never dropped silently and never
// block the venue. When the queue is full the subscription ends: C is closed and Err returns ErrSlowConsumer. A
// consumer then resubscribes and resynchronises from snapshots (book sequence numbers make the gap visible), the
// way exchanges disconnect slow WebSocket clients.
type Subscription struct {
	C      <-chan Event
	c      chan Event
	filter Filter
	once   sync.Once
	mu     sync.Mutex
	err    error
	v      *Venue
}

// Subscribe opens a subscription with a queue of size buf (default 1024). It ends when ctx ends (Err is the
// context's error), when the consumer falls behind, or when the venue closes. The goroutine that watches ctx is
// owned by the subscription and exits with it.
func (v *Venue) Subscribe(ctx context.Context, f Filter, buf int) *Subscription {
	if buf <= 0 {
		buf = 1024
	}
	c := make(chan Event, buf)
	s := &Subscription{C: c, c: c, filter: f, v: v}
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		s.end(ErrClosed)
		return s
	}
	v.subs[s] = struct{}{}
	v.mu.Unlock()
	go func() {
		<-ctx.Done()
		v.mu.Lock()
		defer v.mu.Unlock()
		s.end(ctx.Err())
	}()
	return s
}

// Barrier returns once no operation is publishing events. An operation's events reach the queues one by one while
// it holds the venue lock, so a consumer can see its queue empty in the middle of an operation; a consumer that finds
// its queue empty after Barrier has received every event of the operations finished so far.
func (v *Venue) Barrier() {
	v.mu.Lock()
	v.mu.Unlock() // an empty critical section: waiting for the lock is the point
}

// Err reports why the subscription ended (nil while it runs).
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// end closes the queue once; the caller holds the venue lock.
func (s *Subscription) end(err error) {
	s.once.Do(func() {
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		delete(s.v.subs, s)
		close(s.c)
	})
}

func (v *Venue) emit(e Event) { v.events = append(v.events, e) }

// flushLocked publishes the events collected by the current operation, in order, and the book deltas of the
// instruments it touched. Sends never block (see Subscription).
func (v *Venue) flushLocked() {
	for _, st := range v.list {
		if len(st.book.changes) > 0 {
			v.emitBookDelta(st)
		}
	}
	if len(v.events) == 0 {
		return
	}
	for s := range v.subs {
		for i := range v.events {
			e := &v.events[i]
			if !s.filter.match(e) {
				continue
			}
			select {
			case s.c <- *e:
			default:
				s.end(ErrSlowConsumer)
			}
			if s.err != nil {
				break
			}
		}
	}
	clear(v.events)
	v.events = v.events[:0]
}

func (v *Venue) emitBookDelta(st *instState) {
	if len(v.subs) == 0 {
		// Nobody listens: the sequence still advances so snapshots stay comparable with later deltas.
		st.book.changes = st.book.changes[:0]
		st.seq++
		return
	}
	ch := st.book.flushChanges()
	if len(ch) == 0 {
		return
	}
	d := &BookDelta{Instrument: st.in.ID, PrevSeq: st.seq, Time: v.Now()}
	st.seq++
	d.Seq = st.seq
	for _, c := range ch {
		l := Level{Price: st.in.Price(c.price), Qty: st.in.Qty(c.total)}
		if c.bid {
			d.Bids = append(d.Bids, l)
		} else {
			d.Asks = append(d.Asks, l)
		}
	}
	if len(v.subs) > 0 {
		v.emit(Event{Kind: EvBook, Instrument: st.in.ID, Book: d})
	}
}

func (v *Venue) emitBalance(a *account, w Wallet, asset string) {
	if len(v.subs) == 0 || a.system {
		return
	}
	b := a.balanceView(w, asset)
	v.emit(Event{Kind: EvBalance, Account: a.id, Balance: &b})
}
