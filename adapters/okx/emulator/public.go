package emulator

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
)

func (s *Server) instObj(i *inst) obj {
	in := i.v
	o := obj{
		"alias": "", "auctionEndTime": "", "baseCcy": "", "category": "1", "ctMult": "", "ctType": "", "ctVal": "",
		"ctValCcy": "", "expTime": "", "instFamily": "", "instId": i.id, "instType": i.instType(), "lever": "",
		"listTime": ms(in.Listed), "lotSz": i.szString(in.StepSize), "maxIcebergSz": i.szString(in.MaxQty),
		"maxLmtAmt": "20000000", "maxLmtSz": i.szString(in.MaxQty), "maxMktAmt": "1000000",
		"maxMktSz": i.szString(in.MarketMax), "maxStopSz": i.szString(in.MarketMax),
		"maxTriggerSz": i.szString(in.MaxQty), "maxTwapSz": i.szString(in.MaxQty), "minSz": i.szString(in.MinQty),
		"optType": "", "quoteCcy": "", "ruleType": "normal", "settleCcy": "", "state": stateOf(in.Status),
		"stk": "", "tickSz": dec(in.TickSize), "uly": "", "instIdCode": instIDCode(i),
	}
	if in.MinNotional.IsPositive() {
		// Not an OKX field: the venue refuses orders worth less (51020), and this is how a client learns the amount.
		o["minNotional"] = dec(in.MinNotional)
	}
	if i.swap {
		o["ctMult"] = dec(ctMult)
		o["ctType"] = "linear"
		o["ctVal"] = dec(i.ctVal)
		o["ctValCcy"] = in.Base
		o["instFamily"] = i.family()
		o["uly"] = i.family()
		o["lever"] = strconv.Itoa(in.MaxLeverage)
		o["settleCcy"] = in.Quote
		o["maxMktAmt"] = ""
		o["futureSettlement"] = false
	} else {
		o["baseCcy"] = in.Base
		o["quoteCcy"] = in.Quote
		o["tradeQuoteCcyList"] = []string{in.Quote}
	}
	return o
}

// instIDCode is a stable numeric code per instrument (OKX's instIdCode is an integer).
func instIDCode(i *inst) int64 {
	var h int64 = 7
	for _, c := range i.id {
		h = (h*131 + int64(c)) % 1_000_000
	}
	return h
}

func (s *Server) instType(q *request, allowed ...string) (string, *apiError) {
	t := strings.ToUpper(q.get("instType"))
	if t == "" {
		return "", errEmpty("instType")
	}
	for _, a := range allowed {
		if a == t {
			return t, nil
		}
	}
	return "", errParam("instType")
}

// instrumentsOf lists live or suspended instruments of a type (SPOT or SWAP; other OKX types have none here).
func (s *Server) instrumentsOf(t string) []*inst {
	var out []*inst
	for _, i := range s.insts {
		if i.instType() == t && i.v.Status != venue.Delisted {
			out = append(out, i)
		}
	}
	return out
}

func (s *Server) instruments(q *request) (result, *apiError) {
	t, err := s.instType(q, "SPOT", "MARGIN", "SWAP", "FUTURES", "OPTION")
	if err != nil {
		return result{}, err
	}
	rows := []obj{}
	if id := q.get("instId"); id != "" {
		i, ok := s.lookup(id)
		if !ok || i.instType() != t {
			return result{}, errNoInst()
		}
		return result{data: []obj{s.instObj(i)}}, nil
	}
	for _, i := range s.instrumentsOf(t) {
		rows = append(rows, s.instObj(i))
	}
	return result{data: rows}, nil
}

