package okx

import (
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

func fixture(t *testing.T, name string) json.RawMessage {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	data, err := ParseEnvelope(b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return data
}

func reasonIs(t *testing.T, err error, want exchangev1.ErrorReason, code string) {
	t.Helper()
	var se *sdk.Error
	if !errors.As(err, &se) {
		t.Fatalf("error %v is not a typed error", err)
	}
	if se.Detail.GetReason() != want || se.Detail.GetExchangeCode() != code {
		t.Fatalf("reason %v code %q, want %v %q (%v)", se.Detail.GetReason(), se.Detail.GetExchangeCode(), want, code, err)
	}
}

func TestEnvelopeErrors(t *testing.T) {
	b, _ := os.ReadFile("testdata/error_instrument.json")
	_, err := ParseEnvelope(b)
	reasonIs(t, err, exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND, "51001")

	b, _ = os.ReadFile("testdata/error_item.json")
	_, err = ParseEnvelope(b)
	reasonIs(t, err, exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS, "51008")
	if se := (*sdk.Error)(nil); errors.As(err, &se) && se.Detail.GetExchangeMessage() != "Order failed. Insufficient USDT balance in account." {
		t.Fatalf("raw message not kept: %q", se.Detail.GetExchangeMessage())
	}
	for _, body := range []string{"", "null", "<html>502</html>", `{"msg":"x"}`, `{"code":"0","data":{`, `[1,2]`} {
		if _, err := ParseEnvelope([]byte(body)); err == nil {
			t.Errorf("body %q: no error", body)
		}
	}
	data, err := ParseEnvelope([]byte(`{"code":"0","msg":""}`))
	if err != nil || string(data) != "[]" {
		t.Fatalf("missing data: %s %v", data, err)
	}
	_, err = ParseEnvelope([]byte(`{"code":"50011","msg":"Too Many Requests","data":[]}`))
	reasonIs(t, err, exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED, "50011")
	_, err = ParseEnvelope([]byte(`{"code":"1","msg":"","data":[{"sCode":"51000","sMsg":"Parameter posSide error"}]}`))
	reasonIs(t, err, exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH, "51000")
	_, err = ParseEnvelope([]byte(`{"code":"50113","msg":"Invalid Sign","data":[]}`))
	reasonIs(t, err, exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED, "50113")
}

func TestParseInstruments(t *testing.T) {
	list, err := ParseInstruments(fixture(t, "instruments_swap.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].InstID != "ETH-USDT-SWAP" || list[1].InstID != "PEPE-USDT-SWAP" {
		t.Fatalf("kept %d instruments (want live linear only): %+v", len(list), list)
	}
	p := list[0].Proto()
	want := map[string]string{"contract": "0.1", "step": "0.01", "min": "0.01", "max": "5000", "mmax": "500", "tick": "0.01", "lev": "75"}
	got := map[string]string{"contract": p.ContractValue, "step": p.StepSize, "min": p.MinQty, "max": p.MaxQty, "mmax": p.MarketMaxQty,
		"tick": p.TickSize, "lev": p.MaxLeverage}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %s, want %s", k, got[k], v)
		}
	}
	if p.Base != "ETH" || p.Quote != "" && p.Quote != "USDT" || p.Settle != "USDT" || p.Family != "ETH-USDT" || p.ListedTime != 1611916828000 {
		t.Errorf("identity: %+v", p)
	}
	// ctVal x ctMult: 1000000 x 10 PEPE per contract; lot 0.1 contract = 1000000 PEPE.
	pp := list[1].Proto()
	if pp.ContractValue != "10000000" || pp.StepSize != "1000000" {
		t.Errorf("PEPE contract %s step %s", pp.ContractValue, pp.StepSize)
	}
	spot, err := ParseInstruments(fixture(t, "instruments_spot.json"))
	if err != nil || len(spot) != 1 || spot[0].Proto().StepSize != "0.000001" || spot[0].Proto().MinQty != "0.0001" {
		t.Fatalf("spot: %v %+v", err, spot)
	}
	for _, bad := range []string{`[{"instType":"SPOT","instId":"X-Y","state":"live","tickSz":"abc","lotSz":"1","minSz":"1"}]`,
		`[{"instType":"SWAP","instId":"X-Y-SWAP","state":"live","tickSz":"1","lotSz":"1","minSz":"1","ctVal":"0","ctType":"linear"}]`,
		`[{"instType":"SPOT","instId":"X-Y","state":"live","tickSz":"","lotSz":"1","minSz":"1"}]`, `{}`} {
		if _, err := ParseInstruments(json.RawMessage(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestTickerUsesUTCDayStart(t *testing.T) {
	rows, err := ParseTickers(fixture(t, "tickers.json"))
	if err != nil {
		t.Fatal(err)
	}
	swap := &Instrument{InstID: "ETH-USDT-SWAP", MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, ContractSize: decimal.RequireFromString("0.1")}
	tk, err := tickerProto(rows[0], swap)
	if err != nil {
		t.Fatal(err)
	}
	// (2520.5 - 2500) / 2500 = 0.82 %, from sodUtc0 (not open24h 2450 or sodUtc8 2470).
	if tk.Open_24H != "2500" || tk.ChangePct_24H != "0.82" {
		t.Errorf("open %s change %s", tk.Open_24H, tk.ChangePct_24H)
	}
	if tk.BidQty != "9.5" || tk.AskQty != "12" || tk.Volume_24H != "81234.5" {
		t.Errorf("contract sizes not converted: bid %s ask %s vol %s", tk.BidQty, tk.AskQty, tk.Volume_24H)
	}
	spot, err := tickerProto(rows[1], nil)
	if err != nil {
		t.Fatal(err)
	}
	if spot.ChangePct_24H != "-3.08" || spot.Ask != "" || spot.Volume_24H != "4000.25" || spot.QuoteVolume_24H != "10000000.5" {
		t.Errorf("spot ticker: %+v", spot)
	}
	if _, err := tickerProto(rawTicker{InstID: "X", Last: "1", SodUtc0: "x"}, nil); err == nil {
		t.Error("bad sodUtc0 accepted")
	}
	if _, err := tickerProto(rawTicker{InstID: "X"}, nil); err == nil {
		t.Error("ticker without last accepted")
	}
}

func TestParseCandles(t *testing.T) {
	cs, err := ParseCandles(fixture(t, "candles_swap.json"), exchangev1.MarketType_MARKET_TYPE_SWAP)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 3 || cs[0].OpenTime != 1767225600000 || cs[2].OpenTime != 1767225720000 {
		t.Fatalf("not ascending: %v", cs)
	}
	if !cs[0].Closed || cs[2].Closed || cs[0].Volume != "100" || cs[0].QuoteVolume != "251850" {
		t.Errorf("closed flags or SWAP volume (volCcy is base): %+v", cs[0])
	}
	spot, err := ParseCandles(json.RawMessage(`[["1767225600000","1","2","0.5","1.5","10","15","15","1"]]`), exchangev1.MarketType_MARKET_TYPE_SPOT)
	if err != nil || spot[0].Volume != "10" || spot[0].QuoteVolume != "15" {
		t.Fatalf("spot volume: %v %+v", err, spot)
	}
	for _, bad := range []string{`[["1"]]`, `[["x","1","1","1","1","1"]]`, `[["1","","1","1","1","1"]]`, `[{"ts":"1"}]`} {
		if _, err := ParseCandles(json.RawMessage(bad), exchangev1.MarketType_MARKET_TYPE_SPOT); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestParseTradesAndBooks(t *testing.T) {
	ts, err := ParseTrades(json.RawMessage(`[{"instId":"ETH-USDT-SWAP","tradeId":"9","px":"2500.5","sz":"3","side":"sell","ts":"20"},
		{"instId":"ETH-USDT-SWAP","tradeId":"8","px":"2500","sz":"1","side":"buy","ts":"10"}]`), decimal.RequireFromString("0.1"))
	if err != nil || len(ts) != 2 || ts[0].Id != "8" || ts[1].Qty != "0.3" || ts[1].QuoteQty != "750.15" || ts[1].Side != exchangev1.Side_SIDE_SELL {
		t.Fatalf("trades: %v %+v", err, ts)
	}
	if _, err := ParseTrades(json.RawMessage(`[{"tradeId":"1","px":"1","sz":"x","ts":"1"}]`), decimal.NewFromInt(1)); err == nil {
		t.Error("bad size accepted")
	}
	if _, err := ParseBooks(json.RawMessage(`[{"asks":[["1"]],"bids":[],"ts":"1"}]`)); err == nil {
		t.Error("short level accepted")
	}
	if _, err := ParseBooks(json.RawMessage(`[{"asks":[["1","-2","0","1"]],"bids":[],"ts":"1"}]`)); err == nil {
		t.Error("negative size accepted")
	}
}

func TestRubikRows(t *testing.T) {
	ts, vs, err := ParseRubikRows(json.RawMessage(`[["300","1.5"],["0","0.5"]]`), 1)
	if err != nil || ts[0] != 0 || !vs[1][0].Equal(decimal.RequireFromString("1.5")) {
		t.Fatalf("%v %v %v", ts, vs, err)
	}
	for _, bad := range []string{`[["1"]]`, `[["x","1"]]`, `[["1",""]]`, `{}`} {
		if _, _, err := ParseRubikRows(json.RawMessage(bad), 1); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestOrderAndPositionParsing(t *testing.T) {
	cs := decimal.RequireFromString("0.1")
	conv := func(d decimal.Decimal) decimal.Decimal { return d.Mul(cs) }
	rows, err := ParseOrders(json.RawMessage(`[{"instType":"SWAP","instId":"ETH-USDT-SWAP","ordId":"77","clOrdId":"c1","px":"2400.5","sz":"25",
		"ordType":"post_only","side":"buy","posSide":"long","accFillSz":"5","avgPx":"2400.5","state":"partially_filled","fee":"-0.12",
		"feeCcy":"USDT","reduceOnly":"false","cTime":"1","uTime":"2","tradeId":"t9","fillPx":"2400.5","fillSz":"5","fillTime":"2","fillFee":"-0.12","fillFeeCcy":"USDT","execType":"M"}]`))
	if err != nil {
		t.Fatal(err)
	}
	o, err := orderProto(rows[0], conv)
	if err != nil {
		t.Fatal(err)
	}
	if o.Qty != "2.5" || o.FilledQty != "0.5" || o.FilledQuote != "1200.25" || o.Fee != "0.12" || o.TimeInForce != exchangev1.TimeInForce_TIME_IN_FORCE_POST_ONLY ||
		o.Status != exchangev1.OrderStatus_ORDER_STATUS_PARTIALLY_FILLED || o.PositionSide != exchangev1.PositionSide_POSITION_SIDE_LONG {
		t.Errorf("order: %+v", o)
	}
	f, err := fillOf(rows[0], conv)
	if err != nil || f == nil || f.Qty != "0.5" || !f.Maker || f.TradeId != "t9" {
		t.Errorf("fill: %+v", f)
	}
	if _, err := orderProto(rawOrder{InstID: "X"}, unitConv); err == nil {
		t.Error("order without id accepted")
	}
	if _, err := orderProto(rawOrder{InstID: "X", OrdID: "1", Px: "1..2"}, unitConv); err == nil {
		t.Error("bad price accepted")
	}
	p, err := positionProto(rawPosition{InstID: "ETH-USDT-SWAP", PosSide: "net", Pos: "-30", AvgPx: "2500", MgnMode: "cross", Imr: "75", Lever: "10"}, conv)
	if err != nil || p.Qty != "-3" || p.Margin != "75" || p.PositionSide != exchangev1.PositionSide_POSITION_SIDE_NET ||
		p.BreakEvenPrice != "" || p.MarginRatio != "" {
		t.Fatalf("position: %v %+v", err, p)
	}
	// bePx as sent; mgnRatio (margin balance over maintenance margin) inverted: 1 / 11.731726509588816.
	p, err = positionProto(rawPosition{InstID: "ETH-USDT-SWAP", PosSide: "long", Pos: "10", AvgPx: "2566.31", BePx: "2353.949",
		MgnRatio: "11.731726509588816", MgnMode: "isolated", Margin: "10"}, conv)
	if err != nil || p.BreakEvenPrice != "2353.949" || p.MarginRatio != "0.08523895" {
		t.Fatalf("position metrics: %v %+v", err, p)
	}
	for mgn, want := range map[string]string{"0": "1", "-2": "1", "4": "0.25", "": ""} {
		if p, err := positionProto(rawPosition{InstID: "ETH-USDT-SWAP", Pos: "1", BePx: "0", MgnRatio: mgn}, conv); err != nil ||
			p.MarginRatio != want || p.BreakEvenPrice != "" {
			t.Errorf("mgnRatio %q: %v %+v, want %q", mgn, err, p, want)
		}
	}
	for _, bad := range []rawPosition{{InstID: "X", Pos: "1", MgnRatio: "x"}, {InstID: "X", Pos: "1", BePx: "1..2"}} {
		if _, err := positionProto(bad, conv); err == nil {
			t.Errorf("bad position %+v accepted", bad)
		}
	}
	a, err := algoProto(rawAlgo{AlgoID: "a1", InstID: "ETH-USDT-SWAP", SlTriggerPx: "2300", SlTriggerPxType: "mark", SlOrdPx: "-1", Sz: "10", State: "live"}, conv)
	if err != nil || a.Type != exchangev1.OrderType_ORDER_TYPE_STOP_MARKET || a.TriggerPriceType != exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK ||
		a.Qty != "1" || a.Price != "" || a.Status != exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_WAITING {
		t.Fatalf("algo: %v %+v", err, a)
	}
}

func TestBalances(t *testing.T) {
	bs, eq, upl, avail, err := ParseTradingBalance([]byte(`[{"totalEq":"1000.5","details":[{"ccy":"USDT","eq":"900","cashBal":"900","availBal":"850","availEq":"840","frozenBal":"50","upl":"1.5"},
		{"ccy":"ETH","cashBal":"0.5","availBal":"","frozenBal":"0.1","upl":""}]}]`))
	if err != nil || eq != "1000.5" || upl != "1.5" || avail != "840" || len(bs) != 2 || bs[1].Available != "0.4" || bs[0].Locked != "50" {
		t.Fatalf("%v %s %s %s %+v", err, eq, upl, avail, bs)
	}
	if _, _, _, _, err := ParseTradingBalance([]byte(`[{"details":[{"ccy":"USDT","cashBal":"x"}]}]`)); err == nil {
		t.Error("bad balance accepted")
	}
	fb, err := ParseFundingBalances([]byte(`[{"ccy":"USDT","bal":"10","availBal":"9","frozenBal":"1"}]`))
	if err != nil || fb[0].Wallet != exchangev1.WalletType_WALLET_TYPE_FUNDING || fb[0].Available != "9" {
		t.Fatalf("%v %+v", err, fb)
	}
}

func unitConv(d decimal.Decimal) decimal.Decimal { return d }

// TestFillsNeverLie: a fill whose price is zero or whose price, fee or time cannot be read is an error, not a
// fill with zeros.
func TestFillsNeverLie(t *testing.T) {
	good := rawOrder{InstID: "ETH-USDT-SWAP", OrdID: "1", TradeID: "t1", FillSz: "2", FillPx: "2500.5", FillFee: "-0.1",
		FillTime: "1700000000000", Side: "buy"}
	if f, err := fillOf(good, unitConv); err != nil || f.Price != "2500.5" || f.Fee != "0.1" {
		t.Fatalf("good fill: %v %v", f, err)
	}
	for name, mut := range map[string]func(*rawOrder){
		"price 0":       func(r *rawOrder) { r.FillPx = "0" },
		"price empty":   func(r *rawOrder) { r.FillPx = "" },
		"price garbage": func(r *rawOrder) { r.FillPx = "1.2.3" },
		"fee garbage":   func(r *rawOrder) { r.FillFee = "abc" },
		"fee empty":     func(r *rawOrder) { r.FillFee = "" },
		"time garbage":  func(r *rawOrder) { r.FillTime = "soon" },
		"pnl garbage":   func(r *rawOrder) { r.FillPnl = "x" },
		"no trade id":   func(r *rawOrder) { r.TradeID = "" },
		"size garbage":  func(r *rawOrder) { r.FillSz = "--1" },
	} {
		r := good
		mut(&r)
		if f, err := fillOf(r, unitConv); err == nil {
			t.Errorf("%s: accepted as %v", name, f)
		}
	}
	// No fill on the row: nothing, and no error.
	if f, err := fillOf(rawOrder{InstID: "X", OrdID: "1", FillSz: "0"}, unitConv); f != nil || err != nil {
		t.Fatalf("row without a fill: %v %v", f, err)
	}
	rf := rawFill{InstID: "ETH-USDT-SWAP", TradeID: "t1", OrdID: "1", FillPx: "10", FillSz: "1", Fee: "-0.01", Ts: "1700000000000"}
	if _, err := fillProto(rf, unitConv); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*rawFill){
		"price 0":     func(r *rawFill) { r.FillPx = "0" },
		"fee garbage": func(r *rawFill) { r.Fee = "1e" },
		"no ts":       func(r *rawFill) { r.Ts = "" },
	} {
		r := rf
		mut(&r)
		if f, err := fillProto(r, unitConv); err == nil {
			t.Errorf("%s: accepted as %v", name, f)
		}
	}
}
