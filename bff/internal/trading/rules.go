package trading

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/bff/internal/pluginhost"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

type instrKey struct {
	exchange string
	market   exchangev1.MarketType
}

type instrEntry struct {
	at    time.Time
	bySym map[string]*exchangev1.Instrument
}

// instrument returns one instrument of an exchange, from the per exchange and market type cache (InstrumentTTL).
func (s *Service) instrument(ctx context.Context, sup *pluginhost.Supervisor, exchange string, m exchangev1.MarketType, symbol string) (*exchangev1.Instrument, error) {
	k := instrKey{exchange, m}
	s.mu.Lock()
	e, ok := s.instr[k]
	s.mu.Unlock()
	if !ok || s.now().Sub(e.at) >= s.cfg.InstrumentTTL.D() {
		var list []*exchangev1.Instrument
		err := s.call(ctx, sup, "ListInstruments", func(ctx context.Context, c exchangev1.ExchangeClient) error {
			resp, err := c.ListInstruments(ctx, &exchangev1.ListInstrumentsRequest{MarketType: m})
			list = resp.GetInstruments()
			return err
		})
		if err != nil {
			if ok { // a stale list beats none
				s.log.Warn("instrument refresh failed; using the cached list", "exchange", exchange, "err", err)
			} else {
				return nil, readError(ctx, err)
			}
		} else {
			e = instrEntry{at: s.now(), bySym: make(map[string]*exchangev1.Instrument, len(list))}
			for _, in := range list {
				e.bySym[in.GetSymbol()] = in
			}
			s.mu.Lock()
			s.instr[k] = e
			s.mu.Unlock()
		}
	}
	in, ok := e.bySym[symbol]
	if !ok {
		return nil, &Error{Status: http.StatusNotFound, Code: "instrument_not_found", Field: "symbol",
			Message: "This market does not exist on the exchange."}
	}
	return in, nil
}

// dec parses an optional decimal setting of an instrument ("" or unparsable: zero, meaning no rule).
func dec(s string) decimal.Decimal {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Zero
	}
	return d
}

// checkRules applies the instrument's tick, step, size and notional rules to an order before it is sent.
func checkRules(in *exchangev1.Instrument, typ exchangev1.OrderType, price, qty, quoteQty decimal.Decimal) *Error {
	if st := in.GetStatus(); st != exchangev1.InstrumentStatus_INSTRUMENT_STATUS_UNSPECIFIED &&
		st != exchangev1.InstrumentStatus_INSTRUMENT_STATUS_TRADING {
		return &Error{Status: http.StatusUnprocessableEntity, Code: "market_closed", Field: "symbol",
			Message: "This market is not open for trading right now."}
	}
	if typ == exchangev1.OrderType_ORDER_TYPE_LIMIT || !price.IsZero() {
		if tick := dec(in.GetTickSize()); tick.IsPositive() && !price.Mod(tick).IsZero() {
			return precision("price", fmt.Sprintf("The price must be a multiple of %s.", tick.String()))
		}
		if lo := dec(in.GetMinPrice()); lo.IsPositive() && price.LessThan(lo) {
			return precision("price", fmt.Sprintf("The price must be at least %s.", lo.String()))
		}
		if hi := dec(in.GetMaxPrice()); hi.IsPositive() && price.GreaterThan(hi) {
			return precision("price", fmt.Sprintf("The price must be at most %s.", hi.String()))
		}
	}
	if qty.IsZero() { // a spot market buy by quote amount
		if mn := dec(in.GetMinNotional()); mn.IsPositive() && quoteQty.LessThan(mn) {
			return &Error{Status: http.StatusUnprocessableEntity, Code: "min_notional", Field: "quote_qty",
				Message: MsgMinimum + fmt.Sprintf(" (%s %s).", mn.String(), in.GetQuote())}
		}
		return nil
	}
	step, lo, hi := dec(in.GetStepSize()), dec(in.GetMinQty()), dec(in.GetMaxQty())
	if typ == exchangev1.OrderType_ORDER_TYPE_MARKET {
		if v := dec(in.GetMarketStepSize()); v.IsPositive() {
			step = v
		}
		if v := dec(in.GetMarketMinQty()); v.IsPositive() {
			lo = v
		}
		if v := dec(in.GetMarketMaxQty()); v.IsPositive() {
			hi = v
		}
	}
	if step.IsPositive() && !qty.Mod(step).IsZero() {
		return precision("qty", fmt.Sprintf("The size must be a multiple of %s %s.", step.String(), in.GetBase()))
	}
	if lo.IsPositive() && qty.LessThan(lo) {
		return &Error{Status: http.StatusUnprocessableEntity, Code: "min_size", Field: "qty",
			Message: MsgMinimum + fmt.Sprintf(" (%s %s).", lo.String(), in.GetBase())}
	}
	if hi.IsPositive() && qty.GreaterThan(hi) {
		return precision("qty", fmt.Sprintf("The size must be at most %s %s.", hi.String(), in.GetBase()))
	}
	if mn := dec(in.GetMinNotional()); mn.IsPositive() && price.IsPositive() && price.Mul(qty).LessThan(mn) {
		return &Error{Status: http.StatusUnprocessableEntity, Code: "min_notional", Field: "qty",
			Message: MsgMinimum + fmt.Sprintf(" (order value %s %s).", mn.String(), in.GetQuote())}
	}
	return nil
}

