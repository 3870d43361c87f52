package market

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/exhub/exhub/analytics/service"
	"github.com/exhub/exhub/bff/internal/market"
)

// SourceHeader names where the candles of GET /api/v1/candles came from, for debugging: SourceStore (the analytics
// store, ClickHouse), SourcePlugin (the exchange through its plugin) or SourceMixed (the store, with the ranges it
// does not hold from the plugin). The current candle of a store answer is the plugin's live one either way.
const (
	SourceHeader = "X-Exhub-Source"
	SourceStore  = "clickhouse"
	SourcePlugin = "plugin"
	SourceMixed  = "clickhouse+plugin"
)

// Bounds of the store's part of a candles request: a slow ClickHouse must not hold the chart up (the plugin
// answers instead), and the live candle is merged only when the plugin answers quickly.
const (
	storeCandlesTimeout = 2 * time.Second
	liveCandleTimeout   = 1500 * time.Millisecond
)

// candles serves GET /api/v1/candles: from the analytics store when it holds the range (rolled up from one-minute
// candles, with the plugin's live candle as the newest), from the plugin for the buckets it lacks, and wholly from
// the plugin when the store is not configured, not reachable or the interval is not one it rolls up.
func (s *routes) candles(ctx context.Context, exchange, typ, symbol, interval string, end int64, limit int) ([]market.Candle, market.Freshness, string, error) {
	if out, fr, src, ok, err := s.storeCandles(ctx, exchange, typ, symbol, interval, end, limit); ok {
		return out, fr, src, err
	}
	data, fr, err := s.market.Candles(ctx, exchange, typ, symbol, interval, end, limit)
	return data, fr, SourcePlugin, err
}

// storeCandles answers from the store; ok is false when the request should go to the plugin as a whole.
func (s *routes) storeCandles(ctx context.Context, exchange, typ, symbol, interval string, end int64, limit int) (
	out []market.Candle, fr market.Freshness, src string, ok bool, err error) {
	step := service.ChartStep(interval)
	if s.analytics == nil || s.host == nil || step == 0 || end < 0 || limit < 1 || limit > market.MaxCandles {
		return nil, fr, "", false, nil // the plugin path validates and answers
	}
	sup, found := s.host.Get(exchange)
	if !found {
		return nil, fr, "", false, nil
	}
	desc := sup.Describe()
	if desc == nil || !slices.Contains(desc.GetCapabilities().GetIntervals(), interval) {
		return nil, fr, "", false, nil
	}
	// The exchange, type and symbol are checked against the cached instrument list, as the plugin path does. When
	// the list cannot be had, the store still answers what it holds completely.
	symbolChecked := false
	insts, _, ierr := s.market.Instruments(ctx, exchange, typ)
	var fe *market.FieldError
	switch {
	case errors.As(ierr, &fe):
		return nil, fr, "", true, ierr
	case ierr == nil:
		if !slices.ContainsFunc(insts, func(i market.Instrument) bool { return i.Symbol == symbol }) {
			return nil, fr, "", false, nil // the plugin path names the unknown symbol
		}
		symbolChecked = true
	}
	st, serr := s.analytics.Store()
	if serr != nil {
		return nil, fr, "", false, nil
	}

	now := time.Now().UnixMilli()
	cur := now / step * step // open time of the forming candle
	newest := cur
	if end > 0 {
		newest = min(end/step*step, cur)
	}
	oldest := newest - int64(limit-1)*step
	qctx, cancel := context.WithTimeout(ctx, storeCandlesTimeout)
	stored, qerr := service.StoredCandles(qctx, st, exchange, typ, symbol, step, oldest, newest)
	cancel()
	if qerr != nil {
		if ctx.Err() != nil {
			return nil, fr, "", true, ctx.Err()
		}
		s.log.Warn("candles: analytics store unavailable, serving from the plugin", "exchange", exchange, "symbol", symbol, "err", qerr)
		return nil, fr, "", false, nil
	}

	// A bucket is complete when it holds every minute, all closed; the forming bucket every minute before the
	// current one (the live candle replaces it below).
	byOpen := make(map[int64]service.StoredCandle, len(stored))
	for _, c := range stored {
		byOpen[c.OpenTime] = c
	}
	const minute = int64(60_000)
	missLo, missHi := int64(-1), int64(-1)
	for t := oldest; t <= newest; t += step {
		want := uint64(step / minute)
		if t == cur {
			want = uint64((now/minute*minute - t) / minute)
		}
		if c := byOpen[t]; c.Minutes < want || (t != cur && c.Forming > 0) {
			if missLo < 0 {
				missLo = t
			}
			missHi = t
		}
	}

	fr = market.Freshness{AsOf: now}
	src = SourceStore
	out = make([]market.Candle, 0, limit)
	switch {
	case missLo < 0:
	case !symbolChecked:
		return nil, fr, "", false, nil // the plugin path reports why the instrument list is unavailable
	case missLo == oldest && missHi == newest:
		return nil, fr, "", false, nil // nothing usable stored: exactly today's plugin request
	default:
		pc, pfr, perr := s.market.Candles(ctx, exchange, typ, symbol, interval, missHi+step-1, int((missHi-missLo)/step)+1)
		if perr != nil {
			return nil, fr, "", true, perr
		}
		fr, src = pfr, SourceMixed
		for _, c := range pc {
			if c.OpenTime >= missLo && c.OpenTime <= missHi {
				out = append(out, c)
			}
		}
	}
	for _, c := range stored {
		if missLo >= 0 && c.OpenTime >= missLo && c.OpenTime <= missHi {
			continue
		}
		out = append(out, market.Candle{OpenTime: c.OpenTime, Open: c.Open, High: c.High, Low: c.Low, Close: c.Close,
			Volume: c.Volume, QuoteVolume: c.QuoteVolume, Trades: int64(c.Trades), Closed: c.Closed})
	}
	slices.SortFunc(out, func(a, b market.Candle) int { return cmp.Compare(a.OpenTime, b.OpenTime) })

	// The newest candle is the exchange's live one when the answer reaches the forming bucket from the store.
	if newest == cur && missHi < cur {
		if lc, ok := s.liveCandle(ctx, exchange, typ, symbol, interval); ok && lc.OpenTime <= newest {
			switch n := len(out); {
			case n > 0 && out[n-1].OpenTime == lc.OpenTime:
				out[n-1] = lc
			case n == 0 || out[n-1].OpenTime < lc.OpenTime:
				out = append(out, lc)
				if len(out) > limit {
					out = out[len(out)-limit:]
				}
			}
		}
	}
	return out, fr, src, true, nil
}

// liveCandle is the plugin's current candle of the interval, when it answers fresh within liveCandleTimeout. The
// call runs on its own goroutine, which ends with the call (bounded by the market service's call timeout).
func (s *routes) liveCandle(ctx context.Context, exchange, typ, symbol, interval string) (market.Candle, bool) {
	type result struct {
		c   []market.Candle
		fr  market.Freshness
		err error
	}
	ch := make(chan result, 1)
	go func() {
		c, fr, err := s.market.Candles(context.WithoutCancel(ctx), exchange, typ, symbol, interval, 0, 1)
		ch <- result{c, fr, err}
	}()
	t := time.NewTimer(liveCandleTimeout)
	defer t.Stop()
	select {
	case r := <-ch:
		if r.err != nil || r.fr.Stale || len(r.c) == 0 {
			return market.Candle{}, false
		}
		return r.c[len(r.c)-1], true
	case <-t.C:
		return market.Candle{}, false
	case <-ctx.Done():
		return market.Candle{}, false
	}
}
