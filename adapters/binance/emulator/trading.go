package emulator

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
)

func (s *Server) tradingRoutes(mux *http.ServeMux) {
	sp := func(sec security, weight int, fn func(*req) (any, error)) route {
		return route{sec: sec, weight: weight, fn: fn}
	}
	fu := func(sec security, weight int, fn func(*req) (any, error)) route {
		return route{futures: true, sec: sec, weight: weight, fn: fn}
	}
	// Spot trading.
	s.handle(mux, "POST /api/v3/order", route{sec: secSigned, weight: 1, orders: true, clientIDs: paramIDs("newClientOrderId"), fn: s.spotNewOrder})
	s.handle(mux, "POST /api/v3/order/test", sp(secSigned, 1, s.spotTestOrder))
	s.handle(mux, "GET /api/v3/order", sp(secSigned, 4, s.spotGetOrder))
	s.handle(mux, "DELETE /api/v3/order", route{sec: secSigned, weight: 1, clientIDs: paramIDs("origClientOrderId", "orderId"), fn: s.spotCancel})
	s.handle(mux, "PUT /api/v3/order/amend/keepPriority", route{sec: secSigned, weight: 4, clientIDs: paramIDs("origClientOrderId", "orderId"), fn: s.spotAmendKeepPriority})
	s.handle(mux, "POST /api/v3/order/cancelReplace", route{sec: secSigned, weight: 1, orders: true,
		clientIDs: paramIDs("newClientOrderId", "cancelOrigClientOrderId", "cancelOrderId"), fn: s.spotCancelReplace})
	s.handle(mux, "DELETE /api/v3/openOrders", sp(secSigned, 1, s.spotCancelAll))
	s.handle(mux, "GET /api/v3/openOrders", route{sec: secSigned, weightOf: allSymbols(6, 80), fn: s.openOrders})
	s.handle(mux, "GET /api/v3/allOrders", sp(secSigned, 20, s.allOrders))
	s.handle(mux, "GET /api/v3/myTrades", sp(secSigned, 20, s.myTrades))
	s.handle(mux, "GET /api/v3/account", sp(secSigned, 20, s.spotAccount))
	s.handle(mux, "POST /api/v3/userDataStream", sp(secAPIKey, 2, s.newListenKey))
	s.handle(mux, "PUT /api/v3/userDataStream", sp(secAPIKey, 2, s.keepListenKey))
	s.handle(mux, "DELETE /api/v3/userDataStream", sp(secAPIKey, 2, s.deleteListenKey))
	// Futures trading.
	s.handle(mux, "POST /fapi/v1/order", route{futures: true, sec: secSigned, orders: true, clientIDs: paramIDs("newClientOrderId", "clientAlgoId"), fn: s.futNewOrder})
	s.handle(mux, "POST /fapi/v1/order/test", fu(secSigned, 0, s.futTestOrder))
	s.handle(mux, "PUT /fapi/v1/order", route{futures: true, sec: secSigned, weight: 1, clientIDs: paramIDs("origClientOrderId", "orderId"), fn: s.futAmend})
	s.handle(mux, "GET /fapi/v1/order", fu(secSigned, 1, s.futGetOrder))
	s.handle(mux, "DELETE /fapi/v1/order", route{futures: true, sec: secSigned, weight: 1, clientIDs: paramIDs("origClientOrderId", "orderId"), fn: s.futCancel})
	s.handle(mux, "POST /fapi/v1/batchOrders", route{futures: true, sec: secSigned, weight: 5, orders: true, clientIDs: batchIDs, fn: s.futBatchNew})
	s.handle(mux, "PUT /fapi/v1/batchOrders", fu(secSigned, 5, s.futBatchAmend))
	s.handle(mux, "DELETE /fapi/v1/batchOrders", fu(secSigned, 1, s.futBatchCancel))
	s.handle(mux, "DELETE /fapi/v1/allOpenOrders", fu(secSigned, 1, s.futCancelAll))
	s.handle(mux, "POST /fapi/v1/countdownCancelAll", fu(secSigned, 10, s.countdownCancelAll))
	s.handle(mux, "GET /fapi/v1/openOrder", fu(secSigned, 1, s.futOpenOrder))
	s.handle(mux, "GET /fapi/v1/openOrders", route{futures: true, sec: secSigned, weightOf: allSymbols(1, 40), fn: s.openOrders})
	s.handle(mux, "GET /fapi/v1/allOrders", fu(secSigned, 5, s.allOrders))
	s.handle(mux, "GET /fapi/v1/userTrades", fu(secSigned, 5, s.myTrades))
	s.handle(mux, "POST /fapi/v1/leverage", fu(secSigned, 1, s.futLeverage))
	s.handle(mux, "POST /fapi/v1/marginType", fu(secSigned, 1, s.futMarginType))
	s.handle(mux, "POST /fapi/v1/positionSide/dual", fu(secSigned, 1, s.futSetDual))
	s.handle(mux, "GET /fapi/v1/positionSide/dual", fu(secSigned, 30, s.futGetDual))
	s.handle(mux, "GET /fapi/v1/leverageBracket", fu(secSigned, 1, s.futBrackets))
	s.handle(mux, "GET /fapi/v1/symbolConfig", fu(secSigned, 5, s.futSymbolConfig))
	s.handle(mux, "GET /fapi/v2/positionRisk", fu(secSigned, 5, s.positionRisk(2)))
	s.handle(mux, "GET /fapi/v3/positionRisk", fu(secSigned, 5, s.positionRisk(3)))
	s.handle(mux, "GET /fapi/v2/balance", fu(secSigned, 5, s.futBalance))
	s.handle(mux, "GET /fapi/v3/balance", fu(secSigned, 5, s.futBalance))
	s.handle(mux, "GET /fapi/v2/account", fu(secSigned, 5, s.futAccount(2)))
	s.handle(mux, "GET /fapi/v3/account", fu(secSigned, 5, s.futAccount(3)))
	s.handle(mux, "POST /fapi/v1/listenKey", fu(secAPIKey, 1, s.newListenKey))
	s.handle(mux, "PUT /fapi/v1/listenKey", fu(secAPIKey, 1, s.keepListenKey))
	s.handle(mux, "DELETE /fapi/v1/listenKey", fu(secAPIKey, 1, s.deleteListenKey))
	s.walletRoutes(mux)
	s.incomeRoutes(mux)
}

// ---- enums

func typeName(futures bool, t venue.OrderType, tif venue.TimeInForce) string {
	switch t {
	case venue.Limit:
		if !futures && tif == venue.PostOnly {
			return "LIMIT_MAKER"
		}
		return "LIMIT"
	case venue.Market:
		return "MARKET"
	case venue.StopMarket:
		if futures {
			return "STOP_MARKET"
		}
		return "STOP_LOSS"
	case venue.StopLimit:
		if futures {
			return "STOP"
		}
		return "STOP_LOSS_LIMIT"
	case venue.TakeProfitMarket:
		if futures {
			return "TAKE_PROFIT_MARKET"
		}
		return "TAKE_PROFIT"
	case venue.TakeProfitLimit:
		if futures {
			return "TAKE_PROFIT"
		}
		return "TAKE_PROFIT_LIMIT"
	}
	return "UNKNOWN"
}

func parseType(futures bool, s string) (venue.OrderType, bool, bool) {
	// returns type, post-only (LIMIT_MAKER), ok
	if futures {
		switch s {
		case "LIMIT":
			return venue.Limit, false, true
		case "MARKET":
			return venue.Market, false, true
		case "STOP":
			return venue.StopLimit, false, true
		case "STOP_MARKET":
			return venue.StopMarket, false, true
		case "TAKE_PROFIT":
			return venue.TakeProfitLimit, false, true
		case "TAKE_PROFIT_MARKET":
			return venue.TakeProfitMarket, false, true
		}
		return 0, false, false
	}
	switch s {
	case "LIMIT":
		return venue.Limit, false, true
	case "LIMIT_MAKER":
		return venue.Limit, true, true
	case "MARKET":
		return venue.Market, false, true
	case "STOP_LOSS":
		return venue.StopMarket, false, true
	case "STOP_LOSS_LIMIT":
		return venue.StopLimit, false, true
	case "TAKE_PROFIT":
		return venue.TakeProfitMarket, false, true
	case "TAKE_PROFIT_LIMIT":
		return venue.TakeProfitLimit, false, true
	}
	return 0, false, false
}

