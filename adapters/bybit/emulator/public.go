package emulator

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
)

const (
	hourMs = int64(3_600_000)
	eight  = 8 * hourMs
)

// intervals maps Bybit's kline intervals to the venue's (every one of them aligns the same way: UTC, weeks from
// Monday).
var intervals = map[string]string{
	"1": "1m", "3": "3m", "5": "5m", "15": "15m", "30": "30m", "60": "1h", "120": "2h", "240": "4h",
	"360": "6h", "720": "12h", "D": "1d", "W": "1w", "M": "1M",
}

// statPeriods maps open-interest intervalTime and account-ratio period codes to the venue's statistics periods.
var statPeriods = map[string]string{"5min": "5m", "15min": "15m", "30min": "30m", "1h": "1h", "4h": "4h", "1d": "1d"}

// statMs is the length of each venue statistics period.
var statMs = map[string]int64{"5m": 300_000, "15m": 900_000, "30m": 1_800_000, "1h": hourMs, "4h": 4 * hourMs, "1d": 24 * hourMs}

func intParam(q *request, name string, def, lo, hi int) (int, *apiError) {
	v := q.get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo {
		return 0, errParams(name + " invalid")
	}
	return min(n, hi), nil
}

func msParam(q *request, name string) (int64, *apiError) {
	v := q.get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, errParams(name + " invalid")
	}
	return n, nil
}

func (s *Server) instrumentObj(i *inst) obj {
	in := i.v
	if !i.linear {
		return obj{"symbol": i.symbol, "baseCoin": in.Base, "quoteCoin": in.Quote, "innovation": "0",
			"status": statusOf(in.Status), "marginTrading": "none",
			"lotSizeFilter": obj{"basePrecision": dec(in.StepSize), "quotePrecision": "0.00000001",
				"minOrderQty": dec(in.MinQty), "maxOrderQty": dec(in.MaxQty), "minOrderAmt": dec(in.MinNotional),
				"maxOrderAmt": "2000000"},
			"priceFilter": obj{"tickSize": dec(in.TickSize)}}
	}
	return obj{"symbol": i.symbol, "contractType": "LinearPerpetual", "status": statusOf(in.Status),
		"baseCoin": in.Base, "quoteCoin": in.Quote, "launchTime": ms(in.Listed), "deliveryTime": "0",
		"deliveryFeeRate": "", "priceScale": strconv.Itoa(int(-in.TickSize.Exponent())),
		"leverageFilter": obj{"minLeverage": "1", "maxLeverage": strconv.Itoa(in.MaxLeverage) + ".00", "leverageStep": "0.01"},
		"priceFilter":    obj{"minPrice": dec(in.MinPrice), "maxPrice": dec(in.MaxPrice), "tickSize": dec(in.TickSize)},
		"lotSizeFilter": obj{"maxOrderQty": dec(in.MaxQty), "minOrderQty": dec(in.MinQty), "qtyStep": dec(in.StepSize),
			"postOnlyMaxOrderQty": dec(in.MaxQty), "maxMktOrderQty": dec(in.MarketMax), "minNotionalValue": dec(in.MinNotional)},
		"unifiedMarginTrade": true, "fundingInterval": 480, "settleCoin": in.Quote, "copyTrading": "none",
		"upperFundingRate": "0.00375", "lowerFundingRate": "-0.00375"}
}

// listOf lists the instruments of a category that are not delisted, in venue order.
func (s *Server) listOf(category string) []*inst {
	var out []*inst
	for _, i := range s.order {
		if i.category() == category && i.v.Status != venue.Delisted {
			out = append(out, i)
		}
	}
	return out
}

// instruments serves instruments-info: linear pages with limit (default 500) and cursor (the next symbol's index);
// spot lists everything at once, as Bybit does.
func (s *Server) instruments(q *request) (any, *apiError) {
	cat, aerr := categoryParam(q, "", "spot", "linear", "inverse", "option")
	if aerr != nil {
		return nil, aerr
	}
	list := []*inst{}
	if cat == "spot" || cat == "linear" {
		list = s.listOf(cat)
	}
	if sym := q.get("symbol"); sym != "" {
		i, ok := s.lookup(cat, sym)
		list = nil
		if ok {
			list = []*inst{i}
		}
	}
	if st := q.get("status"); st != "" {
		kept := list[:0:0]
		for _, i := range list {
			if statusOf(i.v.Status) == st {
				kept = append(kept, i)
			}
		}
		list = kept
	}
	res := obj{"category": cat, "nextPageCursor": ""}
	if cat != "spot" {
		limit, aerr := intParam(q, "limit", 500, 1, 1000)
		if aerr != nil {
			return nil, aerr
		}
		start := 0
		if c := q.get("cursor"); c != "" {
			n, err := strconv.Atoi(strings.TrimPrefix(c, "next:"))
			if err != nil || n < 0 || !strings.HasPrefix(c, "next:") {
				return nil, errParams("cursor invalid")
			}
			start = min(n, len(list))
		}
		end := min(start+limit, len(list))
		if end < len(list) {
			res["nextPageCursor"] = "next:" + strconv.Itoa(end)
		}
		list = list[start:end]
	}
	rows := make([]obj, 0, len(list))
	for _, i := range list {
		rows = append(rows, s.instrumentObj(i))
	}
	res["list"] = rows
	return res, nil
}

