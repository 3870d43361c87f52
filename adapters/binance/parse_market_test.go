package binance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// badBodies every parser must refuse with an error (and never panic on).
var badBodies = []string{"", "   ", "null", "{", "[", "<html>502 Bad Gateway</html>", `{"code":-1121,"msg":"Invalid symbol."}`,
	`[{"price":"abc"}]`, `[[1,"x"]]`, `"text"`, "12"}

func TestParseExchangeInfoSpot(t *testing.T) {
	info, err := ParseExchangeInfo(Spot, fixture(t, "spot_exchangeInfo.json"))
	if err != nil {
		t.Fatal(err)
	}
	if info.ServerTime != 1760000000123 || len(info.RateLimits) != 2 || info.RateLimits[0].Limit != 3000 {
		t.Fatalf("header: %+v", info)
	}
	if len(info.Instruments) != 2 {
		t.Fatalf("want 2 instruments, got %d", len(info.Instruments))
	}
	eth := info.Instruments[0]
	want := map[string][2]string{"tick": {eth.TickSize, "0.01"}, "min price": {eth.MinPrice, "0.01"}, "max price": {eth.MaxPrice, "500000"},
		"step": {eth.StepSize, "0.0001"}, "min qty": {eth.MinQty, "0.0001"}, "max qty": {eth.MaxQty, "8000"},
		"min notional": {eth.MinNotional, "5"}, "market max": {eth.MarketMaxQty, "350.5"},
		"market step (zero falls back)": {eth.MarketStepSize, "0.0001"}, "base": {eth.Base, "ETH"}, "quote": {eth.Quote, "USDT"}}
	for k, v := range want {
		if v[0] != v[1] {
			t.Errorf("%s: got %q want %q", k, v[0], v[1])
		}
	}
	if eth.Status != exchangev1.InstrumentStatus_INSTRUMENT_STATUS_TRADING || eth.MarketType != exchangev1.MarketType_MARKET_TYPE_SPOT {
		t.Errorf("status/type: %v %v", eth.Status, eth.MarketType)
	}
	doge := info.Instruments[1]
	if doge.Status != exchangev1.InstrumentStatus_INSTRUMENT_STATUS_SUSPENDED || doge.MinNotional != "1" {
		t.Errorf("DOGE: %v %q", doge.Status, doge.MinNotional)
	}
}

