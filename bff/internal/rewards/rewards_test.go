package rewards

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/store"
	"github.com/exhub/exhub/bff/internal/store/storetest"
	"github.com/exhub/exhub/bff/internal/trading"
)

// fakeFills serves each member's own fills per exchange and market, filtered by the walk's window like an exchange.
type fakeFills struct {
	mu       sync.Mutex
	fills    map[string][]trading.Fill // member|exchange|market -> fills
	accounts map[string]bool           // member|exchange
	asked    []string                  // member|exchange|market of each walk
}

func (f *fakeFills) HistoryExchanges() []string { return []string{"binance", "okx"} }

func (f *fakeFills) HasAccount(_ context.Context, member, exchange string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.accounts[member+"|"+exchange], nil
}

func (f *fakeFills) WalkFills(_ context.Context, member string, sc trading.Scope, w trading.Walk, keep func(trading.Fill) bool) ([]trading.Fill, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := member + "|" + sc.Exchange + "|" + sc.MarketType
	f.asked = append(f.asked, key)
	var out []trading.Fill
	for _, x := range f.fills[key] {
		ms := x.Time.UnixMilli()
		if (w.Start == 0 || ms >= w.Start) && (w.End == 0 || ms <= w.End) && (keep == nil || keep(x)) {
			out = append(out, x)
		}
	}
	return out, true, nil
}

func (f *fakeFills) add(member, exchange, market string, x trading.Fill) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := member + "|" + exchange + "|" + market
	f.fills[key] = append(f.fills[key], x)
	f.accounts[member+"|"+exchange] = true
}

