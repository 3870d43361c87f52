package okx

import (
	"context"
	"math"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// instrumentCache keeps the live instruments per instType, refreshed after a TTL or on a miss.
type instrumentCache struct {
	mu    sync.Mutex
	byTyp map[string]map[string]*Instrument
	order map[string][]*Instrument
	at    map[string]time.Time
	ttl   time.Duration
}

func newInstrumentCache() *instrumentCache {
	return &instrumentCache{byTyp: map[string]map[string]*Instrument{}, order: map[string][]*Instrument{},
		at: map[string]time.Time{}, ttl: 5 * time.Minute}
}

// list returns the instruments of a type, fetching when stale or forced.
func (s *Server) instruments(ctx context.Context, instType string, force bool) ([]*Instrument, error) {
	c := s.cache()
	c.mu.Lock()
	if !force && time.Since(c.at[instType]) < c.ttl && c.order[instType] != nil {
		out := c.order[instType]
		c.mu.Unlock()
		return out, nil
	}
	c.mu.Unlock()
	data, err := s.client().Get(ctx, pathPublicInstruments, url.Values{"instType": {instType}}, nil)
	if err != nil {
		return nil, err
	}
	list, err := ParseInstruments(data)
	if err != nil {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "instruments: %v", err)
	}
	m := make(map[string]*Instrument, len(list))
	for _, in := range list {
		m[in.InstID] = in
	}
	c.mu.Lock()
	c.byTyp[instType], c.order[instType], c.at[instType] = m, list, time.Now()
	c.mu.Unlock()
	return list, nil
}

// instrument finds one instrument; an unknown symbol is INSTRUMENT_NOT_FOUND. An UNSPECIFIED market type is
// inferred from the symbol.
func (s *Server) instrument(ctx context.Context, mt exchangev1.MarketType, symbol string) (*Instrument, error) {
	if symbol == "" {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "symbol", "symbol is required")
	}
	if mt == exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED {
		mt = marketTypeOfSymbol(symbol)
	}
	it, err := instTypeOf(mt)
	if err != nil {
		return nil, err
	}
	for _, force := range []bool{false, true} {
		if _, err := s.instruments(ctx, it, force); err != nil {
			return nil, err
		}
		c := s.cache()
		c.mu.Lock()
		in := c.byTyp[it][symbol]
		c.mu.Unlock()
		if in != nil {
			return in, nil
		}
		if !force && time.Since(c.at[it]) < 5*time.Second {
			break // just fetched: a miss is final
		}
	}
	return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND, "symbol", "no live %v instrument %q on OKX", mt, symbol)
}

func (s *Server) serverTime(ctx context.Context) (int64, error) {
	row, err := callOne[rawTime](ctx, s, pathPublicTime, nil, nil)
	if err != nil {
		return 0, err
	}
	ts, err := parseMs("ts", row.Ts)
	if err != nil {
		return 0, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "time: %v", err)
	}
	return ts, nil
}

// GetServerTime returns OKX's clock.
func (s *Server) GetServerTime(ctx context.Context, _ *exchangev1.GetServerTimeRequest) (*exchangev1.GetServerTimeResponse, error) {
	ts, err := s.serverTime(ctx)
	if err != nil {
		return nil, err
	}
	return &exchangev1.GetServerTimeResponse{Time: ts}, nil
}

// ListInstruments lists live SPOT and SWAP instruments in base units.
func (s *Server) ListInstruments(ctx context.Context, req *exchangev1.ListInstrumentsRequest) (*exchangev1.ListInstrumentsResponse, error) {
	mts := []exchangev1.MarketType{req.GetMarketType()}
	if req.GetMarketType() == exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED {
		mts = []exchangev1.MarketType{exchangev1.MarketType_MARKET_TYPE_SPOT, exchangev1.MarketType_MARKET_TYPE_SWAP}
	}
	out := &exchangev1.ListInstrumentsResponse{}
	for _, mt := range mts {
		it, err := instTypeOf(mt)
		if err != nil {
			return nil, err
		}
		list, err := s.instruments(ctx, it, false)
		if err != nil {
			return nil, err
		}
		for _, in := range list {
			if req.GetSymbol() == "" || req.GetSymbol() == in.InstID {
				out.Instruments = append(out.Instruments, in.Proto())
			}
		}
	}
	return out, nil
}

