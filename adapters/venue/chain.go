package venue

import (
	"container/heap"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/shopspring/decimal"
)

// ErrChainBusy refuses a withdrawal while the chain already carries MaxInFlight transfers.
var ErrChainBusy = errors.New("venue: too many withdrawals in flight")

// ChainConfig sets up a simulated chain between venues.
type ChainConfig struct {
	// MinDelay and MaxDelay bound how long a withdrawal takes to arrive (default 30 min .. 60 min, the spec's half
	// an hour to an hour). Each transfer's delay is drawn deterministically from its tx id inside the range.
	MinDelay, MaxDelay time.Duration
	// Clock defaults to the wall clock. Tests use a ManualClock and AdvanceTo.
	Clock Clock
	// MaxInFlight bounds the transfers on the way (default 10,000); a withdrawal beyond it is refused with
	// ErrChainBusy.
	MaxInFlight int
}

// Chain is a simulated blockchain between venues: a withdrawal from one venue to an address another venue handed
// out (DepositAddress) arrives there as a deposit. The withdrawal is PROCESSING for half the transfer's delay, then
// COMPLETED with its tx id; from then the deposit shows PENDING on the receiving venue with the same tx id, and it is
// credited (COMPLETED) when the whole delay has passed. A withdrawal to an address no venue handed out completes the
// same way and leaves. The chain holds no funds: the sending venue's outside account pays, the receiving venue's
// outside account credits, so each venue's ledger still sums to zero.
//
// Attach venues before use. Run (owned by the caller) moves transfers along in real time; tests call AdvanceTo.
type Chain struct {
	cfg ChainConfig

	mu     sync.Mutex
	venues map[string]*Venue
	addrs  map[string]chainAddr // deposit address -> owner
	queue  chainQueue           // transfers by next due time
	seq    uint64
	wake   chan struct{} // a new transfer may be due earlier than Run's timer
}

type chainAddr struct {
	venue, account, asset string
}

// chainTx is one transfer on the way.
type chainTx struct {
	seq       uint64
	txID      string
	from      *Venue
	account   string // sender
	wdID      string
	asset     string
	amount    decimal.Decimal
	address   string
	broadcast int64 // the withdrawal completes and the deposit shows pending
	arrive    int64 // the deposit is credited
	stage     int   // 0: processing, 1: broadcast, 2: done
	to        *Venue
	toAccount string
	depID     string
}

func (t *chainTx) due() int64 {
	if t.stage == 0 {
		return t.broadcast
	}
	return t.arrive
}

// chainQueue is a min-heap of transfers by due time, then by submission order (deterministic).
type chainQueue []*chainTx

func (q chainQueue) Len() int { return len(q) }
func (q chainQueue) Less(i, j int) bool {
	if a, b := q[i].due(), q[j].due(); a != b {
		return a < b
	}
	return q[i].seq < q[j].seq
}
func (q chainQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *chainQueue) Push(x any)   { *q = append(*q, x.(*chainTx)) }
func (q *chainQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return x
}

// NewChain builds a chain. MinDelay must not exceed MaxDelay.
func NewChain(cfg ChainConfig) (*Chain, error) {
	if cfg.MinDelay <= 0 && cfg.MaxDelay <= 0 {
		cfg.MinDelay, cfg.MaxDelay = 30*time.Minute, time.Hour
	}
	if cfg.MaxDelay < cfg.MinDelay {
		cfg.MaxDelay = cfg.MinDelay
	}
	if cfg.MinDelay < 0 {
		return nil, fmt.Errorf("venue: chain delay %s..%s", cfg.MinDelay, cfg.MaxDelay)
	}
	if cfg.Clock == nil {
		cfg.Clock = SystemClock{}
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 10000
	}
	return &Chain{cfg: cfg, venues: map[string]*Venue{}, addrs: map[string]chainAddr{}, wake: make(chan struct{}, 1)}, nil
}

// Attach puts a venue on the chain under a name (unique on the chain; it salts the venue's deposit addresses so two
// venues never hand out the same one). A venue joins one chain, before it serves wallet calls.
func (c *Chain) Attach(name string, v *Venue) error {
	if name == "" {
		return fmt.Errorf("venue: chain name required")
	}
	// Never both locks at once here: withdrawals take the venue's lock, then the chain's.
	c.mu.Lock()
	_, dup := c.venues[name]
	if !dup {
		c.venues[name] = nil // reserved
	}
	c.mu.Unlock()
	if dup {
		return fmt.Errorf("venue: %q is already on the chain", name)
	}
	v.mu.Lock()
	prev := v.chainName
	ok := v.chain == nil
	if ok {
		v.chain, v.chainName = c, name
	}
	v.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !ok {
		delete(c.venues, name)
		return fmt.Errorf("venue: already on a chain as %q", prev)
	}
	c.venues[name] = v
	return nil
}

