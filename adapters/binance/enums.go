package binance

import (
	"fmt"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// Market is which Binance API family a call goes to.
type Market int

const (
	Spot Market = iota + 1
	Futures
)

func (m Market) String() string {
	if m == Futures {
		return "futures"
	}
	return "spot"
}

func marketOf(mt exchangev1.MarketType) (Market, error) {
	switch mt {
	case exchangev1.MarketType_MARKET_TYPE_SPOT:
		return Spot, nil
	case exchangev1.MarketType_MARKET_TYPE_SWAP:
		return Futures, nil
	}
	return 0, fmt.Errorf("market type %v is not supported", mt)
}

func (m Market) proto() exchangev1.MarketType {
	if m == Futures {
		return exchangev1.MarketType_MARKET_TYPE_SWAP
	}
	return exchangev1.MarketType_MARKET_TYPE_SPOT
}

func sideToWire(s exchangev1.Side) (string, bool) {
	switch s {
	case exchangev1.Side_SIDE_BUY:
		return "BUY", true
	case exchangev1.Side_SIDE_SELL:
		return "SELL", true
	}
	return "", false
}

func sideFromWire(s string) exchangev1.Side {
	switch s {
	case "BUY":
		return exchangev1.Side_SIDE_BUY
	case "SELL":
		return exchangev1.Side_SIDE_SELL
	}
	return exchangev1.Side_SIDE_UNSPECIFIED
}

// takerSide: Binance's m=true means the buyer was the maker, so the taker sold.
func takerSide(buyerMaker bool) exchangev1.Side {
	if buyerMaker {
		return exchangev1.Side_SIDE_SELL
	}
	return exchangev1.Side_SIDE_BUY
}

func orderStatusFromWire(s string) exchangev1.OrderStatus {
	switch s {
	case "NEW", "PENDING_NEW":
		return exchangev1.OrderStatus_ORDER_STATUS_NEW
	case "PARTIALLY_FILLED":
		return exchangev1.OrderStatus_ORDER_STATUS_PARTIALLY_FILLED
	case "FILLED":
		return exchangev1.OrderStatus_ORDER_STATUS_FILLED
	case "CANCELED", "PENDING_CANCEL":
		return exchangev1.OrderStatus_ORDER_STATUS_CANCELLED
	case "REJECTED":
		return exchangev1.OrderStatus_ORDER_STATUS_REJECTED
	case "EXPIRED", "EXPIRED_IN_MATCH":
		return exchangev1.OrderStatus_ORDER_STATUS_EXPIRED
	}
	return exchangev1.OrderStatus_ORDER_STATUS_UNSPECIFIED
}

func orderTypeFromWire(t string) exchangev1.OrderType {
	switch t {
	case "LIMIT", "LIMIT_MAKER":
		return exchangev1.OrderType_ORDER_TYPE_LIMIT
	case "MARKET":
		return exchangev1.OrderType_ORDER_TYPE_MARKET
	case "STOP_MARKET", "STOP_LOSS":
		return exchangev1.OrderType_ORDER_TYPE_STOP_MARKET
	case "TAKE_PROFIT_MARKET", "TAKE_PROFIT":
		return exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_MARKET
	case "STOP", "STOP_LOSS_LIMIT":
		return exchangev1.OrderType_ORDER_TYPE_STOP_LIMIT
	case "TAKE_PROFIT_LIMIT":
		return exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_LIMIT
	}
	return exchangev1.OrderType_ORDER_TYPE_UNSPECIFIED
}

// isConditional: futures order types that wait for a trigger.
func isConditional(t string) bool {
	switch t {
	case "STOP_MARKET", "TAKE_PROFIT_MARKET", "STOP", "TAKE_PROFIT", "TRAILING_STOP_MARKET":
		return true
	}
	return false
}

func tifFromWire(t, typ string) exchangev1.TimeInForce {
	if typ == "LIMIT_MAKER" {
		return exchangev1.TimeInForce_TIME_IN_FORCE_POST_ONLY
	}
	switch t {
	case "GTC":
		return exchangev1.TimeInForce_TIME_IN_FORCE_GTC
	case "GTD":
		return exchangev1.TimeInForce_TIME_IN_FORCE_GTD
	case "IOC":
		return exchangev1.TimeInForce_TIME_IN_FORCE_IOC
	case "FOK":
		return exchangev1.TimeInForce_TIME_IN_FORCE_FOK
	case "GTX":
		return exchangev1.TimeInForce_TIME_IN_FORCE_POST_ONLY
	}
	return exchangev1.TimeInForce_TIME_IN_FORCE_UNSPECIFIED
}

func positionSideFromWire(s string) exchangev1.PositionSide {
	switch s {
	case "BOTH":
		return exchangev1.PositionSide_POSITION_SIDE_NET
	case "LONG":
		return exchangev1.PositionSide_POSITION_SIDE_LONG
	case "SHORT":
		return exchangev1.PositionSide_POSITION_SIDE_SHORT
	}
	return exchangev1.PositionSide_POSITION_SIDE_UNSPECIFIED
}

func positionSideToWire(s exchangev1.PositionSide) string {
	switch s {
	case exchangev1.PositionSide_POSITION_SIDE_LONG:
		return "LONG"
	case exchangev1.PositionSide_POSITION_SIDE_SHORT:
		return "SHORT"
	case exchangev1.PositionSide_POSITION_SIDE_NET:
		return "BOTH"
	}
	return ""
}

func marginModeFromWire(s string) exchangev1.MarginMode {
	switch s {
	case "cross", "CROSSED", "crossed", "CROSS":
		return exchangev1.MarginMode_MARGIN_MODE_CROSS
	case "isolated", "ISOLATED":
		return exchangev1.MarginMode_MARGIN_MODE_ISOLATED
	}
	return exchangev1.MarginMode_MARGIN_MODE_UNSPECIFIED
}

func workingTypeToWire(t exchangev1.TriggerPriceType) (string, bool) {
	switch t {
	case exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_UNSPECIFIED, exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST:
		return "CONTRACT_PRICE", true
	case exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK:
		return "MARK_PRICE", true
	}
	return "", false
}

func workingTypeFromWire(s string) exchangev1.TriggerPriceType {
	if s == "MARK_PRICE" {
		return exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK
	}
	return exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST
}

func instrumentStatusFromWire(s string) exchangev1.InstrumentStatus {
	switch s {
	case "TRADING":
		return exchangev1.InstrumentStatus_INSTRUMENT_STATUS_TRADING
	case "PRE_TRADING", "PENDING_TRADING":
		return exchangev1.InstrumentStatus_INSTRUMENT_STATUS_PRE_LISTING
	case "BREAK", "HALT", "AUCTION_MATCH", "PRE_DELIVERING", "DELIVERING", "POST_TRADING":
		return exchangev1.InstrumentStatus_INSTRUMENT_STATUS_SUSPENDED
	case "DELIVERED", "CLOSE", "SETTLING", "END_OF_DAY":
		return exchangev1.InstrumentStatus_INSTRUMENT_STATUS_DELISTED
	}
	return exchangev1.InstrumentStatus_INSTRUMENT_STATUS_UNSPECIFIED
}

func validInterval(m Market, iv string) bool {
	for _, x := range Intervals {
		if x == iv {
			return !(iv == "1s" && m == Futures)
		}
	}
	return false
}

func validPeriod(p string) bool {
	for _, x := range Periods {
		if x == p {
			return true
		}
	}
	return false
}

// priceMatchWire: exchange.v1 PriceMatch <-> Binance USD-M futures priceMatch.
var priceMatchWire = map[exchangev1.PriceMatch]string{
	exchangev1.PriceMatch_PRICE_MATCH_QUEUE: "QUEUE", exchangev1.PriceMatch_PRICE_MATCH_QUEUE_5: "QUEUE_5",
	exchangev1.PriceMatch_PRICE_MATCH_QUEUE_10: "QUEUE_10", exchangev1.PriceMatch_PRICE_MATCH_QUEUE_20: "QUEUE_20",
	exchangev1.PriceMatch_PRICE_MATCH_OPPONENT: "OPPONENT", exchangev1.PriceMatch_PRICE_MATCH_OPPONENT_5: "OPPONENT_5",
	exchangev1.PriceMatch_PRICE_MATCH_OPPONENT_10: "OPPONENT_10", exchangev1.PriceMatch_PRICE_MATCH_OPPONENT_20: "OPPONENT_20",
}

func priceMatchToWire(p exchangev1.PriceMatch) (string, bool) {
	s, ok := priceMatchWire[p]
	return s, ok
}

// priceMatchFromWire reads an order's priceMatch ("NONE", absent or unknown: unspecified).
func priceMatchFromWire(s string) exchangev1.PriceMatch {
	for k, v := range priceMatchWire {
		if v == s {
			return k
		}
	}
	return exchangev1.PriceMatch_PRICE_MATCH_UNSPECIFIED
}
