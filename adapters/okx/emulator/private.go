package emulator

import (
	"context"
	"errors"
	"hash/crc32"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
)

func (s *Server) privateRoutes() {
	s.route("POST", "/api/v5/trade/order", 60, true, s.placeOrder)
	s.route("POST", "/api/v5/trade/batch-orders", 300, true, s.batchOrders)
	s.route("POST", "/api/v5/trade/cancel-order", 60, true, s.cancelOrder)
	s.route("POST", "/api/v5/trade/cancel-batch-orders", 300, true, s.cancelBatch)
	s.route("POST", "/api/v5/trade/amend-order", 60, true, s.amendOrder)
	s.route("GET", "/api/v5/trade/order", 60, true, s.getOrder)
	s.route("GET", "/api/v5/trade/orders-pending", 60, true, s.ordersPending)
	s.route("GET", "/api/v5/trade/orders-history", 40, true, s.ordersHistory)
	s.route("GET", "/api/v5/trade/fills", 60, true, s.fills)
	s.route("POST", "/api/v5/trade/close-position", 20, true, s.closePosition)
	s.route("POST", "/api/v5/trade/order-algo", 20, true, s.placeAlgo)
	s.route("POST", "/api/v5/trade/cancel-algos", 20, true, s.cancelAlgos)
	s.route("GET", "/api/v5/trade/order-algo", 20, true, s.getAlgo)
	s.route("GET", "/api/v5/trade/orders-algo-pending", 20, true, s.algosPending)
	s.route("GET", "/api/v5/trade/orders-algo-history", 20, true, s.algosHistory)
	s.route("GET", "/api/v5/account/balance", 10, true, s.balance)
	s.route("GET", "/api/v5/account/positions", 10, true, s.positions)
	s.route("POST", "/api/v5/account/set-leverage", 20, true, s.setLeverage)
	s.route("GET", "/api/v5/account/leverage-info", 20, true, s.leverageInfo)
	s.route("POST", "/api/v5/account/set-position-mode", 5, true, s.setPositionMode)
	s.route("GET", "/api/v5/account/config", 5, true, s.accountConfig)
	s.route("POST", "/api/v5/trade/cancel-all-after", 2, true, s.cancelAllAfter)
	s.route("GET", "/api/v5/account/max-size", 20, true, s.maxSize)
	s.walletRoutes()
	s.billRoutes()
}

// mapErr turns a venue error into OKX's code and message.
func mapErr(err error) (string, string) {
	switch {
	case errors.Is(err, venue.ErrInsufficientFunds):
		return "51008", "Order failed. Insufficient balance."
	case errors.Is(err, venue.ErrOrderNotFound):
		return "51603", "Order does not exist"
	case errors.Is(err, venue.ErrDuplicateClientID):
		return "51016", "Duplicated clOrdId"
	case errors.Is(err, venue.ErrMinNotional):
		return "51020", "Your order should meet or exceed the minimum order amount."
	case errors.Is(err, venue.ErrReduceOnly):
		return "51169", "Order failed because you don't have any positions in this direction for this contract to reduce or close."
	case errors.Is(err, venue.ErrPositionSide):
		return "51000", "Parameter posSide error"
	case errors.Is(err, venue.ErrWouldTrigger):
		return "51277", "TP trigger price can not be higher than the last price"
	case errors.Is(err, venue.ErrLeverage):
		return "59102", "Leverage exceeds the maximum leverage. Please adjust your leverage."
	case errors.Is(err, venue.ErrModeChange):
		return "59000", "Settings failed. Close any open positions or orders before modifying settings."
	case errors.Is(err, venue.ErrNotTrading):
		return "51010", "Operation is not supported under the current account mode or instrument status"
	case errors.Is(err, venue.ErrInstrument):
		return "51001", "Instrument ID, Instrument ID code, or Spread ID doesn't exist."
	case errors.Is(err, venue.ErrPrecision):
		return "51121", "Order quantity must be a multiple of the lot size or the price of the tick size."
	case errors.Is(err, venue.ErrOutOfRange):
		return "51000", "Parameter sz error: " + err.Error()
	case errors.Is(err, venue.ErrWithdrawMin):
		return "58350", "Insufficient balance or below the minimum withdrawal amount."
	case errors.Is(err, venue.ErrUnknownAsset):
		return "58004", "Currency does not exist"
	case errors.Is(err, venue.ErrQuoteExpired):
		return "52912", "The quote has expired or does not exist"
	case errors.Is(err, venue.ErrInvalidOrder), errors.Is(err, venue.ErrBadNumber):
		return "51000", "Parameter error: " + err.Error()
	}
	return "50000", err.Error()
}

// bizErr is a whole-request business error (HTTP 200 with the code at the top).
func bizErr(err error) *apiError {
	code, msg := mapErr(err)
	return &apiError{http.StatusOK, code, msg}
}

// flexBool reads OKX booleans sent either as JSON booleans or as "true"/"false" strings.
type flexBool bool

func (b *flexBool) UnmarshalJSON(d []byte) error {
	s := strings.Trim(string(d), `"`)
	*b = flexBool(s == "true")
	return nil
}

type orderReq struct {
	InstID     string   `json:"instId"`
	TdMode     string   `json:"tdMode"`
	Side       string   `json:"side"`
	PosSide    string   `json:"posSide"`
	OrdType    string   `json:"ordType"`
	Sz         string   `json:"sz"`
	Px         string   `json:"px"`
	ClOrdID    string   `json:"clOrdId"`
	Tag        string   `json:"tag"`
	ReduceOnly flexBool `json:"reduceOnly"`
	TgtCcy     string   `json:"tgtCcy"`
	StpMode    string   `json:"stpMode"`
	// AttachAlgoOrds: a TP/SL armed when the order fills (attach.go).
	AttachAlgoOrds []attachReq `json:"attachAlgoOrds"`
}

