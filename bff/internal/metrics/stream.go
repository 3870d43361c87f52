package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/exhub/exhub/bff/internal/stream"
)

// StreamSource is the live stream gateway as the stream collector reads it (*stream.Gateway).
type StreamSource interface {
	Stats() stream.Stats
}

// RegisterStream exports the stream gateway's gauges and counters (exhub_stream_*). They are read from the
// gateway's own counters at each scrape, so the gateway's hot paths pay nothing for them.
func (m *Metrics) RegisterStream(src StreamSource) {
	m.Registry.MustRegister(&streamCollector{src: src})
}

func streamDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName("exhub", "stream", name), help, labels, nil)
}

var (
	streamConnections = streamDesc("connections", "Open stream WebSocket connections on this replica.")
	streamSubs        = streamDesc("subscriptions", "Client subscriptions on this replica by channel.", "channel")
	streamUpstream    = streamDesc("upstream_subscriptions",
		"Upstream subscriptions this replica holds on the plugins (the topics it leads) by channel.", "channel")
	streamLeases    = streamDesc("leases", "Topic leases this replica holds in Valkey (0 without Valkey).")
	streamDelivered = streamDesc("messages_queued_total", "Messages queued to client connections.")
	streamSent      = streamDesc("messages_sent_total", "Messages written to client connections.")
	streamFrames    = streamDesc("frames_sent_total", "WebSocket frames written (one frame may batch several messages).")
	streamBytes     = streamDesc("bytes_sent_total", "Payload bytes of the frames written.")
	streamConflated = streamDesc("conflated_total",
		"Queued messages replaced or merged by a newer one before a slow client read them.")
	streamDropped = streamDesc("trades_dropped_total",
		"Trades left out of a slow client's merged trades message (past the coalescing limit).")
	streamCloses = streamDesc("closes_total", "Ended connections by reason; write_timeout and unread_replies are "+
		"slow clients.", "reason")
	streamPublished = streamDesc("published_total", "Topic messages this replica published as leader.")
	streamEvents    = streamDesc("upstream_events_total", "Market events received from the plugins for led topics.")
	streamResyncs   = streamDesc("resyncs_total", "Order book resyncs by reason (gap, crossed, invalid, upstream).",
		"reason")
	streamValkeyErrs = streamDesc("valkey_errors_total", "Valkey failures of the stream broker by operation.", "op")
)

type streamCollector struct{ src StreamSource }

func (c *streamCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{streamConnections, streamSubs, streamUpstream, streamLeases, streamDelivered,
		streamSent, streamFrames, streamBytes, streamConflated, streamDropped, streamCloses, streamPublished,
		streamEvents, streamResyncs, streamValkeyErrs} {
		ch <- d
	}
}

func (c *streamCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.src.Stats()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge(streamConnections, float64(s.Connections))
	for k, v := range s.Subscriptions {
		gauge(streamSubs, float64(v), k)
	}
	for k, v := range s.Upstream {
		gauge(streamUpstream, float64(v), k)
	}
	gauge(streamLeases, float64(s.Leases))
	counter(streamDelivered, s.Delivered)
	counter(streamSent, s.Sent)
	counter(streamFrames, s.Frames)
	counter(streamBytes, s.BytesSent)
	counter(streamConflated, s.Conflated)
	counter(streamDropped, s.TradesDropped)
	for k, v := range s.Closes {
		counter(streamCloses, v, k)
	}
	counter(streamPublished, s.Published)
	counter(streamEvents, s.UpstreamEvents)
	for k, v := range s.Resyncs {
		counter(streamResyncs, v, k)
	}
	for k, v := range s.BrokerErrors {
		counter(streamValkeyErrs, v, k)
	}
}
