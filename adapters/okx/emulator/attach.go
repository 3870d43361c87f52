package emulator

import (
	"context"

	"github.com/exhub/exhub/adapters/venue"
)

// attachReq is one item of an order's attachAlgoOrds: a take-profit and/or stop-loss armed when the order fills.
type attachReq struct {
	AttachAlgoClOrdID string `json:"attachAlgoClOrdId"`
	TpTriggerPx       string `json:"tpTriggerPx"`
	TpOrdPx           string `json:"tpOrdPx"`
	TpTriggerPxType   string `json:"tpTriggerPxType"`
	SlTriggerPx       string `json:"slTriggerPx"`
	SlOrdPx           string `json:"slOrdPx"`
	SlTriggerPxType   string `json:"slTriggerPxType"`
}

// pendingAttach is the TP/SL of an entry order that has not finished yet.
type pendingAttach struct {
	account string
	entry   orderReq
	tpsl    attachReq
}

// maxPendingAttach bounds the entries waiting to fill with a TP/SL attached.
const maxPendingAttach = 10_000

// checkAttach validates an order's attachAlgoOrds before the order is placed: one item, a take-profit and/or a
// stop-loss with a positive trigger price, a known trigger type (spot: last only), and a positive order price or
// -1 (market).
func checkAttach(i *inst, r orderReq) *itemErr {
	if len(r.AttachAlgoOrds) == 0 {
		return nil
	}
	if len(r.AttachAlgoOrds) > 1 {
		return perr("attachAlgoOrds")
	}
	a := r.AttachAlgoOrds[0]
	if a.TpTriggerPx == "" && a.SlTriggerPx == "" {
		return perr("tpTriggerPx")
	}
	if a.AttachAlgoClOrdID != "" && !validClOrdID(a.AttachAlgoClOrdID) {
		return perr("attachAlgoClOrdId")
	}
	for _, l := range []struct{ name, trig, ord, typ string }{
		{"tp", a.TpTriggerPx, a.TpOrdPx, a.TpTriggerPxType}, {"sl", a.SlTriggerPx, a.SlOrdPx, a.SlTriggerPxType},
	} {
		if l.trig == "" {
			continue
		}
		if p, err := venue.ParseDecimal(l.trig); err != nil || !p.IsPositive() {
			return perr(l.name + "TriggerPx")
		}
		tb, _, ok := triggerBy(l.typ)
		if !ok || (!i.swap && tb != venue.TriggerLast) {
			return perr(l.name + "TriggerPxType")
		}
		if l.ord != "" && l.ord != "-1" {
			if p, err := venue.ParseDecimal(l.ord); err != nil || !p.IsPositive() {
				return perr(l.name + "OrdPx")
			}
		}
	}
	return nil
}

// armAttach keeps an entry's TP/SL until the entry finishes, then looks at the entry once: one that already
// finished (a market order, a limit that crossed) arms its TP/SL now. Whoever takes the pending item from the map
// arms it, so the order event and this check never arm it twice.
func (s *Server) armAttach(ctx context.Context, acct string, orderID uint64, r orderReq) {
	s.algos.mu.Lock()
	if len(s.algos.attached) >= maxPendingAttach {
		s.algos.mu.Unlock()
		s.log.Warn("attached TP/SL dropped: too many entries waiting", "order", orderID)
		return
	}
	s.algos.attached[orderID] = pendingAttach{account: acct, entry: r, tpsl: r.AttachAlgoOrds[0]}
	s.algos.mu.Unlock()
	if o, err := s.v.GetOrder(acct, orderID, ""); err == nil {
		s.onAttachedEntry(ctx, o)
	}
}

// onAttachedEntry turns the TP/SL attached to a finished entry into an algo order on the opposite side for the
// filled size: OKX's "conditional" (one leg) or "oco" (both), reduce-only on a perpetual (in hedge mode the
// position side makes it so), triggering on the price type asked. An entry cancelled without a fill drops them.
func (s *Server) onAttachedEntry(ctx context.Context, o venue.Order) {
	if !o.Status.Final() {
		return
	}
	s.algos.mu.Lock()
	p, ok := s.algos.attached[o.ID]
	delete(s.algos.attached, o.ID)
	s.algos.mu.Unlock()
	if !ok || o.Filled.IsZero() {
		return
	}
	i, ok := s.lookup(p.entry.InstID)
	if !ok {
		return
	}
	side := "sell"
	if o.Side == venue.Sell {
		side = "buy"
	}
	ordType := "conditional"
	if p.tpsl.TpTriggerPx != "" && p.tpsl.SlTriggerPx != "" {
		ordType = "oco"
	}
	hedgeSide := p.entry.PosSide == "long" || p.entry.PosSide == "short"
	r := algoReq{InstID: p.entry.InstID, TdMode: p.entry.TdMode, Side: side, PosSide: p.entry.PosSide, OrdType: ordType,
		Sz: i.szString(o.Filled), ReduceOnly: flexBool(i.swap && !hedgeSide), AlgoClOrdID: p.tpsl.AttachAlgoClOrdID,
		Tag: p.entry.Tag, TpTriggerPx: p.tpsl.TpTriggerPx, TpOrdPx: p.tpsl.TpOrdPx, TpTriggerPxType: p.tpsl.TpTriggerPxType,
		SlTriggerPx: p.tpsl.SlTriggerPx, SlOrdPx: p.tpsl.SlOrdPx, SlTriggerPxType: p.tpsl.SlTriggerPxType}
	if _, e := s.newAlgo(ctx, p.account, r); e != nil {
		s.log.Warn("attached TP/SL not placed", "order", o.ID, "code", e.code, "msg", e.msg)
	}
}
