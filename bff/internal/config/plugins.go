package config

import (
	"encoding/hex"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/exhub/exhub/bff/internal/market"
	"github.com/exhub/exhub/bff/internal/servicegate"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// Exchange status values accepted in the config (the market package's, which serves them). Empty means: use the
// plugin's own status.
const (
	StatusAvailable   = market.StatusAvailable
	StatusComingSoon  = market.StatusComingSoon
	StatusMaintenance = market.StatusMaintenance
)

// Exchange is one listed exchange. With no plugin it is listed from this entry alone (e.g. coming soon).
type Exchange struct {
	Key  int    `yaml:"key"`
	Slug string `yaml:"slug"`
	// Name is shown when the plugin is not running or absent.
	Name string `yaml:"name"`
	// Plugin is a binary name under plugin_dir or a path (with a "/"); empty: no plugin.
	Plugin string `yaml:"plugin"`
	// SHA256 of the plugin binary, hex; checked at every launch when set.
	SHA256 string `yaml:"sha256"`
	// Status overrides the plugin's own status: available, coming_soon or maintenance.
	Status  string `yaml:"status"`
	Website string `yaml:"website"`
	// Settings are passed to the plugin's Configure.
	Settings map[string]string `yaml:"settings"`
	// Env holds explicit "NAME=value" entries for this plugin's process environment.
	Env []string `yaml:"env"`
	// EnvAllow names more host variables passed through to this plugin (besides plugins.env_allow). Env override:
	// EXHUB_EXCHANGE_<SLUG>_ENV_ALLOW, comma separated.
	EnvAllow []string `yaml:"env_allow"`
	// Gates: the services (trading, withdraw, transfer) that need two-factor authentication and/or a verified KYC
	// on this exchange, e.g. {trading: [two_factor], withdraw: [two_factor, kyc]}. Empty (the demo default): none.
	Gates servicegate.Rules `yaml:"gates"`
}

// GateRules are the exchanges' gates and display names by slug, for servicegate.New.
func GateRules(list []Exchange) (map[string]servicegate.Rules, map[string]string) {
	rules, names := map[string]servicegate.Rules{}, map[string]string{}
	for _, e := range list {
		names[e.Slug] = e.Name
		if len(e.Gates) > 0 {
			rules[e.Slug] = e.Gates
		}
	}
	return rules, names
}

// DefaultExchanges are the demo exchanges, each plugin pointed at its local emulator.
func DefaultExchanges() []Exchange {
	return []Exchange{
		{Key: 1, Slug: "binance", Name: "Binance", Plugin: "binance", Website: "https://www.binance.com",
			Settings: map[string]string{
				"spot_rest_url": "http://127.0.0.1:7001", "spot_ws_url": "ws://127.0.0.1:7001",
				"futures_rest_url": "http://127.0.0.1:7001", "futures_ws_url": "ws://127.0.0.1:7001/fws",
			}},
		{Key: 2, Slug: "okx", Name: "OKX", Plugin: "okx", Website: "https://www.okx.com",
			Settings: map[string]string{
				"rest_url": "http://127.0.0.1:7002", "ws_public_url": "ws://127.0.0.1:7002/ws/v5/public",
				"ws_private_url": "ws://127.0.0.1:7002/ws/v5/private", "ws_business_url": "ws://127.0.0.1:7002/ws/v5/business",
			}},
		{Key: 3, Slug: "bybit", Name: "Bybit", Status: StatusComingSoon, Website: "https://www.bybit.com"},
	}
}

var slugRe = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// validateExchanges checks the list; keys are exchanges[i].field.
func validateExchanges(list []Exchange) error {
	var p Problems
	keys := map[int]int{}
	slugs := map[string]int{}
	for i, e := range list {
		k := listKey("exchanges", i)
		if e.Key <= 0 {
			p.Add(k+".key", "must be a positive integer, got %d", e.Key)
		} else if j, dup := keys[e.Key]; dup {
			p.Add(k+".key", "%d is also the key of exchanges[%d]", e.Key, j)
		} else {
			keys[e.Key] = i
		}
		if !slugRe.MatchString(e.Slug) {
			p.Add(k+".slug", "%q must be lower-case letters and digits separated by single dashes", e.Slug)
		} else if j, dup := slugs[e.Slug]; dup {
			p.Add(k+".slug", "%q is also the slug of exchanges[%d]", e.Slug, j)
		} else {
			slugs[e.Slug] = i
		}
		if strings.TrimSpace(e.Name) == "" {
			p.Add(k+".name", "is required")
		}
		switch e.Status {
		case "", StatusAvailable, StatusComingSoon, StatusMaintenance:
		default:
			p.Add(k+".status", "%q is not available, coming_soon or maintenance (or empty for the plugin's own)", e.Status)
		}
		if e.Plugin == "" && e.Status == "" {
			p.Add(k+".status", "an exchange without a plugin needs a status (e.g. coming_soon)")
		}
		for j, n := range e.EnvAllow {
			if err := sdk.CheckEnvName(n); err != nil {
				p.Add(fmt.Sprintf("%s.env_allow[%d]", k, j), "%v", err)
			}
		}
		for j, kv := range e.Env {
			name, _, found := strings.Cut(kv, "=")
			if !found {
				p.Add(fmt.Sprintf("%s.env[%d]", k, j), "%q is not NAME=value", kv)
			} else if err := sdk.CheckEnvName(name); err != nil {
				p.Add(fmt.Sprintf("%s.env[%d]", k, j), "%v", err)
			}
		}
		for _, bad := range e.Gates.Validate() {
			p.Add(k+".gates", "%s", bad)
		}
		if e.SHA256 != "" {
			if b, err := hex.DecodeString(e.SHA256); err != nil || len(b) != 32 {
				p.Add(k+".sha256", "must be 64 hex digits")
			}
			if e.Plugin == "" {
				p.Add(k+".sha256", "is set but the exchange has no plugin")
			}
		}
	}
	return p.Err()
}

// PluginEnvAllow is every host variable name passed through to e's plugin: plugins.env_allow, then the exchange's
// env_allow, each name once.
func (c *Config) PluginEnvAllow(e Exchange) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range append(append([]string(nil), c.Plugins.EnvAllow...), e.EnvAllow...) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// PluginPath is the resolved plugin binary path, "" when the exchange has no plugin.
func (c *Config) PluginPath(e Exchange) string {
	if e.Plugin == "" {
		return ""
	}
	if strings.ContainsRune(e.Plugin, '/') {
		return c.resolve(e.Plugin)
	}
	return filepath.Join(c.resolve(c.PluginDir), e.Plugin)
}
