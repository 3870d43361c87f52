package trading

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/bff/internal/store"
	"github.com/exhub/exhub/plugin-sdk/faults"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

var keySeq atomic.Int64

func newKey() string { return fmt.Sprintf("key-%d-%d", time.Now().UnixNano(), keySeq.Add(1)) }

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*wait)
	t.Cleanup(cancel)
	return ctx
}

// market is what a test needs to price orders on one market.
type market struct {
	ex     *exch
	mt     string
	symbol string
	in     *exchangev1.Instrument
	last   decimal.Decimal
}

func (e *env) market(t *testing.T, slug, mt string) market {
	t.Helper()
	ex := e.ex[slug]
	m := market{ex: ex, mt: mt, symbol: ex.spot}
	if mt == "SWAP" {
		m.symbol = ex.swap
	}
	sup, _ := e.host.Get(slug)
	pm := exchangev1.MarketType(exchangev1.MarketType_value["MARKET_TYPE_"+mt])
	in, err := e.svc.instrument(ctxT(t), sup, slug, pm, m.symbol)
	if err != nil {
		t.Fatalf("instrument %s %s %s: %v", slug, mt, m.symbol, err)
	}
	m.in = in
	eventually(t, "a last price", func() (string, bool) {
		err := sup.Call(ctxT(t), "GetTickers", func(ctx context.Context, c exchangev1.ExchangeClient) error {
			resp, err := c.GetTickers(ctx, &exchangev1.GetTickersRequest{MarketType: pm, Symbols: []string{m.symbol}})
			if err == nil && len(resp.GetTickers()) > 0 {
				m.last = dec(resp.GetTickers()[0].GetLast())
			}
			return err
		})
		return fmt.Sprint(m.last, err), m.last.IsPositive()
	})
	return m
}

// price is a fraction of the last price on the tick grid.
func (m market) price(frac float64) string {
	p := m.last.Mul(decimal.NewFromFloat(frac))
	if tick := dec(m.in.GetTickSize()); tick.IsPositive() {
		p = p.Div(tick).Floor().Mul(tick)
	}
	return p.String()
}

// qty is the smallest size that clears the minimum size and notional at price (times mult), on the step grid.
func (m market) qty(price string, mult int64) string {
	step := dec(m.in.GetStepSize())
	q := dec(m.in.GetMinQty())
	if mn := dec(m.in.GetMinNotional()); mn.IsPositive() {
		if need := mn.Mul(decimal.NewFromFloat(1.5)).Div(dec(price)); need.GreaterThan(q) {
			q = need
		}
	}
	q = q.Mul(decimal.NewFromInt(mult))
	if step.IsPositive() {
		q = q.Div(step).Ceil().Mul(step)
	}
	return q.String()
}

func (m market) limit(side, price, qty string) PlaceRequest {
	return PlaceRequest{Exchange: m.ex.slug, MarketType: m.mt, Symbol: m.symbol, Side: side, Type: "LIMIT", Price: price, Qty: qty}
}

func (e *env) openCIDs(t *testing.T, member string, m market) map[string]int {
	t.Helper()
	list, err := e.svc.OpenOrders(ctxT(t), member, Scope{Exchange: m.ex.slug, MarketType: m.mt, Symbol: m.symbol})
	if err != nil {
		t.Fatalf("open orders of %s: %v", member, err)
	}
	out := map[string]int{}
	for _, o := range list {
		if o.Status != StatusPending {
			out[o.ClientOrderID]++
		}
	}
	return out
}

func wantCode(t *testing.T, err error, code string) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("error %v, want code %s", err, code)
	}
	return e
}

// waitState waits until the journal entry's API status is one of want.
func (e *env) waitStatus(t *testing.T, id string, want ...string) store.Order {
	t.Helper()
	var o store.Order
	eventually(t, "order "+id+" reaches "+fmt.Sprint(want), func() (string, bool) {
		var err error
		o, err = e.st.Order(ctxT(t), id)
		if err != nil {
			return err.Error(), false
		}
		for _, w := range want {
			if StatusOf(o) == w {
				return "", true
			}
		}
		return StatusOf(o) + " " + o.State, false
	})
	return o
}

