package okx

import (
	"cmp"
	"context"
	"errors"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"
	"google.golang.org/protobuf/proto"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// accountState is what the plugin remembers per account: which instrument an order id belongs to (OKX needs the
// instId to cancel or query, the contract may give only the id), the parameters of the orders it placed or read
// (so a cancel's answer is built without reading the order back) and convert quotes awaiting a trade. Every map is
// bounded. Margin modes are not remembered: they travel on every order request.
type accountState struct {
	mu     sync.Mutex
	orders map[string]orderMemo // account api key + ordId
	quotes map[string]convertQuote
}

// orderMemo is what is remembered of one order: its instrument and, where known, its parameters (orderBasics: no
// status, fills or fees, which change without the plugin seeing it).
type orderMemo struct {
	instID string
	basics *exchangev1.Order
}

type convertQuote struct {
	baseCcy, quoteCcy, side, sz, szCcy string
}

const stateCap = 20000

func newAccountState() *accountState {
	return &accountState{orders: map[string]orderMemo{}, quotes: map[string]convertQuote{}}
}

func (a *accountState) rememberOrder(key, ordID, instID string) {
	a.remember(key, ordID, orderMemo{instID: instID})
}

// rememberOrderOf remembers an order's instrument and parameters.
func (a *accountState) rememberOrderOf(key string, o *exchangev1.Order) {
	a.remember(key, o.GetOrderId(), orderMemo{instID: o.GetSymbol(), basics: orderBasics(o)})
}

func (a *accountState) remember(key, ordID string, m orderMemo) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.orders) >= stateCap {
		clear(a.orders)
	}
	k := key + " " + ordID
	if m.basics == nil && a.orders[k].instID == m.instID {
		m.basics = a.orders[k].basics // an instrument alone does not forget the parameters
	}
	a.orders[k] = m
}

func (a *accountState) orderInst(key, ordID string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.orders[key+" "+ordID].instID
}

// orderBasicsOf returns a copy of the remembered parameters of an order, nil when none are.
func (a *accountState) orderBasicsOf(key, ordID string) *exchangev1.Order {
	a.mu.Lock()
	defer a.mu.Unlock()
	if b := a.orders[key+" "+ordID].basics; b != nil {
		return proto.Clone(b).(*exchangev1.Order)
	}
	return nil
}

// orderBasics is the part of an order that only the owner changes (by amending it): ids, instrument, side, type,
// price, size, reduce-only, TP/SL, creation time.
func orderBasics(o *exchangev1.Order) *exchangev1.Order {
	b := &exchangev1.Order{OrderId: o.GetOrderId(), ClientOrderId: o.GetClientOrderId(), Symbol: o.GetSymbol(),
		MarketType: o.GetMarketType(), Side: o.GetSide(), PositionSide: o.GetPositionSide(), Type: o.GetType(),
		TimeInForce: o.GetTimeInForce(), Price: o.GetPrice(), Qty: o.GetQty(), ReduceOnly: o.GetReduceOnly(),
		CreatedTime: o.GetCreatedTime(), AlgoId: o.GetAlgoId()}
	if o.GetTakeProfit() != nil {
		b.TakeProfit = proto.Clone(o.GetTakeProfit()).(*exchangev1.TpSl)
	}
	if o.GetStopLoss() != nil {
		b.StopLoss = proto.Clone(o.GetStopLoss()).(*exchangev1.TpSl)
	}
	return b
}

var clOrdIDRe = regexp.MustCompile(clientIDPattern)

// tdMode is OKX's trade mode of a request: cash for spot, and for swaps the margin mode the request names. OKX
// takes it with every order, so a SWAP request without one is refused rather than given a default.
func tdMode(in *Instrument, mm exchangev1.MarginMode) (string, error) {
	if in.MarketType == exchangev1.MarketType_MARKET_TYPE_SPOT {
		return "cash", nil
	}
	switch mm {
	case exchangev1.MarginMode_MARGIN_MODE_CROSS:
		return "cross", nil
	case exchangev1.MarginMode_MARGIN_MODE_ISOLATED:
		return "isolated", nil
	}
	return "", sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "margin_mode",
		"OKX takes the margin mode with every SWAP order: margin_mode (cross or isolated) is required")
}

// convFor is the size conversion of a row's instrument. A row whose instrument cannot be looked up is an error:
// reporting its contracts as base units would be wrong by the contract value.
func (s *Server) convFor(ctx context.Context, instID string) (sizeConv, error) {
	in, err := s.instrument(ctx, marketTypeOfSymbol(instID), instID)
	if err != nil {
		if reasonOf(err) == exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND {
			return nil, err
		}
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND, "instrument %s of a row: %v", instID, err)
	}
	return in.FromOKXSize, nil
}

// resolveOrderInst finds the instrument of an order: the request's symbol, else the one remembered for its id.
func (s *Server) resolveOrderInst(ctx context.Context, creds *Credentials, mt exchangev1.MarketType, symbol, ordID string) (*Instrument, error) {
	if symbol == "" && ordID != "" {
		symbol = s.state.orderInst(creds.APIKey, ordID)
		mt = exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED
	}
	if symbol == "" {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND, "symbol", "OKX needs the symbol of order %q", ordID)
	}
	return s.instrument(ctx, mt, symbol)
}

// fetchOrder reads one order by id or client id.
func (s *Server) fetchOrder(ctx context.Context, creds *Credentials, in *Instrument, ordID, clOrdID string) (*exchangev1.Order, error) {
	q := url.Values{"instId": {in.InstID}}
	switch {
	case ordID != "":
		q.Set("ordId", ordID)
	case clOrdID != "":
		q.Set("clOrdId", clOrdID)
	default:
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "order_id", "order_id or client_order_id is required")
	}
	data, err := s.client().Get(ctx, pathTradeOrder, q, creds)
	if err != nil {
		return nil, err
	}
	rows, err := ParseOrders(data)
	if err != nil {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "order: %v", err)
	}
	if len(rows) == 0 {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND, "order %s%s not found", ordID, clOrdID)
	}
	o, err := orderProto(rows[0], in.FromOKXSize)
	if err != nil {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "order: %v", err)
	}
	s.state.rememberOrderOf(creds.APIKey, o)
	return o, nil
}

func tpslBody(tp, sl *exchangev1.TpSl) (map[string]string, error) {
	if tp == nil && sl == nil {
		return nil, nil
	}
	m := map[string]string{}
	for _, x := range []struct {
		pre string
		v   *exchangev1.TpSl
	}{{"tp", tp}, {"sl", sl}} {
		if x.v == nil {
			continue
		}
		if _, ok, err := parseDec("trigger_price", x.v.GetTriggerPrice()); err != nil || !ok {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, x.pre+".trigger_price", "a trigger price is required")
		}
		m[x.pre+"TriggerPx"] = x.v.GetTriggerPrice()
		m[x.pre+"TriggerPxType"] = triggerTypeStr(x.v.GetTriggerPriceType())
		m[x.pre+"OrdPx"] = "-1"
		if x.v.GetPrice() != "" {
			m[x.pre+"OrdPx"] = x.v.GetPrice()
		}
	}
	return m, nil
}

// PlaceOrder places a limit or market order. A repeated client order id returns the existing order (OKX refuses
// the duplicate with 51016).
func (s *Server) PlaceOrder(ctx context.Context, req *exchangev1.PlaceOrderRequest) (*exchangev1.PlaceOrderResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	p, err := s.orderPlan(ctx, req)
	if err != nil {
		return nil, err
	}
	// OKX refuses a repeated clOrdId only while the earlier order is live: look the id up first so a retry after
	// an unknown outcome never places a second order.
	if p.cid != "" {
		o, err := s.existingOrder(ctx, creds, p.in, req)
		if err != nil || o != nil {
			return &exchangev1.PlaceOrderResponse{Order: o}, err
		}
	}
	ack, err := writeCall[orderAck](ctx, s, pathTradeOrder, p.body, creds)
	if err != nil {
		if p.cid != "" && reasonOf(err) == exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID {
			if o, ferr := s.existingOrder(ctx, creds, p.in, req); ferr != nil || o != nil {
				return &exchangev1.PlaceOrderResponse{Order: o}, ferr
			}
		}
		return nil, s.refused(p.in, err)
	}
	return &exchangev1.PlaceOrderResponse{Order: s.placedOrder(ctx, creds, p, req, ack)}, nil
}