// GetTickers returns tickers; for SWAP it adds mark and index prices, open interest, and the funding rate with the
// next funding time (from a bounded cache, see funding.go). Those extras are best effort: a failing one is logged
// and left empty.
func (s *Server) GetTickers(ctx context.Context, req *exchangev1.GetTickersRequest) (*exchangev1.GetTickersResponse, error) {
	mt := req.GetMarketType()
	if mt == exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "market_type", "market_type is required")
	}
	it, err := instTypeOf(mt)
	if err != nil {
		return nil, err
	}
	list, err := s.instruments(ctx, it, false)
	if err != nil {
		return nil, err
	}
	insts := make(map[string]*Instrument, len(list))
	for _, in := range list {
		insts[in.InstID] = in
	}
	want := map[string]bool{}
	for _, sym := range req.GetSymbols() {
		want[sym] = true
	}
	var (
		rows  []rawTicker
		marks = map[string]string{}
		index = map[string]string{}
		ois   = map[string]decimal.Decimal{}
		mu    sync.Mutex
	)
	g := &group{}
	gctx := ctx
	c := s.client()
	g.Go(func() error {
		var data []byte
		var err error
		if len(want) == 1 {
			data, err = c.Get(gctx, pathMarketTicker, url.Values{"instId": {req.GetSymbols()[0]}}, nil)
		} else {
			data, err = c.Get(gctx, pathMarketTickers, url.Values{"instType": {it}}, nil)
		}
		if err != nil {
			return err
		}
		r, err := ParseTickers(data)
		if err != nil {
			return sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "tickers: %v", err)
		}
		rows = r
		return nil
	})
	if mt == exchangev1.MarketType_MARKET_TYPE_SWAP {
		best := func(name string, f func() error) {
			g.Go(func() error {
				if err := f(); err != nil {
					s.log.Warn("okx: ticker extra failed", "what", name, "error", err)
				}
				return nil
			})
		}
		best("mark-price", func() error {
			rs, err := call[rawMark](gctx, s, pathPublicMarkPrice, url.Values{"instType": {instSwap}}, nil)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			for _, r := range rs {
				marks[r.InstID] = r.MarkPx
			}
			return nil
		})
		best("index-tickers", func() error {
			rs, err := call[rawIndex](gctx, s, pathMarketIndexTickers, url.Values{"quoteCcy": {"USDT"}}, nil)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			for _, r := range rs {
				index[r.InstID] = r.IdxPx
			}
			return nil
		})
		best("open-interest", func() error {
			rs, err := call[rawOpenInterest](gctx, s, pathPublicOpenInterest, url.Values{"instType": {instSwap}}, nil)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			for _, r := range rs {
				if d, ok, err := parseDec("oiCcy", r.OiCcy); err == nil && ok {
					ois[r.InstID] = d
				} else if d, ok, err := parseDec("oi", r.Oi); err == nil && ok && insts[r.InstID] != nil {
					ois[r.InstID] = d.Mul(insts[r.InstID].ContractSize)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := &exchangev1.GetTickersResponse{}
	for _, r := range rows {
		in := insts[r.InstID]
		if in == nil || (len(want) > 0 && !want[r.InstID]) {
			continue
		}
		t, err := tickerProto(r, in)
		if err != nil {
			return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "ticker %s: %v", r.InstID, err)
		}
		if v, err := canonStr("markPx", marks[r.InstID]); err == nil {
			t.MarkPrice = v
		}
		if v, err := canonStr("idxPx", index[in.Family]); err == nil {
			t.IndexPrice = v
		}
		if oi, ok := ois[r.InstID]; ok {
			t.OpenInterest = canon(oi)
		}
		out.Tickers = append(out.Tickers, t)
	}
	if mt == exchangev1.MarketType_MARKET_TYPE_SWAP {
		// Funding rates: refresh a bounded few (see funding.go), then fill every ticker with a fresh one.
		fc := s.fundingRates()
		volumes := make(map[string]decimal.Decimal, len(out.Tickers))
		for _, t := range out.Tickers {
			v, _, _ := parseDec("volCcy24h", t.GetQuoteVolume_24H())
			volumes[t.GetSymbol()] = v
		}
		s.refreshFunding(ctx, fc.candidates(want, volumes, fundingPerCall))
		for _, t := range out.Tickers {
			fc.fill(t)
		}
	}
	return out, nil
}

// GetOrderBook returns up to depth levels (OKX's maximum is 400) in base units.
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
	data, err := s.client().Get(ctx, pathMarketBooks, url.Values{"instId": {in.InstID}, "sz": {strconv.Itoa(depth)}}, nil)
	if err != nil {
		return nil, err
	}
	rows, err := ParseBooks(data)
	if err != nil || len(rows) == 0 {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "books %s: malformed response: %v", in.InstID, err)
	}
	var b Book
	b.Reset(rows[0])
	bids, asks := b.Levels(depth, in.ContractSize)
	ts, _ := parseMs("ts", rows[0].Ts)
	seq := ts
	if rows[0].SeqID != nil {
		seq = *rows[0].SeqID
	}
	return &exchangev1.GetOrderBookResponse{Book: &exchangev1.OrderBook{Symbol: in.InstID, MarketType: in.MarketType,
		Bids: bids, Asks: asks, Sequence: seq, Time: ts}}, nil
}

// GetCandles returns the newest `limit` candles with open time <= end_time, ascending. It reads the recent window
// (/market/candles, 300 per call) and continues in /market/history-candles (100 per call), paging with `after`.
func (s *Server) GetCandles(ctx context.Context, req *exchangev1.GetCandlesRequest) (*exchangev1.GetCandlesResponse, error) {
	in, err := s.instrument(ctx, req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	bar, ok := barOf[req.GetInterval()]
	if !ok {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "interval", "interval %q is not offered", req.GetInterval())
	}
	limit := int(req.GetLimit())
	if limit <= 0 || limit > candlesPageLimit {
		limit = candlesPageLimit
	}
	after := int64(math.MaxInt64)
	if req.GetEndTime() > 0 {
		after = req.GetEndTime() + 1 // OKX's after is exclusive: records older than it
	}
	var got []*exchangev1.Candle
	path, pageMax := pathMarketCandles, candlesPageLimit
	for len(got) < limit {
		q := url.Values{"instId": {in.InstID}, "bar": {bar}, "limit": {strconv.Itoa(min(pageMax, limit-len(got)))}}
		if req.GetEndTime() > 0 || len(got) > 0 {
			q.Set("after", msStr(after))
		}
		if req.GetStartTime() > 0 {
			q.Set("before", msStr(req.GetStartTime()-1))
		}
		data, err := s.client().Get(ctx, path, q, nil)
		if err != nil {
			return nil, err
		}
		page, err := ParseCandles(data, in.MarketType)
		if err != nil {
			return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "candles %s: %v", in.InstID, err)
		}
		var fresh []*exchangev1.Candle
		for _, c := range page {
			if c.OpenTime < after && c.OpenTime >= req.GetStartTime() {
				fresh = append(fresh, c)
			}
		}
		if len(fresh) == 0 {
			if path == pathMarketHistoryCandles {
				break
			}
			path, pageMax = pathMarketHistoryCandles, historyCandlesPageLimit
			continue
		}
		got = append(fresh, got...)
		after = fresh[0].OpenTime
		if path == pathMarketCandles && len(page) < min(pageMax, limit-len(got)+len(fresh)) {
			path, pageMax = pathMarketHistoryCandles, historyCandlesPageLimit
		}
	}
	if len(got) > limit {
		got = got[len(got)-limit:]
	}
	return &exchangev1.GetCandlesResponse{Candles: got}, nil
}

