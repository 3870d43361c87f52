package trade_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/bff/internal/api/apiutil"
	"github.com/exhub/exhub/bff/internal/api/trade"
	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/config/setting"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/plugintest"
	"github.com/exhub/exhub/bff/internal/servicegate"
	"github.com/exhub/exhub/bff/internal/store"
	"github.com/exhub/exhub/bff/internal/store/storetest"
	"github.com/exhub/exhub/bff/internal/trading"
	"github.com/exhub/exhub/plugin-sdk/faults"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func TestMain(m *testing.M) { os.Exit(plugintest.Run(m, storetest.Run, "reference")) }

const wait = 90 * time.Second

// guard is the session check in these tests: the member named by X-Test-Member, 401 without one.
type guard struct{}

func (guard) Huma() func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		id := ctx.Header("X-Test-Member")
		if id == "" {
			ctx.SetHeader("Content-Type", "application/problem+json")
			ctx.SetStatus(http.StatusUnauthorized)
			_, _ = ctx.BodyWriter().Write([]byte(`{"status":401,"title":"Unauthorized","code":"session_required"}`))
			return
		}
		next(huma.WithContext(ctx, auth.WithMember(ctx.Context(), &auth.Member{ID: id, TOTP: ctx.Header("X-Test-2FA") == "on"})))
	}
}

func (guard) RegisterSecurityScheme(api huma.API) {}

type accounts struct{}

func (accounts) AccountRef(_ context.Context, member, exchange string) (*exchangev1.AccountRef, error) {
	if exchange != "reference" || (member != "a" && member != "b") {
		return nil, fmt.Errorf("%s on %s: %w", member, exchange, trading.ErrNoAccount)
	}
	return &exchangev1.AccountRef{AccountId: "ref-" + member, ApiKey: "api-paper-" + member}, nil
}

type env struct {
	t      *testing.T
	url    string
	faults string
	next   atomic.Value // the next client order id (empty: random)
	svc    *trading.Service
	// twoFactor: members whose session says an authenticator app is enrolled.
	twoFactor map[string]bool
}

func newEnv(t *testing.T, pg bool) *env {
	t.Helper()
	return newEnvWith(t, pg, guard{}, accounts{})
}

// newEnvWith serves the trade API behind g with the members' accounts from acc.
func newEnvWith(t *testing.T, pg bool, g apiutil.Guard, acc trading.AccountSource) *env {
	t.Helper()
	return newEnvGated(t, pg, g, acc, nil)
}

// newEnvGated is newEnvWith with service gates.
func newEnvGated(t *testing.T, pg bool, g apiutil.Guard, acc trading.AccountSource, gates *servicegate.Checker) *env {
	t.Helper()
	cfg := store.DefaultConfig(t.TempDir())
	if pg {
		cfg = store.DefaultConfig("")
		cfg.Driver = store.DriverPostgres
		cfg.DSN = secret.New(storetest.Postgres(t))
	}
	st, err := store.Open(context.Background(), cfg, store.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	faultAddr := l.Addr().String()
	_ = l.Close()
	host := pluginhost.New([]pluginhost.Spec{{Key: 100, Slug: "reference", Name: "Reference", Path: plugintest.Path("reference"),
		Settings: map[string]string{"fault_listen": faultAddr, "history_days": "1"}}}, pluginhost.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	hdone := make(chan struct{})
	go func() { defer close(hdone); host.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-hdone })
	sup, _ := host.Get("reference")
	wctx, wcancel := context.WithTimeout(ctx, wait)
	defer wcancel()
	if err := sup.WaitRunning(wctx); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, faults: "http://" + faultAddr}
	e.next.Store("")
	tc := trading.Defaults()
	tc.ResolveInitial, tc.ResolveMax = setting.Duration(50*time.Millisecond), setting.Duration(500*time.Millisecond)
	tc.Tick, tc.NotFoundGrace = setting.Duration(50*time.Millisecond), setting.Duration(time.Second)
	svc, err := trading.New(tc, st, host, acc, trading.WithClientIDs(func() string { return e.next.Swap("").(string) }))
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	sdone := make(chan struct{})
	go func() { defer close(sdone); svc.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-sdone })

	mux := http.NewServeMux()
	api := humago.New(mux, huma.DefaultConfig("exhub test", "0.0.0"))
	trade.Register(api, trade.Deps{Guard: g, Trading: svc, Gates: gates})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	e.url = srv.URL
	return e
}