func origType(o venue.Order) venue.OrderType {
	if o.OrigType != 0 {
		return o.OrigType
	}
	return o.Type
}

func tifName(futures bool, typ venue.OrderType, t venue.TimeInForce) string {
	if typ == venue.Market || typ == venue.StopMarket || typ == venue.TakeProfitMarket {
		return "GTC"
	}
	switch t {
	case venue.IOC:
		return "IOC"
	case venue.FOK:
		return "FOK"
	case venue.PostOnly:
		if futures {
			return "GTX"
		}
	}
	return "GTC"
}

func statusOf(futures bool, o venue.Order) string {
	switch o.Status {
	case venue.StatusNew, venue.StatusUntriggered:
		return "NEW"
	case venue.StatusPartiallyFilled:
		return "PARTIALLY_FILLED"
	case venue.StatusFilled:
		return "FILLED"
	case venue.StatusCanceled:
		return "CANCELED"
	case venue.StatusExpired:
		if !futures && o.Reason == "self-trade prevention" {
			return "EXPIRED_IN_MATCH"
		}
		return "EXPIRED"
	case venue.StatusRejected:
		return "REJECTED"
	}
	return "NEW"
}

func sideName(s venue.Side) string {
	if s == venue.Sell {
		return "SELL"
	}
	return "BUY"
}

func posSideName(p venue.PositionSide) string {
	switch p {
	case venue.PosLong:
		return "LONG"
	case venue.PosShort:
		return "SHORT"
	}
	return "BOTH"
}

func stpName(m venue.STPMode) string {
	switch m {
	case venue.STPExpireMaker:
		return "EXPIRE_MAKER"
	case venue.STPExpireBoth:
		return "EXPIRE_BOTH"
	case venue.STPNone:
		return "NONE"
	}
	return "EXPIRE_TAKER"
}

func parseSTP(s string) (venue.STPMode, bool) {
	switch s {
	case "", "EXPIRE_MAKER":
		return venue.STPExpireMaker, true
	case "EXPIRE_TAKER":
		return venue.STPExpireTaker, true
	case "EXPIRE_BOTH":
		return venue.STPExpireBoth, true
	case "NONE":
		return venue.STPNone, true
	}
	return 0, false
}

func workingTypeName(t venue.TriggerPrice) string {
	if t == venue.TriggerMark {
		return "MARK_PRICE"
	}
	return "CONTRACT_PRICE"
}

const idAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// randomID returns n random alphanumeric characters (client order ids, listen keys).
func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = idAlphabet[int(b[i])%len(idAlphabet)]
	}
	return string(b)
}

// decimalParam parses an optional positive decimal parameter (zero when absent).
func (q *req) decimalParam(name string) (decimal.Decimal, error) {
	s := q.str(name)
	if s == "" {
		return decimal.Zero, nil
	}
	d, err := venue.ParseDecimal(s)
	if err != nil || d.IsNegative() {
		return decimal.Zero, errf(http.StatusBadRequest, codeIllegalChars,
			"Illegal characters found in parameter '%s'; legal range is '^([0-9]{1,20})(\\.[0-9]{1,20})?$'.", name)
	}
	return d, nil
}

// ---- order views

type spotOrder struct {
	Symbol                  string      `json:"symbol"`
	OrigClientOrderID       *string     `json:"origClientOrderId,omitempty"`
	OrderID                 uint64      `json:"orderId"`
	OrderListID             int         `json:"orderListId"`
	ClientOrderID           string      `json:"clientOrderId"`
	TransactTime            *int64      `json:"transactTime,omitempty"`
	Price                   string      `json:"price"`
	OrigQty                 string      `json:"origQty"`
	ExecutedQty             string      `json:"executedQty"`
	CummulativeQuoteQty     string      `json:"cummulativeQuoteQty"`
	Status                  string      `json:"status"`
	TimeInForce             string      `json:"timeInForce"`
	Type                    string      `json:"type"`
	Side                    string      `json:"side"`
	StopPrice               *string     `json:"stopPrice,omitempty"`
	IcebergQty              *string     `json:"icebergQty,omitempty"`
	Time                    *int64      `json:"time,omitempty"`
	UpdateTime              *int64      `json:"updateTime,omitempty"`
	IsWorking               *bool       `json:"isWorking,omitempty"`
	WorkingTime             *int64      `json:"workingTime,omitempty"`
	OrigQuoteOrderQty       string      `json:"origQuoteOrderQty"`
	SelfTradePreventionMode string      `json:"selfTradePreventionMode"`
	Fills                   *[]spotFill `json:"fills,omitempty"`
}

type spotFill struct {
	Price           string `json:"price"`
	Qty             string `json:"qty"`
	Commission      string `json:"commission"`
	CommissionAsset string `json:"commissionAsset"`
	TradeID         uint64 `json:"tradeId"`
}

type spotView uint8

const (
	viewResult spotView = iota // POST RESULT / FULL
	viewQuery                  // GET order, open orders, all orders
	viewCancel                 // DELETE
)

func (s *Server) spotOrderView(o venue.Order, kind spotView) spotOrder {
	out := spotOrder{Symbol: s.native[o.Instrument], OrderID: o.ID, OrderListID: -1, ClientOrderID: o.ClientID,
		Price: fix8(o.Price), OrigQty: fix8(o.Qty), ExecutedQty: fix8(o.Filled), CummulativeQuoteQty: fix8(o.CumQuote),
		Status: statusOf(false, o), TimeInForce: tifName(false, origType(o), o.TIF), Type: typeName(false, origType(o), o.TIF),
		Side: sideName(o.Side), OrigQuoteOrderQty: fix8(o.QuoteQty), SelfTradePreventionMode: stpName(o.STP)}
	if o.QuoteQty.IsPositive() && o.Status.Final() {
		out.OrigQty = fix8(o.Filled)
	}
	working := o.Created
	if o.Status == venue.StatusUntriggered {
		working = -1
	}
	conditional := origType(o) != venue.Limit && origType(o) != venue.Market
	switch kind {
	case viewResult:
		t := o.Updated
		out.TransactTime, out.WorkingTime = &t, &working
		if conditional {
			sp := fix8(o.StopPrice)
			out.StopPrice = &sp
		}
	case viewQuery:
		sp, ice := fix8(o.StopPrice), fix8(decimal.Zero)
		created, updated := o.Created, o.Updated
		isWorking := o.Status != venue.StatusUntriggered
		out.StopPrice, out.IcebergQty, out.Time, out.UpdateTime, out.IsWorking, out.WorkingTime =
			&sp, &ice, &created, &updated, &isWorking, &working
	case viewCancel:
		t := o.Updated
		out.TransactTime = &t
		if conditional {
			sp := fix8(o.StopPrice)
			out.StopPrice = &sp
		}
	}
	return out
}

type futOrder struct {
	OrderID                 uint64 `json:"orderId"`
	Symbol                  string `json:"symbol"`
	Status                  string `json:"status"`
	ClientOrderID           string `json:"clientOrderId"`
	Price                   string `json:"price"`
	AvgPrice                string `json:"avgPrice"`
	OrigQty                 string `json:"origQty"`
	ExecutedQty             string `json:"executedQty"`
	CumQty                  string `json:"cumQty"`
	CumQuote                string `json:"cumQuote"`
	TimeInForce             string `json:"timeInForce"`
	Type                    string `json:"type"`
	ReduceOnly              bool   `json:"reduceOnly"`
	ClosePosition           bool   `json:"closePosition"`
	Side                    string `json:"side"`
	PositionSide            string `json:"positionSide"`
	StopPrice               string `json:"stopPrice"`
	WorkingType             string `json:"workingType"`
	PriceProtect            bool   `json:"priceProtect"`
	OrigType                string `json:"origType"`
	PriceMatch              string `json:"priceMatch"`
	SelfTradePreventionMode string `json:"selfTradePreventionMode"`
	GoodTillDate            int64  `json:"goodTillDate"`
	Time                    *int64 `json:"time,omitempty"`
	UpdateTime              int64  `json:"updateTime"`
}

