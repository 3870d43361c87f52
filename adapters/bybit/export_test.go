package bybit

// SetInstrumentsPage sets the page size asked of instruments-info and drops the cached instruments.
func (s *Server) SetInstrumentsPage(n int) {
	s.instPage.Store(int32(n))
	s.mu.Lock()
	s.insts = newInstrumentCache()
	s.mu.Unlock()
}