type answer struct {
	status int
	ctype  string
	body   map[string]any
	raw    string
}

func (a answer) str(k string) string { s, _ := a.body[k].(string); return s }

func (e *env) do(member, method, path, key string, body any) answer {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.url+path, rd)
	if member != "" {
		req.Header.Set("X-Test-Member", member)
		if e.twoFactor[member] {
			req.Header.Set("X-Test-2FA", "on")
		}
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), raw: string(raw)}
	_ = json.Unmarshal(raw, &a.body)
	return a
}

func (e *env) want(a answer, status int) answer {
	e.t.Helper()
	if a.status != status {
		e.t.Fatalf("status %d, want %d: %s", a.status, status, a.raw)
	}
	return a
}

var keySeq atomic.Int64

func key() string { return fmt.Sprintf("k-%d-%d", time.Now().UnixNano(), keySeq.Add(1)) }

// checkMaxSize reads GET /api/v1/max-order-size for a market (the reference trades BTCUSDT near 98000 on a 0.1
// tick, so 20000 rests far under the market and 90000 x 100 exceeds any paper balance).
func (e *env) checkMaxSize(market string) {
	e.t.Helper()
	a := e.want(e.do("a", http.MethodGet, "/api/v1/max-order-size?exchange=reference&market_type="+market+"&symbol=BTCUSDT&price=20000", "", nil), 200)
	if q, err := decimal.NewFromString(a.str("max_buy_qty")); err != nil || !q.IsPositive() {
		e.t.Fatalf("max order size %s", a.raw)
	}
}

func order(market, side, typ, price, qty string) map[string]any {
	o := map[string]any{"exchange": "reference", "market_type": market, "symbol": "BTCUSDT", "side": side, "type": typ, "qty": qty}
	if price != "" {
		o["price"] = price
	}
	return o
}

func (e *env) openIDs(member, market string) map[string]int {
	e.t.Helper()
	a := e.want(e.do(member, http.MethodGet, "/api/v1/orders?exchange=reference&market_type="+market+"&symbol=BTCUSDT&status=open", "", nil), 200)
	out := map[string]int{}
	list, _ := a.body["orders"].([]any)
	for _, x := range list {
		m := x.(map[string]any)
		id, _ := m["id"].(string)
		out[id]++
	}
	return out
}

func (e *env) eventuallyStatus(member, id string, want string) answer {
	e.t.Helper()
	deadline := time.Now().Add(wait)
	var a answer
	for time.Now().Before(deadline) {
		a = e.do(member, http.MethodGet, "/api/v1/orders/"+id, "", nil)
		if a.status == 200 && a.str("status") == want {
			return a
		}
		time.Sleep(25 * time.Millisecond)
	}
	e.t.Fatalf("order %s never %s: %s", id, want, a.raw)
	return a
}

func TestOrdersOverHTTP(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			e := newEnv(t, engine == "postgres")
			for _, market := range []string{"SPOT", "SWAP"} {
				t.Run(market, func(t *testing.T) { e.t = t; e.orders(market) })
			}
		})
	}
}

