// Package config loads the BFF configuration: one YAML file (bff/exhub.yaml by default) with EXHUB_* environment
// overrides, defaults that run on a laptop in demo mode, and validation errors that name the offending key.
//
// Environment overrides follow one rule: every scalar key of the file is EXHUB_ plus its YAML path in upper case,
// with the path segments joined by "_". So http.addr is EXHUB_HTTP_ADDR, valkey.addr is EXHUB_VALKEY_ADDR,
// kratos.public_url is EXHUB_KRATOS_PUBLIC_URL, plugin_dir is EXHUB_PLUGIN_DIR. An override set to the empty string
// clears the key (for example EXHUB_VALKEY_ADDR= turns Valkey off). Exchanges are addressed by slug:
// EXHUB_EXCHANGE_<SLUG>_<FIELD> for plugin, sha256, status, name and website (the slug's "-" is written "_");
// EXHUB_EXCHANGE_<SLUG>_SETTINGS="key=value,key=value" adds settings passed to the plugin's Configure, and
// EXHUB_EXCHANGE_<SLUG>_SETTING_<KEY> replaces one setting already present (KEY upper-cased, "." and "-" as "_").
// The plugin environment allowlists are lists: EXHUB_PLUGINS_ENV_ALLOW and EXHUB_EXCHANGE_<SLUG>_ENV_ALLOW take
// comma-separated names. A plugin process never inherits the BFF's environment (so never its EXHUB_* secrets): it
// gets a small base set, plugins.env_allow, and its exchange's env_allow and env.
//
// Relative paths (plugin_dir, exchanges[].plugin, api_docs.dir, data_dir) resolve against the root directory: the
// `root` key (EXHUB_ROOT) when set, itself relative to the config file's directory; otherwise the nearest ancestor of
// the config file's directory that holds a go.mod (the repository root, so bff/exhub.yaml means the repo); otherwise
// the config file's directory; and with no config file at all, the working directory.
package config

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/exhub/exhub/plugin-sdk/sdk"
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

// Exchange status values accepted in the config. Empty means: use the plugin's own status.
const (
	StatusAvailable   = "available"
	StatusComingSoon  = "coming_soon"
	StatusMaintenance = "maintenance"
)

// Config is the whole BFF configuration.
type Config struct {
	// Mode is demo (local venue emulators, no keys) or live.
	Mode string `yaml:"mode"`
	// Root is the directory relative paths resolve against (see the package comment).
	Root string `yaml:"root"`
	// DataDir holds local state.
	DataDir    string     `yaml:"data_dir"`
	HTTP       HTTP       `yaml:"http"`
	Log        Log        `yaml:"log"`
	Valkey     Valkey     `yaml:"valkey"`
	ClickHouse ClickHouse `yaml:"clickhouse"`
	Kratos     Kratos     `yaml:"kratos"`
	// PluginDir is where plugin binaries named by exchanges[].plugin live.
	PluginDir string     `yaml:"plugin_dir"`
	Plugins   Plugins    `yaml:"plugins"`
	APIDocs   APIDocs    `yaml:"api_docs"`
	Market    Market     `yaml:"market"`
	Stream    Stream     `yaml:"stream"`
	Analytics Analytics  `yaml:"analytics"`
	Exchanges []Exchange `yaml:"exchanges"`

	// File is the config file that was read ("" when none); not a YAML key.
	File string `yaml:"-"`
}

// HTTP is the BFF's own listener.
type HTTP struct {
	Addr              string   `yaml:"addr"`
	ReadHeaderTimeout Duration `yaml:"read_header_timeout"`
	ShutdownTimeout   Duration `yaml:"shutdown_timeout"`
	// ExchangesMaxAge is the Cache-Control max-age of the public exchange list.
	ExchangesMaxAge Duration `yaml:"exchanges_max_age"`
}

// Log configures the JSON logs on stderr.
type Log struct {
	Level string `yaml:"level"`
}

// Valkey is the shared cache. Empty addr: in-process cache.
type Valkey struct {
	Addr string `yaml:"addr"`
	// Required makes an unreachable Valkey a start-up error instead of a fallback to the in-process cache.
	Required    bool     `yaml:"required"`
	DialTimeout Duration `yaml:"dial_timeout"`
	// LocalMaxEntries bounds the in-process fallback cache.
	LocalMaxEntries int `yaml:"local_max_entries"`
}

