package emulator

import (
	"context"
	"net/http"
	"sync"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
)

// Spot order lists: POST /api/v3/orderList/otoco, a working LIMIT / LIMIT_MAKER order whose fill places a pending
// OCO pair (an order above and one below the market: TAKE_PROFIT / STOP_LOSS, market on trigger). The pending legs
// become venue conditional orders once the working order has filled completely; when one of them triggers, the
// other is cancelled. A working order that ends without filling completely drops the list. Simplifications: the
// pending legs get their order ids only when placed (Binance gives them at once, status PENDING_NEW), and only
// the market-on-trigger leg types are emulated.

// otocoList is an order list whose working order has not filled yet, or whose legs are live.
type otocoList struct {
	id         int64
	account    string
	instrument string
	working    uint64
	side       venue.Side // of the pending legs
	qty        decimal.Decimal
	legs       [2]otocoLeg // above, below
	placed     [2]uint64   // venue ids of the legs once placed
}

type otocoLeg struct {
	typ      venue.OrderType
	stop     decimal.Decimal
	clientID string
}

// orderLists holds the emulator's live order lists.
type orderLists struct {
	mu      sync.Mutex
	nextID  int64
	waiting map[uint64]*otocoList // working order id -> list
	legs    map[uint64]*otocoList // placed leg id -> list
}

// maxOrderLists bounds the lists waiting or live at once.
const maxOrderLists = 10_000

func (s *Server) orderListRoutes(mux *http.ServeMux) {
	s.handle(mux, "POST /api/v3/orderList/otoco", route{sec: secSigned, weight: 1, orders: true,
		clientIDs: paramIDs("workingClientOrderId", "listClientOrderId"), fn: s.spotOTOCO})
}

// pendingLegType reads an OTOCO pending leg type: TAKE_PROFIT and STOP_LOSS (market on trigger).
func pendingLegType(s string) (venue.OrderType, bool) {
	switch s {
	case "TAKE_PROFIT":
		return venue.TakeProfitMarket, true
	case "STOP_LOSS":
		return venue.StopMarket, true
	}
	return 0, false
}

func (s *Server) spotOTOCO(q *req) (any, error) {
	// The working order is an ordinary spot order under "working" names.
	names := map[string]string{"symbol": "symbol", "side": "workingSide", "type": "workingType", "price": "workingPrice",
		"quantity": "workingQuantity", "timeInForce": "workingTimeInForce", "newClientOrderId": "workingClientOrderId",
		"selfTradePreventionMode": "selfTradePreventionMode"}
	get := func(k string) string {
		if n, ok := names[k]; ok {
			return q.str(n)
		}
		return ""
	}
	if t := q.str("workingType"); t != "LIMIT" && t != "LIMIT_MAKER" {
		return nil, illegal("workingType")
	}
	r, _, err := s.orderRequest(false, q.account, get)
	if err != nil {
		return nil, err
	}
	l := &otocoList{account: q.account, instrument: r.Instrument}
	switch q.str("pendingSide") {
	case "BUY":
		l.side = venue.Buy
	case "SELL":
		l.side = venue.Sell
	default:
		return nil, badParam("pendingSide")
	}
	if l.side == r.Side {
		return nil, errf(http.StatusBadRequest, codeNewOrderRejected, "The pending orders must be on the other side of the working order.")
	}
	if l.qty, err = q.decimalParam("pendingQuantity"); err != nil || l.qty.IsZero() {
		return nil, badParam("pendingQuantity")
	}
	last, err := s.v.LastPrice(r.Instrument)
	if err != nil {
		return nil, orderError(false, err)
	}
	for i, pre := range []string{"pendingAbove", "pendingBelow"} {
		typ, ok := pendingLegType(q.str(pre + "Type"))
		if !ok {
			return nil, illegal(pre + "Type")
		}
		// Above the market: a sell's take-profit or a buy's stop-loss; below: the other two.
		above := i == 0
		if want := (l.side == venue.Sell) == above; (typ == venue.TakeProfitMarket) != want {
			return nil, illegal(pre + "Type")
		}
		stop, err := q.decimalParam(pre + "StopPrice")
		if err != nil || stop.IsZero() {
			return nil, badParam(pre + "StopPrice")
		}
		if (above && !stop.GreaterThan(last)) || (!above && !stop.LessThan(last)) {
			return nil, errf(http.StatusBadRequest, codeNewOrderRejected, "Order would immediately trigger.")
		}
		// Every order of the list passes the symbol's filters when the list is placed (Binance refuses the list).
		if in := s.byID[r.Instrument]; in != nil && stop.Mul(l.qty).LessThan(in.MinNotional) {
			return nil, errf(http.StatusBadRequest, codeFilterFailure, "Filter failure: NOTIONAL")
		}
		l.legs[i] = otocoLeg{typ: typ, stop: stop, clientID: q.str(pre + "ClientOrderId")}
		if l.legs[i].clientID == "" {
			l.legs[i].clientID = "x-" + randomID(20)
		}
	}
	s.lists.mu.Lock()
	if len(s.lists.waiting)+len(s.lists.legs) >= maxOrderLists {
		s.lists.mu.Unlock()
		return nil, errf(http.StatusBadRequest, codeNewOrderRejected, "Too many order lists.")
	}
	s.lists.nextID++
	l.id = s.lists.nextID
	s.lists.mu.Unlock()

	o, err := s.place(false, r)
	if err != nil {
		return nil, err
	}
	l.working = o.ID
	s.lists.mu.Lock()
	if s.lists.waiting == nil {
		s.lists.waiting, s.lists.legs = map[uint64]*otocoList{}, map[uint64]*otocoList{}
	}
	s.lists.waiting[o.ID] = l
	s.lists.mu.Unlock()
	// A working order that traded in full on arrival arms its legs now (the event may have gone by already).
	if cur, err := s.v.GetOrder(q.account, o.ID, ""); err == nil {
		s.onListOrder(cur)
	}
	sym := s.native[r.Instrument]
	type ref struct {
		Symbol        string `json:"symbol"`
		OrderID       uint64 `json:"orderId"`
		ClientOrderID string `json:"clientOrderId"`
	}
	listCID := q.str("listClientOrderId")
	if listCID == "" {
		listCID = randomID(22)
	}
	return struct {
		OrderListID       int64       `json:"orderListId"`
		ContingencyType   string      `json:"contingencyType"`
		ListStatusType    string      `json:"listStatusType"`
		ListOrderStatus   string      `json:"listOrderStatus"`
		ListClientOrderID string      `json:"listClientOrderId"`
		TransactionTime   int64       `json:"transactionTime"`
		Symbol            string      `json:"symbol"`
		Orders            []ref       `json:"orders"`
		OrderReports      []spotOrder `json:"orderReports"`
	}{l.id, "OTO", "EXEC_STARTED", "EXECUTING", listCID, o.Updated, sym,
		[]ref{{sym, o.ID, o.ClientID}, {sym, 0, l.legs[0].clientID}, {sym, 0, l.legs[1].clientID}},
		[]spotOrder{s.spotOrderView(o, viewResult)}}, nil
}