func (s *Server) tickerObj(i *inst) (obj, error) {
	t, err := s.v.Ticker(i.v.ID)
	if err != nil {
		return nil, err
	}
	u0, u8 := s.sodPrices(i, t.Time)
	lastSz := decimal.Zero
	if tr, err := s.v.RecentTrades(i.v.ID, 1); err == nil && len(tr) > 0 {
		lastSz = tr[0].Qty
	}
	vol, volCcy := i.szString(t.Volume), dec(t.QuoteVolume)
	if i.swap {
		volCcy = dec(t.Volume)
	}
	return obj{"instType": i.instType(), "instId": i.id, "last": dec(t.Last), "lastSz": i.szString(lastSz),
		"askPx": px(t.BestAsk.Price), "askSz": i.szString(t.BestAsk.Qty), "bidPx": px(t.BestBid.Price),
		"bidSz": i.szString(t.BestBid.Qty), "open24h": dec(t.Open), "high24h": dec(t.High), "low24h": dec(t.Low),
		"volCcy24h": volCcy, "vol24h": vol, "sodUtc0": dec(u0), "sodUtc8": dec(u8), "ts": ms(t.Time)}, nil
}

// px renders a price; an absent price (zero) is "" as OKX leaves empty fields.
func px(d decimal.Decimal) string {
	if d.IsZero() {
		return ""
	}
	return dec(d)
}

func (s *Server) tickers(q *request) (result, *apiError) {
	t, err := s.instType(q, "SPOT", "MARGIN", "SWAP", "FUTURES", "OPTION")
	if err != nil {
		return result{}, err
	}
	fam := q.get("instFamily")
	rows := []obj{}
	for _, i := range s.instrumentsOf(t) {
		if fam != "" && (!i.swap || i.family() != fam) {
			continue
		}
		o, err := s.tickerObj(i)
		if err != nil {
			return result{}, internal(err)
		}
		rows = append(rows, o)
	}
	return result{data: rows}, nil
}

func (s *Server) instParam(q *request) (*inst, *apiError) {
	id := q.get("instId")
	if id == "" {
		return nil, errEmpty("instId")
	}
	i, ok := s.lookup(id)
	if !ok {
		return nil, errNoInst()
	}
	return i, nil
}

func (s *Server) ticker(q *request) (result, *apiError) {
	i, aerr := s.instParam(q)
	if aerr != nil {
		return result{}, aerr
	}
	o, err := s.tickerObj(i)
	if err != nil {
		return result{}, internal(err)
	}
	return result{data: []obj{o}}, nil
}

func internal(err error) *apiError {
	if errors.Is(err, venue.ErrInstrument) {
		return errNoInst()
	}
	return &apiError{http.StatusInternalServerError, "50001", "Service temporarily unavailable: " + err.Error()}
}

func (s *Server) markPrice(q *request) (result, *apiError) {
	t, aerr := s.instType(q, "MARGIN", "SWAP", "FUTURES", "OPTION")
	if aerr != nil {
		return result{}, aerr
	}
	list := s.instrumentsOf(t)
	if id := q.get("instId"); id != "" {
		i, ok := s.lookup(id)
		if !ok || i.instType() != t {
			return result{}, errNoInst()
		}
		list = []*inst{i}
	}
	rows := []obj{}
	for _, i := range list {
		m, err := s.v.Mark(i.v.ID)
		if err != nil {
			return result{}, internal(err)
		}
		rows = append(rows, obj{"instType": t, "instId": i.id, "markPx": dec(m.Mark), "ts": ms(m.Time)})
	}
	return result{data: rows}, nil
}

// indexTickers serves the index of each coin against USDT: the perpetual's index price when there is one.
func (s *Server) indexTickers(q *request) (result, *apiError) {
	id, quote := q.get("instId"), q.get("quoteCcy")
	if id == "" && quote == "" {
		return result{}, &apiError{http.StatusBadRequest, "50014", "Parameter quoteCcy or instId can not be empty"}
	}
	rows := []obj{}
	for _, i := range s.insts {
		if i.swap || (id != "" && i.id != strings.ToUpper(id)) || (quote != "" && i.v.Quote != strings.ToUpper(quote)) {
			continue
		}
		t, err := s.v.Ticker(i.v.ID)
		if err != nil {
			return result{}, internal(err)
		}
		idx := t.Last
		if p, ok := s.perpOf(i.v.Base); ok {
			if m, err := s.v.Mark(p.v.ID); err == nil {
				idx = m.Index
			}
		}
		u0, u8 := s.sodPrices(i, t.Time)
		rows = append(rows, obj{"instId": i.id, "idxPx": dec(idx), "high24h": dec(t.High), "low24h": dec(t.Low),
			"open24h": dec(t.Open), "sodUtc0": dec(u0), "sodUtc8": dec(u8), "ts": ms(t.Time)})
	}
	if id != "" && len(rows) == 0 {
		return result{}, errNoInst()
	}
	return result{data: rows}, nil
}

