package emulator

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
)

// algo is an OKX algo order (ordType conditional or oco): one or two venue conditional orders (the take-profit
// and the stop-loss leg). When one leg triggers the algo becomes effective and the other leg is cancelled.
type algo struct {
	id, clID, account string
	i                 *inst
	ordType           string
	side, posSide     string
	tdMode, sz        string
	tpTrig, tpOrd     string
	tpType            string
	slTrig, slOrd     string
	slType            string
	reduceOnly        bool
	closeFraction     string
	legs              []uint64
	state             string // live, effective, canceled
	ordID             string // the order the triggered leg became
	triggerTime       int64
	cTime, uTime      int64
}

type algoBook struct {
	mu    sync.Mutex
	byID  map[string]*algo
	byLeg map[uint64]*algo
	order []*algo // creation order, bounded
	next  uint64
	// watchers are the orders-algo subscriptions: each gets every change of its account's algo orders.
	watchers map[uint64]algoWatcher
	nextW    uint64
	// attached are the TP/SL of entry orders not yet finished, by the entry's order id (attach.go).
	attached map[uint64]pendingAttach
}

// algoWatcher receives the row of an algo order after each change; send must not block.
type algoWatcher struct {
	account string
	send    func(a *algo, row obj)
}

func newAlgoBook() *algoBook {
	return &algoBook{byID: map[string]*algo{}, byLeg: map[uint64]*algo{}, watchers: map[uint64]algoWatcher{},
		attached: map[uint64]pendingAttach{}}
}

// watch registers w until the returned function is called.
func (b *algoBook) watch(w algoWatcher) func() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.nextW++
	id := b.nextW
	b.watchers[id] = w
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		delete(b.watchers, id)
	}
}

// notifyAlgo sends an algo order's current row to the watchers of its account (the orders-algo channel).
func (s *Server) notifyAlgo(a *algo) {
	s.algos.mu.Lock()
	row := s.algoObj(a)
	var ws []algoWatcher
	for _, w := range s.algos.watchers {
		if w.account == a.account {
			ws = append(ws, w)
		}
	}
	s.algos.mu.Unlock()
	for _, w := range ws {
		w.send(a, row)
	}
}

const maxAlgos = 10_000

// add numbers a and keeps it; ids grow in the order algo orders are listed.
func (b *algoBook) add(a *algo) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.next++
	a.id = strconv.FormatUint(900_000_000_000+b.next, 10)
	b.byID[a.id] = a
	for _, l := range a.legs {
		b.byLeg[l] = a
	}
	b.order = append(b.order, a)
	if len(b.order) > maxAlgos {
		old := b.order[0]
		b.order = b.order[1:]
		delete(b.byID, old.id)
		for _, l := range old.legs {
			delete(b.byLeg, l)
		}
	}
}

func (s *Server) algoOfOrder(id uint64) *algo {
	s.algos.mu.Lock()
	defer s.algos.mu.Unlock()
	return s.algos.byLeg[id]
}

// watchAlgos follows every account's order events: a leg leaving the untriggered state makes its algo effective
// and cancels the sibling leg (OCO); all legs cancelled makes it canceled.
func (s *Server) watchAlgos(ctx context.Context) {
	for ctx.Err() == nil {
		sub := s.v.Subscribe(ctx, venue.Filter{Kinds: []venue.EventKind{venue.EvOrder}}, 65536)
		for e := range sub.C {
			s.onAlgoLeg(ctx, *e.Order)
			s.onAttachedEntry(ctx, *e.Order)
		}
	}
}

