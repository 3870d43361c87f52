package okx

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"google.golang.org/protobuf/proto"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

func quiet() *slog.Logger { return slog.New(slog.NewJSONHandler(io.Discard, nil)) }

func TestClientBacksOffOnRateLimit(t *testing.T) {
	var calls atomic.Int32
	var always atomic.Bool
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		if always.Load() {
			n = 2
		}
		switch n {
		case 1:
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"msg":"Too Many Requests","code":"50011"}`)
		case 2:
			fmt.Fprint(w, `{"code":"50011","msg":"Rate limit reached. Please refer to API documentation and throttle requests accordingly.","data":[]}`)
		default:
			fmt.Fprint(w, `{"code":"0","msg":"","data":[{"ts":"1767225600000"}]}`)
		}
	}))
	defer ts.Close()
	c := NewClient(ts.URL, time.Second, quiet())
	c.BaseBackoff = 5 * time.Millisecond
	data, err := c.Get(context.Background(), "/api/v5/public/time", nil, nil)
	if err != nil || calls.Load() != 3 || string(data) != `[{"ts":"1767225600000"}]` {
		t.Fatalf("%s %v after %d calls", data, err, calls.Load())
	}
	// Always limited: the typed error keeps OKX's code and says when to retry.
	always.Store(true)
	c.MaxRetries = 1
	_, err = c.Get(context.Background(), "/api/v5/public/time", nil, nil)
	d := sdk.DetailOf(err)
	if d.GetReason() != exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED || d.GetExchangeCode() != "50011" || d.GetRetryAfterMs() <= 0 {
		t.Fatalf("%v", err)
	}
}

func TestClientDoesNotRetryOrdersOnBusy(t *testing.T) {
	var calls atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		fmt.Fprint(w, `{"code":"50001","msg":"Service temporarily unavailable. Please try again later.","data":[]}`)
	}))
	defer ts.Close()
	c := NewClient(ts.URL, time.Second, quiet())
	c.BaseBackoff = time.Millisecond
	_, err := c.Post(context.Background(), "/api/v5/trade/order", map[string]string{"instId": "X"}, &Credentials{"k", "s", "p"})
	if sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE || calls.Load() != 1 {
		t.Fatalf("%v after %d calls", err, calls.Load())
	}
}

func TestClientSignsRequests(t *testing.T) {
	var got http.Header
	var gotPath, gotBody string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		gotPath = r.URL.RequestURI()
		b, _ := io.ReadAll(r.Body)
		gotBody = string(b)
		fmt.Fprint(w, `{"code":"0","msg":"","data":[]}`)
	}))
	defer ts.Close()
	c := NewClient(ts.URL, time.Second, quiet())
	c.Simulated = true
	fixed := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c.now = func() time.Time { return fixed }
	creds := &Credentials{APIKey: "key1", Secret: "sec1", Passphrase: "pass1"}
	if _, err := c.Post(context.Background(), "/api/v5/account/set-leverage", map[string]string{"lever": "5"}, creds); err != nil {
		t.Fatal(err)
	}
	want := Sign("sec1", "2026-01-01T00:00:00.000Z", "POST", gotPath, gotBody)
	if got.Get("OK-ACCESS-SIGN") != want || got.Get("OK-ACCESS-KEY") != "key1" || got.Get("OK-ACCESS-PASSPHRASE") != "pass1" ||
		got.Get("OK-ACCESS-TIMESTAMP") != "2026-01-01T00:00:00.000Z" || got.Get("x-simulated-trading") != "1" || gotBody != `{"lever":"5"}` {
		t.Fatalf("headers %v path %s body %s", got, gotPath, gotBody)
	}
	if _, err := c.Get(context.Background(), "/api/v5/account/balance", nil, &Credentials{APIKey: "k"}); sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED {
		t.Fatalf("incomplete credentials: %v", err)
	}
}

func TestLimiterSpacesRequests(t *testing.T) {
	l := newLimiter()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l.now = func() time.Time { return now } // the test moves the clock; a cancelled context shows a wait
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for range 5 { // 5 per 2 s
		if err := l.wait(done, "k", 5); err != nil {
			t.Fatal(err)
		}
		now = now.Add(100 * time.Millisecond)
	}
	if err := l.wait(done, "k", 5); err == nil {
		t.Fatal("a sixth request inside 2 s went through without waiting")
	}
	// The first request left at 0 s: a sixth may go once it is 2 s (and the slack) old, not before, and then a
	// seventh waits for the second request's turn.
	now = time.Date(2026, 1, 1, 0, 0, 2, 0, time.UTC).Add(l.slack - time.Millisecond)
	if err := l.wait(done, "k", 5); err == nil {
		t.Fatal("a slot came back before the oldest request was 2 s old")
	}
	now = now.Add(time.Millisecond)
	if err := l.wait(done, "k", 5); err != nil {
		t.Fatalf("no slot once the oldest request is 2 s old: %v", err)
	}
	if err := l.wait(done, "k", 5); err == nil {
		t.Fatal("a seventh request went before the second one's turn")
	}
	now = now.Add(100 * time.Millisecond)
	if err := l.wait(done, "k", 5); err != nil {
		t.Fatalf("no slot at the second request's turn: %v", err)
	}
	if err := l.wait(done, "other", 5); err != nil {
		t.Fatalf("keys share a bucket: %v", err)
	}
}

// fakeTrading records order requests and answers like OKX.
type fakeTrading struct {
	mu     sync.Mutex
	bodies []map[string]any
	paths  []string
}

func (f *fakeTrading) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v5/public/instruments", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"code":"0","msg":"","data":[{"instType":"SWAP","instId":"T-USDT-SWAP","instFamily":"T-USDT","settleCcy":"USDT",
			"ctVal":"0.1","ctMult":"1","ctValCcy":"T","ctType":"linear","tickSz":"0.1","lotSz":"1","minSz":"1","maxLmtSz":"1000","maxMktSz":"100","lever":"50","listTime":"1","state":"live"}]}`)
	})
	record := func(r *http.Request) map[string]any {
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		f.mu.Lock()
		f.bodies = append(f.bodies, m)
		f.paths = append(f.paths, r.URL.Path)
		f.mu.Unlock()
		return m
	}
	mux.HandleFunc("POST /api/v5/trade/order", func(w http.ResponseWriter, r *http.Request) {
		m := record(r)
		if m["clOrdId"] == "dup1" {
			fmt.Fprint(w, `{"code":"1","msg":"All operations failed","data":[{"ordId":"","clOrdId":"dup1","sCode":"51016","sMsg":"Duplicated clOrdId"}]}`)
			return
		}
		fmt.Fprint(w, `{"code":"0","msg":"","data":[{"ordId":"555","clOrdId":"","ts":"1","sCode":"0","sMsg":"Order placed"}]}`)
	})
	mux.HandleFunc("POST /api/v5/trade/cancel-order", func(w http.ResponseWriter, r *http.Request) {
		record(r)
		fmt.Fprint(w, `{"code":"0","msg":"","data":[{"ordId":"555","clOrdId":"","ts":"1","sCode":"0","sMsg":""}]}`)
	})
	mux.HandleFunc("GET /api/v5/trade/order", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.paths = append(f.paths, r.URL.RequestURI())
		f.mu.Unlock()
		state := "live"
		if q := r.URL.Query(); q.Get("ordId") == "999" || (q.Get("ordId") == "" && q.Get("clOrdId") != "dup1") {
			fmt.Fprint(w, `{"code":"51603","msg":"Order does not exist","data":[]}`)
			return
		}
		fmt.Fprintf(w, `{"code":"0","msg":"","data":[{"instType":"SWAP","instId":"T-USDT-SWAP","ordId":"555","clOrdId":"dup1","px":"100.5","sz":"30",
			"ordType":"post_only","side":"buy","posSide":"long","accFillSz":"0","avgPx":"","state":"%s","fee":"0","feeCcy":"USDT","reduceOnly":"false","cTime":"1","uTime":"1"}]}`, state)
	})
	return mux
}

