// Package analytics serves the market history routes (OpenAPI tag "Analytics"): open interest, long/short ratios,
// taker volume, funding rates and candles from the analytics store (ClickHouse), and dataset exports. It also owns
// the analytics section of the BFF configuration (Settings).
package analytics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/exhub/exhub/analytics/backfill"
	"github.com/exhub/exhub/analytics/query"
	"github.com/exhub/exhub/bff/internal/api/apiutil"
)

// Deps are the analytics routes' collaborators.
type Deps struct {
	// Analytics is the analytics service; nil answers 503 on every route.
	Analytics Analytics
	// Exchanges are the configured exchanges' slugs; another exchange is a 422.
	Exchanges []string
	// Logger logs what the client is not told (an export cut short); nil discards.
	Logger *slog.Logger
}

type routes struct {
	analytics Analytics
	exchanges []string
	log       *slog.Logger
}

// Analytics is what the analytics routes need: the query store and the exporter, each failing while ClickHouse is
// not ready. *service.Service (analytics/service) implements it.
type Analytics interface {
	Store() (*query.Store, error)
	Exporter() (*query.Exporter, error)
}

const ccAnalytics = "public, max-age=30, stale-while-revalidate=60"

const analyticsDoc = "Decimals are strings. Times are Unix milliseconds; from is inclusive, to exclusive; to " +
	"defaults to now and from to 30 days before to (or fewer, so that at most 5000 points come back). Periods not " +
	"published by the exchange are rolled up from a finer stored period. 503 while the analytics store is not " +
	"reachable; 422 for an unknown exchange, a bad range or more than 5000 points."

// SeriesQuery is the common query of the analytics series routes.
type SeriesQuery struct {
	Exchange string `query:"exchange" required:"true" pattern:"^[a-z0-9]+(-[a-z0-9]+)*$" maxLength:"40" doc:"Exchange slug." example:"binance"`
	Symbol   string `query:"symbol" required:"true" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$" doc:"Exchange symbol of a SWAP instrument." example:"BTCUSDT"`
	Period   string `query:"period" default:"1h" enum:"5m,15m,1h,4h,1d" doc:"Aggregation period." example:"1h"`
	From     int64  `query:"from" minimum:"0" doc:"Start, Unix ms (inclusive)." example:"1767225600000"`
	To       int64  `query:"to" minimum:"0" doc:"End, Unix ms (exclusive); absent: now." example:"1767312000000"`
}

// SeriesHead is the common part of a series answer.
type SeriesHead struct {
	Exchange string `json:"exchange" example:"binance"`
	Symbol   string `json:"symbol" example:"BTCUSDT"`
	Period   string `json:"period" example:"1h"`
	From     int64  `json:"from" doc:"Unix ms." example:"1767225600000"`
	To       int64  `json:"to" doc:"Unix ms." example:"1767312000000"`
}

// AnalyticsHeaders are the headers of the analytics answers.
type AnalyticsHeaders struct {
	CacheControl string `header:"Cache-Control"`
}

// OpenInterestOutput is the answer of GET /api/v1/analytics/open-interest.
type OpenInterestOutput struct {
	AnalyticsHeaders
	Body struct {
		SeriesHead
		Points []query.OpenInterestPoint `json:"points" doc:"Ascending by time."`
	}
}

// LongShortOutput is the answer of GET /api/v1/analytics/long-short-ratio.
type LongShortOutput struct {
	AnalyticsHeaders
	Body struct {
		SeriesHead
		Kind   string                 `json:"kind" enum:"accounts,top_accounts,top_positions" example:"accounts"`
		Points []query.LongShortPoint `json:"points" doc:"Ascending by time."`
	}
}

// TakerVolumeOutput is the answer of GET /api/v1/analytics/taker-volume.
type TakerVolumeOutput struct {
	AnalyticsHeaders
	Body struct {
		SeriesHead
		Type   string                   `json:"type" enum:"SPOT,SWAP" example:"SWAP"`
		Points []query.TakerVolumePoint `json:"points" doc:"Ascending by time."`
	}
}

// FundingRateOutput is the answer of GET /api/v1/analytics/funding-rate.
type FundingRateOutput struct {
	AnalyticsHeaders
	Body struct {
		SeriesHead
		Points []query.FundingPoint `json:"points" doc:"Ascending by time; periods without a settlement are left out."`
	}
}

