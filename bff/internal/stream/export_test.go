package stream

import "testing"

// StartTestGateway runs a gateway over a real reference plugin (see startReplica) for the external tests
// (package stream_test, which may import packages that import this one, such as bff/internal/metrics). It returns
// the gateway and its WebSocket URL.
func StartTestGateway(t *testing.T, cfg Config) (*Gateway, string) {
	r := startReplica(t, nil, cfg, fast)
	return r.gw, "ws" + r.srv.URL[len("http"):]
}