// GetTrades returns recent trades ascending, sizes in base units.
func (s *Server) GetTrades(ctx context.Context, req *exchangev1.GetTradesRequest) (*exchangev1.GetTradesResponse, error) {
	in, err := s.instrument(ctx, req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	limit := int(req.GetLimit())
	if limit <= 0 || limit > tradesPageLimit {
		limit = 100
	}
	data, err := s.client().Get(ctx, pathMarketTrades, url.Values{"instId": {in.InstID}, "limit": {strconv.Itoa(limit)}}, nil)
	if err != nil {
		return nil, err
	}
	ts, err := ParseTrades(data, in.ContractSize)
	if err != nil {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "trades %s: %v", in.InstID, err)
	}
	if len(ts) > limit {
		ts = ts[len(ts)-limit:]
	}
	return &exchangev1.GetTradesResponse{Trades: ts}, nil
}

func (s *Server) fundingRate(ctx context.Context, instID string) (rawFunding, error) {
	row, err := callOne[rawFunding](ctx, s, pathPublicFundingRate, url.Values{"instId": {instID}}, nil)
	if err != nil {
		return rawFunding{}, err
	}
	return row, nil
}

func (s *Server) swap(ctx context.Context, symbol string) (*Instrument, error) {
	return s.instrument(ctx, exchangev1.MarketType_MARKET_TYPE_SWAP, symbol)
}

