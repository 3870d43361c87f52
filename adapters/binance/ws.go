package binance

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// feedMsg is what a feed hands its owner: a data frame, or a state change (reconnecting / resynced).
type feedMsg struct {
	data  []byte
	state feedState
}

type feedState int

const (
	feedData feedState = iota
	feedReconnecting
	feedResynced
)

// feed keeps one combined-stream WebSocket alive for a set of stream names: it reconnects with exponential backoff
// and jitter, pings the server, and rolls the connection over before Binance's 24-hour cut by opening the new
// connection first and closing the old one after a short overlap (consumers drop the duplicates by id). A change
// of the stream set is a rollover too, so it loses nothing.
type feed struct {
	name     string
	urlFor   func(streams []string) string
	lifetime time.Duration
	overlap  time.Duration
	ping     time.Duration
	log      *slog.Logger
	out      chan feedMsg
	setCh    chan []string
	dialer   func(ctx context.Context, u string) (*websocket.Conn, error)
}

func newFeed(name string, urlFor func([]string) string, lifetime time.Duration, log *slog.Logger) *feed {
	return &feed{name: name, urlFor: urlFor, lifetime: lifetime, overlap: 2 * time.Second, ping: 30 * time.Second, log: log,
		out: make(chan feedMsg, 1024), setCh: make(chan []string, 1),
		dialer: func(ctx context.Context, u string) (*websocket.Conn, error) {
			c, _, err := websocket.Dial(ctx, u, nil)
			if err != nil {
				return nil, err
			}
			c.SetReadLimit(32 << 20)
			return c, nil
		}}
}

// SetStreams replaces the stream set; the latest call wins.
func (f *feed) SetStreams(streams []string) {
	s := append([]string(nil), streams...)
	for {
		select {
		case f.setCh <- s:
			return
		default:
			select {
			case <-f.setCh:
			default:
			}
		}
	}
}

type liveConn struct {
	c      *websocket.Conn
	cancel context.CancelFunc
	born   time.Time
}

func (lc *liveConn) close() {
	lc.cancel()
	_ = lc.c.Close(websocket.StatusNormalClosure, "")
}

// run owns the connections and their readers; it returns when ctx ends.
func (f *feed) run(ctx context.Context) {
	var wg sync.WaitGroup
	errCh := make(chan *liveConn, 8)
	var cur *liveConn
	var streams []string
	defer func() {
		if cur != nil {
			cur.close()
		}
		wg.Wait()
	}()

	start := func(u string) (*liveConn, error) {
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		c, err := f.dialer(dctx, u)
		cancel()
		if err != nil {
			return nil, err
		}
		cctx, ccancel := context.WithCancel(ctx)
		lc := &liveConn{c: c, cancel: ccancel, born: time.Now()}
		wg.Add(2)
		go func() { // reader
			defer wg.Done()
			for {
				_, data, err := c.Read(cctx)
				if err != nil {
					select {
					case errCh <- lc:
					case <-ctx.Done():
					}
					return
				}
				select {
				case f.out <- feedMsg{data: data}:
				case <-cctx.Done():
					return
				}
			}
		}()
		go func() { // pinger
			defer wg.Done()
			t := time.NewTicker(f.ping)
			defer t.Stop()
			for {
				select {
				case <-cctx.Done():
					return
				case <-t.C:
					pctx, cancel := context.WithTimeout(cctx, 10*time.Second)
					err := c.Ping(pctx)
					cancel()
					if err != nil && cctx.Err() == nil {
						f.log.Warn("binance websocket ping failed", "feed", f.name, "err", err)
						_ = c.Close(websocket.StatusGoingAway, "ping timeout")
						return
					}
				}
			}
		}()
		return lc, nil
	}
	retire := func(old *liveConn) {
		if old == nil {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-time.After(f.overlap):
			case <-ctx.Done():
			}
			old.close()
		}()
	}
	emit := func(s feedState) {
		select {
		case f.out <- feedMsg{state: s}:
		case <-ctx.Done():
		}
	}
	// swap opens the new connection before retiring the old one.
	swap := func() bool {
		if len(streams) == 0 {
			if cur != nil {
				cur.close()
				cur = nil
			}
			return true
		}
		nc, err := start(f.urlFor(streams))
		if err != nil {
			f.log.Warn("binance websocket dial failed", "feed", f.name, "err", err)
			return false
		}
		retire(cur)
		cur = nc
		return true
	}
	reconnect := func() {
		emit(feedReconnecting)
		for attempt := 0; ; attempt++ {
			select {
			case s := <-f.setCh:
				streams = s
			default:
			}
			if swap() {
				emit(feedResynced)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff(attempt)):
			}
		}
	}

	roll := time.NewTimer(time.Hour)
	roll.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case s := <-f.setCh:
			streams = s
			if !swap() {
				if cur != nil {
					cur.close()
					cur = nil
				}
				reconnect()
			}
		case lc := <-errCh:
			if lc != cur || ctx.Err() != nil {
				continue // a retired connection ending
			}
			cur.close()
			cur = nil
			reconnect()
		case <-roll.C:
			if cur != nil {
				f.log.Info("binance websocket rollover", "feed", f.name, "age", time.Since(cur.born).Round(time.Second).String())
				if !swap() {
					cur.close()
					cur = nil
					reconnect()
				}
			}
		}
		if cur != nil {
			roll.Reset(time.Until(cur.born.Add(f.lifetime)))
		}
	}
}

// backoff: 250 ms doubling to 30 s, with ±25 % jitter.
func backoff(attempt int) time.Duration {
	d := 250 * time.Millisecond
	for i := 0; i < attempt && d < 30*time.Second; i++ {
		d *= 2
	}
	if d > 30*time.Second {
		d = 30 * time.Second
	}
	j := time.Duration(rand.Int64N(int64(d)/2)) - d/4
	return d + j
}
