package venue

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"

	"github.com/shopspring/decimal"
)

// The synthetic market. Each base coin has one price process (a log random walk whose volatility switches between
// calm, normal and wild regimes); its spot and perpetual instruments quote around it (the perpetual with a small
// mean-reverting basis). Every step, a market maker (the house account) refreshes a layered ladder around the fair
// price, and synthetic takers (also the house) send market orders whose size and direction follow the move. Trades
// against user orders are real fills; trades between house orders only print (candles, trades, volume). Floats are
// used only to draw the random moves; every price goes to ticks at once.

type regime struct {
	vol    float64 // multiplier of the base volatility
	takers float64 // taker arrival multiplier
}

var regimes = [...]regime{{0.5, 0.7}, {1, 1}, {2.5, 1.8}}

// coinProc is the price process of one base coin.
type coinProc struct {
	base   string
	rng    *rand.Rand
	logP   float64
	sigma  float64 // per-second volatility of log price
	regime int
	drift  float64 // last step's move, biases taker direction
}

// mktState is the synthetic market's per-instrument state.
type mktState struct {
	proc  *coinProc
	basis float64 // perpetual premium over the index, as a fraction
	bids  map[int64]*order
	asks  map[int64]*order
	lastM int64 // last second a mark event was emitted
}

type simulator struct {
	v     *Venue
	seed  int64
	procs map[string]*coinProc
	order []string
}

func hashSeed(seed int64, parts ...string) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for i := range 8 {
		b[i] = byte(seed >> (8 * i))
	}
	h.Write(b[:])
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

func newSimulator(v *Venue, seed int64) *simulator {
	s := &simulator{v: v, seed: seed, procs: map[string]*coinProc{}}
	for _, st := range v.list {
		p, ok := s.procs[st.in.Base]
		if !ok {
			ref, _ := st.in.RefPrice.Float64()
			p = &coinProc{base: st.in.Base, rng: rand.New(rand.NewPCG(hashSeed(seed, "live", st.in.Base), 1)),
				logP: math.Log(ref), sigma: annualToSecond(coinVol(st.in.Base)), regime: 1}
			s.procs[st.in.Base] = p
			s.order = append(s.order, st.in.Base)
		}
		st.mkt = &mktState{proc: p, bids: map[int64]*order{}, asks: map[int64]*order{}}
		st.live = newLiveCandles(v.start.UnixMilli(), st.lastTicks())
	}
	return s
}

// coinVol is the annualised volatility used for a coin: majors calmer than the rest.
func coinVol(base string) float64 {
	switch base {
	case "BTC":
		return 0.5
	case "ETH":
		return 0.65
	}
	return 0.9
}

func annualToSecond(v float64) float64 { return v / math.Sqrt(365*24*3600) }

func (s *simulator) init(now time.Time) {
	for _, st := range s.v.list {
		s.refresh(st)
	}
}

func (s *simulator) step(now time.Time) {
	dt := s.v.cfg.StepInterval.Seconds()
	for _, b := range s.order {
		p := s.procs[b]
		if p.rng.Float64() < 0.002*dt {
			// Regime switch: mostly back to normal, sometimes calm or wild.
			p.regime = []int{0, 1, 1, 2}[p.rng.IntN(4)]
		}
		move := p.rng.NormFloat64() * p.sigma * regimes[p.regime].vol * math.Sqrt(dt) * 8
		p.logP += move
		p.drift = move
	}
	ms := now.UnixMilli()
	for _, st := range s.v.list {
		m := st.mkt
		if st.in.Market == Perp {
			m.basis += (0-m.basis)*0.01 + m.proc.rng.NormFloat64()*0.00003
		}
		s.refresh(st)
		s.takers(st, dt)
		s.v.afterTrades(st)
		fair := s.fair(st)
		st.index = st.in.Price(max(int64(math.Exp(m.proc.logP)/tickF(st.in)), 1)).Round(st.in.priceScale)
		if st.in.Market == Perp {
			st.mark = st.in.Price(max(int64(fair/tickF(st.in)), 1))
			prem := decimal.NewFromFloat(m.basis).Round(6)
			st.funding = decimal.Max(decimal.RequireFromString("-0.003"), decimal.Min(decimal.RequireFromString("0.003"),
				prem.Div(decimal.NewFromInt(3)).Add(decimal.RequireFromString("0.0001")).Round(8)))
			if sec := ms / 1000; sec != m.lastM && len(s.v.subs) > 0 {
				m.lastM = sec
				mv := st.markView(ms)
				s.v.emit(Event{Kind: EvMark, Instrument: st.in.ID, Mark: &mv})
			}
		} else {
			st.mark = st.lastPrice()
		}
	}
}

