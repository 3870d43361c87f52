// Package config loads the BFF configuration: one YAML file (bff/exhub.yaml by default) with EXHUB_* environment
// overrides, defaults that run on a laptop in demo mode, and validation errors that name the offending key.
//
// Each section (http, valkey, market, stream, analytics, kratos, auth, store, demo, ...) is its own type with its
// defaults (DefaultX) and a Validate method whose errors name keys relative to the section; the loader composes them,
// prefixes the section's path ("config: stream.max_depth: ...") and adds the checks that span sections. A section
// owned by another package only needs YAML tags, a default and a Validate() error of the same shape.
//
// Environment overrides follow one rule: every key of the file is EXHUB_ plus its YAML path in upper case, with the
// path segments joined by "_". So http.addr is EXHUB_HTTP_ADDR, valkey.addr is EXHUB_VALKEY_ADDR,
// kratos.public_url is EXHUB_KRATOS_PUBLIC_URL, plugin_dir is EXHUB_PLUGIN_DIR. An override set to the empty string
// clears the key (for example EXHUB_VALKEY_ADDR= turns Valkey off). List keys (YAML lists in the file, such as
// auth.allowed_origins or plugins.env_allow) take comma-separated values: EXHUB_AUTH_ALLOWED_ORIGINS="a,b".
//
// Secret keys (type secret.Secret, such as store.dsn) never print: logs, errors and dumps show "[redacted]". Besides
// EXHUB_<KEY>, a secret can be read from a file named by EXHUB_<KEY>_FILE (EXHUB_STORE_DSN_FILE=/run/secrets/dsn;
// trailing newlines are trimmed); setting both is an error, and so is a file that cannot be read.
//
// Exchanges are addressed by slug: EXHUB_EXCHANGE_<SLUG>_<FIELD> for plugin, sha256, status, name and website (the
// slug's "-" is written "_"); EXHUB_EXCHANGE_<SLUG>_SETTINGS="key=value,key=value" adds settings passed to the
// plugin's Configure, and EXHUB_EXCHANGE_<SLUG>_SETTING_<KEY> replaces one setting already present (KEY
// upper-cased, "." and "-" as "_"); EXHUB_EXCHANGE_<SLUG>_ENV_ALLOW takes comma-separated names. A plugin process
// never inherits the BFF's environment (so never its EXHUB_* secrets): it gets a small base set, plugins.env_allow,
// and its exchange's env_allow and env.
//
// Relative paths (plugin_dir, exchanges[].plugin, api_docs.dir, data_dir, analytics.spool_dir, a SQLite store.dsn)
// resolve against the root directory: the `root` key (EXHUB_ROOT) when set, itself relative to the config file's
// directory; otherwise the nearest ancestor of the config file's directory that holds a go.mod (the repository
// root, so bff/exhub.yaml means the repo); otherwise the config file's directory; and with no config file at all,
// the working directory.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/exhub/exhub/bff/internal/rewards"
	"github.com/exhub/exhub/bff/internal/trading"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/exhub/exhub/bff/internal/accounts"
	"github.com/exhub/exhub/bff/internal/api/analytics"
	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/cache"
	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/kyc"
	"github.com/exhub/exhub/bff/internal/market"
	"github.com/exhub/exhub/bff/internal/member"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/ratelimit"
	"github.com/exhub/exhub/bff/internal/store"
	"github.com/exhub/exhub/bff/internal/stream"
	"github.com/exhub/exhub/bff/internal/wallet"
)

