// Package market serves the public market data routes (OpenAPI tag "Market"): the exchange list, instruments, tickers, movers,
// candles (from the analytics store when it holds them), order books and trades, with their Cache-Control for the
// edge and the stale fallback of the market service.
package market

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/exhub/exhub/analytics/query"
	"github.com/exhub/exhub/bff/internal/api/apiutil"
	"github.com/exhub/exhub/bff/internal/config"
	"github.com/exhub/exhub/bff/internal/market"
	"github.com/exhub/exhub/bff/internal/pluginhost"
)

// Deps are the market routes' collaborators.
type Deps struct {
	// Market is the market data service (required).
	Market *market.Service
	// Host finds an exchange's plugin for the candles of the analytics store (its intervals); nil: the plugin
	// answers every candles request.
	Host *pluginhost.Host
	// Analytics is the analytics store for candle history; nil: the plugin answers every candles request.
	Analytics Analytics
	// Logger logs what the client is not told (a store that failed and was answered around); nil discards.
	Logger *slog.Logger
	// Exchanges are the configured exchanges that GET /api/v1/exchanges lists (with their plugins' Describe from
	// Host).
	Exchanges []config.Exchange
	// ExchangesMaxAge is the Cache-Control max-age of the exchange list (http.exchanges_max_age).
	ExchangesMaxAge time.Duration
}

// Analytics is the part of the analytics service the candles route reads: the query store, failing while
// ClickHouse is not ready.
type Analytics interface {
	Store() (*query.Store, error)
}

type routes struct {
	market          *market.Service
	host            *pluginhost.Host
	analytics       Analytics
	log             *slog.Logger
	listed          []config.Exchange
	exchangesMaxAge time.Duration
}

// Cache-Control of the public market routes. max-age is how long the edge and browsers may reuse an answer;
// stale-while-revalidate lets them serve it a little longer while they refetch. Tickers are refreshed every 10 s
// upstream, instruments change rarely, books and trades are live. Every max-age is at least 2 s: the edge's Valkey
// store rounds a 1 s lifetime down to nothing and refuses to store it (edge/market_cache_test.go).
const (
	CacheInstruments   = "public, max-age=60, stale-while-revalidate=300"
	CacheTickers       = "public, max-age=5, stale-while-revalidate=10"
	CacheMovers        = "public, max-age=10, stale-while-revalidate=20"
	CacheCandlesLive   = apiutil.CacheCandlesLive
	CacheCandlesClosed = "public, max-age=300, stale-while-revalidate=600"
	CacheOrderBook     = "public, max-age=2"
	CacheTrades        = "public, max-age=2, stale-while-revalidate=2"
	// A stale answer (the exchange failed) is reused only briefly so recovery shows quickly.
	CacheStale = "public, max-age=2"
	// StaleHeader is set to "true" on answers that carry a last good value after a failure.
	StaleHeader = "X-Exhub-Stale"
)

const staleDoc = "Answers carry asOf (when the data was fetched). When the exchange or its plugin fails and a last good " +
	"value is recent enough, it is served with stale: true, a staleReason and the header X-Exhub-Stale: true; " +
	"otherwise the answer is 503 (plugin down, exchange unavailable or rate limited) or 502 (the exchange answered " +
	"with an error), as problem+json with a Retry-After header in seconds. Unknown exchange, type, symbol or interval " +
	"and limits out of range are 422 problem+json whose errors[].location names the query parameter."

// MarketHeaders are the headers of every market answer.
type MarketHeaders struct {
	CacheControl string `header:"Cache-Control" doc:"Public: the edge and browsers may cache the answer."`
	Stale        string `header:"X-Exhub-Stale" doc:"\"true\" when the body is a last good value served after a failure."`
}

func headersFor(fr market.Freshness, cc string) MarketHeaders {
	if fr.Stale {
		return MarketHeaders{CacheControl: CacheStale, Stale: "true"}
	}
	return MarketHeaders{CacheControl: cc}
}

