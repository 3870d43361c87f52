package okx

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// errMalformed marks a body that is not what OKX sends.
var errMalformed = errors.New("okx: malformed response")

// ---------------------------------------------------------------------------------------------------------------
// Instruments

type rawInstrument struct {
	InstID     string `json:"instId"`
	InstType   string `json:"instType"`
	BaseCcy    string `json:"baseCcy"`
	QuoteCcy   string `json:"quoteCcy"`
	SettleCcy  string `json:"settleCcy"`
	CtVal      string `json:"ctVal"`
	CtMult     string `json:"ctMult"`
	CtValCcy   string `json:"ctValCcy"`
	CtType     string `json:"ctType"`
	TickSz     string `json:"tickSz"`
	LotSz      string `json:"lotSz"`
	MinSz      string `json:"minSz"`
	MaxLmtSz   string `json:"maxLmtSz"`
	MaxMktSz   string `json:"maxMktSz"`
	Lever      string `json:"lever"`
	ListTime   string `json:"listTime"`
	State      string `json:"state"`
	InstFamily string `json:"instFamily"`
	Uly        string `json:"uly"`
	// MinNotional is the smallest order value in the quote currency. OKX's listing has no such field (its 51020
	// refusal names no amount); the emulator lists the one its venue enforces.
	MinNotional string `json:"minNotional"`
}

// Instrument is an OKX instrument with its grids parsed. Sizes (LotSz, MinSz, MaxLmtSz, MaxMktSz) are in OKX's
// own unit: contracts for SWAP, base currency for SPOT.
type Instrument struct {
	InstID     string
	MarketType exchangev1.MarketType
	Base       string
	Quote      string
	Settle     string
	Family     string
	TickSz     decimal.Decimal
	LotSz      decimal.Decimal
	MinSz      decimal.Decimal
	MaxLmtSz   decimal.Decimal
	MaxMktSz   decimal.Decimal
	// ContractSize is ctVal x ctMult for SWAP (base units per contract), 1 for SPOT.
	ContractSize decimal.Decimal
	CtValCcy     string
	Lever        string
	ListTime     int64
	State        string
	// MinNotional is the smallest order value in quote units, zero when unknown.
	MinNotional decimal.Decimal
}

// ParseInstruments parses /api/v5/public/instruments data, keeping only live SPOT and linear SWAP instruments.
func ParseInstruments(data json.RawMessage) ([]*Instrument, error) {
	rows, err := decodeList[rawInstrument](data)
	if err != nil {
		return nil, err
	}
	out := make([]*Instrument, 0, len(rows))
	for _, r := range rows {
		if r.State != "live" {
			continue
		}
		mt := marketTypeOf(r.InstType)
		if mt == exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED || r.InstID == "" {
			continue
		}
		in := &Instrument{InstID: r.InstID, MarketType: mt, Quote: r.QuoteCcy, Settle: r.SettleCcy, Family: r.InstFamily,
			CtValCcy: r.CtValCcy, State: r.State}
		var errs []error
		get := func(field, s string, required bool) decimal.Decimal {
			d, ok, err := parseDec(field, s)
			if err != nil {
				errs = append(errs, err)
			} else if required && (!ok || !d.IsPositive()) {
				errs = append(errs, fmt.Errorf("okx: %s %s %q must be positive", r.InstID, field, s))
			}
			return d
		}
		in.TickSz = get("tickSz", r.TickSz, true)
		in.LotSz = get("lotSz", r.LotSz, true)
		in.MinSz = get("minSz", r.MinSz, true)
		in.MaxLmtSz = get("maxLmtSz", r.MaxLmtSz, false)
		in.MaxMktSz = get("maxMktSz", r.MaxMktSz, false)
		in.MinNotional = get("minNotional", r.MinNotional, false)
		in.ListTime, err = parseMs("listTime", r.ListTime)
		if err != nil {
			errs = append(errs, err)
		}
		if mt == exchangev1.MarketType_MARKET_TYPE_SWAP {
			if r.CtType != "" && r.CtType != "linear" {
				continue // inverse swaps are not offered
			}
			ctVal := get("ctVal", r.CtVal, true)
			ctMult := get("ctMult", r.CtMult, false)
			if ctMult.IsZero() {
				ctMult = decimal.NewFromInt(1)
			}
			in.ContractSize = ctVal.Mul(ctMult)
			in.Base = r.CtValCcy
			if in.Base == "" && in.Family != "" {
				in.Base, _, _ = cut(in.Family, "-")
			}
			if in.Quote == "" {
				in.Quote = r.SettleCcy
			}
			in.Lever = r.Lever
		} else {
			in.Base = r.BaseCcy
			in.ContractSize = decimal.NewFromInt(1)
		}
		if len(errs) > 0 {
			return nil, errors.Join(errs...)
		}
		out = append(out, in)
	}
	return out, nil
}

