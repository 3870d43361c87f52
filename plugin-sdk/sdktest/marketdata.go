package sdktest

import (
	"context"
	"strconv"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// interval is a candle interval or an analytics period. Buckets open at multiples of ms since the Unix epoch,
// shifted by offset (weeks open on Monday 00:00 UTC).
type interval struct {
	name   string
	ms     int64
	offset int64
}

func (iv interval) align(t int64) int64 {
	d := t - iv.offset
	q := d / iv.ms
	if d < 0 && d%iv.ms != 0 {
		q--
	}
	return q*iv.ms + iv.offset
}
func (iv interval) prev(open int64) int64 { return open - iv.ms }
func (iv interval) next(open int64) int64 { return open + iv.ms }

const hourMs = 60 * minuteMs

var intervals = []interval{
	{"1m", minuteMs, 0}, {"3m", 3 * minuteMs, 0}, {"5m", 5 * minuteMs, 0}, {"15m", 15 * minuteMs, 0},
	{"30m", 30 * minuteMs, 0}, {"1h", hourMs, 0}, {"2h", 2 * hourMs, 0}, {"4h", 4 * hourMs, 0},
	{"6h", 6 * hourMs, 0}, {"8h", 8 * hourMs, 0}, {"12h", 12 * hourMs, 0}, {"1d", 24 * hourMs, 0},
	{"3d", 72 * hourMs, 0}, {"1w", 168 * hourMs, 96 * hourMs}, // 1970-01-05 was a Monday
}

var periods = []string{"5m", "15m", "30m", "1h", "2h", "4h", "6h", "12h", "1d"}

func intervalNames() []string {
	out := make([]string, len(intervals))
	for i, iv := range intervals {
		out[i] = iv.name
	}
	return out
}

func periodNames() []string { return append([]string(nil), periods...) }

func lookupInterval(field, name string, allowed []string) (interval, error) {
	ok := allowed == nil
	for _, a := range allowed {
		ok = ok || a == name
	}
	for _, iv := range intervals {
		if iv.name == name && ok {
			return iv, nil
		}
	}
	return interval{}, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, field,
		"unsupported %s %q", field, name)
}

// pageLimit applies a request's limit: 0 means the default, above the maximum is clamped, negative is an error.
func pageLimit(limit int32, def, maxLimit int) (int, error) {
	switch {
	case limit < 0:
		return 0, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "limit", "limit must not be negative")
	case limit == 0:
		return def, nil
	default:
		return min(int(limit), maxLimit), nil
	}
}

// ListInstruments lists instruments, optionally of one market type or one symbol.
func (s *Server) ListInstruments(_ context.Context, req *exchangev1.ListInstrumentsRequest) (*exchangev1.ListInstrumentsResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &exchangev1.ListInstrumentsResponse{}
	for _, in := range s.ordered {
		if req.GetMarketType() != exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED && in.spec.marketType != req.GetMarketType() {
			continue
		}
		if req.GetSymbol() != "" && in.info.Symbol != req.GetSymbol() {
			continue
		}
		out.Instruments = append(out.Instruments, in.info)
	}
	if req.GetSymbol() != "" && len(out.Instruments) == 0 {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND, "symbol",
			"no instrument %q", req.GetSymbol())
	}
	return out, nil
}

// ticker builds the 24h ticker of an instrument from its bars and book. Caller holds s.mu.
func (s *Server) ticker(in *instrument, now int64) *exchangev1.Ticker {
	open, high, low, vol, quoteVol := in.stats24h()
	last := in.price(in.last)
	t := &exchangev1.Ticker{
		Symbol:          in.info.Symbol,
		MarketType:      in.spec.marketType,
		Last:            last.String(),
		Open_24H:        in.price(open).String(),
		High_24H:        in.price(high).String(),
		Low_24H:         in.price(low).String(),
		Volume_24H:      in.qty(vol).String(),
		QuoteVolume_24H: in.tick.Mul(in.step).Mul(decimal.NewFromInt(quoteVol)).String(),
		ChangePct_24H:   last.Sub(in.price(open)).Mul(decimal.NewFromInt(100)).Div(in.price(open)).Round(2).String(),
		Time:            now,
	}
	if b := in.book; b != nil {
		if len(b.bids) > 0 {
			t.Bid, t.BidQty = in.price(b.bids[0].price).String(), in.qty(b.bids[0].qty).String()
		}
		if len(b.asks) > 0 {
			t.Ask, t.AskQty = in.price(b.asks[0].price).String(), in.qty(b.asks[0].qty).String()
		}
	}
	if in.isSwap() {
		m := s.markOf(in)
		t.MarkPrice = m.mark.String()
		t.IndexPrice = m.index.String()
		t.FundingRate = m.fundingRate.String()
		t.NextFundingTime = s.nextFunding(now)
		t.OpenInterest = in.qty(openInterestSteps(s.seed, in, now)).String()
	}
	return t
}

