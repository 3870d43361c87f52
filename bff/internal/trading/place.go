package trading

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/store"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// MaxKeyLen is the longest Idempotency-Key taken.
const MaxKeyLen = 255

// PlaceRequest is a new order. Prices and sizes are decimal strings; enums are the names without their proto
// prefix (BUY, LIMIT, GTC, LONG, CROSS, LAST).
type PlaceRequest struct {
	Exchange     string
	MarketType   string // SPOT or SWAP
	Symbol       string
	Side         string
	Type         string // LIMIT or MARKET
	TimeInForce  string // GTC (default for LIMIT), IOC, FOK, POST_ONLY
	Price        string
	Qty          string // base units
	QuoteQty     string // spot market buy by quote amount
	ReduceOnly   bool
	PositionSide string // hedge mode: LONG or SHORT
	MarginMode   string // SWAP: CROSS or ISOLATED
	TakeProfit   *TpSl
	StopLoss     *TpSl
	// PriceMatch (LIMIT, no Price): the exchange prices the order from its own book when it takes it: QUEUE (best
	// price on the order's side), OPPONENT (best opposite price), QUEUE_5 ... OPPONENT_20. Only where the market's
	// capabilities say price_match.
	PriceMatch string
}

// ClosePositionRequest closes a whole position at market.
type ClosePositionRequest struct {
	Exchange     string
	Symbol       string
	PositionSide string // NET (one-way), LONG or SHORT
	MarginMode   string
}

// AlgoRequest is a conditional order (STOP_MARKET, TAKE_PROFIT_MARKET, STOP_LIMIT, TAKE_PROFIT_LIMIT).
type AlgoRequest struct {
	Exchange         string
	MarketType       string
	Symbol           string
	Side             string
	Type             string
	TriggerPrice     string
	TriggerPriceType string
	Price            string
	Qty              string
	ReduceOnly       bool
	ClosePosition    bool
	PositionSide     string
	MarginMode       string
}

func enumOf[T ~int32](values map[string]int32, prefix, field, v string, allowEmpty bool) (T, *Error) {
	if v == "" {
		if allowEmpty {
			return 0, nil
		}
		return 0, invalid(field, field+" is required.")
	}
	n, ok := values[prefix+strings.ToUpper(v)]
	if !ok || n == 0 {
		return 0, invalid(field, fmt.Sprintf("%q is not a valid %s.", v, field))
	}
	return T(n), nil
}

func marketOf(v string) (exchangev1.MarketType, *Error) {
	return enumOf[exchangev1.MarketType](exchangev1.MarketType_value, "MARKET_TYPE_", "market_type", v, false)
}

// decimalOf parses a positive decimal ("" when optional gives zero).
func decimalOf(field, v string, required bool) (decimal.Decimal, *Error) {
	if v == "" {
		if required {
			return decimal.Zero, invalid(field, field+" is required.")
		}
		return decimal.Zero, nil
	}
	if len(v) > 40 {
		return decimal.Zero, invalid(field, field+" is too long.")
	}
	d, err := decimal.NewFromString(v)
	if err != nil || !d.IsPositive() || strings.ContainsAny(v, "eE") {
		return decimal.Zero, invalid(field, field+" must be a positive decimal number.")
	}
	return d, nil
}

func str(d decimal.Decimal) string {
	if d.IsZero() {
		return ""
	}
	return d.String()
}

func (t *TpSl) normalize(field string) (*exchangev1.TpSl, string, *Error) {
	if t == nil {
		return nil, "", nil
	}
	trig, err := decimalOf(field+".trigger_price", t.TriggerPrice, true)
	if err != nil {
		return nil, "", err
	}
	price, err := decimalOf(field+".price", t.Price, false)
	if err != nil {
		return nil, "", err
	}
	tt, err := enumOf[exchangev1.TriggerPriceType](exchangev1.TriggerPriceType_value, "TRIGGER_PRICE_TYPE_", field+".trigger_price_type", t.TriggerPriceType, true)
	if err != nil {
		return nil, "", err
	}
	n := TpSl{TriggerPrice: trig.String(), Price: str(price), TriggerPriceType: enumName(exchangev1.TriggerPriceType_name, tt, "TRIGGER_PRICE_TYPE_")}
	b, _ := json.Marshal(n)
	return &exchangev1.TpSl{TriggerPrice: n.TriggerPrice, Price: n.Price, TriggerPriceType: tt}, string(b), nil
}

