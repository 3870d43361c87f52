package emulator

type wsConn struct{}

func (s *Server) wsRoutes() {}

// DropConnections closes every WebSocket connection (a test hook for reconnect logic); it returns how many.
func (s *Server) DropConnections() int { return 0 }
