package emulator

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
)

// Number formatting: spot sends every decimal with 8 places; futures with the symbol's precision.
func fix8(d decimal.Decimal) string { return d.StringFixed(8) }

func (s *Server) px(futures bool, in *venue.Instrument, d decimal.Decimal) string {
	if futures {
		return d.StringFixed(in.PriceScale())
	}
	return fix8(d)
}

func (s *Server) qty(futures bool, in *venue.Instrument, d decimal.Decimal) string {
	if futures {
		return d.StringFixed(in.QtyScale())
	}
	return fix8(d)
}

// amt formats a quote amount.
func amt(futures bool, d decimal.Decimal) string {
	if futures {
		return d.StringFixed(8)
	}
	return fix8(d)
}

func (s *Server) getTime(*req) (any, error) {
	return map[string]int64{"serverTime": s.v.Now()}, nil
}

// symbolParam resolves the mandatory symbol parameter.
func (s *Server) symbolParam(q *req) (*venue.Instrument, error) {
	sym := q.str("symbol")
	if sym == "" {
		return nil, badParam("symbol")
	}
	in, ok := s.instrument(q.futures, strings.ToUpper(sym))
	if !ok {
		return nil, invalidSymbol()
	}
	return in, nil
}

// symbolsParam resolves symbol or symbols (a JSON array); nil with no error means every symbol.
func (s *Server) symbolsParam(q *req) ([]*venue.Instrument, bool, error) {
	if q.has("symbol") {
		in, err := s.symbolParam(q)
		if err != nil {
			return nil, false, err
		}
		return []*venue.Instrument{in}, true, nil
	}
	if q.has("symbols") {
		var names []string
		if err := json.Unmarshal([]byte(q.str("symbols")), &names); err != nil || len(names) == 0 {
			return nil, false, illegal("symbols")
		}
		var out []*venue.Instrument
		for _, n := range names {
			in, ok := s.instrument(q.futures, n)
			if !ok {
				return nil, false, invalidSymbol()
			}
			out = append(out, in)
		}
		return out, false, nil
	}
	if q.futures {
		return s.futL, false, nil
	}
	return s.spotL, false, nil
}

func statusName(futures bool, st venue.InstrumentStatus) string {
	switch st {
	case venue.Trading:
		return "TRADING"
	case venue.Halted:
		if futures {
			return "SETTLING"
		}
		return "HALT"
	default:
		if futures {
			return "CLOSE"
		}
		return "BREAK"
	}
}

type rateLimit struct {
	RateLimitType string `json:"rateLimitType"`
	Interval      string `json:"interval"`
	IntervalNum   int    `json:"intervalNum"`
	Limit         int    `json:"limit"`
}

type spotSymbol struct {
	Symbol                          string           `json:"symbol"`
	Status                          string           `json:"status"`
	BaseAsset                       string           `json:"baseAsset"`
	BaseAssetPrecision              int              `json:"baseAssetPrecision"`
	QuoteAsset                      string           `json:"quoteAsset"`
	QuotePrecision                  int              `json:"quotePrecision"`
	QuoteAssetPrecision             int              `json:"quoteAssetPrecision"`
	BaseCommissionPrecision         int              `json:"baseCommissionPrecision"`
	QuoteCommissionPrecision        int              `json:"quoteCommissionPrecision"`
	OrderTypes                      []string         `json:"orderTypes"`
	IcebergAllowed                  bool             `json:"icebergAllowed"`
	OcoAllowed                      bool             `json:"ocoAllowed"`
	OtoAllowed                      bool             `json:"otoAllowed"`
	QuoteOrderQtyMarketAllowed      bool             `json:"quoteOrderQtyMarketAllowed"`
	AllowTrailingStop               bool             `json:"allowTrailingStop"`
	CancelReplaceAllowed            bool             `json:"cancelReplaceAllowed"`
	AmendAllowed                    bool             `json:"amendAllowed"`
	IsSpotTradingAllowed            bool             `json:"isSpotTradingAllowed"`
	IsMarginTradingAllowed          bool             `json:"isMarginTradingAllowed"`
	Filters                         []map[string]any `json:"filters"`
	Permissions                     []string         `json:"permissions"`
	PermissionSets                  [][]string       `json:"permissionSets"`
	DefaultSelfTradePreventionMode  string           `json:"defaultSelfTradePreventionMode"`
	AllowedSelfTradePreventionModes []string         `json:"allowedSelfTradePreventionModes"`
}

