// Package account serves the signed-in member's own data under /api/v1/me (OpenAPI tag "account"): who is signed
// in, profile, favorites, preferences, security, KYC and referral. Every route needs a Kratos session
// (auth.Checker's huma middleware: 401, 403 aal2_required or 503 problem+json otherwise); state-changing routes
// also need the Origin and the CSRF token (403 origin_refused / csrf_refused). Answers are never cached
// (Cache-Control: private, no-store). A member only ever reads and changes their own rows: every handler keys the
// store by the session's identity id, never by anything in the request.
package account

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/exhub/exhub/bff/internal/accounts"
	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/kyc"
	"github.com/exhub/exhub/bff/internal/member"
	"github.com/exhub/exhub/bff/internal/store"
)

// Tag is the OpenAPI tag of the account routes.
const Tag = "account"

// noStore is the Cache-Control of every answer.
const noStore = "private, no-store"

// Deps are the account API's collaborators.
type Deps struct {
	// Auth checks sessions and issues the CSRF cookie.
	Auth *auth.Checker
	// Members is the member store layer. Nil: GET /api/v1/me answers from the session alone and the other routes
	// answer 503.
	Members *member.Service
	// KYC handles documents and applications. Nil: the KYC routes answer 503.
	KYC *kyc.Service
	// Accounts serves /api/v1/accounts (the member's exchange accounts). Nil: those routes answer 503.
	Accounts *accounts.Service
	// Exchanges are the slugs listed in the KYC answer's per-exchange flags.
	Exchanges []string
	// Logger logs failures the member only sees as a 500.
	Logger *slog.Logger
}

type routes struct {
	Deps
}

// TwoFactor says which second factors the member enrolled.
type TwoFactor struct {
	TOTP         bool `json:"totp" doc:"An authenticator app (TOTP) is enrolled"`
	LookupSecret bool `json:"lookup_secret" doc:"Recovery codes (lookup secrets) are enrolled"`
}

// LastLogin is a sign-in: when and from which address.
type LastLogin struct {
	At time.Time `json:"at"`
	IP string    `json:"ip,omitempty" doc:"The client address of that sign-in"`
}

// Me is the signed-in member.
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
	// Store data (absent when the BFF runs without its member store).
	LastLogin           *LastLogin `json:"last_login,omitempty" doc:"The sign-in before this session's (the profile's 'last login'); absent on the first"`
	KYCState            string     `json:"kyc_state,omitempty" enum:"none,pending,in_review,completed,declined" doc:"State of the latest KYC application"`
	ReferralCode        string     `json:"referral_code,omitempty" doc:"The member's own referral code"`
	ReferredBy          bool       `json:"referred,omitempty" doc:"The member signed up with another member's referral code"`
	WithdrawLockedUntil *time.Time `json:"withdraw_locked_until,omitempty" doc:"Withdrawals are locked until then after a security change (absent when not locked)"`
	CreatedAt           *time.Time `json:"created_at,omitempty" doc:"When the member row was created"`
}

// MeOutput is the answer of GET /api/v1/me.
type MeOutput struct {
	CacheControl string      `header:"Cache-Control"`
	SetCookie    http.Cookie `header:"Set-Cookie" doc:"The CSRF cookie (exhub_csrf) to echo in X-CSRF-Token on state-changing calls"`
	Body         Me
}

// reply is an answer with a body and the no-store header.
type reply[T any] struct {
	CacheControl string `header:"Cache-Control"`
	Body         T
}

func ok[T any](body T) *reply[T] { return &reply[T]{CacheControl: noStore, Body: body} }

// MeOf maps a session's member to the API shape.
func MeOf(m *auth.Member) Me {
	return Me{
		ID: m.ID, Email: m.Email, Phone: m.Phone, EmailVerified: m.EmailVerified, PhoneVerified: m.PhoneVerified,
		Nickname: m.Nickname, Locale: m.Locale, AAL: m.AAL,
		TwoFactor:       TwoFactor{TOTP: m.TOTP, LookupSecret: m.LookupSecret},
		AuthenticatedAt: m.AuthenticatedAt.UTC(), SessionExpiresAt: m.ExpiresAt.UTC(),
	}
}

