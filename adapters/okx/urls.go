package okx

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

// OKX v5 REST paths, relative to the rest_url setting (constants.go has the default base URLs).
const (
	// account
	pathAccountBalance         = "/api/v5/account/balance"
	pathAccountBills           = "/api/v5/account/bills"
	pathAccountConfig          = "/api/v5/account/config"
	pathAccountLeverageInfo    = "/api/v5/account/leverage-info"
	pathAccountMaxSize         = "/api/v5/account/max-size"
	pathAccountPositions       = "/api/v5/account/positions"
	pathAccountSetLeverage     = "/api/v5/account/set-leverage"
	pathAccountSetPositionMode = "/api/v5/account/set-position-mode"
	// asset
	pathAssetBalances             = "/api/v5/asset/balances"
	pathAssetBills                = "/api/v5/asset/bills"
	pathAssetConvertEstimateQuote = "/api/v5/asset/convert/estimate-quote"
	pathAssetConvertHistory       = "/api/v5/asset/convert/history"
	pathAssetConvertTrade         = "/api/v5/asset/convert/trade"
	pathAssetCurrencies           = "/api/v5/asset/currencies"
	pathAssetDepositAddress       = "/api/v5/asset/deposit-address"
	pathAssetDepositHistory       = "/api/v5/asset/deposit-history"
	pathAssetTransfer             = "/api/v5/asset/transfer"
	pathAssetTransferState        = "/api/v5/asset/transfer-state"
	pathAssetWithdrawal           = "/api/v5/asset/withdrawal"
	pathAssetWithdrawalHistory    = "/api/v5/asset/withdrawal-history"

	// Non-disclosed broker sub-accounts and the master's reads of them.
	pathBrokerCreateSubAccount = "/api/v5/broker/nd/create-subaccount"
	pathBrokerSubAccountInfo   = "/api/v5/broker/nd/subaccount-info"
	pathBrokerSubAccountAPIKey = "/api/v5/broker/nd/subaccount/apikey"
	pathSubAccountBalances     = "/api/v5/account/subaccount/balances"
	pathSubAccountFunding      = "/api/v5/asset/subaccount/balances"
	// market
	pathMarketBooks          = "/api/v5/market/books"
	pathMarketCandles        = "/api/v5/market/candles"
	pathMarketHistoryCandles = "/api/v5/market/history-candles"
	pathMarketIndexTickers   = "/api/v5/market/index-tickers"
	pathMarketTicker         = "/api/v5/market/ticker"
	pathMarketTickers        = "/api/v5/market/tickers"
	pathMarketTrades         = "/api/v5/market/trades"
	// public
	pathPublicFundingRate        = "/api/v5/public/funding-rate"
	pathPublicFundingRateHistory = "/api/v5/public/funding-rate-history"
	pathPublicInstruments        = "/api/v5/public/instruments"
	pathPublicMarkPrice          = "/api/v5/public/mark-price"
	pathPublicOpenInterest       = "/api/v5/public/open-interest"
	pathPublicTime               = "/api/v5/public/time"
	// rubik
	pathRubikStatContractsLongShortAccountRatio = "/api/v5/rubik/stat/contracts/long-short-account-ratio"
	pathRubikStatContractsOpenInterestHistory   = "/api/v5/rubik/stat/contracts/open-interest-history"
	pathRubikStatContractsOpenInterestVolume    = "/api/v5/rubik/stat/contracts/open-interest-volume"
	pathRubikStatTakerVolume                    = "/api/v5/rubik/stat/taker-volume"
	// trade
	pathTradeAmendOrder        = "/api/v5/trade/amend-order"
	pathTradeBatchOrders       = "/api/v5/trade/batch-orders"
	pathTradeCancelAlgos       = "/api/v5/trade/cancel-algos"
	pathTradeCancelAllAfter    = "/api/v5/trade/cancel-all-after"
	pathTradeCancelBatchOrders = "/api/v5/trade/cancel-batch-orders"
	pathTradeCancelOrder       = "/api/v5/trade/cancel-order"
	pathTradeClosePosition     = "/api/v5/trade/close-position"
	pathTradeFills             = "/api/v5/trade/fills"
	pathTradeOrder             = "/api/v5/trade/order"
	pathTradeOrderAlgo         = "/api/v5/trade/order-algo"
	pathTradeOrdersAlgoHistory = "/api/v5/trade/orders-algo-history"
	pathTradeOrdersAlgoPending = "/api/v5/trade/orders-algo-pending"
	pathTradeOrdersHistory     = "/api/v5/trade/orders-history"
	pathTradeOrdersPending     = "/api/v5/trade/orders-pending"
)
