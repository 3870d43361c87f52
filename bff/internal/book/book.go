// Package book keeps local order books from an exchange's sequenced book events: a snapshot, then deltas whose
// prev_sequence must equal the sequence of the event before. A gap, a delta before any snapshot, a malformed level
// or a crossed result makes the book unsynced: it refuses further deltas until the next snapshot, so a consumer
// never reads a book that is stale or crossed.
//
// Prices are kept as int64 fixed-point numbers at a per-book scale (the most fractional digits seen, rescaled when
// a finer price arrives), so applying a delta is a binary search and a slice insert or delete per level, with no
// allocation in the common case. Quantities stay the exchange's decimal strings; grouping sums them exactly with
// shopspring/decimal.
package book

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// DefaultMaxLevels bounds each side of a book: the worst levels beyond it are dropped.
const DefaultMaxLevels = 5000

// maxScale is the most fractional digits a price may have.
const maxScale = 15

var (
	// ErrNotSynced: a delta arrived while the book has no valid snapshot.
	ErrNotSynced = errors.New("book: no snapshot yet")
	// ErrGap: a delta's prev_sequence is not the book's sequence.
	ErrGap = errors.New("book: sequence gap")
	// ErrCrossed: the best bid reached the best ask.
	ErrCrossed = errors.New("book: crossed")
	// ErrLevel: a price or quantity is not a valid decimal.
	ErrLevel = errors.New("book: bad level")
)

// Level is one price level as decimal strings.
type Level struct {
	Price string
	Qty   string
}

type level struct {
	p     int64 // price at the book's scale
	price string
	qty   string
}

// Book is one instrument's order book. It is not safe for concurrent use.
type Book struct {
	// Each side is stored worst first, best last (bids ascending, asks descending), so the frequent changes near
	// the top of the book move few elements.
	bids, asks []level
	scale      int
	seq        int64
	synced     bool
	maxLevels  int
	updates    uint64
}

// New returns an empty, unsynced book.
func New() *Book { return &Book{maxLevels: DefaultMaxLevels} }

// SetMaxLevels changes the per-side bound (values below 1 keep the default).
func (b *Book) SetMaxLevels(n int) {
	if n >= 1 {
		b.maxLevels = n
	}
}

// Synced reports whether the book holds a valid snapshot and every delta since.
func (b *Book) Synced() bool { return b.synced }

// Seq is the sequence of the last event applied.
func (b *Book) Seq() int64 { return b.seq }

// Updates counts level updates applied (snapshots included).
func (b *Book) Updates() uint64 { return b.updates }

// Len returns the number of bid and ask levels.
func (b *Book) Len() (bids, asks int) { return len(b.bids), len(b.asks) }

// Reset forgets the book; it needs a new snapshot.
func (b *Book) Reset() {
	b.bids, b.asks = b.bids[:0], b.asks[:0]
	b.synced = false
}

// Snapshot replaces the whole book. Levels may come in any order; zero quantities are ignored.
func (b *Book) Snapshot(bids, asks []*exchangev1.PriceLevel, seq int64) error {
	b.Reset()
	b.scale = 0
	for _, side := range [][]*exchangev1.PriceLevel{bids, asks} {
		for _, l := range side {
			_, d, err := parseFixed(l.GetPrice(), -1)
			if err != nil {
				return b.fail(err)
			}
			b.scale = max(b.scale, d)
		}
	}
	for _, l := range bids {
		if err := b.set(true, l.GetPrice(), l.GetQty()); err != nil {
			return b.fail(err)
		}
	}
	for _, l := range asks {
		if err := b.set(false, l.GetPrice(), l.GetQty()); err != nil {
			return b.fail(err)
		}
	}
	b.seq = seq
	if b.crossed() {
		return b.fail(ErrCrossed)
	}
	b.synced = true
	return nil
}

// Apply applies a delta. Any error leaves the book unsynced until the next Snapshot.
func (b *Book) Apply(u *exchangev1.BookUpdate) error {
	if !b.synced {
		return ErrNotSynced
	}
	if u.GetPrevSequence() != b.seq {
		return b.fail(fmt.Errorf("%w: prev %d, book at %d", ErrGap, u.GetPrevSequence(), b.seq))
	}
	for _, l := range u.GetBids() {
		if err := b.set(true, l.GetPrice(), l.GetQty()); err != nil {
			return b.fail(err)
		}
	}
	for _, l := range u.GetAsks() {
		if err := b.set(false, l.GetPrice(), l.GetQty()); err != nil {
			return b.fail(err)
		}
	}
	b.seq = u.GetSequence()
	if b.crossed() {
		return b.fail(ErrCrossed)
	}
	return nil
}

