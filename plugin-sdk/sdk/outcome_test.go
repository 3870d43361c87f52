package sdk

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func TestOutcomeOf(t *testing.T) {
	withDetail := func(c codes.Code, r exchangev1.ErrorReason) error {
		st, err := status.New(c, "x").WithDetails(&exchangev1.ErrorDetail{Reason: r})
		if err != nil {
			t.Fatal(err)
		}
		return st.Err()
	}
	for _, tc := range []struct {
		name string
		err  error
		want Outcome
	}{
		{"nil", nil, OutcomeDone},
		{"typed unknown outcome", Errorf(exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME, "timeout after send"), OutcomeUnknown},
		{"unknown outcome across gRPC", Errorf(exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME, "x").GRPCStatus().Err(), OutcomeUnknown},
		{"wrapped unknown outcome", fmt.Errorf("place: %w", Errorf(exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME, "x")), OutcomeUnknown},
		{"insufficient funds", Errorf(exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS, "x").GRPCStatus().Err(), OutcomeFailed},
		{"exchange unavailable, typed", withDetail(codes.Unavailable, exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE), OutcomeFailed},
		{"rate limited", RateLimited(0, "slow down").GRPCStatus().Err(), OutcomeFailed},
		{"plugin died: unavailable", status.Error(codes.Unavailable, "connection closed"), OutcomeUnknown},
		{"deadline", status.Error(codes.DeadlineExceeded, "deadline"), OutcomeUnknown},
		{"canceled", status.Error(codes.Canceled, "canceled"), OutcomeUnknown},
		{"unknown without detail", status.Error(codes.Unknown, "EOF"), OutcomeUnknown},
		{"unknown with a detail", withDetail(codes.Unknown, exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME), OutcomeUnknown},
		{"context error", fmt.Errorf("call: %w", context.DeadlineExceeded), OutcomeUnknown},
		{"unimplemented", status.Error(codes.Unimplemented, "no"), OutcomeFailed},
		{"internal (recovered panic)", Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "x").GRPCStatus().Err(), OutcomeFailed},
		{"host error before sending", errors.New("plugin is not running"), OutcomeFailed},
	} {
		if got := OutcomeOf(tc.err); got != tc.want {
			t.Errorf("%s: OutcomeOf = %s, want %s", tc.name, got, tc.want)
		}
		if IsUnknownOutcome(tc.err) != (tc.want == OutcomeUnknown) {
			t.Errorf("%s: IsUnknownOutcome disagrees with OutcomeOf", tc.name)
		}
	}
}

func TestNonIdempotentMethods(t *testing.T) {
	for _, m := range NonIdempotentMethods() {
		if !IsNonIdempotent(m) || !IsNonIdempotent("/exchange.v1.Exchange/"+m) {
			t.Errorf("%s should be non-idempotent", m)
		}
		if exchangev1.Exchange_ServiceDesc.ServiceName == "" {
			t.Fatal("no service name")
		}
		found := false
		for _, md := range exchangev1.Exchange_ServiceDesc.Methods {
			found = found || md.MethodName == m
		}
		if !found {
			t.Errorf("%s is not a method of exchange.v1", m)
		}
	}
	for _, m := range []string{"GetOrder", "CancelOrder", "ListFills", "/exchange.v1.Exchange/Health"} {
		if IsNonIdempotent(m) {
			t.Errorf("%s is not money-moving", m)
		}
	}
}