func (s *Server) swapParam(q *request) (*inst, *apiError) {
	i, aerr := s.instParam(q)
	if aerr != nil {
		return nil, aerr
	}
	if !i.swap {
		return nil, errParam("instId")
	}
	return i, nil
}

const eightHours = 8 * hourMs

func (s *Server) fundingObj(i *inst) (obj, error) {
	m, err := s.v.Mark(i.v.ID)
	if err != nil {
		return nil, err
	}
	sett := m.FundingRate
	if h, err := s.v.FundingHistory(i.v.ID, m.NextFunding-eightHours-1, m.NextFunding, 1); err == nil && len(h) > 0 {
		sett = h[len(h)-1].Rate
	}
	premium := decimal.Zero
	if !m.Index.IsZero() {
		premium = m.Mark.Sub(m.Index).DivRound(m.Index, 10)
	}
	return obj{"instType": "SWAP", "instId": i.id, "fundingRate": dec(m.FundingRate), "fundingTime": ms(m.NextFunding),
		"nextFundingTime": ms(m.NextFunding + eightHours), "nextFundingRate": "", "method": "current_period",
		"formulaType": "withRate", "maxFundingRate": "0.00375", "minFundingRate": "-0.00375",
		"premium": dec(premium), "settFundingRate": dec(sett), "settState": "settled", "interestRate": "0.0001",
		"impactValue": "20000", "ts": ms(m.Time)}, nil
}

func (s *Server) fundingRate(q *request) (result, *apiError) {
	i, aerr := s.swapParam(q)
	if aerr != nil {
		return result{}, aerr
	}
	o, err := s.fundingObj(i)
	if err != nil {
		return result{}, internal(err)
	}
	return result{data: []obj{o}}, nil
}

// paging reads OKX's after/before cursors (records older than after, newer than before) and limit.
func paging(q *request, def, max int) (after, before int64, limit int, aerr *apiError) {
	var err error
	if v := q.get("after"); v != "" {
		if after, err = strconv.ParseInt(v, 10, 64); err != nil || after < 0 {
			return 0, 0, 0, errParam("after")
		}
	}
	if v := q.get("before"); v != "" {
		if before, err = strconv.ParseInt(v, 10, 64); err != nil || before < 0 {
			return 0, 0, 0, errParam("before")
		}
	}
	limit = def
	if v := q.get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit <= 0 {
			return 0, 0, 0, errParam("limit")
		}
		limit = min(limit, max)
	}
	return after, before, limit, nil
}

func (s *Server) fundingHistory(q *request) (result, *apiError) {
	i, aerr := s.swapParam(q)
	if aerr != nil {
		return result{}, aerr
	}
	after, before, limit, aerr := paging(q, 100, 400)
	if aerr != nil {
		return result{}, aerr
	}
	from := int64(0)
	if before > 0 {
		from = before + 1
	}
	// Read the whole window then keep the newest: the venue keeps the latest of its range.
	hs, err := s.v.FundingHistory(i.v.ID, from, after, 1000)
	if err != nil {
		return result{}, internal(err)
	}
	rows := []obj{}
	for k := len(hs) - 1; k >= 0 && len(rows) < limit; k-- {
		h := hs[k]
		rows = append(rows, obj{"instType": "SWAP", "instId": i.id, "fundingRate": dec(h.Rate),
			"realizedRate": dec(h.Rate), "fundingTime": ms(h.Time), "method": "current_period", "formulaType": "withRate"})
	}
	return result{data: rows}, nil
}

// levelRows renders book levels as OKX's [px, sz, "0", numOrders].
func levelRows(i *inst, ls []venue.Level) [][]string {
	out := make([][]string, 0, len(ls))
	for _, l := range ls {
		out = append(out, []string{dec(l.Price), i.szString(l.Qty), "0", "1"})
	}
	return out
}

