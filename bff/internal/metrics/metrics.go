// Package metrics holds the BFF's Prometheus metrics: HTTP request durations by route, plugin state, plugin
// restarts and plugin call latency. It implements pluginhost.Observer.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// Metrics is one registry with the BFF's collectors.
type Metrics struct {
	Registry     *prometheus.Registry
	httpDuration *prometheus.HistogramVec
	pluginState  *prometheus.GaugeVec
	restarts     *prometheus.CounterVec
	callDuration *prometheus.HistogramVec
}

// New registers every collector on a fresh registry (plus Go runtime and process collectors).
func New() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "exhub", Subsystem: "http", Name: "request_duration_seconds",
			Help:    "HTTP request durations by route pattern, method and status code.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route", "method", "code"}),
		pluginState: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "exhub", Subsystem: "plugin", Name: "state",
			Help: "1 for the current lifecycle state of each plugin, 0 for the others.",
		}, []string{"plugin", "state"}),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "exhub", Subsystem: "plugin", Name: "restarts_total",
			Help: "Plugin restarts after a crash or failed health checks.",
		}, []string{"plugin"}),
		callDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "exhub", Subsystem: "plugin", Name: "call_duration_seconds",
			Help:    "Plugin RPC latency by method and outcome (ok or the typed error reason).",
			Buckets: []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"plugin", "method", "outcome"}),
	}
	m.Registry.MustRegister(m.httpDuration, m.pluginState, m.restarts, m.callDuration,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

// ObserveHTTP records one request.
func (m *Metrics) ObserveHTTP(route, method string, code int, d time.Duration) {
	m.httpDuration.WithLabelValues(route, method, statusLabel(code)).Observe(d.Seconds())
}

// PluginState implements pluginhost.Observer.
func (m *Metrics) PluginState(slug string, s pluginhost.State) {
	for _, st := range pluginhost.AllStates {
		v := 0.0
		if st == s {
			v = 1
		}
		m.pluginState.WithLabelValues(slug, string(st)).Set(v)
	}
}

// PluginRestart implements pluginhost.Observer.
func (m *Metrics) PluginRestart(slug string) { m.restarts.WithLabelValues(slug).Inc() }

// PluginCall implements pluginhost.Observer.
func (m *Metrics) PluginCall(slug, method string, d time.Duration, err error) {
	outcome := "ok"
	if err != nil {
		outcome = sdk.ReasonName(sdk.DetailOf(err).GetReason())
	}
	m.callDuration.WithLabelValues(slug, method, outcome).Observe(d.Seconds())
}

func statusLabel(code int) string {
	if code < 100 || code > 999 {
		return "unknown"
	}
	b := []byte{byte('0' + code/100), byte('0' + code/10%10), byte('0' + code%10)}
	return string(b)
}
