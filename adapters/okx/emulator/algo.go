package emulator

import "context"

type algoBook struct{}

func newAlgoBook() *algoBook { return &algoBook{} }

func (s *Server) watchAlgos(ctx context.Context) { <-ctx.Done() }
