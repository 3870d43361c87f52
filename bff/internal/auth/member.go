package auth

import (
	"context"
	"errors"
	"time"
)

// Member is the signed-in member of a request, as Kratos' whoami describes the session.
type Member struct {
	// ID is the Kratos identity id.
	ID           string
	Email        string
	Phone        string
	Nickname     string
	Locale       string
	ReferralCode string
	// EmailVerified and PhoneVerified say whether the trait's current value is a verified address.
	EmailVerified bool
	PhoneVerified bool
	// VerifiedAddresses are the identity's verified addresses (e-mail or phone values).
	VerifiedAddresses []string
	// AAL is the session's assurance level: aal1 or aal2.
	AAL string
	// TOTP and LookupSecret say whether the identity has an authenticator app / recovery codes enrolled.
	TOTP         bool
	LookupSecret bool
	SessionID    string
	// ExpiresAt is when the session ends; AuthenticatedAt when it was (last) authenticated.
	ExpiresAt       time.Time
	AuthenticatedAt time.Time
	// SecondFactorAt is when this session last completed a second factor (an authenticator code or a recovery
	// code: the latest completed_at of Kratos' authentication_methods with method totp or lookup_secret); zero
	// when it never did.
	SecondFactorAt time.Time
	// ClientIP is the request's client address (see ClientIP).
	ClientIP string
}

type memberKey struct{}

// sessionKey carries what Recheck and StepUpURL need: the checker and the request's session cookie.
type sessionKey struct{}

type sessionRef struct {
	c        *Checker
	cookie   string
	clientIP string
}

// ErrNotChecked: the context is not one of a request the auth middleware let through (Recheck).
var ErrNotChecked = errors.New("auth: no checked session in the context")

// Recheck asks Kratos again about the request's session, past the cache (and refreshes the cached answer): for a
// decision that must not rest on an answer up to cache_ttl old, such as a second factor completed a moment ago
// (possibly through another replica). It needs the context of a request the auth middleware let through.
func Recheck(ctx context.Context) (*Member, error) {
	ref, ok := ctx.Value(sessionKey{}).(sessionRef)
	if !ok || ref.c == nil {
		return nil, ErrNotChecked
	}
	ref.c.Forget(ref.cookie)
	m, err := ref.c.CheckCookie(ctx, ref.cookie)
	if err != nil {
		return nil, err
	}
	m.ClientIP = ref.clientIP
	return m, nil
}

// StepUpURL is the UI page that completes the second factor again in a signed-in session (aal2_url with
// refresh=true; the UI adds its own return_to), for a request the auth middleware let through; "" otherwise.
func StepUpURL(ctx context.Context) string {
	ref, ok := ctx.Value(sessionKey{}).(sessionRef)
	if !ok || ref.c == nil {
		return ""
	}
	return ref.c.StepUpURL()
}

// WithMember returns ctx carrying m.
func WithMember(ctx context.Context, m *Member) context.Context {
	return context.WithValue(ctx, memberKey{}, m)
}

// MemberFrom returns the member the auth middleware put into ctx.
func MemberFrom(ctx context.Context) (*Member, bool) {
	m, ok := ctx.Value(memberKey{}).(*Member)
	return m, ok && m != nil
}
