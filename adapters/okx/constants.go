// Package okx speaks OKX's v5 API (REST and WebSocket) for spot and USDT-margined perpetual swaps, and serves it
// behind the exchange.v1 contract (Server). Files follow the one layout of every exchange package: constants,
// credentials (signing), enums, urls, errors, http (the REST client and its generic calls), history (cursor pages),
// ws, book, contracts, parse_market/parse_trading/parse_wallet, and server plus server_market, server_trading,
// server_wallet and server_stream.
package okx

import "time"

// Identity of the exchange on the hub.
const (
	Key           = 2
	Slug          = "okx"
	Name          = "OKX"
	PluginVersion = "1.2.0"
	// SDKVersion is the exchange.v1 minor revision this implementation follows.
	SDKVersion = "1.2"
	Website    = "https://www.okx.com"
)

// Default endpoints: OKX's production hosts.
const (
	DefaultRESTURL       = "https://www.okx.com"
	DefaultWSPublicURL   = "wss://ws.okx.com:8443/ws/v5/public"
	DefaultWSPrivateURL  = "wss://ws.okx.com:8443/ws/v5/private"
	DefaultWSBusinessURL = "wss://ws.okx.com:8443/ws/v5/business"
)

// Protocol constants.
const (
	// instType values.
	instSpot      = "SPOT"
	instSwap      = "SWAP"
	instContracts = "CONTRACTS"

	// Page limits of OKX's endpoints.
	candlesPageLimit        = 300
	historyCandlesPageLimit = 100
	tradesPageLimit         = 500
	bookDepthLimit          = 400
	ordersPageLimit         = 100
	fundingHistoryLimit     = 100
	rubikLimit              = 100
	batchCancelLimit        = 20
	batchPlaceLimit         = 20

	// clOrdId and algoClOrdId: 1 to 32 letters and digits.
	clientIDMaxLen  = 32
	clientIDPattern = "^[a-zA-Z0-9]{1,32}$"

	// checksumLevels is how many levels per side OKX's book checksum covers.
	checksumLevels = 25

	// wsIdle is how long a WebSocket may stay silent before we send a text "ping"; OKX closes a connection that
	// is silent for 30 s.
	wsIdle = 25 * time.Second

	// Funding account and trading account ids in /api/v5/asset/transfer.
	accountFunding = "6"
	accountTrading = "18"

	// Bill types of the funding account for transfers with the trading account.
	billFromTrading = "130"
	billToTrading   = "131"
)

// Logo is OKX's mark drawn for the hub: a dark tile with a checkerboard of five squares.
const Logo = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64">` +
	`<rect width="64" height="64" rx="12" fill="#000"/>` +
	`<g fill="#fff"><rect x="12" y="12" width="12" height="12"/><rect x="40" y="12" width="12" height="12"/>` +
	`<rect x="26" y="26" width="12" height="12"/><rect x="12" y="40" width="12" height="12"/>` +
	`<rect x="40" y="40" width="12" height="12"/></g></svg>`
