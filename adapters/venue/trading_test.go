package venue

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

var t0 = time.Date(2026, 11, 2, 7, 0, 0, 0, time.UTC)

// testInstruments are two small instruments with round numbers: tick 0.1, step 0.01.
func testInstruments(t testing.TB) []*Instrument {
	t.Helper()
	spot := &Instrument{ID: "TST/USDT", Market: Spot, Base: "TST", Quote: "USDT", TickSize: d("0.1"), StepSize: d("0.01"),
		MinQty: d("0.01"), MaxQty: d("1000"), MinNotional: d("1"), MinPrice: d("0.1"), MaxPrice: d("100000"),
		MakerFee: d("0.001"), TakerFee: d("0.002"), RefPrice: d("100")}
	perp := &Instrument{ID: "TST/USDT:PERP", Market: Perp, Base: "TST", Quote: "USDT", TickSize: d("0.1"),
		StepSize: d("0.01"), MinQty: d("0.01"), MaxQty: d("1000"), MinNotional: d("1"), MinPrice: d("0.1"),
		MaxPrice: d("100000"), MakerFee: d("0.0002"), TakerFee: d("0.0005"), RefPrice: d("100"), MaxLeverage: 50,
		Tiers: []MarginTier{{MaxNotional: d("10000"), MaintRate: d("0.01"), MaxLeverage: 50},
			{MaxNotional: d("1000000"), MaintRate: d("0.05"), MaintAmount: d("400"), MaxLeverage: 10}}}
	for _, in := range []*Instrument{spot, perp} {
		if err := in.Init(); err != nil {
			t.Fatal(err)
		}
	}
	return []*Instrument{spot, perp}
}

