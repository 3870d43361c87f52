// Package bybit speaks Bybit's v5 API (REST and WebSocket) for spot and USDT-margined linear perpetuals, and serves
// it behind the exchange.v1 contract (Server). This first part covers public market data only; trading, the
// private WebSocket and the wallet are the next part (see README.md). Files follow the one layout of every exchange
// package: constants, enums, urls, errors, http (the REST client), ws, book, parse_market, and server plus
// server_market and server_stream.
package bybit

import "time"

// Identity of the exchange on the hub.
const (
	Key           = 3
	Slug          = "bybit"
	Name          = "Bybit"
	PluginVersion = "0.1.0"
	// SDKVersion is the exchange.v1 minor revision this implementation follows.
	SDKVersion = "1.2"
	Website    = "https://www.bybit.com"
)

// Default endpoints: Bybit's production hosts. Public WebSockets are per category.
const (
	DefaultRESTURL        = "https://api.bybit.com"
	DefaultWSSpotURL      = "wss://stream.bybit.com/v5/public/spot"
	DefaultWSLinearURL    = "wss://stream.bybit.com/v5/public/linear"
	defaultPingInterval   = 20 * time.Second
	defaultReconnectMin   = 250 * time.Millisecond
	defaultReconnectMax   = 30 * time.Second
	defaultRESTTimeout    = 10 * time.Second
	defaultInstrumentsTTL = 5 * time.Minute
)

// Protocol constants.
const (
	// category values.
	catSpot   = "spot"
	catLinear = "linear"

	// Page limits of Bybit's endpoints.
	candlesPageLimit       = 1000
	instrumentsPageLimit   = 1000
	spotTradesPageLimit    = 60
	linearTradesPageLimit  = 1000
	bookDepthLimit         = 1000 // spot and linear: 1..1000 (the WebSocket offers 1, 50, 200, 1000)
	fundingHistoryLimit    = 200
	openInterestPageLimit  = 200
	accountRatioPageLimit  = 500
	analyticsPageLimit     = 200 // what one GetOpenInterestHistory / GetLongShortRatioHistory call returns at most
	streamBookDepthDefault = 50
)

// Logo is Bybit's mark drawn for the hub: a dark tile with an orange bar and the letters.
const Logo = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64">` +
	`<rect width="64" height="64" rx="12" fill="#17181e"/>` +
	`<rect x="40" y="18" width="5" height="28" fill="#f7a600"/>` +
	`<text x="10" y="40" font-family="Arial,Helvetica,sans-serif" font-weight="700" font-size="18" fill="#fff">BY</text></svg>`
