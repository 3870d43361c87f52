package venue

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// chainPair is two venues on one chain with a shared manual clock.
func chainPair(t *testing.T, cfg ChainConfig) (a, b *Venue, c *Chain, clock *ManualClock) {
	t.Helper()
	clock = NewManualClock(t0)
	cfg.Clock = clock
	c, err := NewChain(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b"} {
		v, err := New(Config{Instruments: testInstruments(t), Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(v.Close)
		if err := c.Attach(name, v); err != nil {
			t.Fatal(err)
		}
		if name == "a" {
			a = v
		} else {
			b = v
		}
	}
	return a, b, c, clock
}

func walletTx(t *testing.T, v *Venue, account, id string) WalletTx {
	t.Helper()
	h, err := v.WalletHistory(account)
	if err != nil {
		t.Fatal(err)
	}
	for _, tx := range h {
		if tx.ID == id {
			return tx
		}
	}
	t.Fatalf("%s has no %s in %+v", account, id, h)
	return WalletTx{}
}

func TestChainDeliversAWithdrawalToAnotherVenue(t *testing.T) {
	a, b, c, clock := chainPair(t, ChainConfig{MinDelay: 30 * time.Minute, MaxDelay: time.Hour})
	ctx := context.Background()
	if err := a.CreateAccount("alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Deposit(ctx, "alice", "USDT", d("500")); err != nil {
		t.Fatal(err)
	}
	addrB, err := b.DepositAddress("bob", "USDT")
	if err != nil {
		t.Fatal(err)
	}
	addrA, _ := a.DepositAddress("bob", "USDT")
	if addrA == addrB {
		t.Fatal("two venues hand out the same address")
	}
	wd, err := a.Withdraw(ctx, "alice", "USDT", d("100"), addrB)
	if err != nil {
		t.Fatal(err)
	}
	if wd.Status != TxProcessing || wd.TxID == "" || c.InFlight() != 1 {
		t.Fatalf("withdrawal %+v, in flight %d", wd, c.InFlight())
	}
	eq(t, "sent at once (100 + fee 1)", a.mustFree("alice", "USDT"), "399")
	// Nothing moves before half the shortest delay.
	clock.Set(t0.Add(15*time.Minute - time.Second))
	c.AdvanceTo(clock.Now())
	if got := walletTx(t, a, "alice", wd.ID); got.Status != TxProcessing {
		t.Fatalf("completed early: %+v", got)
	}
	if h, _ := b.WalletHistory("bob"); len(h) != 0 {
		t.Fatalf("deposit before the broadcast: %+v", h)
	}
	// Half the delay: the withdrawal completes; the deposit shows pending with the same tx id, not yet credited.
	delay := c.delay(wd.TxID)
	if delay < 30*time.Minute || delay > time.Hour {
		t.Fatalf("delay %s outside the range", delay)
	}
	clock.Set(t0.Add(delay / 2))
	c.AdvanceTo(clock.Now())
	if got := walletTx(t, a, "alice", wd.ID); got.Status != TxCompleted || got.TxID != wd.TxID {
		t.Fatalf("withdrawal after broadcast: %+v", got)
	}
	h, _ := b.WalletHistory("bob")
	if len(h) != 1 || h[0].Status != TxPending || h[0].TxID != wd.TxID || !h[0].Amount.Equal(d("100")) || h[0].Address != addrB {
		t.Fatalf("pending deposit %+v", h)
	}
	eq(t, "not credited while pending", b.mustFree("bob", "USDT"), "0")
	// The whole delay: credited.
	clock.Set(t0.Add(delay))
	c.AdvanceTo(clock.Now())
	if got := walletTx(t, b, "bob", h[0].ID); got.Status != TxCompleted || got.TxID != wd.TxID {
		t.Fatalf("deposit after arrival: %+v", got)
	}
	eq(t, "credited", b.mustFree("bob", "USDT"), "100")
	if c.InFlight() != 0 {
		t.Fatalf("%d still in flight", c.InFlight())
	}
	for _, v := range []*Venue{a, b} {
		for asset, sum := range v.AssetTotals() {
			if !sum.IsZero() {
				t.Fatalf("%s sums to %s", asset, sum)
			}
		}
	}
}

func TestChainOutsideAddressAndLimits(t *testing.T) {
	a, b, c, clock := chainPair(t, ChainConfig{MinDelay: time.Second, MaxDelay: time.Second, MaxInFlight: 2})
	ctx := context.Background()
	_ = a.CreateAccount("alice")
	if _, err := a.Deposit(ctx, "alice", "USDT", d("500")); err != nil {
		t.Fatal(err)
	}
	// An address no venue handed out: the withdrawal completes and leaves.
	out, err := a.Withdraw(ctx, "alice", "USDT", d("10"), "bc1-somewhere-else")
	if err != nil {
		t.Fatal(err)
	}
	// An address of another asset on b: no deposit either (a coin sent to the wrong address is lost).
	addrBTC, _ := b.DepositAddress("bob", "TST")
	wrong, err := a.Withdraw(ctx, "alice", "USDT", d("10"), addrBTC)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Withdraw(ctx, "alice", "USDT", d("10"), "third"); !errors.Is(err, ErrChainBusy) {
		t.Fatalf("beyond the in-flight bound: %v", err)
	}
	eq(t, "a refused withdrawal moves nothing", a.mustFree("alice", "USDT"), "478")
	clock.Set(t0.Add(time.Second))
	c.AdvanceTo(clock.Now())
	for _, id := range []string{out.ID, wrong.ID} {
		if got := walletTx(t, a, "alice", id); got.Status != TxCompleted {
			t.Fatalf("%s: %+v", id, got)
		}
	}
	if h, _ := b.WalletHistory("bob"); len(h) != 0 {
		t.Fatalf("bob got %+v", h)
	}
	if c.InFlight() != 0 {
		t.Fatal("transfers left on the chain")
	}
	// The same venue twice, or a second chain, is refused.
	if err := c.Attach("a", a); err == nil {
		t.Fatal("a name attached twice")
	}
	c2, _ := NewChain(ChainConfig{})
	if err := c2.Attach("x", a); err == nil {
		t.Fatal("a venue on two chains")
	}
}

// TestChainRun: Run (real time, a few hundred ms) delivers a transfer and ends with its context.
func TestChainRun(t *testing.T) {
	c, err := NewChain(ChainConfig{MinDelay: 100 * time.Millisecond, MaxDelay: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := New(Config{Instruments: testInstruments(t)})
	b, _ := New(Config{Instruments: testInstruments(t)})
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	_ = c.Attach("a", a)
	_ = c.Attach("b", b)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	_ = a.CreateAccount("alice")
	if _, err := a.Deposit(ctx, "alice", "USDT", d("50")); err != nil {
		t.Fatal(err)
	}
	addr, _ := b.DepositAddress("bob", "USDT")
	if _, err := a.Withdraw(ctx, "alice", "USDT", d("20"), addr); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if h, _ := b.WalletHistory("bob"); len(h) == 1 && h[0].Status == TxCompleted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the deposit never arrived")
		}
		time.Sleep(10 * time.Millisecond)
	}
	eq(t, "credited", b.mustFree("bob", "USDT"), "20")
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run ended with %v", err)
	}
}

func (v *Venue) mustFree(account, asset string) decimal.Decimal {
	bs, err := v.Balances(account, Funding)
	if err != nil {
		return decimal.Zero
	}
	for _, b := range bs {
		if b.Asset == asset {
			return b.Free
		}
	}
	return decimal.Zero
}

// TestChainConcurrentBothWays: withdrawals both ways while the chain delivers, under the race detector: no deadlock
// (venue locks are never held while the chain calls a venue), and every coin arrives.
func TestChainConcurrentBothWays(t *testing.T) {
	a, b, c, clock := chainPair(t, ChainConfig{MinDelay: time.Second, MaxDelay: 2 * time.Second})
	ctx := context.Background()
	for _, v := range []*Venue{a, b} {
		_ = v.CreateAccount("u")
		if _, err := v.Deposit(ctx, "u", "USDT", d("10000")); err != nil {
			t.Fatal(err)
		}
	}
	toB, _ := b.DepositAddress("u", "USDT")
	toA, _ := a.DepositAddress("u", "USDT")
	const n = 40
	done := make(chan error, 2)
	for _, w := range []struct {
		from *Venue
		addr string
	}{{a, toB}, {b, toA}} {
		go func() {
			for range n {
				if _, err := w.from.Withdraw(ctx, "u", "USDT", d("10"), w.addr); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	delivered := make(chan struct{})
	go func() {
		defer close(delivered)
		for range 200 {
			clock.Advance(50 * time.Millisecond)
			c.AdvanceTo(clock.Now())
		}
	}()
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	<-delivered
	clock.Advance(time.Minute)
	c.AdvanceTo(clock.Now())
	if c.InFlight() != 0 {
		t.Fatalf("%d in flight", c.InFlight())
	}
	// Each sent 40 × (10 + fee 1) and received 40 × 10.
	for _, v := range []*Venue{a, b} {
		eq(t, "balance after both ways", v.mustFree("u", "USDT"), "9960")
	}
}
