package emulator

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// limiter counts requests per (endpoint, caller) in fixed two-second windows, as OKX states its limits
// ("N requests per 2 seconds"). Callers are the client IP for public endpoints and the API key for private ones.
type limiter struct {
	on     bool
	mu     sync.Mutex
	window int64
	counts map[string]int
}

const limitWindow = 2 * time.Second

func newLimiter(on bool) *limiter { return &limiter{on: on, counts: map[string]int{}} }

// allow reports whether one more request fits; the map is cleared each window so it stays bounded by the
// number of distinct callers in two seconds.
func (l *limiter) allow(key string, limit int, now time.Time) bool {
	if !l.on || limit <= 0 {
		return true
	}
	w := now.UnixNano() / int64(limitWindow)
	l.mu.Lock()
	defer l.mu.Unlock()
	if w != l.window {
		l.window = w
		clear(l.counts)
	}
	if l.counts[key] >= limit {
		return false
	}
	l.counts[key]++
	return true
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
