package binance

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// GetServerTime returns Binance's spot server time.
func (s *Server) GetServerTime(ctx context.Context, _ *exchangev1.GetServerTimeRequest) (*exchangev1.GetServerTimeResponse, error) {
	c, _ := s.client()
	t, err := call(ctx, c, rest{m: Spot, path: pathSpotTime, weight: 1, what: "time"}, ParseServerTime)
	if err != nil {
		return nil, err
	}
	return &exchangev1.GetServerTimeResponse{Time: t}, nil
}

// loadInstruments returns the cached instrument list of a market, refreshing it after instrumentTTL.
func (s *Server) loadInstruments(ctx context.Context, m Market) (*instrumentCache, error) {
	s.mu.RLock()
	cache := s.instruments[m]
	fresh := cache.loaded && time.Since(cache.at) < instrumentTTL
	c := s.rest
	s.mu.RUnlock()
	if fresh {
		return cache, nil
	}
	path, weight := pathSpotExchangeInfo, 20
	if m == Futures {
		path, weight = pathFutExchangeInfo, 1
	}
	info, err := call(ctx, c, rest{m: m, path: path, weight: weight, what: "exchangeInfo"}, inMarket(m, ParseExchangeInfo))
	if err != nil {
		return nil, err
	}
	c.ApplyRateLimits(m, info.RateLimits)
	nc := &instrumentCache{at: time.Now(), list: info.Instruments, bySym: map[string]*exchangev1.Instrument{}, loaded: true}
	for _, in := range info.Instruments {
		nc.bySym[in.Symbol] = in
	}
	s.mu.Lock()
	if s.rest == c {
		s.instruments[m] = nc
	}
	s.mu.Unlock()
	return nc, nil
}

// instrument resolves a symbol or fails with INSTRUMENT_NOT_FOUND.
func (s *Server) instrument(ctx context.Context, mt exchangev1.MarketType, symbol string) (Market, *exchangev1.Instrument, error) {
	m, err := marketOf(mt)
	if err != nil {
		return 0, nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "market_type", "%v", err)
	}
	if symbol == "" {
		return 0, nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "symbol", "symbol is required")
	}
	cache, err := s.loadInstruments(ctx, m)
	if err != nil {
		return 0, nil, err
	}
	in, ok := cache.bySym[symbol]
	if !ok {
		return 0, nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND, "symbol", "%s %s is not listed", m, symbol)
	}
	return m, in, nil
}

// ListInstruments lists spot symbols and USDT-M perpetuals.
func (s *Server) ListInstruments(ctx context.Context, req *exchangev1.ListInstrumentsRequest) (*exchangev1.ListInstrumentsResponse, error) {
	markets := []Market{Spot, Futures}
	if req.GetMarketType() != exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED {
		m, err := marketOf(req.GetMarketType())
		if err != nil {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "market_type", "%v", err)
		}
		markets = []Market{m}
	}
	out := &exchangev1.ListInstrumentsResponse{}
	for _, m := range markets {
		cache, err := s.loadInstruments(ctx, m)
		if err != nil {
			return nil, err
		}
		for _, in := range cache.list {
			if req.GetSymbol() == "" || in.Symbol == req.GetSymbol() {
				out.Instruments = append(out.Instruments, in)
			}
		}
	}
	if req.GetSymbol() != "" && len(out.Instruments) == 0 {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND, "symbol", "%s is not listed", req.GetSymbol())
	}
	return out, nil
}

// GetTickers returns 24h tickers; perpetual tickers carry mark, index and funding from premiumIndex.
func (s *Server) GetTickers(ctx context.Context, req *exchangev1.GetTickersRequest) (*exchangev1.GetTickersResponse, error) {
	m, err := marketOf(req.GetMarketType())
	if err != nil {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "market_type", "%v", err)
	}
	for _, sym := range req.GetSymbols() {
		if _, _, err := s.instrument(ctx, req.GetMarketType(), sym); err != nil {
			return nil, err
		}
	}
	c, _ := s.client()
	q := url.Values{}
	path, weight := pathSpotTicker24h, 80
	if m == Futures {
		path, weight = pathFutTicker24h, 40
	}
	if len(req.GetSymbols()) == 1 {
		q.Set("symbol", req.GetSymbols()[0])
		weight = 2
		if m == Futures {
			weight = 1
		}
	}
	tickers, err := call(ctx, c, rest{m: m, path: path, q: q, weight: weight, what: "ticker/24hr"}, inMarket(m, ParseTickers24h))
	if err != nil {
		return nil, err
	}
	cache, err := s.loadInstruments(ctx, m)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, sym := range req.GetSymbols() {
		want[sym] = true
	}
	var out []*exchangev1.Ticker
	for _, t := range tickers {
		if _, listed := cache.bySym[t.Symbol]; !listed || (len(want) > 0 && !want[t.Symbol]) {
			continue
		}
		out = append(out, t)
	}
	if m == Futures && len(out) > 0 {
		pq := url.Values{}
		pw := 10
		if len(out) == 1 {
			pq.Set("symbol", out[0].Symbol)
			pw = 1
		}
		prem, err := call(ctx, c, rest{m: Futures, path: pathFutPremiumIndex, q: pq, weight: pw, what: "premiumIndex"}, ParsePremiumIndex)
		if err != nil {
			return nil, err
		}
		bySym := map[string]PremiumIndex{}
		for _, p := range prem {
			bySym[p.Symbol] = p
		}
		for _, t := range out {
			if p, ok := bySym[t.Symbol]; ok {
				t.MarkPrice, t.IndexPrice, t.FundingRate, t.NextFundingTime = p.MarkPrice, p.IndexPrice, p.LastFundingRate, p.NextFundingTime
			}
		}
	}
	return &exchangev1.GetTickersResponse{Tickers: out}, nil
}