func tickF(in *Instrument) float64 { f, _ := in.TickSize.Float64(); return f }
func stepF(in *Instrument) float64 { f, _ := in.StepSize.Float64(); return f }

func (s *simulator) fair(st *instState) float64 {
	return math.Exp(st.mkt.proc.logP) * (1 + st.mkt.basis)
}

// refresh reconciles the house ladder with the fair price: levels that should no longer exist are cancelled,
// missing or depleted ones are (re)placed. Placing may trade against user orders the move crossed.
func (s *simulator) refresh(st *instState) {
	in := st.in
	m := st.mkt
	fair := s.fair(st) / tickF(in)
	half := math.Max(1, fair*0.0001)
	gap := math.Max(1, math.Round(fair*0.0002))
	bestBid := int64(math.Floor(fair - half))
	bestAsk := int64(math.Ceil(fair + half))
	if bestAsk <= bestBid {
		bestAsk = bestBid + 1
	}
	n := s.v.cfg.BookLevels
	unit := math.Max(1, 3000/(math.Exp(m.proc.logP)*stepF(in))) // lots worth about 3000 USDT
	if in.Market == Perp {
		unit *= 3
	}
	for _, side := range []Side{Buy, Sell} {
		book := m.bids
		if side == Sell {
			book = m.asks
		}
		want := make(map[int64]int64, n)
		for i := range n {
			var px int64
			if side == Buy {
				px = bestBid - int64(i)*int64(gap)
			} else {
				px = bestAsk + int64(i)*int64(gap)
			}
			if px < in.minPrice || px > in.maxPrice {
				continue
			}
			size := unit * (1 + 0.25*float64(i)) * (0.6 + 0.8*m.proc.rng.Float64())
			want[px] = max(int64(size), in.minQty)
		}
		for px, o := range book {
			target, keep := want[px]
			if o.lvl == nil {
				delete(book, px) // filled by takers
				continue
			}
			if !keep {
				st.book.unlink(o)
				delete(book, px)
				continue
			}
			if o.remaining()*2 >= target {
				delete(want, px) // close enough; keep its queue place
			} else {
				st.book.unlink(o)
				delete(book, px)
			}
		}
		// Place nearest-to-fair first so crossing user orders trade at the best prices.
		for i := range n {
			var px int64
			if side == Buy {
				px = bestBid - int64(i)*int64(gap)
			} else {
				px = bestAsk + int64(i)*int64(gap)
			}
			q, ok := want[px]
			if !ok {
				continue
			}
			o := s.v.placeHouse(st, side, px, q)
			if o.lvl != nil {
				book[px] = o
			}
		}
	}
}

// takers sends synthetic market orders: Poisson arrivals, lognormal sizes, direction leaning with the move.
func (s *simulator) takers(st *instState, dt float64) {
	m := st.mkt
	p := m.proc
	lambda := 1.5 * dt * regimes[p.regime].takers
	if st.in.Market == Perp {
		lambda *= 2
	}
	k := poisson(p.rng, lambda)
	unit := math.Max(1, 400/(math.Exp(p.logP)*stepF(st.in)))
	for range k {
		buyP := 0.5
		if p.drift > 0 {
			buyP = 0.62
		} else if p.drift < 0 {
			buyP = 0.38
		}
		side := Sell
		if p.rng.Float64() < buyP {
			side = Buy
		}
		size := max(int64(unit*math.Exp(p.rng.NormFloat64()*0.9)), st.in.minQty)
		s.v.houseMarket(st, side, min(size, st.in.marketMax))
	}
}

func poisson(r *rand.Rand, lambda float64) int {
	l := math.Exp(-lambda)
	k, p := 0, 1.0
	for {
		p *= r.Float64()
		if p <= l || k > 50 {
			return k
		}
		k++
	}
}
