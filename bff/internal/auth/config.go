package auth

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/exhub/exhub/bff/internal/config/secret"
)

// Config configures the session checker, the Origin check and the CSRF token.
type Config struct {
	// KratosPublicURL is Kratos' public API (whoami), e.g. http://127.0.0.1:4433.
	KratosPublicURL string `yaml:"kratos_public_url"`
	// KratosAdminURL is Kratos' admin API (an identity's credentials), e.g. http://127.0.0.1:4434.
	KratosAdminURL string `yaml:"kratos_admin_url"`
	// SessionCookie is the name of Kratos' session cookie.
	SessionCookie string `yaml:"session_cookie"`
	// CacheTTL is how long a whoami answer is reused for one session (never beyond the session's expiry).
	CacheTTL time.Duration `yaml:"cache_ttl"`
	// NoSessionTTL is how long a "no session" answer (401, an inactive session) is reused for one cookie, so a storm
	// of requests with a dead or forged cookie asks Kratos once; never longer than CacheTTL; 0 turns it off.
	NoSessionTTL time.Duration `yaml:"no_session_ttl"`
	// CacheSize bounds the number of sessions cached, and separately the number of "no session" answers.
	CacheSize int `yaml:"cache_size"`
	// Timeout bounds one call to Kratos.
	Timeout time.Duration `yaml:"timeout"`
	// AAL2URL is where the UI sends a member whose session needs a second factor.
	AAL2URL string `yaml:"aal2_url"`
	// AllowedOrigins are the origins (scheme://host[:port]) state-changing calls may come from.
	AllowedOrigins []string `yaml:"allowed_origins"`
	// CSRFCookie is the cookie carrying the CSRF token (readable by the UI's scripts).
	CSRFCookie string `yaml:"csrf_cookie"`
	// CSRFHeader is the request header the UI echoes the token in.
	CSRFHeader string `yaml:"csrf_header"`
	// CookieSecure marks the CSRF cookie Secure (production, behind TLS).
	CookieSecure bool `yaml:"cookie_secure"`
	// TrustedProxies are the addresses or prefixes (e.g. 127.0.0.1/32) whose X-Forwarded-For is believed.
	TrustedProxies []string `yaml:"trusted_proxies"`
	// CSRFKey is the HMAC key of CSRF tokens (at least 32 bytes), the same on every replica. It never prints.
	CSRFKey secret.Secret `yaml:"csrf_key"`
}

// Defaults returns the demo configuration (Kratos on its default loopback ports, the edge at :8080). CSRFKey has
// no default: the caller supplies the secret.
func Defaults() Config {
	return Config{
		KratosPublicURL: "http://127.0.0.1:4433",
		KratosAdminURL:  "http://127.0.0.1:4434",
		SessionCookie:   "exhub_session",
		CacheTTL:        10 * time.Second,
		NoSessionTTL:    2 * time.Second,
		CacheSize:       10_000,
		Timeout:         5 * time.Second,
		AAL2URL:         "/otpauth",
		AllowedOrigins:  []string{"http://127.0.0.1:8080", "http://localhost:8080"},
		CSRFCookie:      "exhub_csrf",
		CSRFHeader:      "X-CSRF-Token",
		TrustedProxies:  []string{"127.0.0.0/8", "::1/128"},
	}
}

// Validate says what is wrong with c, naming the keys.
func (c Config) Validate() error {
	var errs []error
	for name, u := range map[string]string{"kratos_public_url": c.KratosPublicURL, "kratos_admin_url": c.KratosAdminURL} {
		if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			errs = append(errs, fmt.Errorf("auth.%s %q is not an http(s) URL", name, u))
		}
	}
	if c.SessionCookie == "" || c.CSRFCookie == "" || c.CSRFHeader == "" {
		errs = append(errs, errors.New("auth: session_cookie, csrf_cookie and csrf_header must be set"))
	}
	if c.CacheTTL < 0 {
		errs = append(errs, errors.New("auth.cache_ttl must not be negative"))
	}
	if c.NoSessionTTL < 0 {
		errs = append(errs, errors.New("auth.no_session_ttl must not be negative"))
	}
	if c.CacheSize < 1 {
		errs = append(errs, errors.New("auth.cache_size must be at least 1"))
	}
	if c.Timeout <= 0 {
		errs = append(errs, errors.New("auth.timeout must be positive"))
	}
	if c.AAL2URL == "" {
		errs = append(errs, errors.New("auth.aal2_url must be set"))
	}
	if len(c.AllowedOrigins) == 0 {
		errs = append(errs, errors.New("auth.allowed_origins must name at least one origin"))
	}
	for _, o := range c.AllowedOrigins {
		if normOrigin(o) == "" || normOrigin(o) != strings.TrimSuffix(strings.ToLower(o), "/") {
			errs = append(errs, fmt.Errorf("auth.allowed_origins: %q is not an origin like https://exhub.example", o))
		}
	}
	if _, err := ParsePrefixes(c.TrustedProxies); err != nil {
		errs = append(errs, fmt.Errorf("auth.trusted_proxies: %w", err))
	}
	if len(c.CSRFKey.Reveal()) < 32 {
		errs = append(errs, errors.New("auth: the CSRF key must be set and at least 32 bytes"))
	}
	return errors.Join(errs...)
}

// ParsePrefixes reads addresses ("127.0.0.1") and prefixes ("10.0.0.0/8").
func ParsePrefixes(list []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(list))
	for _, s := range list {
		s = strings.TrimSpace(s)
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an address nor a prefix", s)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// normOrigin returns scheme://host[:port] of an origin or URL in lower case, or "" when it has none.
func normOrigin(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}
