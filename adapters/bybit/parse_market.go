package bybit

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// ---------------------------------------------------------------------------------------------------------------
// Instruments

type rawInstrument struct {
	Symbol        string `json:"symbol"`
	ContractType  string `json:"contractType"`
	Status        string `json:"status"`
	BaseCoin      string `json:"baseCoin"`
	QuoteCoin     string `json:"quoteCoin"`
	SettleCoin    string `json:"settleCoin"`
	LaunchTime    string `json:"launchTime"`
	LotSizeFilter struct {
		BasePrecision    string `json:"basePrecision"`
		QtyStep          string `json:"qtyStep"`
		MinOrderQty      string `json:"minOrderQty"`
		MaxOrderQty      string `json:"maxOrderQty"`
		MaxMktOrderQty   string `json:"maxMktOrderQty"`
		MinOrderAmt      string `json:"minOrderAmt"`
		MinNotionalValue string `json:"minNotionalValue"`
	} `json:"lotSizeFilter"`
	PriceFilter struct {
		TickSize string `json:"tickSize"`
		MinPrice string `json:"minPrice"`
		MaxPrice string `json:"maxPrice"`
	} `json:"priceFilter"`
	LeverageFilter struct {
		MaxLeverage string `json:"maxLeverage"`
	} `json:"leverageFilter"`
	FundingInterval int64 `json:"fundingInterval"` // minutes (linear)
}

// Instrument is one live Bybit instrument with its filters parsed. Sizes are in the base coin for spot and linear
// alike (Bybit's linear contracts are one base unit each).
type Instrument struct {
	Symbol      string
	Category    string
	MarketType  exchangev1.MarketType
	Base        string
	Quote       string
	Settle      string
	TickSize    decimal.Decimal
	MinPrice    decimal.Decimal
	MaxPrice    decimal.Decimal
	StepSize    decimal.Decimal
	MinQty      decimal.Decimal
	MaxQty      decimal.Decimal
	MarketMax   decimal.Decimal
	MinNotional decimal.Decimal
	MaxLeverage decimal.Decimal
	ListedTime  int64
	// FundingHours is the funding interval of a perpetual (Bybit's fundingInterval in minutes / 60).
	FundingHours int32
}

// instrumentsPage is one page of instruments-info.
type instrumentsPage struct {
	Category       string            `json:"category"`
	List           []json.RawMessage `json:"list"`
	NextPageCursor string            `json:"nextPageCursor"`
}

// ParseInstruments reads one instruments-info result of a category: the instruments the hub lists (status
// Trading; for linear only USDT-settled LinearPerpetual, the spec's filter rule) and the cursor of the next page
// ("" when done). A row that is listed but does not parse fails the whole page.
func ParseInstruments(result json.RawMessage, category string) ([]*Instrument, string, error) {
	var page instrumentsPage
	if err := json.Unmarshal(result, &page); err != nil {
		return nil, "", fmt.Errorf("%w: instruments: %v", errMalformed, err)
	}
	if page.List == nil {
		return nil, "", fmt.Errorf("%w: instruments: no list", errMalformed)
	}
	var out []*Instrument
	for _, raw := range page.List {
		var r rawInstrument
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, "", fmt.Errorf("%w: instrument: %v", errMalformed, err)
		}
		if r.Status != "Trading" {
			continue
		}
		if category == catLinear && (r.ContractType != "LinearPerpetual" || r.SettleCoin != "USDT") {
			continue
		}
		in, err := instrumentOf(r, category)
		if err != nil {
			return nil, "", err
		}
		out = append(out, in)
	}
	return out, page.NextPageCursor, nil
}

