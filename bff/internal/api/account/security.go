package account

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
)

// SecurityEvent is one security change (each starts the withdrawal lockout).
type SecurityEvent struct {
	Kind string    `json:"kind" enum:"password,email,mobile,totp,recovery_codes,otp_reset"`
	At   time.Time `json:"at"`
	IP   string    `json:"ip,omitempty"`
}

// Security is the member's security state.
type Security struct {
	TwoFactor           TwoFactor       `json:"two_factor"`
	EmailVerified       bool            `json:"email_verified"`
	PhoneVerified       bool            `json:"phone_verified"`
	WithdrawLocked      bool            `json:"withdraw_locked" doc:"Withdrawals are locked now"`
	WithdrawLockedUntil *time.Time      `json:"withdraw_locked_until,omitempty" doc:"End of the running lockout"`
	Events              []SecurityEvent `json:"events" doc:"Recent security changes, newest first"`
}

func (r *routes) registerSecurity(api huma.API) {
	huma.Register(api, r.op("get-security", http.MethodGet, "/api/v1/me/security", "The member's security state",
		"Second factors, the withdrawal lockout (24 hours after a password, e-mail, mobile or authenticator "+
			"change) and recent security events."), r.getSecurity)
}

func (r *routes) getSecurity(ctx context.Context, _ *struct{}) (*reply[Security], error) {
	m, row, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	evs, err := r.Members.Store().SecurityEvents(ctx, m.ID, r.Members.Config().SecurityEvents)
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	out := Security{TwoFactor: TwoFactor{TOTP: m.TOTP, LookupSecret: m.LookupSecret}, EmailVerified: m.EmailVerified,
		PhoneVerified: m.PhoneVerified, Events: make([]SecurityEvent, 0, len(evs))}
	if row.WithdrawLocked(r.Members.Now()) {
		t := row.WithdrawLockedUntil.UTC()
		out.WithdrawLocked, out.WithdrawLockedUntil = true, &t
	}
	for _, e := range evs {
		out.Events = append(out.Events, SecurityEvent{Kind: e.Kind, At: e.At.UTC(), IP: e.IP})
	}
	return ok(out), nil
}
