package store

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"
)

// Market types a favorite may name.
const (
	MarketSpot = "SPOT"
	MarketSwap = "SWAP"
)

// MaxFavorites is how many favorites one member may keep.
const MaxFavorites = 500

// The same shapes the stream protocol accepts.
var (
	slugRe   = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)
	symbolRe = regexp.MustCompile(`^[A-Za-z0-9._:/-]{1,40}$`)
)

// Favorite is one starred market.
type Favorite struct {
	Exchange   string // exchange slug, such as "binance"
	MarketType string // SPOT or SWAP
	Symbol     string
	CreatedAt  time.Time // set by the store
}

// Validate checks the shape of the market key.
func (f Favorite) Validate() error {
	if !slugRe.MatchString(f.Exchange) {
		return fmt.Errorf("%w: exchange %q is not a slug", ErrInvalid, f.Exchange)
	}
	if f.MarketType != MarketSpot && f.MarketType != MarketSwap {
		return fmt.Errorf("%w: market type %q is neither SPOT nor SWAP", ErrInvalid, f.MarketType)
	}
	if !symbolRe.MatchString(f.Symbol) {
		return fmt.Errorf("%w: symbol %q", ErrInvalid, f.Symbol)
	}
	return nil
}

// ListFavorites returns the member's favorites, oldest first.
func (s *Store) ListFavorites(ctx context.Context, memberID string) ([]Favorite, error) {
	rows, err := s.r().query(ctx, `SELECT exchange, market_type, symbol, created_at FROM favorites WHERE member_id = ?
		ORDER BY created_at, exchange, market_type, symbol`, memberID)
	if err != nil {
		return nil, fmt.Errorf("store: favorites: %w", err)
	}
	defer rows.Close()
	out := []Favorite{}
	for rows.Next() {
		var f Favorite
		var at int64
		if err := rows.Scan(&f.Exchange, &f.MarketType, &f.Symbol, &at); err != nil {
			return nil, fmt.Errorf("store: favorites: %w", err)
		}
		f.CreatedAt = fromMicros(at)
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: favorites: %w", err)
	}
	return out, nil
}

// FavoriteExists reports whether the member starred the market.
func (s *Store) FavoriteExists(ctx context.Context, memberID string, f Favorite) (bool, error) {
	if err := f.Validate(); err != nil {
		return false, err
	}
	var n int
	err := s.r().row(ctx, `SELECT COUNT(*) FROM favorites WHERE member_id = ? AND exchange = ? AND market_type = ?
		AND symbol = ?`, memberID, f.Exchange, f.MarketType, f.Symbol).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("store: favorite exists: %w", err)
	}
	return n > 0, nil
}

// AddFavorite stars a market. Adding one already there is no error (added is false). A member at MaxFavorites gets
// ErrLimit; an unknown member ErrNotFound.
func (s *Store) AddFavorite(ctx context.Context, memberID string, f Favorite) (added bool, err error) {
	if err := f.Validate(); err != nil {
		return false, err
	}
	err = s.tx(ctx, func(x q) error {
		n, err := x.addFavorites(ctx, memberID, []Favorite{f}, s.stamp())
		if err != nil {
			return err
		}
		added = n == 1
		return nil
	})
	return added, err
}

// RemoveFavorite unstars a market; removed is false when it was not starred.
func (s *Store) RemoveFavorite(ctx context.Context, memberID string, f Favorite) (removed bool, err error) {
	if err := f.Validate(); err != nil {
		return false, err
	}
	res, err := s.w().exec(ctx, `DELETE FROM favorites WHERE member_id = ? AND exchange = ? AND market_type = ?
		AND symbol = ?`, memberID, f.Exchange, f.MarketType, f.Symbol)
	if err != nil {
		return false, fmt.Errorf("store: remove favorite: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: remove favorite: %w", err)
	}
	return n > 0, nil
}

// MergeResult says what MergeFavorites did.
type MergeResult struct {
	Added   int // newly stored
	Present int // already starred (or repeated in the input)
	Dropped int // left out because the member reached MaxFavorites
}

// MergeFavorites stores the favorites a browser kept before sign-in, in their order, skipping those already
// there, until the member reaches MaxFavorites; the rest are counted in Dropped (no error). Every entry is checked
// first: one malformed entry fails the whole merge with ErrInvalid and stores nothing.
func (s *Store) MergeFavorites(ctx context.Context, memberID string, favs []Favorite) (MergeResult, error) {
	for _, f := range favs {
		if err := f.Validate(); err != nil {
			return MergeResult{}, err
		}
	}
	var res MergeResult
	err := s.tx(ctx, func(x q) error {
		res = MergeResult{}
		at := s.stamp()
		for _, f := range favs {
			n, err := x.addFavorites(ctx, memberID, []Favorite{f}, at)
			switch {
			case errors.Is(err, ErrLimit):
				res.Dropped++
			case err != nil:
				return err
			case n == 1:
				res.Added++
				at = at.Add(time.Microsecond) // keep the browser's order in created_at
			default:
				res.Present++
			}
		}
		return nil
	})
	return res, err
}

// addFavorites inserts favs inside a transaction after locking the member and checking the cap. It returns how
// many rows were new.
func (x q) addFavorites(ctx context.Context, memberID string, favs []Favorite, at time.Time) (int, error) {
	if err := x.lockMember(ctx, memberID); err != nil {
		return 0, err
	}
	added := 0
	for _, f := range favs {
		var exists int
		if err := x.row(ctx, `SELECT COUNT(*) FROM favorites WHERE member_id = ? AND exchange = ? AND market_type = ?
			AND symbol = ?`, memberID, f.Exchange, f.MarketType, f.Symbol).Scan(&exists); err != nil {
			return added, fmt.Errorf("store: add favorite: %w", err)
		}
		if exists > 0 {
			continue
		}
		var count int
		if err := x.row(ctx, "SELECT COUNT(*) FROM favorites WHERE member_id = ?", memberID).Scan(&count); err != nil {
			return added, fmt.Errorf("store: add favorite: %w", err)
		}
		if count >= MaxFavorites {
			return added, fmt.Errorf("%w: at most %d favorites", ErrLimit, MaxFavorites)
		}
		if _, err := x.exec(ctx, `INSERT INTO favorites (member_id, exchange, market_type, symbol, created_at)
			VALUES (?, ?, ?, ?, ?)`, memberID, f.Exchange, f.MarketType, f.Symbol, micros(at)); err != nil {
			return added, fmt.Errorf("store: add favorite: %w", err)
		}
		added++
	}
	return added, nil
}
