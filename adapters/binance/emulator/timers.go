package emulator

import (
	"net/http"
	"strconv"
	"sync"

	"github.com/exhub/exhub/adapters/venue"
)

// Permissions are what an API key may do, as GET /sapi/v1/account/apiRestrictions reports them. The demo key and
// keys added without permissions may read, trade spot and futures and transfer, but not withdraw (Binance's default
// for a new key); SetPermissions changes a key's.
type Permissions struct {
	IPRestrict               bool
	EnableReading            bool
	EnableSpotAndMargin      bool
	EnableFutures            bool
	EnableWithdrawals        bool
	EnableInternalTransfer   bool
	PermitsUniversalTransfer bool
}

// DefaultPermissions: read, trade spot and futures, transfer; no withdrawals.
var DefaultPermissions = Permissions{EnableReading: true, EnableSpotAndMargin: true, EnableFutures: true,
	EnableInternalTransfer: true, PermitsUniversalTransfer: true}

// timers holds the emulator's own clocks: countdownCancelAll per account and symbol, and good-till-date orders.
type timers struct {
	mu        sync.Mutex
	perms     map[string]Permissions // api key -> permissions
	countdown map[[2]string]int64    // (account, venue instrument) -> when all its orders are cancelled
	gtd       map[uint64]*gtdOrder   // order id -> expiry, kept after it ended so reads report GTD (see gtdKeep)
	gtdIDs    []uint64               // the ids in gtd, oldest first
}

type gtdOrder struct {
	account, instrument string
	expire              int64
	pending             bool // not yet expired or ended
	expired             bool // cancelled at its goodTillDate
}

// gtdKeep bounds how many good-till-date orders the emulator remembers (reads of older ones report GTC).
const gtdKeep = 10000

// SetPermissions sets what an API key may do (as apiRestrictions reports it).
func (s *Server) SetPermissions(key string, p Permissions) {
	s.tm.mu.Lock()
	defer s.tm.mu.Unlock()
	if s.tm.perms == nil {
		s.tm.perms = map[string]Permissions{}
	}
	s.tm.perms[key] = p
}

func (s *Server) permissions(key string) Permissions {
	s.tm.mu.Lock()
	defer s.tm.mu.Unlock()
	if p, ok := s.tm.perms[key]; ok {
		return p
	}
	return DefaultPermissions
}

// apiRestrictions serves GET /sapi/v1/account/apiRestrictions.
func (s *Server) apiRestrictions(q *req) (any, error) {
	p := s.permissions(q.apiKey)
	return map[string]any{
		"ipRestrict": p.IPRestrict, "createTime": int64(1700000000000), "enableInternalTransfer": p.EnableInternalTransfer,
		"enableFutures": p.EnableFutures, "enablePortfolioMarginTrading": false, "enableVanillaOptions": false,
		"permitsUniversalTransfer": p.PermitsUniversalTransfer, "enableReading": p.EnableReading,
		"enableSpotAndMarginTrading": p.EnableSpotAndMargin, "enableWithdrawals": p.EnableWithdrawals,
		"enableMargin": false, "enableFixApiTrade": false, "enableFixReadOnly": false,
	}, nil
}

// countdownCancelAll serves POST /fapi/v1/countdownCancelAll: countdownTime ms from now every open order of the
// symbol is cancelled unless the call is repeated; 0 disarms.
func (s *Server) countdownCancelAll(q *req) (any, error) {
	in, err := s.symbolParam(q)
	if err != nil {
		return nil, err
	}
	if !q.has("countdownTime") {
		return nil, badParam("countdownTime")
	}
	ms, err := q.int64Param("countdownTime", 0)
	if err != nil || ms < 0 {
		return nil, illegal("countdownTime")
	}
	k := [2]string{q.account, in.ID}
	s.tm.mu.Lock()
	if s.tm.countdown == nil {
		s.tm.countdown = map[[2]string]int64{}
	}
	if ms == 0 {
		delete(s.tm.countdown, k)
	} else {
		s.tm.countdown[k] = s.v.Now() + ms
	}
	s.tm.mu.Unlock()
	return map[string]string{"symbol": s.native[in.ID], "countdownTime": strconv.FormatInt(ms, 10)}, nil
}

// watchGTD records a good-till-date order: its reads report timeInForce GTD and goodTillDate; if it is still open
// then, it is cancelled at expire and reads report it EXPIRED.
func (s *Server) watchGTD(o venue.Order, expire int64, open bool) {
	s.tm.mu.Lock()
	defer s.tm.mu.Unlock()
	if s.tm.gtd == nil {
		s.tm.gtd = map[uint64]*gtdOrder{}
	}
	if _, ok := s.tm.gtd[o.ID]; !ok {
		s.tm.gtdIDs = append(s.tm.gtdIDs, o.ID)
	}
	s.tm.gtd[o.ID] = &gtdOrder{account: o.Account, instrument: o.Instrument, expire: expire, pending: open}
	for len(s.tm.gtdIDs) > gtdKeep {
		delete(s.tm.gtd, s.tm.gtdIDs[0])
		s.tm.gtdIDs = s.tm.gtdIDs[1:]
	}
}

// gtdOf reports a remembered good-till-date order's expiry and whether it expired.
func (s *Server) gtdOf(id uint64) (expire int64, expired, ok bool) {
	s.tm.mu.Lock()
	defer s.tm.mu.Unlock()
	g, ok := s.tm.gtd[id]
	if !ok {
		return 0, false, false
	}
	return g.expire, g.expired, true
}

// fireTimers cancels what countdowns and good-till-date orders say is due at now (venue clock).
func (s *Server) fireTimers(now int64) {
	s.tm.mu.Lock()
	var due [][2]string
	for k, at := range s.tm.countdown {
		if at <= now {
			due = append(due, k)
			delete(s.tm.countdown, k)
		}
	}
	type expiring struct {
		id uint64
		g  *gtdOrder
	}
	var expired []expiring
	for id, g := range s.tm.gtd {
		if g.pending && g.expire <= now {
			g.pending = false
			expired = append(expired, expiring{id, g})
		}
	}
	s.tm.mu.Unlock()
	for _, k := range due {
		if _, err := s.v.CancelAll(s.ctx, k[0], k[1]); err != nil {
			s.log.Warn("countdownCancelAll", "account", k[0], "instrument", k[1], "err", err)
		}
	}
	for _, e := range expired {
		if _, err := s.v.Cancel(s.ctx, e.g.account, e.g.instrument, e.id, ""); err == nil {
			s.tm.mu.Lock()
			e.g.expired = true
			s.tm.mu.Unlock()
		} // else it had already ended (filled or cancelled): nothing to do
	}
}

var _ = http.MethodGet
