package emulator

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
)

func TestSignatureExample(t *testing.T) {
	// The example of Binance's API documentation (SIGNED endpoint examples for POST /api/v3/order).
	secret := "NhqPtmdSJYdKjVHjA7PZj4Mge3R5YNiP1e3UZjInClVN65XAbvqqM6A7H5fATj0j"
	payload := "symbol=LTCBTC&side=BUY&type=LIMIT&timeInForce=GTC&quantity=1&price=0.1&recvWindow=5000&timestamp=1499827319559"
	if got := Sign(secret, payload); got != "c8db56825ae71d6d79447849e617115f4a920fa2acdcab2b053c4b2838bd6b71" {
		t.Fatalf("signature %s", got)
	}
}

func TestSignedRequestChecks(t *testing.T) {
	e := newEnv(t)
	now := strconv.FormatInt(e.v.Now(), 10)
	// Good request.
	e.signed(http.MethodGet, "/api/v3/account", nil).expectOK(t)
	// No key, unknown key.
	e.do(http.MethodGet, e.ts.URL+"/api/v3/account?timestamp="+now+"&signature=00", nil, "").expectErr(t, http.StatusUnauthorized, -2014)
	e.signedWith("nope", "nope", http.MethodGet, "/api/v3/account", nil).expectErr(t, http.StatusUnauthorized, -2015)
	// Wrong secret: bad signature.
	e.signedWith(DemoAPIKey, "wrong", http.MethodGet, "/api/v3/account", nil).expectErr(t, http.StatusBadRequest, -1022)
	e.signedWith(DemoAPIKey, "wrong", http.MethodGet, "/fapi/v2/balance", nil).expectErr(t, http.StatusBadRequest, -1022)
	// A tampered parameter after signing.
	payload := "timestamp=" + now
	sig := Sign(DemoAPISecret, payload)
	h := http.Header{"X-Mbx-Apikey": {DemoAPIKey}}
	e.do(http.MethodGet, e.ts.URL+"/api/v3/account?"+payload+"&signature="+sig, h, "").expectOK(t)
	e.do(http.MethodGet, e.ts.URL+"/api/v3/account?"+payload+"&omitZeroBalances=true&signature="+sig, h, "").expectErr(t, http.StatusBadRequest, -1022)
	// Missing signature / timestamp.
	e.do(http.MethodGet, e.ts.URL+"/api/v3/account?"+payload, h, "").expectErr(t, http.StatusBadRequest, -1102)
	e.do(http.MethodGet, e.ts.URL+"/api/v3/account?recvWindow=5000&signature="+Sign(DemoAPISecret, "recvWindow=5000"), h, "").expectErr(t, http.StatusBadRequest, -1102)
	// Timestamps outside the window, ahead of the server, recvWindow too large.
	old := url.Values{"timestamp": {strconv.FormatInt(e.v.Now()-6000, 10)}}
	e.signed(http.MethodGet, "/api/v3/account", old).expectErr(t, http.StatusBadRequest, -1021)
	old = url.Values{"timestamp": {strconv.FormatInt(e.v.Now()-6000, 10)}, "recvWindow": {"10000"}}
	e.signed(http.MethodGet, "/api/v3/account", old).expectOK(t)
	ahead := url.Values{"timestamp": {strconv.FormatInt(e.v.Now()+1500, 10)}}
	e.signed(http.MethodGet, "/fapi/v2/balance", ahead).expectErr(t, http.StatusBadRequest, -1021)
	big := url.Values{"recvWindow": {"70000"}}
	e.signed(http.MethodGet, "/api/v3/account", big).expectErr(t, http.StatusBadRequest, -1131)
	// Parameters split between query string and body: the signature covers query then body.
	query := "symbol=BTCUSDT&side=BUY&type=LIMIT"
	body := "timeInForce=GTC&quantity=0.001&price=1000.00&timestamp=" + now
	sig = Sign(DemoAPISecret, query+body)
	r := e.do(http.MethodPost, e.ts.URL+"/api/v3/order/test?"+query, h, body+"&signature="+sig)
	r.expectOK(t)
	e.do(http.MethodPost, e.ts.URL+"/api/v3/order/test?"+query, h, body+"&signature="+Sign(DemoAPISecret, query+"&"+body)).expectErr(t, http.StatusBadRequest, -1022)
	// Listen key endpoints need only the key.
	r = e.do(http.MethodPost, e.ts.URL+"/api/v3/userDataStream", h, "").expectOK(t)
	checkShape(t, "listenKey", r.body)
	e.do(http.MethodPost, e.ts.URL+"/fapi/v1/listenKey", nil, "").expectErr(t, http.StatusUnauthorized, -2014)
}

type book struct{ bid, ask decimal.Decimal }

func (e *env) top(futures bool, sym string) book {
	e.t.Helper()
	path := "/api/v3/ticker/bookTicker"
	if futures {
		path = "/fapi/v1/ticker/bookTicker"
	}
	var b struct {
		Bid string `json:"bidPrice"`
		Ask string `json:"askPrice"`
	}
	e.get(path, url.Values{"symbol": {sym}}).expectOK(e.t).decode(e.t, &b)
	return book{decimal.RequireFromString(b.Bid), decimal.RequireFromString(b.Ask)}
}

func (e *env) inst(id string) *venue.Instrument {
	e.t.Helper()
	in, err := e.v.Instrument(id)
	if err != nil {
		e.t.Fatal(err)
	}
	return in
}