func instrumentOf(r rawInstrument, category string) (*Instrument, error) {
	if r.Symbol == "" || r.BaseCoin == "" || r.QuoteCoin == "" {
		return nil, fmt.Errorf("%w: instrument %q without symbol, baseCoin or quoteCoin", errMalformed, r.Symbol)
	}
	bad := func(err error) error { return fmt.Errorf("%w: instrument %s: %v", errMalformed, r.Symbol, err) }
	in := &Instrument{Symbol: r.Symbol, Category: category, Base: r.BaseCoin, Quote: r.QuoteCoin}
	var err error
	if in.TickSize, err = mustDec("tickSize", r.PriceFilter.TickSize); err != nil {
		return nil, bad(err)
	}
	step := r.LotSizeFilter.QtyStep
	if category == catSpot {
		in.MarketType = exchangev1.MarketType_MARKET_TYPE_SPOT
		step = r.LotSizeFilter.BasePrecision
	} else {
		in.MarketType = exchangev1.MarketType_MARKET_TYPE_SWAP
		in.Settle = r.SettleCoin
	}
	if in.StepSize, err = mustDec("qtyStep", step); err != nil {
		return nil, bad(err)
	}
	if in.MinQty, err = mustDec("minOrderQty", r.LotSizeFilter.MinOrderQty); err != nil {
		return nil, bad(err)
	}
	if !in.TickSize.IsPositive() || !in.StepSize.IsPositive() || !in.MinQty.IsPositive() {
		return nil, bad(fmt.Errorf("tick size, step and minimum must be positive"))
	}
	opt := []struct {
		name string
		s    string
		dst  *decimal.Decimal
	}{
		{"minPrice", r.PriceFilter.MinPrice, &in.MinPrice}, {"maxPrice", r.PriceFilter.MaxPrice, &in.MaxPrice},
		{"maxOrderQty", r.LotSizeFilter.MaxOrderQty, &in.MaxQty}, {"maxMktOrderQty", r.LotSizeFilter.MaxMktOrderQty, &in.MarketMax},
		{"minOrderAmt", r.LotSizeFilter.MinOrderAmt, &in.MinNotional}, {"maxLeverage", r.LeverageFilter.MaxLeverage, &in.MaxLeverage},
	}
	if category == catLinear {
		opt[4] = struct {
			name string
			s    string
			dst  *decimal.Decimal
		}{"minNotionalValue", r.LotSizeFilter.MinNotionalValue, &in.MinNotional}
	}
	for _, f := range opt {
		d, _, err := parseDec(f.name, f.s)
		if err != nil {
			return nil, bad(err)
		}
		*f.dst = d
	}
	if in.ListedTime, err = parseMs("launchTime", r.LaunchTime); err != nil {
		return nil, bad(err)
	}
	if r.FundingInterval > 0 {
		in.FundingHours = int32(r.FundingInterval / 60)
	}
	return in, nil
}

// Proto is the contract's view of the instrument.
func (in *Instrument) Proto() *exchangev1.Instrument {
	p := &exchangev1.Instrument{Symbol: in.Symbol, MarketType: in.MarketType, Base: in.Base, Quote: in.Quote, Settle: in.Settle,
		Status: exchangev1.InstrumentStatus_INSTRUMENT_STATUS_TRADING, TickSize: canon(in.TickSize),
		StepSize: canon(in.StepSize), MinQty: canon(in.MinQty), MarketStepSize: canon(in.StepSize), MarketMinQty: canon(in.MinQty),
		ListedTime: in.ListedTime}
	if in.MinPrice.IsPositive() {
		p.MinPrice = canon(in.MinPrice)
	}
	if in.MaxPrice.IsPositive() {
		p.MaxPrice = canon(in.MaxPrice)
	}
	if in.MaxQty.IsPositive() {
		p.MaxQty = canon(in.MaxQty)
		p.MarketMaxQty = canon(in.MaxQty)
	}
	if in.MarketMax.IsPositive() {
		p.MarketMaxQty = canon(in.MarketMax)
	}
	if in.MinNotional.IsPositive() {
		p.MinNotional = canon(in.MinNotional)
	}
	if in.MarketType == exchangev1.MarketType_MARKET_TYPE_SWAP {
		p.ContractValue = "1"
		p.ContractValueAsset = in.Base
		p.Family = in.Base + "-" + in.Quote
		if in.MaxLeverage.IsPositive() {
			p.MaxLeverage = canon(in.MaxLeverage)
		}
	}
	return p
}

// ---------------------------------------------------------------------------------------------------------------
// Tickers

