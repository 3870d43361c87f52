package bybit

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// instrumentCache keeps the live instruments per category, refreshed after a TTL or on a miss.
type instrumentCache struct {
	mu    sync.Mutex
	bySym map[string]map[string]*Instrument
	order map[string][]*Instrument
	at    map[string]time.Time
	ttl   time.Duration
}

func newInstrumentCache() *instrumentCache {
	return &instrumentCache{bySym: map[string]map[string]*Instrument{}, order: map[string][]*Instrument{},
		at: map[string]time.Time{}, ttl: defaultInstrumentsTTL}
}

// maxInstrumentPages bounds the cursor pages read for one category (1000 rows each).
const maxInstrumentPages = 20

// instruments returns the live instruments of a category, fetching every cursor page when stale or forced.
func (s *Server) instruments(ctx context.Context, category string, force bool) ([]*Instrument, error) {
	c := s.cache()
	c.mu.Lock()
	if !force && time.Since(c.at[category]) < c.ttl && c.order[category] != nil {
		out := c.order[category]
		c.mu.Unlock()
		return out, nil
	}
	c.mu.Unlock()
	var list []*Instrument
	cursor := ""
	for page := 0; ; page++ {
		if page == maxInstrumentPages {
			return nil, internalf("instruments-info %s: more than %d pages", category, maxInstrumentPages)
		}
		q := url.Values{"category": {category}, "limit": {strconv.Itoa(int(s.instPage.Load()))}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		res, err := s.client().Get(ctx, pathMarketInstruments, q)
		if err != nil {
			return nil, err
		}
		rows, next, err := ParseInstruments(res.Result, category)
		if err != nil {
			return nil, internalf("instruments-info %s: %v", category, err)
		}
		list = append(list, rows...)
		if next == "" || next == cursor {
			break
		}
		cursor = next
	}
	m := make(map[string]*Instrument, len(list))
	for _, in := range list {
		m[in.Symbol] = in
	}
	if list == nil {
		list = []*Instrument{}
	}
	c.mu.Lock()
	c.bySym[category], c.order[category], c.at[category] = m, list, time.Now()
	c.mu.Unlock()
	return list, nil
}

// instrument finds one live instrument; an unknown symbol is INSTRUMENT_NOT_FOUND. Bybit names a pair the same in
// spot and linear (BTCUSDT), so the market type is required.
func (s *Server) instrument(ctx context.Context, mt exchangev1.MarketType, symbol string) (*Instrument, error) {
	if symbol == "" {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "symbol", "symbol is required")
	}
	cat, err := categoryOf(mt)
	if err != nil {
		return nil, err
	}
	for _, force := range []bool{false, true} {
		if _, err := s.instruments(ctx, cat, force); err != nil {
			return nil, err
		}
		c := s.cache()
		c.mu.Lock()
		in := c.bySym[cat][symbol]
		fresh := time.Since(c.at[cat]) < 5*time.Second
		c.mu.Unlock()
		if in != nil {
			return in, nil
		}
		if fresh {
			break // just fetched: a miss is final
		}
	}
	return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND, "symbol", "no trading %v instrument %q on Bybit", mt, symbol)
}

func (s *Server) serverTime(ctx context.Context) (int64, error) {
	res, err := s.client().Get(ctx, pathMarketTime, nil)
	if err != nil {
		return 0, err
	}
	ts, err := ParseTime(res.Result)
	if err != nil {
		return 0, internalf("time: %v", err)
	}
	return ts, nil
}

// GetServerTime returns Bybit's clock.
func (s *Server) GetServerTime(ctx context.Context, _ *exchangev1.GetServerTimeRequest) (*exchangev1.GetServerTimeResponse, error) {
	ts, err := s.serverTime(ctx)
	if err != nil {
		return nil, err
	}
	return &exchangev1.GetServerTimeResponse{Time: ts}, nil
}

