package ingest

import (
	"strings"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// MarketType is the market_type column value of an exchange.v1 market type ("SPOT", "SWAP").
func MarketType(mt exchangev1.MarketType) string {
	return strings.TrimPrefix(mt.String(), "MARKET_TYPE_")
}

// LongShortKind is the kind column value of a long/short ratio kind.
func LongShortKind(k exchangev1.LongShortRatioKind) string {
	switch k {
	case exchangev1.LongShortRatioKind_LONG_SHORT_RATIO_KIND_ACCOUNTS:
		return "accounts"
	case exchangev1.LongShortRatioKind_LONG_SHORT_RATIO_KIND_TOP_ACCOUNTS:
		return "top_accounts"
	case exchangev1.LongShortRatioKind_LONG_SHORT_RATIO_KIND_TOP_POSITIONS:
		return "top_positions"
	}
	return "unspecified"
}

func dec(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

func nullDec(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullTime(ms int64) any {
	if ms == 0 {
		return nil
	}
	return ms
}

// CandleRow is a candles_1m row.
func CandleRow(exchange string, mt exchangev1.MarketType, symbol string, c *exchangev1.Candle, now int64) []any {
	return []any{exchange, MarketType(mt), symbol, c.GetOpenTime(), dec(c.GetOpen()), dec(c.GetHigh()), dec(c.GetLow()),
		dec(c.GetClose()), dec(c.GetVolume()), dec(c.GetQuoteVolume()), uint64(max(c.GetTrades(), 0)), c.GetClosed(), now}
}

// TradeRow is a trades row.
func TradeRow(exchange string, mt exchangev1.MarketType, symbol string, t *exchangev1.Trade, now int64) []any {
	side := "unknown"
	switch t.GetSide() {
	case exchangev1.Side_SIDE_BUY:
		side = "buy"
	case exchangev1.Side_SIDE_SELL:
		side = "sell"
	}
	return []any{exchange, MarketType(mt), symbol, t.GetTime(), t.GetId(), dec(t.GetPrice()), dec(t.GetQty()),
		dec(t.GetQuoteQty()), side, now}
}

// FundingRow is a funding_rates row.
func FundingRow(exchange string, f *exchangev1.FundingRate, now int64) []any {
	return []any{exchange, f.GetSymbol(), f.GetFundingTime(), dec(f.GetRate()), nullDec(f.GetMarkPrice()), now}
}

// MarkRow is a mark_prices row.
func MarkRow(exchange, symbol string, time int64, m *exchangev1.MarkPriceUpdate, now int64) []any {
	return []any{exchange, symbol, time, dec(m.GetMarkPrice()), nullDec(m.GetIndexPrice()), nullDec(m.GetFundingRate()),
		nullTime(m.GetNextFundingTime()), now}
}

// OpenInterestRow is an open_interest row.
func OpenInterestRow(exchange, symbol, period string, p *exchangev1.OpenInterestPoint, now int64) []any {
	return []any{exchange, symbol, period, p.GetTime(), dec(p.GetOpenInterest()), dec(p.GetOpenInterestValue()), now}
}

// LongShortRow is a long_short_ratio row.
func LongShortRow(exchange, symbol string, kind exchangev1.LongShortRatioKind, period string, p *exchangev1.LongShortRatioPoint, now int64) []any {
	return []any{exchange, symbol, LongShortKind(kind), period, p.GetTime(), dec(p.GetLongShortRatio()),
		dec(p.GetLongRatio()), dec(p.GetShortRatio()), now}
}

// TakerVolumeRow is a taker_volume row.
func TakerVolumeRow(exchange string, mt exchangev1.MarketType, symbol, period string, p *exchangev1.TakerVolumePoint, now int64) []any {
	return []any{exchange, MarketType(mt), symbol, period, p.GetTime(), dec(p.GetBuyVolume()), dec(p.GetSellVolume()),
		dec(p.GetBuySellRatio()), now}
}

// TickerRow is a tickers row.
func TickerRow(exchange string, t *exchangev1.Ticker, time, now int64) []any {
	if t.GetTime() != 0 {
		time = t.GetTime()
	}
	return []any{exchange, MarketType(t.GetMarketType()), t.GetSymbol(), time, dec(t.GetLast()), dec(t.GetOpen_24H()),
		dec(t.GetHigh_24H()), dec(t.GetLow_24H()), dec(t.GetVolume_24H()), dec(t.GetQuoteVolume_24H()),
		dec(t.GetChangePct_24H()), nullDec(t.GetBid()), nullDec(t.GetAsk()), nullDec(t.GetMarkPrice()),
		nullDec(t.GetIndexPrice()), nullDec(t.GetFundingRate()), nullDec(t.GetOpenInterest()), now}
}