// rawTicker is one row of /v5/market/tickers and the data of the tickers WebSocket topic (where a delta carries
// only the fields that changed).
type rawTicker struct {
	Symbol          string `json:"symbol"`
	LastPrice       string `json:"lastPrice"`
	PrevPrice24h    string `json:"prevPrice24h"`
	Price24hPcnt    string `json:"price24hPcnt"`
	HighPrice24h    string `json:"highPrice24h"`
	LowPrice24h     string `json:"lowPrice24h"`
	Volume24h       string `json:"volume24h"`
	Turnover24h     string `json:"turnover24h"`
	Bid1Price       string `json:"bid1Price"`
	Bid1Size        string `json:"bid1Size"`
	Ask1Price       string `json:"ask1Price"`
	Ask1Size        string `json:"ask1Size"`
	MarkPrice       string `json:"markPrice"`
	IndexPrice      string `json:"indexPrice"`
	FundingRate     string `json:"fundingRate"`
	NextFundingTime string `json:"nextFundingTime"`
	OpenInterest    string `json:"openInterest"`
}

type listResult[T any] struct {
	Category       string `json:"category"`
	List           []T    `json:"list"`
	NextPageCursor string `json:"nextPageCursor"`
}

func decodeList[T any](result json.RawMessage, what string) (listResult[T], error) {
	var r listResult[T]
	if err := json.Unmarshal(result, &r); err != nil {
		return r, fmt.Errorf("%w: %s: %v", errMalformed, what, err)
	}
	if r.List == nil {
		return r, fmt.Errorf("%w: %s: no list", errMalformed, what)
	}
	return r, nil
}

// ParseTickers reads a tickers result.
func ParseTickers(result json.RawMessage) ([]rawTicker, error) {
	r, err := decodeList[rawTicker](result, "tickers")
	return r.List, err
}

// tickerProto converts a ticker row; ts is the time of the answer (Bybit's rows have none).
func tickerProto(r rawTicker, in *Instrument, ts int64) (*exchangev1.Ticker, error) {
	last, err := mustDec("lastPrice", r.LastPrice)
	if err != nil {
		return nil, err
	}
	t := &exchangev1.Ticker{Symbol: in.Symbol, MarketType: in.MarketType, Last: canon(last), Time: ts}
	fields := []struct {
		name, s string
		dst     *string
	}{
		{"prevPrice24h", r.PrevPrice24h, &t.Open_24H}, {"highPrice24h", r.HighPrice24h, &t.High_24H},
		{"lowPrice24h", r.LowPrice24h, &t.Low_24H}, {"volume24h", r.Volume24h, &t.Volume_24H},
		{"turnover24h", r.Turnover24h, &t.QuoteVolume_24H}, {"bid1Price", r.Bid1Price, &t.Bid},
		{"bid1Size", r.Bid1Size, &t.BidQty}, {"ask1Price", r.Ask1Price, &t.Ask}, {"ask1Size", r.Ask1Size, &t.AskQty},
		{"markPrice", r.MarkPrice, &t.MarkPrice}, {"indexPrice", r.IndexPrice, &t.IndexPrice},
		{"fundingRate", r.FundingRate, &t.FundingRate}, {"openInterest", r.OpenInterest, &t.OpenInterest},
	}
	for _, f := range fields {
		v, err := canonStr(f.name, f.s)
		if err != nil {
			return nil, err
		}
		*f.dst = v
	}
	// Bybit quotes an empty side as "0"/"": the contract leaves it empty.
	if t.Bid == "0" {
		t.Bid, t.BidQty = "", ""
	}
	if t.Ask == "0" {
		t.Ask, t.AskQty = "", ""
	}
	if pct, ok, err := parseDec("price24hPcnt", r.Price24hPcnt); err != nil {
		return nil, err
	} else if ok {
		t.ChangePct_24H = canon(pct.Mul(decimal.NewFromInt(100)).Round(2))
	}
	if t.NextFundingTime, err = parseMs("nextFundingTime", r.NextFundingTime); err != nil {
		return nil, err
	}
	return t, nil
}

