package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func TestSignatureFailures(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	path := "/api/v5/account/balance"
	send := func(mut func(*http.Request)) reply {
		req, _ := http.NewRequest("GET", h.ts.URL+path, nil)
		ts := time.UnixMilli(h.v.Now()).UTC().Format("2006-01-02T15:04:05.000Z")
		req.Header.Set("OK-ACCESS-KEY", DemoAPIKey)
		req.Header.Set("OK-ACCESS-PASSPHRASE", DemoPassphrase)
		req.Header.Set("OK-ACCESS-TIMESTAMP", ts)
		req.Header.Set("OK-ACCESS-SIGN", Sign(DemoAPISecret, ts, "GET", path, ""))
		mut(req)
		return h.do(req)
	}
	if r := send(func(*http.Request) {}); r.Status != 200 || r.Code != "0" {
		t.Fatalf("valid request: %s", r.raw)
	}
	for name, c := range map[string]struct {
		mut  func(*http.Request)
		code string
	}{
		"no key":        {func(r *http.Request) { r.Header.Del("OK-ACCESS-KEY") }, "50103"},
		"no passphrase": {func(r *http.Request) { r.Header.Del("OK-ACCESS-PASSPHRASE") }, "50104"},
		"no sign":       {func(r *http.Request) { r.Header.Del("OK-ACCESS-SIGN") }, "50106"},
		"no timestamp":  {func(r *http.Request) { r.Header.Del("OK-ACCESS-TIMESTAMP") }, "50107"},
		"bad timestamp": {func(r *http.Request) { r.Header.Set("OK-ACCESS-TIMESTAMP", "yesterday") }, "50112"},
		"expired": {func(r *http.Request) {
			ts := time.UnixMilli(h.v.Now() - 60_000).UTC().Format("2006-01-02T15:04:05.000Z")
			r.Header.Set("OK-ACCESS-TIMESTAMP", ts)
			r.Header.Set("OK-ACCESS-SIGN", Sign(DemoAPISecret, ts, "GET", path, ""))
		}, "50102"},
		"unknown key":      {func(r *http.Request) { r.Header.Set("OK-ACCESS-KEY", "other") }, "50111"},
		"wrong pass":       {func(r *http.Request) { r.Header.Set("OK-ACCESS-PASSPHRASE", "nope") }, "50105"},
		"wrong secret":     {func(r *http.Request) { r.Header.Set("OK-ACCESS-SIGN", Sign("x", "y", "GET", path, "")) }, "50113"},
		"query not signed": {func(r *http.Request) { r.URL.RawQuery = "ccy=BTC" }, "50113"},
	} {
		r := send(c.mut)
		if r.Status != 401 || r.Code != c.code {
			t.Errorf("%s: HTTP %d %s, want 401 %s", name, r.Status, r.raw, c.code)
		}
	}
	// The query string is part of the signed path.
	if r := h.signed("GET", path+"?ccy=USDT", nil); r.Code != "0" {
		t.Errorf("signed query: %s", r.raw)
	}
}

func TestSignKnownVector(t *testing.T) {
	t.Parallel()
	// Base64(HMAC-SHA256) of "2020-12-08T09:08:57.715ZGET/api/v5/account/balance?ccy=BTC" with key "secret",
	// computed independently with another HMAC implementation. The method is upper-cased before signing.
	got := Sign("secret", "2020-12-08T09:08:57.715Z", "get", "/api/v5/account/balance?ccy=BTC", "")
	if got != "wpDvCwYCprcMQsQkxWJiWy+YADoQE4ep+OEKKLimMoY=" {
		t.Fatalf("signature %s", got)
	}
}

type placeResp []struct {
	OrdID   string `json:"ordId"`
	ClOrdID string `json:"clOrdId"`
	SCode   string `json:"sCode"`
	SMsg    string `json:"sMsg"`
}

func bestPrices(t *testing.T, h *harness, inst string) (bid, ask decimal.Decimal) {
	t.Helper()
	rows := h.get("/api/v5/market/ticker?instId=" + inst).objects(t)
	return decimal.RequireFromString(rows[0]["bidPx"].(string)), decimal.RequireFromString(rows[0]["askPx"].(string))
}

