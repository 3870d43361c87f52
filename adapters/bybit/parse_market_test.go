package bybit

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// result reads a fixture's envelope and returns its result.
func result(t testing.TB, name string) Response {
	t.Helper()
	r, err := ParseEnvelope(fixture(t, name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

func detail(t *testing.T, err error) *exchangev1.ErrorDetail {
	t.Helper()
	var se *sdk.Error
	if !errors.As(err, &se) {
		t.Fatalf("want a typed error, got %v", err)
	}
	return se.Detail
}

func TestParseEnvelopeErrors(t *testing.T) {
	for _, c := range []struct {
		file   string
		reason exchangev1.ErrorReason
		code   string
	}{
		{"error_params.json", exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND, "10001"},
		{"error_rate_limit.json", exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED, "10006"},
		{"error_timeout.json", exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME, "10000"},
		{"error_reasons.json", exchangev1.ErrorReason_ERROR_REASON_ACCOUNT_MODE_MISMATCH, "3400045"},
	} {
		_, err := ParseEnvelope(fixture(t, c.file))
		d := detail(t, err)
		if d.GetReason() != c.reason || d.GetExchangeCode() != c.code || d.GetExchangeMessage() == "" {
			t.Errorf("%s: got %v %q %q", c.file, d.GetReason(), d.GetExchangeCode(), d.GetExchangeMessage())
		}
	}
	for _, bad := range []string{``, `{`, `[]`, `{"retMsg":"OK","result":{}}`, `{"retCode":0,"retMsg":"OK","result":[]}`,
		`{"retCode":0,"retMsg":"OK"}`, `{"retCode":"0","result":{}}`, `<html>403</html>`} {
		_, err := ParseEnvelope([]byte(bad))
		if err == nil || !errors.Is(err, errMalformed) {
			t.Errorf("%q: want malformed, got %v", bad, err)
		}
	}
	r := result(t, "time.json")
	if r.Time != 1732001234567 {
		t.Errorf("time %d", r.Time)
	}
}

func TestReasonFamilies(t *testing.T) {
	for code, want := range map[int64]exchangev1.ErrorReason{
		10002: exchangev1.ErrorReason_ERROR_REASON_CLOCK_SKEW, 10003: exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED,
		10004: exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED, 10005: exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED,
		10016: exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME, 110001: exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND,
		110007: exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS, 170131: exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS,
		170999: exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED, 110099: exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED,
		10099: exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, 999999: exchangev1.ErrorReason_ERROR_REASON_INTERNAL,
	} {
		if got := reasonFor(code); got != want {
			t.Errorf("%d: %v, want %v", code, got, want)
		}
	}
	if d := sdk.DetailOf(apiError(10001, "params error: interval invalid")); d.GetReason() != exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT {
		t.Errorf("a plain params error is %v", d.GetReason())
	}
}

func TestParseInstruments(t *testing.T) {
	spot, next, err := ParseInstruments(result(t, "instruments_spot.json").Result, catSpot)
	if err != nil || next != "" {
		t.Fatal(err, next)
	}
	if len(spot) != 2 { // the Closed one is left out
		t.Fatalf("%d spot instruments", len(spot))
	}
	p := spot[0].Proto()
	if p.Symbol != "SOLUSDT" || p.MarketType != exchangev1.MarketType_MARKET_TYPE_SPOT || p.TickSize != "0.01" ||
		p.StepSize != "0.001" || p.MinQty != "0.011" || p.MaxQty != "12000.5" || p.MinNotional != "5" || p.ContractValue != "" {
		t.Errorf("spot %v", p)
	}
	linear, next, err := ParseInstruments(result(t, "instruments_linear.json").Result, catLinear)
	if err != nil {
		t.Fatal(err)
	}
	if next != "first%3DETHUSDT%26last%3DDOGEUSDT" {
		t.Errorf("cursor %q", next)
	}
	// USDC perpetual, dated future and pre-launch are left out.
	if len(linear) != 1 {
		t.Fatalf("%d linear instruments", len(linear))
	}
	p = linear[0].Proto()
	if p.Symbol != "ETHUSDT" || p.MarketType != exchangev1.MarketType_MARKET_TYPE_SWAP || p.Settle != "USDT" || p.TickSize != "0.05" ||
		p.StepSize != "0.01" || p.MinQty != "0.01" || p.MaxQty != "7240" || p.MarketMaxQty != "1500" || p.MinNotional != "20" ||
		p.MinPrice != "0.05" || p.MaxPrice != "49999.9" || p.MaxLeverage != "75" || p.ContractValue != "1" ||
		p.ListedTime != 1615766400000 || linear[0].FundingHours != 8 {
		t.Errorf("linear %v", p)
	}
	for _, bad := range []string{
		`{"list":[{"symbol":"X","status":"Trading","baseCoin":"X","quoteCoin":"USDT","lotSizeFilter":{"basePrecision":"x","minOrderQty":"1"},"priceFilter":{"tickSize":"0.1"}}]}`,
		`{"list":[{"symbol":"X","status":"Trading","baseCoin":"X","quoteCoin":"USDT","lotSizeFilter":{"basePrecision":"1","minOrderQty":"1"},"priceFilter":{"tickSize":""}}]}`,
		`{"list":[{"symbol":"","status":"Trading"}]}`,
		`{"list":[{"symbol":"X","status":"Trading","baseCoin":"X","quoteCoin":"USDT","lotSizeFilter":{"basePrecision":"0","minOrderQty":"1"},"priceFilter":{"tickSize":"1"}}]}`,
		`{"category":"spot"}`, `{"list":{}}`, `[]`,
	} {
		if _, _, err := ParseInstruments([]byte(bad), catSpot); err == nil {
			t.Errorf("%s: want an error", bad)
		}
	}
	if list, _, err := ParseInstruments([]byte(`{"category":"spot","list":[]}`), catSpot); err != nil || len(list) != 0 {
		t.Errorf("empty list: %v %v", list, err)
	}
}

func TestParseTickers(t *testing.T) {
	in := &Instrument{Symbol: "ETHUSDT", MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP}
	r := result(t, "tickers_linear.json")
	rows, err := ParseTickers(r.Result)
	if err != nil || len(rows) != 1 {
		t.Fatal(err, rows)
	}
	tk, err := tickerProto(rows[0], in, r.Time)
	if err != nil {
		t.Fatal(err)
	}
	if tk.Last != "3120.45" || tk.Open_24H != "3000" || tk.ChangePct_24H != "4.02" || tk.High_24H != "3188.1" || tk.Volume_24H != "1650000.12" ||
		tk.QuoteVolume_24H != "5123456789.1234" || tk.Bid != "3120.4" || tk.AskQty != "12.5" || tk.MarkPrice != "3120.6" ||
		tk.IndexPrice != "3121.02" || tk.FundingRate != "0.000085" || tk.NextFundingTime != 1732003200000 ||
		tk.OpenInterest != "412345.67" || tk.Time != 1732001000000 {
		t.Errorf("linear ticker %v", tk)
	}
	r = result(t, "tickers_spot.json")
	rows, err = ParseTickers(r.Result)
	if err != nil || len(rows) != 2 {
		t.Fatal(err)
	}
	tk, err = tickerProto(rows[0], &Instrument{Symbol: "SOLUSDT", MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT}, r.Time)
	if err != nil || tk.ChangePct_24H != "-3.15" || tk.MarkPrice != "" || tk.FundingRate != "" || tk.Bid != "242.11" {
		t.Errorf("spot ticker %v %v", tk, err)
	}
	tk, err = tickerProto(rows[1], &Instrument{Symbol: "NEWUSDT"}, r.Time)
	if err != nil || tk.Bid != "" || tk.BidQty != "" || tk.Ask != "0.51" {
		t.Errorf("empty bid side: %v %v", tk, err)
	}
	for _, bad := range []rawTicker{{Symbol: "X"}, {Symbol: "X", LastPrice: "1", Bid1Price: "x"}, {Symbol: "X", LastPrice: "1", NextFundingTime: "soon"}} {
		if _, err := tickerProto(bad, in, 1); err == nil {
			t.Errorf("%+v: want an error", bad)
		}
	}
}

func TestMergeTicker(t *testing.T) {
	var snap, delta struct {
		Data rawTicker `json:"data"`
	}
	if err := json.Unmarshal(fixture(t, "ws_tickers_snapshot.json"), &snap); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(fixture(t, "ws_tickers_delta.json"), &delta); err != nil {
		t.Fatal(err)
	}
	m := mergeTicker(snap.Data, delta.Data)
	if m.LastPrice != "3121.00" || m.MarkPrice != "3120.95" || m.Bid1Size != "1.5" || // changed
		m.IndexPrice != "3121.02" || m.Ask1Price != "3120.45" || m.FundingRate != "0.000085" || m.Volume24h != "1650000.12" { // kept
		t.Errorf("merged %+v", m)
	}
}

func TestParseBook(t *testing.T) {
	raw, err := ParseBook(result(t, "orderbook.json").Result)
	if err != nil {
		t.Fatal(err)
	}
	var b Book
	b.Reset(raw)
	bids, asks := b.Levels(2)
	if len(bids) != 2 || bids[0].Price != "3120.4" || bids[1].Qty != "0.4" || len(asks) != 2 || asks[0].Price != "3120.45" ||
		raw.U != 884201 || raw.Seq != 91234567890 || raw.Ts != 1732001000100 {
		t.Errorf("book %v %v %+v", bids, asks, raw)
	}
	for _, bad := range []string{`{"s":"X","b":[["1"]],"a":[]}`, `{"s":"X","b":[["x","1"]],"a":[]}`, `{"s":"X","b":[],"a":[["1","-2"]]}`,
		`{"b":[],"a":[]}`, `{"s":"X"}`, `[]`, `{"s":"X","b":[["1","1"]],"a":[],"u":"7"}`} {
		if _, err := ParseBook([]byte(bad)); err == nil {
			t.Errorf("%s: want an error", bad)
		}
	}
}

func TestParseKlines(t *testing.T) {
	r := result(t, "kline.json")
	cs, err := ParseKlines(r.Result, "1m", r.Time)
	if err != nil || len(cs) != 3 {
		t.Fatal(err, cs)
	}
	if cs[0].OpenTime != 1732000680000 || cs[2].OpenTime != 1732000800000 || cs[2].Close != "3120.45" || cs[2].Volume != "310.22" ||
		cs[2].QuoteVolume != "967890.123" || !cs[0].Closed || !cs[1].Closed || cs[2].Closed {
		t.Errorf("klines %v", cs)
	}
	for _, bad := range []string{`{"list":[["1","1","1","1","1","1"]]}`, `{"list":[["x","1","1","1","1","1","1"]]}`,
		`{"list":[["1","0","1","1","1","1","1"]]}`, `{"list":[["1","1","1","1","1","-1","1"]]}`,
		`{"list":[["1","1","1","1","1","1","1"],["1","1","1","1","1","1","1"]]}`, `{"symbol":"X"}`} {
		if _, err := ParseKlines([]byte(bad), "1m", 0); err == nil {
			t.Errorf("%s: want an error", bad)
		}
	}
	if cs, err := ParseKlines([]byte(`{"list":[]}`), "1m", 0); err != nil || len(cs) != 0 {
		t.Errorf("empty: %v %v", cs, err)
	}
	// A month closes at the next calendar month.
	if intervalEnd("1M", 1706745600000) != 1709251200000 { // 2024-02-01 -> 2024-03-01
		t.Error("month end")
	}
}

func TestParseTrades(t *testing.T) {
	ts, err := ParseTrades(result(t, "recent_trade.json").Result)
	if err != nil || len(ts) != 2 {
		t.Fatal(err)
	}
	if ts[0].Time != 1732000999990 || ts[0].Side != exchangev1.Side_SIDE_SELL || ts[1].Id != "a7c1e2f0-5b33-5d8e-9f41-3c2b1a0e9d88" ||
		ts[1].Qty != "0.52" || ts[1].QuoteQty != "1622.634" {
		t.Errorf("trades %v", ts)
	}
	for _, bad := range []string{`{"list":[{"execId":"1","price":"1","size":"1","side":"Up","time":"1"}]}`,
		`{"list":[{"execId":"","price":"1","size":"1","side":"Buy","time":"1"}]}`,
		`{"list":[{"execId":"1","price":"1","size":"0","side":"Buy","time":"1"}]}`,
		`{"list":[{"execId":"1","price":"1","size":"1","side":"Buy","time":"x"}]}`, `{}`} {
		if _, err := ParseTrades([]byte(bad)); err == nil {
			t.Errorf("%s: want an error", bad)
		}
	}
	wt, err := ParseWSTrades(mustData(t, "ws_public_trade.json"))
	if err != nil || len(wt) != 2 || wt[0].Time != 1732001000198 || wt[0].Side != exchangev1.Side_SIDE_BUY || wt[1].Price != "3120.4" {
		t.Errorf("ws trades %v %v", wt, err)
	}
	if _, err := ParseWSTrades([]byte(`[{"T":1,"S":"Buy","v":"1","p":"1"}]`)); err == nil {
		t.Error("a ws trade without id must fail")
	}
}

func mustData(t testing.TB, name string) json.RawMessage {
	t.Helper()
	var m wsMsg
	if err := json.Unmarshal(fixture(t, name), &m); err != nil {
		t.Fatal(err)
	}
	return m.Data
}

func TestParseTimeFundingSeries(t *testing.T) {
	ts, err := ParseTime(result(t, "time.json").Result)
	if err != nil || ts != 1732001234567 {
		t.Errorf("time %d %v", ts, err)
	}
	if ts, err := ParseTime([]byte(`{"timeSecond":"1732001234","timeNano":""}`)); err != nil || ts != 1732001234000 {
		t.Errorf("seconds only: %d %v", ts, err)
	}
	if _, err := ParseTime([]byte(`{}`)); err == nil {
		t.Error("empty time must fail")
	}
	fs, err := ParseFundingHistory(result(t, "funding_history.json").Result)
	if err != nil || len(fs) != 2 || fs[0].FundingTime != 1731945600000 || fs[0].Rate != "-0.000021" || fs[1].Rate != "0.0001" {
		t.Errorf("funding %v %v", fs, err)
	}
	if _, err := ParseFundingHistory([]byte(`{"list":[{"symbol":"X","fundingRate":"","fundingRateTimestamp":"1"}]}`)); err == nil {
		t.Error("funding without a rate must fail")
	}
	oi, next, err := ParseOpenInterest(result(t, "open_interest.json").Result)
	if err != nil || len(oi) != 2 || oi[0].Time != 1732000500000 || canon(oi[0].Values[0]) != "412345.67" || next != "lastid%3D5501%26lasttime%3D1732000200" {
		t.Errorf("open interest %v %q %v", oi, next, err)
	}
	ar, next, err := ParseAccountRatio(result(t, "account_ratio.json").Result)
	if err != nil || len(ar) != 2 || canon(ar[1].Values[0]) != "0.5794" || canon(ar[1].Values[1]) != "0.4206" || next != "" {
		t.Errorf("account ratio %v %v", ar, err)
	}
	for _, bad := range []string{`{"list":[{"openInterest":"x","timestamp":"1"}]}`, `{"list":[{"openInterest":"1","timestamp":""}]}`, `{}`} {
		if _, _, err := ParseOpenInterest([]byte(bad)); err == nil {
			t.Errorf("%s: want an error", bad)
		}
	}
	if _, _, err := ParseAccountRatio([]byte(`{"list":[{"buyRatio":"0.5","timestamp":"1"}]}`)); err == nil {
		t.Error("a ratio without sellRatio must fail")
	}
}

func TestParseWSKlines(t *testing.T) {
	cs, err := ParseWSKlines(mustData(t, "ws_kline.json"))
	if err != nil || len(cs) != 1 || cs[0].OpenTime != 1732000980000 || cs[0].Closed || cs[0].High != "3121" || cs[0].QuoteVolume != "137600.25" {
		t.Errorf("ws kline %v %v", cs, err)
	}
	if _, err := ParseWSKlines([]byte(`[{"start":1,"open":"","close":"1","high":"1","low":"1","volume":"1","turnover":"1"}]`)); err == nil {
		t.Error("a kline without open must fail")
	}
}

// Fuzz targets: no parser panics, and whatever parses keeps the contract's invariants.

func FuzzParseEnvelope(f *testing.F) {
	for _, n := range []string{"time.json", "error_params.json", "error_reasons.json", "kline.json"} {
		f.Add(fixture(f, n))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if r, err := ParseEnvelope(b); err == nil && (len(r.Result) == 0 || r.Result[0] != '{') {
			t.Fatal("success without a result object")
		}
	})
}

func FuzzParseInstruments(f *testing.F) {
	f.Add([]byte(result(f, "instruments_spot.json").Result), true)
	f.Add([]byte(result(f, "instruments_linear.json").Result), false)
	f.Fuzz(func(t *testing.T, b []byte, spot bool) {
		cat := catLinear
		if spot {
			cat = catSpot
		}
		list, _, err := ParseInstruments(b, cat)
		for _, in := range list {
			if err == nil && (!in.TickSize.IsPositive() || !in.StepSize.IsPositive() || in.Symbol == "") {
				t.Fatalf("bad instrument %+v", in)
			}
		}
	})
}

func FuzzParseTickers(f *testing.F) {
	f.Add([]byte(result(f, "tickers_linear.json").Result))
	f.Add([]byte(result(f, "tickers_spot.json").Result))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := ParseTickers(b)
		if err != nil {
			return
		}
		for _, r := range rows {
			_, _ = tickerProto(r, &Instrument{Symbol: r.Symbol}, 1)
		}
	})
}