// InstrumentsOutput is the answer of GET /api/v1/instruments.
type InstrumentsOutput struct {
	MarketHeaders
	Body struct {
		Exchange string `json:"exchange" example:"binance"`
		Type     string `json:"type" enum:"SPOT,SWAP" example:"SWAP"`
		market.Freshness
		Instruments []market.Instrument `json:"instruments" doc:"Sorted by symbol."`
	}
}

// TickersOutput is the answer of GET /api/v1/tickers.
type TickersOutput struct {
	MarketHeaders
	Body struct {
		Exchange string `json:"exchange" example:"binance"`
		Type     string `json:"type" enum:"SPOT,SWAP" example:"SWAP"`
		market.Freshness
		Tickers []market.Ticker `json:"tickers" doc:"One per listed instrument that has a ticker, sorted by symbol."`
	}
}

// MoversOutput is the answer of GET /api/v1/movers.
type MoversOutput struct {
	MarketHeaders
	Body struct {
		market.Freshness
		Movers []market.Mover `json:"movers"`
	}
}

// CandlesOutput is the answer of GET /api/v1/candles.
type CandlesOutput struct {
	MarketHeaders
	Source string `header:"X-Exhub-Source" doc:"Where the candles came from, for debugging: clickhouse (the analytics store; the newest candle is the exchange's live one), plugin (the exchange), or clickhouse+plugin (the store, with the ranges it does not hold from the exchange)."`
	Body   struct {
		Exchange string `json:"exchange" example:"binance"`
		Type     string `json:"type" enum:"SPOT,SWAP" example:"SWAP"`
		Symbol   string `json:"symbol" example:"BTCUSDT"`
		Interval string `json:"interval" example:"1m"`
		market.Freshness
		Candles []market.Candle `json:"candles" doc:"Ascending by open time; the last one may still be forming (closed: false)."`
	}
}

// OrderBookOutput is the answer of GET /api/v1/orderbook.
type OrderBookOutput struct {
	MarketHeaders
	Body struct {
		Exchange string `json:"exchange" example:"binance"`
		Type     string `json:"type" enum:"SPOT,SWAP" example:"SWAP"`
		Symbol   string `json:"symbol" example:"BTCUSDT"`
		market.Freshness
		market.OrderBook
	}
}

// TradesOutput is the answer of GET /api/v1/trades.
type TradesOutput struct {
	MarketHeaders
	Body struct {
		Exchange string `json:"exchange" example:"binance"`
		Type     string `json:"type" enum:"SPOT,SWAP" example:"SWAP"`
		Symbol   string `json:"symbol" example:"BTCUSDT"`
		market.Freshness
		Trades []market.Trade `json:"trades" doc:"Oldest first."`
	}
}

var marketErrors = []int{http.StatusUnprocessableEntity, http.StatusBadGateway, http.StatusServiceUnavailable}