// marketCaps returns the trading capabilities of one market type: the per-market entry when the plugin declares
// one (1.1), else the flat fields.
type marketCaps struct {
	orderTypes []exchangev1.OrderType
	tifs       []exchangev1.TimeInForce
	algoTypes  []exchangev1.OrderType
	reduceOnly bool
	amend      bool
	priceMatch bool
	tpslKinds  []exchangev1.TpSlKind
	triggers   []exchangev1.TriggerPriceType
	// onEntry: what TP/SL on a new order takes (TP_SL_KIND_ON_ORDER; nil: the plugin says nothing more).
	onEntry *exchangev1.TpSlOnEntry
	// flatTpSl: a plugin without per-market capabilities claims TP/SL (TradingCapabilities.tpsl).
	flatTpSl bool
}

func capsOfMarket(mc *exchangev1.MarketTradingCapabilities) marketCaps {
	return marketCaps{orderTypes: mc.GetOrderTypes(), tifs: mc.GetTimeInForce(), algoTypes: mc.GetAlgoOrderTypes(),
		reduceOnly: mc.GetReduceOnly(), amend: mc.GetAmend(), priceMatch: mc.GetPriceMatch(),
		tpslKinds: mc.GetTpslKinds(), triggers: mc.GetTriggerPriceTypes(), onEntry: mc.GetTpslOnEntry()}
}

func capsOf(d *exchangev1.DescribeResponse, m exchangev1.MarketType) (marketCaps, bool) {
	tc := d.GetCapabilities().GetTrading()
	if !tc.GetEnabled() || !slices.Contains(d.GetCapabilities().GetMarketTypes(), m) {
		return marketCaps{}, false
	}
	for _, mc := range tc.GetMarkets() {
		if mc.GetMarketType() == m {
			return capsOfMarket(mc), true
		}
	}
	var algo []exchangev1.OrderType
	for _, t := range tc.GetOrderTypes() {
		if t != exchangev1.OrderType_ORDER_TYPE_LIMIT && t != exchangev1.OrderType_ORDER_TYPE_MARKET {
			algo = append(algo, t)
		}
	}
	return marketCaps{orderTypes: tc.GetOrderTypes(), tifs: tc.GetTimeInForce(), algoTypes: algo,
		reduceOnly: tc.GetReduceOnly(), amend: tc.GetAmend(), flatTpSl: tc.GetTpsl()}, true
}

// describe returns the plugin's cached Describe, or 503 before its first launch.
func describe(sup *pluginhost.Supervisor) (*exchangev1.DescribeResponse, error) {
	d := sup.Describe()
	if d == nil {
		return nil, &Error{Status: http.StatusServiceUnavailable, Code: "exchange_unavailable",
			Message: reasonMessage(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "")}
	}
	return d, nil
}

// newClientID makes a client order id in the format the plugin declares: "ex" and 30 random hex digits (32
// characters), cut to the declared maximum length (at least 16 characters must remain), and checked against the
// declared pattern.
func (s *Service) newClientID(d *exchangev1.DescribeResponse) (string, error) {
	if s.testClientID != nil {
		if id := s.testClientID(); id != "" {
			return id, nil
		}
	}
	var b [15]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails
	return s.clientIDFrom(d, "ex"+hex.EncodeToString(b[:]))
}

// clientIDFrom fits id ("ex" and hex digits) to the plugin's declared client id format (see newClientID).
func (s *Service) clientIDFrom(d *exchangev1.DescribeResponse, id string) (string, error) {
	f := d.GetCapabilities().GetTrading().GetClientOrderIdFormat()
	if n := int(f.GetMaxLength()); n > 0 && n < len(id) {
		if n < 16 {
			return "", fmt.Errorf("trading: the plugin allows client ids of only %d characters", n)
		}
		id = id[:n]
	}
	if p := f.GetPattern(); p != "" {
		s.mu.Lock()
		re, ok := s.patterns[p]
		if !ok {
			var err error
			if re, err = regexp.Compile(p); err != nil {
				s.mu.Unlock()
				return "", fmt.Errorf("trading: the plugin's client id pattern does not compile: %w", err)
			}
			s.patterns[p] = re
		}
		s.mu.Unlock()
		if !re.MatchString(id) {
			if up := strings.ToUpper(id); re.MatchString(up) {
				return up, nil
			}
			return "", fmt.Errorf("trading: no client id form fits the plugin's pattern %q", p)
		}
	}
	return id, nil
}
