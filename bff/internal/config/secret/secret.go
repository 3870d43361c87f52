// Package secret holds configuration values that must never be printed: passwords, DSNs with credentials, API keys.
//
// A Secret redacts itself everywhere a value can leak by accident: fmt (every verb, %v %+v %#v %s %q %x ...),
// String, GoString, log/slog (LogValue), encoding/json, encoding.TextMarshaler and YAML. Only Reveal returns the
// value, so every place that uses it is one grep away.
//
// The value sits behind a pointer: a struct that holds a Secret in an unexported field is printed by fmt without
// calling the field's methods, and then shows a pointer, never the text.
package secret

import (
	"fmt"
	"log/slog"

	"gopkg.in/yaml.v3"
)

// Redacted is what a Secret prints instead of its value.
const Redacted = "[redacted]"

// Secret is a string that never prints. The zero value is the empty secret.
type Secret struct {
	v *string
}

// New wraps s; New("") is the zero Secret.
func New(s string) Secret {
	if s == "" {
		return Secret{}
	}
	return Secret{v: &s}
}

// Reveal returns the value. Call it only where the value is used (a DSN handed to a driver, a header sent).
func (s Secret) Reveal() string {
	if s.v == nil {
		return ""
	}
	return *s.v
}

// IsZero reports whether the secret is empty (also what YAML's omitempty asks).
func (s Secret) IsZero() bool { return s.Reveal() == "" }

// String redacts.
func (s Secret) String() string { return s.redacted() }

// GoString redacts (%#v).
func (s Secret) GoString() string { return "secret.Secret(" + s.redacted() + ")" }

// Format redacts for every fmt verb.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = f.Write([]byte(s.GoString()))
		return
	}
	_, _ = f.Write([]byte(s.redacted()))
}

// LogValue redacts in log/slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.redacted()) }

// MarshalJSON redacts.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + s.redacted() + `"`), nil }

// MarshalText redacts.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.redacted()), nil }

// MarshalYAML redacts.
func (s Secret) MarshalYAML() (any, error) { return s.redacted(), nil }

// UnmarshalText sets the value (environment variables, flags).
func (s *Secret) UnmarshalText(b []byte) error {
	*s = New(string(b))
	return nil
}

// UnmarshalYAML reads a scalar string.
func (s *Secret) UnmarshalYAML(n *yaml.Node) error {
	var v string
	if err := n.Decode(&v); err != nil {
		return fmt.Errorf("a secret is a string: %w", err)
	}
	*s = New(v)
	return nil
}

// redacted is "" for an empty secret (so an unset one is visibly unset) and Redacted otherwise.
func (s Secret) redacted() string {
	if s.IsZero() {
		return ""
	}
	return Redacted
}