func TestTradingRequests(t *testing.T) {
	f := &fakeTrading{}
	ts := httptest.NewServer(f.handler())
	defer ts.Close()
	st := DefaultSettings()
	st.RESTURL = ts.URL
	s := New(Options{Logger: quiet(), Settings: &st})
	defer s.Close()
	acct := &exchangev1.AccountRef{ApiKey: "k", ApiSecret: "s", Passphrase: "p"}
	ctx := context.Background()
	req := &exchangev1.PlaceOrderRequest{Account: acct, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: "T-USDT-SWAP",
		Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, TimeInForce: exchangev1.TimeInForce_TIME_IN_FORCE_POST_ONLY,
		Price: "100.5", Qty: "3", ClientOrderId: "c1", PositionSide: exchangev1.PositionSide_POSITION_SIDE_LONG, MarginMode: exchangev1.MarginMode_MARGIN_MODE_CROSS,
		StopLoss: &exchangev1.TpSl{TriggerPrice: "90", TriggerPriceType: exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK}}
	o, err := s.PlaceOrder(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if o.Order.GetQty() != "3" || o.Order.GetOrderId() != "555" {
		t.Fatalf("order %v", o.Order)
	}
	b := f.bodies[0]
	algo, _ := b["attachAlgoOrds"].([]any)
	if b["sz"] != "30" || b["ordType"] != "post_only" || b["tdMode"] != "cross" || b["posSide"] != "long" || b["px"] != "100.5" || len(algo) != 1 ||
		algo[0].(map[string]any)["slTriggerPxType"] != "mark" || algo[0].(map[string]any)["slOrdPx"] != "-1" {
		t.Fatalf("body %v", b)
	}
	// Off the lot grid: refused before OKX sees it.
	bad := proto.Clone(req).(*exchangev1.PlaceOrderRequest)
	bad.Qty = "0.25"
	if _, err := s.PlaceOrder(ctx, bad); sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_PRECISION {
		t.Fatalf("qty 0.25 (2.5 contracts): %v", err)
	}
	// A repeated client order id with the same parameters returns the existing order without placing again.
	dup := proto.Clone(req).(*exchangev1.PlaceOrderRequest)
	dup.ClientOrderId = "dup1"
	posts := len(f.bodies)
	o2, err := s.PlaceOrder(ctx, dup)
	if err != nil || o2.Order.GetOrderId() != "555" || len(f.bodies) != posts {
		t.Fatalf("duplicate: %v %v (%d orders sent)", o2, err, len(f.bodies)-posts)
	}
	// The same id with other parameters is a different order: refused.
	dup.Price = "101"
	if _, err := s.PlaceOrder(ctx, dup); sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID {
		t.Fatalf("duplicate with another price: %v", err)
	}
	// Cancel with only the order id: the instrument is remembered.
	if _, err := s.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: acct, OrderId: "555"}); err != nil {
		t.Fatal(err)
	}
	if last := f.bodies[len(f.bodies)-1]; last["instId"] != "T-USDT-SWAP" || last["ordId"] != "555" {
		t.Fatalf("cancel body %v", last)
	}
	_, err = s.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: acct, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: "T-USDT-SWAP", OrderId: "999"})
	if d := sdk.DetailOf(err); d.GetReason() != exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND || d.GetExchangeCode() != "51603" {
		t.Fatalf("unknown order: %v", err)
	}
	if _, err := s.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: &exchangev1.AccountRef{ApiKey: "k"}, Symbol: "T-USDT-SWAP"}); sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED {
		t.Fatalf("no secret: %v", err)
	}
}

