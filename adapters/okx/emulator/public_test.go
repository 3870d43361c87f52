package emulator

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func TestInstrumentsContractsAndLots(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rows := h.get("/api/v5/public/instruments?instType=SWAP&instId=BTC-USDT-SWAP").objects(t)
	if len(rows) != 1 {
		t.Fatalf("rows %v", rows)
	}
	r := rows[0]
	in, _ := h.v.Instrument("BTC/USDT:PERP")
	for k, want := range map[string]string{"instId": "BTC-USDT-SWAP", "ctVal": in.ContractValue.String(),
		"ctMult": "1", "ctValCcy": "BTC", "ctType": "linear", "settleCcy": "USDT", "instFamily": "BTC-USDT",
		"uly": "BTC-USDT", "state": "live", "lever": strconv.Itoa(in.MaxLeverage), "tickSz": in.TickSize.String(),
		"lotSz": in.StepSize.Div(in.ContractValue).String(), "minSz": in.MinQty.Div(in.ContractValue).String()} {
		if r[k] != want {
			t.Errorf("%s = %v, want %s", k, r[k], want)
		}
	}
	// The venue steps BTC perpetuals by a tenth of a contract.
	if r["lotSz"] != "0.1" || r["ctVal"] != "0.01" {
		t.Errorf("lotSz %v ctVal %v", r["lotSz"], r["ctVal"])
	}
	spot := h.get("/api/v5/public/instruments?instType=SPOT").objects(t)
	for _, o := range spot {
		if o["ctVal"] != "" || o["instType"] != "SPOT" || o["baseCcy"] == "" {
			t.Fatalf("spot row %v", o)
		}
	}
	if len(spot) < 40 {
		t.Errorf("only %d spot instruments", len(spot))
	}
}

func TestSwapSizesAreContracts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	in, _ := h.v.Instrument("BTC/USDT:PERP")
	snap, err := h.v.BookSnapshot("BTC/USDT:PERP", 5)
	if err != nil {
		t.Fatal(err)
	}
	var b []struct {
		Asks [][]string `json:"asks"`
		Bids [][]string `json:"bids"`
	}
	h.get("/api/v5/market/books?instId=BTC-USDT-SWAP&sz=5").ok(t, &b)
	if len(b) != 1 || len(b[0].Bids) != len(snap.Bids) {
		t.Fatalf("book %v vs %v", b, snap)
	}
	for k, l := range snap.Bids {
		sz := decimal.RequireFromString(b[0].Bids[k][1])
		if !sz.Mul(in.ContractValue).Equal(l.Qty) || b[0].Bids[k][0] != l.Price.String() {
			t.Errorf("bid %d: %v vs %v", k, b[0].Bids[k], l)
		}
	}
}

func TestCandlesPagingNewestFirst(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	first := h.get("/api/v5/market/candles?instId=BTC-USDT&bar=1m&limit=300").rows(t)
	if len(first) != 300 {
		t.Fatalf("%d rows, want 300", len(first))
	}
	if first[0][8] != "0" || first[1][8] != "1" {
		t.Errorf("confirm flags %s %s", first[0][8], first[1][8])
	}
	for k := 1; k < len(first); k++ {
		a, _ := strconv.ParseInt(first[k-1][0], 10, 64)
		b, _ := strconv.ParseInt(first[k][0], 10, 64)
		if a-b != 60_000 {
			t.Fatalf("rows %d,%d not consecutive newest first: %d %d", k-1, k, a, b)
		}
	}
	// history-candles caps at 100; after pages to older bars with no overlap.
	oldest := first[len(first)-1][0]
	next := h.get("/api/v5/market/history-candles?instId=BTC-USDT&bar=1m&limit=500&after=" + oldest).rows(t)
	if len(next) != 100 {
		t.Fatalf("%d rows, want 100", len(next))
	}
	o, _ := strconv.ParseInt(oldest, 10, 64)
	n0, _ := strconv.ParseInt(next[0][0], 10, 64)
	if n0 != o-60_000 {
		t.Errorf("after=%d gave first %d", o, n0)
	}
	// before returns only newer bars.
	mid := first[10][0]
	newer := h.get("/api/v5/market/candles?instId=BTC-USDT&bar=1m&before=" + mid).rows(t)
	if len(newer) != 10 || newer[len(newer)-1][0] != first[9][0] {
		t.Errorf("before=%s: %d rows", mid, len(newer))
	}
	// Both: a window.
	win := h.get(fmt.Sprintf("/api/v5/market/candles?instId=BTC-USDT&bar=1m&after=%s&before=%s", first[3][0], first[8][0])).rows(t)
	if len(win) != 4 || win[0][0] != first[4][0] || win[3][0] != first[7][0] {
		t.Errorf("window: %v", win)
	}
}

