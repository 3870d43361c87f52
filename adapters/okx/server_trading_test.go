package okx

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// recorder answers the endpoints the margin mode travels on and records what the adapter sent.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
}

type recorded struct {
	method string
	path   string
	query  map[string][]string
	body   map[string]any
}

// last is the last POST to path, or with a leading "GET " the last GET.
func (f *recorder) last(path string) (recorded, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	method := http.MethodPost
	if p, ok := strings.CutPrefix(path, "GET "); ok {
		method, path = http.MethodGet, p
	}
	for i := len(f.reqs) - 1; i >= 0; i-- {
		if f.reqs[i].path == path && f.reqs[i].method == method {
			return f.reqs[i], true
		}
	}
	return recorded{}, false
}

func (f *recorder) all(path string) []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []recorded
	for _, r := range f.reqs {
		if r.path == path {
			out = append(out, r)
		}
	}
	return out
}

func (f *recorder) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

const testInstruments = `{"code":"0","msg":"","data":[
{"instType":"SWAP","instId":"T-USDT-SWAP","instFamily":"T-USDT","settleCcy":"USDT","ctVal":"0.1","ctMult":"1","ctValCcy":"T","ctType":"linear","tickSz":"0.1","lotSz":"1","minSz":"1","maxLmtSz":"1000","maxMktSz":"100","lever":"50","listTime":"1","state":"live"},
{"instType":"SPOT","instId":"T-USDT","baseCcy":"T","quoteCcy":"USDT","tickSz":"0.1","lotSz":"0.001","minSz":"0.001","maxLmtSz":"1000","maxMktSz":"100","listTime":"1","state":"live"}]}`

func (f *recorder) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if r.Method == http.MethodPost {
			var raw any
			_ = json.NewDecoder(r.Body).Decode(&raw)
			switch v := raw.(type) {
			case map[string]any:
				body = v
			case []any:
				body = map[string]any{"items": v}
			}
		}
		f.mu.Lock()
		f.reqs = append(f.reqs, recorded{r.Method, r.URL.Path, r.URL.Query(), body})
		f.mu.Unlock()
		switch r.URL.Path {
		case "/api/v5/public/instruments":
			fmt.Fprint(w, testInstruments)
		case "/api/v5/trade/order":
			if r.Method == http.MethodGet {
				fmt.Fprint(w, `{"code":"0","msg":"","data":[]}`)
				return
			}
			fmt.Fprint(w, `{"code":"0","msg":"","data":[{"ordId":"7","clOrdId":"","ts":"1","sCode":"0","sMsg":""}]}`)
		case "/api/v5/trade/order-algo":
			if r.Method == http.MethodGet {
				fmt.Fprint(w, `{"code":"0","msg":"","data":[]}`)
				return
			}
			fmt.Fprint(w, `{"code":"0","msg":"","data":[{"algoId":"8","algoClOrdId":"","sCode":"0","sMsg":""}]}`)
		case "/api/v5/trade/orders-algo-pending", "/api/v5/trade/orders-algo-history":
			fmt.Fprint(w, `{"code":"0","msg":"","data":[]}`)
		case "/api/v5/account/positions":
			fmt.Fprint(w, `{"code":"0","msg":"","data":[{"instType":"SWAP","instId":"T-USDT-SWAP","mgnMode":"isolated","posSide":"long","pos":"20","avgPx":"100","uTime":"1"},
				{"instType":"SWAP","instId":"T-USDT-SWAP","mgnMode":"cross","posSide":"long","pos":"10","avgPx":"100","uTime":"1"}]}`)
		case "/api/v5/trade/close-position":
			fmt.Fprint(w, `{"code":"0","msg":"","data":[{"instId":"T-USDT-SWAP","posSide":"long","clOrdId":"","tag":""}]}`)
		case "/api/v5/trade/orders-history":
			fmt.Fprint(w, `{"code":"0","msg":"","data":[{"instType":"SWAP","instId":"GONE-USDT-SWAP","ordId":"9","px":"1","sz":"30","ordType":"limit","side":"buy","accFillSz":"0","state":"canceled","cTime":"1","uTime":"1"}]}`)
		case "/api/v5/trade/fills":
			fmt.Fprint(w, `{"code":"0","msg":"","data":[{"instType":"SWAP","instId":"GONE-USDT-SWAP","tradeId":"1","ordId":"9","billId":"5","fillPx":"1","fillSz":"30","side":"buy","fee":"-0.1","ts":"1"}]}`)
		case "/api/v5/account/max-size":
			fmt.Fprint(w, `{"code":"0","msg":"","data":[{"instId":"T-USDT-SWAP","ccy":"USDT","maxBuy":"12","maxSell":"7"}]}`)
		case "/api/v5/account/set-leverage":
			fmt.Fprint(w, `{"code":"0","msg":"","data":[{"lever":"5"}]}`)
		case "/api/v5/account/config":
			fmt.Fprint(w, `{"code":"0","msg":"","data":[{"posMode":"long_short_mode","acctLv":"2","perm":"read_only,trade","ip":"","uid":"42"}]}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"code":"50000","msg":"not found","data":[]}`)
		}
	})
}

