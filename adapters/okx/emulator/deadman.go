package emulator

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/exhub/exhub/adapters/venue"
)

// deadMan is trade/cancel-all-after: per account, the venue time (Unix ms) at which every pending order is
// cancelled unless the switch is armed again or disarmed first.
type deadMan struct {
	mu       sync.Mutex
	deadline map[string]int64
}

func newDeadMan() *deadMan { return &deadMan{deadline: map[string]int64{}} }

func (d *deadMan) set(acct string, at int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if at == 0 {
		delete(d.deadline, acct)
		return
	}
	d.deadline[acct] = at
}

// due removes and returns the accounts whose deadline is at or before now.
func (d *deadMan) due(now int64) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for acct, at := range d.deadline {
		if at <= now {
			out = append(out, acct)
			delete(d.deadline, acct)
		}
	}
	slices.Sort(out)
	return out
}

// cancelAllAfter arms (timeOut 10 to 120 seconds, or from Config.MinCancelAllAfter) or disarms (timeOut 0) the
// account's switch. The answer's triggerTime is when the orders will be cancelled (Unix ms), "0" when disarmed.
func (s *Server) cancelAllAfter(q *request) (result, *apiError) {
	var r struct {
		TimeOut string `json:"timeOut"`
		Tag     string `json:"tag"`
	}
	if e := q.decode(&r); e != nil {
		return result{}, e
	}
	if r.TimeOut == "" {
		return result{}, errEmpty("timeOut")
	}
	secs, err := strconv.Atoi(r.TimeOut)
	minSecs := int(s.cfg.MinCancelAllAfter / time.Second)
	if err != nil || (secs != 0 && (secs < minSecs || secs > 120)) {
		return result{}, &apiError{http.StatusBadRequest, "51000", "Parameter timeOut error: 0, or " + strconv.Itoa(minSecs) + " to 120 seconds"}
	}
	now := s.v.Now()
	var at int64
	if secs > 0 {
		at = now + int64(secs)*1000
	}
	s.deadman.set(q.account, at)
	return result{data: []obj{{"triggerTime": strconv.FormatInt(at, 10), "tag": r.Tag, "ts": ms(now)}}}, nil
}

// watchDeadMan cancels the pending orders (not the algo orders) of every account whose switch ran out. It checks
// the venue clock every 100 ms of wall time, so a manual venue clock moved past a deadline fires the switch too.
func (s *Server) watchDeadMan(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, acct := range s.deadman.due(s.v.Now()) {
			os, err := s.v.OpenOrders(acct, "")
			if err != nil {
				s.log.Warn("cancel-all-after: open orders", "account", acct, "error", err)
				continue
			}
			for _, o := range os {
				if o.Status == venue.StatusUntriggered {
					continue // algo legs stay, as on OKX
				}
				if _, err := s.v.Cancel(ctx, acct, o.Instrument, o.ID, ""); err != nil {
					s.log.Debug("cancel-all-after: cancel", "account", acct, "order", o.ID, "error", err)
				}
			}
		}
	}
}