func (s *Server) futOrderView(o venue.Order, withTime bool) futOrder {
	in := s.byID[o.Instrument]
	ps, qs := in.PriceScale(), in.QtyScale()
	ot := typeName(true, origType(o), o.TIF)
	out := futOrder{OrderID: o.ID, Symbol: s.native[o.Instrument], Status: statusOf(true, o), ClientOrderID: o.ClientID,
		Price: o.Price.StringFixed(ps), AvgPrice: o.AvgPrice.StringFixed(ps), OrigQty: o.Qty.StringFixed(qs),
		ExecutedQty: o.Filled.StringFixed(qs), CumQty: o.Filled.StringFixed(qs), CumQuote: o.CumQuote.StringFixed(8),
		TimeInForce: tifName(true, origType(o), o.TIF), Type: ot, ReduceOnly: o.ReduceOnly, ClosePosition: o.ClosePosition,
		Side: sideName(o.Side), PositionSide: posSideName(o.PositionSide), StopPrice: o.StopPrice.StringFixed(ps),
		WorkingType: workingTypeName(o.TriggerBy), OrigType: ot, PriceMatch: s.pm.get(o.ID),
		SelfTradePreventionMode: stpName(o.STP), UpdateTime: o.Updated}
	if at, expired, ok := s.gtdOf(o.ID); ok {
		out.TimeInForce, out.GoodTillDate = "GTD", at
		if expired {
			out.Status = "EXPIRED"
		}
	}
	if withTime {
		t := o.Created
		out.Time = &t
	}
	return out
}

// ---- placing

// orderRequest builds a venue order from Binance parameters (a map so batch orders can use it too).
func (s *Server) orderRequest(futures bool, account string, get func(string) string) (venue.OrderRequest, string, error) {
	q := &req{p: map[string][]string{}, futures: futures}
	for _, k := range []string{"symbol", "side", "type", "timeInForce", "quantity", "quoteOrderQty", "price",
		"newClientOrderId", "stopPrice", "reduceOnly", "closePosition", "positionSide", "workingType",
		"selfTradePreventionMode", "newOrderRespType", "priceProtect", "goodTillDate", "priceMatch"} {
		if v := get(k); v != "" {
			q.p.Set(k, v)
		}
	}
	in, err := s.symbolParam(q)
	if err != nil {
		return venue.OrderRequest{}, "", err
	}
	r := venue.OrderRequest{Account: account, Instrument: in.ID, ClientID: q.str("newClientOrderId")}
	switch q.str("side") {
	case "BUY":
		r.Side = venue.Buy
	case "SELL":
		r.Side = venue.Sell
	case "":
		return r, "", badParam("side")
	default:
		return r, "", errf(http.StatusBadRequest, codeInvalidSide, "Invalid side.")
	}
	if q.str("type") == "" {
		return r, "", badParam("type")
	}
	typ, maker, ok := parseType(futures, q.str("type"))
	if !ok {
		return r, "", errf(http.StatusBadRequest, codeInvalidOrderType, "Invalid orderType.")
	}
	r.Type = typ
	limitLike := typ == venue.Limit || typ == venue.StopLimit || typ == venue.TakeProfitLimit
	if r.Qty, err = q.decimalParam("quantity"); err != nil {
		return r, "", err
	}
	if r.Price, err = q.decimalParam("price"); err != nil {
		return r, "", err
	}
	if r.StopPrice, err = q.decimalParam("stopPrice"); err != nil {
		return r, "", err
	}
	if !futures {
		if r.QuoteQty, err = q.decimalParam("quoteOrderQty"); err != nil {
			return r, "", err
		}
	}
	if pm := q.str("priceMatch"); futures && pm != "" && pm != "NONE" {
		// priceMatch prices a LIMIT order from the book (pricematch.go); it is never sent with a price.
		if _, _, ok := parsePriceMatch(pm); !ok {
			return r, "", illegal("priceMatch")
		}
		if typ != venue.Limit {
			return r, "", errf(http.StatusBadRequest, -1106, "Parameter 'priceMatch' sent when not required.")
		}
		if !r.Price.IsZero() {
			return r, "", errf(http.StatusBadRequest, -1106, "Parameter 'price' sent when not required.")
		}
	} else if limitLike && r.Price.IsZero() {
		return r, "", badParam("price")
	}
	if typ != venue.Limit && typ != venue.Market && r.StopPrice.IsZero() {
		return r, "", badParam("stopPrice")
	}
	if maker {
		r.TIF = venue.PostOnly
	} else if limitLike {
		switch q.str("timeInForce") {
		case "GTC":
			r.TIF = venue.GTC
		case "IOC":
			r.TIF = venue.IOC
		case "FOK":
			r.TIF = venue.FOK
		case "GTX":
			if !futures {
				return r, "", errf(http.StatusBadRequest, codeInvalidTIF, "Invalid timeInForce.")
			}
			r.TIF = venue.PostOnly
		case "GTD":
			// Rests as GTC; the emulator cancels it at goodTillDate (at least 600 s ahead, as on Binance).
			if !futures {
				return r, "", errf(http.StatusBadRequest, codeInvalidTIF, "Invalid timeInForce.")
			}
			gtd, err := q.int64Param("goodTillDate", 0)
			if err != nil || gtd == 0 {
				return r, "", badParam("goodTillDate")
			}
			if gtd < s.v.Now()+600_000 {
				return r, "", errf(http.StatusBadRequest, -4500, "goodTillDate must be at least 600 seconds after now.")
			}
			r.TIF = venue.GTC
		case "":
			if futures && typ != venue.Limit {
				r.TIF = venue.GTC
			} else {
				return r, "", badParam("timeInForce")
			}
		default:
			return r, "", errf(http.StatusBadRequest, codeInvalidTIF, "Invalid timeInForce.")
		}
	}
	stp, ok := parseSTP(q.str("selfTradePreventionMode"))
	if !ok {
		return r, "", illegal("selfTradePreventionMode")
	}
	r.STP = stp
	if futures {
		hedge := false
		if st, err := s.v.Settings(account, in.ID); err == nil {
			hedge = st.Hedge
		}
		switch q.str("positionSide") {
		case "", "BOTH":
			r.PositionSide = venue.PosBoth
			if hedge {
				return r, "", errf(http.StatusBadRequest, codePositionSide, "Order's position side does not match user's setting.")
			}
		case "LONG":
			r.PositionSide = venue.PosLong
		case "SHORT":
			r.PositionSide = venue.PosShort
		default:
			return r, "", illegal("positionSide")
		}
		if r.PositionSide != venue.PosBoth && !hedge {
			return r, "", errf(http.StatusBadRequest, codePositionSide, "Order's position side does not match user's setting.")
		}
		if r.ReduceOnly, err = q.boolParam("reduceOnly"); err != nil {
			return r, "", err
		}
		if r.ReduceOnly && hedge {
			return r, "", errf(http.StatusBadRequest, -1106, "Parameter 'reduceonly' sent when not required.")
		}
		if r.ClosePosition, err = q.boolParam("closePosition"); err != nil {
			return r, "", err
		}
		if r.ClosePosition {
			if typ != venue.StopMarket && typ != venue.TakeProfitMarket {
				return r, "", errf(http.StatusBadRequest, -4136, "Target strategy invalid for orderType %s,closePosition true", q.str("type"))
			}
			if !r.Qty.IsZero() {
				return r, "", errf(http.StatusBadRequest, -4137, "Quantity must be zero with closePosition equals true")
			}
		}
		switch q.str("workingType") {
		case "", "CONTRACT_PRICE":
			r.TriggerBy = venue.TriggerLast
		case "MARK_PRICE":
			r.TriggerBy = venue.TriggerMark
		default:
			return r, "", illegal("workingType")
		}
	}
	if r.Qty.IsZero() && r.QuoteQty.IsZero() && !r.ClosePosition {
		return r, "", badParam("quantity")
	}
	if r.ClientID == "" {
		if futures {
			r.ClientID = "web_" + randomID(16)
		} else {
			r.ClientID = "x-" + randomID(20)
		}
	}
	resp := q.str("newOrderRespType")
	return r, resp, nil
}

// place places an order and maps venue rejections to Binance errors.
func (s *Server) place(futures bool, r venue.OrderRequest) (venue.Order, error) {
	return s.placeMatched(futures, r, venue.MatchNone, 0)
}

