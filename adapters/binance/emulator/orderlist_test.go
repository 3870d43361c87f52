package emulator

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
)

// TestSpotOTOCO: a working limit buy that fills places its pending OCO pair (a take-profit above, a stop-loss below,
// both sells of the pending quantity); a trade through the take-profit triggers it and cancels the stop-loss. Bad
// lists are refused and place nothing.
func TestSpotOTOCO(t *testing.T) {
	e := newEnv(t)
	const inst = "BTC/USDT"
	in := e.s.byID[inst]
	var d struct {
		Asks [][2]string `json:"asks"`
	}
	e.get("/api/v3/depth", url.Values{"symbol": {"BTCUSDT"}, "limit": {"5"}}).expectOK(t).decode(t, &d)
	if len(d.Asks) < 3 {
		t.Fatalf("book %+v", d)
	}
	ask1, ask3 := decimal.RequireFromString(d.Asks[0][0]), decimal.RequireFromString(d.Asks[2][0])
	last, _ := e.v.LastPrice(inst)
	tpStop := ask3
	if !tpStop.GreaterThan(last) {
		t.Fatalf("third ask %s not above the last price %s", tpStop, last)
	}
	slStop := last.Mul(decimal.RequireFromString("0.9")).Div(in.TickSize).Floor().Mul(in.TickSize)
	params := func() url.Values {
		return url.Values{"symbol": {"BTCUSDT"}, "workingType": {"LIMIT"}, "workingSide": {"BUY"},
			"workingPrice": {ask1.String()}, "workingQuantity": {"0.01"}, "workingTimeInForce": {"GTC"},
			"workingClientOrderId": {"otoco-w"}, "pendingSide": {"SELL"}, "pendingQuantity": {"0.01"},
			"pendingAboveType": {"TAKE_PROFIT"}, "pendingAboveStopPrice": {tpStop.String()}, "pendingAboveClientOrderId": {"otoco-tp"},
			"pendingBelowType": {"STOP_LOSS"}, "pendingBelowStopPrice": {slStop.String()}, "pendingBelowClientOrderId": {"otoco-sl"}}
	}
	// Refusals: the pending pair on the working side, a take-profit below the market.
	bad := params()
	bad.Set("pendingSide", "BUY")
	e.signed(http.MethodPost, "/api/v3/orderList/otoco", bad).expectErr(t, http.StatusBadRequest, codeNewOrderRejected)
	bad = params()
	bad.Set("pendingAboveStopPrice", slStop.String())
	e.signed(http.MethodPost, "/api/v3/orderList/otoco", bad).expectErr(t, http.StatusBadRequest, codeNewOrderRejected)
	bad = params()
	bad.Set("pendingQuantity", "0.00001") // the legs' value under the minimum notional
	e.signed(http.MethodPost, "/api/v3/orderList/otoco", bad).expectErr(t, http.StatusBadRequest, codeFilterFailure)
	if _, err := e.v.GetOrder(DemoAccount, 0, "otoco-w"); err == nil {
		t.Fatal("a refused list placed its working order")
	}

	var r struct {
		OrderListID     int64  `json:"orderListId"`
		ContingencyType string `json:"contingencyType"`
		Orders          []struct {
			OrderID       uint64 `json:"orderId"`
			ClientOrderID string `json:"clientOrderId"`
		} `json:"orders"`
	}
	e.signed(http.MethodPost, "/api/v3/orderList/otoco", params()).expectOK(t).decode(t, &r)
	if r.OrderListID <= 0 || r.ContingencyType != "OTO" || len(r.Orders) != 3 || r.Orders[0].ClientOrderID != "otoco-w" {
		t.Fatalf("answer %+v", r)
	}
	leg := func(cid string) venue.Order {
		t.Helper()
		o, err := e.v.GetOrder(DemoAccount, 0, cid)
		if err != nil {
			t.Fatalf("%s: %v", cid, err)
		}
		return o
	}
	// The working buy crossed the best ask and filled: both legs wait.
	if w := leg("otoco-w"); w.Status != venue.StatusFilled {
		t.Fatalf("working order %+v", w)
	}
	waitWhile(t, func() bool {
		_, err1 := e.v.GetOrder(DemoAccount, 0, "otoco-tp")
		_, err2 := e.v.GetOrder(DemoAccount, 0, "otoco-sl")
		return err1 != nil || err2 != nil
	})
	tp, sl := leg("otoco-tp"), leg("otoco-sl")
	if tp.Status != venue.StatusUntriggered || sl.Status != venue.StatusUntriggered || tp.Side != venue.Sell ||
		!tp.Qty.Equal(decimal.RequireFromString("0.01")) || !tp.StopPrice.Equal(tpStop) || !sl.StopPrice.Equal(slStop) {
		t.Fatalf("legs %+v %+v", tp, sl)
	}
	// Another account buys through the third ask: the last price reaches the take-profit.
	if err := e.v.CreateAccount("taker"); err != nil {
		t.Fatal(err)
	}
	funds := decimal.NewFromInt(10_000_000)
	if _, err := e.v.Deposit(e.s.ctx, "taker", "USDT", funds); err != nil {
		t.Fatal(err)
	}
	if _, err := e.v.Transfer(e.s.ctx, "taker", "USDT", funds, venue.Funding, venue.TradingWallet); err != nil {
		t.Fatal(err)
	}
	if _, err := e.v.Place(e.s.ctx, venue.OrderRequest{Account: "taker", Instrument: inst, Side: venue.Buy, Type: venue.Limit,
		TIF: venue.IOC, Price: tpStop, Qty: decimal.NewFromInt(50)}); err != nil {
		t.Fatal(err)
	}
	waitWhile(t, func() bool { return leg("otoco-sl").Status != venue.StatusCanceled })
	if tp := leg("otoco-tp"); tp.Status == venue.StatusUntriggered || tp.Status == venue.StatusCanceled {
		t.Fatalf("take-profit after the trade: %+v", tp)
	}
}
