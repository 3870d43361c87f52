package venue

import "sort"

// The order book of one instrument. Prices are int64 ticks, quantities int64 lots. Each side keeps its price
// levels in a slice sorted from worst to best, so the best level is the last element: consuming or adding at the
// top of the book (the common case) touches the end of the slice only. Orders at a level form a FIFO doubly linked
// list, which gives price-time priority and O(1) cancels. A Book is not safe for concurrent use; the venue
// serialises access (see README.md).

type level struct {
	price int64
	total int64 // remaining lots of all orders at this level
	count int
	head  *order
	tail  *order
}

type bookSide struct {
	bid    bool
	levels []*level // worst first, best last
}

// better reports whether price a is better than b on this side.
func (s *bookSide) better(a, b int64) bool {
	if s.bid {
		return a > b
	}
	return a < b
}

// search returns the index of the first level that is not worse than price (levels[i] is at price or better).
func (s *bookSide) search(price int64) int {
	return sort.Search(len(s.levels), func(i int) bool { return !s.better(price, s.levels[i].price) })
}

func (s *bookSide) best() *level {
	if n := len(s.levels); n > 0 {
		return s.levels[n-1]
	}
	return nil
}

// levelAt returns the level at price, creating it when create is set.
func (s *bookSide) levelAt(price int64, create bool) *level {
	i := s.search(price)
	if i < len(s.levels) && s.levels[i].price == price {
		return s.levels[i]
	}
	if !create {
		return nil
	}
	l := &level{price: price}
	s.levels = append(s.levels, nil)
	copy(s.levels[i+1:], s.levels[i:])
	s.levels[i] = l
	return l
}

func (s *bookSide) removeLevel(l *level) {
	i := s.search(l.price)
	if i < len(s.levels) && s.levels[i] == l {
		copy(s.levels[i:], s.levels[i+1:])
		s.levels[len(s.levels)-1] = nil
		s.levels = s.levels[:len(s.levels)-1]
	}
}

// LevelChange is the new total quantity at one price level after an operation; zero means the level is gone.
type levelChange struct {
	bid   bool
	price int64
	total int64
}

// Book holds resting limit orders of one instrument.
type Book struct {
	bids bookSide
	asks bookSide
	// changes accumulates level changes since the last flush (possibly several per level; last one wins).
	changes []levelChange
	// prio is the time-priority counter.
	prio uint64
}

func newBook() *Book {
	return &Book{bids: bookSide{bid: true}, asks: bookSide{}}
}

func (b *Book) side(bid bool) *bookSide {
	if bid {
		return &b.bids
	}
	return &b.asks
}

func (b *Book) noteLevel(bid bool, l *level) {
	b.changes = append(b.changes, levelChange{bid: bid, price: l.price, total: l.total})
}

// rest appends a resting order at the tail of its level.
func (b *Book) rest(o *order) {
	bid := o.side == Buy
	s := b.side(bid)
	l := s.levelAt(o.price, true)
	b.prio++
	o.prio = b.prio
	o.lvl = l
	o.prev, o.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = o
	} else {
		l.head = o
	}
	l.tail = o
	l.count++
	l.total += o.qty - o.filled
	b.noteLevel(bid, l)
}

// unlink removes a resting order from the book.
func (b *Book) unlink(o *order) {
	l := o.lvl
	if l == nil {
		return
	}
	bid := o.side == Buy
	if o.prev != nil {
		o.prev.next = o.next
	} else {
		l.head = o.next
	}
	if o.next != nil {
		o.next.prev = o.prev
	} else {
		l.tail = o.prev
	}
	l.count--
	l.total -= o.qty - o.filled
	o.prev, o.next, o.lvl = nil, nil, nil
	if l.count == 0 {
		b.side(bid).removeLevel(l)
		l.total = 0
	}
	b.noteLevel(bid, l)
}

// reduce lowers a resting order's remaining quantity in place (it keeps its priority).
func (b *Book) reduce(o *order, lots int64) {
	o.lvl.total -= lots
	b.noteLevel(o.side == Buy, o.lvl)
}

// BestBid returns the best bid in ticks.
func (b *Book) BestBid() (int64, bool) {
	if l := b.bids.best(); l != nil {
		return l.price, true
	}
	return 0, false
}

// BestAsk returns the best ask in ticks.
func (b *Book) BestAsk() (int64, bool) {
	if l := b.asks.best(); l != nil {
		return l.price, true
	}
	return 0, false
}