func TestSwapOrderContractsAtLotEdges(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	bid, _ := bestPrices(t, h, "BTC-USDT-SWAP")
	px := bid.Mul(decimal.RequireFromString("0.97")).Round(1).String()
	order := func(sz string) reply {
		return h.signed("POST", "/api/v5/trade/order", map[string]any{"instId": "BTC-USDT-SWAP", "tdMode": "cross",
			"side": "buy", "ordType": "limit", "px": px, "sz": sz})
	}
	// 0.1 contract is the lot but below the minimum notional (100 USDT).
	if r := order("0.1"); r.Code != "1" || !json.Valid(r.Data) || string(r.Data) == "[]" {
		t.Fatalf("below min notional: %s", r.raw)
	}
	// 1.1 contracts (eleven lots) rest as 0.011 BTC in the venue.
	r := order("1.1")
	var p placeResp
	r.ok(t, &p)
	if p[0].SCode != "0" || r.InTime == "" || r.OutTime == "" {
		t.Fatalf("place: %s", r.raw)
	}
	os, _ := h.v.OpenOrders(DemoAccount, "BTC/USDT:PERP")
	if len(os) != 1 || !os[0].Qty.Equal(decimal.RequireFromString("0.011")) {
		t.Fatalf("venue orders %+v", os)
	}
	// Below the lot or off the lot grid: 51121 per item, top-level code 1.
	for _, sz := range []string{"0.05", "1.15", "2.01"} {
		r := order(sz)
		var p placeResp
		_ = json.Unmarshal(r.Data, &p)
		if r.Status != 200 || r.Code != "1" || len(p) != 1 || p[0].SCode != "51121" {
			t.Errorf("sz %s: %s", sz, r.raw)
		}
	}
	// A bigger whole number of lots converts exactly.
	order("12.3").ok(t, nil)
	pend := h.signed("GET", "/api/v5/trade/orders-pending?instType=SWAP", nil).objects(t)
	if len(pend) != 2 || pend[0]["sz"] != "12.3" || pend[1]["sz"] != "1.1" || pend[0]["posSide"] != "net" {
		t.Fatalf("pending %v", pend)
	}
	checkShape(t, "order", h.signed("GET", "/api/v5/trade/orders-pending?instType=SWAP", nil).raw)
	checkShape(t, "place", order("2").raw)
}

