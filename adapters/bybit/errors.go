package bybit

import (
	"strconv"
	"strings"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// bybitReasons maps Bybit retCodes to contract reasons. Codes not listed fall back by family (see reasonFor).
var bybitReasons = map[int64]exchangev1.ErrorReason{
	// Server timeouts: the request may have executed ("Server Timeout", "Internal System Error"). Reads downgrade
	// them to EXCHANGE_UNAVAILABLE (see Client.Get); writes keep them, resolved by orderLinkId (Client.Write).
	10000:  exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME,
	10016:  exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME,
	170007: exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME, // spot: timeout waiting for the backend
	// Parameters.
	10001: exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT,
	// Clock: X-BAPI-TIMESTAMP outside the recv window.
	10002: exchangev1.ErrorReason_ERROR_REASON_CLOCK_SKEW,
	// Keys and signatures.
	10003: exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED,
	10004: exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED,
	10007: exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED,
	33004: exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED, // api key expired
	// Permissions and IP allow lists.
	10005: exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED,
	10010: exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED,
	10009: exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED, // IP banned
	// Rate limits.
	10006:  exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED,
	10018:  exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED,
	170005: exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED, // spot: too many new orders
	170222: exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED, // spot: too many requests in this time frame
	// Orders.
	110001: exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND,
	170213: exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND,
	110007: exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS,
	110004: exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS,
	110012: exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS,
	170131: exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS,
	110072: exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID,
	170141: exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID,
	110017: exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED, // reduce-only would increase the position
	110025: exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH,
	10029:  exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND, // symbol not allowed
	170121: exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND, // invalid symbol (spot)
	170137: exchangev1.ErrorReason_ERROR_REASON_PRECISION,            // too many decimals in qty
	170134: exchangev1.ErrorReason_ERROR_REASON_PRECISION,            // too many decimals in price
	110024: exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED,       // position mode cannot switch with a position
	110066: exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED,       // trading not allowed (symbol halted)
	170130: exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED,       // spot trading suspended
	// 110043 "leverage not modified" is a success for set-leverage; the caller handles it before mapping.
	110043: exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT,
}

// reasonFor is the contract reason of a Bybit retCode.
func reasonFor(code int64) exchangev1.ErrorReason {
	if r, ok := bybitReasons[code]; ok {
		return r
	}
	switch {
	case code >= 10000 && code < 20000:
		return exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT
	case code >= 110000 && code < 120000, code >= 170000 && code < 180000:
		return exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED
	case code >= 3400000 && code < 3500000:
		return exchangev1.ErrorReason_ERROR_REASON_ACCOUNT_MODE_MISMATCH
	default:
		return exchangev1.ErrorReason_ERROR_REASON_INTERNAL
	}
}

// apiError turns a Bybit retCode and retMsg into a typed contract error that keeps both verbatim.
func apiError(code int64, msg string) *sdk.Error {
	c := strconv.FormatInt(code, 10)
	if msg == "" {
		msg = "Bybit error " + c
	}
	r := reasonFor(code)
	lower := strings.ToLower(msg)
	switch {
	case code == 10001 && strings.Contains(lower, "position idx not match position mode"):
		r = exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH
	case code == 10001 && strings.Contains(lower, "too many decimals"):
		r = exchangev1.ErrorReason_ERROR_REASON_PRECISION
	}
	if code == 10001 && (strings.Contains(lower, "symbol invalid") || strings.Contains(lower, "symbol is invalid") ||
		strings.Contains(lower, "not supported symbols") || strings.Contains(lower, "invalid symbol")) {
		r = exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND
	}
	return sdk.ExchangeError(r, c, msg)
}

func internalf(format string, args ...any) error {
	return sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, format, args...)
}
