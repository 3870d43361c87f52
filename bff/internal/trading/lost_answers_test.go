package trading

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	binanceemu "github.com/exhub/exhub/adapters/binance/emulator"
	okxemu "github.com/exhub/exhub/adapters/okx/emulator"
	"github.com/exhub/exhub/adapters/venue"
	"github.com/exhub/exhub/bff/internal/config/setting"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/plugintest"
	"github.com/exhub/exhub/bff/internal/store"
	"github.com/exhub/exhub/plugin-sdk/faults"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// loser makes an emulator lose the answer to one request after executing it: the request runs to completion, then
// the connection drops before the answer leaves, so the exchange did what was asked and nobody learns it from the
// answer. Any wire protocol, any method. (Dropping at once, rather than holding the answer until the call times
// out, keeps the call timeout long: a loaded machine never turns a slow answer into a lost one.)
type loser struct {
	mu    sync.Mutex
	match []string      // the next non-GET request whose query or body holds one of these is lost
	hit   chan struct{} // closed once that request has executed
	lost  atomic.Int64  // answers lost so far
}

func newLoser(*testing.T) *loser {
	return &loser{}
}

// arm loses the answer to the next request carrying one of match; the channel closes once it has executed.
func (l *loser) arm(match ...string) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.match, l.hit = match, make(chan struct{})
	return l.hit
}

func (l *loser) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		match, hit := l.match, l.hit
		l.mu.Unlock()
		if len(match) == 0 || r.Method == http.MethodGet {
			h.ServeHTTP(w, r)
			return
		}
		body := readBody(r)
		found := false
		for _, m := range match {
			if strings.Contains(body, m) || strings.Contains(r.URL.RawQuery, m) {
				found = true
			}
		}
		if !found {
			h.ServeHTTP(w, r)
			return
		}
		l.mu.Lock()
		l.match = nil
		l.mu.Unlock()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r.WithContext(context.WithoutCancel(r.Context()))) // executed, whatever happens next
		l.lost.Add(1)
		close(hit)
		faults.Drop(w) // the connection drops before the answer: the client never learns it
	})
}

func readBody(r *http.Request) string {
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	return string(b)
}

// venueEnv is env with the binance and okx emulators only, their venues (to move prices) and a loser in front of
// each; its service's plugin calls time out after callTimeout (long: answers are lost by dropping the connection).
type venueEnv struct {
	*env
	venues map[string]*venue.Venue
	losers map[string]*loser
	// perp is the venue instrument of each exchange's perpetual under test.
	perp map[string]string
}

const callTimeout = 20 * time.Second

