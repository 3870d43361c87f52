package emulator

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"
)

// bookTop reads the best bid and ask of a futures symbol from the public depth endpoint.
func (e *env) bookTop(symbol string) (bid, ask string) {
	e.t.Helper()
	var d struct {
		Bids [][2]string `json:"bids"`
		Asks [][2]string `json:"asks"`
	}
	e.get("/fapi/v1/depth", url.Values{"symbol": {symbol}, "limit": {"5"}}).expectOK(e.t).decode(e.t, &d)
	if len(d.Bids) == 0 || len(d.Asks) == 0 {
		e.t.Fatalf("empty book %+v", d)
	}
	return d.Bids[0][0], d.Asks[0][0]
}

func TestFuturesPriceMatch(t *testing.T) {
	e := newEnv(t)
	bid, ask := e.bookTop("BTCUSDT")
	// QUEUE: a buy joins the best bid and rests; the order reads back with its priceMatch.
	var o futOrder
	e.signed(http.MethodPost, "/fapi/v1/order", url.Values{"symbol": {"BTCUSDT"}, "side": {"BUY"}, "type": {"LIMIT"},
		"timeInForce": {"GTC"}, "quantity": {"0.01"}, "priceMatch": {"QUEUE"}, "newClientOrderId": {"pm-q"}}).expectOK(t).decode(t, &o)
	if o.Price != bid || o.Status != "NEW" || o.PriceMatch != "QUEUE" || o.Type != "LIMIT" {
		t.Fatalf("QUEUE buy: %+v (best bid %s)", o, bid)
	}
	var got futOrder
	e.signed(http.MethodGet, "/fapi/v1/order", url.Values{"symbol": {"BTCUSDT"}, "orderId": {strconv.FormatUint(o.OrderID, 10)}}).expectOK(t).decode(t, &got)
	if got.PriceMatch != "QUEUE" || got.Price != bid {
		t.Fatalf("read back: %+v", got)
	}
	// OPPONENT: a buy takes the best ask at once.
	e.signed(http.MethodPost, "/fapi/v1/order", url.Values{"symbol": {"BTCUSDT"}, "side": {"BUY"}, "type": {"LIMIT"},
		"timeInForce": {"GTC"}, "quantity": {"0.01"}, "priceMatch": {"OPPONENT"}}).expectOK(t).decode(t, &o)
	if o.Price != ask || o.Status != "FILLED" || o.PriceMatch != "OPPONENT" {
		t.Fatalf("OPPONENT buy: %+v (best ask %s)", o, ask)
	}
	// Refusals: with a price, on a MARKET order, an unknown value.
	e.signed(http.MethodPost, "/fapi/v1/order", url.Values{"symbol": {"BTCUSDT"}, "side": {"BUY"}, "type": {"LIMIT"},
		"timeInForce": {"GTC"}, "quantity": {"0.01"}, "price": {bid}, "priceMatch": {"QUEUE"}}).expectErr(t, http.StatusBadRequest, -1106)
	e.signed(http.MethodPost, "/fapi/v1/order", url.Values{"symbol": {"BTCUSDT"}, "side": {"BUY"}, "type": {"MARKET"},
		"quantity": {"0.01"}, "priceMatch": {"OPPONENT"}}).expectErr(t, http.StatusBadRequest, -1106)
	e.signed(http.MethodPost, "/fapi/v1/order", url.Values{"symbol": {"BTCUSDT"}, "side": {"BUY"}, "type": {"LIMIT"},
		"timeInForce": {"GTC"}, "quantity": {"0.01"}, "priceMatch": {"NEAR"}}).expectErr(t, http.StatusBadRequest, -1130)

	// Amend with priceMatch: a sell resting far above re-prices to the best ask (QUEUE on its own side).
	var far futOrder
	e.signed(http.MethodPost, "/fapi/v1/order", url.Values{"symbol": {"BTCUSDT"}, "side": {"SELL"}, "type": {"LIMIT"},
		"timeInForce": {"GTC"}, "quantity": {"0.01"}, "price": {"200000"}}).expectOK(t).decode(t, &far)
	if far.PriceMatch != "NONE" {
		t.Fatalf("plain order priceMatch %q", far.PriceMatch)
	}
	_, ask = e.bookTop("BTCUSDT")
	e.signed(http.MethodPut, "/fapi/v1/order", url.Values{"symbol": {"BTCUSDT"}, "orderId": {strconv.FormatUint(far.OrderID, 10)},
		"side": {"SELL"}, "quantity": {"0.01"}, "priceMatch": {"QUEUE"}}).expectOK(t).decode(t, &got)
	if got.Price != ask || got.PriceMatch != "QUEUE" || got.Status != "NEW" {
		t.Fatalf("amend QUEUE: %+v (best ask %s)", got, ask)
	}
}