var stpModes = []string{"NONE", "EXPIRE_TAKER", "EXPIRE_MAKER", "EXPIRE_BOTH"}

func (s *Server) spotExchangeInfo(q *req) (any, error) {
	ins, _, err := s.symbolsParam(q)
	if err != nil {
		return nil, err
	}
	syms := make([]spotSymbol, 0, len(ins))
	for _, in := range ins {
		syms = append(syms, spotSymbol{
			Symbol: s.native[in.ID], Status: statusName(false, in.Status), BaseAsset: in.Base, BaseAssetPrecision: 8,
			QuoteAsset: in.Quote, QuotePrecision: 8, QuoteAssetPrecision: 8, BaseCommissionPrecision: 8,
			QuoteCommissionPrecision:   8,
			OrderTypes:                 []string{"LIMIT", "LIMIT_MAKER", "MARKET", "STOP_LOSS", "STOP_LOSS_LIMIT", "TAKE_PROFIT", "TAKE_PROFIT_LIMIT"},
			QuoteOrderQtyMarketAllowed: true, CancelReplaceAllowed: true, AmendAllowed: true, IsSpotTradingAllowed: true,
			Filters: []map[string]any{
				{"filterType": "PRICE_FILTER", "minPrice": fix8(in.MinPrice), "maxPrice": fix8(in.MaxPrice), "tickSize": fix8(in.TickSize)},
				{"filterType": "LOT_SIZE", "minQty": fix8(in.MinQty), "maxQty": fix8(in.MaxQty), "stepSize": fix8(in.StepSize)},
				{"filterType": "ICEBERG_PARTS", "limit": 10},
				{"filterType": "MARKET_LOT_SIZE", "minQty": fix8(decimal.Zero), "maxQty": fix8(in.MarketMax), "stepSize": fix8(decimal.Zero)},
				{"filterType": "NOTIONAL", "minNotional": fix8(in.MinNotional), "applyMinToMarket": true,
					"maxNotional": "9000000.00000000", "applyMaxToMarket": false, "avgPriceMins": 5},
				{"filterType": "MAX_NUM_ORDERS", "maxNumOrders": 200},
				{"filterType": "MAX_NUM_ALGO_ORDERS", "maxNumAlgoOrders": 5},
			},
			Permissions: []string{}, PermissionSets: [][]string{{"SPOT"}},
			DefaultSelfTradePreventionMode: "EXPIRE_MAKER", AllowedSelfTradePreventionModes: stpModes,
		})
	}
	return map[string]any{
		"timezone":   "UTC",
		"serverTime": s.v.Now(),
		"rateLimits": []rateLimit{
			{"REQUEST_WEIGHT", "MINUTE", 1, s.lim.limit[0]},
			{"ORDERS", "SECOND", 10, 100},
			{"ORDERS", "DAY", 1, 200000},
			{"RAW_REQUESTS", "MINUTE", 5, 61000},
		},
		"exchangeFilters": []any{},
		"symbols":         syms,
	}, nil
}

type futSymbol struct {
	Symbol                string           `json:"symbol"`
	Pair                  string           `json:"pair"`
	ContractType          string           `json:"contractType"`
	DeliveryDate          int64            `json:"deliveryDate"`
	OnboardDate           int64            `json:"onboardDate"`
	Status                string           `json:"status"`
	MaintMarginPercent    string           `json:"maintMarginPercent"`
	RequiredMarginPercent string           `json:"requiredMarginPercent"`
	BaseAsset             string           `json:"baseAsset"`
	QuoteAsset            string           `json:"quoteAsset"`
	MarginAsset           string           `json:"marginAsset"`
	PricePrecision        int32            `json:"pricePrecision"`
	QuantityPrecision     int32            `json:"quantityPrecision"`
	BaseAssetPrecision    int              `json:"baseAssetPrecision"`
	QuotePrecision        int              `json:"quotePrecision"`
	UnderlyingType        string           `json:"underlyingType"`
	UnderlyingSubType     []string         `json:"underlyingSubType"`
	SettlePlan            int              `json:"settlePlan"`
	TriggerProtect        string           `json:"triggerProtect"`
	LiquidationFee        string           `json:"liquidationFee"`
	MarketTakeBound       string           `json:"marketTakeBound"`
	MaxMoveOrderLimit     int              `json:"maxMoveOrderLimit"`
	Filters               []map[string]any `json:"filters"`
	OrderTypes            []string         `json:"orderTypes"`
	TimeInForce           []string         `json:"timeInForce"`
}

