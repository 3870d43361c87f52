// Package account serves the signed-in member's own data under /api/v1/me (OpenAPI tag "account"). Every route
// needs a Kratos session (auth.Checker's huma middleware): 401, 403 aal2_required or 503 problem+json otherwise.
package account

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/exhub/exhub/bff/internal/auth"
)

// Tag is the OpenAPI tag of the account routes.
const Tag = "account"

// Deps are the account API's collaborators.
type Deps struct {
	// Auth checks sessions and issues the CSRF cookie.
	Auth *auth.Checker
}

// TwoFactor says which second factors the member enrolled.
type TwoFactor struct {
	TOTP         bool `json:"totp" doc:"An authenticator app (TOTP) is enrolled"`
	LookupSecret bool `json:"lookup_secret" doc:"Recovery codes (lookup secrets) are enrolled"`
}

// Me is the signed-in member. Fields from the store (last login, KYC, referral) join it later.
type Me struct {
	ID               string    `json:"id" doc:"The member's identity id"`
	Email            string    `json:"email,omitempty" format:"email"`
	Phone            string    `json:"phone,omitempty" doc:"E.164 mobile number"`
	EmailVerified    bool      `json:"email_verified"`
	PhoneVerified    bool      `json:"phone_verified"`
	Nickname         string    `json:"nickname,omitempty"`
	Locale           string    `json:"locale,omitempty"`
	AAL              string    `json:"aal" enum:"aal1,aal2" doc:"The session's authenticator assurance level"`
	TwoFactor        TwoFactor `json:"two_factor"`
	AuthenticatedAt  time.Time `json:"authenticated_at"`
	SessionExpiresAt time.Time `json:"session_expires_at"`
}

// MeOutput is the answer of GET /api/v1/me.
type MeOutput struct {
	CacheControl string      `header:"Cache-Control"`
	SetCookie    http.Cookie `header:"Set-Cookie" doc:"The CSRF cookie (exhub_csrf) to echo in X-CSRF-Token on state-changing calls"`
	Body         Me
}

// MeOf maps a session's member to the API shape.
func MeOf(m *auth.Member) Me {
	return Me{
		ID: m.ID, Email: m.Email, Phone: m.Phone, EmailVerified: m.EmailVerified, PhoneVerified: m.PhoneVerified,
		Nickname: m.Nickname, Locale: m.Locale, AAL: m.AAL,
		TwoFactor:       TwoFactor{TOTP: m.TOTP, LookupSecret: m.LookupSecret},
		AuthenticatedAt: m.AuthenticatedAt.UTC(), SessionExpiresAt: m.ExpiresAt.UTC(),
	}
}

// Register adds the account routes to api.
func Register(api huma.API, d Deps) {
	d.Auth.RegisterSecurityScheme(api)
	problems := []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusServiceUnavailable}
	huma.Register(api, huma.Operation{
		OperationID: "get-me",
		Method:      http.MethodGet,
		Path:        "/api/v1/me",
		Summary:     "The signed-in member",
		Description: "Who is signed in, with the session's assurance level and enrolled second factors. Sets the " +
			"CSRF cookie that state-changing calls echo in the X-CSRF-Token header. 401 without a session; 403 " +
			"with code aal2_required and redirect_to when the session needs the second factor.",
		Tags:        []string{Tag},
		Security:    []map[string][]string{{auth.SecurityScheme: {}}},
		Middlewares: huma.Middlewares{d.Auth.Huma()},
		Errors:      problems,
	}, func(ctx context.Context, _ *struct{}) (*MeOutput, error) {
		m, ok := auth.MemberFrom(ctx)
		if !ok {
			return nil, auth.Unauthorized()
		}
		return &MeOutput{CacheControl: "private, no-store", SetCookie: *d.Auth.CSRFCookie(m), Body: MeOf(m)}, nil
	})
}
