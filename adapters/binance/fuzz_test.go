package binance

import (
	"testing"
)

// Each fuzz target feeds arbitrary bytes to one parser: it may fail, never panic.

func seed(f *testing.F, files ...string) {
	for _, name := range files {
		f.Add(fixture(f, name))
	}
	for _, b := range badBodies {
		f.Add([]byte(b))
	}
}

func FuzzParseExchangeInfo(f *testing.F) {
	seed(f, "spot_exchangeInfo.json", "futures_exchangeInfo.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseExchangeInfo(Spot, b)
		_, _ = ParseExchangeInfo(Futures, b)
	})
}

func FuzzParseTickers24h(f *testing.F) {
	seed(f, "spot_ticker_24hr.json")
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseTickers24h(Spot, b) })
}

func FuzzParsePremiumIndex(f *testing.F) {
	seed(f, "futures_premiumIndex.json")
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParsePremiumIndex(b) })
}

func FuzzParseDepth(f *testing.F) {
	seed(f, "spot_depth.json", "futures_depth.json")
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseDepth(b) })
}

func FuzzParseKlines(f *testing.F) {
	seed(f, "spot_klines.json")
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseKlines(b, 0) })
}

func FuzzParseTrades(f *testing.F) {
	seed(f, "spot_trades.json")
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseTrades(b) })
}

func FuzzParseServerTime(f *testing.F) {
	f.Add([]byte(`{"serverTime":1}`))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseServerTime(b) })
}

func FuzzParseFuturesSeries(f *testing.F) {
	seed(f, "futures_fundingRate.json", "futures_openInterestHist.json", "futures_longShortRatio.json",
		"futures_topLongShortPositionRatio.json", "futures_takerlongshortRatio.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseFundingRates(b)
		_, _ = ParseOpenInterestHist(b)
		_, _ = ParseLongShortRatio(b)
		_, _ = ParseTakerVolume(b)
	})
}

func FuzzParseOrder(f *testing.F) {
	seed(f, "spot_order_full.json", "futures_order.json", "futures_open_orders.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseOrder(Spot, b)
		_, _ = ParseOrder(Futures, b)
		_, _ = ParseOrders(Futures, b)
		_, _ = ParseAlgoOrder(b)
		_, _ = ParseAlgoOrders(b)
	})
}

func FuzzParseAccount(f *testing.F) {
	seed(f, "futures_positionRisk.json")
	f.Add([]byte(`{"balances":[{"asset":"USDT","free":"1","locked":"0"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParsePositionRisk(b)
		_, _ = ParseSpotAccount(b)
		_, _ = ParseFuturesAccount(b)
		_, _ = ParseCrossMarginRatio(b)
		_, _ = ParseFundingAssets(b)
		_, _ = ParseFills(Futures, b)
		_, _ = ParseListenKey(b)
		_, _ = ParseLeverage(b)
		_, _ = ParseSymbolConfig(b)
		_, _ = ParseDualSide(b)
	})
}

func FuzzParseAPIError(f *testing.F) {
	seed(f, "error.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		e := parseAPIError(400, b, nil)
		_ = e.ToSDK()
	})
}

func FuzzParseBroker(f *testing.F) {
	for _, k := range []string{"subAccountCreated", "subAccounts", "apiKey", "transfer", "futuresTransfer", "transfers", "futuresTransfers", "assets"} {
		f.Add(brokerFixture(f, k))
	}
	for _, b := range badBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseSubAccountCreated(b)
		_, _ = ParseSubAccounts(b)
		_, _ = ParseSubAccountAPIKey(b)
		_, _, _ = ParseBrokerTransferID(b)
		_, _ = ParseBrokerTransfers(b)
		_, _ = ParseBrokerFuturesTransfers(b)
		_, _ = ParseSubAccountAssets(b)
	})
}

func FuzzParseIncome(f *testing.F) {
	seed(f, "futures_income.json")
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseIncome(b) })
}