// ListInstruments lists trading spot instruments and USDT linear perpetuals.
func (s *Server) ListInstruments(ctx context.Context, req *exchangev1.ListInstrumentsRequest) (*exchangev1.ListInstrumentsResponse, error) {
	mts := []exchangev1.MarketType{req.GetMarketType()}
	if req.GetMarketType() == exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED {
		mts = []exchangev1.MarketType{exchangev1.MarketType_MARKET_TYPE_SPOT, exchangev1.MarketType_MARKET_TYPE_SWAP}
	}
	out := &exchangev1.ListInstrumentsResponse{}
	for _, mt := range mts {
		cat, err := categoryOf(mt)
		if err != nil {
			return nil, err
		}
		list, err := s.instruments(ctx, cat, false)
		if err != nil {
			return nil, err
		}
		for _, in := range list {
			if req.GetSymbol() == "" || req.GetSymbol() == in.Symbol {
				out.Instruments = append(out.Instruments, in.Proto())
			}
		}
	}
	return out, nil
}

// GetTickers returns the tickers of listed instruments; linear ones carry mark and index prices, the funding rate
// with the next funding time, and open interest (base coin), all from the one tickers call.
func (s *Server) GetTickers(ctx context.Context, req *exchangev1.GetTickersRequest) (*exchangev1.GetTickersResponse, error) {
	mt := req.GetMarketType()
	if mt == exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "market_type", "market_type is required")
	}
	cat, err := categoryOf(mt)
	if err != nil {
		return nil, err
	}
	list, err := s.instruments(ctx, cat, false)
	if err != nil {
		return nil, err
	}
	insts := make(map[string]*Instrument, len(list))
	for _, in := range list {
		insts[in.Symbol] = in
	}
	want := map[string]bool{}
	for _, sym := range req.GetSymbols() {
		want[sym] = true
	}
	q := url.Values{"category": {cat}}
	if len(want) == 1 {
		q.Set("symbol", req.GetSymbols()[0])
		if insts[req.GetSymbols()[0]] == nil {
			return &exchangev1.GetTickersResponse{}, nil
		}
	}
	res, err := s.client().Get(ctx, pathMarketTickers, q)
	if err != nil {
		return nil, err
	}
	rows, err := ParseTickers(res.Result)
	if err != nil {
		return nil, internalf("tickers: %v", err)
	}
	out := &exchangev1.GetTickersResponse{}
	for _, r := range rows {
		in := insts[r.Symbol]
		if in == nil || (len(want) > 0 && !want[r.Symbol]) {
			continue
		}
		t, err := tickerProto(r, in, res.Time)
		if err != nil {
			return nil, internalf("ticker %s: %v", r.Symbol, err)
		}
		out.Tickers = append(out.Tickers, t)
	}
	return out, nil
}

