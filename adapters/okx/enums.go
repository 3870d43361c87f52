package okx

import (
	"strings"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// instTypeOf is OKX's instType for a contract market type.
func instTypeOf(mt exchangev1.MarketType) (string, error) {
	switch mt {
	case exchangev1.MarketType_MARKET_TYPE_SPOT:
		return instSpot, nil
	case exchangev1.MarketType_MARKET_TYPE_SWAP:
		return instSwap, nil
	}
	return "", sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "market_type", "market type %v is not offered", mt)
}

// marketTypeOf maps an OKX instType back; unknown types are UNSPECIFIED.
func marketTypeOf(instType string) exchangev1.MarketType {
	switch instType {
	case instSpot:
		return exchangev1.MarketType_MARKET_TYPE_SPOT
	case instSwap:
		return exchangev1.MarketType_MARKET_TYPE_SWAP
	}
	return exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED
}

// marketTypeOfSymbol guesses the market type from OKX's instrument id: swaps end in -SWAP.
func marketTypeOfSymbol(instID string) exchangev1.MarketType {
	if strings.HasSuffix(instID, "-SWAP") {
		return exchangev1.MarketType_MARKET_TYPE_SWAP
	}
	return exchangev1.MarketType_MARKET_TYPE_SPOT
}

func sideOf(s string) exchangev1.Side {
	switch s {
	case "buy":
		return exchangev1.Side_SIDE_BUY
	case "sell":
		return exchangev1.Side_SIDE_SELL
	}
	return exchangev1.Side_SIDE_UNSPECIFIED
}

func sideStr(s exchangev1.Side) (string, error) {
	switch s {
	case exchangev1.Side_SIDE_BUY:
		return "buy", nil
	case exchangev1.Side_SIDE_SELL:
		return "sell", nil
	}
	return "", sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "side", "side is required")
}

func posSideOf(s string) exchangev1.PositionSide {
	switch s {
	case "long":
		return exchangev1.PositionSide_POSITION_SIDE_LONG
	case "short":
		return exchangev1.PositionSide_POSITION_SIDE_SHORT
	case "net":
		return exchangev1.PositionSide_POSITION_SIDE_NET
	}
	return exchangev1.PositionSide_POSITION_SIDE_UNSPECIFIED
}

// posSideStr is OKX's posSide; "" for NET/UNSPECIFIED (OKX then uses net).
func posSideStr(p exchangev1.PositionSide) string {
	switch p {
	case exchangev1.PositionSide_POSITION_SIDE_LONG:
		return "long"
	case exchangev1.PositionSide_POSITION_SIDE_SHORT:
		return "short"
	}
	return ""
}

// orderStatusOf maps OKX order states.
func orderStatusOf(state string, filled bool) exchangev1.OrderStatus {
	switch state {
	case "live":
		return exchangev1.OrderStatus_ORDER_STATUS_NEW
	case "partially_filled":
		return exchangev1.OrderStatus_ORDER_STATUS_PARTIALLY_FILLED
	case "filled":
		return exchangev1.OrderStatus_ORDER_STATUS_FILLED
	case "canceled", "mmp_canceled":
		return exchangev1.OrderStatus_ORDER_STATUS_CANCELLED
	}
	return exchangev1.OrderStatus_ORDER_STATUS_UNSPECIFIED
}

// orderTypeOf maps OKX's ordType to the contract's type and time in force.
func orderTypeOf(ordType string) (exchangev1.OrderType, exchangev1.TimeInForce) {
	switch ordType {
	case "market", "optimal_limit_ioc":
		return exchangev1.OrderType_ORDER_TYPE_MARKET, exchangev1.TimeInForce_TIME_IN_FORCE_IOC
	case "limit":
		return exchangev1.OrderType_ORDER_TYPE_LIMIT, exchangev1.TimeInForce_TIME_IN_FORCE_GTC
	case "post_only":
		return exchangev1.OrderType_ORDER_TYPE_LIMIT, exchangev1.TimeInForce_TIME_IN_FORCE_POST_ONLY
	case "ioc":
		return exchangev1.OrderType_ORDER_TYPE_LIMIT, exchangev1.TimeInForce_TIME_IN_FORCE_IOC
	case "fok":
		return exchangev1.OrderType_ORDER_TYPE_LIMIT, exchangev1.TimeInForce_TIME_IN_FORCE_FOK
	}
	return exchangev1.OrderType_ORDER_TYPE_UNSPECIFIED, exchangev1.TimeInForce_TIME_IN_FORCE_UNSPECIFIED
}