// ClickHouse is the analytics store. Empty addresses: not configured.
type ClickHouse struct {
	// Addr is the native protocol address (host:port).
	Addr string `yaml:"addr"`
	// HTTPAddr is the HTTP interface (host:port); readiness uses its /ping when set.
	HTTPAddr string `yaml:"http_addr"`
}

// Kratos is the identity server.
type Kratos struct {
	PublicURL string `yaml:"public_url"`
	AdminURL  string `yaml:"admin_url"`
}

// Plugins tunes the plugin supervisor.
type Plugins struct {
	StartTimeout   Duration `yaml:"start_timeout"`
	CallTimeout    Duration `yaml:"call_timeout"`
	HealthInterval Duration `yaml:"health_interval"`
	BackoffInitial Duration `yaml:"backoff_initial"`
	BackoffMax     Duration `yaml:"backoff_max"`
	// StableAfter resets the restart backoff once a plugin has run this long.
	StableAfter Duration `yaml:"stable_after"`
	// StreamBuffer is the event buffer of one durable market stream.
	StreamBuffer int `yaml:"stream_buffer"`
	// EnvAllow names host environment variables every plugin process gets (with the host's value). A plugin never
	// inherits the host's environment: it gets a small base set (PATH, HOME, TMPDIR, TZ, LANG, LC_*, SSL_CERT_FILE,
	// SSL_CERT_DIR; see sdk.BaseEnv), these names, and its exchange's env_allow and env. EXHUB_* and PLUGIN_* names
	// are refused. Env override: EXHUB_PLUGINS_ENV_ALLOW, comma separated.
	EnvAllow []string `yaml:"env_allow"`
}

// Market tunes the market data service (instruments, tickers, candles, books, trades).
type Market struct {
	// TickerInterval is how often the ticker lists of every exchange and market type are refreshed.
	TickerInterval Duration `yaml:"ticker_interval"`
	// InstrumentsTTL is how long an instrument list is reused before it is fetched again.
	InstrumentsTTL Duration `yaml:"instruments_ttl"`
	// TickersMaxStale bounds the age of a ticker list served (marked stale) while its exchange fails.
	TickersMaxStale Duration `yaml:"tickers_max_stale"`
	// InstrumentsMaxStale is the same bound for instrument lists.
	InstrumentsMaxStale Duration `yaml:"instruments_max_stale"`
	// CallTimeout bounds one market data call to a plugin.
	CallTimeout Duration `yaml:"call_timeout"`
}

// Stream tunes the live stream gateway (GET /api/v1/stream); see docs/stream-api.md.
type Stream struct {
	// MaxConnections on this replica; more are refused with 503 before the upgrade.
	MaxConnections int `yaml:"max_connections"`
	// MaxSubscriptions per connection (429 beyond).
	MaxSubscriptions int `yaml:"max_subscriptions"`
	// MaxMessageBytes is the largest client message; bigger closes the connection with 1009.
	MaxMessageBytes int `yaml:"max_message_bytes"`
	// MaxDepth is the largest book depth a client may ask for.
	MaxDepth int `yaml:"max_depth"`
	// UpstreamDepth is the depth of the one upstream book subscription per topic (0: the plugin's default).
	UpstreamDepth int `yaml:"upstream_depth"`
	// UpstreamLinger is how long a leader waits for more upstream events before publishing a batch (0: no wait).
	UpstreamLinger Duration `yaml:"upstream_linger"`
	// MaxCoalescedTrades is how many trades a slow client's merged trades message keeps.
	MaxCoalescedTrades int `yaml:"max_coalesced_trades"`
	// MaxPendingControl bounds unread replies (acks, errors, pongs) per connection (1008 beyond).
	MaxPendingControl int `yaml:"max_pending_control"`
	// MaxFrameBytes bounds one batched frame of several messages.
	MaxFrameBytes int `yaml:"max_frame_bytes"`
	// PingInterval and PongTimeout: the heartbeat (1008 when a pong is late).
	PingInterval Duration `yaml:"ping_interval"`
	PongTimeout  Duration `yaml:"pong_timeout"`
	// WriteTimeout ends a connection whose write has been stuck this long.
	WriteTimeout Duration `yaml:"write_timeout"`
	// InstrumentsTTL is how long an instrument list validates subscriptions.
	InstrumentsTTL Duration `yaml:"instruments_ttl"`
	// LeaseTTL is the life of a topic lease in Valkey without renewal (renewed every third of it); a dead leader is
	// replaced within about 4/3 of it.
	LeaseTTL Duration `yaml:"lease_ttl"`
	// ValkeyPrefix prefixes every stream key and channel in Valkey.
	ValkeyPrefix string `yaml:"valkey_prefix"`
	// OriginPatterns are extra browser origins allowed besides the same host, comma separated
	// (path.Match patterns on the Origin host, e.g. "app.example.com,*.example.com").
	OriginPatterns string `yaml:"origin_patterns"`
}

