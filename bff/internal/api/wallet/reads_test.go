package wallet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/bff/internal/api/wallet"
	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/market"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/plugintest"
	"github.com/exhub/exhub/bff/internal/store"
	"github.com/exhub/exhub/bff/internal/store/storetest"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

const wait = 90 * time.Second

// readGuard is the session check in these tests: the member named by X-Test-Member, 401 without one.
type readGuard struct{}

func (readGuard) Huma() func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		id := ctx.Header("X-Test-Member")
		if id == "" {
			ctx.SetHeader("Content-Type", "application/problem+json")
			ctx.SetStatus(http.StatusUnauthorized)
			_, _ = ctx.BodyWriter().Write([]byte(`{"status":401,"title":"Unauthorized","code":"session_required"}`))
			return
		}
		next(huma.WithContext(ctx, auth.WithMember(ctx.Context(), &auth.Member{ID: id})))
	}
}

func (readGuard) RegisterSecurityScheme(huma.API) {}

var errNoAccount = errors.New("no account")

// readAccounts: members a and b have a paper account on the reference exchange (and one on "broken"); c has none.
type readAccounts struct{}

func (readAccounts) AccountRef(_ context.Context, member, exchange string) (*exchangev1.AccountRef, error) {
	if (exchange != "reference" && exchange != "broken") || (member != "a" && member != "b") {
		return nil, fmt.Errorf("%s on %s: %w", member, exchange, errNoAccount)
	}
	return &exchangev1.AccountRef{AccountId: "wallet-" + member, ApiKey: "api-wallet-" + member}, nil
}

type readEnv struct {
	t   *testing.T
	url string
	sup *pluginhost.Supervisor
}

// newReadEnv serves the wallet read routes over the reference plugin, with "broken" (a plugin that does not start)
// and "ghost" (an exchange without a plugin, such as one coming soon) configured too, and the store on SQLite or
// PostgreSQL.
func newReadEnv(t *testing.T, pg bool) *readEnv {
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
	for _, id := range []string{"a", "b", "c"} {
		if _, _, err := st.EnsureMember(context.Background(), store.NewMember{ID: id, Nickname: id, Locale: "en"}); err != nil {
			t.Fatal(err)
		}
	}
	// "broken" is a plugin that never starts (its binary is missing): an exchange whose plugin is down.
	host := pluginhost.New([]pluginhost.Spec{{Key: 100, Slug: "reference", Name: "Reference", Path: plugintest.Path("reference"),
		Settings: map[string]string{"history_days": "1"}},
		{Key: 101, Slug: "broken", Name: "Broken", Path: filepath.Join(t.TempDir(), "missing-plugin")}}, pluginhost.Options{})
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
	mkt := market.New(market.Options{Exchanges: []market.Exchange{{Key: 100, Slug: "reference", Status: "active", Plugin: sup}}})
	mux := http.NewServeMux()
	api := humago.New(mux, huma.DefaultConfig("exhub test", "0.0.0"))
	wallet.Register(api, wallet.Deps{Guard: readGuard{}, Exchanges: []string{"reference", "broken", "ghost"}, Accounts: readAccounts{},
		NoAccount: errNoAccount, Plugins: host, Prices: mkt, Store: st,
		Settings: wallet.Settings{Faucet: true, FaucetAsset: "USDT", FaucetAmount: "10000",
			FeeFree: &wallet.FeeFree{Exchange: "reference", Asset: "USDT", Min: "20", Max: "20000"}}})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &readEnv{t: t, url: srv.URL, sup: sup}
}

type reply struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func (r reply) str(k string) string { s, _ := r.body[k].(string); return s }

func (r reply) list(k string) []map[string]any {
	xs, _ := r.body[k].([]any)
	out := make([]map[string]any, 0, len(xs))
	for _, x := range xs {
		m, _ := x.(map[string]any)
		out = append(out, m)
	}
	return out
}

