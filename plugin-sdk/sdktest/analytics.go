package sdktest

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// The derivatives series are pure functions of (seed, symbol, time): asking twice gives the same answer, and any
// window can be computed without storing anything. Taker volume is the exception: it sums the bars, so it agrees
// with the candles.

const fundingIntervalMs = 8 * hourMs

func hashOf(parts ...any) uint64 {
	h := fnv.New64a()
	_, _ = fmt.Fprint(h, parts...)
	return h.Sum64()
}

// nextFunding is the next settlement after t: with the default interval the next 00:00/08:00/16:00 UTC. Past
// settlements (GetFundingRateHistory) keep the 8-hour grid.
func (s *Server) nextFunding(t int64) int64 {
	return s.fundingBoundary(t) + s.opts.FundingInterval.Milliseconds()
}

// fundingBoundary is the latest settlement time at or before t.
func (s *Server) fundingBoundary(t int64) int64 {
	iv := s.opts.FundingInterval.Milliseconds()
	return t / iv * iv
}

type markInfo struct {
	mark, index, fundingRate decimal.Decimal
}

// markOf is a SWAP instrument's mark price (mid of the live book), index price (the underlying) and predicted funding rate.
func (s *Server) markOf(in *instrument) markInfo {
	mid := in.mid()
	bid, okb := in.bestOpposite(exchangev1.Side_SIDE_SELL)
	ask, oka := in.bestOpposite(exchangev1.Side_SIDE_BUY)
	if okb && oka {
		mid = (bid + ask) / 2 // the live book, not the last published one: ticks mark positions before publishing
	}
	index := decimal.New(in.und.price, 0).Div(decimal.NewFromInt(unitsPerUSDT)).Div(in.tick).Round(0).Mul(in.tick)
	return markInfo{
		mark:        in.price(mid),
		index:       index,
		fundingRate: decimal.New(100+in.premiumBps*25, -6),
	}
}

// closeAt is the close of the bar containing t, or the oldest bar's open before history.
func (in *instrument) closeAt(t int64) int64 {
	i := in.barIndex(t)
	switch {
	case i < 0:
		return in.bars[0].open
	case i >= len(in.bars):
		return in.bars[len(in.bars)-1].close
	default:
		return in.bars[i].close
	}
}

// openInterestSteps is the open interest at t: a slow three-day wave plus noise around a base size.
func openInterestSteps(seed int64, in *instrument, t int64) int64 {
	base := in.spec.levelQty * 2_000
	const wave = 72 * hourMs
	phase := (t % wave) * 200 / wave // 0..199
	tri := phase
	if tri > 100 {
		tri = 200 - tri
	}
	noise := int64(hashOf(seed, in.key, "oi", t/(5*minuteMs))%41) - 20 // ±2 %
	return base * (900 + tri + noise) / 1000
}

// seriesTimes is the bucket open times of a series window: the newest `limit` in [start, end], ascending.
func (s *Server) seriesTimes(in *instrument, req *exchangev1.SeriesRequest, now int64) ([]int64, error) {
	iv, err := lookupInterval("period", req.GetPeriod(), periods)
	if err != nil {
		return nil, err
	}
	limit, err := pageLimit(req.GetLimit(), 30, 500)
	if err != nil {
		return nil, err
	}
	end := req.GetEndTime()
	if end == 0 || end > now {
		end = now
	}
	start := max(req.GetStartTime(), in.firstMinute)
	var out []int64
	for t := iv.align(end); t >= start && len(out) < limit; t = iv.prev(t) {
		out = append(out, t)
	}
	slices.Reverse(out)
	return out, nil
}

func (s *Server) seriesInstrument(req *exchangev1.SeriesRequest) (*instrument, error) {
	if req == nil {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "series", "series is required")
	}
	return s.swapInstrument(req.GetSymbol())
}

// GetFundingRate returns the predicted rate of the next settlement.
func (s *Server) GetFundingRate(_ context.Context, req *exchangev1.GetFundingRateRequest) (*exchangev1.GetFundingRateResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, err := s.swapInstrument(req.GetSymbol())
	if err != nil {
		return nil, err
	}
	m := s.markOf(in)
	return &exchangev1.GetFundingRateResponse{
		Symbol: in.info.Symbol, Rate: m.fundingRate.String(), NextFundingTime: s.nextFunding(s.nowMs()),
		IntervalHours: 8, MarkPrice: m.mark.String(), IndexPrice: m.index.String(),
	}, nil
}

