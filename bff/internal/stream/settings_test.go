package stream

import (
	"reflect"
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
	got := ConfigFrom(s).withDefaults()
	want := Config{MaxConnections: 10, MaxSubscriptions: 3, MaxMessageBytes: 1024, MaxDepth: 50, UpstreamDepth: 100,
		UpstreamLinger: -1, MaxCoalescedTrades: 7, MaxPendingControl: 9, MaxFrameBytes: 8192, PingInterval: 5 * time.Second,
		PongTimeout: time.Second, WriteTimeout: 2 * time.Second, InstrumentsTTL: time.Minute,
		OriginPatterns: []string{"a.example.com", "*.b.example.com"}, SessionRecheck: time.Minute, MaxPrivatePending: 1024}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ConfigFrom:\ngot  %+v\nwant %+v", got, want)
	}
}
