package okx

import (
	"strings"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// okxReasons maps OKX error codes to contract reasons. Codes not listed fall back by family (see reasonFor).
var okxReasons = map[string]exchangev1.ErrorReason{
	// Rate limits.
	"50011": exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED,
	"50061": exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED,
	// Service busy / timeouts / maintenance.
	"50001": exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE,
	// "API endpoint request timeout (does not mean that the request was successful or failed)" and "Order timed
	// out": the request may have executed. Reads downgrade it to EXCHANGE_UNAVAILABLE (see Client.Do).
	"50004": exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME,
	"51149": exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME,
	"50013": exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE,
	"50026": exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE,
	// Parameters.
	"50000": exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT,
	"50002": exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT,
	"50014": exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT,
	"50015": exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT,
	"51000": exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT,
	// Instruments.
	"51001": exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND,
	"51014": exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND,
	// Funds.
	"51008": exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS,
	"51119": exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS,
	"51127": exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS,
	"51131": exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS,
	"58350": exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS,
	"59200": exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS,
	// Broker sub-accounts.
	"59500": exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED, // only the main account's key
	"59604": exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED, // only the main account's key
	"59608": exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED, // only broker accounts
	"59505": exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT,  // passphrase format
	"59510": exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT,  // sub-account does not exist
	"59601": exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT,  // sub-account name exists
	"59603": exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED,    // too many sub-accounts
	// Orders.
	"51603": exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND,
	"51400": exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND,
	"51503": exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND,
	"51016": exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID,
	// Sizes and prices off the grid or outside limits.
	"51020": exchangev1.ErrorReason_ERROR_REASON_PRECISION,
	"51121": exchangev1.ErrorReason_ERROR_REASON_PRECISION,
	"51201": exchangev1.ErrorReason_ERROR_REASON_PRECISION,
	"51202": exchangev1.ErrorReason_ERROR_REASON_PRECISION,
	"51204": exchangev1.ErrorReason_ERROR_REASON_PRECISION,
	// Clock: the request's OK-ACCESS-TIMESTAMP is outside OKX's window.
	"50102": exchangev1.ErrorReason_ERROR_REASON_CLOCK_SKEW,
	// Permissions and IP allow lists (a valid key that may not do this).
	"50030": exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED,
	"50110": exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED,
	"50120": exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED,
	"50121": exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED,
	"50122": exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED,
	"58123": exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED,
	// Account mode: the account's level (simple, single-currency margin, ...) does not allow the request.
	"51010": exchangev1.ErrorReason_ERROR_REASON_ACCOUNT_MODE_MISMATCH,
	"50012": exchangev1.ErrorReason_ERROR_REASON_ACCOUNT_MODE_MISMATCH,
	"59000": exchangev1.ErrorReason_ERROR_REASON_ACCOUNT_MODE_MISMATCH,
	"59001": exchangev1.ErrorReason_ERROR_REASON_ACCOUNT_MODE_MISMATCH,
	"59004": exchangev1.ErrorReason_ERROR_REASON_ACCOUNT_MODE_MISMATCH,
	// Position mode: posSide does not fit net or long/short mode.
	"51007": exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH,
	"51018": exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH,
	"51019": exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH,
	"51156": exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH,
	// Leverage settings.
	"59101": exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT,
	"59102": exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT,
	"51169": exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED,
	// WebSocket login and channels.
	"60004": exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED,
	"60005": exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED,
	"60006": exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED,
	"60007": exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED,
	"60032": exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED,
	"60009": exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED,
	"60024": exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED,
	"60018": exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT,
}

// reasonFor is the contract reason of an OKX error code.
func reasonFor(code string) exchangev1.ErrorReason {
	if r, ok := okxReasons[code]; ok {
		return r
	}
	switch {
	case strings.HasPrefix(code, "501"):
		// 50100..50199: API key, signature and timestamp problems (permissions and IPs are listed above).
		return exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED
	case strings.HasPrefix(code, "590"):
		// 59000..59099: account settings that the account's current mode or state refuses.
		return exchangev1.ErrorReason_ERROR_REASON_ACCOUNT_MODE_MISMATCH
	case strings.HasPrefix(code, "51"), strings.HasPrefix(code, "54"):
		return exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED
	case strings.HasPrefix(code, "58"), strings.HasPrefix(code, "59"):
		return exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT
	case strings.HasPrefix(code, "60"), strings.HasPrefix(code, "63"):
		return exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT
	default:
		return exchangev1.ErrorReason_ERROR_REASON_INTERNAL
	}
}

// apiError turns an OKX code and message into a typed contract error that keeps both verbatim.
func apiError(code, msg string) *sdk.Error {
	if msg == "" {
		msg = "OKX error " + code
	}
	r := reasonFor(code)
	lower := strings.ToLower(msg)
	if code == "51000" && strings.Contains(msg, "posSide") {
		// A position side that does not fit the account's position mode (long_short_mode needs long/short).
		r = exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH
	}
	if strings.HasPrefix(code, "51") && r == exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED {
		switch {
		case strings.Contains(lower, "position mode"), strings.Contains(lower, "long/short mode"), strings.Contains(lower, "net mode"):
			r = exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH
		case strings.Contains(lower, "account mode"):
			r = exchangev1.ErrorReason_ERROR_REASON_ACCOUNT_MODE_MISMATCH
		}
	}
	return sdk.ExchangeError(r, code, msg)
}

func internalf(format string, args ...any) error {
	return sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, format, args...)
}
