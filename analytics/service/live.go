package service

import (
	"context"
	"time"

	"github.com/exhub/exhub/analytics/ingest"
	"github.com/exhub/exhub/analytics/schema"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// Stream is a durable market stream of one plugin (the BFF's pluginhost.MarketStream).
type Stream interface {
	Events() <-chan *exchangev1.MarketEvent
	Subscribe(ctx context.Context, subs ...*exchangev1.Subscription) error
	Close()
}

// EventRows turns one market event into rows: trades, candles, tickers and mark prices; nil for anything else
// (books, status). now is the ingest time (the deduplication version).
func EventRows(exchange string, ev *exchangev1.MarketEvent, now int64) (table string, row []any) {
	sub := ev.GetSubscription()
	switch e := ev.GetEvent().(type) {
	case *exchangev1.MarketEvent_Trade:
		return schema.Trades, ingest.TradeRow(exchange, sub.GetMarketType(), sub.GetSymbol(), e.Trade, now)
	case *exchangev1.MarketEvent_Candle:
		if sub.GetInterval() != "1m" {
			return "", nil
		}
		return schema.Candles1m, ingest.CandleRow(exchange, sub.GetMarketType(), sub.GetSymbol(), e.Candle, now)
	case *exchangev1.MarketEvent_Ticker:
		t := e.Ticker
		if t.GetSymbol() == "" || t.GetMarketType() == exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED {
			t.Symbol, t.MarketType = sub.GetSymbol(), sub.GetMarketType()
		}
		return schema.Tickers, ingest.TickerRow(exchange, t, ev.GetTime(), now)
	case *exchangev1.MarketEvent_MarkPrice:
		at := ev.GetTime()
		if at == 0 {
			at = now
		}
		return schema.MarkPrices, ingest.MarkRow(exchange, sub.GetSymbol(), at, e.MarkPrice, now)
	}
	return "", nil
}

// Subscriptions are the live channels ingested for one instrument.
func Subscriptions(mt exchangev1.MarketType, symbol string) []*exchangev1.Subscription {
	out := []*exchangev1.Subscription{
		{Channel: exchangev1.Channel_CHANNEL_TRADES, MarketType: mt, Symbol: symbol},
		{Channel: exchangev1.Channel_CHANNEL_CANDLES, MarketType: mt, Symbol: symbol, Interval: "1m"},
		{Channel: exchangev1.Channel_CHANNEL_TICKER, MarketType: mt, Symbol: symbol},
	}
	if mt == exchangev1.MarketType_MARKET_TYPE_SWAP {
		out = append(out, &exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_MARK_PRICE, MarketType: mt, Symbol: symbol})
	}
	return out
}

// consume moves a stream's events into the writer until the stream ends or ctx ends, calling added per row. Add blocks while the writer
// is at its memory bound; the stream then drops (and counts) events at its own bounded buffer.
func consume(ctx context.Context, w *ingest.Writer, exchange string, s Stream, added func(table string)) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-s.Events():
			if !ok {
				return
			}
			table, row := EventRows(exchange, ev, time.Now().UnixMilli())
			if row == nil {
				continue
			}
			if err := w.Add(ctx, table, row); err != nil {
				return
			}
			added(table)
		}
	}
}
