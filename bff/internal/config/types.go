package config

import (
	"fmt"
	"strings"

	"github.com/exhub/exhub/bff/internal/config/setting"
)

// The shared value types and validation helper live in package setting (which imports nothing of the BFF, so
// packages that own a section can use them); these aliases keep the loader's names.
type (
	// Duration is setting.Duration: "10s" or "250ms" in YAML and environment values.
	Duration = setting.Duration
	// List is setting.List: a YAML list (or one comma-separated string), comma separated in the environment.
	List = setting.List
	// Problems is setting.Problems: a section's validation errors, each naming its key relative to the section.
	Problems = setting.Problems
	// KeyDuration names a duration setting for Problems.Positive.
	KeyDuration = setting.KeyDuration
)

// SplitList parses a comma-separated value into trimmed, non-empty items; nil when there are none.
func SplitList(s string) List { return setting.SplitList(s) }

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

func checkHostPort(addr string, allowAnyHost bool) error { return setting.HostPort(addr, allowAnyHost) }

func listKey(key string, i int) string { return setting.ListKey(key, i) }