func recordingServer(t *testing.T) (*Server, *recorder, *exchangev1.AccountRef) {
	t.Helper()
	f := &recorder{}
	ts := httptest.NewServer(f.handler())
	t.Cleanup(ts.Close)
	st := DefaultSettings()
	st.RESTURL = ts.URL
	s := New(Options{Logger: quiet(), Settings: &st})
	t.Cleanup(s.Close)
	return s, f, &exchangev1.AccountRef{ApiKey: "k", ApiSecret: "s", Passphrase: "p"}
}

func wantField(t *testing.T, err error, field string) {
	t.Helper()
	d := sdk.DetailOf(err)
	if d.GetReason() != exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT || d.GetField() != field {
		t.Fatalf("got %v, want INVALID_ARGUMENT on %s", err, field)
	}
}

func TestMarginModeTravelsOnEachRequest(t *testing.T) {
	s, f, acct := recordingServer(t)
	ctx := context.Background()
	swap, spot := exchangev1.MarketType_MARKET_TYPE_SWAP, exchangev1.MarketType_MARKET_TYPE_SPOT
	order := func(mt exchangev1.MarketType, sym string, mm exchangev1.MarginMode) error {
		_, err := s.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: acct, MarketType: mt, Symbol: sym, Side: exchangev1.Side_SIDE_BUY,
			Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, TimeInForce: exchangev1.TimeInForce_TIME_IN_FORCE_GTC, Price: "100", Qty: "1", MarginMode: mm})
		return err
	}
	// SWAP without a margin mode: refused before anything is sent.
	if err := order(swap, "T-USDT-SWAP", exchangev1.MarginMode_MARGIN_MODE_UNSPECIFIED); err != nil {
		wantField(t, err, "margin_mode")
	} else {
		t.Fatal("SWAP order without margin_mode accepted")
	}
	if _, ok := f.last("/api/v5/trade/order"); ok {
		t.Fatal("an order without margin mode reached OKX")
	}
	for _, tc := range []struct {
		mt   exchangev1.MarketType
		sym  string
		mm   exchangev1.MarginMode
		want string
	}{
		{swap, "T-USDT-SWAP", exchangev1.MarginMode_MARGIN_MODE_ISOLATED, "isolated"},
		{swap, "T-USDT-SWAP", exchangev1.MarginMode_MARGIN_MODE_CROSS, "cross"},
		{swap, "T-USDT-SWAP", exchangev1.MarginMode_MARGIN_MODE_ISOLATED, "isolated"}, // no memory of the previous one
		{spot, "T-USDT", exchangev1.MarginMode_MARGIN_MODE_UNSPECIFIED, "cash"},
	} {
		if err := order(tc.mt, tc.sym, tc.mm); err != nil {
			t.Fatal(err)
		}
		if r, _ := f.last("/api/v5/trade/order"); r.body["tdMode"] != tc.want {
			t.Fatalf("%v %v: tdMode %v, want %s", tc.sym, tc.mm, r.body["tdMode"], tc.want)
		}
	}

	algo := func(mm exchangev1.MarginMode) error {
		_, err := s.PlaceAlgoOrder(ctx, &exchangev1.PlaceAlgoOrderRequest{Account: acct, MarketType: swap, Symbol: "T-USDT-SWAP",
			Side: exchangev1.Side_SIDE_SELL, Type: exchangev1.OrderType_ORDER_TYPE_STOP_MARKET, TriggerPrice: "90", Qty: "1", MarginMode: mm})
		return err
	}
	wantField(t, algo(exchangev1.MarginMode_MARGIN_MODE_UNSPECIFIED), "margin_mode")
	if err := algo(exchangev1.MarginMode_MARGIN_MODE_ISOLATED); err != nil {
		t.Fatal(err)
	}
	if r, _ := f.last("/api/v5/trade/order-algo"); r.body["tdMode"] != "isolated" {
		t.Fatalf("algo tdMode %v", r.body["tdMode"])
	}

	_, err := s.ClosePosition(ctx, &exchangev1.ClosePositionRequest{Account: acct, Symbol: "T-USDT-SWAP", PositionSide: exchangev1.PositionSide_POSITION_SIDE_LONG})
	wantField(t, err, "margin_mode")
	if _, err := s.ClosePosition(ctx, &exchangev1.ClosePositionRequest{Account: acct, Symbol: "T-USDT-SWAP",
		PositionSide: exchangev1.PositionSide_POSITION_SIDE_LONG, MarginMode: exchangev1.MarginMode_MARGIN_MODE_ISOLATED, ClientOrderId: "close1"}); err != nil {
		t.Fatal(err)
	}
	if r, _ := f.last("/api/v5/trade/close-position"); r.body["mgnMode"] != "isolated" || r.body["posSide"] != "long" || r.body["clOrdId"] != "close1" {
		t.Fatalf("close-position body %v", r.body)
	}

	_, err = s.GetMaxOrderSize(ctx, &exchangev1.GetMaxOrderSizeRequest{Account: acct, MarketType: swap, Symbol: "T-USDT-SWAP"})
	wantField(t, err, "margin_mode")
	mx, err := s.GetMaxOrderSize(ctx, &exchangev1.GetMaxOrderSizeRequest{Account: acct, MarketType: swap, Symbol: "T-USDT-SWAP", MarginMode: exchangev1.MarginMode_MARGIN_MODE_ISOLATED})
	if err != nil || mx.GetMaxBuyQty() != "1.2" || mx.GetMaxSellQty() != "0.7" {
		t.Fatalf("max size %v %v", mx, err)
	}
	if r, _ := f.last("GET /api/v5/account/max-size"); r.query["tdMode"][0] != "isolated" {
		t.Fatalf("max-size query %v", r.query)
	}

	// SetMarginMode cannot be kept by OKX: it says so instead of pretending.
	_, err = s.SetMarginMode(ctx, &exchangev1.SetMarginModeRequest{Account: acct, Symbol: "T-USDT-SWAP", MarginMode: exchangev1.MarginMode_MARGIN_MODE_ISOLATED})
	if sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED {
		t.Fatalf("SetMarginMode: %v", err)
	}
}

