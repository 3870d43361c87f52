package venue

import "testing"

// Break-even price and margin ratio of a cross long, an isolated long and a cross short.
func TestPositionBreakEvenAndMarginRatio(t *testing.T) {
	f := newFixture(t)
	f.fund("a", "1000", "")
	f.fund("b", "1000", "")
	f.fund("m", "100000", "")
	f.limit("m", perp, Sell, "100", "100")
	f.limit("m", perp, Buy, "99", "100")
	if err := f.v.SetLeverage("a", perp, 10); err != nil {
		t.Fatal(err)
	}
	// a: cross long 10 at 100 (taker 0.0005: fee 0.5, wallet 999.5).
	f.place(OrderRequest{Account: "a", Instrument: perp, Side: Buy, Type: Market, Qty: d("10")})
	if err := f.v.SetMarkPrice(perp, d("98")); err != nil {
		t.Fatal(err)
	}
	pos, _ := f.v.Positions("a")
	if len(pos) != 1 {
		t.Fatalf("positions %+v", pos)
	}
	// 100 * (1 + 2 * 0.0005)
	eq(t, "long break-even", pos[0].BreakEven, "100.1")
	// Cross: maint 1% of 980 = 9.8 over equity 999.5 - 20 = 979.5.
	eq(t, "cross margin ratio", pos[0].MarginRatio, "0.01000510")

	// b: isolated long 1 at 100 with 10x (margin 10).
	if err := f.v.SetMarginMode("b", perp, true); err != nil {
		t.Fatal(err)
	}
	if err := f.v.SetLeverage("b", perp, 10); err != nil {
		t.Fatal(err)
	}
	f.place(OrderRequest{Account: "b", Instrument: perp, Side: Buy, Type: Market, Qty: d("1")})
	pos, _ = f.v.Positions("b")
	if len(pos) != 1 || !pos[0].Isolated {
		t.Fatalf("isolated %+v", pos)
	}
	// Isolated: maint 1% of 98 = 0.98 over margin 10 + upnl -2 = 8.
	eq(t, "isolated margin ratio", pos[0].MarginRatio, "0.1225")
	eq(t, "isolated break-even", pos[0].BreakEven, "100.1")

	f.place(OrderRequest{Account: "a", Instrument: perp, Side: Sell, Type: Market, Qty: d("15")})
	pos, _ = f.v.Positions("a")
	if len(pos) != 1 || !pos[0].Qty.Equal(d("-5")) {
		t.Fatalf("short %+v", pos)
	}
	// Short 5 at 99: 99 * (1 - 2 * 0.0005)
	eq(t, "short break-even", pos[0].BreakEven, "98.901")
	if !pos[0].MarginRatio.IsPositive() || pos[0].MarginRatio.GreaterThanOrEqual(d("1")) {
		t.Fatalf("short margin ratio %s", pos[0].MarginRatio)
	}
}
