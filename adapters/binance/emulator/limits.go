package emulator

import (
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/exhub/exhub/adapters/venue"
)

// limiter counts request weight per market and client IP in one-minute windows (venue clock), the way Binance's
// REQUEST_WEIGHT limit works: over the limit a request gets 429 with Retry-After; a client that keeps sending while
// limited gets 418 and is banned for a while.
type limiter struct {
	v     *venue.Venue
	mu    sync.Mutex
	limit [2]int
	used  map[limKey]*usage
	// order counts per account: [futures] -> account -> windows
	orders map[limKey]*orderCount
	// injected failures for tests: the next n requests fail with status.
	injStatus int
	injRetry  int
	injN      int
}

type limKey struct {
	futures bool
	ip      string
}

type usage struct {
	window  int64 // minute start, ms
	weight  int
	over    int   // requests refused in this window
	banTill int64 // ms
}

// banAfter is how many refused requests in one window turn a 429 into a 418 ban.
const banAfter = 10

func newLimiter(v *venue.Venue, spot, futures int) *limiter {
	return &limiter{v: v, limit: [2]int{spot, futures}, used: map[limKey]*usage{}, orders: map[limKey]*orderCount{}}
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// take charges weight and sets the used-weight header; it returns an error when the request must be refused.
func (l *limiter) take(w http.ResponseWriter, r *http.Request, futures bool, weight int) *apiError {
	now := l.v.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.injN > 0 {
		l.injN--
		if l.injStatus != http.StatusTooManyRequests && l.injStatus != http.StatusTeapot {
			return &apiError{status: l.injStatus, retryAfter: l.injRetry, html: true}
		}
		return rateErr(l.injStatus, l.injRetry, now)
	}
	k := limKey{futures: futures, ip: clientIP(r)}
	u := l.used[k]
	minute := now - now%60000
	if u == nil {
		u = &usage{window: minute}
		l.used[k] = u
	}
	if u.window != minute {
		u.window, u.weight, u.over = minute, 0, 0
	}
	if u.banTill > now {
		return rateErr(http.StatusTeapot, int((u.banTill-now+999)/1000), now)
	}
	limit := l.limit[0]
	if futures {
		limit = l.limit[1]
	}
	retry := int((minute + 60000 - now + 999) / 1000)
	if u.weight+weight > limit {
		u.over++
		if u.over > banAfter {
			u.banTill = now + 2*60000
			return rateErr(http.StatusTeapot, 120, now)
		}
		w.Header().Set("X-MBX-USED-WEIGHT-1M", strconv.Itoa(u.weight))
		return rateErr(http.StatusTooManyRequests, retry, now)
	}
	u.weight += weight
	w.Header().Set("X-MBX-USED-WEIGHT-1M", strconv.Itoa(u.weight))
	if !futures {
		w.Header().Set("X-MBX-USED-WEIGHT", strconv.Itoa(u.weight))
	}
	return nil
}

func rateErr(status, retry int, now int64) *apiError {
	if retry <= 0 {
		retry = 60
	}
	if status == http.StatusTeapot {
		till := now + int64(retry)*1000
		e := errf(status, codeTooManyRequests, "Way too much request weight used; IP banned until %d. Please use WebSocket Streams for live updates to avoid bans.", till)
		e.retryAfter = retry
		return e
	}
	e := errf(status, codeTooManyRequests, "Too much request weight used; current limit is exceeded. Please use WebSocket Streams for live updates to avoid polling the API.")
	e.retryAfter = retry
	return e
}

// InjectRateLimit makes the next n REST requests fail with status and a Retry-After header of retryAfter (rounded
// up to seconds; none when zero). 429 and 418 carry Binance's -1003 body; other statuses (403 from the web
// application firewall, 5xx) carry a short HTML page as Binance's edge sends. Tests of clients' back-off use it.
func (s *Server) InjectRateLimit(status int, retryAfter time.Duration, n int) {
	s.lim.mu.Lock()
	defer s.lim.mu.Unlock()
	s.lim.injStatus, s.lim.injRetry, s.lim.injN = status, int((retryAfter+time.Second-1)/time.Second), n
}

// SetWeightLimits changes the per-minute weight limits (spot, futures); zero keeps a value.
func (s *Server) SetWeightLimits(spot, futures int) {
	s.lim.mu.Lock()
	defer s.lim.mu.Unlock()
	if spot > 0 {
		s.lim.limit[0] = spot
	}
	if futures > 0 {
		s.lim.limit[1] = futures
	}
	clear(s.lim.used)
}

// orderCount tracks an account's new orders in Binance's ORDERS windows: 10 seconds, and a day (spot) or a minute
// (futures).
type orderCount struct {
	tenStart, longStart int64
	ten, long           int
}

// Order limits (exchangeInfo ORDERS): spot 100 per 10 s and 200 000 per day; futures 300 per 10 s and 1200 per
// minute.
var orderLimits = [2]struct {
	ten, long  int
	longMs     int64
	longHeader string
}{
	{100, 200000, 86400000, "X-MBX-ORDER-COUNT-1D"},
	{300, 1200, 60000, "X-MBX-ORDER-COUNT-1M"},
}

// takeOrder counts one new order for an account and sets the order-count headers; over a limit it refuses with
// 429 and -1015.
func (l *limiter) takeOrder(w http.ResponseWriter, futures bool, account string) *apiError {
	now := l.v.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	k := limKey{futures: futures, ip: account}
	c := l.orders[k]
	if c == nil {
		c = &orderCount{}
		l.orders[k] = c
	}
	lim := orderLimits[0]
	if futures {
		lim = orderLimits[1]
	}
	if ten := now - now%10000; c.tenStart != ten {
		c.tenStart, c.ten = ten, 0
	}
	if long := now - now%lim.longMs; c.longStart != long {
		c.longStart, c.long = long, 0
	}
	if c.ten >= lim.ten || c.long >= lim.long {
		retry := int((c.tenStart + 10000 - now + 999) / 1000)
		window, n := "TEN_SECONDS", lim.ten
		if c.long >= lim.long {
			retry = int((c.longStart + lim.longMs - now + 999) / 1000)
			window, n = "DAY", lim.long
			if futures {
				window = "MINUTE"
			}
		}
		e := errf(http.StatusTooManyRequests, -1015, "Too many new orders; current limit is %d orders per %s.", n, window)
		e.retryAfter = retry
		return e
	}
	c.ten++
	c.long++
	w.Header().Set("X-MBX-ORDER-COUNT-10S", strconv.Itoa(c.ten))
	w.Header().Set(lim.longHeader, strconv.Itoa(c.long))
	return nil
}