func FuzzParseBook(f *testing.F) {
	f.Add([]byte(result(f, "orderbook.json").Result))
	f.Add([]byte(mustData(f, "ws_orderbook_delta.json")))
	f.Fuzz(func(t *testing.T, b []byte) {
		raw, err := ParseBook(b)
		if err != nil {
			return
		}
		var bk Book
		bk.Reset(raw)
		bids, asks := bk.Levels(0)
		for i := 1; i < len(bids); i++ {
			if bids[i].Price == bids[i-1].Price {
				t.Fatal("repeated bid level")
			}
		}
		_ = asks
	})
}

func FuzzParseKlines(f *testing.F) {
	f.Add([]byte(result(f, "kline.json").Result))
	f.Fuzz(func(t *testing.T, b []byte) {
		cs, err := ParseKlines(b, "1m", 1732000830000)
		for i := 1; err == nil && i < len(cs); i++ {
			if cs[i].OpenTime <= cs[i-1].OpenTime {
				t.Fatal("not ascending")
			}
		}
	})
}

func FuzzParseTrades(f *testing.F) {
	f.Add([]byte(result(f, "recent_trade.json").Result))
	f.Fuzz(func(t *testing.T, b []byte) {
		ts, err := ParseTrades(b)
		for _, x := range ts {
			if err == nil && (x.Id == "" || x.Side == exchangev1.Side_SIDE_UNSPECIFIED) {
				t.Fatal("trade without id or side")
			}
		}
	})
}

