package market

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// Limits of the API's own parameters. Plugin page limits bound depth and trades further.
const (
	MaxCandles     = 1500
	DefaultCandles = 500
	DefaultDepth   = 50
	DefaultTrades  = 100
	MaxMovers      = 20
	DefaultMovers  = 5
	// fallbackPageLimit is used when a plugin describes no page limit.
	fallbackPageLimit = 500
	// maxCandlePages bounds the plugin calls of one candles request.
	maxCandlePages = 30
)

// DefaultMoverBases is the home page's default set, as USDT perpetuals.
var DefaultMoverBases = []string{"BTC", "ETH", "SOL", "XRP", "DOGE"}

// --- movers -----------------------------------------------------------------------------------------------------

// Movers returns the biggest 24-hour movers across exchanges. The rule:
//
//  1. Universe: the SWAP (USDT perpetual) tickers of every exchange whose plugin describes SWAP markets and whose
//     status is available (a configuration override of coming_soon or maintenance, or the plugin's own, excludes
//     it), restricted to the exchange's listed instruments (USDT quote, TRADING) when its instrument list is present.
//     An exchange whose tickers cannot be had is left out.
//  2. A ticker qualifies when its changePct24h and last parse as decimals and last is positive.
//  3. Qualifying rows are sorted by the absolute 24h change, descending; ties by 24h quote volume (descending),
//     then exchange key, then symbol. One row per base asset: the market where it moved most.
//  4. The first limit rows are returned. When fewer than limit qualify (not enough data), the list is completed
//     from the default set BTC, ETH, SOL, XRP, DOGE, in that order: for each base not already listed, the USDT
//     perpetual of the lowest-key exchange that lists it, with its ticker values when there are any; these rows have
//     default: true. A base no exchange lists is skipped, so the list may be shorter than limit.
//
// The freshness is the oldest input's; stale when any input is stale.
func (s *Service) Movers(ctx context.Context, limit int) ([]Mover, Freshness, error) {
	if limit == 0 {
		limit = DefaultMovers
	}
	if limit < 1 || limit > MaxMovers {
		return nil, Freshness{}, fieldErr("limit", limit, "limit must be between 1 and %d", MaxMovers)
	}
	type cand struct {
		m      Mover
		abs    decimal.Decimal
		qv     decimal.Decimal
		ticker bool
	}
	var (
		all      []cand
		fr       Freshness
		listed   = map[string][]Mover{} // base -> one row per exchange (key order), from instruments
		lastErr  error
		anyInput bool
	)
	for _, e := range s.order {
		if !s.moversEligible(e) {
			continue
		}
		t, err := s.resolve(e.Slug, TypeSwap)
		if err != nil {
			continue
		}
		insts, ifr, ierr := s.instrumentsOf(ctx, t)
		tickers, tfr, err := s.Tickers(ctx, e.Slug, TypeSwap)
		if err != nil {
			lastErr = err
			s.log.Debug("movers: exchange left out", "exchange", e.Slug, "err", err.Error())
			continue
		}
		anyInput = true
		for _, f := range []Freshness{tfr, ifr} {
			if f.AsOf == 0 {
				continue
			}
			if fr.AsOf == 0 || f.AsOf < fr.AsOf {
				fr.AsOf = f.AsOf
			}
			if f.Stale {
				fr.Stale, fr.StaleReason = true, f.StaleReason
			}
		}
		bases := map[string]string{}
		if ierr == nil {
			for _, i := range insts {
				bases[i.Symbol] = i.Base
			}
		}
		byTicker := map[string]Ticker{}
		for _, k := range tickers {
			byTicker[k.Symbol] = k
		}
		for _, i := range insts {
			row := Mover{Exchange: e.Key, ExchangeSlug: e.Slug, Type: TypeSwap, Symbol: i.Symbol, Base: i.Base, Default: true}
			if k, ok := byTicker[i.Symbol]; ok {
				row.Last, row.ChangePct24h, row.QuoteVolume24h = k.Last, k.ChangePct24h, k.QuoteVolume24h
			}
			listed[i.Base] = append(listed[i.Base], row)
		}
		for _, k := range tickers {
			base, ok := bases[k.Symbol]
			if !ok {
				if ierr == nil {
					continue
				}
				base = baseOf(k.Symbol)
			}
			chg, err1 := decimal.NewFromString(k.ChangePct24h)
			last, err2 := decimal.NewFromString(k.Last)
			if err1 != nil || err2 != nil || !last.IsPositive() {
				continue
			}
			qv, err := decimal.NewFromString(k.QuoteVolume24h)
			if err != nil {
				qv = decimal.Zero
			}
			all = append(all, cand{m: Mover{Exchange: e.Key, ExchangeSlug: e.Slug, Type: TypeSwap, Symbol: k.Symbol,
				Base: base, Last: k.Last, ChangePct24h: k.ChangePct24h, QuoteVolume24h: k.QuoteVolume24h},
				abs: chg.Abs(), qv: qv, ticker: true})
		}
	}
	if !anyInput && lastErr != nil {
		return nil, Freshness{}, lastErr
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if c := a.abs.Cmp(b.abs); c != 0 {
			return c > 0
		}
		if c := a.qv.Cmp(b.qv); c != 0 {
			return c > 0
		}
		if a.m.Exchange != b.m.Exchange {
			return a.m.Exchange < b.m.Exchange
		}
		return a.m.Symbol < b.m.Symbol
	})
	out := make([]Mover, 0, limit)
	seen := map[string]bool{}
	for _, c := range all {
		if len(out) == limit {
			break
		}
		if seen[c.m.Base] {
			continue
		}
		seen[c.m.Base] = true
		out = append(out, c.m)
	}
	for _, base := range DefaultMoverBases {
		if len(out) >= limit {
			break
		}
		if seen[base] || len(listed[base]) == 0 {
			continue
		}
		seen[base] = true
		out = append(out, listed[base][0])
	}
	return out, fr, nil
}