// InFlight is the number of transfers not yet credited (or, for outside addresses, completed).
func (c *Chain) InFlight() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queue.Len()
}

// register remembers who owns a deposit address. Called by DepositAddress.
func (c *Chain) register(addr, venue, account, asset string) {
	c.mu.Lock()
	c.addrs[addr] = chainAddr{venue, account, asset}
	c.mu.Unlock()
}

// delay draws a transfer's delay from its tx id: deterministic, inside [MinDelay, MaxDelay].
func (c *Chain) delay(txID string) time.Duration {
	span := c.cfg.MaxDelay - c.cfg.MinDelay
	if span <= 0 {
		return c.cfg.MinDelay
	}
	h := sha256.Sum256([]byte(txID))
	return c.cfg.MinDelay + time.Duration(binary.BigEndian.Uint64(h[:8])%uint64(span+1))
}

// submit puts a withdrawal on the chain. The sending venue's lock is held (lock order: venue, then chain).
func (c *Chain) submit(from *Venue, account, wdID, asset string, amount decimal.Decimal, address string, now int64) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.queue.Len() >= c.cfg.MaxInFlight {
		return "", ErrChainBusy
	}
	h := sha256.Sum256([]byte(from.chainName + "/" + wdID))
	txID := "0x" + hex.EncodeToString(h[:])
	d := c.delay(txID).Milliseconds()
	c.seq++
	heap.Push(&c.queue, &chainTx{seq: c.seq, txID: txID, from: from, account: account, wdID: wdID, asset: asset,
		amount: amount, address: address, broadcast: now + d/2, arrive: now + d})
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return txID, nil
}

// AdvanceTo moves every transfer due at or before t to its next stage (repeatedly, so a transfer whose broadcast
// and arrival are both due completes). Venue calls are made without the chain's lock.
func (c *Chain) AdvanceTo(t time.Time) {
	now := t.UnixMilli()
	for {
		c.mu.Lock()
		if c.queue.Len() == 0 || c.queue[0].due() > now {
			c.mu.Unlock()
			return
		}
		tx := heap.Pop(&c.queue).(*chainTx)
		var owner chainAddr
		var to *Venue
		if tx.stage == 0 {
			if a, ok := c.addrs[tx.address]; ok && a.asset == tx.asset {
				owner, to = a, c.venues[a.venue]
			}
		}
		c.mu.Unlock()
		c.advance(tx, owner, to)
		if tx.stage < 2 {
			c.mu.Lock()
			heap.Push(&c.queue, tx)
			c.mu.Unlock()
		}
	}
}

// advance runs one stage of a transfer.
func (c *Chain) advance(tx *chainTx, owner chainAddr, to *Venue) {
	switch tx.stage {
	case 0: // broadcast: the withdrawal completes; the receiver sees a pending deposit
		tx.from.chainWithdrawalDone(tx.account, tx.wdID, tx.txID, tx.broadcast)
		if to == nil {
			tx.stage = 2
			return
		}
		tx.to, tx.toAccount = to, owner.account
		tx.depID = to.chainDepositPending(owner.account, tx.asset, tx.amount, tx.address, tx.txID, tx.broadcast)
		tx.stage = 1
	case 1: // arrival: credited
		tx.to.chainDepositCredit(tx.toAccount, tx.depID, tx.arrive)
		tx.stage = 2
	}
}

// Run moves transfers along in real time until ctx ends: it sleeps until the next one is due (or a new one
// arrives). The caller owns the goroutine; nothing else is started. Use it with the wall clock (a manual clock is
// driven with AdvanceTo).
func (c *Chain) Run(ctx context.Context) error {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		c.AdvanceTo(c.cfg.Clock.Now())
		wait := time.Hour
		c.mu.Lock()
		if c.queue.Len() > 0 {
			wait = time.Duration(c.queue[0].due()-c.cfg.Clock.Now().UnixMilli()) * time.Millisecond
		}
		c.mu.Unlock()
		if wait < time.Millisecond {
			wait = time.Millisecond
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.wake:
			if !t.Stop() {
				select {
				case <-t.C:
				default:
				}
			}
		case <-t.C:
		}
	}
}
