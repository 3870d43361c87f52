package store

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func TestRewardJobReads(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		ref := mustMember(t, s, "ref")
		if _, _, err := s.EnsureMember(ctx, NewMember{ID: "r1", ReferralCode: ref.ReferralCode}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.EnsureMember(ctx, NewMember{ID: "r2", ReferralCode: ref.ReferralCode}); err != nil {
			t.Fatal(err)
		}
		mustMember(t, s, "loner")
		list, err := s.ReferredMembers(ctx, "", 1)
		if err != nil || len(list) != 1 || list[0].ID != "r1" || list[0].ReferredBy != "ref" {
			t.Fatalf("first page %+v %v", list, err)
		}
		list, err = s.ReferredMembers(ctx, "r1", 10)
		if err != nil || len(list) != 1 || list[0].ID != "r2" {
			t.Fatalf("second page %+v %v", list, err)
		}
		_, err = s.ReferredMembers(ctx, "", 0)
		wantErr(t, err, ErrInvalid)

		if _, ok, err := s.FillCursor(ctx, "r1", "binance", "SWAP"); err != nil || ok {
			t.Fatalf("cursor before any: %v %v", ok, err)
		}
		t1 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
		if err := s.SetFillCursor(ctx, "r1", "binance", "SWAP", t1); err != nil {
			t.Fatal(err)
		}
		// It never moves back.
		if err := s.SetFillCursor(ctx, "r1", "binance", "SWAP", t1.Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
		if at, ok, err := s.FillCursor(ctx, "r1", "binance", "SWAP"); err != nil || !ok || !at.Equal(t1) {
			t.Fatalf("cursor %v %v %v, want %v", at, ok, err, t1)
		}
		if err := s.SetFillCursor(ctx, "r1", "binance", "SWAP", t1.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if at, _, _ := s.FillCursor(ctx, "r1", "binance", "SWAP"); !at.Equal(t1.Add(time.Hour)) {
			t.Fatalf("cursor %v after moving on", at)
		}
		if _, ok, _ := s.FillCursor(ctx, "r1", "okx", "SWAP"); ok {
			t.Fatal("a cursor of another exchange")
		}
		wantErr(t, s.SetFillCursor(ctx, "ghost", "binance", "SWAP", t1), ErrNotFound)

		for i, referee := range []string{"r1", "r2"} {
			if _, err := s.AddReward(ctx, Reward{MemberID: "ref", RefereeID: referee, Amount: decimal.RequireFromString("1.5"),
				Coin: "USDT", SourceRef: "fill:x:" + referee}); err != nil {
				t.Fatalf("reward %d: %v", i, err)
			}
		}
		all, err := s.RewardsByState(ctx, RewardUnsettled, "", 10)
		if err != nil || len(all) != 2 {
			t.Fatalf("unsettled %+v %v", all, err)
		}
		if err := s.SettleReward(ctx, all[0].ID); err != nil {
			t.Fatal(err)
		}
		if l, err := s.RewardsByState(ctx, RewardSettled, "ref", 10); err != nil || len(l) != 1 || l[0].ID != all[0].ID {
			t.Fatalf("settled %+v %v", l, err)
		}
		if l, err := s.RewardsByState(ctx, RewardUnsettled, "loner", 10); err != nil || len(l) != 0 {
			t.Fatalf("another member's %+v %v", l, err)
		}
		_, err = s.RewardsByState(ctx, "paid", "", 10)
		wantErr(t, err, ErrInvalid)
	})
}