// Config is the whole BFF configuration.
type Config struct {
	// Mode is demo (local venue emulators, no keys) or live.
	Mode string `yaml:"mode"`
	// Root is the directory relative paths resolve against (see the package comment).
	Root string `yaml:"root"`
	// DataDir holds local state.
	DataDir string `yaml:"data_dir"`
	HTTP    HTTP   `yaml:"http"`
	Log     Log    `yaml:"log"`
	// Valkey is the shared cache (cache.Settings: address, fallback to the in-process cache).
	Valkey     cache.Settings `yaml:"valkey"`
	ClickHouse ClickHouse     `yaml:"clickhouse"`
	Kratos     Kratos         `yaml:"kratos"`
	Auth       auth.Config    `yaml:"auth"`
	Gate       Gate           `yaml:"gate"`
	// Member is the member service (member.Config: Kratos web-hook secret, withdrawal lockout, security events).
	Member member.Config `yaml:"member"`
	// KYC is KYC/KYB review (kyc.Config: documents per application, the demo auto-review).
	KYC kyc.Config `yaml:"kyc"`
	// Store is the member database (store.Config: driver sqlite or postgres, dsn, pools, migration lock).
	Store store.Config `yaml:"store"`
	// Accounts is members' exchange accounts (accounts.Config: key-encryption keys, broker mode); see its README.
	Accounts accounts.Config `yaml:"accounts"`
	// Trading is the order journal (trading.Config: plugin call bound, unknown-outcome resolution, reconciliation).
	Trading trading.Config `yaml:"trading"`
	// Wallet is the money-movement journal (wallet.Config: plugin call bound, resolution, faucet, fee-free exchange).
	Wallet wallet.Config `yaml:"wallet"`
	// Rewards is the referral rewards job (rewards.Config: the referrer's share of referees' fees, how often).
	Rewards rewards.Config `yaml:"rewards"`
	Demo    Demo           `yaml:"demo"`
	// RateLimit is the attempt counter the gate's limits run on (ratelimit.Config: Valkey key prefix, size of the
	// in-process table used without Valkey).
	RateLimit ratelimit.Config `yaml:"ratelimit"`
	// PluginDir is where plugin binaries named by exchanges[].plugin live.
	PluginDir string `yaml:"plugin_dir"`
	// Plugins tunes the plugin supervisor (pluginhost.Settings: timeouts, restart backoff, env_allow).
	Plugins pluginhost.Settings `yaml:"plugins"`
	APIDocs APIDocs             `yaml:"api_docs"`
	// Market is the market data service (market.Config: ticker refresh, instrument reuse, stale bounds, call timeout).
	Market market.Config `yaml:"market"`
	// Stream is the live stream gateway (stream.Settings: limits, heartbeat, leases, origin patterns).
	Stream stream.Settings `yaml:"stream"`
	// Analytics is market history in ClickHouse (analytics.Settings of the analytics API: ingest, backfill, spool).
	Analytics analytics.Settings `yaml:"analytics"`
	Exchanges []Exchange         `yaml:"exchanges"`

	// File is the config file that was read ("" when none); not a YAML key.
	File string `yaml:"-"`

	// demoCSRFKey is the random CSRF key of demo mode without auth.csrf_key (made by AuthConfig).
	demoCSRFKey secret.Secret
}

// Default is the configuration used when the file leaves a key out: demo mode on a laptop.
func Default() Config {
	return Config{
		Mode:       "demo",
		DataDir:    ".data",
		HTTP:       DefaultHTTP(),
		Log:        Log{Level: "info"},
		Valkey:     cache.DefaultSettings(),
		ClickHouse: ClickHouse{Addr: "127.0.0.1:9000", HTTPAddr: "127.0.0.1:8123"},
		Kratos:     DefaultKratos(),
		Auth:       DefaultAuth(),
		Gate:       DefaultGate(),
		Member:     member.DefaultConfig(),
		KYC:        kyc.DefaultConfig(),
		Accounts:   accounts.DefaultConfig(),
		Trading:    trading.Defaults(),
		Wallet:     wallet.Defaults(),
		Rewards:    rewards.DefaultConfig(),
		Store:      store.DefaultConfig(""),
		Demo:       DefaultDemo(),
		RateLimit:  ratelimit.Defaults(),
		PluginDir:  "bin/plugins",
		Plugins:    pluginhost.DefaultSettings(),
		APIDocs:    APIDocs{Dir: "bff/apidocs/dist"},
		Market:     market.DefaultConfig(),
		Stream:     stream.DefaultSettings(),
		Analytics:  analytics.DefaultSettings(),
		Exchanges:  DefaultExchanges(),
	}
}

// Load reads the file at path ("" for none), applies the environment (os.LookupEnv) and validates.
func Load(path string) (*Config, error) {
	return LoadWith(path, os.LookupEnv)
}

