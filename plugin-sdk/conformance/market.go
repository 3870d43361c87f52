package conformance

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

var (
	slugRe    = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	versionRe = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$`)
)

func checkDescribe(ctx context.Context, e *env) error {
	d, err := e.c.Describe(ctx, &exchangev1.DescribeRequest{})
	if err != nil {
		return describeErr("Describe", err)
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	x := d.GetExchange()
	if x.GetKey() <= 0 {
		bad("exchange key %d must be positive", x.GetKey())
	}
	if !slugRe.MatchString(x.GetSlug()) {
		bad("slug %q must be lower-case letters, digits and dashes", x.GetSlug())
	}
	if x.GetName() == "" {
		bad("name is empty")
	}
	if !versionRe.MatchString(x.GetPluginVersion()) {
		bad("plugin_version %q is not a semantic version", x.GetPluginVersion())
	}
	if x.GetStatus() == exchangev1.ExchangeStatus_EXCHANGE_STATUS_UNSPECIFIED {
		bad("status is UNSPECIFIED")
	}
	if x.GetLogoSvg() != "" && !regexp.MustCompile(`(?s)^\s*(<\?xml[^>]*>\s*)?<svg[\s>].*</svg>\s*$`).MatchString(x.GetLogoSvg()) {
		bad("logo_svg is not an SVG document")
	}
	c := d.GetCapabilities()
	if c == nil {
		return errors.Join(append(errs, errors.New("capabilities are missing"))...)
	}
	if len(c.GetMarketTypes()) == 0 {
		bad("market_types is empty")
	}
	for _, mt := range c.GetMarketTypes() {
		if mt == exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED {
			bad("market_types lists UNSPECIFIED")
		}
	}
	for _, iv := range c.GetIntervals() {
		if _, ok := intervalMs[iv]; !ok {
			bad("unknown candle interval %q", iv)
		}
	}
	if len(c.GetIntervals()) == 0 {
		bad("intervals is empty")
	}
	for _, p := range c.GetAnalytics().GetPeriods() {
		if !slices.Contains(periodSet, p) {
			bad("unknown analytics period %q", p)
		}
	}
	pl := c.GetPageLimits()
	if pl.GetCandles() <= 0 || pl.GetTrades() <= 0 || pl.GetOrderBookDepth() <= 0 {
		bad("page_limits for candles, trades and order_book_depth must be positive")
	}
	if t := c.GetTrading(); t.GetEnabled() {
		if !slices.Contains(t.GetOrderTypes(), exchangev1.OrderType_ORDER_TYPE_LIMIT) {
			bad("trading is enabled but LIMIT is not among order_types")
		}
		if len(t.GetTimeInForce()) == 0 {
			bad("trading is enabled but time_in_force is empty")
		}
		if slices.Contains(c.GetMarketTypes(), exchangev1.MarketType_MARKET_TYPE_SWAP) &&
			(len(t.GetMarginModes()) == 0 || len(t.GetPositionModes()) == 0) {
			bad("SWAP trading needs margin_modes and position_modes")
		}
	} else if t != nil && (len(t.GetOrderTypes()) > 0 || t.GetAmend() || t.GetCancelAll()) {
		bad("trading is disabled but trading features are claimed")
	}
	seen := map[string]bool{}
	for _, s := range d.GetSettings() {
		if s.GetKey() == "" || seen[s.GetKey()] {
			bad("setting key %q is empty or repeated", s.GetKey())
		}
		seen[s.GetKey()] = true
	}
	if len(errs) > 0 {
		return errorsJoin(errs)
	}
	e.desc = d
	return nil
}

func checkConfigureUnknown(ctx context.Context, e *env) error {
	_, err := e.c.Configure(ctx, &exchangev1.ConfigureRequest{Settings: map[string]string{"conformance.no_such_setting": "1"}})
	return reasonIs(err, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)
}

func checkHealth(ctx context.Context, e *env) error {
	h, err := e.c.Health(ctx, &exchangev1.HealthRequest{})
	if err != nil {
		return describeErr("Health", err)
	}
	if !h.GetOk() {
		return fmt.Errorf("Health says not ok: %s", h.GetMessage())
	}
	return nil
}

func checkServerTime(ctx context.Context, e *env) error {
	t, err := e.c.GetServerTime(ctx, &exchangev1.GetServerTimeRequest{})
	if err != nil {
		return describeErr("GetServerTime", err)
	}
	skew := time.Duration(t.GetTime()-time.Now().UnixMilli()) * time.Millisecond
	if skew > 5*time.Minute || skew < -5*time.Minute {
		return fmt.Errorf("server time %d is %s away from the local clock (is it in milliseconds?)", t.GetTime(), skew)
	}
	return nil
}

func checkInstrument(in *exchangev1.Instrument, mt exchangev1.MarketType) []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", in.GetSymbol(), fmt.Sprintf(format, args...)))
	}
	if in.GetMarketType() != mt {
		bad("market_type %v in a %v listing", in.GetMarketType(), mt)
	}
	if in.GetBase() == "" || in.GetQuote() == "" {
		bad("base and quote are required")
	}
	if in.GetStatus() == exchangev1.InstrumentStatus_INSTRUMENT_STATUS_UNSPECIFIED {
		bad("status is UNSPECIFIED")
	}
	tick, err := positive("tick_size", in.GetTickSize())
	if err != nil {
		bad("%v", err)
	}
	step, err2 := positive("step_size", in.GetStepSize())
	if err2 != nil {
		bad("%v", err2)
	}
	minQty, err3 := positive("min_qty", in.GetMinQty())
	if err3 != nil {
		bad("%v", err3)
	}
	for _, f := range []struct{ name, v string }{
		{"min_price", in.GetMinPrice()}, {"max_price", in.GetMaxPrice()}, {"max_qty", in.GetMaxQty()},
		{"market_step_size", in.GetMarketStepSize()}, {"market_min_qty", in.GetMarketMinQty()},
		{"market_max_qty", in.GetMarketMaxQty()}, {"min_notional", in.GetMinNotional()},
		{"contract_value", in.GetContractValue()}, {"max_leverage", in.GetMaxLeverage()},
	} {
		if err := optional(f.name, f.v); err != nil {
			bad("%v", err)
		}
	}
	if err == nil && err2 == nil && err3 == nil {
		if !minQty.Mod(step).IsZero() {
			bad("min_qty %s is not a multiple of step_size %s", minQty, step)
		}
		if mq, err := dec("max_qty", in.GetMaxQty()); in.GetMaxQty() != "" && err == nil && mq.LessThan(minQty) {
			bad("max_qty %s is below min_qty %s", mq, minQty)
		}
		if mp, err := dec("min_price", in.GetMinPrice()); in.GetMinPrice() != "" && err == nil {
			if xp, err := dec("max_price", in.GetMaxPrice()); in.GetMaxPrice() != "" && err == nil && xp.LessThan(mp) {
				bad("max_price %s is below min_price %s", xp, mp)
			}
		}
		_ = tick
	}
	if mt == exchangev1.MarketType_MARKET_TYPE_SWAP {
		if in.GetSettle() == "" {
			bad("SWAP instrument without settle asset")
		}
		if _, err := positive("contract_value", in.GetContractValue()); err != nil {
			bad("%v", err)
		}
	}
	return errs
}

func checkInstruments(ctx context.Context, e *env) error {
	if err := e.needDescribe(); err != nil {
		return err
	}
	e.insts = map[exchangev1.MarketType][]*exchangev1.Instrument{}
	e.symbols = map[exchangev1.MarketType]*exchangev1.Instrument{}
	var errs []error
	for _, mt := range e.desc.GetCapabilities().GetMarketTypes() {
		r, err := e.c.ListInstruments(ctx, &exchangev1.ListInstrumentsRequest{MarketType: mt})
		if err != nil {
			return describeErr(fmt.Sprintf("ListInstruments %v", mt), err)
		}
		if len(r.GetInstruments()) == 0 {
			errs = append(errs, fmt.Errorf("no %v instruments", mt))
			continue
		}
		seen := map[string]bool{}
		for _, in := range r.GetInstruments() {
			if in.GetSymbol() == "" || seen[in.GetSymbol()] {
				errs = append(errs, fmt.Errorf("%v symbol %q is empty or repeated", mt, in.GetSymbol()))
			}
			seen[in.GetSymbol()] = true
			errs = append(errs, checkInstrument(in, mt)...)
		}
		e.insts[mt] = r.GetInstruments()
		e.symbols[mt] = e.pick(mt, r.GetInstruments())
		if e.symbols[mt] == nil {
			errs = append(errs, fmt.Errorf("no usable %v instrument to test with", mt))
			delete(e.symbols, mt)
		}
	}
	return errorsJoin(errs)
}

// pick chooses the instrument for a market type: the one in the options, else the first one trading.
func (e *env) pick(mt exchangev1.MarketType, list []*exchangev1.Instrument) *exchangev1.Instrument {
	for _, s := range e.opts.Symbols {
		if s.MarketType != mt && s.MarketType != exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED {
			continue
		}
		for _, in := range list {
			if in.GetSymbol() == s.Symbol {
				return in
			}
		}
	}
	for _, in := range list {
		if in.GetStatus() == exchangev1.InstrumentStatus_INSTRUMENT_STATUS_TRADING {
			return in
		}
	}
	return nil
}

func checkTickers(ctx context.Context, e *env) error {
	if err := e.needSymbols(); err != nil {
		return err
	}
	var errs []error
	for _, mt := range e.marketTypes() {
		r, err := e.c.GetTickers(ctx, &exchangev1.GetTickersRequest{MarketType: mt})
		if err != nil {
			return describeErr("GetTickers", err)
		}
		if len(r.GetTickers()) == 0 {
			errs = append(errs, fmt.Errorf("no %v tickers", mt))
		}
		known := map[string]bool{}
		for _, in := range e.insts[mt] {
			known[in.GetSymbol()] = true
		}
		for _, t := range r.GetTickers() {
			if !known[t.GetSymbol()] {
				errs = append(errs, fmt.Errorf("ticker for unknown %v symbol %q", mt, t.GetSymbol()))
			}
			if _, err := positive(t.GetSymbol()+" last", t.GetLast()); err != nil {
				errs = append(errs, err)
			}
			for _, f := range []struct{ n, v string }{{"open_24h", t.GetOpen_24H()}, {"high_24h", t.GetHigh_24H()},
				{"low_24h", t.GetLow_24H()}, {"volume_24h", t.GetVolume_24H()}, {"change_pct_24h", t.GetChangePct_24H()},
				{"bid", t.GetBid()}, {"ask", t.GetAsk()}, {"mark_price", t.GetMarkPrice()}, {"funding_rate", t.GetFundingRate()}} {
				if err := optional(t.GetSymbol()+" "+f.n, f.v); err != nil {
					errs = append(errs, err)
				}
			}
			if t.GetBid() != "" && t.GetAsk() != "" {
				b, _ := dec("bid", t.GetBid())
				a, _ := dec("ask", t.GetAsk())
				if b.GreaterThan(a) {
					errs = append(errs, fmt.Errorf("%s: bid %s above ask %s", t.GetSymbol(), b, a))
				}
			}
		}
	}
	return errorsJoin(errs)
}

// checkLevels checks one side of a book: positive canonical values on the grids, strictly ordered.
func checkLevels(side string, ls []*exchangev1.PriceLevel, in *exchangev1.Instrument, desc bool) error {
	var prev decimal.Decimal
	for i, l := range ls {
		p, err := positive(side+" price", l.GetPrice())
		if err != nil {
			return err
		}
		if _, err := positive(side+" qty", l.GetQty()); err != nil {
			return err
		}
		if err := gridOK(side+" price", p, in.GetTickSize()); err != nil {
			return err
		}
		if i > 0 && ((desc && !p.LessThan(prev)) || (!desc && !p.GreaterThan(prev))) {
			return fmt.Errorf("%s not strictly sorted best first at level %d (%s after %s)", side, i, p, prev)
		}
		prev = p
	}
	return nil
}

func checkOrderBook(ctx context.Context, e *env) error {
	if err := e.needSymbols(); err != nil {
		return err
	}
	for _, mt := range e.marketTypes() {
		in := e.symbols[mt]
		depth := min(int32(20), max(e.desc.GetCapabilities().GetPageLimits().GetOrderBookDepth(), 1))
		r, err := e.c.GetOrderBook(ctx, &exchangev1.GetOrderBookRequest{MarketType: mt, Symbol: in.GetSymbol(), Depth: depth})
		if err != nil {
			return describeErr("GetOrderBook "+in.GetSymbol(), err)
		}
		b := r.GetBook()
		if len(b.GetBids()) == 0 || len(b.GetAsks()) == 0 {
			return fmt.Errorf("%s book has an empty side", in.GetSymbol())
		}
		if len(b.GetBids()) > int(depth) || len(b.GetAsks()) > int(depth) {
			return fmt.Errorf("%s book has more levels than the depth %d asked for", in.GetSymbol(), depth)
		}
		if err := checkLevels("bids", b.GetBids(), in, true); err != nil {
			return fmt.Errorf("%s: %w", in.GetSymbol(), err)
		}
		if err := checkLevels("asks", b.GetAsks(), in, false); err != nil {
			return fmt.Errorf("%s: %w", in.GetSymbol(), err)
		}
		bb, _ := dec("bid", b.GetBids()[0].GetPrice())
		ba, _ := dec("ask", b.GetAsks()[0].GetPrice())
		if !bb.LessThan(ba) {
			return fmt.Errorf("%s book is crossed: best bid %s >= best ask %s", in.GetSymbol(), bb, ba)
		}
	}
	return nil
}

// candleIntervals are the intervals the candle checks use: 1m and 1h when offered, else the first one.
func (e *env) candleIntervals() []string {
	ivs := e.desc.GetCapabilities().GetIntervals()
	var out []string
	for _, want := range []string{"1m", "1h"} {
		if slices.Contains(ivs, want) {
			out = append(out, want)
		}
	}
	if len(out) == 0 && len(ivs) > 0 {
		out = append(out, ivs[0])
	}
	return out
}

// validateCandles checks order, alignment (1m and 1h, which every exchange aligns to UTC) and OHLC consistency.
func validateCandles(cs []*exchangev1.Candle, iv string) error {
	ms := intervalMs[iv]
	for i, c := range cs {
		if i > 0 && c.GetOpenTime() <= cs[i-1].GetOpenTime() {
			return fmt.Errorf("candles not strictly ascending at %d (%d after %d)", i, c.GetOpenTime(), cs[i-1].GetOpenTime())
		}
		if (iv == "1m" || iv == "1h") && c.GetOpenTime()%ms != 0 {
			return fmt.Errorf("candle open time %d is not aligned to %s", c.GetOpenTime(), iv)
		}
		o, err1 := positive("open", c.GetOpen())
		h, err2 := positive("high", c.GetHigh())
		l, err3 := positive("low", c.GetLow())
		cl, err4 := positive("close", c.GetClose())
		if err := errors.Join(err1, err2, err3, err4, optional("volume", c.GetVolume()), optional("quote_volume", c.GetQuoteVolume())); err != nil {
			return fmt.Errorf("candle %d: %w", c.GetOpenTime(), err)
		}
		if l.GreaterThan(decimal.Min(o, cl)) || h.LessThan(decimal.Max(o, cl)) {
			return fmt.Errorf("candle %d: OHLC inconsistent (o %s h %s l %s c %s)", c.GetOpenTime(), o, h, l, cl)
		}
		if v, _ := dec("volume", c.GetVolume()); c.GetVolume() != "" && v.IsNegative() {
			return fmt.Errorf("candle %d: negative volume", c.GetOpenTime())
		}
		if i < len(cs)-1 && !c.GetClosed() {
			return fmt.Errorf("candle %d is not closed but is not the newest", c.GetOpenTime())
		}
	}
	return nil
}

func checkCandles(ctx context.Context, e *env) error {
	if err := e.needSymbols(); err != nil {
		return err
	}
	for _, mt := range e.marketTypes() {
		in := e.symbols[mt]
		for _, iv := range e.candleIntervals() {
			r, err := e.c.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: mt, Symbol: in.GetSymbol(), Interval: iv, Limit: 100})
			if err != nil {
				return describeErr(fmt.Sprintf("GetCandles %s %s", in.GetSymbol(), iv), err)
			}
			if len(r.GetCandles()) == 0 {
				return fmt.Errorf("%s %s: no candles", in.GetSymbol(), iv)
			}
			if len(r.GetCandles()) > 100 {
				return fmt.Errorf("%s %s: %d candles for limit 100", in.GetSymbol(), iv, len(r.GetCandles()))
			}
			if err := validateCandles(r.GetCandles(), iv); err != nil {
				return fmt.Errorf("%s %s: %w", in.GetSymbol(), iv, err)
			}
		}
	}
	return nil
}

func checkCandlePaging(ctx context.Context, e *env) error {
	if err := e.needSymbols(); err != nil {
		return err
	}
	for _, mt := range e.marketTypes() {
		in := e.symbols[mt]
		iv := e.candleIntervals()[0]
		p1, err := e.c.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: mt, Symbol: in.GetSymbol(), Interval: iv, Limit: 50})
		if err != nil {
			return describeErr("GetCandles page 1", err)
		}
		if len(p1.GetCandles()) == 0 {
			return fmt.Errorf("%s %s: no candles", in.GetSymbol(), iv)
		}
		first := p1.GetCandles()[0].GetOpenTime()
		p2, err := e.c.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: mt, Symbol: in.GetSymbol(), Interval: iv, Limit: 50, EndTime: first - 1})
		if err != nil {
			return describeErr("GetCandles page 2", err)
		}
		cs := p2.GetCandles()
		if len(p1.GetCandles()) != 50 || len(cs) != 50 {
			return fmt.Errorf("%s %s: pages of %d and %d candles for limit 50 (a plugin fills every page while history lasts)",
				in.GetSymbol(), iv, len(p1.GetCandles()), len(cs))
		}
		if err := validateCandles(cs, iv); err != nil {
			return fmt.Errorf("%s %s page 2: %w", in.GetSymbol(), iv, err)
		}
		if ms := intervalMs[iv]; ms > 0 {
			if last := cs[len(cs)-1].GetOpenTime(); last != first-ms {
				return fmt.Errorf("%s %s: page 2 ends at %d, want exactly one interval before page 1's first candle %d (%d)",
					in.GetSymbol(), iv, last, first, first-ms)
			}
		} else if last := cs[len(cs)-1].GetOpenTime(); last >= first {
			return fmt.Errorf("%s %s: page 2 ends at %d, not before page 1's first candle %d", in.GetSymbol(), iv, last, first)
		}
		// end_time is inclusive: asking with end_time = a candle's open time returns that candle last.
		p3, err := e.c.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: mt, Symbol: in.GetSymbol(), Interval: iv, Limit: 5, EndTime: first})
		if err != nil {
			return describeErr("GetCandles inclusive end", err)
		}
		if n := len(p3.GetCandles()); n == 0 || p3.GetCandles()[n-1].GetOpenTime() != first {
			return fmt.Errorf("%s %s: end_time %d should include the candle opening then", in.GetSymbol(), iv, first)
		}
	}
	return nil
}

func checkTrades(ctx context.Context, e *env) error {
	if err := e.needSymbols(); err != nil {
		return err
	}
	for _, mt := range e.marketTypes() {
		in := e.symbols[mt]
		r, err := e.c.GetTrades(ctx, &exchangev1.GetTradesRequest{MarketType: mt, Symbol: in.GetSymbol(), Limit: 50})
		if err != nil {
			return describeErr("GetTrades "+in.GetSymbol(), err)
		}
		ts := r.GetTrades()
		if len(ts) > 50 {
			return fmt.Errorf("%s: %d trades for limit 50", in.GetSymbol(), len(ts))
		}
		ids := map[string]bool{}
		for i, t := range ts {
			if i > 0 && t.GetTime() < ts[i-1].GetTime() {
				return fmt.Errorf("%s: trades not ascending by time at %d", in.GetSymbol(), i)
			}
			if t.GetId() == "" || ids[t.GetId()] {
				return fmt.Errorf("%s: trade id %q empty or repeated", in.GetSymbol(), t.GetId())
			}
			ids[t.GetId()] = true
			if _, err := positive("price", t.GetPrice()); err != nil {
				return fmt.Errorf("%s trade %s: %w", in.GetSymbol(), t.GetId(), err)
			}
			if _, err := positive("qty", t.GetQty()); err != nil {
				return fmt.Errorf("%s trade %s: %w", in.GetSymbol(), t.GetId(), err)
			}
			if t.GetSide() == exchangev1.Side_SIDE_UNSPECIFIED {
				return fmt.Errorf("%s trade %s: side UNSPECIFIED", in.GetSymbol(), t.GetId())
			}
		}
	}
	return nil
}

func ascending[T any](what string, pts []T, timeOf func(T) int64) error {
	for i := 1; i < len(pts); i++ {
		if timeOf(pts[i]) <= timeOf(pts[i-1]) {
			return fmt.Errorf("%s not strictly ascending at %d", what, i)
		}
	}
	return nil
}

func checkDerivatives(ctx context.Context, e *env) error {
	if err := e.needSymbols(); err != nil {
		return err
	}
	in, ok := e.symbols[exchangev1.MarketType_MARKET_TYPE_SWAP]
	if !ok {
		return na("the plugin offers no SWAP market")
	}
	sym := in.GetSymbol()
	fr, err := e.c.GetFundingRate(ctx, &exchangev1.GetFundingRateRequest{Symbol: sym})
	if err != nil {
		return describeErr("GetFundingRate", err)
	}
	if _, err := dec("rate", fr.GetRate()); err != nil {
		return err
	}
	a := e.desc.GetCapabilities().GetAnalytics()
	period := "1h"
	if len(a.GetPeriods()) > 0 && !slices.Contains(a.GetPeriods(), period) {
		period = a.GetPeriods()[0]
	}
	series := &exchangev1.SeriesRequest{Symbol: sym, Period: period, Limit: 24}
	if a.GetFundingRateHistory() {
		r, err := e.c.GetFundingRateHistory(ctx, &exchangev1.GetFundingRateHistoryRequest{Symbol: sym, Limit: 20})
		if err != nil {
			return describeErr("GetFundingRateHistory", err)
		}
		if err := ascending("funding rates", r.GetRates(), func(x *exchangev1.FundingRate) int64 { return x.GetFundingTime() }); err != nil {
			return err
		}
		for _, x := range r.GetRates() {
			if _, err := dec("rate", x.GetRate()); err != nil {
				return err
			}
		}
	}
	if a.GetOpenInterest() {
		r, err := e.c.GetOpenInterestHistory(ctx, &exchangev1.GetOpenInterestHistoryRequest{Series: series})
		if err != nil {
			return describeErr("GetOpenInterestHistory", err)
		}
		if len(r.GetPoints()) == 0 {
			return errors.New("open interest history is empty")
		}
		if err := ascending("open interest", r.GetPoints(), func(x *exchangev1.OpenInterestPoint) int64 { return x.GetTime() }); err != nil {
			return err
		}
		for _, x := range r.GetPoints() {
			if _, err := dec("open_interest", x.GetOpenInterest()); err != nil {
				return err
			}
		}
	}
	one := decimal.NewFromInt(1)
	for _, kind := range a.GetLongShortRatio() {
		r, err := e.c.GetLongShortRatioHistory(ctx, &exchangev1.GetLongShortRatioHistoryRequest{Series: series, Kind: kind})
		if err != nil {
			return describeErr("GetLongShortRatioHistory "+kind.String(), err)
		}
		if err := ascending("long/short ratio", r.GetPoints(), func(x *exchangev1.LongShortRatioPoint) int64 { return x.GetTime() }); err != nil {
			return err
		}
		for _, x := range r.GetPoints() {
			l, err1 := dec("long_ratio", x.GetLongRatio())
			s, err2 := dec("short_ratio", x.GetShortRatio())
			if err := errors.Join(err1, err2); err != nil {
				return err
			}
			if l.Add(s).Sub(one).Abs().GreaterThan(decimal.New(1, -3)) {
				return fmt.Errorf("long %s + short %s is not 1", l, s)
			}
		}
	}
	if a.GetTakerVolume() {
		r, err := e.c.GetTakerVolumeHistory(ctx, &exchangev1.GetTakerVolumeHistoryRequest{Series: series, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP})
		if err != nil {
			return describeErr("GetTakerVolumeHistory", err)
		}
		if err := ascending("taker volume", r.GetPoints(), func(x *exchangev1.TakerVolumePoint) int64 { return x.GetTime() }); err != nil {
			return err
		}
		for _, x := range r.GetPoints() {
			b, err1 := dec("buy_volume", x.GetBuyVolume())
			s, err2 := dec("sell_volume", x.GetSellVolume())
			if err := errors.Join(err1, err2); err != nil {
				return err
			}
			if b.IsNegative() || s.IsNegative() {
				return errors.New("negative taker volume")
			}
		}
	}
	return nil
}

func checkUnknownSymbolMarketData(ctx context.Context, e *env) error {
	if err := e.needSymbols(); err != nil {
		return err
	}
	mt := e.marketTypes()[0]
	_, err := e.c.GetOrderBook(ctx, &exchangev1.GetOrderBookRequest{MarketType: mt, Symbol: "CONFORMANCENOSUCHSYMBOL"})
	return reasonIs(err, exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND)
}

// checkCandleRange asks with both start_time and end_time: the answer is the newest page inside the window, not
// the oldest one from start_time (the exchange.v1 history rule, whatever the exchange's own default).
func checkCandleRange(ctx context.Context, e *env) error {
	if err := e.needSymbols(); err != nil {
		return err
	}
	for _, mt := range e.marketTypes() {
		in := e.symbols[mt]
		iv := e.candleIntervals()[0]
		ms := intervalMs[iv]
		if ms == 0 {
			return na("no fixed-length candle interval to test with")
		}
		newest, err := e.c.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: mt, Symbol: in.GetSymbol(), Interval: iv, Limit: 3})
		if err != nil {
			return describeErr("GetCandles", err)
		}
		if len(newest.GetCandles()) == 0 {
			return fmt.Errorf("%s %s: no candles", in.GetSymbol(), iv)
		}
		// A closed window well inside the history: 200 intervals, ending 5 intervals ago.
		end := newest.GetCandles()[0].GetOpenTime() - 5*ms
		start := end - 199*ms
		r, err := e.c.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: mt, Symbol: in.GetSymbol(), Interval: iv, Limit: 50,
			StartTime: start, EndTime: end})
		if err != nil {
			return describeErr(fmt.Sprintf("GetCandles start %d end %d", start, end), err)
		}
		cs := r.GetCandles()
		if len(cs) != 50 {
			return fmt.Errorf("%s %s: %d candles for limit 50 in a window of 200", in.GetSymbol(), iv, len(cs))
		}
		if err := validateCandles(cs, iv); err != nil {
			return fmt.Errorf("%s %s: %w", in.GetSymbol(), iv, err)
		}
		if cs[0].GetOpenTime() < start || cs[len(cs)-1].GetOpenTime() > end {
			return fmt.Errorf("%s %s: candles %d..%d outside [%d, %d]", in.GetSymbol(), iv, cs[0].GetOpenTime(), cs[len(cs)-1].GetOpenTime(), start, end)
		}
		if last := cs[len(cs)-1].GetOpenTime(); last != end {
			return fmt.Errorf("%s %s: the newest candle is %d, want %d (the newest page of [start_time, end_time], not the oldest)",
				in.GetSymbol(), iv, last, end)
		}
	}
	return nil
}
