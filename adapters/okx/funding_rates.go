package okx

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// OKX's tickers carry no funding rate; /api/v5/public/funding-rate answers for one instrument at a time (20
// requests per 2 s). Tickers of SWAP instruments get their rate and next funding time from a cache of those
// answers: every GetTickers call refreshes at most fundingPerCall entries that are missing or stale (requested
// symbols first, then the most traded by 24h quote volume), and fills every ticker whose entry is fresh. Entries
// from the WebSocket funding-rate channel refresh it too.
const (
	// fundingTTL is how long a fetched rate is shown; OKX recomputes the current period's rate about once a minute.
	fundingTTL = time.Minute
	// fundingPerCall bounds the funding-rate requests of one GetTickers call (well under the 20 per 2 s limit).
	fundingPerCall = 8
	// defaultFundingWait bounds how long GetTickers waits for those requests (Options.FundingWait); what is late is
	// left for the next call.
	defaultFundingWait = 2 * time.Second
	// fundingMaxEntries bounds the cache (OKX lists a few hundred USDT swaps).
	fundingMaxEntries = 2048
)

type fundingEntry struct {
	rate    string // canonical decimal fraction
	next    int64  // next settlement, Unix ms
	fetched time.Time
}

// fundingCache holds the latest funding rate per instrument id, bounded in size.
type fundingCache struct {
	mu      sync.Mutex
	entries map[string]fundingEntry
	now     func() time.Time
}

func newFundingCache() *fundingCache {
	return &fundingCache{entries: map[string]fundingEntry{}, now: time.Now}
}

// put stores a funding-rate row (REST or WebSocket); rows without a valid rate or time are ignored.
func (c *fundingCache) put(r rawFunding) {
	rate, err := canonStr("fundingRate", r.FundingRate)
	if err != nil || rate == "" || r.InstID == "" {
		return
	}
	next, err := parseMs("fundingTime", r.FundingTime)
	if err != nil || next <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[r.InstID]; !ok && len(c.entries) >= fundingMaxEntries {
		// Full: drop the oldest entry.
		var oldest string
		var at time.Time
		for id, e := range c.entries {
			if oldest == "" || e.fetched.Before(at) {
				oldest, at = id, e.fetched
			}
		}
		delete(c.entries, oldest)
	}
	c.entries[r.InstID] = fundingEntry{rate: rate, next: next, fetched: c.now()}
}

// get returns the entry of instID when it is fresh: fetched within the TTL and its settlement not yet passed.
func (c *fundingCache) get(instID string) (fundingEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[instID]
	if !ok {
		return fundingEntry{}, false
	}
	now := c.now()
	if now.Sub(e.fetched) >= fundingTTL || now.UnixMilli() >= e.next {
		return e, false
	}
	return e, true
}

// fill sets the ticker's funding fields from a fresh entry.
func (c *fundingCache) fill(t *exchangev1.Ticker) {
	if e, ok := c.get(t.GetSymbol()); ok {
		t.FundingRate, t.NextFundingTime = e.rate, e.next
	}
}

// fundingCandidates orders the instruments whose entry needs fetching: requested symbols first, then by 24h
// quote volume, highest first; at most limit of them.
func (c *fundingCache) candidates(want map[string]bool, volumes map[string]decimal.Decimal, limit int) []string {
	var out []string
	for id := range volumes {
		if _, fresh := c.get(id); !fresh {
			out = append(out, id)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		if want[a] != want[b] {
			if want[a] {
				return -1
			}
			return 1
		}
		if d := volumes[b].Cmp(volumes[a]); d != 0 {
			return d
		}
		return cmp.Compare(a, b)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// refreshFunding fetches the funding rates of ids concurrently (the client's limiter spaces them) and stores them.
// Best effort: failures are logged, and the wait is bounded by Options.FundingWait.
func (s *Server) refreshFunding(ctx context.Context, ids []string) {
	if len(ids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, s.fundingWait)
	defer cancel()
	fc := s.fundingRates()
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			f, err := s.fundingRate(ctx, id)
			if err != nil {
				s.log.Warn("okx: funding rate for ticker failed", "instId", id, "error", err)
				return
			}
			if f.InstID == "" {
				f.InstID = id
			}
			fc.put(f)
		})
	}
	wg.Wait()
}
