package trading

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/exhub/exhub/bff/internal/pluginhost"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// Error is a refusal a trader sees: an HTTP status, a stable code (the SDK's typed reason such as
// "insufficient_funds", or one of this package's own such as "precision" and "idempotency_key_reused"), the
// exchange's own code and message when the exchange refused, and a sentence a trader understands.
type Error struct {
	Status          int
	Code            string
	ExchangeCode    string
	ExchangeMessage string
	// Field is the request field at fault, when there is one ("price", "qty").
	Field   string
	Message string
}

func (e *Error) Error() string {
	if e.ExchangeCode != "" {
		return fmt.Sprintf("%s: %s (exchange code %s)", e.Code, e.Message, e.ExchangeCode)
	}
	return e.Code + ": " + e.Message
}

// Messages the spec fixes.
const (
	MsgInsufficient = "Your available balance is insufficient."
	MsgMinimum      = "Cannot be less than the minimum amount"
)

func invalid(field, msg string) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Code: "invalid_argument", Field: field, Message: msg}
}

func precision(field, msg string) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Code: "precision", Field: field, Message: msg}
}

// reasonStatus maps a typed reason to the HTTP status of the refusal.
func reasonStatus(r exchangev1.ErrorReason) int {
	switch r {
	case exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED:
		return http.StatusTooManyRequests
	case exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND, exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND:
		return http.StatusNotFound
	case exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, exchangev1.ErrorReason_ERROR_REASON_CLOCK_SKEW:
		return http.StatusServiceUnavailable
	case exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED, exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED,
		exchangev1.ErrorReason_ERROR_REASON_NOT_CONFIGURED:
		return http.StatusForbidden
	case exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID:
		return http.StatusConflict
	case exchangev1.ErrorReason_ERROR_REASON_INTERNAL, exchangev1.ErrorReason_ERROR_REASON_UNSPECIFIED:
		return http.StatusBadGateway
	default:
		return http.StatusUnprocessableEntity
	}
}

// reasonMessage is the trader's sentence for a typed reason.
func reasonMessage(r exchangev1.ErrorReason, exchangeMsg string) string {
	switch r {
	case exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS:
		return MsgInsufficient
	case exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED:
		return "The exchange is receiving too many requests from this account; try again in a few seconds."
	case exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND:
		return "The exchange does not know this order (it may already be filled or cancelled)."
	case exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED:
		return "The exchange refused this account's API key. Check the key or link it again."
	case exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED:
		return "This account's API key may not trade (or not from this address). Check the key's permissions."
	case exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED:
		return "This exchange does not support that here."
	case exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE:
		return "The exchange is not reachable right now; try again shortly."
	case exchangev1.ErrorReason_ERROR_REASON_PRECISION:
		return "The price or size does not fit this market's steps or limits."
	case exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH:
		return "The order's position side does not match your account's position mode."
	case exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND:
		return "This market does not exist on the exchange."
	case exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED:
		if exchangeMsg != "" {
			return "The exchange refused the order: " + exchangeMsg
		}
		return "The exchange refused the order."
	case exchangev1.ErrorReason_ERROR_REASON_CLOCK_SKEW:
		return "The exchange refused the request's time stamp; try again shortly."
	case exchangev1.ErrorReason_ERROR_REASON_ACCOUNT_MODE_MISMATCH:
		return "Your account's mode on the exchange does not allow this order (for example a simple or spot-only account)."
	case exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT:
		if exchangeMsg != "" {
			return "The exchange refused a value of the order: " + exchangeMsg
		}
		return "The exchange refused a value of the order."
	default:
		return "The exchange could not process the request; try again shortly."
	}
}

// pluginError turns a failed plugin call (whose outcome is not unknown) into the trader's refusal.
func pluginError(err error) *Error {
	if errors.Is(err, pluginhost.ErrUnavailable) {
		return &Error{Status: http.StatusServiceUnavailable, Code: "exchange_unavailable",
			Message: reasonMessage(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "")}
	}
	d := sdk.DetailOf(err)
	msg := d.GetExchangeMessage()
	if msg == "" && d.GetExchangeCode() == "" {
		msg = sdk.MessageOf(err)
	}
	return &Error{Status: reasonStatus(d.GetReason()), Code: sdk.ReasonName(d.GetReason()), ExchangeCode: d.GetExchangeCode(),
		ExchangeMessage: d.GetExchangeMessage(), Field: d.GetField(), Message: reasonMessage(d.GetReason(), msg)}
}

// readError maps a failed read (idempotent call) to an error for the API: typed refusals as *Error, a cancelled
// request as itself.
func readError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if sdk.IsUnknownOutcome(err) {
		// A read that got no answer: nothing to resolve, just unavailable.
		return &Error{Status: http.StatusServiceUnavailable, Code: "exchange_unavailable",
			Message: reasonMessage(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "")}
	}
	return pluginError(err)
}
