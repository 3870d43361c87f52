package market

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/exhub/exhub/bff/internal/pluginhost"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// FieldError is a request parameter the service refuses: an unknown exchange, market type, symbol or interval, or a
// limit out of range. The API answers 422 naming Field (a query parameter name).
type FieldError struct {
	Field   string
	Value   any
	Message string
}

func (e *FieldError) Error() string { return fmt.Sprintf("%s: %s", e.Field, e.Message) }

func fieldErr(field string, value any, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Value: value, Message: fmt.Sprintf(format, args...)}
}

// UpstreamError is a failure of the plugin or of the exchange behind it, with no last good value fresh enough to
// serve instead. Status is 503 (plugin down, exchange unavailable or rate limited, timeout: try again soon) or 502
// (the plugin or exchange answered with an error). RetryAfter is the hint for the Retry-After header.
type UpstreamError struct {
	Status     int
	RetryAfter time.Duration
	Err        error
}

func (e *UpstreamError) Error() string { return e.Err.Error() }
func (e *UpstreamError) Unwrap() error { return e.Err }

// Retry hints.
const (
	retryPluginDown  = 2 * time.Second
	retryUnavailable = 5 * time.Second
	retryBadGateway  = 5 * time.Second
)

// classify turns an error of a plugin call into a FieldError (the plugin refused an argument) or an UpstreamError.
// defaultField names the parameter an INVALID_ARGUMENT without a field is about.
func classify(err error, defaultField string, value any) error {
	var fe *FieldError
	var ue *UpstreamError
	if errors.As(err, &fe) || errors.As(err, &ue) {
		return err
	}
	if errors.Is(err, pluginhost.ErrUnavailable) {
		return &UpstreamError{Status: http.StatusServiceUnavailable, RetryAfter: retryPluginDown, Err: err}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &UpstreamError{Status: http.StatusServiceUnavailable, RetryAfter: retryUnavailable,
			Err: fmt.Errorf("the exchange did not answer in time: %w", err)}
	}
	d := sdk.DetailOf(err)
	switch d.GetReason() {
	case exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND,
		exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED:
		field := d.GetField()
		if field == "" {
			field = defaultField
		}
		return fieldErr(field, value, "%s", status.Convert(err).Message())
	case exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED:
		ra := time.Duration(d.GetRetryAfterMs()) * time.Millisecond
		if ra < time.Second {
			ra = time.Second
		}
		return &UpstreamError{Status: http.StatusServiceUnavailable, RetryAfter: ra, Err: err}
	case exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE:
		return &UpstreamError{Status: http.StatusServiceUnavailable, RetryAfter: retryUnavailable, Err: err}
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.Canceled:
		// The process went away mid-call (the supervisor restarts it).
		return &UpstreamError{Status: http.StatusServiceUnavailable, RetryAfter: retryPluginDown, Err: err}
	case codes.DeadlineExceeded:
		return &UpstreamError{Status: http.StatusServiceUnavailable, RetryAfter: retryUnavailable, Err: err}
	}
	return &UpstreamError{Status: http.StatusBadGateway, RetryAfter: retryBadGateway, Err: err}
}

// reasonOf is the short text of a stale response's staleReason.
func reasonOf(err error) string {
	var ue *UpstreamError
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, pluginhost.ErrUnavailable) {
		return "plugin is not running"
	}
	if s, ok := status.FromError(err); ok {
		return s.Message()
	}
	return err.Error()
}