func (s *Server) books(q *request) (result, *apiError) {
	i, aerr := s.instParam(q)
	if aerr != nil {
		return result{}, aerr
	}
	sz := 1
	if v := q.get("sz"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return result{}, errParam("sz")
		}
		sz = min(n, 400)
	}
	b, err := s.v.BookSnapshot(i.v.ID, sz)
	if err != nil {
		return result{}, internal(err)
	}
	return result{data: []obj{{"asks": levelRows(i, b.Asks), "bids": levelRows(i, b.Bids), "ts": ms(b.Time)}}}, nil
}

// candleRow is OKX's [ts, o, h, l, c, vol, volCcy, volCcyQuote, confirm]: vol in contracts for swaps and base
// otherwise, volCcy in base for swaps and quote for spot, volCcyQuote in quote.
func candleRow(i *inst, b bar) []string {
	confirm := "0"
	if b.closed {
		confirm = "1"
	}
	volCcy := dec(b.volQ)
	if i.swap {
		volCcy = dec(b.vol)
	}
	return []string{ms(b.ts), dec(b.o), dec(b.h), dec(b.l), dec(b.c), i.szString(b.vol), volCcy, dec(b.volQ), confirm}
}

func (s *Server) candles(max int) handler {
	return func(q *request) (result, *apiError) {
		i, aerr := s.instParam(q)
		if aerr != nil {
			return result{}, aerr
		}
		code := q.get("bar")
		if code == "" {
			code = "1m"
		}
		if _, ok := barSpecs[code]; !ok {
			return result{}, errParam("bar")
		}
		after, before, limit, aerr := paging(q, 100, max)
		if aerr != nil {
			return result{}, aerr
		}
		bars, err := s.candleRange(i, code, after, before, limit)
		if err != nil {
			return result{}, internal(err)
		}
		rows := make([][]string, 0, len(bars))
		for _, b := range bars {
			rows = append(rows, candleRow(i, b))
		}
		return result{data: rows}, nil
	}
}

func side(sd venue.Side) string {
	if sd == venue.Buy {
		return "buy"
	}
	return "sell"
}

func (s *Server) trades(q *request) (result, *apiError) {
	i, aerr := s.instParam(q)
	if aerr != nil {
		return result{}, aerr
	}
	_, _, limit, aerr := paging(q, 100, 500)
	if aerr != nil {
		return result{}, aerr
	}
	ts, err := s.v.RecentTrades(i.v.ID, limit)
	if err != nil {
		return result{}, internal(err)
	}
	rows := []obj{}
	for k := len(ts) - 1; k >= 0; k-- {
		rows = append(rows, tradeObj(i, ts[k]))
	}
	return result{data: rows}, nil
}

func tradeObj(i *inst, t venue.Trade) obj {
	return obj{"instId": i.id, "tradeId": strconv.FormatUint(t.ID, 10), "px": dec(t.Price), "sz": i.szString(t.Qty),
		"side": side(t.TakerSide), "ts": ms(t.Time)}
}

func (s *Server) serverTime(*request) (result, *apiError) {
	return result{data: []obj{{"ts": ms(s.v.Now())}}}, nil
}

func (s *Server) openInterest(q *request) (result, *apiError) {
	t, aerr := s.instType(q, "SWAP", "FUTURES", "OPTION")
	if aerr != nil {
		return result{}, aerr
	}
	list := s.instrumentsOf(t)
	id, fam := q.get("instId"), q.get("instFamily")
	if id != "" {
		i, ok := s.lookup(id)
		if !ok || i.instType() != t {
			return result{}, errNoInst()
		}
		list = []*inst{i}
	}
	rows := []obj{}
	now := s.v.Now()
	for _, i := range list {
		if fam != "" && i.family() != fam {
			continue
		}
		st, err := s.v.Stats(i.v.ID, "5m", 0, 0, 1)
		if err != nil {
			return result{}, internal(err)
		}
		if len(st) == 0 {
			continue
		}
		oi := st[len(st)-1]
		rows = append(rows, obj{"instType": t, "instId": i.id, "oi": i.szString(oi.OpenInterest),
			"oiCcy": dec(oi.OpenInterest), "oiUsd": dec(oi.OpenInterestValue), "ts": ms(now)})
	}
	return result{data: rows}, nil
}