// refused passes on an order's refusal and, when OKX refused it for its instrument (unknown or suspended, or a
// price or size off the grid), forgets the cached instruments of its type: the grid or the listing may have changed
// since they were read, so the next order checks against a fresh listing. The refusal is returned as it came.
func (s *Server) refused(in *Instrument, err error) error {
	switch reasonOf(err) {
	case exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND, exchangev1.ErrorReason_ERROR_REASON_PRECISION:
		if it, terr := instTypeOf(in.MarketType); terr == nil {
			c := s.cache()
			c.mu.Lock()
			delete(c.at, it)
			c.mu.Unlock()
		}
	}
	return err
}

// orderAck is one item of the answer of trade/order and trade/batch-orders.
type orderAck struct {
	itemStatus
	OrdID   string `json:"ordId"`
	ClOrdID string `json:"clOrdId"`
	Ts      string `json:"ts"`
}

// placedOrder is the answer for an acknowledged order. A resting limit order (GTC) is described from the request
// and OKX's acknowledgement (ordId, clOrdId, ts), with no read: OKX's answer says it was accepted, and what happens
// to it next (fills, cancels) reaches the host on the account stream and through GetOrder. An order whose outcome
// is decided at placement (market, IOC, FOK, post-only) is read back once so the answer says how it ended; when that
// read fails the order exists and is described from the request.
func (s *Server) placedOrder(ctx context.Context, creds *Credentials, p *orderPlan, req *exchangev1.PlaceOrderRequest, ack orderAck) *exchangev1.Order {
	s.state.rememberOrder(creds.APIKey, ack.OrdID, p.in.InstID)
	if p.ordType != "limit" {
		if o, err := s.fetchOrder(ctx, creds, p.in, ack.OrdID, ""); err == nil {
			return o
		}
	}
	o, err := orderProto(p.acknowledged(ack), p.in.FromOKXSize)
	if err != nil {
		ts, _ := parseMs("ts", ack.Ts)
		typ, tif := orderTypeOf(p.ordType)
		o = &exchangev1.Order{OrderId: ack.OrdID, ClientOrderId: p.cid, Symbol: p.in.InstID, MarketType: p.in.MarketType,
			Side: req.GetSide(), PositionSide: req.GetPositionSide(), Type: typ, TimeInForce: tif,
			Status: exchangev1.OrderStatus_ORDER_STATUS_NEW, Price: req.GetPrice(), Qty: req.GetQty(), FilledQty: "0",
			ReduceOnly: req.GetReduceOnly(), CreatedTime: ts, UpdatedTime: ts}
	}
	s.state.rememberOrderOf(creds.APIKey, o)
	return o
}

// acknowledged is the order row OKX would list for the plan's order just after acknowledging it: live, nothing
// filled, created at the acknowledgement's time.
func (p *orderPlan) acknowledged(ack orderAck) rawOrder {
	str := func(k string) string { v, _ := p.body[k].(string); return v }
	cid := ack.ClOrdID
	if cid == "" {
		cid = p.cid
	}
	it, _ := instTypeOf(p.in.MarketType)
	r := rawOrder{InstType: it, InstID: p.in.InstID, OrdID: ack.OrdID, ClOrdID: cid, Px: str("px"), Sz: str("sz"),
		OrdType: p.ordType, Side: str("side"), PosSide: str("posSide"), TdMode: str("tdMode"), TgtCcy: str("tgtCcy"),
		AccFillSz: "0", State: "live", ReduceOnly: "false", CTime: ack.Ts, UTime: ack.Ts}
	if p.in.MarketType == exchangev1.MarketType_MARKET_TYPE_SWAP && r.PosSide == "" {
		r.PosSide = "net" // OKX refuses an order without posSide in hedge mode
	}
	if ro, _ := p.body["reduceOnly"].(bool); ro {
		r.ReduceOnly = "true"
	}
	if att, _ := p.body["attachAlgoOrds"].([]map[string]string); len(att) == 1 {
		m := att[0]
		r.TpTriggerPx, r.TpTriggerPxType, r.TpOrdPx = m["tpTriggerPx"], m["tpTriggerPxType"], m["tpOrdPx"]
		r.SlTriggerPx, r.SlTriggerPxType, r.SlOrdPx = m["slTriggerPx"], m["slTriggerPxType"], m["slOrdPx"]
	}
	return r
}

// orderPlan is a PlaceOrderRequest checked and turned into OKX's order body.
type orderPlan struct {
	in      *Instrument
	body    map[string]any
	cid     string
	ordType string
}

func (s *Server) orderPlan(ctx context.Context, req *exchangev1.PlaceOrderRequest) (*orderPlan, error) {
	if req.GetPriceMatch() != exchangev1.PriceMatch_PRICE_MATCH_UNSPECIFIED {
		// OKX has no order the exchange prices from its own book at placement (no market claims price_match).
		return nil, sdk.NotSupported("price match")
	}
	in, err := s.instrument(ctx, req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	side, err := sideStr(req.GetSide())
	if err != nil {
		return nil, err
	}
	ordType, err := ordTypeStr(req.GetType(), req.GetTimeInForce())
	if err != nil {
		return nil, err
	}
	cid := req.GetClientOrderId()
	if cid != "" && !clOrdIDRe.MatchString(cid) {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "client_order_id", "OKX client order ids are 1 to 32 letters and digits")
	}
	td, err := tdMode(in, req.GetMarginMode())
	if err != nil {
		return nil, err
	}
	body := map[string]any{"instId": in.InstID, "tdMode": td, "side": side, "ordType": ordType}
	if cid != "" {
		body["clOrdId"] = cid
	}
	if req.GetType() == exchangev1.OrderType_ORDER_TYPE_LIMIT {
		px, ok, err := parseDec("price", req.GetPrice())
		if err != nil || !ok {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "price", "a limit order needs a price")
		}
		if err := in.CheckPrice("price", px); err != nil {
			return nil, err
		}
		body["px"] = canon(px)
	}
	qty, okQty, errQ := parseDec("qty", req.GetQty())
	quote, okQuote, errQQ := parseDec("quote_qty", req.GetQuoteQty())
	if err := errors.Join(errQ, errQQ); err != nil {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "qty", "%v", err)
	}
	switch {
	case okQty:
		sz, err := in.ToOKXSize("qty", qty)
		if err != nil {
			return nil, err
		}
		body["sz"] = canon(sz)
		if in.MarketType == exchangev1.MarketType_MARKET_TYPE_SPOT && ordType == "market" {
			body["tgtCcy"] = "base_ccy"
		}
	case okQuote && in.MarketType == exchangev1.MarketType_MARKET_TYPE_SPOT && ordType == "market" && side == "buy":
		if !quote.IsPositive() {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "quote_qty", "quote_qty must be positive")
		}
		body["sz"], body["tgtCcy"] = canon(quote), "quote_ccy"
	default:
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "qty", "qty is required")
	}
	if req.GetReduceOnly() {
		body["reduceOnly"] = true
	}
	if in.MarketType == exchangev1.MarketType_MARKET_TYPE_SWAP {
		if ps := posSideStr(req.GetPositionSide()); ps != "" {
			body["posSide"] = ps
		}
	}
	attach, err := tpslBody(req.GetTakeProfit(), req.GetStopLoss())
	if err != nil {
		return nil, err
	}
	if attach != nil {
		body["attachAlgoOrds"] = []map[string]string{attach}
	}
	return &orderPlan{in: in, body: body, cid: cid, ordType: ordType}, nil
}

// existingOrder finds the order placed earlier with the request's client id: nil when there is none, the order
// when it has the request's parameters, DUPLICATE_CLIENT_ORDER_ID when the id belongs to a different order.
func (s *Server) existingOrder(ctx context.Context, creds *Credentials, in *Instrument, req *exchangev1.PlaceOrderRequest) (*exchangev1.Order, error) {
	o, err := s.fetchOrder(ctx, creds, in, "", req.GetClientOrderId())
	if reasonOf(err) == exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if why := orderDiffers(req, o); why != "" {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID, "client_order_id",
			"client order id %q belongs to order %s with a different %s", req.GetClientOrderId(), o.GetOrderId(), why)
	}
	return o, nil
}