func eachMarket(t *testing.T, e *env, fn func(t *testing.T, m market)) {
	for _, slug := range []string{"reference", "binance", "okx"} {
		for _, mt := range []string{"SPOT", "SWAP"} {
			t.Run(slug+"/"+mt, func(t *testing.T) { fn(t, e.market(t, slug, mt)) })
		}
	}
}

// TestOrderLifecycle: on every exchange and market, a limit order rests and shows as open, is amended and
// cancelled; a market order fills; an order beyond the balance gets the spec's message; member b never sees or
// touches member a's order.
func TestOrderLifecycle(t *testing.T) {
	e := newEnv(t, false)
	eachMarket(t, e, func(t *testing.T, m market) {
		ctx := ctxT(t)
		price := m.price(0.7)
		qty := m.qty(price, 1)
		o, err := e.svc.Place(ctx, "a", newKey(), m.limit("BUY", price, qty))
		if err != nil {
			t.Fatalf("place: %v", err)
		}
		if o.State != store.OrderAcknowledged || StatusOf(o) != StatusOpen || o.ExchangeOrderID == "" {
			t.Fatalf("placed %+v", o)
		}
		if n := e.openCIDs(t, "a", m)[o.ClientOrderID]; n != 1 {
			t.Fatalf("the order is %d times among the open orders", n)
		}

		// Member b: not found, whatever the call; b's open orders do not hold it.
		if _, err := e.svc.Order(ctx, "b", o.ID); !errors.Is(err, errOrderNotFound) {
			t.Fatalf("b reads a's order: %v", err)
		}
		if _, _, err := e.svc.Cancel(ctx, "b", o.ID); !errors.Is(err, errOrderNotFound) {
			t.Fatalf("b cancels a's order: %v", err)
		}
		if _, _, err := e.svc.Amend(ctx, "b", o.ID, "", AmendRequest{Price: m.price(0.6)}); !errors.Is(err, errOrderNotFound) {
			t.Fatalf("b amends a's order: %v", err)
		}
		if n := e.openCIDs(t, "b", m)[o.ClientOrderID]; n != 0 {
			t.Fatal("a's order is among b's open orders")
		}

		newPrice := m.price(0.65)
		am, pending, err := e.svc.Amend(ctx, "a", o.ID, newKey(), AmendRequest{Price: newPrice})
		if err != nil || pending {
			t.Fatalf("amend: %v (pending %v)", err, pending)
		}
		if !dec(am.Price).Equal(dec(newPrice)) || StatusOf(am) != StatusOpen {
			t.Fatalf("amended %+v", am)
		}
		list, err := e.svc.OpenOrders(ctx, "a", Scope{Exchange: m.ex.slug, MarketType: m.mt, Symbol: m.symbol})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, x := range list {
			if x.ID == o.ID {
				found = true
				if !dec(x.Price).Equal(dec(newPrice)) {
					t.Fatalf("exchange price after amend %s, want %s", x.Price, newPrice)
				}
			}
		}
		if !found {
			t.Fatalf("amended order not among the open orders: %+v", list)
		}

		c, pending, err := e.svc.Cancel(ctx, "a", o.ID)
		if err != nil || pending || StatusOf(c) != StatusCancelled {
			t.Fatalf("cancel: %+v %v %v", c, pending, err)
		}
		if n := e.openCIDs(t, "a", m)[c.ClientOrderID]; n != 0 {
			t.Fatal("cancelled order still open")
		}
		if again, _, err := e.svc.Cancel(ctx, "a", o.ID); err != nil || StatusOf(again) != StatusCancelled {
			t.Fatalf("second cancel: %+v %v", again, err)
		}

		// A market buy fills.
		mq := m.qty(m.last.String(), 2)
		f, err := e.svc.Place(ctx, "a", newKey(), PlaceRequest{Exchange: m.ex.slug, MarketType: m.mt, Symbol: m.symbol,
			Side: "BUY", Type: "MARKET", Qty: mq})
		if err != nil {
			t.Fatalf("market order: %v", err)
		}
		if StatusOf(f) != StatusFilled {
			e.svc.Reconcile(m.ex.slug)
			f = e.waitStatus(t, f.ID, StatusFilled)
		}
		if m.mt == "SWAP" {
			pos, err := e.svc.Positions(ctx, "a", Scope{Exchange: m.ex.slug, Symbol: m.symbol})
			if err != nil {
				t.Fatal(err)
			}
			var size decimal.Decimal
			for _, p := range pos {
				size = size.Add(dec(p.Qty).Abs())
			}
			if size.LessThan(dec(mq)) {
				t.Fatalf("position after a market buy of %s: %+v", mq, pos)
			}
		}

		// Beyond the balance: the spec's message, and a rejected journal entry.
		bigQty := dec(m.qty(price, 1)).Mul(decimal.NewFromInt(1))
		for bigQty.Mul(dec(price)).LessThan(decimal.NewFromInt(50_000_000)) {
			bigQty = bigQty.Mul(decimal.NewFromInt(10))
		}
		if mx := dec(m.in.GetMaxQty()); mx.IsPositive() && bigQty.GreaterThan(mx) {
			bigQty = mx
		}
		key := newKey()
		_, err = e.svc.Place(ctx, "a", key, m.limit("BUY", price, bigQty.String()))
		pe := wantCode(t, err, "insufficient_funds")
		if pe.Message != MsgInsufficient || pe.Status != http.StatusUnprocessableEntity {
			t.Fatalf("insufficient funds answered %+v", pe)
		}
		// The same request again answers the same refusal from the journal.
		_, err = e.svc.Place(ctx, "a", key, m.limit("BUY", price, bigQty.String()))
		if pe2 := wantCode(t, err, "insufficient_funds"); pe2.Message != MsgInsufficient {
			t.Fatalf("replayed refusal %+v", pe2)
		}
		// Rules checked before sending: a price off the tick grid never reaches the exchange.
		if tick := dec(m.in.GetTickSize()); tick.IsPositive() {
			off := dec(price).Add(tick.Div(decimal.NewFromInt(3))).String()
			_, err = e.svc.Place(ctx, "a", newKey(), m.limit("BUY", off, qty))
			wantCode(t, err, "precision")
		}
	})
}