func (s *Server) onAlgoLeg(ctx context.Context, o venue.Order) {
	s.algos.mu.Lock()
	a := s.algos.byLeg[o.ID]
	if a == nil || a.state != "live" {
		s.algos.mu.Unlock()
		return
	}
	var cancel []uint64
	switch {
	case o.Status == venue.StatusUntriggered:
	case o.Status == venue.StatusCanceled && o.Filled.IsZero() && o.Type == o.OrigType:
		// cancelled before triggering: the algo is canceled when no leg is left
		alive := false
		for _, l := range a.legs {
			if l != o.ID {
				if g, err := s.v.GetOrder(a.account, l, ""); err == nil && g.Status == venue.StatusUntriggered {
					alive = true
				}
			}
		}
		if !alive {
			a.state, a.uTime = "canceled", o.Updated
		}
	default:
		a.state, a.ordID, a.triggerTime, a.uTime = "effective", strconv.FormatUint(o.ID, 10), o.Updated, o.Updated
		for _, l := range a.legs {
			if l != o.ID {
				cancel = append(cancel, l)
			}
		}
	}
	changed := a.state != "live"
	s.algos.mu.Unlock()
	for _, l := range cancel {
		_, _ = s.v.Cancel(ctx, a.account, a.i.v.ID, l, "")
	}
	if changed {
		s.notifyAlgo(a)
	}
}

type algoReq struct {
	InstID          string   `json:"instId"`
	TdMode          string   `json:"tdMode"`
	Side            string   `json:"side"`
	PosSide         string   `json:"posSide"`
	OrdType         string   `json:"ordType"`
	Sz              string   `json:"sz"`
	ReduceOnly      flexBool `json:"reduceOnly"`
	CloseFraction   string   `json:"closeFraction"`
	AlgoClOrdID     string   `json:"algoClOrdId"`
	Tag             string   `json:"tag"`
	TpTriggerPx     string   `json:"tpTriggerPx"`
	TpOrdPx         string   `json:"tpOrdPx"`
	TpTriggerPxType string   `json:"tpTriggerPxType"`
	SlTriggerPx     string   `json:"slTriggerPx"`
	SlOrdPx         string   `json:"slOrdPx"`
	SlTriggerPxType string   `json:"slTriggerPxType"`
}

// triggerBy maps OKX trigger price types: last and mark directly; index uses the venue's mark, which tracks the
// index (the venue has no separate index trigger).
func triggerBy(t string) (venue.TriggerPrice, string, bool) {
	switch t {
	case "", "last":
		return venue.TriggerLast, "last", true
	case "mark":
		return venue.TriggerMark, "mark", true
	case "index":
		return venue.TriggerMark, "index", true
	}
	return 0, "", false
}

func (s *Server) placeAlgo(q *request) (result, *apiError) {
	var r algoReq
	if e := q.decode(&r); e != nil {
		return result{}, e
	}
	if s.takeFault(q, r.AlgoClOrdID) {
		return result{}, nil
	}
	item := obj{"algoId": "", "clOrdId": "", "algoClOrdId": r.AlgoClOrdID, "tag": r.Tag}
	a, e := s.newAlgo(q.r.Context(), q.account, r)
	if e != nil {
		return s.itemResults([]obj{item}, []*itemErr{e}), nil
	}
	item["algoId"] = a.id
	return s.itemResults([]obj{item}, []*itemErr{nil}), nil
}