// orderDiffers names the first parameter in which an existing order differs from a request ("" when none).
func orderDiffers(req *exchangev1.PlaceOrderRequest, o *exchangev1.Order) string {
	eq := func(a, b string) bool {
		x, okx, errx := parseDec("a", a)
		y, oky, erry := parseDec("b", b)
		return errx == nil && erry == nil && okx == oky && x.Equal(y)
	}
	switch {
	case o.GetSymbol() != req.GetSymbol():
		return "symbol"
	case o.GetSide() != req.GetSide():
		return "side"
	case o.GetType() != req.GetType():
		return "type"
	case req.GetType() == exchangev1.OrderType_ORDER_TYPE_LIMIT && !eq(o.GetPrice(), req.GetPrice()):
		return "price"
	case req.GetQty() != "" && !eq(o.GetQty(), req.GetQty()):
		return "qty"
	case o.GetReduceOnly() != req.GetReduceOnly():
		return "reduce_only"
	case req.GetPositionSide() != exchangev1.PositionSide_POSITION_SIDE_UNSPECIFIED && o.GetPositionSide() != req.GetPositionSide():
		return "position_side"
	case req.GetType() == exchangev1.OrderType_ORDER_TYPE_LIMIT && req.GetTimeInForce() != exchangev1.TimeInForce_TIME_IN_FORCE_UNSPECIFIED &&
		o.GetTimeInForce() != req.GetTimeInForce():
		return "time_in_force"
	}
	return ""
}

// orderRef is a request naming one order by id or client id.
type orderRef interface {
	GetAccount() *exchangev1.AccountRef
	GetMarketType() exchangev1.MarketType
	GetSymbol() string
	GetOrderId() string
	GetClientOrderId() string
}

// orderTarget resolves the credentials and instrument of the order a request names, and the body naming it to
// OKX (ordId, else clOrdId).
func (s *Server) orderTarget(ctx context.Context, req orderRef) (*Credentials, *Instrument, map[string]any, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, nil, nil, err
	}
	in, err := s.resolveOrderInst(ctx, creds, req.GetMarketType(), req.GetSymbol(), req.GetOrderId())
	if err != nil {
		return nil, nil, nil, err
	}
	body := map[string]any{"instId": in.InstID}
	switch {
	case req.GetOrderId() != "":
		body["ordId"] = req.GetOrderId()
	case req.GetClientOrderId() != "":
		body["clOrdId"] = req.GetClientOrderId()
	default:
		return nil, nil, nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "order_id", "order_id or client_order_id is required")
	}
	return creds, in, body, nil
}

// AmendOrder changes price and/or size (OKX amend-order).
func (s *Server) AmendOrder(ctx context.Context, req *exchangev1.AmendOrderRequest) (*exchangev1.AmendOrderResponse, error) {
	if req.GetPriceMatch() != exchangev1.PriceMatch_PRICE_MATCH_UNSPECIFIED {
		return nil, sdk.NotSupported("price match")
	}
	creds, in, body, err := s.orderTarget(ctx, req)
	if err != nil {
		return nil, err
	}
	if req.GetPrice() != "" {
		px, ok, err := parseDec("price", req.GetPrice())
		if err != nil || !ok {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "price", "bad price %q", req.GetPrice())
		}
		if err := in.CheckPrice("price", px); err != nil {
			return nil, err
		}
		body["newPx"] = canon(px)
	}
	if req.GetQty() != "" {
		q, ok, err := parseDec("qty", req.GetQty())
		if err != nil || !ok {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "qty", "bad qty %q", req.GetQty())
		}
		sz, err := in.ToOKXSize("qty", q)
		if err != nil {
			return nil, err
		}
		body["newSz"] = canon(sz)
	}
	if err := ack(ctx, s, pathTradeAmendOrder, body, creds); err != nil {
		return nil, s.refused(in, err)
	}
	o, err := s.fetchOrder(ctx, creds, in, req.GetOrderId(), req.GetClientOrderId())
	if err != nil {
		return nil, err
	}
	return &exchangev1.AmendOrderResponse{Order: o}, nil
}

// CancelOrder cancels one order and returns its final state. OKX's acknowledgement (sCode 0) says the order is
// cancelled, so the answer is built from it and what the plugin remembers of the order (its parameters from when it
// was placed, amended or read), with no read: filled_qty and avg_price stay empty (not known without a read; a
// partly filled order's fills are on the account stream and GetOrder). A cancel whose answer was lost is
// UNKNOWN_OUTCOME; when it is asked again after the first one ran, OKX answers 51400 ("filled, canceled or does not
// exist", ORDER_NOT_FOUND), so that answer is checked by reading the order: one that exists and is no longer open is
// the answer in its final state (cancelled or filled); ORDER_NOT_FOUND stays for an order OKX does not know.
func (s *Server) CancelOrder(ctx context.Context, req *exchangev1.CancelOrderRequest) (*exchangev1.CancelOrderResponse, error) {
	creds, in, body, err := s.orderTarget(ctx, req)
	if err != nil {
		return nil, err
	}
	a, err := ackItem(ctx, s, pathTradeCancelOrder, body, creds)
	if err != nil {
		if sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND {
			return nil, err
		}
		o, gerr := s.fetchOrder(ctx, creds, in, req.GetOrderId(), req.GetClientOrderId())
		if gerr != nil || o == nil || !orderClosed(o.GetStatus()) {
			return nil, err
		}
		return &exchangev1.CancelOrderResponse{Order: o}, nil
	}
	return &exchangev1.CancelOrderResponse{Order: s.cancelledOrder(creds, in, req, a)}, nil
}

// cancelledOrder is the answer to an acknowledged cancel: the remembered order (or its ids alone) as cancelled.
func (s *Server) cancelledOrder(creds *Credentials, in *Instrument, req *exchangev1.CancelOrderRequest, a orderAck) *exchangev1.Order {
	ordID := cmp.Or(a.OrdID, req.GetOrderId())
	o := s.state.orderBasicsOf(creds.APIKey, ordID)
	if o == nil {
		o = &exchangev1.Order{OrderId: ordID, ClientOrderId: cmp.Or(a.ClOrdID, req.GetClientOrderId()), Symbol: in.InstID,
			MarketType: in.MarketType}
	}
	o.Status = exchangev1.OrderStatus_ORDER_STATUS_CANCELLED
	if ts, err := parseMs("ts", a.Ts); err == nil && ts > 0 {
		o.UpdatedTime = ts
	}
	return o
}

// ackItem sends a POST that answers items (cancel-order) as ack does and returns the first item; an answer without
// a readable item is still a success (the item's sCode was checked).
func ackItem(ctx context.Context, s *Server, path string, body any, creds *Credentials) (orderAck, error) {
	data, err := s.client().Post(ctx, path, body, creds)
	if err != nil {
		return orderAck{}, err
	}
	if err := itemsOK(data); err != nil {
		return orderAck{}, err
	}
	rows, err := decodeList[orderAck](data)
	if err != nil || len(rows) == 0 {
		return orderAck{}, nil
	}
	return rows[0], nil
}

// orderClosed reports whether an order can no longer trade.
func orderClosed(st exchangev1.OrderStatus) bool {
	switch st {
	case exchangev1.OrderStatus_ORDER_STATUS_FILLED, exchangev1.OrderStatus_ORDER_STATUS_CANCELLED,
		exchangev1.OrderStatus_ORDER_STATUS_REJECTED, exchangev1.OrderStatus_ORDER_STATUS_EXPIRED:
		return true
	}
	return false
}

// pendingOrders pages orders-pending.
func (s *Server) pendingOrders(ctx context.Context, creds *Credentials, mt exchangev1.MarketType, in *Instrument) ([]rawOrder, error) {
	it, err := instTypeOf(mt)
	if err != nil {
		return nil, err
	}
	var all []rawOrder
	after := ""
	for range 50 {
		q := url.Values{"instType": {it}, "limit": {strconv.Itoa(ordersPageLimit)}}
		if in != nil {
			q.Set("instId", in.InstID)
		}
		if after != "" {
			q.Set("after", after)
		}
		data, err := s.client().Get(ctx, pathTradeOrdersPending, q, creds)
		if err != nil {
			return nil, err
		}
		rows, err := ParseOrders(data)
		if err != nil {
			return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "orders-pending: %v", err)
		}
		all = append(all, rows...)
		if len(rows) < ordersPageLimit {
			break
		}
		after = rows[len(rows)-1].OrdID
	}
	return all, nil
}

func (s *Server) ordersProto(ctx context.Context, creds *Credentials, rows []rawOrder) ([]*exchangev1.Order, error) {
	out := make([]*exchangev1.Order, 0, len(rows))
	for _, r := range rows {
		conv, err := s.convFor(ctx, r.InstID)
		if err != nil {
			return nil, err
		}
		o, err := orderProto(r, conv)
		if err != nil {
			return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "order %s: %v", r.OrdID, err)
		}
		s.state.rememberOrderOf(creds.APIKey, o)
		out = append(out, o)
	}
	return out, nil
}

