package stream

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/config/setting"
)

// TestConfigFrom: the stream section's defaults are the gateway's own, and every key reaches the gateway.
func TestConfigFrom(t *testing.T) {
	def := DefaultSettings()
	if got, want := ConfigFrom(def).withDefaults(), (Config{}).withDefaults(); !reflect.DeepEqual(got, want) {
		t.Fatalf("config defaults differ from the gateway's:\nconfig  %+v\ngateway %+v", got, want)
	}
	vo := ValkeyOptionsFrom(def)
	b := NewValkeyBroker(ValkeyOptions{})
	if vo.LeaseTTL != b.ttl || vo.Prefix != b.prefix {
		t.Fatalf("Valkey options %+v, broker defaults ttl %s prefix %q", vo, b.ttl, b.prefix)
	}

	s := def
	s.MaxConnections, s.MaxSubscriptions, s.MaxMessageBytes, s.MaxDepth, s.UpstreamDepth = 10, 3, 1024, 50, 100
	s.UpstreamLinger, s.MaxCoalescedTrades, s.MaxPendingControl, s.MaxFrameBytes = 0, 7, 9, 8192
	s.PingInterval, s.PongTimeout, s.WriteTimeout = setting.Duration(5*time.Second), setting.Duration(time.Second), setting.Duration(2*time.Second)
	s.InstrumentsTTL, s.OriginPatterns = setting.Duration(time.Minute), setting.List{"a.example.com", "*.b.example.com"}
	s.SessionRecheck, s.MaxPrivatePending = setting.Duration(15*time.Second), 64
	got := ConfigFrom(s).withDefaults()
	want := Config{MaxConnections: 10, MaxSubscriptions: 3, MaxMessageBytes: 1024, MaxDepth: 50, UpstreamDepth: 100,
		UpstreamLinger: -1, MaxCoalescedTrades: 7, MaxPendingControl: 9, MaxFrameBytes: 8192, PingInterval: 5 * time.Second,
		PongTimeout: time.Second, WriteTimeout: 2 * time.Second, InstrumentsTTL: time.Minute,
		OriginPatterns: []string{"a.example.com", "*.b.example.com"}, SessionRecheck: 15 * time.Second, MaxPrivatePending: 64}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ConfigFrom:\ngot  %+v\nwant %+v", got, want)
	}
}

// TestSettingsPrivateKeys: the private channels' keys are validated and named relative to the section.
func TestSettingsPrivateKeys(t *testing.T) {
	if err := DefaultSettings().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Settings)
		want string // "" = valid
	}{
		{"recheck 1s", func(s *Settings) { s.SessionRecheck = setting.Duration(time.Second) }, ""},
		{"recheck 1h", func(s *Settings) { s.SessionRecheck = setting.Duration(time.Hour) }, ""},
		{"recheck 0", func(s *Settings) { s.SessionRecheck = 0 }, "session_recheck: must be at least 1s"},
		{"recheck 500ms", func(s *Settings) { s.SessionRecheck = setting.Duration(500 * time.Millisecond) }, "session_recheck"},
		{"recheck 2h", func(s *Settings) { s.SessionRecheck = setting.Duration(2 * time.Hour) }, "session_recheck: must be at most 1h0m0s"},
		{"pending 16", func(s *Settings) { s.MaxPrivatePending = 16 }, ""},
		{"pending 65536", func(s *Settings) { s.MaxPrivatePending = 1 << 16 }, ""},
		{"pending 0", func(s *Settings) { s.MaxPrivatePending = 0 }, "max_private_pending: must be between 16 and 65536, got 0"},
		{"pending 15", func(s *Settings) { s.MaxPrivatePending = 15 }, "max_private_pending"},
		{"pending 65537", func(s *Settings) { s.MaxPrivatePending = 1<<16 + 1 }, "max_private_pending"},
	} {
		s := DefaultSettings()
		tc.edit(&s)
		err := s.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
}
