package trading

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/store"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// waitingAlgos counts member a's waiting algo orders on binance's SWAP symbol by client id.
func (e *env) waitingAlgos(t *testing.T, m market) map[string]int {
	t.Helper()
	sup, _ := e.host.Get("binance")
	acct, _ := e.acc.AccountRef(ctxT(t), "a", "binance")
	out := map[string]int{}
	err := sup.Call(ctxT(t), "ListAlgoOrders", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		r, err := c.ListAlgoOrders(ctx, &exchangev1.ListAlgoOrdersRequest{Account: acct, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: m.symbol})
		for _, a := range r.GetAlgoOrders() {
			if a.GetStatus() == exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_WAITING {
				out[a.GetClientAlgoId()]++
			}
		}
		return err
	})
	if err != nil {
		t.Fatalf("ListAlgoOrders: %v", err)
	}
	return out
}

// TestAttachedTpSlArmedOnce: Binance USD-M futures takes no TP/SL on the order, so exhub sends the entry without
// them and, once it fills, places a reduce-only take-profit and stop-loss for the filled size through the algo
// journal, with client ids derived from the entry's; further looks and a new service (a restart) never place them
// again; an entry cancelled without a fill arms nothing.
func TestAttachedTpSlArmedOnce(t *testing.T) {
	e := newEnv(t, false)
	ctx := ctxT(t)
	m := e.market(t, "binance", "SWAP")
	qty := m.qty(m.price(1), 1)
	tp, sl := &TpSl{TriggerPrice: m.price(1.5), TriggerPriceType: "MARK"}, &TpSl{TriggerPrice: m.price(0.5)}
	entry, err := e.svc.Place(ctx, "a", newKey(), PlaceRequest{Exchange: "binance", MarketType: "SWAP", Symbol: m.symbol,
		Side: "BUY", Type: "MARKET", Qty: qty, TakeProfit: tp, StopLoss: sl})
	if err != nil {
		t.Fatalf("entry: %v", err)
	}
	if entry.TakeProfit == "" || entry.StopLoss == "" {
		t.Fatalf("the entry's TP/SL are not journaled: %+v", entry)
	}
	entry = e.waitStatus(t, entry.ID, StatusFilled)

	legs := map[string]store.Order{}
	eventually(t, "both legs armed and waiting", func() (string, bool) {
		for _, leg := range []string{"tp", "sl"} {
			o, err := e.st.OrderByKey(ctx, "a", AttachedKey(entry.ID, leg))
			if err != nil {
				return leg + ": " + err.Error(), false
			}
			if StatusOf(o) != StatusWaiting {
				return leg + ": " + StatusOf(o), false
			}
			legs[leg] = o
		}
		return "", true
	})
	for leg, want := range map[string]struct{ typ, trig, tt string }{
		"tp": {"TAKE_PROFIT_MARKET", tp.TriggerPrice, "MARK"}, "sl": {"STOP_MARKET", sl.TriggerPrice, ""},
	} {
		o := legs[leg]
		if o.Kind != store.OrderKindAlgo || o.Side != "SELL" || o.Type != want.typ || !o.ReduceOnly ||
			!dec(o.Qty).Equal(dec(entry.FilledQty)) || !dec(o.TriggerPrice).Equal(dec(want.trig)) || (want.tt != "" && o.TriggerType != want.tt) {
			t.Fatalf("%s leg %+v (entry filled %s)", leg, o, entry.FilledQty)
		}
	}
	for leg, o := range legs {
		if v := View(o); v.AttachedTo != entry.ID {
			t.Fatalf("%s leg shown attached to %q, want %q", leg, v.AttachedTo, entry.ID)
		}
	}
	d, _ := describe(mustSup(t, e, "binance"))
	for _, leg := range []string{"tp", "sl"} {
		if cid, _ := e.svc.attachedClientID(d, entry.ClientOrderID, leg); legs[leg].ClientOrderID != cid {
			t.Fatalf("%s client id %q, want %q derived from the entry's", leg, legs[leg].ClientOrderID, cid)
		}
	}
	wantOnce := func(when string) {
		t.Helper()
		got := e.waitingAlgos(t, m)
		if len(got) != 2 || got[legs["tp"].ClientOrderID] != 1 || got[legs["sl"].ClientOrderID] != 1 {
			t.Fatalf("%s: waiting algo orders %v, want the two legs once each", when, got)
		}
	}
	wantOnce("armed")

	// More looks, by this service and by a new one (a restart), with no time bound: nothing more is placed.
	e.stopLoop()
	e.svc.armAttached(ctx, time.Time{})
	svc, err := New(e.svc.cfg, e.st, e.host, e.acc)
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	e.svc.armAttachedDue(ctx)
	e.svc.armAttached(ctx, time.Time{})
	wantOnce("after a restart")

	// An entry cancelled before any fill arms nothing.
	price := m.price(0.7)
	rest, err := e.svc.Place(ctx, "a", newKey(), PlaceRequest{Exchange: "binance", MarketType: "SWAP", Symbol: m.symbol,
		Side: "BUY", Type: "LIMIT", Price: price, Qty: m.qty(price, 1), TakeProfit: &TpSl{TriggerPrice: m.price(0.9)},
		StopLoss: &TpSl{TriggerPrice: m.price(0.6)}})
	if err != nil || StatusOf(rest) != StatusOpen {
		t.Fatalf("resting entry: %+v %v", rest, err)
	}
	if _, _, err := e.svc.Cancel(ctx, "a", rest.ID); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	e.waitStatus(t, rest.ID, StatusCancelled)
	e.svc.armAttached(ctx, time.Time{})
	for _, leg := range []string{"tp", "sl"} {
		if o, err := e.st.OrderByKey(ctx, "a", AttachedKey(rest.ID, leg)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a cancelled entry armed its %s: %+v %v", leg, o, err)
		}
	}
	wantOnce("after the cancelled entry")

	// A TP/SL closing at a limit price is not offered where exhub arms them.
	_, err = e.svc.Place(ctx, "a", newKey(), PlaceRequest{Exchange: "binance", MarketType: "SWAP", Symbol: m.symbol,
		Side: "BUY", Type: "MARKET", Qty: qty, TakeProfit: &TpSl{TriggerPrice: m.price(1.5), Price: m.price(1.5)}})
	if ex := wantCode(t, err, "not_supported"); ex.Field != "take_profit.price" {
		t.Fatalf("field %q", ex.Field)
	}
}

