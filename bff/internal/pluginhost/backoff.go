package pluginhost

import (
	"math/rand/v2"
	"time"
)

// Backoff is exponential backoff with jitter. Attempt 0 waits about Initial, each attempt doubles up to Max, and the
// actual delay is drawn uniformly from [d/2, d] so that many plugins (or replicas) restarting together spread out.
type Backoff struct {
	Initial time.Duration
	Max     time.Duration
	// Rand returns a number in [0, 1); nil uses math/rand/v2.
	Rand func() float64
}

// Delay is the wait before retry number attempt (0-based).
func (b Backoff) Delay(attempt int) time.Duration {
	d := b.Ceiling(attempt)
	r := b.Rand
	if r == nil {
		r = rand.Float64
	}
	half := d / 2
	return half + time.Duration(r()*float64(d-half))
}

// Ceiling is the largest delay attempt can get (before jitter).
func (b Backoff) Ceiling(attempt int) time.Duration {
	initial, max := b.Initial, b.Max
	if initial <= 0 {
		initial = 100 * time.Millisecond
	}
	if max < initial {
		max = initial
	}
	d := initial
	for i := 0; i < attempt && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	return d
}
