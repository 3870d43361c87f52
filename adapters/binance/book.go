package binance

import (
	"fmt"
	"sort"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// DepthEvent is one diff depth update: U first update id, u final update id, pu (futures) the previous event's u.
type DepthEvent struct {
	FirstID, FinalID, PrevFinalID int64
	Time                          int64
	Bids, Asks                    []*exchangev1.PriceLevel
}

// maxBuffered bounds the diffs kept while waiting for a snapshot; older ones are dropped (the snapshot check then
// asks for a newer snapshot if needed).
const maxBuffered = 2000

// BookSync keeps a local order book in step with Binance's diff depth stream by the documented procedure: buffer
// the diffs, take a REST snapshot, drop diffs older than the snapshot, require the first applied diff to straddle
// the snapshot id, then require each diff to follow the previous one (spot: U == previous u + 1; futures: pu ==
// previous u). A break means a gap: the book is dropped and must be rebuilt from a new snapshot.
type BookSync struct {
	futures bool
	synced  bool
	first   bool // next applied diff is the first after the snapshot
	lastID  int64
	buffer  []DepthEvent
	bids    map[string]decimal.Decimal
	asks    map[string]decimal.Decimal
	depth   int
	Resyncs int
}

// NewBookSync returns an unsynced book; depth is how many levels a snapshot event carries (0: all).
func NewBookSync(futures bool, depth int) *BookSync {
	return &BookSync{futures: futures, depth: depth}
}

// Synced reports whether the book is live.
func (b *BookSync) Synced() bool { return b.synced }

// LastID is the last applied update id.
func (b *BookSync) LastID() int64 { return b.lastID }

// OnEvent takes one diff. While unsynced it is buffered. When synced it returns the delta to publish (nil for a
// stale or duplicate diff); gap is true when continuity broke and a new snapshot is needed.
func (b *BookSync) OnEvent(ev DepthEvent) (delta *exchangev1.BookUpdate, gap bool, err error) {
	if !b.synced {
		if len(b.buffer) >= maxBuffered {
			b.buffer = b.buffer[1:]
		}
		b.buffer = append(b.buffer, ev)
		return nil, false, nil
	}
	return b.apply(ev)
}

func (b *BookSync) apply(ev DepthEvent) (*exchangev1.BookUpdate, bool, error) {
	if ev.FinalID <= b.lastID {
		return nil, false, nil // already covered
	}
	if b.first {
		ok := ev.FirstID <= b.lastID+1 && b.lastID+1 <= ev.FinalID
		if b.futures {
			ok = ev.FirstID <= b.lastID && b.lastID <= ev.FinalID || ok
		}
		if !ok {
			b.reset()
			return nil, true, nil
		}
	} else {
		contiguous := ev.FirstID == b.lastID+1
		if b.futures {
			contiguous = ev.PrevFinalID == b.lastID
		}
		if !contiguous {
			b.reset()
			return nil, true, nil
		}
	}
	if err := setLevels(b.bids, ev.Bids); err != nil {
		return nil, false, err
	}
	if err := setLevels(b.asks, ev.Asks); err != nil {
		return nil, false, err
	}
	prev := b.lastID
	b.lastID, b.first = ev.FinalID, false
	return &exchangev1.BookUpdate{Bids: ev.Bids, Asks: ev.Asks, Sequence: ev.FinalID, PrevSequence: prev}, false, nil
}

func (b *BookSync) reset() {
	b.synced, b.first, b.buffer = false, false, nil
	b.Resyncs++
}

// Reset drops the book (after a reconnect) so the next snapshot rebuilds it.
func (b *BookSync) Reset() { b.reset() }

// ApplySnapshot installs a REST snapshot and replays the buffered diffs. It returns the snapshot event and the
// deltas that followed it; stale is true when the buffered diffs start after the snapshot (the snapshot is too old:
// fetch another one).
func (b *BookSync) ApplySnapshot(d *Depth) (snap *exchangev1.BookUpdate, deltas []*exchangev1.BookUpdate, stale bool, err error) {
	b.bids, b.asks = map[string]decimal.Decimal{}, map[string]decimal.Decimal{}
	if err := setLevels(b.bids, d.Bids); err != nil {
		return nil, nil, false, err
	}
	if err := setLevels(b.asks, d.Asks); err != nil {
		return nil, nil, false, err
	}
	b.lastID, b.synced, b.first = d.LastUpdateID, true, true
	buf := b.buffer
	b.buffer = nil
	for _, ev := range buf {
		if ev.FinalID < d.LastUpdateID || (!b.futures && ev.FinalID == d.LastUpdateID) {
			continue // older than the snapshot
		}
		delta, gap, err := b.apply(ev)
		if err != nil {
			return nil, nil, false, err
		}
		if gap {
			b.synced = false
			return nil, nil, true, nil
		}
		if delta != nil {
			deltas = append(deltas, delta)
		}
	}
	snap = &exchangev1.BookUpdate{Sequence: d.LastUpdateID}
	snap.Bids, snap.Asks = b.levelsAt(d.LastUpdateID, d)
	return snap, deltas, false, nil
}

// levelsAt renders the snapshot as received (cut to depth), bids best first.
func (b *BookSync) levelsAt(_ int64, d *Depth) (bids, asks []*exchangev1.PriceLevel) {
	bids, asks = d.Bids, d.Asks
	if b.depth > 0 {
		if len(bids) > b.depth {
			bids = bids[:b.depth]
		}
		if len(asks) > b.depth {
			asks = asks[:b.depth]
		}
	}
	return bids, asks
}

// Levels returns the current book, bids descending and asks ascending, cut to n levels (0: all).
func (b *BookSync) Levels(n int) (bids, asks []*exchangev1.PriceLevel) {
	return sortedLevels(b.bids, true, n), sortedLevels(b.asks, false, n)
}

func sortedLevels(m map[string]decimal.Decimal, desc bool, n int) []*exchangev1.PriceLevel {
	type kv struct {
		p decimal.Decimal
		q decimal.Decimal
	}
	all := make([]kv, 0, len(m))
	for k, q := range m {
		all = append(all, kv{decimal.RequireFromString(k), q})
	}
	sort.Slice(all, func(i, j int) bool {
		if desc {
			return all[i].p.GreaterThan(all[j].p)
		}
		return all[i].p.LessThan(all[j].p)
	})
	if n > 0 && len(all) > n {
		all = all[:n]
	}
	out := make([]*exchangev1.PriceLevel, len(all))
	for i, x := range all {
		out[i] = &exchangev1.PriceLevel{Price: x.p.String(), Qty: x.q.String()}
	}
	return out
}

func setLevels(m map[string]decimal.Decimal, ls []*exchangev1.PriceLevel) error {
	for _, l := range ls {
		p, err := decimal.NewFromString(l.Price)
		if err != nil {
			return fmt.Errorf("book level price %q: %w", l.Price, err)
		}
		q, err := decimal.NewFromString(l.Qty)
		if err != nil {
			return fmt.Errorf("book level qty %q: %w", l.Qty, err)
		}
		if q.IsZero() {
			delete(m, p.String())
		} else {
			m[p.String()] = q
		}
	}
	return nil
}
