package store

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

func fav(ex, mt, sym string) Favorite { return Favorite{Exchange: ex, MarketType: mt, Symbol: sym} }

func TestFavorites(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		mustMember(t, s, "m")
		btc := fav("binance", MarketSpot, "BTC-USDT")
		added, err := s.AddFavorite(ctx, "m", btc)
		if err != nil || !added {
			t.Fatalf("add: %v %v", added, err)
		}
		added, err = s.AddFavorite(ctx, "m", btc) // idempotent
		if err != nil || added {
			t.Fatalf("second add: added=%v err=%v, want false, nil", added, err)
		}
		if _, err := s.AddFavorite(ctx, "m", fav("okx", MarketSwap, "BTC-USDT-SWAP")); err != nil {
			t.Fatal(err)
		}
		list, err := s.ListFavorites(ctx, "m")
		if err != nil || len(list) != 2 || list[0].Symbol != "BTC-USDT" || list[1].Exchange != "okx" {
			t.Fatalf("list %+v, %v", list, err)
		}
		if ok, err := s.FavoriteExists(ctx, "m", btc); err != nil || !ok {
			t.Fatalf("exists %v %v", ok, err)
		}
		if ok, err := s.FavoriteExists(ctx, "m", fav("binance", MarketSwap, "BTC-USDT")); err != nil || ok {
			t.Fatalf("SWAP twin exists %v %v", ok, err)
		}
		if removed, err := s.RemoveFavorite(ctx, "m", btc); err != nil || !removed {
			t.Fatalf("remove %v %v", removed, err)
		}
		if removed, err := s.RemoveFavorite(ctx, "m", btc); err != nil || removed {
			t.Fatalf("second remove %v %v", removed, err)
		}
		for _, bad := range []Favorite{fav("Binance", MarketSpot, "X"), fav("binance", "FUTURES", "X"), fav("binance", MarketSpot, ""),
			fav("binance", MarketSpot, "BTC USDT")} {
			_, err := s.AddFavorite(ctx, "m", bad)
			wantErr(t, err, ErrInvalid)
		}
		_, err = s.AddFavorite(ctx, "ghost", btc)
		wantErr(t, err, ErrNotFound)
		// Other members see none of m's favorites.
		mustMember(t, s, "other")
		if list, err := s.ListFavorites(ctx, "other"); err != nil || len(list) != 0 {
			t.Fatalf("other's list %+v %v", list, err)
		}
	})
}

func TestFavoritesCap(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		mustMember(t, s, "m")
		seed := make([]Favorite, MaxFavorites-5)
		for i := range seed {
			seed[i] = fav("binance", MarketSpot, fmt.Sprintf("C%03d-USDT", i))
		}
		if r, err := s.MergeFavorites(ctx, "m", seed); err != nil || r.Added != len(seed) {
			t.Fatalf("seed: %+v %v", r, err)
		}
		// 20 concurrent adds race for the last 5 places: exactly 5 win, the rest get ErrLimit.
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins, limits := 0, 0
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				added, err := s.AddFavorite(ctx, "m", fav("okx", MarketSwap, fmt.Sprintf("R%02d-USDT-SWAP", i)))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil && added:
					wins++
				case errors.Is(err, ErrLimit):
					limits++
				default:
					t.Errorf("add %d: added=%v err=%v", i, added, err)
				}
			}()
		}
		wg.Wait()
		if wins != 5 || limits != 15 {
			t.Fatalf("%d adds won and %d hit the cap, want 5 and 15", wins, limits)
		}
		list, err := s.ListFavorites(ctx, "m")
		if err != nil || len(list) != MaxFavorites {
			t.Fatalf("%d favorites (%v), want %d", len(list), err, MaxFavorites)
		}
		// At the cap, adding one already there is still fine.
		if added, err := s.AddFavorite(ctx, "m", seed[0]); err != nil || added {
			t.Fatalf("re-add at cap: %v %v", added, err)
		}
	})
}

func TestMergeFavorites(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		mustMember(t, s, "m")
		if _, err := s.AddFavorite(ctx, "m", fav("binance", MarketSpot, "ETH-USDT")); err != nil {
			t.Fatal(err)
		}
		local := []Favorite{
			fav("okx", MarketSpot, "SOL-USDT"),
			fav("binance", MarketSpot, "ETH-USDT"), // already on the server
			fav("binance", MarketSwap, "BTC-USDT"),
			fav("okx", MarketSpot, "SOL-USDT"), // repeated locally
		}
		r, err := s.MergeFavorites(ctx, "m", local)
		if err != nil || r != (MergeResult{Added: 2, Present: 2}) {
			t.Fatalf("merge: %+v %v", r, err)
		}
		list, _ := s.ListFavorites(ctx, "m")
		got := ""
		for _, f := range list {
			got += f.Exchange + "/" + f.MarketType + "/" + f.Symbol + " "
		}
		if want := "binance/SPOT/ETH-USDT okx/SPOT/SOL-USDT binance/SWAP/BTC-USDT "; got != want {
			t.Fatalf("order after merge %q, want %q", got, want)
		}
		// Merging again is a no-op.
		if r, err := s.MergeFavorites(ctx, "m", local); err != nil || r.Added != 0 {
			t.Fatalf("second merge %+v %v", r, err)
		}
		// One malformed entry stores nothing.
		_, err = s.MergeFavorites(ctx, "m", []Favorite{fav("okx", MarketSpot, "ADA-USDT"), fav("okx", "X", "Y")})
		wantErr(t, err, ErrInvalid)
		if ok, _ := s.FavoriteExists(ctx, "m", fav("okx", MarketSpot, "ADA-USDT")); ok {
			t.Fatal("a merge that failed validation stored an entry")
		}
		// Over the cap: what fits is stored, the rest counted as dropped.
		many := make([]Favorite, MaxFavorites)
		for i := range many {
			many[i] = fav("okx", MarketSwap, fmt.Sprintf("M%03d-USDT-SWAP", i))
		}
		r, err = s.MergeFavorites(ctx, "m", many)
		if err != nil || r.Added != MaxFavorites-3 || r.Dropped != 3 {
			t.Fatalf("merge over cap %+v %v", r, err)
		}
	})
}
