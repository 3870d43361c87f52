package book

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// deltaLoad is a realistic delta stream for a book of 1,000 levels a side with a 0.01 tick: each delta touches
// one or two levels, mostly near the top (geometric distance), sometimes removing a level that a later delta
// brings back.
type deltaLoad struct {
	bids, asks []*exchangev1.PriceLevel // snapshot
	updates    []*exchangev1.BookUpdate
}

func newDeltaLoad(n int) *deltaLoad {
	r := rand.New(rand.NewPCG(3, 4))
	const levels = 1000
	mid := int64(6_500_000) // 65000.00 in cents
	price := func(c int64) string {
		return strconv.FormatInt(c/100, 10) + "." + strconv.FormatInt(100+c%100, 10)[1:]
	}
	qty := func() string { return "0." + strconv.Itoa(1000+r.IntN(9000)) }
	d := &deltaLoad{}
	for k := int64(1); k <= levels; k++ {
		d.bids = append(d.bids, &exchangev1.PriceLevel{Price: price(mid - k), Qty: qty()})
		d.asks = append(d.asks, &exchangev1.PriceLevel{Price: price(mid + k), Qty: qty()})
	}
	for range n {
		u := &exchangev1.BookUpdate{}
		for range 1 + r.IntN(2) {
			k := int64(1 + min(int(r.ExpFloat64()*20), levels-1))
			q := qty()
			if r.IntN(10) == 0 {
				q = "0"
			}
			if r.IntN(2) == 0 {
				u.Bids = append(u.Bids, &exchangev1.PriceLevel{Price: price(mid - k), Qty: q})
			} else {
				u.Asks = append(u.Asks, &exchangev1.PriceLevel{Price: price(mid + k), Qty: q})
			}
		}
		d.updates = append(d.updates, u)
	}
	return d
}

// BenchmarkApply applies deltas to one book on one goroutine: deltas/s and levels/s per core.
func BenchmarkApply(b *testing.B) {
	d := newDeltaLoad(1 << 16)
	bk := New()
	if err := bk.Snapshot(d.bids, d.asks, 1); err != nil {
		b.Fatal(err)
	}
	levels := 0
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		u := d.updates[i&(len(d.updates)-1)]
		u.PrevSequence, u.Sequence = bk.Seq(), bk.Seq()+1
		if err := bk.Apply(u); err != nil {
			b.Fatal(err)
		}
		levels += len(u.Bids) + len(u.Asks)
	}
	secs := time.Since(start).Seconds()
	b.ReportMetric(float64(b.N)/secs, "deltas/s")
	b.ReportMetric(float64(levels)/secs, "levels/s")
}

// BenchmarkGrouped renders a 20-bucket grouped view of the 1,000-level book (done once per view per update).
func BenchmarkGrouped(b *testing.B) {
	d := newDeltaLoad(1)
	bk := New()
	if err := bk.Snapshot(d.bids, d.asks, 1); err != nil {
		b.Fatal(err)
	}
	g, _ := ParseGrouping("0.5")
	b.ReportAllocs()
	for b.Loop() {
		bk.Grouped(20, g)
	}
}
