package venue

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/shopspring/decimal"
)

// Config sets up a venue.
type Config struct {
	// Profile names the instrument set ("binance", "okx", "bybit"); ignored when Instruments is set.
	Profile string
	// Instruments overrides the profile (each must have passed Init).
	Instruments []*Instrument
	// Seed makes the synthetic market deterministic.
	Seed int64
	// Clock defaults to the wall clock.
	Clock Clock
	// HistoryDays of generated 1m candles and 5m statistics before the start; 0 disables history.
	HistoryDays int
	// StepInterval is the simulation step (market maker refresh, takers, mark price); default 250ms.
	StepInterval time.Duration
	// BookLevels per side kept by the market makers; default 40.
	BookLevels int
	// Simulate disables the synthetic market when false (an empty book that only accounts trade on).
	Simulate bool
	// Fees and limits of the wallet.
	Assets map[string]AssetConfig
	// FundingInterval between perpetual funding settlements, aligned to multiples of it since the Unix epoch;
	// default 8h (00/08/16 UTC). Tests and the conformance run shorten it to see settlements without waiting hours.
	FundingInterval time.Duration
}

// AssetConfig describes a coin for wallets: withdrawal fee and minimum, and the faucet amount.
type AssetConfig struct {
	WithdrawFee decimal.Decimal
	WithdrawMin decimal.Decimal
	Faucet      decimal.Decimal
	// Scale is the number of decimals of balances shown for the asset (conversions round to it).
	Scale int32
}

// System account ids. They are not tradable by callers. External is the outside world (deposits come from it,
// withdrawals go to it), House is the counterparty of synthetic liquidity, conversions, funding and liquidations,
// Fees receives trading and withdrawal fees. External and House may go negative; every other balance may not.
const (
	AccountExternal = "@external"
	AccountHouse    = "@house"
	AccountFees     = "@fees"
)

// instState is everything the venue keeps per instrument.
type instState struct {
	in    *Instrument
	book  *Book
	seq   uint64 // book delta sequence
	conds []*order
	// positions open on this instrument (for mark-price liquidation and funding).
	positions map[*position]struct{}

	last         int64 // last trade price in ticks
	lastQty      int64
	mark         decimal.Decimal
	index        decimal.Decimal
	funding      decimal.Decimal // current predicted funding rate
	liqMark      decimal.Decimal // mark at the last liquidation check
	fundHist     map[int64]decimal.Decimal
	nextFund     int64
	trades       ring[Trade]
	mkt          *mktState // synthetic market state, nil when not simulated
	live         *liveCandles
	spotTwin     *instState // for a perp: the spot instrument of the same base (shares the price process)
	perpTwin     *instState
	openInterest int64 // lots, from user positions plus the synthetic open interest
}

// Venue is the simulated exchange. All methods are safe for concurrent use.
type Venue struct {
	mu    sync.Mutex
	cfg   Config
	clock Clock

	instruments map[string]*instState
	list        []*instState
	accounts    map[string]*account
	external    *account
	house       *account
	fees        *account

	nextOrderID uint64
	nextTradeID uint64
	nextLedger  uint64
	nextFunding uint64
	assets      map[string]AssetConfig

	quotes    map[string]*ConvertQuote
	nextQ     uint64
	transfers ring[LedgerEntry]

	subs   map[*Subscription]struct{}
	events []Event // collected during one locked operation, published at its end

	start   time.Time
	simTime time.Time // the simulation has run up to here
	sim     *simulator
	hist    *history
	closed  bool

	chain     *Chain // the simulated chain this venue is on (nil: withdrawals complete at once)
	chainName string
}

