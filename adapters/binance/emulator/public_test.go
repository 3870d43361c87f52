package emulator

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func TestPublicShapes(t *testing.T) {
	e := newEnv(t)
	sym := url.Values{"symbol": {"BTCUSDT"}}
	stat := url.Values{"symbol": {"BTCUSDT"}, "period": {"5m"}, "limit": {"10"}}
	cases := []struct {
		path   string
		params url.Values
		shape  string
	}{
		{"/api/v3/ping", nil, "ping"},
		{"/api/v3/time", nil, "spot_time"},
		{"/api/v3/exchangeInfo", nil, "spot_exchangeInfo"},
		{"/api/v3/exchangeInfo", sym, "spot_exchangeInfo"},
		{"/api/v3/depth", sym, "spot_depth"},
		{"/api/v3/klines", url.Values{"symbol": {"BTCUSDT"}, "interval": {"1m"}, "limit": {"5"}}, "klines"},
		{"/api/v3/trades", sym, "spot_trades"},
		{"/api/v3/aggTrades", sym, "spot_aggTrades"},
		{"/api/v3/ticker/24hr", sym, "spot_ticker_24hr"},
		{"/api/v3/ticker/price", sym, "spot_ticker_price"},
		{"/api/v3/ticker/bookTicker", sym, "spot_bookTicker"},
		{"/fapi/v1/ticker/price", sym, "futures_ticker_price"},
		{"/fapi/v1/ticker/bookTicker", sym, "futures_bookTicker"},
		{"/fapi/v1/ping", nil, "ping"},
		{"/fapi/v1/time", nil, "futures_time"},
		{"/fapi/v1/exchangeInfo", nil, "futures_exchangeInfo"},
		{"/fapi/v1/depth", sym, "futures_depth"},
		{"/fapi/v1/klines", url.Values{"symbol": {"BTCUSDT"}, "interval": {"1h"}, "limit": {"5"}}, "klines"},
		{"/fapi/v1/trades", sym, "futures_trades"},
		{"/fapi/v1/aggTrades", sym, "futures_aggTrades"},
		{"/fapi/v1/ticker/24hr", sym, "futures_ticker_24hr"},
		{"/fapi/v1/premiumIndex", sym, "futures_premiumIndex"},
		{"/fapi/v1/fundingRate", sym, "futures_fundingRate"},
		{"/fapi/v1/openInterest", sym, "futures_openInterest"},
		{"/futures/data/openInterestHist", stat, "futures_openInterestHist"},
		{"/futures/data/globalLongShortAccountRatio", stat, "futures_longShortRatio"},
		{"/futures/data/topLongShortAccountRatio", stat, "futures_longShortRatio"},
		{"/futures/data/topLongShortPositionRatio", stat, "futures_longShortRatio"},
		{"/futures/data/takerlongshortRatio", stat, "futures_takerlongshortRatio"},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			r := e.get(c.path, c.params).expectOK(t)
			if len(r.body) < 2 {
				t.Fatalf("empty body")
			}
			checkShape(t, c.shape, r.body)
		})
	}
	// Lists must not be empty, or the shape check above proves nothing about their elements.
	for _, c := range cases {
		r := e.get(c.path, c.params)
		var arr []any
		if r.body[0] == '[' {
			r.decode(t, &arr)
			if len(arr) == 0 {
				t.Errorf("%s returned an empty list", c.path)
			}
		}
	}
}

func TestPublicErrors(t *testing.T) {
	e := newEnv(t)
	e.get("/api/v3/depth", url.Values{"symbol": {"NOPEUSDT"}}).expectErr(t, http.StatusBadRequest, -1121)
	e.get("/api/v3/depth", nil).expectErr(t, http.StatusBadRequest, -1102)
	e.get("/fapi/v1/klines", url.Values{"symbol": {"BTCUSDT"}, "interval": {"7m"}}).expectErr(t, http.StatusBadRequest, -1120)
	e.get("/api/v3/klines", url.Values{"symbol": {"BTCUSDT"}, "interval": {"1m"}, "limit": {"x"}}).expectErr(t, http.StatusBadRequest, -1130)
	e.get("/futures/data/openInterestHist", url.Values{"symbol": {"BTCUSDT"}}).expectErr(t, http.StatusBadRequest, -1102)
	if r := e.get("/api/v3/nothing", nil); r.status != http.StatusNotFound {
		t.Fatalf("unknown path: %d", r.status)
	}
	r := e.get("/api/v3/time", nil)
	if w, err := strconv.Atoi(r.header.Get("X-MBX-USED-WEIGHT-1M")); err != nil || w <= 0 {
		t.Fatalf("used weight header %q", r.header.Get("X-MBX-USED-WEIGHT-1M"))
	}
}

