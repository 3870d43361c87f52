package bybit

import "net/url"

// checkBaseURL checks a base URL setting: absolute, http(s) for rest_url, ws(s) for the WebSocket ones.
func checkBaseURL(key, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return badSetting(key, "%q is not an absolute URL", raw)
	}
	want := []string{"ws", "wss"}
	if key == "rest_url" {
		want = []string{"http", "https"}
	}
	if u.Scheme != want[0] && u.Scheme != want[1] {
		return badSetting(key, "%q must use %s or %s", raw, want[0], want[1])
	}
	return nil
}

// Bybit v5 REST paths, relative to the rest_url setting (constants.go has the default base URLs).
const (
	pathMarketInstruments    = "/v5/market/instruments-info"
	pathMarketTickers        = "/v5/market/tickers"
	pathMarketOrderbook      = "/v5/market/orderbook"
	pathMarketKline          = "/v5/market/kline"
	pathMarketRecentTrade    = "/v5/market/recent-trade"
	pathMarketTime           = "/v5/market/time"
	pathMarketFundingHistory = "/v5/market/funding/history"
	pathMarketOpenInterest   = "/v5/market/open-interest"
	pathMarketAccountRatio   = "/v5/market/account-ratio"
)
