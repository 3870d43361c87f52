package emulator

import (
	"context"
	"net/http"
)

type listenKey struct{}

type wsConn struct{}

const closeGoingAway = 1001

func (c *wsConn) kill(code int, reason string) {}

type hub struct{}

func newHub(s *Server, futures bool) *hub { return &hub{} }

func (h *hub) run(ctx context.Context) { <-ctx.Done() }

func (s *Server) tradingRoutes(mux *http.ServeMux) {}

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request, futures bool, rest string) {
	http.Error(w, "not yet", http.StatusNotImplemented)
}