func TestParseExchangeInfoFutures(t *testing.T) {
	info, err := ParseExchangeInfo(Futures, fixture(t, "futures_exchangeInfo.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Instruments) != 1 {
		t.Fatalf("only the perpetual must be kept, got %d", len(info.Instruments))
	}
	sol := info.Instruments[0]
	if sol.Symbol != "SOLUSDT" || sol.MinNotional != "5" || sol.TickSize != "0.01" || sol.MinPrice != "0.42" ||
		sol.StepSize != "1" || sol.MarketMaxQty != "5000" || sol.Settle != "USDT" || sol.ContractValue != "1" ||
		sol.ListedTime != 1600000000000 || sol.MarketType != exchangev1.MarketType_MARKET_TYPE_SWAP {
		t.Fatalf("SOLUSDT: %+v", sol)
	}
}

func TestParseExchangeInfoErrors(t *testing.T) {
	for _, b := range badBodies {
		if _, err := ParseExchangeInfo(Spot, []byte(b)); err == nil {
			t.Errorf("body %q: want error", b)
		}
	}
	noFilter := `{"symbols":[{"symbol":"X","baseAsset":"X","quoteAsset":"USDT","status":"TRADING","filters":[]}]}`
	if _, err := ParseExchangeInfo(Spot, []byte(noFilter)); err == nil || !strings.Contains(err.Error(), "PRICE_FILTER") {
		t.Errorf("missing filters: %v", err)
	}
	bad := `{"symbols":[{"symbol":"X","baseAsset":"X","quoteAsset":"USDT","filters":[{"filterType":"PRICE_FILTER","tickSize":"1e"}]}]}`
	if _, err := ParseExchangeInfo(Spot, []byte(bad)); err == nil {
		t.Error("bad tick: want error")
	}
}

func TestParseTickers(t *testing.T) {
	ts, err := ParseTickers24h(Spot, fixture(t, "spot_ticker_24hr.json"))
	if err != nil {
		t.Fatal(err)
	}
	tk := ts[0]
	if tk.Last != "3097.5" || tk.Open_24H != "3110" || tk.ChangePct_24H != "-0.402" || tk.Bid != "3097.49" ||
		tk.AskQty != "0.72" || tk.QuoteVolume_24H != "3828629.18" || tk.Time != 1760000000000 {
		t.Fatalf("ticker: %+v", tk)
	}
	one, err := ParseTickers24h(Futures, []byte(`{"symbol":"SOLUSDT","lastPrice":"151.2","openPrice":"150","highPrice":"152",
		"lowPrice":"149","volume":"10","quoteVolume":"1500","priceChangePercent":"0.8","closeTime":"5"}`))
	if err != nil || len(one) != 1 || one[0].Bid != "" || one[0].Time != 5 {
		t.Fatalf("single futures ticker: %v %+v", err, one)
	}
	for _, b := range append(badBodies, `[{"symbol":"A"}]`, `[{"lastPrice":"1"}]`) {
		if _, err := ParseTickers24h(Spot, []byte(b)); err == nil {
			t.Errorf("body %q: want error", b)
		}
	}
}

func TestParsePremiumIndex(t *testing.T) {
	ps, err := ParsePremiumIndex(fixture(t, "futures_premiumIndex.json"))
	if err != nil {
		t.Fatal(err)
	}
	if p := ps[0]; p.MarkPrice != "151.23" || p.IndexPrice != "151.185" || p.LastFundingRate != "0.000125" || p.NextFundingTime != 1760025600000 {
		t.Fatalf("%+v", p)
	}
	for _, b := range append(badBodies, `{"markPrice":"1"}`) {
		if _, err := ParsePremiumIndex([]byte(b)); err == nil {
			t.Errorf("body %q: want error", b)
		}
	}
}

func TestParseDepth(t *testing.T) {
	d, err := ParseDepth(fixture(t, "spot_depth.json"))
	if err != nil {
		t.Fatal(err)
	}
	if d.LastUpdateID != 880011 || len(d.Bids) != 2 || len(d.Asks) != 3 || d.Bids[0].Price != "3097.49" || d.Asks[2].Qty != "0.001" {
		t.Fatalf("%+v", d)
	}
	f, err := ParseDepth(fixture(t, "futures_depth.json"))
	if err != nil {
		t.Fatal(err)
	}
	if f.LastUpdateID != 7700123 || f.Time != 1760000001990 || f.Bids[1].Qty != "45" {
		t.Fatalf("%+v", f)
	}
	for _, b := range append(badBodies, `{"bids":[],"asks":[]}`, `{"lastUpdateId":1,"bids":[["1"]],"asks":[]}`,
		`{"lastUpdateId":1,"bids":[["x","1"]],"asks":[]}`) {
		if _, err := ParseDepth([]byte(b)); err == nil {
			t.Errorf("body %q: want error", b)
		}
	}
}

func TestParseKlines(t *testing.T) {
	ks, err := ParseKlines(fixture(t, "spot_klines.json"), 1759999900000)
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != 2 || ks[0].OpenTime != 1759999800000 || ks[0].Open != "3100" || ks[0].QuoteVolume != "38758.75" ||
		ks[0].Trades != 41 || !ks[0].Closed || ks[1].Closed {
		t.Fatalf("%+v", ks)
	}
	for _, b := range append(badBodies, `[[1,"1","1","1","1","1",2,"1"]]`, `[[1,"1","1","1","1","1",2,"1","x"]]`) {
		if _, err := ParseKlines([]byte(b), 0); err == nil {
			t.Errorf("body %q: want error", b)
		}
	}
	if ks, err := ParseKlines([]byte(`[]`), 0); err != nil || len(ks) != 0 {
		t.Errorf("empty array: %v %d", err, len(ks))
	}
}

func TestParseTrades(t *testing.T) {
	ts, err := ParseTrades(fixture(t, "spot_trades.json"))
	if err != nil {
		t.Fatal(err)
	}
	if ts[0].Id != "501" || ts[0].Side != exchangev1.Side_SIDE_BUY || ts[1].Side != exchangev1.Side_SIDE_SELL || ts[1].QuoteQty != "619.498" {
		t.Fatalf("%+v", ts)
	}
	q, err := ParseTrades([]byte(`[{"id":"7","price":"2","qty":"3","time":1,"isBuyerMaker":true}]`))
	if err != nil || q[0].QuoteQty != "6" {
		t.Fatalf("derived quoteQty: %v %+v", err, q)
	}
	for _, b := range append(badBodies, `[{"price":"1","qty":"1"}]`) {
		if _, err := ParseTrades([]byte(b)); err == nil {
			t.Errorf("body %q: want error", b)
		}
	}
}

func TestParseServerTime(t *testing.T) {
	if v, err := ParseServerTime([]byte(`{"serverTime":1760000000000}`)); err != nil || v != 1760000000000 {
		t.Fatal(v, err)
	}
	for _, b := range append(badBodies, `{}`) {
		if _, err := ParseServerTime([]byte(b)); err == nil {
			t.Errorf("body %q: want error", b)
		}
	}
}

func TestParseFuturesSeries(t *testing.T) {
	fr, err := ParseFundingRates(fixture(t, "futures_fundingRate.json"))
	if err != nil || len(fr) != 2 || fr[1].Rate != "-0.000025" || fr[0].FundingTime != 1759968000003 || fr[0].MarkPrice != "150.1" {
		t.Fatalf("funding: %v %+v", err, fr)
	}
	oi, err := ParseOpenInterestHist(fixture(t, "futures_openInterestHist.json"))
	if err != nil || len(oi) != 2 || oi[1].Time != 1759999800000 || oi[0].OpenInterest != "1200300" {
		t.Fatalf("oi: %v %+v", err, oi)
	}
	ls, err := ParseLongShortRatio(fixture(t, "futures_longShortRatio.json"))
	if err != nil || ls[0].LongRatio != "0.6" || ls[0].LongShortRatio != "1.5" {
		t.Fatalf("ls: %v %+v", err, ls)
	}
	tp, err := ParseLongShortRatio(fixture(t, "futures_topLongShortPositionRatio.json"))
	if err != nil || tp[0].LongRatio != "0.45" || tp[0].ShortRatio != "0.55" || tp[0].Time != 1759999800000 {
		t.Fatalf("top position: %v %+v", err, tp)
	}
	tv, err := ParseTakerVolume(fixture(t, "futures_takerlongshortRatio.json"))
	if err != nil || tv[0].BuyVolume != "5000" || tv[0].BuySellRatio != "1.25" {
		t.Fatalf("taker: %v %+v", err, tv)
	}
	for _, b := range append(badBodies, `[{}]`) {
		if _, err := ParseFundingRates([]byte(b)); err == nil {
			t.Errorf("funding %q: want error", b)
		}
		if _, err := ParseOpenInterestHist([]byte(b)); err == nil {
			t.Errorf("oi %q: want error", b)
		}
		if _, err := ParseLongShortRatio([]byte(b)); err == nil {
			t.Errorf("ls %q: want error", b)
		}
		if _, err := ParseTakerVolume([]byte(b)); err == nil {
			t.Errorf("taker %q: want error", b)
		}
	}
}

func TestParseOrders(t *testing.T) {
	o, err := ParseOrder(Spot, fixture(t, "spot_order_full.json"))
	if err != nil {
		t.Fatal(err)
	}
	if o.OrderId != "4401" || o.Status != exchangev1.OrderStatus_ORDER_STATUS_FILLED || o.Price != "" || o.FilledQty != "0.5" ||
		o.AvgPrice != "3097.6" || o.Fee != "0.0005" || o.FeeAsset != "ETH" || o.CreatedTime != 1760000003000 {
		t.Fatalf("spot order: %+v", o)
	}
	f, err := ParseOrder(Futures, fixture(t, "futures_order.json"))
	if err != nil {
		t.Fatal(err)
	}
	if f.OrderId != "9100" || f.TimeInForce != exchangev1.TimeInForce_TIME_IN_FORCE_POST_ONLY || f.PositionSide != exchangev1.PositionSide_POSITION_SIDE_LONG ||
		f.Price != "140" || f.Qty != "3" || f.AvgPrice != "" || f.UpdatedTime != 1760000004001 {
		t.Fatalf("futures order: %+v", f)
	}
	list, err := ParseOrders(Futures, fixture(t, "futures_open_orders.json"))
	if err != nil || len(list) != 1 || list[0].OrderId != "9100" {
		t.Fatalf("plain orders: %v %+v", err, list)
	}
	algos, err := ParseAlgoOrders(fixture(t, "futures_open_orders.json"))
	if err != nil || len(algos) != 1 {
		t.Fatalf("algo orders: %v %+v", err, algos)
	}
	a := algos[0]
	if a.AlgoId != "9101" || a.Type != exchangev1.OrderType_ORDER_TYPE_STOP_MARKET || !a.ClosePosition || a.TriggerPrice != "130" ||
		a.TriggerPriceType != exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK || a.Status != exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_WAITING {
		t.Fatalf("algo: %+v", a)
	}
	for _, b := range append(badBodies, `{"symbol":"X"}`, `{"symbol":"X","orderId":1,"status":"WEIRD"}`) {
		if _, err := ParseOrder(Spot, []byte(b)); err == nil {
			t.Errorf("order %q: want error", b)
		}
	}
}

func TestParsePositions(t *testing.T) {
	ps, err := ParsePositionRisk(fixture(t, "futures_positionRisk.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 {
		t.Fatalf("flat positions must be dropped: %d", len(ps))
	}
	p := ps[0]
	if p.Qty != "-4" || p.PositionSide != exchangev1.PositionSide_POSITION_SIDE_NET || p.EntryPrice != "152.1" || p.Margin != "60.49" ||
		p.LiquidationPrice != "190.5" || p.UnrealizedPnl != "3.48" || p.BreakEvenPrice != "152.16" || p.MarginRatio != "" {
		t.Fatalf("%+v", p)
	}
	for _, b := range append(badBodies, `[{"symbol":"X"}]`) {
		if _, err := ParsePositionRisk([]byte(b)); err == nil {
			t.Errorf("positions %q: want error", b)
		}
	}
	// Isolated: maintMargin over isolatedMargin (the isolated wallet plus unrealized PnL).
	ps, err = ParsePositionRisk([]byte(`[{"symbol":"BTCUSDT","positionSide":"LONG","positionAmt":"0.01","entryPrice":"60000",
		"breakEvenPrice":"60060.0","markPrice":"59000","unRealizedProfit":"-10","liquidationPrice":"54500","isolatedMargin":"50",
		"isolatedWallet":"60","notional":"590","maintMargin":"2.36","initialMargin":"60","updateTime":1}]`))
	if err != nil || len(ps) != 1 || ps[0].BreakEvenPrice != "60060" || ps[0].MarginRatio != "0.0472" || ps[0].Margin != "50" {
		t.Fatalf("isolated: %v %+v", err, ps)
	}
}

func TestParseCrossMarginRatio(t *testing.T) {
	// Cross maintenance 3 + 1 (the isolated position's 2 is left out) over 1000 - 50 + 30 - 20.
	r, err := ParseCrossMarginRatio([]byte(`{"totalCrossWalletBalance":"950","totalCrossUnPnl":"10","totalMarginBalance":"1000",
		"positions":[{"symbol":"BTCUSDT","maintMargin":"3","isolatedWallet":"0"},{"symbol":"ETHUSDT","maintMargin":"1","isolatedWallet":"0"},
		{"symbol":"SOLUSDT","maintMargin":"2","isolatedWallet":"50"}]}`))
	if err != nil || r != "0.00416667" {
		t.Fatalf("cross ratio %q %v", r, err)
	}
	if r, err := ParseCrossMarginRatio([]byte(`{"totalCrossWalletBalance":"10","totalCrossUnPnl":"-20","positions":[{"maintMargin":"3","isolatedWallet":"0"}]}`)); err != nil || r != "1" {
		t.Fatalf("negative balance: %q %v", r, err)
	}
	if r, err := ParseCrossMarginRatio([]byte(`{"totalCrossWalletBalance":"10","totalCrossUnPnl":"0","positions":[]}`)); err != nil || r != "" {
		t.Fatalf("no positions: %q %v", r, err)
	}
	for _, b := range append(badBodies, `{"positions":[]}`, `{"totalCrossWalletBalance":"x"}`) {
		if _, err := ParseCrossMarginRatio([]byte(b)); err == nil {
			t.Errorf("account %q: want error", b)
		}
	}
}

func TestParseAccountBits(t *testing.T) {
	bs, err := ParseSpotAccount([]byte(`{"balances":[{"asset":"USDT","free":"100.5","locked":"20"},{"asset":"XRP","free":"0","locked":"0"}]}`))
	if err != nil || len(bs) != 1 || bs[0].Total != "120.5" || bs[0].Locked != "20" {
		t.Fatalf("spot account: %v %+v", err, bs)
	}
	fa, err := ParseFuturesAccount([]byte(`{"totalMarginBalance":"1010","totalUnrealizedProfit":"10","availableBalance":"900",
		"assets":[{"asset":"USDT","walletBalance":"1000","availableBalance":"900"}]}`))
	if err != nil || fa.Equity != "1010" || fa.Assets[0].Locked != "100" {
		t.Fatalf("futures account: %v %+v", err, fa)
	}
	if k, err := ParseListenKey([]byte(`{"listenKey":"abc"}`)); err != nil || k != "abc" {
		t.Fatal(k, err)
	}
	if l, err := ParseLeverage([]byte(`{"leverage":21,"maxNotionalValue":"1000000","symbol":"SOLUSDT"}`)); err != nil || l != "21" {
		t.Fatal(l, err)
	}
	if d, err := ParseDualSide([]byte(`{"dualSidePosition":true}`)); err != nil || !d {
		t.Fatal(d, err)
	}
	for _, b := range badBodies {
		if _, err := ParseSpotAccount([]byte(b)); err == nil {
			t.Errorf("spot account %q: want error", b)
		}
		if _, err := ParseListenKey([]byte(b)); err == nil {
			t.Errorf("listenKey %q: want error", b)
		}
		if _, err := ParseDualSide([]byte(b)); err == nil {
			t.Errorf("dual %q: want error", b)
		}
	}
}

func TestFlexInt(t *testing.T) {
	var w struct{ A, B, C, D flexInt }
	if err := decodeJSON([]byte(`{"A":5,"B":"6","C":null,"D":""}`), &w, "x"); err != nil || w.A != 5 || w.B != 6 || w.C != 0 {
		t.Fatal(err, w)
	}
	if err := decodeJSON([]byte(`{"A":"x"}`), &w, "x"); err == nil {
		t.Fatal("want error")
	}
	if err := decodeJSON([]byte(`{"A":1.5}`), &w, "x"); err == nil {
		t.Fatal("want error for a fraction")
	}
}

// A zero tickSize/stepSize means "rule disabled" on Binance: the grid falls back to the symbol's precision.
func TestParseExchangeInfoZeroGrid(t *testing.T) {
	body := `{"symbols":[{"symbol":"TINYUSDT","baseAsset":"TINY","quoteAsset":"USDT","status":"TRADING","quotePrecision":8,
		"baseAssetPrecision":2,"filters":[{"filterType":"PRICE_FILTER","tickSize":"0.00000000","minPrice":"0","maxPrice":"0.01"},
		{"filterType":"LOT_SIZE","stepSize":"0.00","minQty":"1","maxQty":"90000"}]}]}`
	info, err := ParseExchangeInfo(Spot, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if in := info.Instruments[0]; in.TickSize != "0.00000001" || in.StepSize != "0.01" {
		t.Fatalf("zero grid: tick %s step %s", in.TickSize, in.StepSize)
	}
	noPrec := strings.Replace(body, `"quotePrecision":8,`, "", 1)
	if _, err := ParseExchangeInfo(Spot, []byte(noPrec)); err == nil {
		t.Fatal("a zero tick without a precision must be an error")
	}
}

// Spot trade events carry both "m" (buyer is maker) and "M" (ignore, always true): the side must come from "m".
func TestParseTradeEventCaseDistinct(t *testing.T) {
	b := []byte(`{"e":"trade","E":1761000000100,"s":"ETHUSDT","t":4401,"p":"2950.10","q":"0.25","T":1761000000099,"m":false,"M":true}`)
	tr, _, ok, err := ParseTradeEvent(b)
	if err != nil || !ok || tr.Side != exchangev1.Side_SIDE_BUY || tr.Price != "2950.1" {
		t.Fatalf("trade: %v %+v", err, tr)
	}
}

// Kline and ticker events whose upper-case keys (close time, last trade id, taker volumes, open/close times) must
// not overwrite their lower-case neighbours.
func TestParseEventsCaseDistinct(t *testing.T) {
	k := []byte(`{"e":"kline","E":1761000060500,"s":"SOLUSDT","k":{"t":1761000000000,"T":1761000059999,"s":"SOLUSDT","i":"1m",
		"f":900,"L":950,"o":"181.20","c":"181.90","h":"182.00","l":"181.10","v":"420.5","n":51,"x":true,"q":"76400.1","V":"200.25","Q":"36390.3","B":"0"}}`)
	c, iv, _, err := ParseKlineEvent(k)
	if err != nil || iv != "1m" || c.OpenTime != 1761000000000 || c.Low != "181.1" || c.Volume != "420.5" || c.QuoteVolume != "76400.1" || !c.Closed {
		t.Fatalf("kline: %v %+v", err, c)
	}
	tk := []byte(`{"e":"24hrTicker","E":1761000070000,"s":"SOLUSDT","p":"1.7","P":"0.94","w":"181.3","x":"180.2","c":"181.9","Q":"3.1",
		"b":"181.89","B":"12","a":"181.91","A":"9","o":"180.2","h":"183","l":"179.5","v":"880000","q":"159000000","O":1760913670000,
		"C":1761000069999,"F":100,"L":950,"n":851}`)
	tt, err := ParseTickerEvent(Spot, tk)
	if err != nil || tt.Last != "181.9" || tt.Open_24H != "180.2" || tt.Low_24H != "179.5" || tt.ChangePct_24H != "0.94" ||
		tt.QuoteVolume_24H != "159000000" || tt.BidQty != "12" || tt.Time != 1761000070000 {
		t.Fatalf("ticker: %v %+v", err, tt)
	}
	mp := []byte(`{"e":"markPriceUpdate","E":1761000071000,"s":"SOLUSDT","p":"181.85","P":"181.40","i":"181.80","r":"0.0001","T":1761004800000}`)
	u, _, err := ParseMarkPriceEvent(mp)
	if err != nil || u.MarkPrice != "181.85" || u.IndexPrice != "181.8" {
		t.Fatalf("mark: %v %+v", err, u)
	}
}