// placeMatched is place for an order priced by priceMatch (MatchNone: its own price).
func (s *Server) placeMatched(futures bool, r venue.OrderRequest, m venue.PriceMatch, depth int) (venue.Order, error) {
	o, err := s.v.PlaceMatched(s.ctx, r, m, depth)
	if errors.Is(err, venue.ErrNoPriceToMatch) {
		return o, priceMatchError(err)
	}
	if err != nil {
		if errors.Is(err, venue.ErrWouldTrigger) && !futures {
			return o, errf(http.StatusBadRequest, codeNewOrderRejected, "Stop price would trigger immediately.")
		}
		return o, orderError(futures, err)
	}
	if o.TIF == venue.PostOnly && o.Status == venue.StatusExpired && o.Filled.IsZero() {
		if futures {
			return o, errf(http.StatusBadRequest, codePostOnly, "Due to the order could not be executed as maker, the Post Only order will be rejected. The order will not be recorded in the order history")
		}
		return o, errf(http.StatusBadRequest, codeNewOrderRejected, "Order would immediately match and take.")
	}
	return o, nil
}

func (s *Server) spotNewOrder(q *req) (any, error) {
	r, respType, err := s.orderRequest(false, q.account, q.str)
	if err != nil {
		return nil, err
	}
	o, err := s.place(false, r)
	if err != nil {
		return nil, err
	}
	if respType == "" {
		respType = "FULL"
		if r.Type != venue.Limit && r.Type != venue.Market {
			respType = "ACK"
		}
	}
	switch respType {
	case "ACK":
		t := o.Updated
		return struct {
			Symbol        string `json:"symbol"`
			OrderID       uint64 `json:"orderId"`
			OrderListID   int    `json:"orderListId"`
			ClientOrderID string `json:"clientOrderId"`
			TransactTime  int64  `json:"transactTime"`
		}{s.native[o.Instrument], o.ID, -1, o.ClientID, t}, nil
	case "RESULT":
		return s.spotOrderView(o, viewResult), nil
	case "FULL":
		v := s.spotOrderView(o, viewResult)
		fills := []spotFill{}
		if o.Filled.IsPositive() {
			fs, err := s.v.Fills(q.account, o.Instrument, 0)
			if err == nil {
				for _, f := range fs {
					if f.OrderID == o.ID {
						fills = append(fills, spotFill{fix8(f.Price), fix8(f.Qty), fix8(f.Fee), f.FeeAsset, f.TradeID})
					}
				}
			}
		}
		v.Fills = &fills
		return v, nil
	}
	return nil, illegal("newOrderRespType")
}

// rejectedPostOnly reports a post-only order the venue expired on arrival: Binance rejects those with an error
// and records nothing, so they are left out of histories.
func rejectedPostOnly(o venue.Order) bool {
	return o.TIF == venue.PostOnly && o.Status == venue.StatusExpired && o.Filled.IsZero() && o.Created == o.Updated
}

