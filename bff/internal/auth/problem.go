package auth

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"
)

// Machine codes of auth problems.
const (
	CodeUnauthorized  = "unauthorized"
	CodeAAL2Required  = "aal2_required"
	CodeUnavailable   = "identity_unavailable"
	CodeOriginRefused = "origin_refused"
	CodeCSRFRefused   = "csrf_refused"
	CodeRateLimited   = "rate_limited"
	CodeWeakPassword  = "password_policy"
	CodeBodyTooLarge  = "body_too_large"
)

// Problem is an RFC 9457 problem with exhub's machine code. It is a huma.StatusError, so handlers may return it.
type Problem struct {
	Type   string `json:"type,omitempty"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	// Code is the machine-readable reason (aal2_required, csrf_refused, ...).
	Code string `json:"code,omitempty"`
	// RedirectTo is where the UI should send the member (aal2_required).
	RedirectTo string `json:"redirect_to,omitempty"`
	// Errors lists what was wrong with the input, one entry per broken rule.
	Errors []*huma.ErrorDetail `json:"errors,omitempty"`
	// RetryAfter, when positive, is sent as the Retry-After header (whole seconds, rounded up).
	RetryAfter time.Duration `json:"-"`
}

// Error is the detail or the title.
func (p *Problem) Error() string {
	if p.Detail != "" {
		return p.Detail
	}
	return p.Title
}

// GetStatus is the HTTP status.
func (p *Problem) GetStatus() int { return p.Status }

// ContentType is application/problem+json.
func (p *Problem) ContentType(string) string { return "application/problem+json" }

// GetHeaders carries Retry-After for huma handlers returning the problem.
func (p *Problem) GetHeaders() http.Header {
	h := http.Header{}
	if p.RetryAfter > 0 {
		h.Set("Retry-After", retryAfter(p.RetryAfter))
	}
	return h
}

func newProblem(status int, code, detail string) *Problem {
	return &Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Code: code, Detail: detail}
}

// Unauthorized is the 401 of a request without a valid session.
func Unauthorized() *Problem {
	return newProblem(http.StatusUnauthorized, CodeUnauthorized, "sign in to continue")
}

// RateLimited is the 429 of an attempt over a limit.
func RateLimited(after time.Duration) *Problem {
	p := newProblem(http.StatusTooManyRequests, CodeRateLimited, "too many attempts; try again later")
	p.RetryAfter = after
	return p
}

func retryAfter(d time.Duration) string {
	s := int64((d + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	return strconv.FormatInt(s, 10)
}

// WriteProblem writes p as application/problem+json.
func WriteProblem(w http.ResponseWriter, p *Problem) {
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("Cache-Control", "no-store")
	if p.RetryAfter > 0 {
		h.Set("Retry-After", retryAfter(p.RetryAfter))
	}
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}

func writeHumaProblem(ctx huma.Context, p *Problem) {
	ctx.SetHeader("Content-Type", "application/problem+json")
	ctx.SetHeader("Cache-Control", "no-store")
	if p.RetryAfter > 0 {
		ctx.SetHeader("Retry-After", retryAfter(p.RetryAfter))
	}
	ctx.SetStatus(p.Status)
	_ = json.NewEncoder(ctx.BodyWriter()).Encode(p)
}
