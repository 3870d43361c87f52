// Package setting holds the value types and the validation helper that configuration sections share: Duration ("10s"
// in YAML and the environment), List (a YAML list, comma separated in the environment) and Problems (errors naming
// keys relative to the section). It imports nothing of the BFF, so a package can own its section of the
// configuration (its type, defaults and Validate) without importing the loader, which imports it.
package setting

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Duration is a time.Duration written as "10s" or "250ms" in YAML and environment values.
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// UnmarshalYAML accepts a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration like 10s or 250ms", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// List is a list of strings: a YAML list ([a, b] or one item per line) or, as files written before lists were
// lists, one comma-separated string; in the environment always comma separated. Items are trimmed, empty ones
// dropped.
type List []string

// UnmarshalYAML accepts a sequence of strings or one comma-separated string.
func (l *List) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		var s string
		if err := n.Decode(&s); err != nil {
			return err
		}
		*l = SplitList(s)
		return nil
	}
	var items []string
	if err := n.Decode(&items); err != nil {
		return fmt.Errorf("not a list of strings: %w", err)
	}
	*l = SplitList(strings.Join(items, ","))
	return nil
}

// SplitList parses a comma-separated value into trimmed, non-empty items; nil when there are none.
func SplitList(s string) List {
	var out List
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// Problems collects the validation errors of one section, each naming its key relative to the section
// ("dsn: is required"); the loader prefixes the section's path. Sections owned by other packages only have to return
// such errors joined with errors.Join.
type Problems struct{ errs []error }

// Add records a problem of key.
func (p *Problems) Add(key, format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
}

// Err joins the problems (nil when there are none).
func (p *Problems) Err() error { return errors.Join(p.errs...) }

// Positive adds a problem for each duration that is not positive.
func (p *Problems) Positive(ds ...KeyDuration) {
	for _, d := range ds {
		if d.D <= 0 {
			p.Add(d.Key, "must be a positive duration, got %s", d.D.D())
		}
	}
}

// KeyDuration names a duration setting for Positive.
type KeyDuration struct {
	Key string
	D   Duration
}

// HTTPURL adds a problem when u is set and is not an http(s) URL with a host.
func (p *Problems) HTTPURL(key, u string) {
	if u == "" {
		return
	}
	if !IsHTTPURL(u) {
		p.Add(key, "%q is not an http(s) URL", u)
	}
}

// IsHTTPURL reports whether u is an http(s) URL with a host.
func IsHTTPURL(u string) bool {
	pu, err := url.Parse(u)
	return err == nil && (pu.Scheme == "http" || pu.Scheme == "https") && pu.Host != ""
}

// HostPort says why addr is not host:port with a valid port; an empty host is refused unless allowAnyHost.
func HostPort(addr string, allowAnyHost bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port", addr)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%q has no valid port", addr)
	}
	if !allowAnyHost && host == "" {
		return fmt.Errorf("%q has no host: bind to 127.0.0.1 explicitly", addr)
	}
	return nil
}

// ListKey is the key of item i of a list ("env_allow[2]").
func ListKey(key string, i int) string { return key + "[" + strconv.Itoa(i) + "]" }