func (s *Server) futExchangeInfo(q *req) (any, error) {
	syms := make([]futSymbol, 0, len(s.futL))
	for _, in := range s.futL {
		ps, qs := in.PriceScale(), in.QtyScale()
		maint := decimal.NewFromFloat(2.5)
		req := decimal.NewFromInt(5)
		if len(in.Tiers) > 0 {
			maint = in.Tiers[0].MaintRate.Mul(decimal.NewFromInt(100))
		}
		if in.MaxLeverage > 0 {
			req = decimal.NewFromInt(100).Div(decimal.NewFromInt(int64(in.MaxLeverage)))
		}
		syms = append(syms, futSymbol{
			Symbol: s.native[in.ID], Pair: s.native[in.ID], ContractType: "PERPETUAL", DeliveryDate: 4133404800000,
			OnboardDate: in.Listed, Status: statusName(true, in.Status), MaintMarginPercent: maint.StringFixed(4),
			RequiredMarginPercent: req.StringFixed(4), BaseAsset: in.Base, QuoteAsset: in.Quote, MarginAsset: in.Quote,
			PricePrecision: ps, QuantityPrecision: qs, BaseAssetPrecision: 8, QuotePrecision: 8,
			UnderlyingType: "COIN", UnderlyingSubType: []string{}, TriggerProtect: "0.0500",
			LiquidationFee: "0.012500", MarketTakeBound: "0.05", MaxMoveOrderLimit: 10000,
			Filters: []map[string]any{
				{"filterType": "PRICE_FILTER", "minPrice": in.MinPrice.StringFixed(ps), "maxPrice": in.MaxPrice.StringFixed(ps), "tickSize": in.TickSize.StringFixed(ps)},
				{"filterType": "LOT_SIZE", "minQty": in.MinQty.StringFixed(qs), "maxQty": in.MaxQty.StringFixed(qs), "stepSize": in.StepSize.StringFixed(qs)},
				{"filterType": "MARKET_LOT_SIZE", "minQty": in.MinQty.StringFixed(qs), "maxQty": in.MarketMax.StringFixed(qs), "stepSize": in.StepSize.StringFixed(qs)},
				{"filterType": "MAX_NUM_ORDERS", "limit": 200},
				{"filterType": "MAX_NUM_ALGO_ORDERS", "limit": 10},
				{"filterType": "MIN_NOTIONAL", "notional": in.MinNotional.String()},
				{"filterType": "PERCENT_PRICE", "multiplierUp": "1.0500", "multiplierDown": "0.9500", "multiplierDecimal": "4"},
			},
			OrderTypes:  []string{"LIMIT", "MARKET", "STOP", "STOP_MARKET", "TAKE_PROFIT", "TAKE_PROFIT_MARKET"},
			TimeInForce: []string{"GTC", "IOC", "FOK", "GTX"},
		})
	}
	return map[string]any{
		"timezone":    "UTC",
		"serverTime":  s.v.Now(),
		"futuresType": "U_MARGINED",
		"rateLimits": []rateLimit{
			{"REQUEST_WEIGHT", "MINUTE", 1, s.lim.limit[1]},
			{"ORDERS", "MINUTE", 1, 1200},
			{"ORDERS", "SECOND", 10, 300},
		},
		"exchangeFilters": []any{},
		"assets":          []map[string]any{{"asset": "USDT", "marginAvailable": true, "autoAssetExchange": "-10000"}},
		"symbols":         syms,
	}, nil
}

// Update ids: spot uses the venue's book sequence as is; futures doubles it (a snapshot at sequence S reports
// 2S+1 and a diff covering sequences a..b reports U=2a-1, u=2b, pu=2(a-1)) so both Binance's spot rule
// (U <= id+1 <= u) and its futures rule (U <= id <= u) pick the right first event.
func snapshotID(futures bool, seq uint64) uint64 {
	if futures {
		return 2*seq + 1
	}
	return seq
}

