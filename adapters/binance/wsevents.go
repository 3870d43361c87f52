package binance

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// StreamMessage is one frame of a combined stream: {"stream": name, "data": payload}. Replies to SUBSCRIBE come as
// {"result": null, "id": n} and have no stream.
type StreamMessage struct {
	Stream string          `json:"stream"`
	Data   json.RawMessage `json:"data"`
	ID     *flexInt        `json:"id"`
	Error  *struct {
		Code flexInt `json:"code"`
		Msg  string  `json:"msg"`
	} `json:"error"`
}

// ParseStreamMessage parses a combined-stream frame.
func ParseStreamMessage(b []byte) (*StreamMessage, error) {
	var m StreamMessage
	if err := decodeJSON(b, &m, "stream frame"); err != nil {
		return nil, err
	}
	if m.Stream == "" && m.ID == nil && m.Error == nil {
		return nil, errors.New("stream frame: neither stream data nor a reply")
	}
	return &m, nil
}

// ParseDepthEvent parses a depthUpdate payload.
func ParseDepthEvent(b []byte) (*DepthEvent, error) {
	var w struct {
		E  string      `json:"e"`
		Et flexInt     `json:"E"`
		U  *flexInt    `json:"U"`
		Uf *flexInt    `json:"u"`
		Pu flexInt     `json:"pu"`
		B  [][]flexStr `json:"b"`
		A  [][]flexStr `json:"a"`
	}
	if err := decodeExact(b, &w, "depthUpdate"); err != nil {
		return nil, err
	}
	if w.U == nil || w.Uf == nil || *w.Uf < *w.U {
		return nil, errors.New("depthUpdate: missing or inverted U/u")
	}
	ev := &DepthEvent{FirstID: int64(*w.U), FinalID: int64(*w.Uf), PrevFinalID: int64(w.Pu), Time: int64(w.Et)}
	var err error
	if ev.Bids, err = parseLevels(w.B, "depthUpdate b"); err != nil {
		return nil, err
	}
	if ev.Asks, err = parseLevels(w.A, "depthUpdate a"); err != nil {
		return nil, err
	}
	return ev, nil
}

// ParseTradeEvent parses a trade or aggTrade payload. ok is false for futures non-market trades (insurance fund,
// ADL), which are not public prints.
func ParseTradeEvent(b []byte) (tr *exchangev1.Trade, eventTime int64, ok bool, err error) {
	var w struct {
		E  string   `json:"e"`
		Et flexInt  `json:"E"`
		T  flexInt  `json:"T"`
		Tr *flexInt `json:"t"`
		A  *flexInt `json:"a"`
		P  flexStr  `json:"p"`
		Q  flexStr  `json:"q"`
		M  bool     `json:"m"`
		// "M" (spot's ignore flag) is named so it cannot land in m: encoding/json matches keys case-insensitively.
		Ignore bool   `json:"M"`
		X      string `json:"X"`
	}
	if err := decodeExact(b, &w, "trade"); err != nil {
		return nil, 0, false, err
	}
	id := w.Tr
	if w.E == "aggTrade" || id == nil {
		id = w.A
	}
	if id == nil {
		return nil, 0, false, errors.New("trade: no id")
	}
	var d decs
	tr = &exchangev1.Trade{Id: strconv.FormatInt(int64(*id), 10), Price: d.c("p", w.P), Qty: d.c("q", w.Q), Side: takerSide(w.M), Time: int64(w.T)}
	if d.err != nil {
		return nil, 0, false, fmt.Errorf("trade: %w", d.err)
	}
	if tr.Price == "" || tr.Qty == "" {
		return nil, 0, false, errors.New("trade: empty price or qty")
	}
	if p, q, e := decPair(tr.Price, tr.Qty); e == nil {
		tr.QuoteQty = p.Mul(q).String()
	}
	return tr, int64(w.Et), w.X == "" || w.X == "MARKET", nil
}