// Origins is origin_patterns as a list.
func (s Stream) Origins() []string {
	var out []string
	for _, p := range strings.Split(s.OriginPatterns, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Analytics is market history in ClickHouse (clickhouse.addr): ingest, backfill and the analytics API.
type Analytics struct {
	// Enabled runs analytics when clickhouse.addr is set.
	Enabled bool `yaml:"enabled"`
	// Database holds the analytics tables.
	Database string `yaml:"database"`
	// Cluster, when set, creates replicated and Distributed tables ON CLUSTER this cluster.
	Cluster string `yaml:"cluster"`
	// SpoolDir keeps batches while ClickHouse is down (relative to the root).
	SpoolDir string `yaml:"spool_dir"`
	// SpoolMaxMB bounds the spool.
	SpoolMaxMB int `yaml:"spool_max_mb"`
	// BatchRows and FlushInterval: a batch is written at this many rows or after this long.
	BatchRows     int      `yaml:"batch_rows"`
	FlushInterval Duration `yaml:"flush_interval"`
	// Live ingests the plugins' live streams (trades, 1m candles, tickers, mark prices).
	Live bool `yaml:"live"`
	// BackfillDays of history are kept complete from the plugins' history calls (0: no backfill).
	BackfillDays int `yaml:"backfill_days"`
	// BackfillPeriods lists the derivatives series periods to backfill, comma separated.
	BackfillPeriods string `yaml:"backfill_periods"`
	// BackfillInterval is the time between gap checks.
	BackfillInterval Duration `yaml:"backfill_interval"`
	// Symbols restricts ingest to these symbols, comma separated; empty: every instrument up to max_symbols per
	// exchange and market type.
	Symbols    string `yaml:"symbols"`
	MaxSymbols int    `yaml:"max_symbols"`
}

// AnalyticsSpoolPath is the resolved spool directory.
func (c *Config) AnalyticsSpoolPath() string { return c.resolve(c.Analytics.SpoolDir) }

// APIDocs is the offline API reference page.
type APIDocs struct {
	// Dir holds the @stoplight/elements browser bundle (web-components.min.js, styles.min.css) that
	// bff/apidocs/install.sh puts in bff/apidocs/dist.
	Dir string `yaml:"dir"`
}

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

// DefaultPluginEnvAllow are the host variables passed to every plugin by default: the proxy settings Go's HTTP
// client reads, so a plugin reaches its exchange the way the host would. Demo mode needs none of them (the
// emulators are on 127.0.0.1, which no proxy handles).
var DefaultPluginEnvAllow = []string{"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy"}

// splitList parses a comma-separated override into names; empty means none.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
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

// Default is the configuration used when the file leaves a key out: demo mode on a laptop.
func Default() Config {
	return Config{
		Mode:    "demo",
		DataDir: ".data",
		HTTP: HTTP{
			Addr:              "127.0.0.1:8090",
			ReadHeaderTimeout: Duration(10 * time.Second),
			ShutdownTimeout:   Duration(10 * time.Second),
			ExchangesMaxAge:   Duration(10 * time.Second),
		},
		Log:        Log{Level: "info"},
		Valkey:     Valkey{Addr: "127.0.0.1:6379", DialTimeout: Duration(time.Second), LocalMaxEntries: 10000},
		ClickHouse: ClickHouse{Addr: "127.0.0.1:9000", HTTPAddr: "127.0.0.1:8123"},
		Kratos:     Kratos{PublicURL: "http://127.0.0.1:4433", AdminURL: "http://127.0.0.1:4434"},
		PluginDir:  "bin/plugins",
		Plugins: Plugins{
			StartTimeout:   Duration(10 * time.Second),
			CallTimeout:    Duration(10 * time.Second),
			HealthInterval: Duration(5 * time.Second),
			BackoffInitial: Duration(100 * time.Millisecond),
			BackoffMax:     Duration(30 * time.Second),
			StableAfter:    Duration(60 * time.Second),
			StreamBuffer:   1024,
			EnvAllow:       append([]string(nil), DefaultPluginEnvAllow...),
		},
		APIDocs: APIDocs{Dir: "bff/apidocs/dist"},
		Market: Market{
			TickerInterval:      Duration(10 * time.Second),
			InstrumentsTTL:      Duration(5 * time.Minute),
			TickersMaxStale:     Duration(2 * time.Minute),
			InstrumentsMaxStale: Duration(24 * time.Hour),
			CallTimeout:         Duration(10 * time.Second),
		},
		Stream: Stream{
			MaxConnections: 20000, MaxSubscriptions: 64, MaxMessageBytes: 4096, MaxDepth: 200,
			UpstreamLinger: Duration(time.Millisecond), MaxCoalescedTrades: 200, MaxPendingControl: 256,
			MaxFrameBytes: 64 << 10, PingInterval: Duration(20 * time.Second), PongTimeout: Duration(10 * time.Second),
			WriteTimeout: Duration(10 * time.Second), InstrumentsTTL: Duration(5 * time.Minute),
			LeaseTTL: Duration(3 * time.Second), ValkeyPrefix: "exhub:stream:",
		},
		Analytics: Analytics{
			Enabled: true, Database: "exhub", SpoolDir: ".data/analytics-spool", SpoolMaxMB: 1024,
			BatchRows: 10000, FlushInterval: Duration(time.Second), Live: true, BackfillDays: 30,
			BackfillPeriods: "5m,15m,1h,4h,1d", BackfillInterval: Duration(10 * time.Minute), MaxSymbols: 20,
		},
		Exchanges: []Exchange{
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
		},
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
				cfg.Exchanges = Default().Exchanges
			}
		}
	}
	if err := applyEnv(&cfg, lookup); err != nil {
		return nil, err
	}
	if err := cfg.resolveRoot(configDir); err != nil {
		return nil, err
	}
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

// applyEnv walks the scalar keys of the config and applies EXHUB_<PATH> overrides, then the per-exchange ones.
func applyEnv(c *Config, lookup func(string) (string, bool)) error {
	var errs []error
	walkScalars(reflect.ValueOf(c).Elem(), "", func(path string, v reflect.Value) {
		name := EnvName(path)
		s, ok := lookup(name)
		if !ok {
			return
		}
		if err := setScalar(v, s); err != nil {
			errs = append(errs, fmt.Errorf("%s (env %s): %w", path, name, err))
		}
	})
	for i := range c.Exchanges {
		e := &c.Exchanges[i]
		prefix := "EXHUB_EXCHANGE_" + strings.ToUpper(strings.ReplaceAll(e.Slug, "-", "_")) + "_"
		for field, dst := range map[string]*string{
			"PLUGIN": &e.Plugin, "SHA256": &e.SHA256, "STATUS": &e.Status, "NAME": &e.Name, "WEBSITE": &e.Website,
		} {
			if s, ok := lookup(prefix + field); ok {
				*dst = s
			}
		}
	}
	// Plugin environment allowlists: comma-separated names; an empty value clears the list.
	if s, ok := lookup("EXHUB_PLUGINS_ENV_ALLOW"); ok {
		c.Plugins.EnvAllow = splitList(s)
	}
	for i := range c.Exchanges {
		e := &c.Exchanges[i]
		if s, ok := lookup("EXHUB_EXCHANGE_" + strings.ToUpper(strings.ReplaceAll(e.Slug, "-", "_")) + "_ENV_ALLOW"); ok {
			e.EnvAllow = splitList(s)
		}
	}
	// Settings: EXHUB_EXCHANGE_<SLUG>_SETTINGS="key=value,key=value" adds or replaces keys; then
	// EXHUB_EXCHANGE_<SLUG>_SETTING_<KEY> replaces the value of a key that is already set.
	for i := range c.Exchanges {
		e := &c.Exchanges[i]
		prefix := "EXHUB_EXCHANGE_" + strings.ToUpper(strings.ReplaceAll(e.Slug, "-", "_")) + "_"
		if s, ok := lookup(prefix + "SETTINGS"); ok && strings.TrimSpace(s) != "" {
			for _, kv := range strings.Split(s, ",") {
				k, v, found := strings.Cut(kv, "=")
				k = strings.TrimSpace(k)
				if !found || k == "" {
					errs = append(errs, fmt.Errorf("exchanges[%d].settings (env %sSETTINGS): %q is not key=value", i, prefix, kv))
					continue
				}
				if e.Settings == nil {
					e.Settings = map[string]string{}
				}
				e.Settings[k] = strings.TrimSpace(v)
			}
		}
		for k := range e.Settings {
			if s, ok := lookup(prefix + "SETTING_" + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(k))); ok {
				e.Settings[k] = s
			}
		}
	}
	return errors.Join(errs...)
}

