package home_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"github.com/shopspring/decimal"

	binanceemu "github.com/exhub/exhub/adapters/binance/emulator"
	okxemu "github.com/exhub/exhub/adapters/okx/emulator"
	"github.com/exhub/exhub/adapters/venue"
	"github.com/exhub/exhub/bff/internal/api/home"
	"github.com/exhub/exhub/bff/internal/api/wallet"
	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/config/setting"
	"github.com/exhub/exhub/bff/internal/market"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/plugintest"
	"github.com/exhub/exhub/bff/internal/store"
	"github.com/exhub/exhub/bff/internal/store/storetest"
	"github.com/exhub/exhub/bff/internal/trading"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func TestMain(m *testing.M) { os.Exit(plugintest.Run(m, storetest.Run, "binance", "okx")) }

// wait bounds every wait on a condition: generous, so a loaded machine never fails a test.
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
		next(huma.WithContext(ctx, auth.WithMember(ctx.Context(), &auth.Member{ID: id})))
	}
}

func (guard) RegisterSecurityScheme(huma.API) {}

// errVault is the account source failing for member "d" on OKX.
var errVault = errors.New("the credentials vault is not reachable")

// accounts maps members to exchange credentials (what the wallet routes and the trading service read).
type accounts struct {
	mu   sync.Mutex
	refs map[string]map[string]*exchangev1.AccountRef
}

func (a *accounts) set(member, exchange string, ref *exchangev1.AccountRef) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.refs[member] == nil {
		a.refs[member] = map[string]*exchangev1.AccountRef{}
	}
	a.refs[member][exchange] = ref
}

func (a *accounts) AccountRef(_ context.Context, member, exchange string) (*exchangev1.AccountRef, error) {
	if member == "d" && exchange == "okx" {
		return nil, errVault
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	ref, ok := a.refs[member][exchange]
	if !ok {
		return nil, fmt.Errorf("%s on %s: %w", member, exchange, trading.ErrNoAccount)
	}
	return ref, nil
}

type env struct {
	t       *testing.T
	url     string
	svc     *trading.Service
	market  *market.Service
	symbols map[string]string // the perpetual per exchange
}

// startEmulator serves an emulator over its own venue on a loopback listener; funding settles every 2 s.
func startEmulator(t *testing.T, profile string, build func(v *venue.Venue) (http.Handler, func(), error)) (string, *venue.Venue) {
	t.Helper()
	v, err := venue.New(venue.Config{Profile: profile, Seed: 11, Simulate: true, HistoryDays: 1, FundingInterval: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = v.Run(ctx) }()
	h, closeEmu, err := build(v)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		closeEmu()
		cancel()
		<-done
		v.Close()
	})
	return srv.URL, v
}

func fund(t *testing.T, v *venue.Venue, account string) {
	t.Helper()
	amt := decimal.NewFromInt(100000)
	if _, err := v.Deposit(context.Background(), account, "USDT", amt); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Transfer(context.Background(), account, "USDT", amt, venue.Funding, venue.TradingWallet); err != nil {
		t.Fatal(err)
	}
}