func (b *Book) fail(err error) error {
	b.Reset()
	return err
}

func (b *Book) crossed() bool {
	return len(b.bids) > 0 && len(b.asks) > 0 && b.bids[len(b.bids)-1].p >= b.asks[len(b.asks)-1].p
}

// set puts one level: qty zero removes it.
func (b *Book) set(bid bool, price, qty string) error {
	p, d, err := parseFixed(price, b.scale)
	if err != nil {
		return err
	}
	if d > b.scale {
		if err := b.rescale(d); err != nil {
			return err
		}
		if p, _, err = parseFixed(price, b.scale); err != nil {
			return err
		}
	}
	zero, err := isZero(qty)
	if err != nil {
		return err
	}
	b.updates++
	side := &b.asks
	if bid {
		side = &b.bids
	}
	s := *side
	i, found := search(s, p, bid)
	switch {
	case zero && found:
		*side = slices.Delete(s, i, i+1)
	case zero:
	case found:
		s[i].qty = qty
		s[i].price = price
	default:
		if len(s) >= b.maxLevels {
			if i == 0 {
				return nil // worse than every kept level of a full side
			}
			// Drop the worst level to make room.
			copy(s, s[1:i])
			s[i-1] = level{p: p, price: price, qty: qty}
			return nil
		}
		*side = slices.Insert(s, i, level{p: p, price: price, qty: qty})
	}
	return nil
}

// search finds p's index on a side stored worst first (bids ascending, asks descending).
func search(s []level, p int64, bid bool) (int, bool) {
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if (bid && s[m].p < p) || (!bid && s[m].p > p) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(s) && s[lo].p == p
}

func (b *Book) rescale(d int) error {
	f := pow10[d-b.scale]
	for _, s := range [][]level{b.bids, b.asks} {
		for i := range s {
			if s[i].p > math.MaxInt64/f || s[i].p < math.MinInt64/f {
				return fmt.Errorf("%w: price %s too large at %d decimals", ErrLevel, s[i].price, d)
			}
			s[i].p *= f
		}
	}
	b.scale = d
	return nil
}

// Top returns up to depth levels per side, best first (depth <= 0: all).
func (b *Book) Top(depth int) (bids, asks []Level) {
	return top(b.bids, depth), top(b.asks, depth)
}

func top(s []level, depth int) []Level {
	if depth <= 0 || depth > len(s) {
		depth = len(s)
	}
	out := make([]Level, depth)
	for i := range depth {
		l := &s[len(s)-1-i]
		out[i] = Level{Price: l.price, Qty: l.qty}
	}
	return out
}

// Grouping aggregates levels into price buckets of a fixed size.
type Grouping struct {
	step   int64 // at scale digits
	digits int
	text   string
}

// ParseGrouping parses a positive decimal bucket size such as "0.5" or "10"; "" means no grouping.
func ParseGrouping(s string) (Grouping, error) {
	if s == "" {
		return Grouping{}, nil
	}
	v, d, err := parseFixed(s, -1)
	if err != nil || v <= 0 {
		return Grouping{}, fmt.Errorf("grouping %q: want a positive decimal", s)
	}
	return Grouping{step: v, digits: d, text: s}, nil
}

// IsZero reports whether no grouping is asked for.
func (g Grouping) IsZero() bool { return g.step == 0 }

// String is the grouping as given.
func (g Grouping) String() string { return g.text }

// Grouped returns up to depth buckets per side, best first: bids floor to the bucket, asks ceil, so a bucket
// never crosses. Quantities are exact sums. A zero grouping is Top.
func (b *Book) Grouped(depth int, g Grouping) (bids, asks []Level) {
	if g.IsZero() {
		return b.Top(depth)
	}
	return b.group(b.bids, depth, g, true), b.group(b.asks, depth, g, false)
}