// EnvName is the environment variable that overrides the YAML key path ("http.addr" -> "EXHUB_HTTP_ADDR").
func EnvName(path string) string {
	return "EXHUB_" + strings.ToUpper(strings.ReplaceAll(path, ".", "_"))
}

var durationType = reflect.TypeOf(Duration(0))

func walkScalars(v reflect.Value, prefix string, fn func(path string, v reflect.Value)) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		path := tag
		if prefix != "" {
			path = prefix + "." + tag
		}
		fv := v.Field(i)
		switch {
		case f.Type == durationType:
			fn(path, fv)
		case fv.Kind() == reflect.Struct:
			walkScalars(fv, path, fn)
		case fv.Kind() == reflect.String, fv.Kind() == reflect.Int, fv.Kind() == reflect.Bool:
			fn(path, fv)
		}
	}
}

func setScalar(v reflect.Value, s string) error {
	if v.Type() == durationType {
		if s == "" {
			v.SetInt(0)
			return nil
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("%q is not a duration like 10s or 250ms", s)
		}
		v.SetInt(int64(d))
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Int:
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("%q is not an integer", s)
		}
		v.SetInt(int64(n))
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("%q is not true or false", s)
		}
		v.SetBool(b)
	}
	return nil
}

// EnvKeys lists every scalar key's environment variable (for documentation and the README test).
func EnvKeys() []string {
	c := Default()
	var out []string
	walkScalars(reflect.ValueOf(&c).Elem(), "", func(path string, _ reflect.Value) { out = append(out, EnvName(path)) })
	sort.Strings(out)
	return out
}

