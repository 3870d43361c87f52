package stream

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/exhub/exhub/bff/internal/pluginhost"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// Source gives the gateway its exchanges. HostSource adapts the plugin host; tests and benchmarks may bring their
// own.
type Source interface {
	// Exchange returns the exchange of a slug, or false when no live exchange has that slug.
	Exchange(slug string) (Exchange, bool)
}

// Exchange is one exchange's market data as the gateway needs it.
type Exchange interface {
	// Describe is the exchange's cached Describe (nil while it has never run).
	Describe() *exchangev1.DescribeResponse
	// Instruments lists the instruments of a market type.
	Instruments(ctx context.Context, mt exchangev1.MarketType) ([]*exchangev1.Instrument, error)
	// StreamMarket opens a durable market stream (see pluginhost.MarketStream).
	StreamMarket(ctx context.Context) MarketStream
}

// MarketStream is the part of pluginhost.MarketStream the gateway uses.
type MarketStream interface {
	Events() <-chan *exchangev1.MarketEvent
	Subscribe(ctx context.Context, subs ...*exchangev1.Subscription) error
	Unsubscribe(ctx context.Context, subs ...*exchangev1.Subscription) error
	Close()
}

// HostSource serves the plugin host's exchanges.
type HostSource struct {
	Host *pluginhost.Host
}

// Exchange implements Source.
func (h HostSource) Exchange(slug string) (Exchange, bool) {
	if h.Host == nil {
		return nil, false
	}
	s, ok := h.Host.Get(slug)
	if !ok {
		return nil, false
	}
	return hostExchange{s}, true
}

type hostExchange struct{ sup *pluginhost.Supervisor }

func (e hostExchange) Describe() *exchangev1.DescribeResponse { return e.sup.Describe() }

func (e hostExchange) Instruments(ctx context.Context, mt exchangev1.MarketType) ([]*exchangev1.Instrument, error) {
	var out []*exchangev1.Instrument
	err := e.sup.Call(ctx, "ListInstruments", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		r, err := c.ListInstruments(ctx, &exchangev1.ListInstrumentsRequest{MarketType: mt})
		if err != nil {
			return err
		}
		out = r.GetInstruments()
		return nil
	})
	return out, err
}

func (e hostExchange) StreamMarket(ctx context.Context) MarketStream { return e.sup.StreamMarket(ctx) }

// catalog validates subscriptions against each exchange's Describe and instrument list (cached).
type catalog struct {
	src Source
	ttl time.Duration

	mu    sync.Mutex
	lists map[string]*instList
}

type instList struct {
	mu      sync.Mutex
	fetched time.Time
	symbols map[string]*exchangev1.Instrument
}

func newCatalog(src Source, ttl time.Duration) *catalog {
	return &catalog{src: src, ttl: ttl, lists: map[string]*instList{}}
}

// check validates a parsed subscription; it returns a problem naming the bad field.
func (c *catalog) check(ctx context.Context, s *Sub) *Problem {
	ex, ok := c.src.Exchange(s.Exchange)
	if !ok {
		return problemf(422, "unknown-exchange", "exchange", "no exchange %q streams market data here", s.Exchange)
	}
	d := ex.Describe()
	if d == nil {
		return problemf(503, "exchange-unavailable", "exchange", "exchange %q is not running yet; retry shortly", s.Exchange)
	}
	caps := d.GetCapabilities()
	if len(caps.GetMarketTypes()) > 0 && !slices.Contains(caps.GetMarketTypes(), s.marketType) {
		return problemf(422, "unknown-market-type", "marketType", "exchange %q has no %s market", s.Exchange, s.MarketType)
	}
	if st := caps.GetStreams(); st != nil {
		has := map[string]bool{"book": st.GetBook(), "trades": st.GetTrades(), "ticker": st.GetTicker(), "candles": st.GetCandles()}
		if !has[s.Channel] {
			return problemf(422, "unsupported-channel", "channel", "exchange %q does not stream %s", s.Exchange, s.Channel)
		}
	}
	if s.Channel == "candles" && len(caps.GetIntervals()) > 0 && !slices.Contains(caps.GetIntervals(), s.Interval) {
		return problemf(422, "unknown-interval", "interval", "exchange %q has no interval %q (it has %s)", s.Exchange,
			s.Interval, strings.Join(caps.GetIntervals(), ", "))
	}
	inst, err := c.instrument(ctx, ex, s)
	if err != nil {
		return problemf(503, "exchange-unavailable", "exchange", "instruments of %q: %v; retry shortly", s.Exchange, err)
	}
	if inst == nil {
		return problemf(422, "unknown-symbol", "symbol", "exchange %q has no %s instrument %q", s.Exchange, s.MarketType, s.Symbol)
	}
	return nil
}

func (c *catalog) instrument(ctx context.Context, ex Exchange, s *Sub) (*exchangev1.Instrument, error) {
	key := s.Exchange + "|" + s.MarketType
	c.mu.Lock()
	l, ok := c.lists[key]
	if !ok {
		l = &instList{}
		c.lists[key] = l
	}
	c.mu.Unlock()
	// One fetch at a time per list: concurrent subscribers wait for it instead of calling the plugin too.
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.symbols == nil || time.Since(l.fetched) > c.ttl {
		fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		insts, err := ex.Instruments(fctx, s.marketType)
		cancel()
		if err != nil {
			if l.symbols == nil {
				return nil, fmt.Errorf("list instruments: %w", err)
			}
		} else {
			m := make(map[string]*exchangev1.Instrument, len(insts))
			for _, in := range insts {
				m[in.GetSymbol()] = in
			}
			l.symbols, l.fetched = m, time.Now()
		}
	}
	return l.symbols[s.Symbol], nil
}
