package emulator

import (
	"strings"

	"github.com/exhub/exhub/adapters/venue"
)

// inst is one venue instrument under its Bybit name: BTCUSDT in spot and in linear alike.
type inst struct {
	v      *venue.Instrument
	symbol string
	linear bool
}

func newInst(in *venue.Instrument) *inst {
	return &inst{v: in, symbol: in.Base + in.Quote, linear: in.Market == venue.Perp}
}

func (i *inst) category() string {
	if i.linear {
		return "linear"
	}
	return "spot"
}

// statusOf is Bybit's instrument status.
func statusOf(st venue.InstrumentStatus) string {
	switch st {
	case venue.Trading:
		return "Trading"
	case venue.Halted:
		return "PreLaunch" // Bybit lists no halted state; a halted venue instrument is not trading
	}
	return "Closed"
}

// lookup finds a listed instrument of a category.
func (s *Server) lookup(category, symbol string) (*inst, bool) {
	m := s.spot
	if category == "linear" {
		m = s.linear
	}
	i, ok := m[strings.ToUpper(strings.TrimSpace(symbol))]
	if !ok || i.v.Status == venue.Delisted {
		return nil, false
	}
	return i, true
}

// categoryParam reads `category` (spot or linear; inverse and option list nothing here). def is used when the
// endpoint has a default.
func categoryParam(q *request, def string, allowed ...string) (string, *apiError) {
	c := q.get("category")
	if c == "" {
		c = def
	}
	if c == "" {
		return "", errParams("category is null")
	}
	for _, a := range allowed {
		if a == c {
			return c, nil
		}
	}
	return "", &apiError{10001, "params error: category only support " + strings.Join(allowed, ",")}
}

// symbolParam reads a required symbol of a category.
func (s *Server) symbolParam(q *request, category string) (*inst, *apiError) {
	sym := q.get("symbol")
	if sym == "" {
		return nil, errParams("symbol is null")
	}
	i, ok := s.lookup(category, sym)
	if !ok {
		return nil, errSymbol()
	}
	return i, nil
}
