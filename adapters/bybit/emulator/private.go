package emulator

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
)

func (s *Server) privateRoutes() {
	s.private(http.MethodPost, "/v5/order/create", 20, s.createOrder)
	s.private(http.MethodPost, "/v5/order/amend", 20, s.amendOrder)
	s.private(http.MethodPost, "/v5/order/cancel", 20, s.cancelOrder)
	s.private(http.MethodPost, "/v5/order/cancel-all", 20, s.cancelAll)
	s.private(http.MethodGet, "/v5/order/realtime", 50, s.realtime)
	s.private(http.MethodGet, "/v5/order/history", 50, s.history)
	s.private(http.MethodGet, "/v5/execution/list", 50, s.executions)
	s.private(http.MethodGet, "/v5/position/list", 50, s.positionList)
	s.private(http.MethodPost, "/v5/position/set-leverage", 10, s.setLeverage)
	s.private(http.MethodPost, "/v5/position/switch-mode", 10, s.switchMode)
	s.private(http.MethodPost, "/v5/position/switch-isolated", 10, s.switchIsolated)
	s.private(http.MethodPost, "/v5/position/trading-stop", 10, s.tradingStop)
	s.private(http.MethodGet, "/v5/user/query-api", 10, s.queryAPI)
	s.private(http.MethodGet, "/v5/account/info", 10, s.accountInfo)
}

// decode reads a JSON body.
func (q *privRequest) decode(v any) *apiError {
	if len(q.body) == 0 {
		return errParams("body is empty")
	}
	if err := json.Unmarshal(q.body, v); err != nil {
		return errParams("json: " + err.Error())
	}
	return nil
}

// mapErr turns a venue error into Bybit's retCode and message; spot answers its own 170xxx codes.
func mapErr(err error, spot bool) *apiError {
	pick := func(spotCode int, spotMsg string, code int, msg string) *apiError {
		if spot {
			return &apiError{spotCode, spotMsg}
		}
		return &apiError{code, msg}
	}
	switch {
	case errors.Is(err, venue.ErrInsufficientFunds):
		return pick(170131, "Insufficient balance.", 110007, "ab not enough for new order")
	case errors.Is(err, venue.ErrOrderNotFound):
		return pick(170213, "Order does not exist.", 110001, "order not exists or too late to cancel")
	case errors.Is(err, venue.ErrDuplicateClientID):
		return pick(170141, "Duplicate clientOrderId.", 110072, "OrderLinkedID is duplicate")
	case errors.Is(err, venue.ErrMinNotional):
		return pick(170140, "Order value exceeded lower limit.", 110094, "Order does not meet minimum order value")
	case errors.Is(err, venue.ErrReduceOnly):
		return &apiError{110017, "current position is zero, cannot fix reduce-only order qty"}
	case errors.Is(err, venue.ErrPositionSide):
		return &apiError{10001, "position idx not match position mode"}
	case errors.Is(err, venue.ErrLeverage):
		return &apiError{10001, "params error: leverage invalid: " + err.Error()}
	case errors.Is(err, venue.ErrModeChange):
		return &apiError{110024, "You have an existing position, so position mode cannot be switched"}
	case errors.Is(err, venue.ErrNotTrading):
		return pick(170130, "Trading of this symbol is suspended.", 110066, "Trading is currently not allowed")
	case errors.Is(err, venue.ErrInstrument):
		return pick(170121, "Invalid symbol.", 10001, "params error: symbol invalid")
	case errors.Is(err, venue.ErrPrecision):
		return pick(170137, "Order quantity or price has too many decimals.", 10001, "params error: qty or price has too many decimals")
	case errors.Is(err, venue.ErrOutOfRange):
		return pick(170136, "Order quantity exceeded upper limit.", 10001, "params error: qty out of range: "+err.Error())
	case errors.Is(err, venue.ErrWouldTrigger):
		return &apiError{10001, "params error: the trigger price would trigger immediately"}
	case errors.Is(err, venue.ErrInvalidOrder), errors.Is(err, venue.ErrBadNumber):
		return errParams(err.Error())
	}
	return &apiError{10016, "Internal server error: " + err.Error()}
}

