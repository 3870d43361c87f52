// Package servicegate decides whether a member may use an exchange service (trading, withdraw, transfer) when the
// operator's config makes it need two-factor authentication and/or a verified KYC on that exchange
// (exchanges[].gates). A refusal names the first missing requirement as a typed reason: two_factor_required or
// kyc_required.
package servicegate

import (
	"context"
	"fmt"
	"slices"
	"sort"
)

// Services that can be gated.
const (
	Trading  = "trading"
	Withdraw = "withdraw"
	Transfer = "transfer"
)

// Services lists every service name accepted in the config.
var Services = []string{Trading, Withdraw, Transfer}

// Requirements.
const (
	// TwoFactor: the member has an authenticator app (TOTP) enrolled.
	TwoFactor = "two_factor"
	// KYC: the member's KYC is verified for the exchange (the per-exchange flag a completed application sets).
	KYC = "kyc"
)

// Requirements lists every requirement name, in the order they are checked.
var Requirements = []string{TwoFactor, KYC}

// Typed reasons of a refusal.
const (
	CodeTwoFactorRequired = "two_factor_required"
	CodeKYCRequired       = "kyc_required"
)

// Rules are one exchange's gates: service -> requirements (YAML: exchanges[].gates, e.g. {trading: [two_factor]}).
type Rules map[string][]string

// Validate names every unknown service or requirement.
func (r Rules) Validate() []string {
	var bad []string
	services := make([]string, 0, len(r))
	for s := range r {
		services = append(services, s)
	}
	sort.Strings(services)
	for _, s := range services {
		if !slices.Contains(Services, s) {
			bad = append(bad, fmt.Sprintf("%q is not a service (trading, withdraw, transfer)", s))
			continue
		}
		for _, q := range r[s] {
			if !slices.Contains(Requirements, q) {
				bad = append(bad, fmt.Sprintf("%s: %q is not a requirement (two_factor, kyc)", s, q))
			}
		}
	}
	return bad
}

// Member is what the gate needs to know of the member.
type Member struct {
	ID string
	// TwoFactor: an authenticator app is enrolled.
	TwoFactor bool
}

// KYCSource answers the member's per-exchange KYC flags by exchange slug (store.Store.ExchangeKYC).
type KYCSource interface {
	ExchangeKYC(ctx context.Context, memberID string) (map[string]bool, error)
}

// Checker holds every exchange's rules. The zero value and nil gate nothing.
type Checker struct {
	rules map[string]Rules
	names map[string]string
	kyc   KYCSource
}

// New returns a checker of rules by exchange slug, with the exchanges' display names for the refusal's sentence;
// kyc may be nil when no rule needs KYC (a KYC rule then refuses).
func New(rules map[string]Rules, names map[string]string, kyc KYCSource) *Checker {
	return &Checker{rules: rules, names: names, kyc: kyc}
}

// Name is an exchange's display name (its slug when unknown).
func (c *Checker) Name(exchange string) string {
	if c != nil && c.names[exchange] != "" {
		return c.names[exchange]
	}
	return exchange
}

// Status is one service's gate for a member: what it needs, what is missing, and the reason of a refusal ("" when
// the member may use it).
type Status struct {
	Service  string   `json:"service" enum:"trading,withdraw,transfer"`
	Required []string `json:"required" doc:"two_factor and/or kyc; empty when the service is not gated"`
	Missing  []string `json:"missing" doc:"The requirements the member does not meet yet"`
	Code     string   `json:"code,omitempty" enum:"two_factor_required,kyc_required" doc:"Why the service is refused (the first missing requirement); empty when allowed"`
}

// Allowed reports whether nothing is missing.
func (s Status) Allowed() bool { return len(s.Missing) == 0 }

// Required returns the requirements of a service on an exchange, in check order.
func (c *Checker) Required(exchange, service string) []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, q := range Requirements {
		if slices.Contains(c.rules[exchange][service], q) {
			out = append(out, q)
		}
	}
	return out
}

// Check returns the member's status for a service on an exchange. The error is the KYC lookup's.
func (c *Checker) Check(ctx context.Context, m Member, exchange, service string) (Status, error) {
	st := Status{Service: service, Required: c.Required(exchange, service), Missing: []string{}}
	if st.Required == nil {
		st.Required = []string{}
	}
	for _, q := range st.Required {
		switch q {
		case TwoFactor:
			if !m.TwoFactor {
				st.Missing = append(st.Missing, q)
			}
		case KYC:
			ok := false
			if c.kyc != nil {
				flags, err := c.kyc.ExchangeKYC(ctx, m.ID)
				if err != nil {
					return Status{}, fmt.Errorf("servicegate: kyc of %s: %w", m.ID, err)
				}
				ok = flags[exchange]
			}
			if !ok {
				st.Missing = append(st.Missing, q)
			}
		}
	}
	if len(st.Missing) > 0 {
		st.Code = codeOf(st.Missing[0])
	}
	return st, nil
}

// CheckAll returns the status of every service on an exchange.
func (c *Checker) CheckAll(ctx context.Context, m Member, exchange string) ([]Status, error) {
	out := make([]Status, 0, len(Services))
	for _, s := range Services {
		st, err := c.Check(ctx, m, exchange, s)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

func codeOf(requirement string) string {
	if requirement == TwoFactor {
		return CodeTwoFactorRequired
	}
	return CodeKYCRequired
}

// Detail is a sentence a member understands for a refusal.
func Detail(code, exchangeName, service string) string {
	what := map[string]string{Trading: "Trading", Withdraw: "Withdrawing", Transfer: "Transferring"}[service]
	if what == "" {
		what = "This service"
	}
	switch code {
	case CodeTwoFactorRequired:
		return fmt.Sprintf("%s on %s needs two-factor authentication: turn on Google Authenticator under Security first.", what, exchangeName)
	case CodeKYCRequired:
		return fmt.Sprintf("%s on %s needs a verified identity: complete KYC first.", what, exchangeName)
	}
	return ""
}