// openOrders reads the pending orders of a market type, or of one symbol when named.
func (s *Server) openOrders(ctx context.Context, acct *exchangev1.AccountRef, mt exchangev1.MarketType, symbol string) (*Credentials, []rawOrder, error) {
	creds, err := credsOf(acct)
	if err != nil {
		return nil, nil, err
	}
	var in *Instrument
	if symbol != "" {
		if in, err = s.instrument(ctx, mt, symbol); err != nil {
			return nil, nil, err
		}
		mt = in.MarketType
	}
	rows, err := s.pendingOrders(ctx, creds, mt, in)
	if err != nil {
		return nil, nil, err
	}
	return creds, rows, nil
}

// CancelAllOrders cancels the pending orders of a market type, or of one symbol, with cancel-batch-orders (20 a
// call). An order that was no longer open (filled or cancelled meanwhile) is read back and reported as it is, never
// as cancelled; a batch whose answer was lost twice is UNKNOWN_OUTCOME.
func (s *Server) CancelAllOrders(ctx context.Context, req *exchangev1.CancelAllOrdersRequest) (*exchangev1.CancelAllOrdersResponse, error) {
	creds, rows, err := s.openOrders(ctx, req.GetAccount(), req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	var errs []error
	var cancelled, gone []rawOrder
	for chunk := range slices.Chunk(rows, batchCancelLimit) {
		body := make([]map[string]string, len(chunk))
		for i, r := range chunk {
			body[i] = map[string]string{"instId": r.InstID, "ordId": r.OrdID}
		}
		acks, err := s.cancelBatch(ctx, body, creds)
		if err != nil {
			return nil, err
		}
		for i, a := range acks {
			switch {
			case a.SCode == "" || a.SCode == "0":
				cancelled = append(cancelled, chunk[i])
			case notOpen(a.SCode):
				gone = append(gone, chunk[i])
			default:
				errs = append(errs, apiError(a.SCode, a.SMsg))
			}
		}
	}
	out, err := s.ordersProto(ctx, creds, cancelled)
	if err != nil {
		return nil, err
	}
	for _, o := range out {
		o.Status = exchangev1.OrderStatus_ORDER_STATUS_CANCELLED
	}
	for _, r := range gone {
		if o, err := s.readRawOrder(ctx, creds, r); err == nil {
			out = append(out, o)
		}
	}
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return &exchangev1.CancelAllOrdersResponse{Orders: out}, nil
}

// cancelBatch sends one cancel-batch-orders request and returns one acknowledgement per order, in request order.
// The request names each order, so a lost answer is asked once more: an order the first request cancelled then
// answers "no longer open" (see notOpen). Lost twice: UNKNOWN_OUTCOME.
func (s *Server) cancelBatch(ctx context.Context, body []map[string]string, creds *Credentials) ([]orderAck, error) {
	data, err := s.client().PostBatch(ctx, pathTradeCancelBatchOrders, body, creds)
	if sdk.IsUnknownOutcome(err) && ctx.Err() == nil {
		data, err = s.client().PostBatch(ctx, pathTradeCancelBatchOrders, body, creds)
	}
	if err != nil {
		return nil, err
	}
	acks, err := decodeList[orderAck](data)
	if err != nil || len(acks) != len(body) {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "cancel-batch-orders: %d answers for %d orders", len(acks), len(body))
	}
	return acks, nil
}

// notOpen reports whether a cancel's sCode says the order was no longer open (filled, cancelled or unknown).
func notOpen(code string) bool {
	return reasonFor(code) == exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND
}

// readRawOrder reads an order listed earlier as it is now.
func (s *Server) readRawOrder(ctx context.Context, creds *Credentials, r rawOrder) (*exchangev1.Order, error) {
	data, err := s.client().Get(ctx, pathTradeOrder, url.Values{"instId": {r.InstID}, "ordId": {r.OrdID}}, creds)
	if err != nil {
		return nil, err
	}
	rows, err := ParseOrders(data)
	if err != nil {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "order: %v", err)
	}
	if len(rows) == 0 {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND, "order %s not found", r.OrdID)
	}
	out, err := s.ordersProto(ctx, creds, rows[:1])
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// GetOrder reads one order.
func (s *Server) GetOrder(ctx context.Context, req *exchangev1.GetOrderRequest) (*exchangev1.GetOrderResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	in, err := s.resolveOrderInst(ctx, creds, req.GetMarketType(), req.GetSymbol(), req.GetOrderId())
	if err != nil {
		return nil, err
	}
	o, err := s.fetchOrder(ctx, creds, in, req.GetOrderId(), req.GetClientOrderId())
	if err != nil {
		return nil, err
	}
	return &exchangev1.GetOrderResponse{Order: o}, nil
}

// ListOpenOrders lists live and partially filled orders.
func (s *Server) ListOpenOrders(ctx context.Context, req *exchangev1.ListOpenOrdersRequest) (*exchangev1.ListOpenOrdersResponse, error) {
	creds, rows, err := s.openOrders(ctx, req.GetAccount(), req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	out, err := s.ordersProto(ctx, creds, rows)
	if err != nil {
		return nil, err
	}
	return &exchangev1.ListOpenOrdersResponse{Orders: out}, nil
}

func pageQuery(mt exchangev1.MarketType, in *Instrument, p *exchangev1.HistoryPage, max int) (url.Values, int, error) {
	it, err := instTypeOf(mt)
	if err != nil {
		return nil, 0, err
	}
	limit := int(p.GetLimit())
	if limit <= 0 || limit > max {
		limit = max
	}
	q := url.Values{"instType": {it}, "limit": {strconv.Itoa(limit)}}
	if in != nil {
		q.Set("instId", in.InstID)
	}
	if p.GetStartTime() > 0 {
		q.Set("begin", msStr(p.GetStartTime()))
	}
	if p.GetEndTime() > 0 {
		q.Set("end", msStr(p.GetEndTime()))
	}
	if p.GetCursor() != "" {
		q.Set("after", p.GetCursor())
	}
	return q, limit, nil
}

func (s *Server) histScope(ctx context.Context, mt exchangev1.MarketType, symbol string) (exchangev1.MarketType, *Instrument, error) {
	if symbol == "" {
		if mt == exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED {
			return mt, nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "market_type", "market_type or symbol is required")
		}
		return mt, nil, nil
	}
	in, err := s.instrument(ctx, mt, symbol)
	if err != nil {
		return mt, nil, err
	}
	return in.MarketType, in, nil
}

// historyRequest is a request for a page of trade history (orders, fills).
type historyRequest interface {
	GetAccount() *exchangev1.AccountRef
	GetMarketType() exchangev1.MarketType
	GetSymbol() string
	GetPage() *exchangev1.HistoryPage
}

// tradeHistoryQuery resolves a trade history request to its credentials, OKX query and page size.
func (s *Server) tradeHistoryQuery(ctx context.Context, req historyRequest) (*Credentials, url.Values, int, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, nil, 0, err
	}
	mt, in, err := s.histScope(ctx, req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, nil, 0, err
	}
	q, limit, err := pageQuery(mt, in, req.GetPage(), ordersPageLimit)
	if err != nil {
		return nil, nil, 0, err
	}
	return creds, q, limit, nil
}

// ListOrderHistory lists completed orders (OKX keeps 7 days here), newest first; the cursor is the last ordId.
func (s *Server) ListOrderHistory(ctx context.Context, req *exchangev1.ListOrderHistoryRequest) (*exchangev1.ListOrderHistoryResponse, error) {
	creds, q, limit, err := s.tradeHistoryQuery(ctx, req)
	if err != nil {
		return nil, err
	}
	rows, err := call[rawOrder](ctx, s, pathTradeOrdersHistory, q, creds)
	if err != nil {
		return nil, err
	}
	out, err := s.ordersProto(ctx, creds, rows)
	if err != nil {
		return nil, err
	}
	resp := &exchangev1.ListOrderHistoryResponse{Orders: out}
	if len(rows) == limit {
		resp.NextCursor = rows[len(rows)-1].OrdID
	}
	return resp, nil
}

