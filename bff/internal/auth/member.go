package auth

import (
	"context"
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
	// ClientIP is the request's client address (see ClientIP).
	ClientIP string
}

type memberKey struct{}

// WithMember returns ctx carrying m.
func WithMember(ctx context.Context, m *Member) context.Context {
	return context.WithValue(ctx, memberKey{}, m)
}

// MemberFrom returns the member the auth middleware put into ctx.
func MemberFrom(ctx context.Context) (*Member, bool) {
	m, ok := ctx.Value(memberKey{}).(*Member)
	return m, ok && m != nil
}