// newEnv runs the binance and okx plugins against their emulators under one plugin host, the trading service on a
// SQLite journal and the home API behind the test guard, with the day starting at since. Member a has the
// emulators' demo accounts, b an account of its own on each holding 100000 USDT, c none, d one on Binance and an
// account source that fails on OKX.
func newEnv(t *testing.T, since time.Time) *env {
	t.Helper()
	st, err := store.Open(context.Background(), store.DefaultConfig(t.TempDir()), store.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	acc := &accounts{refs: map[string]map[string]*exchangev1.AccountRef{}}

	bURL, binV := startEmulator(t, "binance", func(v *venue.Venue) (http.Handler, func(), error) {
		s, err := binanceemu.New(binanceemu.Config{Venue: v, Logger: slog.New(slog.DiscardHandler),
			Credentials: []binanceemu.Credential{{Key: "binance-key-b", Secret: "binance-secret-b", Account: "binance-b"}}})
		if err != nil {
			return nil, nil, err
		}
		return s.Handler(), s.Close, nil
	})
	fund(t, binV, "binance-b")
	acc.set("a", "binance", &exchangev1.AccountRef{AccountId: "bin-a", ApiKey: binanceemu.DemoAPIKey, ApiSecret: binanceemu.DemoAPISecret})
	acc.set("b", "binance", &exchangev1.AccountRef{AccountId: "bin-b", ApiKey: "binance-key-b", ApiSecret: "binance-secret-b"})
	acc.set("d", "binance", &exchangev1.AccountRef{AccountId: "bin-d", ApiKey: "binance-key-b", ApiSecret: "binance-secret-b"})

	oURL, okxV := startEmulator(t, "okx", func(v *venue.Venue) (http.Handler, func(), error) {
		s, err := okxemu.New(okxemu.Config{Venue: v, Logger: slog.New(slog.DiscardHandler), DisableRateLimits: true,
			Credentials: []okxemu.Credentials{{APIKey: "okx-key-b", Secret: "okx-secret-b", Passphrase: "okx-pass-b", Account: "okx-b"}}})
		if err != nil {
			return nil, nil, err
		}
		return s.Handler(), s.Close, nil
	})
	fund(t, okxV, "okx-b")
	acc.set("a", "okx", &exchangev1.AccountRef{AccountId: "okx-a", ApiKey: okxemu.DemoAPIKey, ApiSecret: okxemu.DemoAPISecret, Passphrase: okxemu.DemoPassphrase})
	acc.set("b", "okx", &exchangev1.AccountRef{AccountId: "okx-b", ApiKey: "okx-key-b", ApiSecret: "okx-secret-b", Passphrase: "okx-pass-b"})

	host := pluginhost.New([]pluginhost.Spec{
		{Key: 1, Slug: "binance", Name: "Binance", Path: plugintest.Path("binance"), Settings: binanceemu.PluginSettings(bURL)},
		{Key: 2, Slug: "okx", Name: "OKX", Path: plugintest.Path("okx"), Settings: okxemu.PluginSettings(oURL)},
	}, pluginhost.Options{Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithCancel(context.Background())
	hdone := make(chan struct{})
	go func() { defer close(hdone); host.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-hdone })
	var exs []market.Exchange
	for _, sup := range host.Supervisors() {
		wctx, wcancel := context.WithTimeout(ctx, wait)
		err := sup.WaitRunning(wctx)
		wcancel()
		if err != nil {
			t.Fatalf("%s not running: %v", sup.Slug(), err)
		}
		exs = append(exs, market.Exchange{Key: 1 + len(exs), Slug: sup.Slug(), Plugin: sup})
	}

	tc := trading.Defaults()
	tc.ResolveInitial, tc.ResolveMax = setting.Duration(50*time.Millisecond), setting.Duration(500*time.Millisecond)
	tc.Tick = setting.Duration(50 * time.Millisecond)
	svc, err := trading.New(tc, st, host, acc)
	if err != nil {
		t.Fatal(err)
	}
	sdone := make(chan struct{})
	go func() { defer close(sdone); svc.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-sdone })

	mkt := market.New(market.Options{Exchanges: exs})
	mux := http.NewServeMux()
	api := humago.New(mux, huma.DefaultConfig("exhub test", "0.0.0"))
	home.Register(api, home.Deps{Guard: guard{},
		Wallet: wallet.Deps{Guard: guard{}, Exchanges: []string{"binance", "okx"}, Accounts: acc, NoAccount: trading.ErrNoAccount,
			Plugins: host, Prices: mkt},
		Trading: svc, DayStart: func(time.Time) time.Time { return since }})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &env{t: t, url: srv.URL, svc: svc, market: mkt, symbols: map[string]string{"binance": "ETHUSDT", "okx": "ETH-USDT-SWAP"}}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*wait)
	t.Cleanup(cancel)
	return ctx
}

