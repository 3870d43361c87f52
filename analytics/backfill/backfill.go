// Package backfill fills the analytics tables from the plugins' history RPCs: candles (paged by end time with the
// plugin's page limit), open interest, long/short ratios, taker volume and funding rates. It is resumable by
// construction: every run first asks ClickHouse which slots of the requested range are missing (Gaps) and fetches
// only those, newest page first, so an interrupted run continues where it stopped and a hole left by an outage is
// found and filled the next time.
package backfill

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"

	"github.com/exhub/exhub/analytics/ingest"
	"github.com/exhub/exhub/analytics/schema"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// Source is the part of an exchange plugin client the backfill calls; exchangev1.ExchangeClient satisfies it.
type Source interface {
	GetCandles(ctx context.Context, in *exchangev1.GetCandlesRequest, opts ...grpc.CallOption) (*exchangev1.GetCandlesResponse, error)
	GetFundingRateHistory(ctx context.Context, in *exchangev1.GetFundingRateHistoryRequest, opts ...grpc.CallOption) (*exchangev1.GetFundingRateHistoryResponse, error)
	GetOpenInterestHistory(ctx context.Context, in *exchangev1.GetOpenInterestHistoryRequest, opts ...grpc.CallOption) (*exchangev1.GetOpenInterestHistoryResponse, error)
	GetLongShortRatioHistory(ctx context.Context, in *exchangev1.GetLongShortRatioHistoryRequest, opts ...grpc.CallOption) (*exchangev1.GetLongShortRatioHistoryResponse, error)
	GetTakerVolumeHistory(ctx context.Context, in *exchangev1.GetTakerVolumeHistoryRequest, opts ...grpc.CallOption) (*exchangev1.GetTakerVolumeHistoryResponse, error)
}

// Backfiller runs backfill jobs.
type Backfiller struct {
	Conn     schema.Conn
	Database string
	Writer   *ingest.Writer
	Logger   *slog.Logger
	// MinInterval spaces calls to one plugin (on top of the plugin's own rate limiting). Default 0.
	MinInterval time.Duration
	// MaxRetries bounds retries of a rate-limited or failed call (default 5).
	MaxRetries int
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
}

// Result counts what one job did.
type Result struct {
	Gaps  int // missing ranges found
	Pages int // calls made
	Rows  int // rows written
}

func (r *Result) add(o Result) { r.Gaps += o.Gaps; r.Pages += o.Pages; r.Rows += o.Rows }

func (b *Backfiller) log() *slog.Logger {
	if b.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return b.Logger
}

func (b *Backfiller) now() int64 {
	if b.Now != nil {
		return b.Now().UnixMilli()
	}
	return time.Now().UnixMilli()
}

func (b *Backfiller) db() string {
	if b.Database == "" {
		return "exhub"
	}
	return b.Database
}

// PeriodMs is the length of an analytics period or candle interval ("5m", "1h", "1d") in milliseconds.
func PeriodMs(p string) (int64, error) {
	if len(p) < 2 {
		return 0, fmt.Errorf("bad period %q", p)
	}
	n, err := strconv.ParseInt(p[:len(p)-1], 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad period %q", p)
	}
	switch p[len(p)-1] {
	case 'm':
		return n * 60_000, nil
	case 'h':
		return n * 3_600_000, nil
	case 'd':
		return n * 86_400_000, nil
	case 'w':
		return n * 7 * 86_400_000, nil
	}
	return 0, fmt.Errorf("bad period %q", p)
}

// page is one fetched page: rows to write and the slot time of each, ascending.
type page struct {
	rows  [][]any
	times []int64
}

type fetchFunc func(ctx context.Context, start, end int64, limit int32) (page, error)