func TestCandleBarAlignment(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	utc := h.get("/api/v5/market/candles?instId=ETH-USDT&bar=1Dutc&limit=3").rows(t)
	hkRows := h.get("/api/v5/market/candles?instId=ETH-USDT&bar=1D&limit=3").rows(t)
	if len(utc) < 2 || len(hkRows) < 2 {
		t.Fatalf("rows %d %d", len(utc), len(hkRows))
	}
	for _, r := range utc {
		ts, _ := strconv.ParseInt(r[0], 10, 64)
		if ts%dayMs != 0 {
			t.Errorf("1Dutc bar at %s", time.UnixMilli(ts).UTC())
		}
	}
	for _, r := range hkRows {
		ts, _ := strconv.ParseInt(r[0], 10, 64)
		if (ts+hk)%dayMs != 0 {
			t.Errorf("1D bar at %s, want 16:00 UTC", time.UnixMilli(ts).UTC())
		}
	}
	// The HK day bar that closed at 16:00 UTC today aggregates the hours of that day exactly.
	closed := hkRows[1]
	ts, _ := strconv.ParseInt(closed[0], 10, 64)
	hours := h.get(fmt.Sprintf("/api/v5/market/history-candles?instId=ETH-USDT&bar=1H&limit=24&after=%d", ts+dayMs)).rows(t)
	if len(hours) != 24 || hours[23][0] != closed[0] {
		t.Fatalf("hours %d, last %v", len(hours), hours[len(hours)-1])
	}
	vol := decimal.Zero
	hi := decimal.RequireFromString(hours[0][2])
	for _, r := range hours {
		vol = vol.Add(decimal.RequireFromString(r[5]))
		hi = decimal.Max(hi, decimal.RequireFromString(r[2]))
	}
	if closed[1] != hours[23][1] || closed[4] != hours[0][4] || !vol.Equal(decimal.RequireFromString(closed[5])) ||
		!hi.Equal(decimal.RequireFromString(closed[2])) || closed[8] != "1" {
		t.Errorf("1D %v vs hours open %s close %s vol %s high %s", closed, hours[23][1], hours[0][4], vol, hi)
	}
	// Swap volumes: vol in contracts, volCcy in base.
	sw := h.get("/api/v5/market/candles?instId=ETH-USDT-SWAP&bar=1H&limit=2").rows(t)
	in, _ := h.v.Instrument("ETH/USDT:PERP")
	v, c := decimal.RequireFromString(sw[1][5]), decimal.RequireFromString(sw[1][6])
	if !v.Mul(in.ContractValue).Equal(c) {
		t.Errorf("swap vol %s contracts vs %s base", v, c)
	}
}

func TestPublicErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, c := range []struct {
		path   string
		status int
		code   string
	}{
		{"/api/v5/public/instruments", 400, "50014"},
		{"/api/v5/public/instruments?instType=SPOT&instId=NOPE-USDT", 200, "51001"},
		{"/api/v5/market/candles?instId=BTC-USDT&bar=7m", 400, "51000"},
		{"/api/v5/market/books", 400, "50014"},
		{"/api/v5/public/funding-rate?instId=BTC-USDT", 400, "51000"},
	} {
		r := h.get(c.path)
		if r.Status != c.status || r.Code != c.code || string(r.Data) != "[]" {
			t.Errorf("%s: HTTP %d %s", c.path, r.Status, r.raw)
		}
	}
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.DisableRateLimits = false })
	limited := 0
	for range 15 {
		r := h.get("/api/v5/public/time")
		if r.Status == 429 {
			if r.Code != "50011" {
				t.Fatalf("429 body %s", r.raw)
			}
			limited++
		}
	}
	// 10 per two seconds: at least 3 of 15 are refused even if a window boundary falls inside the loop.
	if limited < 3 {
		t.Errorf("%d of 15 limited", limited)
	}
	// Other endpoints have their own budget.
	if r := h.get("/api/v5/market/ticker?instId=BTC-USDT"); r.Status != 200 {
		t.Errorf("ticker %d", r.Status)
	}
}

func TestTickerSod(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rows := h.get("/api/v5/market/ticker?instId=BTC-USDT").objects(t)
	day := time.Date(t0.Year(), t0.Month(), t0.Day(), 0, 0, 0, 0, time.UTC)
	c := h.get(fmt.Sprintf("/api/v5/market/candles?instId=BTC-USDT&bar=1m&limit=1&after=%d", day.UnixMilli()+60_000)).rows(t)
	if rows[0]["sodUtc0"] != c[0][1] {
		t.Errorf("sodUtc0 %v, 00:00 UTC open %v", rows[0]["sodUtc0"], c[0][1])
	}
	hkDay := day.Add(-8 * time.Hour)
	c8 := h.get(fmt.Sprintf("/api/v5/market/candles?instId=BTC-USDT&bar=1m&limit=1&after=%d", hkDay.UnixMilli()+60_000)).rows(t)
	if rows[0]["sodUtc8"] != c8[0][1] {
		t.Errorf("sodUtc8 %v, 16:00 UTC open %v", rows[0]["sodUtc8"], c8[0][1])
	}
}

func TestPluginSettings(t *testing.T) {
	t.Parallel()
	got := PluginSettings("http://127.0.0.1:7002/")
	want := map[string]string{"rest_url": "http://127.0.0.1:7002", "ws_public_url": "ws://127.0.0.1:7002/ws/v5/public",
		"ws_private_url": "ws://127.0.0.1:7002/ws/v5/private", "ws_business_url": "ws://127.0.0.1:7002/ws/v5/business"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%v", got)
	}
}
