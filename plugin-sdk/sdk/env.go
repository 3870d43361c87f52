package sdk

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// BaseEnv are the host variables every plugin process gets (with the host's value, when set): what a Go program
// needs to find its tools, its home and temporary folders, the time zone, the locale and the system's CA
// certificates. Every LC_* variable is passed as well. Nothing else of the host's environment reaches a plugin
// unless LaunchConfig.EnvAllow names it.
var BaseEnv = []string{"PATH", "HOME", "TMPDIR", "TZ", "LANG", "LANGUAGE", "SSL_CERT_FILE", "SSL_CERT_DIR"}

var envNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// CheckEnvName reports why a variable name may not be passed to a plugin: it is not a plain NAME, or it belongs to
// the hub (EXHUB_*: store DSN, key-encryption key, ...) or to go-plugin's handshake (PLUGIN_*).
func CheckEnvName(name string) error {
	if !envNameRe.MatchString(name) {
		return fmt.Errorf("%q is not an environment variable name", name)
	}
	upper := strings.ToUpper(name)
	if strings.HasPrefix(upper, "EXHUB_") {
		return fmt.Errorf("%s: EXHUB_* variables are the hub's own settings and secrets, never a plugin's", name)
	}
	if strings.HasPrefix(upper, "PLUGIN_") || upper == strings.ToUpper(Handshake.MagicCookieKey) {
		return fmt.Errorf("%s is set by the plugin handshake", name)
	}
	return nil
}

// PluginEnv builds a plugin process's environment from the host's (environ, as os.Environ returns it): the BaseEnv
// names and LC_*, the names in allow, then the explicit "NAME=value" entries of explicit (which win). The result is
// sorted by name and holds each name once.
func PluginEnv(environ, explicit, allow []string) ([]string, error) {
	host := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			host[k] = v
		}
	}
	out := map[string]string{}
	for _, k := range BaseEnv {
		if v, ok := host[k]; ok {
			out[k] = v
		}
	}
	for k, v := range host {
		if strings.HasPrefix(k, "LC_") {
			out[k] = v
		}
	}
	for _, k := range allow {
		if err := CheckEnvName(k); err != nil {
			return nil, fmt.Errorf("env allow: %w", err)
		}
		if v, ok := host[k]; ok {
			out[k] = v
		}
	}
	for _, kv := range explicit {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("env: %q is not NAME=value", kv)
		}
		if err := CheckEnvName(k); err != nil {
			return nil, fmt.Errorf("env: %w", err)
		}
		out[k] = v
	}
	env := make([]string, 0, len(out))
	for k, v := range out {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env, nil
}