func TestSpotOrderLifecycle(t *testing.T) {
	e := newEnv(t)
	in := e.inst("ETH/USDT")
	tb := e.top(false, "ETHUSDT")
	price := tb.bid.Mul(decimal.RequireFromString("0.95")).Div(in.TickSize).Floor().Mul(in.TickSize)
	qty := decimal.RequireFromString("0.5")
	// A resting limit order.
	var placed spotOrder
	r := e.signed(http.MethodPost, "/api/v3/order", url.Values{"symbol": {"ETHUSDT"}, "side": {"BUY"},
		"type": {"LIMIT"}, "timeInForce": {"GTC"}, "quantity": {qty.String()}, "price": {price.String()},
		"newClientOrderId": {"my-order-1"}}).expectOK(t)
	checkShape(t, "spot_order_full", r.body)
	r.decode(t, &placed)
	if placed.Status != "NEW" || placed.ClientOrderID != "my-order-1" || placed.Type != "LIMIT" {
		t.Fatalf("placed: %+v", placed)
	}
	// The same client id again is refused.
	e.signed(http.MethodPost, "/api/v3/order", url.Values{"symbol": {"ETHUSDT"}, "side": {"BUY"},
		"type": {"LIMIT"}, "timeInForce": {"GTC"}, "quantity": {qty.String()}, "price": {price.String()},
		"newClientOrderId": {"my-order-1"}}).expectErr(t, http.StatusBadRequest, -2010)
	// Query it, by id and by client id, and in the open orders.
	r = e.signed(http.MethodGet, "/api/v3/order", url.Values{"symbol": {"ETHUSDT"}, "orderId": {strconv.FormatUint(placed.OrderID, 10)}}).expectOK(t)
	checkShape(t, "spot_order_query", r.body)
	e.signed(http.MethodGet, "/api/v3/order", url.Values{"symbol": {"ETHUSDT"}, "origClientOrderId": {"my-order-1"}}).expectOK(t)
	e.signed(http.MethodGet, "/api/v3/order", url.Values{"symbol": {"ETHUSDT"}, "orderId": {"999999"}}).expectErr(t, http.StatusBadRequest, -2013)
	var open []spotOrder
	r = e.signed(http.MethodGet, "/api/v3/openOrders", nil).expectOK(t)
	checkShape(t, "spot_order_query_list", r.body)
	r.decode(t, &open)
	if len(open) != 1 || open[0].OrderID != placed.OrderID {
		t.Fatalf("open orders: %+v", open)
	}
	// Locked quote shows in the account.
	var acct struct {
		Balances []struct{ Asset, Free, Locked string } `json:"balances"`
	}
	r = e.signed(http.MethodGet, "/api/v3/account", nil).expectOK(t)
	checkShape(t, "spot_account", r.body)
	r.decode(t, &acct)
	locked := decimal.Zero
	for _, b := range acct.Balances {
		if b.Asset == "USDT" {
			locked = decimal.RequireFromString(b.Locked)
		}
	}
	if !locked.Equal(price.Mul(qty)) {
		t.Fatalf("locked USDT %s, want %s", locked, price.Mul(qty))
	}
	// Amend down keeping priority.
	r = e.signed(http.MethodPut, "/api/v3/order/amend/keepPriority", url.Values{"symbol": {"ETHUSDT"},
		"orderId": {strconv.FormatUint(placed.OrderID, 10)}, "newQty": {"0.3"}}).expectOK(t)
	if !strings.Contains(string(r.body), `"origQty":"0.30000000"`) {
		t.Fatalf("amend: %s", r.body)
	}
	// Cancel; a second cancel is unknown.
	r = e.signed(http.MethodDelete, "/api/v3/order", url.Values{"symbol": {"ETHUSDT"}, "orderId": {strconv.FormatUint(placed.OrderID, 10)}}).expectOK(t)
	checkShape(t, "spot_order_cancel", r.body)
	if !strings.Contains(string(r.body), `"status":"CANCELED"`) {
		t.Fatalf("cancel: %s", r.body)
	}
	e.signed(http.MethodDelete, "/api/v3/order", url.Values{"symbol": {"ETHUSDT"}, "orderId": {strconv.FormatUint(placed.OrderID, 10)}}).expectErr(t, http.StatusBadRequest, -2011)
	// A market buy fills at once with fills in the FULL response.
	var filled spotOrder
	r = e.signed(http.MethodPost, "/api/v3/order", url.Values{"symbol": {"ETHUSDT"}, "side": {"BUY"},
		"type": {"MARKET"}, "quantity": {"0.2"}}).expectOK(t)
	checkShape(t, "spot_order_full", r.body)
	r.decode(t, &filled)
	if filled.Status != "FILLED" || filled.Fills == nil || len(*filled.Fills) == 0 || filled.ExecutedQty != "0.20000000" {
		t.Fatalf("market: %s", r.body)
	}
	// Quote-sized market order, ACK response.
	r = e.signed(http.MethodPost, "/api/v3/order", url.Values{"symbol": {"ETHUSDT"}, "side": {"BUY"},
		"type": {"MARKET"}, "quoteOrderQty": {"100"}, "newOrderRespType": {"ACK"}}).expectOK(t)
	checkShape(t, "spot_order_ack", r.body)
	// LIMIT_MAKER that would cross is refused.
	e.signed(http.MethodPost, "/api/v3/order", url.Values{"symbol": {"ETHUSDT"}, "side": {"BUY"},
		"type": {"LIMIT_MAKER"}, "quantity": {"0.1"}, "price": {tb.ask.Add(in.TickSize.Mul(decimal.NewFromInt(5))).String()}}).expectErr(t, http.StatusBadRequest, -2010)
	// Too much: insufficient balance.
	e.signed(http.MethodPost, "/api/v3/order", url.Values{"symbol": {"ETHUSDT"}, "side": {"BUY"},
		"type": {"LIMIT"}, "timeInForce": {"GTC"}, "quantity": {"1000"}, "price": {price.String()}}).expectErr(t, http.StatusBadRequest, -2010)
	// Bad precision, bad type, missing price.
	e.signed(http.MethodPost, "/api/v3/order", url.Values{"symbol": {"ETHUSDT"}, "side": {"BUY"},
		"type": {"LIMIT"}, "timeInForce": {"GTC"}, "quantity": {"0.123456789"}, "price": {price.String()}}).expectErr(t, http.StatusBadRequest, -1111)
	e.signed(http.MethodPost, "/api/v3/order", url.Values{"symbol": {"ETHUSDT"}, "side": {"BUY"},
		"type": {"ICEBERG"}, "quantity": {"1"}}).expectErr(t, http.StatusBadRequest, -1116)
	e.signed(http.MethodPost, "/api/v3/order", url.Values{"symbol": {"ETHUSDT"}, "side": {"BUY"},
		"type": {"LIMIT"}, "timeInForce": {"GTC"}, "quantity": {"1"}}).expectErr(t, http.StatusBadRequest, -1102)
	// Trades and history.
	r = e.signed(http.MethodGet, "/api/v3/myTrades", url.Values{"symbol": {"ETHUSDT"}}).expectOK(t)
	checkShape(t, "spot_myTrades", r.body)
	var trades []map[string]any
	r.decode(t, &trades)
	if len(trades) < 2 {
		t.Fatalf("my trades: %s", r.body)
	}
	var all []spotOrder
	r = e.signed(http.MethodGet, "/api/v3/allOrders", url.Values{"symbol": {"ETHUSDT"}}).expectOK(t)
	checkShape(t, "spot_order_query_list", r.body)
	r.decode(t, &all)
	if len(all) != 3 || all[0].Status != "CANCELED" || all[1].Status != "FILLED" {
		t.Fatalf("all orders: %s", r.body)
	}
	// Cancel-replace: cancel a resting order and place another in one call.
	r = e.signed(http.MethodPost, "/api/v3/order", url.Values{"symbol": {"ETHUSDT"}, "side": {"BUY"},
		"type": {"LIMIT"}, "timeInForce": {"GTC"}, "quantity": {"0.1"}, "price": {price.String()}}).expectOK(t)
	r.decode(t, &placed)
	r = e.signed(http.MethodPost, "/api/v3/order/cancelReplace", url.Values{"symbol": {"ETHUSDT"}, "side": {"BUY"},
		"type": {"LIMIT"}, "timeInForce": {"GTC"}, "quantity": {"0.2"}, "price": {price.String()},
		"cancelReplaceMode": {"STOP_ON_FAILURE"}, "cancelOrderId": {strconv.FormatUint(placed.OrderID, 10)}}).expectOK(t)
	if !strings.Contains(string(r.body), `"cancelResult":"SUCCESS"`) || !strings.Contains(string(r.body), `"origQty":"0.20000000"`) {
		t.Fatalf("cancelReplace: %s", r.body)
	}
	r = e.signed(http.MethodDelete, "/api/v3/openOrders", url.Values{"symbol": {"ETHUSDT"}}).expectOK(t)
	if strings.Count(string(r.body), `"status":"CANCELED"`) != 1 {
		t.Fatalf("cancel all: %s", r.body)
	}
}

