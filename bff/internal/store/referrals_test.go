package store

import (
	"testing"

	"github.com/shopspring/decimal"
)

func TestRewardTotalsExact(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		alice := mustMember(t, s, "alice")
		if _, _, err := s.EnsureMember(ctx, NewMember{ID: "bob", ReferralCode: alice.ReferralCode}); err != nil {
			t.Fatal(err)
		}
		mustMember(t, s, "carol") // not referred by alice
		add := func(amount, coin, ref string) Reward {
			t.Helper()
			r, err := s.AddReward(ctx, Reward{MemberID: "alice", RefereeID: "bob", Amount: decimal.RequireFromString(amount),
				Coin: coin, SourceRef: ref})
			if err != nil {
				t.Fatalf("add %s %s: %v", amount, coin, err)
			}
			return r
		}
		r1 := add("0.1", "USDT", "fill-1")
		add("0.2", "USDT", "fill-2")
		r3 := add("0.000000000000000001", "BTC", "fill-3")
		add("0.000000000000000002", "BTC", "fill-4")
		add("12345678901234567890.123456789", "USDT", "fill-5")

		_, err := s.AddReward(ctx, Reward{MemberID: "alice", RefereeID: "bob", Amount: decimal.RequireFromString("1"),
			Coin: "USDT", SourceRef: "fill-1"})
		wantErr(t, err, ErrConflict) // a replayed source
		_, err = s.AddReward(ctx, Reward{MemberID: "alice", RefereeID: "carol", Amount: decimal.RequireFromString("1"),
			Coin: "USDT", SourceRef: "fill-x"})
		wantErr(t, err, ErrInvalid) // carol is not alice's referee
		_, err = s.AddReward(ctx, Reward{MemberID: "alice", RefereeID: "bob", Amount: decimal.RequireFromString("-1"),
			Coin: "USDT", SourceRef: "fill-y"})
		wantErr(t, err, ErrInvalid)

		if err := s.SettleReward(ctx, r1.ID); err != nil {
			t.Fatal(err)
		}
		wantErr(t, s.SettleReward(ctx, r1.ID), ErrInvalidTransition)
		wantErr(t, s.SettleReward(ctx, "nope"), ErrNotFound)
		if err := s.SettleReward(ctx, r3.ID); err != nil {
			t.Fatal(err)
		}

		totals, err := s.RewardTotals(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		want := map[string][2]string{
			"USDT": {"0.1", "12345678901234567890.323456789"},
			"BTC":  {"0.000000000000000001", "0.000000000000000002"},
		}
		if len(totals) != len(want) {
			t.Fatalf("totals %v", totals)
		}
		for coin, w := range want {
			got := totals[coin]
			if got.Settled.String() != w[0] || got.Unsettled.String() != w[1] {
				t.Errorf("%s: settled %s unsettled %s, want %s and %s", coin, got.Settled, got.Unsettled, w[0], w[1])
			}
		}
		// 0.1 + 0.2 is exactly 0.3 once both are in one state.
		r2 := mustReward(t, s, "alice", "fill-2")
		if err := s.SettleReward(ctx, r2.ID); err != nil {
			t.Fatal(err)
		}
		totals, _ = s.RewardTotals(ctx, "alice")
		if got := totals["USDT"].Settled.String(); got != "0.3" {
			t.Fatalf("0.1 + 0.2 settled = %s, want 0.3", got)
		}
		list, err := s.ListRewards(ctx, "alice", 100)
		if err != nil || len(list) != 5 {
			t.Fatalf("rewards %d %v", len(list), err)
		}
		if totals, err := s.RewardTotals(ctx, "bob"); err != nil || len(totals) != 0 {
			t.Fatalf("bob's totals %v %v", totals, err)
		}
	})
}

func mustReward(t *testing.T, s *Store, member, ref string) Reward {
	t.Helper()
	list, err := s.ListRewards(ctxT(t), member, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list {
		if r.SourceRef == ref {
			return r
		}
	}
	t.Fatalf("no reward %s", ref)
	return Reward{}
}
