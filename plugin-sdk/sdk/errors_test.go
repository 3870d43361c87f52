package sdk

import (
	"errors"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func TestDetailOfStatusWithoutDetail(t *testing.T) {
	cases := []struct {
		code codes.Code
		want exchangev1.ErrorReason
	}{
		{codes.Unauthenticated, exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED},
		{codes.PermissionDenied, exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED},
		{codes.Unimplemented, exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED},
		{codes.Unavailable, exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE},
		{codes.NotFound, exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND},
	}
	for _, c := range cases {
		if got := DetailOf(status.Error(c.code, "x")).GetReason(); got != c.want {
			t.Errorf("%v -> %v, want %v", c.code, got, c.want)
		}
	}
	if DetailOf(nil) != nil {
		t.Error("DetailOf(nil) is not nil")
	}
	if got := DetailOf(errors.New("plain")).GetReason(); got != exchangev1.ErrorReason_ERROR_REASON_INTERNAL {
		t.Errorf("plain error -> %v", got)
	}
}

func TestEveryReasonTravelsWithItsDetail(t *testing.T) {
	for v := range exchangev1.ErrorReason_name {
		r := exchangev1.ErrorReason(v)
		if r == exchangev1.ErrorReason_ERROR_REASON_UNSPECIFIED {
			continue
		}
		if _, ok := reasonCodes[r]; !ok {
			t.Errorf("%v has no gRPC code", r)
		}
		err := ExchangeError(r, "-1", "raw message")
		st := status.Convert(err)
		d := DetailOf(st.Err())
		if d.GetReason() != r || d.GetExchangeCode() != "-1" || d.GetExchangeMessage() != "raw message" {
			t.Errorf("%v came back as %v", r, d)
		}
	}
}