// GetTickers returns tickers of one market type (all of them, or the symbols asked for).
func (s *Server) GetTickers(_ context.Context, req *exchangev1.GetTickersRequest) (*exchangev1.GetTickersResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.nowMs()
	out := &exchangev1.GetTickersResponse{}
	if len(req.GetSymbols()) > 0 {
		for _, sym := range req.GetSymbols() {
			in, err := s.instrument(req.GetMarketType(), sym)
			if err != nil {
				return nil, err
			}
			out.Tickers = append(out.Tickers, s.ticker(in, now))
		}
		return out, nil
	}
	for _, in := range s.ordered {
		if req.GetMarketType() == exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED || in.spec.marketType == req.GetMarketType() {
			out.Tickers = append(out.Tickers, s.ticker(in, now))
		}
	}
	return out, nil
}

func levelsOf(in *instrument, ls []level, depth int) []*exchangev1.PriceLevel {
	out := make([]*exchangev1.PriceLevel, 0, min(len(ls), depth))
	for _, l := range ls[:min(len(ls), depth)] {
		out = append(out, &exchangev1.PriceLevel{Price: in.price(l.price).String(), Qty: in.qty(l.qty).String()})
	}
	return out
}

// GetOrderBook returns the published book; its sequence matches the stream's book events.
func (s *Server) GetOrderBook(_ context.Context, req *exchangev1.GetOrderBookRequest) (*exchangev1.GetOrderBookResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, err := s.instrument(req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	depth, err := pageLimit(req.GetDepth(), 20, bookLevels)
	if err != nil {
		return nil, err
	}
	b := in.book
	return &exchangev1.GetOrderBookResponse{Book: &exchangev1.OrderBook{
		Symbol: in.info.Symbol, MarketType: in.spec.marketType,
		Bids: levelsOf(in, b.bids, depth), Asks: levelsOf(in, b.asks, depth),
		Sequence: b.seq, Time: b.time,
	}}, nil
}

// GetCandles pages by end time: the newest `limit` candles opening at or before end_time, ascending.
func (s *Server) GetCandles(_ context.Context, req *exchangev1.GetCandlesRequest) (*exchangev1.GetCandlesResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, err := s.instrument(req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	iv, err := lookupInterval("interval", req.GetInterval(), nil)
	if err != nil {
		return nil, err
	}
	limit, err := pageLimit(req.GetLimit(), 500, 1000)
	if err != nil {
		return nil, err
	}
	now := s.nowMs()
	end := req.GetEndTime()
	if end == 0 || end > now {
		end = now
	}
	if req.GetStartTime() > end {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "start_time",
			"start_time %d is after end_time %d", req.GetStartTime(), end)
	}
	in.rollBars(now)
	return &exchangev1.GetCandlesResponse{Candles: in.candles(iv, req.GetStartTime(), end, limit, now)}, nil
}

// GetTrades returns the most recent public trades, oldest first.
func (s *Server) GetTrades(_ context.Context, req *exchangev1.GetTradesRequest) (*exchangev1.GetTradesResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, err := s.instrument(req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	limit, err := pageLimit(req.GetLimit(), 100, maxTrades)
	if err != nil {
		return nil, err
	}
	ts := in.trades[max(len(in.trades)-limit, 0):]
	out := make([]*exchangev1.Trade, len(ts))
	copy(out, ts)
	return &exchangev1.GetTradesResponse{Trades: out}, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
