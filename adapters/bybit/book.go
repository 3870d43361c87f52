package bybit

import (
	"errors"
	"fmt"
	"slices"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

type level struct {
	px decimal.Decimal
	sz decimal.Decimal
}

// Book is a local Bybit order book kept from a snapshot and deltas. Bids are best (highest) first, asks best
// (lowest) first. Bybit's update id `u` grows by one per message of a topic; `seq` is the cross sequence, kept for
// the host.
type Book struct {
	bids, asks []level
	u          int64
	seq        int64
	synced     bool
}

// ErrBookGap is a gap in the update ids: a delta whose u is not the last u + 1.
var ErrBookGap = errors.New("bybit: book update id gap")

// ErrStale is a delta at or below the last update id: a duplicate, to be dropped.
var ErrStale = errors.New("bybit: stale book update")

// Reset replaces the book with a snapshot.
func (b *Book) Reset(r rawBook) {
	b.bids, b.asks = nil, nil
	b.apply(r)
	b.u, b.seq, b.synced = r.U, r.Seq, true
}

// Update applies a delta after checking its update id; the book is unchanged when it fails. A delta with u = 1 is
// Bybit's snapshot after a service restart: it replaces the book.
func (b *Book) Update(r rawBook) error {
	if r.U == 1 {
		b.Reset(r)
		return nil
	}
	if !b.synced {
		return fmt.Errorf("%w: no snapshot yet", ErrBookGap)
	}
	switch {
	case r.U <= b.u:
		return fmt.Errorf("%w: u %d, last %d", ErrStale, r.U, b.u)
	case r.U != b.u+1:
		return fmt.Errorf("%w: u %d after %d", ErrBookGap, r.U, b.u)
	}
	b.apply(r)
	b.u, b.seq = r.U, r.Seq
	return nil
}

// U is the last update id applied; Seq the last cross sequence.
func (b *Book) U() int64   { return b.u }
func (b *Book) Seq() int64 { return b.seq }

func (b *Book) apply(r rawBook) {
	b.bids = applySide(b.bids, r.B, true)
	b.asks = applySide(b.asks, r.A, false)
}

// applySide sets each [price, size] level; size "0" deletes it. Rows were checked by ParseBook.
func applySide(side []level, upd [][]string, desc bool) []level {
	for _, u := range upd {
		if len(u) < 2 {
			continue
		}
		px, ok, err := parseDec("price", u[0])
		if err != nil || !ok {
			continue
		}
		sz, _, err := parseDec("size", u[1])
		if err != nil {
			continue
		}
		i, found := slices.BinarySearchFunc(side, px, func(l level, p decimal.Decimal) int {
			if desc {
				return p.Cmp(l.px)
			}
			return l.px.Cmp(p)
		})
		switch {
		case sz.IsZero() && found:
			side = slices.Delete(side, i, i+1)
		case sz.IsZero():
		case found:
			side[i].sz = sz
		default:
			side = slices.Insert(side, i, level{px: px, sz: sz})
		}
	}
	return side
}

// Levels returns up to depth levels per side (depth <= 0: all).
func (b *Book) Levels(depth int) (bids, asks []*exchangev1.PriceLevel) {
	conv := func(ls []level) []*exchangev1.PriceLevel {
		if depth > 0 && len(ls) > depth {
			ls = ls[:depth]
		}
		out := make([]*exchangev1.PriceLevel, len(ls))
		for i, l := range ls {
			out[i] = &exchangev1.PriceLevel{Price: canon(l.px), Qty: canon(l.sz)}
		}
		return out
	}
	return conv(b.bids), conv(b.asks)
}