// newAlgo places an algo order's legs on the venue and keeps it.
func (s *Server) newAlgo(ctx context.Context, account string, r algoReq) (*algo, *itemErr) {
	fail := func(e *itemErr) (*algo, *itemErr) { return nil, e }
	if r.OrdType != "conditional" && r.OrdType != "oco" {
		return fail(perr("ordType"))
	}
	hasTP, hasSL := r.TpTriggerPx != "", r.SlTriggerPx != ""
	if (r.OrdType == "oco" && !(hasTP && hasSL)) || (!hasTP && !hasSL) {
		return fail(perr("tpTriggerPx"))
	}
	if !validClOrdID(r.AlgoClOrdID) {
		return fail(perr("algoClOrdId"))
	}
	closeAll := r.CloseFraction == "1"
	sz := r.Sz
	if closeAll {
		sz = "1" // sized when it triggers; a placeholder that passes the lot check below is not needed
	}
	base := orderReq{InstID: r.InstID, TdMode: r.TdMode, Side: r.Side, PosSide: r.PosSide, OrdType: "market", Sz: sz,
		ReduceOnly: r.ReduceOnly, TgtCcy: "base_ccy"}
	i, vr, e := s.buildOrder(account, base)
	if e != nil && !(closeAll && e.code == "51121") {
		return fail(e)
	}
	if closeAll {
		if !i.swap {
			return fail(perr("closeFraction"))
		}
		vr.Qty = decimal.Zero
		vr.ClosePosition = true
		vr.ReduceOnly = false
	}
	a := &algo{clID: r.AlgoClOrdID, account: account, i: i, ordType: r.OrdType, side: r.Side, posSide: r.PosSide,
		tdMode: r.TdMode, sz: r.Sz, reduceOnly: bool(r.ReduceOnly), closeFraction: r.CloseFraction, state: "live",
		cTime: s.v.Now()}
	a.uTime = a.cTime
	type leg struct {
		trig, ord, typ string
		tp             bool
	}
	var legs []leg
	if hasTP {
		legs = append(legs, leg{r.TpTriggerPx, r.TpOrdPx, r.TpTriggerPxType, true})
	}
	if hasSL {
		legs = append(legs, leg{r.SlTriggerPx, r.SlOrdPx, r.SlTriggerPxType, false})
	}
	for _, l := range legs {
		tb, name, ok := triggerBy(l.typ)
		if !ok {
			return fail(perr("triggerPxType"))
		}
		stop, err := venue.ParseDecimal(l.trig)
		if err != nil || !stop.IsPositive() {
			return fail(perr("triggerPx"))
		}
		lr := vr
		lr.StopPrice, lr.TriggerBy = stop, tb
		switch {
		case l.tp && (l.ord == "" || l.ord == "-1"):
			lr.Type = venue.TakeProfitMarket
		case l.tp:
			lr.Type = venue.TakeProfitLimit
		case l.ord == "" || l.ord == "-1":
			lr.Type = venue.StopMarket
		default:
			lr.Type = venue.StopLimit
		}
		if lr.Type == venue.TakeProfitLimit || lr.Type == venue.StopLimit {
			p, err := venue.ParseDecimal(l.ord)
			if err != nil || !p.IsPositive() {
				return fail(perr("ordPx"))
			}
			lr.Price, lr.TIF = p, venue.GTC
		}
		if l.tp {
			a.tpTrig, a.tpOrd, a.tpType = l.trig, orDefault(l.ord, "-1"), name
		} else {
			a.slTrig, a.slOrd, a.slType = l.trig, orDefault(l.ord, "-1"), name
		}
		o, err := s.v.Place(ctx, lr)
		if err != nil {
			for _, id := range a.legs {
				_, _ = s.v.Cancel(ctx, account, i.v.ID, id, "")
			}
			c, m := mapErr(err)
			return fail(&itemErr{c, m})
		}
		a.legs = append(a.legs, o.ID)
	}
	s.algos.add(a)
	s.notifyAlgo(a)
	return a, nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func (s *Server) cancelAlgos(q *request) (result, *apiError) {
	var rs []struct {
		InstID string `json:"instId"`
		AlgoID string `json:"algoId"`
	}
	if e := q.decode(&rs); e != nil {
		return result{}, e
	}
	if len(rs) == 0 || len(rs) > 10 {
		return result{}, &apiError{http.StatusBadRequest, "51000", "Parameter algoId error: 1 to 10 orders"}
	}
	items := make([]obj, len(rs))
	errs := make([]*itemErr, len(rs))
	for k, r := range rs {
		items[k] = obj{"algoId": r.AlgoID, "algoClOrdId": "", "clOrdId": "", "tag": ""}
		s.algos.mu.Lock()
		a := s.algos.byID[r.AlgoID]
		ok := a != nil && a.account == q.account && a.state == "live" && a.i.id == r.InstID
		var legs []uint64
		if ok {
			legs = a.legs
			a.state, a.uTime = "canceled", s.v.Now()
			items[k]["algoClOrdId"] = a.clID
		}
		s.algos.mu.Unlock()
		if !ok {
			errs[k] = &itemErr{"51508", "Order does not exist"}
			continue
		}
		for _, l := range legs {
			_, _ = s.v.Cancel(q.r.Context(), q.account, a.i.v.ID, l, "")
		}
		s.notifyAlgo(a)
	}
	return s.itemResults(items, errs), nil
}

func (s *Server) algoObj(a *algo) obj {
	lever := ""
	if a.i.swap {
		if st, err := s.v.Settings(a.account, a.i.v.ID); err == nil {
			lever = strconv.Itoa(st.Leverage)
		}
	}
	return obj{"algoId": a.id, "algoClOrdId": a.clID, "instType": a.i.instType(), "instId": a.i.id, "ccy": "",
		"ordId": a.ordID, "ordIdList": []string{}, "ordType": a.ordType, "side": a.side, "posSide": a.posSide,
		"tdMode": a.tdMode, "sz": a.sz, "state": a.state, "lever": lever, "tpTriggerPx": a.tpTrig,
		"tpTriggerPxType": a.tpType, "tpOrdPx": a.tpOrd, "slTriggerPx": a.slTrig, "slTriggerPxType": a.slType,
		"slOrdPx": a.slOrd, "triggerPx": "", "triggerPxType": "", "ordPx": "", "actualSz": "", "actualPx": "",
		"actualSide": "", "triggerTime": tsOrEmpty(a.triggerTime), "reduceOnly": strconv.FormatBool(a.reduceOnly),
		"closeFraction": a.closeFraction, "tag": "", "cTime": ms(a.cTime), "uTime": ms(a.uTime)}
}

func tsOrEmpty(t int64) string {
	if t == 0 {
		return ""
	}
	return ms(t)
}

// listAlgos is orders-algo-pending (pending) or orders-algo-history: newest first, paged by algoId.
func (s *Server) listAlgos(q *request, pending bool) (result, *apiError) {
	ot := q.get("ordType")
	if ot == "" {
		return result{}, errEmpty("ordType")
	}
	id := q.get("instId")
	state := q.get("state")
	if !pending && state == "" && q.get("algoId") == "" {
		return result{}, errEmpty("state")
	}
	// after and before are algo ids: rows older (smaller id) than after, newer than before.
	after, before, limit, aerr := paging(q, 100, 100)
	if aerr != nil {
		return result{}, aerr
	}
	s.algos.mu.Lock()
	defer s.algos.mu.Unlock()
	rows := []obj{}
	for k := len(s.algos.order) - 1; k >= 0 && len(rows) < limit; k-- {
		a := s.algos.order[k]
		if a.account != q.account || (id != "" && a.i.id != id) {
			continue
		}
		if n, _ := strconv.ParseInt(a.id, 10, 64); !inWindow(n, after, before) {
			continue
		}
		okType := false
		for _, t := range strings.Split(ot, ",") {
			okType = okType || t == a.ordType
		}
		if !okType || (pending != (a.state == "live")) || (state != "" && a.state != state) {
			continue
		}
		if aid := q.get("algoId"); aid != "" && aid != a.id {
			continue
		}
		rows = append(rows, s.algoObj(a))
	}
	return result{data: rows}, nil
}

func (s *Server) algosPending(q *request) (result, *apiError) { return s.listAlgos(q, true) }
func (s *Server) algosHistory(q *request) (result, *apiError) { return s.listAlgos(q, false) }

// getAlgo is GET /api/v5/trade/order-algo: one algo order by algoId or algoClOrdId (the newest with that id).
func (s *Server) getAlgo(q *request) (result, *apiError) {
	id, cl := q.get("algoId"), q.get("algoClOrdId")
	if id == "" && cl == "" {
		return result{}, errEmpty("algoId")
	}
	s.algos.mu.Lock()
	defer s.algos.mu.Unlock()
	for k := len(s.algos.order) - 1; k >= 0; k-- {
		a := s.algos.order[k]
		if a.account == q.account && ((id != "" && a.id == id) || (id == "" && a.clID == cl)) {
			return result{data: []obj{s.algoObj(a)}}, nil
		}
	}
	return result{}, &apiError{http.StatusOK, "51603", "Order does not exist"}
}