func TestOrderLifecycleRESTAndPrivateChannel(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.live()
	w := h.dial("/ws/v5/private")
	ts := strconv.FormatInt(h.v.Now()/1000, 10)
	w.write(map[string]any{"op": "login", "args": []map[string]string{{"apiKey": DemoAPIKey,
		"passphrase": DemoPassphrase, "timestamp": ts, "sign": WSLoginSign(DemoAPISecret, ts)}}})
	w.until(func(m map[string]any) bool { return m["event"] == "login" })
	w.write(sub(map[string]string{"channel": "orders", "instType": "SPOT"}))
	w.until(func(m map[string]any) bool { return m["event"] == "subscribe" })
	w.write(sub(map[string]string{"channel": "account", "ccy": "USDT"}))
	checkShape(t, "ws_account", w.until(isPush("account")))

	bid, _ := bestPrices(t, h, "ETH-USDT")
	px := bid.Mul(decimal.RequireFromString("0.9")).Round(2)
	r := h.signed("POST", "/api/v5/trade/order", map[string]any{"instId": "ETH-USDT", "tdMode": "cash",
		"side": "buy", "ordType": "limit", "px": px.String(), "sz": "0.05", "clOrdId": "lifecycle1"})
	var p placeResp
	r.ok(t, &p)
	ordID := p[0].OrdID
	raw := w.until(isPush("orders"))
	checkShape(t, "ws_orders", raw)
	var live struct {
		Data []map[string]any `json:"data"`
	}
	_ = json.Unmarshal(raw, &live)
	if live.Data[0]["ordId"] != ordID || live.Data[0]["state"] != "live" || live.Data[0]["clOrdId"] != "lifecycle1" {
		t.Fatalf("live push %v", live.Data[0])
	}
	// Amend the price up through the book: it trades and fills.
	_, ask := bestPrices(t, h, "ETH-USDT")
	newPx := ask.Mul(decimal.RequireFromString("1.02")).Round(2)
	h.signed("POST", "/api/v5/trade/amend-order", map[string]any{"instId": "ETH-USDT", "ordId": ordID,
		"newPx": newPx.String()}).ok(t, nil)
	var filled map[string]any
	w.until(func(m map[string]any) bool {
		if !isPush("orders")(m) {
			return false
		}
		d := m["data"].([]any)[0].(map[string]any)
		if d["state"] == "filled" {
			filled = d
			return true
		}
		return false
	})
	if filled["accFillSz"] != "0.05" || filled["fillSz"] == "0" || filled["tradeId"] == "" ||
		filled["execType"] != "T" || filled["feeCcy"] != "ETH" {
		t.Errorf("filled push %v", filled)
	}
	got := h.signed("GET", "/api/v5/trade/order?instId=ETH-USDT&clOrdId=lifecycle1", nil).objects(t)
	if got[0]["state"] != "filled" || got[0]["ordId"] != ordID {
		t.Errorf("order %v", got[0])
	}
	fee := decimal.RequireFromString(got[0]["fee"].(string))
	if !fee.IsNegative() {
		t.Errorf("fee %s should be negative (charged)", fee)
	}
	hist := h.signed("GET", "/api/v5/trade/orders-history?instType=SPOT", nil)
	checkShape(t, "order", hist.raw)
	fills := h.signed("GET", "/api/v5/trade/fills?instId=ETH-USDT&ordId="+ordID, nil)
	checkShape(t, "fills", fills.raw)
	// Cancelling a filled order fails per item.
	c := h.signed("POST", "/api/v5/trade/cancel-order", map[string]any{"instId": "ETH-USDT", "ordId": ordID})
	var cr placeResp
	_ = json.Unmarshal(c.Data, &cr)
	if c.Code != "1" || cr[0].SCode != "51400" {
		t.Errorf("cancel filled: %s", c.raw)
	}
	// A resting order cancelled over REST shows as canceled on the channel.
	r = h.signed("POST", "/api/v5/trade/order", map[string]any{"instId": "ETH-USDT", "tdMode": "cash",
		"side": "buy", "ordType": "post_only", "px": px.String(), "sz": "0.01"})
	r.ok(t, &p)
	h.signed("POST", "/api/v5/trade/cancel-order", map[string]any{"instId": "ETH-USDT", "ordId": p[0].OrdID}).ok(t, nil)
	w.until(func(m map[string]any) bool {
		if !isPush("orders")(m) {
			return false
		}
		d := m["data"].([]any)[0].(map[string]any)
		return d["ordId"] == p[0].OrdID && d["state"] == "canceled" && d["ordType"] == "post_only"
	})
}

func TestBatchOrdersPartial(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	bid, _ := bestPrices(t, h, "BTC-USDT")
	px := bid.Mul(decimal.RequireFromString("0.95")).Round(1).String()
	r := h.signed("POST", "/api/v5/trade/batch-orders", []map[string]any{
		{"instId": "BTC-USDT", "tdMode": "cash", "side": "buy", "ordType": "limit", "px": px, "sz": "0.001"},
		{"instId": "NOPE-USDT", "tdMode": "cash", "side": "buy", "ordType": "limit", "px": px, "sz": "0.001"},
		{"instId": "BTC-USDT", "tdMode": "cash", "side": "buy", "ordType": "limit", "px": px, "sz": "1000"},
	})
	var p placeResp
	_ = json.Unmarshal(r.Data, &p)
	if r.Code != "2" || len(p) != 3 || p[0].SCode != "0" || p[1].SCode != "51001" || p[2].SCode != "51008" {
		t.Fatalf("batch: %s", r.raw)
	}
	checkShape(t, "place", r.raw)
	c := h.signed("POST", "/api/v5/trade/cancel-batch-orders", []map[string]any{
		{"instId": "BTC-USDT", "ordId": p[0].OrdID}, {"instId": "BTC-USDT", "ordId": "42"}})
	var cr placeResp
	_ = json.Unmarshal(c.Data, &cr)
	if c.Code != "2" || cr[0].SCode != "0" || cr[1].SCode != "51400" {
		t.Fatalf("cancel batch: %s", c.raw)
	}
}