func (s *Server) getDepth(q *req) (any, error) {
	in, err := s.symbolParam(q)
	if err != nil {
		return nil, err
	}
	def, max := 100, 5000
	if q.futures {
		def, max = 500, 1000
	}
	limit, err := q.intParam("limit", def)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, illegal("limit")
	}
	if limit > max {
		limit = max
	}
	snap, err := s.v.BookSnapshot(in.ID, limit)
	if err != nil {
		return nil, orderError(q.futures, err)
	}
	levels := func(ls []venue.Level) [][2]string {
		out := make([][2]string, 0, len(ls))
		for _, l := range ls {
			out = append(out, [2]string{s.px(q.futures, in, l.Price), s.qty(q.futures, in, l.Qty)})
		}
		return out
	}
	if q.futures {
		return struct {
			LastUpdateID uint64      `json:"lastUpdateId"`
			E            int64       `json:"E"`
			T            int64       `json:"T"`
			Bids         [][2]string `json:"bids"`
			Asks         [][2]string `json:"asks"`
		}{snapshotID(true, snap.Seq), s.v.Now(), snap.Time, levels(snap.Bids), levels(snap.Asks)}, nil
	}
	return struct {
		LastUpdateID uint64      `json:"lastUpdateId"`
		Bids         [][2]string `json:"bids"`
		Asks         [][2]string `json:"asks"`
	}{snap.Seq, levels(snap.Bids), levels(snap.Asks)}, nil
}

// intervalStep returns the start of the bar n intervals after t (t a bar start).
func intervalStep(interval string, t int64, n int) int64 {
	if interval == "1M" {
		return time.UnixMilli(t).UTC().AddDate(0, n, 0).UnixMilli()
	}
	return t + int64(n)*intervalDur[interval]
}

var intervalDur = map[string]int64{
	"1m": 60000, "3m": 180000, "5m": 300000, "15m": 900000, "30m": 1800000, "1h": 3600000, "2h": 7200000,
	"4h": 14400000, "6h": 21600000, "8h": 28800000, "12h": 43200000, "1d": 86400000, "3d": 259200000,
	"1w": 604800000, "1M": 2592000000,
}

// earliestBar finds the open time of the first 1-minute bar the venue has for an instrument.
func (s *Server) earliestBar(id string) (int64, error) {
	days, err := s.v.Candles(id, "1d", 0, 1500)
	if err != nil || len(days) == 0 {
		return 0, err
	}
	mins, err := s.v.Candles(id, "1m", days[0].CloseTime, 1440)
	if err != nil || len(mins) == 0 {
		return days[0].Open, err
	}
	return mins[0].Open, nil
}

func (s *Server) getKlines(q *req) (any, error) {
	in, err := s.symbolParam(q)
	if err != nil {
		return nil, err
	}
	interval := q.str("interval")
	if interval == "" {
		return nil, badParam("interval")
	}
	if _, ok := intervalDur[interval]; !ok {
		return nil, errf(http.StatusBadRequest, codeInvalidInterval, "Invalid interval.")
	}
	max := 1000
	if q.futures {
		max = 1500
	}
	limit, err := q.intParam("limit", 500)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, illegal("limit")
	}
	if limit > max {
		limit = max
	}
	start, err := q.int64Param("startTime", 0)
	if err != nil {
		return nil, err
	}
	end, err := q.int64Param("endTime", 0)
	if err != nil {
		return nil, err
	}
	if q.has("startTime") && end > 0 && start > end {
		return nil, errf(http.StatusBadRequest, -1023, "Start time is greater than end time.")
	}
	now := s.v.Now()
	stop := now
	if end > 0 && end < now {
		stop = end
	}
	var bars []venue.Candle
	if q.has("startTime") {
		first, err := s.earliestBar(in.ID)
		if err != nil {
			return nil, orderError(q.futures, err)
		}
		from := max64(start, first)
		// The venue serves bars ending at a time; ask for the window that starts at from.
		if interval != "1M" {
			from = from - from%intervalDur[interval]
		}
		for from <= stop {
			last := min64(intervalStep(interval, from, limit-1)+intervalDur[interval]-1, stop)
			bars, err = s.v.Candles(in.ID, interval, last, limit)
			if err != nil {
				return nil, orderError(q.futures, err)
			}
			bars = slices.DeleteFunc(bars, func(c venue.Candle) bool { return c.Open < start })
			if len(bars) > 0 || last >= stop {
				break
			}
			from = last + 1
		}
	} else {
		bars, err = s.v.Candles(in.ID, interval, stop, limit)
		if err != nil {
			return nil, orderError(q.futures, err)
		}
	}
	if end > 0 {
		bars = slices.DeleteFunc(bars, func(c venue.Candle) bool { return c.Open > end })
	}
	if len(bars) > limit {
		bars = bars[:limit]
	}
	out := make([][]any, 0, len(bars))
	for _, c := range bars {
		out = append(out, []any{c.Open, s.px(q.futures, in, c.O), s.px(q.futures, in, c.H), s.px(q.futures, in, c.L),
			s.px(q.futures, in, c.C), s.qty(q.futures, in, c.Volume), c.CloseTime, amt(q.futures, c.QuoteVolume),
			c.Trades, s.qty(q.futures, in, c.TakerBuyBase), amt(q.futures, c.TakerBuyQuote), "0"})
	}
	return out, nil
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