// fill fetches every gap of s in [from, to], each newest page first.
func (b *Backfiller) fill(ctx context.Context, s Series, from, to int64, limit int32, fetch fetchFunc) (Result, error) {
	var res Result
	gaps, err := Gaps(ctx, b.Conn, b.db(), s, from, to)
	if err != nil {
		return res, err
	}
	res.Gaps = len(gaps)
	for i := len(gaps) - 1; i >= 0; i-- { // newest gap first: recent history matters most
		g := gaps[i]
		end := g.To + s.StepMs - 1 // the whole last slot
		for end >= g.From {
			p, err := b.call(ctx, func(ctx context.Context) (page, error) { return fetch(ctx, g.From, end, limit) })
			res.Pages++
			if err != nil {
				return res, err
			}
			if len(p.rows) == 0 {
				break // nothing older at the exchange (history starts here, or a real hole)
			}
			if _, err := b.Writer.WriteNow(ctx, s.Table, p.rows); err != nil {
				return res, err
			}
			res.Rows += len(p.rows)
			first := p.times[0]
			if first >= end+1 || first <= g.From { // no progress, or the gap's start reached
				break
			}
			end = first - 1
		}
	}
	return res, nil
}

// call runs one plugin call, waiting out rate limits (retry_after_ms) and retrying transient failures.
func (b *Backfiller) call(ctx context.Context, fn func(context.Context) (page, error)) (page, error) {
	retries := b.MaxRetries
	if retries <= 0 {
		retries = 5
	}
	var lastErr error
	for attempt := 0; attempt <= retries; attempt++ {
		if b.MinInterval > 0 || attempt > 0 {
			wait := b.MinInterval
			if attempt > 0 {
				wait = max(wait, time.Duration(attempt)*200*time.Millisecond)
				if d := sdk.DetailOf(lastErr); d != nil && d.GetRetryAfterMs() > 0 {
					wait = max(wait, time.Duration(d.GetRetryAfterMs())*time.Millisecond)
				}
			}
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return page{}, ctx.Err()
			}
		}
		p, err := fn(ctx)
		if err == nil {
			return p, nil
		}
		lastErr = err
		if !retryable(err) || ctx.Err() != nil {
			break
		}
		b.log().Warn("backfill call failed, retrying", "attempt", attempt+1, "err", err)
	}
	return page{}, fmt.Errorf("backfill: %w", lastErr)
}

func retryable(err error) bool {
	d := sdk.DetailOf(err)
	if d == nil {
		return !errors.Is(err, context.Canceled)
	}
	switch d.GetReason() {
	case exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED, exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE:
		return true
	}
	return false
}

// Candles fills candles_1m for one symbol between from and to (Unix ms).
func (b *Backfiller) Candles(ctx context.Context, src Source, exchange string, mt exchangev1.MarketType, symbol string, from, to int64, limit int32) (Result, error) {
	s := Series{Table: schema.Candles1m, TimeCol: "open_time", StepMs: 60_000,
		Where: map[string]string{"exchange": exchange, "market_type": ingest.MarketType(mt), "symbol": symbol}, Complete: "closed"}
	// The forming minute is live ingest's: backfill stops at the last closed one (a forming row would count as a gap
	// on every run, and, stored later, could replace the closed row live ingest wrote).
	if lastClosed := b.now()/60_000*60_000 - 60_000; to > lastClosed {
		to = lastClosed
	}
	return b.fill(ctx, s, from, to, limit, func(ctx context.Context, start, end int64, limit int32) (page, error) {
		r, err := src.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: mt, Symbol: symbol, Interval: "1m",
			StartTime: start, EndTime: end, Limit: limit})
		if err != nil {
			return page{}, err
		}
		now := b.now()
		var p page
		for _, c := range r.GetCandles() {
			p.rows = append(p.rows, ingest.CandleRow(exchange, mt, symbol, c, now))
			p.times = append(p.times, c.GetOpenTime())
		}
		return p, nil
	})
}