func TestFuturesTrading(t *testing.T) {
	e := newEnv(t)
	in := e.inst("BTC/USDT:PERP")
	tb := e.top(true, "BTCUSDT")
	// Leverage.
	r := e.signed(http.MethodPost, "/fapi/v1/leverage", url.Values{"symbol": {"BTCUSDT"}, "leverage": {"10"}}).expectOK(t)
	checkShape(t, "futures_leverage", r.body)
	e.signed(http.MethodPost, "/fapi/v1/leverage", url.Values{"symbol": {"BTCUSDT"}, "leverage": {"1000"}}).expectErr(t, http.StatusBadRequest, -4028)
	r = e.signed(http.MethodGet, "/fapi/v1/symbolConfig", url.Values{"symbol": {"BTCUSDT"}}).expectOK(t)
	checkShape(t, "futures_symbolConfig", r.body)
	if !strings.Contains(string(r.body), `"leverage":10`) || !strings.Contains(string(r.body), `"marginType":"CROSSED"`) {
		t.Fatalf("symbolConfig: %s", r.body)
	}
	r = e.signed(http.MethodGet, "/fapi/v1/leverageBracket", url.Values{"symbol": {"BTCUSDT"}}).expectOK(t)
	checkShape(t, "futures_leverageBracket", r.body)
	// Reduce-only with no position.
	e.signed(http.MethodPost, "/fapi/v1/order", url.Values{"symbol": {"BTCUSDT"}, "side": {"SELL"},
		"type": {"MARKET"}, "quantity": {"0.01"}, "reduceOnly": {"true"}}).expectErr(t, http.StatusBadRequest, -2022)
	// A resting limit order, amended, then cancelled.
	price := tb.bid.Mul(decimal.RequireFromString("0.97")).Div(in.TickSize).Floor().Mul(in.TickSize)
	var o futOrder
	r = e.signed(http.MethodPost, "/fapi/v1/order", url.Values{"symbol": {"BTCUSDT"}, "side": {"BUY"},
		"type": {"LIMIT"}, "timeInForce": {"GTC"}, "quantity": {"0.010"}, "price": {price.String()}}).expectOK(t)
	checkShape(t, "futures_order", r.body)
	r.decode(t, &o)
	if o.Status != "NEW" || o.PositionSide != "BOTH" {
		t.Fatalf("limit: %s", r.body)
	}
	id := strconv.FormatUint(o.OrderID, 10)
	newPrice := price.Sub(in.TickSize.Mul(decimal.NewFromInt(10)))
	r = e.signed(http.MethodPut, "/fapi/v1/order", url.Values{"symbol": {"BTCUSDT"}, "orderId": {id}, "side": {"BUY"},
		"quantity": {"0.020"}, "price": {newPrice.String()}}).expectOK(t)
	checkShape(t, "futures_order", r.body)
	r.decode(t, &o)
	if o.OrigQty != "0.020" || o.Price != newPrice.StringFixed(in.PriceScale()) {
		t.Fatalf("amend: %s", r.body)
	}
	r = e.signed(http.MethodGet, "/fapi/v1/order", url.Values{"symbol": {"BTCUSDT"}, "orderId": {id}}).expectOK(t)
	checkShape(t, "futures_order_query", r.body)
	r = e.signed(http.MethodGet, "/fapi/v1/openOrders", url.Values{"symbol": {"BTCUSDT"}}).expectOK(t)
	checkShape(t, "futures_order_query_list", r.body)
	r = e.signed(http.MethodDelete, "/fapi/v1/order", url.Values{"symbol": {"BTCUSDT"}, "orderId": {id}}).expectOK(t)
	checkShape(t, "futures_order", r.body)
	e.signed(http.MethodGet, "/fapi/v1/openOrder", url.Values{"symbol": {"BTCUSDT"}, "orderId": {id}}).expectErr(t, http.StatusBadRequest, -2013)
	// Post-only that would cross.
	e.signed(http.MethodPost, "/fapi/v1/order", url.Values{"symbol": {"BTCUSDT"}, "side": {"BUY"},
		"type": {"LIMIT"}, "timeInForce": {"GTX"}, "quantity": {"0.010"}, "price": {tb.ask.Add(in.TickSize).String()}}).expectErr(t, http.StatusBadRequest, -5022)
	// Open a long with a market order.
	r = e.signed(http.MethodPost, "/fapi/v1/order", url.Values{"symbol": {"BTCUSDT"}, "side": {"BUY"},
		"type": {"MARKET"}, "quantity": {"0.050"}}).expectOK(t)
	r.decode(t, &o)
	if o.Status != "FILLED" || o.ExecutedQty != "0.050" {
		t.Fatalf("market: %s", r.body)
	}
	r = e.signed(http.MethodGet, "/fapi/v3/positionRisk", nil).expectOK(t)
	checkShape(t, "futures_positionRisk_v3", r.body)
	var pos []map[string]any
	r.decode(t, &pos)
	if len(pos) != 1 || pos[0]["positionAmt"] != "0.050" {
		t.Fatalf("positions v3: %s", r.body)
	}
	r = e.signed(http.MethodGet, "/fapi/v2/positionRisk", url.Values{"symbol": {"BTCUSDT"}}).expectOK(t)
	checkShape(t, "futures_positionRisk_v2", r.body)
	if !strings.Contains(string(r.body), `"leverage":"10"`) {
		t.Fatalf("positions v2: %s", r.body)
	}
	r = e.signed(http.MethodGet, "/fapi/v2/balance", nil).expectOK(t)
	checkShape(t, "futures_balance", r.body)
	r = e.signed(http.MethodGet, "/fapi/v3/account", nil).expectOK(t)
	checkShape(t, "futures_account_v3", r.body)
	// Margin type cannot change with a position.
	e.signed(http.MethodPost, "/fapi/v1/marginType", url.Values{"symbol": {"BTCUSDT"}, "marginType": {"ISOLATED"}}).expectErr(t, http.StatusBadRequest, -4048)
	e.signed(http.MethodPost, "/fapi/v1/marginType", url.Values{"symbol": {"ETHUSDT"}, "marginType": {"CROSSED"}}).expectErr(t, http.StatusBadRequest, -4046)
	// A stop-loss closing the whole position, triggered by the mark price.
	mark := e.markPrice("BTCUSDT")
	stop := mark.Mul(decimal.RequireFromString("0.98")).Div(in.TickSize).Floor().Mul(in.TickSize)
	r = e.signed(http.MethodPost, "/fapi/v1/order", url.Values{"symbol": {"BTCUSDT"}, "side": {"SELL"},
		"type": {"STOP_MARKET"}, "stopPrice": {stop.String()}, "closePosition": {"true"}, "workingType": {"MARK_PRICE"}}).expectOK(t)
	checkShape(t, "futures_order", r.body)
	r.decode(t, &o)
	if o.Status != "NEW" || !o.ClosePosition || o.WorkingType != "MARK_PRICE" || o.Type != "STOP_MARKET" {
		t.Fatalf("stop: %s", r.body)
	}
	// A take-profit limit on the contract price stays untriggered.
	e.signed(http.MethodPost, "/fapi/v1/order", url.Values{"symbol": {"BTCUSDT"}, "side": {"SELL"},
		"type": {"TAKE_PROFIT_MARKET"}, "stopPrice": {stop.Mul(decimal.NewFromInt(2)).String()}, "closePosition": {"true"}}).expectOK(t)
	if err := e.v.SetMarkPrice(in.ID, stop.Sub(in.TickSize)); err != nil {
		t.Fatal(err)
	}
	r = e.signed(http.MethodGet, "/fapi/v1/order", url.Values{"symbol": {"BTCUSDT"}, "orderId": {strconv.FormatUint(o.OrderID, 10)}}).expectOK(t)
	r.decode(t, &o)
	if o.Status != "FILLED" {
		t.Fatalf("stop after mark move: %s", r.body)
	}
	r = e.signed(http.MethodGet, "/fapi/v3/positionRisk", nil).expectOK(t)
	if string(r.body) != "[]" {
		t.Fatalf("position not closed: %s", r.body)
	}
	r = e.signed(http.MethodGet, "/fapi/v1/userTrades", url.Values{"symbol": {"BTCUSDT"}}).expectOK(t)
	checkShape(t, "futures_userTrades", r.body)
	// Cancel the leftover take-profit, then switch to hedge mode: orders then need a position side.
	e.signed(http.MethodDelete, "/fapi/v1/allOpenOrders", url.Values{"symbol": {"BTCUSDT"}}).expectOK(t)
	e.signed(http.MethodPost, "/fapi/v1/positionSide/dual", url.Values{"dualSidePosition": {"false"}}).expectErr(t, http.StatusBadRequest, -4059)
	e.signed(http.MethodPost, "/fapi/v1/positionSide/dual", url.Values{"dualSidePosition": {"true"}}).expectOK(t)
	r = e.signed(http.MethodGet, "/fapi/v1/positionSide/dual", nil).expectOK(t)
	if string(r.body) != `{"dualSidePosition":true}` {
		t.Fatalf("dual: %s", r.body)
	}
	e.signed(http.MethodPost, "/fapi/v1/order", url.Values{"symbol": {"BTCUSDT"}, "side": {"BUY"},
		"type": {"MARKET"}, "quantity": {"0.010"}}).expectErr(t, http.StatusBadRequest, -4061)
	e.signed(http.MethodPost, "/fapi/v1/order", url.Values{"symbol": {"BTCUSDT"}, "side": {"BUY"},
		"positionSide": {"LONG"}, "type": {"MARKET"}, "quantity": {"0.010"}}).expectOK(t)
	// Insufficient margin.
	e.signed(http.MethodPost, "/fapi/v1/order", url.Values{"symbol": {"BTCUSDT"}, "side": {"BUY"},
		"positionSide": {"LONG"}, "type": {"MARKET"}, "quantity": {"100.000"}}).expectErr(t, http.StatusBadRequest, -2019)
	// Batch orders: one good, one bad.
	batch, _ := json.Marshal([]map[string]string{
		{"symbol": "BTCUSDT", "side": "BUY", "positionSide": "LONG", "type": "LIMIT", "timeInForce": "GTC", "quantity": "0.010", "price": price.String()},
		{"symbol": "BTCUSDT", "side": "BUY", "positionSide": "LONG", "type": "LIMIT", "timeInForce": "GTC", "quantity": "0.010"},
	})
	r = e.signed(http.MethodPost, "/fapi/v1/batchOrders", url.Values{"batchOrders": {string(batch)}}).expectOK(t)
	var items []json.RawMessage
	r.decode(t, &items)
	if len(items) != 2 {
		t.Fatalf("batch: %s", r.body)
	}
	checkShape(t, "futures_order", items[0])
	checkShape(t, "error", items[1])
	r = e.signed(http.MethodGet, "/fapi/v1/allOrders", url.Values{"symbol": {"BTCUSDT"}}).expectOK(t)
	checkShape(t, "futures_order_query_list", r.body)
}

