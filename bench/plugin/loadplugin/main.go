// Command loadplugin is a synthetic exchange plugin for the benchmarks: it speaks exchange.v1 like any plugin but
// generates market data at a controlled rate instead of connecting anywhere.
//
// Settings (Configure): symbols (how many instruments, default 50), mode ("paced": rate book deltas and rate
// trades per second per subscribed symbol; "flood": as many events as the gRPC stream takes), rate (default 10),
// levels (book levels per side, default 50). Trade ids are "<unix nanoseconds>-<n>" so a consumer can measure
// latency from the moment the plugin created the event.
package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

type settings struct {
	symbols int
	flood   bool
	rate    int
	levels  int
}

type server struct {
	exchangev1.UnimplementedExchangeServer
	mu  sync.Mutex
	cfg settings
}

func main() {
	sdk.Serve(&server{cfg: settings{symbols: 50, rate: 10, levels: 50}})
}

func (s *server) Describe(context.Context, *exchangev1.DescribeRequest) (*exchangev1.DescribeResponse, error) {
	return &exchangev1.DescribeResponse{
		Exchange: &exchangev1.ExchangeInfo{Key: 900, Slug: "load", Name: "Load generator", PluginVersion: "1.0.0",
			Status: exchangev1.ExchangeStatus_EXCHANGE_STATUS_AVAILABLE},
		Capabilities: &exchangev1.Capabilities{
			MarketTypes: []exchangev1.MarketType{exchangev1.MarketType_MARKET_TYPE_SPOT},
			Streams:     &exchangev1.StreamCapabilities{Book: true, Trades: true},
		},
	}, nil
}

func (s *server) Configure(_ context.Context, req *exchangev1.ConfigureRequest) (*exchangev1.ConfigureResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range req.GetSettings() {
		n, err := strconv.Atoi(v)
		switch k {
		case "mode":
			s.cfg.flood = v == "flood"
			continue
		case "symbols", "rate", "levels":
			if err != nil || n < 1 {
				return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "setting %s: want a positive integer", k)
			}
		default:
			return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "unknown setting %s", k)
		}
		switch k {
		case "symbols":
			s.cfg.symbols = n
		case "rate":
			s.cfg.rate = n
		case "levels":
			s.cfg.levels = n
		}
	}
	return &exchangev1.ConfigureResponse{}, nil
}

func (s *server) Health(context.Context, *exchangev1.HealthRequest) (*exchangev1.HealthResponse, error) {
	return &exchangev1.HealthResponse{Ok: true}, nil
}

func symbol(i int) string { return fmt.Sprintf("L%03dUSDT", i) }

func (s *server) ListInstruments(context.Context, *exchangev1.ListInstrumentsRequest) (*exchangev1.ListInstrumentsResponse, error) {
	s.mu.Lock()
	n := s.cfg.symbols
	s.mu.Unlock()
	out := make([]*exchangev1.Instrument, n)
	for i := range n {
		out[i] = &exchangev1.Instrument{Symbol: symbol(i), MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT,
			Base: fmt.Sprintf("L%03d", i), Quote: "USDT", Status: exchangev1.InstrumentStatus_INSTRUMENT_STATUS_TRADING,
			TickSize: "0.01", StepSize: "0.001"}
	}
	return &exchangev1.ListInstrumentsResponse{Instruments: out}, nil
}

// gen produces one subscription's events.
type gen struct {
	sub    *exchangev1.Subscription
	mid    int64 // cents
	levels int
	seq    int64
	n      int64
	rng    *rand.Rand

	tradePrice, tradeQuote string
	idBuf                  [48]byte
}

func (g *gen) price(cents int64) string {
	frac := cents % 100
	return strconv.FormatInt(cents/100, 10) + "." + string(rune('0'+frac/10)) + string(rune('0'+frac%10))
}

// qtys are the quantities a level takes, made once.
var qtys = func() []string {
	out := make([]string, 900)
	for i := range out {
		out[i] = "0." + strconv.Itoa(100+i)
	}
	return out
}()

func (g *gen) qty() string { return qtys[g.rng.IntN(len(qtys))] }

func (g *gen) snapshot() *exchangev1.MarketEvent {
	u := &exchangev1.BookUpdate{}
	for k := 1; k <= g.levels; k++ {
		u.Bids = append(u.Bids, &exchangev1.PriceLevel{Price: g.price(g.mid - int64(k)), Qty: g.qty()})
		u.Asks = append(u.Asks, &exchangev1.PriceLevel{Price: g.price(g.mid + int64(k)), Qty: g.qty()})
	}
	g.seq++
	u.Sequence = g.seq
	return &exchangev1.MarketEvent{Subscription: g.sub, Time: time.Now().UnixMilli(), Event: &exchangev1.MarketEvent_BookSnapshot{BookSnapshot: u}}
}

