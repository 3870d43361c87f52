package trading

// TP/SL on entry armed by exhub. Where a SWAP market takes no take-profit/stop-loss on the order itself (no
// TP_SL_KIND_ON_ORDER, e.g. Binance USD-M futures) but takes reduce-only STOP_MARKET and TAKE_PROFIT_MARKET algo
// orders, Place journals the entry with its TP/SL and sends it without them; once the journal sees the entry final
// with something filled (by the answer, the account stream or reconciliation), the loop places the closing orders
// through the normal algo journal path (PlaceAlgo): opposite side, the filled size, reduce-only (hedge mode: the
// entry's position side), the trigger price type asked. Each has the Idempotency-Key "attached:<entry>:tp|sl" and a
// client id derived from the entry's, so a repeated scan, a repeated event or a restart never places it twice. An
// entry cancelled without a fill arms nothing. A partial fill arms for the filled size once the entry ends
// (cancelled or expired with a fill); while a partly filled entry still rests, nothing is armed yet. Once one leg
// triggers, the loop cancels the other (they are two orders, not an OCO pair).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/exhub/exhub/bff/internal/store"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

const (
	// armEvery is how often the loop looks for filled entries whose TP/SL exhub arms.
	armEvery = time.Second
	// armWindow bounds the periodic look to recently updated entries; the first look after start has no bound.
	armWindow = 24 * time.Hour
	// armBatch is the most entries armed in one look (the rest wait for the next).
	armBatch = 50
)

// attachedState is the loop's bookkeeping of arming (only the loop touches it).
type attachedState struct {
	last    time.Time
	started bool
	// refused holds legs (journal key) refused before anything was journaled (e.g. a trigger off the tick grid), so
	// they are not asked again every look; bounded by refusedKeep.
	refused map[string]bool
}

const refusedKeep = 10_000

// hostArmsTpSl says whether exhub arms a TP/SL given on an entry of this market itself: SWAP, the exchange does not
// take it on the order, and it takes reduce-only stop-market and take-profit-market algo orders.
func hostArmsTpSl(caps marketCaps, m exchangev1.MarketType) bool {
	return m == exchangev1.MarketType_MARKET_TYPE_SWAP &&
		!slices.Contains(caps.tpslKinds, exchangev1.TpSlKind_TP_SL_KIND_ON_ORDER) && caps.reduceOnly &&
		slices.Contains(caps.algoTypes, exchangev1.OrderType_ORDER_TYPE_STOP_MARKET) &&
		slices.Contains(caps.algoTypes, exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_MARKET)
}

// entryTpSl decides where an entry's TP/SL goes. It returns what the plugin gets: the TP/SL unchanged where the
// exchange arms them (or refuses them), nil where exhub arms them after the fill (market-price closes only).
func entryTpSl(caps marketCaps, m exchangev1.MarketType, reduceOnly bool, tp, sl *exchangev1.TpSl) (*exchangev1.TpSl, *exchangev1.TpSl, *Error) {
	if (tp == nil && sl == nil) || !hostArmsTpSl(caps, m) {
		return tp, sl, nil
	}
	if reduceOnly {
		return nil, nil, invalid("take_profit", "A reduce-only order takes no take-profit or stop-loss.")
	}
	for _, x := range []struct {
		field string
		t     *exchangev1.TpSl
	}{{"take_profit", tp}, {"stop_loss", sl}} {
		if x.t == nil {
			continue
		}
		if x.t.GetPrice() != "" {
			return nil, nil, &Error{Status: http.StatusUnprocessableEntity, Code: "not_supported", Field: x.field + ".price",
				Message: "This exchange closes a take-profit or stop-loss at market only."}
		}
		if tt := x.t.GetTriggerPriceType(); tt != 0 && len(caps.triggers) > 0 && !slices.Contains(caps.triggers, tt) {
			return nil, nil, &Error{Status: http.StatusUnprocessableEntity, Code: "not_supported", Field: x.field + ".trigger_price_type",
				Message: "This exchange does not trigger on this price here."}
		}
	}
	return nil, nil, nil
}

type attachedCIDKey struct{}

// clientIDFor is the client id of a new journal entry: the one armAttached derived (carried by ctx), else a new one.
func (s *Service) clientIDFor(ctx context.Context, d *exchangev1.DescribeResponse) (string, error) {
	if cid, ok := ctx.Value(attachedCIDKey{}).(string); ok && cid != "" {
		return cid, nil
	}
	return s.newClientID(d)
}

// attachedClientID derives a leg's client id from the entry's: "ex" and 30 hex digits of a hash of both, in the
// plugin's format. The same entry and leg always give the same id.
func (s *Service) attachedClientID(d *exchangev1.DescribeResponse, entryCID, leg string) (string, error) {
	h := sha256.Sum256([]byte(entryCID + "/" + leg))
	return s.clientIDFrom(d, "ex"+hex.EncodeToString(h[:15]))
}

// AttachedKey is the Idempotency-Key of the take-profit ("tp") or stop-loss ("sl") exhub arms for entry id.
func AttachedKey(entryID, leg string) string { return store.AttachedKeyPrefix + entryID + ":" + leg }

// attachedTo is the entry id of an order exhub armed for an entry's TP/SL ("" for any other order).
func attachedTo(o store.Order) string {
	rest, ok := strings.CutPrefix(o.IdempotencyKey, store.AttachedKeyPrefix)
	if !ok || o.Kind != store.OrderKindAlgo {
		return ""
	}
	id, _, _ := strings.Cut(rest, ":")
	return id
}