func (s *Server) spotTestOrder(q *req) (any, error) {
	if _, _, err := s.orderRequest(false, q.account, q.str); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

// findOrder resolves orderId / origClientOrderId of the account's order on a symbol.
func (s *Server) findOrder(q *req, in *venue.Instrument) (venue.Order, error) {
	id, err := q.int64Param("orderId", 0)
	if err != nil {
		return venue.Order{}, err
	}
	cid := q.str("origClientOrderId")
	if id == 0 && cid == "" {
		return venue.Order{}, errf(http.StatusBadRequest, codeMandatoryParam,
			"Param 'origClientOrderId' or 'orderId' must be sent, but both were empty/null!")
	}
	o, err := s.v.GetOrder(q.account, uint64(id), cid)
	if err != nil || o.Instrument != in.ID {
		return venue.Order{}, errf(http.StatusBadRequest, codeNoSuchOrder, "Order does not exist.")
	}
	return o, nil
}

func (s *Server) spotGetOrder(q *req) (any, error) {
	in, err := s.symbolParam(q)
	if err != nil {
		return nil, err
	}
	o, err := s.findOrder(q, in)
	if err != nil {
		return nil, err
	}
	return s.spotOrderView(o, viewQuery), nil
}

func (s *Server) cancelOrder(q *req, in *venue.Instrument) (venue.Order, error) {
	o, err := s.findOrder(q, in)
	if err != nil {
		return o, errf(http.StatusBadRequest, codeCancelRejected, "Unknown order sent.")
	}
	c, err := s.v.Cancel(s.ctx, q.account, in.ID, o.ID, "")
	if err != nil {
		return o, errf(http.StatusBadRequest, codeCancelRejected, "Unknown order sent.")
	}
	return c, nil
}

func (s *Server) spotCancelView(o venue.Order, newClientID string) spotOrder {
	v := s.spotOrderView(o, viewCancel)
	orig := o.ClientID
	v.OrigClientOrderID = &orig
	if newClientID == "" {
		newClientID = randomID(22)
	}
	v.ClientOrderID = newClientID
	return v
}

func (s *Server) spotCancel(q *req) (any, error) {
	in, err := s.symbolParam(q)
	if err != nil {
		return nil, err
	}
	o, err := s.cancelOrder(q, in)
	if err != nil {
		return nil, err
	}
	return s.spotCancelView(o, q.str("newClientOrderId")), nil
}

func (s *Server) spotCancelAll(q *req) (any, error) {
	in, err := s.symbolParam(q)
	if err != nil {
		return nil, err
	}
	os, err := s.v.CancelAll(s.ctx, q.account, in.ID)
	if err != nil {
		return nil, orderError(false, err)
	}
	if len(os) == 0 {
		return nil, errf(http.StatusBadRequest, codeCancelRejected, "Unknown order sent.")
	}
	out := make([]spotOrder, 0, len(os))
	for _, o := range os {
		out = append(out, s.spotCancelView(o, ""))
	}
	return out, nil
}

func (s *Server) spotAmendKeepPriority(q *req) (any, error) {
	in, err := s.symbolParam(q)
	if err != nil {
		return nil, err
	}
	newQty, err := q.decimalParam("newQty")
	if err != nil {
		return nil, err
	}
	if newQty.IsZero() {
		return nil, badParam("newQty")
	}
	o, err := s.findOrder(q, in)
	if err != nil {
		return nil, err
	}
	if !newQty.LessThan(o.Qty) {
		return nil, errf(http.StatusBadRequest, codeNewOrderRejected, "Order amend (quantity increase) is not supported.")
	}
	a, err := s.v.Amend(s.ctx, q.account, in.ID, o.ID, "", decimal.Zero, newQty, decimal.Zero)
	if err != nil {
		return nil, orderError(false, err)
	}
	v := s.spotOrderView(a, viewQuery)
	v.StopPrice, v.IcebergQty, v.IsWorking, v.Time, v.UpdateTime = nil, nil, nil, nil, nil
	t := a.Updated
	v.TransactTime = &t
	return map[string]any{"transactTime": t, "executionId": a.Updated, "amendedOrder": v}, nil
}

func (s *Server) spotCancelReplace(q *req) (any, error) {
	in, err := s.symbolParam(q)
	if err != nil {
		return nil, err
	}
	mode := q.str("cancelReplaceMode")
	if mode != "STOP_ON_FAILURE" && mode != "ALLOW_FAILURE" {
		return nil, badParam("cancelReplaceMode")
	}
	cq := &req{p: map[string][]string{}, account: q.account}
	if v := q.str("cancelOrderId"); v != "" {
		cq.p.Set("orderId", v)
	}
	if v := q.str("cancelOrigClientOrderId"); v != "" {
		cq.p.Set("origClientOrderId", v)
	}
	var cancelResp any
	canceled, cerr := s.cancelOrder(cq, in)
	if cerr == nil {
		cancelResp = s.spotCancelView(canceled, q.str("cancelNewClientOrderId"))
	}
	if cerr != nil && mode == "STOP_ON_FAILURE" {
		return nil, errf(http.StatusBadRequest, -2022, "Order cancel-replace failed.")
	}
	r, _, err := s.orderRequest(false, q.account, q.str)
	if err != nil {
		return nil, err
	}
	o, perr := s.place(false, r)
	if perr != nil {
		return nil, perr
	}
	v := s.spotOrderView(o, viewResult)
	empty := []spotFill{}
	v.Fills = &empty
	cancelResult := "SUCCESS"
	if cerr != nil {
		cancelResult = "FAILURE"
		cancelResp = cerr
	}
	return map[string]any{"cancelResult": cancelResult, "newOrderResult": "SUCCESS", "cancelResponse": cancelResp,
		"newOrderResponse": v}, nil
}

// accountOrders lists open orders of one market.
func (s *Server) marketOrders(futures bool, os []venue.Order) []venue.Order {
	return slices.DeleteFunc(os, func(o venue.Order) bool {
		in := s.byID[o.Instrument]
		return in == nil || (in.Market == venue.Perp) != futures
	})
}

func (s *Server) openOrders(q *req) (any, error) {
	id := ""
	if q.has("symbol") {
		in, err := s.symbolParam(q)
		if err != nil {
			return nil, err
		}
		id = in.ID
	}
	os, err := s.v.OpenOrders(q.account, id)
	if err != nil {
		return nil, orderError(q.futures, err)
	}
	os = s.marketOrders(q.futures, os)
	if q.futures {
		out := make([]futOrder, 0, len(os))
		for _, o := range os {
			out = append(out, s.futOrderView(o, true))
		}
		return out, nil
	}
	out := make([]spotOrder, 0, len(os))
	for _, o := range os {
		out = append(out, s.spotOrderView(o, viewQuery))
	}
	return out, nil
}

func (s *Server) allOrders(q *req) (any, error) {
	in, err := s.symbolParam(q)
	if err != nil {
		return nil, err
	}
	limit, err := q.intParam("limit", 500)
	if err != nil {
		return nil, err
	}
	limit = max(1, min(limit, 1000))
	fromID, err := q.int64Param("orderId", 0)
	if err != nil {
		return nil, err
	}
	start, err := q.int64Param("startTime", 0)
	if err != nil {
		return nil, err
	}
	end, err := q.int64Param("endTime", 0)
	if err != nil {
		return nil, err
	}
	closed, err := s.v.OrderHistory(q.account, in.ID, 0)
	if err != nil {
		return nil, orderError(q.futures, err)
	}
	open, err := s.v.OpenOrders(q.account, in.ID)
	if err != nil {
		return nil, orderError(q.futures, err)
	}
	closed = slices.DeleteFunc(closed, rejectedPostOnly)
	all := append(closed, open...)
	slices.SortFunc(all, func(a, b venue.Order) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	all = slices.DeleteFunc(all, func(o venue.Order) bool {
		return fromID > 0 && int64(o.ID) < fromID || start > 0 && o.Created < start || end > 0 && o.Created > end
	})
	if len(all) > limit {
		if fromID > 0 || start > 0 {
			all = all[:limit]
		} else {
			all = all[len(all)-limit:]
		}
	}
	if q.futures {
		out := make([]futOrder, 0, len(all))
		for _, o := range all {
			out = append(out, s.futOrderView(o, true))
		}
		return out, nil
	}
	out := make([]spotOrder, 0, len(all))
	for _, o := range all {
		out = append(out, s.spotOrderView(o, viewQuery))
	}
	return out, nil
}

func (s *Server) myTrades(q *req) (any, error) {
	in, err := s.symbolParam(q)
	if err != nil {
		return nil, err
	}
	limit, err := q.intParam("limit", 500)
	if err != nil {
		return nil, err
	}
	limit = max(1, min(limit, 1000))
	orderID, err := q.int64Param("orderId", 0)
	if err != nil {
		return nil, err
	}
	fromID, err := q.int64Param("fromId", 0)
	if err != nil {
		return nil, err
	}
	start, err := q.int64Param("startTime", 0)
	if err != nil {
		return nil, err
	}
	end, err := q.int64Param("endTime", 0)
	if err != nil {
		return nil, err
	}
	fs, err := s.v.Fills(q.account, in.ID, 0)
	if err != nil {
		return nil, orderError(q.futures, err)
	}
	fs = slices.DeleteFunc(fs, func(f venue.Fill) bool {
		return orderID > 0 && int64(f.OrderID) != orderID || fromID > 0 && int64(f.TradeID) < fromID ||
			start > 0 && f.Time < start || end > 0 && f.Time > end
	})
	if len(fs) > limit {
		if fromID > 0 || start > 0 {
			fs = fs[:limit]
		} else {
			fs = fs[len(fs)-limit:]
		}
	}
	sym := s.native[in.ID]
	if q.futures {
		type userTrade struct {
			Buyer           bool   `json:"buyer"`
			Commission      string `json:"commission"`
			CommissionAsset string `json:"commissionAsset"`
			ID              uint64 `json:"id"`
			Maker           bool   `json:"maker"`
			OrderID         uint64 `json:"orderId"`
			Price           string `json:"price"`
			Qty             string `json:"qty"`
			QuoteQty        string `json:"quoteQty"`
			RealizedPnl     string `json:"realizedPnl"`
			Side            string `json:"side"`
			PositionSide    string `json:"positionSide"`
			Symbol          string `json:"symbol"`
			Time            int64  `json:"time"`
		}
		out := make([]userTrade, 0, len(fs))
		for _, f := range fs {
			out = append(out, userTrade{f.Side == venue.Buy, f.Fee.StringFixed(8), f.FeeAsset, f.TradeID, f.Maker,
				f.OrderID, s.px(true, in, f.Price), s.qty(true, in, f.Qty), f.Quote.StringFixed(8),
				f.RealizedPnL.StringFixed(8), sideName(f.Side), posSideName(f.PositionSide), sym, f.Time})
		}
		return out, nil
	}
	type myTrade struct {
		Symbol          string `json:"symbol"`
		ID              uint64 `json:"id"`
		OrderID         uint64 `json:"orderId"`
		OrderListID     int    `json:"orderListId"`
		Price           string `json:"price"`
		Qty             string `json:"qty"`
		QuoteQty        string `json:"quoteQty"`
		Commission      string `json:"commission"`
		CommissionAsset string `json:"commissionAsset"`
		Time            int64  `json:"time"`
		IsBuyer         bool   `json:"isBuyer"`
		IsMaker         bool   `json:"isMaker"`
		IsBestMatch     bool   `json:"isBestMatch"`
	}
	out := make([]myTrade, 0, len(fs))
	for _, f := range fs {
		out = append(out, myTrade{sym, f.TradeID, f.OrderID, -1, fix8(f.Price), fix8(f.Qty), fix8(f.Quote),
			fix8(f.Fee), f.FeeAsset, f.Time, f.Side == venue.Buy, f.Maker, true})
	}
	return out, nil
}

func (s *Server) spotAccount(q *req) (any, error) {
	bs, err := s.v.Balances(q.account, venue.TradingWallet)
	if err != nil {
		return nil, orderError(false, err)
	}
	type bal struct {
		Asset  string `json:"asset"`
		Free   string `json:"free"`
		Locked string `json:"locked"`
	}
	balances := make([]bal, 0, len(bs))
	for _, b := range bs {
		if q.str("omitZeroBalances") == "true" && b.Total.IsZero() {
			continue
		}
		balances = append(balances, bal{b.Asset, fix8(b.Free), fix8(b.Locked)})
	}
	maker, taker := "0.00100000", "0.00100000"
	if len(s.spotL) > 0 {
		maker, taker = fix8(s.spotL[0].MakerFee), fix8(s.spotL[0].TakerFee)
	}
	bp := func(rate string) int {
		d, _ := decimal.NewFromString(rate)
		return int(d.Mul(decimal.NewFromInt(10000)).IntPart())
	}
	return map[string]any{
		"makerCommission": bp(maker), "takerCommission": bp(taker), "buyerCommission": 0, "sellerCommission": 0,
		"commissionRates": map[string]string{"maker": maker, "taker": taker, "buyer": "0.00000000", "seller": "0.00000000"},
		"canTrade":        true, "canWithdraw": true, "canDeposit": true, "brokered": false,
		"requireSelfTradePrevention": false, "preventSor": false, "updateTime": s.v.Now(), "accountType": "SPOT",
		"balances": balances, "permissions": []string{"SPOT"}, "uid": uidOf(q.account),
	}, nil
}

// uidOf derives a stable numeric user id from an account id.
func uidOf(account string) int64 {
	var h int64 = 1000003
	for _, c := range account {
		h = (h*131 + int64(c)) % 1_000_000_000
	}
	return 100000000 + h
}

// ---- futures

func (s *Server) futNewOrder(q *req) (any, error) {
	return s.futPlace(q.account, q.str)
}

// futPlace places one futures order (POST /fapi/v1/order, an item of batchOrders), watching a GTD order's expiry.
func (s *Server) futPlace(account string, get func(string) string) (any, error) {
	r, _, err := s.orderRequest(true, account, get)
	if err != nil {
		return nil, err
	}
	m, depth, _ := parsePriceMatch(get("priceMatch"))
	o, err := s.placeMatched(true, r, m, depth)
	if err != nil {
		return nil, err
	}
	if m != venue.MatchNone {
		s.pm.put(o.ID, get("priceMatch"))
	}
	v := s.futOrderView(o, false)
	if get("timeInForce") == "GTD" {
		gtd, _ := strconv.ParseInt(get("goodTillDate"), 10, 64)
		s.watchGTD(o, gtd, o.Status == venue.StatusNew || o.Status == venue.StatusPartiallyFilled)
		v.TimeInForce, v.GoodTillDate = "GTD", gtd
	}
	return v, nil
}

func (s *Server) futTestOrder(q *req) (any, error) {
	if _, _, err := s.orderRequest(true, q.account, q.str); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

func (s *Server) amend(q *req, get func(string) string) (venue.Order, error) {
	aq := &req{p: map[string][]string{}, futures: true, account: q.account}
	for _, k := range []string{"symbol", "orderId", "origClientOrderId", "side", "quantity", "price", "priceMatch"} {
		if v := get(k); v != "" {
			aq.p.Set(k, v)
		}
	}
	in, err := s.symbolParam(aq)
	if err != nil {
		return venue.Order{}, err
	}
	o, err := s.findOrder(aq, in)
	if err != nil {
		return o, err
	}
	if aq.str("side") == "" {
		return o, badParam("side")
	}
	if aq.str("side") != sideName(o.Side) {
		return o, errf(http.StatusBadRequest, -4142, "REJECT: side does not match the original order")
	}
	qty, err := aq.decimalParam("quantity")
	if err != nil {
		return o, err
	}
	price, err := aq.decimalParam("price")
	if err != nil {
		return o, err
	}
	pmName := aq.str("priceMatch")
	pm, depth, ok := parsePriceMatch(pmName)
	if !ok {
		return o, illegal("priceMatch")
	}
	if pm != venue.MatchNone {
		// The new price is read from the book now (the venue then amends to it).
		if !price.IsZero() {
			return o, errf(http.StatusBadRequest, -1106, "Parameter 'price' sent when not required.")
		}
		if price, err = s.v.MatchedPrice(in.ID, o.Side, pm, depth); err != nil {
			return o, priceMatchError(err)
		}
	}
	if qty.IsZero() || price.IsZero() {
		return o, badParam("quantity")
	}
	if o.Status.Final() {
		return o, errf(http.StatusBadRequest, -5027, "No need to modify the order.")
	}
	if o.Type != venue.Limit {
		return o, errf(http.StatusBadRequest, -4144, "Only limit order is supported.")
	}
	if qty.Equal(o.Qty) && price.Equal(o.Price) {
		return o, errf(http.StatusBadRequest, -5027, "No need to modify the order.")
	}
	a, err := s.v.Amend(s.ctx, q.account, in.ID, o.ID, "", price, qty, decimal.Zero)
	if err != nil {
		return o, orderError(true, err)
	}
	s.pm.put(a.ID, pmName)
	return a, nil
}

func (s *Server) futAmend(q *req) (any, error) {
	o, err := s.amend(q, q.str)
	if err != nil {
		return nil, err
	}
	return s.futOrderView(o, false), nil
}

func (s *Server) futGetOrder(q *req) (any, error) {
	in, err := s.symbolParam(q)
	if err != nil {
		return nil, err
	}
	o, err := s.findOrder(q, in)
	if err != nil {
		return nil, err
	}
	return s.futOrderView(o, true), nil
}

func (s *Server) futOpenOrder(q *req) (any, error) {
	in, err := s.symbolParam(q)
	if err != nil {
		return nil, err
	}
	o, err := s.findOrder(q, in)
	if err != nil || o.Status.Final() {
		return nil, errf(http.StatusBadRequest, codeNoSuchOrder, "Order does not exist.")
	}
	return s.futOrderView(o, true), nil
}

func (s *Server) futCancel(q *req) (any, error) {
	in, err := s.symbolParam(q)
	if err != nil {
		return nil, err
	}
	o, err := s.cancelOrder(q, in)
	if err != nil {
		return nil, err
	}
	return s.futOrderView(o, false), nil
}

func (s *Server) futCancelAll(q *req) (any, error) {
	in, err := s.symbolParam(q)
	if err != nil {
		return nil, err
	}
	if _, err := s.v.CancelAll(s.ctx, q.account, in.ID); err != nil {
		return nil, orderError(true, err)
	}
	return map[string]any{"code": 200, "msg": "The operation of cancel all open order is done."}, nil
}

// batchParams decodes batchOrders: a JSON array of objects whose values are strings (numbers tolerated).
func batchParams(q *req) ([]map[string]string, error) {
	raw := q.str("batchOrders")
	if raw == "" {
		return nil, badParam("batchOrders")
	}
	var items []map[string]any
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&items); err != nil {
		return nil, illegal("batchOrders")
	}
	if len(items) == 0 || len(items) > 5 {
		return nil, errf(http.StatusBadRequest, -4033, "Batch orders must contain between 1 and 5 orders.")
	}
	out := make([]map[string]string, 0, len(items))
	for _, it := range items {
		m := map[string]string{}
		for k, v := range it {
			switch x := v.(type) {
			case string:
				m[k] = x
			case bool:
				m[k] = map[bool]string{true: "true", false: "false"}[x]
			case json.Number:
				m[k] = x.String()
			}
		}
		out = append(out, m)
	}
	return out, nil
}

func errItem(err error) any {
	var e *apiError
	if errors.As(err, &e) {
		return e
	}
	return orderError(true, err)
}

func (s *Server) futBatchNew(q *req) (any, error) {
	items, err := batchParams(q)
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, len(items))
	for _, it := range items {
		v, err := s.futPlace(q.account, func(k string) string { return strings.TrimSpace(it[k]) })
		if err != nil {
			out = append(out, errItem(err))
			continue
		}
		out = append(out, v)
	}
	return out, nil
}

func (s *Server) futBatchAmend(q *req) (any, error) {
	items, err := batchParams(q)
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, len(items))
	for _, it := range items {
		o, err := s.amend(q, func(k string) string { return strings.TrimSpace(it[k]) })
		if err != nil {
			out = append(out, errItem(err))
			continue
		}
		out = append(out, s.futOrderView(o, false))
	}
	return out, nil
}

