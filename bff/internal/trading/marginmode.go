package trading

import (
	"sync"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// marginModeTTL bounds how long a symbol's margin mode read from the exchange is reused for orders sent without
// one. A change made through exhub (SetMarginMode, SetLeverage) or an order refused on that account and symbol
// forgets it at once; a change made on the exchange's own site shows after at most this long.
const marginModeTTL = time.Minute

// maxMarginModes bounds the cache; when full it starts again empty.
const maxMarginModes = 4096

// marginModes caches the margin mode of an account's symbol (GetLeverage), so that a SWAP order without a margin
// mode does not cost a second plugin call (and exchange request) before the order itself. The zero value is ready.
type marginModes struct {
	mu sync.Mutex
	m  map[marginKey]marginEntry
}

type marginKey struct{ exchange, account, symbol string }

type marginEntry struct {
	mode exchangev1.MarginMode
	at   time.Time
}

// get returns the cached mode (ok false: none, or older than marginModeTTL at now).
func (c *marginModes) get(k marginKey, now time.Time) (exchangev1.MarginMode, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok || now.Sub(e.at) >= marginModeTTL || now.Before(e.at) {
		return 0, false
	}
	return e.mode, true
}

// put records a mode read at now (an unspecified mode is not kept).
func (c *marginModes) put(k marginKey, mode exchangev1.MarginMode, now time.Time) {
	if mode == exchangev1.MarginMode_MARGIN_MODE_UNSPECIFIED {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxMarginModes {
		c.m = map[marginKey]marginEntry{}
	}
	c.m[k] = marginEntry{mode: mode, at: now}
}

// forget drops an account's symbol (the member changed it, or an order there was refused).
func (c *marginModes) forget(k marginKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, k)
}