func (e *env) markPrice(sym string) decimal.Decimal {
	e.t.Helper()
	var p premiumIndex
	e.get("/fapi/v1/premiumIndex", url.Values{"symbol": {sym}}).expectOK(e.t).decode(e.t, &p)
	return decimal.RequireFromString(p.MarkPrice)
}

func (e *env) listenKey(futures bool) string {
	e.t.Helper()
	path := "/api/v3/userDataStream"
	if futures {
		path = "/fapi/v1/listenKey"
	}
	var lk struct {
		ListenKey string `json:"listenKey"`
	}
	e.do(http.MethodPost, e.ts.URL+path, http.Header{"X-Mbx-Apikey": {DemoAPIKey}}, "").expectOK(e.t).decode(e.t, &lk)
	return lk.ListenKey
}

func eventOf(b []byte) (string, map[string]any) {
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	e, _ := m["e"].(string)
	return e, m
}

func TestSpotUserStream(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.ListenKeyTTL = 5 * time.Second })
	key := e.listenKey(false)
	if again := e.listenKey(false); again != key {
		t.Fatalf("a second POST should return the active key")
	}
	c := e.dial("/ws/" + key)
	waitWhile(t, func() bool { return e.s.Connections() != 1 })
	in := e.inst("ETH/USDT")
	tb := e.top(false, "ETHUSDT")
	price := tb.bid.Mul(decimal.RequireFromString("0.95")).Div(in.TickSize).Floor().Mul(in.TickSize)
	var placed spotOrder
	e.signed(http.MethodPost, "/api/v3/order", url.Values{"symbol": {"ETHUSDT"}, "side": {"BUY"}, "type": {"LIMIT"},
		"timeInForce": {"GTC"}, "quantity": {"0.5"}, "price": {price.String()}}).expectOK(t).decode(t, &placed)
	// The order report and the balance update, in either order.
	var b []byte
	var m map[string]any
	for seen := map[string]bool{}; !seen["executionReport"] || !seen["outboundAccountPosition"]; {
		b = c.next(20 * time.Second)
		ev, mm := eventOf(b)
		seen[ev] = true
		switch ev {
		case "executionReport":
			checkShape(t, "ws_executionReport", b)
			if mm["x"] != "NEW" || mm["X"] != "NEW" || mm["i"].(float64) != float64(placed.OrderID) {
				t.Fatalf("new: %s", b)
			}
		case "outboundAccountPosition":
			checkShape(t, "ws_outboundAccountPosition", b)
		default:
			t.Fatalf("unexpected %s", b)
		}
	}
	// A market sell of ETH bought first produces TRADE reports ending FILLED.
	e.signed(http.MethodPost, "/api/v3/order", url.Values{"symbol": {"ETHUSDT"}, "side": {"BUY"}, "type": {"MARKET"},
		"quantity": {"0.3"}}).expectOK(t)
	var cum decimal.Decimal
	for {
		b = c.until(20*time.Second, hasEvent("executionReport"))
		checkShape(t, "ws_executionReport", b)
		_, m = eventOf(b)
		if m["i"].(float64) == float64(placed.OrderID) {
			continue
		}
		if m["x"] == "NEW" && cum.IsZero() {
			continue // reported NEW before its first trade
		}
		if m["x"] != "TRADE" {
			t.Fatalf("market order report: %s", b)
		}
		cum = cum.Add(decimal.RequireFromString(m["l"].(string)))
		if z := decimal.RequireFromString(m["z"].(string)); !z.Equal(cum) {
			t.Fatalf("cumulative %s, sum of fills %s", z, cum)
		}
		if m["X"] == "FILLED" {
			break
		}
	}
	if !cum.Equal(decimal.RequireFromString("0.3")) {
		t.Fatalf("filled %s", cum)
	}
	// Cancel shows as CANCELED.
	e.signed(http.MethodDelete, "/api/v3/order", url.Values{"symbol": {"ETHUSDT"}, "orderId": {strconv.FormatUint(placed.OrderID, 10)}}).expectOK(t)
	b = c.until(20*time.Second, func(b []byte) bool {
		return strings.Contains(string(b), `"x":"CANCELED"`)
	})
	checkShape(t, "ws_executionReport", b)
	// A transfer out of the spot wallet shows as a negative balanceUpdate.
	e.signed(http.MethodPost, "/sapi/v1/asset/transfer", url.Values{"type": {"MAIN_FUNDING"}, "asset": {"USDT"}, "amount": {"12.5"}}).expectOK(t)
	b = c.until(20*time.Second, hasEvent("balanceUpdate"))
	checkShape(t, "ws_balanceUpdate", b)
	if !strings.Contains(string(b), `"d":"-12.5"`) {
		t.Fatalf("balance update: %s", b)
	}
	// Keepalive, then expiry without one.
	h := http.Header{"X-Mbx-Apikey": {DemoAPIKey}}
	e.do(http.MethodPut, e.ts.URL+"/api/v3/userDataStream?listenKey="+key, h, "").expectOK(t)
	e.do(http.MethodPut, e.ts.URL+"/api/v3/userDataStream?listenKey=nope", h, "").expectErr(t, http.StatusBadRequest, -1125)
	e.advance(4 * time.Second)
	e.do(http.MethodPut, e.ts.URL+"/api/v3/userDataStream?listenKey="+key, h, "").expectOK(t)
	e.advance(6 * time.Second)
	b = c.until(20*time.Second, hasEvent("listenKeyExpired"))
	checkShape(t, "ws_listenKeyExpired", b)
	e.do(http.MethodPut, e.ts.URL+"/api/v3/userDataStream?listenKey="+key, h, "").expectErr(t, http.StatusBadRequest, -1125)
}