type itemErr struct{ code, msg string }

func perr(name string) *itemErr { return &itemErr{"51000", "Parameter " + name + " error"} }

func venueSide(s string) (venue.Side, bool) {
	switch s {
	case "buy":
		return venue.Buy, true
	case "sell":
		return venue.Sell, true
	}
	return 0, false
}

func venuePosSide(s string) (venue.PositionSide, bool) {
	switch s {
	case "", "net":
		return venue.PosBoth, true
	case "long":
		return venue.PosLong, true
	case "short":
		return venue.PosShort, true
	}
	return 0, false
}

// applyTdMode sets the swap's margin mode to the order's tdMode when it differs.
func (s *Server) applyTdMode(acct string, i *inst, td string) *itemErr {
	switch {
	case !i.swap && (td == "cash" || td == ""):
		return nil
	case i.swap && (td == "cross" || td == "isolated"):
		st, err := s.v.Settings(acct, i.v.ID)
		if err != nil {
			c, m := mapErr(err)
			return &itemErr{c, m}
		}
		if st.Isolated != (td == "isolated") {
			if err := s.v.SetMarginMode(acct, i.v.ID, td == "isolated"); err != nil {
				c, m := mapErr(err)
				return &itemErr{c, m}
			}
		}
		return nil
	}
	return perr("tdMode")
}

