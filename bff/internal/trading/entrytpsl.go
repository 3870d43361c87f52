package trading

import (
	"net/http"
	"slices"
	"strings"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// EntryTpSl is what take_profit / stop_loss on a new order take on one market type: from the plugin's
// MarketTradingCapabilities.tpsl_on_entry where the exchange arms them (TP_SL_KIND_ON_ORDER), or exhub's own rules
// where the trading service arms them after the fill (SWAP with reduce-only stop-market and take-profit-market
// algo orders, attached.go). The markets API shows them to the order form; Place refuses what breaks them before
// anything is journaled or sent.
type EntryTpSl struct {
	// ArmedByExhub: the trading service places the legs once the entry fills.
	ArmedByExhub bool
	// OrderTypes are the entry order types that take TP/SL (empty: every order type of the market).
	OrderTypes []exchangev1.OrderType
	// BothLegs: a take-profit and a stop-loss only together.
	BothLegs bool
	// TriggerTypes are the trigger price types a leg takes (empty: any the market takes).
	TriggerTypes []exchangev1.TriggerPriceType
	// LimitPrice: a leg may carry a limit price; false: market on trigger only.
	LimitPrice bool
}

// EntryTpSlOf is the market's rules for TP/SL on a new order; false where a new order takes none.
func EntryTpSlOf(mc *exchangev1.MarketTradingCapabilities) (EntryTpSl, bool) {
	if mc == nil {
		return EntryTpSl{}, false
	}
	return entryTpSlOf(capsOfMarket(mc), mc.GetMarketType())
}

func entryTpSlOf(caps marketCaps, m exchangev1.MarketType) (EntryTpSl, bool) {
	switch {
	case caps.flatTpSl:
		// A plugin without per-market capabilities: its flat tpsl flag, nothing more known.
		return EntryTpSl{LimitPrice: true}, true
	case slices.Contains(caps.tpslKinds, exchangev1.TpSlKind_TP_SL_KIND_ON_ORDER):
		r := caps.onEntry
		if r == nil { // a plugin from before tpsl_on_entry: no rules beyond the market's own
			return EntryTpSl{TriggerTypes: caps.triggers, LimitPrice: true}, true
		}
		out := EntryTpSl{OrderTypes: r.GetOrderTypes(), BothLegs: r.GetBothLegsRequired(),
			TriggerTypes: r.GetTriggerPriceTypes(), LimitPrice: r.GetLimitPrice()}
		if len(out.TriggerTypes) == 0 {
			out.TriggerTypes = caps.triggers
		}
		return out, true
	case hostArmsTpSl(caps, m):
		return EntryTpSl{ArmedByExhub: true, TriggerTypes: caps.triggers}, true
	}
	return EntryTpSl{}, false
}

// checkEntryTpSl refuses an entry's TP/SL that the market's rules do not take (422 not_supported naming the field).
func checkEntryTpSl(caps marketCaps, m exchangev1.MarketType, typ exchangev1.OrderType, tp, sl *exchangev1.TpSl) *Error {
	if tp == nil && sl == nil {
		return nil
	}
	field := "take_profit"
	if tp == nil {
		field = "stop_loss"
	}
	refuse := func(field, msg string) *Error {
		return &Error{Status: http.StatusUnprocessableEntity, Code: "not_supported", Field: field, Message: msg}
	}
	r, ok := entryTpSlOf(caps, m)
	if !ok {
		return refuse(field, "This exchange takes no take-profit or stop-loss on a new order here.")
	}
	if len(r.OrderTypes) > 0 && !slices.Contains(r.OrderTypes, typ) {
		names := make([]string, 0, len(r.OrderTypes))
		for _, t := range r.OrderTypes {
			names = append(names, strings.ToLower(enumName(exchangev1.OrderType_name, t, "ORDER_TYPE_")))
		}
		return refuse(field, "This exchange takes a take-profit or stop-loss only on a new "+strings.Join(names, " or ")+
			" order here.")
	}
	if r.BothLegs && (tp == nil || sl == nil) {
		missing := "stop_loss"
		if tp == nil {
			missing = "take_profit"
		}
		return refuse(missing, "This exchange takes a take-profit and a stop-loss on a new order only together.")
	}
	for _, x := range []struct {
		field string
		t     *exchangev1.TpSl
	}{{"take_profit", tp}, {"stop_loss", sl}} {
		if x.t == nil {
			continue
		}
		if x.t.GetPrice() != "" && !r.LimitPrice {
			return refuse(x.field+".price", "This exchange closes a take-profit or stop-loss at market only.")
		}
		if tt := x.t.GetTriggerPriceType(); tt != 0 && len(r.TriggerTypes) > 0 && !slices.Contains(r.TriggerTypes, tt) {
			return refuse(x.field+".trigger_price_type", "This exchange does not trigger on this price here.")
		}
	}
	return nil
}
