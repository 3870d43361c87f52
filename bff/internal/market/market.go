// Package market is the BFF's market data service over the plugin host: instruments, tickers, movers, candles,
// order books and trades for every exchange, validated, cached and served stale when the exchange fails.
//
// Caching: instruments and tickers live in the shared cache (Valkey, so every BFF replica sees one copy) with an
// in-process layer in front. A cold or expired key is loaded by one caller at a time (single flight): concurrent
// requests wait for that one plugin call. Tickers are refreshed every TickerInterval (10 s) by a goroutine per
// exchange that Run owns; a replica adopts a value another replica stored less than half an interval ago instead
// of calling the plugin again. Candles, books and trades go to the plugin on every miss (the edge caches them
// briefly), also through single flight, and keep a last good value in process.
//
// Failures: when a plugin call fails and the last good value is younger than the kind's MaxStale, that value is
// returned marked stale (Freshness.Stale, StaleReason); otherwise the error is an *UpstreamError (502/503 with a
// retry hint). After a failure the key is not retried for the error's retry hint, so a dead exchange is not
// hammered. Parameters the service refuses are *FieldError (422).
package market

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/exhub/exhub/bff/internal/cache"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// Plugin is what the service needs of a supervised plugin (*pluginhost.Supervisor implements it).
type Plugin interface {
	// Describe is the cached Describe (nil before the plugin first started).
	Describe() *exchangev1.DescribeResponse
	// Call runs fn against the running plugin, or returns an error wrapping pluginhost.ErrUnavailable.
	Call(ctx context.Context, method string, fn func(context.Context, exchangev1.ExchangeClient) error) error
}

// Exchange is one configured exchange.
type Exchange struct {
	Key  int
	Slug string
	// Status is the configuration's override (available, coming_soon, maintenance); empty: the plugin's own.
	Status string
	// Plugin is nil for an exchange listed without a plugin (coming soon).
	Plugin Plugin
}