// ListFills lists fills (OKX keeps 3 days here), newest first; the cursor is the last billId.
func (s *Server) ListFills(ctx context.Context, req *exchangev1.ListFillsRequest) (*exchangev1.ListFillsResponse, error) {
	creds, q, limit, err := s.tradeHistoryQuery(ctx, req)
	if err != nil {
		return nil, err
	}
	rows, err := call[rawFill](ctx, s, pathTradeFills, q, creds)
	if err != nil {
		return nil, err
	}
	resp := &exchangev1.ListFillsResponse{}
	for _, r := range rows {
		conv, err := s.convFor(ctx, r.InstID)
		if err != nil {
			return nil, err
		}
		f, err := fillProto(r, conv)
		if err != nil {
			return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "fills: %v", err)
		}
		resp.Fills = append(resp.Fills, f)
	}
	if len(rows) == limit {
		resp.NextCursor = rows[len(rows)-1].BillID
	}
	return resp, nil
}

// PlaceAlgoOrder places a conditional order: stop types use OKX's stop-loss leg, take-profit types its
// take-profit leg, with the trigger price type last/mark/index. close_position closes the whole position.
func (s *Server) PlaceAlgoOrder(ctx context.Context, req *exchangev1.PlaceAlgoOrderRequest) (*exchangev1.PlaceAlgoOrderResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	in, err := s.instrument(ctx, req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	side, err := sideStr(req.GetSide())
	if err != nil {
		return nil, err
	}
	trig, ok, err := parseDec("trigger_price", req.GetTriggerPrice())
	if err != nil || !ok {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "trigger_price", "a trigger price is required")
	}
	if err := in.CheckPrice("trigger_price", trig); err != nil {
		return nil, err
	}
	leg := TpSlLeg{TriggerPrice: trig, TriggerType: req.GetTriggerPriceType()}
	var tp, sl *TpSlLeg
	switch req.GetType() {
	case exchangev1.OrderType_ORDER_TYPE_STOP_MARKET, exchangev1.OrderType_ORDER_TYPE_STOP_LIMIT:
		sl = &leg
	case exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_MARKET, exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_LIMIT:
		tp = &leg
	default:
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "type", "algo order type %v is not supported", req.GetType())
	}
	if req.GetType() == exchangev1.OrderType_ORDER_TYPE_STOP_LIMIT || req.GetType() == exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_LIMIT {
		px, ok, err := parseDec("price", req.GetPrice())
		if err != nil || !ok {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "price", "a limit price is required")
		}
		if err := in.CheckPrice("price", px); err != nil {
			return nil, err
		}
		leg.Price = &px
	}
	td, err := tdMode(in, req.GetMarginMode())
	if err != nil {
		return nil, err
	}
	a := AlgoRequest{Inst: in, TdMode: td, Side: side, PosSide: posSideStr(req.GetPositionSide()),
		ReduceOnly: req.GetReduceOnly(), ClosePosition: req.GetClosePosition(), ClientID: req.GetClientAlgoId(), TP: tp, SL: sl}
	if !req.GetClosePosition() {
		q, ok, err := parseDec("qty", req.GetQty())
		if err != nil || !ok {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "qty", "qty is required")
		}
		if a.Size, err = in.ToOKXSize("qty", q); err != nil {
			return nil, err
		}
	}
	if cid := req.GetClientAlgoId(); cid != "" {
		got, err := s.fetchAlgoBy(ctx, creds, in, url.Values{"algoClOrdId": {cid}})
		switch {
		case err == nil:
			if why := algoDiffers(req, got); why != "" {
				return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID, "client_algo_id",
					"client algo id %q belongs to algo order %s with a different %s", cid, got.GetAlgoId(), why)
			}
			return &exchangev1.PlaceAlgoOrderResponse{AlgoOrder: got}, nil
		case reasonOf(err) != exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND:
			return nil, err
		}
	}
	algoID, err := s.placeAlgo(ctx, creds, a)
	if err != nil {
		return nil, err
	}
	if got, err := s.fetchAlgo(ctx, creds, in, algoID); err == nil {
		return &exchangev1.PlaceAlgoOrderResponse{AlgoOrder: got}, nil
	}
	return &exchangev1.PlaceAlgoOrderResponse{AlgoOrder: &exchangev1.AlgoOrder{AlgoId: algoID, ClientAlgoId: req.GetClientAlgoId(),
		Symbol: in.InstID, MarketType: in.MarketType, Side: req.GetSide(), PositionSide: req.GetPositionSide(), Type: req.GetType(),
		Status: exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_WAITING, TriggerPrice: canon(trig), TriggerPriceType: triggerTypeOf(triggerTypeStr(req.GetTriggerPriceType())),
		Price: req.GetPrice(), Qty: req.GetQty(), ReduceOnly: req.GetReduceOnly(), ClosePosition: req.GetClosePosition()}}, nil
}

// TpSlLeg is one leg of an OKX algo order. Price nil means market on trigger.
type TpSlLeg struct {
	TriggerPrice decimal.Decimal
	TriggerType  exchangev1.TriggerPriceType
	Price        *decimal.Decimal
}

// AlgoRequest is an OKX algo order: one leg makes a "conditional" order, both legs an "oco" order.
type AlgoRequest struct {
	Inst          *Instrument
	TdMode        string
	Side          string
	PosSide       string
	Size          decimal.Decimal // OKX units (contracts for SWAP)
	ReduceOnly    bool
	ClosePosition bool
	ClientID      string
	TP, SL        *TpSlLeg
}

// Body is the order-algo request body.
func (a AlgoRequest) Body() (map[string]any, error) {
	if a.TP == nil && a.SL == nil {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "an algo order needs a take-profit or a stop-loss leg")
	}
	ordType := "conditional"
	if a.TP != nil && a.SL != nil {
		ordType = "oco"
	}
	b := map[string]any{"instId": a.Inst.InstID, "tdMode": a.TdMode, "side": a.Side, "ordType": ordType}
	if a.PosSide != "" {
		b["posSide"] = a.PosSide
	}
	if a.ClosePosition {
		if a.Inst.MarketType != exchangev1.MarketType_MARKET_TYPE_SWAP {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "close_position", "close_position needs a SWAP instrument")
		}
		b["closeFraction"] = "1"
		b["reduceOnly"] = true
	} else {
		b["sz"] = canon(a.Size)
		if a.ReduceOnly {
			b["reduceOnly"] = true
		}
	}
	if a.ClientID != "" {
		if !clOrdIDRe.MatchString(a.ClientID) {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "client_algo_id", "OKX client ids are 1 to 32 letters and digits")
		}
		b["algoClOrdId"] = a.ClientID
	}
	for _, x := range []struct {
		pre string
		l   *TpSlLeg
	}{{"tp", a.TP}, {"sl", a.SL}} {
		if x.l == nil {
			continue
		}
		b[x.pre+"TriggerPx"] = canon(x.l.TriggerPrice)
		b[x.pre+"TriggerPxType"] = triggerTypeStr(x.l.TriggerType)
		b[x.pre+"OrdPx"] = "-1"
		if x.l.Price != nil {
			b[x.pre+"OrdPx"] = canon(*x.l.Price)
		}
	}
	return b, nil
}

// placeAlgo sends an order-algo request (conditional or OCO) and returns the algoId.
func (s *Server) placeAlgo(ctx context.Context, creds *Credentials, a AlgoRequest) (string, error) {
	body, err := a.Body()
	if err != nil {
		return "", err
	}
	type ack struct {
		AlgoID string `json:"algoId"`
	}
	acked, err := writeCall[ack](ctx, s, pathTradeOrderAlgo, body, creds)
	if err != nil {
		return "", err
	}
	return acked.AlgoID, nil
}

// PlaceOCO places a take-profit / stop-loss pair on a position as one OKX "oco" algo order.
func (s *Server) PlaceOCO(ctx context.Context, account *exchangev1.AccountRef, a AlgoRequest) (string, error) {
	creds, err := credsOf(account)
	if err != nil {
		return "", err
	}
	if a.TdMode == "" {
		if a.Inst.MarketType != exchangev1.MarketType_MARKET_TYPE_SPOT {
			return "", sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "margin_mode", "OKX needs the margin mode (TdMode) of a SWAP algo order")
		}
		a.TdMode = "cash"
	}
	return s.placeAlgo(ctx, creds, a)
}

func (s *Server) fetchAlgo(ctx context.Context, creds *Credentials, in *Instrument, algoID string) (*exchangev1.AlgoOrder, error) {
	return s.fetchAlgoBy(ctx, creds, in, url.Values{"algoId": {algoID}})
}

