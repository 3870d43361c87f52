// Package binance is the exhub adapter for Binance spot and USDT-M perpetual futures. It speaks Binance's own wire
// protocol (REST, WebSocket streams, HMAC-SHA256 signing, weight-based rate limits) and turns it into exchange.v1
// types. The files follow one concern each: constants, credentials, enums, parsing, urls, http, ws, book, signing,
// errors, and the exchange.v1 server (exchange.go, stream.go, trading.go, wallet.go, account.go).
package binance

import "time"

// Platform identity.
const (
	ExchangeKey   = 1
	Slug          = "binance"
	Name          = "Binance"
	PluginVersion = "1.2.0"
	Website       = "https://www.binance.com"
	// SDKVersion is the exchange.v1 revision the plugin follows.
	SDKVersion = "1.2"
)

// Client order ids Binance accepts (newClientOrderId), and the batch sizes of /fapi/v1/batchOrders.
const (
	ClientIDMaxLen        = 36
	ClientIDPattern       = `^[.A-Z:/a-z0-9_-]{1,36}$`
	FuturesBatchPlaceMax  = 5
	FuturesBatchCancelMax = 10
)

// Default endpoints: Binance's production hosts.
const (
	DefaultSpotRESTURL    = "https://api.binance.com"
	DefaultSpotWSURL      = "wss://stream.binance.com:9443"
	DefaultFuturesRESTURL = "https://fapi.binance.com"
	DefaultFuturesWSURL   = "wss://fstream.binance.com"
)

// Setting keys accepted by Configure.
const (
	SettingSpotRESTURL    = "spot_rest_url"
	SettingSpotWSURL      = "spot_ws_url"
	SettingFuturesRESTURL = "futures_rest_url"
	SettingFuturesWSURL   = "futures_ws_url"
	SettingHTTPTimeout    = "http_timeout"
	SettingRecvWindow     = "recv_window"
	SettingWSMaxLifetime  = "ws_max_lifetime"
)

// Page limits per call, as Binance documents them.
const (
	SpotKlineLimit       = 1000
	FuturesKlineLimit    = 1500
	TradesLimit          = 1000
	SpotDepthLimit       = 5000
	FuturesDepthLimit    = 1000
	FundingHistoryLimit  = 1000
	FuturesDataLimit     = 500
	OrderHistoryLimit    = 1000
	FillsLimit           = 1000
	IncomeLimit          = 1000
	DefaultRecvWindow    = 5000 * time.Millisecond
	DefaultHTTPTimeout   = 10 * time.Second
	DefaultWSMaxLifetime = 23*time.Hour + 50*time.Minute
	listenKeyKeepalive   = 30 * time.Minute
	defaultBookDepth     = 20
	maxStreamsPerConn    = 200
	userAgent            = "exhub-binance/" + PluginVersion
	headerAPIKey         = "X-MBX-APIKEY"
	headerUsedWeight     = "X-MBX-USED-WEIGHT-1M"
	headerRetryAfter     = "Retry-After"
)

// Intervals Binance serves for klines; 1s is spot only.
var Intervals = []string{"1s", "1m", "3m", "5m", "15m", "30m", "1h", "2h", "4h", "6h", "8h", "12h", "1d", "3d", "1w", "1M"}

// Periods of the futures/data statistics endpoints.
var Periods = []string{"5m", "15m", "30m", "1h", "2h", "4h", "6h", "12h", "1d"}