func min64(a, b int64) int64 {
	if a < b {
		return a
	}
	return b
}

type restTrade struct {
	ID           uint64 `json:"id"`
	Price        string `json:"price"`
	Qty          string `json:"qty"`
	QuoteQty     string `json:"quoteQty"`
	Time         int64  `json:"time"`
	IsBuyerMaker bool   `json:"isBuyerMaker"`
	IsBestMatch  *bool  `json:"isBestMatch,omitempty"`
}

func (s *Server) getTrades(q *req) (any, error) {
	in, err := s.symbolParam(q)
	if err != nil {
		return nil, err
	}
	limit, err := q.intParam("limit", 500)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, illegal("limit")
	}
	limit = min(limit, 1000)
	trades, err := s.v.RecentTrades(in.ID, limit)
	if err != nil {
		return nil, orderError(q.futures, err)
	}
	out := make([]restTrade, 0, len(trades))
	yes := true
	for _, t := range trades {
		rt := restTrade{ID: t.ID, Price: s.px(q.futures, in, t.Price), Qty: s.qty(q.futures, in, t.Qty),
			QuoteQty: amt(q.futures, t.Price.Mul(t.Qty)), Time: t.Time, IsBuyerMaker: t.TakerSide == venue.Sell}
		if !q.futures {
			rt.IsBestMatch = &yes
		}
		out = append(out, rt)
	}
	return out, nil
}

type aggTrade struct {
	A  uint64 `json:"a"`
	P  string `json:"p"`
	Q  string `json:"q"`
	F  uint64 `json:"f"`
	L  uint64 `json:"l"`
	T  int64  `json:"T"`
	M  bool   `json:"m"`
	BM *bool  `json:"M,omitempty"`
}