func decodeTpSl(s string) *TpSl {
	if s == "" {
		return nil
	}
	var t TpSl
	if json.Unmarshal([]byte(s), &t) != nil {
		return nil
	}
	return &t
}

func hashOf(v any) string {
	b, _ := json.Marshal(v)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func checkKey(key string) *Error {
	if key == "" {
		return &Error{Status: http.StatusBadRequest, Code: "idempotency_key_required", Field: "Idempotency-Key",
			Message: "The request needs an Idempotency-Key header."}
	}
	if len(key) > MaxKeyLen {
		return &Error{Status: http.StatusBadRequest, Code: "invalid_argument", Field: "Idempotency-Key",
			Message: fmt.Sprintf("The Idempotency-Key header must be at most %d characters.", MaxKeyLen)}
	}
	return nil
}

var errKeyReused = &Error{Status: http.StatusUnprocessableEntity, Code: "idempotency_key_reused", Field: "Idempotency-Key",
	Message: "This Idempotency-Key was already used for a different request."}

// prior answers a request whose Idempotency-Key the member already used: the same entry (waiting for its outcome
// when still in flight), or errKeyReused for a different request. ok false: no entry for the key yet.
func (s *Service) prior(ctx context.Context, memberID, key, hash string) (store.Order, bool, error) {
	prev, err := s.st.OrderByKey(ctx, memberID, key)
	if errors.Is(err, store.ErrNotFound) {
		return store.Order{}, false, nil
	}
	if err != nil {
		return store.Order{}, true, fmt.Errorf("trading: journal: %w", err)
	}
	if prev.RequestHash != hash {
		return store.Order{}, true, errKeyReused
	}
	o, err := s.settled(ctx, prev)
	return o, true, err
}

// settled waits (up to IdempotencyWait) for an entry still in state sent to get its answer, then returns it; a
// rejected entry comes back with its refusal as the error.
func (s *Service) settled(ctx context.Context, o store.Order) (store.Order, error) {
	if o.State == store.OrderSent {
		deadline := time.NewTimer(s.cfg.IdempotencyWait.D())
		defer deadline.Stop()
		poll := time.NewTicker(50 * time.Millisecond)
		defer poll.Stop()
	wait:
		for {
			s.mu.Lock()
			done := s.inflight[o.ID]
			s.mu.Unlock()
			select {
			case <-ctx.Done():
				return store.Order{}, ctx.Err()
			case <-deadline.C:
				break wait
			case <-done: // nil (another replica's call): the poll below
			case <-poll.C:
			}
			cur, err := s.st.Order(ctx, o.ID)
			if err != nil {
				return store.Order{}, fmt.Errorf("trading: journal: %w", err)
			}
			o = cur
			if o.State != store.OrderSent {
				break
			}
		}
	}
	if o.State == store.OrderRejected {
		return o, rejectionOf(o)
	}
	return o, nil
}

// rejectionOf rebuilds the refusal a rejected entry was answered with.
func rejectionOf(o store.Order) *Error {
	r := exchangev1.ErrorReason(exchangev1.ErrorReason_value["ERROR_REASON_"+strings.ToUpper(o.RejectCode)])
	status := reasonStatus(r)
	if r == exchangev1.ErrorReason_ERROR_REASON_UNSPECIFIED {
		status = http.StatusUnprocessableEntity
	}
	if o.RejectCode == "exchange_unavailable" {
		status = http.StatusServiceUnavailable
	}
	return &Error{Status: status, Code: o.RejectCode, ExchangeCode: o.ExchangeCode, Message: o.RejectMessage}
}

// Place journals a new order, sends it to the member's account on the exchange, and returns the journal entry: its
// State is acknowledged (the exchange holds it), unknown or sent (pending: resolved later, never a failure); a
// refusal is an *Error (and the entry rejected). The same key with the same request answers the same entry and
// never sends again.
func (s *Service) Place(ctx context.Context, memberID, key string, req PlaceRequest) (store.Order, error) {
	if e := checkKey(key); e != nil {
		return store.Order{}, e
	}
	m, e := marketOf(req.MarketType)
	if e != nil {
		return store.Order{}, e
	}
	side, e := enumOf[exchangev1.Side](exchangev1.Side_value, "SIDE_", "side", req.Side, false)
	if e != nil {
		return store.Order{}, e
	}
	typ, e := enumOf[exchangev1.OrderType](exchangev1.OrderType_value, "ORDER_TYPE_", "type", req.Type, false)
	if e != nil {
		return store.Order{}, e
	}
	if typ != exchangev1.OrderType_ORDER_TYPE_LIMIT && typ != exchangev1.OrderType_ORDER_TYPE_MARKET {
		return store.Order{}, invalid("type", "type must be LIMIT or MARKET; conditional orders go to /api/v1/algo-orders.")
	}
	tif, e := enumOf[exchangev1.TimeInForce](exchangev1.TimeInForce_value, "TIME_IN_FORCE_", "time_in_force", req.TimeInForce, true)
	if e != nil {
		return store.Order{}, e
	}
	if tif == exchangev1.TimeInForce_TIME_IN_FORCE_GTD {
		return store.Order{}, invalid("time_in_force", "GTD orders are not offered.")
	}
	ps, e := enumOf[exchangev1.PositionSide](exchangev1.PositionSide_value, "POSITION_SIDE_", "position_side", req.PositionSide, true)
	if e != nil {
		return store.Order{}, e
	}
	mm, e := enumOf[exchangev1.MarginMode](exchangev1.MarginMode_value, "MARGIN_MODE_", "margin_mode", req.MarginMode, true)
	if e != nil {
		return store.Order{}, e
	}
	pm, e := enumOf[exchangev1.PriceMatch](exchangev1.PriceMatch_value, "PRICE_MATCH_", "price_match", req.PriceMatch, true)
	if e != nil {
		return store.Order{}, e
	}
	if pm != 0 && typ != exchangev1.OrderType_ORDER_TYPE_LIMIT {
		return store.Order{}, invalid("price_match", "price_match is for limit orders.")
	}
	if pm != 0 && req.Price != "" {
		return store.Order{}, invalid("price", "A price-match order takes no price: the exchange sets it.")
	}
	price, e := decimalOf("price", req.Price, typ == exchangev1.OrderType_ORDER_TYPE_LIMIT && pm == 0)
	if e != nil {
		return store.Order{}, e
	}
	qty, e := decimalOf("qty", req.Qty, false)
	if e != nil {
		return store.Order{}, e
	}
	quote, e := decimalOf("quote_qty", req.QuoteQty, false)
	if e != nil {
		return store.Order{}, e
	}
	switch {
	case qty.IsZero() && quote.IsZero():
		return store.Order{}, invalid("qty", "qty is required.")
	case !qty.IsZero() && !quote.IsZero():
		return store.Order{}, invalid("quote_qty", "Give either qty or quote_qty, not both.")
	case !quote.IsZero() && !(m == exchangev1.MarketType_MARKET_TYPE_SPOT && typ == exchangev1.OrderType_ORDER_TYPE_MARKET && side == exchangev1.Side_SIDE_BUY):
		return store.Order{}, invalid("quote_qty", "quote_qty is only for spot market buys.")
	}
	if typ == exchangev1.OrderType_ORDER_TYPE_MARKET && !price.IsZero() {
		return store.Order{}, invalid("price", "A market order takes no price.")
	}
	if m == exchangev1.MarketType_MARKET_TYPE_SPOT && (ps != 0 || req.ReduceOnly || mm != 0) {
		return store.Order{}, invalid("position_side", "Spot orders take no position side, reduce-only or margin mode.")
	}
	if typ == exchangev1.OrderType_ORDER_TYPE_LIMIT && tif == 0 {
		tif = exchangev1.TimeInForce_TIME_IN_FORCE_GTC
	}
	tp, tpJSON, e := req.TakeProfit.normalize("take_profit")
	if e != nil {
		return store.Order{}, e
	}
	sl, slJSON, e := req.StopLoss.normalize("stop_loss")
	if e != nil {
		return store.Order{}, e
	}
	intent := store.Order{MemberID: memberID, Exchange: req.Exchange, MarketType: marketName(m), Symbol: req.Symbol,
		Kind: store.OrderKindOrder, Side: enumName(exchangev1.Side_name, side, "SIDE_"),
		Type:        enumName(exchangev1.OrderType_name, typ, "ORDER_TYPE_"),
		TimeInForce: enumName(exchangev1.TimeInForce_name, tif, "TIME_IN_FORCE_"), Price: str(price), Qty: str(qty),
		QuoteQty: str(quote), ReduceOnly: req.ReduceOnly,
		PositionSide: enumName(exchangev1.PositionSide_name, ps, "POSITION_SIDE_"),
		MarginMode:   enumName(exchangev1.MarginMode_name, mm, "MARGIN_MODE_"), TakeProfit: tpJSON, StopLoss: slJSON,
		PriceMatch: enumName(exchangev1.PriceMatch_name, pm, "PRICE_MATCH_"), IdempotencyKey: key}
	intent.RequestHash = hashOf(intent)
	if o, found, err := s.prior(ctx, memberID, key, intent.RequestHash); found {
		return o, err
	}

	sup, err := s.supervisor(req.Exchange)
	if err != nil {
		return store.Order{}, err
	}
	d, err := describe(sup)
	if err != nil {
		return store.Order{}, err
	}
	caps, ok := capsOf(d, m)
	if !ok {
		return store.Order{}, &Error{Status: http.StatusUnprocessableEntity, Code: "not_supported", Field: "market_type",
			Message: "Trading on this market is not available on this exchange."}
	}
	if len(caps.orderTypes) > 0 && !slices.Contains(caps.orderTypes, typ) {
		return store.Order{}, &Error{Status: http.StatusUnprocessableEntity, Code: "not_supported", Field: "type",
			Message: "This exchange does not take this order type here."}
	}
	if tif != 0 && len(caps.tifs) > 0 && !slices.Contains(caps.tifs, tif) {
		return store.Order{}, &Error{Status: http.StatusUnprocessableEntity, Code: "not_supported", Field: "time_in_force",
			Message: "This exchange does not take this time in force here."}
	}
	if req.ReduceOnly && !caps.reduceOnly {
		return store.Order{}, &Error{Status: http.StatusUnprocessableEntity, Code: "not_supported", Field: "reduce_only",
			Message: "This exchange does not take reduce-only orders here."}
	}
	if e := checkEntryTpSl(caps, m, typ, tp, sl); e != nil { // the market's rules for TP/SL on entry (entrytpsl.go)
		return store.Order{}, e
	}
	if tp, sl, e = entryTpSl(caps, m, req.ReduceOnly, tp, sl); e != nil { // nil where exhub arms them (attached.go)
		return store.Order{}, e
	}
	if pm != 0 && !caps.priceMatch {
		return store.Order{}, &Error{Status: http.StatusUnprocessableEntity, Code: "not_supported", Field: "price_match",
			Message: "This exchange does not price orders from its book here."}
	}
	in, err := s.instrument(ctx, sup, req.Exchange, m, req.Symbol)
	if err != nil {
		return store.Order{}, err
	}
	rulesType := typ
	if pm != 0 {
		rulesType = exchangev1.OrderType_ORDER_TYPE_UNSPECIFIED // no price to check yet; the limit size rules apply
	}
	if e := checkRules(in, rulesType, price, qty, quote); e != nil {
		return store.Order{}, e
	}
	acct, err := s.account(ctx, memberID, req.Exchange)
	if err != nil {
		return store.Order{}, err
	}
	mm = s.marginModeFor(ctx, sup, acct, m, req.Symbol, mm, &intent)
	o, fresh, err := s.journalNew(ctx, d, acct, intent)
	if err != nil || !fresh {
		return o, err
	}
	cid := o.ClientOrderID
	preq := &exchangev1.PlaceOrderRequest{Account: acct, MarketType: m, Symbol: req.Symbol, Side: side, Type: typ,
		TimeInForce: tif, Price: o.Price, Qty: o.Qty, QuoteQty: o.QuoteQty, ClientOrderId: cid, ReduceOnly: req.ReduceOnly,
		PositionSide: ps, TakeProfit: tp, StopLoss: sl, MarginMode: mm, PriceMatch: pm}
	return s.send(ctx, sup, acct, o, "PlaceOrder", func(ctx context.Context, c exchangev1.ExchangeClient) (store.OrderOutcome, error) {
		resp, err := c.PlaceOrder(ctx, preq)
		return outcomeOf(resp.GetOrder()), err
	})
}

// journalNew gives the intent the account and a new client id and writes it to the journal before any call. fresh
// false: a concurrent request with the same Idempotency-Key wrote its entry first, and o is that entry once settled
// (its refusal as the error).
func (s *Service) journalNew(ctx context.Context, d *exchangev1.DescribeResponse, acct *exchangev1.AccountRef,
	intent store.Order) (o store.Order, fresh bool, err error) {
	cid, err := s.clientIDFor(ctx, d)
	if err != nil {
		return store.Order{}, false, err
	}
	intent.AccountID, intent.ClientOrderID = acct.GetAccountId(), cid
	o, created, err := s.journalIntent(ctx, intent)
	if err != nil {
		if errors.Is(err, store.ErrKeyReused) {
			return store.Order{}, false, errKeyReused
		}
		return store.Order{}, false, fmt.Errorf("trading: journal: %w", err)
	}
	if !created {
		o, err = s.settled(ctx, o)
		return o, false, err
	}
	return o, true, nil
}

// send makes the one plugin call of a journaled intent and records its outcome.
func (s *Service) send(ctx context.Context, sup *pluginhost.Supervisor, acct *exchangev1.AccountRef, o store.Order, method string,
	fn func(context.Context, exchangev1.ExchangeClient) (store.OrderOutcome, error)) (store.Order, error) {
	done := make(chan struct{})
	s.mu.Lock()
	s.inflight[o.ID] = done
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.inflight, o.ID)
		s.mu.Unlock()
		close(done)
	}()
	var out store.OrderOutcome
	err := s.call(ctx, sup, method, func(ctx context.Context, c exchangev1.ExchangeClient) error {
		var err error
		out, err = fn(ctx, c)
		return err
	})
	// The journal writes outlive the request: the answer must be recorded even if the client left.
	jctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.CallTimeout.D())
	defer cancel()
	switch {
	case err == nil && out.ExchangeOrderID != "":
		s.stats.placed.Add(1)
		next, jerr := s.st.AcknowledgeOrder(jctx, o.ID, out)
		if jerr != nil {
			s.log.Error("journal: acknowledgement not recorded; the resolver will read it back", "order", o.ID, "err", jerr)
			return s.current(jctx, o), nil
		}
		return next, nil
	case err == nil || sdk.IsUnknownOutcome(err):
		if err == nil {
			err = errors.New("the plugin answered without an order id")
		}
		s.stats.unknown.Add(1)
		s.log.Warn("order outcome unknown; resolving by client id", "order", o.ID, "exchange", o.Exchange,
			"client_order_id", o.ClientOrderID, "err", err)
		next, jerr := s.st.MarkOrderUnknown(jctx, o.ID, s.now().Add(s.backoff(1)))
		s.wake()
		if jerr != nil {
			// The account stream may have recorded the order meanwhile: answer what the journal holds.
			if cur := s.current(jctx, o); cur.State != store.OrderSent {
				return cur, nil
			}
			s.log.Error("journal: unknown outcome not recorded; the resolver will pick the entry up", "order", o.ID, "err", jerr)
			return o, nil
		}
		return next, nil
	default:
		pe := pluginError(err)
		// The margin mode it was sent with may be the cause: the next order reads the symbol's mode again.
		s.marginModes.forget(marginKey{o.Exchange, o.AccountID, o.Symbol})
		if pe.Code == sdk.ReasonName(exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH) {
			pe.Message = s.explainPositionMode(ctx, sup, acct)
		}
		s.stats.rejected.Add(1)
		out := store.OrderOutcome{RejectCode: pe.Code, ExchangeCode: pe.ExchangeCode, RejectMessage: pe.Message}
		next, jerr := s.st.RejectOrder(jctx, o.ID, out)
		if jerr != nil {
			s.log.Error("journal: rejection not recorded; the resolver will read the order back", "order", o.ID, "err", jerr)
			return o, pe
		}
		return next, pe
	}
}