func TestPositionsLeverageModeAndOCO(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.signed("POST", "/api/v5/account/set-leverage", map[string]any{"instId": "BTC-USDT-SWAP", "lever": "10",
		"mgnMode": "isolated"}).ok(t, nil)
	li := h.signed("GET", "/api/v5/account/leverage-info?instId=BTC-USDT-SWAP&mgnMode=isolated", nil).objects(t)
	if li[0]["lever"] != "10" {
		t.Fatalf("leverage info %v", li)
	}
	h.signed("POST", "/api/v5/account/set-position-mode", map[string]any{"posMode": "long_short_mode"}).ok(t, nil)
	cfg := h.signed("GET", "/api/v5/account/config", nil).objects(t)
	if cfg[0]["posMode"] != "long_short_mode" {
		t.Fatalf("config %v", cfg)
	}
	// Hedge mode needs a position side.
	r := h.signed("POST", "/api/v5/trade/order", map[string]any{"instId": "BTC-USDT-SWAP", "tdMode": "isolated",
		"side": "buy", "ordType": "market", "sz": "5"})
	var p placeResp
	_ = json.Unmarshal(r.Data, &p)
	if r.Code != "1" || p[0].SCode != "51000" {
		t.Fatalf("no posSide in hedge mode: %s", r.raw)
	}
	h.signed("POST", "/api/v5/trade/order", map[string]any{"instId": "BTC-USDT-SWAP", "tdMode": "isolated",
		"side": "buy", "posSide": "long", "ordType": "market", "sz": "5"}).ok(t, &p)
	if p[0].SCode != "0" {
		t.Fatal(p)
	}
	pos := h.signed("GET", "/api/v5/account/positions?instId=BTC-USDT-SWAP", nil)
	checkShape(t, "positions", pos.raw)
	ps := pos.objects(t)
	if len(ps) != 1 || ps[0]["pos"] != "5" || ps[0]["posSide"] != "long" || ps[0]["mgnMode"] != "isolated" ||
		ps[0]["lever"] != "10" {
		t.Fatalf("positions %v", ps)
	}
	// Changing the position mode with a position open is refused.
	if r := h.signed("POST", "/api/v5/account/set-position-mode", map[string]any{"posMode": "net_mode"}); r.Code != "59000" {
		t.Errorf("mode change with position: %s", r.raw)
	}
	// OCO on the long: take profit on mark 5% up, stop on index 5% down.
	m, _ := h.v.Mark("BTC/USDT:PERP")
	tp := m.Mark.Mul(decimal.RequireFromString("1.05")).Round(1)
	sl := m.Mark.Mul(decimal.RequireFromString("0.95")).Round(1)
	a := h.signed("POST", "/api/v5/trade/order-algo", map[string]any{"instId": "BTC-USDT-SWAP", "tdMode": "isolated",
		"side": "sell", "posSide": "long", "ordType": "oco", "sz": "5", "tpTriggerPx": tp.String(), "tpOrdPx": "-1",
		"tpTriggerPxType": "mark", "slTriggerPx": sl.String(), "slOrdPx": "-1", "slTriggerPxType": "index"})
	var ar []map[string]any
	a.ok(t, &ar)
	algoID := ar[0]["algoId"].(string)
	pend := h.signed("GET", "/api/v5/trade/orders-algo-pending?ordType=oco", nil)
	checkShape(t, "algo", pend.raw)
	pl := pend.objects(t)
	if len(pl) != 1 || pl[0]["algoId"] != algoID || pl[0]["state"] != "live" || pl[0]["slTriggerPxType"] != "index" {
		t.Fatalf("algo pending %v", pl)
	}
	// Regular pending orders do not list the untriggered legs.
	if op := h.signed("GET", "/api/v5/trade/orders-pending", nil).objects(t); len(op) != 0 {
		t.Fatalf("orders-pending lists %v", op)
	}
	// Mark falls through the stop: the stop leg fires, the take-profit leg is cancelled, the position closes.
	if err := h.v.SetMarkPrice("BTC/USDT:PERP", sl.Sub(decimal.NewFromInt(50))); err != nil {
		t.Fatal(err)
	}
	h.step(time.Second)
	deadline := time.Now().Add(30 * time.Second) // generous: the watcher runs on its own goroutine
	for {
		hist := h.signed("GET", "/api/v5/trade/orders-algo-history?ordType=oco&state=effective", nil).objects(t)
		if len(hist) == 1 && hist[0]["ordId"] != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("algo not effective: %v", hist)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for time.Now().Before(deadline) {
		os, _ := h.v.OpenOrders(DemoAccount, "")
		if len(os) == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if os, _ := h.v.OpenOrders(DemoAccount, ""); len(os) != 0 {
		t.Errorf("sibling leg still open: %+v", os)
	}
	if ps := h.signed("GET", "/api/v5/account/positions", nil).objects(t); len(ps) != 0 {
		t.Errorf("position still open: %v", ps)
	}
}

func TestWalletTransferWithdrawConvert(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	bal := h.signed("GET", "/api/v5/account/balance", nil)
	checkShape(t, "balance", bal.raw)
	fund := h.signed("GET", "/api/v5/asset/balances?ccy=USDT", nil)
	checkShape(t, "asset_balances", fund.raw)
	before := decimal.RequireFromString(fund.objects(t)[0]["availBal"].(string))
	tr := h.signed("POST", "/api/v5/asset/transfer", map[string]any{"ccy": "USDT", "amt": "100", "from": "6", "to": "18"})
	checkShape(t, "transfer", tr.raw)
	after := decimal.RequireFromString(h.signed("GET", "/api/v5/asset/balances?ccy=USDT", nil).objects(t)[0]["availBal"].(string))
	if !before.Sub(after).Equal(decimal.NewFromInt(100)) {
		t.Errorf("funding %s -> %s", before, after)
	}
	if r := h.signed("POST", "/api/v5/asset/transfer", map[string]any{"ccy": "USDT", "amt": "99999999", "from": "6", "to": "18"}); r.Code != "51008" {
		t.Errorf("overdraw transfer: %s", r.raw)
	}
	addr := h.signed("GET", "/api/v5/asset/deposit-address?ccy=USDT", nil).objects(t)
	wd := h.signed("POST", "/api/v5/asset/withdrawal", map[string]any{"ccy": "USDT", "amt": "20", "dest": "4",
		"toAddr": addr[0]["addr"], "chain": "USDT-SIM"})
	wd.ok(t, nil)
	if r := h.signed("GET", "/api/v5/asset/withdrawal-history", nil).objects(t); len(r) != 1 || r[0]["amt"] != "20" {
		t.Errorf("withdrawals %v", r)
	}
	if r := h.signed("GET", "/api/v5/asset/deposit-history?ccy=USDT", nil).objects(t); len(r) != 2 {
		t.Errorf("deposits %v", r)
	}
	q := h.signed("POST", "/api/v5/asset/convert/estimate-quote", map[string]any{"baseCcy": "BTC", "quoteCcy": "USDT",
		"side": "buy", "rfqSz": "100", "rfqSzCcy": "USDT"})
	checkShape(t, "convert_quote", q.raw)
	qr := q.objects(t)
	ct := h.signed("POST", "/api/v5/asset/convert/trade", map[string]any{"quoteId": qr[0]["quoteId"], "baseCcy": "BTC",
		"quoteCcy": "USDT", "side": "buy", "sz": "100", "szCcy": "USDT"})
	row := ct.objects(t)[0]
	if row["state"] != "fullyFilled" || row["fillBaseSz"] != qr[0]["baseSz"] || row["fillQuoteSz"] != "100" {
		t.Errorf("convert trade %v vs quote %v", row, qr[0])
	}
	if again := h.signed("POST", "/api/v5/asset/convert/trade", map[string]any{"quoteId": qr[0]["quoteId"],
		"baseCcy": "BTC", "quoteCcy": "USDT", "side": "buy", "sz": "100", "szCcy": "USDT"}); again.Code == "0" {
		t.Errorf("quote executed twice")
	}
	if hs := h.signed("GET", "/api/v5/asset/convert/history", nil).objects(t); len(hs) != 1 {
		t.Errorf("convert history %v", hs)
	}
}

// TestBillsAndAlgoPaging: transfers are funding bills (130 in, 131 out, signed balChg), newest first, paged with
// after/before in ms and filtered by type; algo lists page by algoId.
func TestBillsAndAlgoPaging(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for k, dir := range [][2]string{{"6", "18"}, {"18", "6"}, {"6", "18"}} {
		h.signed("POST", "/api/v5/asset/transfer", map[string]any{"ccy": "USDT", "amt": "10", "from": dir[0], "to": dir[1],
			"clientId": fmt.Sprintf("b%d", k)}).ok(t, nil)
	}
	bills := h.signed("GET", "/api/v5/asset/bills?ccy=USDT", nil)
	checkShape(t, "bills", bills.raw)
	all := bills.objects(t)
	if len(all) != 3 || all[0]["clientId"] != "b2" || all[0]["type"] != "131" || all[0]["balChg"] != "-10" ||
		all[1]["type"] != "130" || all[1]["balChg"] != "10" || all[2]["clientId"] != "b0" {
		t.Fatalf("bills %v", all)
	}
	if in := h.signed("GET", "/api/v5/asset/bills?type=130", nil).objects(t); len(in) != 1 || in[0]["clientId"] != "b1" {
		t.Fatalf("type 130: %v", in)
	}
	// after: strictly older than a time; before: strictly newer.
	msOf := func(b map[string]any) int64 {
		n, err := strconv.ParseInt(b["ts"].(string), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	ts := all[1]["ts"].(string)
	for _, b := range h.signed("GET", "/api/v5/asset/bills?after="+ts, nil).objects(t) {
		if msOf(b) >= msOf(all[1]) {
			t.Fatalf("after=%s gave %v", ts, b)
		}
	}
	for _, b := range h.signed("GET", "/api/v5/asset/bills?before="+ts, nil).objects(t) {
		if msOf(b) <= msOf(all[1]) {
			t.Fatalf("before=%s gave %v", ts, b)
		}
	}
	if one := h.signed("GET", "/api/v5/asset/bills?limit=1", nil).objects(t); len(one) != 1 || one[0]["billId"] != all[0]["billId"] {
		t.Fatalf("limit 1: %v", one)
	}

	m, _ := h.v.Mark("BTC/USDT:PERP")
	trig := m.Mark.Mul(decimal.RequireFromString("0.5")).Round(1).String()
	var ids []string
	for range 3 {
		a := h.signed("POST", "/api/v5/trade/order-algo", map[string]any{"instId": "BTC-USDT", "tdMode": "cash", "side": "sell",
			"ordType": "conditional", "sz": "0.001", "slTriggerPx": trig, "slOrdPx": "-1"})
		var ar []map[string]any
		a.ok(t, &ar)
		ids = append(ids, ar[0]["algoId"].(string))
	}
	var got []string
	after := ""
	for range 5 {
		q := "/api/v5/trade/orders-algo-pending?ordType=conditional&limit=1"
		if after != "" {
			q += "&after=" + after
		}
		page := h.signed("GET", q, nil).objects(t)
		if len(page) == 0 {
			break
		}
		after = page[0]["algoId"].(string)
		got = append(got, after)
	}
	if !slices.Equal(got, []string{ids[2], ids[1], ids[0]}) {
		t.Fatalf("algo pages %v, want %v newest first", got, ids)
	}
	if r := h.signed("GET", "/api/v5/trade/orders-algo-pending?ordType=conditional&before="+ids[0], nil).objects(t); len(r) != 2 {
		t.Fatalf("before=%s: %v", ids[0], r)
	}
}
