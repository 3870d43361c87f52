package emulator

import (
	"net/http"
)

type listenKey struct{}

func (s *Server) tradingRoutes(mux *http.ServeMux) {}

func (s *Server) listenKeyValid(key string, futures bool) bool { return false }

func (c *wsConn) startUser(key string) {}