func (s *Server) futBatchCancel(q *req) (any, error) {
	in, err := s.symbolParam(q)
	if err != nil {
		return nil, err
	}
	var ids []uint64
	var cids []string
	if v := q.str("orderIdList"); v != "" {
		if err := json.Unmarshal([]byte(v), &ids); err != nil {
			return nil, illegal("orderIdList")
		}
	}
	if v := q.str("origClientOrderIdList"); v != "" {
		if err := json.Unmarshal([]byte(v), &cids); err != nil {
			return nil, illegal("origClientOrderIdList")
		}
	}
	if len(ids)+len(cids) == 0 {
		return nil, badParam("orderIdList")
	}
	out := make([]any, 0, len(ids)+len(cids))
	one := func(id uint64, cid string) {
		c, err := s.v.Cancel(s.ctx, q.account, in.ID, id, cid)
		if err != nil {
			out = append(out, errf(http.StatusBadRequest, codeCancelRejected, "Unknown order sent."))
			return
		}
		out = append(out, s.futOrderView(c, false))
	}
	for _, id := range ids {
		one(id, "")
	}
	for _, cid := range cids {
		one(0, cid)
	}
	return out, nil
}

func (s *Server) futLeverage(q *req) (any, error) {
	in, err := s.symbolParam(q)
	if err != nil {
		return nil, err
	}
	lev, err := q.intParam("leverage", 0)
	if err != nil || lev <= 0 {
		return nil, badParam("leverage")
	}
	if err := s.v.SetLeverage(q.account, in.ID, lev); err != nil {
		if errors.Is(err, venue.ErrLeverage) || errors.Is(err, venue.ErrOutOfRange) {
			return nil, errf(http.StatusBadRequest, codeLeverage, "Leverage %d is not valid", lev)
		}
		if errors.Is(err, venue.ErrInsufficientFunds) {
			return nil, errf(http.StatusBadRequest, codeMarginShortfall, "Margin is insufficient.")
		}
		return nil, orderError(true, err)
	}
	now := s.v.Now()
	s.pushUser(q.account, true, mustJSON(map[string]any{"e": "ACCOUNT_CONFIG_UPDATE", "E": now, "T": now,
		"ac": map[string]any{"s": s.native[in.ID], "l": lev}}))
	return struct {
		Leverage         int    `json:"leverage"`
		MaxNotionalValue string `json:"maxNotionalValue"`
		Symbol           string `json:"symbol"`
	}{lev, maxNotional(in, lev), s.native[in.ID]}, nil
}