var keySeq atomic.Int64

func key() string { return fmt.Sprintf("k-%d-%d", time.Now().UnixNano(), keySeq.Add(1)) }

func dec(s string) decimal.Decimal {
	if s == "" {
		return decimal.Zero
	}
	return decimal.RequireFromString(s)
}

// qty is a quantity of the symbol that clears the instrument's minimums at its last price.
func (e *env) qty(ex, mt, sym string) string {
	e.t.Helper()
	var in market.Instrument
	var last decimal.Decimal
	deadline := time.Now().Add(wait)
	for {
		ins, _, err1 := e.market.Instruments(ctxT(e.t), ex, mt)
		ts, _, err2 := e.market.Tickers(ctxT(e.t), ex, mt)
		for _, i := range ins {
			if i.Symbol == sym {
				in = i
			}
		}
		for _, tk := range ts {
			if tk.Symbol == sym && tk.Last != "" {
				last = dec(tk.Last)
			}
		}
		if in.Symbol != "" && last.IsPositive() {
			break
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("no instrument or price for %s %s %s: %v %v", ex, mt, sym, err1, err2)
		}
		time.Sleep(50 * time.Millisecond)
	}
	q := dec(in.MinQty)
	if mn := dec(in.MinNotional); mn.IsPositive() {
		if need := mn.Mul(decimal.NewFromInt(2)).Div(last); need.GreaterThan(q) {
			q = need
		}
	}
	q = q.Mul(decimal.NewFromInt(2))
	if step := dec(in.StepSize); step.IsPositive() {
		q = q.Div(step).Ceil().Mul(step)
	}
	return q.String()
}

func (e *env) place(member string, req trading.PlaceRequest) {
	e.t.Helper()
	o, err := e.svc.Place(ctxT(e.t), member, key(), req)
	if err != nil {
		e.t.Fatalf("place %+v: %v", req, err)
	}
	// A loaded machine can turn a slow answer into a pending order: the tests go on once its outcome is known.
	if _, err := e.svc.AwaitOutcome(ctxT(e.t), member, o.ID); err != nil {
		e.t.Fatalf("outcome of %+v: %v", req, err)
	}
}

// summary asks GET /api/v1/home/summary as member ("" without a session) and answers the status.
func (e *env) summary(member string, out *home.HomeSummary) int {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.url+"/api/v1/home/summary", nil)
	if member != "" {
		req.Header.Set("X-Test-Member", member)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		e.t.Logf("summary of %q: %d %s", member, resp.StatusCode, raw)
		return resp.StatusCode
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "private, no-store" {
		e.t.Fatalf("Cache-Control %q", cc)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		e.t.Fatalf("%v: %s", err, raw)
	}
	return resp.StatusCode
}

func (e *env) mustSummary(member string) home.HomeSummary {
	e.t.Helper()
	var s home.HomeSummary
	if st := e.summary(member, &s); st != http.StatusOK {
		e.t.Fatalf("summary of %s: %d", member, st)
	}
	return s
}

func entry(t *testing.T, s home.HomeSummary, ex string) home.HomeExchange {
	t.Helper()
	for _, e := range s.Exchanges {
		if e.Exchange == ex {
			return e
		}
	}
	t.Fatalf("no entry for %s in %+v", ex, s)
	return home.HomeExchange{}
}

