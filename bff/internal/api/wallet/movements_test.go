package wallet_test

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
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/exhub/exhub/bff/internal/accounts"
	"github.com/exhub/exhub/bff/internal/api/apiutil"
	"github.com/exhub/exhub/bff/internal/api/wallet"
	"github.com/exhub/exhub/bff/internal/config/setting"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/plugintest"
	"github.com/exhub/exhub/bff/internal/store"
	walletsvc "github.com/exhub/exhub/bff/internal/wallet"
	"github.com/exhub/exhub/plugin-sdk/faults"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// linkedAccounts: every member has a linked paper account of their own on the reference exchange.
type linkedAccounts struct{}

func (linkedAccounts) AccountRef(_ context.Context, member, exchange string) (*exchangev1.AccountRef, error) {
	if exchange != "reference" || member == "" {
		return nil, fmt.Errorf("%s on %s: %w", member, exchange, accounts.ErrNoAccount)
	}
	return &exchangev1.AccountRef{AccountId: "move-" + member, ApiKey: "api-move-" + member}, nil
}

func (l linkedAccounts) List(ctx context.Context, member string) ([]accounts.Account, error) {
	ref, err := l.AccountRef(ctx, member, "reference")
	if err != nil {
		return nil, nil
	}
	return []accounts.Account{{ID: ref.GetAccountId(), Exchange: "reference", Mode: store.AccountLinked, Status: store.AccountActive}}, nil
}