func TestFuturesUserStream(t *testing.T) {
	e := newEnv(t)
	key := e.listenKey(true)
	c := e.dial("/fws/stream?streams=" + key)
	waitWhile(t, func() bool { return e.s.Connections() != 1 })
	// A spot order does not show on the futures stream.
	e.signed(http.MethodPost, "/api/v3/order", url.Values{"symbol": {"ETHUSDT"}, "side": {"BUY"}, "type": {"MARKET"},
		"quantity": {"0.1"}}).expectOK(t)
	e.signed(http.MethodPost, "/fapi/v1/order", url.Values{"symbol": {"BTCUSDT"}, "side": {"BUY"}, "type": {"MARKET"},
		"quantity": {"0.020"}}).expectOK(t)
	var sawTrade, sawPosition bool
	for !sawTrade || !sawPosition {
		name, data := unwrap(t, c.next(3*time.Second))
		if name != key {
			t.Fatalf("stream name %q", name)
		}
		ev, m := eventOf(data)
		switch ev {
		case "ORDER_TRADE_UPDATE":
			checkShape(t, "ws_ORDER_TRADE_UPDATE", data)
			o := m["o"].(map[string]any)
			if o["s"] != "BTCUSDT" {
				t.Fatalf("spot order on the futures stream: %s", data)
			}
			if o["x"] == "TRADE" && o["X"] == "FILLED" {
				sawTrade = true
			}
		case "ACCOUNT_UPDATE":
			checkShape(t, "ws_ACCOUNT_UPDATE", data)
			if strings.Contains(string(data), `"pa":"0.020"`) {
				sawPosition = true
			}
		default:
			t.Fatalf("unexpected event %s", data)
		}
	}
	// Leverage changes are pushed as ACCOUNT_CONFIG_UPDATE.
	e.signed(http.MethodPost, "/fapi/v1/leverage", url.Values{"symbol": {"ETHUSDT"}, "leverage": {"7"}}).expectOK(t)
	_, data := unwrap(t, c.until(20*time.Second, hasEvent("ACCOUNT_CONFIG_UPDATE")))
	checkShape(t, "ws_ACCOUNT_CONFIG_UPDATE", data)
	if !strings.Contains(string(data), `"ac":{"l":7,"s":"ETHUSDT"}`) {
		t.Fatalf("config update: %s", data)
	}
	e.s.ExpireListenKeys()
	_, data = unwrap(t, c.until(20*time.Second, hasEvent("listenKeyExpired")))
	checkShape(t, "ws_listenKeyExpired", data)
	// An unknown listen key is refused at the upgrade.
	res, err := http.Get(e.ts.URL + "/fws/ws/" + key)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest {
		t.Fatalf("expired key upgrade: %d", res.StatusCode)
	}
}

