package venue

import (
	"testing"
	"time"
)

func TestFundingPaymentsAreRecordedPerAccount(t *testing.T) {
	clock := NewManualClock(t0)
	v, err := New(Config{Instruments: testInstruments(t), Clock: clock, StepInterval: time.Second,
		FundingInterval: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, v: v, clock: clock, ctx: t.Context()}
	t.Cleanup(func() { f.checkInvariants(); v.Close() })
	f.fund("long", "1000", "")
	f.fund("short", "1000", "")
	f.fund("m", "100000", "")
	if err := v.SetPositionMode("short", true); err != nil {
		t.Fatal(err)
	}
	f.limit("m", perp, Sell, "100", "10")
	f.limit("m", perp, Buy, "99.9", "10")
	f.place(OrderRequest{Account: "long", Instrument: perp, Side: Buy, Type: Market, Qty: d("2")})
	f.place(OrderRequest{Account: "short", Instrument: perp, Side: Sell, Type: Market, Qty: d("3"), PositionSide: PosShort})
	if got, _ := v.Mark(perp); got.NextFunding != t0.Add(10*time.Second).UnixMilli() {
		t.Fatalf("next funding %d, want %d", got.NextFunding, t0.Add(10*time.Second).UnixMilli())
	}
	// Three settlements at +10s, +20s, +30s: the rate is 0.0001 and the mark 100.
	clock.Set(t0.Add(35 * time.Second))
	v.AdvanceTo(clock.Now())

	longs, err := v.FundingPayments("long", FundingQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(longs) != 3 {
		t.Fatalf("long payments %+v", longs)
	}
	for i, p := range longs {
		want := t0.Add(time.Duration(30-10*i) * time.Second).UnixMilli()
		if p.Time != want || p.Instrument != perp || p.Asset != "USDT" || p.Side != PosBoth || p.Account != "long" {
			t.Fatalf("payment %d: %+v (want time %d)", i, p, want)
		}
		eq(t, "long pays", p.Amount, "-0.02") // 100 × 2 × 0.0001
		eq(t, "rate", p.Rate, "0.0001")
		eq(t, "size", p.Qty, "2")
		if i > 0 && p.ID >= longs[i-1].ID {
			t.Fatalf("ids not newest first: %+v", longs)
		}
	}
	shorts, _ := v.FundingPayments("short", FundingQuery{Instrument: perp, Limit: 2})
	if len(shorts) != 2 || shorts[0].Side != PosShort {
		t.Fatalf("short payments %+v", shorts)
	}
	eq(t, "short receives", shorts[0].Amount, "0.03")
	eq(t, "short size", shorts[0].Qty, "3")

	// Paging: before an id, a time window, oldest first.
	older, _ := v.FundingPayments("long", FundingQuery{BeforeID: longs[0].ID})
	if len(older) != 2 || older[0].ID != longs[1].ID {
		t.Fatalf("before id: %+v", older)
	}
	win, _ := v.FundingPayments("long", FundingQuery{From: longs[2].Time, To: longs[1].Time})
	if len(win) != 2 || win[0].Time != longs[1].Time {
		t.Fatalf("window: %+v", win)
	}
	asc, _ := v.FundingPayments("long", FundingQuery{OldestFirst: true, Limit: 1})
	if len(asc) != 1 || asc[0].ID != longs[2].ID {
		t.Fatalf("oldest first: %+v", asc)
	}
	// The maker sold 2 and bought 3: long 1.
	if mk, _ := v.FundingPayments("m", FundingQuery{}); len(mk) != 3 || !mk[0].Amount.Equal(d("-0.01")) {
		t.Fatalf("maker payments %+v", mk)
	}
	f.fund("idle", "10", "")
	if none, _ := v.FundingPayments("idle", FundingQuery{}); len(none) != 0 {
		t.Fatalf("no position, no payment: %+v", none)
	}
	if _, err := v.FundingPayments("nobody", FundingQuery{}); err == nil {
		t.Fatal("unknown account listed")
	}
	// The ledger agrees: three FUNDING entries on the long's account.
	es, _ := v.Ledger("long", 0)
	n := 0
	for _, e := range es {
		if e.Kind == LedgerFunding {
			n++
		}
	}
	if n != 3 {
		t.Fatalf("ledger has %d funding entries", n)
	}
}

func TestFundingIntervalMustBeWholeSeconds(t *testing.T) {
	if _, err := New(Config{Instruments: testInstruments(t), FundingInterval: 1500 * time.Millisecond}); err == nil {
		t.Fatal("1.5s funding interval accepted")
	}
}