// marginModeFor is the margin mode a SWAP order, algo order or position close is sent with: the one asked for, else
// the symbol's current one on the account (exchanges such as OKX need it on every order), recorded on the intent
// before it is journaled. The request's hash is taken before, so a repeat without a margin mode stays the same
// request.
func (s *Service) marginModeFor(ctx context.Context, sup *pluginhost.Supervisor, acct *exchangev1.AccountRef,
	m exchangev1.MarketType, symbol string, mm exchangev1.MarginMode, intent *store.Order) exchangev1.MarginMode {
	if m != exchangev1.MarketType_MARKET_TYPE_SWAP || mm != 0 {
		return mm
	}
	mm = s.currentMarginMode(ctx, sup, acct, symbol)
	intent.MarginMode = enumName(exchangev1.MarginMode_name, mm, "MARGIN_MODE_")
	return mm
}

// currentMarginMode reads a symbol's margin mode on the account (UNSPECIFIED when the exchange does not say),
// reusing one read in the last marginModeTTL (see marginModes).
func (s *Service) currentMarginMode(ctx context.Context, sup *pluginhost.Supervisor, acct *exchangev1.AccountRef, symbol string) exchangev1.MarginMode {
	k := marginKey{sup.Slug(), acct.GetAccountId(), symbol}
	if mm, ok := s.marginModes.get(k, s.now()); ok {
		return mm
	}
	var mm exchangev1.MarginMode
	err := s.call(ctx, sup, "GetLeverage", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.GetLeverage(ctx, &exchangev1.GetLeverageRequest{Account: acct, Symbol: symbol})
		mm = resp.GetMarginMode()
		return err
	})
	if err != nil {
		s.log.Warn("reading the margin mode", "exchange", sup.Slug(), "err", err)
		return mm
	}
	s.marginModes.put(k, mm, s.now())
	return mm
}