// TestIdempotencyKey: one key places one order, answered sequentially and concurrently with the same entry; the key
// with another request is refused.
func TestIdempotencyKey(t *testing.T) {
	e := newEnv(t, true)
	eachMarket(t, e, func(t *testing.T, m market) {
		ctx := ctxT(t)
		price := m.price(0.7)
		req := m.limit("BUY", price, m.qty(price, 1))
		key := newKey()
		const n = 6
		ids := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				o, err := e.svc.Place(ctx, "a", key, req)
				if err != nil {
					t.Errorf("place %d: %v", i, err)
					return
				}
				if StatusOf(o) != StatusOpen {
					t.Errorf("place %d answered %s", i, StatusOf(o))
				}
				ids[i] = o.ID
			}()
		}
		wg.Wait()
		for _, id := range ids {
			if id == "" || id != ids[0] {
				t.Fatalf("one key, several answers: %v", ids)
			}
		}
		again, err := e.svc.Place(ctx, "a", key, req)
		if err != nil || again.ID != ids[0] {
			t.Fatalf("sequential repeat: %+v %v", again, err)
		}
		if cids := e.openCIDs(t, "a", m); cids[again.ClientOrderID] != 1 {
			t.Fatalf("open orders by client id: %v", cids)
		}
		list, err := e.st.ListOrders(ctx, "a", store.OrderFilter{Exchange: m.ex.slug, MarketType: m.mt, Symbol: m.symbol})
		if err != nil || len(list) != 1 {
			t.Fatalf("journal entries: %d %v", len(list), err)
		}
		other := req
		other.Qty = m.qty(price, 2)
		_, err = e.svc.Place(ctx, "a", key, other)
		wantCode(t, err, "idempotency_key_reused")
		// Another member's same key is their own.
		if _, err := e.svc.Place(ctx, "b", key, req); err != nil {
			t.Fatalf("member b with the same key: %v", err)
		}
		_, err = e.svc.Place(ctx, "a", "", req)
		wantCode(t, err, "idempotency_key_required")
		if _, _, err := e.svc.Cancel(ctx, "a", ids[0]); err != nil {
			t.Fatal(err)
		}
	})
}

