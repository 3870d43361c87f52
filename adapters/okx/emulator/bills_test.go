package emulator

import (
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
)

// TestFundingFeeBills: funding settled on a position appears in GET /api/v5/account/bills as type 8 bills, newest
// first, paged by billId and filtered by instrument, sub-type and time.
func TestFundingFeeBills(t *testing.T) {
	t.Parallel()
	clock := venue.NewManualClock(t0)
	v, err := venue.New(venue.Config{Profile: "okx", Seed: 7, Clock: clock, FundingInterval: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Venue: v, DisableRateLimits: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() { ts.Close(); s.Close(); v.Close() })
	h := &harness{t: t, v: v, clock: clock, s: s, ts: ts}
	const perp = "ETH/USDT:PERP"
	mk, _ := v.Mark(perp)
	in, _ := v.Instrument(perp)
	ask := mk.Mark.Mul(decimal.RequireFromString("1.01")).Div(in.TickSize).Ceil().Mul(in.TickSize)
	if _, err := v.AddLiquidity(perp, venue.Sell, ask, decimal.NewFromInt(100)); err != nil {
		t.Fatal(err)
	}
	var p placeResp
	h.signed("POST", "/api/v5/trade/order", map[string]any{"instId": "ETH-USDT-SWAP", "tdMode": "cross", "side": "buy",
		"ordType": "market", "sz": "7"}).ok(t, &p)
	if p[0].SCode != "0" {
		t.Fatal(p)
	}
	for range 4 { // settlements at +10s .. +40s
		clock.Advance(10 * time.Second)
		v.AdvanceTo(clock.Now())
	}
	r := h.signed("GET", "/api/v5/account/bills?instType=SWAP&type=8", nil)
	checkShape(t, "account_bills", r.raw)
	bills := r.objects(t)
	if len(bills) != 4 {
		t.Fatalf("bills %v", bills)
	}
	for i, b := range bills {
		want := t0.Add(time.Duration(40-10*i) * time.Second).UnixMilli()
		if b["type"] != "8" || b["subType"] != "173" || b["instId"] != "ETH-USDT-SWAP" || b["sz"] != "7" ||
			b["ts"] != strconv.FormatInt(want, 10) || b["ccy"] != "USDT" || b["px"] != "0.0001" {
			t.Fatalf("bill %d: %v", i, b)
		}
		if d := decimal.RequireFromString(b["balChg"].(string)); !d.IsNegative() || b["pnl"] != b["balChg"] {
			t.Fatalf("a long pays a positive rate: %v", b)
		}
	}
	page := func(q string) []map[string]any { return h.signed("GET", "/api/v5/account/bills?"+q, nil).objects(t) }
	if older := page("type=8&limit=2&after=" + bills[1]["billId"].(string)); len(older) != 2 || older[0]["billId"] != bills[2]["billId"] {
		t.Fatalf("after: %v", older)
	}
	if newer := page("type=8&before=" + bills[1]["billId"].(string)); len(newer) != 1 || newer[0]["billId"] != bills[0]["billId"] {
		t.Fatalf("before: %v", newer)
	}
	if win := page("type=8&begin=" + bills[2]["ts"].(string) + "&end=" + bills[1]["ts"].(string)); len(win) != 2 {
		t.Fatalf("begin/end: %v", win)
	}
	for _, q := range []string{"instId=BTC-USDT-SWAP", "subType=174", "type=2", "instType=SPOT", "ccy=BTC"} {
		if got := page(q); len(got) != 0 {
			t.Fatalf("%s: %v", q, got)
		}
	}
	if r := h.signed("GET", "/api/v5/account/bills?begin=yesterday", nil); r.Code == "0" {
		t.Fatalf("bad begin accepted: %s", r.raw)
	}
}