// watchOrderLists follows every order event of the venue for the order lists (from New until Close).
func (s *Server) watchOrderLists(ctx context.Context, sub *venue.Subscription) {
	for ctx.Err() == nil {
		for e := range sub.C {
			if e.Order != nil {
				s.onListOrder(*e.Order)
			}
		}
		if ctx.Err() == nil { // the queue overflowed: follow again
			sub = s.v.Subscribe(ctx, venue.Filter{Kinds: []venue.EventKind{venue.EvOrder}}, 1<<16)
		}
	}
}

// onListOrder moves an order list on: a working order filled places the pending legs; one that ended otherwise
// drops the list; a leg that triggered (or ended) cancels the other.
func (s *Server) onListOrder(o venue.Order) {
	s.lists.mu.Lock()
	if l, ok := s.lists.waiting[o.ID]; ok && o.Status.Final() {
		delete(s.lists.waiting, o.ID)
		s.lists.mu.Unlock()
		if o.Status == venue.StatusFilled {
			s.placeLegs(l)
		}
		return
	}
	l, ok := s.lists.legs[o.ID]
	if !ok || o.Status == venue.StatusUntriggered {
		s.lists.mu.Unlock()
		return
	}
	for _, id := range l.placed {
		delete(s.lists.legs, id)
	}
	s.lists.mu.Unlock()
	for _, id := range l.placed {
		if id != o.ID {
			_, _ = s.v.Cancel(s.ctx, l.account, l.instrument, id, "")
		}
	}
}

// placeLegs places both pending legs; if the second cannot be placed, the first is cancelled (no half OCO).
func (s *Server) placeLegs(l *otocoList) {
	for i, leg := range l.legs {
		o, err := s.v.Place(s.ctx, venue.OrderRequest{Account: l.account, Instrument: l.instrument, ClientID: leg.clientID,
			Side: l.side, Type: leg.typ, StopPrice: leg.stop, Qty: l.qty})
		if err != nil {
			s.log.Warn("order list leg not placed", "list", l.id, "leg", i, "err", err)
			if i == 1 && l.placed[0] != 0 {
				_, _ = s.v.Cancel(s.ctx, l.account, l.instrument, l.placed[0], "")
			}
			return
		}
		l.placed[i] = o.ID
	}
	s.lists.mu.Lock()
	s.lists.legs[l.placed[0]], s.lists.legs[l.placed[1]] = l, l
	s.lists.mu.Unlock()
	// A leg may have triggered already between its placement and now.
	for _, id := range l.placed {
		if cur, err := s.v.GetOrder(l.account, id, ""); err == nil && cur.Status != venue.StatusUntriggered {
			s.onListOrder(cur)
			return
		}
	}
}