func newVenueEnv(t *testing.T) *venueEnv {
	t.Helper()
	e := &venueEnv{env: &env{t: t, st: openStore(t, false), acc: &fakeAccounts{}, ex: map[string]*exch{}},
		venues: map[string]*venue.Venue{}, losers: map[string]*loser{"binance": newLoser(t), "okx": newLoser(t)},
		perp: map[string]string{"binance": "ETH/USDT:PERP", "okx": "ETH/USDT:PERP"}}

	bURL, bGate := startEmulator(t, "binance", func(v *venue.Venue) (http.Handler, func(), error) {
		e.venues["binance"] = v
		s, err := binanceemu.New(binanceemu.Config{Venue: v, Logger: slog.New(slog.DiscardHandler),
			Credentials: []binanceemu.Credential{{Key: "binance-key-b", Secret: "binance-secret-b", Account: "binance-b"}}})
		if err != nil {
			return nil, nil, err
		}
		return e.losers["binance"].wrap(s.Handler()), s.Close, nil
	})
	fund(t, e.venues["binance"], "binance-b")
	e.ex["binance"] = &exch{slug: "binance", spot: "ETHUSDT", swap: "ETHUSDT", faults: bURL, gate: bGate}
	e.acc.set("a", "binance", &exchangev1.AccountRef{AccountId: "bin-a", ApiKey: binanceemu.DemoAPIKey, ApiSecret: binanceemu.DemoAPISecret})
	e.acc.set("b", "binance", &exchangev1.AccountRef{AccountId: "bin-b", ApiKey: "binance-key-b", ApiSecret: "binance-secret-b"})

	oURL, oGate := startEmulator(t, "okx", func(v *venue.Venue) (http.Handler, func(), error) {
		e.venues["okx"] = v
		s, err := okxemu.New(okxemu.Config{Venue: v, Logger: slog.New(slog.DiscardHandler), DisableRateLimits: true,
			Credentials: []okxemu.Credentials{{APIKey: "okx-key-b", Secret: "okx-secret-b", Passphrase: "okx-pass-b", Account: "okx-b"}}})
		if err != nil {
			return nil, nil, err
		}
		return e.losers["okx"].wrap(s.Handler()), s.Close, nil
	})
	fund(t, e.venues["okx"], "okx-b")
	e.ex["okx"] = &exch{slug: "okx", spot: "ETH-USDT", swap: "ETH-USDT-SWAP", faults: oURL, gate: oGate}
	e.acc.set("a", "okx", &exchangev1.AccountRef{AccountId: "okx-a", ApiKey: okxemu.DemoAPIKey, ApiSecret: okxemu.DemoAPISecret, Passphrase: okxemu.DemoPassphrase})
	e.acc.set("b", "okx", &exchangev1.AccountRef{AccountId: "okx-b", ApiKey: "okx-key-b", ApiSecret: "okx-secret-b", Passphrase: "okx-pass-b"})

	specs := []pluginhost.Spec{
		{Key: 1, Slug: "binance", Name: "Binance", Path: plugintest.Path("binance"), Settings: binanceemu.PluginSettings(bURL)},
		{Key: 2, Slug: "okx", Name: "OKX", Path: plugintest.Path("okx"), Settings: okxemu.PluginSettings(oURL)},
	}
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	e.host = pluginhost.New(specs, pluginhost.Options{Logger: log, Backoff: pluginhost.Backoff{Initial: 50 * time.Millisecond, Max: time.Second}})
	hctx, hcancel := context.WithCancel(context.Background())
	hdone := make(chan struct{})
	go func() { defer close(hdone); e.host.Run(hctx) }()
	t.Cleanup(func() { hcancel(); <-hdone })
	for _, sup := range e.host.Supervisors() {
		wctx, cancel := context.WithTimeout(hctx, wait)
		err := sup.WaitRunning(wctx)
		cancel()
		if err != nil {
			t.Fatalf("%s not running: %v (%+v)", sup.Slug(), err, sup.Status())
		}
	}
	cfg := Defaults()
	cfg.CallTimeout = setting.Duration(callTimeout)
	cfg.ResolveInitial, cfg.ResolveMax = setting.Duration(50*time.Millisecond), setting.Duration(500*time.Millisecond)
	cfg.NotFoundGrace = setting.Duration(2 * time.Second)
	cfg.Tick = setting.Duration(50 * time.Millisecond)
	svc, err := New(cfg, e.st, e.host, e.acc, WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	e.start()
	return e
}

// orderOnWire are the forms an exchange order id takes in a request that names it (binance's query, okx's JSON
// body; binance's closing & keeps 12 from matching 123).
func orderOnWire(id string) []string {
	return []string{"orderId=" + id + "&", `"ordId":"` + id + `"`}
}

// TestAmendAnswerLost: an amend the exchange executed but whose answer never came back is resolved by reading the
// order back: the new price, not pending, not an error, one open order.
func TestAmendAnswerLost(t *testing.T) {
	e := newVenueEnv(t)
	for _, tc := range []struct{ slug, mt string }{{"binance", "SWAP"}, {"okx", "SWAP"}, {"okx", "SPOT"}} {
		t.Run(tc.slug+"/"+tc.mt, func(t *testing.T) {
			m := e.market(t, tc.slug, tc.mt)
			ctx := ctxT(t)
			price := m.price(0.7)
			o, err := e.svc.Place(ctx, "a", newKey(), m.limit("BUY", price, m.qty(price, 1)))
			if err != nil || StatusOf(o) != StatusOpen {
				t.Fatalf("place: %+v %v", o, err)
			}
			executed := e.losers[tc.slug].arm(orderOnWire(o.ExchangeOrderID)...)
			newPrice := m.price(0.65)
			before := e.svc.Stats()
			am, pending, err := e.svc.Amend(ctx, "a", o.ID, newKey(), AmendRequest{Price: newPrice})
			select {
			case <-executed:
			default:
				t.Fatalf("the amend never reached the exchange (answered %+v %v %v)", am, pending, err)
			}
			if err != nil || pending {
				t.Fatalf("amend with a lost answer: %+v pending %v err %v; want resolved by reading the order back", am, pending, err)
			}
			if !dec(am.Price).Equal(dec(newPrice)) || StatusOf(am) != StatusOpen || am.ExchangeOrderID != o.ExchangeOrderID {
				t.Fatalf("amended entry %+v, want open at %s", am, newPrice)
			}
			if got := e.svc.Stats().AmendsUnknown; got != before.AmendsUnknown {
				t.Fatalf("a resolved amend counted as unknown (%d)", got)
			}
			acts, err := e.st.OrderActions(ctx, o.ID)
			if err != nil || len(acts) != 1 || acts[0].State != store.ActionDone {
				t.Fatalf("journaled actions %+v %v, want one done amend", acts, err)
			}
			list, err := e.svc.OpenOrders(ctx, "a", Scope{Exchange: tc.slug, MarketType: tc.mt, Symbol: m.symbol})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, x := range list {
				if x.ClientOrderID == o.ClientOrderID {
					n++
					if !dec(x.Price).Equal(dec(newPrice)) {
						t.Fatalf("the exchange holds %s, want %s", x.Price, newPrice)
					}
				}
			}
			if n != 1 {
				t.Fatalf("%d open orders with the client id", n)
			}
			if _, _, err := e.svc.Cancel(ctx, "a", o.ID); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestCancelAnswerLost: a cancel the exchange executed but whose answer never came back is asked once more and the
// order ends cancelled (not pending, not an error).
func TestCancelAnswerLost(t *testing.T) {
	e := newVenueEnv(t)
	for _, slug := range []string{"binance", "okx"} {
		for _, mt := range []string{"SPOT", "SWAP"} {
			t.Run(slug+"/"+mt, func(t *testing.T) {
				m := e.market(t, slug, mt)
				ctx := ctxT(t)
				price := m.price(0.7)
				o, err := e.svc.Place(ctx, "a", newKey(), m.limit("BUY", price, m.qty(price, 1)))
				if err != nil || StatusOf(o) != StatusOpen {
					t.Fatalf("place: %+v %v", o, err)
				}
				l := e.losers[slug]
				lostBefore := l.lost.Load()
				executed := l.arm(orderOnWire(o.ExchangeOrderID)...)
				c, pending, err := e.svc.Cancel(ctx, "a", o.ID)
				select {
				case <-executed:
				default:
					t.Fatalf("the cancel never reached the exchange (answered %+v %v %v)", c, pending, err)
				}
				if l.lost.Load() != lostBefore+1 {
					t.Fatalf("answers lost: %d, want one", l.lost.Load()-lostBefore)
				}
				if err != nil || pending || StatusOf(c) != StatusCancelled {
					t.Fatalf("cancel with a lost answer: %+v pending %v err %v; want cancelled", c, pending, err)
				}
				if n := e.openCIDs(t, "a", m)[o.ClientOrderID]; n != 0 {
					t.Fatal("the order is still open on the exchange")
				}
				acts, err := e.st.OrderActions(ctx, o.ID)
				if err != nil || len(acts) != 1 || acts[0].Action != store.ActionCancel || acts[0].State != store.ActionDone {
					t.Fatalf("journaled actions %+v %v, want one done cancel", acts, err)
				}
			})
		}
	}
}

// TestAlgoUnknownOutcomeResolves: a conditional order whose answer is lost (executed or not) answers pending, then
// resolves through ListAlgoOrders to exactly one waiting algo order, or to not placed; the counters say how.
func TestAlgoUnknownOutcomeResolves(t *testing.T) {
	e := newVenueEnv(t)
	var next atomic.Value
	next.Store("")
	e.svc.testClientID = func() string { return next.Swap("").(string) }
	seq := 0
	for _, slug := range []string{"binance", "okx"} {
		t.Run(slug, func(t *testing.T) {
			m := e.market(t, slug, "SWAP")
			ctx := ctxT(t)
			for _, kind := range []faults.Kind{faults.AcceptThenError, faults.AcceptThenDrop, faults.DropBefore} {
				seq++
				cid := fmt.Sprintf("exalgo%d%d", time.Now().UnixNano()%1e9, seq)
				if err := faults.Arm(http.DefaultClient, m.ex.faults, cid, kind); err != nil {
					t.Fatalf("arming %s: %v", kind, err)
				}
				next.Store(cid)
				before := e.svc.Stats()
				trig := m.price(1.5) // far above: it waits
				o, err := e.svc.PlaceAlgo(ctx, "a", newKey(), AlgoRequest{Exchange: slug, MarketType: "SWAP", Symbol: m.symbol,
					Side: "BUY", Type: "STOP_MARKET", TriggerPrice: trig, TriggerPriceType: "MARK", MarginMode: "CROSS", Qty: m.qty(trig, 1)})
				if err != nil {
					t.Fatalf("%s: an unknown outcome must not be an error: %v", kind, err)
				}
				if o.ClientOrderID != cid || StatusOf(o) != StatusPending || o.Kind != store.OrderKindAlgo {
					t.Fatalf("%s: answered %+v, want a pending algo entry with client id %s", kind, o, cid)
				}
				if got := e.svc.Stats().Unknown; got != before.Unknown+1 {
					t.Fatalf("%s: unknown outcomes counted %d -> %d", kind, before.Unknown, got)
				}
				algos := func() int {
					list, _, err := e.svc.AlgoOrders(ctx, "a", Scope{Exchange: slug, MarketType: "SWAP", Symbol: m.symbol}, true, Page{})
					if err != nil {
						t.Fatal(err)
					}
					n := 0
					for _, x := range list {
						if x.ClientOrderID == cid {
							n++
						}
					}
					return n
				}
				if kind.Executes() {
					r := e.waitStatus(t, o.ID, StatusWaiting)
					if r.ExchangeOrderID == "" {
						t.Fatalf("%s: resolved without an algo id: %+v", kind, r)
					}
					if n := algos(); n != 1 {
						t.Fatalf("%s: %d algo orders with the client id", kind, n)
					}
					if got := e.svc.Stats().ResolvedByLookup; got != before.ResolvedByLookup+1 {
						t.Fatalf("%s: resolved by lookup counted %d -> %d", kind, before.ResolvedByLookup, got)
					}
					if c, _, err := e.svc.Cancel(ctx, "a", o.ID); err != nil || StatusOf(c) != StatusCancelled {
						t.Fatalf("cancelling the algo order: %+v %v", c, err)
					}
				} else {
					r := e.waitStatus(t, o.ID, StatusNotPlaced)
					if r.ExchangeOrderID != "" {
						t.Fatalf("%s: %+v", kind, r)
					}
					if n := algos(); n != 0 {
						t.Fatalf("%s: %d algo orders with the client id", kind, n)
					}
					if got := e.svc.Stats().NotPlaced; got != before.NotPlaced+1 {
						t.Fatalf("%s: not placed counted %d -> %d", kind, before.NotPlaced, got)
					}
				}
			}
		})
	}
}

// TestAlgoStopTriggers: a stop order waits while the venue's mark price stays below its trigger and fires when the
// mark crosses it: the algo list shows it triggered and the position it opened.
func TestAlgoStopTriggers(t *testing.T) {
	e := newVenueEnv(t)
	for _, slug := range []string{"binance", "okx"} {
		t.Run(slug, func(t *testing.T) {
			m := e.market(t, slug, "SWAP")
			ctx := ctxT(t)
			sc := Scope{Exchange: slug, MarketType: "SWAP", Symbol: m.symbol}
			trig := m.price(1.2)
			qty := m.qty(trig, 1)
			o, err := e.svc.PlaceAlgo(ctx, "b", newKey(), AlgoRequest{Exchange: slug, MarketType: "SWAP", Symbol: m.symbol,
				Side: "BUY", Type: "STOP_MARKET", TriggerPrice: trig, TriggerPriceType: "MARK", MarginMode: "CROSS", Qty: qty})
			if err != nil || StatusOf(o) != StatusWaiting {
				t.Fatalf("stop order: %+v %v", o, err)
			}
			status := func() string {
				list, _, err := e.svc.AlgoOrders(ctx, "b", sc, true, Page{})
				if err != nil {
					t.Fatal(err)
				}
				for _, x := range list {
					if x.ClientOrderID == o.ClientOrderID {
						return x.Status
					}
				}
				return "missing"
			}
			if s := status(); s != StatusWaiting {
				t.Fatalf("before the trigger: %s", s)
			}
			v := e.venues[slug]
			// Below the trigger: nothing happens.
			if err := v.SetMarkPrice(e.perp[slug], dec(m.price(1.1))); err != nil {
				t.Fatal(err)
			}
			if s := status(); s != StatusWaiting {
				t.Fatalf("fired below its trigger: %s", s)
			}
			// The mark crosses the trigger.
			if err := v.SetMarkPrice(e.perp[slug], dec(m.price(1.25))); err != nil {
				t.Fatal(err)
			}
			eventually(t, "the stop shows triggered", func() (string, bool) {
				s := status()
				return s, s == StatusTriggered
			})
			eventually(t, "a long position", func() (string, bool) {
				pos, err := e.svc.Positions(ctx, "b", Scope{Exchange: slug, Symbol: m.symbol})
				if err != nil {
					return err.Error(), false
				}
				size := decimal.Zero
				for _, p := range pos {
					size = size.Add(dec(p.Qty).Abs())
				}
				return fmt.Sprint(pos), size.Equal(dec(qty))
			})
			if _, err := e.svc.ClosePosition(ctx, "b", newKey(), ClosePositionRequest{Exchange: slug, Symbol: m.symbol,
				PositionSide: "NET", MarginMode: "CROSS"}); err != nil {
				t.Fatalf("closing: %v", err)
			}
		})
	}
}

// TestHedgeModeMarketOrderExplained: a market order on a perpetual in hedge mode without a position side is refused
// with the sentence that says what to choose, and opens nothing.
func TestHedgeModeMarketOrderExplained(t *testing.T) {
	e := newVenueEnv(t)
	for _, slug := range []string{"binance", "okx"} {
		t.Run(slug, func(t *testing.T) {
			m := e.market(t, slug, "SWAP")
			ctx := ctxT(t)
			sc := Scope{Exchange: slug}
			if err := e.svc.SetPositionMode(ctx, "b", sc, "HEDGE"); err != nil {
				t.Fatalf("hedge mode: %v", err)
			}
			t.Cleanup(func() { _ = e.svc.SetPositionMode(context.Background(), "b", sc, "ONE_WAY") })
			before := e.svc.Stats().Rejected
			_, err := e.svc.Place(ctx, "b", newKey(), PlaceRequest{Exchange: slug, MarketType: "SWAP", Symbol: m.symbol,
				Side: "BUY", Type: "MARKET", Qty: m.qty(m.last.String(), 1)})
			pe := wantCode(t, err, "position_mode_mismatch")
			if pe.Status != http.StatusUnprocessableEntity || !strings.Contains(pe.Message, "hedge mode") ||
				!strings.Contains(pe.Message, "Open Long/Short") {
				t.Fatalf("refused as %+v", pe)
			}
			if got := e.svc.Stats().Rejected; got != before+1 {
				t.Fatalf("rejections counted %d -> %d", before, got)
			}
			pos, err := e.svc.Positions(ctx, "b", Scope{Exchange: slug, Symbol: m.symbol})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pos {
				if !dec(p.Qty).IsZero() {
					t.Fatalf("a refused market order opened %+v", pos)
				}
			}
		})
	}
}

// TestCancelAllAnswerLost: a cancel-all the exchange executed but whose answer never came back is never reported as
// a failure. Binance cancels by symbol (asking again could cancel an order placed meanwhile): pending, with the
// orders read back as still open (none), and reconciliation brings each journaled order to cancelled. OKX's batch
// cancel names each order: its adapter asks again and the answer is known.
func TestCancelAllAnswerLost(t *testing.T) {
	e := newVenueEnv(t)
	for _, tc := range []struct{ slug, mt string }{{"binance", "SWAP"}, {"binance", "SPOT"}, {"okx", "SWAP"}} {
		t.Run(tc.slug+"/"+tc.mt, func(t *testing.T) {
			m := e.market(t, tc.slug, tc.mt)
			ctx := ctxT(t)
			var placed []store.Order
			for _, frac := range []float64{0.7, 0.72} {
				price := m.price(frac)
				o, err := e.svc.Place(ctx, "a", newKey(), m.limit("BUY", price, m.qty(price, 1)))
				if err != nil || StatusOf(o) != StatusOpen {
					t.Fatalf("place: %+v %v", o, err)
				}
				placed = append(placed, o)
			}
			// The cancel request names the symbol (binance's query) or the orders (okx's body).
			executed := e.losers[tc.slug].arm(append(orderOnWire(placed[0].ExchangeOrderID), "symbol="+m.symbol+"&",
				"symbol="+m.symbol)...)
			lostBefore := e.losers[tc.slug].lost.Load()
			before := e.svc.Stats()
			still, pending, err := e.svc.CancelAll(ctx, "a", Scope{Exchange: tc.slug, MarketType: tc.mt, Symbol: m.symbol})
			select {
			case <-executed:
			default:
				t.Fatalf("the cancel-all never reached the exchange (answered %+v %v %v)", still, pending, err)
			}
			askedAgain := tc.slug == "okx"
			if err != nil || pending == askedAgain {
				t.Fatalf("cancel-all with a lost answer: %+v pending %v err %v; want pending %v, no error", still, pending, err, !askedAgain)
			}
			if got := e.losers[tc.slug].lost.Load() - lostBefore; got != 1 {
				t.Fatalf("%d cancel-all answers lost, want exactly one", got)
			}
			if askedAgain {
				if len(still) != 2 {
					t.Fatalf("cancel-all asked again reported %+v, want the two orders", still)
				}
				for _, o := range still {
					if o.Status != StatusCancelled {
						t.Fatalf("order reported %+v, want cancelled", o)
					}
				}
			} else {
				for _, o := range still {
					if o.ID == placed[0].ID || o.ID == placed[1].ID {
						t.Fatalf("read back as still open: %+v (the exchange cancelled it)", o)
					}
				}
				if got := e.svc.Stats().CancelsUnknown; got != before.CancelsUnknown+1 {
					t.Fatalf("unknown cancels counted %d -> %d", before.CancelsUnknown, got)
				}
			}
			for _, o := range placed {
				e.waitStatus(t, o.ID, StatusCancelled)
			}
		})
	}
}
