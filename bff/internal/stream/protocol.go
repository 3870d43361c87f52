package stream

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/exhub/exhub/bff/internal/book"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// op is one client message.
type op struct {
	Op         string `json:"op"`
	ID         string `json:"id,omitempty"`
	Channel    string `json:"channel"`
	Exchange   string `json:"exchange"`
	MarketType string `json:"marketType"`
	Symbol     string `json:"symbol"`
	Interval   string `json:"interval,omitempty"`
	Depth      int    `json:"depth,omitempty"`
	Grouping   string `json:"grouping,omitempty"`
}

// Sub is a validated client subscription: a topic (one upstream stream) plus the client's view of it (book depth
// and price grouping).
type Sub struct {
	Channel    string `json:"channel"`
	Exchange   string `json:"exchange"`
	MarketType string `json:"marketType"`
	Symbol     string `json:"symbol"`
	Interval   string `json:"interval,omitempty"`
	Depth      int    `json:"depth,omitempty"`
	Grouping   string `json:"grouping,omitempty"`

	marketType exchangev1.MarketType
	grouping   book.Grouping
}

// Topic is the upstream stream key: exchange, market type, symbol, channel (and interval for candles). Every
// client view of one topic shares one upstream subscription.
func (s *Sub) Topic() string {
	t := s.Exchange + "|" + s.MarketType + "|" + s.Symbol + "|" + s.Channel
	if s.Channel == "candles" {
		t += "|" + s.Interval
	}
	return t
}

// viewKey identifies the client's view of a topic.
func (s *Sub) viewKey() string {
	if s.Channel != "book" {
		return ""
	}
	return strconv.Itoa(s.Depth) + "|" + s.Grouping
}

// key identifies the subscription on a connection.
func (s *Sub) key() string { return s.Topic() + "|" + s.viewKey() }

var (
	slugRe   = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)
	symbolRe = regexp.MustCompile(`^[A-Za-z0-9._:/-]{1,40}$`)
	channels = map[string]exchangev1.Channel{
		"book": exchangev1.Channel_CHANNEL_BOOK, "trades": exchangev1.Channel_CHANNEL_TRADES,
		"ticker": exchangev1.Channel_CHANNEL_TICKER, "candles": exchangev1.Channel_CHANNEL_CANDLES,
	}
	marketTypes = map[string]exchangev1.MarketType{
		"SPOT": exchangev1.MarketType_MARKET_TYPE_SPOT, "SWAP": exchangev1.MarketType_MARKET_TYPE_SWAP,
	}
)

// DefaultDepth is the book depth of a subscription that names none.
const DefaultDepth = 20

// parseSub checks the shape of a subscribe/unsubscribe op; the catalog checks it against the exchange.
func parseSub(o *op, maxDepth int) (*Sub, *Problem) {
	s := &Sub{Channel: o.Channel, Exchange: o.Exchange, MarketType: strings.ToUpper(o.MarketType), Symbol: o.Symbol,
		Interval: o.Interval, Depth: o.Depth, Grouping: o.Grouping}
	if _, ok := channels[s.Channel]; !ok {
		return nil, problemf(422, "unknown-channel", "channel", "channel %q: want book, trades, ticker or candles (or, signed in, orders, fills, positions, balances or account)", o.Channel)
	}
	if !slugRe.MatchString(s.Exchange) {
		return nil, problemf(422, "unknown-exchange", "exchange", "exchange %q: want an exchange slug such as \"binance\"", o.Exchange)
	}
	mt, ok := marketTypes[s.MarketType]
	if !ok {
		return nil, problemf(422, "unknown-market-type", "marketType", "marketType %q: want SPOT or SWAP", o.MarketType)
	}
	s.marketType = mt
	if !symbolRe.MatchString(s.Symbol) {
		return nil, problemf(422, "unknown-symbol", "symbol", "symbol %q is not a valid symbol", o.Symbol)
	}
	if s.Channel == "candles" {
		if s.Interval == "" {
			return nil, problemf(422, "unknown-interval", "interval", "candles need an interval such as \"1m\"")
		}
	} else if s.Interval != "" {
		return nil, problemf(422, "invalid-field", "interval", "interval applies to candles only")
	}
	if s.Channel == "book" {
		if s.Depth == 0 {
			s.Depth = DefaultDepth
		}
		if s.Depth < 1 || s.Depth > maxDepth {
			return nil, problemf(422, "invalid-field", "depth", "depth %d: want 1 to %d", o.Depth, maxDepth)
		}
		g, err := book.ParseGrouping(s.Grouping)
		if err != nil {
			return nil, problemf(422, "invalid-field", "grouping", "%v", err)
		}
		s.grouping = g
	} else if s.Depth != 0 || s.Grouping != "" {
		field := "depth"
		if s.Depth == 0 {
			field = "grouping"
		}
		return nil, problemf(422, "invalid-field", field, "%s applies to book only", field)
	}
	return s, nil
}

