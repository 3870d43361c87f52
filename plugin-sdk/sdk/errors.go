package sdk

import (
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// reasonCodes maps each typed reason to the gRPC code it travels with.
var reasonCodes = map[exchangev1.ErrorReason]codes.Code{
	exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT:          codes.InvalidArgument,
	exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED:              codes.ResourceExhausted,
	exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS:        codes.FailedPrecondition,
	exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND:           codes.NotFound,
	exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED:               codes.Unauthenticated,
	exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED:             codes.Unimplemented,
	exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE:      codes.Unavailable,
	exchangev1.ErrorReason_ERROR_REASON_PRECISION:                 codes.InvalidArgument,
	exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH:    codes.FailedPrecondition,
	exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND:      codes.NotFound,
	exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID: codes.AlreadyExists,
	exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED:            codes.FailedPrecondition,
	exchangev1.ErrorReason_ERROR_REASON_NOT_CONFIGURED:            codes.FailedPrecondition,
	exchangev1.ErrorReason_ERROR_REASON_INTERNAL:                  codes.Internal,
	exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME:           codes.Unknown,
	exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED:         codes.PermissionDenied,
	exchangev1.ErrorReason_ERROR_REASON_CLOCK_SKEW:                codes.FailedPrecondition,
	exchangev1.ErrorReason_ERROR_REASON_ACCOUNT_MODE_MISMATCH:     codes.FailedPrecondition,
}

// Error is a typed contract error. Plugins return it (or wrap it); it becomes a gRPC status with an ErrorDetail.
type Error struct {
	Detail  *exchangev1.ErrorDetail
	Message string
}

func (e *Error) Error() string {
	if e.Detail.GetExchangeCode() != "" {
		return fmt.Sprintf("%s: %s (exchange code %s: %s)", ReasonName(e.Detail.GetReason()), e.Message,
			e.Detail.GetExchangeCode(), e.Detail.GetExchangeMessage())
	}
	return fmt.Sprintf("%s: %s", ReasonName(e.Detail.GetReason()), e.Message)
}

// GRPCStatus lets grpc-go send the error as a status with its detail attached.
func (e *Error) GRPCStatus() *status.Status {
	code, ok := reasonCodes[e.Detail.GetReason()]
	if !ok {
		code = codes.Unknown
	}
	st := status.New(code, e.Message)
	if withDetail, err := st.WithDetails(e.Detail); err == nil {
		return withDetail
	}
	return st
}

// Errorf builds a typed error.
func Errorf(reason exchangev1.ErrorReason, format string, args ...any) *Error {
	return &Error{Detail: &exchangev1.ErrorDetail{Reason: reason}, Message: fmt.Sprintf(format, args...)}
}

// FieldError is an INVALID_ARGUMENT (or PRECISION) error about one request field.
func FieldError(reason exchangev1.ErrorReason, field, format string, args ...any) *Error {
	e := Errorf(reason, format, args...)
	e.Detail.Field = field
	return e
}

// ExchangeError carries the exchange's own code and message beside the typed reason.
func ExchangeError(reason exchangev1.ErrorReason, code, message string) *Error {
	return &Error{
		Detail:  &exchangev1.ErrorDetail{Reason: reason, ExchangeCode: code, ExchangeMessage: message},
		Message: message,
	}
}

// RateLimited says when the caller may retry.
func RateLimited(retryAfter time.Duration, format string, args ...any) *Error {
	e := Errorf(exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED, format, args...)
	e.Detail.RetryAfterMs = retryAfter.Milliseconds()
	return e
}

// NotSupported is the error for a capability the plugin does not have.
func NotSupported(what string) *Error {
	return Errorf(exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED, "%s is not supported by this exchange", what)
}

// ReasonName is the short lower-case name of a reason ("insufficient_funds").
func ReasonName(r exchangev1.ErrorReason) string {
	n, ok := exchangev1.ErrorReason_name[int32(r)]
	if !ok || r == exchangev1.ErrorReason_ERROR_REASON_UNSPECIFIED {
		return "unknown"
	}
	const prefix = "ERROR_REASON_"
	b := []byte(n[len(prefix):])
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// DetailOf extracts the typed detail from any error a plugin call returned (host side). Errors without a detail get
// one derived from their gRPC code: Unimplemented is NOT_SUPPORTED, Unavailable (a dead plugin or exchange) is
// EXCHANGE_UNAVAILABLE, and so on. It returns nil for a nil error.
func DetailOf(err error) *exchangev1.ErrorDetail {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Detail
	}
	st, ok := status.FromError(err)
	if !ok {
		return &exchangev1.ErrorDetail{Reason: exchangev1.ErrorReason_ERROR_REASON_INTERNAL}
	}
	for _, d := range st.Details() {
		if ed, ok := d.(*exchangev1.ErrorDetail); ok {
			return ed
		}
	}
	return &exchangev1.ErrorDetail{Reason: reasonForCode(st.Code())}
}

// MessageOf is the human message of a plugin error without the gRPC prefix.
func MessageOf(err error) string {
	if st, ok := status.FromError(err); ok {
		return st.Message()
	}
	return err.Error()
}

func reasonForCode(c codes.Code) exchangev1.ErrorReason {
	switch c {
	case codes.InvalidArgument, codes.OutOfRange:
		return exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT
	case codes.ResourceExhausted:
		return exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED
	case codes.NotFound:
		return exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND
	case codes.Unauthenticated:
		return exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED
	case codes.PermissionDenied:
		return exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED
	case codes.Unimplemented:
		return exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		return exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE
	default:
		return exchangev1.ErrorReason_ERROR_REASON_INTERNAL
	}
}
