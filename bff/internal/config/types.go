package config

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

// Joined is a list kept in its comma-separated form (for code that takes the string; new settings use List). YAML
// accepts a list or a comma-separated string; Items splits it.
type Joined string

// UnmarshalYAML accepts a sequence of strings or one comma-separated string.
func (j *Joined) UnmarshalYAML(n *yaml.Node) error {
	var l List
	if err := l.UnmarshalYAML(n); err != nil {
		return err
	}
	*j = Joined(strings.Join(l, ","))
	return nil
}

// MarshalYAML writes a YAML list.
func (j Joined) MarshalYAML() (any, error) { return []string(j.Items()), nil }

// Items is the list.
func (j Joined) Items() List { return SplitList(string(j)) }

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
	if !isHTTPURL(u) {
		p.Add(key, "%q is not an http(s) URL", u)
	}
}

func isHTTPURL(u string) bool {
	pu, err := url.Parse(u)
	return err == nil && (pu.Scheme == "http" || pu.Scheme == "https") && pu.Host != ""
}

// prefixed turns a section's problems into the loader's "config: <section>.<key>: ..." errors. Problems that already
// start with the section's name (sections of other packages may name keys from the root) only get "config: ".
func prefixed(section string, err error) []error {
	if err == nil {
		return nil
	}
	var parts []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		parts = j.Unwrap()
	} else {
		parts = []error{err}
	}
	out := make([]error, 0, len(parts))
	for _, e := range parts {
		if section == "" || strings.HasPrefix(e.Error(), section+".") || strings.HasPrefix(e.Error(), section+":") ||
			strings.HasPrefix(e.Error(), section+" ") {
			out = append(out, fmt.Errorf("config: %w", e))
			continue
		}
		out = append(out, fmt.Errorf("config: %s.%w", section, e))
	}
	return out
}

func checkHostPort(addr string, allowAnyHost bool) error {
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

func listKey(key string, i int) string { return key + "[" + strconv.Itoa(i) + "]" }