func pct(last, prev decimal.Decimal, places int32) string {
	if !prev.IsPositive() {
		return "0"
	}
	return dec(last.Sub(prev).DivRound(prev, places))
}

// px renders a price; an absent price (zero, an empty book side) is "".
func px(d decimal.Decimal) string {
	if d.IsZero() {
		return ""
	}
	return dec(d)
}

func (s *Server) tickerObj(i *inst) (obj, error) {
	t, err := s.v.Ticker(i.v.ID)
	if err != nil {
		return nil, err
	}
	o := obj{"symbol": i.symbol, "bid1Price": px(t.BestBid.Price), "bid1Size": dec(t.BestBid.Qty),
		"ask1Price": px(t.BestAsk.Price), "ask1Size": dec(t.BestAsk.Qty), "lastPrice": dec(t.Last),
		"prevPrice24h": dec(t.Open), "highPrice24h": dec(t.High), "lowPrice24h": dec(t.Low),
		"turnover24h": dec(t.QuoteVolume), "volume24h": dec(t.Volume)}
	if !i.linear {
		o["price24hPcnt"] = pct(t.Last, t.Open, 4)
		o["usdIndexPrice"] = dec(t.Last)
		return o, nil
	}
	m, err := s.v.Mark(i.v.ID)
	if err != nil {
		return nil, err
	}
	prev1h := t.Last
	if cs, err := s.v.Candles(i.v.ID, "1m", t.Time-hourMs, 1); err == nil && len(cs) > 0 {
		prev1h = cs[len(cs)-1].O
	}
	oi := decimal.Zero
	if st, err := s.v.Stats(i.v.ID, "5m", 0, 0, 1); err == nil && len(st) > 0 {
		oi = st[len(st)-1].OpenInterest
	}
	o["price24hPcnt"] = pct(t.Last, t.Open, 6)
	o["indexPrice"] = dec(m.Index)
	o["markPrice"] = dec(m.Mark)
	o["prevPrice1h"] = dec(prev1h)
	o["openInterest"] = dec(oi)
	o["openInterestValue"] = dec(oi.Mul(m.Mark).Round(2))
	o["fundingRate"] = dec(m.FundingRate)
	o["nextFundingTime"] = ms(m.NextFunding)
	o["fundingIntervalHour"] = "8"
	o["fundingCap"] = "0.00375"
	o["predictedDeliveryPrice"], o["basisRate"], o["deliveryFeeRate"], o["basis"] = "", "", "", ""
	o["deliveryTime"] = "0"
	return o, nil
}

func (s *Server) tickers(q *request) (any, *apiError) {
	cat, aerr := categoryParam(q, "", "spot", "linear", "inverse", "option")
	if aerr != nil {
		return nil, aerr
	}
	list := s.listOf(cat)
	if sym := q.get("symbol"); sym != "" {
		i, ok := s.lookup(cat, sym)
		if !ok {
			return nil, &apiError{10001, "Not supported symbols"}
		}
		list = []*inst{i}
	}
	rows := []obj{}
	for _, i := range list {
		o, err := s.tickerObj(i)
		if err != nil {
			return nil, errInternal(err)
		}
		rows = append(rows, o)
	}
	return obj{"category": cat, "list": rows}, nil
}

func levelRows(ls []venue.Level) [][]string {
	out := make([][]string, 0, len(ls))
	for _, l := range ls {
		out = append(out, []string{dec(l.Price), dec(l.Qty)})
	}
	return out
}

