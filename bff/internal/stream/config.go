package stream

import (
	"path"
	"time"

	"github.com/exhub/exhub/bff/internal/config/setting"
)

// Settings is the stream section of the BFF configuration (bff/exhub.yaml, EXHUB_STREAM_*): it tunes the live stream
// gateway (GET /api/v1/stream); see docs/stream-api.md.
type Settings struct {
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
	UpstreamLinger setting.Duration `yaml:"upstream_linger"`
	// MaxCoalescedTrades is how many trades a slow client's merged trades message keeps.
	MaxCoalescedTrades int `yaml:"max_coalesced_trades"`
	// MaxPendingControl bounds unread replies (acks, errors, pongs) per connection (1008 beyond).
	MaxPendingControl int `yaml:"max_pending_control"`
	// MaxFrameBytes bounds one batched frame of several messages.
	MaxFrameBytes int `yaml:"max_frame_bytes"`
	// PingInterval and PongTimeout: the heartbeat (1008 when a pong is late).
	PingInterval setting.Duration `yaml:"ping_interval"`
	PongTimeout  setting.Duration `yaml:"pong_timeout"`
	// WriteTimeout ends a connection whose write has been stuck this long.
	WriteTimeout setting.Duration `yaml:"write_timeout"`
	// InstrumentsTTL is how long an instrument list validates subscriptions.
	InstrumentsTTL setting.Duration `yaml:"instruments_ttl"`
	// LeaseTTL is the life of a topic lease in Valkey without renewal (renewed every third of it); a dead leader is
	// replaced within about 4/3 of it.
	LeaseTTL setting.Duration `yaml:"lease_ttl"`
	// ValkeyPrefix prefixes every stream key and channel in Valkey.
	ValkeyPrefix string `yaml:"valkey_prefix"`
	// OriginPatterns are extra browser origins allowed besides the same host: path.Match patterns on the Origin
	// host, e.g. [app.example.com, "*.example.com"] (comma separated in EXHUB_STREAM_ORIGIN_PATTERNS).
	OriginPatterns setting.List `yaml:"origin_patterns"`
	// SessionRecheck is how often a connection holding private subscriptions has its session checked again (through
	// the session checker's cache); an ended session ends the private subscriptions at the next check.
	SessionRecheck setting.Duration `yaml:"session_recheck"`
	// MaxPrivatePending bounds the unsent messages of one private subscription; a client further behind is cut off
	// from its backlog with a resync marker and a fresh snapshot (private messages are never conflated).
	MaxPrivatePending int `yaml:"max_private_pending"`
}

// Origins is origin_patterns as a plain list.
func (s Settings) Origins() []string { return []string(s.OriginPatterns) }

// DefaultSettings are the gateway's documented limits (docs/stream-api.md).
func DefaultSettings() Settings {
	return Settings{
		MaxConnections: 20000, MaxSubscriptions: 64, MaxMessageBytes: 4096, MaxDepth: 200,
		UpstreamLinger: setting.Duration(time.Millisecond), MaxCoalescedTrades: 200, MaxPendingControl: 256,
		MaxFrameBytes: 64 << 10, PingInterval: setting.Duration(20 * time.Second), PongTimeout: setting.Duration(10 * time.Second),
		WriteTimeout: setting.Duration(10 * time.Second), InstrumentsTTL: setting.Duration(5 * time.Minute),
		LeaseTTL: setting.Duration(3 * time.Second), ValkeyPrefix: "exhub:stream:",
		SessionRecheck: setting.Duration(time.Minute), MaxPrivatePending: 1024,
	}
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
	// A private subscription's bound must hold a burst of fills (a market order sweeping the book): below it a
	// normal client would be resynced for nothing.
	minStreamPrivatePending = 16
)

// Validate names each bad key relative to the section. Whether valkey_prefix is needed depends on valkey.addr: the
// whole configuration checks that.
func (s Settings) Validate() error {
	var p setting.Problems
	for _, r := range []struct {
		key      string
		n        int
		min, max int
	}{
		{"max_connections", s.MaxConnections, 1, 10_000_000},
		{"max_subscriptions", s.MaxSubscriptions, 1, 100_000},
		{"max_message_bytes", s.MaxMessageBytes, 256, maxStreamMessageBytes},
		{"max_depth", s.MaxDepth, 1, maxStreamDepth},
		{"upstream_depth", s.UpstreamDepth, 0, maxStreamDepth},
		{"max_coalesced_trades", s.MaxCoalescedTrades, 1, maxStreamTrades},
		{"max_pending_control", s.MaxPendingControl, 1, maxStreamPending},
		{"max_frame_bytes", s.MaxFrameBytes, minStreamFrameBytes, maxStreamFrameBytes},
		{"max_private_pending", s.MaxPrivatePending, minStreamPrivatePending, maxStreamPending},
	} {
		if r.n < r.min || r.n > r.max {
			p.Add(r.key, "must be between %d and %d, got %d", r.min, r.max, r.n)
		}
	}
	for _, d := range []struct {
		key string
		v   setting.Duration
		min time.Duration
	}{
		{"ping_interval", s.PingInterval, time.Second},
		{"pong_timeout", s.PongTimeout, 10 * time.Millisecond},
		{"write_timeout", s.WriteTimeout, 10 * time.Millisecond},
		{"instruments_ttl", s.InstrumentsTTL, time.Second},
		{"lease_ttl", s.LeaseTTL, 300 * time.Millisecond},
		{"session_recheck", s.SessionRecheck, time.Second},
	} {
		if d.v.D() < d.min {
			p.Add(d.key, "must be at least %s, got %s", d.min, d.v.D())
		}
	}
	if limit := time.Hour; s.SessionRecheck.D() > limit {
		p.Add("session_recheck", "must be at most %s, got %s (an ended session would keep its private channels)", limit, s.SessionRecheck.D())
	}
	if s.UpstreamLinger < 0 || s.UpstreamLinger.D() > 100*time.Millisecond {
		p.Add("upstream_linger", "must be between 0s and 100ms, got %s", s.UpstreamLinger.D())
	}
	if s.PongTimeout > 0 && s.PingInterval > 0 && s.PongTimeout > s.PingInterval {
		p.Add("pong_timeout", "%s is longer than stream.ping_interval %s", s.PongTimeout.D(), s.PingInterval.D())
	}
	for _, pat := range s.Origins() {
		if _, err := path.Match(pat, ""); err != nil {
			p.Add("origin_patterns", "%q is not a valid pattern: %v", pat, err)
		}
	}
	return p.Err()
}