var slugRe = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Validate checks every key and reports all problems at once, each naming its key.
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("config: %s: %s", key, fmt.Sprintf(format, args...)))
	}
	if c.Mode != "demo" && c.Mode != "live" {
		bad("mode", "%q is not demo or live", c.Mode)
	}
	if err := checkHostPort(c.HTTP.Addr, false); err != nil {
		bad("http.addr", "%v", err)
	}
	for key, d := range map[string]Duration{
		"http.read_header_timeout": c.HTTP.ReadHeaderTimeout, "http.shutdown_timeout": c.HTTP.ShutdownTimeout,
		"plugins.start_timeout": c.Plugins.StartTimeout, "plugins.call_timeout": c.Plugins.CallTimeout,
		"plugins.health_interval": c.Plugins.HealthInterval, "plugins.backoff_initial": c.Plugins.BackoffInitial,
		"plugins.backoff_max": c.Plugins.BackoffMax, "plugins.stable_after": c.Plugins.StableAfter,
		"valkey.dial_timeout":    c.Valkey.DialTimeout,
		"market.ticker_interval": c.Market.TickerInterval, "market.instruments_ttl": c.Market.InstrumentsTTL,
		"market.tickers_max_stale": c.Market.TickersMaxStale, "market.instruments_max_stale": c.Market.InstrumentsMaxStale,
		"market.call_timeout":      c.Market.CallTimeout,
		"analytics.flush_interval": c.Analytics.FlushInterval, "analytics.backfill_interval": c.Analytics.BackfillInterval,
	} {
		if d <= 0 {
			bad(key, "must be a positive duration, got %s", d.D())
		}
	}
	c.validateStream(bad)
	if c.HTTP.ExchangesMaxAge < 0 {
		bad("http.exchanges_max_age", "must not be negative")
	}
	if c.Plugins.BackoffMax < c.Plugins.BackoffInitial {
		bad("plugins.backoff_max", "%s is below plugins.backoff_initial %s", c.Plugins.BackoffMax.D(), c.Plugins.BackoffInitial.D())
	}
	if c.Plugins.StreamBuffer < 16 {
		bad("plugins.stream_buffer", "must be at least 16, got %d", c.Plugins.StreamBuffer)
	}
	for i, n := range c.Plugins.EnvAllow {
		if err := sdk.CheckEnvName(n); err != nil {
			bad(fmt.Sprintf("plugins.env_allow[%d]", i), "%v", err)
		}
	}
	switch strings.ToLower(c.Log.Level) {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level", "%q is not debug, info, warn or error", c.Log.Level)
	}
	if c.Valkey.Addr != "" {
		if err := checkHostPort(c.Valkey.Addr, true); err != nil {
			bad("valkey.addr", "%v", err)
		}
	} else if c.Valkey.Required {
		bad("valkey.required", "is true but valkey.addr is empty")
	}
	if c.Valkey.LocalMaxEntries < 1 {
		bad("valkey.local_max_entries", "must be at least 1, got %d", c.Valkey.LocalMaxEntries)
	}
	for key, a := range map[string]string{"clickhouse.addr": c.ClickHouse.Addr, "clickhouse.http_addr": c.ClickHouse.HTTPAddr} {
		if a != "" {
			if err := checkHostPort(a, true); err != nil {
				bad(key, "%v", err)
			}
		}
	}
	if c.Analytics.Enabled {
		if c.Analytics.Database == "" {
			bad("analytics.database", "is required")
		}
		if c.Analytics.SpoolDir == "" {
			bad("analytics.spool_dir", "is required")
		}
		for key, n := range map[string]int{"analytics.spool_max_mb": c.Analytics.SpoolMaxMB,
			"analytics.batch_rows": c.Analytics.BatchRows, "analytics.max_symbols": c.Analytics.MaxSymbols} {
			if n < 1 {
				bad(key, "must be at least 1, got %d", n)
			}
		}
		if c.Analytics.BackfillDays < 0 {
			bad("analytics.backfill_days", "must not be negative")
		}
	}
	for key, u := range map[string]string{"kratos.public_url": c.Kratos.PublicURL, "kratos.admin_url": c.Kratos.AdminURL} {
		if u == "" {
			continue
		}
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			bad(key, "%q is not an http(s) URL", u)
		}
	}
	keys := map[int]int{}
	slugs := map[string]int{}
	for i, e := range c.Exchanges {
		k := fmt.Sprintf("exchanges[%d]", i)
		if e.Key <= 0 {
			bad(k+".key", "must be a positive integer, got %d", e.Key)
		} else if j, dup := keys[e.Key]; dup {
			bad(k+".key", "%d is also the key of exchanges[%d]", e.Key, j)
		} else {
			keys[e.Key] = i
		}
		if !slugRe.MatchString(e.Slug) {
			bad(k+".slug", "%q must be lower-case letters and digits separated by single dashes", e.Slug)
		} else if j, dup := slugs[e.Slug]; dup {
			bad(k+".slug", "%q is also the slug of exchanges[%d]", e.Slug, j)
		} else {
			slugs[e.Slug] = i
		}
		if strings.TrimSpace(e.Name) == "" {
			bad(k+".name", "is required")
		}
		switch e.Status {
		case "", StatusAvailable, StatusComingSoon, StatusMaintenance:
		default:
			bad(k+".status", "%q is not available, coming_soon or maintenance (or empty for the plugin's own)", e.Status)
		}
		if e.Plugin == "" && e.Status == "" {
			bad(k+".status", "an exchange without a plugin needs a status (e.g. coming_soon)")
		}
		for j, n := range e.EnvAllow {
			if err := sdk.CheckEnvName(n); err != nil {
				bad(fmt.Sprintf("%s.env_allow[%d]", k, j), "%v", err)
			}
		}
		for j, kv := range e.Env {
			name, _, found := strings.Cut(kv, "=")
			if !found {
				bad(fmt.Sprintf("%s.env[%d]", k, j), "%q is not NAME=value", kv)
			} else if err := sdk.CheckEnvName(name); err != nil {
				bad(fmt.Sprintf("%s.env[%d]", k, j), "%v", err)
			}
		}
		if e.SHA256 != "" {
			if b, err := hex.DecodeString(e.SHA256); err != nil || len(b) != 32 {
				bad(k+".sha256", "must be 64 hex digits")
			}
			if e.Plugin == "" {
				bad(k+".sha256", "is set but the exchange has no plugin")
			}
		}
	}
	return errors.Join(errs...)
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