// current re-reads an entry (o itself when the read fails).
func (s *Service) current(ctx context.Context, o store.Order) store.Order {
	if cur, err := s.st.Order(ctx, o.ID); err == nil {
		return cur
	}
	return o
}

// explainPositionMode is the sentence for a position-mode mismatch, naming the account's mode.
func (s *Service) explainPositionMode(ctx context.Context, sup *pluginhost.Supervisor, acct *exchangev1.AccountRef) string {
	var mode exchangev1.PositionMode
	_ = s.call(ctx, sup, "GetPositionMode", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.GetPositionMode(ctx, &exchangev1.GetPositionModeRequest{Account: acct})
		mode = resp.GetMode()
		return err
	})
	switch mode {
	case exchangev1.PositionMode_POSITION_MODE_HEDGE:
		return "Your account is in hedge mode: choose Open Long/Short or Close Long/Short, so the order names the position side it opens or closes."
	case exchangev1.PositionMode_POSITION_MODE_ONE_WAY:
		return "Your account is in one-way mode: place the order without a position side (Long/Short), or switch the position mode to Hedge."
	}
	return "The order's position side does not match your account's position mode (Hedge needs Long/Short; One-Way takes none)."
}

// ClosePosition closes a whole position at market, journaled like an order (kind close).
func (s *Service) ClosePosition(ctx context.Context, memberID, key string, req ClosePositionRequest) (store.Order, error) {
	if e := checkKey(key); e != nil {
		return store.Order{}, e
	}
	ps, e := enumOf[exchangev1.PositionSide](exchangev1.PositionSide_value, "POSITION_SIDE_", "position_side", req.PositionSide, false)
	if e != nil {
		return store.Order{}, e
	}
	mm, e := enumOf[exchangev1.MarginMode](exchangev1.MarginMode_value, "MARGIN_MODE_", "margin_mode", req.MarginMode, true)
	if e != nil {
		return store.Order{}, e
	}
	intent := store.Order{MemberID: memberID, Exchange: req.Exchange, MarketType: "SWAP", Symbol: req.Symbol,
		Kind: store.OrderKindClose, Side: "CLOSE", Type: "MARKET",
		PositionSide: enumName(exchangev1.PositionSide_name, ps, "POSITION_SIDE_"),
		MarginMode:   enumName(exchangev1.MarginMode_name, mm, "MARGIN_MODE_"), ReduceOnly: true, IdempotencyKey: key}
	intent.RequestHash = hashOf(intent)
	if o, found, err := s.prior(ctx, memberID, key, intent.RequestHash); found {
		return o, err
	}
	sup, err := s.supervisor(req.Exchange)
	if err != nil {
		return store.Order{}, err
	}
	d, err := describe(sup)
	if err != nil {
		return store.Order{}, err
	}
	acct, err := s.account(ctx, memberID, req.Exchange)
	if err != nil {
		return store.Order{}, err
	}
	mm = s.marginModeFor(ctx, sup, acct, exchangev1.MarketType_MARKET_TYPE_SWAP, req.Symbol, mm, &intent)
	o, fresh, err := s.journalNew(ctx, d, acct, intent)
	if err != nil || !fresh {
		return o, err
	}
	cid := o.ClientOrderID
	creq := &exchangev1.ClosePositionRequest{Account: acct, Symbol: req.Symbol, PositionSide: ps, ClientOrderId: cid,
		MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, MarginMode: mm}
	return s.send(ctx, sup, acct, o, "ClosePosition", func(ctx context.Context, c exchangev1.ExchangeClient) (store.OrderOutcome, error) {
		resp, err := c.ClosePosition(ctx, creq)
		return outcomeOf(resp.GetOrder()), err
	})
}

