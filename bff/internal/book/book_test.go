package book

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func lv(pq ...string) []*exchangev1.PriceLevel {
	var out []*exchangev1.PriceLevel
	for i := 0; i+1 < len(pq); i += 2 {
		out = append(out, &exchangev1.PriceLevel{Price: pq[i], Qty: pq[i+1]})
	}
	return out
}

func flat(ls []Level) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Price+"x"+l.Qty)
	}
	return out
}

func TestSnapshotDeltaOrderAndRemoval(t *testing.T) {
	b := New()
	if err := b.Apply(&exchangev1.BookUpdate{Sequence: 1}); !errors.Is(err, ErrNotSynced) {
		t.Fatalf("delta before snapshot: %v", err)
	}
	if err := b.Snapshot(lv("99.5", "1", "100", "2", "98", "3"), lv("101", "1", "100.5", "4"), 10); err != nil {
		t.Fatal(err)
	}
	bids, asks := b.Top(0)
	if got, want := flat(bids), []string{"100x2", "99.5x1", "98x3"}; !slices.Equal(got, want) {
		t.Fatalf("bids %v want %v", got, want)
	}
	if got, want := flat(asks), []string{"100.5x4", "101x1"}; !slices.Equal(got, want) {
		t.Fatalf("asks %v want %v", got, want)
	}
	// Finer price (rescale), a removal, an update, an insert.
	err := b.Apply(&exchangev1.BookUpdate{Bids: lv("99.75", "5", "98", "0", "100", "2.5"), Asks: lv("100.25", "1", "101", "0"), Sequence: 11, PrevSequence: 10})
	if err != nil {
		t.Fatal(err)
	}
	bids, asks = b.Top(2)
	if got, want := flat(bids), []string{"100x2.5", "99.75x5"}; !slices.Equal(got, want) {
		t.Fatalf("bids %v want %v", got, want)
	}
	if got, want := flat(asks), []string{"100.25x1", "100.5x4"}; !slices.Equal(got, want) {
		t.Fatalf("asks %v want %v", got, want)
	}
	if b.Seq() != 11 || !b.Synced() {
		t.Fatalf("seq %d synced %v", b.Seq(), b.Synced())
	}
	// Removing an absent level is a no-op.
	if err := b.Apply(&exchangev1.BookUpdate{Bids: lv("1", "0"), Sequence: 12, PrevSequence: 11}); err != nil {
		t.Fatal(err)
	}
	if n, _ := b.Len(); n != 3 {
		t.Fatalf("bids %d", n)
	}
}

func TestGapAndCrossedUnsync(t *testing.T) {
	b := New()
	if err := b.Snapshot(lv("100", "1"), lv("101", "1"), 5); err != nil {
		t.Fatal(err)
	}
	if err := b.Apply(&exchangev1.BookUpdate{Bids: lv("100", "2"), Sequence: 8, PrevSequence: 7}); !errors.Is(err, ErrGap) {
		t.Fatalf("gap: %v", err)
	}
	if b.Synced() {
		t.Fatal("synced after a gap")
	}
	if bids, asks := b.Top(0); len(bids)+len(asks) != 0 {
		t.Fatalf("an unsynced book shows levels: %v %v", bids, asks)
	}
	if err := b.Apply(&exchangev1.BookUpdate{Sequence: 9, PrevSequence: 8}); !errors.Is(err, ErrNotSynced) {
		t.Fatalf("after gap: %v", err)
	}
	if err := b.Snapshot(lv("100", "1"), lv("101", "1"), 20); err != nil {
		t.Fatal(err)
	}
	if err := b.Apply(&exchangev1.BookUpdate{Bids: lv("101", "1"), Sequence: 21, PrevSequence: 20}); !errors.Is(err, ErrCrossed) {
		t.Fatalf("crossed: %v", err)
	}
	if b.Synced() {
		t.Fatal("synced while crossed")
	}
	if err := b.Snapshot(lv("102", "1"), lv("101", "1"), 30); !errors.Is(err, ErrCrossed) || b.Synced() {
		t.Fatalf("crossed snapshot: %v", err)
	}
	for _, bad := range []string{"", "1e5", "-1", "1.2.3", "abc", "1.0000000000000001"} {
		if err := b.Snapshot(lv(bad, "1"), nil, 1); !errors.Is(err, ErrLevel) {
			t.Fatalf("price %q: %v", bad, err)
		}
		if err := b.Snapshot(lv("1", bad), nil, 1); bad != "" && bad != "1.0000000000000001" && !errors.Is(err, ErrLevel) {
			t.Fatalf("qty %q: %v", bad, err)
		}
	}
}