func validClOrdID(id string) bool {
	if len(id) > 32 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// buildOrder validates an OKX order request and turns it into a venue request.
func (s *Server) buildOrder(acct string, r orderReq) (*inst, venue.OrderRequest, *itemErr) {
	var vr venue.OrderRequest
	i, ok := s.lookup(r.InstID)
	if !ok {
		return nil, vr, &itemErr{"51001", "Instrument ID, Instrument ID code, or Spread ID doesn't exist."}
	}
	sd, ok := venueSide(r.Side)
	if !ok {
		return nil, vr, perr("side")
	}
	ps, ok := venuePosSide(r.PosSide)
	if !ok || (!i.swap && r.PosSide != "" && r.PosSide != "net") {
		return nil, vr, perr("posSide")
	}
	if !validClOrdID(r.ClOrdID) {
		return nil, vr, perr("clOrdId")
	}
	if e := s.applyTdMode(acct, i, r.TdMode); e != nil {
		return nil, vr, e
	}
	vr = venue.OrderRequest{Account: acct, Instrument: i.v.ID, ClientID: r.ClOrdID, Side: sd, PositionSide: ps,
		ReduceOnly: bool(r.ReduceOnly)}
	switch r.StpMode {
	case "", "cancel_maker":
		vr.STP = venue.STPExpireMaker
	case "cancel_taker":
		vr.STP = venue.STPExpireTaker
	case "cancel_both":
		vr.STP = venue.STPExpireBoth
	default:
		return nil, vr, perr("stpMode")
	}
	switch r.OrdType {
	case "limit", "post_only", "fok", "ioc":
		vr.Type = venue.Limit
		vr.TIF = map[string]venue.TimeInForce{"limit": venue.GTC, "post_only": venue.PostOnly, "fok": venue.FOK,
			"ioc": venue.IOC}[r.OrdType]
		p, err := venue.ParseDecimal(r.Px)
		if err != nil || !p.IsPositive() {
			return nil, vr, perr("px")
		}
		if _, err := i.v.Ticks(p); err != nil {
			return nil, vr, &itemErr{"51000", "Parameter px error: not a multiple of tickSz " + dec(i.v.TickSize)}
		}
		vr.Price = p
	case "market", "optimal_limit_ioc":
		vr.Type = venue.Market
	default:
		return nil, vr, perr("ordType")
	}
	// Spot market buys are sized in quote currency unless tgtCcy says base_ccy; sells in base unless quote_ccy.
	quoteSized := !i.swap && vr.Type == venue.Market &&
		(r.TgtCcy == "quote_ccy" || (r.TgtCcy == "" && sd == venue.Buy))
	if r.TgtCcy != "" && r.TgtCcy != "base_ccy" && r.TgtCcy != "quote_ccy" {
		return nil, vr, perr("tgtCcy")
	}
	if quoteSized {
		q, err := venue.ParseDecimal(r.Sz)
		if err != nil || !q.IsPositive() {
			return nil, vr, perr("sz")
		}
		if sd == venue.Sell {
			return nil, vr, perr("tgtCcy")
		}
		vr.QuoteQty = q
	} else {
		q, err := i.parseSz(r.Sz)
		if err != nil {
			if errors.Is(err, venue.ErrPrecision) {
				return nil, vr, &itemErr{"51121", "Order quantity must be a multiple of the lot size."}
			}
			return nil, vr, perr("sz")
		}
		if q.LessThan(i.v.MinQty) {
			return nil, vr, &itemErr{"51020", "Your order should meet or exceed the minimum order amount."}
		}
		vr.Qty = q
	}
	return i, vr, nil
}

type placed struct {
	ordID, clOrdID, tag string
	err                 *itemErr
}

func (s *Server) place(ctx context.Context, acct string, r orderReq) placed {
	out := placed{clOrdID: r.ClOrdID, tag: r.Tag}
	i, vr, e := s.buildOrder(acct, r)
	if e == nil {
		e = checkAttach(i, r)
	}
	if e != nil {
		out.err = e
		return out
	}
	o, err := s.v.Place(ctx, vr)
	if err != nil {
		c, m := mapErr(err)
		out.err = &itemErr{c, m}
		return out
	}
	out.ordID = strconv.FormatUint(o.ID, 10)
	s.rememberTag(o.ID, r.Tag)
	if len(r.AttachAlgoOrds) > 0 {
		s.armAttach(ctx, acct, o.ID, r)
	}
	return out
}

func (s *Server) itemResults(items []obj, errs []*itemErr) result {
	failed := 0
	for k, e := range errs {
		if e != nil {
			failed++
			items[k]["sCode"], items[k]["sMsg"] = e.code, e.msg
		} else {
			items[k]["sCode"], items[k]["sMsg"] = "0", ""
		}
	}
	res := result{data: items, stamp: true}
	switch {
	case failed == len(items):
		res.top, res.msg = "1", "All operations failed"
	case failed > 0:
		res.top, res.msg = "2", "Batch operation partially succeeded"
	}
	return res
}

func (s *Server) placeOrders(q *request, rs []orderReq) result {
	items := make([]obj, len(rs))
	errs := make([]*itemErr, len(rs))
	for k, r := range rs {
		p := s.place(q.r.Context(), q.account, r)
		items[k] = obj{"ordId": p.ordID, "clOrdId": p.clOrdID, "tag": p.tag, "ts": ms(s.v.Now())}
		errs[k] = p.err
		if q.perItem && q.errIDs[r.ClOrdID] {
			e := errTimeout()
			items[k]["ordId"], errs[k] = "", &itemErr{e.code, e.msg}
		}
	}
	return s.itemResults(items, errs)
}

func (s *Server) placeOrder(q *request) (result, *apiError) {
	var r orderReq
	if e := q.decode(&r); e != nil {
		return result{}, e
	}
	if s.takeFault(q, r.ClOrdID) {
		return result{}, nil
	}
	return s.placeOrders(q, []orderReq{r}), nil
}

func (s *Server) batchOrders(q *request) (result, *apiError) {
	var rs []orderReq
	if e := q.decode(&rs); e != nil {
		return result{}, e
	}
	if len(rs) == 0 || len(rs) > 20 {
		return result{}, &apiError{http.StatusBadRequest, "51000", "Parameter batch orders error: 1 to 20 orders"}
	}
	ids := make([]string, len(rs))
	for k, r := range rs {
		ids[k] = r.ClOrdID
	}
	if s.takeFault(q, ids...) {
		return result{}, nil
	}
	q.perItem = true // an AcceptThenError answers sCode 50004 for the orders it hit
	return s.placeOrders(q, rs), nil
}

type cancelReq struct {
	InstID  string `json:"instId"`
	OrdID   string `json:"ordId"`
	ClOrdID string `json:"clOrdId"`
}

func parseID(s string) uint64 {
	n, _ := strconv.ParseUint(s, 10, 64)
	return n
}

func (s *Server) cancelOne(ctx context.Context, acct string, r cancelReq) (obj, *itemErr) {
	item := obj{"ordId": r.OrdID, "clOrdId": r.ClOrdID, "ts": ms(s.v.Now())}
	i, ok := s.lookup(r.InstID)
	if !ok {
		return item, &itemErr{"51001", "Instrument ID, Instrument ID code, or Spread ID doesn't exist."}
	}
	if r.OrdID == "" && r.ClOrdID == "" {
		return item, perr("ordId")
	}
	o, err := s.v.Cancel(ctx, acct, i.v.ID, parseID(r.OrdID), r.ClOrdID)
	if err != nil {
		if errors.Is(err, venue.ErrOrderNotFound) {
			return item, &itemErr{"51400", "Order cancellation failed as the order has been filled, canceled or does not exist."}
		}
		c, m := mapErr(err)
		return item, &itemErr{c, m}
	}
	item["ordId"], item["clOrdId"] = strconv.FormatUint(o.ID, 10), o.ClientID
	return item, nil
}

func (s *Server) cancelOrder(q *request) (result, *apiError) {
	var r cancelReq
	if e := q.decode(&r); e != nil {
		return result{}, e
	}
	if s.takeFault(q, r.ClOrdID, r.OrdID) {
		return result{}, nil
	}
	item, e := s.cancelOne(q.r.Context(), q.account, r)
	return s.itemResults([]obj{item}, []*itemErr{e}), nil
}

func (s *Server) cancelBatch(q *request) (result, *apiError) {
	var rs []cancelReq
	if e := q.decode(&rs); e != nil {
		return result{}, e
	}
	if len(rs) == 0 || len(rs) > 20 {
		return result{}, &apiError{http.StatusBadRequest, "51000", "Parameter batch orders error: 1 to 20 orders"}
	}
	// One armed fault per request (the first order named that has one), so that a test can lose the answers of
	// consecutive requests naming the same orders.
	for _, r := range rs {
		if s.takeFault(q, r.ClOrdID, r.OrdID) {
			return result{}, nil
		}
		if q.fault != "" {
			break
		}
	}
	items := make([]obj, len(rs))
	errs := make([]*itemErr, len(rs))
	for k, r := range rs {
		items[k], errs[k] = s.cancelOne(q.r.Context(), q.account, r)
	}
	return s.itemResults(items, errs), nil
}

type amendReq struct {
	InstID  string `json:"instId"`
	OrdID   string `json:"ordId"`
	ClOrdID string `json:"clOrdId"`
	ReqID   string `json:"reqId"`
	NewSz   string `json:"newSz"`
	NewPx   string `json:"newPx"`
}

func (s *Server) amendOrder(q *request) (result, *apiError) {
	var r amendReq
	if e := q.decode(&r); e != nil {
		return result{}, e
	}
	if s.takeFault(q, r.ClOrdID, r.OrdID, r.ReqID) {
		return result{}, nil
	}
	item := obj{"ordId": r.OrdID, "clOrdId": r.ClOrdID, "reqId": r.ReqID, "ts": ms(s.v.Now())}
	fail := func(e *itemErr) (result, *apiError) { return s.itemResults([]obj{item}, []*itemErr{e}), nil }
	i, ok := s.lookup(r.InstID)
	if !ok {
		return fail(&itemErr{"51001", "Instrument ID, Instrument ID code, or Spread ID doesn't exist."})
	}
	if r.NewSz == "" && r.NewPx == "" {
		return fail(perr("newSz"))
	}
	var p, qty decimal.Decimal
	var err error
	if r.NewPx != "" {
		if p, err = venue.ParseDecimal(r.NewPx); err != nil || !p.IsPositive() {
			return fail(perr("newPx"))
		}
	}
	if r.NewSz != "" {
		if qty, err = i.parseSz(r.NewSz); err != nil {
			if errors.Is(err, venue.ErrPrecision) {
				return fail(&itemErr{"51121", "Order quantity must be a multiple of the lot size."})
			}
			return fail(perr("newSz"))
		}
	}
	o, err := s.v.Amend(q.r.Context(), q.account, i.v.ID, parseID(r.OrdID), r.ClOrdID, p, qty, decimal.Zero)
	if err != nil {
		if errors.Is(err, venue.ErrOrderNotFound) {
			return fail(&itemErr{"51503", "Order modification failed as the order has been filled, canceled or does not exist."})
		}
		c, m := mapErr(err)
		return fail(&itemErr{c, m})
	}
	item["ordId"], item["clOrdId"] = strconv.FormatUint(o.ID, 10), o.ClientID
	return s.itemResults([]obj{item}, []*itemErr{nil}), nil
}

// Order rendering.

func orderState(o venue.Order) string {
	switch o.Status {
	case venue.StatusPartiallyFilled:
		return "partially_filled"
	case venue.StatusFilled:
		return "filled"
	case venue.StatusCanceled, venue.StatusExpired, venue.StatusRejected:
		return "canceled"
	}
	return "live"
}

func ordType(o venue.Order) string {
	if o.Type == venue.Market || o.OrigType != venue.Limit {
		return "market"
	}
	switch o.TIF {
	case venue.PostOnly:
		return "post_only"
	case venue.IOC:
		return "ioc"
	case venue.FOK:
		return "fok"
	}
	return "limit"
}

func posSideName(i *inst, p venue.PositionSide) string {
	if !i.swap {
		return ""
	}
	switch p {
	case venue.PosLong:
		return "long"
	case venue.PosShort:
		return "short"
	}
	return "net"
}

func stpName(m venue.STPMode) string {
	switch m {
	case venue.STPExpireTaker:
		return "cancel_taker"
	case venue.STPExpireBoth:
		return "cancel_both"
	}
	return "cancel_maker"
}

// feeSums totals each order's fees (negative: charged, as OKX signs them) from the account's fills.
func (s *Server) feeSums(acct string) map[uint64]decimal.Decimal {
	fs, _ := s.v.Fills(acct, "", 0)
	m := map[uint64]decimal.Decimal{}
	for _, f := range fs {
		m[f.OrderID] = m[f.OrderID].Sub(f.Fee)
	}
	return m
}

func (s *Server) orderObj(o venue.Order, fee decimal.Decimal, last *venue.Fill) obj {
	i := s.byVenue[o.Instrument]
	feeCcy := i.v.Quote
	if !i.swap && o.Side == venue.Buy {
		feeCcy = i.v.Base
	}
	sz, tgt := i.szString(o.Qty), ""
	if !o.QuoteQty.IsZero() {
		sz, tgt = dec(o.QuoteQty), "quote_ccy"
	}
	lever, td, ccy := "", "cash", ""
	if i.swap {
		td, ccy = "cross", i.v.Quote
		if st, err := s.v.Settings(o.Account, i.v.ID); err == nil {
			lever = strconv.Itoa(st.Leverage)
			if st.Isolated {
				td = "isolated"
			}
		}
	}
	avg := ""
	if o.Filled.IsPositive() {
		avg = dec(o.AvgPrice)
	}
	cancelSource := ""
	if o.Status == venue.StatusCanceled || o.Status == venue.StatusExpired {
		cancelSource = "1"
		if o.Status == venue.StatusExpired {
			cancelSource = "31"
		}
	}
	out := obj{"accFillSz": i.szString(o.Filled), "algoClOrdId": "", "algoId": "", "attachAlgoClOrdId": "",
		"attachAlgoOrds": []any{}, "avgPx": avg, "cTime": ms(o.Created), "cancelSource": cancelSource,
		"cancelSourceReason": o.Reason, "category": "normal", "ccy": ccy, "clOrdId": o.ClientID, "fee": dec(fee),
		"feeCcy": feeCcy, "fillPx": "", "fillSz": "0", "fillTime": "", "instId": i.id, "instType": i.instType(),
		"isTpLimit": "false", "lever": lever, "linkedAlgoOrd": obj{"algoId": ""}, "ordId": strconv.FormatUint(o.ID, 10),
		"ordType": ordType(o), "pnl": "0", "posSide": posSideName(i, o.PositionSide), "px": px(o.Price), "pxType": "",
		"pxUsd": "", "pxVol": "", "quickMgnType": "", "rebate": "0", "rebateCcy": i.v.Quote,
		"reduceOnly": strconv.FormatBool(o.ReduceOnly), "side": side(o.Side), "slOrdPx": "", "slTriggerPx": "",
		"slTriggerPxType": "", "source": "", "state": orderState(o), "stpId": "", "stpMode": stpName(o.STP), "sz": sz,
		"tag": s.tagOf(o.ID), "tdMode": td, "tgtCcy": tgt, "tpOrdPx": "", "tpTriggerPx": "", "tpTriggerPxType": "",
		"tradeId": "", "uTime": ms(o.Updated)}
	if a := s.algoOfOrder(o.ID); a != nil {
		out["algoId"], out["algoClOrdId"] = a.id, a.clID
	}
	if last != nil {
		out["fillPx"], out["fillSz"], out["fillTime"] = dec(last.Price), i.szString(last.Qty), ms(last.Time)
		out["tradeId"] = strconv.FormatUint(last.TradeID, 10)
		out["pnl"] = dec(last.RealizedPnL)
	}
	return out
}

func (s *Server) rememberTag(id uint64, tag string) {
	if tag == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.tags) > 100_000 {
		clear(s.tags)
	}
	s.tags[id] = tag
}