// enrich adds the store's data: the previous login, nickname and locale as the member set them, KYC state,
// referral code and lockout.
func enrich(me Me, row store.Member, kycState string, now time.Time) Me {
	if !row.PreviousLogin.At.IsZero() {
		me.LastLogin = &LastLogin{At: row.PreviousLogin.At.UTC(), IP: row.PreviousLogin.IP}
	}
	if row.Nickname != "" {
		me.Nickname = row.Nickname
	}
	if row.Locale != "" {
		me.Locale = row.Locale
	}
	me.KYCState = kycState
	me.ReferralCode = row.ReferralCode
	me.ReferredBy = row.ReferredBy != ""
	if row.WithdrawLocked(now) {
		t := row.WithdrawLockedUntil.UTC()
		me.WithdrawLockedUntil = &t
	}
	c := row.CreatedAt.UTC()
	me.CreatedAt = &c
	return me
}

// Register adds the account routes to api.
func Register(api huma.API, d Deps) {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	d.Auth.RegisterSecurityScheme(api)
	r := &routes{Deps: d}
	huma.Register(api, r.op("get-me", http.MethodGet, "/api/v1/me", "The signed-in member",
		"Who is signed in, with the session's assurance level, enrolled second factors, the previous sign-in (time "+
			"and IP), KYC state, own referral code and the withdrawal lockout. Sets the CSRF cookie that "+
			"state-changing calls echo in the X-CSRF-Token header. 401 without a session; 403 with code "+
			"aal2_required and redirect_to when the session needs the second factor."), r.getMe)
	r.registerProfile(api)
	r.registerFavorites(api)
	r.registerPreferences(api)
	r.registerSecurity(api)
	r.registerKYC(api)
	r.registerReferral(api)
	r.registerExchangeAccounts(api)
}

// op is an account operation: tagged, session required, the auth problems documented, plus errs.
func (r *routes) op(id, method, path, summary, description string, errs ...int) huma.Operation {
	return huma.Operation{
		OperationID: id,
		Method:      method,
		Path:        path,
		Summary:     summary,
		Description: description,
		Tags:        []string{Tag},
		Security:    []map[string][]string{{auth.SecurityScheme: {}}},
		Middlewares: huma.Middlewares{r.Auth.Huma()},
		Errors:      append([]int{http.StatusUnauthorized, http.StatusForbidden, http.StatusServiceUnavailable}, errs...),
	}
}

func (r *routes) getMe(ctx context.Context, _ *struct{}) (*MeOutput, error) {
	m, ok := auth.MemberFrom(ctx)
	if !ok {
		return nil, auth.Unauthorized()
	}
	me := MeOf(m)
	if r.Members != nil {
		row, err := r.Members.Ensure(ctx, m)
		if err != nil {
			return nil, r.fail(ctx, err)
		}
		state, err := r.kycState(ctx, m.ID)
		if err != nil {
			return nil, r.fail(ctx, err)
		}
		me = enrich(me, row, state, r.Members.Now())
	}
	return &MeOutput{CacheControl: noStore, SetCookie: *r.Auth.CSRFCookie(m), Body: me}, nil
}

// member is the session's member with their store row (created on first sight); 503 without a store.
func (r *routes) member(ctx context.Context) (*auth.Member, store.Member, error) {
	m, ok := auth.MemberFrom(ctx)
	if !ok {
		return nil, store.Member{}, auth.Unauthorized()
	}
	if r.Members == nil {
		return nil, store.Member{}, unavailable()
	}
	row, err := r.Members.Ensure(ctx, m)
	if err != nil {
		return nil, store.Member{}, r.fail(ctx, err)
	}
	return m, row, nil
}

func (r *routes) kycState(ctx context.Context, memberID string) (string, error) {
	a, err := r.Members.Store().LatestKYCApplication(ctx, memberID)
	if err != nil {
		if member.IsNotFound(err) {
			return "none", nil
		}
		return "", err
	}
	return a.State, nil
}