func TestWalletEndpoints(t *testing.T) {
	e := newEnv(t)
	funding := func() decimal.Decimal {
		var rows []map[string]string
		r := e.signed(http.MethodPost, "/sapi/v1/asset/get-funding-asset", url.Values{"asset": {"USDT"}}).expectOK(t)
		checkShape(t, "sapi_funding_asset", r.body)
		r.decode(t, &rows)
		if len(rows) != 1 {
			t.Fatalf("funding rows %v", rows)
		}
		return decimal.RequireFromString(rows[0]["free"])
	}
	before := funding()
	r := e.signed(http.MethodPost, "/sapi/v1/asset/transfer", url.Values{"type": {"FUNDING_MAIN"}, "asset": {"USDT"}, "amount": {"150"}}).expectOK(t)
	checkShape(t, "sapi_transfer", r.body)
	r = e.signed(http.MethodPost, "/sapi/v3/asset/getUserAsset", nil).expectOK(t)
	checkShape(t, "sapi_user_asset", r.body)
	if got := funding(); !got.Equal(before.Sub(decimal.NewFromInt(150))) {
		t.Fatalf("funding %s after moving 150 from %s", got, before)
	}
	e.signed(http.MethodPost, "/sapi/v1/asset/transfer", url.Values{"type": {"FUNDING_MAIN"}, "asset": {"USDT"}, "amount": {"99999999"}}).expectErr(t, http.StatusBadRequest, -5002)
	e.signed(http.MethodPost, "/sapi/v1/asset/transfer", url.Values{"type": {"MAIN_MARGIN"}, "asset": {"USDT"}, "amount": {"1"}}).expectErr(t, http.StatusBadRequest, -1130)
	r = e.signed(http.MethodGet, "/sapi/v1/asset/transfer", url.Values{"type": {"FUNDING_MAIN"}}).expectOK(t)
	checkShape(t, "sapi_transfer_history", r.body)
	if !strings.Contains(string(r.body), `"total":1`) {
		t.Fatalf("transfer history: %s", r.body)
	}
	r = e.signed(http.MethodGet, "/sapi/v1/capital/deposit/address", url.Values{"coin": {"USDT"}}).expectOK(t)
	checkShape(t, "sapi_deposit_address", r.body)
	if !strings.Contains(string(r.body), `"address":"`) {
		t.Fatalf("address: %s", r.body)
	}
	r = e.signed(http.MethodGet, "/sapi/v1/capital/deposit/hisrec", nil).expectOK(t)
	checkShape(t, "sapi_deposit_history", r.body)
	if strings.Count(string(r.body), `"coin":`) < 2 {
		t.Fatalf("deposits of the demo funding: %s", r.body)
	}
	r = e.signed(http.MethodPost, "/sapi/v1/capital/withdraw/apply", url.Values{"coin": {"USDT"}, "address": {"0xabc"}, "amount": {"50"}}).expectOK(t)
	checkShape(t, "sapi_withdraw", r.body)
	e.signed(http.MethodPost, "/sapi/v1/capital/withdraw/apply", url.Values{"coin": {"USDT"}, "address": {"0xabc"}, "amount": {"1"}}).expectErr(t, http.StatusBadRequest, -4022)
	r = e.signed(http.MethodGet, "/sapi/v1/capital/withdraw/history", url.Values{"coin": {"USDT"}}).expectOK(t)
	checkShape(t, "sapi_withdraw_history", r.body)
	if !strings.Contains(string(r.body), `"address":"0xabc"`) || !strings.Contains(string(r.body), `"amount":"50"`) {
		t.Fatalf("withdrawals: %s", r.body)
	}
	// Convert USDT to BTC.
	var quote struct {
		QuoteID  string `json:"quoteId"`
		ToAmount string `json:"toAmount"`
	}
	r = e.signed(http.MethodPost, "/sapi/v1/convert/getQuote", url.Values{"fromAsset": {"USDT"}, "toAsset": {"BTC"}, "fromAmount": {"100"}}).expectOK(t)
	checkShape(t, "sapi_convert_quote", r.body)
	r.decode(t, &quote)
	if quote.QuoteID == "" || !decimal.RequireFromString(quote.ToAmount).IsPositive() {
		t.Fatalf("quote %+v", quote)
	}
	r = e.signed(http.MethodPost, "/sapi/v1/convert/acceptQuote", url.Values{"quoteId": {quote.QuoteID}}).expectOK(t)
	checkShape(t, "sapi_convert_accept", r.body)
	if !strings.Contains(string(r.body), `"orderStatus":"SUCCESS"`) {
		t.Fatalf("accept: %s", r.body)
	}
	e.signed(http.MethodPost, "/sapi/v1/convert/acceptQuote", url.Values{"quoteId": {quote.QuoteID}}).expectErr(t, http.StatusBadRequest, 345239)
	r = e.signed(http.MethodGet, "/sapi/v1/convert/orderStatus", url.Values{"quoteId": {quote.QuoteID}}).expectOK(t)
	checkShape(t, "sapi_convert_status", r.body)
	if !strings.Contains(string(r.body), `"toAmount":"`+quote.ToAmount+`"`) {
		t.Fatalf("convert status: %s", r.body)
	}
	now := strconv.FormatInt(e.v.Now(), 10)
	r = e.signed(http.MethodGet, "/sapi/v1/convert/tradeFlow", url.Values{"startTime": {"0"}, "endTime": {now}}).expectOK(t)
	checkShape(t, "sapi_convert_flow", r.body)
	if !strings.Contains(string(r.body), quote.QuoteID) {
		t.Fatalf("trade flow: %s", r.body)
	}
	// Faucet.
	before = funding()
	e.signed(http.MethodPost, "/sapi/v1/emulator/faucet", url.Values{"coin": {"USDT"}, "amount": {"500"}}).expectOK(t)
	if got := funding(); !got.Equal(before.Add(decimal.NewFromInt(500))) {
		t.Fatalf("faucet: %s -> %s", before, got)
	}
}