func (s *Server) tagOf(id uint64) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tags[id]
}

func (s *Server) getOrder(q *request) (result, *apiError) {
	i, aerr := s.instParam(q)
	if aerr != nil {
		return result{}, aerr
	}
	id, cl := q.get("ordId"), q.get("clOrdId")
	if id == "" && cl == "" {
		return result{}, errEmpty("ordId")
	}
	o, err := s.v.GetOrder(q.account, parseID(id), cl)
	if err != nil || o.Instrument != i.v.ID {
		return result{}, &apiError{http.StatusOK, "51603", "Order does not exist"}
	}
	return result{data: []obj{s.orderObj(o, s.feeSums(q.account)[o.ID], s.lastFill(q.account, o.ID))}}, nil
}

func (s *Server) lastFill(acct string, id uint64) *venue.Fill {
	fs, _ := s.v.Fills(acct, "", 0)
	for k := len(fs) - 1; k >= 0; k-- {
		if fs[k].OrderID == id {
			return &fs[k]
		}
	}
	return nil
}

// orderFilter reads instType/instId/ordType filters and ordId paging (after: older ids, before: newer).
func (s *Server) filterOrders(q *request, os []venue.Order, needType bool) ([]obj, *apiError) {
	t := strings.ToUpper(q.get("instType"))
	if needType && t == "" {
		return nil, errEmpty("instType")
	}
	var only *inst
	if id := q.get("instId"); id != "" {
		i, ok := s.lookup(id)
		if !ok {
			return nil, errNoInst()
		}
		only = i
	}
	after, before := parseID(q.get("after")), parseID(q.get("before"))
	_, _, limit, aerr := paging(&request{q: map[string][]string{"limit": {q.get("limit")}}}, 100, 100)
	if aerr != nil {
		return nil, aerr
	}
	fees := s.feeSums(q.account)
	ot, state := q.get("ordType"), q.get("state")
	begin, end := msParam(q.get("begin")), msParam(q.get("end"))
	rows := []obj{}
	for k := len(os) - 1; k >= 0 && len(rows) < limit; k-- {
		o := os[k]
		i := s.byVenue[o.Instrument]
		if (t != "" && t != "ANY" && i.instType() != t) || (only != nil && only != i) ||
			(after != 0 && o.ID >= after) || (before != 0 && o.ID <= before) ||
			(begin != 0 && o.Created < begin) || (end != 0 && o.Created > end) {
			continue
		}
		row := s.orderObj(o, fees[o.ID], nil)
		if (ot != "" && row["ordType"] != ot) || (state != "" && row["state"] != state) {
			continue
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func (s *Server) ordersPending(q *request) (result, *apiError) {
	os, err := s.v.OpenOrders(q.account, "")
	if err != nil {
		return result{}, internal(err)
	}
	// Untriggered conditional legs are algo orders on OKX, listed by orders-algo-pending.
	os = slices.DeleteFunc(os, func(o venue.Order) bool { return o.Status == venue.StatusUntriggered })
	slices.SortFunc(os, func(a, b venue.Order) int { return int(a.ID) - int(b.ID) })
	rows, aerr := s.filterOrders(q, os, false)
	return result{data: rows}, aerr
}

func (s *Server) ordersHistory(q *request) (result, *apiError) {
	os, err := s.v.OrderHistory(q.account, "", 0)
	if err != nil {
		return result{}, internal(err)
	}
	slices.SortFunc(os, func(a, b venue.Order) int { return int(a.ID) - int(b.ID) })
	rows, aerr := s.filterOrders(q, os, true)
	return result{data: rows}, aerr
}

func (s *Server) fillObj(f venue.Fill) obj {
	i := s.byVenue[f.Instrument]
	exec := "T"
	if f.Maker {
		exec = "M"
	}
	return obj{"instType": i.instType(), "instId": i.id, "tradeId": strconv.FormatUint(f.TradeID, 10),
		"ordId": strconv.FormatUint(f.OrderID, 10), "clOrdId": f.ClientID, "billId": strconv.FormatUint(f.TradeID, 10),
		"subType": "1", "tag": s.tagOf(f.OrderID), "fillPx": dec(f.Price), "fillSz": i.szString(f.Qty),
		"fillIdxPx": "", "fillPnl": dec(f.RealizedPnL), "fillPxVol": "", "fillPxUsd": "", "fillMarkVol": "",
		"fillFwdPx": "", "fillMarkPx": "", "side": side(f.Side), "posSide": posSideName(i, f.PositionSide),
		"execType": exec, "feeCcy": f.FeeAsset, "fee": dec(f.Fee.Neg()), "ts": ms(f.Time), "fillTime": ms(f.Time)}
}

func (s *Server) fills(q *request) (result, *apiError) {
	fs, err := s.v.Fills(q.account, "", 0)
	if err != nil {
		return result{}, internal(err)
	}
	t := strings.ToUpper(q.get("instType"))
	id, ord := q.get("instId"), q.get("ordId")
	after, before := parseID(q.get("after")), parseID(q.get("before"))
	_, _, limit, aerr := paging(&request{q: map[string][]string{"limit": {q.get("limit")}}}, 100, 100)
	if aerr != nil {
		return result{}, aerr
	}
	begin, end := msParam(q.get("begin")), msParam(q.get("end"))
	rows := []obj{}
	for k := len(fs) - 1; k >= 0 && len(rows) < limit; k-- {
		f := fs[k]
		i := s.byVenue[f.Instrument]
		if (t != "" && i.instType() != t) || (id != "" && i.id != id) ||
			(ord != "" && strconv.FormatUint(f.OrderID, 10) != ord) ||
			(after != 0 && f.TradeID >= after) || (before != 0 && f.TradeID <= before) ||
			(begin != 0 && f.Time < begin) || (end != 0 && f.Time > end) {
			continue
		}
		rows = append(rows, s.fillObj(f))
	}
	return result{data: rows}, nil
}

// Positions and account.

func (s *Server) positionObj(p venue.Position) obj {
	i := s.byVenue[p.Instrument]
	mode := "cross"
	if p.Isolated {
		mode = "isolated"
	}
	pos := i.toWire(p.Qty)
	avail := pos.Abs()
	if p.Side != venue.PosBoth {
		avail = pos
	}
	uplRatio := decimal.Zero
	if p.Margin.IsPositive() {
		uplRatio = p.UnrealizedPnL.DivRound(p.Margin, 8)
	}
	last, _ := s.v.LastPrice(i.v.ID)
	m, _ := s.v.Mark(i.v.ID)
	margin, imr := "", dec(p.Margin)
	if p.Isolated {
		margin, imr = dec(p.Margin), ""
	}
	// OKX's mgnRatio is margin balance over maintenance margin (liquidation at 1): the inverse of the venue's.
	mgnRatio := ""
	if p.MarginRatio.IsPositive() {
		mgnRatio = dec(decimal.NewFromInt(1).DivRound(p.MarginRatio, 8))
	}
	return obj{"adl": "1", "availPos": dec(avail), "avgPx": dec(p.EntryPrice), "bePx": dec(p.BreakEven),
		"cTime": ms(p.Updated), "ccy": i.v.Quote, "fee": "0", "fundingFee": "0", "idxPx": dec(m.Index),
		"imr": imr, "instId": i.id, "instType": "SWAP", "interest": "", "last": dec(last), "lever": strconv.Itoa(p.Leverage),
		"liab": "", "liabCcy": "", "liqPenalty": "0", "liqPx": px(p.LiqPrice), "margin": margin, "markPx": dec(p.MarkPrice),
		"mgnMode": mode, "mgnRatio": mgnRatio, "mmr": dec(p.MaintMargin), "notionalUsd": dec(p.Notional),
		"optVal": "", "pendingCloseOrdLiabVal": "", "pnl": dec(p.RealizedPnL), "pos": dec(pos), "posCcy": "",
		"posId": strconv.FormatUint(uint64(instIDCode(i))*10+uint64(p.Side), 10), "posSide": posSideName(i, p.Side),
		"realizedPnl": dec(p.RealizedPnL), "tradeId": "", "uTime": ms(p.Updated), "upl": dec(p.UnrealizedPnL),
		"uplLastPx": dec(p.UnrealizedPnL), "uplRatio": dec(uplRatio), "uplRatioLastPx": dec(uplRatio), "usdPx": ""}
}

func (s *Server) positions(q *request) (result, *apiError) {
	t := strings.ToUpper(q.get("instType"))
	if t != "" && t != "SWAP" {
		if t == "SPOT" || t == "MARGIN" || t == "FUTURES" || t == "OPTION" {
			return result{data: []obj{}}, nil
		}
		return result{}, errParam("instType")
	}
	ps, err := s.v.Positions(q.account)
	if err != nil {
		return result{}, internal(err)
	}
	ids := q.get("instId")
	rows := []obj{}
	for _, p := range ps {
		o := s.positionObj(p)
		if ids != "" && !slices.Contains(strings.Split(ids, ","), o["instId"].(string)) {
			continue
		}
		rows = append(rows, o)
	}
	return result{data: rows}, nil
}

// usdPrice values one unit of a coin in USDT (the spot last price; 1 for USDT).
func (s *Server) usdPrice(ccy string) decimal.Decimal {
	if ccy == "USDT" {
		return decimal.NewFromInt(1)
	}
	if i, ok := s.spotOf(ccy); ok {
		if p, err := s.v.LastPrice(i.v.ID); err == nil {
			return p
		}
	}
	return decimal.Zero
}

// accountObj is the trading account: balances per coin with USDT-margined upl and margins on USDT.
func (s *Server) accountObj(acct string, only func(string) bool) (obj, error) {
	bs, err := s.v.Balances(acct, venue.TradingWallet)
	if err != nil {
		return nil, err
	}
	ps, err := s.v.Positions(acct)
	if err != nil {
		return nil, err
	}
	upl, imr, mmr, iso := decimal.Zero, decimal.Zero, decimal.Zero, decimal.Zero
	for _, p := range ps {
		upl = upl.Add(p.UnrealizedPnL)
		mmr = mmr.Add(p.MaintMargin)
		if p.Isolated {
			iso = iso.Add(p.Margin).Add(p.UnrealizedPnL)
		} else {
			imr = imr.Add(p.Margin)
		}
	}
	now := ms(s.v.Now())
	total, ordFroz := decimal.Zero, decimal.Zero
	details := []obj{}
	for _, b := range bs {
		eq := b.Total
		var cUpl, cIso, cImr, cMmr decimal.Decimal
		if b.Asset == "USDT" {
			cUpl, cIso, cImr, cMmr = upl, iso, imr, mmr
			eq = eq.Add(upl)
		}
		usd := s.usdPrice(b.Asset)
		eqUsd := eq.Mul(usd)
		total = total.Add(eqUsd)
		ordFroz = ordFroz.Add(b.Locked.Mul(usd))
		if only != nil && !only(b.Asset) {
			continue
		}
		details = append(details, obj{"availBal": dec(b.Free), "availEq": dec(b.Free), "borrowFroz": "",
			"cashBal": dec(b.Total), "ccy": b.Asset, "crossLiab": "", "disEq": dec(eqUsd), "eq": dec(eq),
			"eqUsd": dec(eqUsd), "fixedBal": "0", "frozenBal": dec(b.Locked), "imr": dec(cImr), "interest": "",
			"isoEq": dec(cIso), "isoLiab": "", "isoUpl": "0", "liab": "", "maxLoan": "", "mgnRatio": "",
			"mmr": dec(cMmr), "notionalLever": "0", "ordFrozen": dec(b.Locked), "spotInUseAmt": "",
			"stgyEq": "0", "twap": "0", "uTime": now, "upl": dec(cUpl), "uplLiab": ""})
	}
	mgnRatio := ""
	if mmr.IsPositive() {
		mgnRatio = dec(total.DivRound(mmr, 8))
	}
	return obj{"adjEq": dec(total), "availEq": "", "borrowFroz": "", "details": details, "imr": dec(imr),
		"isoEq": dec(iso), "mgnRatio": mgnRatio, "mmr": dec(mmr), "notionalUsd": "", "ordFroz": dec(ordFroz),
		"totalEq": dec(total), "uTime": now, "upl": dec(upl)}, nil
}

func (s *Server) balance(q *request) (result, *apiError) {
	var only func(string) bool
	if c := q.get("ccy"); c != "" {
		set := strings.Split(strings.ToUpper(c), ",")
		only = func(a string) bool { return slices.Contains(set, a) }
	}
	o, err := s.accountObj(q.account, only)
	if err != nil {
		return result{}, internal(err)
	}
	return result{data: []obj{o}}, nil
}

func (s *Server) swapInst(id string) (*inst, *apiError) {
	i, ok := s.lookup(id)
	if !ok {
		return nil, errNoInst()
	}
	if !i.swap {
		return nil, errParam("instId")
	}
	return i, nil
}

func (s *Server) setLeverage(q *request) (result, *apiError) {
	var r struct {
		InstID  string `json:"instId"`
		Lever   string `json:"lever"`
		MgnMode string `json:"mgnMode"`
		PosSide string `json:"posSide"`
	}
	if e := q.decode(&r); e != nil {
		return result{}, e
	}
	if r.InstID == "" {
		return result{}, errEmpty("instId")
	}
	i, aerr := s.swapInst(r.InstID)
	if aerr != nil {
		return result{}, aerr
	}
	lev, err := strconv.ParseFloat(r.Lever, 64)
	if err != nil || lev < 1 || lev != float64(int(lev)) {
		return result{}, errParam("lever")
	}
	if r.MgnMode == "isolated" && s.posMode(q.account) == "long_short_mode" && r.PosSide != "long" && r.PosSide != "short" {
		// OKX: isolated leverage in long/short mode is per side.
		return result{}, &apiError{http.StatusOK, "51000", "Parameter posSide error"}
	}
	if e := s.applyTdMode(q.account, i, r.MgnMode); e != nil {
		return result{}, &apiError{http.StatusOK, e.code, e.msg}
	}
	if err := s.v.SetLeverage(q.account, i.v.ID, int(lev)); err != nil {
		return result{}, bizErr(err)
	}
	return result{data: []obj{{"lever": strconv.Itoa(int(lev)), "mgnMode": r.MgnMode, "instId": i.id,
		"posSide": r.PosSide}}}, nil
}

func (s *Server) leverageInfo(q *request) (result, *apiError) {
	mode := q.get("mgnMode")
	if mode == "" {
		return result{}, errEmpty("mgnMode")
	}
	if q.get("instId") == "" {
		return result{}, errEmpty("instId")
	}
	rows := []obj{}
	for _, id := range strings.Split(q.get("instId"), ",") {
		i, aerr := s.swapInst(id)
		if aerr != nil {
			return result{}, aerr
		}
		st, err := s.v.Settings(q.account, i.v.ID)
		if err != nil {
			return result{}, internal(err)
		}
		sides := []string{"net"}
		if st.Hedge && mode == "isolated" {
			sides = []string{"long", "short"}
		}
		for _, ps := range sides {
			rows = append(rows, obj{"instId": i.id, "mgnMode": mode, "posSide": ps, "lever": strconv.Itoa(st.Leverage)})
		}
	}
	return result{data: rows}, nil
}

func (s *Server) anySwap() *inst {
	for _, i := range s.insts {
		if i.swap {
			return i
		}
	}
	return nil
}

func (s *Server) posMode(acct string) string {
	if i := s.anySwap(); i != nil {
		if st, err := s.v.Settings(acct, i.v.ID); err == nil && st.Hedge {
			return "long_short_mode"
		}
	}
	return "net_mode"
}

func (s *Server) setPositionMode(q *request) (result, *apiError) {
	var r struct {
		PosMode string `json:"posMode"`
	}
	if e := q.decode(&r); e != nil {
		return result{}, e
	}
	if r.PosMode != "long_short_mode" && r.PosMode != "net_mode" {
		return result{}, errParam("posMode")
	}
	if err := s.v.SetPositionMode(q.account, r.PosMode == "long_short_mode"); err != nil {
		return result{}, bizErr(err)
	}
	return result{data: []obj{{"posMode": r.PosMode}}}, nil
}

func (s *Server) accountConfig(q *request) (result, *apiError) {
	uid := strconv.FormatUint(uint64(crc32Of(q.account)), 10)
	return result{data: []obj{{"ip": strings.Join(q.key.IPs, ","), "perm": q.key.perm(), "acctLv": "2", "acctStpMode": "cancel_maker", "autoLoan": false, "ctIsoMode": "automatic",
		"enableSpotBorrow": false, "greeksType": "PA", "kycLv": "1", "label": "exhub-demo", "level": "Lv1",
		"levelTmp": "", "liquidationGear": "-1", "mainUid": uid, "mgnIsoMode": "automatic", "opAuth": "0",
		"posMode": s.posMode(q.account), "roleType": "0", "spotBorrowAutoRepay": false, "spotOffsetType": "",
		"spotRoleType": "0", "spotTraderInsts": []any{}, "traderInsts": []any{}, "type": "0", "uid": uid}}}, nil
}

func (s *Server) maxSize(q *request) (result, *apiError) {
	if q.get("instId") == "" {
		return result{}, errEmpty("instId")
	}
	td := q.get("tdMode")
	if td == "" {
		return result{}, errEmpty("tdMode")
	}
	rows := []obj{}
	for _, id := range strings.Split(q.get("instId"), ",") {
		i, ok := s.lookup(id)
		if !ok {
			return result{}, errNoInst()
		}
		price, _ := s.v.LastPrice(i.v.ID)
		if p := q.get("px"); p != "" {
			d, err := venue.ParseDecimal(p)
			if err != nil || !d.IsPositive() {
				return result{}, errParam("px")
			}
			price = d
		}
		bs, err := s.v.Balances(q.account, venue.TradingWallet)
		if err != nil {
			return result{}, internal(err)
		}
		free := map[string]decimal.Decimal{}
		for _, b := range bs {
			free[b.Asset] = b.Free
		}
		floor := func(base decimal.Decimal) string {
			lots := base.Div(i.v.StepSize).Floor()
			return i.szString(lots.Mul(i.v.StepSize))
		}
		var buy, sell string
		if i.swap {
			st, err := s.v.Settings(q.account, i.v.ID)
			if err != nil {
				return result{}, internal(err)
			}
			perUnit := price.Div(decimal.NewFromInt(int64(st.Leverage))).Add(price.Mul(i.v.TakerFee))
			base := free[i.v.Quote].DivRound(perUnit, 12)
			buy, sell = floor(base), floor(base)
		} else {
			buy = floor(free[i.v.Quote].DivRound(price.Mul(decimal.NewFromInt(1).Add(i.v.TakerFee)), 12))
			sell = floor(free[i.v.Base])
		}
		rows = append(rows, obj{"instId": i.id, "ccy": i.v.Quote, "maxBuy": buy, "maxSell": sell})
	}
	return result{data: rows}, nil
}

func (s *Server) closePosition(q *request) (result, *apiError) {
	var r struct {
		InstID  string   `json:"instId"`
		PosSide string   `json:"posSide"`
		MgnMode string   `json:"mgnMode"`
		AutoCxl flexBool `json:"autoCxl"`
		ClOrdID string   `json:"clOrdId"`
		Tag     string   `json:"tag"`
	}
	if e := q.decode(&r); e != nil {
		return result{}, e
	}
	if s.takeFault(q, r.ClOrdID) {
		return result{}, nil
	}
	i, aerr := s.swapInst(r.InstID)
	if aerr != nil {
		return result{}, aerr
	}
	ps, ok := venuePosSide(r.PosSide)
	if !ok {
		return result{}, errParam("posSide")
	}
	positions, err := s.v.Positions(q.account)
	if err != nil {
		return result{}, internal(err)
	}
	var pos *venue.Position
	for k := range positions {
		if positions[k].Instrument == i.v.ID && positions[k].Side == ps {
			pos = &positions[k]
		}
	}
	if pos == nil || pos.Qty.IsZero() {
		return result{}, &apiError{http.StatusOK, "51023", "Position does not exist"}
	}
	if r.AutoCxl {
		if _, err := s.v.CancelAll(q.r.Context(), q.account, i.v.ID); err != nil {
			return result{}, bizErr(err)
		}
	}
	sd := venue.Sell
	if pos.Qty.IsNegative() || ps == venue.PosShort {
		sd = venue.Buy
	}
	_, err = s.v.Place(q.r.Context(), venue.OrderRequest{Account: q.account, Instrument: i.v.ID, ClientID: r.ClOrdID,
		// In hedge mode the position side makes the order closing; the venue refuses an explicit reduce-only there.
		Side: sd, Type: venue.Market, Qty: pos.Qty.Abs(), ReduceOnly: ps == venue.PosBoth, PositionSide: ps})
	if err != nil {
		return result{}, bizErr(err)
	}
	return result{data: []obj{{"instId": i.id, "posSide": r.PosSide, "clOrdId": r.ClOrdID, "tag": r.Tag}}}, nil
}

// msParam reads a begin/end filter in Unix ms (0 when absent or unreadable).
func msParam(v string) int64 {
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}

func crc32Of(s string) uint32 { return crc32.ChecksumIEEE([]byte(s)) }