// mergeTicker applies a tickers delta to the last full row, field by field: a field the delta leaves out keeps its
// value.
func mergeTicker(prev, d rawTicker) rawTicker {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&prev.Symbol, d.Symbol)
	set(&prev.LastPrice, d.LastPrice)
	set(&prev.PrevPrice24h, d.PrevPrice24h)
	set(&prev.Price24hPcnt, d.Price24hPcnt)
	set(&prev.HighPrice24h, d.HighPrice24h)
	set(&prev.LowPrice24h, d.LowPrice24h)
	set(&prev.Volume24h, d.Volume24h)
	set(&prev.Turnover24h, d.Turnover24h)
	set(&prev.Bid1Price, d.Bid1Price)
	set(&prev.Bid1Size, d.Bid1Size)
	set(&prev.Ask1Price, d.Ask1Price)
	set(&prev.Ask1Size, d.Ask1Size)
	set(&prev.MarkPrice, d.MarkPrice)
	set(&prev.IndexPrice, d.IndexPrice)
	set(&prev.FundingRate, d.FundingRate)
	set(&prev.NextFundingTime, d.NextFundingTime)
	set(&prev.OpenInterest, d.OpenInterest)
	return prev
}

// ---------------------------------------------------------------------------------------------------------------
// Order book

// rawBook is the orderbook result and the data of the orderbook WebSocket topic.
type rawBook struct {
	S   string     `json:"s"`
	B   [][]string `json:"b"`
	A   [][]string `json:"a"`
	Ts  int64      `json:"ts"`
	U   int64      `json:"u"`
	Seq int64      `json:"seq"`
}

// ParseBook reads an orderbook result or message data; every level must be a [price, size] pair of decimals.
func ParseBook(data json.RawMessage) (rawBook, error) {
	var b rawBook
	if err := json.Unmarshal(data, &b); err != nil {
		return b, fmt.Errorf("%w: orderbook: %v", errMalformed, err)
	}
	if b.S == "" || b.B == nil && b.A == nil {
		return b, fmt.Errorf("%w: orderbook without symbol or sides", errMalformed)
	}
	for _, side := range [][][]string{b.B, b.A} {
		for _, l := range side {
			if len(l) < 2 {
				return b, fmt.Errorf("%w: orderbook level %v", errMalformed, l)
			}
			if _, err := mustDec("price", l[0]); err != nil {
				return b, err
			}
			if q, err := mustDec("size", l[1]); err != nil || q.IsNegative() {
				return b, fmt.Errorf("%w: orderbook size %q", errMalformed, l[1])
			}
		}
	}
	return b, nil
}

// ---------------------------------------------------------------------------------------------------------------
// Candles

// ParseKlines reads a kline result: [start, open, high, low, close, volume, turnover] rows, newest first at
// Bybit; the candles come back ascending. A candle is closed once its interval ended at now (the answer's time).
func ParseKlines(result json.RawMessage, interval string, now int64) ([]*exchangev1.Candle, error) {
	r, err := decodeList[[]string](result, "kline")
	if err != nil {
		return nil, err
	}
	out := make([]*exchangev1.Candle, 0, len(r.List))
	for _, row := range r.List {
		c, err := klineRow(row, interval, now)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *exchangev1.Candle) int { return cmp.Compare(a.OpenTime, b.OpenTime) })
	for i := 1; i < len(out); i++ {
		if out[i].OpenTime == out[i-1].OpenTime {
			return nil, fmt.Errorf("%w: kline %d repeated", errMalformed, out[i].OpenTime)
		}
	}
	return out, nil
}

func klineRow(row []string, interval string, now int64) (*exchangev1.Candle, error) {
	if len(row) < 7 {
		return nil, fmt.Errorf("%w: kline row of %d fields", errMalformed, len(row))
	}
	ts, err := strconv.ParseInt(row[0], 10, 64)
	if err != nil || ts < 0 {
		return nil, fmt.Errorf("%w: kline start %q", errMalformed, row[0])
	}
	c := &exchangev1.Candle{OpenTime: ts, Closed: intervalEnd(interval, ts) <= now}
	for i, dst := range []*string{&c.Open, &c.High, &c.Low, &c.Close} {
		d, err := mustDec("ohlc", row[i+1])
		if err != nil || !d.IsPositive() {
			return nil, fmt.Errorf("%w: kline %d: bad price %q", errMalformed, ts, row[i+1])
		}
		*dst = canon(d)
	}
	for i, dst := range []*string{&c.Volume, &c.QuoteVolume} {
		d, err := mustDec("volume", row[i+5])
		if err != nil || d.IsNegative() {
			return nil, fmt.Errorf("%w: kline %d: bad volume %q", errMalformed, ts, row[i+5])
		}
		*dst = canon(d)
	}
	return c, nil
}