// Crossed reports whether the best bid is at or above the best ask (never true after matching).
func (b *Book) Crossed() bool {
	bb, ok1 := b.BestBid()
	ba, ok2 := b.BestAsk()
	return ok1 && ok2 && bb >= ba
}

// depth returns up to n levels of a side, best first, as (price, total) pairs.
func (b *Book) depth(bid bool, n int) [][2]int64 {
	s := b.side(bid)
	if n <= 0 || n > len(s.levels) {
		n = len(s.levels)
	}
	out := make([][2]int64, 0, n)
	for i := len(s.levels) - 1; i >= 0 && len(out) < n; i-- {
		out = append(out, [2]int64{s.levels[i].price, s.levels[i].total})
	}
	return out
}

// crosses reports whether a taker on side bid with limit price (0 = market) trades against level price p.
func crosses(bid bool, limit, p int64) bool {
	if limit == 0 {
		return true
	}
	if bid {
		return p <= limit
	}
	return p >= limit
}

// stpConflict reports whether self-trade prevention applies between a taker and a resting maker.
func stpConflict(taker, maker *order) bool {
	return taker.acct != nil && taker.acct == maker.acct && taker.stp != STPNone && !taker.acct.house
}

// available returns how many lots a taker could fill right now within limit and budget (notional units, 0 = no
// budget), skipping makers that self-trade prevention would remove. FOK uses it.
func (b *Book) available(taker *order, limit, budget int64, want int64) int64 {
	s := b.side(taker.side != Buy)
	var got, spent int64
	for i := len(s.levels) - 1; i >= 0 && got < want; i-- {
		l := s.levels[i]
		if !crosses(taker.side == Buy, limit, l.price) {
			break
		}
		for m := l.head; m != nil && got < want; m = m.next {
			if stpConflict(taker, m) {
				continue
			}
			q := min(m.qty-m.filled, want-got)
			if budget > 0 {
				q = min(q, (budget-spent)/l.price)
				if q <= 0 {
					return got
				}
				spent += q * l.price
			}
			got += q
		}
	}
	return got
}

// fillFunc settles one fill: the taker traded qty lots at price with maker. Both orders' filled counts and the book
// are already updated when it runs (a fully filled maker is no longer in the book).
type fillFunc func(maker *order, price, qty int64)

// stpFunc is told when self-trade prevention removes a resting maker.
type stpFunc func(maker *order)

// match trades a taker against the opposite side while prices cross its limit (0 = market), up to its remaining
// quantity and an optional notional budget (tick x lot units; 0 = none). It returns the lots filled and whether
// self-trade prevention stopped the taker (expire taker or both).
func (b *Book) match(taker *order, limit, budget int64, onFill fillFunc, onSTP stpFunc) (filled int64, stpStop bool) {
	bid := taker.side == Buy
	s := b.side(!bid)
	var spent int64
	for taker.filled < taker.qty {
		l := s.best()
		if l == nil || !crosses(bid, limit, l.price) {
			return
		}
		m := l.head
		if stpConflict(taker, m) {
			switch taker.stp {
			case STPExpireTaker:
				return filled, true
			case STPExpireBoth:
				b.unlink(m)
				onSTP(m)
				return filled, true
			default: // STPExpireMaker
				b.unlink(m)
				onSTP(m)
				continue
			}
		}
		q := min(taker.qty-taker.filled, m.qty-m.filled)
		if budget > 0 {
			q = min(q, (budget-spent)/l.price)
			if q <= 0 {
				return
			}
			spent += q * l.price
		}
		taker.filled += q
		filled += q
		if m.qty-m.filled == q {
			b.unlink(m) // drops the level total by the maker's remaining q
			m.filled += q
		} else {
			m.filled += q
			b.reduce(m, q)
		}
		onFill(m, l.price, q)
	}
	return
}

// flushChanges returns the distinct level changes since the last flush (last value per level) and resets them.
func (b *Book) flushChanges() []levelChange {
	if len(b.changes) == 0 {
		return nil
	}
	out := make([]levelChange, 0, len(b.changes))
	for i := len(b.changes) - 1; i >= 0; i-- {
		c := b.changes[i]
		dup := false
		for _, o := range out {
			if o.bid == c.bid && o.price == c.price {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, c)
		}
	}
	b.changes = b.changes[:0]
	// Restore chronological-ish order: bids best first then asks best first is what consumers expect.
	sort.Slice(out, func(i, j int) bool {
		if out[i].bid != out[j].bid {
			return out[i].bid
		}
		if out[i].bid {
			return out[i].price > out[j].price
		}
		return out[i].price < out[j].price
	})
	return out
}