func mustSup(t *testing.T, e *env, slug string) *pluginhost.Supervisor {
	t.Helper()
	sup, ok := e.host.Get(slug)
	if !ok {
		t.Fatalf("no plugin %s", slug)
	}
	return sup
}

// TestAttachedSiblingCancelled: once the mark price crosses the armed take-profit and the journal sees it triggered,
// the loop cancels the stop-loss left waiting.
func TestAttachedSiblingCancelled(t *testing.T) {
	e := newVenueEnv(t)
	ctx := ctxT(t)
	m := e.market(t, "binance", "SWAP")
	v := e.venues["binance"]
	if err := v.SetMarkPrice(e.perp["binance"], m.last); err != nil {
		t.Fatal(err)
	}
	entry, err := e.svc.Place(ctx, "a", newKey(), PlaceRequest{Exchange: "binance", MarketType: "SWAP", Symbol: m.symbol,
		Side: "BUY", Type: "MARKET", Qty: m.qty(m.price(1), 1), TakeProfit: &TpSl{TriggerPrice: m.price(1.2), TriggerPriceType: "MARK"},
		StopLoss: &TpSl{TriggerPrice: m.price(0.5), TriggerPriceType: "MARK"}})
	if err != nil {
		t.Fatalf("entry: %v", err)
	}
	e.waitStatus(t, entry.ID, StatusFilled)
	var tp, sl store.Order
	eventually(t, "both legs waiting", func() (string, bool) {
		var err1, err2 error
		tp, err1 = e.st.OrderByKey(ctx, "a", AttachedKey(entry.ID, "tp"))
		sl, err2 = e.st.OrderByKey(ctx, "a", AttachedKey(entry.ID, "sl"))
		if err1 != nil || err2 != nil {
			return fmt.Sprint(err1, err2), false
		}
		return StatusOf(tp) + " " + StatusOf(sl), StatusOf(tp) == StatusWaiting && StatusOf(sl) == StatusWaiting
	})
	if err := v.SetMarkPrice(e.perp["binance"], dec(m.price(1.25))); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the take-profit triggered and the stop-loss cancelled", func() (string, bool) {
		e.svc.Reconcile("binance")
		a, _ := e.st.Order(ctx, tp.ID)
		b, _ := e.st.Order(ctx, sl.ID)
		return StatusOf(a) + " " + StatusOf(b), StatusOf(a) == StatusTriggered && StatusOf(b) == StatusCancelled
	})
}