func TestRateLimits(t *testing.T) {
	e := newEnv(t)
	e.s.InjectRateLimit(http.StatusTooManyRequests, 3*time.Second, 1)
	r := e.get("/api/v3/time", nil)
	r.expectErr(t, http.StatusTooManyRequests, -1003)
	if r.header.Get("Retry-After") != "3" {
		t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
	}
	e.get("/api/v3/time", nil).expectOK(t)
	e.s.InjectRateLimit(http.StatusTeapot, 2*time.Minute, 1)
	r = e.get("/fapi/v1/time", nil)
	r.expectErr(t, http.StatusTeapot, -1003)
	if r.header.Get("Retry-After") != "120" {
		t.Fatalf("Retry-After %q", r.header.Get("Retry-After"))
	}
	e.s.InjectRateLimit(http.StatusForbidden, 0, 1)
	r = e.get("/fapi/v1/time", nil)
	if r.status != http.StatusForbidden || !strings.Contains(string(r.body), "403") {
		t.Fatalf("403: %d %s", r.status, r.body)
	}
	// Real weight accounting: exchangeInfo costs 20 on spot; a limit of 50 allows two calls a minute.
	e.s.SetWeightLimits(50, 0)
	e.get("/api/v3/exchangeInfo", nil).expectOK(t)
	r = e.get("/api/v3/exchangeInfo", nil).expectOK(t)
	if r.header.Get("X-MBX-USED-WEIGHT-1M") != "40" {
		t.Fatalf("used weight %q", r.header.Get("X-MBX-USED-WEIGHT-1M"))
	}
	r = e.get("/api/v3/exchangeInfo", nil)
	r.expectErr(t, http.StatusTooManyRequests, -1003)
	if r.header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After on 429")
	}
	// Weights follow the parameters: a deep spot book costs 50, the shallow one 5.
	e.s.SetWeightLimits(1000, 1000)
	r = e.get("/api/v3/depth", url.Values{"symbol": {"BTCUSDT"}, "limit": {"1000"}}).expectOK(t)
	if r.header.Get("X-MBX-USED-WEIGHT-1M") != "50" {
		t.Fatalf("depth 1000 weight: %q", r.header.Get("X-MBX-USED-WEIGHT-1M"))
	}
	r = e.get("/fapi/v1/ticker/24hr", nil).expectOK(t)
	if r.header.Get("X-MBX-USED-WEIGHT-1M") != "40" {
		t.Fatalf("all tickers weight: %q", r.header.Get("X-MBX-USED-WEIGHT-1M"))
	}
	e.s.SetWeightLimits(50, 2400)
	e.get("/api/v3/exchangeInfo", nil).expectOK(t)
	e.get("/api/v3/exchangeInfo", nil).expectOK(t)
	e.get("/api/v3/exchangeInfo", nil).expectErr(t, http.StatusTooManyRequests, -1003)
	// Futures has its own budget.
	e.get("/fapi/v1/exchangeInfo", nil).expectOK(t)
	// Hammering while limited earns a ban.
	for range banAfter {
		e.get("/api/v3/exchangeInfo", nil)
	}
	e.get("/api/v3/time", nil).expectErr(t, http.StatusTeapot, -1003)
	// The next minute the counter resets but the ban (two minutes) holds.
	e.advance(time.Minute)
	e.get("/api/v3/time", nil).expectErr(t, http.StatusTeapot, -1003)
	e.advance(2 * time.Minute)
	e.get("/api/v3/time", nil).expectOK(t)
}

type kline struct {
	open, close int64
	o, h, l, c  decimal.Decimal
}

