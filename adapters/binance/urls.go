package binance

import (
	"fmt"
	"net/url"
	"strings"
)

// Endpoints are the four base URLs the adapter talks to.
type Endpoints struct {
	SpotREST, SpotWS, FuturesREST, FuturesWS string
}

// DefaultEndpoints are Binance's production endpoints.
func DefaultEndpoints() Endpoints {
	return Endpoints{SpotREST: DefaultSpotRESTURL, SpotWS: DefaultSpotWSURL,
		FuturesREST: DefaultFuturesRESTURL, FuturesWS: DefaultFuturesWSURL}
}

func (e Endpoints) rest(m Market) string {
	if m == Futures {
		return e.FuturesREST
	}
	return e.SpotREST
}

func (e Endpoints) ws(m Market) string {
	if m == Futures {
		return e.FuturesWS
	}
	return e.SpotWS
}

func checkURL(key, raw string, schemes ...string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%s: %q is not an absolute URL", key, raw)
	}
	for _, s := range schemes {
		if u.Scheme == s {
			return strings.TrimRight(raw, "/"), nil
		}
	}
	return "", fmt.Errorf("%s: scheme %q is not one of %v", key, u.Scheme, schemes)
}

// combinedStreamURL is base + /stream?streams=a/b/c.
func combinedStreamURL(base string, streams []string) string {
	return strings.TrimRight(base, "/") + "/stream?streams=" + strings.Join(streams, "/")
}

// userStreamURL is base + /ws/<listenKey>.
func userStreamURL(base, listenKey string) string {
	return strings.TrimRight(base, "/") + "/ws/" + listenKey
}

// REST paths.
const (
	pathSpotExchangeInfo = "/api/v3/exchangeInfo"
	pathSpotTicker24h    = "/api/v3/ticker/24hr"
	pathSpotDepth        = "/api/v3/depth"
	pathSpotKlines       = "/api/v3/klines"
	pathSpotTrades       = "/api/v3/trades"
	pathSpotTime         = "/api/v3/time"
	pathSpotOrder        = "/api/v3/order"
	pathSpotOpenOrders   = "/api/v3/openOrders"
	pathSpotAllOrders    = "/api/v3/allOrders"
	pathSpotMyTrades     = "/api/v3/myTrades"
	pathSpotAccount      = "/api/v3/account"
	pathSpotAmend        = "/api/v3/order/cancelReplace"
	pathSpotAmendKeep    = "/api/v3/order/amend/keepPriority"
	pathSpotListenKey    = "/api/v3/userDataStream"

	pathFutExchangeInfo = "/fapi/v1/exchangeInfo"
	pathFutTicker24h    = "/fapi/v1/ticker/24hr"
	pathFutDepth        = "/fapi/v1/depth"
	pathFutKlines       = "/fapi/v1/klines"
	pathFutTrades       = "/fapi/v1/trades"
	pathFutTime         = "/fapi/v1/time"
	pathFutPremiumIndex = "/fapi/v1/premiumIndex"
	pathFutFundingRate  = "/fapi/v1/fundingRate"
	pathFutOIHist       = "/futures/data/openInterestHist"
	pathFutGlobalLS     = "/futures/data/globalLongShortAccountRatio"
	pathFutTopAccLS     = "/futures/data/topLongShortAccountRatio"
	pathFutTopPosLS     = "/futures/data/topLongShortPositionRatio"
	pathFutTakerVol     = "/futures/data/takerlongshortRatio"
	pathFutOrder        = "/fapi/v1/order"
	pathFutOpenOrders   = "/fapi/v1/openOrders"
	pathFutAllOpen      = "/fapi/v1/allOpenOrders"
	pathFutAllOrders    = "/fapi/v1/allOrders"
	pathFutUserTrades   = "/fapi/v1/userTrades"
	pathFutIncome       = "/fapi/v1/income"
	pathFutPositionRisk = "/fapi/v3/positionRisk"
	pathFutLeverage     = "/fapi/v1/leverage"
	pathFutMarginType   = "/fapi/v1/marginType"
	pathFutDual         = "/fapi/v1/positionSide/dual"
	pathFutSymbolConfig = "/fapi/v1/symbolConfig"
	pathFutAccount      = "/fapi/v3/account"
	pathFutListenKey    = "/fapi/v1/listenKey"
	pathFutBatchOrders  = "/fapi/v1/batchOrders"
	pathFutCountdown    = "/fapi/v1/countdownCancelAll"
	pathAPIRestrictions = "/sapi/v1/account/apiRestrictions"

	pathTransfer        = "/sapi/v1/asset/transfer"
	pathFundingAsset    = "/sapi/v1/asset/get-funding-asset"
	pathCoinConfig      = "/sapi/v1/capital/config/getall"
	pathDepositAddress  = "/sapi/v1/capital/deposit/address"
	pathDepositHistory  = "/sapi/v1/capital/deposit/hisrec"
	pathWithdraw        = "/sapi/v1/capital/withdraw/apply"
	pathWithdrawHistory = "/sapi/v1/capital/withdraw/history"
	pathConvertQuote    = "/sapi/v1/convert/getQuote"
	pathConvertAccept   = "/sapi/v1/convert/acceptQuote"
	pathConvertStatus   = "/sapi/v1/convert/orderStatus"
	pathConvertHistory  = "/sapi/v1/convert/tradeFlow"

	// Binance Link (broker) sub-accounts.
	pathBrokerSubAccount      = "/sapi/v1/broker/subAccount"
	pathBrokerSubAccountFut   = "/sapi/v1/broker/subAccount/futures"
	pathBrokerSubAccountAPI   = "/sapi/v1/broker/subAccountApi"
	pathBrokerTransfer        = "/sapi/v1/broker/transfer"
	pathBrokerTransferFutures = "/sapi/v1/broker/transfer/futures"
	pathSubAccountAssets      = "/sapi/v3/sub-account/assets"
)