// New builds a venue. With Simulate set it seeds the synthetic market (and history when HistoryDays > 0).
func New(cfg Config) (*Venue, error) {
	if cfg.Clock == nil {
		cfg.Clock = SystemClock{}
	}
	if cfg.StepInterval <= 0 {
		cfg.StepInterval = 250 * time.Millisecond
	}
	if cfg.BookLevels <= 0 {
		cfg.BookLevels = 40
	}
	if cfg.FundingInterval <= 0 {
		cfg.FundingInterval = 8 * time.Hour
	}
	if cfg.FundingInterval < time.Second || cfg.FundingInterval%time.Second != 0 {
		return nil, fmt.Errorf("venue: funding interval %s: whole seconds, at least 1s", cfg.FundingInterval)
	}
	ins := cfg.Instruments
	if ins == nil {
		name := cfg.Profile
		if name == "" {
			name = "binance"
		}
		p, err := LoadProfile(name)
		if err != nil {
			return nil, err
		}
		ins = p.Instruments
	}
	v := &Venue{
		cfg:         cfg,
		clock:       cfg.Clock,
		instruments: make(map[string]*instState, len(ins)),
		accounts:    map[string]*account{},
		assets:      map[string]AssetConfig{},
		quotes:      map[string]*ConvertQuote{},
		subs:        map[*Subscription]struct{}{},
		transfers:   newRing[LedgerEntry](4096),
	}
	v.external = v.newAccount(AccountExternal, true)
	v.house = v.newAccount(AccountHouse, true)
	v.fees = v.newAccount(AccountFees, false)
	v.fees.system = true
	now := v.clock.Now()
	v.start = now.Truncate(time.Minute)
	v.simTime = now
	for _, in := range ins {
		if in.unit.IsZero() {
			return nil, fmt.Errorf("%w %s: Init not called", ErrInvalidInstr, in.ID)
		}
		if _, dup := v.instruments[in.ID]; dup {
			return nil, fmt.Errorf("%w: duplicate %s", ErrInvalidInstr, in.ID)
		}
		st := &instState{in: in, book: newBook(), positions: map[*position]struct{}{}, trades: newRing[Trade](1000)}
		st.mark = in.RefPrice
		st.index = in.RefPrice
		st.funding = decimal.RequireFromString("0.0001")
		st.nextFund = v.nextFundingTime(now.UnixMilli())
		st.fundHist = map[int64]decimal.Decimal{}
		v.instruments[in.ID] = st
		v.list = append(v.list, st)
		for _, a := range []string{in.Base, in.Quote} {
			if _, ok := v.assets[a]; !ok {
				v.assets[a] = defaultAsset(a, in)
			}
		}
	}
	for a, c := range cfg.Assets {
		v.assets[a] = c
	}
	for _, st := range v.list {
		if st.in.Market == Perp {
			if sp, ok := v.instruments[st.in.Base+"/"+st.in.Quote]; ok && sp.in.Market == Spot {
				st.spotTwin = sp
				sp.perpTwin = st
			}
		}
	}
	if cfg.Simulate {
		v.sim = newSimulator(v, cfg.Seed)
		if cfg.HistoryDays > 0 {
			v.hist = newHistory(v, cfg.Seed, cfg.HistoryDays)
		}
		v.mu.Lock()
		v.sim.init(now)
		v.flushLocked()
		v.mu.Unlock()
	}
	return v, nil
}

// defaultAsset picks wallet parameters for a coin from the price of an instrument that trades it.
func defaultAsset(asset string, in *Instrument) AssetConfig {
	if asset == in.Quote {
		return AssetConfig{WithdrawFee: decimal.NewFromInt(1), WithdrawMin: decimal.NewFromInt(10),
			Faucet: decimal.NewFromInt(10000), Scale: 8}
	}
	// About one dollar of fee, ten dollars minimum, a thousand dollars from the faucet, rounded to the step.
	one := decimal.NewFromInt(1).Div(in.RefPrice).RoundCeil(in.qtyScale)
	if one.IsZero() {
		one = in.StepSize
	}
	return AssetConfig{WithdrawFee: one, WithdrawMin: one.Mul(decimal.NewFromInt(10)),
		Faucet: one.Mul(decimal.NewFromInt(1000)), Scale: 8}
}

// nextFundingTime is the next funding settlement strictly after t (ms): with the default interval the next 00:00,
// 08:00 or 16:00 UTC.
func (v *Venue) nextFundingTime(t int64) int64 {
	iv := v.cfg.FundingInterval.Milliseconds()
	return (t/iv + 1) * iv
}

// FundingInterval is the time between funding settlements.
func (v *Venue) FundingInterval() time.Duration { return v.cfg.FundingInterval }

// Now is the venue clock in Unix milliseconds.
func (v *Venue) Now() int64 { return v.clock.Now().UnixMilli() }

// Instruments lists the venue's instruments in profile order.
func (v *Venue) Instruments() []*Instrument {
	out := make([]*Instrument, len(v.list))
	for i, st := range v.list {
		out[i] = st.in
	}
	return out
}

// Instrument returns one instrument by id.
func (v *Venue) Instrument(id string) (*Instrument, error) {
	st, ok := v.instruments[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrInstrument, id)
	}
	return st.in, nil
}

func (v *Venue) inst(id string) (*instState, error) {
	st, ok := v.instruments[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrInstrument, id)
	}
	return st, nil
}

// SetStatus changes an instrument's trading status.
func (v *Venue) SetStatus(id string, s InstrumentStatus) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	st, err := v.inst(id)
	if err != nil {
		return err
	}
	st.in.Status = s
	return nil
}