func (e *env) klines(path string, params url.Values) []kline {
	e.t.Helper()
	var rows [][]any
	e.get(path, params).expectOK(e.t).decode(e.t, &rows)
	out := make([]kline, 0, len(rows))
	for _, r := range rows {
		k := kline{open: int64(r[0].(float64)), close: int64(r[6].(float64))}
		k.o = decimal.RequireFromString(r[1].(string))
		k.h = decimal.RequireFromString(r[2].(string))
		k.l = decimal.RequireFromString(r[3].(string))
		k.c = decimal.RequireFromString(r[4].(string))
		out = append(out, k)
	}
	return out
}

func TestKlinePaging(t *testing.T) {
	e := newEnv(t)
	now := e.v.Now()
	// Default and maximum page sizes.
	if n := len(e.klines("/api/v3/klines", url.Values{"symbol": {"BTCUSDT"}, "interval": {"1m"}})); n != 500 {
		t.Fatalf("default limit gave %d", n)
	}
	if n := len(e.klines("/api/v3/klines", url.Values{"symbol": {"BTCUSDT"}, "interval": {"1m"}, "limit": {"5000"}})); n != 1000 {
		t.Fatalf("spot max gave %d", n)
	}
	if n := len(e.klines("/fapi/v1/klines", url.Values{"symbol": {"BTCUSDT"}, "interval": {"1m"}, "limit": {"5000"}})); n != 1500 {
		t.Fatalf("futures max gave %d", n)
	}
	// Page forward from long before the history with startTime = last open + 1: contiguous, no duplicates,
	// ending with the forming bar.
	for _, path := range []string{"/api/v3/klines", "/fapi/v1/klines"} {
		start := int64(0)
		var all []kline
		for page := 0; page < 20; page++ {
			ks := e.klines(path, url.Values{"symbol": {"ETHUSDT"}, "interval": {"5m"}, "limit": {"300"},
				"startTime": {strconv.FormatInt(start, 10)}})
			if len(ks) == 0 {
				break
			}
			if ks[0].open < start {
				t.Fatalf("bar %d before startTime %d", ks[0].open, start)
			}
			all = append(all, ks...)
			start = ks[len(ks)-1].open + 1
		}
		// History starts at the beginning of the day three days back.
		if first := t0.Add(-58 * time.Hour).UnixMilli(); len(all) == 0 || all[0].open != first {
			t.Fatalf("%s: paging from 0 does not start at the history start %d", path, first)
		}
		if want := int((now-all[0].open)/300000) + 1; len(all) != want {
			t.Fatalf("%s: %d bars, want %d", path, len(all), want)
		}
		for i := 1; i < len(all); i++ {
			if all[i].open != all[i-1].open+300000 {
				t.Fatalf("%s: gap or duplicate at %d: %d after %d", path, i, all[i].open, all[i-1].open)
			}
			if all[i].close != all[i].open+299999 {
				t.Fatalf("close time %d for open %d", all[i].close, all[i].open)
			}
			if all[i].h.LessThan(all[i].l) || all[i].h.LessThan(all[i].o) || all[i].l.GreaterThan(all[i].c) {
				t.Fatalf("inconsistent bar %+v", all[i])
			}
		}
		if last := all[len(all)-1]; last.open > now || last.open+300000 <= now {
			t.Fatalf("last bar %d does not hold now %d", last.open, now)
		}
		// endTime bounds a page; with only endTime the page ends there.
		end := all[100].open
		ks := e.klines(path, url.Values{"symbol": {"ETHUSDT"}, "interval": {"5m"}, "limit": {"10"},
			"endTime": {strconv.FormatInt(end, 10)}})
		if len(ks) != 10 || ks[9].open != end || ks[0].open != all[91].open {
			t.Fatalf("endTime page: %d bars, last %d want %d", len(ks), ks[len(ks)-1].open, end)
		}
		ks = e.klines(path, url.Values{"symbol": {"ETHUSDT"}, "interval": {"5m"}, "limit": {"1000"},
			"startTime": {strconv.FormatInt(all[10].open, 10)}, "endTime": {strconv.FormatInt(all[20].open, 10)}})
		if len(ks) != 11 || ks[0].open != all[10].open || ks[10].open != all[20].open {
			t.Fatalf("start+end page: %d bars", len(ks))
		}
		if a, b := ks[3], all[13]; a.open != b.open || !a.o.Equal(b.o) || !a.h.Equal(b.h) || !a.l.Equal(b.l) || !a.c.Equal(b.c) {
			t.Fatalf("same bar differs between pages: %+v vs %+v", ks[3], all[13])
		}
	}
}