type fixture struct {
	t     testing.TB
	v     *Venue
	clock *ManualClock
	ctx   context.Context
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	clock := NewManualClock(t0)
	v, err := New(Config{Instruments: testInstruments(t), Clock: clock, StepInterval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, v: v, clock: clock, ctx: context.Background()}
	t.Cleanup(func() { f.checkInvariants(); v.Close() })
	return f
}

// fund creates an account with trading balances.
func (f *fixture) fund(acct string, usdt, tst string) {
	f.t.Helper()
	if err := f.v.CreateAccount(acct); err != nil {
		f.t.Fatal(err)
	}
	for asset, amt := range map[string]string{"USDT": usdt, "TST": tst} {
		if amt == "" || amt == "0" {
			continue
		}
		if _, err := f.v.Deposit(f.ctx, acct, asset, d(amt)); err != nil {
			f.t.Fatal(err)
		}
		if _, err := f.v.Transfer(f.ctx, acct, asset, d(amt), Funding, TradingWallet); err != nil {
			f.t.Fatal(err)
		}
	}
}

func (f *fixture) place(r OrderRequest) Order {
	f.t.Helper()
	o, err := f.v.Place(f.ctx, r)
	if err != nil {
		f.t.Fatalf("place %+v: %v", r, err)
	}
	return o
}

func (f *fixture) limit(acct, inst string, side Side, price, qty string) Order {
	f.t.Helper()
	return f.place(OrderRequest{Account: acct, Instrument: inst, Side: side, Type: Limit, Price: d(price), Qty: d(qty)})
}

func (f *fixture) bal(acct, asset string) Balance {
	f.t.Helper()
	bs, err := f.v.Balances(acct, TradingWallet)
	if err != nil {
		f.t.Fatal(err)
	}
	for _, b := range bs {
		if b.Asset == asset {
			return b
		}
	}
	return Balance{Asset: asset}
}

func (f *fixture) order(acct string, id uint64) Order {
	f.t.Helper()
	o, err := f.v.GetOrder(acct, id, "")
	if err != nil {
		f.t.Fatal(err)
	}
	return o
}

func eq(t testing.TB, what string, got decimal.Decimal, want string) {
	t.Helper()
	if !got.Equal(d(want)) {
		t.Fatalf("%s = %s, want %s", what, got, want)
	}
}

// checkInvariants asserts the properties every state must have: no negative user balance or lock, locks equal to
// what open orders and isolated positions hold, zero-sum ledger per asset, uncrossed books.
func (f *fixture) checkInvariants() {
	f.t.Helper()
	checkVenueInvariants(f.t, f.v)
}

func checkVenueInvariants(t testing.TB, v *Venue) {
	t.Helper()
	for asset, sum := range v.AssetTotals() {
		if !sum.IsZero() {
			t.Fatalf("ledger for %s sums to %s", asset, sum)
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, a := range v.accounts {
		if a.house {
			continue
		}
		want := map[string]decimal.Decimal{}
		for _, o := range a.open {
			if o.status.Final() {
				t.Fatalf("%s: final order %d still open", a.id, o.id)
			}
			if o.lock.IsPositive() {
				want[o.lockAsset] = want[o.lockAsset].Add(o.lock)
			}
			if o.filled > o.qty {
				t.Fatalf("order %d overfilled", o.id)
			}
		}
		for _, p := range a.positions {
			want[p.inst.in.Quote] = want[p.inst.in.Quote].Add(p.margin)
		}
		for _, w := range []Wallet{Funding, TradingWallet} {
			for asset, b := range a.wallets[w] {
				if b.total.IsNegative() || b.locked.IsNegative() || b.locked.GreaterThan(b.total) {
					t.Fatalf("%s %s %s: total %s locked %s", a.id, w, asset, b.total, b.locked)
				}
				if w == TradingWallet && !b.locked.Equal(want[asset]) {
					t.Fatalf("%s %s locked %s, orders and positions hold %s", a.id, asset, b.locked, want[asset])
				}
			}
		}
		for _, o := range a.closed.last(0) {
			if o.status == StatusCanceled && o.filled == o.qty && o.qty > 0 {
				t.Fatalf("order %d both filled and cancelled", o.id)
			}
		}
	}
	for _, st := range v.list {
		if st.book.Crossed() {
			t.Fatalf("%s book crossed", st.in.ID)
		}
		for _, s := range []*bookSide{&st.book.bids, &st.book.asks} {
			for i, l := range s.levels {
				var sum int64
				n := 0
				for o := l.head; o != nil; o = o.next {
					sum += o.remaining()
					n++
				}
				if sum != l.total || n != l.count || n == 0 {
					t.Fatalf("%s level %d: total %d count %d, orders sum %d count %d", st.in.ID, l.price, l.total, l.count, sum, n)
				}
				if i > 0 && !s.better(l.price, s.levels[i-1].price) {
					t.Fatalf("%s levels out of order", st.in.ID)
				}
			}
		}
	}
}

const spot, perp = "TST/USDT", "TST/USDT:PERP"

func TestSpotLimitRestsLocksAndFills(t *testing.T) {
	f := newFixture(t)
	f.fund("alice", "1000", "")
	f.fund("bob", "", "10")
	buy := f.limit("alice", spot, Buy, "100", "2")
	if buy.Status != StatusNew {
		t.Fatalf("status %s", buy.Status)
	}
	eq(t, "alice locked", f.bal("alice", "USDT").Locked, "200")
	// Bob sells 1.5 at 99.9: trades at the resting price 100 (price improvement for the taker).
	sell := f.limit("bob", spot, Sell, "99.9", "1.5")
	if sell.Status != StatusFilled || !sell.AvgPrice.Equal(d("100")) {
		t.Fatalf("sell %s avg %s", sell.Status, sell.AvgPrice)
	}
	b := f.order("alice", buy.ID)
	if b.Status != StatusPartiallyFilled || !b.Filled.Equal(d("1.5")) {
		t.Fatalf("buy %s filled %s", b.Status, b.Filled)
	}
	// Alice paid 150, still locks 50; received 1.5 minus the 0.1% maker fee in base.
	eq(t, "alice usdt", f.bal("alice", "USDT").Total, "850")
	eq(t, "alice locked", f.bal("alice", "USDT").Locked, "50")
	eq(t, "alice tst", f.bal("alice", "TST").Total, "1.4985")
	// Bob got 150 minus the 0.2% taker fee in quote.
	eq(t, "bob usdt", f.bal("bob", "USDT").Total, "149.7")
	eq(t, "bob tst", f.bal("bob", "TST").Total, "8.5")
	fees, _ := f.v.Balances(AccountFees, TradingWallet)
	if len(fees) != 2 {
		t.Fatalf("fees %v", fees)
	}
	trades, _ := f.v.RecentTrades(spot, 10)
	if len(trades) != 1 || trades[0].TakerSide != Sell || !trades[0].Qty.Equal(d("1.5")) {
		t.Fatalf("trades %+v", trades)
	}
}

func TestPriceTimePriority(t *testing.T) {
	f := newFixture(t)
	f.fund("a", "1000", "")
	f.fund("b", "1000", "")
	f.fund("c", "", "10")
	first := f.limit("a", spot, Buy, "100", "1")
	second := f.limit("b", spot, Buy, "100", "1")
	better := f.limit("b", spot, Buy, "100.1", "1")
	f.place(OrderRequest{Account: "c", Instrument: spot, Side: Sell, Type: Market, Qty: d("1.5")})
	if f.order("b", better.ID).Status != StatusFilled {
		t.Fatal("best price must fill first")
	}
	if o := f.order("a", first.ID); !o.Filled.Equal(d("0.5")) {
		t.Fatalf("earlier order at the level fills next, got %s", o.Filled)
	}
	if o := f.order("b", second.ID); !o.Filled.IsZero() {
		t.Fatalf("later order must wait, got %s", o.Filled)
	}
}

func TestTimeInForceAndMarket(t *testing.T) {
	f := newFixture(t)
	f.fund("a", "10000", "100")
	f.fund("m", "10000", "100")
	f.limit("m", spot, Sell, "101", "1")
	f.limit("m", spot, Sell, "102", "1")
	// IOC takes what crosses and expires the rest.
	ioc := f.place(OrderRequest{Account: "a", Instrument: spot, Side: Buy, Type: Limit, TIF: IOC, Price: d("101"), Qty: d("3")})
	if ioc.Status != StatusExpired || !ioc.Filled.Equal(d("1")) {
		t.Fatalf("ioc %s %s", ioc.Status, ioc.Filled)
	}
	eq(t, "ioc lock released", f.bal("a", "USDT").Locked, "0")
	// FOK that cannot fill completely does nothing.
	fok := f.place(OrderRequest{Account: "a", Instrument: spot, Side: Buy, Type: Limit, TIF: FOK, Price: d("105"), Qty: d("2")})
	if fok.Status != StatusExpired || !fok.Filled.IsZero() {
		t.Fatalf("fok %s %s", fok.Status, fok.Filled)
	}
	// Post-only that would cross expires; one that would not rests.
	po := f.place(OrderRequest{Account: "a", Instrument: spot, Side: Buy, Type: Limit, TIF: PostOnly, Price: d("102"), Qty: d("1")})
	if po.Status != StatusExpired {
		t.Fatalf("post-only crossing %s", po.Status)
	}
	po = f.place(OrderRequest{Account: "a", Instrument: spot, Side: Buy, Type: Limit, TIF: PostOnly, Price: d("101.9"), Qty: d("1")})
	if po.Status != StatusNew {
		t.Fatalf("post-only resting %s", po.Status)
	}
	// FOK that can fill does.
	fok = f.place(OrderRequest{Account: "m", Instrument: spot, Side: Sell, Type: Limit, TIF: FOK, Price: d("101.9"), Qty: d("1")})
	if fok.Status != StatusFilled {
		t.Fatalf("fok %s", fok.Status)
	}
	// Market buy sized in quote spends at most the quote amount.
	mq := f.place(OrderRequest{Account: "a", Instrument: spot, Side: Buy, Type: Market, QuoteQty: d("51")})
	if mq.Status != StatusFilled || !mq.Filled.Equal(d("0.5")) || !mq.CumQuote.Equal(d("51")) {
		t.Fatalf("quote market %s filled %s cost %s", mq.Status, mq.Filled, mq.CumQuote)
	}
	// Market order larger than the book: fills what exists, the rest expires.
	mk := f.place(OrderRequest{Account: "a", Instrument: spot, Side: Buy, Type: Market, Qty: d("5")})
	if mk.Status != StatusExpired || !mk.Filled.Equal(d("0.5")) {
		t.Fatalf("market %s %s", mk.Status, mk.Filled)
	}
	// Market buy without the funds is refused.
	f.limit("m", spot, Sell, "200", "90")
	if _, err := f.v.Place(f.ctx, OrderRequest{Account: "a", Instrument: spot, Side: Buy, Type: Market, Qty: d("99")}); !errors.Is(err, ErrInsufficientFunds) {
		t.Fatalf("want insufficient funds, got %v", err)
	}
	// Limit without funds.
	if _, err := f.v.Place(f.ctx, OrderRequest{Account: "a", Instrument: spot, Side: Sell, Type: Limit, Price: d("300"), Qty: d("1000")}); !errors.Is(err, ErrInsufficientFunds) {
		t.Fatalf("want insufficient funds, got %v", err)
	}
}

func TestValidation(t *testing.T) {
	f := newFixture(t)
	f.fund("a", "1000", "")
	cases := []struct {
		r    OrderRequest
		want error
	}{
		{OrderRequest{Account: "a", Instrument: spot, Side: Buy, Type: Limit, Price: d("100.05"), Qty: d("1")}, ErrPrecision},
		{OrderRequest{Account: "a", Instrument: spot, Side: Buy, Type: Limit, Price: d("100"), Qty: d("1.001")}, ErrPrecision},
		{OrderRequest{Account: "a", Instrument: spot, Side: Buy, Type: Limit, Price: d("100"), Qty: d("5000")}, ErrOutOfRange},
		{OrderRequest{Account: "a", Instrument: spot, Side: Buy, Type: Limit, Price: d("0.1"), Qty: d("1")}, ErrMinNotional},
		{OrderRequest{Account: "a", Instrument: spot, Side: Buy, Type: Market, Price: d("100"), Qty: d("1")}, ErrInvalidOrder},
		{OrderRequest{Account: "a", Instrument: spot, Side: Buy, Type: Limit, Price: d("100"), Qty: d("1"), ReduceOnly: true}, ErrInvalidOrder},
		{OrderRequest{Account: "a", Instrument: "NOPE", Side: Buy, Type: Limit, Price: d("100"), Qty: d("1")}, ErrInstrument},
		{OrderRequest{Account: "zed", Instrument: spot, Side: Buy, Type: Limit, Price: d("100"), Qty: d("1")}, ErrUnknownAccount},
		{OrderRequest{Account: AccountHouse, Instrument: spot, Side: Buy, Type: Limit, Price: d("100"), Qty: d("1")}, ErrUnknownAccount},
		{OrderRequest{Account: "a", Instrument: perp, Side: Buy, Type: Limit, Price: d("100"), Qty: d("1"), PositionSide: PosLong}, ErrPositionSide},
		{OrderRequest{Account: "a", Instrument: perp, Side: Sell, Type: Market, Qty: d("1"), ReduceOnly: true}, ErrReduceOnly},
	}
	for i, c := range cases {
		if _, err := f.v.Place(f.ctx, c.r); !errors.Is(err, c.want) {
			t.Errorf("case %d: got %v, want %v", i, err, c.want)
		}
	}
	if err := f.v.SetStatus(spot, Halted); err != nil {
		t.Fatal(err)
	}
	if _, err := f.v.Place(f.ctx, OrderRequest{Account: "a", Instrument: spot, Side: Buy, Type: Limit, Price: d("100"), Qty: d("1")}); !errors.Is(err, ErrNotTrading) {
		t.Fatalf("halted: %v", err)
	}
	_ = f.v.SetStatus(spot, Trading)
	open, _ := f.v.OpenOrders("a", "")
	if len(open) != 0 {
		t.Fatalf("rejected orders left behind: %v", open)
	}
}

func TestSelfTradePrevention(t *testing.T) {
	for _, c := range []struct {
		mode                     STPMode
		makerStatus, takerStatus OrderStatus
		takerFilled              string
	}{
		{STPExpireTaker, StatusNew, StatusExpired, "0"},
		{STPExpireMaker, StatusExpired, StatusFilled, "1"},
		{STPExpireBoth, StatusExpired, StatusExpired, "0"},
		{STPNone, StatusFilled, StatusFilled, "1"},
	} {
		f := newFixture(t)
		f.fund("a", "10000", "10")
		f.fund("b", "", "10")
		maker := f.limit("a", spot, Sell, "100", "1")
		f.limit("b", spot, Sell, "100.5", "1")
		taker := f.place(OrderRequest{Account: "a", Instrument: spot, Side: Buy, Type: Limit, Price: d("101"), Qty: d("1"), STP: c.mode})
		if got := f.order("a", maker.ID).Status; got != c.makerStatus {
			t.Errorf("mode %d: maker %s want %s", c.mode, got, c.makerStatus)
		}
		if taker.Status != c.takerStatus || !taker.Filled.Equal(d(c.takerFilled)) {
			t.Errorf("mode %d: taker %s filled %s", c.mode, taker.Status, taker.Filled)
		}
		f.checkInvariants()
	}
}

func TestAmendPriority(t *testing.T) {
	f := newFixture(t)
	f.fund("a", "10000", "")
	f.fund("b", "10000", "")
	f.fund("c", "", "100")
	a := f.limit("a", spot, Buy, "100", "2")
	b := f.limit("b", spot, Buy, "100", "2")
	// Decreasing a's quantity keeps its place at the head.
	if _, err := f.v.Amend(f.ctx, "a", spot, a.ID, "", decimal.Zero, d("1"), decimal.Zero); err != nil {
		t.Fatal(err)
	}
	eq(t, "a lock after decrease", f.bal("a", "USDT").Locked, "100")
	f.place(OrderRequest{Account: "c", Instrument: spot, Side: Sell, Type: Market, Qty: d("0.5")})
	if o := f.order("a", a.ID); !o.Filled.Equal(d("0.5")) {
		t.Fatalf("a keeps priority: filled %s", o.Filled)
	}
	// Re-pricing b and back loses priority behind a... a is ahead anyway; re-price a away and back: now b is first.
	if _, err := f.v.Amend(f.ctx, "a", spot, a.ID, "", d("99.9"), decimal.Zero, decimal.Zero); err != nil {
		t.Fatal(err)
	}
	if _, err := f.v.Amend(f.ctx, "a", spot, a.ID, "", d("100"), decimal.Zero, decimal.Zero); err != nil {
		t.Fatal(err)
	}
	f.place(OrderRequest{Account: "c", Instrument: spot, Side: Sell, Type: Market, Qty: d("1")})
	if o := f.order("b", b.ID); !o.Filled.Equal(d("1")) {
		t.Fatalf("b first after a re-priced: filled %s", o.Filled)
	}
	if o := f.order("a", a.ID); !o.Filled.Equal(d("0.5")) {
		t.Fatalf("a waits: filled %s", o.Filled)
	}
	// Amending to a crossing price trades.
	f.limit("c", spot, Sell, "105", "1")
	am, err := f.v.Amend(f.ctx, "a", spot, a.ID, "", d("105"), decimal.Zero, decimal.Zero)
	if err != nil || am.Status != StatusFilled {
		t.Fatalf("amend across: %v %v", am.Status, err)
	}
	// Quantity at or below filled is refused.
	if _, err := f.v.Amend(f.ctx, "b", spot, b.ID, "", decimal.Zero, d("1"), decimal.Zero); !errors.Is(err, ErrInvalidOrder) {
		t.Fatalf("amend below filled: %v", err)
	}
	// Increasing beyond funds is refused and leaves the order as it was.
	if _, err := f.v.Amend(f.ctx, "b", spot, b.ID, "", decimal.Zero, d("500"), decimal.Zero); !errors.Is(err, ErrInsufficientFunds) {
		t.Fatalf("amend beyond funds: %v", err)
	}
	if o := f.order("b", b.ID); !o.Qty.Equal(d("2")) || !o.Price.Equal(d("100")) {
		t.Fatalf("failed amend changed the order: %+v", o)
	}
}

func TestCancelAndClientIDs(t *testing.T) {
	f := newFixture(t)
	f.fund("a", "10000", "")
	o := f.place(OrderRequest{Account: "a", Instrument: spot, ClientID: "x1", Side: Buy, Type: Limit, Price: d("90"), Qty: d("1")})
	again, err := f.v.Place(f.ctx, OrderRequest{Account: "a", Instrument: spot, ClientID: "x1", Side: Buy, Type: Limit, Price: d("90"), Qty: d("1")})
	if !errors.Is(err, ErrDuplicateClientID) || again.ID != o.ID {
		t.Fatalf("duplicate client id: %v %d", err, again.ID)
	}
	open, _ := f.v.OpenOrders("a", spot)
	if len(open) != 1 {
		t.Fatalf("open %d", len(open))
	}
	c, err := f.v.Cancel(f.ctx, "a", spot, 0, "x1")
	if err != nil || c.Status != StatusCanceled {
		t.Fatalf("cancel %v %v", c.Status, err)
	}
	if _, err := f.v.Cancel(f.ctx, "a", spot, o.ID, ""); !errors.Is(err, ErrOrderNotFound) {
		t.Fatalf("second cancel: %v", err)
	}
	eq(t, "unlocked", f.bal("a", "USDT").Locked, "0")
	// The id of an order that has ended may be used again: a new order, as on the real exchanges.
	reused, err := f.v.Place(f.ctx, OrderRequest{Account: "a", Instrument: spot, ClientID: "x1", Side: Buy, Type: Limit, Price: d("89"), Qty: d("1")})
	if err != nil || reused.ID == o.ID {
		t.Fatalf("client id of a cancelled order reused: %v %d", err, reused.ID)
	}
	if got, err := f.v.GetOrder("a", 0, "x1"); err != nil || got.ID != reused.ID {
		t.Fatalf("GetOrder by a reused client id: %v %d, want the newest %d", err, got.ID, reused.ID)
	}
	if _, err := f.v.Cancel(f.ctx, "a", spot, reused.ID, ""); err != nil {
		t.Fatal(err)
	}
	f.limit("a", spot, Buy, "90", "1")
	f.limit("a", spot, Buy, "91", "1")
	all, err := f.v.CancelAll(f.ctx, "a", "")
	if err != nil || len(all) != 2 {
		t.Fatalf("cancel all %d %v", len(all), err)
	}
	hist, _ := f.v.OrderHistory("a", spot, 0)
	if len(hist) != 4 {
		t.Fatalf("history %d", len(hist))
	}
	snap, _ := f.v.BookSnapshot(spot, 0)
	if len(snap.Bids) != 0 {
		t.Fatalf("book not empty: %+v", snap)
	}
}

func TestConditionalOrders(t *testing.T) {
	f := newFixture(t)
	f.fund("a", "10000", "10")
	f.fund("m", "10000", "100")
	// Stop-market sell at 95 on the last price; locks the base now.
	stop := f.place(OrderRequest{Account: "a", Instrument: spot, Side: Sell, Type: StopMarket, StopPrice: d("95"), Qty: d("1")})
	if stop.Status != StatusUntriggered {
		t.Fatalf("stop %s", stop.Status)
	}
	eq(t, "stop locks base", f.bal("a", "TST").Locked, "1")
	if _, err := f.v.Place(f.ctx, OrderRequest{Account: "a", Instrument: spot, Side: Sell, Type: StopMarket, StopPrice: d("105"), Qty: d("1")}); !errors.Is(err, ErrWouldTrigger) {
		t.Fatalf("immediate trigger: %v", err)
	}
	f.limit("m", spot, Buy, "94", "5")
	// A trade at 95 triggers it: m sells to its own... use a third party to print 95.
	f.fund("p", "1000", "10")
	f.limit("p", spot, Buy, "95", "1")
	f.place(OrderRequest{Account: "m", Instrument: spot, Side: Sell, Type: Market, Qty: d("1")})
	got := f.order("a", stop.ID)
	if got.Status != StatusFilled || got.Type != Market || got.OrigType != StopMarket || !got.AvgPrice.Equal(d("94")) {
		t.Fatalf("stop after trigger: %+v", got)
	}
	// Perpetual take-profit on the mark price.
	f.limit("m", perp, Sell, "100", "1")
	f.place(OrderRequest{Account: "a", Instrument: perp, Side: Buy, Type: Market, Qty: d("1")})
	tp := f.place(OrderRequest{Account: "a", Instrument: perp, Side: Sell, Type: TakeProfitMarket, StopPrice: d("110"),
		TriggerBy: TriggerMark, ClosePosition: true})
	f.limit("m", perp, Buy, "109", "5")
	if err := f.v.SetMarkPrice(perp, d("109.9")); err != nil {
		t.Fatal(err)
	}
	if f.order("a", tp.ID).Status != StatusUntriggered {
		t.Fatal("tp fired early")
	}
	if err := f.v.SetMarkPrice(perp, d("110")); err != nil {
		t.Fatal(err)
	}
	got = f.order("a", tp.ID)
	if got.Status != StatusFilled || !got.Filled.Equal(d("1")) {
		t.Fatalf("tp: %+v", got)
	}
	pos, _ := f.v.Positions("a")
	if len(pos) != 0 {
		t.Fatalf("close-position left %+v", pos)
	}
}

func TestPerpOneWay(t *testing.T) {
	f := newFixture(t)
	f.fund("a", "1000", "")
	f.fund("m", "100000", "")
	if err := f.v.SetLeverage("a", perp, 10); err != nil {
		t.Fatal(err)
	}
	if err := f.v.SetLeverage("a", perp, 51); !errors.Is(err, ErrLeverage) {
		t.Fatalf("leverage above max: %v", err)
	}
	f.limit("m", perp, Sell, "100", "10")
	// 10 TST at 100 with 10x needs 100 margin + 0.5 fee.
	o := f.place(OrderRequest{Account: "a", Instrument: perp, Side: Buy, Type: Market, Qty: d("10")})
	if o.Status != StatusFilled {
		t.Fatalf("open %s", o.Status)
	}
	eq(t, "taker fee paid", f.bal("a", "USDT").Total, "999.5")
	if _, err := f.v.Place(f.ctx, OrderRequest{Account: "a", Instrument: perp, Side: Buy, Type: Limit, Price: d("100"), Qty: d("100")}); !errors.Is(err, ErrInsufficientFunds) {
		t.Fatalf("over-leveraged order: %v", err)
	}
	if err := f.v.SetMarginMode("a", perp, true); !errors.Is(err, ErrModeChange) {
		t.Fatalf("margin mode with position: %v", err)
	}
	if err := f.v.SetPositionMode("a", true); !errors.Is(err, ErrModeChange) {
		t.Fatalf("position mode with position: %v", err)
	}
	f.v.SetMarkPrice(perp, d("105"))
	pos, _ := f.v.Positions("a")
	if len(pos) != 1 || !pos[0].Qty.Equal(d("10")) || !pos[0].UnrealizedPnL.Equal(d("50")) || !pos[0].EntryPrice.Equal(d("100")) {
		t.Fatalf("position %+v", pos)
	}
	// Reduce-only larger than the position is clamped for market orders and the position flips never.
	f.limit("m", perp, Buy, "106", "20")
	r := f.place(OrderRequest{Account: "a", Instrument: perp, Side: Sell, Type: Market, Qty: d("15"), ReduceOnly: true})
	if !r.Filled.Equal(d("10")) {
		t.Fatalf("reduce-only filled %s", r.Filled)
	}
	fills, _ := f.v.Fills("a", perp, 1)
	eq(t, "realized pnl", fills[0].RealizedPnL, "60")
	// 1000 - 0.5 (open fee) + 60 - 0.53 (close fee)
	eq(t, "balance", f.bal("a", "USDT").Total, "1058.97")
	pos, _ = f.v.Positions("a")
	if len(pos) != 0 {
		t.Fatalf("position left %+v", pos)
	}
	// A plain opposite order flips: sell 5 from flat opens a short.
	f.place(OrderRequest{Account: "a", Instrument: perp, Side: Sell, Type: Market, Qty: d("5")})
	pos, _ = f.v.Positions("a")
	if len(pos) != 1 || !pos[0].Qty.Equal(d("-5")) {
		t.Fatalf("short %+v", pos)
	}
}

func TestPerpHedgeMode(t *testing.T) {
	f := newFixture(t)
	f.fund("a", "10000", "")
	f.fund("m", "100000", "")
	if err := f.v.SetPositionMode("a", true); err != nil {
		t.Fatal(err)
	}
	f.limit("m", perp, Sell, "100", "10")
	f.limit("m", perp, Buy, "99", "10")
	if _, err := f.v.Place(f.ctx, OrderRequest{Account: "a", Instrument: perp, Side: Buy, Type: Market, Qty: d("1")}); !errors.Is(err, ErrPositionSide) {
		t.Fatalf("hedge without side: %v", err)
	}
	f.place(OrderRequest{Account: "a", Instrument: perp, Side: Buy, Type: Market, Qty: d("2"), PositionSide: PosLong})
	f.place(OrderRequest{Account: "a", Instrument: perp, Side: Sell, Type: Market, Qty: d("1"), PositionSide: PosShort})
	pos, _ := f.v.Positions("a")
	if len(pos) != 2 || !pos[0].Qty.Equal(d("2")) || pos[0].Side != PosLong || !pos[1].Qty.Equal(d("1")) || pos[1].Side != PosShort {
		t.Fatalf("hedge positions %+v", pos)
	}
	// Closing more than the long is refused for limit orders.
	if _, err := f.v.Place(f.ctx, OrderRequest{Account: "a", Instrument: perp, Side: Sell, Type: Limit, Price: d("101"), Qty: d("3"), PositionSide: PosLong}); !errors.Is(err, ErrReduceOnly) {
		t.Fatalf("close beyond long: %v", err)
	}
	f.place(OrderRequest{Account: "a", Instrument: perp, Side: Sell, Type: Market, Qty: d("2"), PositionSide: PosLong})
	pos, _ = f.v.Positions("a")
	if len(pos) != 1 || pos[0].Side != PosShort {
		t.Fatalf("after closing long %+v", pos)
	}
}

func TestFundingAndLiquidation(t *testing.T) {
	f := newFixture(t)
	f.fund("a", "99", "")
	f.fund("b", "1000", "")
	f.fund("m", "100000", "")
	f.limit("m", perp, Sell, "100", "100")
	if err := f.v.SetLeverage("a", perp, 20); err != nil {
		t.Fatal(err)
	}
	if err := f.v.SetMarginMode("b", perp, true); err != nil {
		t.Fatal(err)
	}
	if err := f.v.SetLeverage("b", perp, 10); err != nil {
		t.Fatal(err)
	}
	f.place(OrderRequest{Account: "a", Instrument: perp, Side: Buy, Type: Market, Qty: d("10")}) // 1000 notional, 50 margin
	f.place(OrderRequest{Account: "b", Instrument: perp, Side: Buy, Type: Market, Qty: d("1")})  // isolated 10 margin
	eq(t, "isolated margin locked", f.bal("b", "USDT").Locked, "10")
	before := f.bal("a", "USDT").Total
	// Funding at 08:00 UTC (the clock starts at 07:00): longs pay 0.01% of 1000 = 0.1.
	f.clock.Set(t0.Add(time.Hour))
	f.v.AdvanceTo(f.clock.Now())
	eq(t, "funding paid", before.Sub(f.bal("a", "USDT").Total), "0.1")
	// Mark drops 9%: a's equity 99 - 0.5 - 0.1 - 90 = 8.4 <= maint 9.1: liquidated. b's isolated 10 - 9 = 1 > 0.91.
	if err := f.v.SetMarkPrice(perp, d("91")); err != nil {
		t.Fatal(err)
	}
	pos, _ := f.v.Positions("a")
	if len(pos) != 0 {
		t.Fatalf("a not liquidated: %+v", pos)
	}
	hist, _ := f.v.OrderHistory("a", perp, 1)
	if len(hist) != 1 || !hist[0].Liquidation || hist[0].Status != StatusFilled {
		t.Fatalf("liquidation order %+v", hist)
	}
	pos, _ = f.v.Positions("b")
	if len(pos) != 1 {
		t.Fatalf("b liquidated too early: %+v", pos)
	}
	if err := f.v.SetMarkPrice(perp, d("90.5")); err != nil {
		t.Fatal(err)
	}
	pos, _ = f.v.Positions("b")
	if len(pos) != 0 {
		t.Fatalf("b not liquidated: %+v", pos)
	}
	// b lost its isolated margin only.
	eq(t, "b locked", f.bal("b", "USDT").Locked, "0")
	if f.bal("b", "USDT").Total.LessThan(d("989")) {
		t.Fatalf("b lost more than its isolated margin: %s", f.bal("b", "USDT").Total)
	}
}

func TestWallet(t *testing.T) {
	f := newFixture(t)
	if err := f.v.CreateAccount("a"); err != nil {
		t.Fatal(err)
	}
	dep, err := f.v.Deposit(f.ctx, "a", "USDT", decimal.Zero)
	if err != nil || !dep.Amount.Equal(d("10000")) {
		t.Fatalf("faucet %v %v", dep, err)
	}
	if _, err := f.v.Withdraw(f.ctx, "a", "USDT", d("5"), "addr"); !errors.Is(err, ErrWithdrawMin) {
		t.Fatalf("below min: %v", err)
	}
	if _, err := f.v.Withdraw(f.ctx, "a", "USDT", d("10000"), "addr"); !errors.Is(err, ErrInsufficientFunds) {
		t.Fatalf("fee not covered: %v", err)
	}
	wd, err := f.v.Withdraw(f.ctx, "a", "USDT", d("100"), "addr")
	if err != nil || !wd.Fee.Equal(d("1")) {
		t.Fatalf("withdraw %v %v", wd, err)
	}
	if _, err := f.v.Transfer(f.ctx, "a", "USDT", d("10000"), Funding, TradingWallet); !errors.Is(err, ErrInsufficientFunds) {
		t.Fatalf("transfer too much: %v", err)
	}
	if _, err := f.v.Transfer(f.ctx, "a", "USDT", d("899"), Funding, TradingWallet); err != nil {
		t.Fatal(err)
	}
	bs, _ := f.v.Balances("a", 0)
	if len(bs) != 2 || !bs[0].Total.Equal(d("9000")) || !bs[1].Total.Equal(d("899")) {
		t.Fatalf("balances %+v", bs)
	}
	h, _ := f.v.WalletHistory("a")
	if len(h) != 2 || !h[1].Fee.Equal(d("1")) {
		t.Fatalf("history %+v", h)
	}
	// Conversion at a quote that expires.
	q, err := f.v.RequestQuote(f.ctx, "a", "USDT", "TST", d("1000"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "quoted", q.ToAmt, "9.99")
	f.clock.Advance(11 * time.Second)
	if _, err := f.v.AcceptQuote(f.ctx, "a", q.ID); !errors.Is(err, ErrQuoteExpired) {
		t.Fatalf("expired quote: %v", err)
	}
	q, _ = f.v.RequestQuote(f.ctx, "a", "USDT", "TST", d("1000"))
	if _, err := f.v.AcceptQuote(f.ctx, "a", q.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.v.AcceptQuote(f.ctx, "a", q.ID); !errors.Is(err, ErrQuoteExpired) {
		t.Fatalf("quote reused: %v", err)
	}
	bs, _ = f.v.Balances("a", Funding)
	if !bs[0].Total.Equal(d("9.99")) || !bs[1].Total.Equal(d("8000")) {
		t.Fatalf("after convert %+v", bs)
	}
}

func TestEventsAndSlowConsumer(t *testing.T) {
	f := newFixture(t)
	f.fund("a", "10000", "")
	ctx, cancel := context.WithCancel(f.ctx)
	defer cancel()
	sub := f.v.Subscribe(ctx, Filter{Account: "a", Kinds: []EventKind{EvOrder, EvBook}}, 64)
	slow := f.v.Subscribe(ctx, Filter{}, 2)
	f.limit("a", spot, Buy, "90", "1")
	f.limit("a", spot, Buy, "91", "1")
	var seq uint64
	var orders int
	for len(sub.C) > 0 {
		e := <-sub.C
		switch e.Kind {
		case EvOrder:
			orders++
		case EvBook:
			if e.Book.PrevSeq != seq {
				t.Fatalf("book gap: prev %d after %d", e.Book.PrevSeq, seq)
			}
			seq = e.Book.Seq
		default:
			t.Fatalf("unfiltered event %v", e.Kind)
		}
	}
	if orders != 2 || seq != 2 {
		t.Fatalf("orders %d seq %d", orders, seq)
	}
	snap, _ := f.v.BookSnapshot(spot, 5)
	if snap.Seq != seq || len(snap.Bids) != 2 || !snap.Bids[0].Price.Equal(d("91")) {
		t.Fatalf("snapshot %+v", snap)
	}
	// The slow subscriber overflowed and was ended, not blocked.
	for range slow.C {
	}
	if !errors.Is(slow.Err(), ErrSlowConsumer) {
		t.Fatalf("slow consumer: %v", slow.Err())
	}
	cancel()
	for range sub.C {
	}
	if !errors.Is(sub.Err(), context.Canceled) {
		t.Fatalf("cancelled subscription: %v", sub.Err())
	}
}