// fetchAlgoBy reads one algo order by algoId or algoClOrdId.
func (s *Server) fetchAlgoBy(ctx context.Context, creds *Credentials, in *Instrument, q url.Values) (*exchangev1.AlgoOrder, error) {
	row, err := callOne[rawAlgo](ctx, s, pathTradeOrderAlgo, q, creds)
	if err != nil {
		return nil, err
	}
	return algoProto(row, in.FromOKXSize)
}

// algoDiffers names the first parameter in which an existing algo order differs from a request ("" when none).
func algoDiffers(req *exchangev1.PlaceAlgoOrderRequest, a *exchangev1.AlgoOrder) string {
	eq := func(x, y string) bool {
		dx, _, ex := parseDec("x", x)
		dy, _, ey := parseDec("y", y)
		return ex == nil && ey == nil && dx.Equal(dy)
	}
	switch {
	case a.GetSymbol() != req.GetSymbol():
		return "symbol"
	case a.GetSide() != req.GetSide():
		return "side"
	case a.GetType() != req.GetType():
		return "type"
	case !eq(a.GetTriggerPrice(), req.GetTriggerPrice()):
		return "trigger_price"
	case !req.GetClosePosition() && !eq(a.GetQty(), req.GetQty()):
		return "qty"
	}
	return ""
}

// CancelAlgoOrder cancels one algo order.
func (s *Server) CancelAlgoOrder(ctx context.Context, req *exchangev1.CancelAlgoOrderRequest) (*exchangev1.CancelAlgoOrderResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	in, err := s.instrument(ctx, req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	if req.GetAlgoId() == "" {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "algo_id", "algo_id is required")
	}
	if err := ack(ctx, s, pathTradeCancelAlgos, []map[string]string{{"instId": in.InstID, "algoId": req.GetAlgoId()}}, creds); err != nil {
		return nil, err
	}
	if a, err := s.fetchAlgo(ctx, creds, in, req.GetAlgoId()); err == nil {
		return &exchangev1.CancelAlgoOrderResponse{AlgoOrder: a}, nil
	}
	return &exchangev1.CancelAlgoOrderResponse{AlgoOrder: &exchangev1.AlgoOrder{AlgoId: req.GetAlgoId(), Symbol: in.InstID,
		MarketType: in.MarketType, Status: exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_CANCELLED}}, nil
}

// ListAlgoOrders lists waiting conditional and OCO orders, and with include_history the finished ones too: the
// newest first by algoId, paged with an opaque cursor (see algoPage).
func (s *Server) ListAlgoOrders(ctx context.Context, req *exchangev1.ListAlgoOrdersRequest) (*exchangev1.ListAlgoOrdersResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	mt, in, err := s.histScope(ctx, req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	it, err := instTypeOf(mt)
	if err != nil {
		return nil, err
	}
	base := url.Values{"instType": {it}, "ordType": {"conditional,oco"}}
	if in != nil {
		base.Set("instId", in.InstID)
	}
	srcs := []*idSource{{path: pathTradeOrdersAlgoPending, query: base}}
	if req.GetIncludeHistory() {
		// orders-algo-history takes one state per call.
		for _, st := range []string{"effective", "canceled", "order_failed"} {
			q := url.Values{"state": {st}}
			for k, v := range base {
				q[k] = v
			}
			srcs = append(srcs, &idSource{path: pathTradeOrdersAlgoHistory, query: q})
		}
	}
	rows, next, err := algoPage(ctx, s, creds, srcs, req.GetPage())
	if err != nil {
		return nil, err
	}
	out := &exchangev1.ListAlgoOrdersResponse{NextCursor: next}
	for _, r := range rows {
		conv, err := s.convFor(ctx, r.InstID)
		if err != nil {
			return nil, err
		}
		a, err := algoProto(r, conv)
		if err != nil {
			return nil, internalf("algo order %s: %v", r.AlgoID, err)
		}
		out.AlgoOrders = append(out.AlgoOrders, a)
	}
	return out, nil
}

func (s *Server) positions(ctx context.Context, creds *Credentials, instID string) ([]*exchangev1.Position, error) {
	q := url.Values{"instType": {instSwap}}
	if instID != "" {
		q.Set("instId", instID)
	}
	rows, err := call[rawPosition](ctx, s, pathAccountPositions, q, creds)
	if err != nil {
		return nil, err
	}
	var out []*exchangev1.Position
	for _, r := range rows {
		in, err := s.instrument(ctx, exchangev1.MarketType_MARKET_TYPE_SWAP, r.InstID)
		if err != nil {
			continue // not a linear USDT swap
		}
		p, err := positionProto(r, in.FromOKXSize)
		if err != nil {
			return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "positions: %v", err)
		}
		if d, _, _ := parseDec("qty", p.Qty); d.IsZero() {
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

// ListPositions lists open SWAP positions in base units.
func (s *Server) ListPositions(ctx context.Context, req *exchangev1.ListPositionsRequest) (*exchangev1.ListPositionsResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	instID := ""
	if req.GetSymbol() != "" {
		in, err := s.swap(ctx, req.GetSymbol())
		if err != nil {
			return nil, err
		}
		instID = in.InstID
	}
	ps, err := s.positions(ctx, creds, instID)
	if err != nil {
		return nil, err
	}
	return &exchangev1.ListPositionsResponse{Positions: ps}, nil
}

// ClosePosition closes a position at market with OKX's close-position (pending close orders are cancelled) and
// returns the closing order, found by the client id sent with it.
func (s *Server) ClosePosition(ctx context.Context, req *exchangev1.ClosePositionRequest) (*exchangev1.ClosePositionResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	if mt := req.GetMarketType(); mt != exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED && mt != exchangev1.MarketType_MARKET_TYPE_SWAP {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "market_type", "OKX closes SWAP positions only")
	}
	in, err := s.swap(ctx, req.GetSymbol())
	if err != nil {
		return nil, err
	}
	mgn, err := tdMode(in, req.GetMarginMode())
	if err != nil {
		return nil, err
	}
	cid := req.GetClientOrderId()
	if cid != "" && !clOrdIDRe.MatchString(cid) {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "client_order_id", "OKX client order ids are 1 to 32 letters and digits")
	}
	if cid != "" {
		// A close sent before with this id (an unknown outcome being retried) is not sent again.
		o, err := s.fetchOrder(ctx, creds, in, "", cid)
		switch {
		case err == nil && o.GetReduceOnly() && o.GetType() == exchangev1.OrderType_ORDER_TYPE_MARKET:
			return &exchangev1.ClosePositionResponse{Order: o}, nil
		case err == nil:
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID, "client_order_id",
				"client order id %q belongs to order %s, which is not a close", cid, o.GetOrderId())
		case reasonOf(err) != exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND:
			return nil, err
		}
	}
	ps, err := s.positions(ctx, creds, in.InstID)
	if err != nil {
		return nil, err
	}
	var pos *exchangev1.Position
	for _, p := range ps {
		if (req.GetPositionSide() == exchangev1.PositionSide_POSITION_SIDE_UNSPECIFIED || p.PositionSide == req.GetPositionSide()) &&
			p.MarginMode == req.GetMarginMode() {
			pos = p
			break
		}
	}
	if pos == nil {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED, "no open %v %s position in %s", req.GetPositionSide(), mgn, in.InstID)
	}
	posSide := posSideStr(pos.PositionSide)
	if posSide == "" {
		posSide = "net"
	}
	if cid == "" {
		cid = "cls" + strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	if _, err := writeCall[map[string]any](ctx, s, pathTradeClosePosition,
		map[string]any{"instId": in.InstID, "posSide": posSide, "mgnMode": mgn, "autoCxl": true, "clOrdId": cid}, creds); err != nil {
		return nil, err
	}
	if o, err := s.fetchOrder(ctx, creds, in, "", cid); err == nil {
		return &exchangev1.ClosePositionResponse{Order: o}, nil
	}
	qty, _, _ := parseDec("qty", pos.Qty)
	side := exchangev1.Side_SIDE_SELL
	if pos.PositionSide == exchangev1.PositionSide_POSITION_SIDE_SHORT || (pos.PositionSide == exchangev1.PositionSide_POSITION_SIDE_NET && qty.IsNegative()) {
		side = exchangev1.Side_SIDE_BUY
	}
	now := time.Now().UnixMilli()
	return &exchangev1.ClosePositionResponse{Order: &exchangev1.Order{ClientOrderId: cid, Symbol: in.InstID, MarketType: in.MarketType,
		Side: side, PositionSide: pos.PositionSide, Type: exchangev1.OrderType_ORDER_TYPE_MARKET, TimeInForce: exchangev1.TimeInForce_TIME_IN_FORCE_IOC,
		Status: exchangev1.OrderStatus_ORDER_STATUS_NEW, Qty: canon(qty.Abs()), FilledQty: "0", ReduceOnly: true, CreatedTime: now, UpdatedTime: now}}, nil
}