func TestGrouping(t *testing.T) {
	b := New()
	if err := b.Snapshot(lv("100.4", "1", "100.1", "0.5", "99.9", "2", "99.5", "1.25", "98", "1"),
		lv("100.6", "1", "101", "3", "101.01", "0.1", "102.5", "1"), 1); err != nil {
		t.Fatal(err)
	}
	g, err := ParseGrouping("0.5")
	if err != nil {
		t.Fatal(err)
	}
	bids, asks := b.Grouped(3, g)
	if got, want := flat(bids), []string{"100x1.5", "99.5x3.25", "98x1"}; !slices.Equal(got, want) {
		t.Fatalf("bids %v want %v", got, want)
	}
	if got, want := flat(asks), []string{"101x4", "101.5x0.1", "102.5x1"}; !slices.Equal(got, want) {
		t.Fatalf("asks %v want %v", got, want)
	}
	g10, _ := ParseGrouping("10")
	bids, asks = b.Grouped(1, g10)
	if got, want := flat(bids), []string{"100x1.5"}; !slices.Equal(got, want) {
		t.Fatalf("bids %v want %v", got, want)
	}
	if got, want := flat(asks), []string{"110x5.1"}; !slices.Equal(got, want) {
		t.Fatalf("asks %v want %v", got, want)
	}
	for _, bad := range []string{"0", "-1", "x", "0.0"} {
		if _, err := ParseGrouping(bad); err == nil {
			t.Fatalf("grouping %q accepted", bad)
		}
	}
}

func TestMaxLevels(t *testing.T) {
	b := New()
	b.SetMaxLevels(3)
	if err := b.Snapshot(lv("1", "1", "2", "1", "3", "1", "4", "1"), lv("10", "1"), 1); err != nil {
		t.Fatal(err)
	}
	bids, _ := b.Top(0)
	if got, want := flat(bids), []string{"4x1", "3x1", "2x1"}; !slices.Equal(got, want) {
		t.Fatalf("bids %v want %v", got, want)
	}
}

// TestAgainstModel applies random deltas to the book and to a map model and compares them after every step.
func TestAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	b := New()
	model := map[bool]map[string]decimal.Decimal{true: {}, false: {}}
	if err := b.Snapshot(nil, nil, 1); err != nil {
		t.Fatal(err)
	}
	seq := int64(1)
	for step := range 5000 {
		u := &exchangev1.BookUpdate{PrevSequence: seq, Sequence: seq + 1}
		for range 1 + r.IntN(4) {
			bid := r.IntN(2) == 0
			var p decimal.Decimal
			if bid {
				p = decimal.NewFromInt(int64(r.IntN(100))).Add(decimal.New(int64(r.IntN(10)), -2))
			} else {
				p = decimal.NewFromInt(int64(2000 + r.IntN(100))).Add(decimal.New(int64(r.IntN(10)), -3))
			}
			q := decimal.New(int64(r.IntN(5)), -int32(r.IntN(4)))
			l := &exchangev1.PriceLevel{Price: p.String(), Qty: q.String()}
			if bid {
				u.Bids = append(u.Bids, l)
			} else {
				u.Asks = append(u.Asks, l)
			}
			if q.IsZero() {
				delete(model[bid], p.String())
			} else {
				model[bid][p.String()] = q
			}
		}
		if err := b.Apply(u); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		seq++
		if step%10 != 9 {
			continue
		}
		bids, asks := b.Top(0)
		for _, side := range []struct {
			bid bool
			got []Level
		}{{true, bids}, {false, asks}} {
			if len(side.got) != len(model[side.bid]) {
				t.Fatalf("step %d: %d levels, model %d", step, len(side.got), len(model[side.bid]))
			}
			for i, l := range side.got {
				if q, ok := model[side.bid][l.Price]; !ok || q.String() != l.Qty {
					t.Fatalf("step %d: level %s x %s not in model", step, l.Price, l.Qty)
				}
				if i > 0 {
					prev, _ := decimal.NewFromString(side.got[i-1].Price)
					cur, _ := decimal.NewFromString(l.Price)
					if (side.bid && !prev.GreaterThan(cur)) || (!side.bid && !prev.LessThan(cur)) {
						t.Fatalf("step %d: order %s then %s", step, prev, cur)
					}
				}
			}
		}
	}
}

func TestFormatFixed(t *testing.T) {
	for _, c := range []struct {
		v     int64
		scale int
		want  string
	}{{12345, 2, "123.45"}, {100, 2, "1"}, {5, 3, "0.005"}, {0, 2, "0"}, {-15, 1, "-1.5"}, {7, 0, "7"}} {
		if got := formatFixed(c.v, c.scale); got != c.want {
			t.Errorf("formatFixed(%d,%d)=%s want %s", c.v, c.scale, got, c.want)
		}
	}
}

func TestQtySumExact(t *testing.T) {
	var q qtySum
	for _, s := range []string{"0.1", "0.2", "1.005", "3"} {
		q.add(s)
	}
	if q.String() != "4.305" {
		t.Fatalf("sum %s", q.String())
	}
	q.reset()
	q.add("9223372036854775807")
	q.add("9223372036854775807")
	q.add("0.5")
	if q.String() != "18446744073709551614.5" {
		t.Fatalf("overflowing sum %s", q.String())
	}
}