// ---------------------------------------------------------------------------------------------------------------
// Trades

type rawTrade struct {
	ExecID string `json:"execId"`
	Symbol string `json:"symbol"`
	Price  string `json:"price"`
	Size   string `json:"size"`
	Side   string `json:"side"`
	Time   string `json:"time"`
}

// ParseTrades reads a recent-trade result, ascending by time. A trade without id, price, size, side or time fails.
func ParseTrades(result json.RawMessage) ([]*exchangev1.Trade, error) {
	r, err := decodeList[rawTrade](result, "recent-trade")
	if err != nil {
		return nil, err
	}
	out := make([]*exchangev1.Trade, 0, len(r.List))
	for _, t := range r.List {
		ts, err := parseMs("time", t.Time)
		if err != nil {
			return nil, err
		}
		tr, err := tradeProto(t.ExecID, t.Price, t.Size, t.Side, ts)
		if err != nil {
			return nil, err
		}
		out = append(out, tr)
	}
	slices.SortStableFunc(out, func(a, b *exchangev1.Trade) int { return cmp.Compare(a.Time, b.Time) })
	return out, nil
}

func tradeProto(id, price, size, side string, ts int64) (*exchangev1.Trade, error) {
	px, err1 := mustDec("price", price)
	q, err2 := mustDec("size", size)
	sd := sideOf(side)
	if err1 != nil || err2 != nil || id == "" || ts <= 0 || sd == exchangev1.Side_SIDE_UNSPECIFIED || !px.IsPositive() || !q.IsPositive() {
		return nil, fmt.Errorf("%w: trade %q (price %q, size %q, side %q, time %d)", errMalformed, id, price, size, side, ts)
	}
	return &exchangev1.Trade{Id: id, Price: canon(px), Qty: canon(q), QuoteQty: canon(q.Mul(px)), Side: sd, Time: ts}, nil
}

// ---------------------------------------------------------------------------------------------------------------
// Time, funding, open interest, account ratio