type moveEnv struct {
	*readEnv
	st     *store.Store
	faults string
	mu     sync.Mutex
	nextID string
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// newMoveEnv serves the wallet routes with the money-movement service over the reference plugin (its fault
// endpoint armed per client id), in live mode.
func newMoveEnv(t *testing.T) *moveEnv { return newMoveEnvWith(t, readGuard{}) }

func newMoveEnvWith(t *testing.T, guard apiutil.Guard, tune ...func(*walletsvc.Config)) *moveEnv {
	t.Helper()
	st, err := store.Open(context.Background(), store.DefaultConfig(t.TempDir()), store.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	for _, id := range []string{"a", "b"} {
		if _, _, err := st.EnsureMember(context.Background(), store.NewMember{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	faultAddr := freeAddr(t)
	host := pluginhost.New([]pluginhost.Spec{{Key: 100, Slug: "reference", Name: "Reference", Path: plugintest.Path("reference"),
		Settings: map[string]string{"history_days": "1", "fault_listen": faultAddr}}}, pluginhost.Options{})
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
	e := &moveEnv{st: st, faults: "http://" + faultAddr}
	cfg := walletsvc.Defaults()
	cfg.ResolveInitial, cfg.ResolveMax = setting.Duration(50*time.Millisecond), setting.Duration(500*time.Millisecond)
	cfg.Tick = setting.Duration(50 * time.Millisecond)
	for _, f := range tune {
		f(&cfg)
	}
	svc, err := walletsvc.New(walletsvc.Options{Config: cfg, Store: st, Plugins: host, Accounts: linkedAccounts{},
		ClientIDs: func() string {
			e.mu.Lock()
			defer e.mu.Unlock()
			id := e.nextID
			e.nextID = ""
			return id
		}})
	if err != nil {
		t.Fatal(err)
	}
	sctx, scancel := context.WithCancel(context.Background())
	sdone := make(chan struct{})
	go func() { defer close(sdone); svc.Run(sctx) }()
	t.Cleanup(func() { scancel(); <-sdone })
	mux := http.NewServeMux()
	api := humago.New(mux, huma.DefaultConfig("exhub test", "0.0.0"))
	wallet.Register(api, wallet.Deps{Guard: guard, Exchanges: []string{"reference"}, Accounts: linkedAccounts{},
		NoAccount: accounts.ErrNoAccount, Plugins: host, Store: st, Wallet: svc})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	e.readEnv = &readEnv{t: t, url: srv.URL, sup: sup}
	return e
}

// post sends a body with an Idempotency-Key (none when key is "").
func (e *moveEnv) post(member, key, path string, body any) reply {
	e.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, e.url+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if member != "" {
		req.Header.Set("X-Test-Member", member)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := reply{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	_ = json.Unmarshal(raw, &r.body)
	return r
}

func wantStatus(t *testing.T, r reply, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.raw)
	}
}

func TestMovementRoutes(t *testing.T) {
	e := newMoveEnv(t)
	tr := map[string]string{"exchange": "reference", "asset": "USDT", "amount": "100", "from": "FUNDING", "to": "TRADING"}

	// A session is required; so is the Idempotency-Key.
	wantStatus(t, e.post("", "k", "/api/v1/wallet/transfers", tr), http.StatusUnauthorized)
	e.get("", "/api/v1/wallet/movements", http.StatusUnauthorized)
	if r := e.post("a", "", "/api/v1/wallet/transfers", tr); r.status < 400 || r.status >= 500 {
		t.Fatalf("no key: %d %s", r.status, r.raw)
	}

	// One transfer; the same key again is the same movement; another body is refused.
	first := e.post("a", "t1", "/api/v1/wallet/transfers", tr)
	wantStatus(t, first, http.StatusCreated)
	if first.str("status") != "completed" || first.str("kind") != "transfer" || first.str("direction") != "internal" ||
		first.header.Get("Cache-Control") != "private, no-store" {
		t.Fatalf("transfer %s", first.raw)
	}
	again := e.post("a", "t1", "/api/v1/wallet/transfers", tr)
	wantStatus(t, again, http.StatusOK)
	if again.str("id") != first.str("id") {
		t.Fatalf("repeat %s", again.raw)
	}
	other := map[string]string{"exchange": "reference", "asset": "USDT", "amount": "101", "from": "FUNDING", "to": "TRADING"}
	r := e.post("a", "t1", "/api/v1/wallet/transfers", other)
	wantStatus(t, r, http.StatusUnprocessableEntity)
	wantProblem(t, r, "idempotency_key_reused", "Idempotency-Key")

	// Withdrawals: the spec's sentences, with code and field.
	wd := func(key, amount string) reply {
		return e.post("a", key, "/api/v1/wallet/withdrawals", map[string]string{"exchange": "reference", "asset": "USDT",
			"network": "TRC20", "amount": amount, "address": "TXdestination"})
	}
	r = wd("w-min", "9.99")
	wantProblem(t, r, "min_amount", "amount")
	if r.str("detail") != walletsvc.MsgMinimum {
		t.Fatalf("detail %s", r.raw)
	}
	r = wd("w-big", "50000")
	wantProblem(t, r, "insufficient_funds", "amount")
	if r.str("detail") != walletsvc.MsgExceeds {
		t.Fatalf("detail %s", r.raw)
	}
	r = wd("w-fee", "49900") // funding holds 50000 - 100: the amount fits, the fee of 1 does not
	if r.str("detail") != walletsvc.MsgCoverFees {
		t.Fatalf("detail %s", r.raw)
	}
	r = wd("w-ok", "25")
	if r.status != http.StatusCreated || r.str("fee") != "1" || r.str("direction") != "out" {
		t.Fatalf("withdraw %s", r.raw)
	}
	withdrawal := r.str("id")
	if coins, err := e.st.CoinHistory(context.Background(), "a", store.CoinKindWithdraw); err != nil || !slices.Equal(coins, []string{"USDT"}) {
		t.Fatalf("coin history %v %v", coins, err)
	}

	// A lost answer is 202 pending, then resolved by asking the exchange.
	const cid = "exlost0000000000000000000000001"
	if err := faults.Arm(http.DefaultClient, e.faults, cid, faults.AcceptThenError); err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	e.nextID = cid
	e.mu.Unlock()
	r = e.post("a", "t-lost", "/api/v1/wallet/transfers", map[string]string{"exchange": "reference", "asset": "USDT",
		"amount": "7", "from": "TRADING", "to": "FUNDING"})
	wantStatus(t, r, http.StatusAccepted)
	if r.str("status") != "pending" {
		t.Fatalf("lost transfer %s", r.raw)
	}
	lost := r.str("id")
	deadline := time.Now().Add(wait)
	for {
		g := e.get("a", "/api/v1/wallet/movements/"+lost, http.StatusOK)
		if g.str("status") == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lost transfer not resolved: %s", g.raw)
		}
		time.Sleep(25 * time.Millisecond)
	}

	// Gifts need broker accounts; the faucet needs demo mode.
	r = e.post("a", "g", "/api/v1/wallet/gifts", map[string]string{"exchange": "reference", "asset": "USDT", "amount": "1", "recipient": "b"})
	wantStatus(t, r, http.StatusConflict)
	wantProblem(t, r, "gift_broker_only", "exchange")
	r = e.post("a", "f", "/api/v1/wallet/faucet", map[string]string{"exchange": "reference"})
	wantStatus(t, r, http.StatusForbidden)
	wantProblem(t, r, "faucet_demo_only", "")

	// The member's journal, newest first, paged; kind filter. Refusals before sending journal nothing.
	list := e.get("a", "/api/v1/wallet/movements", http.StatusOK)
	ms := list.list("movements")
	if len(ms) != 3 || ms[0]["id"] != lost || ms[1]["id"] != withdrawal {
		t.Fatalf("movements %s", list.raw)
	}
	page := e.get("a", "/api/v1/wallet/movements?limit=2", http.StatusOK)
	next := e.get("a", "/api/v1/wallet/movements?limit=2&cursor="+page.str("next_cursor"), http.StatusOK)
	if len(page.list("movements")) != 2 || len(next.list("movements")) != 1 || next.str("next_cursor") != "" ||
		next.list("movements")[0]["id"] != first.str("id") {
		t.Fatalf("pages %s / %s", page.raw, next.raw)
	}
	if w := e.get("a", "/api/v1/wallet/movements?kind=withdraw", http.StatusOK); len(w.list("movements")) != 1 {
		t.Fatalf("withdrawals %s", w.raw)
	}

	// Member b: 404 on a's movement, an empty list, and b's own key "t1" is b's.
	wantProblem(t, e.get("b", "/api/v1/wallet/movements/"+withdrawal, http.StatusNotFound), "movement_not_found", "")
	if l := e.get("b", "/api/v1/wallet/movements", http.StatusOK); len(l.list("movements")) != 0 {
		t.Fatalf("b sees %s", l.raw)
	}
	if bt := e.post("b", "t1", "/api/v1/wallet/transfers", tr); bt.status != http.StatusCreated || bt.str("id") == first.str("id") {
		t.Fatalf("b's transfer %s", bt.raw)
	}

	// A convert quote, then the trade.
	q := e.post("a", "", "/api/v1/wallet/convert/quotes", map[string]string{"exchange": "reference", "from": "USDT", "to": "BTC", "from_amount": "50"})
	wantStatus(t, q, http.StatusOK)
	if q.str("quote_id") == "" || q.str("expires_at") == "" {
		t.Fatalf("quote %s", q.raw)
	}
	cv := e.post("a", "cv", "/api/v1/wallet/converts", map[string]string{"exchange": "reference", "quote_id": q.str("quote_id"),
		"from": q.str("from"), "to": q.str("to"), "from_amount": q.str("from_amount"), "to_amount": q.str("to_amount")})
	if cv.status != http.StatusCreated || cv.str("status") != "completed" || cv.str("to_asset") != "BTC" {
		t.Fatalf("convert %s", cv.raw)
	}
}