func TestSetLeveragePositionSide(t *testing.T) {
	s, f, acct := recordingServer(t)
	ctx := context.Background()
	set := func(mm exchangev1.MarginMode, ps exchangev1.PositionSide) error {
		_, err := s.SetLeverage(ctx, &exchangev1.SetLeverageRequest{Account: acct, Symbol: "T-USDT-SWAP", Leverage: "5", MarginMode: mm, PositionSide: ps})
		return err
	}
	wantField(t, set(exchangev1.MarginMode_MARGIN_MODE_UNSPECIFIED, exchangev1.PositionSide_POSITION_SIDE_UNSPECIFIED), "margin_mode")
	// Hedge mode, isolated, one side named: only that side's leverage.
	if err := set(exchangev1.MarginMode_MARGIN_MODE_ISOLATED, exchangev1.PositionSide_POSITION_SIDE_SHORT); err != nil {
		t.Fatal(err)
	}
	got := f.all("/api/v5/account/set-leverage")
	if len(got) != 1 || got[0].body["posSide"] != "short" || got[0].body["mgnMode"] != "isolated" {
		t.Fatalf("set-leverage %v", got)
	}
	// Cross: one leverage per instrument, no posSide.
	if err := set(exchangev1.MarginMode_MARGIN_MODE_CROSS, exchangev1.PositionSide_POSITION_SIDE_LONG); err != nil {
		t.Fatal(err)
	}
	if r, _ := f.last("/api/v5/account/set-leverage"); r.body["posSide"] != nil || r.body["mgnMode"] != "cross" {
		t.Fatalf("cross set-leverage %v", r.body)
	}
	// Isolated in hedge mode without a side: both sides.
	n := len(f.all("/api/v5/account/set-leverage"))
	if err := set(exchangev1.MarginMode_MARGIN_MODE_ISOLATED, exchangev1.PositionSide_POSITION_SIDE_UNSPECIFIED); err != nil {
		t.Fatal(err)
	}
	if got := f.all("/api/v5/account/set-leverage")[n:]; len(got) != 2 || got[0].body["posSide"] != "long" || got[1].body["posSide"] != "short" {
		t.Fatalf("both sides %v", got)
	}
}

// TestHistoryOfUnknownInstrumentFails: rows whose instrument cannot be looked up are an error, never sizes in
// contracts reported as base units.
func TestHistoryOfUnknownInstrumentFails(t *testing.T) {
	s, _, acct := recordingServer(t)
	ctx := context.Background()
	swap := exchangev1.MarketType_MARKET_TYPE_SWAP
	_, err := s.ListOrderHistory(ctx, &exchangev1.ListOrderHistoryRequest{Account: acct, MarketType: swap})
	if r := sdk.DetailOf(err).GetReason(); r != exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND {
		t.Fatalf("orders: %v", err)
	}
	_, err = s.ListFills(ctx, &exchangev1.ListFillsRequest{Account: acct, MarketType: swap})
	if r := sdk.DetailOf(err).GetReason(); r != exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND {
		t.Fatalf("fills: %v", err)
	}
}