// FundingRates fills funding_rates; intervalMs is the settlement interval (8h on most exchanges).
func (b *Backfiller) FundingRates(ctx context.Context, src Source, exchange, symbol string, intervalMs, from, to int64, limit int32) (Result, error) {
	s := Series{Table: schema.FundingRates, TimeCol: "funding_time", StepMs: intervalMs,
		Where: map[string]string{"exchange": exchange, "symbol": symbol}}
	return b.fill(ctx, s, from, to, limit, func(ctx context.Context, start, end int64, limit int32) (page, error) {
		r, err := src.GetFundingRateHistory(ctx, &exchangev1.GetFundingRateHistoryRequest{Symbol: symbol, StartTime: start, EndTime: end, Limit: limit})
		if err != nil {
			return page{}, err
		}
		now := b.now()
		var p page
		for _, f := range r.GetRates() {
			if f.GetSymbol() == "" {
				f.Symbol = symbol
			}
			p.rows = append(p.rows, ingest.FundingRow(exchange, f, now))
			p.times = append(p.times, f.GetFundingTime())
		}
		return p, nil
	})
}

func seriesReq(symbol, period string, start, end int64, limit int32) *exchangev1.SeriesRequest {
	return &exchangev1.SeriesRequest{Symbol: symbol, Period: period, StartTime: start, EndTime: end, Limit: limit}
}

// OpenInterest fills open_interest for one period.
func (b *Backfiller) OpenInterest(ctx context.Context, src Source, exchange, symbol, period string, from, to int64, limit int32) (Result, error) {
	step, err := PeriodMs(period)
	if err != nil {
		return Result{}, err
	}
	s := Series{Table: schema.OpenInterest, TimeCol: "time", StepMs: step,
		Where: map[string]string{"exchange": exchange, "symbol": symbol, "period": period}}
	return b.fill(ctx, s, from, to, limit, func(ctx context.Context, start, end int64, limit int32) (page, error) {
		r, err := src.GetOpenInterestHistory(ctx, &exchangev1.GetOpenInterestHistoryRequest{Series: seriesReq(symbol, period, start, end, limit)})
		if err != nil {
			return page{}, err
		}
		now := b.now()
		var p page
		for _, pt := range r.GetPoints() {
			p.rows = append(p.rows, ingest.OpenInterestRow(exchange, symbol, period, pt, now))
			p.times = append(p.times, pt.GetTime())
		}
		return p, nil
	})
}

// LongShortRatio fills long_short_ratio for one kind and period.
func (b *Backfiller) LongShortRatio(ctx context.Context, src Source, exchange, symbol string, kind exchangev1.LongShortRatioKind, period string, from, to int64, limit int32) (Result, error) {
	step, err := PeriodMs(period)
	if err != nil {
		return Result{}, err
	}
	s := Series{Table: schema.LongShortRatio, TimeCol: "time", StepMs: step,
		Where: map[string]string{"exchange": exchange, "symbol": symbol, "period": period, "kind": ingest.LongShortKind(kind)}}
	return b.fill(ctx, s, from, to, limit, func(ctx context.Context, start, end int64, limit int32) (page, error) {
		r, err := src.GetLongShortRatioHistory(ctx, &exchangev1.GetLongShortRatioHistoryRequest{Series: seriesReq(symbol, period, start, end, limit), Kind: kind})
		if err != nil {
			return page{}, err
		}
		now := b.now()
		var p page
		for _, pt := range r.GetPoints() {
			p.rows = append(p.rows, ingest.LongShortRow(exchange, symbol, kind, period, pt, now))
			p.times = append(p.times, pt.GetTime())
		}
		return p, nil
	})
}

// TakerVolume fills taker_volume for one market type and period.
func (b *Backfiller) TakerVolume(ctx context.Context, src Source, exchange string, mt exchangev1.MarketType, symbol, period string, from, to int64, limit int32) (Result, error) {
	step, err := PeriodMs(period)
	if err != nil {
		return Result{}, err
	}
	s := Series{Table: schema.TakerVolume, TimeCol: "time", StepMs: step,
		Where: map[string]string{"exchange": exchange, "market_type": ingest.MarketType(mt), "symbol": symbol, "period": period}}
	return b.fill(ctx, s, from, to, limit, func(ctx context.Context, start, end int64, limit int32) (page, error) {
		r, err := src.GetTakerVolumeHistory(ctx, &exchangev1.GetTakerVolumeHistoryRequest{Series: seriesReq(symbol, period, start, end, limit), MarketType: mt})
		if err != nil {
			return page{}, err
		}
		now := b.now()
		var p page
		for _, pt := range r.GetPoints() {
			p.rows = append(p.rows, ingest.TakerVolumeRow(exchange, mt, symbol, period, pt, now))
			p.times = append(p.times, pt.GetTime())
		}
		return p, nil
	})
}

