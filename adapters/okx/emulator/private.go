package emulator

func (s *Server) privateRoutes() {}