func (e *env) orders(market string) {
	t := e.t
	e.checkMaxSize(market)
	body := order(market, "BUY", "LIMIT", "20000", "0.01")

	// No session: 401. No key: refused before anything is journaled.
	e.want(e.do("", http.MethodPost, "/api/v1/orders", key(), body), 401)
	if a := e.do("a", http.MethodPost, "/api/v1/orders", "", body); a.status != 400 && a.status != 422 {
		t.Fatalf("no Idempotency-Key: %d %s", a.status, a.raw)
	}

	k := key()
	placed := e.want(e.do("a", http.MethodPost, "/api/v1/orders", k, body), 201)
	id := placed.str("id")
	if id == "" || placed.str("status") != "open" || placed.str("exchange_order_id") == "" {
		t.Fatalf("placed %s", placed.raw)
	}
	if got := e.want(e.do("a", http.MethodGet, "/api/v1/orders/"+id, "", nil), 200); got.str("status") != "open" {
		t.Fatalf("GET %s", got.raw)
	}
	if n := e.openIDs("a", market)[id]; n != 1 {
		t.Fatalf("the order is %d times among the open orders", n)
	}
	// The same key and body: the same order; another body: refused.
	if again := e.want(e.do("a", http.MethodPost, "/api/v1/orders", k, body), 200); again.str("id") != id {
		t.Fatalf("replay %s", again.raw)
	}
	other := order(market, "BUY", "LIMIT", "20000", "0.02")
	reused := e.want(e.do("a", http.MethodPost, "/api/v1/orders", k, other), 422)
	if reused.str("code") != "idempotency_key_reused" || !strings.HasPrefix(reused.ctype, "application/problem+json") {
		t.Fatalf("key reused: %s (%s)", reused.raw, reused.ctype)
	}

	// Member b: 404 on a's order, whatever the method; a's order not among b's.
	for _, m := range []string{http.MethodGet, http.MethodPatch, http.MethodDelete} {
		var b any
		if m == http.MethodPatch {
			b = map[string]any{"price": "19000"}
		}
		a := e.want(e.do("b", m, "/api/v1/orders/"+id, "", b), 404)
		if a.str("code") != "order_not_found" {
			t.Fatalf("b %s a's order: %s", m, a.raw)
		}
	}
	if n := e.openIDs("b", market)[id]; n != 0 {
		t.Fatal("a's order among b's open orders")
	}
	// b cancelling all its orders leaves a's order open.
	e.want(e.do("b", http.MethodDelete, "/api/v1/orders?exchange=reference&market_type="+market+"&symbol=BTCUSDT", "", nil), 200)
	if n := e.openIDs("a", market)[id]; n != 1 {
		t.Fatal("b's cancel-all reached a's order")
	}

	amended := e.want(e.do("a", http.MethodPatch, "/api/v1/orders/"+id, key(), map[string]any{"price": "19000"}), 200)
	if !decimal.RequireFromString(amended.str("price")).Equal(decimal.NewFromInt(19000)) || amended.str("status") != "open" {
		t.Fatalf("amend %s", amended.raw)
	}
	cancelled := e.want(e.do("a", http.MethodDelete, "/api/v1/orders/"+id, "", nil), 200)
	if cancelled.str("status") != "cancelled" {
		t.Fatalf("cancel %s", cancelled.raw)
	}
	if n := e.openIDs("a", market)[id]; n != 0 {
		t.Fatal("cancelled order still open")
	}
	hist := e.want(e.do("a", http.MethodGet, "/api/v1/orders?exchange=reference&market_type="+market+"&symbol=BTCUSDT&status=history", "", nil), 200)
	if !strings.Contains(hist.raw, id) {
		t.Fatalf("history lacks the cancelled order: %s", hist.raw)
	}

	// Concurrent double submit: one order.
	k2 := key()
	var wg sync.WaitGroup
	ids := make([]string, 5)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := e.do("a", http.MethodPost, "/api/v1/orders", k2, body)
			if a.status != 201 && a.status != 200 {
				t.Errorf("concurrent submit %d: %d %s", i, a.status, a.raw)
			}
			ids[i] = a.str("id")
		}()
	}
	wg.Wait()
	for _, x := range ids {
		if x == "" || x != ids[0] {
			t.Fatalf("one key, several orders: %v", ids)
		}
	}
	if n := e.openIDs("a", market)[ids[0]]; n != 1 {
		t.Fatalf("double submit: %d open orders", n)
	}
	e.want(e.do("a", http.MethodDelete, "/api/v1/orders?exchange=reference&market_type="+market, "", nil), 200)
	if n := e.openIDs("a", market)[ids[0]]; n != 0 {
		t.Fatal("cancel-all left the order open")
	}

	// Insufficient balance: the spec's sentence.
	poor := e.want(e.do("a", http.MethodPost, "/api/v1/orders", key(), order(market, "BUY", "LIMIT", "90000", "100")), 422)
	if poor.str("code") != "insufficient_funds" || poor.str("detail") != trading.MsgInsufficient {
		t.Fatalf("insufficient funds: %s", poor.raw)
	}
	// Off the tick grid: refused before sending.
	if a := e.want(e.do("a", http.MethodPost, "/api/v1/orders", key(), order(market, "BUY", "LIMIT", "20000.00001", "0.01")), 422); a.str("code") != "precision" || a.str("field") != "price" {
		t.Fatalf("off-grid price: %s", a.raw)
	}

	// A lost answer: 202 pending, then the order as it is.
	cid := fmt.Sprintf("exapi%d", time.Now().UnixNano()%1e12)
	if err := faults.Arm(http.DefaultClient, e.faults, cid, faults.AcceptThenError); err != nil {
		t.Fatal(err)
	}
	e.next.Store(cid)
	pending := e.want(e.do("a", http.MethodPost, "/api/v1/orders", key(), body), 202)
	if pending.str("status") != "pending" || pending.str("id") == "" {
		t.Fatalf("lost answer: %s", pending.raw)
	}
	e.eventuallyStatus("a", pending.str("id"), "open")
	if n := e.openIDs("a", market)[pending.str("id")]; n != 1 {
		t.Fatalf("lost answer: %d orders", n)
	}
	e.want(e.do("a", http.MethodDelete, "/api/v1/orders/"+pending.str("id"), "", nil), 200)

	// A market buy fills; fills list it.
	filled := e.want(e.do("a", http.MethodPost, "/api/v1/orders", key(), order(market, "BUY", "MARKET", "", "0.01")), 201)
	if filled.str("status") != "filled" {
		filled = e.eventuallyStatus("a", filled.str("id"), "filled")
	}
	fills := e.want(e.do("a", http.MethodGet, "/api/v1/fills?exchange=reference&market_type="+market+"&symbol=BTCUSDT", "", nil), 200)
	if !strings.Contains(fills.raw, filled.str("exchange_order_id")) {
		t.Fatalf("fills lack the market order: %s", fills.raw)
	}
	if b := e.want(e.do("b", http.MethodGet, "/api/v1/fills?exchange=reference&market_type="+market+"&symbol=BTCUSDT", "", nil), 200); strings.Contains(b.raw, filled.str("exchange_order_id")) {
		t.Fatal("b sees a's fills")
	}
	if market == "SWAP" {
		e.positions()
	}
}