func cut(s, sep string) (string, string, bool) {
	for i := 0; i+len(sep) <= len(s); i++ {
		if s[i:i+len(sep)] == sep {
			return s[:i], s[i+len(sep):], true
		}
	}
	return s, "", false
}

// Proto is the contract's view of the instrument: every quantity in base units.
func (in *Instrument) Proto() *exchangev1.Instrument {
	cs := in.ContractSize
	p := &exchangev1.Instrument{
		Symbol: in.InstID, MarketType: in.MarketType, Base: in.Base, Quote: in.Quote,
		Status: exchangev1.InstrumentStatus_INSTRUMENT_STATUS_TRADING, TickSize: canon(in.TickSz),
		StepSize: canon(in.LotSz.Mul(cs)), MinQty: canon(in.MinSz.Mul(cs)),
		MarketStepSize: canon(in.LotSz.Mul(cs)), MarketMinQty: canon(in.MinSz.Mul(cs)),
		Family: in.Family, ListedTime: in.ListTime,
	}
	if in.MaxLmtSz.IsPositive() {
		p.MaxQty = canon(in.MaxLmtSz.Mul(cs))
	}
	if in.MaxMktSz.IsPositive() {
		p.MarketMaxQty = canon(in.MaxMktSz.Mul(cs))
	}
	if in.MinNotional.IsPositive() {
		p.MinNotional = canon(in.MinNotional)
	}
	if in.MarketType == exchangev1.MarketType_MARKET_TYPE_SWAP {
		p.Settle = in.Settle
		p.ContractValue = canon(cs)
		p.ContractValueAsset = in.CtValCcy
		if lv, ok, err := parseDec("lever", in.Lever); err == nil && ok && lv.IsPositive() {
			p.MaxLeverage = canon(lv)
		}
	}
	return p
}

// ---------------------------------------------------------------------------------------------------------------
// Tickers

type rawTicker struct {
	InstType  string `json:"instType"`
	InstID    string `json:"instId"`
	Last      string `json:"last"`
	LastSz    string `json:"lastSz"`
	AskPx     string `json:"askPx"`
	AskSz     string `json:"askSz"`
	BidPx     string `json:"bidPx"`
	BidSz     string `json:"bidSz"`
	Open24h   string `json:"open24h"`
	High24h   string `json:"high24h"`
	Low24h    string `json:"low24h"`
	VolCcy24h string `json:"volCcy24h"`
	Vol24h    string `json:"vol24h"`
	SodUtc0   string `json:"sodUtc0"`
	SodUtc8   string `json:"sodUtc8"`
	Ts        string `json:"ts"`
}

// ParseTickers parses ticker rows (REST tickers/ticker and the tickers channel).
func ParseTickers(data json.RawMessage) ([]rawTicker, error) { return decodeList[rawTicker](data) }

