package stream_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/exhub/exhub/bff/internal/metrics"
	"github.com/exhub/exhub/bff/internal/stream"
)

// scrape reads /metrics and returns the value of every exhub_stream_* sample, keyed by name{labels}.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "exhub_stream_") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad sample %q", line)
		}
		out[line[:i]] = v
	}
	return out
}

var sampleRe = regexp.MustCompile(`^exhub_stream_[a-z_]+(\{[a-z]+="[a-z_]+"\})?$`)

// TestMetricsAfterASession runs a real session (reference plugin, WebSocket client) and reads the stream metrics
// from the /metrics handler: gauges while the client is subscribed, counters after it was closed for sending an
// oversized message, and the gauges back at zero.
func TestMetricsAfterASession(t *testing.T) {
	gw, wsURL := stream.StartTestGateway(t, stream.Config{MaxMessageBytes: 512})
	m := metrics.New()
	m.RegisterStream(gw)
	ms := httptest.NewServer(m.Handler())
	defer ms.Close()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // every wait here normally ends at once
	defer cancel()
	ws, _, err := websocket.Dial(ctx, wsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(1 << 22)
	for _, ch := range []string{"book", "trades"} {
		op, _ := json.Marshal(map[string]any{"op": "subscribe", "id": ch, "channel": ch, "exchange": "reference",
			"marketType": "SPOT", "symbol": "BTCUSDT"})
		if err := ws.Write(ctx, websocket.MessageText, op); err != nil {
			t.Fatal(err)
		}
	}
	// Read until the book snapshot and a trades message arrived.
	var snapshot, trades bool
	for !snapshot || !trades {
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var msgs []map[string]any
		if b[0] == '[' {
			_ = json.Unmarshal(b, &msgs)
		} else {
			var one map[string]any
			_ = json.Unmarshal(b, &one)
			msgs = append(msgs, one)
		}
		for _, m := range msgs {
			snapshot = snapshot || m["type"] == "snapshot"
			trades = trades || m["type"] == "trades"
		}
	}
	s := scrape(t, ms.URL)
	for k := range s {
		if !sampleRe.MatchString(k) {
			t.Errorf("unexpected sample name %s", k)
		}
	}
	for k, want := range map[string]float64{
		"exhub_stream_connections": 1, `exhub_stream_subscriptions{channel="book"}`: 1,
		`exhub_stream_subscriptions{channel="trades"}`: 1, `exhub_stream_subscriptions{channel="ticker"}`: 0,
		`exhub_stream_upstream_subscriptions{channel="book"}`: 1, `exhub_stream_upstream_subscriptions{channel="trades"}`: 1,
		"exhub_stream_leases": 0, `exhub_stream_closes_total{reason="message_too_big"}`: 0,
	} {
		if got, ok := s[k]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, want)
		}
	}
	if _, ok := s[`exhub_stream_valkey_errors_total{op="publish"}`]; ok {
		t.Error("Valkey errors exported without Valkey")
	}
	for _, k := range []string{"exhub_stream_messages_sent_total", "exhub_stream_messages_queued_total",
		"exhub_stream_frames_sent_total", "exhub_stream_bytes_sent_total", "exhub_stream_published_total",
		"exhub_stream_upstream_events_total"} {
		if s[k] <= 0 {
			t.Errorf("%s = %v after a session that received data", k, s[k])
		}
	}
	if s["exhub_stream_bytes_sent_total"] < s["exhub_stream_frames_sent_total"] {
		t.Errorf("bytes %v below frames %v", s["exhub_stream_bytes_sent_total"], s["exhub_stream_frames_sent_total"])
	}

	// An op over max_message_bytes ends the connection with 1009.
	big := `{"op":"ping","id":"` + strings.Repeat("x", 600) + `"}`
	if err := ws.Write(ctx, websocket.MessageText, []byte(big)); err != nil {
		t.Fatal(err)
	}
	for {
		if _, _, err := ws.Read(ctx); err != nil {
			if websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
				t.Fatalf("close: %v", err)
			}
			break
		}
	}
	deadline := time.Now().Add(time.Minute)
	for {
		s = scrape(t, ms.URL)
		if s[`exhub_stream_closes_total{reason="message_too_big"}`] == 1 && s["exhub_stream_connections"] == 0 &&
			s[`exhub_stream_subscriptions{channel="book"}`] == 0 && s[`exhub_stream_upstream_subscriptions{channel="book"}`] == 0 &&
			s[`exhub_stream_upstream_subscriptions{channel="trades"}`] == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the 1009 close: %v", s)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if s[`exhub_stream_closes_total{reason="client"}`] != 0 {
		t.Errorf("a 1009 close counted as a client close: %v", s)
	}
}
