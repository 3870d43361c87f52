package store

import (
	"fmt"
	"slices"
	"sync"
	"testing"
)

func TestCoinHistory(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		mustMember(t, s, "m")
		mustMember(t, s, "other")
		if h, err := s.CoinHistory(ctx, "m", CoinKindDeposit); err != nil || len(h) != 0 {
			t.Fatalf("empty history %v %v", h, err)
		}
		for _, c := range []string{"BTC", "ETH", "USDT", "SOL", "XRP", "ETH", "DOGE"} {
			if _, err := s.RecordCoin(ctx, "m", CoinKindDeposit, c); err != nil {
				t.Fatal(err)
			}
		}
		// Newest first, distinct, five at most: BTC (the oldest) fell out, ETH moved to the front when used again.
		want := []string{"DOGE", "ETH", "XRP", "SOL", "USDT"}
		h, err := s.CoinHistory(ctx, "m", CoinKindDeposit)
		if err != nil || !slices.Equal(h, want) {
			t.Fatalf("history %v %v, want %v", h, err, want)
		}
		// RecordCoin answers the history as it is afterwards.
		h, err = s.RecordCoin(ctx, "m", CoinKindDeposit, "USDT")
		if err != nil || !slices.Equal(h, []string{"USDT", "DOGE", "ETH", "XRP", "SOL"}) {
			t.Fatalf("after USDT %v %v", h, err)
		}
		// Kinds are separate, and so are members.
		if h, err := s.CoinHistory(ctx, "m", CoinKindWithdraw); err != nil || len(h) != 0 {
			t.Fatalf("withdraw history %v %v", h, err)
		}
		if h, err := s.CoinHistory(ctx, "other", CoinKindDeposit); err != nil || len(h) != 0 {
			t.Fatalf("other member's history %v %v", h, err)
		}
		_, err = s.RecordCoin(ctx, "m", "FUTURES", "BTC")
		wantErr(t, err, ErrInvalid)
		_, err = s.CoinHistory(ctx, "m", "deposit")
		wantErr(t, err, ErrInvalid)
		for _, bad := range []string{"", "btc", "BTC USDT", "ABCDEFGHIJKLMNOPQRSTU"} {
			_, err = s.RecordCoin(ctx, "m", CoinKindOther, bad)
			wantErr(t, err, ErrInvalid)
		}
		_, err = s.RecordCoin(ctx, "ghost", CoinKindOther, "BTC")
		wantErr(t, err, ErrNotFound)
	})
}

func TestCoinHistoryConcurrent(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		mustMember(t, s, "m")
		var wg sync.WaitGroup
		errs := make(chan error, 20)
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.RecordCoin(ctx, "m", CoinKindConvert, fmt.Sprintf("C%d", i%8))
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		h, err := s.CoinHistory(ctx, "m", CoinKindConvert)
		if err != nil || len(h) != MaxCoinHistory {
			t.Fatalf("history %v %v, want %d distinct coins", h, err, MaxCoinHistory)
		}
		seen := map[string]bool{}
		for _, c := range h {
			if seen[c] {
				t.Fatalf("coin %s twice in %v", c, h)
			}
			seen[c] = true
		}
	})
}

func TestDepositExchange(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		mustMember(t, s, "m")
		mustMember(t, s, "other")
		if ex, err := s.DepositExchange(ctx, "m"); err != nil || ex != "" {
			t.Fatalf("unset %q %v", ex, err)
		}
		if err := s.SetDepositExchange(ctx, "m", "binance"); err != nil {
			t.Fatal(err)
		}
		if err := s.SetDepositExchange(ctx, "m", "okx"); err != nil {
			t.Fatal(err)
		}
		if ex, err := s.DepositExchange(ctx, "m"); err != nil || ex != "okx" {
			t.Fatalf("set %q %v", ex, err)
		}
		if ex, err := s.DepositExchange(ctx, "other"); err != nil || ex != "" {
			t.Fatalf("other member's %q %v", ex, err)
		}
		wantErr(t, s.SetDepositExchange(ctx, "m", "Not A Slug"), ErrInvalid)
		wantErr(t, s.SetDepositExchange(ctx, "ghost", "okx"), ErrNotFound)
	})
}