// Options configure a Service. Zero values take the defaults noted.
type Options struct {
	Exchanges []Exchange
	// Cache is the shared cache (Valkey or the in-process fallback); nil uses a private in-process one.
	Cache  cache.Cache
	Logger *slog.Logger
	// TickerInterval is the background ticker refresh period (10 s).
	TickerInterval time.Duration
	// InstrumentsTTL is how long an instrument list is fresh (5 min).
	InstrumentsTTL time.Duration
	// MaxStale bounds how old a last good value may be to be served stale: instruments (24 h), tickers (2 min),
	// candles (10 min), order books (15 s), trades (1 min).
	InstrumentsMaxStale, TickersMaxStale, CandlesMaxStale, BookMaxStale, TradesMaxStale time.Duration
	// CallTimeout bounds one plugin call (10 s).
	CallTimeout time.Duration
	// LocalEntries bounds the in-process last good values of candles, books and trades (2000).
	LocalEntries int
	// KeyPrefix prefixes shared cache keys ("exhub:market:v1:").
	KeyPrefix string
	// Now is the clock (tests).
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.TickerInterval, 10*time.Second)
	def(&o.InstrumentsTTL, 5*time.Minute)
	def(&o.InstrumentsMaxStale, 24*time.Hour)
	def(&o.TickersMaxStale, 2*time.Minute)
	def(&o.CandlesMaxStale, 10*time.Minute)
	def(&o.BookMaxStale, 15*time.Second)
	def(&o.TradesMaxStale, time.Minute)
	def(&o.CallTimeout, 10*time.Second)
	if o.LocalEntries <= 0 {
		o.LocalEntries = 2000
	}
	if o.KeyPrefix == "" {
		o.KeyPrefix = "exhub:market:v1:"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Cache == nil {
		o.Cache = cache.NewMemory(1000)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Service serves market data. It is safe for concurrent use.
type Service struct {
	opts   Options
	log    *slog.Logger
	byslug map[string]*Exchange
	order  []*Exchange // by key
	now    func() time.Time

	instruments *layer[[]Instrument]
	tickers     *layer[[]Ticker]
	candles     *live[[]Candle]
	books       *live[OrderBook]
	trades      *live[[]Trade]
}

// New builds the service; call Run to refresh tickers in the background.
func New(opts Options) *Service {
	opts = opts.withDefaults()
	s := &Service{opts: opts, log: opts.Logger.With("component", "market"), byslug: map[string]*Exchange{}, now: opts.Now}
	for i := range opts.Exchanges {
		e := opts.Exchanges[i]
		s.byslug[e.Slug] = &e
		s.order = append(s.order, &e)
	}
	sort.Slice(s.order, func(i, j int) bool { return s.order[i].Key < s.order[j].Key })
	s.instruments = newLayer[[]Instrument](s, "instruments", opts.InstrumentsTTL, opts.InstrumentsMaxStale)
	// Requests accept a ticker list up to one and a half refresh periods old: the refresher keeps it younger.
	s.tickers = newLayer[[]Ticker](s, "tickers", opts.TickerInterval*3/2, opts.TickersMaxStale)
	local := cache.NewMemory(opts.LocalEntries)
	s.candles = &live[[]Candle]{s: s, kind: "candles", maxStale: opts.CandlesMaxStale, last: local}
	s.books = &live[OrderBook]{s: s, kind: "orderbook", maxStale: opts.BookMaxStale, last: local}
	s.trades = &live[[]Trade]{s: s, kind: "trades", maxStale: opts.TradesMaxStale, last: local}
	return s
}

// FromHost lists the configured exchanges with their supervisors (nil plugin when none is configured or running).
func FromHost(h *pluginhost.Host, exchanges []Exchange) []Exchange {
	out := make([]Exchange, 0, len(exchanges))
	for _, e := range exchanges {
		if h != nil && e.Plugin == nil {
			if sup, ok := h.Get(e.Slug); ok {
				e.Plugin = sup
			}
		}
		out = append(out, e)
	}
	return out
}

// Market type names on the API.
const (
	TypeSpot = "SPOT"
	TypeSwap = "SWAP"
)

func marketType(t string) exchangev1.MarketType {
	switch t {
	case TypeSpot:
		return exchangev1.MarketType_MARKET_TYPE_SPOT
	case TypeSwap:
		return exchangev1.MarketType_MARKET_TYPE_SWAP
	}
	return exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED
}

func typeName(mt exchangev1.MarketType) string {
	return strings.TrimPrefix(mt.String(), "MARKET_TYPE_")
}

// target is a validated (exchange, market type).
type target struct {
	ex   *Exchange
	typ  string
	mt   exchangev1.MarketType
	desc *exchangev1.DescribeResponse
}

// resolve validates the exchange slug and the market type against the plugin's Describe.
func (s *Service) resolve(slug, typ string) (target, error) {
	ex, ok := s.byslug[slug]
	if !ok {
		return target{}, fieldErr("exchange", slug, "unknown exchange %q (GET /api/v1/exchanges lists them)", slug)
	}
	mt := marketType(typ)
	if mt == exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED {
		return target{}, fieldErr("type", typ, "type must be SPOT or SWAP")
	}
	if ex.Plugin == nil {
		return target{}, fieldErr("exchange", slug, "exchange %q has no market data yet (no plugin is configured)", slug)
	}
	desc := ex.Plugin.Describe()
	if desc == nil {
		return target{}, &UpstreamError{Status: 503, RetryAfter: retryPluginDown,
			Err: fmt.Errorf("%s: %w (not started yet)", slug, pluginhost.ErrUnavailable)}
	}
	if !slices.Contains(desc.GetCapabilities().GetMarketTypes(), mt) {
		return target{}, fieldErr("type", typ, "exchange %q has no %s markets", slug, typ)
	}
	return target{ex: ex, typ: typ, mt: mt, desc: desc}, nil
}

// call runs one plugin call bounded by CallTimeout, detached from the request's cancellation: the result is shared
// by every request waiting in the single flight, so one client going away must not fail the others.
func (s *Service) call(ctx context.Context, t target, method string, fn func(context.Context, exchangev1.ExchangeClient) error) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.CallTimeout)
	defer cancel()
	return t.ex.Plugin.Call(cctx, method, fn)
}

