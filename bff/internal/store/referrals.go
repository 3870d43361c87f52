package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/shopspring/decimal"
)

// Reward states.
const (
	RewardUnsettled = "unsettled"
	RewardSettled   = "settled"
)

var coinRe = regexp.MustCompile(`^[A-Z0-9]{1,16}$`)

// Referee is a member someone referred.
type Referee struct {
	ID       string
	Nickname string
	JoinedAt time.Time
}

// Reward is one referral reward: a share of a referee's trading fee, say.
type Reward struct {
	ID        string
	MemberID  string // who earns it (the referrer)
	RefereeID string
	Amount    decimal.Decimal
	Coin      string
	State     string
	// SourceRef identifies what earned it (a fill id, say); a second reward with the same ref is refused.
	SourceRef string
	CreatedAt time.Time
	SettledAt time.Time
}

// RewardTotals are sums per coin, exact.
type RewardTotals struct {
	Settled   decimal.Decimal
	Unsettled decimal.Decimal
}

// ListReferees returns the members this member referred, oldest first.
func (s *Store) ListReferees(ctx context.Context, memberID string) ([]Referee, error) {
	rows, err := s.r().query(ctx, `SELECT id, nickname, created_at FROM members WHERE referred_by = ?
		ORDER BY created_at, id`, memberID)
	if err != nil {
		return nil, fmt.Errorf("store: referees: %w", err)
	}
	defer rows.Close()
	out := []Referee{}
	for rows.Next() {
		var r Referee
		var at int64
		if err := rows.Scan(&r.ID, &r.Nickname, &at); err != nil {
			return nil, fmt.Errorf("store: referees: %w", err)
		}
		r.JoinedAt = fromMicros(at)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: referees: %w", err)
	}
	return out, nil
}

// AddReward records an unsettled reward for the referee's referrer. The referee must have been referred by
// r.MemberID (else ErrInvalid); a SourceRef already recorded gets ErrConflict, so replays are harmless.
func (s *Store) AddReward(ctx context.Context, r Reward) (Reward, error) {
	if !r.Amount.IsPositive() {
		return Reward{}, fmt.Errorf("%w: reward amount %s is not positive", ErrInvalid, r.Amount)
	}
	if !coinRe.MatchString(r.Coin) {
		return Reward{}, fmt.Errorf("%w: coin %q", ErrInvalid, r.Coin)
	}
	if r.SourceRef == "" || len(r.SourceRef) > 200 {
		return Reward{}, fmt.Errorf("%w: source ref %q", ErrInvalid, r.SourceRef)
	}
	referee, err := s.member(ctx, s.w(), r.RefereeID)
	if err != nil {
		return Reward{}, err
	}
	if referee.ReferredBy == "" || referee.ReferredBy != r.MemberID {
		return Reward{}, fmt.Errorf("%w: member %q did not refer %q", ErrInvalid, r.MemberID, r.RefereeID)
	}
	r.ID, r.State, r.CreatedAt, r.SettledAt = newID(), RewardUnsettled, s.stamp(), time.Time{}
	_, err = s.w().exec(ctx, `INSERT INTO referral_rewards (id, member_id, referee_id, amount, coin, state, source_ref,
		created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, r.ID, r.MemberID, r.RefereeID, r.Amount.String(), r.Coin, r.State,
		r.SourceRef, micros(r.CreatedAt))
	if isUnique(err) {
		return Reward{}, fmt.Errorf("%w: reward for %q already recorded", ErrConflict, r.SourceRef)
	}
	if err != nil {
		return Reward{}, fmt.Errorf("store: add reward: %w", err)
	}
	return r, nil
}

// SettleReward marks an unsettled reward settled (ErrInvalidTransition if it already is).
func (s *Store) SettleReward(ctx context.Context, id string) error {
	res, err := s.w().exec(ctx, "UPDATE referral_rewards SET state = ?, settled_at = ? WHERE id = ? AND state = ?",
		RewardSettled, micros(s.stamp()), id, RewardUnsettled)
	if err := oneRow(res, err, "unsettled reward", id); err != nil {
		if errors.Is(err, ErrNotFound) {
			var state string
			if e := s.w().row(ctx, "SELECT state FROM referral_rewards WHERE id = ?", id).Scan(&state); e == nil {
				return fmt.Errorf("%w: reward %s is already %s", ErrInvalidTransition, id, state)
			} else if !errors.Is(e, sql.ErrNoRows) {
				return fmt.Errorf("store: settle reward: %w", e)
			}
		}
		return err
	}
	return nil
}

// ListRewards returns the member's rewards, newest first, at most limit (1 to 1000).
func (s *Store) ListRewards(ctx context.Context, memberID string, limit int) ([]Reward, error) {
	if limit < 1 || limit > 1000 {
		return nil, fmt.Errorf("%w: limit %d", ErrInvalid, limit)
	}
	rows, err := s.r().query(ctx, `SELECT id, member_id, referee_id, amount, coin, state, source_ref, created_at,
		settled_at FROM referral_rewards WHERE member_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`, memberID, limit)
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

// RewardTotals sums the member's rewards per coin and state. The amounts are added as decimals in Go (never as
// floating point in SQL), so 0.1 + 0.2 is 0.3.
func (s *Store) RewardTotals(ctx context.Context, memberID string) (map[string]RewardTotals, error) {
	rows, err := s.r().query(ctx, "SELECT coin, state, amount FROM referral_rewards WHERE member_id = ?", memberID)
	if err != nil {
		return nil, fmt.Errorf("store: reward totals: %w", err)
	}
	defer rows.Close()
	out := map[string]RewardTotals{}
	for rows.Next() {
		var coin, state, amount string
		if err := rows.Scan(&coin, &state, &amount); err != nil {
			return nil, fmt.Errorf("store: reward totals: %w", err)
		}
		v, err := decimal.NewFromString(amount)
		if err != nil {
			return nil, fmt.Errorf("store: reward amount %q: %w", amount, err)
		}
		t := out[coin]
		if state == RewardSettled {
			t.Settled = t.Settled.Add(v)
		} else {
			t.Unsettled = t.Unsettled.Add(v)
		}
		out[coin] = t
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: reward totals: %w", err)
	}
	return out, nil
}