// maxNotional is the largest position notional allowed at a leverage (the last tier that allows it).
func maxNotional(in *venue.Instrument, lev int) string {
	best := decimal.Zero
	for _, t := range in.Tiers {
		if t.MaxLeverage >= lev {
			best = t.MaxNotional
		}
	}
	return best.StringFixed(0)
}

var okBody = map[string]any{"code": 200, "msg": "success"}

func (s *Server) futMarginType(q *req) (any, error) {
	in, err := s.symbolParam(q)
	if err != nil {
		return nil, err
	}
	var isolated bool
	switch q.str("marginType") {
	case "ISOLATED":
		isolated = true
	case "CROSSED", "CROSS":
	case "":
		return nil, badParam("marginType")
	default:
		return nil, illegal("marginType")
	}
	cur, err := s.v.Settings(q.account, in.ID)
	if err != nil {
		return nil, orderError(true, err)
	}
	if cur.Isolated == isolated {
		return nil, errf(http.StatusBadRequest, codeNoNeedMarginType, "No need to change margin type.")
	}
	if err := s.v.SetMarginMode(q.account, in.ID, isolated); err != nil {
		if errors.Is(err, venue.ErrModeChange) {
			if os, _ := s.v.OpenOrders(q.account, in.ID); len(os) > 0 {
				return nil, errf(http.StatusBadRequest, codeMarginTypeOrders, "Margin type cannot be changed if there exists open orders.")
			}
			return nil, errf(http.StatusBadRequest, codeMarginTypePos, "Margin type cannot be changed if there exists position.")
		}
		return nil, orderError(true, err)
	}
	return okBody, nil
}

func (s *Server) hedgeMode(account string) (bool, error) {
	if len(s.futL) == 0 {
		return false, nil
	}
	st, err := s.v.Settings(account, s.futL[0].ID)
	return st.Hedge, err
}

func (s *Server) futSetDual(q *req) (any, error) {
	if !q.has("dualSidePosition") {
		return nil, badParam("dualSidePosition")
	}
	hedge, err := q.boolParam("dualSidePosition")
	if err != nil {
		return nil, err
	}
	cur, err := s.hedgeMode(q.account)
	if err != nil {
		return nil, orderError(true, err)
	}
	if cur == hedge {
		return nil, errf(http.StatusBadRequest, codeNoNeedPosSide, "No need to change position side.")
	}
	if err := s.v.SetPositionMode(q.account, hedge); err != nil {
		if errors.Is(err, venue.ErrModeChange) {
			os, _ := s.v.OpenOrders(q.account, "")
			if len(s.marketOrders(true, os)) > 0 {
				return nil, errf(http.StatusBadRequest, codePosSideOrders, "Position side cannot be changed if there exists open orders.")
			}
			return nil, errf(http.StatusBadRequest, codePosSidePositions, "Position side cannot be changed if there exists position.")
		}
		return nil, orderError(true, err)
	}
	return okBody, nil
}

func (s *Server) futGetDual(q *req) (any, error) {
	hedge, err := s.hedgeMode(q.account)
	if err != nil {
		return nil, orderError(true, err)
	}
	return map[string]bool{"dualSidePosition": hedge}, nil
}

func (s *Server) futSymbolConfig(q *req) (any, error) {
	ins, _, err := s.symbolsParam(q)
	if err != nil {
		return nil, err
	}
	type row struct {
		Symbol           string `json:"symbol"`
		MarginType       string `json:"marginType"`
		IsAutoAddMargin  bool   `json:"isAutoAddMargin"`
		Leverage         int    `json:"leverage"`
		MaxNotionalValue string `json:"maxNotionalValue"`
	}
	out := make([]row, 0, len(ins))
	for _, in := range ins {
		st, err := s.v.Settings(q.account, in.ID)
		if err != nil {
			return nil, orderError(true, err)
		}
		mt := "CROSSED"
		if st.Isolated {
			mt = "ISOLATED"
		}
		out = append(out, row{s.native[in.ID], mt, false, st.Leverage, maxNotional(in, st.Leverage)})
	}
	return out, nil
}

func (s *Server) futBrackets(q *req) (any, error) {
	ins, _, err := s.symbolsParam(q)
	if err != nil {
		return nil, err
	}
	type bracket struct {
		Bracket          int         `json:"bracket"`
		InitialLeverage  int         `json:"initialLeverage"`
		NotionalCap      json.Number `json:"notionalCap"`
		NotionalFloor    json.Number `json:"notionalFloor"`
		MaintMarginRatio json.Number `json:"maintMarginRatio"`
		Cum              json.Number `json:"cum"`
	}
	type entry struct {
		Symbol   string    `json:"symbol"`
		Brackets []bracket `json:"brackets"`
	}
	out := make([]entry, 0, len(ins))
	for _, in := range ins {
		e := entry{Symbol: s.native[in.ID]}
		floor := decimal.Zero
		for i, t := range in.Tiers {
			// Binance sends these as JSON numbers: written from the decimals, never through a float.
			e.Brackets = append(e.Brackets, bracket{i + 1, t.MaxLeverage, json.Number(t.MaxNotional.String()),
				json.Number(floor.String()), json.Number(t.MaintRate.String()), json.Number(t.MaintAmount.String())})
			floor = t.MaxNotional
		}
		out = append(out, e)
	}
	return out, nil
}

func (s *Server) positionRisk(version int) func(*req) (any, error) {
	return func(q *req) (any, error) {
		only := ""
		if q.has("symbol") {
			in, err := s.symbolParam(q)
			if err != nil {
				return nil, err
			}
			only = in.ID
		}
		ps, err := s.v.Positions(q.account)
		if err != nil {
			return nil, orderError(true, err)
		}
		hedge, err := s.hedgeMode(q.account)
		if err != nil {
			return nil, orderError(true, err)
		}
		type key struct {
			id   string
			side venue.PositionSide
		}
		have := map[key]venue.Position{}
		for _, p := range ps {
			have[key{p.Instrument, p.Side}] = p
		}
		var out []map[string]any
		for _, in := range s.futL {
			if only != "" && in.ID != only {
				continue
			}
			sides := []venue.PositionSide{venue.PosBoth}
			if hedge {
				sides = []venue.PositionSide{venue.PosLong, venue.PosShort}
			}
			st, _ := s.v.Settings(q.account, in.ID)
			for _, side := range sides {
				p, ok := have[key{in.ID, side}]
				if !ok && version == 3 {
					continue
				}
				if !ok {
					m, _ := s.v.Mark(in.ID)
					p = venue.Position{Instrument: in.ID, Side: side, MarkPrice: m.Mark, Leverage: st.Leverage,
						Isolated: st.Isolated}
				}
				out = append(out, s.positionView(in, p, st, version))
			}
		}
		if out == nil {
			out = []map[string]any{}
		}
		return out, nil
	}
}

