package bybit

import (
	"testing"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

var (
	ethSwap = &Instrument{Symbol: "ETHUSDT", Category: catLinear, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Base: "ETH", Quote: "USDT", Settle: "USDT"}
	btcSpot = &Instrument{Symbol: "BTCUSDT", Category: catSpot, MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT, Base: "BTC", Quote: "USDT"}
)

func TestParseOrders(t *testing.T) {
	rows, next, err := ParseOrders(result(t, "order_realtime.json").Result)
	if err != nil || len(rows) != 2 || next != "2" {
		t.Fatalf("%v %d %q", err, len(rows), next)
	}
	a, err := orderProto(rows[0], ethSwap)
	if err != nil {
		t.Fatal(err)
	}
	if a.GetOrderId() != "7711" || a.GetClientOrderId() != "hub-a1" || a.GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_PARTIALLY_FILLED ||
		a.GetPrice() != "2400.5" || a.GetQty() != "0.3" || a.GetFilledQty() != "0.2" || a.GetFilledQuote() != "480.1" ||
		a.GetPositionSide() != exchangev1.PositionSide_POSITION_SIDE_LONG || a.GetTimeInForce() != exchangev1.TimeInForce_TIME_IN_FORCE_POST_ONLY ||
		a.GetFee() != "0.26" || a.GetFeeAsset() != "USDT" || a.GetCreatedTime() != 1732500000000 ||
		a.GetTakeProfit().GetTriggerPrice() != "2600" || a.GetTakeProfit().GetTriggerPriceType() != exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK ||
		a.GetStopLoss().GetTriggerPrice() != "2300" {
		t.Fatalf("limit row: %v", a)
	}
	b, err := orderProto(rows[1], ethSwap)
	if err != nil || b.GetType() != exchangev1.OrderType_ORDER_TYPE_MARKET || b.GetPrice() != "" || !b.GetReduceOnly() ||
		b.GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_FILLED || b.GetPositionSide() != exchangev1.PositionSide_POSITION_SIDE_NET ||
		b.GetTakeProfit() != nil {
		t.Fatalf("market row: %v %v", err, b)
	}
	q, _, err := ParseOrders(result(t, "order_spot_quote.json").Result)
	if err != nil {
		t.Fatal(err)
	}
	s, err := orderProto(q[0], btcSpot)
	if err != nil || s.GetQty() != "0.001" || s.GetFilledQuote() != "50" || s.GetFeeAsset() != "BTC" ||
		s.GetPositionSide() != exchangev1.PositionSide_POSITION_SIDE_UNSPECIFIED {
		t.Fatalf("spot market buy in the quote coin: %v %v", err, s)
	}
	// Malformed rows fail, never read as zero.
	for name, r := range map[string]rawOrder{
		"status":  {OrderID: "1", Side: "Buy", OrderStatus: "Weird", OrderType: "Limit", CumExecQty: "0"},
		"type":    {OrderID: "1", Side: "Buy", OrderStatus: "New", OrderType: "Stop", CumExecQty: "0"},
		"side":    {OrderID: "1", Side: "", OrderStatus: "New", OrderType: "Limit", CumExecQty: "0"},
		"qty":     {OrderID: "1", Side: "Buy", OrderStatus: "New", OrderType: "Limit", CumExecQty: "0", Price: "1", Qty: "x"},
		"filled":  {OrderID: "1", Side: "Buy", OrderStatus: "New", OrderType: "Limit", Price: "1", Qty: "1"},
		"created": {OrderID: "1", Side: "Buy", OrderStatus: "New", OrderType: "Limit", CumExecQty: "0", Price: "1", Qty: "1", CreatedTime: "soon"},
	} {
		if _, err := orderProto(r, ethSwap); err == nil {
			t.Errorf("%s: a malformed row parsed", name)
		}
	}
	if _, _, err := ParseOrders([]byte(`{"list":{}}`)); err == nil {
		t.Error("a list that is not an array parsed")
	}
	if rows, _, err := ParseOrders([]byte(`{"category":"spot","list":[],"nextPageCursor":""}`)); err != nil || len(rows) != 0 {
		t.Errorf("empty list: %v %v", err, rows)
	}
}

func TestParseExecutions(t *testing.T) {
	rows, _, err := ParseExecutions(result(t, "execution_list.json").Result)
	if err != nil || len(rows) != 2 {
		t.Fatalf("%v %d", err, len(rows))
	}
	f, err := fillProto(rows[0], ethSwap)
	if err != nil || f.GetTradeId() != "e-1" || f.GetPrice() != "2400.5" || f.GetQty() != "0.1" || f.GetQuoteQty() != "240.05" ||
		f.GetFee() != "0.13" || f.GetFeeAsset() != "USDT" || !f.GetMaker() || f.GetTime() != 1732500000500 || f.GetRealizedPnl() != "0" {
		t.Fatalf("fill: %v %v", err, f)
	}
	if rows[1].ExecType != "Funding" {
		t.Fatal("the funding row is kept for the caller to skip")
	}
	if _, err := fillProto(rawExec{ExecID: "x", Side: "Buy", ExecPrice: "1", ExecQty: "1", ExecValue: "1", ExecFee: "0", ExecTime: "t"}, ethSwap); err == nil {
		t.Error("a bad execTime parsed")
	}
}

func TestParsePositions(t *testing.T) {
	rows, _, err := ParsePositions(result(t, "position_list.json").Result)
	if err != nil || len(rows) != 2 {
		t.Fatalf("%v %d", err, len(rows))
	}
	p, err := positionProto(rows[0])
	if err != nil || p.GetQty() != "-0.25" || p.GetPositionSide() != exchangev1.PositionSide_POSITION_SIDE_NET || p.GetEntryPrice() != "2410" ||
		p.GetMarginMode() != exchangev1.MarginMode_MARGIN_MODE_ISOLATED || p.GetLeverage() != "10" || p.GetLiquidationPrice() != "2640.2" ||
		p.GetTakeProfit().GetTriggerPrice() != "2200" || p.GetStopLoss() != nil || p.GetRealizedPnl() != "-0.3" {
		t.Fatalf("short: %v %v", err, p)
	}
	if _, err := positionProto(rawPosition{Size: "1", Leverage: "ten"}); err == nil {
		t.Error("a bad leverage parsed")
	}
}

func FuzzParseOrders(f *testing.F) {
	f.Add([]byte(result(f, "order_realtime.json").Result), false)
	f.Add([]byte(result(f, "order_spot_quote.json").Result), true)
	f.Fuzz(func(t *testing.T, b []byte, spot bool) {
		rows, _, err := ParseOrders(b)
		if err != nil {
			return
		}
		in := ethSwap
		if spot {
			in = btcSpot
		}
		for _, r := range rows {
			if o, err := orderProto(r, in); err == nil && (o.GetOrderId() == "" || o.GetStatus() == exchangev1.OrderStatus_ORDER_STATUS_UNSPECIFIED) {
				t.Fatalf("order without id or status: %v", o)
			}
		}
	})
}

func FuzzParseExecutions(f *testing.F) {
	f.Add([]byte(result(f, "execution_list.json").Result))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, _, err := ParseExecutions(b)
		if err != nil {
			return
		}
		for _, r := range rows {
			if x, err := fillProto(r, ethSwap); err == nil && (x.GetTradeId() == "" || x.GetPrice() == "") {
				t.Fatalf("fill without id or price: %v", x)
			}
		}
	})
}

func FuzzParsePositions(f *testing.F) {
	f.Add([]byte(result(f, "position_list.json").Result))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, _, err := ParsePositions(b)
		if err != nil {
			return
		}
		for _, r := range rows {
			if p, err := positionProto(r); err == nil && p.GetQty() == "" {
				t.Fatalf("position without qty: %v", p)
			}
		}
	})
}