func TestDepthAndTrades(t *testing.T) {
	e := newEnv(t)
	var d struct {
		LastUpdateID uint64      `json:"lastUpdateId"`
		Bids         [][2]string `json:"bids"`
		Asks         [][2]string `json:"asks"`
	}
	e.get("/api/v3/depth", url.Values{"symbol": {"BTCUSDT"}, "limit": {"5"}}).expectOK(t).decode(t, &d)
	if len(d.Bids) != 5 || d.LastUpdateID == 0 {
		t.Fatalf("depth: %+v", d)
	}
	var prev decimal.Decimal
	for i, l := range d.Bids {
		p := decimal.RequireFromString(l[0])
		if i > 0 && !p.LessThan(prev) {
			t.Fatalf("bids not descending: %v", d.Bids)
		}
		prev = p
	}
	var tr []restTrade
	e.get("/fapi/v1/trades", url.Values{"symbol": {"SOLUSDT"}, "limit": {"3"}}).expectOK(t).decode(t, &tr)
	if len(tr) != 3 || tr[0].ID >= tr[2].ID {
		t.Fatalf("trades: %+v", tr)
	}
}

func TestStatsAndFundingPaging(t *testing.T) {
	e := newEnv(t)
	now := e.v.Now()
	type row struct {
		Timestamp int64  `json:"timestamp"`
		Ratio     string `json:"longShortRatio"`
		Long      string `json:"longAccount"`
		Short     string `json:"shortAccount"`
	}
	var rows []row
	e.get("/futures/data/globalLongShortAccountRatio", url.Values{"symbol": {"BTCUSDT"}, "period": {"5m"}, "limit": {"12"}}).expectOK(t).decode(t, &rows)
	if len(rows) != 12 {
		t.Fatalf("%d rows", len(rows))
	}
	for i, r := range rows {
		if i > 0 && r.Timestamp != rows[i-1].Timestamp+300000 {
			t.Fatalf("rows not consecutive: %d after %d", r.Timestamp, rows[i-1].Timestamp)
		}
		sum := decimal.RequireFromString(r.Long).Add(decimal.RequireFromString(r.Short))
		if !sum.Equal(decimal.NewFromInt(1)) {
			t.Fatalf("long+short = %s", sum)
		}
	}
	if last := rows[11].Timestamp; last+300000 > now || last+600000 <= now {
		t.Fatalf("last period %d is not the last complete one before %d", last, now)
	}
	start := rows[2].Timestamp
	e.get("/futures/data/openInterestHist", url.Values{"symbol": {"BTCUSDT"}, "period": {"5m"}, "limit": {"3"},
		"startTime": {strconv.FormatInt(start, 10)}}).expectOK(t).decode(t, &rows)
	if len(rows) != 3 || rows[0].Timestamp != start {
		t.Fatalf("startTime page: %+v", rows)
	}
	type rate struct {
		FundingTime int64  `json:"fundingTime"`
		FundingRate string `json:"fundingRate"`
	}
	var rates []rate
	e.get("/fapi/v1/fundingRate", url.Values{"symbol": {"BTCUSDT"}, "limit": {"5"}}).expectOK(t).decode(t, &rates)
	if len(rates) != 5 {
		t.Fatalf("%d funding rates", len(rates))
	}
	for i, r := range rates {
		if r.FundingTime%(8*3600*1000) != 0 || i > 0 && r.FundingTime != rates[i-1].FundingTime+8*3600*1000 {
			t.Fatalf("funding times: %+v", rates)
		}
	}
	if rates[4].FundingTime > now || rates[4].FundingTime+8*3600*1000 <= now {
		t.Fatalf("last funding %d is not the latest before %d", rates[4].FundingTime, now)
	}
	var from []rate
	e.get("/fapi/v1/fundingRate", url.Values{"symbol": {"BTCUSDT"}, "limit": {"2"},
		"startTime": {strconv.FormatInt(rates[1].FundingTime, 10)}}).expectOK(t).decode(t, &from)
	if len(from) != 2 || from[0] != rates[1] || from[1] != rates[2] {
		t.Fatalf("startTime funding page: %+v", from)
	}
}