// GetFundingRateHistory returns past settlements, ascending.
func (s *Server) GetFundingRateHistory(_ context.Context, req *exchangev1.GetFundingRateHistoryRequest) (*exchangev1.GetFundingRateHistoryResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, err := s.swapInstrument(req.GetSymbol())
	if err != nil {
		return nil, err
	}
	limit, err := pageLimit(req.GetLimit(), 100, 1000)
	if err != nil {
		return nil, err
	}
	now := s.nowMs()
	end := req.GetEndTime()
	if end == 0 || end > now {
		end = now
	}
	out := &exchangev1.GetFundingRateHistoryResponse{}
	for t := end / fundingIntervalMs * fundingIntervalMs; t >= req.GetStartTime() && t >= in.firstMinute && len(out.Rates) < limit; t -= fundingIntervalMs {
		rate := decimal.New(int64(hashOf(s.seed, in.key, "funding", t)%500)-150, -6)
		out.Rates = append(out.Rates, &exchangev1.FundingRate{
			Symbol: in.info.Symbol, Rate: rate.String(), FundingTime: t, MarkPrice: in.price(in.closeAt(t)).String(),
		})
	}
	slices.Reverse(out.Rates)
	return out, nil
}

// GetOpenInterestHistory returns open interest per period, ascending.
func (s *Server) GetOpenInterestHistory(_ context.Context, req *exchangev1.GetOpenInterestHistoryRequest) (*exchangev1.GetOpenInterestHistoryResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, err := s.seriesInstrument(req.GetSeries())
	if err != nil {
		return nil, err
	}
	times, err := s.seriesTimes(in, req.GetSeries(), s.nowMs())
	if err != nil {
		return nil, err
	}
	out := &exchangev1.GetOpenInterestHistoryResponse{}
	for _, t := range times {
		oi := in.qty(openInterestSteps(s.seed, in, t))
		out.Points = append(out.Points, &exchangev1.OpenInterestPoint{
			Time: t, OpenInterest: oi.String(), OpenInterestValue: oi.Mul(in.price(in.closeAt(t))).String(),
		})
	}
	return out, nil
}

// GetLongShortRatioHistory returns the long/short ratio per period, ascending; long + short = 1 exactly.
func (s *Server) GetLongShortRatioHistory(_ context.Context, req *exchangev1.GetLongShortRatioHistoryRequest) (*exchangev1.GetLongShortRatioHistoryResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, err := s.seriesInstrument(req.GetSeries())
	if err != nil {
		return nil, err
	}
	if req.GetKind() == exchangev1.LongShortRatioKind_LONG_SHORT_RATIO_KIND_UNSPECIFIED {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "kind", "kind is required")
	}
	times, err := s.seriesTimes(in, req.GetSeries(), s.nowMs())
	if err != nil {
		return nil, err
	}
	out := &exchangev1.GetLongShortRatioHistoryResponse{}
	one := decimal.NewFromInt(1)
	for _, t := range times {
		long := decimal.New(3500+int64(hashOf(s.seed, in.key, req.GetKind(), t)%3000), -4)
		short := one.Sub(long)
		out.Points = append(out.Points, &exchangev1.LongShortRatioPoint{
			Time: t, LongShortRatio: long.Div(short).Round(4).String(), LongRatio: long.String(), ShortRatio: short.String(),
		})
	}
	return out, nil
}

// GetTakerVolumeHistory sums taker buy and sell volume of the bars in each period, ascending.
func (s *Server) GetTakerVolumeHistory(_ context.Context, req *exchangev1.GetTakerVolumeHistoryRequest) (*exchangev1.GetTakerVolumeHistoryResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.GetSeries() == nil {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "series", "series is required")
	}
	mt := req.GetMarketType()
	if mt == exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED {
		mt = exchangev1.MarketType_MARKET_TYPE_SWAP
	}
	in, err := s.instrument(mt, req.GetSeries().GetSymbol())
	if err != nil {
		return nil, err
	}
	now := s.nowMs()
	times, err := s.seriesTimes(in, req.GetSeries(), now)
	if err != nil {
		return nil, err
	}
	iv, _ := lookupInterval("period", req.GetSeries().GetPeriod(), periods)
	out := &exchangev1.GetTakerVolumeHistoryResponse{}
	for _, t := range times {
		var buy, sell int64
		for i := max(in.barIndex(t), 0); i < min(in.barIndex(iv.next(t)), len(in.bars)); i++ {
			buy += in.bars[i].buyVolume
			sell += in.bars[i].volume - in.bars[i].buyVolume
		}
		ratio := decimal.Zero
		if sell > 0 {
			ratio = decimal.NewFromInt(buy).Div(decimal.NewFromInt(sell)).Round(4)
		}
		out.Points = append(out.Points, &exchangev1.TakerVolumePoint{
			Time: t, BuyVolume: in.qty(buy).String(), SellVolume: in.qty(sell).String(), BuySellRatio: ratio.String(),
		})
	}
	return out, nil
}
