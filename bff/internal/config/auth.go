package config

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"slices"

	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/auth/gate"
	"github.com/exhub/exhub/bff/internal/config/secret"
)

// Kratos is the identity server (Ory Kratos): its public API (browser flows, whoami) and its admin API. The session
// checker (auth) and the self-service gate (gate) take their Kratos URLs from here.
type Kratos struct {
	PublicURL string `yaml:"public_url"`
	AdminURL  string `yaml:"admin_url"`
}

// DefaultKratos is the Kratos that `make run` starts.
func DefaultKratos() Kratos {
	return Kratos{PublicURL: "http://127.0.0.1:4433", AdminURL: "http://127.0.0.1:4434"}
}

// Validate names each bad key relative to the section.
func (k Kratos) Validate() error {
	var p Problems
	p.HTTPURL("public_url", k.PublicURL)
	p.HTTPURL("admin_url", k.AdminURL)
	return p.Err()
}

// DefaultAuth is auth.Defaults (whoami cache, allowed origins, CSRF cookie and header, trusted proxies) with the
// Kratos URLs left to the kratos section. The CSRF key (csrf_key, a secret: EXHUB_AUTH_CSRF_KEY or
// EXHUB_AUTH_CSRF_KEY_FILE) is required in live mode; in demo mode without one a random key is made per process
// (CSRF tokens then change when the BFF restarts; the UI fetches a new one from GET /api/v1/me).
func DefaultAuth() auth.Config {
	c := auth.Defaults()
	c.KratosPublicURL, c.KratosAdminURL = "", ""
	return c
}

// Gate is the self-service gate's configuration (gate.Config: password policy body limit, stay-signed-in cookie,
// rate limits). Its Kratos URL, session and CSRF cookie names, Secure flag and trusted proxies come from the kratos
// and auth sections.
type Gate struct {
	gate.Config `yaml:",inline"`
}

// DefaultGate is gate.Defaults with the shared settings left to the kratos and auth sections.
func DefaultGate() Gate {
	c := gate.Defaults()
	c.KratosPublicURL, c.SessionCookie, c.CSRFCookie, c.TrustedProxies = "", "", "", nil
	return Gate{Config: c}
}

// AuthConfig is the session checker's configuration: the auth section with the Kratos URLs of the kratos section
// and the CSRF key (auth.csrf_key, or in demo mode without one a random key made once per Config).
func (c *Config) AuthConfig() auth.Config {
	a := c.Auth
	if a.KratosPublicURL == "" {
		a.KratosPublicURL = c.Kratos.PublicURL
	}
	if a.KratosAdminURL == "" {
		a.KratosAdminURL = c.Kratos.AdminURL
	}
	if a.CSRFKey.IsZero() {
		if c.demoCSRFKey.IsZero() {
			b := make([]byte, 32)
			_, _ = rand.Read(b)
			c.demoCSRFKey = secret.New(base64.RawStdEncoding.EncodeToString(b))
		}
		a.CSRFKey = c.demoCSRFKey
	}
	return a
}

// GateConfig is the self-service gate's configuration: the gate section with the Kratos public URL, the cookie
// names, the Secure flag and the trusted proxies of the kratos and auth sections.
func (c *Config) GateConfig() gate.Config {
	g, a := c.Gate.Config, c.Auth
	if g.KratosPublicURL == "" {
		g.KratosPublicURL = c.Kratos.PublicURL
	}
	if g.SessionCookie == "" {
		g.SessionCookie = a.SessionCookie
	}
	if g.CSRFCookie == "" {
		g.CSRFCookie = a.CSRFCookie
	}
	if g.TrustedProxies == nil {
		g.TrustedProxies = slices.Clone(a.TrustedProxies)
	}
	g.CookieSecure = g.CookieSecure || a.CookieSecure
	return g
}

// validateIdentity checks what the kratos, auth and gate sections share (a copy set to another value than its
// owner's is an error) and the CSRF key (required in live mode, at least 32 bytes).
func (c *Config) validateIdentity() []error {
	var errs []error
	same := func(key, v, ownerKey, owner string) {
		if v != "" && v != owner {
			errs = append(errs, fmt.Errorf("config: %s: %q differs from %s %q; set %s only", key, v, ownerKey, owner, ownerKey))
		}
	}
	a, g := c.Auth, c.Gate.Config
	same("auth.kratos_public_url", a.KratosPublicURL, "kratos.public_url", c.Kratos.PublicURL)
	same("auth.kratos_admin_url", a.KratosAdminURL, "kratos.admin_url", c.Kratos.AdminURL)
	same("gate.kratos_public_url", g.KratosPublicURL, "kratos.public_url", c.Kratos.PublicURL)
	same("gate.session_cookie", g.SessionCookie, "auth.session_cookie", a.SessionCookie)
	same("gate.csrf_cookie", g.CSRFCookie, "auth.csrf_cookie", a.CSRFCookie)
	if g.TrustedProxies != nil && !slices.Equal(g.TrustedProxies, a.TrustedProxies) {
		errs = append(errs, fmt.Errorf("config: gate.trusted_proxies: %v differs from auth.trusted_proxies %v; set auth.trusted_proxies only",
			g.TrustedProxies, a.TrustedProxies))
	}
	switch n := len(c.Auth.CSRFKey.Reveal()); {
	case n == 0 && c.Mode == "live":
		errs = append(errs, fmt.Errorf("config: auth.csrf_key: required in live mode (EXHUB_AUTH_CSRF_KEY_FILE names a file holding at least 32 random bytes)"))
	case n > 0 && n < 32:
		errs = append(errs, fmt.Errorf("config: auth.csrf_key: %d bytes, want at least 32", n))
	}
	if err := c.AuthConfig().Validate(); err != nil {
		errs = append(errs, prefixed("auth", err)...)
	}
	if err := c.GateConfig().Validate(); err != nil {
		errs = append(errs, prefixed("gate", err)...)
	}
	return errs
}

// Demo holds what demo mode adds to the stack.
type Demo struct {
	// InboxURL is the local mail and SMS inbox's API (Mailpit) that receives Kratos' codes in demo mode.
	InboxURL string `yaml:"inbox_url"`
}

// DefaultDemo is the inbox that `make run` starts.
func DefaultDemo() Demo { return Demo{InboxURL: "http://127.0.0.1:8025"} }

// Validate names each bad key relative to the section.
func (d Demo) Validate() error {
	var p Problems
	p.HTTPURL("inbox_url", d.InboxURL)
	return p.Err()
}