// tickerProto converts a ticker row. The 24h reference open is the UTC day-start open (sodUtc0) and the change
// derives from it. Sizes are converted to base units with the instrument's contract size (nil: 1).
func tickerProto(r rawTicker, in *Instrument) (*exchangev1.Ticker, error) {
	cs := decimal.NewFromInt(1)
	mt := marketTypeOf(r.InstType)
	if in != nil {
		cs, mt = in.ContractSize, in.MarketType
	}
	if mt == exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED {
		mt = marketTypeOfSymbol(r.InstID)
	}
	var errs []error
	d := func(f, s string) (decimal.Decimal, bool) {
		v, ok, err := parseDec(f, s)
		if err != nil {
			errs = append(errs, err)
		}
		return v, ok
	}
	last, okLast := d("last", r.Last)
	sod, okSod := d("sodUtc0", r.SodUtc0)
	high, okHigh := d("high24h", r.High24h)
	low, okLow := d("low24h", r.Low24h)
	bid, okBid := d("bidPx", r.BidPx)
	bidSz, okBidSz := d("bidSz", r.BidSz)
	ask, okAsk := d("askPx", r.AskPx)
	askSz, okAskSz := d("askSz", r.AskSz)
	vol, okVol := d("vol24h", r.Vol24h)
	volCcy, okVolCcy := d("volCcy24h", r.VolCcy24h)
	ts, err := parseMs("ts", r.Ts)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if r.InstID == "" || !okLast {
		return nil, fmt.Errorf("%w: ticker without instId or last", errMalformed)
	}
	t := &exchangev1.Ticker{Symbol: r.InstID, MarketType: mt, Last: canon(last), Time: ts}
	if okSod {
		t.Open_24H = canon(sod)
		if sod.IsPositive() {
			t.ChangePct_24H = canon(last.Sub(sod).Mul(decimal.NewFromInt(100)).Div(sod).Round(2))
		}
	}
	if okHigh {
		t.High_24H = canon(high)
	}
	if okLow {
		t.Low_24H = canon(low)
	}
	if okBid && bid.IsPositive() {
		t.Bid = canon(bid)
		if okBidSz {
			t.BidQty = canon(bidSz.Mul(cs))
		}
	}
	if okAsk && ask.IsPositive() {
		t.Ask = canon(ask)
		if okAskSz {
			t.AskQty = canon(askSz.Mul(cs))
		}
	}
	if mt == exchangev1.MarketType_MARKET_TYPE_SWAP {
		// SWAP: vol24h is contracts, volCcy24h is base currency. The quote volume is estimated at the last price.
		if okVolCcy {
			t.Volume_24H = canon(volCcy)
			t.QuoteVolume_24H = canon(volCcy.Mul(last).Round(2))
		} else if okVol {
			t.Volume_24H = canon(vol.Mul(cs))
		}
	} else {
		if okVol {
			t.Volume_24H = canon(vol)
		}
		if okVolCcy {
			t.QuoteVolume_24H = canon(volCcy)
		}
	}
	return t, nil
}

// ---------------------------------------------------------------------------------------------------------------
// Books

type rawBook struct {
	Asks      [][]string `json:"asks"`
	Bids      [][]string `json:"bids"`
	Ts        string     `json:"ts"`
	Checksum  *int64     `json:"checksum"`
	SeqID     *int64     `json:"seqId"`
	PrevSeqID *int64     `json:"prevSeqId"`
}

// ParseBooks parses book rows (REST books and the books channels).
func ParseBooks(data json.RawMessage) ([]rawBook, error) {
	rows, err := decodeList[rawBook](data)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		for _, side := range [][][]string{r.Asks, r.Bids} {
			for _, l := range side {
				if len(l) < 2 {
					return nil, fmt.Errorf("%w: book level %v has fewer than 2 fields", errMalformed, l)
				}
				for i, f := range []string{"price", "size"} {
					if d, ok, err := parseDec(f, l[i]); err != nil || !ok || d.IsNegative() {
						return nil, fmt.Errorf("%w: book level %v: bad %s", errMalformed, l, f)
					}
				}
			}
		}
	}
	return rows, nil
}