func TestOCOBody(t *testing.T) {
	in := &Instrument{InstID: "T-USDT-SWAP", MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, ContractSize: decimal.RequireFromString("0.1")}
	lim := decimal.RequireFromString("120.5")
	b, err := AlgoRequest{Inst: in, TdMode: "isolated", Side: "sell", PosSide: "long", ClosePosition: true,
		TP: &TpSlLeg{TriggerPrice: decimal.RequireFromString("120"), TriggerType: exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST, Price: &lim},
		SL: &TpSlLeg{TriggerPrice: decimal.RequireFromString("90"), TriggerType: exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_INDEX}}.Body()
	if err != nil {
		t.Fatal(err)
	}
	if b["ordType"] != "oco" || b["tpOrdPx"] != "120.5" || b["slOrdPx"] != "-1" || b["slTriggerPxType"] != "index" || b["closeFraction"] != "1" || b["sz"] != nil {
		t.Fatalf("%v", b)
	}
	if _, err := (AlgoRequest{Inst: in}).Body(); err == nil {
		t.Fatal("algo order without legs accepted")
	}
}

func TestSettings(t *testing.T) {
	if _, err := ParseSettings(map[string]string{"nope": "1"}); sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT {
		t.Fatalf("unknown key: %v", err)
	}
	for k, v := range map[string]string{"rest_url": "ftp://x", "ws_public_url": "http://x", "rest_timeout": "forever", "ws_ping_interval": "45s", "simulated_trading": "maybe"} {
		if _, err := ParseSettings(map[string]string{k: v}); err == nil {
			t.Errorf("%s=%s accepted", k, v)
		}
	}
	st, err := ParseSettings(map[string]string{"rest_url": "http://127.0.0.1:7002", "ws_public_url": "ws://127.0.0.1:7002/ws/v5/public", "simulated_trading": "true"})
	if err != nil || st.RESTURL != "http://127.0.0.1:7002" || !st.Simulated || st.WSPrivateURL != DefaultWSPrivateURL {
		t.Fatalf("%+v %v", st, err)
	}
}