func engines(t *testing.T, fn func(t *testing.T, st *store.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		st, err := store.Open(context.Background(), store.DefaultConfig(t.TempDir()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		fn(t, st)
	})
	t.Run("postgres", func(t *testing.T) {
		cfg := store.DefaultConfig(t.TempDir())
		cfg.Driver, cfg.DSN = store.DriverPostgres, secret.New(storetest.Postgres(t))
		st, err := store.Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		fn(t, st)
	})
}

func TestRewardsFromRefereesFees(t *testing.T) {
	engines(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		referrer, _, err := st.EnsureMember(ctx, store.NewMember{ID: "0191f7a0-0000-7000-8000-0000000000a1", Nickname: "ref"})
		if err != nil {
			t.Fatal(err)
		}
		mk := func(id, code string) {
			if _, _, err := st.EnsureMember(ctx, store.NewMember{ID: id, ReferralCode: code}); err != nil {
				t.Fatal(err)
			}
		}
		referee := "0191f7a0-0000-7000-8000-0000000000b1"
		second := "0191f7a0-0000-7000-8000-0000000000b2"
		stranger := "0191f7a0-0000-7000-8000-0000000000c1"
		mk(referee, referrer.ReferralCode)
		mk(second, referrer.ReferralCode)
		mk(stranger, "")

		fills := &fakeFills{fills: map[string][]trading.Fill{}, accounts: map[string]bool{}}
		at := func(d time.Duration) time.Time { return time.Now().UTC().Add(d) }
		// One trade between the two referees (same trade id, maker and taker), a spot fee in BTC, a rebate, and the
		// stranger's fill, which earns nobody anything.
		fills.add(referee, "binance", "SWAP", trading.Fill{TradeID: "t1", Symbol: "BTCUSDT", Fee: "0.1", FeeAsset: "USDT", Time: at(-time.Minute)})
		fills.add(second, "binance", "SWAP", trading.Fill{TradeID: "t1", Symbol: "BTCUSDT", Fee: "0.03", FeeAsset: "USDT", Time: at(-time.Minute)})
		fills.add(referee, "okx", "SPOT", trading.Fill{TradeID: "s9", Symbol: "BTC-USDT", Fee: "0.00000123", FeeAsset: "btc", Time: at(-30 * time.Second)})
		fills.add(referee, "okx", "SWAP", trading.Fill{TradeID: "r1", Symbol: "BTC-USDT-SWAP", Fee: "-0.02", FeeAsset: "USDT", Time: at(-20 * time.Second)})
		fills.add(stranger, "binance", "SWAP", trading.Fill{TradeID: "t2", Symbol: "BTCUSDT", Fee: "5", FeeAsset: "USDT", Time: at(-time.Minute)})

		cfg := DefaultConfig()
		cfg.Rate = "0.25"
		job, err := New(cfg, st, fills, nil)
		if err != nil {
			t.Fatal(err)
		}
		n, err := job.Pass(ctx)
		if err != nil || n != 3 {
			t.Fatalf("first pass: %d rewards, %v; want 3", n, err)
		}
		totals, err := st.RewardTotals(ctx, referrer.ID)
		if err != nil {
			t.Fatal(err)
		}
		// 0.25 * (0.1 + 0.03) USDT, and 0.25 * 0.00000123 BTC cut to 8 decimals.
		if !totals["USDT"].Unsettled.Equal(decimal.RequireFromString("0.0325")) || !totals["BTC"].Unsettled.Equal(decimal.RequireFromString("0.0000003")) ||
			len(totals) != 2 {
			t.Fatalf("totals %+v", totals)
		}
		list, err := st.ListRewards(ctx, referrer.ID, 100)
		if err != nil || len(list) != 3 {
			t.Fatalf("rewards %+v %v", list, err)
		}
		for _, r := range list {
			if r.State != store.RewardUnsettled {
				t.Fatalf("reward %+v not unsettled", r)
			}
		}

		// Read again (a second pass re-reads the overlap; a new cursor-less pass reads everything): nothing doubles.
		if n, err := job.Pass(ctx); err != nil || n != 0 {
			t.Fatalf("second pass: %d, %v", n, err)
		}
		cfg.Overlap = time.Hour
		again, _ := New(cfg, st, fills, nil)
		if n, err := again.Pass(ctx); err != nil || n != 0 {
			t.Fatalf("pass with a long overlap: %d, %v", n, err)
		}
		// A new fill after the cursor pays once.
		fills.add(referee, "binance", "SWAP", trading.Fill{TradeID: "t3", Symbol: "ETHUSDT", Fee: "0.4", FeeAsset: "USDT", Time: at(time.Second)})
		later, _ := New(cfg, st, fills, nil, WithClock(func() time.Time { return time.Now().Add(time.Minute) }))
		if n, err := later.Pass(ctx); err != nil || n != 1 {
			t.Fatalf("pass after a new fill: %d, %v", n, err)
		}
		if list, _ := st.ListRewards(ctx, referrer.ID, 100); len(list) != 4 || !list[0].Amount.Equal(decimal.RequireFromString("0.1")) {
			t.Fatalf("after the new fill %+v", list)
		}

		// Nobody else sees them: not the referees, not the stranger; the stranger's fill was never read as a referee's.
		for _, other := range []string{referee, second, stranger} {
			if l, err := st.ListRewards(ctx, other, 100); err != nil || len(l) != 0 {
				t.Fatalf("%s sees %+v %v", other, l, err)
			}
			if tot, err := st.RewardTotals(ctx, other); err != nil || len(tot) != 0 {
				t.Fatalf("%s totals %+v %v", other, tot, err)
			}
		}
		for _, k := range fills.asked {
			if k[:len(stranger)] == stranger {
				t.Fatalf("the job read a member who was not referred: %s", k)
			}
		}

		// Settlement moves them to settled.
		unsettled, err := st.RewardsByState(ctx, store.RewardUnsettled, referrer.ID, 100)
		if err != nil || len(unsettled) != 4 {
			t.Fatalf("unsettled %+v %v", unsettled, err)
		}
		for _, r := range unsettled {
			if err := st.SettleReward(ctx, r.ID); err != nil {
				t.Fatal(err)
			}
		}
		totals, _ = st.RewardTotals(ctx, referrer.ID)
		if !totals["USDT"].Settled.Equal(decimal.RequireFromString("0.1325")) || !totals["USDT"].Unsettled.IsZero() {
			t.Fatalf("settled totals %+v", totals)
		}
	})
}

func TestConfig(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, rate := range []string{"", "x", "-0.1", "1.5"} {
		c := DefaultConfig()
		c.Rate = rate
		if c.Validate() == nil {
			t.Errorf("rate %q accepted", rate)
		}
	}
	if !Amount("0.1", decimal.RequireFromString("0.2")).Equal(decimal.RequireFromString("0.02")) || !Amount("-1", decimal.NewFromInt(1)).IsZero() ||
		!Amount("junk", decimal.NewFromInt(1)).IsZero() {
		t.Fatal("Amount")
	}
}
