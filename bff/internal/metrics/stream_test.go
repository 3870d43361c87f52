package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/exhub/exhub/bff/internal/stream"
)

type fakeStream struct{ s stream.Stats }

func (f *fakeStream) Stats() stream.Stats { return f.s }

// TestStreamCollector: every field of stream.Stats reaches /metrics under its name, with its labels.
func TestStreamCollector(t *testing.T) {
	m := New()
	m.RegisterStream(&fakeStream{stream.Stats{
		Connections: 3, Subscriptions: map[string]int{"book": 4, "trades": 2}, Delivered: 100, Sent: 90, Frames: 40,
		BytesSent: 12345, Conflated: 7, TradesDropped: 11, Closes: map[string]uint64{"write_timeout": 2, "client": 5},
		Published: 60, Leading: 2, UpstreamEvents: 500, Upstream: map[string]int{"book": 1, "trades": 1},
		Resyncs: map[string]uint64{"gap": 3}, Leases: 2, BrokerErrors: map[string]uint64{"publish": 1},
	}})
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	body := string(b)
	for _, want := range []string{
		"exhub_stream_connections 3", `exhub_stream_subscriptions{channel="book"} 4`,
		`exhub_stream_subscriptions{channel="trades"} 2`, "exhub_stream_messages_queued_total 100",
		"exhub_stream_messages_sent_total 90", "exhub_stream_frames_sent_total 40", "exhub_stream_bytes_sent_total 12345",
		"exhub_stream_conflated_total 7", "exhub_stream_trades_dropped_total 11",
		`exhub_stream_closes_total{reason="write_timeout"} 2`, `exhub_stream_closes_total{reason="client"} 5`,
		"exhub_stream_published_total 60", "exhub_stream_upstream_events_total 500",
		`exhub_stream_upstream_subscriptions{channel="book"} 1`, `exhub_stream_resyncs_total{reason="gap"} 3`,
		"exhub_stream_leases 2", `exhub_stream_valkey_errors_total{op="publish"} 1`,
		"# TYPE exhub_stream_conflated_total counter", "# TYPE exhub_stream_connections gauge",
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