// PlaceAlgo journals and sends a conditional order (kind algo; its client id is the client algo id).
func (s *Service) PlaceAlgo(ctx context.Context, memberID, key string, req AlgoRequest) (store.Order, error) {
	if e := checkKey(key); e != nil {
		return store.Order{}, e
	}
	m, e := marketOf(req.MarketType)
	if e != nil {
		return store.Order{}, e
	}
	side, e := enumOf[exchangev1.Side](exchangev1.Side_value, "SIDE_", "side", req.Side, false)
	if e != nil {
		return store.Order{}, e
	}
	typ, e := enumOf[exchangev1.OrderType](exchangev1.OrderType_value, "ORDER_TYPE_", "type", req.Type, false)
	if e != nil {
		return store.Order{}, e
	}
	if typ == exchangev1.OrderType_ORDER_TYPE_LIMIT || typ == exchangev1.OrderType_ORDER_TYPE_MARKET {
		return store.Order{}, invalid("type", "An algo order is STOP_MARKET, TAKE_PROFIT_MARKET, STOP_LIMIT or TAKE_PROFIT_LIMIT.")
	}
	tt, e := enumOf[exchangev1.TriggerPriceType](exchangev1.TriggerPriceType_value, "TRIGGER_PRICE_TYPE_", "trigger_price_type", req.TriggerPriceType, true)
	if e != nil {
		return store.Order{}, e
	}
	ps, e := enumOf[exchangev1.PositionSide](exchangev1.PositionSide_value, "POSITION_SIDE_", "position_side", req.PositionSide, true)
	if e != nil {
		return store.Order{}, e
	}
	mm, e := enumOf[exchangev1.MarginMode](exchangev1.MarginMode_value, "MARGIN_MODE_", "margin_mode", req.MarginMode, true)
	if e != nil {
		return store.Order{}, e
	}
	trig, e := decimalOf("trigger_price", req.TriggerPrice, true)
	if e != nil {
		return store.Order{}, e
	}
	limit := typ == exchangev1.OrderType_ORDER_TYPE_STOP_LIMIT || typ == exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_LIMIT
	price, e := decimalOf("price", req.Price, limit)
	if e != nil {
		return store.Order{}, e
	}
	qty, e := decimalOf("qty", req.Qty, !req.ClosePosition)
	if e != nil {
		return store.Order{}, e
	}
	intent := store.Order{MemberID: memberID, Exchange: req.Exchange, MarketType: marketName(m), Symbol: req.Symbol,
		Kind: store.OrderKindAlgo, Side: enumName(exchangev1.Side_name, side, "SIDE_"),
		Type: enumName(exchangev1.OrderType_name, typ, "ORDER_TYPE_"), Price: str(price), Qty: str(qty),
		ReduceOnly: req.ReduceOnly, PositionSide: enumName(exchangev1.PositionSide_name, ps, "POSITION_SIDE_"),
		MarginMode: enumName(exchangev1.MarginMode_name, mm, "MARGIN_MODE_"), TriggerPrice: trig.String(),
		TriggerType:   enumName(exchangev1.TriggerPriceType_name, tt, "TRIGGER_PRICE_TYPE_"),
		ClosePosition: req.ClosePosition, IdempotencyKey: key}
	intent.RequestHash = hashOf(intent)
	if o, found, err := s.prior(ctx, memberID, key, intent.RequestHash); found {
		return o, err
	}
	sup, err := s.supervisor(req.Exchange)
	if err != nil {
		return store.Order{}, err
	}
	d, err := describe(sup)
	if err != nil {
		return store.Order{}, err
	}
	caps, ok := capsOf(d, m)
	if !ok || !slices.Contains(caps.algoTypes, typ) {
		return store.Order{}, &Error{Status: http.StatusUnprocessableEntity, Code: "not_supported", Field: "type",
			Message: "This exchange does not take this conditional order here."}
	}
	in, err := s.instrument(ctx, sup, req.Exchange, m, req.Symbol)
	if err != nil {
		return store.Order{}, err
	}
	if tick := dec(in.GetTickSize()); tick.IsPositive() && !trig.Mod(tick).IsZero() {
		return store.Order{}, precision("trigger_price", fmt.Sprintf("The trigger price must be a multiple of %s.", tick.String()))
	}
	if !qty.IsZero() || limit {
		ot := exchangev1.OrderType_ORDER_TYPE_MARKET
		if limit {
			ot = exchangev1.OrderType_ORDER_TYPE_LIMIT
		}
		if e := checkRules(in, ot, price, qty, decimal.Zero); e != nil && !(qty.IsZero() && e.Field == "qty") {
			return store.Order{}, e
		}
	}
	acct, err := s.account(ctx, memberID, req.Exchange)
	if err != nil {
		return store.Order{}, err
	}
	mm = s.marginModeFor(ctx, sup, acct, m, req.Symbol, mm, &intent)
	o, fresh, err := s.journalNew(ctx, d, acct, intent)
	if err != nil || !fresh {
		return o, err
	}
	cid := o.ClientOrderID
	areq := &exchangev1.PlaceAlgoOrderRequest{Account: acct, MarketType: m, Symbol: req.Symbol, Side: side, Type: typ,
		TriggerPrice: o.TriggerPrice, TriggerPriceType: tt, Price: o.Price, Qty: o.Qty, ReduceOnly: req.ReduceOnly,
		ClosePosition: req.ClosePosition, PositionSide: ps, ClientAlgoId: cid, MarginMode: mm}
	return s.send(ctx, sup, acct, o, "PlaceAlgoOrder", func(ctx context.Context, c exchangev1.ExchangeClient) (store.OrderOutcome, error) {
		resp, err := c.PlaceAlgoOrder(ctx, areq)
		return algoOutcomeOf(resp.GetAlgoOrder()), err
	})
}