// TestUnknownOutcomeResolves: the emulator loses the answer to the order (executed: pending, then resolved as
// placed, one order on the exchange; not executed: pending, then resolved as not placed once the grace period
// passed, none on the exchange).
func TestUnknownOutcomeResolves(t *testing.T) {
	e := newEnv(t, false)
	var next atomic.Value
	next.Store("")
	e.svc.testClientID = func() string { return next.Swap("").(string) }
	seq := 0
	eachMarket(t, e, func(t *testing.T, m market) {
		ctx := ctxT(t)
		for _, kind := range []faults.Kind{faults.AcceptThenError, faults.AcceptThenDrop, faults.DropBefore} {
			seq++
			cid := fmt.Sprintf("exunk%d%d", time.Now().UnixNano()%1e9, seq)
			if err := faults.Arm(http.DefaultClient, m.ex.faults, cid, kind); err != nil {
				t.Fatalf("arming %s: %v", kind, err)
			}
			next.Store(cid)
			price := m.price(0.7)
			o, err := e.svc.Place(ctx, "a", newKey(), m.limit("BUY", price, m.qty(price, 1)))
			if err != nil {
				t.Fatalf("%s: an unknown outcome must not be an error: %v", kind, err)
			}
			if o.ClientOrderID != cid || StatusOf(o) != StatusPending {
				t.Fatalf("%s: answered %+v, want pending with client id %s", kind, o, cid)
			}
			if kind.Executes() {
				r := e.waitStatus(t, o.ID, StatusOpen)
				if r.ExchangeOrderID == "" {
					t.Fatalf("%s: resolved without an exchange id: %+v", kind, r)
				}
				if n := e.openCIDs(t, "a", m)[cid]; n != 1 {
					t.Fatalf("%s: %d orders on the exchange", kind, n)
				}
				if _, _, err := e.svc.Cancel(ctx, "a", o.ID); err != nil {
					t.Fatal(err)
				}
			} else {
				r := e.waitStatus(t, o.ID, StatusNotPlaced)
				if r.ExchangeOrderID != "" {
					t.Fatalf("%s: %+v", kind, r)
				}
				if n := e.openCIDs(t, "a", m)[cid]; n != 0 {
					t.Fatalf("%s: %d orders on the exchange", kind, n)
				}
			}
		}
	})
}

