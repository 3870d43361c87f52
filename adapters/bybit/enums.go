package bybit

import (
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// categoryOf is Bybit's category for a contract market type: spot, or linear for the USDT perpetuals.
func categoryOf(mt exchangev1.MarketType) (string, error) {
	switch mt {
	case exchangev1.MarketType_MARKET_TYPE_SPOT:
		return catSpot, nil
	case exchangev1.MarketType_MARKET_TYPE_SWAP:
		return catLinear, nil
	}
	return "", sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "market_type", "market type %v is not offered", mt)
}

// sideOf maps Bybit's Buy/Sell (the taker's side on trades).
func sideOf(s string) exchangev1.Side {
	switch s {
	case "Buy":
		return exchangev1.Side_SIDE_BUY
	case "Sell":
		return exchangev1.Side_SIDE_SELL
	}
	return exchangev1.Side_SIDE_UNSPECIFIED
}

// intervalOf maps the contract's candle intervals to Bybit's kline intervals (the spec's exchange-3 mapping of
// chart resolutions: minutes as numbers, D, W and M). Bybit has no 8h and no 3d; its days, weeks (from Monday)
// and months start at 00:00 UTC.
var intervalOf = map[string]string{
	"1m": "1", "3m": "3", "5m": "5", "15m": "15", "30m": "30",
	"1h": "60", "2h": "120", "4h": "240", "6h": "360", "12h": "720",
	"1d": "D", "1w": "W", "1M": "M",
}

// intervals lists the contract intervals offered, shortest first.
var intervals = []string{"1m", "3m", "5m", "15m", "30m", "1h", "2h", "4h", "6h", "12h", "1d", "1w", "1M"}

// intervalOfBybit maps a Bybit kline interval back (WebSocket topics).
var intervalOfBybit = func() map[string]string {
	m := make(map[string]string, len(intervalOf))
	for k, v := range intervalOf {
		m[v] = k
	}
	return m
}()

var fixedMs = map[string]int64{
	"1m": 60_000, "3m": 180_000, "5m": 300_000, "15m": 900_000, "30m": 1_800_000,
	"1h": 3_600_000, "2h": 7_200_000, "4h": 14_400_000, "6h": 21_600_000, "12h": 43_200_000,
	"1d": 86_400_000, "1w": 7 * 86_400_000,
}

// intervalEnd is when the candle of interval opening at start closes (months are calendar months in UTC); an
// unknown interval never closes.
func intervalEnd(interval string, start int64) int64 {
	if interval == "1M" {
		return time.UnixMilli(start).UTC().AddDate(0, 1, 0).UnixMilli()
	}
	if ms, ok := fixedMs[interval]; ok {
		return start + ms
	}
	return 1<<63 - 1
}

// periodOf maps analytics periods to Bybit's intervalTime (open-interest) and period (account-ratio) codes.
var periodOf = map[string]string{"5m": "5min", "15m": "15min", "30m": "30min", "1h": "1h", "4h": "4h", "1d": "1d"}

// periods lists the analytics periods offered.
var periods = []string{"5m", "15m", "30m", "1h", "4h", "1d"}