// moversEligible: a plugin that describes SWAP markets and an available status.
func (s *Service) moversEligible(e *Exchange) bool {
	if e.Plugin == nil {
		return false
	}
	switch e.Status {
	case StatusComingSoon, StatusMaintenance:
		return false
	case StatusAvailable:
		return true
	}
	d := e.Plugin.Describe()
	st := d.GetExchange().GetStatus()
	return d != nil && (st == exchangev1.ExchangeStatus_EXCHANGE_STATUS_AVAILABLE ||
		st == exchangev1.ExchangeStatus_EXCHANGE_STATUS_UNSPECIFIED)
}

func baseOf(symbol string) string {
	for _, sfx := range []string{"-USDT-SWAP", "-USDT", "USDT"} {
		if len(symbol) > len(sfx) && symbol[len(symbol)-len(sfx):] == sfx {
			return symbol[:len(symbol)-len(sfx)]
		}
	}
	return symbol
}

// --- candles ----------------------------------------------------------------------------------------------------

// Candles returns up to limit candles of one market whose open time is at or before end (Unix ms; 0 means now),
// ascending by open time. A request larger than the plugin's page limit (Describe page_limits.candles) is split into
// pages walking back in time; fewer than limit candles come back when the history ends.
func (s *Service) Candles(ctx context.Context, slug, typ, symbol, interval string, end int64, limit int) ([]Candle, Freshness, error) {
	t, err := s.resolve(slug, typ)
	if err != nil {
		return nil, Freshness{}, err
	}
	if !slices.Contains(t.desc.GetCapabilities().GetIntervals(), interval) {
		return nil, Freshness{}, fieldErr("interval", interval, "interval %q is not offered by %s (offered: %v)",
			interval, slug, t.desc.GetCapabilities().GetIntervals())
	}
	if limit == 0 {
		limit = DefaultCandles
	}
	if limit < 1 || limit > MaxCandles {
		return nil, Freshness{}, fieldErr("limit", limit, "limit must be between 1 and %d", MaxCandles)
	}
	if end < 0 {
		return nil, Freshness{}, fieldErr("end", end, "end must be a Unix time in milliseconds, or 0 for now")
	}
	if err := s.symbolKnown(ctx, t, symbol); err != nil {
		return nil, Freshness{}, err
	}
	page := int(t.desc.GetCapabilities().GetPageLimits().GetCandles())
	if page <= 0 {
		page = fallbackPageLimit
	}
	key := fmt.Sprintf("%s:%s:%s:%s:%d:%d", slug, typ, symbol, interval, end, limit)
	r, err := s.candles.get(ctx, key, "symbol", symbol, func(ctx context.Context) ([]Candle, error) {
		return s.pageCandles(ctx, t, symbol, interval, end, limit, page)
	})
	return r.data, r.fresh(), err
}

