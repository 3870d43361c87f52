package member

import (
	"errors"
	"fmt"
	"time"

	"github.com/exhub/exhub/bff/internal/config/secret"
)

// DevHookSecret is the web-hook secret bff/kratos/kratos.yml ships with for demo and development. Production sets
// its own on both sides: EXHUB_MEMBER_HOOK_SECRET_FILE for the BFF and the hooks' auth value in Kratos' config.
const DevHookSecret = "exhub-dev-hook-secret-change-me"

// HookUser is the basic-auth user name of Kratos' web hooks (the secret is the password).
const HookUser = "kratos"

// Config is the member section (YAML key member).
type Config struct {
	// HookSecret authenticates Kratos' web hooks (the basic-auth password). Empty turns the hooks off (404);
	// members are still created and their logins recorded on their first authenticated request.
	HookSecret secret.Secret `yaml:"hook_secret"`
	// WithdrawLockout is how long withdrawals stay locked after a password, e-mail, mobile or authenticator change.
	WithdrawLockout time.Duration `yaml:"withdraw_lockout"`
	// SecurityEvents is how many recent security events GET /api/v1/me/security lists.
	SecurityEvents int `yaml:"security_events"`
}

// DefaultConfig is the demo configuration: the development hook secret, a 24-hour lockout, 20 events.
func DefaultConfig() Config {
	return Config{HookSecret: secret.New(DevHookSecret), WithdrawLockout: 24 * time.Hour, SecurityEvents: 20}
}

// Validate names each bad key relative to the section.
func (c Config) Validate() error {
	var errs []error
	if n := len(c.HookSecret.Reveal()); n > 0 && n < 16 {
		errs = append(errs, fmt.Errorf("hook_secret: %d bytes, want at least 16", n))
	}
	if c.WithdrawLockout < time.Hour || c.WithdrawLockout > 30*24*time.Hour {
		errs = append(errs, fmt.Errorf("withdraw_lockout: %s, want 1h to 720h", c.WithdrawLockout))
	}
	if c.SecurityEvents < 1 || c.SecurityEvents > 200 {
		errs = append(errs, fmt.Errorf("security_events: %d, want 1 to 200", c.SecurityEvents))
	}
	return errors.Join(errs...)
}
