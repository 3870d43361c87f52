package pluginhost

import (
	"time"

	"github.com/exhub/exhub/bff/internal/config/setting"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// Settings is the plugins section of the BFF configuration (bff/exhub.yaml, EXHUB_PLUGINS_*): it tunes the plugin
// supervisor (Options) and names the host variables every plugin process gets.
type Settings struct {
	StartTimeout   setting.Duration `yaml:"start_timeout"`
	CallTimeout    setting.Duration `yaml:"call_timeout"`
	HealthInterval setting.Duration `yaml:"health_interval"`
	BackoffInitial setting.Duration `yaml:"backoff_initial"`
	BackoffMax     setting.Duration `yaml:"backoff_max"`
	// StableAfter resets the restart backoff once a plugin has run this long.
	StableAfter setting.Duration `yaml:"stable_after"`
	// StreamBuffer is the event buffer of one durable market stream.
	StreamBuffer int `yaml:"stream_buffer"`
	// EnvAllow names host environment variables every plugin process gets (with the host's value). A plugin never
	// inherits the host's environment: it gets a small base set (PATH, HOME, TMPDIR, TZ, LANG, LC_*, SSL_CERT_FILE,
	// SSL_CERT_DIR; see sdk.BaseEnv), these names, and its exchange's env_allow and env. EXHUB_* and PLUGIN_* names
	// are refused. Env override: EXHUB_PLUGINS_ENV_ALLOW, comma separated.
	EnvAllow []string `yaml:"env_allow"`
}

// DefaultEnvAllow are the host variables passed to every plugin by default: the proxy settings Go's HTTP
// client reads, so a plugin reaches its exchange the way the host would. Demo mode needs none of them (the
// emulators are on 127.0.0.1, which no proxy handles).
var DefaultEnvAllow = []string{"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy"}

// DefaultSettings check health every 5 s and restarts with a backoff from 100 ms to 30 s.
func DefaultSettings() Settings {
	return Settings{
		StartTimeout:   setting.Duration(10 * time.Second),
		CallTimeout:    setting.Duration(10 * time.Second),
		HealthInterval: setting.Duration(5 * time.Second),
		BackoffInitial: setting.Duration(100 * time.Millisecond),
		BackoffMax:     setting.Duration(30 * time.Second),
		StableAfter:    setting.Duration(60 * time.Second),
		StreamBuffer:   1024,
		EnvAllow:       append([]string(nil), DefaultEnvAllow...),
	}
}

// Validate names each bad key relative to the section.
func (pl Settings) Validate() error {
	var p setting.Problems
	p.Positive(setting.KeyDuration{Key: "start_timeout", D: pl.StartTimeout}, setting.KeyDuration{Key: "call_timeout", D: pl.CallTimeout},
		setting.KeyDuration{Key: "health_interval", D: pl.HealthInterval}, setting.KeyDuration{Key: "backoff_initial", D: pl.BackoffInitial},
		setting.KeyDuration{Key: "backoff_max", D: pl.BackoffMax}, setting.KeyDuration{Key: "stable_after", D: pl.StableAfter})
	if pl.BackoffMax < pl.BackoffInitial {
		p.Add("backoff_max", "%s is below plugins.backoff_initial %s", pl.BackoffMax.D(), pl.BackoffInitial.D())
	}
	if pl.StreamBuffer < 16 {
		p.Add("stream_buffer", "must be at least 16, got %d", pl.StreamBuffer)
	}
	for i, n := range pl.EnvAllow {
		if err := sdk.CheckEnvName(n); err != nil {
			p.Add(setting.ListKey("env_allow", i), "%v", err)
		}
	}
	return p.Err()
}

// Options is the supervisor's part of the section (the caller adds the logger and the observer).
func (pl Settings) Options() Options {
	return Options{
		StartTimeout:   pl.StartTimeout.D(),
		CallTimeout:    pl.CallTimeout.D(),
		HealthInterval: pl.HealthInterval.D(),
		Backoff:        Backoff{Initial: pl.BackoffInitial.D(), Max: pl.BackoffMax.D()},
		StableAfter:    pl.StableAfter.D(),
		StreamBuffer:   pl.StreamBuffer,
	}
}