func (s *Service) pageCandles(ctx context.Context, t target, symbol, interval string, end int64, limit, page int) ([]Candle, error) {
	var pages [][]*exchangev1.Candle
	remaining, cursor := limit, end
	earliest := int64(-1)
	for i := 0; remaining > 0 && i < maxCandlePages; i++ {
		n := min(page, remaining)
		var resp *exchangev1.GetCandlesResponse
		err := s.call(ctx, t, "GetCandles", func(ctx context.Context, c exchangev1.ExchangeClient) error {
			var err error
			resp, err = c.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: t.mt, Symbol: symbol,
				Interval: interval, EndTime: cursor, Limit: int32(n)})
			return err
		})
		if err != nil {
			return nil, err
		}
		got := resp.GetCandles()
		// Keep only candles older than those already held (and not after end): pages never overlap.
		kept := make([]*exchangev1.Candle, 0, len(got))
		for _, c := range got {
			if (earliest >= 0 && c.GetOpenTime() >= earliest) || (end > 0 && c.GetOpenTime() > end) {
				continue
			}
			kept = append(kept, c)
		}
		sort.Slice(kept, func(a, b int) bool { return kept[a].GetOpenTime() < kept[b].GetOpenTime() })
		if len(kept) > remaining {
			kept = kept[len(kept)-remaining:]
		}
		if len(kept) == 0 {
			break
		}
		pages = append(pages, kept)
		remaining -= len(kept)
		earliest = kept[0].GetOpenTime()
		cursor = earliest - 1
		if len(got) < n || cursor < 0 {
			break // the history ends here
		}
	}
	out := make([]Candle, 0, limit-remaining)
	for i := len(pages) - 1; i >= 0; i-- {
		for _, c := range pages[i] {
			out = append(out, Candle{OpenTime: c.GetOpenTime(), Open: c.GetOpen(), High: c.GetHigh(), Low: c.GetLow(),
				Close: c.GetClose(), Volume: c.GetVolume(), QuoteVolume: c.GetQuoteVolume(), Trades: c.GetTrades(),
				Closed: c.GetClosed()})
		}
	}
	return out, nil
}

// --- order book and trades --------------------------------------------------------------------------------------

// PageLimit returns the plugin's page limit for "orderbook" (depth) or "trades", or the fallback when it gives none.
func pageLimit(t target, what string) int {
	p := t.desc.GetCapabilities().GetPageLimits()
	n := 0
	switch what {
	case "depth":
		n = int(p.GetOrderBookDepth())
	case "trades":
		n = int(p.GetTrades())
	}
	if n <= 0 {
		n = fallbackPageLimit
	}
	return n
}