// BookSnapshot returns up to depth levels per side (0 = all) and the sequence they reflect.
func (v *Venue) BookSnapshot(id string, depth int) (BookSnapshot, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	st, err := v.inst(id)
	if err != nil {
		return BookSnapshot{}, err
	}
	snap := BookSnapshot{Instrument: id, Seq: st.seq, Time: v.Now()}
	for _, p := range st.book.depth(true, depth) {
		snap.Bids = append(snap.Bids, Level{Price: st.in.Price(p[0]), Qty: st.in.Qty(p[1])})
	}
	for _, p := range st.book.depth(false, depth) {
		snap.Asks = append(snap.Asks, Level{Price: st.in.Price(p[0]), Qty: st.in.Qty(p[1])})
	}
	return snap, nil
}

// RecentTrades returns up to limit public trades, oldest first.
func (v *Venue) RecentTrades(id string, limit int) ([]Trade, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	st, err := v.inst(id)
	if err != nil {
		return nil, err
	}
	return st.trades.last(limit), nil
}

// Mark returns the mark, index and funding state of an instrument (spot instruments report their last price).
func (v *Venue) Mark(id string) (MarkPrice, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	st, err := v.inst(id)
	if err != nil {
		return MarkPrice{}, err
	}
	return st.markView(v.Now()), nil
}

func (st *instState) markView(now int64) MarkPrice {
	return MarkPrice{Instrument: st.in.ID, Mark: st.mark, Index: st.index, FundingRate: st.funding,
		NextFunding: st.nextFund, Time: now}
}

// LastPrice returns the last trade price (the reference price before any trade).
func (v *Venue) LastPrice(id string) (decimal.Decimal, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	st, err := v.inst(id)
	if err != nil {
		return decimal.Decimal{}, err
	}
	return st.lastPrice(), nil
}

func (st *instState) lastPrice() decimal.Decimal {
	if st.last == 0 {
		return st.in.RefPrice
	}
	return st.in.Price(st.last)
}

// Close stops the venue: subscriptions end with ErrClosed. Runners stop with their own contexts.
func (v *Venue) Close() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.closed = true
	for s := range v.subs {
		s.end(ErrClosed)
	}
}

// ring is a bounded FIFO that overwrites its oldest element.
type ring[T any] struct {
	buf  []T
	next int
	full bool
}

func newRing[T any](n int) ring[T] { return ring[T]{buf: make([]T, n)} }

func (r *ring[T]) push(x T) {
	r.buf[r.next] = x
	r.next++
	if r.next == len(r.buf) {
		r.next = 0
		r.full = true
	}
}

func (r *ring[T]) len() int {
	if r.full {
		return len(r.buf)
	}
	return r.next
}

// last returns the newest n elements (all when n <= 0), oldest first.
func (r *ring[T]) last(n int) []T {
	l := r.len()
	if n <= 0 || n > l {
		n = l
	}
	out := make([]T, n)
	for i := 0; i < n; i++ {
		idx := (r.next - n + i + len(r.buf)) % len(r.buf)
		out[i] = r.buf[idx]
	}
	return out
}

// Run drives the synthetic market in real time until ctx ends: every StepInterval it advances the simulation to
// the clock's now. It is the only goroutine the venue needs; the caller owns it. It returns between two steps once
// ctx ends, also in the middle of a catch-up: a machine too busy to keep up in real time must not keep its owner
// waiting for the simulation to catch up before it stops.
func (v *Venue) Run(ctx context.Context) error {
	t := time.NewTicker(v.cfg.StepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			for now := v.clock.Now(); v.advanceOne(now); {
				if ctx.Err() != nil {
					return ctx.Err()
				}
			}
		}
	}
}

// AdvanceTo runs the simulation in fixed steps up to t (simulated time; tests drive it with a ManualClock). Funding
// settlement and mark-price liquidations happen here too, also when the synthetic market is off.
//
// Each step takes the lock on its own: readers (an all-symbol tickers call, say) wait for one step, never for a whole
// catch-up of many missed steps on a busy machine. Every reader still sees the venue at a step boundary.
func (v *Venue) AdvanceTo(t time.Time) {
	for v.advanceOne(t) {
	}
}

// advanceOne runs the next step when it is due by t and reports whether it ran one.
func (v *Venue) advanceOne(t time.Time) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	next := v.simTime.Add(v.cfg.StepInterval)
	if next.After(t) {
		return false
	}
	v.simTime = next
	v.stepLocked(next)
	v.flushLocked()
	return true
}

func (v *Venue) stepLocked(now time.Time) {
	ms := now.UnixMilli()
	if v.sim != nil {
		v.sim.step(now)
	}
	for _, st := range v.list {
		if st.in.Market != Perp {
			continue
		}
		v.checkTriggers(st, ms)
		v.checkLiquidations(st, ms)
		if ms >= st.nextFund {
			v.settleFunding(st, st.nextFund)
			st.nextFund = v.nextFundingTime(ms)
		}
	}
	for _, st := range v.list {
		if st.in.Market == Spot {
			v.checkTriggers(st, ms)
		}
		if st.live != nil {
			st.live.roll(st, ms)
		}
	}
}
