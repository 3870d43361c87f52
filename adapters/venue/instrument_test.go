package venue

import (
	"errors"
	"testing"

	"github.com/shopspring/decimal"
)

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func findInstr(t *testing.T, p *Profile, id string) *Instrument {
	t.Helper()
	for _, in := range p.Instruments {
		if in.ID == id {
			return in
		}
	}
	t.Fatalf("profile %s has no %s", p.Name, id)
	return nil
}

func TestProfilesAreValidAndRealLooking(t *testing.T) {
	for _, name := range ProfileNames() {
		p, err := LoadProfile(name)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		spot, perp := 0, 0
		for _, in := range p.Instruments {
			if seen[in.ID] {
				t.Fatalf("%s: duplicate %s", name, in.ID)
			}
			seen[in.ID] = true
			if in.Market == Spot {
				spot++
			} else {
				perp++
			}
			// The reference price must be representable and within the bounds.
			if _, err := in.Ticks(in.RefPrice.Div(in.TickSize).Floor().Mul(in.TickSize)); err != nil {
				t.Fatalf("%s %s: ref price not representable: %v", name, in.ID, err)
			}
			// The minimum order at the reference price must be reachable below the max quantity.
			minQtyForNotional := in.MinNotional.Div(in.RefPrice)
			if minQtyForNotional.GreaterThan(in.MaxQty) {
				t.Fatalf("%s %s: min notional unreachable", name, in.ID)
			}
			if in.Market == Perp {
				if in.Tiers[0].MaxLeverage != in.MaxLeverage {
					t.Fatalf("%s %s: first tier leverage %d != %d", name, in.ID, in.Tiers[0].MaxLeverage, in.MaxLeverage)
				}
				for i := 1; i < len(in.Tiers); i++ {
					a, b := in.Tiers[i-1], in.Tiers[i]
					// The maintenance requirement is continuous at each bracket edge.
					left := a.MaxNotional.Mul(a.MaintRate).Sub(a.MaintAmount)
					right := a.MaxNotional.Mul(b.MaintRate).Sub(b.MaintAmount)
					if !left.Equal(right) {
						t.Fatalf("%s %s: tier %d discontinuous %s vs %s", name, in.ID, i, left, right)
					}
				}
			}
		}
		if spot < 40 || perp < 40 {
			t.Fatalf("%s: %d spot, %d perp; want a few dozen each", name, spot, perp)
		}
		for _, must := range []string{"BTC/USDT", "ETH/USDT:PERP", "SOL/USDT", "XRP/USDT:PERP", "DOGE/USDT"} {
			findInstr(t, p, must)
		}
	}
}

func TestBinanceLikePrecisions(t *testing.T) {
	p, err := LoadProfile("binance")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ id, tick, step string }{
		{"BTC/USDT", "0.01", "0.00001"},
		{"BTC/USDT:PERP", "0.1", "0.001"},
		{"ETH/USDT", "0.01", "0.0001"},
		{"ETH/USDT:PERP", "0.01", "0.01"},
		{"DOGE/USDT", "0.00001", "1"},
	}
	for _, c := range cases {
		in := findInstr(t, p, c.id)
		if !in.TickSize.Equal(d(c.tick)) || !in.StepSize.Equal(d(c.step)) {
			t.Errorf("%s: tick %s step %s, want %s %s", c.id, in.TickSize, in.StepSize, c.tick, c.step)
		}
	}
	okx, _ := LoadProfile("okx")
	btc := findInstr(t, okx, "BTC/USDT:PERP")
	if !btc.ContractValue.Equal(d("0.01")) || !btc.StepSize.Equal(d("0.001")) {
		t.Errorf("okx BTC perp: contract %s step %s", btc.ContractValue, btc.StepSize)
	}
	if _, err := LoadProfile("nope"); err == nil {
		t.Fatal("unknown profile accepted")
	}
}

func TestFixedPointConversions(t *testing.T) {
	p, _ := LoadProfile("binance")
	in := findInstr(t, p, "BTC/USDT")
	ticks, err := in.Ticks(d("98000.12"))
	if err != nil || ticks != 9800012 {
		t.Fatalf("ticks %d %v", ticks, err)
	}
	if got := in.PriceString(ticks); got != "98000.12" {
		t.Fatalf("price string %q", got)
	}
	if got := in.PriceString(9800000); got != "98000.00" {
		t.Fatalf("price string %q", got)
	}
	if _, err := in.Ticks(d("98000.125")); !errors.Is(err, ErrPrecision) {
		t.Fatalf("want precision error, got %v", err)
	}
	if _, err := in.Ticks(d("-1")); !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("want range error, got %v", err)
	}
	if _, err := in.Ticks(d("100000000")); !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("want range error above max price, got %v", err)
	}
	lots, err := in.Lots(d("0.00123"))
	if err != nil || lots != 123 {
		t.Fatalf("lots %d %v", lots, err)
	}
	if got := in.QtyString(lots); got != "0.00123" {
		t.Fatalf("qty string %q", got)
	}
	if got := in.Notional(ticks * lots); !got.Equal(d("98000.12").Mul(d("0.00123"))) {
		t.Fatalf("notional %s", got)
	}
	for _, bad := range []string{"", "1e5", " 1", "1.", ".5", "--1", "1-", "abc", "0x10"} {
		if _, err := ParseDecimal(bad); !errors.Is(err, ErrBadNumber) {
			t.Errorf("ParseDecimal(%q) = %v", bad, err)
		}
	}
	for _, good := range []string{"0", "-1.5", "123.000", "0.00000001"} {
		if _, err := ParseDecimal(good); err != nil {
			t.Errorf("ParseDecimal(%q) = %v", good, err)
		}
	}
	if scaleOf(d("0.0100")) != 2 || scaleOf(d("5")) != 0 || scaleOf(d("0.00001")) != 5 {
		t.Fatal("scaleOf")
	}
}

func TestMaintMarginTiers(t *testing.T) {
	p, _ := LoadProfile("binance")
	in := findInstr(t, p, "BTC/USDT:PERP")
	// First bracket: 1/(2*125) = 0.004 rounded to 4 places.
	if got := in.MaintMargin(d("10000")); !got.Equal(d("40")) {
		t.Fatalf("maint margin %s", got)
	}
	if in.Tier(d("1e12")).MaxLeverage >= in.MaxLeverage {
		t.Fatal("large positions must have lower leverage")
	}
}
