package trading

import (
	"testing"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// The rules of TP/SL on entry per market, and the refusals that name the field, before anything is sent.
func TestEntryTpSlRules(t *testing.T) {
	limit, market := exchangev1.OrderType_ORDER_TYPE_LIMIT, exchangev1.OrderType_ORDER_TYPE_MARKET
	last, mark := exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST, exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK
	spot, swap := exchangev1.MarketType_MARKET_TYPE_SPOT, exchangev1.MarketType_MARKET_TYPE_SWAP
	onOrder := []exchangev1.TpSlKind{exchangev1.TpSlKind_TP_SL_KIND_ON_ORDER}
	// Binance spot: an OTOCO order list.
	otoco := &exchangev1.MarketTradingCapabilities{MarketType: spot, OrderTypes: []exchangev1.OrderType{limit, market},
		TpslKinds: onOrder, TriggerPriceTypes: []exchangev1.TriggerPriceType{last},
		TpslOnEntry: &exchangev1.TpSlOnEntry{OrderTypes: []exchangev1.OrderType{limit}, BothLegsRequired: true,
			TriggerPriceTypes: []exchangev1.TriggerPriceType{last}}}
	// Binance futures: exhub arms them after the fill.
	armed := &exchangev1.MarketTradingCapabilities{MarketType: swap, OrderTypes: []exchangev1.OrderType{limit, market},
		AlgoOrderTypes: []exchangev1.OrderType{exchangev1.OrderType_ORDER_TYPE_STOP_MARKET, exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_MARKET},
		ReduceOnly:     true, TriggerPriceTypes: []exchangev1.TriggerPriceType{last, mark}}
	// OKX: attached on limit and market orders, one leg alone, a limit price allowed; a plugin from before the rules.
	attached := &exchangev1.MarketTradingCapabilities{MarketType: swap, OrderTypes: []exchangev1.OrderType{limit, market},
		TpslKinds: onOrder, TriggerPriceTypes: []exchangev1.TriggerPriceType{last, mark},
		TpslOnEntry: &exchangev1.TpSlOnEntry{OrderTypes: []exchangev1.OrderType{limit, market}, LimitPrice: true}}
	older := &exchangev1.MarketTradingCapabilities{MarketType: swap, TpslKinds: onOrder, TriggerPriceTypes: []exchangev1.TriggerPriceType{last}}
	none := &exchangev1.MarketTradingCapabilities{MarketType: spot, OrderTypes: []exchangev1.OrderType{limit, market}}

	if r, ok := EntryTpSlOf(otoco); !ok || r.ArmedByExhub || !r.BothLegs || r.LimitPrice || len(r.OrderTypes) != 1 || len(r.TriggerTypes) != 1 {
		t.Fatalf("otoco: %+v %v", r, ok)
	}
	if r, ok := EntryTpSlOf(armed); !ok || !r.ArmedByExhub || r.BothLegs || r.LimitPrice || len(r.OrderTypes) != 0 || len(r.TriggerTypes) != 2 {
		t.Fatalf("armed by exhub: %+v %v", r, ok)
	}
	if r, ok := EntryTpSlOf(attached); !ok || r.ArmedByExhub || r.BothLegs || !r.LimitPrice || len(r.TriggerTypes) != 2 {
		t.Fatalf("attached: %+v %v (trigger types default to the market's)", r, ok)
	}
	if r, ok := EntryTpSlOf(older); !ok || !r.LimitPrice || len(r.OrderTypes) != 0 || len(r.TriggerTypes) != 1 {
		t.Fatalf("a plugin without tpsl_on_entry: %+v %v", r, ok)
	}
	if _, ok := EntryTpSlOf(none); ok {
		t.Fatal("a market without TP/SL on entry has rules")
	}

	tp := &exchangev1.TpSl{TriggerPrice: "70000"}
	sl := &exchangev1.TpSl{TriggerPrice: "50000"}
	for _, c := range []struct {
		name   string
		mc     *exchangev1.MarketTradingCapabilities
		typ    exchangev1.OrderType
		tp, sl *exchangev1.TpSl
		field  string // "" accepted
	}{
		{"otoco limit with both legs", otoco, limit, tp, sl, ""},
		{"otoco market entry", otoco, market, tp, sl, "take_profit"},
		{"otoco take-profit alone", otoco, limit, tp, nil, "stop_loss"},
		{"otoco stop-loss alone", otoco, limit, nil, sl, "take_profit"},
		{"otoco mark price", otoco, limit, tp, &exchangev1.TpSl{TriggerPrice: "50000", TriggerPriceType: mark}, "stop_loss.trigger_price_type"},
		{"otoco limit price on trigger", otoco, limit, &exchangev1.TpSl{TriggerPrice: "70000", Price: "69000"}, sl, "take_profit.price"},
		{"armed by exhub, market entry, one leg", armed, market, nil, sl, ""},
		{"armed by exhub, limit price", armed, market, &exchangev1.TpSl{TriggerPrice: "70000", Price: "69000"}, nil, "take_profit.price"},
		{"attached market entry, one leg on mark price with a limit price", attached, market,
			&exchangev1.TpSl{TriggerPrice: "70000", TriggerPriceType: mark, Price: "69000"}, nil, ""},
		{"none", none, limit, nil, sl, "stop_loss"},
		{"no TP/SL at all", none, market, nil, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := checkEntryTpSl(capsOfMarket(c.mc), c.mc.GetMarketType(), c.typ, c.tp, c.sl)
			switch {
			case c.field == "" && e != nil:
				t.Fatalf("refused: %+v", e)
			case c.field != "" && (e == nil || e.Field != c.field || e.Code != "not_supported" || e.Status != 422 || e.Message == ""):
				t.Fatalf("got %+v, want not_supported on %s", e, c.field)
			}
		})
	}
}
