package venue

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// BenchmarkMatchingEngine measures the bare engine on one core: random limit orders around a mid price (about
// half cross and trade, the rest rest), with one cancel per three orders. Reports orders/s and the p99 latency.
func BenchmarkMatchingEngine(b *testing.B) {
	v, err := New(Config{Instruments: testInstruments(b), Clock: NewManualClock(t0)})
	if err != nil {
		b.Fatal(err)
	}
	st := v.list[0]
	book := st.book
	r := rand.New(rand.NewPCG(1, 2))
	var resting []*order
	noop := func(*order, int64, int64) {}
	lat := make([]time.Duration, 0, b.N)
	mid := int64(1000)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		t := time.Now()
		if i%3 == 2 && len(resting) > 0 {
			j := r.IntN(len(resting))
			o := resting[j]
			if o.lvl != nil {
				book.unlink(o)
			}
			resting[j] = resting[len(resting)-1]
			resting = resting[:len(resting)-1]
		} else {
			side := Buy
			off := int64(r.IntN(20)) - 5
			if r.IntN(2) == 0 {
				side = Sell
				off = -off
			}
			o := &order{acct: v.house, inst: st, side: side, typ: Limit, price: mid - off, qty: int64(1 + r.IntN(10)), stp: STPNone}
			book.match(o, o.price, 0, noop, func(*order) {})
			if o.filled < o.qty {
				book.rest(o)
				resting = append(resting, o)
			}
		}
		book.changes = book.changes[:0]
		lat = append(lat, time.Since(t))
	}
	el := time.Since(start)
	b.StopTimer()
	reportLatency(b, lat, el)
}

func reportLatency(b *testing.B, lat []time.Duration, el time.Duration) {
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns/op")
		b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns/op")
	}
	b.ReportMetric(float64(len(lat))/el.Seconds(), "orders/s")
}

// BenchmarkVenuePlace measures the full path an emulator uses: validation, funds, matching, settlement with fees
// and ledger entries, events (no subscribers), for two accounts trading spot against each other.
func BenchmarkVenuePlace(b *testing.B) {
	f := newFixture(b)
	f.fund("a", "100000000", "1000000")
	f.fund("b", "100000000", "1000000")
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 4))
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		acct, side := "a", Buy
		if r.IntN(2) == 0 {
			acct, side = "b", Sell
		}
		price := d("100").Add(d("0.1").Mul(decimalInt(int64(r.IntN(20) - 10))))
		t := time.Now()
		if _, err := f.v.Place(ctx, OrderRequest{Account: acct, Instrument: spot, Side: side, Type: Limit, TIF: IOC,
			Price: price, Qty: d("0.5"), STP: STPNone}); err != nil {
			b.Fatal(err)
		}
		if i%2 == 0 {
			_, _ = f.v.Place(ctx, OrderRequest{Account: acct, Instrument: spot, Side: -side, Type: Limit, Price: price, Qty: d("0.5")})
		}
		lat = append(lat, time.Since(t))
		if i%1000 == 999 {
			_, _ = f.v.CancelAll(ctx, "a", "")
			_, _ = f.v.CancelAll(ctx, "b", "")
		}
	}
	el := time.Since(start)
	b.StopTimer()
	reportLatency(b, lat, el)
}

// BenchmarkBookUpdates measures market-maker book maintenance: one full ladder refresh (40 levels a side after a
// price move) per op; reports level updates per second.
func BenchmarkBookUpdates(b *testing.B) {
	p, _ := LoadProfile("binance")
	v, err := New(Config{Instruments: p.Instruments[:1], Clock: NewManualClock(t0), Simulate: true, StepInterval: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	st := v.list[0]
	updates := 0
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		st.mkt.proc.logP += st.mkt.proc.rng.NormFloat64() * 0.0005
		v.sim.refresh(st)
		updates += len(st.book.changes)
		st.book.changes = st.book.changes[:0]
	}
	b.ReportMetric(float64(updates)/time.Since(start).Seconds(), "level-updates/s")
}

// BenchmarkHistoryDay measures generating one day of 1-minute bars for one instrument.
func BenchmarkHistoryDay(b *testing.B) {
	p, _ := LoadProfile("binance")
	v, err := New(Config{Instruments: p.Instruments[:1], Clock: NewManualClock(t0), Simulate: true, HistoryDays: 30})
	if err != nil {
		b.Fatal(err)
	}
	st := v.list[0]
	segs := v.hist.segments()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		clear(v.hist.cache)
		v.hist.day(st, i%len(segs), segs[i%len(segs)])
	}
}

func decimalInt(i int64) decimal.Decimal { return decimal.NewFromInt(i) }