// GetFundingRate returns the rate for the next settlement with mark and index prices (best effort).
func (s *Server) GetFundingRate(ctx context.Context, req *exchangev1.GetFundingRateRequest) (*exchangev1.GetFundingRateResponse, error) {
	in, err := s.swap(ctx, req.GetSymbol())
	if err != nil {
		return nil, err
	}
	f, err := s.fundingRate(ctx, in.InstID)
	if err != nil {
		return nil, err
	}
	rate, err1 := canonStr("fundingRate", f.FundingRate)
	ft, err2 := parseMs("fundingTime", f.FundingTime)
	nft, err3 := parseMs("nextFundingTime", f.NextFundingTime)
	if rate == "" || err1 != nil || err2 != nil || err3 != nil {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "funding-rate %s: malformed response", in.InstID)
	}
	out := &exchangev1.GetFundingRateResponse{Symbol: in.InstID, Rate: rate, NextFundingTime: ft, IntervalHours: 8}
	if nft > ft && ft > 0 {
		out.IntervalHours = int32((nft - ft) / 3_600_000)
	}
	if data, err := s.client().Get(ctx, pathPublicMarkPrice, url.Values{"instType": {instSwap}, "instId": {in.InstID}}, nil); err == nil {
		if rs, err := decodeList[rawMark](data); err == nil && len(rs) > 0 {
			out.MarkPrice, _ = canonStr("markPx", rs[0].MarkPx)
		}
	}
	if data, err := s.client().Get(ctx, pathMarketIndexTickers, url.Values{"instId": {in.Family}}, nil); err == nil {
		if rs, err := decodeList[rawIndex](data); err == nil && len(rs) > 0 {
			out.IndexPrice, _ = canonStr("idxPx", rs[0].IdxPx)
		}
	}
	return out, nil
}

// GetFundingRateHistory pages funding-rate-history (newest first at OKX) and returns it ascending.
func (s *Server) GetFundingRateHistory(ctx context.Context, req *exchangev1.GetFundingRateHistoryRequest) (*exchangev1.GetFundingRateHistoryResponse, error) {
	in, err := s.swap(ctx, req.GetSymbol())
	if err != nil {
		return nil, err
	}
	limit := int(req.GetLimit())
	if limit <= 0 || limit > fundingHistoryLimit {
		limit = fundingHistoryLimit
	}
	q := url.Values{"instId": {in.InstID}, "limit": {strconv.Itoa(limit)}}
	if req.GetEndTime() > 0 {
		q.Set("after", msStr(req.GetEndTime()+1))
	}
	if req.GetStartTime() > 0 {
		q.Set("before", msStr(req.GetStartTime()-1))
	}
	data, err := s.client().Get(ctx, pathPublicFundingRateHistory, q, nil)
	if err != nil {
		return nil, err
	}
	rates, err := ParseFundingHistory(data)
	if err != nil {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "funding-rate-history %s: %v", in.InstID, err)
	}
	return &exchangev1.GetFundingRateHistoryResponse{Rates: rates}, nil
}

// rubik calls a rubik statistics endpoint for the swap's currency and returns ascending rows trimmed to the
// request's window and limit.
func (s *Server) rubik(ctx context.Context, path string, sr *exchangev1.SeriesRequest, extra url.Values, n int) (*Instrument, []int64, [][]decimal.Decimal, error) {
	in, err := s.swap(ctx, sr.GetSymbol())
	if err != nil {
		return nil, nil, nil, err
	}
	period := sr.GetPeriod()
	if period == "" {
		period = "5m"
	}
	p, ok := rubikPeriodOf[period]
	if !ok {
		return nil, nil, nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "period", "period %q is not offered (5m, 1h, 1d)", period)
	}
	q := url.Values{"ccy": {in.Base}, "period": {p}}
	for k, v := range extra {
		q[k] = v
	}
	if sr.GetStartTime() > 0 {
		q.Set("begin", msStr(sr.GetStartTime()))
	}
	if sr.GetEndTime() > 0 {
		q.Set("end", msStr(sr.GetEndTime()))
	}
	data, err := s.client().Get(ctx, path, q, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	ts, vs, err := ParseRubikRows(data, n)
	if err != nil {
		return nil, nil, nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "%s: %v", path, err)
	}
	lo, hi := 0, len(ts)
	for lo < hi && sr.GetStartTime() > 0 && ts[lo] < sr.GetStartTime() {
		lo++
	}
	for hi > lo && sr.GetEndTime() > 0 && ts[hi-1] > sr.GetEndTime() {
		hi--
	}
	if l := int(sr.GetLimit()); l > 0 && hi-lo > l {
		lo = hi - l
	}
	return in, ts[lo:hi], vs[lo:hi], nil
}