// armAttachedDue runs armAttached every armEvery (the loop calls it each turn).
func (s *Service) armAttachedDue(ctx context.Context) {
	now := s.now()
	if s.attached.started && now.Sub(s.attached.last) < armEvery {
		return
	}
	since := now.Add(-armWindow)
	if !s.attached.started {
		since = time.Time{} // after a restart: every entry, however old
	}
	s.attached.started, s.attached.last = true, now
	s.armAttached(ctx, since)
	s.cancelAttachedSiblings(ctx)
}

// cancelAttachedSiblings cancels a waiting leg once the other leg of its entry triggered (the two are separate
// orders, not an OCO pair): left waiting, it would act on whatever position the member holds later.
func (s *Service) cancelAttachedSiblings(ctx context.Context) {
	legs, err := s.st.AttachedToCancel(ctx, armBatch)
	if err != nil {
		s.log.Warn("trading: reading TP/SL legs to cancel", "err", err)
		return
	}
	for _, o := range legs {
		if ctx.Err() != nil {
			return
		}
		got, pending, err := s.Cancel(ctx, o.MemberID, o.ID)
		if err != nil {
			s.log.Warn("trading: the other TP/SL leg not cancelled yet", "leg", o.ID, "err", err)
			continue
		}
		s.log.Info("trading: the other TP/SL leg cancelled", "leg", o.ID, "status", StatusOf(got), "pending", pending)
	}
}

// armAttached arms the TP/SL of the entries (updated since, zero: any time) that filled and have none journaled.
func (s *Service) armAttached(ctx context.Context, since time.Time) {
	var slugs []string
	for _, sup := range s.plugins.Supervisors() {
		d := sup.Describe()
		if d == nil {
			continue
		}
		if caps, ok := capsOf(d, exchangev1.MarketType_MARKET_TYPE_SWAP); ok && hostArmsTpSl(caps, exchangev1.MarketType_MARKET_TYPE_SWAP) {
			slugs = append(slugs, sup.Slug())
		}
	}
	entries, err := s.st.EntriesToArm(ctx, slugs, since, armBatch)
	if err != nil {
		s.log.Warn("trading: reading entries to arm TP/SL", "err", err)
		return
	}
	for _, o := range entries {
		if ctx.Err() != nil {
			return
		}
		s.armEntry(ctx, o)
	}
}

// armEntry places the take-profit and stop-loss of one filled entry through the algo journal. A leg already
// journaled answers with its entry (the Idempotency-Key), so nothing is sent twice.
func (s *Service) armEntry(ctx context.Context, o store.Order) {
	if !dec(o.FilledQty).IsPositive() {
		return
	}
	sup, err := s.supervisor(o.Exchange)
	if err != nil {
		return
	}
	d, err := describe(sup)
	if err != nil {
		return
	}
	// The legs act for the account the entry was placed on; a member now on another account gets nothing armed.
	if acct, err := s.account(ctx, o.MemberID, o.Exchange); err != nil || acct.GetAccountId() != o.AccountID {
		s.log.Warn("trading: TP/SL of a filled entry not armed: the member's account changed", "entry", o.ID)
		return
	}
	side := "SELL"
	if o.Side == "SELL" {
		side = "BUY"
	}
	hedge := o.PositionSide == "LONG" || o.PositionSide == "SHORT"
	for _, leg := range []struct {
		name, typ string
		t         *TpSl
	}{{"tp", "TAKE_PROFIT_MARKET", decodeTpSl(o.TakeProfit)}, {"sl", "STOP_MARKET", decodeTpSl(o.StopLoss)}} {
		key := AttachedKey(o.ID, leg.name)
		if leg.t == nil || s.attached.refused[key] {
			continue
		}
		cid, err := s.attachedClientID(d, o.ClientOrderID, leg.name)
		if err != nil {
			s.log.Warn("trading: TP/SL leg not armed", "entry", o.ID, "leg", leg.name, "err", err)
			continue
		}
		req := AlgoRequest{Exchange: o.Exchange, MarketType: o.MarketType, Symbol: o.Symbol, Side: side, Type: leg.typ,
			TriggerPrice: leg.t.TriggerPrice, TriggerPriceType: leg.t.TriggerPriceType, Qty: o.FilledQty,
			ReduceOnly: !hedge, PositionSide: o.PositionSide, MarginMode: o.MarginMode}
		if !hedge {
			req.PositionSide = ""
		}
		got, err := s.PlaceAlgo(context.WithValue(ctx, attachedCIDKey{}, cid), o.MemberID, key, req)
		var te *Error
		switch {
		case errors.As(err, &te):
			// Refused (e.g. the trigger was already crossed when the entry filled): journaled as rejected (or, when
			// refused before the journal, remembered here), never sent again; this leg does not protect the position.
			s.log.Warn("trading: TP/SL leg refused", "entry", o.ID, "leg", leg.name, "code", te.Code, "msg", te.Message)
			if s.attached.refused == nil || len(s.attached.refused) >= refusedKeep {
				s.attached.refused = map[string]bool{}
			}
			s.attached.refused[key] = true
		case err != nil:
			s.log.Warn("trading: TP/SL leg not armed yet", "entry", o.ID, "leg", leg.name, "err", err)
		default:
			s.log.Info("trading: TP/SL leg armed", "entry", o.ID, "leg", leg.name, "journal", got.ID, "status", StatusOf(got))
		}
	}
}