// levelsProto converts raw levels (already validated) to base units.
func levelsProto(ls [][]string, cs decimal.Decimal) []*exchangev1.PriceLevel {
	out := make([]*exchangev1.PriceLevel, 0, len(ls))
	for _, l := range ls {
		p, _, _ := parseDec("price", l[0])
		q, _, _ := parseDec("size", l[1])
		out = append(out, &exchangev1.PriceLevel{Price: canon(p), Qty: canon(q.Mul(cs))})
	}
	return out
}

// ---------------------------------------------------------------------------------------------------------------
// Candles

// ParseCandles parses candle rows [ts, o, h, l, c, vol, volCcy, volCcyQuote, confirm] and returns them ascending.
// For SWAP vol is contracts and volCcy base; for SPOT vol is base and volCcy quote.
func ParseCandles(data json.RawMessage, mt exchangev1.MarketType) ([]*exchangev1.Candle, error) {
	rows, err := decodeList[[]string](data)
	if err != nil {
		return nil, err
	}
	out := make([]*exchangev1.Candle, 0, len(rows))
	for _, r := range rows {
		c, err := candleRow(r, mt)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *exchangev1.Candle) int { return cmpInt(a.OpenTime, b.OpenTime) })
	return out, nil
}

func candleRow(r []string, mt exchangev1.MarketType) (*exchangev1.Candle, error) {
	if len(r) < 6 {
		return nil, fmt.Errorf("%w: candle row %v has %d fields", errMalformed, r, len(r))
	}
	ts, err := parseMs("ts", r[0])
	if err != nil {
		return nil, err
	}
	c := &exchangev1.Candle{OpenTime: ts, Closed: len(r) < 9 || r[8] == "1"}
	for i, dst := range []*string{&c.Open, &c.High, &c.Low, &c.Close} {
		d, ok, err := parseDec("ohlc", r[i+1])
		if err != nil || !ok {
			return nil, fmt.Errorf("%w: candle %d: bad price %q", errMalformed, ts, r[i+1])
		}
		*dst = canon(d)
	}
	field := func(i int) (string, error) {
		if i >= len(r) {
			return "", nil
		}
		return canonStr("volume", r[i])
	}
	var errs [2]error
	if mt == exchangev1.MarketType_MARKET_TYPE_SWAP {
		c.Volume, errs[0] = field(6)
		c.QuoteVolume, errs[1] = field(7)
	} else {
		c.Volume, errs[0] = field(5)
		c.QuoteVolume, errs[1] = field(6)
	}
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return c, nil
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ---------------------------------------------------------------------------------------------------------------
// Trades

type rawTrade struct {
	InstID  string `json:"instId"`
	TradeID string `json:"tradeId"`
	Px      string `json:"px"`
	Sz      string `json:"sz"`
	Side    string `json:"side"`
	Ts      string `json:"ts"`
}

// ParseTrades parses trade rows (REST trades and the trades channel) into ascending contract trades in base units.
func ParseTrades(data json.RawMessage, cs decimal.Decimal) ([]*exchangev1.Trade, error) {
	rows, err := decodeList[rawTrade](data)
	if err != nil {
		return nil, err
	}
	out := make([]*exchangev1.Trade, 0, len(rows))
	for _, r := range rows {
		px, ok1, err1 := parseDec("px", r.Px)
		sz, ok2, err2 := parseDec("sz", r.Sz)
		ts, err3 := parseMs("ts", r.Ts)
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, err
		}
		if !ok1 || !ok2 || r.TradeID == "" {
			return nil, fmt.Errorf("%w: trade without id, px or sz", errMalformed)
		}
		q := sz.Mul(cs)
		out = append(out, &exchangev1.Trade{Id: r.TradeID, Price: canon(px), Qty: canon(q), QuoteQty: canon(q.Mul(px)),
			Side: sideOf(r.Side), Time: ts})
	}
	slices.SortStableFunc(out, func(a, b *exchangev1.Trade) int { return cmpInt(a.Time, b.Time) })
	return out, nil
}