var spotDepthLimits = []int{5, 10, 20, 50, 100, 500, 1000, 5000}

var futDepthLimits = []int{5, 10, 20, 50, 100, 500, 1000}

func depthLimit(m Market, want int) int {
	ls := spotDepthLimits
	if m == Futures {
		ls = futDepthLimits
	}
	if want <= 0 {
		want = 100
	}
	for _, l := range ls {
		if l >= want {
			return l
		}
	}
	return ls[len(ls)-1]
}

func depthWeight(m Market, limit int) int {
	if m == Futures {
		switch {
		case limit <= 50:
			return 2
		case limit <= 100:
			return 5
		case limit <= 500:
			return 10
		}
		return 20
	}
	switch {
	case limit <= 100:
		return 5
	case limit <= 500:
		return 25
	case limit <= 1000:
		return 50
	}
	return 250
}

func (s *Server) fetchDepth(ctx context.Context, m Market, symbol string, limit int) (*Depth, error) {
	c, _ := s.client()
	path := pathSpotDepth
	if m == Futures {
		path = pathFutDepth
	}
	l := depthLimit(m, limit)
	d, err := call(ctx, c, rest{m: m, path: path, q: url.Values{"symbol": {symbol}, "limit": {strconv.Itoa(l)}}, weight: depthWeight(m, l), what: "depth"}, ParseDepth)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// GetOrderBook returns a REST depth snapshot cut to the requested depth.
func (s *Server) GetOrderBook(ctx context.Context, req *exchangev1.GetOrderBookRequest) (*exchangev1.GetOrderBookResponse, error) {
	m, _, err := s.instrument(ctx, req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	depth := int(req.GetDepth())
	if depth <= 0 {
		depth = 100
	}
	d, err := s.fetchDepth(ctx, m, req.GetSymbol(), depth)
	if err != nil {
		return nil, err
	}
	bids, asks := d.Bids, d.Asks
	if len(bids) > depth {
		bids = bids[:depth]
	}
	if len(asks) > depth {
		asks = asks[:depth]
	}
	t := d.Time
	if t == 0 {
		t = time.Now().UnixMilli()
	}
	return &exchangev1.GetOrderBookResponse{Book: &exchangev1.OrderBook{Symbol: req.GetSymbol(), MarketType: req.GetMarketType(),
		Bids: bids, Asks: asks, Sequence: d.LastUpdateID, Time: t}}, nil
}

// GetCandles pages by end time: the newest `limit` candles opening at or before end_time, ascending.
func (s *Server) GetCandles(ctx context.Context, req *exchangev1.GetCandlesRequest) (*exchangev1.GetCandlesResponse, error) {
	m, _, err := s.instrument(ctx, req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	if !validInterval(m, req.GetInterval()) {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "interval", "interval %q is not offered for %s", req.GetInterval(), m)
	}
	max, path := SpotKlineLimit, pathSpotKlines
	if m == Futures {
		max, path = FuturesKlineLimit, pathFutKlines
	}
	limit := int(req.GetLimit())
	if limit <= 0 || limit > max {
		limit = max
	}
	q := url.Values{"symbol": {req.GetSymbol()}, "interval": {req.GetInterval()}, "limit": {strconv.Itoa(limit)}}
	// endTime and limit, never startTime: from startTime Binance answers the OLDEST page of the range, and the
	// contract asks for the newest. Candles before start_time are dropped below.
	if req.GetEndTime() > 0 {
		q.Set("endTime", strconv.FormatInt(req.GetEndTime(), 10))
	}
	weight := 2
	if m == Futures {
		switch {
		case limit < 100:
			weight = 1
		case limit < 500:
			weight = 2
		case limit <= 1000:
			weight = 5
		default:
			weight = 10
		}
	}
	c, _ := s.client()
	ks, err := call(ctx, c, rest{m: m, path: path, q: q, weight: weight, what: "klines"},
		func(b []byte) ([]*exchangev1.Candle, error) { return ParseKlines(b, time.Now().UnixMilli()) })
	if err != nil {
		return nil, err
	}
	out := ks[:0]
	for _, k := range ks {
		if (req.GetEndTime() == 0 || k.OpenTime <= req.GetEndTime()) && k.OpenTime >= req.GetStartTime() {
			out = append(out, k)
		}
	}
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return &exchangev1.GetCandlesResponse{Candles: out}, nil
}

// GetTrades returns recent trades, oldest first.
func (s *Server) GetTrades(ctx context.Context, req *exchangev1.GetTradesRequest) (*exchangev1.GetTradesResponse, error) {
	m, _, err := s.instrument(ctx, req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	limit := int(req.GetLimit())
	if limit <= 0 || limit > TradesLimit {
		limit = TradesLimit
	}
	path, weight := pathSpotTrades, 25
	if m == Futures {
		path, weight = pathFutTrades, 5
	}
	c, _ := s.client()
	ts, err := call(ctx, c, rest{m: m, path: path, q: url.Values{"symbol": {req.GetSymbol()}, "limit": {strconv.Itoa(limit)}}, weight: weight, what: "trades"}, ParseTrades)
	if err != nil {
		return nil, err
	}
	if len(ts) > limit {
		ts = ts[len(ts)-limit:]
	}
	return &exchangev1.GetTradesResponse{Trades: ts}, nil
}

func (s *Server) perp(ctx context.Context, symbol string) error {
	_, _, err := s.instrument(ctx, exchangev1.MarketType_MARKET_TYPE_SWAP, symbol)
	return err
}

// GetFundingRate returns the predicted rate of the next settlement from premiumIndex.
func (s *Server) GetFundingRate(ctx context.Context, req *exchangev1.GetFundingRateRequest) (*exchangev1.GetFundingRateResponse, error) {
	if err := s.perp(ctx, req.GetSymbol()); err != nil {
		return nil, err
	}
	c, _ := s.client()
	ps, err := call(ctx, c, rest{m: Futures, path: pathFutPremiumIndex, q: url.Values{"symbol": {req.GetSymbol()}}, weight: 1, what: "premiumIndex"},
		func(b []byte) ([]PremiumIndex, error) { return one(ParsePremiumIndex(b)) })
	if err != nil {
		return nil, err
	}
	p := ps[0]
	return &exchangev1.GetFundingRateResponse{Symbol: p.Symbol, Rate: p.LastFundingRate, NextFundingTime: p.NextFundingTime,
		IntervalHours: 8, MarkPrice: p.MarkPrice, IndexPrice: p.IndexPrice}, nil
}

// GetFundingRateHistory returns settled funding rates, ascending.
func (s *Server) GetFundingRateHistory(ctx context.Context, req *exchangev1.GetFundingRateHistoryRequest) (*exchangev1.GetFundingRateHistoryResponse, error) {
	if err := s.perp(ctx, req.GetSymbol()); err != nil {
		return nil, err
	}
	limit := int(req.GetLimit())
	if limit <= 0 || limit > FundingHistoryLimit {
		limit = FundingHistoryLimit
	}
	q := url.Values{"symbol": {req.GetSymbol()}, "limit": {strconv.Itoa(limit)}}
	setWindow(q, 0, req.GetEndTime()) // the newest page up to end_time; see GetCandles
	c, _ := s.client()
	rs, err := call(ctx, c, rest{m: Futures, path: pathFutFundingRate, q: q, weight: 1, what: "fundingRate"}, ParseFundingRates)
	if err != nil {
		return nil, err
	}
	rs = slices.DeleteFunc(rs, func(r *exchangev1.FundingRate) bool {
		return r.GetFundingTime() < req.GetStartTime() || (req.GetEndTime() > 0 && r.GetFundingTime() > req.GetEndTime())
	})
	if len(rs) > limit {
		rs = rs[len(rs)-limit:]
	}
	return &exchangev1.GetFundingRateHistoryResponse{Rates: rs}, nil
}

func setWindow(q url.Values, start, end int64) {
	if start > 0 {
		q.Set("startTime", strconv.FormatInt(start, 10))
	}
	if end > 0 {
		q.Set("endTime", strconv.FormatInt(end, 10))
	}
}

func (s *Server) series(ctx context.Context, sr *exchangev1.SeriesRequest, path string) ([]byte, error) {
	if err := s.perp(ctx, sr.GetSymbol()); err != nil {
		return nil, err
	}
	if !validPeriod(sr.GetPeriod()) {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "period", "period %q is not one of %v", sr.GetPeriod(), Periods)
	}
	limit := int(sr.GetLimit())
	if limit <= 0 || limit > FuturesDataLimit {
		limit = FuturesDataLimit
	}
	q := url.Values{"symbol": {sr.GetSymbol()}, "period": {sr.GetPeriod()}, "limit": {strconv.Itoa(limit)}}
	setWindow(q, 0, sr.GetEndTime()) // the newest page up to end_time; see GetCandles
	c, _ := s.client()
	return c.get(ctx, Futures, path, q, 0)
}

// seriesWindow keeps the points of a series request's window, the newest `limit`, ascending.
func seriesWindow[T any](sr *exchangev1.SeriesRequest, ps []T, timeOf func(T) int64) []T {
	ps = slices.DeleteFunc(ps, func(p T) bool {
		t := timeOf(p)
		return t < sr.GetStartTime() || (sr.GetEndTime() > 0 && t > sr.GetEndTime())
	})
	limit := int(sr.GetLimit())
	if limit <= 0 || limit > FuturesDataLimit {
		limit = FuturesDataLimit
	}
	if len(ps) > limit {
		ps = ps[len(ps)-limit:]
	}
	return ps
}

// GetOpenInterestHistory: /futures/data/openInterestHist.
func (s *Server) GetOpenInterestHistory(ctx context.Context, req *exchangev1.GetOpenInterestHistoryRequest) (*exchangev1.GetOpenInterestHistoryResponse, error) {
	body, err := s.series(ctx, req.GetSeries(), pathFutOIHist)
	if err != nil {
		return nil, err
	}
	ps, err := ParseOpenInterestHist(body)
	if err != nil {
		return nil, parseErr("openInterestHist", err)
	}
	ps = seriesWindow(req.GetSeries(), ps, func(p *exchangev1.OpenInterestPoint) int64 { return p.GetTime() })
	return &exchangev1.GetOpenInterestHistoryResponse{Points: ps}, nil
}

// GetLongShortRatioHistory: global accounts, top accounts or top positions.
func (s *Server) GetLongShortRatioHistory(ctx context.Context, req *exchangev1.GetLongShortRatioHistoryRequest) (*exchangev1.GetLongShortRatioHistoryResponse, error) {
	var path string
	switch req.GetKind() {
	case exchangev1.LongShortRatioKind_LONG_SHORT_RATIO_KIND_ACCOUNTS:
		path = pathFutGlobalLS
	case exchangev1.LongShortRatioKind_LONG_SHORT_RATIO_KIND_TOP_ACCOUNTS:
		path = pathFutTopAccLS
	case exchangev1.LongShortRatioKind_LONG_SHORT_RATIO_KIND_TOP_POSITIONS:
		path = pathFutTopPosLS
	default:
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "kind", "kind is required")
	}
	body, err := s.series(ctx, req.GetSeries(), path)
	if err != nil {
		return nil, err
	}
	ps, err := ParseLongShortRatio(body)
	if err != nil {
		return nil, parseErr("longShortRatio", err)
	}
	ps = seriesWindow(req.GetSeries(), ps, func(p *exchangev1.LongShortRatioPoint) int64 { return p.GetTime() })
	return &exchangev1.GetLongShortRatioHistoryResponse{Points: ps}, nil
}

// GetTakerVolumeHistory: /futures/data/takerlongshortRatio (perpetuals only).
func (s *Server) GetTakerVolumeHistory(ctx context.Context, req *exchangev1.GetTakerVolumeHistoryRequest) (*exchangev1.GetTakerVolumeHistoryResponse, error) {
	if mt := req.GetMarketType(); mt == exchangev1.MarketType_MARKET_TYPE_SPOT {
		return nil, sdk.NotSupported("spot taker volume history")
	}
	body, err := s.series(ctx, req.GetSeries(), pathFutTakerVol)
	if err != nil {
		return nil, err
	}
	ps, err := ParseTakerVolume(body)
	if err != nil {
		return nil, parseErr("takerlongshortRatio", err)
	}
	ps = seriesWindow(req.GetSeries(), ps, func(p *exchangev1.TakerVolumePoint) int64 { return p.GetTime() })
	return &exchangev1.GetTakerVolumeHistoryResponse{Points: ps}, nil
}
