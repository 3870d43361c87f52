package config

import "time"

// Kratos is the identity server (Ory Kratos): its public API (browser flows, whoami) and its admin API.
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

// Auth is how the BFF checks sessions (against kratos.public_url) and which browser origins may change state.
type Auth struct {
	// AllowedOrigins are the origins (scheme://host[:port]) whose state-changing requests are accepted.
	AllowedOrigins List `yaml:"allowed_origins"`
	// WhoamiCacheTTL is how long a session check is reused for the same session cookie (dropped on logout).
	WhoamiCacheTTL Duration `yaml:"whoami_cache_ttl"`
}

// DefaultAuth allows the edge's own origin.
func DefaultAuth() Auth {
	return Auth{AllowedOrigins: List{"http://127.0.0.1:8080", "http://localhost:8080"},
		WhoamiCacheTTL: Duration(10 * time.Second)}
}

// Validate names each bad key relative to the section.
func (a Auth) Validate() error {
	var p Problems
	for i, o := range a.AllowedOrigins {
		if !isOrigin(o) {
			p.Add(listKey("allowed_origins", i), "%q is not an origin like https://exhub.example (scheme and host, no path)", o)
		}
	}
	if a.WhoamiCacheTTL < 0 {
		p.Add("whoami_cache_ttl", "must not be negative")
	}
	return p.Err()
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