// ---------------------------------------------------------------------------------------------------------------
// Funding, mark, index, open interest, time

type rawFunding struct {
	InstID          string `json:"instId"`
	FundingRate     string `json:"fundingRate"`
	RealizedRate    string `json:"realizedRate"`
	FundingTime     string `json:"fundingTime"`
	NextFundingTime string `json:"nextFundingTime"`
	Ts              string `json:"ts"`
}

type rawMark struct {
	InstID string `json:"instId"`
	MarkPx string `json:"markPx"`
	Ts     string `json:"ts"`
}

type rawIndex struct {
	InstID string `json:"instId"`
	IdxPx  string `json:"idxPx"`
	Ts     string `json:"ts"`
}

type rawOpenInterest struct {
	InstID string `json:"instId"`
	Oi     string `json:"oi"`
	OiCcy  string `json:"oiCcy"`
	Ts     string `json:"ts"`
}

type rawTime struct {
	Ts string `json:"ts"`
}

// ParseFundingHistory parses funding-rate-history rows, ascending by funding time.
func ParseFundingHistory(data json.RawMessage) ([]*exchangev1.FundingRate, error) {
	rows, err := decodeList[rawFunding](data)
	if err != nil {
		return nil, err
	}
	out := make([]*exchangev1.FundingRate, 0, len(rows))
	for _, r := range rows {
		rate := r.RealizedRate
		if rate == "" {
			rate = r.FundingRate
		}
		d, ok, err := parseDec("fundingRate", rate)
		if err != nil || !ok {
			return nil, fmt.Errorf("%w: funding rate %q", errMalformed, rate)
		}
		ts, err := parseMs("fundingTime", r.FundingTime)
		if err != nil {
			return nil, err
		}
		out = append(out, &exchangev1.FundingRate{Symbol: r.InstID, Rate: canon(d), FundingTime: ts})
	}
	slices.SortFunc(out, func(a, b *exchangev1.FundingRate) int { return cmpInt(a.FundingTime, b.FundingTime) })
	return out, nil
}

// ---------------------------------------------------------------------------------------------------------------
// Rubik statistics: rows of strings, newest first.

// ParseRubikRows parses rubik rows [ts, v1, v2, ...] with at least n values after ts, ascending by time.
func ParseRubikRows(data json.RawMessage, n int) ([]int64, [][]decimal.Decimal, error) {
	rows, err := decodeList[[]string](data)
	if err != nil {
		return nil, nil, err
	}
	type row struct {
		ts int64
		vs []decimal.Decimal
	}
	parsed := make([]row, 0, len(rows))
	for _, r := range rows {
		if len(r) < n+1 {
			return nil, nil, fmt.Errorf("%w: statistics row %v has %d fields, want %d", errMalformed, r, len(r), n+1)
		}
		ts, err := parseMs("ts", r[0])
		if err != nil {
			return nil, nil, err
		}
		vs := make([]decimal.Decimal, n)
		for i := range n {
			d, ok, err := parseDec("value", r[i+1])
			if err != nil || !ok {
				return nil, nil, fmt.Errorf("%w: statistics row %v: bad value %q", errMalformed, r, r[i+1])
			}
			vs[i] = d
		}
		parsed = append(parsed, row{ts, vs})
	}
	slices.SortFunc(parsed, func(a, b row) int { return cmpInt(a.ts, b.ts) })
	ts := make([]int64, len(parsed))
	vs := make([][]decimal.Decimal, len(parsed))
	for i, r := range parsed {
		ts[i], vs[i] = r.ts, r.vs
	}
	return ts, vs, nil
}
