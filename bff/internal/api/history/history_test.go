package history_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
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
	"github.com/exhub/exhub/bff/internal/api/history"
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

// fundingInterval is the venues' time between funding settlements in these tests.
const fundingInterval = 2 * time.Second

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

// accounts maps members to exchange credentials (the accounts service's part the trading service uses).
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
	a.mu.Lock()
	defer a.mu.Unlock()
	ref, ok := a.refs[member][exchange]
	if !ok {
		return nil, fmt.Errorf("%s on %s: %w", member, exchange, trading.ErrNoAccount)
	}
	return ref, nil
}

type env struct {
	t      *testing.T
	url    string
	svc    *trading.Service
	market *market.Service
	// symbols per exchange and market type
	symbols map[string]map[string]string
}

// startEmulator serves an emulator over its own venue on a loopback listener.
func startEmulator(t *testing.T, profile string, build func(v *venue.Venue) (http.Handler, func(), error)) (string, *venue.Venue) {
	t.Helper()
	// Funding settles every 2 s, so a position held for a moment pays or receives funding.
	v, err := venue.New(venue.Config{Profile: profile, Seed: 7, Simulate: true, HistoryDays: 1, FundingInterval: fundingInterval})
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
// SQLite journal, and the history API behind the test guard. Members "a" and "b" have an account on both; "c" has
// none.
func newEnv(t *testing.T) *env {
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
	history.Register(api, history.Deps{Guard: guard{}, Trading: svc, Prices: mkt})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &env{t: t, url: srv.URL, svc: svc, market: mkt, symbols: map[string]map[string]string{
		"binance": {"SPOT": "ETHUSDT", "SWAP": "ETHUSDT"},
		"okx":     {"SPOT": "ETH-USDT", "SWAP": "ETH-USDT-SWAP"},
	}}
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

// sizes are a quantity that clears the instrument's minimums at its last price, and a price far below the market
// on its tick grid (a limit buy there rests).
func (e *env) sizes(ex, mt string) (qty, low string) {
	e.t.Helper()
	sym := e.symbols[ex][mt]
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
	p := last.Mul(decimal.RequireFromString("0.8"))
	if tick := dec(in.TickSize); tick.IsPositive() {
		p = p.Div(tick).Floor().Mul(tick)
	}
	return q.String(), p.String()
}

// place places an order for member through the trading service and waits until it is final.
func (e *env) place(member string, req trading.PlaceRequest) store.Order {
	e.t.Helper()
	o, err := e.svc.Place(ctxT(e.t), member, key(), req)
	if err != nil {
		e.t.Fatalf("place %+v: %v", req, err)
	}
	// A loaded machine can turn a slow answer into a pending order: the tests act on it once its outcome is known.
	if o, err = e.svc.AwaitOutcome(ctxT(e.t), member, o.ID); err != nil {
		e.t.Fatalf("outcome of %+v: %v", req, err)
	}
	return o
}

func (e *env) get(member, path string, q url.Values, out any) int {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.url+path+"?"+q.Encode(), nil)
	if member != "" {
		req.Header.Set("X-Test-Member", member)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK {
		if cc := resp.Header.Get("Cache-Control"); cc != "private, no-store" {
			e.t.Fatalf("%s: Cache-Control %q", path, cc)
		}
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			e.t.Fatalf("%s: %v: %s", path, err, raw)
		}
	}
	if resp.StatusCode != http.StatusOK && out == nil {
		e.t.Logf("%s %s: %d %s", path, q.Encode(), resp.StatusCode, raw)
	}
	return resp.StatusCode
}

// orders reads every page of GET /history/orders (limit rows per page).
func (e *env) orders(member string, q url.Values, limit int) (rows []history.HistoryOrder, pages int) {
	e.t.Helper()
	q.Set("limit", fmt.Sprint(limit))
	q.Del("cursor")
	for {
		var page history.HistoryOrderList
		if st := e.get(member, "/api/v1/history/orders", q, &page); st != http.StatusOK {
			e.t.Fatalf("orders %s: %d %+v", q.Encode(), st, page)
		}
		if len(page.Failed) > 0 {
			e.t.Fatalf("orders %s: failed %+v", q.Encode(), page.Failed)
		}
		rows = append(rows, page.Orders...)
		pages++
		if page.NextCursor == "" {
			return rows, pages
		}
		if pages > 50 {
			e.t.Fatal("orders: more than 50 pages")
		}
		q.Set("cursor", page.NextCursor)
	}
}

func (e *env) fills(member string, q url.Values, limit int) []history.HistoryFill {
	e.t.Helper()
	q.Set("limit", fmt.Sprint(limit))
	q.Del("cursor")
	var rows []history.HistoryFill
	for range 50 {
		var page history.HistoryFillList
		if st := e.get(member, "/api/v1/history/fills", q, &page); st != http.StatusOK {
			e.t.Fatalf("fills %s: %d", q.Encode(), st)
		}
		if len(page.Failed) > 0 {
			e.t.Fatalf("fills %s: failed %+v", q.Encode(), page.Failed)
		}
		rows = append(rows, page.Fills...)
		if page.NextCursor == "" {
			return rows
		}
		q.Set("cursor", page.NextCursor)
	}
	e.t.Fatal("fills: more than 50 pages")
	return nil
}

func TestHistory(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	start := time.Now().Add(-time.Minute).UnixMilli()

	// Member a: on each exchange and market a market buy that fills and a limit buy far below the market that is
	// cancelled; on SWAP the position is then closed (a realized PnL). Member b fills one spot order on binance.
	type placed struct {
		ex, mt string
		filled []string // journal ids
		cancel string
	}
	var all []placed
	for _, ex := range []string{"binance", "okx"} {
		for _, mt := range []string{"SPOT", "SWAP"} {
			sym := e.symbols[ex][mt]
			qty, low := e.sizes(ex, mt)
			p := placed{ex: ex, mt: mt}
			buy := e.place("a", trading.PlaceRequest{Exchange: ex, MarketType: mt, Symbol: sym, Side: "BUY", Type: "MARKET", Qty: qty})
			p.filled = append(p.filled, buy.ID)
			rest := e.place("a", trading.PlaceRequest{Exchange: ex, MarketType: mt, Symbol: sym, Side: "BUY", Type: "LIMIT", Price: low, Qty: qty})
			if _, _, err := e.svc.Cancel(ctx, "a", rest.ID); err != nil {
				t.Fatalf("cancel on %s %s: %v", ex, mt, err)
			}
			p.cancel = rest.ID
			if mt == "SWAP" {
				sell := e.place("a", trading.PlaceRequest{Exchange: ex, MarketType: mt, Symbol: sym, Side: "SELL", Type: "MARKET", Qty: qty, ReduceOnly: true})
				p.filled = append(p.filled, sell.ID)
			}
			all = append(all, p)
		}
	}
	bqty, _ := e.sizes("binance", "SPOT")
	bOrder := e.place("b", trading.PlaceRequest{Exchange: "binance", MarketType: "SPOT", Symbol: "ETHUSDT", Side: "BUY", Type: "MARKET", Qty: bqty})

	// Each order's final state shows in the exchange's history (the journal learns it from the answers).
	for _, p := range all {
		for _, id := range append(slices.Clone(p.filled), p.cancel) {
			deadline := time.Now().Add(wait)
			for {
				o, err := e.svc.Order(ctx, "a", id)
				if err != nil {
					t.Fatal(err)
				}
				if s := trading.StatusOf(o); s == trading.StatusFilled || s == trading.StatusCancelled {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("order %s on %s %s not final: %+v", id, p.ex, p.mt, o)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
	}

	t.Run("no session", func(t *testing.T) {
		for _, path := range []string{"orders", "fills", "subtotal", "rpnl", "funding"} {
			if st := e.get("", "/api/v1/history/"+path, url.Values{"market": {"spot"}}, nil); st != http.StatusUnauthorized {
				t.Fatalf("%s without a session: %d", path, st)
			}
		}
	})

	t.Run("orders", func(t *testing.T) {
		for _, mkt := range []string{"spot", "futures"} {
			mt := map[string]string{"spot": "SPOT", "futures": "SWAP"}[mkt]
			q := url.Values{"market": {mkt}, "from": {fmt.Sprint(start)}}
			rows, _ := e.orders("a", q, 100)
			byID := map[string]history.HistoryOrder{}
			for i, o := range rows {
				if o.MarketType != mt {
					t.Fatalf("%s: an order of market %s: %+v", mkt, o.MarketType, o)
				}
				if o.Status != trading.StatusFilled && o.Status != trading.StatusCancelled && o.Status != trading.StatusRejected && o.Status != trading.StatusExpired {
					t.Fatalf("%s: a live order in the history: %+v", mkt, o)
				}
				if i > 0 && rows[i-1].CreatedAt.Before(o.CreatedAt) {
					t.Fatalf("%s: not newest first at %d: %v then %v", mkt, i, rows[i-1].CreatedAt, o.CreatedAt)
				}
				if o.ID != "" {
					if o.Source != "exhub" {
						t.Fatalf("journaled order with source %q", o.Source)
					}
					byID[o.ID] = o
				} else if o.Source != "exchange" {
					t.Fatalf("order without journal id has source %q", o.Source)
				}
			}
			for _, p := range all {
				if p.mt != mt {
					continue
				}
				for _, id := range p.filled {
					if o, ok := byID[id]; !ok || o.Status != trading.StatusFilled || o.Exchange != p.ex {
						t.Fatalf("%s: filled order %s on %s missing or wrong: %+v (rows %d)", mkt, id, p.ex, o, len(rows))
					}
				}
				if o, ok := byID[p.cancel]; !ok || o.Status != trading.StatusCancelled {
					t.Fatalf("%s: cancelled order %s on %s missing: %+v", mkt, p.cancel, p.ex, o)
				}
			}
			if _, ok := byID[bOrder.ID]; ok {
				t.Fatal("member b's order in member a's history")
			}

			// One row per page gives the same rows in the same order.
			paged, pages := e.orders("a", url.Values{"market": {mkt}, "from": {fmt.Sprint(start)}}, 1)
			if pages < len(rows) || len(paged) != len(rows) {
				t.Fatalf("%s: %d rows in %d pages, %d in one", mkt, len(paged), pages, len(rows))
			}
			for i := range rows {
				if paged[i].Exchange != rows[i].Exchange || paged[i].ExchangeOrderID != rows[i].ExchangeOrderID {
					t.Fatalf("%s: page row %d differs: %+v vs %+v", mkt, i, paged[i], rows[i])
				}
			}

			// Filters: one exchange, one symbol, one side.
			only, _ := e.orders("a", url.Values{"market": {mkt}, "from": {fmt.Sprint(start)}, "exchange": {"okx"}, "side": {"SELL"}}, 100)
			for _, o := range only {
				if o.Exchange != "okx" || o.Side != "SELL" {
					t.Fatalf("filtered okx sells: %+v", o)
				}
			}
			if mt == "SWAP" && len(only) == 0 {
				t.Fatal("okx futures sells: none")
			}
			sym := e.symbols["binance"][mt]
			bin, _ := e.orders("a", url.Values{"market": {mkt}, "from": {fmt.Sprint(start)}, "exchange": {"binance"}, "symbol": {sym}}, 100)
			if len(bin) == 0 {
				t.Fatalf("%s binance %s: none", mkt, sym)
			}
			for _, o := range bin {
				if o.Exchange != "binance" || o.Symbol != sym {
					t.Fatalf("filtered binance %s: %+v", sym, o)
				}
			}
		}

		// Member b sees their own order and none of a's.
		rows, _ := e.orders("b", url.Values{"market": {"spot"}, "from": {fmt.Sprint(start)}}, 100)
		var seen bool
		for _, o := range rows {
			seen = seen || o.ID == bOrder.ID
			for _, p := range all {
				if slices.Contains(p.filled, o.ID) || o.ID == p.cancel {
					t.Fatalf("member b sees a's order %+v", o)
				}
			}
		}
		if !seen {
			t.Fatalf("member b's own order missing: %+v", rows)
		}
		// A member without accounts has an empty history, not an error.
		var none history.HistoryOrderList
		if st := e.get("c", "/api/v1/history/orders", url.Values{"market": {"spot"}}, &none); st != http.StatusOK || len(none.Orders) != 0 {
			t.Fatalf("member without accounts: %d %+v", st, none)
		}
		if st := e.get("c", "/api/v1/history/orders", url.Values{"market": {"spot"}, "exchange": {"okx"}}, nil); st != http.StatusConflict {
			t.Fatalf("member without an okx account asking okx: %d", st)
		}
		if st := e.get("a", "/api/v1/history/orders", url.Values{"market": {"spot"}, "exchange": {"nope"}}, nil); st != http.StatusNotFound {
			t.Fatalf("unknown exchange: %d", st)
		}
		if st := e.get("a", "/api/v1/history/orders", url.Values{"market": {"spot"}, "from": {"20"}, "to": {"10"}}, nil); st != http.StatusUnprocessableEntity {
			t.Fatalf("from after to: %d", st)
		}
		if st := e.get("a", "/api/v1/history/orders", url.Values{"market": {"spot"}, "cursor": {"garbage"}}, nil); st != http.StatusUnprocessableEntity {
			t.Fatalf("bad cursor: %d", st)
		}
	})

	t.Run("fills and subtotal", func(t *testing.T) {
		for _, mkt := range []string{"spot", "futures"} {
			q := url.Values{"market": {mkt}, "from": {fmt.Sprint(start)}}
			fills := e.fills("a", q, 100)
			if paged := e.fills("a", url.Values{"market": {mkt}, "from": {fmt.Sprint(start)}}, 1); len(paged) != len(fills) {
				t.Fatalf("%s: %d fills paged one by one, %d at once", mkt, len(paged), len(fills))
			}
			perEx := map[string]int{}
			pnl, quote := decimal.Zero, decimal.Zero
			fees := map[string]decimal.Decimal{}
			orders := map[string]bool{}
			for _, f := range fills {
				perEx[f.Exchange]++
				if f.Fee == "" || f.FeeAsset == "" || f.Price == "" || f.Qty == "" {
					t.Fatalf("%s: fill without fee or size: %+v", mkt, f)
				}
				pnl = pnl.Add(dec(f.RealizedPnl))
				if f.QuoteQty != "" {
					quote = quote.Add(dec(f.QuoteQty))
				} else {
					quote = quote.Add(dec(f.Qty).Mul(dec(f.Price)))
				}
				fees[f.FeeAsset] = fees[f.FeeAsset].Add(dec(f.Fee))
				orders[f.Exchange+" "+f.OrderID] = true
			}
			if perEx["binance"] == 0 || perEx["okx"] == 0 {
				t.Fatalf("%s: fills per exchange %v", mkt, perEx)
			}
			if mkt == "futures" && pnl.IsZero() {
				t.Fatalf("futures fills carry no realized PnL: %+v", fills)
			}

			var st history.HistorySubTotals
			if code := e.get("a", "/api/v1/history/subtotal", q, &st); code != http.StatusOK {
				t.Fatalf("subtotal: %d", code)
			}
			if st.Truncated || len(st.Failed) > 0 {
				t.Fatalf("subtotal truncated or failed: %+v", st)
			}
			if st.Total.Trades != len(fills) || st.Total.Orders != len(orders) ||
				!dec(st.Total.RealizedPnl).Equal(pnl) || !dec(st.Total.QuoteVolume).Equal(quote) {
				t.Fatalf("%s: total %+v; fills: %d trades, %d orders, pnl %s, quote %s", mkt, st.Total, len(fills), len(orders), pnl, quote)
			}
			if len(st.Total.Fees) != len(fees) {
				t.Fatalf("%s: fees %+v, want %v", mkt, st.Total.Fees, fees)
			}
			for _, f := range st.Total.Fees {
				if !dec(f.Amount).Equal(fees[f.Asset]) {
					t.Fatalf("%s: fee in %s %s, want %s", mkt, f.Asset, f.Amount, fees[f.Asset])
				}
			}
			trades := 0
			for _, s := range st.Symbols {
				trades += s.Trades
				if s.Exchange == "" || s.Symbol == "" || s.Volume == "" || s.Buys+s.Sells != s.Trades {
					t.Fatalf("%s: symbol row %+v", mkt, s)
				}
			}
			if trades != st.Total.Trades || len(st.Symbols) != 2 {
				t.Fatalf("%s: symbol rows %+v", mkt, st.Symbols)
			}

			// b's fills and sub-totals hold none of a's.
			bf := e.fills("b", url.Values{"market": {mkt}, "from": {fmt.Sprint(start)}}, 100)
			for _, f := range bf {
				if orders[f.Exchange+" "+f.OrderID] {
					t.Fatalf("member b sees a's fill %+v", f)
				}
			}
			var bst history.HistorySubTotals
			e.get("b", "/api/v1/history/subtotal", url.Values{"market": {mkt}, "from": {fmt.Sprint(start)}}, &bst)
			if bst.Total.Trades != len(bf) {
				t.Fatalf("member b's subtotal %+v vs %d fills", bst.Total, len(bf))
			}
		}
		// A side filter keeps one side.
		var sells history.HistorySubTotals
		e.get("a", "/api/v1/history/subtotal", url.Values{"market": {"futures"}, "from": {fmt.Sprint(start)}, "side": {"SELL"}}, &sells)
		if sells.Total.Trades == 0 || sells.Total.Buys != 0 || sells.Total.Sells != sells.Total.Trades {
			t.Fatalf("sells only: %+v", sells.Total)
		}
	})

	t.Run("rpnl", func(t *testing.T) {
		futures := e.fills("a", url.Values{"market": {"futures"}, "from": {fmt.Sprint(start)}}, 500)
		want := decimal.Zero
		for _, f := range futures {
			want = want.Add(dec(f.RealizedPnl))
		}
		var r history.HistoryRpnl
		if st := e.get("a", "/api/v1/history/rpnl", url.Values{"from": {fmt.Sprint(start)}, "to": {fmt.Sprint(time.Now().Add(time.Minute).UnixMilli())}}, &r); st != http.StatusOK {
			t.Fatalf("rpnl: %d", st)
		}
		if len(r.Exchanges) != 2 || len(r.Failed) > 0 {
			t.Fatalf("rpnl exchanges %+v failed %+v", r.Exchanges, r.Failed)
		}
		fills, funding, equity := decimal.Zero, decimal.Zero, decimal.Zero
		for _, x := range r.Exchanges {
			fills = fills.Add(dec(x.RealizedPnl))
			funding = funding.Add(dec(x.Funding))
			equity = equity.Add(dec(x.Equity))
			if !dec(x.Equity).IsPositive() {
				t.Fatalf("equity on %s: %+v", x.Exchange, x)
			}
			if !dec(x.TotalRpnl).Equal(dec(x.RealizedPnl).Add(dec(x.Funding))) {
				t.Fatalf("total of %s: %+v", x.Exchange, x)
			}
		}
		if !fills.Equal(want) || !dec(r.TotalRpnl).Equal(fills.Add(funding)) || !dec(r.Equity).Equal(equity) {
			t.Fatalf("rpnl %+v, fills' realized PnL %s", r, want)
		}
		var rb history.HistoryRpnl
		e.get("b", "/api/v1/history/rpnl", url.Values{"from": {fmt.Sprint(start)}}, &rb)
		if !dec(rb.TotalRpnl).IsZero() {
			t.Fatalf("member b (no futures trades) has realized PnL %s", rb.TotalRpnl)
		}
		if dec(rb.Equity).Equal(dec(r.Equity)) {
			t.Fatalf("member b's equity is a's: %s", rb.Equity)
		}
	})

	t.Run("funding", func(t *testing.T) {
		// Member a holds a long on each exchange's perpetual over funding settlements.
		for _, ex := range []string{"binance", "okx"} {
			qty, _ := e.sizes(ex, "SWAP")
			e.place("a", trading.PlaceRequest{Exchange: ex, MarketType: "SWAP", Symbol: e.symbols[ex]["SWAP"], Side: "BUY", Type: "MARKET", Qty: qty})
		}
		for _, ex := range []string{"binance", "okx"} {
			q := url.Values{"exchange": {ex}, "from": {fmt.Sprint(start)}}
			var l history.HistoryFundingList
			deadline := time.Now().Add(wait)
			for {
				if st := e.get("a", "/api/v1/history/funding", q, &l); st != http.StatusOK {
					t.Fatalf("funding on %s: %d %+v", ex, st, l)
				}
				if len(l.Payments) > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no funding payment on %s within %s", ex, wait)
				}
				time.Sleep(100 * time.Millisecond)
			}
			// Every payment up to the newest one seen is recorded (a settlement is recorded at once): the window up
			// to it gives the same payments read one per page, and its sum in the realized PnL.
			cut := l.Payments[0].Time.UnixMilli()
			q.Set("to", fmt.Sprint(cut))
			q.Set("limit", "500")
			var all history.HistoryFundingList
			e.get("a", "/api/v1/history/funding", q, &all)
			sum := decimal.Zero
			for i, p := range all.Payments {
				if p.Exchange != ex || p.Symbol != e.symbols[ex]["SWAP"] || p.Asset != "USDT" || p.ID == "" || dec(p.Amount).IsZero() {
					t.Fatalf("funding payment on %s: %+v", ex, p)
				}
				if i > 0 && all.Payments[i-1].Time.Before(p.Time) {
					t.Fatalf("funding on %s not newest first: %+v", ex, all.Payments)
				}
				sum = sum.Add(dec(p.Amount))
			}
			q.Set("limit", "1")
			var paged []history.HistoryFunding
			for range 100 {
				var page history.HistoryFundingList
				e.get("a", "/api/v1/history/funding", q, &page)
				paged = append(paged, page.Payments...)
				if page.NextCursor == "" {
					break
				}
				q.Set("cursor", page.NextCursor)
			}
			if len(paged) != len(all.Payments) {
				t.Fatalf("funding on %s: %d payments one per page, %d at once", ex, len(paged), len(all.Payments))
			}
			var r history.HistoryRpnl
			e.get("a", "/api/v1/history/rpnl", url.Values{"exchange": {ex}, "from": {fmt.Sprint(start)}, "to": {fmt.Sprint(cut)}}, &r)
			if len(r.Exchanges) != 1 || r.Exchanges[0].FundingMissing || !dec(r.Exchanges[0].Funding).Equal(sum) ||
				!dec(r.TotalRpnl).Equal(dec(r.Exchanges[0].RealizedPnl).Add(sum)) {
				t.Fatalf("rpnl on %s %+v, funding payments sum %s", ex, r, sum)
			}
		}
		// Member b holds no position: no funding payments.
		var lb history.HistoryFundingList
		if st := e.get("b", "/api/v1/history/funding", url.Values{"from": {fmt.Sprint(start)}}, &lb); st != http.StatusOK || len(lb.Payments) != 0 || len(lb.Failed) != 0 {
			t.Fatalf("member b's funding: %d %+v", st, lb)
		}
	})
}