func (b *Book) group(s []level, depth int, g Grouping, bid bool) []Level {
	// Bring price and step to a common scale.
	scale := max(b.scale, g.digits)
	pf, sf := pow10[scale-b.scale], pow10[scale-g.digits]
	step := g.step * sf
	var out []Level
	var (
		cur int64
		sum qtySum
		has bool
	)
	for i := len(s) - 1; i >= 0; i-- {
		l := &s[i]
		p := l.p * pf
		var bucket int64
		if bid {
			bucket = floorDiv(p, step) * step
		} else {
			bucket = -floorDiv(-p, step) * step
		}
		if has && bucket == cur {
			sum.add(l.qty)
			continue
		}
		if has {
			out = append(out, Level{Price: formatFixed(cur, scale), Qty: sum.String()})
			if depth > 0 && len(out) >= depth {
				return out
			}
		}
		cur, has = bucket, true
		sum.reset()
		sum.add(l.qty)
	}
	if has && (depth <= 0 || len(out) < depth) {
		out = append(out, Level{Price: formatFixed(cur, scale), Qty: sum.String()})
	}
	return out
}

// qtySum adds decimal quantities exactly: int64 fixed-point while it fits, shopspring/decimal beyond.
type qtySum struct {
	v     int64
	scale int
	big   *decimal.Decimal
}

func (q *qtySum) reset() { *q = qtySum{} }

func (q *qtySum) add(s string) {
	if q.big == nil {
		v, d, err := parseFixed(s, q.scale)
		if err == nil {
			if d > q.scale {
				if f := pow10[d-q.scale]; q.v <= math.MaxInt64/f {
					q.v *= f
					q.scale = d
				} else {
					err = ErrLevel
				}
			}
			if err == nil && q.v <= math.MaxInt64-v {
				q.v += v
				return
			}
		}
		acc := decimal.New(q.v, int32(-q.scale))
		q.big = &acc
	}
	if x, err := decimal.NewFromString(s); err == nil {
		*q.big = q.big.Add(x)
	}
}

func (q *qtySum) String() string {
	if q.big != nil {
		return q.big.String()
	}
	return formatFixed(q.v, q.scale)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

var pow10 = func() [19]int64 {
	var p [19]int64
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// parseFixed parses a non-negative decimal to an integer at scale digits (scale < 0: at its own digits). It returns
// the value and the number of fractional digits the text has (trailing zeros excluded). When the text has more
// digits than scale, the value is returned at its own digits.
func parseFixed(s string, scale int) (int64, int, error) {
	if s == "" {
		return 0, 0, fmt.Errorf("%w: empty number", ErrLevel)
	}
	intPart, frac, _ := strings.Cut(s, ".")
	frac = strings.TrimRight(frac, "0")
	if intPart == "" || len(frac) > maxScale {
		return 0, 0, fmt.Errorf("%w: %q", ErrLevel, s)
	}
	d := len(frac)
	if scale < d {
		scale = d
	}
	var v int64
	for i := 0; i < len(intPart); i++ {
		c := intPart[i]
		if c < '0' || c > '9' {
			return 0, 0, fmt.Errorf("%w: %q", ErrLevel, s)
		}
		if v > (math.MaxInt64-9)/10 {
			return 0, 0, fmt.Errorf("%w: %q overflows", ErrLevel, s)
		}
		v = v*10 + int64(c-'0')
	}
	for i := 0; i < len(frac); i++ {
		c := frac[i]
		if c < '0' || c > '9' {
			return 0, 0, fmt.Errorf("%w: %q", ErrLevel, s)
		}
		if v > (math.MaxInt64-9)/10 {
			return 0, 0, fmt.Errorf("%w: %q overflows", ErrLevel, s)
		}
		v = v*10 + int64(c-'0')
	}
	f := pow10[scale-d]
	if v > math.MaxInt64/f {
		return 0, 0, fmt.Errorf("%w: %q overflows", ErrLevel, s)
	}
	return v * f, d, nil
}

func isZero(s string) (bool, error) {
	if s == "" {
		return false, fmt.Errorf("%w: empty quantity", ErrLevel)
	}
	zero := true
	dot := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.' && !dot:
			dot = true
		case c == '0':
		case c >= '1' && c <= '9':
			zero = false
		default:
			return false, fmt.Errorf("%w: quantity %q", ErrLevel, s)
		}
	}
	return zero, nil
}

// formatFixed renders v at scale digits in canonical form (no trailing zeros, no trailing dot).
func formatFixed(v int64, scale int) string {
	neg := v < 0
	if neg {
		v = -v
	}
	s := strconv.FormatInt(v, 10)
	if scale > 0 {
		if len(s) <= scale {
			s = strings.Repeat("0", scale-len(s)+1) + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if neg {
		s = "-" + s
	}
	return s
}