// parseTopic turns a topic key back into an upstream subscription.
func parseTopic(topic string, depth int) (slug string, sub *exchangev1.Subscription, err error) {
	parts := strings.Split(topic, "|")
	if len(parts) < 4 {
		return "", nil, fmt.Errorf("bad topic %q", topic)
	}
	ch, ok := channels[parts[3]]
	mt, ok2 := marketTypes[parts[1]]
	if !ok || !ok2 {
		return "", nil, fmt.Errorf("bad topic %q", topic)
	}
	sub = &exchangev1.Subscription{Channel: ch, MarketType: mt, Symbol: parts[2]}
	if ch == exchangev1.Channel_CHANNEL_CANDLES {
		if len(parts) != 5 {
			return "", nil, fmt.Errorf("bad topic %q", topic)
		}
		sub.Interval = parts[4]
	}
	if ch == exchangev1.Channel_CHANNEL_BOOK {
		sub.Depth = int32(depth)
	}
	return parts[0], sub, nil
}

// topicOf maps an upstream subscription to its topic.
func topicOf(slug string, s *exchangev1.Subscription) string {
	mt := "SPOT"
	if s.GetMarketType() == exchangev1.MarketType_MARKET_TYPE_SWAP {
		mt = "SWAP"
	}
	var ch string
	switch s.GetChannel() {
	case exchangev1.Channel_CHANNEL_BOOK:
		ch = "book"
	case exchangev1.Channel_CHANNEL_TRADES:
		ch = "trades"
	case exchangev1.Channel_CHANNEL_TICKER:
		ch = "ticker"
	case exchangev1.Channel_CHANNEL_CANDLES:
		return slug + "|" + mt + "|" + s.GetSymbol() + "|candles|" + s.GetInterval()
	default:
		return ""
	}
	return slug + "|" + mt + "|" + s.GetSymbol() + "|" + ch
}

// Problem is an RFC 9457-style problem carried in an error message.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Field  string `json:"field,omitempty"`
}

var titles = map[int]string{400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 409: "Conflict", 422: "Unprocessable Entity", 429: "Too Many Requests",
	503: "Service Unavailable"}

func problemf(status int, kind, field, format string, args ...any) *Problem {
	return &Problem{Type: "/api/problems/stream/" + kind, Title: titles[status], Status: status,
		Detail: fmt.Sprintf(format, args...), Field: field}
}

// --- server messages -----------------------------------------------------------------------------------------

// header is the part of every data message that names its stream.
type header struct {
	Type       string `json:"type"`
	Channel    string `json:"channel"`
	Exchange   string `json:"exchange"`
	MarketType string `json:"marketType"`
	Symbol     string `json:"symbol"`
	Interval   string `json:"interval,omitempty"`
	Depth      int    `json:"depth,omitempty"`
	Grouping   string `json:"grouping,omitempty"`
	Seq        int64  `json:"seq"`
}

func headerOf(typ string, s *Sub, seq int64) header {
	return header{Type: typ, Channel: s.Channel, Exchange: s.Exchange, MarketType: s.MarketType, Symbol: s.Symbol,
		Interval: s.Interval, Depth: s.Depth, Grouping: s.Grouping, Seq: seq}
}

type bookMsg struct {
	header
	PrevSeq int64      `json:"prevSeq"`
	Time    int64      `json:"time"`
	Bids    levelsJSON `json:"bids"`
	Asks    levelsJSON `json:"asks"`
}

type levelsJSON []book.Level