// --- instruments and tickers ------------------------------------------------------------------------------------

// Instruments returns the USDT-quoted instruments in TRADING status of one exchange and market type, sorted by
// symbol. SWAP instruments must also settle in USDT (or name no settlement asset); a SWAP without a max leverage
// gets 5, a SPOT instrument 1.
func (s *Service) Instruments(ctx context.Context, slug, typ string) ([]Instrument, Freshness, error) {
	t, err := s.resolve(slug, typ)
	if err != nil {
		return nil, Freshness{}, err
	}
	return s.instrumentsOf(ctx, t)
}

func (s *Service) instrumentsOf(ctx context.Context, t target) ([]Instrument, Freshness, error) {
	r, err := s.instruments.get(ctx, t.ex.Slug+":"+t.typ, func(ctx context.Context) ([]Instrument, error) {
		var resp *exchangev1.ListInstrumentsResponse
		err := s.call(ctx, t, "ListInstruments", func(ctx context.Context, c exchangev1.ExchangeClient) error {
			var err error
			resp, err = c.ListInstruments(ctx, &exchangev1.ListInstrumentsRequest{MarketType: t.mt})
			return err
		})
		if err != nil {
			return nil, err
		}
		return filterInstruments(resp.GetInstruments(), t.mt), nil
	})
	return r.data, r.fresh(), err
}

// DefaultMaxLeverage applies to a SWAP instrument whose exchange gives no max leverage.
const DefaultMaxLeverage = "5"

func filterInstruments(in []*exchangev1.Instrument, mt exchangev1.MarketType) []Instrument {
	out := make([]Instrument, 0, len(in))
	for _, i := range in {
		if i.GetMarketType() != mt || i.GetQuote() != "USDT" ||
			i.GetStatus() != exchangev1.InstrumentStatus_INSTRUMENT_STATUS_TRADING {
			continue
		}
		if mt == exchangev1.MarketType_MARKET_TYPE_SWAP && i.GetSettle() != "" && i.GetSettle() != "USDT" {
			continue
		}
		lev := i.GetMaxLeverage()
		switch {
		case mt == exchangev1.MarketType_MARKET_TYPE_SPOT:
			lev = "1"
		case lev == "" || lev == "0":
			lev = DefaultMaxLeverage
		}
		out = append(out, Instrument{
			Symbol: i.GetSymbol(), Type: typeName(mt), Base: i.GetBase(), Quote: i.GetQuote(), Settle: i.GetSettle(),
			Status: "TRADING", TickSize: i.GetTickSize(), MinPrice: i.GetMinPrice(), MaxPrice: i.GetMaxPrice(),
			StepSize: i.GetStepSize(), MinQty: i.GetMinQty(), MaxQty: i.GetMaxQty(),
			MarketStepSize: i.GetMarketStepSize(), MarketMinQty: i.GetMarketMinQty(), MarketMaxQty: i.GetMarketMaxQty(),
			MinNotional: i.GetMinNotional(), ContractValue: i.GetContractValue(),
			ContractValueAsset: i.GetContractValueAsset(), MaxLeverage: lev, Family: i.GetFamily(),
			ListedTime: i.GetListedTime(),
		})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Symbol < out[b].Symbol })
	return out
}

// Tickers returns the tickers of the exchange's listed instruments (see Instruments), sorted by symbol. When the
// instrument list cannot be had, every USDT ticker the plugin returns is kept.
func (s *Service) Tickers(ctx context.Context, slug, typ string) ([]Ticker, Freshness, error) {
	t, err := s.resolve(slug, typ)
	if err != nil {
		return nil, Freshness{}, err
	}
	r, err := s.tickers.get(ctx, t.ex.Slug+":"+t.typ, s.fetchTickers(t))
	return r.data, r.fresh(), err
}