// HistoryCandlesOutput is the answer of GET /api/v1/analytics/candles.
type HistoryCandlesOutput struct {
	AnalyticsHeaders
	Body struct {
		Exchange string                `json:"exchange" example:"binance"`
		Type     string                `json:"type" enum:"SPOT,SWAP" example:"SWAP"`
		Symbol   string                `json:"symbol" example:"BTCUSDT"`
		Interval string                `json:"interval" example:"1h"`
		Candles  []query.HistoryCandle `json:"candles" doc:"Ascending by open time; the newest may still be forming (closed: false)."`
	}
}

var analyticsErrors = []int{http.StatusUnprocessableEntity, http.StatusServiceUnavailable}

func (s *routes) analyticsStore(exchange string) (*query.Store, error) {
	if err := s.knownExchange(exchange); err != nil {
		return nil, err
	}
	if s.analytics == nil {
		return nil, huma.Error503ServiceUnavailable("analytics is not configured (analytics.enabled and clickhouse.addr)")
	}
	st, err := s.analytics.Store()
	if err != nil {
		return nil, huma.Error503ServiceUnavailable(err.Error())
	}
	return st, nil
}

func (s *routes) knownExchange(slug string) error {
	if slices.Contains(s.exchanges, slug) {
		return nil
	}
	return huma.Error422UnprocessableEntity("unknown exchange", &huma.ErrorDetail{
		Message: fmt.Sprintf("no exchange %q (GET /api/v1/exchanges lists them)", slug), Location: "query.exchange", Value: slug})
}

// seriesRange fills in the defaults of from and to.
func seriesRange(in SeriesQuery) (query.Range, error) {
	step, err := backfill.PeriodMs(in.Period)
	if err != nil {
		return query.Range{}, huma.Error422UnprocessableEntity(err.Error())
	}
	to := in.To
	if to == 0 {
		to = time.Now().UnixMilli()
	}
	from := in.From
	if from == 0 {
		from = to - min(30*86_400_000, query.MaxPoints*step)
	}
	if to <= from {
		return query.Range{}, huma.Error422UnprocessableEntity("bad range", &huma.ErrorDetail{
			Message: fmt.Sprintf("to (%d) must be after from (%d)", to, from), Location: "query.to", Value: to})
	}
	if (to-from)/step > query.MaxPoints {
		return query.Range{}, huma.Error422UnprocessableEntity("too many points", &huma.ErrorDetail{
			Message:  fmt.Sprintf("at most %d points: narrow from..to or use a longer period", query.MaxPoints),
			Location: "query.from", Value: from})
	}
	return query.Range{Exchange: in.Exchange, Symbol: in.Symbol, Period: in.Period, From: from, To: to}, nil
}

func head(r query.Range) SeriesHead {
	return SeriesHead{Exchange: r.Exchange, Symbol: r.Symbol, Period: r.Period, From: r.From, To: r.To}
}

func analyticsError(err error) error {
	if errors.Is(err, query.ErrTooManyPoints) {
		return huma.Error422UnprocessableEntity(err.Error())
	}
	var se huma.StatusError
	if errors.As(err, &se) {
		return err
	}
	return huma.Error503ServiceUnavailable("analytics query failed: " + err.Error())
}