// Register adds the market routes to api.
func Register(api huma.API, d Deps) {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	s := &routes{market: d.Market, host: d.Host, analytics: d.Analytics, log: d.Logger, listed: d.Exchanges,
		exchangesMaxAge: d.ExchangesMaxAge}
	s.registerExchanges(api)

	huma.Register(api, huma.Operation{
		OperationID: "listInstruments",
		Method:      http.MethodGet,
		Path:        "/api/v1/instruments",
		Summary:     "List instruments",
		Description: "The tradable USDT markets of one exchange and market type: quote USDT, status TRADING (SWAP: " +
			"linear perpetuals settled in USDT), with price and quantity grids and limits. maxLeverage is 5 for a " +
			"SWAP whose exchange gives none. Cached for 5 minutes. " + staleDoc,
		Tags:   []string{"Market"},
		Errors: marketErrors,
	}, func(ctx context.Context, in *apiutil.ExchangeQuery) (*InstrumentsOutput, error) {
		data, fr, err := s.market.Instruments(ctx, in.Exchange, in.Type)
		if err != nil {
			return nil, marketError(err)
		}
		out := &InstrumentsOutput{MarketHeaders: headersFor(fr, CacheInstruments)}
		out.Body.Exchange, out.Body.Type, out.Body.Freshness, out.Body.Instruments = in.Exchange, in.Type, fr, data
		return out, nil
	})

	huma.Register(api, huma.Operation{
		OperationID: "listTickers",
		Method:      http.MethodGet,
		Path:        "/api/v1/tickers",
		Summary:     "List 24h tickers",
		Description: "24-hour statistics, best bid/ask and (SWAP) mark, index, funding and open interest for every " +
			"listed instrument of one exchange and market type. The BFF refreshes them every 10 seconds. " + staleDoc,
		Tags:   []string{"Market"},
		Errors: marketErrors,
	}, func(ctx context.Context, in *apiutil.ExchangeQuery) (*TickersOutput, error) {
		data, fr, err := s.market.Tickers(ctx, in.Exchange, in.Type)
		if err != nil {
			return nil, marketError(err)
		}
		out := &TickersOutput{MarketHeaders: headersFor(fr, CacheTickers)}
		out.Body.Exchange, out.Body.Type, out.Body.Freshness, out.Body.Tickers = in.Exchange, in.Type, fr, data
		return out, nil
	})

	huma.Register(api, huma.Operation{
		OperationID: "listMovers",
		Method:      http.MethodGet,
		Path:        "/api/v1/movers",
		Summary:     "Biggest 24h movers",
		Description: "The home page's biggest movers across exchanges: USDT perpetual (SWAP) markets of every available " +
			"exchange, restricted to listed instruments, sorted by the absolute 24h change (descending; ties by 24h " +
			"quote volume, then exchange key, then symbol), one row per base asset. When fewer than limit markets have " +
			"a 24h change, the list is completed from the default set BTC, ETH, SOL, XRP, DOGE (USDT perpetuals of the " +
			"lowest-key exchange listing them; default: true). An exchange that fails is left out. " + staleDoc,
		Tags:   []string{"Market"},
		Errors: marketErrors,
	}, func(ctx context.Context, in *struct {
		Limit int `query:"limit" default:"5" minimum:"1" maximum:"20" doc:"How many rows." example:"5"`
	}) (*MoversOutput, error) {
		data, fr, err := s.market.Movers(ctx, in.Limit)
		if err != nil {
			return nil, marketError(err)
		}
		out := &MoversOutput{MarketHeaders: headersFor(fr, CacheMovers)}
		out.Body.Freshness, out.Body.Movers = fr, data
		return out, nil
	})

	huma.Register(api, huma.Operation{
		OperationID: "listCandles",
		Method:      http.MethodGet,
		Path:        "/api/v1/candles",
		Summary:     "Candles (OHLCV)",
		Description: "Up to limit candles whose open time is at or before end, ascending by open time. To page back " +
			"in history, pass end = the first candle's openTime - 1. Intervals are the exchange's " +
			"capabilities.intervals. History comes from the analytics store (ClickHouse) when it holds the range: " +
			"one-minute candles, and coarser intervals up to 1d rolled up from them, with the exchange's live " +
			"candle as the newest one. Ranges the store does not hold (or every range, when it is not reachable) " +
			"come from the exchange, whose page size (capabilities.pageLimits.candles) splits large requests into " +
			"several calls; fewer candles come back when the history ends. The header X-Exhub-Source says which " +
			"source answered. " + staleDoc,
		Tags:   []string{"Market"},
		Errors: marketErrors,
	}, func(ctx context.Context, in *struct {
		apiutil.SymbolQuery
		Interval string `query:"interval" required:"true" pattern:"^[0-9]{1,3}[smhdwM]$" doc:"Candle interval, one of the exchange's capabilities.intervals (1m 5m 15m 1h 4h 1d ...)." example:"1m"`
		End      int64  `query:"end" minimum:"0" doc:"Inclusive upper bound on the open time, Unix milliseconds; absent or 0: now." example:"1767225600000"`
		Limit    int    `query:"limit" default:"500" minimum:"1" maximum:"1500" doc:"How many candles." example:"500"`
	}) (*CandlesOutput, error) {
		data, fr, src, err := s.candles(ctx, in.Exchange, in.Type, in.Symbol, in.Interval, in.End, in.Limit)
		if err != nil {
			return nil, marketError(err)
		}
		cc := CacheCandlesLive
		if d := market.IntervalDuration(in.Interval); in.End > 0 && d > 0 && time.UnixMilli(in.End).Add(d).Before(time.Now()) {
			cc = CacheCandlesClosed // every candle of the answer is closed: history does not change
		}
		out := &CandlesOutput{MarketHeaders: headersFor(fr, cc), Source: src}
		b := &out.Body
		b.Exchange, b.Type, b.Symbol, b.Interval, b.Freshness, b.Candles = in.Exchange, in.Type, in.Symbol, in.Interval, fr, data
		return out, nil
	})

	huma.Register(api, huma.Operation{
		OperationID: "getOrderBook",
		Method:      http.MethodGet,
		Path:        "/api/v1/orderbook",
		Summary:     "Order book snapshot",
		Description: "Bids and asks of one market, at most depth levels a side. For a live book use the WebSocket " +
			"stream at /api/v1/stream. " + staleDoc,
		Tags:   []string{"Market"},
		Errors: marketErrors,
	}, func(ctx context.Context, in *struct {
		apiutil.SymbolQuery
		Depth int `query:"depth" minimum:"1" maximum:"5000" doc:"Levels per side, at most the exchange's capabilities.pageLimits.orderBookDepth; absent: 50 (or that limit when lower)." example:"50"`
	}) (*OrderBookOutput, error) {
		data, fr, err := s.market.OrderBook(ctx, in.Exchange, in.Type, in.Symbol, in.Depth)
		if err != nil {
			return nil, marketError(err)
		}
		out := &OrderBookOutput{MarketHeaders: headersFor(fr, CacheOrderBook)}
		b := &out.Body
		b.Exchange, b.Type, b.Symbol, b.Freshness, b.OrderBook = in.Exchange, in.Type, in.Symbol, fr, data
		return out, nil
	})

	huma.Register(api, huma.Operation{
		OperationID: "listTrades",
		Method:      http.MethodGet,
		Path:        "/api/v1/trades",
		Summary:     "Recent trades",
		Description: "The most recent public trades of one market, oldest first. " + staleDoc,
		Tags:        []string{"Market"},
		Errors:      marketErrors,
	}, func(ctx context.Context, in *struct {
		apiutil.SymbolQuery
		Limit int `query:"limit" minimum:"1" maximum:"5000" doc:"How many trades, at most the exchange's capabilities.pageLimits.trades; absent: 100 (or that limit when lower)." example:"100"`
	}) (*TradesOutput, error) {
		data, fr, err := s.market.Trades(ctx, in.Exchange, in.Type, in.Symbol, in.Limit)
		if err != nil {
			return nil, marketError(err)
		}
		out := &TradesOutput{MarketHeaders: headersFor(fr, CacheTrades)}
		b := &out.Body
		b.Exchange, b.Type, b.Symbol, b.Freshness, b.Trades = in.Exchange, in.Type, in.Symbol, fr, data
		return out, nil
	})
}

// marketError maps the market service's errors to problem+json: 422 naming the query parameter, 502/503 with
// Retry-After.
func marketError(err error) error {
	var fe *market.FieldError
	if errors.As(err, &fe) {
		return huma.Error422UnprocessableEntity(fe.Error(), &huma.ErrorDetail{
			Message: fe.Message, Location: "query." + fe.Field, Value: fe.Value,
		})
	}
	var ue *market.UpstreamError
	if errors.As(err, &ue) {
		return apiutil.Unavailable(ue.Status, ue.RetryAfter, fmt.Sprintf("market data unavailable: %v", ue.Err))
	}
	return apiutil.Error("market data", err)
}
