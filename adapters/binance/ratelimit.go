package binance

import (
	"context"
	"sync"
	"time"

	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// weightLimiter keeps one API family under its REQUEST_WEIGHT per minute. Binance counts weight per fixed UTC
// minute; the X-MBX-USED-WEIGHT-1M header tells the real count and overrides the local estimate. After a 429/418 the
// limiter refuses every call until Retry-After has passed (Binance bans IPs that keep calling).
type weightLimiter struct {
	mu          sync.Mutex
	limit       int
	used        int
	window      int64 // unix minute of `used`
	bannedUntil time.Time
	now         func() time.Time
}

func newWeightLimiter(limit int) *weightLimiter {
	return &weightLimiter{limit: limit, now: time.Now}
}

func (l *weightLimiter) setLimit(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n > 0 {
		l.limit = n
	}
}

// acquire reserves weight, waiting for the next minute when the budget is spent. It fails with RATE_LIMITED at once
// while banned, or when the wait would outlast the context's deadline.
func (l *weightLimiter) acquire(ctx context.Context, weight int) error {
	for {
		l.mu.Lock()
		now := l.now()
		if now.Before(l.bannedUntil) {
			wait := l.bannedUntil.Sub(now)
			l.mu.Unlock()
			return sdk.RateLimited(wait, "binance rate limit: retry after %s", wait.Round(time.Millisecond))
		}
		minute := now.Unix() / 60
		if minute != l.window {
			l.window, l.used = minute, 0
		}
		if l.limit <= 0 || l.used+weight <= l.limit {
			l.used += weight
			l.mu.Unlock()
			return nil
		}
		wait := time.Unix((minute+1)*60, 0).Sub(now)
		l.mu.Unlock()
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return sdk.RateLimited(wait, "binance request weight for this minute is spent")
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// observe records the used weight Binance reported for the current minute.
func (l *weightLimiter) observe(used int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	minute := l.now().Unix() / 60
	if minute != l.window {
		l.window, l.used = minute, 0
	}
	l.used = used
}

// ban blocks calls for d (from Retry-After; at least one second).
func (l *weightLimiter) ban(d time.Duration) {
	if d < time.Second {
		d = time.Second
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if until := l.now().Add(d); until.After(l.bannedUntil) {
		l.bannedUntil = until
	}
}

func (l *weightLimiter) state() (used, limit int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.used, l.limit
}