// rubikPeriods maps OKX's statistics periods to the venue's.
var rubikPeriods = map[string]string{"5m": "5m", "1H": "1h", "1D": "1d"}

const rubikRows = 100

// rubik reads the common ccy/period/begin/end parameters and returns the coin's swap statistics, newest first.
func (s *Server) rubik(q *request) (*inst, string, []venue.Stat, *apiError) {
	ccy := q.get("ccy")
	if ccy == "" {
		return nil, "", nil, errEmpty("ccy")
	}
	p := q.get("period")
	if p == "" {
		p = "5m"
	}
	per, ok := rubikPeriods[p]
	if !ok {
		return nil, "", nil, errParam("period")
	}
	i, ok := s.perpOf(ccy)
	if !ok {
		return nil, "", nil, errParam("ccy")
	}
	var begin, end int64
	var err error
	if v := q.get("begin"); v != "" {
		if begin, err = strconv.ParseInt(v, 10, 64); err != nil {
			return nil, "", nil, errParam("begin")
		}
	}
	if v := q.get("end"); v != "" {
		if end, err = strconv.ParseInt(v, 10, 64); err != nil {
			return nil, "", nil, errParam("end")
		}
		end++ // inclusive
	}
	st, err := s.v.Stats(i.v.ID, per, begin, end, rubikRows)
	if err != nil {
		return nil, "", nil, internal(err)
	}
	for a, b := 0, len(st)-1; a < b; a, b = a+1, b-1 {
		st[a], st[b] = st[b], st[a]
	}
	return i, per, st, nil
}

func (s *Server) longShortRatio(q *request) (result, *apiError) {
	_, _, st, aerr := s.rubik(q)
	if aerr != nil {
		return result{}, aerr
	}
	rows := [][]string{}
	for _, x := range st {
		rows = append(rows, []string{ms(x.Time), dec(x.LongShortAccountRatio)})
	}
	return result{data: rows}, nil
}

// takerVolume serves [ts, sellVol, buyVol] in the coin: from the swap for CONTRACTS, from spot bars for SPOT.
func (s *Server) takerVolume(q *request) (result, *apiError) {
	t := strings.ToUpper(q.get("instType"))
	if t == "" {
		return result{}, errEmpty("instType")
	}
	if t != "SPOT" && t != "CONTRACTS" {
		return result{}, errParam("instType")
	}
	_, per, st, aerr := s.rubik(q)
	if aerr != nil {
		return result{}, aerr
	}
	rows := [][]string{}
	if t == "CONTRACTS" {
		for _, x := range st {
			rows = append(rows, []string{ms(x.Time), dec(x.TakerSellVolume), dec(x.TakerBuyVolume)})
		}
		return result{data: rows}, nil
	}
	sp, ok := s.spotOf(q.get("ccy"))
	if !ok || len(st) == 0 {
		return result{data: rows}, nil
	}
	cs, err := s.v.Candles(sp.v.ID, per, st[0].Time, len(st))
	if err != nil {
		return result{}, internal(err)
	}
	for k := len(cs) - 1; k >= 0; k-- {
		c := cs[k]
		if c.Open < st[len(st)-1].Time {
			continue
		}
		rows = append(rows, []string{ms(c.Open), dec(c.Volume.Sub(c.TakerBuyBase)), dec(c.TakerBuyBase)})
	}
	return result{data: rows}, nil
}

// oiVolume serves [ts, open interest in USD, volume in USD] of the coin's swap.
func (s *Server) oiVolume(q *request) (result, *apiError) {
	i, per, st, aerr := s.rubik(q)
	if aerr != nil {
		return result{}, aerr
	}
	rows := [][]string{}
	if len(st) == 0 {
		return result{data: rows}, nil
	}
	vol := map[int64]decimal.Decimal{}
	if cs, err := s.v.Candles(i.v.ID, per, st[0].Time, len(st)); err == nil {
		for _, c := range cs {
			vol[c.Open] = c.QuoteVolume
		}
	}
	for _, x := range st {
		rows = append(rows, []string{ms(x.Time), dec(x.OpenInterestValue), dec(vol[x.Time])})
	}
	return result{data: rows}, nil
}