// consistent checks the sums of a summary: each exchange's realized and change, the totals over the exchanges
// read, and the percentage of the balance at the day's start.
func consistent(t *testing.T, s home.HomeSummary) {
	t.Helper()
	realized, unrealized, total := decimal.Zero, decimal.Zero, decimal.Zero
	for _, x := range s.Exchanges {
		total = total.Add(dec(x.BalanceUSDT))
		if x.Change == "" {
			continue
		}
		re := dec(x.RealizedPnl).Sub(dec(x.Fees)).Add(dec(x.Funding))
		if !dec(x.Realized).Equal(re) || !dec(x.Change).Equal(re.Add(dec(x.Unrealized))) {
			t.Fatalf("%s: realized %s change %s from %+v", x.Exchange, x.Realized, x.Change, x)
		}
		realized, unrealized = realized.Add(re), unrealized.Add(dec(x.Unrealized))
	}
	change := realized.Add(unrealized)
	if !dec(s.TotalUSDT).Equal(total) || !dec(s.Realized).Equal(realized) || !dec(s.Unrealized).Equal(unrealized) || !dec(s.Change).Equal(change) {
		t.Fatalf("totals %+v: balance %s realized %s unrealized %s", s, total, realized, unrealized)
	}
	start := total.Sub(change)
	want := ""
	if start.IsPositive() {
		want = change.Mul(decimal.NewFromInt(100)).DivRound(start, 2).String()
	}
	if s.ChangePct != want {
		t.Fatalf("change_pct %q, want %q (%+v)", s.ChangePct, want, s)
	}
}

