package emulator

import (
	"errors"
	"net/http"
	"sync"

	"github.com/exhub/exhub/adapters/venue"
)

// priceMatch names Binance USD-M futures' priceMatch values: QUEUE takes a price on the order's own side of the
// book, OPPONENT on the other side; _5, _10, _20 that many levels from the best.
var priceMatchNames = map[string]struct {
	m     venue.PriceMatch
	depth int
}{
	"QUEUE": {venue.MatchQueue, 1}, "QUEUE_5": {venue.MatchQueue, 5}, "QUEUE_10": {venue.MatchQueue, 10},
	"QUEUE_20": {venue.MatchQueue, 20}, "OPPONENT": {venue.MatchOpponent, 1}, "OPPONENT_5": {venue.MatchOpponent, 5},
	"OPPONENT_10": {venue.MatchOpponent, 10}, "OPPONENT_20": {venue.MatchOpponent, 20},
}

// parsePriceMatch reads a priceMatch parameter; "" and NONE are MatchNone.
func parsePriceMatch(s string) (venue.PriceMatch, int, bool) {
	if s == "" || s == "NONE" {
		return venue.MatchNone, 0, true
	}
	p, ok := priceMatchNames[s]
	return p.m, p.depth, ok
}

// priceMatchError maps a book with nothing to match to Binance's refusal.
func priceMatchError(err error) error {
	if errors.Is(err, venue.ErrNoPriceToMatch) {
		return errf(http.StatusBadRequest, -4131, "The counterparty's best price does not meet the PERCENT_PRICE filter limit.")
	}
	return orderError(true, err)
}

// priceMatchKeep bounds how many price-matched orders the emulator remembers (older ones read as NONE).
const priceMatchKeep = 10000

// priceMatches remembers the priceMatch an order was placed or last amended with, so reads report it.
type priceMatches struct {
	mu   sync.Mutex
	byID map[uint64]string
	ids  []uint64 // oldest first
}

// put records (or, for "" / NONE, forgets) an order's priceMatch.
func (p *priceMatches) put(id uint64, name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if name == "" || name == "NONE" {
		delete(p.byID, id)
		return
	}
	if p.byID == nil {
		p.byID = map[uint64]string{}
	}
	if _, ok := p.byID[id]; !ok {
		p.ids = append(p.ids, id)
	}
	p.byID[id] = name
	for len(p.ids) > priceMatchKeep {
		delete(p.byID, p.ids[0])
		p.ids = p.ids[1:]
	}
}

func (p *priceMatches) get(id uint64) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n, ok := p.byID[id]; ok {
		return n
	}
	return "NONE"
}