func (e *readEnv) do(member, method, path string, body any) reply {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.url+path, rd)
	if member != "" {
		req.Header.Set("X-Test-Member", member)
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
	r := reply{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	_ = json.Unmarshal(raw, &r.body)
	return r
}

func (e *readEnv) get(member, path string, status int) reply {
	e.t.Helper()
	r := e.do(member, http.MethodGet, path, nil)
	if r.status != status {
		e.t.Fatalf("GET %s as %q: status %d, want %d: %s", path, member, r.status, status, r.raw)
	}
	if status == http.StatusOK && r.header.Get("Cache-Control") != "private, no-store" {
		e.t.Fatalf("GET %s: Cache-Control %q", path, r.header.Get("Cache-Control"))
	}
	return r
}

func wantProblem(t *testing.T, r reply, code, field string) {
	t.Helper()
	if !strings.HasPrefix(r.header.Get("Content-Type"), "application/problem+json") {
		t.Fatalf("content type %q: %s", r.header.Get("Content-Type"), r.raw)
	}
	if r.str("code") != code || (field != "" && r.str("field") != field) {
		t.Fatalf("problem %s, want code %s field %s", r.raw, code, field)
	}
}

// plugin calls the reference plugin directly as member's account (what H1's write path does through the journal).
func (e *readEnv) plugin(member string, fn func(context.Context, exchangev1.ExchangeClient, *exchangev1.AccountRef) error) {
	e.t.Helper()
	ref, _ := readAccounts{}.AccountRef(context.Background(), member, "reference")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := e.sup.Call(ctx, "test", func(ctx context.Context, c exchangev1.ExchangeClient) error { return fn(ctx, c, ref) }); err != nil {
		e.t.Fatal(err)
	}
}

func dec(t *testing.T, s string) decimal.Decimal {
	t.Helper()
	d, err := decimal.NewFromString(s)
	if err != nil {
		t.Fatalf("decimal %q: %v", s, err)
	}
	return d
}

// coin finds a coin in one wallet of an exchange entry.
func coin(ex map[string]any, wallet, c string) map[string]any {
	ws, _ := ex["wallets"].([]any)
	for _, w := range ws {
		wm := w.(map[string]any)
		if wm["wallet"] != wallet {
			continue
		}
		cs, _ := wm["coins"].([]any)
		for _, x := range cs {
			if xm := x.(map[string]any); xm["coin"] == c {
				return xm
			}
		}
	}
	return nil
}

func TestReadRoutesNeedASession(t *testing.T) {
	e := newReadEnv(t, false)
	for _, p := range []string{"/api/v1/wallet/overview", "/api/v1/wallet/assets?exchange=reference",
		"/api/v1/wallet/deposit-address?exchange=reference&coin=USDT", "/api/v1/wallet/deposit-exchange",
		"/api/v1/wallet/deposits?exchange=reference", "/api/v1/wallet/withdrawals?exchange=reference",
		"/api/v1/wallet/transfers?exchange=reference", "/api/v1/wallet/converts?exchange=reference",
		"/api/v1/wallet/coin-history?kind=DEPOSIT", "/api/v1/wallet/settings"} {
		e.get("", p, http.StatusUnauthorized)
	}
	if r := e.do("", http.MethodPut, "/api/v1/wallet/deposit-exchange", map[string]string{"exchange": "reference"}); r.status != 401 {
		t.Fatalf("PUT without a session: %d", r.status)
	}
	if r := e.do("", http.MethodPost, "/api/v1/wallet/coin-history", map[string]string{"kind": "DEPOSIT", "coin": "BTC"}); r.status != 401 {
		t.Fatalf("POST without a session: %d", r.status)
	}
}

func TestSettings(t *testing.T) {
	e := newReadEnv(t, false)
	r := e.get("a", "/api/v1/wallet/settings", 200)
	ff, _ := r.body["fee_free"].(map[string]any)
	if r.body["faucet"] != true || r.str("faucet_amount") != "10000" || ff["exchange"] != "reference" || ff["min"] != "20" || ff["max"] != "20000" {
		t.Fatalf("settings %s", r.raw)
	}
}

func TestOverview(t *testing.T) {
	e := newReadEnv(t, false)
	// a moves 1234.5 USDT from funding to trading; b does nothing.
	e.plugin("a", func(ctx context.Context, c exchangev1.ExchangeClient, ref *exchangev1.AccountRef) error {
		_, err := c.Transfer(ctx, &exchangev1.TransferRequest{Account: ref, Asset: "USDT", Amount: "1234.5", ClientId: "a-overview-1",
			From: exchangev1.WalletType_WALLET_TYPE_FUNDING, To: exchangev1.WalletType_WALLET_TYPE_TRADING})
		return err
	})
	a := e.get("a", "/api/v1/wallet/overview", 200)
	exs := a.list("exchanges")
	if len(exs) != 2 || exs[0]["exchange"] != "reference" || exs[0]["status"] != "ok" {
		t.Fatalf("exchanges (ghost, without a plugin, left out) %s", a.raw)
	}
	// An exchange whose plugin is down is an entry with its error, not a failed answer.
	if exs[1]["exchange"] != "broken" || exs[1]["status"] != "error" || exs[1]["error"].(map[string]any)["code"] != "exchange_unavailable" {
		t.Fatalf("broken entry %v", exs[1])
	}
	ref := exs[0]
	fu, tr := coin(ref, "funding", "USDT"), coin(ref, "trading", "USDT")
	if fu == nil || tr == nil {
		t.Fatalf("USDT balances %s", a.raw)
	}
	// Paper accounts start with 100000 USDT, half in each wallet.
	if !dec(t, fu["total"].(string)).Equal(dec(t, "48765.5")) || !dec(t, tr["total"].(string)).Equal(dec(t, "51234.5")) {
		t.Fatalf("USDT after the transfer: funding %v trading %v", fu, tr)
	}
	if fu["usdt_price"] != "1" || fu["usdt_value"] != fu["total"] {
		t.Fatalf("USDT estimate %v", fu)
	}
	// BTC is valued at the reference's BTCUSDT last price.
	btc := coin(ref, "funding", "BTC")
	price := dec(t, btc["usdt_price"].(string))
	if !price.IsPositive() || !dec(t, btc["usdt_value"].(string)).Equal(dec(t, btc["total"].(string)).Mul(price)) {
		t.Fatalf("BTC estimate %v", btc)
	}
	// The totals add up: coins to wallets, wallets to the exchange, exchanges to the whole.
	sum := decimal.Zero
	for _, w := range ref["wallets"].([]any) {
		wm := w.(map[string]any)
		ws := decimal.Zero
		for _, c := range wm["coins"].([]any) {
			if v := c.(map[string]any)["usdt_value"].(string); v != "" {
				ws = ws.Add(dec(t, v))
			}
		}
		if !ws.Equal(dec(t, wm["total_usdt"].(string))) {
			t.Fatalf("wallet %v total %s, coins add up to %s", wm["wallet"], wm["total_usdt"], ws)
		}
		sum = sum.Add(ws)
	}
	if !sum.Equal(dec(t, ref["total_usdt"].(string))) || !sum.Equal(dec(t, a.str("total_usdt"))) || !sum.GreaterThan(dec(t, "100000")) {
		t.Fatalf("totals: wallets %s, exchange %s, overall %s", sum, ref["total_usdt"], a.str("total_usdt"))
	}
	// b sees b's own balances: untouched by a's transfer.
	b := e.get("b", "/api/v1/wallet/overview", 200)
	if bt := coin(b.list("exchanges")[0], "trading", "USDT"); !dec(t, bt["total"].(string)).Equal(dec(t, "50000")) {
		t.Fatalf("b's trading USDT %v", bt)
	}
	// c has no account: an entry saying so.
	c := e.get("c", "/api/v1/wallet/overview", 200)
	if st := c.list("exchanges")[0]["status"]; st != "no_account" || c.str("total_usdt") != "0" {
		t.Fatalf("c's overview %s", c.raw)
	}
}

func TestAssetsAndDepositAddress(t *testing.T) {
	e := newReadEnv(t, false)
	r := e.get("a", "/api/v1/wallet/assets?exchange=reference", 200)
	var usdt map[string]any
	for _, a := range r.list("assets") {
		if a["coin"] == "USDT" {
			usdt = a
		}
	}
	if usdt == nil {
		t.Fatalf("assets %s", r.raw)
	}
	nets := usdt["networks"].([]any)
	trc := nets[0].(map[string]any)
	if len(nets) != 2 || trc["network"] != "TRC20" || trc["withdraw_fee"] != "1" || trc["withdraw_min"] != "10" ||
		trc["deposit_enabled"] != true || trc["memo_required"] != false || trc["precision"] != float64(8) {
		t.Fatalf("USDT networks %v", nets)
	}
	wantProblem(t, e.get("a", "/api/v1/wallet/assets?exchange=nowhere", 404), "exchange_not_found", "exchange")
	wantProblem(t, e.get("c", "/api/v1/wallet/assets?exchange=reference", 409), "no_account", "exchange")

	addrA := e.get("a", "/api/v1/wallet/deposit-address?exchange=reference&coin=USDT&network=TRC20", 200)
	addrB := e.get("b", "/api/v1/wallet/deposit-address?exchange=reference&coin=USDT&network=TRC20", 200)
	if addrA.str("address") == "" || addrA.str("network") != "TRC20" || addrA.str("coin") != "USDT" {
		t.Fatalf("a's address %s", addrA.raw)
	}
	if addrA.str("address") == addrB.str("address") {
		t.Fatalf("a and b got the same deposit address %s", addrA.str("address"))
	}
	wantProblem(t, e.get("a", "/api/v1/wallet/deposit-address?exchange=reference&coin=NOPE", 422), "invalid_argument", "coin")
	wantProblem(t, e.get("a", "/api/v1/wallet/deposit-address?exchange=reference&coin=USDT&network=BEP2", 422), "invalid_argument", "network")
	wantProblem(t, e.get("c", "/api/v1/wallet/deposit-address?exchange=reference&coin=USDT", 409), "no_account", "exchange")
	e.get("a", "/api/v1/wallet/deposit-address?exchange=reference", 422) // coin is required
}

func TestHistories(t *testing.T) {
	e := newReadEnv(t, false)
	var quote string
	e.plugin("a", func(ctx context.Context, c exchangev1.ExchangeClient, ref *exchangev1.AccountRef) error {
		if _, err := c.Withdraw(ctx, &exchangev1.WithdrawRequest{Account: ref, Asset: "USDT", Network: "TRC20", Amount: "25",
			Address: "TXexternalAddress000000000000000001", ClientId: "a-withdraw-1"}); err != nil {
			return err
		}
		for i, amt := range []string{"1", "2", "3"} {
			if _, err := c.Transfer(ctx, &exchangev1.TransferRequest{Account: ref, Asset: "USDT", Amount: amt,
				ClientId: fmt.Sprintf("a-transfer-%d", i), From: exchangev1.WalletType_WALLET_TYPE_FUNDING,
				To: exchangev1.WalletType_WALLET_TYPE_TRADING}); err != nil {
				return err
			}
		}
		q, err := c.GetConvertQuote(ctx, &exchangev1.GetConvertQuoteRequest{Account: ref, FromAsset: "USDT", ToAsset: "BTC", FromAmount: "100"})
		if err != nil {
			return err
		}
		quote = q.GetQuote().GetQuoteId()
		_, err = c.Convert(ctx, &exchangev1.ConvertRequest{Account: ref, QuoteId: quote})
		return err
	})

	// Deposits: the paper account's starting deposits, the member's own.
	dep := e.get("a", "/api/v1/wallet/deposits?exchange=reference", 200)
	if len(dep.list("items")) == 0 || dep.list("items")[0]["status"] != "success" {
		t.Fatalf("deposits %s", dep.raw)
	}
	usdtDeps := e.get("a", "/api/v1/wallet/deposits?exchange=reference&coin=USDT", 200).list("items")
	if len(usdtDeps) != 1 || usdtDeps[0]["coin"] != "USDT" || usdtDeps[0]["amount"] != "100000" {
		t.Fatalf("USDT deposits %v", usdtDeps)
	}

	// Withdrawals with fee and status; b sees none of a's.
	wd := e.get("a", "/api/v1/wallet/withdrawals?exchange=reference", 200).list("items")
	if len(wd) != 1 || wd[0]["client_id"] != "a-withdraw-1" || wd[0]["amount"] != "25" || wd[0]["fee"] != "1" || wd[0]["network"] != "TRC20" {
		t.Fatalf("withdrawals %v", wd)
	}
	if got := e.get("b", "/api/v1/wallet/withdrawals?exchange=reference", 200).list("items"); len(got) != 0 {
		t.Fatalf("b sees withdrawals %v", got)
	}

	// Transfers paged by cursor, newest first: a's three, then the starting ones.
	p1 := e.get("a", "/api/v1/wallet/transfers?exchange=reference&coin=USDT&limit=2", 200)
	items := p1.list("items")
	if len(items) != 2 || items[0]["client_id"] != "a-transfer-2" || items[1]["client_id"] != "a-transfer-1" ||
		items[0]["from"] != "funding" || items[0]["to"] != "trading" || p1.str("next_cursor") == "" {
		t.Fatalf("transfers page 1 %s", p1.raw)
	}
	p2 := e.get("a", "/api/v1/wallet/transfers?exchange=reference&coin=USDT&limit=2&cursor="+url.QueryEscape(p1.str("next_cursor")), 200)
	if items := p2.list("items"); len(items) == 0 || items[0]["client_id"] != "a-transfer-0" {
		t.Fatalf("transfers page 2 %s", p2.raw)
	}
	for _, tr := range e.get("b", "/api/v1/wallet/transfers?exchange=reference", 200).list("items") {
		if strings.HasPrefix(fmt.Sprint(tr["client_id"]), "a-") {
			t.Fatalf("b sees a's transfer %v", tr)
		}
	}
	// A date range that ends before everything is empty; a reversed one is refused.
	if got := e.get("a", "/api/v1/wallet/transfers?exchange=reference&start=1&end=2", 200).list("items"); len(got) != 0 {
		t.Fatalf("transfers in 1970 %v", got)
	}
	wantProblem(t, e.get("a", "/api/v1/wallet/transfers?exchange=reference&start=5&end=2", 422), "invalid_argument", "start")

	// Converts, filtered by either coin.
	cv := e.get("a", "/api/v1/wallet/converts?exchange=reference&coin=BTC", 200).list("items")
	if len(cv) != 1 || cv[0]["quote_id"] != quote || cv[0]["from_coin"] != "USDT" || cv[0]["to_coin"] != "BTC" || cv[0]["from_amount"] != "100" {
		t.Fatalf("converts %v", cv)
	}
	if got := e.get("a", "/api/v1/wallet/converts?exchange=reference&coin=SOL", 200).list("items"); len(got) != 0 {
		t.Fatalf("SOL converts %v", got)
	}
	if got := e.get("b", "/api/v1/wallet/converts?exchange=reference", 200).list("items"); len(got) != 0 {
		t.Fatalf("b sees converts %v", got)
	}

	for _, p := range []string{"deposits", "withdrawals", "transfers", "converts"} {
		wantProblem(t, e.get("c", "/api/v1/wallet/"+p+"?exchange=reference", 409), "no_account", "exchange")
		wantProblem(t, e.get("a", "/api/v1/wallet/"+p+"?exchange=nowhere", 404), "exchange_not_found", "exchange")
	}
}

func TestDepositExchangeAndCoinHistory(t *testing.T) {
	for _, pg := range []bool{false, true} {
		t.Run(map[bool]string{false: "sqlite", true: "postgres"}[pg], func(t *testing.T) {
			e := newReadEnv(t, pg)
			if r := e.get("a", "/api/v1/wallet/deposit-exchange", 200); r.str("exchange") != "" {
				t.Fatalf("unset %s", r.raw)
			}
			if r := e.do("a", http.MethodPut, "/api/v1/wallet/deposit-exchange", map[string]string{"exchange": "reference"}); r.status != 200 {
				t.Fatalf("PUT %d %s", r.status, r.raw)
			}
			if r := e.get("a", "/api/v1/wallet/deposit-exchange", 200); r.str("exchange") != "reference" {
				t.Fatalf("after PUT %s", r.raw)
			}
			if r := e.get("b", "/api/v1/wallet/deposit-exchange", 200); r.str("exchange") != "" {
				t.Fatalf("b sees a's deposit exchange %s", r.raw)
			}
			r := e.do("a", http.MethodPut, "/api/v1/wallet/deposit-exchange", map[string]string{"exchange": "nowhere"})
			if r.status != 404 {
				t.Fatalf("unknown exchange %d %s", r.status, r.raw)
			}
			wantProblem(t, r, "exchange_not_found", "exchange")

			for _, c := range []string{"BTC", "ETH", "USDT", "SOL", "XRP", "BTC", "DOGE"} {
				r := e.do("a", http.MethodPost, "/api/v1/wallet/coin-history", map[string]string{"kind": "WITHDRAW", "coin": c})
				if r.status != 200 {
					t.Fatalf("POST %s: %d %s", c, r.status, r.raw)
				}
			}
			h := e.get("a", "/api/v1/wallet/coin-history?kind=WITHDRAW", 200)
			if got := fmt.Sprint(h.body["coins"]); got != "[DOGE BTC XRP SOL USDT]" {
				t.Fatalf("history %s", got)
			}
			if got := fmt.Sprint(e.get("a", "/api/v1/wallet/coin-history?kind=DEPOSIT", 200).body["coins"]); got != "[]" {
				t.Fatalf("DEPOSIT history %s", got)
			}
			if got := fmt.Sprint(e.get("b", "/api/v1/wallet/coin-history?kind=WITHDRAW", 200).body["coins"]); got != "[]" {
				t.Fatalf("b sees a's history %s", got)
			}
			e.get("a", "/api/v1/wallet/coin-history?kind=FUTURES", 422)
			if r := e.do("a", http.MethodPost, "/api/v1/wallet/coin-history", map[string]string{"kind": "WITHDRAW", "coin": "btc"}); r.status != 422 {
				t.Fatalf("lower-case coin %d %s", r.status, r.raw)
			}
		})
	}
}