// linkIDPattern is Bybit's orderLinkId: at most 36 characters of letters, digits, "-" and "_".
var linkIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,36}$`)

type createReq struct {
	Category    string `json:"category"`
	Symbol      string `json:"symbol"`
	Side        string `json:"side"`
	OrderType   string `json:"orderType"`
	Qty         string `json:"qty"`
	Price       string `json:"price"`
	TimeInForce string `json:"timeInForce"`
	OrderLinkID string `json:"orderLinkId"`
	PositionIdx int    `json:"positionIdx"`
	ReduceOnly  bool   `json:"reduceOnly"`
	MarketUnit  string `json:"marketUnit"`
	IsLeverage  int    `json:"isLeverage"`
	TakeProfit  string `json:"takeProfit"`
	StopLoss    string `json:"stopLoss"`
	// Conditional orders (linear): triggered when the trigger price type rises (1) or falls (2) to triggerPrice.
	TriggerPrice     string `json:"triggerPrice"`
	TriggerDirection int    `json:"triggerDirection"`
	TriggerBy        string `json:"triggerBy"`
}

func (s *Server) bodyInst(category, symbol string) (*inst, *apiError) {
	if category != "spot" && category != "linear" {
		return nil, &apiError{10001, "params error: category only support spot,linear"}
	}
	if symbol == "" {
		return nil, errParams("symbol is null")
	}
	i, ok := s.lookup(category, symbol)
	if !ok {
		return nil, mapErr(venue.ErrInstrument, category == "spot")
	}
	return i, nil
}

func posSideOf(idx int) (venue.PositionSide, bool) {
	switch idx {
	case 0:
		return venue.PosBoth, true
	case 1:
		return venue.PosLong, true
	case 2:
		return venue.PosShort, true
	}
	return 0, false
}

func posIdxOf(p venue.PositionSide) int {
	switch p {
	case venue.PosLong:
		return 1
	case venue.PosShort:
		return 2
	}
	return 0
}

// onGrid reports whether v is a whole multiple of step.
func onGrid(v, step decimal.Decimal) bool {
	return step.IsZero() || v.Mod(step).IsZero()
}

func (s *Server) createOrder(q *privRequest) (any, *apiError) {
	var r createReq
	if e := q.decode(&r); e != nil {
		return nil, e
	}
	if s.take(q, r.OrderLinkID) {
		return nil, nil
	}
	i, e := s.bodyInst(r.Category, r.Symbol)
	if e != nil {
		return nil, e
	}
	spot := !i.linear
	if r.OrderLinkID != "" && !linkIDPattern.MatchString(r.OrderLinkID) {
		return nil, errParams("orderLinkId is invalid: at most 36 letters, digits, - or _")
	}
	if r.OrderLinkID != "" {
		if _, err := s.v.GetOrder(q.account(), 0, r.OrderLinkID); err == nil {
			return nil, mapErr(venue.ErrDuplicateClientID, spot)
		}
	}
	if r.TakeProfit != "" || r.StopLoss != "" {
		return nil, errParams("takeProfit/stopLoss on order creation is not offered by this emulator")
	}
	vr := venue.OrderRequest{Account: q.account(), Instrument: i.v.ID, ClientID: r.OrderLinkID, ReduceOnly: r.ReduceOnly}
	switch r.Side {
	case "Buy":
		vr.Side = venue.Buy
	case "Sell":
		vr.Side = venue.Sell
	default:
		return nil, errParams("side invalid")
	}
	ps, ok := posSideOf(r.PositionIdx)
	if !ok || (spot && r.PositionIdx != 0) {
		return nil, errParams("positionIdx invalid")
	}
	vr.PositionSide = ps
	if r.ReduceOnly && ps != venue.PosBoth {
		// Hedge mode: the side of the position says what closes; a reduce-only order must close it.
		if (ps == venue.PosLong) == (vr.Side == venue.Buy) {
			return nil, mapErr(venue.ErrReduceOnly, false)
		}
		vr.ReduceOnly = false
	}
	if spot && r.ReduceOnly {
		return nil, errParams("reduceOnly is not supported on spot")
	}
	qty, err := decimal.NewFromString(r.Qty)
	if err != nil || !qty.IsPositive() {
		return nil, errParams("qty invalid")
	}
	switch r.OrderType {
	case "Limit":
		vr.Type = venue.Limit
		price, err := decimal.NewFromString(r.Price)
		if err != nil || !price.IsPositive() {
			return nil, errParams("price invalid")
		}
		if !onGrid(price, i.v.TickSize) {
			if spot {
				return nil, &apiError{170134, "Order price has too many decimals."}
			}
			return nil, errParams("price has too many decimals")
		}
		vr.Price = price
		switch r.TimeInForce {
		case "", "GTC":
			vr.TIF = venue.GTC
		case "IOC":
			vr.TIF = venue.IOC
		case "FOK":
			vr.TIF = venue.FOK
		case "PostOnly":
			vr.TIF = venue.PostOnly
		default:
			return nil, errParams("timeInForce invalid")
		}
	case "Market":
		vr.Type = venue.Market
		if r.TimeInForce != "" && r.TimeInForce != "IOC" && r.TimeInForce != "FOK" {
			return nil, errParams("timeInForce invalid for a market order")
		}
	default:
		return nil, errParams("orderType invalid")
	}
	if r.TriggerPrice != "" {
		if e := conditional(&vr, r, spot); e != nil {
			return nil, e
		}
	}
	unit := r.MarketUnit
	if spot && vr.Type == venue.Market && unit == "" {
		// Bybit's spot market buy is sized in the quote coin unless marketUnit says otherwise.
		unit = "baseCoin"
		if vr.Side == venue.Buy {
			unit = "quoteCoin"
		}
	}
	switch {
	case unit == "quoteCoin" && spot && vr.Type == venue.Market:
		vr.QuoteQty = qty
	case unit == "" || unit == "baseCoin":
		if !onGrid(qty, i.v.StepSize) {
			if spot {
				return nil, &apiError{170137, "Order quantity has too many decimals."}
			}
			return nil, errParams("qty has too many decimals")
		}
		vr.Qty = qty
	default:
		return nil, errParams("marketUnit invalid")
	}
	o, err := s.v.Place(q.r.Context(), vr)
	if err != nil {
		return nil, mapErr(err, spot)
	}
	if o.Status == venue.StatusRejected {
		return nil, mapErr(errors.New(o.Reason), spot)
	}
	s.rememberUnit(o.ID, unit)
	return obj{"orderId": strconv.FormatUint(o.ID, 10), "orderLinkId": o.ClientID}, nil
}

// conditional turns a create with triggerPrice into the venue's conditional order: a buy triggered on a rise is a
// stop, on a fall a take-profit (a sell the other way round).
func conditional(vr *venue.OrderRequest, r createReq, spot bool) *apiError {
	if spot {
		return errParams("conditional spot orders are not offered by this emulator")
	}
	tp, err := decimal.NewFromString(r.TriggerPrice)
	if err != nil || !tp.IsPositive() {
		return errParams("triggerPrice invalid")
	}
	if r.TriggerDirection != 1 && r.TriggerDirection != 2 {
		return errParams("triggerDirection must be 1 (rise) or 2 (fall)")
	}
	by, ok := triggerOf(r.TriggerBy)
	if !ok {
		return errParams("triggerBy invalid")
	}
	stop := (vr.Side == venue.Buy) == (r.TriggerDirection == 1)
	switch {
	case vr.Type == venue.Market && stop:
		vr.Type = venue.StopMarket
	case vr.Type == venue.Market:
		vr.Type = venue.TakeProfitMarket
	case stop:
		vr.Type = venue.StopLimit
	default:
		vr.Type = venue.TakeProfitLimit
	}
	vr.StopPrice, vr.TriggerBy = tp, by
	if vr.Type == venue.StopMarket || vr.Type == venue.TakeProfitMarket {
		vr.TIF = 0
	}
	return nil
}

// isConditional reports whether an order is (or was) a conditional one.
func isConditional(o venue.Order) bool {
	return o.StopPrice.IsPositive()
}

// filterOK applies orderFilter: Order (plain orders), StopOrder (conditional ones); empty lists every kind.
func filterOK(filter string, o venue.Order) bool {
	switch filter {
	case "Order":
		return !isConditional(o)
	case "StopOrder":
		return isConditional(o)
	}
	return true
}

// idRef names an order by orderId or orderLinkId.
type idRef struct {
	Category    string `json:"category"`
	Symbol      string `json:"symbol"`
	OrderID     string `json:"orderId"`
	OrderLinkID string `json:"orderLinkId"`
	Qty         string `json:"qty"`
	Price       string `json:"price"`
}

func parseID(s string) uint64 {
	n, _ := strconv.ParseUint(s, 10, 64)
	return n
}

// target resolves an order reference of a request: the order must be the account's, of that symbol.
func (s *Server) target(q *privRequest, r idRef) (*inst, venue.Order, *apiError) {
	i, e := s.bodyInst(r.Category, r.Symbol)
	if e != nil {
		return nil, venue.Order{}, e
	}
	if r.OrderID == "" && r.OrderLinkID == "" {
		return nil, venue.Order{}, errParams("orderId or orderLinkId is required")
	}
	id := parseID(r.OrderID)
	if r.OrderID != "" && id == 0 {
		return nil, venue.Order{}, mapErr(venue.ErrOrderNotFound, !i.linear)
	}
	o, err := s.v.GetOrder(q.account(), id, r.OrderLinkID)
	if err != nil || o.Instrument != i.v.ID || (r.OrderLinkID != "" && o.ClientID != r.OrderLinkID) {
		return nil, venue.Order{}, mapErr(venue.ErrOrderNotFound, !i.linear)
	}
	return i, o, nil
}

func (s *Server) cancelOrder(q *privRequest) (any, *apiError) {
	var r idRef
	if e := q.decode(&r); e != nil {
		return nil, e
	}
	if s.take(q, r.OrderLinkID, r.OrderID) {
		return nil, nil
	}
	i, o, e := s.target(q, r)
	if e != nil {
		return nil, e
	}
	c, err := s.v.Cancel(q.r.Context(), q.account(), i.v.ID, o.ID, "")
	if err != nil {
		return nil, mapErr(err, !i.linear)
	}
	return obj{"orderId": strconv.FormatUint(c.ID, 10), "orderLinkId": c.ClientID}, nil
}

func (s *Server) amendOrder(q *privRequest) (any, *apiError) {
	var r idRef
	if e := q.decode(&r); e != nil {
		return nil, e
	}
	i, o, e := s.target(q, r)
	if e != nil {
		return nil, e
	}
	// A fault armed for the order's client id hits its amend too (the conformance kit arms it so).
	if s.take(q, r.OrderLinkID, r.OrderID, o.ClientID) {
		return nil, nil
	}
	var price, qty decimal.Decimal
	var err error
	if r.Price != "" {
		if price, err = decimal.NewFromString(r.Price); err != nil || !price.IsPositive() {
			return nil, errParams("price invalid")
		}
	}
	if r.Qty != "" {
		if qty, err = decimal.NewFromString(r.Qty); err != nil || !qty.IsPositive() {
			return nil, errParams("qty invalid")
		}
	}
	if price.IsZero() && qty.IsZero() {
		return nil, &apiError{10001, "params error: nothing to amend"}
	}
	a, err := s.v.Amend(q.r.Context(), q.account(), i.v.ID, o.ID, "", price, qty, decimal.Zero)
	if err != nil {
		return nil, mapErr(err, !i.linear)
	}
	return obj{"orderId": strconv.FormatUint(a.ID, 10), "orderLinkId": a.ClientID}, nil
}

func (s *Server) cancelAll(q *privRequest) (any, *apiError) {
	var r struct {
		Category   string `json:"category"`
		Symbol     string `json:"symbol"`
		BaseCoin   string `json:"baseCoin"`
		SettleCoin string `json:"settleCoin"`
	}
	if e := q.decode(&r); e != nil {
		return nil, e
	}
	var insts []*inst
	if r.Symbol != "" {
		i, e := s.bodyInst(r.Category, r.Symbol)
		if e != nil {
			return nil, e
		}
		insts = []*inst{i}
	} else {
		if r.Category != "spot" && r.Category != "linear" {
			return nil, &apiError{10001, "params error: category only support spot,linear"}
		}
		if r.Category == "linear" && r.BaseCoin == "" && r.SettleCoin == "" {
			return nil, errParams("symbol, baseCoin or settleCoin is required")
		}
		for _, i := range s.order {
			if i.category() == r.Category && (r.BaseCoin == "" || i.v.Base == r.BaseCoin) && (r.SettleCoin == "" || i.v.Quote == r.SettleCoin) {
				insts = append(insts, i)
			}
		}
	}
	list := []obj{}
	for _, i := range insts {
		os, err := s.v.CancelAll(q.r.Context(), q.account(), i.v.ID)
		if err != nil {
			return nil, mapErr(err, !i.linear)
		}
		for _, o := range os {
			list = append(list, obj{"orderId": strconv.FormatUint(o.ID, 10), "orderLinkId": o.ClientID})
		}
	}
	return obj{"list": list, "success": "1"}, nil
}

// listScope reads category and symbol (or baseCoin/settleCoin) of a list endpoint: nil insts means every
// instrument of the category.
func (s *Server) listScope(q *privRequest, needSymbolOnLinear bool) (string, *inst, *apiError) {
	cat := q.get("category")
	if cat != "spot" && cat != "linear" {
		return "", nil, &apiError{10001, "params error: category only support spot,linear"}
	}
	sym := q.get("symbol")
	if sym == "" {
		if needSymbolOnLinear && cat == "linear" && q.get("settleCoin") == "" && q.get("baseCoin") == "" {
			return "", nil, errParams("symbol, baseCoin or settleCoin is required")
		}
		return cat, nil, nil
	}
	i, ok := s.lookup(cat, sym)
	if !ok {
		return "", nil, mapErr(venue.ErrInstrument, cat == "spot")
	}
	return cat, i, nil
}

func (s *Server) inScope(cat string, i *inst, instrument string) (*inst, bool) {
	if i != nil {
		return i, i.v.ID == instrument
	}
	for _, x := range s.order {
		if x.v.ID == instrument {
			return x, x.category() == cat
		}
	}
	return nil, false
}

// page cuts rows (already in the endpoint's order) at the cursor (an offset) and limit.
func pageRows[T any](rows []T, cursor string, limit int) ([]T, string, *apiError) {
	off := 0
	if cursor != "" {
		n, err := strconv.Atoi(cursor)
		if err != nil || n < 0 {
			return nil, "", errParams("cursor invalid")
		}
		off = n
	}
	if off >= len(rows) {
		return nil, "", nil
	}
	end := min(off+limit, len(rows))
	next := ""
	if end < len(rows) {
		next = strconv.Itoa(end)
	}
	return rows[off:end], next, nil
}

func limitParam(q *privRequest, def, maxN int) (int, *apiError) {
	s := q.get("limit")
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxN {
		return 0, errParams("limit invalid")
	}
	return n, nil
}

func (s *Server) realtime(q *privRequest) (any, *apiError) {
	cat, i, e := s.listScope(q, true)
	if e != nil {
		return nil, e
	}
	limit, e := limitParam(q, 20, 50)
	if e != nil {
		return nil, e
	}
	var orders []venue.Order
	var err error
	if q.get("openOnly") == "1" {
		// Recently closed orders (Bybit keeps the last 500), newest first.
		orders, err = s.v.OrderHistory(q.account(), "", 500)
		slices.Reverse(orders)
	} else {
		orders, err = s.v.OpenOrders(q.account(), "")
		slices.Reverse(orders) // newest first
	}
	if err != nil {
		return nil, mapErr(err, cat == "spot")
	}
	id, link, filter := q.get("orderId"), q.get("orderLinkId"), q.get("orderFilter")
	rows := []obj{}
	fees := s.orderFees(q.account())
	for _, o := range orders {
		in, ok := s.inScope(cat, i, o.Instrument)
		if !ok || (id != "" && strconv.FormatUint(o.ID, 10) != id) || (link != "" && o.ClientID != link) || !filterOK(filter, o) {
			continue
		}
		rows = append(rows, s.orderRow(in, o, fees))
	}
	list, next, e := pageRows(rows, q.get("cursor"), limit)
	if e != nil {
		return nil, e
	}
	if list == nil {
		list = []obj{}
	}
	return obj{"category": cat, "list": list, "nextPageCursor": next}, nil
}

// timeWindow reads startTime/endTime (ms; Bybit keeps a window of at most 7 days, the last 7 days by default).
func timeWindow(q *privRequest, now int64) (int64, int64, *apiError) {
	const week = 7 * 24 * 3600 * 1000
	var start, end int64
	var err error
	if v := q.get("startTime"); v != "" {
		if start, err = strconv.ParseInt(v, 10, 64); err != nil {
			return 0, 0, errParams("startTime invalid")
		}
	}
	if v := q.get("endTime"); v != "" {
		if end, err = strconv.ParseInt(v, 10, 64); err != nil {
			return 0, 0, errParams("endTime invalid")
		}
	}
	switch {
	case start == 0 && end == 0:
		end, start = now, now-week
	case start == 0:
		start = end - week
	case end == 0:
		end = start + week
	}
	if end < start || end-start > week {
		return 0, 0, errParams("startTime and endTime must be within 7 days")
	}
	return start, end, nil
}

func (s *Server) history(q *privRequest) (any, *apiError) {
	cat, i, e := s.listScope(q, false)
	if e != nil {
		return nil, e
	}
	limit, e := limitParam(q, 20, 50)
	if e != nil {
		return nil, e
	}
	start, end, e := timeWindow(q, s.v.Now())
	if e != nil {
		return nil, e
	}
	orders, err := s.v.OrderHistory(q.account(), "", 0)
	if err != nil {
		return nil, mapErr(err, cat == "spot")
	}
	slices.Reverse(orders)
	id, link, filter := q.get("orderId"), q.get("orderLinkId"), q.get("orderFilter")
	fees := s.orderFees(q.account())
	rows := []obj{}
	for _, o := range orders {
		in, ok := s.inScope(cat, i, o.Instrument)
		if !ok || (id != "" && strconv.FormatUint(o.ID, 10) != id) || (link != "" && o.ClientID != link) || !filterOK(filter, o) {
			continue
		}
		if id == "" && link == "" && (o.Created < start || o.Created > end) {
			continue
		}
		rows = append(rows, s.orderRow(in, o, fees))
	}
	list, next, e := pageRows(rows, q.get("cursor"), limit)
	if e != nil {
		return nil, e
	}
	if list == nil {
		list = []obj{}
	}
	return obj{"category": cat, "list": list, "nextPageCursor": next}, nil
}

// orderFees sums each order's fees from the account's fills.
func (s *Server) orderFees(acct string) map[uint64]decimal.Decimal {
	fills, _ := s.v.Fills(acct, "", 0)
	out := make(map[uint64]decimal.Decimal, len(fills))
	for _, f := range fills {
		out[f.OrderID] = out[f.OrderID].Add(f.Fee)
	}
	return out
}

// statusName is Bybit's orderStatus.
func statusName(o venue.Order) string {
	switch o.Status {
	case venue.StatusNew:
		return "New"
	case venue.StatusPartiallyFilled:
		return "PartiallyFilled"
	case venue.StatusFilled:
		return "Filled"
	case venue.StatusCanceled, venue.StatusExpired:
		if o.Filled.IsPositive() {
			return "PartiallyFilledCanceled"
		}
		return "Cancelled"
	case venue.StatusRejected:
		return "Rejected"
	case venue.StatusUntriggered:
		return "Untriggered"
	}
	return "Deactivated"
}

func tifName(o venue.Order) string {
	if o.Type == venue.Market || o.Type == venue.StopMarket || o.Type == venue.TakeProfitMarket {
		return "IOC"
	}
	switch o.TIF {
	case venue.IOC:
		return "IOC"
	case venue.FOK:
		return "FOK"
	case venue.PostOnly:
		return "PostOnly"
	}
	return "GTC"
}

func sideName(s venue.Side) string {
	if s == venue.Buy {
		return "Buy"
	}
	return "Sell"
}

func (s *Server) orderRow(i *inst, o venue.Order, fees map[uint64]decimal.Decimal) obj {
	otype, price := "Limit", dec(o.Price)
	switch o.Type {
	case venue.Market, venue.StopMarket, venue.TakeProfitMarket:
		otype, price = "Market", "0"
	}
	trigger, direction, triggerBy, stopType := "0", 0, "", ""
	if isConditional(o) {
		trigger, triggerBy, stopType = dec(o.StopPrice), "LastPrice", "Stop"
		if o.TriggerBy == venue.TriggerMark {
			triggerBy = "MarkPrice"
		}
		// A buy stop waits for a rise, a buy take-profit for a fall (a sell the other way round).
		stop := o.OrigType == venue.StopMarket || o.OrigType == venue.StopLimit || o.Type == venue.StopMarket || o.Type == venue.StopLimit
		if stop == (o.Side == venue.Buy) {
			direction = 1
		} else {
			direction = 2
		}
	}
	qty := o.Qty
	unit := s.unitOf(o.ID)
	if unit == "quoteCoin" {
		qty = o.QuoteQty
	}
	leaves := decimal.Zero
	if !o.Status.Final() && o.Qty.IsPositive() {
		leaves = o.Qty.Sub(o.Filled)
	}
	cancelType := "UNKNOWN"
	if o.Status == venue.StatusCanceled {
		cancelType = "CancelByUser"
	}
	row := obj{
		"orderId": strconv.FormatUint(o.ID, 10), "orderLinkId": o.ClientID, "blockTradeId": "", "symbol": i.symbol,
		"price": price, "qty": dec(qty), "side": sideName(o.Side), "isLeverage": "", "positionIdx": posIdxOf(o.PositionSide),
		"orderStatus": statusName(o), "cancelType": cancelType, "rejectReason": "EC_NoError", "avgPrice": dec(o.AvgPrice),
		"leavesQty": dec(leaves), "leavesValue": dec(leaves.Mul(o.Price)), "cumExecQty": dec(o.Filled),
		"cumExecValue": dec(o.CumQuote), "cumExecFee": dec(fees[o.ID]), "timeInForce": tifName(o), "orderType": otype,
		"stopOrderType": stopType, "orderIv": "", "triggerPrice": trigger, "takeProfit": "", "stopLoss": "", "tpTriggerBy": "",
		"slTriggerBy": "", "triggerDirection": direction, "triggerBy": triggerBy, "lastPriceOnCreated": "", "reduceOnly": o.ReduceOnly,
		"closeOnTrigger": false, "smpType": "None", "smpGroup": 0, "smpOrderId": "", "tpslMode": "", "tpLimitPrice": "",
		"slLimitPrice": "", "placeType": "", "createdTime": ms(o.Created), "updatedTime": ms(o.Updated),
	}
	if !i.linear {
		row["marketUnit"] = unit
	}
	return row
}

// rememberUnit keeps the marketUnit of a spot market order (its qty is in that unit).
func (s *Server) rememberUnit(id uint64, unit string) {
	if unit == "" || unit == "baseCoin" {
		return
	}
	s.unitsMu.Lock()
	defer s.unitsMu.Unlock()
	if len(s.units) >= 100_000 {
		clear(s.units)
	}
	s.units[id] = unit
}

func (s *Server) unitOf(id uint64) string {
	s.unitsMu.Lock()
	defer s.unitsMu.Unlock()
	if u, ok := s.units[id]; ok {
		return u
	}
	return ""
}

func (s *Server) executions(q *privRequest) (any, *apiError) {
	cat, i, e := s.listScope(q, false)
	if e != nil {
		return nil, e
	}
	limit, e := limitParam(q, 50, 100)
	if e != nil {
		return nil, e
	}
	start, end, e := timeWindow(q, s.v.Now())
	if e != nil {
		return nil, e
	}
	fills, err := s.v.Fills(q.account(), "", 0)
	if err != nil {
		return nil, mapErr(err, cat == "spot")
	}
	slices.Reverse(fills)
	id, link := q.get("orderId"), q.get("orderLinkId")
	rows := []obj{}
	for _, f := range fills {
		in, ok := s.inScope(cat, i, f.Instrument)
		if !ok || (id != "" && strconv.FormatUint(f.OrderID, 10) != id) || (link != "" && f.ClientID != link) {
			continue
		}
		if f.Time < start || f.Time > end {
			continue
		}
		feeRate := in.v.TakerFee
		if f.Maker {
			feeRate = in.v.MakerFee
		}
		row := obj{"symbol": in.symbol, "orderId": strconv.FormatUint(f.OrderID, 10), "orderLinkId": f.ClientID,
			"side": sideName(f.Side), "orderPrice": dec(f.Price), "orderQty": dec(f.Qty), "leavesQty": "0", "orderType": "",
			"stopOrderType": "", "execFee": dec(f.Fee), "execId": strconv.FormatUint(f.TradeID, 10), "execPrice": dec(f.Price),
			"execQty": dec(f.Qty), "execType": "Trade", "execValue": dec(f.Quote), "execTime": ms(f.Time), "isMaker": f.Maker,
			"feeRate": dec(feeRate), "tradeIv": "", "markIv": "", "markPrice": "", "indexPrice": "", "underlyingPrice": "",
			"blockTradeId": "", "closedSize": "", "seq": f.TradeID, "feeCurrency": f.FeeAsset, "execPnl": dec(f.RealizedPnL)}
		rows = append(rows, row)
	}
	list, next, e := pageRows(rows, q.get("cursor"), limit)
	if e != nil {
		return nil, e
	}
	if list == nil {
		list = []obj{}
	}
	return obj{"category": cat, "list": list, "nextPageCursor": next}, nil
}