// LoadWith is Load with an explicit environment lookup (tests).
func LoadWith(path string, lookup func(string) (string, bool)) (*Config, error) {
	cfg := Default()
	configDir := ""
	if path != "" {
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		cfg.File = abs
		configDir = filepath.Dir(abs)
		if len(bytes.TrimSpace(raw)) > 0 {
			// A file with an exchanges list replaces the default list entirely.
			cfg.Exchanges = nil
			dec := yaml.NewDecoder(bytes.NewReader(raw))
			dec.KnownFields(true)
			if err := dec.Decode(&cfg); err != nil {
				return nil, fmt.Errorf("config %s: %w", path, err)
			}
			if cfg.Exchanges == nil && !hasKey(raw, "exchanges") {
				cfg.Exchanges = DefaultExchanges()
			}
		}
	}
	if err := applyEnv(&cfg, lookup); err != nil {
		return nil, err
	}
	if err := cfg.resolveRoot(configDir); err != nil {
		return nil, err
	}
	cfg.resolveStore()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &cfg, nil
}

func hasKey(raw []byte, key string) bool {
	var m map[string]any
	if yaml.Unmarshal(raw, &m) != nil {
		return false
	}
	_, ok := m[key]
	return ok
}

func (c *Config) resolveRoot(configDir string) error {
	switch {
	case c.Root != "":
		base := configDir
		if base == "" {
			wd, err := os.Getwd()
			if err != nil {
				return fmt.Errorf("config: root: %w", err)
			}
			base = wd
		}
		if !filepath.IsAbs(c.Root) {
			c.Root = filepath.Join(base, c.Root)
		}
	case configDir != "":
		c.Root = configDir
		for d := configDir; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				c.Root = d
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	default:
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("config: root: %w", err)
		}
		c.Root = wd
	}
	c.Root = filepath.Clean(c.Root)
	return nil
}

// section is one validated part of the configuration.
type section struct {
	key string
	v   interface{ Validate() error }
}

func (c *Config) sections() []section {
	return []section{
		{"http", c.HTTP}, {"log", c.Log}, {"valkey", c.Valkey}, {"clickhouse", c.ClickHouse}, {"kratos", c.Kratos},
		{"store", c.Store}, {"member", c.Member}, {"kyc", c.KYC}, {"demo", c.Demo}, {"ratelimit", c.RateLimit}, {"plugins", c.Plugins}, {"market", c.Market},
		{"stream", c.Stream}, {"analytics", c.Analytics}, {"accounts", c.Accounts},
		{"trading", c.Trading}, {"wallet", c.Wallet}, {"rewards", c.Rewards},
	}
}

// Validate checks every key and reports all problems at once, each naming its key.
func (c *Config) Validate() error {
	var errs []error
	if c.Mode != "demo" && c.Mode != "live" {
		errs = append(errs, fmt.Errorf("config: mode: %q is not demo or live", c.Mode))
	}
	for _, s := range c.sections() {
		errs = append(errs, prefixed(s.key, s.v.Validate())...)
	}
	if c.Valkey.Addr != "" && strings.TrimSpace(c.Stream.ValkeyPrefix) == "" {
		errs = append(errs, errors.New("config: stream.valkey_prefix: is required when valkey.addr is set"))
	}
	errs = append(errs, c.validateIdentity()...)
	if c.Mode == "live" && c.Member.HookSecret.Reveal() == member.DevHookSecret {
		errs = append(errs, errors.New("config: member.hook_secret: the development secret in live mode; set EXHUB_MEMBER_HOOK_SECRET_FILE (and the same value in Kratos' web hooks)"))
	}
	if err := validateExchanges(c.Exchanges); err != nil {
		errs = append(errs, prefixed("", err)...)
	}
	return errors.Join(errs...)
}

// AnalyticsSpoolPath is the resolved spool directory.
func (c *Config) AnalyticsSpoolPath() string { return c.resolve(c.Analytics.SpoolDir) }

// APIDocsDir is the resolved docs bundle directory.
func (c *Config) APIDocsDir() string { return c.resolve(c.APIDocs.Dir) }

// DataPath is the resolved data directory.
func (c *Config) DataPath() string { return c.resolve(c.DataDir) }

func (c *Config) resolve(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.Root, p)
}
