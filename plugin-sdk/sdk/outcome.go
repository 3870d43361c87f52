package sdk

import (
	"context"
	"errors"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// Outcome is what the host knows about a call after it returned.
type Outcome int

const (
	// OutcomeDone: the call succeeded.
	OutcomeDone Outcome = iota
	// OutcomeFailed: the call did not execute. The plugin answered with a typed error other than UNKNOWN_OUTCOME,
	// or the call never left the host (the plugin was not running).
	OutcomeFailed
	// OutcomeUnknown: the call may have executed. The plugin said so (ERROR_REASON_UNKNOWN_OUTCOME), or the call was
	// sent and no typed answer came back: the plugin died mid-call, the connection broke, the deadline passed or the
	// caller gave up. Never a failure: the host resolves it by client id (GetOrder, ListTransfers, ...), and never by
	// sending the call again.
	OutcomeUnknown
)

func (o Outcome) String() string {
	switch o {
	case OutcomeDone:
		return "done"
	case OutcomeFailed:
		return "failed"
	case OutcomeUnknown:
		return "unknown"
	}
	return "invalid"
}

// OutcomeOf classifies the error of a plugin call (host side).
//
//   - nil: OutcomeDone.
//   - An error carrying an ErrorDetail (a typed answer of the plugin): OutcomeUnknown for
//     ERROR_REASON_UNKNOWN_OUTCOME, OutcomeFailed for every other reason.
//   - A gRPC status without a detail, with code Unavailable, DeadlineExceeded, Canceled or Unknown (what a plugin
//     that died, hung or was cut off mid-call leaves behind): OutcomeUnknown. Any other code without a detail
//     (Unimplemented, InvalidArgument from the gRPC layer itself, ...) is OutcomeFailed.
//   - context.Canceled or context.DeadlineExceeded, however wrapped: OutcomeUnknown.
//   - Any other error is the host's own, raised before the call was sent (the plugin is not running, the request
//     could not be built): OutcomeFailed.
//
// Unavailable is treated as unknown even though gRPC also uses it when a connection could not be made at all: the
// host cannot tell the two apart after the fact, and a wrong "failed" loses money where a wrong "unknown" only costs
// a lookup.
func OutcomeOf(err error) Outcome {
	if err == nil {
		return OutcomeDone
	}
	var e *Error
	if errors.As(err, &e) {
		return outcomeOfReason(e.Detail.GetReason())
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return OutcomeUnknown
	}
	st, ok := status.FromError(err)
	if !ok {
		return OutcomeFailed
	}
	for _, d := range st.Details() {
		if ed, ok := d.(*exchangev1.ErrorDetail); ok {
			return outcomeOfReason(ed.GetReason())
		}
	}
	switch st.Code() {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled, codes.Unknown:
		return OutcomeUnknown
	}
	return OutcomeFailed
}

func outcomeOfReason(r exchangev1.ErrorReason) Outcome {
	if r == exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME {
		return OutcomeUnknown
	}
	return OutcomeFailed
}

// IsUnknownOutcome reports whether a call may have executed although it returned an error (OutcomeOf is
// OutcomeUnknown). The caller must not treat it as a failure and must not send the call again; it resolves the
// outcome by the request's client id.
func IsUnknownOutcome(err error) bool { return OutcomeOf(err) == OutcomeUnknown }

// nonIdempotent are the exchange.v1 methods that move money or change orders each time they run.
var nonIdempotent = map[string]bool{
	"PlaceOrder": true, "PlaceAlgoOrder": true, "BatchPlaceOrders": true, "ClosePosition": true, "AmendOrder": true,
	"Transfer": true, "Withdraw": true, "Convert": true, "SubAccountTransfer": true, "CreateSubAccountApiKey": true,
}

// NonIdempotentMethods lists the exchange.v1 methods the host never retries, in a fixed order.
func NonIdempotentMethods() []string {
	return []string{"PlaceOrder", "PlaceAlgoOrder", "BatchPlaceOrders", "ClosePosition", "AmendOrder", "Transfer",
		"Withdraw", "Convert", "SubAccountTransfer", "CreateSubAccountApiKey"}
}

// IsNonIdempotent reports whether a method (its name, "PlaceOrder", or its full gRPC name,
// "/exchange.v1.Exchange/PlaceOrder") runs again each time it is sent. The host sends such a call exactly once: an
// error whose outcome is unknown is resolved by client id, never by a retry.
func IsNonIdempotent(method string) bool {
	if i := strings.LastIndexByte(method, '/'); i >= 0 {
		method = method[i+1:]
	}
	return nonIdempotent[method]
}