func (s *Server) positionView(in *venue.Instrument, p venue.Position, st venue.PerpSettings, version int) map[string]any {
	ps, qs := in.PriceScale(), in.QtyScale()
	amtQ := p.Qty
	notional := p.Notional
	if p.Side == venue.PosShort {
		amtQ = amtQ.Neg()
	}
	if amtQ.IsNegative() && notional.IsPositive() {
		notional = notional.Neg()
	}
	marginType := "cross"
	isoMargin, isoWallet := decimal.Zero, decimal.Zero
	if p.Isolated {
		marginType = "isolated"
		isoWallet = p.Margin
		isoMargin = p.Margin.Add(p.UnrealizedPnL)
	}
	m := map[string]any{
		"symbol": s.native[in.ID], "positionSide": posSideName(p.Side), "positionAmt": amtQ.StringFixed(qs),
		"entryPrice": p.EntryPrice.StringFixed(ps + 1), "breakEvenPrice": breakEven(in, p),
		"markPrice": p.MarkPrice.StringFixed(ps + 2), "unRealizedProfit": p.UnrealizedPnL.StringFixed(8),
		"liquidationPrice": p.LiqPrice.StringFixed(ps + 1), "isolatedMargin": isoMargin.StringFixed(8),
		"notional": notional.StringFixed(8), "isolatedWallet": isoWallet.StringFixed(8), "updateTime": p.Updated,
	}
	if version == 2 {
		lev := p.Leverage
		if lev == 0 {
			lev = st.Leverage
		}
		m["leverage"] = decimal.NewFromInt(int64(lev)).String()
		m["maxNotionalValue"] = maxNotional(in, lev)
		m["marginType"] = marginType
		m["isAutoAddMargin"] = "false"
		return m
	}
	m["marginAsset"] = in.Quote
	m["initialMargin"] = p.Margin.StringFixed(8)
	m["maintMargin"] = p.MaintMargin.StringFixed(8)
	m["positionInitialMargin"] = p.Margin.StringFixed(8)
	m["openOrderInitialMargin"] = "0"
	m["adl"] = 0
	m["bidNotional"] = "0"
	m["askNotional"] = "0"
	return m
}

// breakEven is a position's breakEvenPrice ("bep" on the stream): "0.0" for no position, else the venue's
// break-even price with up to four decimals beyond the tick, as Binance sends it (entry 67445.9, break-even
// 67479.62295).
func breakEven(in *venue.Instrument, p venue.Position) string {
	if p.BreakEven.IsZero() {
		return "0.0"
	}
	return p.BreakEven.StringFixed(in.PriceScale() + 4)
}

// futuresWallet sums the USDT trading wallet and the positions' PnL and margins; the cross figures leave out
// isolated positions and their margin (Binance's crossWalletBalance and crossUnPnl).
type futWallet struct {
	wallet, free, locked, upnl, posMargin, maint decimal.Decimal
	crossWallet, crossUpnl                       decimal.Decimal
}

func (s *Server) futuresWallet(account string) (futWallet, []venue.Position, error) {
	var w futWallet
	bs, err := s.v.Balances(account, venue.TradingWallet)
	if err != nil {
		return w, nil, err
	}
	for _, b := range bs {
		if b.Asset == "USDT" {
			w.wallet, w.free, w.locked = b.Total, b.Free, b.Locked
		}
	}
	ps, err := s.v.Positions(account)
	if err != nil {
		return w, nil, err
	}
	ps = slices.DeleteFunc(ps, func(p venue.Position) bool { return s.byID[p.Instrument] == nil })
	w.crossWallet = w.wallet
	for _, p := range ps {
		w.upnl = w.upnl.Add(p.UnrealizedPnL)
		w.posMargin = w.posMargin.Add(p.Margin)
		w.maint = w.maint.Add(p.MaintMargin)
		if p.Isolated {
			w.crossWallet = w.crossWallet.Sub(p.Margin)
		} else {
			w.crossUpnl = w.crossUpnl.Add(p.UnrealizedPnL)
		}
	}
	return w, ps, nil
}

func (s *Server) futBalance(q *req) (any, error) {
	w, _, err := s.futuresWallet(q.account)
	if err != nil {
		return nil, orderError(true, err)
	}
	return []map[string]any{{
		"accountAlias": "SgsR" + strings.ToUpper(randomIDStable(q.account)), "asset": "USDT",
		"balance": w.wallet.StringFixed(8), "crossWalletBalance": w.crossWallet.StringFixed(8),
		"crossUnPnl": w.crossUpnl.StringFixed(8), "availableBalance": w.free.StringFixed(8),
		"maxWithdrawAmount": w.free.StringFixed(8), "marginAvailable": true, "updateTime": s.v.Now(),
	}}, nil
}

// randomIDStable is a short stable tag derived from the account (Binance's account alias).
func randomIDStable(account string) string {
	u := uidOf(account)
	b := make([]byte, 4)
	for i := range b {
		b[i] = idAlphabet[u%26]
		u /= 26
	}
	return string(b)
}

func (s *Server) futAccount(version int) func(*req) (any, error) {
	return func(q *req) (any, error) {
		w, ps, err := s.futuresWallet(q.account)
		if err != nil {
			return nil, orderError(true, err)
		}
		orderMargin := w.locked.Sub(w.posMargin)
		if orderMargin.IsNegative() {
			orderMargin = decimal.Zero
		}
		f := func(d decimal.Decimal) string { return d.StringFixed(8) }
		now := s.v.Now()
		asset := map[string]any{
			"asset": "USDT", "walletBalance": f(w.wallet), "unrealizedProfit": f(w.upnl),
			"marginBalance": f(w.wallet.Add(w.upnl)), "maintMargin": f(w.maint), "initialMargin": f(w.locked),
			"positionInitialMargin": f(w.posMargin), "openOrderInitialMargin": f(orderMargin),
			"crossWalletBalance": f(w.crossWallet), "crossUnPnl": f(w.crossUpnl), "availableBalance": f(w.free),
			"maxWithdrawAmount": f(w.free), "updateTime": now,
		}
		positions := make([]map[string]any, 0, len(ps))
		for _, p := range ps {
			in := s.byID[p.Instrument]
			amtQ := p.Qty
			if p.Side == venue.PosShort {
				amtQ = amtQ.Neg()
			}
			pm := map[string]any{
				"symbol": s.native[in.ID], "positionSide": posSideName(p.Side), "positionAmt": amtQ.StringFixed(in.QtyScale()),
				"unrealizedProfit": f(p.UnrealizedPnL), "isolatedMargin": "0", "notional": f(p.Notional),
				"isolatedWallet": "0", "initialMargin": f(p.Margin), "maintMargin": f(p.MaintMargin),
				"updateTime": p.Updated,
			}
			if p.Isolated {
				pm["isolatedMargin"], pm["isolatedWallet"] = f(p.Margin.Add(p.UnrealizedPnL)), f(p.Margin)
			}
			if version == 2 {
				pm["leverage"] = decimal.NewFromInt(int64(p.Leverage)).String()
				pm["isolated"] = p.Isolated
				pm["entryPrice"] = p.EntryPrice.StringFixed(in.PriceScale() + 1)
				pm["maxNotional"] = maxNotional(in, p.Leverage)
				pm["positionInitialMargin"] = f(p.Margin)
				pm["openOrderInitialMargin"] = "0"
				pm["bidNotional"], pm["askNotional"] = "0", "0"
			}
			positions = append(positions, pm)
		}
		out := map[string]any{
			"totalInitialMargin": f(w.locked), "totalMaintMargin": f(w.maint), "totalWalletBalance": f(w.wallet),
			"totalUnrealizedProfit": f(w.upnl), "totalMarginBalance": f(w.wallet.Add(w.upnl)),
			"totalPositionInitialMargin": f(w.posMargin), "totalOpenOrderInitialMargin": f(orderMargin),
			"totalCrossWalletBalance": f(w.crossWallet), "totalCrossUnPnl": f(w.crossUpnl), "availableBalance": f(w.free),
			"maxWithdrawAmount": f(w.free), "assets": []map[string]any{asset}, "positions": positions,
		}
		if version == 2 {
			out["feeTier"] = 0
			out["canTrade"] = true
			out["canDeposit"] = true
			out["canWithdraw"] = true
			out["updateTime"] = 0
			out["multiAssetsMargin"] = false
			out["tradeGroupId"] = -1
		}
		return out, nil
	}
}