// ParseTime reads /v5/market/time: timeNano (or timeSecond) as milliseconds.
func ParseTime(result json.RawMessage) (int64, error) {
	var r struct {
		TimeSecond string `json:"timeSecond"`
		TimeNano   string `json:"timeNano"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return 0, fmt.Errorf("%w: time: %v", errMalformed, err)
	}
	if n, err := strconv.ParseInt(r.TimeNano, 10, 64); err == nil && n >= 1_000_000 {
		return n / 1_000_000, nil
	}
	if s, err := strconv.ParseInt(r.TimeSecond, 10, 64); err == nil && s > 0 && s <= math.MaxInt64/1000 {
		return s * 1000, nil
	}
	return 0, fmt.Errorf("%w: time without timeNano or timeSecond", errMalformed)
}

type rawFunding struct {
	Symbol               string `json:"symbol"`
	FundingRate          string `json:"fundingRate"`
	FundingRateTimestamp string `json:"fundingRateTimestamp"`
}

// ParseFundingHistory reads /v5/market/funding/history (newest first at Bybit) and returns it ascending.
func ParseFundingHistory(result json.RawMessage) ([]*exchangev1.FundingRate, error) {
	r, err := decodeList[rawFunding](result, "funding history")
	if err != nil {
		return nil, err
	}
	out := make([]*exchangev1.FundingRate, 0, len(r.List))
	for _, f := range r.List {
		rate, err1 := mustDec("fundingRate", f.FundingRate)
		ts, err2 := parseMs("fundingRateTimestamp", f.FundingRateTimestamp)
		if err1 != nil || err2 != nil || ts <= 0 || f.Symbol == "" {
			return nil, fmt.Errorf("%w: funding row %+v", errMalformed, f)
		}
		out = append(out, &exchangev1.FundingRate{Symbol: f.Symbol, Rate: canon(rate), FundingTime: ts})
	}
	slices.SortFunc(out, func(a, b *exchangev1.FundingRate) int { return cmp.Compare(a.FundingTime, b.FundingTime) })
	return out, nil
}

// seriesPoint is one row of open-interest or account-ratio.
type seriesPoint struct {
	Time   int64
	Values []decimal.Decimal
}

type rawSeries struct {
	OpenInterest string `json:"openInterest"`
	BuyRatio     string `json:"buyRatio"`
	SellRatio    string `json:"sellRatio"`
	Timestamp    string `json:"timestamp"`
}

// ParseOpenInterest reads /v5/market/open-interest: [openInterest] per timestamp (base coin for linear), newest
// first as Bybit sends it, and the next page's cursor.
func ParseOpenInterest(result json.RawMessage) ([]seriesPoint, string, error) {
	return parseSeries(result, "open interest", func(r rawSeries) ([]string, []string) {
		return []string{"openInterest"}, []string{r.OpenInterest}
	})
}

// ParseAccountRatio reads /v5/market/account-ratio: [buyRatio, sellRatio] per timestamp, newest first, and the
// next page's cursor.
func ParseAccountRatio(result json.RawMessage) ([]seriesPoint, string, error) {
	return parseSeries(result, "account ratio", func(r rawSeries) ([]string, []string) {
		return []string{"buyRatio", "sellRatio"}, []string{r.BuyRatio, r.SellRatio}
	})
}

func parseSeries(result json.RawMessage, what string, fields func(rawSeries) ([]string, []string)) ([]seriesPoint, string, error) {
	r, err := decodeList[rawSeries](result, what)
	if err != nil {
		return nil, "", err
	}
	out := make([]seriesPoint, 0, len(r.List))
	for _, row := range r.List {
		ts, err := parseMs("timestamp", row.Timestamp)
		if err != nil || ts <= 0 {
			return nil, "", fmt.Errorf("%w: %s timestamp %q", errMalformed, what, row.Timestamp)
		}
		p := seriesPoint{Time: ts}
		names, vals := fields(row)
		for i, v := range vals {
			d, err := mustDec(names[i], v)
			if err != nil || d.IsNegative() {
				return nil, "", fmt.Errorf("%w: %s %s %q", errMalformed, what, names[i], v)
			}
			p.Values = append(p.Values, d)
		}
		out = append(out, p)
	}
	return out, r.NextPageCursor, nil
}

// ---------------------------------------------------------------------------------------------------------------
// WebSocket data

// wsTrade is one publicTrade row.
type wsTrade struct {
	T  int64  `json:"T"`
	S  string `json:"s"`
	Sd string `json:"S"`
	V  string `json:"v"`
	P  string `json:"p"`
	I  string `json:"i"`
}

// ParseWSTrades reads a publicTrade message's data.
func ParseWSTrades(data json.RawMessage) ([]*exchangev1.Trade, error) {
	var rows []wsTrade
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, fmt.Errorf("%w: publicTrade: %v", errMalformed, err)
	}
	out := make([]*exchangev1.Trade, 0, len(rows))
	for _, r := range rows {
		t, err := tradeProto(r.I, r.P, r.V, r.Sd, r.T)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	slices.SortStableFunc(out, func(a, b *exchangev1.Trade) int { return cmp.Compare(a.Time, b.Time) })
	return out, nil
}

// wsKline is one kline message row.
type wsKline struct {
	Start    int64  `json:"start"`
	End      int64  `json:"end"`
	Interval string `json:"interval"`
	Open     string `json:"open"`
	Close    string `json:"close"`
	High     string `json:"high"`
	Low      string `json:"low"`
	Volume   string `json:"volume"`
	Turnover string `json:"turnover"`
	Confirm  bool   `json:"confirm"`
}

// ParseWSKlines reads a kline message's data; confirm says the candle is closed.
func ParseWSKlines(data json.RawMessage) ([]*exchangev1.Candle, error) {
	var rows []wsKline
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, fmt.Errorf("%w: kline: %v", errMalformed, err)
	}
	out := make([]*exchangev1.Candle, 0, len(rows))
	for _, r := range rows {
		c, err := klineRow([]string{strconv.FormatInt(r.Start, 10), r.Open, r.High, r.Low, r.Close, r.Volume, r.Turnover}, "", 0)
		if err != nil {
			return nil, err
		}
		c.Closed = r.Confirm
		out = append(out, c)
	}
	return out, nil
}

func jsonUnmarshal(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%w: %v", errMalformed, err)
	}
	return nil
}
