package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

// ReferredMember is a member who signed up with another member's code.
type ReferredMember struct {
	ID         string
	ReferredBy string
	JoinedAt   time.Time
}

// MaxReferredMembers bounds one ReferredMembers page.
const MaxReferredMembers = 1000

// ReferredMembers lists members who were referred, oldest first, after the member id after ("" from the start), at
// most limit (1 to MaxReferredMembers): the rewards job walks them page by page.
func (s *Store) ReferredMembers(ctx context.Context, after string, limit int) ([]ReferredMember, error) {
	if limit < 1 || limit > MaxReferredMembers {
		return nil, fmt.Errorf("%w: limit %d", ErrInvalid, limit)
	}
	rows, err := s.r().query(ctx, `SELECT id, referred_by, created_at FROM members
		WHERE referred_by IS NOT NULL AND referred_by <> '' AND id > ? ORDER BY id LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("store: referred members: %w", err)
	}
	defer rows.Close()
	out := []ReferredMember{}
	for rows.Next() {
		var m ReferredMember
		var at int64
		if err := rows.Scan(&m.ID, &m.ReferredBy, &at); err != nil {
			return nil, fmt.Errorf("store: referred members: %w", err)
		}
		m.JoinedAt = fromMicros(at)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: referred members: %w", err)
	}
	return out, nil
}

// FillCursor is how far the member's fills on an exchange and market type were read for rewards (ok false: never).
func (s *Store) FillCursor(ctx context.Context, memberID, exchange, marketType string) (time.Time, bool, error) {
	var at int64
	err := s.r().row(ctx, `SELECT read_until FROM referral_fill_cursors WHERE member_id = ? AND exchange = ?
		AND market_type = ?`, memberID, exchange, marketType).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("store: fill cursor: %w", err)
	}
	return fromMicros(at), true, nil
}

// SetFillCursor records that the member's fills were read up to at (it never moves back).
func (s *Store) SetFillCursor(ctx context.Context, memberID, exchange, marketType string, at time.Time) error {
	_, err := s.w().exec(ctx, `INSERT INTO referral_fill_cursors (member_id, exchange, market_type, read_until, updated_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (member_id, exchange, market_type) DO UPDATE
		SET read_until = excluded.read_until, updated_at = excluded.updated_at
		WHERE referral_fill_cursors.read_until < excluded.read_until`,
		memberID, exchange, marketType, micros(at), micros(s.stamp()))
	if isForeignKey(err) {
		return fmt.Errorf("%w: member %q", ErrNotFound, memberID)
	}
	if err != nil {
		return fmt.Errorf("store: fill cursor: %w", err)
	}
	return nil
}

// RewardsByState lists every member's rewards in a state (settled or unsettled), oldest first, optionally of one
// member (memberID ""), at most limit (1 to 1000): the operator's settlement list.
func (s *Store) RewardsByState(ctx context.Context, state, memberID string, limit int) ([]Reward, error) {
	if state != RewardSettled && state != RewardUnsettled {
		return nil, fmt.Errorf("%w: reward state %q", ErrInvalid, state)
	}
	if limit < 1 || limit > 1000 {
		return nil, fmt.Errorf("%w: limit %d", ErrInvalid, limit)
	}
	rows, err := s.r().query(ctx, `SELECT id, member_id, referee_id, amount, coin, state, source_ref, created_at,
		settled_at FROM referral_rewards WHERE state = ? AND (? = '' OR member_id = ?) ORDER BY created_at, id LIMIT ?`,
		state, memberID, memberID, limit)
	if err != nil {
		return nil, fmt.Errorf("store: rewards: %w", err)
	}
	defer rows.Close()
	out := []Reward{}
	for rows.Next() {
		var r Reward
		var amount string
		var at int64
		var settled sql.NullInt64
		if err := rows.Scan(&r.ID, &r.MemberID, &r.RefereeID, &amount, &r.Coin, &r.State, &r.SourceRef, &at,
			&settled); err != nil {
			return nil, fmt.Errorf("store: rewards: %w", err)
		}
		if r.Amount, err = decimal.NewFromString(amount); err != nil {
			return nil, fmt.Errorf("store: reward %s amount %q: %w", r.ID, amount, err)
		}
		r.CreatedAt, r.SettledAt = fromMicros(at), nullMicros(settled)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: rewards: %w", err)
	}
	return out, nil
}