func (s *Server) getAggTrades(q *req) (any, error) {
	in, err := s.symbolParam(q)
	if err != nil {
		return nil, err
	}
	limit, err := q.intParam("limit", 500)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, illegal("limit")
	}
	limit = min(limit, 1000)
	fromID, err := q.int64Param("fromId", -1)
	if err != nil {
		return nil, err
	}
	start, err := q.int64Param("startTime", 0)
	if err != nil {
		return nil, err
	}
	end, err := q.int64Param("endTime", 0)
	if err != nil {
		return nil, err
	}
	trades, err := s.v.RecentTrades(in.ID, 1000)
	if err != nil {
		return nil, orderError(q.futures, err)
	}
	yes := true
	out := make([]aggTrade, 0, limit)
	for _, t := range trades {
		if fromID >= 0 && int64(t.ID) < fromID || start > 0 && t.Time < start || end > 0 && t.Time > end {
			continue
		}
		a := aggTrade{A: t.ID, P: s.px(q.futures, in, t.Price), Q: s.qty(q.futures, in, t.Qty), F: t.ID, L: t.ID,
			T: t.Time, M: t.TakerSide == venue.Sell}
		if !q.futures {
			a.BM = &yes
		}
		out = append(out, a)
	}
	if fromID < 0 && start == 0 && len(out) > limit {
		out = out[len(out)-limit:]
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

type ticker24 struct {
	Symbol             string  `json:"symbol"`
	PriceChange        string  `json:"priceChange"`
	PriceChangePercent string  `json:"priceChangePercent"`
	WeightedAvgPrice   string  `json:"weightedAvgPrice"`
	PrevClosePrice     *string `json:"prevClosePrice,omitempty"`
	LastPrice          string  `json:"lastPrice"`
	LastQty            string  `json:"lastQty"`
	BidPrice           *string `json:"bidPrice,omitempty"`
	BidQty             *string `json:"bidQty,omitempty"`
	AskPrice           *string `json:"askPrice,omitempty"`
	AskQty             *string `json:"askQty,omitempty"`
	OpenPrice          string  `json:"openPrice"`
	HighPrice          string  `json:"highPrice"`
	LowPrice           string  `json:"lowPrice"`
	Volume             string  `json:"volume"`
	QuoteVolume        string  `json:"quoteVolume"`
	OpenTime           int64   `json:"openTime"`
	CloseTime          int64   `json:"closeTime"`
	FirstID            int64   `json:"firstId"`
	LastID             int64   `json:"lastId"`
	Count              int64   `json:"count"`
}

// tickerStats is the 24h summary shared by REST and the ticker stream.
type tickerStats struct {
	t                                venue.Ticker
	change, pct, wavg, lastQty       decimal.Decimal
	openTime, closeTime, first, last int64
}

func (s *Server) tickerStats(in *venue.Instrument) (tickerStats, error) {
	t, err := s.v.Ticker(in.ID)
	if err != nil {
		return tickerStats{}, err
	}
	ts := tickerStats{t: t, change: t.Last.Sub(t.Open), closeTime: t.Time, openTime: t.Time - 86400000}
	if !t.Open.IsZero() {
		ts.pct = ts.change.Mul(decimal.NewFromInt(100)).Div(t.Open).Round(3)
	}
	ts.wavg = t.Last
	if t.Volume.IsPositive() {
		ts.wavg = t.QuoteVolume.Div(t.Volume).Round(in.PriceScale())
	}
	ts.first, ts.last = -1, -1
	if tr, err := s.v.RecentTrades(in.ID, 1); err == nil && len(tr) == 1 {
		ts.lastQty = tr[0].Qty
		ts.last = int64(tr[0].ID)
		ts.first = max64(0, ts.last-t.Trades+1)
	}
	return ts, nil
}

func (s *Server) getTicker24(q *req) (any, error) {
	ins, single, err := s.symbolsParam(q)
	if err != nil {
		return nil, err
	}
	out := make([]ticker24, 0, len(ins))
	for _, in := range ins {
		ts, err := s.tickerStats(in)
		if err != nil {
			return nil, orderError(q.futures, err)
		}
		t := ts.t
		x := ticker24{Symbol: s.native[in.ID], PriceChange: s.px(q.futures, in, ts.change),
			PriceChangePercent: ts.pct.StringFixed(3), WeightedAvgPrice: s.px(q.futures, in, ts.wavg),
			LastPrice: s.px(q.futures, in, t.Last), LastQty: s.qty(q.futures, in, ts.lastQty),
			OpenPrice: s.px(q.futures, in, t.Open), HighPrice: s.px(q.futures, in, t.High),
			LowPrice: s.px(q.futures, in, t.Low), Volume: s.qty(q.futures, in, t.Volume),
			QuoteVolume: amt(q.futures, t.QuoteVolume), OpenTime: ts.openTime, CloseTime: ts.closeTime,
			FirstID: ts.first, LastID: ts.last, Count: t.Trades}
		if !q.futures {
			prev := s.px(false, in, t.Open)
			bp, bq := s.px(false, in, t.BestBid.Price), s.qty(false, in, t.BestBid.Qty)
			ap, aq := s.px(false, in, t.BestAsk.Price), s.qty(false, in, t.BestAsk.Qty)
			x.PrevClosePrice, x.BidPrice, x.BidQty, x.AskPrice, x.AskQty = &prev, &bp, &bq, &ap, &aq
		}
		out = append(out, x)
	}
	if single {
		return out[0], nil
	}
	return out, nil
}

func (s *Server) getTickerPrice(q *req) (any, error) {
	ins, single, err := s.symbolsParam(q)
	if err != nil {
		return nil, err
	}
	type price struct {
		Symbol string `json:"symbol"`
		Price  string `json:"price"`
		Time   *int64 `json:"time,omitempty"`
	}
	out := make([]price, 0, len(ins))
	now := s.v.Now()
	for _, in := range ins {
		last, err := s.v.LastPrice(in.ID)
		if err != nil {
			return nil, orderError(q.futures, err)
		}
		p := price{Symbol: s.native[in.ID], Price: s.px(q.futures, in, last)}
		if q.futures {
			p.Time = &now
		}
		out = append(out, p)
	}
	if single {
		return out[0], nil
	}
	return out, nil
}

func (s *Server) getBookTicker(q *req) (any, error) {
	ins, single, err := s.symbolsParam(q)
	if err != nil {
		return nil, err
	}
	type book struct {
		Symbol   string `json:"symbol"`
		BidPrice string `json:"bidPrice"`
		BidQty   string `json:"bidQty"`
		AskPrice string `json:"askPrice"`
		AskQty   string `json:"askQty"`
		Time     *int64 `json:"time,omitempty"`
	}
	out := make([]book, 0, len(ins))
	now := s.v.Now()
	for _, in := range ins {
		snap, err := s.v.BookSnapshot(in.ID, 1)
		if err != nil {
			return nil, orderError(q.futures, err)
		}
		var bid, ask venue.Level
		if len(snap.Bids) > 0 {
			bid = snap.Bids[0]
		}
		if len(snap.Asks) > 0 {
			ask = snap.Asks[0]
		}
		b := book{Symbol: s.native[in.ID], BidPrice: s.px(q.futures, in, bid.Price), BidQty: s.qty(q.futures, in, bid.Qty),
			AskPrice: s.px(q.futures, in, ask.Price), AskQty: s.qty(q.futures, in, ask.Qty)}
		if q.futures {
			b.Time = &now
		}
		out = append(out, b)
	}
	if single {
		return out[0], nil
	}
	return out, nil
}

type premiumIndex struct {
	Symbol               string `json:"symbol"`
	MarkPrice            string `json:"markPrice"`
	IndexPrice           string `json:"indexPrice"`
	EstimatedSettlePrice string `json:"estimatedSettlePrice"`
	LastFundingRate      string `json:"lastFundingRate"`
	InterestRate         string `json:"interestRate"`
	NextFundingTime      int64  `json:"nextFundingTime"`
	Time                 int64  `json:"time"`
}

func (s *Server) premium(in *venue.Instrument) (premiumIndex, error) {
	m, err := s.v.Mark(in.ID)
	if err != nil {
		return premiumIndex{}, err
	}
	ps := in.PriceScale()
	return premiumIndex{Symbol: s.native[in.ID], MarkPrice: m.Mark.StringFixed(ps + 2),
		IndexPrice: m.Index.StringFixed(ps + 2), EstimatedSettlePrice: m.Index.StringFixed(ps + 2),
		LastFundingRate: m.FundingRate.StringFixed(8), InterestRate: "0.00010000", NextFundingTime: m.NextFunding,
		Time: m.Time}, nil
}

func (s *Server) getPremiumIndex(q *req) (any, error) {
	ins, single, err := s.symbolsParam(q)
	if err != nil {
		return nil, err
	}
	out := make([]premiumIndex, 0, len(ins))
	for _, in := range ins {
		p, err := s.premium(in)
		if err != nil {
			return nil, orderError(true, err)
		}
		out = append(out, p)
	}
	if single {
		return out[0], nil
	}
	return out, nil
}

func (s *Server) getFundingRate(q *req) (any, error) {
	ins, _, err := s.symbolsParam(q)
	if err != nil {
		return nil, err
	}
	limit, err := q.intParam("limit", 100)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, illegal("limit")
	}
	limit = min(limit, 1000)
	start, err := q.int64Param("startTime", 0)
	if err != nil {
		return nil, err
	}
	end, err := q.int64Param("endTime", 0)
	if err != nil {
		return nil, err
	}
	to := s.v.Now() + 1
	if end > 0 {
		to = min64(end+1, to)
	}
	from := start
	if from <= 0 {
		from = max64(1, to-int64(limit+1)*8*3600*1000)
	}
	type rate struct {
		Symbol      string `json:"symbol"`
		FundingTime int64  `json:"fundingTime"`
		FundingRate string `json:"fundingRate"`
		MarkPrice   string `json:"markPrice"`
	}
	out := []rate{}
	for _, in := range ins {
		rs, err := s.v.FundingHistory(in.ID, from, to, 0)
		if err != nil {
			return nil, orderError(true, err)
		}
		for _, r := range rs {
			out = append(out, rate{Symbol: s.native[in.ID], FundingTime: r.Time, FundingRate: r.Rate.StringFixed(8),
				MarkPrice: r.Mark.StringFixed(in.PriceScale() + 2)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].FundingTime < out[j].FundingTime })
	if len(out) > limit {
		if start > 0 {
			out = out[:limit]
		} else {
			out = out[len(out)-limit:]
		}
	}
	return out, nil
}

func (s *Server) getOpenInterest(q *req) (any, error) {
	in, err := s.symbolParam(q)
	if err != nil {
		return nil, err
	}
	now := s.v.Now()
	st, err := s.v.Stats(in.ID, "5m", now-15*60000, 0, 0)
	if err != nil {
		return nil, orderError(true, err)
	}
	if len(st) == 0 {
		return nil, errors.Join(errf(http.StatusBadRequest, codeUnknown, "no open interest"))
	}
	return struct {
		Symbol       string `json:"symbol"`
		OpenInterest string `json:"openInterest"`
		Time         int64  `json:"time"`
	}{s.native[in.ID], st[len(st)-1].OpenInterest.StringFixed(in.QtyScale()), now}, nil
}

type statKind uint8

const (
	statOI statKind = iota
	statGlobalAccount
	statTopAccount
	statTopPosition
	statTaker
)

var periodDur = map[string]int64{
	"5m": 300000, "15m": 900000, "30m": 1800000, "1h": 3600000, "2h": 7200000, "4h": 14400000,
	"6h": 21600000, "12h": 43200000, "1d": 86400000,
}

// ratioRow is the shape of the three long/short ratio endpoints.
type ratioRow struct {
	Symbol         string `json:"symbol"`
	LongShortRatio string `json:"longShortRatio"`
	LongAccount    string `json:"longAccount"`
	ShortAccount   string `json:"shortAccount"`
	Timestamp      int64  `json:"timestamp"`
}

func splitRatio(r decimal.Decimal) (long, short decimal.Decimal) {
	one := decimal.NewFromInt(1)
	long = r.Div(r.Add(one))
	return long, one.Sub(long)
}

func (s *Server) statHandler(kind statKind) func(*req) (any, error) {
	return func(q *req) (any, error) {
		in, err := s.symbolParam(q)
		if err != nil {
			return nil, err
		}
		period := q.str("period")
		if period == "" {
			return nil, badParam("period")
		}
		pd, ok := periodDur[period]
		if !ok {
			return nil, illegal("period")
		}
		limit, err := q.intParam("limit", 30)
		if err != nil {
			return nil, err
		}
		if limit <= 0 {
			return nil, illegal("limit")
		}
		limit = min(limit, 500)
		start, err := q.int64Param("startTime", 0)
		if err != nil {
			return nil, err
		}
		end, err := q.int64Param("endTime", 0)
		if err != nil {
			return nil, err
		}
		now := s.v.Now()
		to := now
		if end > 0 && end < now {
			to = end + 1
		}
		oldest := now - 30*86400000
		from := start
		if from <= 0 {
			from = to - int64(limit+1)*pd // one more: the forming period is dropped below
		}
		from = max64(from, oldest)
		rows, err := s.v.Stats(in.ID, period, from, to, 0)
		if err != nil {
			return nil, orderError(true, err)
		}
		// The period that is still forming is not reported.
		rows = slices.DeleteFunc(rows, func(st venue.Stat) bool { return st.Time+pd > now })
		if len(rows) > limit {
			if start > 0 {
				rows = rows[:limit]
			} else {
				rows = rows[len(rows)-limit:]
			}
		}
		sym := s.native[in.ID]
		switch kind {
		case statOI:
			type oi struct {
				Symbol               string `json:"symbol"`
				SumOpenInterest      string `json:"sumOpenInterest"`
				SumOpenInterestValue string `json:"sumOpenInterestValue"`
				CMCCirculatingSupply string `json:"CMCCirculatingSupply"`
				Timestamp            int64  `json:"timestamp"`
			}
			out := make([]oi, 0, len(rows))
			for _, r := range rows {
				out = append(out, oi{sym, r.OpenInterest.StringFixed(8), r.OpenInterestValue.StringFixed(8),
					"0.00000000", r.Time})
			}
			return out, nil
		case statTaker:
			type taker struct {
				BuySellRatio string `json:"buySellRatio"`
				SellVol      string `json:"sellVol"`
				BuyVol       string `json:"buyVol"`
				Timestamp    int64  `json:"timestamp"`
			}
			out := make([]taker, 0, len(rows))
			for _, r := range rows {
				ratio := decimal.Zero
				if r.TakerSellVolume.IsPositive() {
					ratio = r.TakerBuyVolume.Div(r.TakerSellVolume)
				}
				out = append(out, taker{ratio.StringFixed(4), r.TakerSellVolume.StringFixed(4),
					r.TakerBuyVolume.StringFixed(4), r.Time})
			}
			return out, nil
		}
		out := make([]ratioRow, 0, len(rows))
		for _, r := range rows {
			var ratio, long, short decimal.Decimal
			switch kind {
			case statGlobalAccount:
				ratio, long, short = r.LongShortAccountRatio, r.LongAccount, r.ShortAccount
			case statTopAccount:
				ratio = r.TopLongShortAccountRatio
				long, short = splitRatio(ratio)
			default:
				ratio = r.TopLongShortPositionRatio
				long, short = splitRatio(ratio)
			}
			out = append(out, ratioRow{sym, ratio.StringFixed(4), long.StringFixed(4), short.StringFixed(4), r.Time})
		}
		return out, nil
	}
}