func FuzzParseTime(f *testing.F) {
	f.Add([]byte(result(f, "time.json").Result))
	f.Fuzz(func(t *testing.T, b []byte) {
		if ts, err := ParseTime(b); err == nil && ts <= 0 {
			t.Fatal("non-positive time")
		}
	})
}

func FuzzParseFundingHistory(f *testing.F) {
	f.Add([]byte(result(f, "funding_history.json").Result))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseFundingHistory(b) })
}

func FuzzParseOpenInterest(f *testing.F) {
	f.Add([]byte(result(f, "open_interest.json").Result))
	f.Fuzz(func(t *testing.T, b []byte) { _, _, _ = ParseOpenInterest(b) })
}

func FuzzParseAccountRatio(f *testing.F) {
	f.Add([]byte(result(f, "account_ratio.json").Result))
	f.Fuzz(func(t *testing.T, b []byte) {
		pts, _, err := ParseAccountRatio(b)
		for _, p := range pts {
			if err == nil && len(p.Values) != 2 {
				t.Fatal("ratio without both sides")
			}
		}
	})
}

func FuzzParseWSTrades(f *testing.F) {
	f.Add([]byte(mustData(f, "ws_public_trade.json")))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseWSTrades(b) })
}

func FuzzParseWSKlines(f *testing.F) {
	f.Add([]byte(mustData(f, "ws_kline.json")))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseWSKlines(b) })
}