// GetOrderBook returns up to depth levels (Bybit's maximum is 1000).
func (s *Server) GetOrderBook(ctx context.Context, req *exchangev1.GetOrderBookRequest) (*exchangev1.GetOrderBookResponse, error) {
	in, err := s.instrument(ctx, req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	depth := int(req.GetDepth())
	if depth <= 0 {
		depth = 20
	}
	depth = min(depth, bookDepthLimit)
	res, err := s.client().Get(ctx, pathMarketOrderbook, url.Values{"category": {in.Category}, "symbol": {in.Symbol}, "limit": {strconv.Itoa(depth)}})
	if err != nil {
		return nil, err
	}
	raw, err := ParseBook(res.Result)
	if err != nil {
		return nil, internalf("orderbook %s: %v", in.Symbol, err)
	}
	var b Book
	b.Reset(raw)
	bids, asks := b.Levels(depth)
	seq := raw.Seq
	if seq == 0 {
		seq = raw.U
	}
	return &exchangev1.GetOrderBookResponse{Book: &exchangev1.OrderBook{Symbol: in.Symbol, MarketType: in.MarketType,
		Bids: bids, Asks: asks, Sequence: seq, Time: raw.Ts}}, nil
}

// GetCandles returns the newest `limit` (at most 1000) candles with open time in [start_time, end_time] (end_time
// inclusive), ascending, from one kline call (Bybit answers newest first, 1000 at most). Older pages are asked with
// end_time = the first open time - 1, which Bybit's `end` takes as is.
func (s *Server) GetCandles(ctx context.Context, req *exchangev1.GetCandlesRequest) (*exchangev1.GetCandlesResponse, error) {
	in, err := s.instrument(ctx, req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	code, ok := intervalOf[req.GetInterval()]
	if !ok {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "interval", "interval %q is not offered", req.GetInterval())
	}
	limit := int(req.GetLimit())
	if limit <= 0 || limit > candlesPageLimit {
		limit = candlesPageLimit
	}
	end := req.GetEndTime()
	q := url.Values{"category": {in.Category}, "symbol": {in.Symbol}, "interval": {code}, "limit": {strconv.Itoa(limit)}}
	if end > 0 {
		q.Set("end", msStr(end))
	}
	if req.GetStartTime() > 0 {
		q.Set("start", msStr(req.GetStartTime()))
	}
	res, err := s.client().Get(ctx, pathMarketKline, q)
	if err != nil {
		return nil, err
	}
	page, err := ParseKlines(res.Result, req.GetInterval(), res.Time)
	if err != nil {
		return nil, internalf("kline %s: %v", in.Symbol, err)
	}
	got := page[:0]
	for _, c := range page {
		if (end <= 0 || c.OpenTime <= end) && c.OpenTime >= req.GetStartTime() {
			got = append(got, c)
		}
	}
	if len(got) > limit {
		got = got[len(got)-limit:]
	}
	return &exchangev1.GetCandlesResponse{Candles: got}, nil
}

// GetTrades returns recent trades ascending (spot: at most 60, linear: at most 1000).
func (s *Server) GetTrades(ctx context.Context, req *exchangev1.GetTradesRequest) (*exchangev1.GetTradesResponse, error) {
	in, err := s.instrument(ctx, req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	max := linearTradesPageLimit
	if in.Category == catSpot {
		max = spotTradesPageLimit
	}
	limit := int(req.GetLimit())
	if limit <= 0 || limit > max {
		limit = min(100, max)
	}
	res, err := s.client().Get(ctx, pathMarketRecentTrade, url.Values{"category": {in.Category}, "symbol": {in.Symbol}, "limit": {strconv.Itoa(limit)}})
	if err != nil {
		return nil, err
	}
	ts, err := ParseTrades(res.Result)
	if err != nil {
		return nil, internalf("recent-trade %s: %v", in.Symbol, err)
	}
	if len(ts) > limit {
		ts = ts[len(ts)-limit:]
	}
	return &exchangev1.GetTradesResponse{Trades: ts}, nil
}

func (s *Server) perp(ctx context.Context, symbol string) (*Instrument, error) {
	return s.instrument(ctx, exchangev1.MarketType_MARKET_TYPE_SWAP, symbol)
}

// linearTicker reads one perpetual's ticker row.
func (s *Server) linearTicker(ctx context.Context, in *Instrument) (rawTicker, int64, error) {
	res, err := s.client().Get(ctx, pathMarketTickers, url.Values{"category": {catLinear}, "symbol": {in.Symbol}})
	if err != nil {
		return rawTicker{}, 0, err
	}
	rows, err := ParseTickers(res.Result)
	if err != nil {
		return rawTicker{}, 0, internalf("tickers %s: %v", in.Symbol, err)
	}
	for _, r := range rows {
		if r.Symbol == in.Symbol {
			return r, res.Time, nil
		}
	}
	return rawTicker{}, 0, internalf("tickers %s: no row for the symbol", in.Symbol)
}

// GetFundingRate returns the current rate with the next funding time, mark and index price, from the ticker.
func (s *Server) GetFundingRate(ctx context.Context, req *exchangev1.GetFundingRateRequest) (*exchangev1.GetFundingRateResponse, error) {
	in, err := s.perp(ctx, req.GetSymbol())
	if err != nil {
		return nil, err
	}
	r, _, err := s.linearTicker(ctx, in)
	if err != nil {
		return nil, err
	}
	rate, err1 := canonStr("fundingRate", r.FundingRate)
	next, err2 := parseMs("nextFundingTime", r.NextFundingTime)
	mark, err3 := canonStr("markPrice", r.MarkPrice)
	index, err4 := canonStr("indexPrice", r.IndexPrice)
	if rate == "" || errors.Join(err1, err2, err3, err4) != nil {
		return nil, internalf("tickers %s: malformed funding fields", in.Symbol)
	}
	hours := in.FundingHours
	if hours <= 0 {
		hours = 8
	}
	return &exchangev1.GetFundingRateResponse{Symbol: in.Symbol, Rate: rate, NextFundingTime: next, IntervalHours: hours,
		MarkPrice: mark, IndexPrice: index}, nil
}

// GetFundingRateHistory reads funding/history (newest first, 200 per call) and returns it ascending.
func (s *Server) GetFundingRateHistory(ctx context.Context, req *exchangev1.GetFundingRateHistoryRequest) (*exchangev1.GetFundingRateHistoryResponse, error) {
	in, err := s.perp(ctx, req.GetSymbol())
	if err != nil {
		return nil, err
	}
	limit := int(req.GetLimit())
	if limit <= 0 || limit > fundingHistoryLimit {
		limit = fundingHistoryLimit
	}
	q := url.Values{"category": {catLinear}, "symbol": {in.Symbol}, "limit": {strconv.Itoa(limit)}}
	end := req.GetEndTime()
	if req.GetStartTime() > 0 {
		q.Set("startTime", msStr(req.GetStartTime()))
		if end <= 0 {
			end = time.Now().UnixMilli() // Bybit refuses a startTime without an endTime
		}
	}
	if end > 0 {
		q.Set("endTime", msStr(end))
	}
	res, err := s.client().Get(ctx, pathMarketFundingHistory, q)
	if err != nil {
		return nil, err
	}
	rates, err := ParseFundingHistory(res.Result)
	if err != nil {
		return nil, internalf("funding/history %s: %v", in.Symbol, err)
	}
	if len(rates) > limit {
		rates = rates[len(rates)-limit:]
	}
	return &exchangev1.GetFundingRateHistoryResponse{Rates: rates}, nil
}

// series reads an analytics endpoint of a perpetual (open-interest or account-ratio) for the request's window and
// returns the newest `limit` points ascending, following nextPageCursor while the window has more.
func (s *Server) series(ctx context.Context, path, periodKey string, pageMax int, sr *exchangev1.SeriesRequest,
	parse func(json.RawMessage) ([]seriesPoint, string, error)) (*Instrument, []seriesPoint, error) {
	in, err := s.perp(ctx, sr.GetSymbol())
	if err != nil {
		return nil, nil, err
	}
	period := sr.GetPeriod()
	if period == "" {
		period = "5m"
	}
	p, ok := periodOf[period]
	if !ok {
		return nil, nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "period", "period %q is not offered (%v)", period, periods)
	}
	limit := int(sr.GetLimit())
	if limit <= 0 || limit > analyticsPageLimit {
		limit = analyticsPageLimit
	}
	q := url.Values{"category": {catLinear}, "symbol": {in.Symbol}, periodKey: {p}, "limit": {strconv.Itoa(min(limit, pageMax))}}
	if sr.GetStartTime() > 0 || sr.GetEndTime() > 0 {
		end := sr.GetEndTime()
		if end <= 0 {
			end = time.Now().UnixMilli()
		}
		q.Set("startTime", msStr(max(sr.GetStartTime(), 0)))
		q.Set("endTime", msStr(end))
	}
	var pts []seriesPoint // newest first
	for call := 0; len(pts) < limit && call < 5; call++ {
		res, err := s.client().Get(ctx, path, q)
		if err != nil {
			return nil, nil, err
		}
		page, next, err := parse(res.Result)
		if err != nil {
			return nil, nil, internalf("%s %s: %v", path, in.Symbol, err)
		}
		pts = append(pts, page...)
		if next == "" || len(page) == 0 {
			break
		}
		q.Set("cursor", next)
	}
	// Ascending, inside the window, the newest `limit`.
	out := make([]seriesPoint, 0, len(pts))
	seen := map[int64]bool{}
	for i := len(pts) - 1; i >= 0; i-- {
		x := pts[i]
		if seen[x.Time] || (sr.GetStartTime() > 0 && x.Time < sr.GetStartTime()) || (sr.GetEndTime() > 0 && x.Time > sr.GetEndTime()) {
			continue
		}
		seen[x.Time] = true
		out = append(out, x)
	}
	// Bybit sends newest first; keep ascending even if a page came out of order.
	slices.SortFunc(out, func(a, b seriesPoint) int { return cmp.Compare(a.Time, b.Time) })
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return in, out, nil
}

// GetOpenInterestHistory reads open-interest (base coin); the value is the amount at the current mark price.
func (s *Server) GetOpenInterestHistory(ctx context.Context, req *exchangev1.GetOpenInterestHistoryRequest) (*exchangev1.GetOpenInterestHistoryResponse, error) {
	in, pts, err := s.series(ctx, pathMarketOpenInterest, "intervalTime", openInterestPageLimit, req.GetSeries(), ParseOpenInterest)
	if err != nil {
		return nil, err
	}
	mark := decimal.Zero
	if r, _, err := s.linearTicker(ctx, in); err == nil {
		mark, _, _ = parseDec("markPrice", r.MarkPrice)
	} else {
		s.log.Warn("bybit: mark price for open interest value", "symbol", in.Symbol, "error", err)
	}
	out := &exchangev1.GetOpenInterestHistoryResponse{}
	for _, p := range pts {
		pt := &exchangev1.OpenInterestPoint{Time: p.Time, OpenInterest: canon(p.Values[0])}
		if mark.IsPositive() {
			pt.OpenInterestValue = canon(p.Values[0].Mul(mark).Round(8))
		}
		out.Points = append(out.Points, pt)
	}
	return out, nil
}

// GetLongShortRatioHistory reads account-ratio: long = buyRatio, short = sellRatio, ratio = buy / sell.
func (s *Server) GetLongShortRatioHistory(ctx context.Context, req *exchangev1.GetLongShortRatioHistoryRequest) (*exchangev1.GetLongShortRatioHistoryResponse, error) {
	switch req.GetKind() {
	case exchangev1.LongShortRatioKind_LONG_SHORT_RATIO_KIND_ACCOUNTS, exchangev1.LongShortRatioKind_LONG_SHORT_RATIO_KIND_UNSPECIFIED:
	default:
		return nil, sdk.NotSupported("long/short ratio " + req.GetKind().String())
	}
	_, pts, err := s.series(ctx, pathMarketAccountRatio, "period", accountRatioPageLimit, req.GetSeries(), ParseAccountRatio)
	if err != nil {
		return nil, err
	}
	out := &exchangev1.GetLongShortRatioHistoryResponse{}
	for _, p := range pts {
		buy, sell := p.Values[0], p.Values[1]
		pt := &exchangev1.LongShortRatioPoint{Time: p.Time, LongRatio: canon(buy), ShortRatio: canon(sell)}
		if sell.IsPositive() {
			pt.LongShortRatio = canon(buy.DivRound(sell, 8))
		}
		out.Points = append(out.Points, pt)
	}
	return out, nil
}

// GetTakerVolumeHistory is NOT_SUPPORTED: Bybit's v5 market API publishes no taker buy/sell volume series.
func (s *Server) GetTakerVolumeHistory(context.Context, *exchangev1.GetTakerVolumeHistoryRequest) (*exchangev1.GetTakerVolumeHistoryResponse, error) {
	return nil, sdk.NotSupported("taker volume history (Bybit publishes none)")
}

// LookupInstrument returns the live instrument (INSTRUMENT_NOT_FOUND otherwise), for Go callers.
func (s *Server) LookupInstrument(ctx context.Context, mt exchangev1.MarketType, symbol string) (*Instrument, error) {
	return s.instrument(ctx, mt, symbol)
}