// OrderBook returns a depth snapshot with at most depth levels a side; depth ranges 1..the plugin's
// page_limits.order_book_depth (default 50, lowered to that limit).
func (s *Service) OrderBook(ctx context.Context, slug, typ, symbol string, depth int) (OrderBook, Freshness, error) {
	t, err := s.resolve(slug, typ)
	if err != nil {
		return OrderBook{}, Freshness{}, err
	}
	maxDepth := pageLimit(t, "depth")
	if depth == 0 {
		depth = min(DefaultDepth, maxDepth)
	}
	if depth < 1 || depth > maxDepth {
		return OrderBook{}, Freshness{}, fieldErr("depth", depth, "depth must be between 1 and %d on %s", maxDepth, slug)
	}
	if err := s.symbolKnown(ctx, t, symbol); err != nil {
		return OrderBook{}, Freshness{}, err
	}
	key := slug + ":" + typ + ":" + symbol + ":" + strconv.Itoa(depth)
	r, err := s.books.get(ctx, key, "symbol", symbol, func(ctx context.Context) (OrderBook, error) {
		var resp *exchangev1.GetOrderBookResponse
		err := s.call(ctx, t, "GetOrderBook", func(ctx context.Context, c exchangev1.ExchangeClient) error {
			var err error
			resp, err = c.GetOrderBook(ctx, &exchangev1.GetOrderBookRequest{MarketType: t.mt, Symbol: symbol, Depth: int32(depth)})
			return err
		})
		if err != nil {
			return OrderBook{}, err
		}
		b := resp.GetBook()
		return OrderBook{Bids: levels(b.GetBids(), depth), Asks: levels(b.GetAsks(), depth), Sequence: b.GetSequence(),
			Time: b.GetTime()}, nil
	})
	return r.data, r.fresh(), err
}

func levels(in []*exchangev1.PriceLevel, depth int) []PriceLevel {
	if len(in) > depth {
		in = in[:depth]
	}
	out := make([]PriceLevel, len(in))
	for i, l := range in {
		out[i] = PriceLevel{Price: l.GetPrice(), Qty: l.GetQty()}
	}
	return out
}

// Trades returns the most recent public trades, oldest first; limit ranges 1..the plugin's page_limits.trades
// (default 100, lowered to that limit).
func (s *Service) Trades(ctx context.Context, slug, typ, symbol string, limit int) ([]Trade, Freshness, error) {
	t, err := s.resolve(slug, typ)
	if err != nil {
		return nil, Freshness{}, err
	}
	maxTrades := pageLimit(t, "trades")
	if limit == 0 {
		limit = min(DefaultTrades, maxTrades)
	}
	if limit < 1 || limit > maxTrades {
		return nil, Freshness{}, fieldErr("limit", limit, "limit must be between 1 and %d on %s", maxTrades, slug)
	}
	if err := s.symbolKnown(ctx, t, symbol); err != nil {
		return nil, Freshness{}, err
	}
	key := slug + ":" + typ + ":" + symbol + ":" + strconv.Itoa(limit)
	r, err := s.trades.get(ctx, key, "symbol", symbol, func(ctx context.Context) ([]Trade, error) {
		var resp *exchangev1.GetTradesResponse
		err := s.call(ctx, t, "GetTrades", func(ctx context.Context, c exchangev1.ExchangeClient) error {
			var err error
			resp, err = c.GetTrades(ctx, &exchangev1.GetTradesRequest{MarketType: t.mt, Symbol: symbol, Limit: int32(limit)})
			return err
		})
		if err != nil {
			return nil, err
		}
		in := resp.GetTrades()
		sort.SliceStable(in, func(a, b int) bool { return in[a].GetTime() < in[b].GetTime() })
		if len(in) > limit {
			in = in[len(in)-limit:]
		}
		out := make([]Trade, len(in))
		for i, tr := range in {
			side := "buy"
			if tr.GetSide() == exchangev1.Side_SIDE_SELL {
				side = "sell"
			}
			out[i] = Trade{ID: tr.GetId(), Price: tr.GetPrice(), Qty: tr.GetQty(), QuoteQty: tr.GetQuoteQty(), Side: side,
				Time: tr.GetTime()}
		}
		return out, nil
	})
	return r.data, r.fresh(), err
}

// IntervalDuration is the length of a candle interval ("1m", "4h", "1d", "1w"; "1M" counts 31 days), 0 when unknown.
func IntervalDuration(iv string) time.Duration {
	if len(iv) < 2 {
		return 0
	}
	n, err := strconv.Atoi(iv[:len(iv)-1])
	if err != nil || n <= 0 {
		return 0
	}
	unit := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour,
		'w': 7 * 24 * time.Hour, 'M': 31 * 24 * time.Hour}[iv[len(iv)-1]]
	return time.Duration(n) * unit
}
