package gate

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/ratelimit"
)

// Limits are the attempt limits of the self-service flows.
type Limits struct {
	// Login submissions per identifier (or, for the second factor, per session) and per client IP.
	LoginIdentifier ratelimit.Limit `yaml:"login_identifier"`
	LoginIP         ratelimit.Limit `yaml:"login_ip"`
	// Registration submissions per identifier (traits.email / traits.phone) and per IP.
	RegistrationIdentifier ratelimit.Limit `yaml:"registration_identifier"`
	RegistrationIP         ratelimit.Limit `yaml:"registration_ip"`
	// Recovery and verification submissions that send a code, per address and per IP.
	CodeSendIdentifier ratelimit.Limit `yaml:"code_send_identifier"`
	CodeSendIP         ratelimit.Limit `yaml:"code_send_ip"`
	// Recovery and verification submissions that check a code, per flow and per IP.
	CodeCheckFlow ratelimit.Limit `yaml:"code_check_flow"`
	CodeCheckIP   ratelimit.Limit `yaml:"code_check_ip"`
}

// Config configures the self-service gate.
type Config struct {
	// KratosPublicURL is where submissions go on to.
	KratosPublicURL string `yaml:"kratos_public_url"`
	// Prefix is the path prefix the edge keeps and Kratos does not know (stripped before proxying).
	Prefix string `yaml:"prefix"`
	// MaxBody bounds the submission body read for inspection (bytes).
	MaxBody int64 `yaml:"max_body"`
	// SessionCookie is Kratos' session cookie; CSRFCookie the BFF's CSRF cookie (cleared on logout).
	SessionCookie string `yaml:"session_cookie"`
	CSRFCookie    string `yaml:"csrf_cookie"`
	// RememberHeader on a login submission asks to stay signed in; RememberCookie records the choice.
	RememberHeader string `yaml:"remember_header"`
	RememberCookie string `yaml:"remember_cookie"`
	// SessionLifespan is the session cookie's lifetime when remembered (Kratos' session.lifespan).
	SessionLifespan time.Duration `yaml:"session_lifespan"`
	// CookieSecure marks the gate's own cookies Secure (production, behind TLS).
	CookieSecure bool `yaml:"cookie_secure"`
	// TrustedProxies are the addresses or prefixes whose X-Forwarded-For is believed (the edge).
	TrustedProxies []string `yaml:"trusted_proxies"`
	Limits         Limits   `yaml:"limits"`
}

// Defaults returns the demo configuration.
func Defaults() Config {
	return Config{
		KratosPublicURL: "http://127.0.0.1:4433",
		Prefix:          "/.ory",
		MaxBody:         64 << 10,
		SessionCookie:   "exhub_session",
		CSRFCookie:      "exhub_csrf",
		RememberHeader:  "X-Exhub-Remember",
		RememberCookie:  "exhub_remember",
		SessionLifespan: 120 * time.Hour,
		TrustedProxies:  []string{"127.0.0.0/8", "::1/128"},
		Limits: Limits{
			LoginIdentifier:        ratelimit.Limit{N: 10, Per: 15 * time.Minute},
			LoginIP:                ratelimit.Limit{N: 50, Per: 15 * time.Minute},
			RegistrationIdentifier: ratelimit.Limit{N: 10, Per: 15 * time.Minute},
			RegistrationIP:         ratelimit.Limit{N: 20, Per: 15 * time.Minute},
			CodeSendIdentifier:     ratelimit.Limit{N: 5, Per: 30 * time.Minute},
			CodeSendIP:             ratelimit.Limit{N: 20, Per: 30 * time.Minute},
			CodeCheckFlow:          ratelimit.Limit{N: 10, Per: 30 * time.Minute},
			CodeCheckIP:            ratelimit.Limit{N: 50, Per: 15 * time.Minute},
		},
	}
}

// Validate says what is wrong with c, naming the keys.
func (c Config) Validate() error {
	var errs []error
	if u, err := url.Parse(c.KratosPublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("gate.kratos_public_url %q is not an http(s) URL", c.KratosPublicURL))
	}
	if c.Prefix != "" && (!strings.HasPrefix(c.Prefix, "/") || strings.HasSuffix(c.Prefix, "/")) {
		errs = append(errs, fmt.Errorf("gate.prefix %q must start and not end with /", c.Prefix))
	}
	if c.MaxBody < 1<<10 {
		errs = append(errs, errors.New("gate.max_body must be at least 1024"))
	}
	if c.SessionCookie == "" || c.CSRFCookie == "" || c.RememberCookie == "" || c.RememberHeader == "" {
		errs = append(errs, errors.New("gate: session_cookie, csrf_cookie, remember_cookie and remember_header must be set"))
	}
	if c.SessionLifespan < time.Minute {
		errs = append(errs, errors.New("gate.session_lifespan must be at least 1m"))
	}
	if _, err := auth.ParsePrefixes(c.TrustedProxies); err != nil {
		errs = append(errs, fmt.Errorf("gate.trusted_proxies: %w", err))
	}
	l := c.Limits
	for name, lim := range map[string]ratelimit.Limit{
		"login_identifier": l.LoginIdentifier, "login_ip": l.LoginIP,
		"registration_identifier": l.RegistrationIdentifier, "registration_ip": l.RegistrationIP,
		"code_send_identifier": l.CodeSendIdentifier, "code_send_ip": l.CodeSendIP,
		"code_check_flow": l.CodeCheckFlow, "code_check_ip": l.CodeCheckIP,
	} {
		if err := lim.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("gate.limits.%s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}