// GetOpenInterestHistory reads rubik's open interest and volume (USD) for the swap's currency. The base amount
// is the USD value divided by the current mark price.
func (s *Server) GetOpenInterestHistory(ctx context.Context, req *exchangev1.GetOpenInterestHistoryRequest) (*exchangev1.GetOpenInterestHistoryResponse, error) {
	in, ts, vs, err := s.rubik(ctx, pathRubikStatContractsOpenInterestVolume, req.GetSeries(), nil, 2)
	if err != nil {
		return nil, err
	}
	mark := decimal.Zero
	if data, err := s.client().Get(ctx, pathPublicMarkPrice, url.Values{"instType": {instSwap}, "instId": {in.InstID}}, nil); err == nil {
		if rs, err := decodeList[rawMark](data); err == nil && len(rs) > 0 {
			mark, _, _ = parseDec("markPx", rs[0].MarkPx)
		}
	}
	out := &exchangev1.GetOpenInterestHistoryResponse{}
	for i := range ts {
		p := &exchangev1.OpenInterestPoint{Time: ts[i], OpenInterestValue: canon(vs[i][0]), OpenInterest: "0"}
		if mark.IsPositive() {
			p.OpenInterest = canon(vs[i][0].DivRound(mark, 8))
		}
		out.Points = append(out.Points, p)
	}
	return out, nil
}

// GetLongShortRatioHistory reads rubik's long/short account ratio; long = r/(1+r), short = 1/(1+r).
func (s *Server) GetLongShortRatioHistory(ctx context.Context, req *exchangev1.GetLongShortRatioHistoryRequest) (*exchangev1.GetLongShortRatioHistoryResponse, error) {
	switch req.GetKind() {
	case exchangev1.LongShortRatioKind_LONG_SHORT_RATIO_KIND_ACCOUNTS, exchangev1.LongShortRatioKind_LONG_SHORT_RATIO_KIND_UNSPECIFIED:
	default:
		return nil, sdk.NotSupported("long/short ratio " + req.GetKind().String())
	}
	_, ts, vs, err := s.rubik(ctx, pathRubikStatContractsLongShortAccountRatio, req.GetSeries(), nil, 1)
	if err != nil {
		return nil, err
	}
	one := decimal.NewFromInt(1)
	out := &exchangev1.GetLongShortRatioHistoryResponse{}
	for i := range ts {
		r := vs[i][0]
		long := r.DivRound(one.Add(r), 8)
		out.Points = append(out.Points, &exchangev1.LongShortRatioPoint{Time: ts[i], LongShortRatio: canon(r),
			LongRatio: canon(long), ShortRatio: canon(one.Sub(long))})
	}
	return out, nil
}

// GetTakerVolumeHistory reads rubik's taker volume rows [ts, sellVol, buyVol].
func (s *Server) GetTakerVolumeHistory(ctx context.Context, req *exchangev1.GetTakerVolumeHistoryRequest) (*exchangev1.GetTakerVolumeHistoryResponse, error) {
	it := instContracts
	if req.GetMarketType() == exchangev1.MarketType_MARKET_TYPE_SPOT {
		it = instSpot
	}
	_, ts, vs, err := s.rubik(ctx, pathRubikStatTakerVolume, req.GetSeries(), url.Values{"instType": {it}}, 2)
	if err != nil {
		return nil, err
	}
	out := &exchangev1.GetTakerVolumeHistoryResponse{}
	for i := range ts {
		sell, buy := vs[i][0], vs[i][1]
		p := &exchangev1.TakerVolumePoint{Time: ts[i], BuyVolume: canon(buy), SellVolume: canon(sell)}
		if sell.IsPositive() {
			p.BuySellRatio = canon(buy.DivRound(sell, 8))
		}
		out.Points = append(out.Points, p)
	}
	return out, nil
}

// group runs functions concurrently and keeps the first error; Wait waits for all of them.
type group struct {
	wg  sync.WaitGroup
	mu  sync.Mutex
	err error
}

func (g *group) Go(f func() error) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		if err := f(); err != nil {
			g.mu.Lock()
			if g.err == nil {
				g.err = err
			}
			g.mu.Unlock()
		}
	}()
}

func (g *group) Wait() error {
	g.wg.Wait()
	return g.err
}

// LookupInstrument returns the live instrument (INSTRUMENT_NOT_FOUND otherwise); for Go callers such as PlaceOCO.
func (s *Server) LookupInstrument(ctx context.Context, mt exchangev1.MarketType, symbol string) (*Instrument, error) {
	return s.instrument(ctx, mt, symbol)
}