func (g *gen) next() *exchangev1.MarketEvent {
	now := time.Now()
	if g.sub.GetChannel() == exchangev1.Channel_CHANNEL_BOOK {
		u := &exchangev1.BookUpdate{PrevSequence: g.seq}
		k := int64(1 + g.rng.IntN(min(g.levels, 10)))
		u.Bids = []*exchangev1.PriceLevel{{Price: g.price(g.mid - k), Qty: g.qty()}}
		u.Asks = []*exchangev1.PriceLevel{{Price: g.price(g.mid + k), Qty: g.qty()}}
		g.seq++
		u.Sequence = g.seq
		return &exchangev1.MarketEvent{Subscription: g.sub, Time: now.UnixMilli(), Event: &exchangev1.MarketEvent_BookDelta{BookDelta: u}}
	}
	g.n++
	if g.tradePrice == "" {
		g.tradePrice, g.tradeQuote = g.price(g.mid), g.price(g.mid/100)
	}
	side := exchangev1.Side_SIDE_BUY
	if g.n%2 == 0 {
		side = exchangev1.Side_SIDE_SELL
	}
	return &exchangev1.MarketEvent{Subscription: g.sub, Time: now.UnixMilli(), Event: &exchangev1.MarketEvent_Trade{Trade: &exchangev1.Trade{
		Id:    string(strconv.AppendInt(append(strconv.AppendInt(g.idBuf[:0], now.UnixNano(), 10), '-'), g.n, 10)),
		Price: g.tradePrice, Qty: "0.01", QuoteQty: g.tradeQuote, Side: side, Time: now.UnixMilli()}}}
}

func subKey(s *exchangev1.Subscription) string {
	return fmt.Sprintf("%d|%s|%s", s.GetChannel(), s.GetSymbol(), s.GetInterval())
}

// StreamMarket serves subscriptions. Paced: each subscribed symbol ticks rate times a second, and every tick emits
// one event per subscribed channel of that symbol together (a trade prints and the book changes at once, as on an
// exchange). Flood: one goroutine cycles over every subscription, sending as fast as the stream takes.
func (s *server) StreamMarket(st exchangev1.Exchange_StreamMarketServer) error {
	s.mu.Lock()
	cfg := s.cfg
	s.mu.Unlock()
	ctx, cancel := context.WithCancel(st.Context())
	var (
		sendMu sync.Mutex
		wg     sync.WaitGroup
		mu     sync.Mutex
		subs   = map[string]*gen{}
		bySym  = map[string]*symRun{}
		order  []*gen
		seed   atomic.Int64
	)
	send := func(ev *exchangev1.MarketEvent) error {
		sendMu.Lock()
		defer sendMu.Unlock()
		return st.Send(ev)
	}
	defer wg.Wait()
	defer cancel()
	if cfg.flood {
		wg.Add(1)
		go func() { // owned by this stream; floods until it ends
			defer wg.Done()
			for ctx.Err() == nil {
				mu.Lock()
				list := append([]*gen(nil), order...)
				mu.Unlock()
				if len(list) == 0 {
					time.Sleep(time.Millisecond)
					continue
				}
				for _, g := range list {
					if err := send(g.next()); err != nil {
						return
					}
				}
			}
		}()
	}
	for {
		req, err := st.Recv()
		if err != nil {
			return nil
		}
		for _, sub := range req.GetSubscriptions() {
			k := subKey(sub)
			mu.Lock()
			if req.GetOp() == exchangev1.StreamMarketRequest_OP_UNSUBSCRIBE {
				if g, ok := subs[k]; ok {
					delete(subs, k)
					order = remove(order, g)
					if r := bySym[sub.GetSymbol()]; r != nil {
						r.gens = remove(r.gens, g)
						if len(r.gens) == 0 {
							r.cancel()
							delete(bySym, sub.GetSymbol())
						}
					}
				}
				mu.Unlock()
				continue
			}
			if _, ok := subs[k]; ok {
				mu.Unlock()
				continue
			}
			idx, _ := strconv.Atoi(sub.GetSymbol()[1:4])
			g := &gen{sub: sub, mid: int64(10000 + 100*idx), levels: cfg.levels, rng: rand.New(rand.NewPCG(uint64(seed.Add(1)), 7))}
			subs[k] = g
			if sub.GetChannel() == exchangev1.Channel_CHANNEL_BOOK {
				if err := send(g.snapshot()); err != nil {
					mu.Unlock()
					return nil
				}
			}
			if cfg.flood {
				order = append(order, g)
				mu.Unlock()
				continue
			}
			r := bySym[sub.GetSymbol()]
			if r != nil {
				r.gens = append(r.gens, g)
				mu.Unlock()
				continue
			}
			rctx, rcancel := context.WithCancel(ctx)
			r = &symRun{gens: []*gen{g}, cancel: rcancel}
			bySym[sub.GetSymbol()] = r
			mu.Unlock()
			wg.Add(1)
			go func() { // owned by this stream; ticks one symbol until its last subscription ends
				defer wg.Done()
				period := time.Second / time.Duration(cfg.rate)
				// Spread symbols over the period so the load is even.
				select {
				case <-rctx.Done():
					return
				case <-time.After(time.Duration(g.rng.Int64N(int64(period)))):
				}
				t := time.NewTicker(period)
				defer t.Stop()
				for {
					select {
					case <-rctx.Done():
						return
					case <-t.C:
						mu.Lock()
						evs := make([]*exchangev1.MarketEvent, 0, len(r.gens))
						for _, g := range r.gens {
							evs = append(evs, g.next())
						}
						mu.Unlock()
						for _, ev := range evs {
							if err := send(ev); err != nil {
								return
							}
						}
					}
				}
			}()
		}
	}
}

type symRun struct {
	gens   []*gen
	cancel context.CancelFunc
}

func remove(list []*gen, g *gen) []*gen {
	for i, x := range list {
		if x == g {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}