// Plan says what to backfill for one symbol.
type Plan struct {
	Exchange   string
	MarketType exchangev1.MarketType
	Symbol     string
	From, To   int64
	// Periods of the derivatives series to fill (must be among the plugin's analytics periods).
	Periods []string
	// Part limits the backfill to candles or to the derivatives series; PartAll (the zero value) runs both.
	Part Part
}

// Part is a part of a symbol's backfill. Candles and the derivatives series are read from different exchange
// endpoints with their own rate limits, so a caller can run the two parts side by side.
type Part uint8

const (
	PartAll Part = iota
	PartCandles
	// PartSeries: funding, open interest, long/short and taker volume (SWAP only; nothing for spot).
	PartSeries
)

// Symbol runs every backfill the plugin's capabilities allow for one symbol: candles always, and for SWAP the
// funding, open interest, long/short and taker volume series it offers. Errors of one series are logged and the
// others still run; the first error is returned.
func (b *Backfiller) Symbol(ctx context.Context, src Source, d *exchangev1.DescribeResponse, p Plan) (Result, error) {
	caps := d.GetCapabilities()
	limits := caps.GetPageLimits()
	var total Result
	var first error
	run := func(what string, r Result, err error) {
		total.add(r)
		if err != nil {
			b.log().Warn("backfill failed", "exchange", p.Exchange, "symbol", p.Symbol, "series", what, "err", err)
			if first == nil {
				first = err
			}
			return
		}
		if r.Rows > 0 {
			b.log().Info("backfilled", "exchange", p.Exchange, "symbol", p.Symbol, "series", what,
				"gaps", r.Gaps, "pages", r.Pages, "rows", r.Rows)
		}
	}
	if p.Part != PartSeries {
		r, err := b.Candles(ctx, src, p.Exchange, p.MarketType, p.Symbol, p.From, p.To, limits.GetCandles())
		run("candles_1m", r, err)
	}
	if p.Part == PartCandles || p.MarketType != exchangev1.MarketType_MARKET_TYPE_SWAP || ctx.Err() != nil {
		return total, errors.Join(first, ctx.Err())
	}
	an := caps.GetAnalytics()
	offered := map[string]bool{}
	for _, per := range an.GetPeriods() {
		offered[per] = true
	}
	if an.GetFundingRateHistory() {
		r, err := b.FundingRates(ctx, src, p.Exchange, p.Symbol, 8*3_600_000, p.From, p.To, limits.GetFundingRateHistory())
		run("funding_rates", r, err)
	}
	for _, per := range p.Periods {
		if !offered[per] || ctx.Err() != nil {
			continue
		}
		if an.GetOpenInterest() {
			r, err := b.OpenInterest(ctx, src, p.Exchange, p.Symbol, per, p.From, p.To, limits.GetAnalytics())
			run("open_interest "+per, r, err)
		}
		for _, k := range an.GetLongShortRatio() {
			r, err := b.LongShortRatio(ctx, src, p.Exchange, p.Symbol, k, per, p.From, p.To, limits.GetAnalytics())
			run("long_short_ratio "+strings.ToLower(ingest.LongShortKind(k))+" "+per, r, err)
		}
		if an.GetTakerVolume() {
			r, err := b.TakerVolume(ctx, src, p.Exchange, p.MarketType, p.Symbol, per, p.From, p.To, limits.GetAnalytics())
			run("taker_volume "+per, r, err)
		}
	}
	return total, errors.Join(first, ctx.Err())
}
