package auth

import (
	"context"
	"errors"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
)

// Problem maps an error of Check to its problem: 401, 403 aal2_required (with the UI page) or 503.
func ProblemOf(err error) *Problem {
	var aal *AAL2Error
	switch {
	case errors.As(err, &aal):
		p := newProblem(http.StatusForbidden, CodeAAL2Required, "this session needs the second factor")
		p.RedirectTo = aal.RedirectTo
		return p
	case errors.Is(err, ErrNoSession):
		return Unauthorized()
	default:
		return newProblem(http.StatusServiceUnavailable, CodeUnavailable, "the identity service is unavailable; try again shortly")
	}
}

// guard is the whole check of one request: Origin (unsafe methods), session, CSRF token (unsafe methods).
func (c *Checker) guard(r *http.Request) (*Member, *Problem) {
	unsafe := Unsafe(r.Method)
	if unsafe {
		if p := c.CheckOrigin(r.Header.Get("Origin"), r.Header.Get("Referer")); p != nil {
			return nil, p
		}
	}
	m, err := c.Check(r)
	if err != nil {
		return nil, ProblemOf(err)
	}
	if unsafe {
		if p := c.CheckCSRF(m, r.Header.Get(c.cfg.CSRFHeader), cookieValue(r.Header.Get("Cookie"), c.cfg.CSRFCookie)); p != nil {
			return nil, p
		}
	}
	return m, nil
}

// Middleware requires a session on every request it wraps (plus Origin and CSRF on state-changing ones) and puts
// the Member into the request context; refusals are problem+json.
func (c *Checker) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m, p := c.guard(r)
		if p != nil {
			WriteProblem(w, p)
			return
		}
		ctx := context.WithValue(WithMember(r.Context(), m), sessionKey{}, sessionRef{c: c, cookie: c.SessionCookie(r), clientIP: m.ClientIP})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// Huma is Middleware for huma operations: put it in an operation's Middlewares (or a group's).
func (c *Checker) Huma() func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		r := &http.Request{
			Method:     ctx.Method(),
			RemoteAddr: ctx.RemoteAddr(),
			Header:     http.Header{},
		}
		r = r.WithContext(ctx.Context())
		for _, h := range []string{"Cookie", "Origin", "Referer", "X-Forwarded-For", c.cfg.CSRFHeader} {
			if v := ctx.Header(h); v != "" {
				r.Header.Set(h, v)
			}
		}
		m, p := c.guard(r)
		if p != nil {
			writeHumaProblem(ctx, p)
			return
		}
		ctx = huma.WithValue(ctx, memberKey{}, m)
		next(huma.WithValue(ctx, sessionKey{}, sessionRef{c: c, cookie: c.SessionCookie(r), clientIP: m.ClientIP}))
	}
}

// SecurityScheme is the OpenAPI name of the session cookie scheme; Register adds it.
const SecurityScheme = "session"

// RegisterSecurityScheme declares the session cookie in the OpenAPI document, for operations that list
// Security: []map[string][]string{{auth.SecurityScheme: {}}}.
func (c *Checker) RegisterSecurityScheme(api huma.API) {
	oa := api.OpenAPI()
	if oa.Components == nil {
		oa.Components = &huma.Components{}
	}
	if oa.Components.SecuritySchemes == nil {
		oa.Components.SecuritySchemes = map[string]*huma.SecurityScheme{}
	}
	oa.Components.SecuritySchemes[SecurityScheme] = &huma.SecurityScheme{
		Type: "apiKey", In: "cookie", Name: c.cfg.SessionCookie,
		Description: "The Kratos session cookie. State-changing calls also need an allowed Origin and the " +
			c.cfg.CSRFHeader + " header equal to the " + c.cfg.CSRFCookie + " cookie (set by GET /api/v1/me).",
	}
}