// GetLeverage reads the leverage of the instrument in the account's margin mode for it.
func (s *Server) GetLeverage(ctx context.Context, req *exchangev1.GetLeverageRequest) (*exchangev1.GetLeverageResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	in, err := s.swap(ctx, req.GetSymbol())
	if err != nil {
		return nil, err
	}
	// OKX keeps a leverage per margin mode: report the one of the open position, else the cross leverage (and say
	// so in margin_mode).
	mgn := "cross"
	if ps, err := s.positions(ctx, creds, in.InstID); err == nil && len(ps) > 0 {
		mgn = marginModeStr(ps[0].MarginMode)
	} else if err != nil {
		return nil, err
	}
	type leverageInfo struct {
		Lever   string `json:"lever"`
		MgnMode string `json:"mgnMode"`
	}
	row, err := callOne[leverageInfo](ctx, s, pathAccountLeverageInfo, url.Values{"instId": {in.InstID}, "mgnMode": {mgn}}, creds)
	if err != nil {
		return nil, err
	}
	lev, err := canonStr("lever", row.Lever)
	if err != nil {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "leverage-info: %v", err)
	}
	return &exchangev1.GetLeverageResponse{Leverage: lev, MaxLeverage: in.Proto().MaxLeverage, MarginMode: marginModeOf(row.MgnMode)}, nil
}

// SetLeverage sets the leverage for the instrument in a margin mode (isolated hedge-mode positions get both sides).
func (s *Server) SetLeverage(ctx context.Context, req *exchangev1.SetLeverageRequest) (*exchangev1.SetLeverageResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	in, err := s.swap(ctx, req.GetSymbol())
	if err != nil {
		return nil, err
	}
	lev, ok, err := parseDec("leverage", req.GetLeverage())
	if err != nil || !ok || !lev.IsPositive() {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "leverage", "leverage must be a positive number")
	}
	if max, ok, _ := parseDec("lever", in.Lever); ok && lev.GreaterThan(max) {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "leverage", "leverage %s is above the maximum %s", lev, max)
	}
	mgn, err := tdMode(in, req.GetMarginMode())
	if err != nil {
		return nil, err
	}
	bodies := []map[string]any{{"instId": in.InstID, "lever": canon(lev), "mgnMode": mgn}}
	switch ps := req.GetPositionSide(); {
	case mgn != "isolated":
		// Cross leverage is one per instrument; OKX takes no posSide for it.
	case ps == exchangev1.PositionSide_POSITION_SIDE_LONG || ps == exchangev1.PositionSide_POSITION_SIDE_SHORT:
		// Hedge mode with isolated margin: one side's leverage.
		bodies[0]["posSide"] = posSideStr(ps)
	default:
		if mode, err := s.positionMode(ctx, creds); err != nil {
			return nil, err
		} else if mode == "long_short_mode" {
			// No side named in hedge mode: both sides get the leverage.
			bodies = []map[string]any{
				{"instId": in.InstID, "lever": canon(lev), "mgnMode": mgn, "posSide": "long"},
				{"instId": in.InstID, "lever": canon(lev), "mgnMode": mgn, "posSide": "short"},
			}
		}
	}
	for _, b := range bodies {
		if _, err := s.client().Post(ctx, pathAccountSetLeverage, b, creds); err != nil {
			return nil, err
		}
	}
	return &exchangev1.SetLeverageResponse{Leverage: canon(lev)}, nil
}

// SetMarginMode is not an OKX operation: OKX has no margin mode setting per account or instrument, the mode
// travels with every order as tdMode (margin_mode on PlaceOrder, PlaceAlgoOrder, ClosePosition, GetMaxOrderSize).
func (s *Server) SetMarginMode(context.Context, *exchangev1.SetMarginModeRequest) (*exchangev1.SetMarginModeResponse, error) {
	return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED,
		"OKX has no margin mode setting: pass margin_mode with each order")
}

// accountConfig is GET /api/v5/account/config: the key's permissions and IPs, the account mode and position mode.
type accountConfig struct {
	UID     string `json:"uid"`
	AcctLv  string `json:"acctLv"`
	PosMode string `json:"posMode"`
	Perm    string `json:"perm"`
	IP      string `json:"ip"`
}

func (s *Server) accountConfig(ctx context.Context, creds *Credentials) (accountConfig, error) {
	row, err := callOne[accountConfig](ctx, s, pathAccountConfig, nil, creds)
	if err != nil {
		return accountConfig{}, err
	}
	return row, nil
}

func (s *Server) positionMode(ctx context.Context, creds *Credentials) (string, error) {
	c, err := s.accountConfig(ctx, creds)
	return c.PosMode, err
}

// CheckCredentials reads what the key may do from the account configuration: perm lists "read_only", "trade"
// and "withdraw" (transfers between the funding and trading accounts need "trade"); ip lists the addresses the key
// is bound to. OKX keys bound to no IP expire after 14 days of inactivity, which is not an expiry time.
func (s *Server) CheckCredentials(ctx context.Context, req *exchangev1.CheckCredentialsRequest) (*exchangev1.CheckCredentialsResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	c, err := s.accountConfig(ctx, creds)
	if err != nil {
		return nil, err
	}
	perms := map[string]bool{}
	for _, p := range strings.Split(c.Perm, ",") {
		if p = strings.TrimSpace(p); p != "" {
			perms[p] = true
		}
	}
	var ips []string
	for _, ip := range strings.Split(c.IP, ",") {
		if ip = strings.TrimSpace(ip); ip != "" {
			ips = append(ips, ip)
		}
	}
	mode := positionModeOf(c.PosMode)
	if mode == exchangev1.PositionMode_POSITION_MODE_UNSPECIFIED {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "account config: unknown posMode %q", c.PosMode)
	}
	// Every valid key reads (OKX lists read_only for all of them); the call above succeeded with this one.
	return &exchangev1.CheckCredentialsResponse{CanRead: true, CanTrade: perms["trade"], CanWithdraw: perms["withdraw"],
		CanTransfer: perms["trade"], IpRestricted: len(ips) > 0, IpAllowlist: ips, PositionMode: mode,
		AccountMode: c.AcctLv, ExchangeAccountId: c.UID}, nil
}

// GetPositionMode reads posMode from the account configuration.
func (s *Server) GetPositionMode(ctx context.Context, req *exchangev1.GetPositionModeRequest) (*exchangev1.GetPositionModeResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	m, err := s.positionMode(ctx, creds)
	if err != nil {
		return nil, err
	}
	return &exchangev1.GetPositionModeResponse{Mode: positionModeOf(m)}, nil
}

// SetPositionMode switches between net_mode and long_short_mode.
func (s *Server) SetPositionMode(ctx context.Context, req *exchangev1.SetPositionModeRequest) (*exchangev1.SetPositionModeResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	m, err := positionModeStr(req.GetMode())
	if err != nil {
		return nil, err
	}
	if _, err := s.client().Post(ctx, pathAccountSetPositionMode, map[string]string{"posMode": m}, creds); err != nil {
		return nil, err
	}
	return &exchangev1.SetPositionModeResponse{}, nil
}

// GetMaxOrderSize reads max-size (contracts for SWAP) and converts to base units.
func (s *Server) GetMaxOrderSize(ctx context.Context, req *exchangev1.GetMaxOrderSizeRequest) (*exchangev1.GetMaxOrderSizeResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	in, err := s.instrument(ctx, req.GetMarketType(), req.GetSymbol())
	if err != nil {
		return nil, err
	}
	td, err := tdMode(in, req.GetMarginMode())
	if err != nil {
		return nil, err
	}
	q := url.Values{"instId": {in.InstID}, "tdMode": {td}}
	if req.GetPrice() != "" {
		q.Set("px", req.GetPrice())
	}
	type maxSize struct {
		MaxBuy  string `json:"maxBuy"`
		MaxSell string `json:"maxSell"`
	}
	row, err := callOne[maxSize](ctx, s, pathAccountMaxSize, q, creds)
	if err != nil {
		return nil, err
	}
	buy, _, err1 := parseDec("maxBuy", row.MaxBuy)
	sell, _, err2 := parseDec("maxSell", row.MaxSell)
	if err1 != nil || err2 != nil {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "max-size: malformed response")
	}
	// Whole lots only.
	floor := func(d decimal.Decimal) decimal.Decimal { return d.Div(in.LotSz).Floor().Mul(in.LotSz) }
	return &exchangev1.GetMaxOrderSizeResponse{MaxBuyQty: canon(in.FromOKXSize(floor(buy))), MaxSellQty: canon(in.FromOKXSize(floor(sell)))}, nil
}