// TestPluginKilledMidOrder: the plugin dies after the order reached the exchange and before the answer came back;
// the order is pending, never failed, and after the restart it is resolved as exactly one open order.
func TestPluginKilledMidOrder(t *testing.T) {
	e := newEnv(t, false)
	var next atomic.Value
	next.Store("")
	e.svc.testClientID = func() string { return next.Swap("").(string) }
	for _, slug := range []string{"binance", "okx"} {
		for _, mt := range []string{"SPOT", "SWAP"} {
			t.Run(slug+"/"+mt, func(t *testing.T) {
				m := e.market(t, slug, mt)
				ctx := ctxT(t)
				cid := fmt.Sprintf("exkill%d", time.Now().UnixNano()%1e12)
				next.Store(cid)
				arrived, release := m.ex.gate.arm(cid)
				sup, _ := e.host.Get(slug)
				before := sup.Status()
				type res struct {
					o   store.Order
					err error
				}
				done := make(chan res, 1)
				price := m.price(0.7)
				go func() { // ends when Place returns, which the kill below causes
					o, err := e.svc.Place(ctx, "a", newKey(), m.limit("BUY", price, m.qty(price, 1)))
					done <- res{o, err}
				}()
				select {
				case <-arrived:
				case <-time.After(wait):
					t.Fatal("the order never reached the emulator")
				}
				if err := syscall.Kill(before.Pid, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				r := <-done
				close(release) // the emulator now executes the request whose answer nobody reads
				if r.err != nil || StatusOf(r.o) != StatusPending {
					t.Fatalf("place on a killed plugin: %+v %v, want pending", r.o, r.err)
				}
				eventually(t, "plugin restarted", func() (string, bool) {
					st := sup.Status()
					return fmt.Sprint(st.State, st.Pid), st.State == "running" && st.Pid != before.Pid
				})
				o := e.waitStatus(t, r.o.ID, StatusOpen)
				if n := e.openCIDs(t, "a", m)[cid]; n != 1 {
					t.Fatalf("%d orders with the client id on the exchange", n)
				}
				list, _ := e.st.ListOrders(ctx, "a", store.OrderFilter{Exchange: slug, MarketType: mt, Symbol: m.symbol, Open: true})
				if len(list) != 1 || list[0].ID != o.ID {
					t.Fatalf("journal open entries %+v", list)
				}
				if _, _, err := e.svc.Cancel(ctx, "a", o.ID); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestRestartReconciles: an entry left in state sent by a crash (the order did reach the exchange) and an order
// filled or cancelled while the BFF was down are brought in line by a new service at start.
func TestRestartReconciles(t *testing.T) {
	e := newEnv(t, false)
	m := e.market(t, "binance", "SWAP")
	ctx := ctxT(t)
	price := m.price(0.7)
	resting, err := e.svc.Place(ctx, "a", newKey(), m.limit("BUY", price, m.qty(price, 1)))
	if err != nil {
		t.Fatal(err)
	}
	e.stopLoop()

	// While the BFF is down: the resting order is cancelled on the exchange directly, and a crash left an intent
	// in state sent whose order the exchange did take.
	sup, _ := e.host.Get("binance")
	acct, _ := e.acc.AccountRef(ctx, "a", "binance")
	pm := exchangev1.MarketType_MARKET_TYPE_SWAP
	if err := sup.Call(ctx, "CancelOrder", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		_, err := c.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: acct, MarketType: pm, Symbol: m.symbol, ClientOrderId: resting.ClientOrderID})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	crashed, _, err := e.st.CreateOrder(ctx, store.Order{MemberID: "a", AccountID: acct.GetAccountId(), Exchange: "binance",
		MarketType: "SWAP", Symbol: m.symbol, Kind: store.OrderKindOrder, Side: "BUY", Type: "LIMIT", TimeInForce: "GTC",
		Price: price, Qty: m.qty(price, 1), ClientOrderID: fmt.Sprintf("excrash%d", time.Now().UnixNano()%1e12)})
	if err != nil {
		t.Fatal(err)
	}
	if err := sup.Call(ctx, "PlaceOrder", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		_, err := c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: acct, MarketType: pm, Symbol: m.symbol,
			Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, TimeInForce: exchangev1.TimeInForce_TIME_IN_FORCE_GTC,
			Price: crashed.Price, Qty: crashed.Qty, ClientOrderId: crashed.ClientOrderID})
		return err
	}); err != nil {
		t.Fatal(err)
	}

	// A new service (its clock past SentStale, as after a restart some time later) reconciles at start.
	cfg := e.svc.cfg
	svc, err := New(cfg, e.st, e.host, e.acc, WithClock(func() time.Time { return time.Now().Add(cfg.SentStale.D() + time.Second) }))
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	e.start()
	if o := e.waitStatus(t, resting.ID, StatusCancelled); o.State != store.OrderAcknowledged {
		t.Fatalf("resting order after restart %+v", o)
	}
	if o := e.waitStatus(t, crashed.ID, StatusOpen); o.ExchangeOrderID == "" {
		t.Fatalf("crashed intent after restart %+v", o)
	}
}

// TestNoAccount: a member without an account on the exchange is told so; nothing is journaled.
func TestNoAccount(t *testing.T) {
	e := newEnv(t, false)
	m := e.market(t, "reference", "SPOT")
	price := m.price(0.7)
	_, err := e.svc.Place(ctxT(t), "nobody", newKey(), m.limit("BUY", price, m.qty(price, 1)))
	wantCode(t, err, "no_account")
	if list, _ := e.st.ListOrders(ctxT(t), "nobody", store.OrderFilter{}); len(list) != 0 {
		t.Fatalf("journaled %+v", list)
	}
}

// TestHedgeModeExplained: on each exchange's perpetuals, an account in hedge mode that sends an order without a
// position side is told what to choose; with one the order goes through.
func TestHedgeModeExplained(t *testing.T) {
	e := newEnv(t, false)
	for _, slug := range []string{"reference", "binance", "okx"} {
		t.Run(slug, func(t *testing.T) {
			m := e.market(t, slug, "SWAP")
			ctx := ctxT(t)
			sc := Scope{Exchange: slug}
			if err := e.svc.SetPositionMode(ctx, "b", sc, "HEDGE"); err != nil {
				t.Fatalf("hedge mode: %v", err)
			}
			t.Cleanup(func() { _ = e.svc.SetPositionMode(context.Background(), "b", sc, "ONE_WAY") })
			if mode, err := e.svc.PositionMode(ctx, "b", sc); err != nil || mode != "HEDGE" {
				t.Fatalf("mode %s %v", mode, err)
			}
			if mode, err := e.svc.PositionMode(ctx, "a", sc); err != nil || mode == "HEDGE" {
				t.Fatalf("a's mode changed with b's: %s %v", mode, err)
			}
			price := m.price(0.7)
			_, err := e.svc.Place(ctx, "b", newKey(), m.limit("BUY", price, m.qty(price, 1)))
			pe := wantCode(t, err, "position_mode_mismatch")
			if !strings.Contains(pe.Message, "hedge mode") || !strings.Contains(pe.Message, "Open Long/Short") {
				t.Fatalf("mismatch explained as %q", pe.Message)
			}
			req := m.limit("BUY", price, m.qty(price, 1))
			req.PositionSide = "LONG"
			o, err := e.svc.Place(ctx, "b", newKey(), req)
			if err != nil || StatusOf(o) != StatusOpen {
				t.Fatalf("with a position side: %+v %v", o, err)
			}
			if _, _, err := e.svc.Cancel(ctx, "b", o.ID); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestReduceOnlyRefusesToGrow: a reduce-only order on a flat account is refused on every exchange's perpetuals and
// opens no position.
func TestReduceOnlyRefusesToGrow(t *testing.T) {
	e := newEnv(t, false)
	for _, slug := range []string{"reference", "binance", "okx"} {
		t.Run(slug, func(t *testing.T) {
			m := e.market(t, slug, "SWAP")
			ctx := ctxT(t)
			req := PlaceRequest{Exchange: slug, MarketType: "SWAP", Symbol: m.symbol, Side: "SELL", Type: "MARKET",
				Qty: m.qty(m.last.String(), 1), ReduceOnly: true}
			_, err := e.svc.Place(ctx, "b", newKey(), req)
			pe := wantCode(t, err, "order_rejected")
			if pe.Status != http.StatusUnprocessableEntity || !strings.HasPrefix(pe.Message, "The exchange refused the order") {
				t.Fatalf("reduce-only on a flat account: %+v", pe)
			}
			pos, err := e.svc.Positions(ctx, "b", Scope{Exchange: slug, Symbol: m.symbol})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pos {
				if !dec(p.Qty).IsZero() {
					t.Fatalf("a reduce-only order opened a position: %+v", pos)
				}
			}
		})
	}
}
