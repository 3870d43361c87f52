package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
)

// Coin history kinds: which wallet form a coin was picked in.
const (
	CoinKindOther    = "OTHER"
	CoinKindDeposit  = "DEPOSIT"
	CoinKindWithdraw = "WITHDRAW"
	CoinKindExchange = "EXCHANGE"
	CoinKindConvert  = "CONVERT"
)

// CoinKinds are the coin history kinds, in the spec's order.
var CoinKinds = []string{CoinKindOther, CoinKindDeposit, CoinKindWithdraw, CoinKindExchange, CoinKindConvert}

// MaxCoinHistory is how many distinct coins the history keeps per member and kind.
const MaxCoinHistory = 5

var walletCoinRe = regexp.MustCompile(`^[A-Z0-9]{1,20}$`)

func validCoinKind(kind string) error {
	for _, k := range CoinKinds {
		if k == kind {
			return nil
		}
	}
	return fmt.Errorf("%w: coin history kind %q", ErrInvalid, kind)
}

// ValidCoin reports whether coin is an asset code as the exchanges write them (upper-case letters and digits).
func ValidCoin(coin string) bool { return walletCoinRe.MatchString(coin) }

// CoinHistory returns the last MaxCoinHistory distinct coins the member used for kind, newest first.
func (s *Store) CoinHistory(ctx context.Context, memberID, kind string) ([]string, error) {
	if err := validCoinKind(kind); err != nil {
		return nil, err
	}
	rows, err := s.r().query(ctx, `SELECT coin FROM coin_history WHERE member_id = ? AND kind = ?
		ORDER BY used_at DESC, coin LIMIT 5`, memberID, kind)
	if err != nil {
		return nil, fmt.Errorf("store: coin history: %w", err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, fmt.Errorf("store: coin history: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: coin history: %w", err)
	}
	return out, nil
}

// RecordCoin puts coin at the front of the member's history for kind (moving it there when it is already in) and
// forgets the coins beyond MaxCoinHistory. It returns the history as it is afterwards, newest first. ErrNotFound
// for an unknown member, ErrInvalid for a bad kind or coin.
func (s *Store) RecordCoin(ctx context.Context, memberID, kind, coin string) ([]string, error) {
	if err := validCoinKind(kind); err != nil {
		return nil, err
	}
	if !ValidCoin(coin) {
		return nil, fmt.Errorf("%w: coin %q", ErrInvalid, coin)
	}
	err := s.tx(ctx, func(x q) error {
		if err := x.lockMember(ctx, memberID); err != nil {
			return err
		}
		// Strictly newer than the newest entry, so two uses within one clock tick keep their order.
		at := micros(s.stamp())
		var newest sql.NullInt64
		if err := x.row(ctx, `SELECT MAX(used_at) FROM coin_history WHERE member_id = ? AND kind = ?`,
			memberID, kind).Scan(&newest); err != nil {
			return fmt.Errorf("store: record coin: %w", err)
		}
		if newest.Valid && newest.Int64 >= at {
			at = newest.Int64 + 1
		}
		if _, err := x.exec(ctx, `INSERT INTO coin_history (member_id, kind, coin, used_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (member_id, kind, coin) DO UPDATE SET used_at = excluded.used_at`,
			memberID, kind, coin, at); err != nil {
			return fmt.Errorf("store: record coin: %w", err)
		}
		if _, err := x.exec(ctx, `DELETE FROM coin_history WHERE member_id = ? AND kind = ? AND coin NOT IN
			(SELECT coin FROM coin_history WHERE member_id = ? AND kind = ? ORDER BY used_at DESC, coin LIMIT 5)`,
			memberID, kind, memberID, kind); err != nil {
			return fmt.Errorf("store: record coin: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.CoinHistory(ctx, memberID, kind)
}

// DepositExchange is the exchange slug the member chose for deposits; "" when they chose none.
func (s *Store) DepositExchange(ctx context.Context, memberID string) (string, error) {
	var ex string
	err := s.r().row(ctx, `SELECT deposit_exchange FROM member_wallet WHERE member_id = ?`, memberID).Scan(&ex)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store: deposit exchange: %w", err)
	}
	return ex, nil
}

// SetDepositExchange stores the member's deposit exchange (a slug; the caller checks it is configured).
// ErrNotFound for an unknown member.
func (s *Store) SetDepositExchange(ctx context.Context, memberID, exchange string) error {
	if !slugRe.MatchString(exchange) {
		return fmt.Errorf("%w: exchange %q is not a slug", ErrInvalid, exchange)
	}
	_, err := s.w().exec(ctx, `INSERT INTO member_wallet (member_id, deposit_exchange, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (member_id) DO UPDATE SET deposit_exchange = excluded.deposit_exchange, updated_at = excluded.updated_at`,
		memberID, exchange, micros(s.stamp()))
	if isForeignKey(err) {
		return fmt.Errorf("%w: member %q", ErrNotFound, memberID)
	}
	if err != nil {
		return fmt.Errorf("store: set deposit exchange: %w", err)
	}
	return nil
}