func TestFuturesUserStreamTrigger(t *testing.T) {
	e := newEnv(t)
	key := e.listenKey(true)
	c := e.dial("/fws/private/ws?listenKey=" + key)
	in := e.inst("BTC/USDT:PERP")
	e.signed(http.MethodPost, "/fapi/v1/order", url.Values{"symbol": {"BTCUSDT"}, "side": {"BUY"}, "type": {"MARKET"},
		"quantity": {"0.020"}}).expectOK(t)
	stop := e.markPrice("BTCUSDT").Mul(decimal.RequireFromString("0.98")).Div(in.TickSize).Floor().Mul(in.TickSize)
	var o futOrder
	e.signed(http.MethodPost, "/fapi/v1/order", url.Values{"symbol": {"BTCUSDT"}, "side": {"SELL"},
		"type": {"STOP_MARKET"}, "stopPrice": {stop.String()}, "closePosition": {"true"},
		"workingType": {"MARK_PRICE"}}).expectOK(t).decode(t, &o)
	if err := e.v.SetMarkPrice(in.ID, stop.Sub(in.TickSize)); err != nil {
		t.Fatal(err)
	}
	// For each order: NEW first, then TRADE reports; the stop reports NEW as STOP_MARKET, then NEW again as
	// MARKET when it triggers, then its trade closes the position.
	var seq []string
	for {
		b := c.until(20*time.Second, hasEvent("ORDER_TRADE_UPDATE"))
		checkShape(t, "ws_ORDER_TRADE_UPDATE", b)
		_, m := eventOf(b)
		x := m["o"].(map[string]any)
		if x["i"].(float64) != float64(o.OrderID) {
			if len(seq) == 0 && x["x"] != "NEW" {
				t.Fatalf("market order's first report: %s", b)
			}
			if r := "mkt:" + x["x"].(string); len(seq) == 0 || seq[len(seq)-1] != r {
				seq = append(seq, r) // one entry for however many fills
			}
			continue
		}
		seq = append(seq, x["x"].(string)+":"+x["o"].(string)+"/"+x["ot"].(string)+":"+x["X"].(string))
		if x["X"] == "FILLED" {
			if x["cp"] != true || x["l"] != "0.020" {
				t.Fatalf("closing trade: %s", b)
			}
			break
		}
	}
	want := "mkt:NEW mkt:TRADE NEW:STOP_MARKET/STOP_MARKET:NEW NEW:MARKET/STOP_MARKET:NEW TRADE:MARKET/STOP_MARKET:FILLED"
	if got := strings.Join(seq, " "); got != want {
		t.Fatalf("reports:\n got %s\nwant %s", got, want)
	}
}