func (s *Server) orderbook(q *request) (any, *apiError) {
	cat, aerr := categoryParam(q, "", "spot", "linear", "inverse", "option")
	if aerr != nil {
		return nil, aerr
	}
	i, aerr := s.symbolParam(q, cat)
	if aerr != nil {
		return nil, aerr
	}
	def := 25
	if cat == "spot" {
		def = 1
	}
	limit, aerr := intParam(q, "limit", def, 1, 1000)
	if aerr != nil {
		return nil, aerr
	}
	b, err := s.v.BookSnapshot(i.v.ID, limit)
	if err != nil {
		return nil, errInternal(err)
	}
	now := s.v.Now()
	return obj{"s": i.symbol, "b": levelRows(b.Bids), "a": levelRows(b.Asks), "ts": now, "u": int64(b.Seq),
		"seq": int64(b.Seq), "cts": b.Time}, nil
}

// kline serves newest first: up to limit (default 200, at most 1000) bars opening in [start, end].
func (s *Server) kline(q *request) (any, *apiError) {
	cat, aerr := categoryParam(q, "linear", "spot", "linear", "inverse")
	if aerr != nil {
		return nil, aerr
	}
	i, aerr := s.symbolParam(q, cat)
	if aerr != nil {
		return nil, aerr
	}
	code := q.get("interval")
	iv, ok := intervals[code]
	if !ok {
		return nil, errParams("interval invalid")
	}
	limit, aerr := intParam(q, "limit", 200, 1, 1000)
	if aerr != nil {
		return nil, aerr
	}
	start, aerr := msParam(q, "start")
	if aerr != nil {
		return nil, aerr
	}
	end, aerr := msParam(q, "end")
	if aerr != nil {
		return nil, aerr
	}
	if end > 0 && start > end {
		return nil, errParams("start must be less than end")
	}
	cs, err := s.v.Candles(i.v.ID, iv, end, limit)
	if err != nil {
		return nil, errInternal(err)
	}
	rows := [][]string{}
	for k := len(cs) - 1; k >= 0; k-- {
		c := cs[k]
		if c.Open < start {
			break
		}
		rows = append(rows, []string{ms(c.Open), dec(c.O), dec(c.H), dec(c.L), dec(c.C), dec(c.Volume), dec(c.QuoteVolume)})
	}
	return obj{"category": cat, "symbol": i.symbol, "list": rows}, nil
}

func side(sd venue.Side) string {
	if sd == venue.Buy {
		return "Buy"
	}
	return "Sell"
}

// recentTrade serves the newest trades first (spot at most 60, linear at most 1000).
func (s *Server) recentTrade(q *request) (any, *apiError) {
	cat, aerr := categoryParam(q, "", "spot", "linear", "inverse", "option")
	if aerr != nil {
		return nil, aerr
	}
	i, aerr := s.symbolParam(q, cat)
	if aerr != nil {
		return nil, aerr
	}
	def, hi := 500, 1000
	if cat == "spot" {
		def, hi = 60, 60
	}
	limit, aerr := intParam(q, "limit", def, 1, hi)
	if aerr != nil {
		return nil, aerr
	}
	ts, err := s.v.RecentTrades(i.v.ID, limit)
	if err != nil {
		return nil, errInternal(err)
	}
	rows := []obj{}
	for k := len(ts) - 1; k >= 0; k-- {
		t := ts[k]
		rows = append(rows, obj{"execId": strconv.FormatUint(t.ID, 10), "symbol": i.symbol, "price": dec(t.Price),
			"size": dec(t.Qty), "side": side(t.TakerSide), "time": ms(t.Time), "isBlockTrade": false,
			"isRPITrade": false, "seq": strconv.FormatUint(t.ID, 10)})
	}
	return obj{"category": cat, "list": rows}, nil
}

func (s *Server) serverTime(*request) (any, *apiError) {
	now := s.v.Now()
	return obj{"timeSecond": ms(now / 1000), "timeNano": ms(now) + "000000"}, nil
}