func (e *env) positions() {
	t := e.t
	pos := e.want(e.do("a", http.MethodGet, "/api/v1/positions?exchange=reference&symbol=BTCUSDT", "", nil), 200)
	list, _ := pos.body["positions"].([]any)
	if len(list) == 0 {
		t.Fatalf("no position after a market buy: %s", pos.raw)
	}
	if b := e.want(e.do("b", http.MethodGet, "/api/v1/positions?exchange=reference", "", nil), 200); strings.Contains(b.raw, `"symbol":"BTCUSDT"`) {
		t.Fatalf("b sees a position: %s", b.raw)
	}
	first := list[0].(map[string]any)
	// The break-even price (entry moved by the fees) and the margin ratio pass through.
	entry := decimal.RequireFromString(first["entry_price"].(string))
	be, _ := first["break_even_price"].(string)
	ratio, _ := first["margin_ratio"].(string)
	if be == "" || ratio == "" || !decimal.RequireFromString(be).Sub(entry).Abs().Equal(entry.Mul(decimal.RequireFromString("0.001"))) ||
		!decimal.RequireFromString(ratio).IsPositive() || !decimal.RequireFromString(ratio).LessThan(decimal.NewFromInt(1)) {
		t.Fatalf("break-even / margin ratio: %s", pos.raw)
	}
	side, _ := first["position_side"].(string)
	closed := e.do("a", http.MethodPost, "/api/v1/positions/close", key(), map[string]any{"exchange": "reference", "symbol": "BTCUSDT", "position_side": side})
	if closed.status != 201 || closed.str("kind") != "close" {
		t.Fatalf("close: %d %s", closed.status, closed.raw)
	}
	after := e.want(e.do("a", http.MethodGet, "/api/v1/positions?exchange=reference&symbol=BTCUSDT", "", nil), 200)
	for _, p := range after.body["positions"].([]any) {
		if q := p.(map[string]any)["qty"].(string); !decimal.RequireFromString(q).IsZero() {
			t.Fatalf("position left after close: %s", after.raw)
		}
	}

	lev := e.want(e.do("a", http.MethodPut, "/api/v1/leverage", "", map[string]any{"exchange": "reference", "symbol": "BTCUSDT", "leverage": "7"}), 200)
	if lev.str("leverage") != "7" {
		t.Fatalf("set leverage: %s", lev.raw)
	}
	if got := e.want(e.do("a", http.MethodGet, "/api/v1/leverage?exchange=reference&symbol=BTCUSDT", "", nil), 200); got.str("leverage") != "7" {
		t.Fatalf("get leverage: %s", got.raw)
	}
	if got := e.want(e.do("b", http.MethodGet, "/api/v1/leverage?exchange=reference&symbol=BTCUSDT", "", nil), 200); got.str("leverage") == "7" {
		t.Fatalf("b sees a's leverage: %s", got.raw)
	}
	e.want(e.do("a", http.MethodPut, "/api/v1/margin-mode", "", map[string]any{"exchange": "reference", "symbol": "BTCUSDT", "margin_mode": "ISOLATED"}), 204)

	// Hedge mode: an order without a position side is explained.
	e.want(e.do("a", http.MethodPut, "/api/v1/position-mode", "", map[string]any{"exchange": "reference", "mode": "HEDGE"}), 200)
	if m := e.want(e.do("a", http.MethodGet, "/api/v1/position-mode?exchange=reference", "", nil), 200); m.str("mode") != "HEDGE" {
		t.Fatalf("position mode %s", m.raw)
	}
	if m := e.want(e.do("b", http.MethodGet, "/api/v1/position-mode?exchange=reference", "", nil), 200); m.str("mode") == "HEDGE" {
		t.Fatal("b's position mode changed with a's")
	}
	mis := e.do("a", http.MethodPost, "/api/v1/orders", key(), order("SWAP", "BUY", "LIMIT", "20000", "0.01"))
	if mis.status != 422 || mis.str("code") != "position_mode_mismatch" || !strings.Contains(mis.str("detail"), "hedge mode") {
		t.Fatalf("hedge mode without position side: %d %s", mis.status, mis.raw)
	}
	withSide := order("SWAP", "BUY", "LIMIT", "20000", "0.01")
	withSide["position_side"] = "LONG"
	ok := e.want(e.do("a", http.MethodPost, "/api/v1/orders", key(), withSide), 201)
	e.want(e.do("a", http.MethodDelete, "/api/v1/orders/"+ok.str("id"), "", nil), 200)
	e.want(e.do("a", http.MethodPut, "/api/v1/position-mode", "", map[string]any{"exchange": "reference", "mode": "ONE_WAY"}), 200)

	// Algo orders: placed, listed with their journal id, cancelled; b cannot cancel a's.
	algo := e.want(e.do("a", http.MethodPost, "/api/v1/algo-orders", key(), map[string]any{"exchange": "reference",
		"market_type": "SWAP", "symbol": "BTCUSDT", "side": "BUY", "type": "STOP_MARKET", "trigger_price": "500000", "qty": "0.01"}), 201)
	aid := algo.str("id")
	if algo.str("status") != "waiting" || aid == "" {
		t.Fatalf("algo %s", algo.raw)
	}
	if l := e.want(e.do("a", http.MethodGet, "/api/v1/algo-orders?exchange=reference&market_type=SWAP&symbol=BTCUSDT", "", nil), 200); !strings.Contains(l.raw, aid) {
		t.Fatalf("algo list %s", l.raw)
	}
	e.want(e.do("b", http.MethodDelete, "/api/v1/algo-orders/"+aid, "", nil), 404)
	if c := e.want(e.do("a", http.MethodDelete, "/api/v1/algo-orders/"+aid, "", nil), 200); c.str("status") != "cancelled" {
		t.Fatalf("algo cancel %s", c.raw)
	}
}

func TestNoAccountAndUnknownExchange(t *testing.T) {
	e := newEnv(t, false)
	a := e.want(e.do("c", http.MethodPost, "/api/v1/orders", key(), order("SPOT", "BUY", "LIMIT", "20000", "0.01")), 409)
	if a.str("code") != "no_account" {
		t.Fatalf("no account: %s", a.raw)
	}
	body := order("SPOT", "BUY", "LIMIT", "20000", "0.01")
	body["exchange"] = "nowhere"
	if a := e.want(e.do("a", http.MethodPost, "/api/v1/orders", key(), body), 404); a.str("code") != "exchange_not_found" {
		t.Fatalf("unknown exchange: %s", a.raw)
	}
	e.want(e.do("a", http.MethodGet, "/api/v1/orders/01a212ca-0000-7000-8000-000000000000", "", nil), 404)
}