// Register adds the analytics routes to api.
func Register(api huma.API, d Deps) {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	s := &routes{analytics: d.Analytics, exchanges: d.Exchanges, log: d.Logger}
	huma.Register(api, huma.Operation{
		OperationID: "getOpenInterest", Method: http.MethodGet, Path: "/api/v1/analytics/open-interest",
		Summary: "Open interest history", Tags: []string{"Analytics"}, Errors: analyticsErrors,
		Description: "Open interest of a perpetual swap per period: the value at the end of each period, in base and quote units. " + analyticsDoc,
	}, func(ctx context.Context, in *struct{ SeriesQuery }) (*OpenInterestOutput, error) {
		r, err := seriesRange(in.SeriesQuery)
		if err != nil {
			return nil, err
		}
		st, err := s.analyticsStore(in.Exchange)
		if err != nil {
			return nil, err
		}
		pts, err := st.OpenInterest(ctx, r)
		if err != nil {
			return nil, analyticsError(err)
		}
		out := &OpenInterestOutput{AnalyticsHeaders: AnalyticsHeaders{ccAnalytics}}
		out.Body.SeriesHead, out.Body.Points = head(r), pts
		return out, nil
	})

	huma.Register(api, huma.Operation{
		OperationID: "getLongShortRatio", Method: http.MethodGet, Path: "/api/v1/analytics/long-short-ratio",
		Summary: "Long/short ratio history", Tags: []string{"Analytics"}, Errors: analyticsErrors,
		Description: "Long/short ratio of a perpetual swap per period: all accounts, top traders by account or top traders by position. " + analyticsDoc,
	}, func(ctx context.Context, in *struct {
		SeriesQuery
		Kind string `query:"kind" default:"accounts" enum:"accounts,top_accounts,top_positions" doc:"accounts: all accounts by count; top_accounts: top traders by count; top_positions: top traders by position size."`
	}) (*LongShortOutput, error) {
		r, err := seriesRange(in.SeriesQuery)
		if err != nil {
			return nil, err
		}
		st, err := s.analyticsStore(in.Exchange)
		if err != nil {
			return nil, err
		}
		pts, err := st.LongShortRatio(ctx, r, in.Kind)
		if err != nil {
			return nil, analyticsError(err)
		}
		out := &LongShortOutput{AnalyticsHeaders: AnalyticsHeaders{ccAnalytics}}
		out.Body.SeriesHead, out.Body.Kind, out.Body.Points = head(r), in.Kind, pts
		return out, nil
	})

	huma.Register(api, huma.Operation{
		OperationID: "getTakerVolume", Method: http.MethodGet, Path: "/api/v1/analytics/taker-volume",
		Summary: "Taker buy/sell volume history", Tags: []string{"Analytics"}, Errors: analyticsErrors,
		Description: "Volume of aggressive buyers and sellers per period, in base units, and their ratio. " + analyticsDoc,
	}, func(ctx context.Context, in *struct {
		SeriesQuery
		Type string `query:"type" default:"SWAP" enum:"SPOT,SWAP" doc:"Market type."`
	}) (*TakerVolumeOutput, error) {
		r, err := seriesRange(in.SeriesQuery)
		if err != nil {
			return nil, err
		}
		st, err := s.analyticsStore(in.Exchange)
		if err != nil {
			return nil, err
		}
		pts, err := st.TakerVolume(ctx, r, in.Type)
		if err != nil {
			return nil, analyticsError(err)
		}
		out := &TakerVolumeOutput{AnalyticsHeaders: AnalyticsHeaders{ccAnalytics}}
		out.Body.SeriesHead, out.Body.Type, out.Body.Points = head(r), in.Type, pts
		return out, nil
	})

	huma.Register(api, huma.Operation{
		OperationID: "getFundingRateHistory", Method: http.MethodGet, Path: "/api/v1/analytics/funding-rate",
		Summary: "Funding rate history", Tags: []string{"Analytics"}, Errors: analyticsErrors,
		Description: "Settled funding of a perpetual swap per period: the sum of the rates settled in the period (cumulative funding), the number of settlements and the last rate. " + analyticsDoc,
	}, func(ctx context.Context, in *struct{ SeriesQuery }) (*FundingRateOutput, error) {
		r, err := seriesRange(in.SeriesQuery)
		if err != nil {
			return nil, err
		}
		st, err := s.analyticsStore(in.Exchange)
		if err != nil {
			return nil, err
		}
		pts, err := st.FundingRate(ctx, r)
		if err != nil {
			return nil, analyticsError(err)
		}
		out := &FundingRateOutput{AnalyticsHeaders: AnalyticsHeaders{ccAnalytics}}
		out.Body.SeriesHead, out.Body.Points = head(r), pts
		return out, nil
	})

	huma.Register(api, huma.Operation{
		OperationID: "getHistoryCandles", Method: http.MethodGet, Path: "/api/v1/analytics/candles",
		Summary: "Candle history from the analytics store", Tags: []string{"Analytics"}, Errors: analyticsErrors,
		Description: "Up to limit candles whose open time is at or before end, ascending, rolled up from stored " +
			"one-minute candles. The live stream writes the forming minute within about a second, so the newest " +
			"candle is current. To page back pass end = the first candle's openTime - 1.",
	}, func(ctx context.Context, in *struct {
		apiutil.SymbolQuery
		Interval string `query:"interval" default:"1m" enum:"1m,3m,5m,15m,30m,1h,2h,4h,6h,12h,1d" doc:"Candle interval."`
		End      int64  `query:"end" minimum:"0" doc:"Inclusive upper bound on the open time, Unix ms; absent: now." example:"1767225600000"`
		Limit    int    `query:"limit" default:"500" minimum:"1" maximum:"5000" doc:"How many candles."`
	}) (*HistoryCandlesOutput, error) {
		st, err := s.analyticsStore(in.Exchange)
		if err != nil {
			return nil, err
		}
		cs, err := st.Candles(ctx, in.Exchange, in.Type, in.Symbol, in.Interval, in.End, in.Limit)
		if err != nil {
			return nil, analyticsError(err)
		}
		out := &HistoryCandlesOutput{AnalyticsHeaders: AnalyticsHeaders{apiutil.CacheCandlesLive}}
		b := &out.Body
		b.Exchange, b.Type, b.Symbol, b.Interval, b.Candles = in.Exchange, in.Type, in.Symbol, in.Interval, cs
		return out, nil
	})

	huma.Register(api, huma.Operation{
		OperationID: "exportAnalytics", Method: http.MethodGet, Path: "/api/v1/analytics/export",
		Summary: "Export a dataset (CSV, JSONL, Parquet)", Tags: []string{"Analytics"}, Errors: analyticsErrors,
		Description: "Streams every row of one dataset for one exchange (and optionally one symbol) between from " +
			"and to, ordered by the table's key, formatted by ClickHouse: CSV with a header row, JSON lines, or " +
			"Parquet (zstd). Memory stays flat whatever the range. Columns and units are in docs/analytics.md.",
		Responses: map[string]*huma.Response{"200": {
			Description: "The export file.",
			Content: map[string]*huma.MediaType{
				"text/csv": {}, "application/x-ndjson": {}, "application/vnd.apache.parquet": {},
			},
		}},
	}, func(ctx context.Context, in *struct {
		Dataset  string `query:"dataset" required:"true" enum:"candles_1m,trades,funding_rates,mark_prices,open_interest,long_short_ratio,taker_volume,tickers" doc:"Table to export."`
		Exchange string `query:"exchange" required:"true" pattern:"^[a-z0-9]+(-[a-z0-9]+)*$" maxLength:"40" doc:"Exchange slug." example:"binance"`
		Symbol   string `query:"symbol" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$" doc:"Exchange symbol; absent: every symbol." example:"BTCUSDT"`
		From     int64  `query:"from" required:"true" minimum:"0" doc:"Start, Unix ms (inclusive)." example:"1735689600000"`
		To       int64  `query:"to" minimum:"0" doc:"End, Unix ms (exclusive); absent: now." example:"1767225600000"`
		Format   string `query:"format" default:"csv" enum:"csv,jsonl,parquet" doc:"csv (with header), jsonl (one JSON object a line) or parquet."`
	}) (*huma.StreamResponse, error) {
		if err := s.knownExchange(in.Exchange); err != nil {
			return nil, err
		}
		if s.analytics == nil {
			return nil, huma.Error503ServiceUnavailable("analytics is not configured")
		}
		exp, err := s.analytics.Exporter()
		if err != nil {
			return nil, huma.Error503ServiceUnavailable(err.Error())
		}
		to := in.To
		if to == 0 {
			to = time.Now().UnixMilli()
		}
		if to <= in.From {
			return nil, huma.Error422UnprocessableEntity("bad range", &huma.ErrorDetail{
				Message: "to must be after from", Location: "query.to", Value: to})
		}
		req := query.ExportRequest{Dataset: in.Dataset, Exchange: in.Exchange, Symbol: in.Symbol, From: in.From, To: to, Format: in.Format}
		body, err := exp.Open(ctx, req)
		if err != nil {
			return nil, huma.Error503ServiceUnavailable(err.Error())
		}
		f := query.Formats[in.Format]
		name := strings.Join([]string{in.Exchange, in.Dataset, orAll(in.Symbol), fmt.Sprint(in.From), fmt.Sprint(to)}, "_") + "." + f.Ext
		return &huma.StreamResponse{Body: func(hc huma.Context) {
			defer body.Close()
			hc.SetHeader("Content-Type", f.ContentType)
			hc.SetHeader("Content-Disposition", `attachment; filename="`+name+`"`)
			hc.SetHeader("Cache-Control", "private, no-store")
			hc.SetStatus(http.StatusOK)
			if n, err := io.Copy(hc.BodyWriter(), body); err != nil {
				s.log.Warn("analytics export interrupted", "dataset", in.Dataset, "bytes", n, "err", err)
			}
		}}, nil
	})
}

func orAll(s string) string {
	if s == "" {
		return "all"
	}
	return s
}