// ParseKlineEvent parses a kline payload.
func ParseKlineEvent(b []byte) (*exchangev1.Candle, string, int64, error) {
	var w struct {
		Et flexInt `json:"E"`
		K  *struct {
			T flexInt `json:"t"`
			I string  `json:"i"`
			O flexStr `json:"o"`
			C flexStr `json:"c"`
			H flexStr `json:"h"`
			L flexStr `json:"l"`
			V flexStr `json:"v"`
			Q flexStr `json:"q"`
			N flexInt `json:"n"`
			X bool    `json:"x"`
		} `json:"k"`
	}
	if err := decodeExact(b, &w, "kline"); err != nil {
		return nil, "", 0, err
	}
	if w.K == nil || w.K.I == "" {
		return nil, "", 0, errors.New("kline: no k")
	}
	var d decs
	k := w.K
	c := &exchangev1.Candle{OpenTime: int64(k.T), Open: d.c("o", k.O), High: d.c("h", k.H), Low: d.c("l", k.L), Close: d.c("c", k.C),
		Volume: d.c("v", k.V), QuoteVolume: d.c("q", k.Q), Trades: int64(k.N), Closed: k.X}
	if d.err != nil {
		return nil, "", 0, fmt.Errorf("kline: %w", d.err)
	}
	if c.Open == "" || c.Close == "" {
		return nil, "", 0, errors.New("kline: empty prices")
	}
	return c, k.I, int64(w.Et), nil
}

// ParseTickerEvent parses a 24hrTicker payload.
func ParseTickerEvent(m Market, b []byte) (*exchangev1.Ticker, error) {
	var w struct {
		Et flexInt `json:"E"`
		S  string  `json:"s"`
		P  flexStr `json:"P"`
		C  flexStr `json:"c"`
		O  flexStr `json:"o"`
		H  flexStr `json:"h"`
		L  flexStr `json:"l"`
		V  flexStr `json:"v"`
		Q  flexStr `json:"q"`
		B  flexStr `json:"b"`
		Bq flexStr `json:"B"`
		A  flexStr `json:"a"`
		Aq flexStr `json:"A"`
	}
	if err := decodeExact(b, &w, "24hrTicker"); err != nil {
		return nil, err
	}
	var d decs
	t := &exchangev1.Ticker{Symbol: w.S, MarketType: m.proto(), Last: d.c("c", w.C), Open_24H: d.c("o", w.O), High_24H: d.c("h", w.H),
		Low_24H: d.c("l", w.L), Volume_24H: d.c("v", w.V), QuoteVolume_24H: d.c("q", w.Q), ChangePct_24H: d.c("P", w.P),
		Bid: d.c("b", w.B), BidQty: d.c("B", w.Bq), Ask: d.c("a", w.A), AskQty: d.c("A", w.Aq), Time: int64(w.Et)}
	if d.err != nil {
		return nil, fmt.Errorf("24hrTicker: %w", d.err)
	}
	if t.Symbol == "" || t.Last == "" {
		return nil, errors.New("24hrTicker: no symbol or last price")
	}
	return t, nil
}

// ParseMarkPriceEvent parses a markPriceUpdate payload.
func ParseMarkPriceEvent(b []byte) (*exchangev1.MarkPriceUpdate, int64, error) {
	var w struct {
		Et flexInt `json:"E"`
		P  flexStr `json:"p"`
		I  flexStr `json:"i"`
		R  flexStr `json:"r"`
		T  flexInt `json:"T"`
	}
	if err := decodeExact(b, &w, "markPriceUpdate"); err != nil {
		return nil, 0, err
	}
	var d decs
	u := &exchangev1.MarkPriceUpdate{MarkPrice: d.c("p", w.P), IndexPrice: d.c("i", w.I), FundingRate: d.c("r", w.R), NextFundingTime: int64(w.T)}
	if d.err != nil {
		return nil, 0, fmt.Errorf("markPriceUpdate: %w", d.err)
	}
	if u.MarkPrice == "" {
		return nil, 0, errors.New("markPriceUpdate: no mark price")
	}
	return u, int64(w.Et), nil
}