func (s *Service) fetchTickers(t target) func(context.Context) ([]Ticker, error) {
	return func(ctx context.Context) ([]Ticker, error) {
		var resp *exchangev1.GetTickersResponse
		err := s.call(ctx, t, "GetTickers", func(ctx context.Context, c exchangev1.ExchangeClient) error {
			var err error
			resp, err = c.GetTickers(ctx, &exchangev1.GetTickersRequest{MarketType: t.mt})
			return err
		})
		if err != nil {
			return nil, err
		}
		known := map[string]bool{}
		insts, _, ierr := s.instrumentsOf(ctx, t)
		for _, i := range insts {
			known[i.Symbol] = true
		}
		out := make([]Ticker, 0, len(resp.GetTickers()))
		for _, k := range resp.GetTickers() {
			if k.GetMarketType() != t.mt && k.GetMarketType() != exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED {
				continue
			}
			if ierr == nil && !known[k.GetSymbol()] {
				continue
			}
			out = append(out, Ticker{
				Symbol: k.GetSymbol(), Type: t.typ, Last: k.GetLast(), Open24h: k.GetOpen_24H(),
				High24h: k.GetHigh_24H(), Low24h: k.GetLow_24H(), Volume24h: k.GetVolume_24H(),
				QuoteVolume24h: k.GetQuoteVolume_24H(), ChangePct24h: k.GetChangePct_24H(), Bid: k.GetBid(),
				BidQty: k.GetBidQty(), Ask: k.GetAsk(), AskQty: k.GetAskQty(), MarkPrice: k.GetMarkPrice(),
				IndexPrice: k.GetIndexPrice(), FundingRate: k.GetFundingRate(), NextFundingTime: k.GetNextFundingTime(),
				OpenInterest: k.GetOpenInterest(), Time: k.GetTime(),
			})
		}
		sort.Slice(out, func(a, b int) bool { return out[a].Symbol < out[b].Symbol })
		return out, nil
	}
}

// symbolKnown checks a symbol against the exchange's instrument list.
func (s *Service) symbolKnown(ctx context.Context, t target, symbol string) error {
	insts, _, err := s.instrumentsOf(ctx, t)
	if err != nil {
		return err
	}
	for _, i := range insts {
		if i.Symbol == symbol {
			return nil
		}
	}
	return fieldErr("symbol", symbol, "unknown %s symbol %q on %s (GET /api/v1/instruments lists them)", t.typ, symbol, t.ex.Slug)
}

// --- background refresh -----------------------------------------------------------------------------------------

// Run refreshes the tickers of every exchange with a plugin, for each market type it describes, every
// TickerInterval, until ctx ends. One goroutine per exchange, all owned by Run.
func (s *Service) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, e := range s.order {
		if e.Plugin == nil {
			continue
		}
		wg.Add(1)
		go func() { // owned by Run; ends with ctx
			defer wg.Done()
			s.refreshLoop(ctx, e)
		}()
	}
	wg.Wait()
}

func (s *Service) refreshLoop(ctx context.Context, e *Exchange) {
	t := time.NewTicker(s.opts.TickerInterval)
	defer t.Stop()
	for {
		s.RefreshTickers(ctx, e.Slug)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// RefreshTickers refreshes the ticker lists of one exchange now (each market type its plugin describes). A list
// another replica stored less than half an interval ago is adopted without calling the plugin.
func (s *Service) RefreshTickers(ctx context.Context, slug string) {
	e, ok := s.byslug[slug]
	if !ok || e.Plugin == nil || ctx.Err() != nil {
		return
	}
	desc := e.Plugin.Describe()
	for _, mt := range desc.GetCapabilities().GetMarketTypes() {
		typ := typeName(mt)
		t, err := s.resolve(slug, typ)
		if err != nil {
			continue
		}
		if _, err := s.tickers.refresh(ctx, slug+":"+typ, s.opts.TickerInterval/2, s.fetchTickers(t)); err != nil {
			lvl := slog.LevelWarn
			if errors.Is(err, pluginhost.ErrUnavailable) {
				lvl = slog.LevelDebug
			}
			s.log.Log(ctx, lvl, "ticker refresh failed", "exchange", slug, "type", typ, "err", err.Error())
		}
	}
}