// MarshalJSON writes levels as [["price","qty"],...] without reflection.
func (ls levelsJSON) MarshalJSON() ([]byte, error) {
	n := 2
	for _, l := range ls {
		n += len(l.Price) + len(l.Qty) + 8
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, l := range ls {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendQuote(b, l.Price)
		b = append(b, ',')
		b = strconv.AppendQuote(b, l.Qty)
		b = append(b, ']')
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads [["price","qty"],...].
func (ls *levelsJSON) UnmarshalJSON(b []byte) error {
	var raw [][2]string
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	out := make(levelsJSON, len(raw))
	for i, r := range raw {
		out[i] = book.Level{Price: r[0], Qty: r[1]}
	}
	*ls = out
	return nil
}

// TradeJSON is one trade in a trades message.
type TradeJSON struct {
	ID    string `json:"id"`
	Price string `json:"price"`
	Qty   string `json:"qty"`
	Side  string `json:"side"`
	Time  int64  `json:"time"`
}

type tradesMsg struct {
	header
	Trades []TradeJSON `json:"trades"`
	// Dropped counts trades left out because this client fell too far behind.
	Dropped int `json:"dropped,omitempty"`
}

type tickerMsg struct {
	header
	Ticker *TickerJSON `json:"ticker"`
}

// TickerJSON is a ticker update.
type TickerJSON struct {
	Last           string `json:"last"`
	Open24h        string `json:"open24h,omitempty"`
	High24h        string `json:"high24h,omitempty"`
	Low24h         string `json:"low24h,omitempty"`
	Volume24h      string `json:"volume24h,omitempty"`
	QuoteVolume24h string `json:"quoteVolume24h,omitempty"`
	ChangePct24h   string `json:"changePct24h,omitempty"`
	Bid            string `json:"bid,omitempty"`
	BidQty         string `json:"bidQty,omitempty"`
	Ask            string `json:"ask,omitempty"`
	AskQty         string `json:"askQty,omitempty"`
	MarkPrice      string `json:"markPrice,omitempty"`
	IndexPrice     string `json:"indexPrice,omitempty"`
	FundingRate    string `json:"fundingRate,omitempty"`
	NextFunding    int64  `json:"nextFundingTime,omitempty"`
	OpenInterest   string `json:"openInterest,omitempty"`
	Time           int64  `json:"time"`
}

type candleMsg struct {
	header
	Candle *CandleJSON `json:"candle"`
}

// CandleJSON is one candle update.
type CandleJSON struct {
	OpenTime    int64  `json:"openTime"`
	Open        string `json:"open"`
	High        string `json:"high"`
	Low         string `json:"low"`
	Close       string `json:"close"`
	Volume      string `json:"volume"`
	QuoteVolume string `json:"quoteVolume,omitempty"`
	Trades      int64  `json:"trades,omitempty"`
	Closed      bool   `json:"closed"`
}

type statusMsg struct {
	header
	State   string `json:"state"`
	Message string `json:"message,omitempty"`
}

type ackMsg struct {
	Type string `json:"type"`
	ID   string `json:"id,omitempty"`
	*Sub
	// Subscriptions is how many the connection now holds.
	Subscriptions int `json:"subscriptions"`
}

type errorMsg struct {
	Type string `json:"type"`
	ID   string `json:"id,omitempty"`
	Op   string `json:"op,omitempty"`
	// Channel and Exchange name a private subscription the server ended (its session ended).
	Channel  string   `json:"channel,omitempty"`
	Exchange string   `json:"exchange,omitempty"`
	Error    *Problem `json:"error"`
}

type pongMsg struct {
	Type string `json:"type"`
	ID   string `json:"id,omitempty"`
	Time int64  `json:"time"`
}

type helloMsg struct {
	Type             string `json:"type"`
	Version          int    `json:"version"`
	MaxSubscriptions int    `json:"maxSubscriptions"`
	MaxMessageBytes  int64  `json:"maxMessageBytes"`
	HeartbeatSeconds int    `json:"heartbeatSeconds"`
}

func sideName(s exchangev1.Side) string {
	switch s {
	case exchangev1.Side_SIDE_BUY:
		return "buy"
	case exchangev1.Side_SIDE_SELL:
		return "sell"
	}
	return ""
}