func TestSpotConditionalOrders(t *testing.T) {
	e := newEnv(t)
	in := e.inst("ETH/USDT")
	tb := e.top(false, "ETHUSDT")
	at := func(f string) string {
		return tb.bid.Mul(decimal.RequireFromString(f)).Div(in.TickSize).Floor().Mul(in.TickSize).String()
	}
	// Stop-loss limit below the market rests untriggered; the default answer for it is ACK.
	r := e.signed(http.MethodPost, "/api/v3/order", url.Values{"symbol": {"ETHUSDT"}, "side": {"SELL"},
		"type": {"STOP_LOSS_LIMIT"}, "timeInForce": {"GTC"}, "quantity": {"0.1"}, "price": {at("0.96")},
		"stopPrice": {at("0.97")}}).expectOK(t)
	checkShape(t, "spot_order_ack", r.body)
	var ack spotOrder
	r.decode(t, &ack)
	var o spotOrder
	e.signed(http.MethodGet, "/api/v3/order", url.Values{"symbol": {"ETHUSDT"}, "orderId": {strconv.FormatUint(ack.OrderID, 10)}}).expectOK(t).decode(t, &o)
	if o.Type != "STOP_LOSS_LIMIT" || o.Status != "NEW" || o.IsWorking == nil || *o.IsWorking ||
		o.StopPrice == nil || *o.StopPrice != decimal.RequireFromString(at("0.97")).StringFixed(8) {
		t.Fatalf("stop-loss limit: %+v", o)
	}
	// A stop that would trigger at once is refused.
	e.signed(http.MethodPost, "/api/v3/order", url.Values{"symbol": {"ETHUSDT"}, "side": {"SELL"},
		"type": {"STOP_LOSS"}, "quantity": {"0.1"}, "stopPrice": {at("1.05")}}).expectErr(t, http.StatusBadRequest, -2010)
	// A stop without its stop price is malformed.
	e.signed(http.MethodPost, "/api/v3/order", url.Values{"symbol": {"ETHUSDT"}, "side": {"SELL"},
		"type": {"TAKE_PROFIT"}, "quantity": {"0.1"}}).expectErr(t, http.StatusBadRequest, -1102)
	// Take-profit above the market, RESULT answer.
	r = e.signed(http.MethodPost, "/api/v3/order", url.Values{"symbol": {"ETHUSDT"}, "side": {"SELL"},
		"type": {"TAKE_PROFIT"}, "quantity": {"0.1"}, "stopPrice": {at("1.05")}, "newOrderRespType": {"RESULT"}}).expectOK(t)
	if !strings.Contains(string(r.body), `"type":"TAKE_PROFIT"`) || !strings.Contains(string(r.body), `"workingTime":-1`) {
		t.Fatalf("take profit: %s", r.body)
	}
	var open []spotOrder
	e.signed(http.MethodGet, "/api/v3/openOrders", url.Values{"symbol": {"ETHUSDT"}}).expectOK(t).decode(t, &open)
	if len(open) != 2 {
		t.Fatalf("open: %+v", open)
	}
}

func TestOrderRateLimit(t *testing.T) {
	e := newEnv(t)
	in := e.inst("ETH/USDT")
	tb := e.top(false, "ETHUSDT")
	price := tb.bid.Mul(decimal.RequireFromString("0.9")).Div(in.TickSize).Floor().Mul(in.TickSize).String()
	place := func() resp {
		return e.signed(http.MethodPost, "/api/v3/order", url.Values{"symbol": {"ETHUSDT"}, "side": {"BUY"},
			"type": {"LIMIT"}, "timeInForce": {"GTC"}, "quantity": {"0.01"}, "price": {price},
			"newOrderRespType": {"ACK"}})
	}
	for i := 1; i <= 100; i++ {
		r := place().expectOK(t)
		if got := r.header.Get("X-MBX-ORDER-COUNT-10S"); got != strconv.Itoa(i) {
			t.Fatalf("order %d: count header %q", i, got)
		}
		if r.header.Get("X-MBX-ORDER-COUNT-1D") == "" {
			t.Fatal("no daily order count")
		}
	}
	r := place()
	r.expectErr(t, http.StatusTooManyRequests, -1015)
	if r.header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
	e.advance(10 * time.Second)
	place().expectOK(t)
}

func TestHaltedSymbol(t *testing.T) {
	e := newEnv(t)
	if err := e.v.SetStatus("SOL/USDT", venue.Halted); err != nil {
		t.Fatal(err)
	}
	r := e.get("/api/v3/exchangeInfo", url.Values{"symbol": {"SOLUSDT"}}).expectOK(t)
	if !strings.Contains(string(r.body), `"status":"HALT"`) {
		t.Fatalf("exchangeInfo of a halted symbol: %s", r.body)
	}
	e.signed(http.MethodPost, "/api/v3/order", url.Values{"symbol": {"SOLUSDT"}, "side": {"BUY"}, "type": {"MARKET"},
		"quantity": {"1"}}).expectErr(t, http.StatusBadRequest, -1013)
}