// ordTypeStr is OKX's ordType for a contract order type and time in force.
func ordTypeStr(t exchangev1.OrderType, tif exchangev1.TimeInForce) (string, error) {
	switch t {
	case exchangev1.OrderType_ORDER_TYPE_MARKET:
		return "market", nil
	case exchangev1.OrderType_ORDER_TYPE_LIMIT:
		switch tif {
		case exchangev1.TimeInForce_TIME_IN_FORCE_GTC, exchangev1.TimeInForce_TIME_IN_FORCE_UNSPECIFIED:
			return "limit", nil
		case exchangev1.TimeInForce_TIME_IN_FORCE_IOC:
			return "ioc", nil
		case exchangev1.TimeInForce_TIME_IN_FORCE_FOK:
			return "fok", nil
		case exchangev1.TimeInForce_TIME_IN_FORCE_POST_ONLY:
			return "post_only", nil
		case exchangev1.TimeInForce_TIME_IN_FORCE_GTD:
			return "", sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED, "time_in_force", "OKX has no good-till-date orders")
		}
	}
	return "", sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "type", "order type %v with %v is not supported by PlaceOrder", t, tif)
}

func triggerTypeOf(s string) exchangev1.TriggerPriceType {
	switch s {
	case "last", "":
		return exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST
	case "mark":
		return exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK
	case "index":
		return exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_INDEX
	}
	return exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_UNSPECIFIED
}

func triggerTypeStr(t exchangev1.TriggerPriceType) string {
	switch t {
	case exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK:
		return "mark"
	case exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_INDEX:
		return "index"
	}
	return "last"
}

func marginModeOf(s string) exchangev1.MarginMode {
	switch s {
	case "cross":
		return exchangev1.MarginMode_MARGIN_MODE_CROSS
	case "isolated":
		return exchangev1.MarginMode_MARGIN_MODE_ISOLATED
	}
	return exchangev1.MarginMode_MARGIN_MODE_UNSPECIFIED
}

func marginModeStr(m exchangev1.MarginMode) string {
	if m == exchangev1.MarginMode_MARGIN_MODE_ISOLATED {
		return "isolated"
	}
	return "cross"
}

func positionModeOf(s string) exchangev1.PositionMode {
	switch s {
	case "long_short_mode":
		return exchangev1.PositionMode_POSITION_MODE_HEDGE
	case "net_mode":
		return exchangev1.PositionMode_POSITION_MODE_ONE_WAY
	}
	return exchangev1.PositionMode_POSITION_MODE_UNSPECIFIED
}

func positionModeStr(m exchangev1.PositionMode) (string, error) {
	switch m {
	case exchangev1.PositionMode_POSITION_MODE_HEDGE:
		return "long_short_mode", nil
	case exchangev1.PositionMode_POSITION_MODE_ONE_WAY:
		return "net_mode", nil
	}
	return "", sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "mode", "position mode is required")
}

func algoStatusOf(state string) exchangev1.AlgoOrderStatus {
	switch state {
	case "live", "pause":
		return exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_WAITING
	case "effective", "partially_effective":
		return exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_TRIGGERED
	case "canceled":
		return exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_CANCELLED
	case "order_failed", "partially_failed":
		return exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_FAILED
	}
	return exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_UNSPECIFIED
}

// barOf maps the contract's interval to OKX's bar code; days, weeks and months use the UTC-aligned codes.
var barOf = map[string]string{
	"1m": "1m", "3m": "3m", "5m": "5m", "15m": "15m", "30m": "30m",
	"1h": "1H", "2h": "2H", "4h": "4H", "6h": "6Hutc", "12h": "12Hutc",
	"1d": "1Dutc", "3d": "3Dutc", "1w": "1Wutc", "1M": "1Mutc",
}

// intervals lists the contract intervals, shortest first.
var intervals = []string{"1m", "3m", "5m", "15m", "30m", "1h", "2h", "4h", "6h", "12h", "1d", "3d", "1w", "1M"}

// rubikPeriodOf maps analytics periods to rubik's period codes.
var rubikPeriodOf = map[string]string{"5m": "5m", "1h": "1H", "1d": "1D"}

// candleChannelOf maps the contract interval to the business WebSocket channel name.
func candleChannelOf(interval string) (string, bool) {
	b, ok := barOf[interval]
	if !ok {
		return "", false
	}
	return "candle" + b, true
}

func transferStatusOf(state string) exchangev1.TransferStatus {
	switch state {
	case "success":
		return exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS
	case "failed":
		return exchangev1.TransferStatus_TRANSFER_STATUS_FAILED
	}
	return exchangev1.TransferStatus_TRANSFER_STATUS_PENDING
}

func depositStatusOf(state string) exchangev1.TransferStatus {
	switch state {
	case "2":
		return exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS
	case "0", "1", "8", "11", "12", "13", "14", "17":
		return exchangev1.TransferStatus_TRANSFER_STATUS_PENDING
	}
	return exchangev1.TransferStatus_TRANSFER_STATUS_FAILED
}

func withdrawalStatusOf(state string) exchangev1.TransferStatus {
	switch state {
	case "2":
		return exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS
	case "-1", "-2", "-3":
		return exchangev1.TransferStatus_TRANSFER_STATUS_FAILED
	}
	return exchangev1.TransferStatus_TRANSFER_STATUS_PENDING
}