// batchAccount checks that every order of a batch is for the batch's account (or names none) and returns the
// credentials.
func batchAccount(acct *exchangev1.AccountRef, n int, accountOf func(int) *exchangev1.AccountRef) (*Credentials, error) {
	creds, err := credsOf(acct)
	if err != nil {
		return nil, err
	}
	if n == 0 || n > batchPlaceLimit {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "orders", "a batch holds 1 to %d orders, not %d", batchPlaceLimit, n)
	}
	for i := range n {
		a := accountOf(i)
		if a != nil && (a.GetApiKey() != "" || a.GetAccountId() != "") && (a.GetApiKey() != acct.GetApiKey() || a.GetAccountId() != acct.GetAccountId()) {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "orders", "order %d is for another account than the batch", i)
		}
	}
	return creds, nil
}

// BatchPlaceOrders places up to 20 orders with one trade/batch-orders call. Each order is checked as PlaceOrder
// checks it, and an order with a client id is looked up first (the same parameters return the existing order,
// others are DUPLICATE_CLIENT_ORDER_ID): only the rest is sent. Results come in request order; OKX's per-order
// sCode becomes that order's error (50004 is UNKNOWN_OUTCOME). A batch that fails as a whole may have placed any
// of the orders it sent and is never retried.
func (s *Server) BatchPlaceOrders(ctx context.Context, req *exchangev1.BatchPlaceOrdersRequest) (*exchangev1.BatchPlaceOrdersResponse, error) {
	orders := req.GetOrders()
	creds, err := batchAccount(req.GetAccount(), len(orders), func(i int) *exchangev1.AccountRef { return orders[i].GetAccount() })
	if err != nil {
		return nil, err
	}
	results := make([]*exchangev1.BatchResult, len(orders))
	plans := make([]*orderPlan, len(orders))
	var send []int
	seen := map[string]bool{}
	for i, o := range orders {
		p, err := s.orderPlan(ctx, o)
		if err == nil && p.cid != "" && seen[p.cid] {
			err = sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID, "client_order_id", "client order id %q appears twice in the batch", p.cid)
		}
		if err == nil && p.cid != "" {
			seen[p.cid] = true
			var got *exchangev1.Order
			if got, err = s.existingOrder(ctx, creds, p.in, o); err == nil && got != nil {
				results[i] = &exchangev1.BatchResult{Order: got}
				continue
			}
		}
		if err != nil {
			results[i] = &exchangev1.BatchResult{Error: sdk.DetailOf(err)}
			continue
		}
		plans[i] = p
		send = append(send, i)
	}
	if len(send) == 0 {
		return &exchangev1.BatchPlaceOrdersResponse{Results: results}, nil
	}
	body := make([]map[string]any, len(send))
	for k, i := range send {
		body[k] = plans[i].body
	}
	data, err := s.client().PostBatch(ctx, pathTradeBatchOrders, body, creds)
	if err != nil {
		return nil, err
	}
	acks, err := decodeList[orderAck](data)
	if err != nil || len(acks) != len(send) {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME,
			"batch-orders: %d acknowledgements for %d orders; resolve the orders by client id", len(acks), len(send))
	}
	for k, i := range send {
		if err := checkItems([]itemStatus{acks[k].itemStatus}); err != nil {
			results[i] = &exchangev1.BatchResult{Error: sdk.DetailOf(err)}
			continue
		}
		results[i] = &exchangev1.BatchResult{Order: s.placedOrder(ctx, creds, plans[i], orders[i], acks[k])}
	}
	return &exchangev1.BatchPlaceOrdersResponse{Results: results}, nil
}

// BatchCancelOrders cancels up to 20 orders with one trade/cancel-batch-orders call and reads each cancelled
// order back. Results come in request order; an order no longer open comes back as it is (filled or cancelled); an
// order OKX could not cancel otherwise carries its sCode as the error.
func (s *Server) BatchCancelOrders(ctx context.Context, req *exchangev1.BatchCancelOrdersRequest) (*exchangev1.BatchCancelOrdersResponse, error) {
	orders := req.GetOrders()
	creds, err := batchAccount(req.GetAccount(), len(orders), func(i int) *exchangev1.AccountRef { return orders[i].GetAccount() })
	if err != nil {
		return nil, err
	}
	results := make([]*exchangev1.BatchResult, len(orders))
	insts := make([]*Instrument, len(orders))
	var send []int
	var body []map[string]string
	for i, o := range orders {
		in, err := s.resolveOrderInst(ctx, creds, o.GetMarketType(), o.GetSymbol(), o.GetOrderId())
		if err == nil && o.GetOrderId() == "" && o.GetClientOrderId() == "" {
			err = sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "order_id", "order_id or client_order_id is required")
		}
		if err != nil {
			results[i] = &exchangev1.BatchResult{Error: sdk.DetailOf(err)}
			continue
		}
		item := map[string]string{"instId": in.InstID}
		if o.GetOrderId() != "" {
			item["ordId"] = o.GetOrderId()
		} else {
			item["clOrdId"] = o.GetClientOrderId()
		}
		insts[i] = in
		send = append(send, i)
		body = append(body, item)
	}
	if len(send) == 0 {
		return &exchangev1.BatchCancelOrdersResponse{Results: results}, nil
	}
	acks, err := s.cancelBatch(ctx, body, creds)
	if err != nil {
		return nil, err
	}
	for k, i := range send {
		if err := checkItems([]itemStatus{acks[k].itemStatus}); err != nil {
			// No longer open (perhaps cancelled by a first request whose answer was lost): the order as it is.
			if notOpen(acks[k].SCode) {
				o, ferr := s.fetchOrder(ctx, creds, insts[i], orders[i].GetOrderId(), orders[i].GetClientOrderId())
				if ferr == nil && orderClosed(o.GetStatus()) {
					results[i] = &exchangev1.BatchResult{Order: o}
					continue
				}
			}
			results[i] = &exchangev1.BatchResult{Error: sdk.DetailOf(err)}
			continue
		}
		o, err := s.fetchOrder(ctx, creds, insts[i], orders[i].GetOrderId(), orders[i].GetClientOrderId())
		if err != nil {
			results[i] = &exchangev1.BatchResult{Error: sdk.DetailOf(err)}
			continue
		}
		results[i] = &exchangev1.BatchResult{Order: o}
	}
	return &exchangev1.BatchCancelOrdersResponse{Results: results}, nil
}

// CancelAllAfter arms OKX's dead man's switch (trade/cancel-all-after, timeOut in whole seconds, which OKX takes
// from 10 to 120; a timeout_ms that is not a whole second is rounded up) or disarms it (timeout_ms 0). OKX's switch covers every
// pending order of the account, spot and swaps alike, so a symbol cannot narrow it (NOT_SUPPORTED).
func (s *Server) CancelAllAfter(ctx context.Context, req *exchangev1.CancelAllAfterRequest) (*exchangev1.CancelAllAfterResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	if req.GetSymbol() != "" {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED, "symbol",
			"OKX's cancel-all-after covers every pending order of the account; it cannot be limited to a symbol")
	}
	if mt := req.GetMarketType(); mt != exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED {
		if _, err := instTypeOf(mt); err != nil {
			return nil, err
		}
	}
	ms := req.GetTimeoutMs()
	secs := (ms + 999) / 1000
	if ms < 0 {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "timeout_ms", "timeout_ms %d is negative", ms)
	}
	data, err := s.client().Post(ctx, pathTradeCancelAllAfter, map[string]string{"timeOut": strconv.FormatInt(secs, 10)}, creds)
	if err != nil {
		return nil, err
	}
	type row struct {
		TriggerTime string `json:"triggerTime"`
	}
	rows, err := decodeList[row](data)
	if err != nil || len(rows) != 1 {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "cancel-all-after: malformed answer")
	}
	at, err := parseMs("triggerTime", rows[0].TriggerTime)
	if err != nil {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "cancel-all-after: %v", err)
	}
	return &exchangev1.CancelAllAfterResponse{TriggerTime: at}, nil
}
