package emulator

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// fuzzPaths are the endpoints the fuzz target sends arbitrary query strings to.
var fuzzPaths = []string{
	"/api/v3/depth", "/api/v3/klines", "/api/v3/trades", "/api/v3/aggTrades", "/api/v3/ticker/24hr",
	"/api/v3/exchangeInfo", "/fapi/v1/depth", "/fapi/v1/klines", "/fapi/v1/fundingRate", "/fapi/v1/premiumIndex",
	"/fapi/v1/openInterest", "/futures/data/openInterestHist", "/futures/data/takerlongshortRatio",
	"/fapi/v1/ticker/bookTicker", "/api/v3/ticker/price",
}

// FuzzPublicQuery sends arbitrary parameters to the public endpoints: every answer is a 200 or a 4xx with
// Binance's error body, never a panic or a 5xx.
func FuzzPublicQuery(f *testing.F) {
	seeds := []string{
		"symbol=BTCUSDT", "symbol=BTCUSDT&limit=0", "symbol=BTCUSDT&limit=-5", "symbol=btcusdt&interval=1m",
		"symbol=BTCUSDT&interval=1M&startTime=0&limit=3", "symbol=BTCUSDT&interval=1w&endTime=1",
		"symbol=BTCUSDT&interval=1m&startTime=9999999999999", "symbols=[\"BTCUSDT\",\"ETHUSDT\"]", "symbols=[1]",
		"symbol=BTCUSDT&period=5m&startTime=1&endTime=2", "symbol=BTCUSDT&period=1d&limit=500",
		"symbol=BTCUSDT&fromId=18446744073709551615", "symbol=%zz", "limit=99999999999999999999",
		"symbol=ETHUSDT&interval=1m&startTime=5&endTime=4",
	}
	for i, s := range seeds {
		f.Add(uint8(i), s)
	}
	env := newEnv(f)
	f.Fuzz(func(t *testing.T, which uint8, query string) {
		path := fuzzPaths[int(which)%len(fuzzPaths)]
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.URL.RawQuery = query
		w := httptest.NewRecorder()
		env.s.Handler().ServeHTTP(w, r)
		body, _ := io.ReadAll(w.Body)
		switch {
		case w.Code == http.StatusOK:
		case w.Code >= 400 && w.Code < 500:
			checkShape(t, "error", body)
		default:
			t.Fatalf("%s?%s: status %d: %s", path, query, w.Code, body)
		}
	})
}

// FuzzOrderParams places orders with arbitrary values through the signed endpoints of both markets: every venue
// rejection must map to a Binance error (4xx), never a 5xx.
func FuzzOrderParams(f *testing.F) {
	f.Add(false, "LIMIT", "BUY", "GTC", "0.01", "1000.00", "", "")
	f.Add(true, "MARKET", "SELL", "", "0.001", "", "", "true")
	f.Add(true, "STOP_MARKET", "SELL", "", "", "", "1.0", "")
	f.Add(false, "LIMIT_MAKER", "BUY", "", "1e3", "0.0000001", "", "")
	f.Add(true, "TAKE_PROFIT", "BUY", "GTX", "99999999", "99999999", "1", "false")
	f.Add(false, "STOP_LOSS_LIMIT", "SELL", "FOK", "0.1", "-1", "2", "")
	env := newEnv(f)
	f.Fuzz(func(t *testing.T, futures bool, typ, side, tif, qty, price, stop, reduce string) {
		p := url.Values{"symbol": {"ETHUSDT"}, "type": {typ}, "side": {side}, "timeInForce": {tif},
			"quantity": {qty}, "price": {price}, "stopPrice": {stop}, "reduceOnly": {reduce},
			"timestamp": {strconv.FormatInt(env.v.Now(), 10)}}
		for k, v := range p {
			if v[0] == "" {
				delete(p, k)
			}
		}
		payload := p.Encode()
		payload += "&signature=" + Sign(DemoAPISecret, payload)
		path := "/api/v3/order"
		if futures {
			path = "/fapi/v1/order"
		}
		r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(payload))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("X-MBX-APIKEY", DemoAPIKey)
		w := httptest.NewRecorder()
		env.s.Handler().ServeHTTP(w, r)
		body, _ := io.ReadAll(w.Body)
		switch {
		case w.Code == http.StatusOK:
			// Keep the account usable: cancel what rests.
			_, _ = env.v.CancelAll(context.Background(), DemoAccount, "")
		case w.Code >= 400 && w.Code < 500:
			checkShape(t, "error", body)
		default:
			t.Fatalf("%s %s: status %d: %s", path, payload, w.Code, body)
		}
	})
}
