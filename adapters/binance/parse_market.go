package binance

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// errEmpty is returned for an empty body where a document is required.
var errEmpty = errors.New("empty body")

func decodeJSON(body []byte, v any, what string) error {
	if t := strings.TrimSpace(string(body)); t == "" || t == "null" {
		return fmt.Errorf("%s: %w", what, errEmpty)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// RateLimit is one entry of exchangeInfo.rateLimits.
type RateLimit struct {
	Type        string  `json:"rateLimitType"`
	Interval    string  `json:"interval"`
	IntervalNum flexInt `json:"intervalNum"`
	Limit       flexInt `json:"limit"`
}

// ExchangeInfo is the parsed /api/v3/exchangeInfo or /fapi/v1/exchangeInfo.
type ExchangeInfo struct {
	ServerTime  int64
	RateLimits  []RateLimit
	Instruments []*exchangev1.Instrument
}

type wireFilter struct {
	FilterType  string  `json:"filterType"`
	MinPrice    flexStr `json:"minPrice"`
	MaxPrice    flexStr `json:"maxPrice"`
	TickSize    flexStr `json:"tickSize"`
	MinQty      flexStr `json:"minQty"`
	MaxQty      flexStr `json:"maxQty"`
	StepSize    flexStr `json:"stepSize"`
	MinNotional flexStr `json:"minNotional"`
	Notional    flexStr `json:"notional"`
}

type wireSymbol struct {
	Symbol       string       `json:"symbol"`
	Pair         string       `json:"pair"`
	Status       string       `json:"status"`
	ContractType string       `json:"contractType"`
	BaseAsset    string       `json:"baseAsset"`
	QuoteAsset   string       `json:"quoteAsset"`
	MarginAsset  string       `json:"marginAsset"`
	OnboardDate  flexInt      `json:"onboardDate"`
	Filters      []wireFilter `json:"filters"`
	// Precisions (decimal places): spot quotePrecision / baseAssetPrecision, futures pricePrecision /
	// quantityPrecision. They bound prices and sizes when a filter's tickSize or stepSize is 0 ("rule disabled").
	QuotePrecision     *flexInt `json:"quotePrecision"`
	BaseAssetPrecision *flexInt `json:"baseAssetPrecision"`
	PricePrecision     *flexInt `json:"pricePrecision"`
	QuantityPrecision  *flexInt `json:"quantityPrecision"`
}

// gridFallback is the grid a disabled (zero) tickSize or stepSize leaves: one unit of the symbol's precision.
func gridFallback(v string, precisions ...*flexInt) string {
	if v != "0" {
		return v
	}
	for _, p := range precisions {
		if p != nil && *p >= 0 && *p <= 18 {
			return decimal.New(1, -int32(*p)).String()
		}
	}
	return v
}

// ParseExchangeInfo parses exchangeInfo of either market. Futures keeps only PERPETUAL contracts; symbols whose
// filters do not parse are an error (a silent skip would hide a wire change).
func ParseExchangeInfo(m Market, body []byte) (*ExchangeInfo, error) {
	var w struct {
		ServerTime flexInt      `json:"serverTime"`
		RateLimits []RateLimit  `json:"rateLimits"`
		Symbols    []wireSymbol `json:"symbols"`
	}
	if err := decodeJSON(body, &w, "exchangeInfo"); err != nil {
		return nil, err
	}
	if w.Symbols == nil {
		return nil, errors.New("exchangeInfo: no symbols field")
	}
	out := &ExchangeInfo{ServerTime: int64(w.ServerTime), RateLimits: w.RateLimits}
	for _, s := range w.Symbols {
		if m == Futures && s.ContractType != "PERPETUAL" {
			continue
		}
		if s.Symbol == "" || s.BaseAsset == "" || s.QuoteAsset == "" {
			return nil, fmt.Errorf("exchangeInfo: symbol %q lacks symbol/baseAsset/quoteAsset", s.Symbol)
		}
		in := &exchangev1.Instrument{
			Symbol: s.Symbol, MarketType: m.proto(), Base: s.BaseAsset, Quote: s.QuoteAsset,
			Status: instrumentStatusFromWire(s.Status), ListedTime: int64(s.OnboardDate),
		}
		if m == Futures {
			in.Settle = s.MarginAsset
			if in.Settle == "" {
				in.Settle = s.QuoteAsset
			}
			in.ContractValue, in.ContractValueAsset = "1", s.BaseAsset
		}
		var d decs
		for _, f := range s.Filters {
			switch f.FilterType {
			case "PRICE_FILTER":
				in.TickSize = d.c("tickSize", f.TickSize)
				in.MinPrice = nonZero(d.c("minPrice", f.MinPrice))
				in.MaxPrice = nonZero(d.c("maxPrice", f.MaxPrice))
			case "LOT_SIZE":
				in.StepSize = d.c("stepSize", f.StepSize)
				in.MinQty = d.c("minQty", f.MinQty)
				in.MaxQty = nonZero(d.c("maxQty", f.MaxQty))
			case "MARKET_LOT_SIZE":
				in.MarketStepSize = nonZero(d.c("stepSize", f.StepSize))
				in.MarketMinQty = nonZero(d.c("minQty", f.MinQty))
				in.MarketMaxQty = nonZero(d.c("maxQty", f.MaxQty))
			case "MIN_NOTIONAL", "NOTIONAL":
				n := f.MinNotional
				if n == "" {
					n = f.Notional
				}
				if v := d.c("minNotional", n); v != "" {
					in.MinNotional = v
				}
			}
		}
		if d.err != nil {
			return nil, fmt.Errorf("exchangeInfo: %s: %w", s.Symbol, d.err)
		}
		in.TickSize = gridFallback(in.TickSize, s.PricePrecision, s.QuotePrecision)
		in.StepSize = gridFallback(in.StepSize, s.QuantityPrecision, s.BaseAssetPrecision)
		if in.TickSize == "" || in.StepSize == "" || in.TickSize == "0" || in.StepSize == "0" {
			return nil, fmt.Errorf("exchangeInfo: %s: missing PRICE_FILTER or LOT_SIZE (or a zero grid without a precision)", s.Symbol)
		}
		if in.MarketStepSize == "" {
			in.MarketStepSize = in.StepSize
		}
		if in.MarketMinQty == "" {
			in.MarketMinQty = in.MinQty
		}
		out.Instruments = append(out.Instruments, in)
	}
	return out, nil
}

type wireTicker struct {
	Symbol             string  `json:"symbol"`
	PriceChangePercent flexStr `json:"priceChangePercent"`
	LastPrice          flexStr `json:"lastPrice"`
	OpenPrice          flexStr `json:"openPrice"`
	HighPrice          flexStr `json:"highPrice"`
	LowPrice           flexStr `json:"lowPrice"`
	Volume             flexStr `json:"volume"`
	QuoteVolume        flexStr `json:"quoteVolume"`
	BidPrice           flexStr `json:"bidPrice"`
	BidQty             flexStr `json:"bidQty"`
	AskPrice           flexStr `json:"askPrice"`
	AskQty             flexStr `json:"askQty"`
	CloseTime          flexInt `json:"closeTime"`
}

// ParseTickers24h parses /ticker/24hr: an array, or one object when a symbol was given.
func ParseTickers24h(m Market, body []byte) ([]*exchangev1.Ticker, error) {
	var rows []wireTicker
	trimmed := strings.TrimSpace(string(body))
	if strings.HasPrefix(trimmed, "{") {
		var one wireTicker
		if err := decodeJSON(body, &one, "ticker/24hr"); err != nil {
			return nil, err
		}
		rows = []wireTicker{one}
	} else if err := decodeJSON(body, &rows, "ticker/24hr"); err != nil {
		return nil, err
	}
	out := make([]*exchangev1.Ticker, 0, len(rows))
	for _, r := range rows {
		if r.Symbol == "" {
			return nil, errors.New("ticker/24hr: row without symbol")
		}
		var d decs
		t := &exchangev1.Ticker{
			Symbol: r.Symbol, MarketType: m.proto(),
			Last: d.c("lastPrice", r.LastPrice), Open_24H: d.c("openPrice", r.OpenPrice),
			High_24H: d.c("highPrice", r.HighPrice), Low_24H: d.c("lowPrice", r.LowPrice),
			Volume_24H: d.c("volume", r.Volume), QuoteVolume_24H: d.c("quoteVolume", r.QuoteVolume),
			ChangePct_24H: d.c("priceChangePercent", r.PriceChangePercent),
			Bid:           d.c("bidPrice", r.BidPrice), BidQty: d.c("bidQty", r.BidQty),
			Ask: d.c("askPrice", r.AskPrice), AskQty: d.c("askQty", r.AskQty),
			Time: int64(r.CloseTime),
		}
		if d.err != nil {
			return nil, fmt.Errorf("ticker/24hr %s: %w", r.Symbol, d.err)
		}
		if t.Last == "" {
			return nil, fmt.Errorf("ticker/24hr %s: no lastPrice", r.Symbol)
		}
		out = append(out, t)
	}
	return out, nil
}

// PremiumIndex is one row of /fapi/v1/premiumIndex.
type PremiumIndex struct {
	Symbol          string
	MarkPrice       string
	IndexPrice      string
	LastFundingRate string
	NextFundingTime int64
	Time            int64
}

// ParsePremiumIndex parses /fapi/v1/premiumIndex (object or array).
func ParsePremiumIndex(body []byte) ([]PremiumIndex, error) {
	type row struct {
		Symbol          string  `json:"symbol"`
		MarkPrice       flexStr `json:"markPrice"`
		IndexPrice      flexStr `json:"indexPrice"`
		LastFundingRate flexStr `json:"lastFundingRate"`
		NextFundingTime flexInt `json:"nextFundingTime"`
		Time            flexInt `json:"time"`
	}
	var rows []row
	if strings.HasPrefix(strings.TrimSpace(string(body)), "{") {
		var one row
		if err := decodeJSON(body, &one, "premiumIndex"); err != nil {
			return nil, err
		}
		rows = []row{one}
	} else if err := decodeJSON(body, &rows, "premiumIndex"); err != nil {
		return nil, err
	}
	out := make([]PremiumIndex, 0, len(rows))
	for _, r := range rows {
		if r.Symbol == "" {
			return nil, errors.New("premiumIndex: row without symbol")
		}
		var d decs
		p := PremiumIndex{Symbol: r.Symbol, MarkPrice: d.c("markPrice", r.MarkPrice),
			IndexPrice: d.c("indexPrice", r.IndexPrice), LastFundingRate: d.c("lastFundingRate", r.LastFundingRate),
			NextFundingTime: int64(r.NextFundingTime), Time: int64(r.Time)}
		if d.err != nil {
			return nil, fmt.Errorf("premiumIndex %s: %w", r.Symbol, d.err)
		}
		out = append(out, p)
	}
	return out, nil
}

// Depth is a parsed REST depth snapshot.
type Depth struct {
	LastUpdateID int64
	Time         int64
	Bids, Asks   []*exchangev1.PriceLevel
}

func parseLevels(raw [][]flexStr, what string) ([]*exchangev1.PriceLevel, error) {
	out := make([]*exchangev1.PriceLevel, 0, len(raw))
	for i, l := range raw {
		if len(l) < 2 {
			return nil, fmt.Errorf("%s level %d: want [price, qty], got %d items", what, i, len(l))
		}
		p, err := canon(string(l[0]))
		if err != nil || p == "" {
			return nil, fmt.Errorf("%s level %d: bad price %q", what, i, l[0])
		}
		q, err := canon(string(l[1]))
		if err != nil || q == "" {
			return nil, fmt.Errorf("%s level %d: bad qty %q", what, i, l[1])
		}
		out = append(out, &exchangev1.PriceLevel{Price: p, Qty: q})
	}
	return out, nil
}

// ParseDepth parses /api/v3/depth or /fapi/v1/depth.
func ParseDepth(body []byte) (*Depth, error) {
	var w struct {
		LastUpdateID *flexInt    `json:"lastUpdateId"`
		T            flexInt     `json:"T"`
		E            flexInt     `json:"E"`
		Bids         [][]flexStr `json:"bids"`
		Asks         [][]flexStr `json:"asks"`
	}
	if err := decodeJSON(body, &w, "depth"); err != nil {
		return nil, err
	}
	if w.LastUpdateID == nil {
		return nil, errors.New("depth: no lastUpdateId")
	}
	d := &Depth{LastUpdateID: int64(*w.LastUpdateID), Time: int64(w.T)}
	if d.Time == 0 {
		d.Time = int64(w.E)
	}
	var err error
	if d.Bids, err = parseLevels(w.Bids, "depth bids"); err != nil {
		return nil, err
	}
	if d.Asks, err = parseLevels(w.Asks, "depth asks"); err != nil {
		return nil, err
	}
	return d, nil
}

// ParseKlines parses a klines array: [openTime, o, h, l, c, v, closeTime, quoteVolume, trades, ...]. A candle is
// closed when its close time is before now (ms).
func ParseKlines(body []byte, now int64) ([]*exchangev1.Candle, error) {
	var rows [][]json.RawMessage
	if err := decodeJSON(body, &rows, "klines"); err != nil {
		return nil, err
	}
	out := make([]*exchangev1.Candle, 0, len(rows))
	for i, r := range rows {
		if len(r) < 9 {
			return nil, fmt.Errorf("klines row %d: want at least 9 items, got %d", i, len(r))
		}
		var openT, closeT, trades flexInt
		var o, h, l, c, v, q flexStr
		for j, dst := range []any{&openT, &o, &h, &l, &c, &v, &closeT, &q, &trades} {
			if err := json.Unmarshal(r[j], dst); err != nil {
				return nil, fmt.Errorf("klines row %d item %d: %w", i, j, err)
			}
		}
		var d decs
		k := &exchangev1.Candle{OpenTime: int64(openT), Open: d.c("open", o), High: d.c("high", h), Low: d.c("low", l),
			Close: d.c("close", c), Volume: d.c("volume", v), QuoteVolume: d.c("quoteVolume", q),
			Trades: int64(trades), Closed: int64(closeT) < now}
		if d.err != nil {
			return nil, fmt.Errorf("klines row %d: %w", i, d.err)
		}
		if k.Open == "" || k.Close == "" {
			return nil, fmt.Errorf("klines row %d: empty price", i)
		}
		out = append(out, k)
	}
	return out, nil
}

// ParseTrades parses /api/v3/trades or /fapi/v1/trades, oldest first as Binance sends them.
func ParseTrades(body []byte) ([]*exchangev1.Trade, error) {
	var rows []struct {
		ID           *flexInt `json:"id"`
		Price        flexStr  `json:"price"`
		Qty          flexStr  `json:"qty"`
		QuoteQty     flexStr  `json:"quoteQty"`
		Time         flexInt  `json:"time"`
		IsBuyerMaker bool     `json:"isBuyerMaker"`
	}
	if err := decodeJSON(body, &rows, "trades"); err != nil {
		return nil, err
	}
	out := make([]*exchangev1.Trade, 0, len(rows))
	for i, r := range rows {
		if r.ID == nil {
			return nil, fmt.Errorf("trades row %d: no id", i)
		}
		var d decs
		t := &exchangev1.Trade{Id: fmt.Sprint(int64(*r.ID)), Price: d.c("price", r.Price), Qty: d.c("qty", r.Qty),
			QuoteQty: d.c("quoteQty", r.QuoteQty), Side: takerSide(r.IsBuyerMaker), Time: int64(r.Time)}
		if d.err != nil {
			return nil, fmt.Errorf("trades row %d: %w", i, d.err)
		}
		if t.Price == "" || t.Qty == "" {
			return nil, fmt.Errorf("trades row %d: empty price or qty", i)
		}
		if t.QuoteQty == "" {
			t.QuoteQty = decimal.RequireFromString(t.Price).Mul(decimal.RequireFromString(t.Qty)).String()
		}
		out = append(out, t)
	}
	return out, nil
}

// ParseServerTime parses /api/v3/time and /fapi/v1/time.
func ParseServerTime(body []byte) (int64, error) {
	var w struct {
		ServerTime *flexInt `json:"serverTime"`
	}
	if err := decodeJSON(body, &w, "time"); err != nil {
		return 0, err
	}
	if w.ServerTime == nil || *w.ServerTime <= 0 {
		return 0, errors.New("time: no serverTime")
	}
	return int64(*w.ServerTime), nil
}

// ParseFundingRates parses /fapi/v1/fundingRate.
func ParseFundingRates(body []byte) ([]*exchangev1.FundingRate, error) {
	var rows []struct {
		Symbol      string  `json:"symbol"`
		FundingRate flexStr `json:"fundingRate"`
		FundingTime flexInt `json:"fundingTime"`
		MarkPrice   flexStr `json:"markPrice"`
	}
	if err := decodeJSON(body, &rows, "fundingRate"); err != nil {
		return nil, err
	}
	out := make([]*exchangev1.FundingRate, 0, len(rows))
	for i, r := range rows {
		var d decs
		f := &exchangev1.FundingRate{Symbol: r.Symbol, Rate: d.c("fundingRate", r.FundingRate),
			FundingTime: int64(r.FundingTime), MarkPrice: d.c("markPrice", r.MarkPrice)}
		if d.err != nil {
			return nil, fmt.Errorf("fundingRate row %d: %w", i, d.err)
		}
		if f.Rate == "" || f.FundingTime == 0 {
			return nil, fmt.Errorf("fundingRate row %d: no rate or time", i)
		}
		out = append(out, f)
	}
	return out, nil
}

// ParseOpenInterestHist parses /futures/data/openInterestHist.
func ParseOpenInterestHist(body []byte) ([]*exchangev1.OpenInterestPoint, error) {
	var rows []struct {
		SumOpenInterest      flexStr `json:"sumOpenInterest"`
		SumOpenInterestValue flexStr `json:"sumOpenInterestValue"`
		Timestamp            flexInt `json:"timestamp"`
	}
	if err := decodeJSON(body, &rows, "openInterestHist"); err != nil {
		return nil, err
	}
	out := make([]*exchangev1.OpenInterestPoint, 0, len(rows))
	for i, r := range rows {
		var d decs
		p := &exchangev1.OpenInterestPoint{Time: int64(r.Timestamp), OpenInterest: d.c("sumOpenInterest", r.SumOpenInterest),
			OpenInterestValue: d.c("sumOpenInterestValue", r.SumOpenInterestValue)}
		if d.err != nil {
			return nil, fmt.Errorf("openInterestHist row %d: %w", i, d.err)
		}
		if p.Time == 0 || p.OpenInterest == "" {
			return nil, fmt.Errorf("openInterestHist row %d: no timestamp or value", i)
		}
		out = append(out, p)
	}
	return out, nil
}

// ParseLongShortRatio parses the global and top long/short ratio endpoints.
func ParseLongShortRatio(body []byte) ([]*exchangev1.LongShortRatioPoint, error) {
	var rows []struct {
		LongShortRatio flexStr `json:"longShortRatio"`
		LongAccount    flexStr `json:"longAccount"`
		ShortAccount   flexStr `json:"shortAccount"`
		LongPosition   flexStr `json:"longPosition"`
		ShortPosition  flexStr `json:"shortPosition"`
		Timestamp      flexInt `json:"timestamp"`
	}
	if err := decodeJSON(body, &rows, "longShortRatio"); err != nil {
		return nil, err
	}
	out := make([]*exchangev1.LongShortRatioPoint, 0, len(rows))
	for i, r := range rows {
		long, short := r.LongAccount, r.ShortAccount
		if long == "" {
			long, short = r.LongPosition, r.ShortPosition
		}
		var d decs
		p := &exchangev1.LongShortRatioPoint{Time: int64(r.Timestamp), LongShortRatio: d.c("longShortRatio", r.LongShortRatio),
			LongRatio: d.c("longAccount", long), ShortRatio: d.c("shortAccount", short)}
		if d.err != nil {
			return nil, fmt.Errorf("longShortRatio row %d: %w", i, d.err)
		}
		if p.Time == 0 || p.LongShortRatio == "" {
			return nil, fmt.Errorf("longShortRatio row %d: no timestamp or ratio", i)
		}
		out = append(out, p)
	}
	return out, nil
}

// ParseTakerVolume parses /futures/data/takerlongshortRatio.
func ParseTakerVolume(body []byte) ([]*exchangev1.TakerVolumePoint, error) {
	var rows []struct {
		BuySellRatio flexStr `json:"buySellRatio"`
		BuyVol       flexStr `json:"buyVol"`
		SellVol      flexStr `json:"sellVol"`
		Timestamp    flexInt `json:"timestamp"`
	}
	if err := decodeJSON(body, &rows, "takerlongshortRatio"); err != nil {
		return nil, err
	}
	out := make([]*exchangev1.TakerVolumePoint, 0, len(rows))
	for i, r := range rows {
		var d decs
		p := &exchangev1.TakerVolumePoint{Time: int64(r.Timestamp), BuyVolume: d.c("buyVol", r.BuyVol),
			SellVolume: d.c("sellVol", r.SellVol), BuySellRatio: d.c("buySellRatio", r.BuySellRatio)}
		if d.err != nil {
			return nil, fmt.Errorf("takerlongshortRatio row %d: %w", i, d.err)
		}
		if p.Time == 0 || p.BuyVolume == "" || p.SellVolume == "" {
			return nil, fmt.Errorf("takerlongshortRatio row %d: missing fields", i)
		}
		out = append(out, p)
	}
	return out, nil
}
