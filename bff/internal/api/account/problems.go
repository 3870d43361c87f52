package account

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/kyc"
	"github.com/exhub/exhub/bff/internal/store"
)

// Machine codes of the account problems (the "code" member of problem+json).
const (
	CodeNotFound           = "not_found"
	CodeConflict           = "conflict"
	CodeInvalidState       = "invalid_state"
	CodeLimit              = "limit_reached"
	CodeInvalid            = "invalid"
	CodePreconditionFailed = "precondition_failed"
	CodePreconditionNeeded = "precondition_required"
	CodeTooLarge           = "attachment_too_large"
	CodeUnsupportedType    = "unsupported_document_type"
	CodeUnavailable        = "member_store_unavailable"
	CodeInternal           = "internal"
)

func problem(status int, code, detail string) *auth.Problem {
	return &auth.Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Code: code, Detail: detail}
}

func unavailable() *auth.Problem {
	return problem(http.StatusServiceUnavailable, CodeUnavailable, "member data is not available on this server")
}

// fail maps a store or KYC error to its problem; anything unexpected is logged and answered 500 without detail.
func (r *routes) fail(ctx context.Context, err error) error {
	detail := func() string {
		// The sentinel's own words lead the message ("invalid argument: ..."): keep what follows.
		s := err.Error()
		for _, sentinel := range []error{store.ErrNotFound, store.ErrConflict, store.ErrInvalidTransition, store.ErrLimit, store.ErrInvalid} {
			if i := strings.Index(s, sentinel.Error()+": "); i >= 0 {
				return s[i+len(sentinel.Error())+2:]
			}
		}
		return s
	}
	switch {
	case errors.Is(err, kyc.ErrTooLarge):
		return problem(http.StatusRequestEntityTooLarge, CodeTooLarge, kyc.TooLargeMessage)
	case errors.Is(err, kyc.ErrUnsupportedType):
		return problem(http.StatusUnsupportedMediaType, CodeUnsupportedType, kyc.ErrUnsupportedType.Error())
	case errors.Is(err, store.ErrNotFound):
		return problem(http.StatusNotFound, CodeNotFound, detail())
	case errors.Is(err, store.ErrInvalidTransition):
		return problem(http.StatusConflict, CodeInvalidState, detail())
	case errors.Is(err, store.ErrConflict):
		return problem(http.StatusConflict, CodeConflict, detail())
	case errors.Is(err, store.ErrLimit):
		return problem(http.StatusUnprocessableEntity, CodeLimit, detail())
	case errors.Is(err, store.ErrInvalid):
		return problem(http.StatusUnprocessableEntity, CodeInvalid, detail())
	case errors.Is(err, context.Canceled):
		return problem(http.StatusServiceUnavailable, CodeUnavailable, "request canceled")
	}
	r.Logger.ErrorContext(ctx, "account API failure", "err", err)
	return problem(http.StatusInternalServerError, CodeInternal, "")
}
