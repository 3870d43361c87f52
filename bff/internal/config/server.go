package config

import (
	"strings"
	"time"
)

// HTTP is the BFF's own listener.
type HTTP struct {
	Addr              string   `yaml:"addr"`
	ReadHeaderTimeout Duration `yaml:"read_header_timeout"`
	ShutdownTimeout   Duration `yaml:"shutdown_timeout"`
	// ExchangesMaxAge is the Cache-Control max-age of the public exchange list.
	ExchangesMaxAge Duration `yaml:"exchanges_max_age"`
}

// DefaultHTTP listens on loopback: the edge is what users open.
func DefaultHTTP() HTTP {
	return HTTP{Addr: "127.0.0.1:8090", ReadHeaderTimeout: Duration(10 * time.Second),
		ShutdownTimeout: Duration(10 * time.Second), ExchangesMaxAge: Duration(10 * time.Second)}
}

// Validate names each bad key relative to the section.
func (h HTTP) Validate() error {
	var p Problems
	if err := checkHostPort(h.Addr, false); err != nil {
		p.Add("addr", "%v", err)
	}
	p.Positive(KeyDuration{Key: "read_header_timeout", D: h.ReadHeaderTimeout}, KeyDuration{Key: "shutdown_timeout", D: h.ShutdownTimeout})
	if h.ExchangesMaxAge < 0 {
		p.Add("exchanges_max_age", "must not be negative")
	}
	return p.Err()
}

// Log configures the JSON logs on stderr.
type Log struct {
	Level string `yaml:"level"`
}

// Validate names each bad key relative to the section.
func (l Log) Validate() error {
	var p Problems
	switch strings.ToLower(l.Level) {
	case "debug", "info", "warn", "error":
	default:
		p.Add("level", "%q is not debug, info, warn or error", l.Level)
	}
	return p.Err()
}

// ClickHouse is the analytics store. Empty addresses: not configured.
type ClickHouse struct {
	// Addr is the native protocol address (host:port).
	Addr string `yaml:"addr"`
	// HTTPAddr is the HTTP interface (host:port); readiness uses its /ping when set.
	HTTPAddr string `yaml:"http_addr"`
}

// Validate names each bad key relative to the section.
func (c ClickHouse) Validate() error {
	var p Problems
	for _, a := range []struct{ key, v string }{{"addr", c.Addr}, {"http_addr", c.HTTPAddr}} {
		if a.v != "" {
			if err := checkHostPort(a.v, true); err != nil {
				p.Add(a.key, "%v", err)
			}
		}
	}
	return p.Err()
}

// APIDocs is the offline API reference page.
type APIDocs struct {
	// Dir holds the @stoplight/elements browser bundle (web-components.min.js, styles.min.css) that
	// bff/apidocs/install.sh puts in bff/apidocs/dist.
	Dir string `yaml:"dir"`
}
