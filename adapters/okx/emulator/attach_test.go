package emulator

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// waitAlgos waits (generous bound: the watcher runs on its own goroutine) until the pending algo orders of a type
// satisfy ok, and returns them.
func waitAlgos(t *testing.T, h *harness, path string, ok func([]map[string]any) bool) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := h.signed("GET", path, nil).objects(t)
		if ok(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", path, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAttachedTpSlOnSwapEntry: an entry with attachAlgoOrds arms nothing while it rests; once it fills, its
// take-profit (mark price) and stop-loss (last price) become one reduce-only oco algo order on the opposite side for
// the filled size; the mark driven across the take-profit trigger fires it, cancels the stop-loss leg and closes the
// position.
func TestAttachedTpSlOnSwapEntry(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	m, err := h.v.Mark("BTC/USDT:PERP")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.v.SetMarkPrice("BTC/USDT:PERP", m.Mark); err != nil {
		t.Fatal(err)
	}
	bid, _ := bestPrices(t, h, "BTC-USDT-SWAP")
	tp := m.Mark.Mul(decimal.RequireFromString("1.05")).Round(1)
	sl := m.Mark.Mul(decimal.RequireFromString("0.95")).Round(1)
	attach := []map[string]any{{"attachAlgoClOrdId": "entrytp1", "tpTriggerPx": tp.String(), "tpOrdPx": "-1",
		"tpTriggerPxType": "mark", "slTriggerPx": sl.String(), "slOrdPx": "-1", "slTriggerPxType": "last"}}

	// A resting entry: no algo order until it fills; cancelled unfilled, none ever.
	var p placeResp
	h.signed("POST", "/api/v5/trade/order", map[string]any{"instId": "BTC-USDT-SWAP", "tdMode": "cross", "side": "buy",
		"ordType": "limit", "px": bid.Mul(decimal.RequireFromString("0.9")).Round(1).String(), "sz": "3",
		"clOrdId": "rest1", "attachAlgoOrds": attach}).ok(t, &p)
	if p[0].SCode != "0" {
		t.Fatal(p)
	}
	if got := h.signed("GET", "/api/v5/trade/orders-algo-pending?ordType=oco", nil).objects(t); len(got) != 0 {
		t.Fatalf("TP/SL armed before the entry filled: %v", got)
	}
	h.signed("POST", "/api/v5/trade/cancel-order", map[string]any{"instId": "BTC-USDT-SWAP", "clOrdId": "rest1"}).ok(t, nil)

	// A market entry fills at once: the TP/SL become one oco on the sell side for its 5 contracts.
	h.signed("POST", "/api/v5/trade/order", map[string]any{"instId": "BTC-USDT-SWAP", "tdMode": "cross", "side": "buy",
		"ordType": "market", "sz": "5", "clOrdId": "entry1", "attachAlgoOrds": attach}).ok(t, &p)
	if p[0].SCode != "0" {
		t.Fatal(p)
	}

	algos := waitAlgos(t, h, "/api/v5/trade/orders-algo-pending?ordType=oco", func(a []map[string]any) bool { return len(a) == 1 })
	a := algos[0]
	if a["side"] != "sell" || a["sz"] != "5" || a["algoClOrdId"] != "entrytp1" || a["tpTriggerPxType"] != "mark" ||
		a["slTriggerPxType"] != "last" || a["reduceOnly"] != "true" || a["state"] != "live" {
		t.Fatalf("attached algo %v", a)
	}
	if ps := h.signed("GET", "/api/v5/account/positions?instId=BTC-USDT-SWAP", nil).objects(t); len(ps) != 1 || ps[0]["pos"] != "5" {
		t.Fatalf("position after the entry: %v", ps)
	}

	// The mark crosses the take-profit: it fires, the stop-loss leg goes, the position is closed.
	if err := h.v.SetMarkPrice("BTC/USDT:PERP", tp.Add(decimal.NewFromInt(50))); err != nil {
		t.Fatal(err)
	}
	h.step(time.Second)
	waitAlgos(t, h, "/api/v5/trade/orders-algo-history?ordType=oco&state=effective", func(a []map[string]any) bool {
		return len(a) == 1 && a[0]["ordId"] != ""
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		ps := h.signed("GET", "/api/v5/account/positions?instId=BTC-USDT-SWAP", nil).objects(t)
		os, _ := h.v.OpenOrders(DemoAccount, "")
		if len(ps) == 0 && len(os) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the take-profit: positions %v, open orders %+v", ps, os)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAttachedTpSlRefused: a bad attached TP/SL refuses the order itself, and a spot entry takes last-price
// triggers only.
func TestAttachedTpSlRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for name, body := range map[string]map[string]any{
		"no trigger": {"instId": "BTC-USDT-SWAP", "tdMode": "cross", "side": "buy", "ordType": "market", "sz": "1",
			"attachAlgoOrds": []map[string]any{{"tpOrdPx": "-1"}}},
		"bad trigger type": {"instId": "BTC-USDT-SWAP", "tdMode": "cross", "side": "buy", "ordType": "market", "sz": "1",
			"attachAlgoOrds": []map[string]any{{"tpTriggerPx": "1000000", "tpTriggerPxType": "moon"}}},
		"spot on mark": {"instId": "BTC-USDT", "tdMode": "cash", "side": "buy", "ordType": "market", "sz": "10",
			"attachAlgoOrds": []map[string]any{{"tpTriggerPx": "1000000", "tpTriggerPxType": "mark"}}},
	} {
		var p placeResp
		r := h.signed("POST", "/api/v5/trade/order", body)
		_ = json.Unmarshal(r.Data, &p)
		if r.Code != "1" || len(p) != 1 || p[0].SCode != "51000" {
			t.Fatalf("%s: %s", name, r.raw)
		}
	}
	if os, _ := h.v.OpenOrders(DemoAccount, ""); len(os) != 0 {
		t.Fatalf("refused orders left orders: %+v", os)
	}
}

// TestAttachedTpSlHedgeShort: in hedge mode a short entry's stop-loss (mark price) becomes a buy on the short side
// (reduce-only by its position side), and the mark rising through it closes the short.
func TestAttachedTpSlHedgeShort(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.signed("POST", "/api/v5/account/set-position-mode", map[string]any{"posMode": "long_short_mode"}).ok(t, nil)
	m, err := h.v.Mark("BTC/USDT:PERP")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.v.SetMarkPrice("BTC/USDT:PERP", m.Mark); err != nil {
		t.Fatal(err)
	}
	sl := m.Mark.Mul(decimal.RequireFromString("1.05")).Round(1)
	var p placeResp
	h.signed("POST", "/api/v5/trade/order", map[string]any{"instId": "BTC-USDT-SWAP", "tdMode": "cross", "side": "sell",
		"posSide": "short", "ordType": "market", "sz": "4", "clOrdId": "short1",
		"attachAlgoOrds": []map[string]any{{"slTriggerPx": sl.String(), "slOrdPx": "-1", "slTriggerPxType": "mark"}}}).ok(t, &p)
	if p[0].SCode != "0" {
		t.Fatal(p)
	}
	algos := waitAlgos(t, h, "/api/v5/trade/orders-algo-pending?ordType=conditional", func(a []map[string]any) bool { return len(a) == 1 })
	if a := algos[0]; a["side"] != "buy" || a["posSide"] != "short" || a["sz"] != "4" || a["slTriggerPxType"] != "mark" || a["tpTriggerPx"] != "" {
		t.Fatalf("attached algo %v", a)
	}
	if err := h.v.SetMarkPrice("BTC/USDT:PERP", sl.Add(decimal.NewFromInt(50))); err != nil {
		t.Fatal(err)
	}
	h.step(time.Second)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ps := h.signed("GET", "/api/v5/account/positions?instId=BTC-USDT-SWAP", nil).objects(t)
		if len(ps) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stop-loss did not close the short: %v", ps)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