// TestSpotTpSlByExchange: on Binance spot the exchange arms TP/SL itself (an OTOCO order list), so the entry is
// sent with them and exhub arms nothing; a market entry with TP/SL there is refused.
func TestSpotTpSlByExchange(t *testing.T) {
	e := newEnv(t, false)
	ctx := ctxT(t)
	m := e.market(t, "binance", "SPOT")
	price := m.price(1.02) // crosses the ask: the working order fills
	entry, err := e.svc.Place(ctx, "a", newKey(), PlaceRequest{Exchange: "binance", MarketType: "SPOT", Symbol: m.symbol,
		Side: "BUY", Type: "LIMIT", Price: price, Qty: m.qty(price, 3), TakeProfit: &TpSl{TriggerPrice: m.price(1.5)},
		StopLoss: &TpSl{TriggerPrice: m.price(0.5)}})
	if err != nil {
		t.Fatalf("entry: %v", err)
	}
	e.waitStatus(t, entry.ID, StatusFilled)
	eventually(t, "the order list's pending pair rests on the exchange", func() (string, bool) {
		list, err := e.svc.OpenOrders(ctx, "a", Scope{Exchange: "binance", MarketType: "SPOT", Symbol: m.symbol})
		if err != nil {
			return err.Error(), false
		}
		n := 0
		for _, o := range list {
			if o.ClientOrderID == entry.ClientOrderID+"-tp" || o.ClientOrderID == entry.ClientOrderID+"-sl" {
				n++
			}
		}
		return fmt.Sprint(n, " legs"), n == 2
	})
	e.stopLoop()
	e.svc.armAttached(ctx, time.Time{})
	for _, leg := range []string{"tp", "sl"} {
		if _, err := e.st.OrderByKey(ctx, "a", AttachedKey(entry.ID, leg)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("exhub armed a spot %s: %v", leg, err)
		}
	}
	// The market's rules (tpsl_on_entry: a LIMIT entry, both legs) refuse the rest before anything is journaled.
	marketKey, oneLegKey := newKey(), newKey()
	_, err = e.svc.Place(ctx, "a", marketKey, PlaceRequest{Exchange: "binance", MarketType: "SPOT", Symbol: m.symbol,
		Side: "BUY", Type: "MARKET", Qty: m.qty(price, 1), TakeProfit: &TpSl{TriggerPrice: m.price(1.5)},
		StopLoss: &TpSl{TriggerPrice: m.price(0.5)}})
	if ex := wantCode(t, err, "not_supported"); ex.Field != "take_profit" {
		t.Fatalf("a market entry with TP/SL: field %q", ex.Field)
	}
	_, err = e.svc.Place(ctx, "a", oneLegKey, PlaceRequest{Exchange: "binance", MarketType: "SPOT", Symbol: m.symbol,
		Side: "BUY", Type: "LIMIT", Price: price, Qty: m.qty(price, 1), TakeProfit: &TpSl{TriggerPrice: m.price(1.5)}})
	if ex := wantCode(t, err, "not_supported"); ex.Field != "stop_loss" {
		t.Fatalf("a take-profit alone: field %q", ex.Field)
	}
	for _, k := range []string{marketKey, oneLegKey} {
		if o, err := e.st.OrderByKey(ctx, "a", k); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a refused entry was journaled: %+v %v", o, err)
		}
	}
}
