package cache

import (
	"time"

	"github.com/exhub/exhub/bff/internal/config/setting"
)

// Settings is the valkey section of the BFF configuration (bff/exhub.yaml, EXHUB_VALKEY_*): the shared cache.
// Empty addr: the in-process cache.
type Settings struct {
	Addr string `yaml:"addr"`
	// Required makes an unreachable Valkey a start-up error instead of a fallback to the in-process cache.
	Required    bool             `yaml:"required"`
	DialTimeout setting.Duration `yaml:"dial_timeout"`
	// LocalMaxEntries bounds the in-process fallback cache.
	LocalMaxEntries int `yaml:"local_max_entries"`
}

// DefaultSettings are a local valkey-server, falling back to the in-process cache.
func DefaultSettings() Settings {
	return Settings{Addr: "127.0.0.1:6379", DialTimeout: setting.Duration(time.Second), LocalMaxEntries: 10000}
}

// Validate names each bad key relative to the section.
func (v Settings) Validate() error {
	var p setting.Problems
	if v.Addr != "" {
		if err := setting.HostPort(v.Addr, true); err != nil {
			p.Add("addr", "%v", err)
		}
	} else if v.Required {
		p.Add("required", "is true but valkey.addr is empty")
	}
	p.Positive(setting.KeyDuration{Key: "dial_timeout", D: v.DialTimeout})
	if v.LocalMaxEntries < 1 {
		p.Add("local_max_entries", "must be at least 1, got %d", v.LocalMaxEntries)
	}
	return p.Err()
}

// Config is the section as Open takes it.
func (v Settings) Config() Config {
	return Config{Addr: v.Addr, Required: v.Required, DialTimeout: v.DialTimeout.D(), LocalMaxEntries: v.LocalMaxEntries}
}