func TestSummary(t *testing.T) {
	since := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	e := newEnv(t, since)
	ctx := ctxT(t)

	t.Run("no session", func(t *testing.T) {
		if st := e.summary("", &home.HomeSummary{}); st != http.StatusUnauthorized {
			t.Fatalf("without a session: %d", st)
		}
	})

	t.Run("no accounts", func(t *testing.T) {
		s := e.mustSummary("c")
		if s.TotalUSDT != "0" || s.Change != "0" || s.ChangePct != "" || len(s.Exchanges) != 2 || s.DayStart != since.UnixMilli() {
			t.Fatalf("member c: %+v", s)
		}
		for _, x := range s.Exchanges {
			if x.Status != "no_account" || x.BalanceUSDT != "0" || x.Change != "" || x.Error != nil {
				t.Fatalf("member c on %s: %+v", x.Exchange, x)
			}
		}
	})

	t.Run("an exchange that fails", func(t *testing.T) {
		// Member d: Binance answers (the same account as b's there), OKX's account source fails: an error entry.
		s := e.mustSummary("d")
		bin, okx := entry(t, s, "binance"), entry(t, s, "okx")
		if bin.Status != "ok" || !dec(bin.BalanceUSDT).Equal(decimal.NewFromInt(100000)) || bin.Change != "0" {
			t.Fatalf("member d on binance: %+v", bin)
		}
		if okx.Status != "error" || okx.Error == nil || okx.Error.Part != "balance" || okx.BalanceUSDT != "0" || okx.Change != "" {
			t.Fatalf("member d on okx: %+v", okx)
		}
		consistent(t, s)
	})

	// Member b holds 100000 USDT on each exchange and has not traded: exactly that, and no change.
	checkB := func(t *testing.T) {
		t.Helper()
		s := e.mustSummary("b")
		if !dec(s.TotalUSDT).Equal(decimal.NewFromInt(200000)) || s.Change != "0" || s.ChangePct != "0" {
			t.Fatalf("member b: %+v", s)
		}
		for _, x := range s.Exchanges {
			if x.Status != "ok" || x.Realized != "0" || x.Unrealized != "0" || x.Fees != "0" || x.Funding != "0" {
				t.Fatalf("member b on %s: %+v", x.Exchange, x)
			}
		}
	}
	t.Run("member b before", checkB)

	before := e.mustSummary("a")
	if !dec(before.TotalUSDT).IsPositive() || before.Change != "0" {
		t.Fatalf("member a before trading: %+v", before)
	}
	consistent(t, before)

	// Member a buys spot and opens a long on each exchange's perpetual, and holds it over funding settlements.
	for ex, sym := range map[string]string{"binance": "ETHUSDT", "okx": "ETH-USDT"} {
		e.place("a", trading.PlaceRequest{Exchange: ex, MarketType: "SPOT", Symbol: sym, Side: "BUY", Type: "MARKET", Qty: e.qty(ex, "SPOT", sym)})
	}
	qty := map[string]string{}
	for ex, sym := range e.symbols {
		qty[ex] = e.qty(ex, "SWAP", sym)
		e.place("a", trading.PlaceRequest{Exchange: ex, MarketType: "SWAP", Symbol: sym, Side: "BUY", Type: "MARKET", Qty: qty[ex]})
	}
	t.Run("open positions", func(t *testing.T) {
		// Funding is paid or received and the mark moves: both show in today's change.
		deadline := time.Now().Add(wait)
		for {
			s := e.mustSummary("a")
			consistent(t, s)
			done := true
			for ex := range e.symbols {
				x := entry(t, s, ex)
				if x.Status != "ok" || x.FundingMissing || len(x.Unvalued) != 0 {
					t.Fatalf("member a on %s: %+v", ex, x)
				}
				if !dec(x.Fees).IsPositive() {
					t.Fatalf("member a on %s: no fees after trading: %+v", ex, x)
				}
				done = done && !dec(x.Funding).IsZero() && !dec(x.Unrealized).IsZero()
			}
			if done {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no funding or unrealized PnL within %s: %+v", wait, s)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})

	// Closing the positions realizes them: unrealized is 0 and realized is the fills' and payments' sum.
	for ex, sym := range e.symbols {
		e.place("a", trading.PlaceRequest{Exchange: ex, MarketType: "SWAP", Symbol: sym, Side: "SELL", Type: "MARKET", Qty: qty[ex], ReduceOnly: true})
	}
	for ex := range e.symbols {
		deadline := time.Now().Add(wait)
		for {
			ps, err := e.svc.Positions(ctx, "a", trading.Scope{Exchange: ex})
			if err != nil {
				t.Fatal(err)
			}
			if len(ps) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("positions on %s still open: %+v", ex, ps)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	t.Run("closed positions", func(t *testing.T) {
		s := e.mustSummary("a")
		consistent(t, s)
		walk := trading.Walk{Start: since.UnixMilli(), End: s.Time}
		for ex := range e.symbols {
			x := entry(t, s, ex)
			if x.Unrealized != "0" {
				t.Fatalf("member a on %s after closing: %+v", ex, x)
			}
			pnl, usdtFees, otherFees, funding := decimal.Zero, decimal.Zero, false, decimal.Zero
			for _, mt := range []string{"SPOT", "SWAP"} {
				fills, _, err := e.svc.WalkFills(ctx, "a", trading.Scope{Exchange: ex, MarketType: mt}, walk, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(fills) == 0 {
					t.Fatalf("no %s fills of member a on %s", mt, ex)
				}
				for _, f := range fills {
					pnl = pnl.Add(dec(f.RealizedPnl))
					if f.FeeAsset == "USDT" {
						usdtFees = usdtFees.Add(dec(f.Fee))
					} else if !dec(f.Fee).IsZero() {
						otherFees = true
					}
				}
			}
			pays, _, err := e.svc.WalkFunding(ctx, "a", trading.Scope{Exchange: ex}, walk, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pays {
				funding = funding.Add(dec(p.Amount))
			}
			// Fees in another coin (a spot buy's fee in the coin bought) are valued at its moving USDT price.
			if !dec(x.RealizedPnl).Equal(pnl) || !dec(x.Funding).Equal(funding) || funding.IsZero() ||
				(otherFees && !dec(x.Fees).GreaterThan(usdtFees)) || (!otherFees && !dec(x.Fees).Equal(usdtFees)) {
				t.Fatalf("member a on %s: %+v; fills' realized PnL %s, USDT fees %s (other coins: %v), funding %s",
					ex, x, pnl, usdtFees, otherFees, funding)
			}
		}
	})

	// Member a's trading changed nothing of b's.
	t.Run("member b after", checkB)
}