// Bounds of the stream settings: below the minimum the gateway cannot work as documented (a frame smaller than a
// book snapshot, a lease renewed more often than Valkey can answer); above the maximum a setting stops protecting
// the server (a client message of megabytes, a queue of a million replies).
const (
	maxStreamMessageBytes = 1 << 20
	maxStreamDepth        = 1000
	minStreamFrameBytes   = 4 << 10
	maxStreamFrameBytes   = 16 << 20
	maxStreamPending      = 1 << 16
	maxStreamTrades       = 100000
)

func (c *Config) validateStream(bad func(key, format string, args ...any)) {
	s := c.Stream
	for _, r := range []struct {
		key      string
		n        int
		min, max int
	}{
		{"stream.max_connections", s.MaxConnections, 1, 10_000_000},
		{"stream.max_subscriptions", s.MaxSubscriptions, 1, 100_000},
		{"stream.max_message_bytes", s.MaxMessageBytes, 256, maxStreamMessageBytes},
		{"stream.max_depth", s.MaxDepth, 1, maxStreamDepth},
		{"stream.upstream_depth", s.UpstreamDepth, 0, maxStreamDepth},
		{"stream.max_coalesced_trades", s.MaxCoalescedTrades, 1, maxStreamTrades},
		{"stream.max_pending_control", s.MaxPendingControl, 1, maxStreamPending},
		{"stream.max_frame_bytes", s.MaxFrameBytes, minStreamFrameBytes, maxStreamFrameBytes},
	} {
		if r.n < r.min || r.n > r.max {
			bad(r.key, "must be between %d and %d, got %d", r.min, r.max, r.n)
		}
	}
	for _, d := range []struct {
		key string
		v   Duration
		min time.Duration
	}{
		{"stream.ping_interval", s.PingInterval, time.Second},
		{"stream.pong_timeout", s.PongTimeout, 10 * time.Millisecond},
		{"stream.write_timeout", s.WriteTimeout, 10 * time.Millisecond},
		{"stream.instruments_ttl", s.InstrumentsTTL, time.Second},
		{"stream.lease_ttl", s.LeaseTTL, 300 * time.Millisecond},
	} {
		if d.v.D() < d.min {
			bad(d.key, "must be at least %s, got %s", d.min, d.v.D())
		}
	}
	if s.UpstreamLinger < 0 || s.UpstreamLinger.D() > 100*time.Millisecond {
		bad("stream.upstream_linger", "must be between 0s and 100ms, got %s", s.UpstreamLinger.D())
	}
	if s.PongTimeout > 0 && s.PingInterval > 0 && s.PongTimeout > s.PingInterval {
		bad("stream.pong_timeout", "%s is longer than stream.ping_interval %s", s.PongTimeout.D(), s.PingInterval.D())
	}
	if c.Valkey.Addr != "" && strings.TrimSpace(s.ValkeyPrefix) == "" {
		bad("stream.valkey_prefix", "is required when valkey.addr is set")
	}
	for _, p := range s.Origins() {
		if _, err := path.Match(p, ""); err != nil {
			bad("stream.origin_patterns", "%q is not a valid pattern: %v", p, err)
		}
	}
}
