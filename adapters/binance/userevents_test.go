package binance

import (
	"encoding/json"
	"testing"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func userFixtures(t testing.TB) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(fixture(t, "user_events.json"), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func parseUser(t *testing.T, m Market, b []byte) *UserEvent {
	t.Helper()
	ev, err := ParseUserEvent(m, b)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestParseUserEvents(t *testing.T) {
	f := userFixtures(t)
	nw := parseUser(t, Spot, f["executionReport_new"])
	if len(nw.Events) != 1 {
		t.Fatalf("new: %v", nw.Events)
	}
	o := nw.Events[0].GetOrder()
	if o.OrderId != "70001" || o.ClientOrderId != "my-eth-1" || o.Status != exchangev1.OrderStatus_ORDER_STATUS_NEW || o.Price != "2900" ||
		o.Qty != "0.5" || o.Side != exchangev1.Side_SIDE_BUY || o.CreatedTime != 1761000400099 || o.MarketType != exchangev1.MarketType_MARKET_TYPE_SPOT {
		t.Fatalf("new order: %+v", o)
	}
	tr := parseUser(t, Spot, f["executionReport_trade"])
	if len(tr.Events) != 2 {
		t.Fatalf("trade: %v", tr.Events)
	}
	fl := tr.Events[1].GetFill()
	if o := tr.Events[0].GetOrder(); o.Status != exchangev1.OrderStatus_ORDER_STATUS_PARTIALLY_FILLED || o.FilledQty != "0.2" || o.FilledQuote != "579.9" {
		t.Fatalf("partial order: %+v", o)
	}
	if fl.TradeId != "5501" || fl.Price != "2899.5" || fl.Qty != "0.2" || fl.QuoteQty != "579.9" || fl.Fee != "0.0002" || fl.FeeAsset != "ETH" ||
		!fl.Maker || fl.Time != 1761000400190 {
		t.Fatalf("fill (m must not be overwritten by M): %+v", fl)
	}
	cx := parseUser(t, Spot, f["executionReport_cancel"])
	if o := cx.Events[0].GetOrder(); o.ClientOrderId != "my-eth-1" || o.Status != exchangev1.OrderStatus_ORDER_STATUS_CANCELLED {
		t.Fatalf("cancel keeps the order's client id: %+v", o)
	}
	ap := parseUser(t, Spot, f["outboundAccountPosition"])
	if len(ap.Events) != 2 {
		t.Fatalf("balances: %v", ap.Events)
	}
	if b := ap.Events[1].GetBalance(); b.Asset != "USDT" || b.Total != "4970.1" || b.Locked != "870" || b.Available != "4100.1" {
		t.Fatalf("balance: %+v", b)
	}

	ff := parseUser(t, Futures, f["order_trade_update_fill"])
	if len(ff.Events) != 2 {
		t.Fatalf("futures fill: %v", ff.Events)
	}
	if o := ff.Events[0].GetOrder(); o.Status != exchangev1.OrderStatus_ORDER_STATUS_FILLED || o.AvgPrice != "182.4" || o.FilledQuote != "729.6" ||
		o.PositionSide != exchangev1.PositionSide_POSITION_SIDE_NET || o.MarketType != exchangev1.MarketType_MARKET_TYPE_SWAP || o.Price != "" {
		t.Fatalf("futures order: %+v", o)
	}
	if fl := ff.Events[1].GetFill(); fl.TradeId != "66001" || fl.QuoteQty != "729.6" || fl.Fee != "0.29184" || fl.RealizedPnl != "0" || fl.Maker {
		t.Fatalf("futures fill: %+v", fl)
	}
	al := parseUser(t, Futures, f["order_trade_update_algo"])
	if a := al.Events[0].GetAlgoOrder(); len(al.Events) != 1 || a.AlgoId != "880002" || a.Status != exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_WAITING ||
		a.TriggerPrice != "190.5" || a.TriggerPriceType != exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK || !a.ClosePosition ||
		a.Type != exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_MARKET {
		t.Fatalf("algo: %+v", al.Events)
	}
	tg := parseUser(t, Futures, f["order_trade_update_triggered"])
	if len(tg.Events) != 2 || tg.Events[0].GetAlgoOrder().GetStatus() != exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_TRIGGERED ||
		tg.Events[0].GetAlgoOrder().GetOrderId() != "880002" || tg.Events[1].GetOrder().GetAlgoId() != "880002" ||
		tg.Events[1].GetOrder().GetType() != exchangev1.OrderType_ORDER_TYPE_MARKET {
		t.Fatalf("triggered: %v", tg.Events)
	}
	au := parseUser(t, Futures, f["account_update"])
	if len(au.Events) != 2 {
		t.Fatalf("account update (positions only): %v", au.Events)
	}
	p0, p1 := au.Events[0].GetPosition(), au.Events[1].GetPosition()
	if p0.Qty != "4" || p0.EntryPrice != "182.4" || p0.MarginMode != exchangev1.MarginMode_MARGIN_MODE_CROSS || p0.Margin != "" || p0.RealizedPnl != "12.5" ||
		p0.BreakEvenPrice != "182.47" {
		t.Fatalf("cross position: %+v", p0)
	}
	if p1.Qty != "0.3" || p1.PositionSide != exchangev1.PositionSide_POSITION_SIDE_SHORT || p1.Margin != "88.5" || p1.UpdatedTime != 1761000500099 ||
		p1.BreakEvenPrice != "" {
		t.Fatalf("short position: %+v", p1)
	}
	if ex := parseUser(t, Futures, f["expired"]); !ex.KeyExpired || len(ex.Events) != 0 {
		t.Fatalf("expired: %+v", ex)
	}
	if other := parseUser(t, Spot, []byte(`{"e":"balanceUpdate","E":1,"a":"BTC","d":"0.1","T":2}`)); len(other.Events) != 0 || other.KeyExpired {
		t.Fatalf("unknown type: %+v", other)
	}
}

func TestParseUserEventErrors(t *testing.T) {
	for _, b := range badBodies {
		if _, err := ParseUserEvent(Spot, []byte(b)); err == nil {
			t.Errorf("%q: want error", b)
		}
	}
	for _, b := range []string{
		`{"e":"executionReport","E":1,"s":"X"}`,
		`{"e":"executionReport","E":1,"s":"X","i":1,"X":"WHATEVER","q":"1"}`,
		`{"e":"ORDER_TRADE_UPDATE","E":1}`,
		`{"e":"ORDER_TRADE_UPDATE","E":1,"o":{"s":"X","i":"z"}}`,
		`{"e":"ACCOUNT_UPDATE","E":1}`,
		`{"e":"ACCOUNT_UPDATE","E":1,"a":{"P":[{"s":"X","pa":"abc"}]}}`,
		`{"e":"outboundAccountPosition","E":1,"B":[{"a":"X","f":"1","l":"x"}]}`,
		`{"e":"executionReport","E":1,"s":"X","i":1,"X":"NEW","q":"1","x":"TRADE","L":"bad"}`,
	} {
		if _, err := ParseUserEvent(Futures, []byte(b)); err == nil {
			t.Errorf("%s: want error", b)
		}
	}
}

func FuzzParseUserEvent(f *testing.F) {
	for _, v := range userFixtures(f) {
		f.Add([]byte(v))
	}
	for _, b := range badBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseUserEvent(Spot, b)
		_, _ = ParseUserEvent(Futures, b)
	})
}