// fundingHistory serves settled rates newest first: at most limit (default and maximum 200) with
// fundingRateTimestamp in [startTime, endTime]; a startTime needs an endTime, as at Bybit.
func (s *Server) fundingHistory(q *request) (any, *apiError) {
	cat, aerr := categoryParam(q, "", "linear", "inverse")
	if aerr != nil {
		return nil, aerr
	}
	i, aerr := s.symbolParam(q, cat)
	if aerr != nil {
		return nil, aerr
	}
	limit, aerr := intParam(q, "limit", 200, 1, 200)
	if aerr != nil {
		return nil, aerr
	}
	start, aerr := msParam(q, "startTime")
	if aerr != nil {
		return nil, aerr
	}
	end, aerr := msParam(q, "endTime")
	if aerr != nil {
		return nil, aerr
	}
	if start > 0 && end == 0 {
		return nil, errParams("endTime is required when startTime is set")
	}
	to := int64(0)
	if end > 0 {
		to = end + 1
	}
	from := start
	if from == 0 {
		from = max(1, s.v.Now()-int64(limit+1)*eight)
		if end > 0 {
			from = max(1, end-int64(limit+1)*eight)
		}
	}
	hs, err := s.v.FundingHistory(i.v.ID, from, to, 1000)
	if err != nil {
		return nil, errInternal(err)
	}
	rows := []obj{}
	for k := len(hs) - 1; k >= 0 && len(rows) < limit; k-- {
		rows = append(rows, obj{"symbol": i.symbol, "fundingRate": dec(hs[k].Rate), "fundingRateTimestamp": ms(hs[k].Time)})
	}
	return obj{"category": cat, "list": rows}, nil
}

// cursorOf builds Bybit's analytics cursor (URL-encoded "lastid=0&lasttime=<seconds>"); cursorTime reads it back,
// whether the client sent it as received or decoded.
func cursorOf(t int64) string {
	return url.QueryEscape("lastid=0&lasttime=" + strconv.FormatInt(t/1000, 10))
}

func cursorTime(c string) (int64, bool) {
	for range 2 {
		if v, err := url.ParseQuery(c); err == nil && v.Get("lasttime") != "" {
			n, err := strconv.ParseInt(v.Get("lasttime"), 10, 64)
			return n * 1000, err == nil && n > 0
		}
		d, err := url.QueryUnescape(c)
		if err != nil {
			return 0, false
		}
		c = d
	}
	return 0, false
}

// stats reads the common parameters of open-interest and account-ratio and returns the perpetual's statistics
// newest first with the next page's cursor ("" when the window is exhausted).
func (s *Server) stats(q *request, periodKey string, def, hi int) (*inst, []venue.Stat, string, *apiError) {
	cat, aerr := categoryParam(q, "", "linear", "inverse")
	if aerr != nil {
		return nil, nil, "", aerr
	}
	i, aerr := s.symbolParam(q, cat)
	if aerr != nil {
		return nil, nil, "", aerr
	}
	per, ok := statPeriods[q.get(periodKey)]
	if !ok {
		return nil, nil, "", errParams(periodKey + " invalid")
	}
	limit, aerr := intParam(q, "limit", def, 1, hi)
	if aerr != nil {
		return nil, nil, "", aerr
	}
	start, aerr := msParam(q, "startTime")
	if aerr != nil {
		return nil, nil, "", aerr
	}
	end, aerr := msParam(q, "endTime")
	if aerr != nil {
		return nil, nil, "", aerr
	}
	to := int64(0)
	if end > 0 {
		// The venue serves periods starting before to: the period starting at endTime is in [startTime, endTime].
		to = end/statMs[per]*statMs[per] + statMs[per]
	}
	if c := q.get("cursor"); c != "" {
		t, ok := cursorTime(c)
		if !ok {
			return nil, nil, "", errParams("cursor invalid")
		}
		to = t // older than the last row of the previous page
	}
	st, err := s.v.Stats(i.v.ID, per, start, to, limit)
	if err != nil {
		return nil, nil, "", errInternal(err)
	}
	for a, b := 0, len(st)-1; a < b; a, b = a+1, b-1 {
		st[a], st[b] = st[b], st[a]
	}
	next := ""
	if len(st) == limit {
		next = cursorOf(st[len(st)-1].Time)
	}
	return i, st, next, nil
}

func (s *Server) openInterest(q *request) (any, *apiError) {
	i, st, next, aerr := s.stats(q, "intervalTime", 50, 200)
	if aerr != nil {
		return nil, aerr
	}
	rows := []obj{}
	for _, x := range st {
		rows = append(rows, obj{"openInterest": dec(x.OpenInterest), "timestamp": ms(x.Time)})
	}
	return obj{"symbol": i.symbol, "category": i.category(), "list": rows, "nextPageCursor": next}, nil
}

func (s *Server) accountRatio(q *request) (any, *apiError) {
	i, st, next, aerr := s.stats(q, "period", 50, 500)
	if aerr != nil {
		return nil, aerr
	}
	rows := []obj{}
	for _, x := range st {
		rows = append(rows, obj{"symbol": i.symbol, "buyRatio": dec(x.LongAccount), "sellRatio": dec(x.ShortAccount),
			"timestamp": ms(x.Time)})
	}
	return obj{"list": rows, "nextPageCursor": next}, nil
}
