package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Kinds of money movement (movements.kind).
const (
	MovementTransfer         = "transfer"
	MovementWithdraw         = "withdraw"
	MovementConvert          = "convert"
	MovementGift             = "gift"
	MovementFaucet           = "faucet"
	MovementExchangeTransfer = "exchange_transfer"
)

// Journal states of a movement (movements.state).
const (
	// MovementSent: the intent is written and the plugin call is (or was, before a crash) under way.
	MovementSent = "sent"
	// MovementAcknowledged: the exchange took it; it is not final yet (a withdrawal on its way).
	MovementAcknowledged = "acknowledged"
	// MovementCompleted: the money moved.
	MovementCompleted = "completed"
	// MovementRejected: the exchange (or exhub, before sending) refused it; nothing moved.
	MovementRejected = "rejected"
	// MovementUnknown: the call may have executed; the wallet service resolves it by client id.
	MovementUnknown = "unknown"
	// MovementFailed: resolved as never executed, or the exchange reports it failed.
	MovementFailed = "failed"
)

// MovementKinds lists the kinds, for validation.
var MovementKinds = []string{MovementTransfer, MovementWithdraw, MovementConvert, MovementGift, MovementFaucet,
	MovementExchangeTransfer}

// MovementStates lists the states, for validation.
var MovementStates = []string{MovementSent, MovementAcknowledged, MovementCompleted, MovementRejected, MovementUnknown,
	MovementFailed}

// Movement is one entry of the money-movement journal. Amounts are decimal strings.
type Movement struct {
	ID             string
	MemberID       string
	Exchange       string
	AccountID      string
	Kind           string
	ClientID       string
	IdempotencyKey string
	RequestHash    string
	Asset          string
	Amount         string
	Fee            string
	ToAsset        string
	ToAmount       string
	FromWallet     string
	ToWallet       string
	Network        string
	Address        string
	Memo           string
	TargetExchange string
	// RecipientMemberID is the member a gift goes to (it shows in their list too).
	RecipientMemberID string
	FromSubAccount    string
	ToSubAccount      string
	QuoteID           string

	State           string
	ExchangeID      string
	ExchangeStatus  string
	TxID            string
	ErrorCode       string
	ExchangeCode    string
	ErrorText       string
	ResolveAttempts int
	NextResolveAt   time.Time
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// Final reports whether the entry's state can no longer change.
func (m Movement) Final() bool {
	return m.State == MovementCompleted || m.State == MovementRejected || m.State == MovementFailed
}

// MovementOutcome is what the exchange said about a movement (or what resolving it found). Empty fields keep the
// column's value.
type MovementOutcome struct {
	ExchangeID     string
	ExchangeStatus string
	TxID           string
	Fee            string
	ToAmount       string
	ErrorCode      string
	ExchangeCode   string
	ErrorText      string
}

const (
	maxMovementText = 128
	maxAddress      = 256
	// MaxMovementList is the most rows one ListMovements call returns.
	MaxMovementList = 500
)

const movementColumns = `id, member_id, exchange, account_id, kind, client_id, idempotency_key, request_hash, asset,
	amount, fee, to_asset, to_amount, from_wallet, to_wallet, network, address, memo, target_exchange,
	recipient_member_id, from_sub_account, to_sub_account, quote_id, state, exchange_id, exchange_status, tx_id,
	error_code, exchange_code, error_text, resolve_attempts, next_resolve_at, created_at, updated_at`

func scanMovement(sc interface{ Scan(...any) error }) (Movement, error) {
	var m Movement
	var next sql.NullInt64
	var created, updated int64
	err := sc.Scan(&m.ID, &m.MemberID, &m.Exchange, &m.AccountID, &m.Kind, &m.ClientID, &m.IdempotencyKey,
		&m.RequestHash, &m.Asset, &m.Amount, &m.Fee, &m.ToAsset, &m.ToAmount, &m.FromWallet, &m.ToWallet, &m.Network,
		&m.Address, &m.Memo, &m.TargetExchange, &m.RecipientMemberID, &m.FromSubAccount, &m.ToSubAccount, &m.QuoteID,
		&m.State, &m.ExchangeID, &m.ExchangeStatus, &m.TxID, &m.ErrorCode, &m.ExchangeCode, &m.ErrorText,
		&m.ResolveAttempts, &next, &created, &updated)
	if err != nil {
		return Movement{}, err
	}
	m.NextResolveAt = nullMicros(next)
	m.CreatedAt, m.UpdatedAt = fromMicros(created), fromMicros(updated)
	return m, nil
}

func oneMovement(row *sql.Row) (Movement, error) {
	m, err := scanMovement(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Movement{}, fmt.Errorf("%w: movement", ErrNotFound)
	}
	if err != nil {
		return Movement{}, fmt.Errorf("store: movement: %w", err)
	}
	return m, nil
}

func validMovement(m Movement) error {
	for name, v := range map[string]string{"member id": m.MemberID, "exchange": m.Exchange, "client id": m.ClientID,
		"asset": m.Asset, "amount": m.Amount} {
		if v == "" || len(v) > maxMovementText {
			return fmt.Errorf("%w: movement %s %q", ErrInvalid, name, v)
		}
	}
	kindOK := false
	for _, k := range MovementKinds {
		kindOK = kindOK || k == m.Kind
	}
	if !kindOK {
		return fmt.Errorf("%w: movement kind %q", ErrInvalid, m.Kind)
	}
	if _, err := decimal.NewFromString(m.Amount); err != nil {
		return fmt.Errorf("%w: movement amount %q", ErrInvalid, m.Amount)
	}
	for name, v := range map[string]string{"account id": m.AccountID, "network": m.Network, "memo": m.Memo,
		"target exchange": m.TargetExchange, "recipient": m.RecipientMemberID, "quote id": m.QuoteID,
		"from wallet": m.FromWallet, "to wallet": m.ToWallet, "fee": m.Fee, "to asset": m.ToAsset,
		"to amount": m.ToAmount, "from sub-account": m.FromSubAccount, "to sub-account": m.ToSubAccount} {
		if len(v) > maxMovementText {
			return fmt.Errorf("%w: movement %s too long", ErrInvalid, name)
		}
	}
	if len(m.Address) > maxAddress {
		return fmt.Errorf("%w: movement address too long", ErrInvalid)
	}
	if len(m.IdempotencyKey) > maxIdempotencyKey {
		return fmt.Errorf("%w: idempotency key longer than %d", ErrInvalid, maxIdempotencyKey)
	}
	return nil
}

// CreateMovement writes an intent in state sent, before the plugin call. A row with the member's IdempotencyKey
// already there is returned instead (created false) when its RequestHash matches; a different hash is
// ErrKeyReused. A client id already journaled on the exchange is ErrConflict.
func (s *Store) CreateMovement(ctx context.Context, m Movement) (Movement, bool, error) {
	if err := validMovement(m); err != nil {
		return Movement{}, false, err
	}
	now := s.stamp()
	m.ID, m.State, m.CreatedAt, m.UpdatedAt = newID(), MovementSent, now, now
	_, err := s.w().exec(ctx, `INSERT INTO movements (id, member_id, exchange, account_id, kind, client_id,
		idempotency_key, request_hash, asset, amount, fee, to_asset, to_amount, from_wallet, to_wallet, network, address,
		memo, target_exchange, recipient_member_id, from_sub_account, to_sub_account, quote_id, state, created_at,
		updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		m.ID, m.MemberID, m.Exchange, m.AccountID, m.Kind, m.ClientID, m.IdempotencyKey, m.RequestHash, m.Asset,
		m.Amount, m.Fee, m.ToAsset, m.ToAmount, m.FromWallet, m.ToWallet, m.Network, m.Address, m.Memo,
		m.TargetExchange, m.RecipientMemberID, m.FromSubAccount, m.ToSubAccount, m.QuoteID, m.State, micros(now),
		micros(now))
	if err != nil {
		if isUnique(err) {
			if m.IdempotencyKey != "" {
				if prev, err2 := s.movementByKey(ctx, s.w(), m.MemberID, m.IdempotencyKey); err2 == nil {
					if prev.RequestHash != m.RequestHash {
						return Movement{}, false, ErrKeyReused
					}
					return prev, false, nil
				}
			}
			return Movement{}, false, fmt.Errorf("%w: client id %q already journaled", ErrConflict, m.ClientID)
		}
		return Movement{}, false, fmt.Errorf("store: insert movement: %w", err)
	}
	return m, true, nil
}

func (s *Store) movementByKey(ctx context.Context, x q, memberID, key string) (Movement, error) {
	return oneMovement(x.row(ctx, "SELECT "+movementColumns+" FROM movements WHERE "+byKeyWhere, memberID, key))
}

// MovementByKey returns the member's entry made with an Idempotency-Key.
func (s *Store) MovementByKey(ctx context.Context, memberID, key string) (Movement, error) {
	return s.movementByKey(ctx, s.r(), memberID, key)
}

// Movement returns one entry by id.
func (s *Store) Movement(ctx context.Context, id string) (Movement, error) {
	return oneMovement(s.r().row(ctx, "SELECT "+movementColumns+" FROM movements WHERE id = ?", id))
}

// MemberMovement returns an entry the member made, or a gift the member received (completed: a gift still on its way
// or one that failed is the sender's business); ErrNotFound for anything else.
func (s *Store) MemberMovement(ctx context.Context, memberID, id string) (Movement, error) {
	return oneMovement(s.r().row(ctx, "SELECT "+movementColumns+` FROM movements WHERE id = ?
		AND (member_id = ? OR (kind = ? AND recipient_member_id = ? AND recipient_member_id <> '' AND state = ?))`,
		id, memberID, MovementGift, memberID, MovementCompleted))
}

// MovementByExchangeID returns the entry of an account that the exchange's id was matched to (ErrNotFound when
// none): what keeps two entries from claiming one record of an exchange's history.
func (s *Store) MovementByExchangeID(ctx context.Context, exchange, accountID, kind, exchangeID string) (Movement, error) {
	return oneMovement(s.r().row(ctx, "SELECT "+movementColumns+` FROM movements WHERE exchange = ? AND account_id = ?
		AND kind = ? AND exchange_id = ? AND exchange_id <> '' LIMIT 1`, exchange, accountID, kind, exchangeID))
}

// AcknowledgeMovement records that the exchange took a movement that is not final yet; the wallet service looks at
// it again at next (zero: not before it is asked to).
func (s *Store) AcknowledgeMovement(ctx context.Context, id string, out MovementOutcome, next time.Time) (Movement, error) {
	return s.moveTo(ctx, id, []string{MovementSent, MovementUnknown, MovementAcknowledged}, MovementAcknowledged, out, next)
}

// CompleteMovement records that the money moved.
func (s *Store) CompleteMovement(ctx context.Context, id string, out MovementOutcome) (Movement, error) {
	return s.moveTo(ctx, id, []string{MovementSent, MovementUnknown, MovementAcknowledged}, MovementCompleted, out, time.Time{})
}

// RejectMovement records a refusal (from sent or unknown): nothing moved.
func (s *Store) RejectMovement(ctx context.Context, id string, out MovementOutcome) (Movement, error) {
	return s.moveTo(ctx, id, []string{MovementSent, MovementUnknown}, MovementRejected, out, time.Time{})
}

// FailMovement records that a movement did not execute after all (an unknown outcome the exchange does not know),
// or that the exchange reports it failed.
func (s *Store) FailMovement(ctx context.Context, id string, out MovementOutcome) (Movement, error) {
	return s.moveTo(ctx, id, []string{MovementSent, MovementUnknown, MovementAcknowledged}, MovementFailed, out, time.Time{})
}

// MarkMovementUnknown records that the call may have executed; the resolver looks at it again at next.
func (s *Store) MarkMovementUnknown(ctx context.Context, id string, next time.Time) (Movement, error) {
	return s.moveTo(ctx, id, []string{MovementSent, MovementUnknown}, MovementUnknown, MovementOutcome{}, next)
}

func (s *Store) moveTo(ctx context.Context, id string, from []string, to string, out MovementOutcome, next time.Time) (Movement, error) {
	now := s.stamp()
	set := `state = ?, updated_at = ?,
		exchange_id = CASE WHEN ? = '' THEN exchange_id ELSE ? END,
		exchange_status = CASE WHEN ? = '' THEN exchange_status ELSE ? END,
		tx_id = CASE WHEN ? = '' THEN tx_id ELSE ? END,
		fee = CASE WHEN ? = '' THEN fee ELSE ? END,
		to_amount = CASE WHEN ? = '' THEN to_amount ELSE ? END,
		error_code = CASE WHEN ? = '' THEN error_code ELSE ? END,
		exchange_code = CASE WHEN ? = '' THEN exchange_code ELSE ? END,
		error_text = CASE WHEN ? = '' THEN error_text ELSE ? END`
	text := clip(out.ErrorText, maxRejectMessage)
	args := []any{to, micros(now), out.ExchangeID, out.ExchangeID, out.ExchangeStatus, out.ExchangeStatus, out.TxID,
		out.TxID, out.Fee, out.Fee, out.ToAmount, out.ToAmount, out.ErrorCode, out.ErrorCode, out.ExchangeCode,
		out.ExchangeCode, text, text}
	switch to {
	case MovementUnknown:
		set += ", resolve_attempts = resolve_attempts + 1, next_resolve_at = ?"
		args = append(args, micros(next.UTC().Truncate(time.Microsecond)))
	case MovementAcknowledged:
		if next.IsZero() {
			set += ", next_resolve_at = NULL"
		} else {
			set += ", resolve_attempts = resolve_attempts + 1, next_resolve_at = ?"
			args = append(args, micros(next.UTC().Truncate(time.Microsecond)))
		}
	case MovementCompleted, MovementRejected, MovementFailed:
		set += ", next_resolve_at = NULL"
	default:
		return Movement{}, fmt.Errorf("%w: movement state %q", ErrInvalid, to)
	}
	args = append(args, id)
	for _, f := range from {
		args = append(args, f)
	}
	query := "UPDATE movements SET " + set + " WHERE id = ? AND state IN (?" + strings.Repeat(", ?", len(from)-1) +
		") RETURNING " + movementColumns
	m, err := oneMovement(s.w().row(ctx, query, args...))
	if errors.Is(err, ErrNotFound) {
		cur, rerr := s.Movement(ctx, id)
		if rerr != nil {
			return Movement{}, rerr
		}
		return Movement{}, fmt.Errorf("%w: movement %s is %s, cannot become %s", ErrInvalidTransition, id, cur.State, to)
	}
	if err != nil {
		return Movement{}, fmt.Errorf("store: update movement: %w", err)
	}
	return m, nil
}

// MovementsToResolve returns entries whose outcome is open: unknown ones due at now, sent ones untouched since
// sentBefore (left by a crash or a call that never came back), and acknowledged ones due at now (a withdrawal on its
// way, followed until it completes), oldest first.
func (s *Store) MovementsToResolve(ctx context.Context, now, sentBefore time.Time, limit int) ([]Movement, error) {
	if limit <= 0 || limit > MaxMovementList {
		limit = MaxMovementList
	}
	return s.movements(ctx, `SELECT `+movementColumns+` FROM movements
		WHERE (state IN (?, ?) AND next_resolve_at IS NOT NULL AND next_resolve_at <= ?)
			OR (state = ? AND next_resolve_at IS NULL)
			OR (state = ? AND updated_at < ?)
		ORDER BY created_at LIMIT ?`,
		MovementUnknown, MovementAcknowledged, micros(now), MovementUnknown, MovementSent, micros(sentBefore), limit)
}

// MovementFilter selects a member's entries. Empty fields match everything.
type MovementFilter struct {
	Kind     string
	Exchange string
	State    string
	// Before and BeforeID page older rows: created before Before, or at Before with a smaller id.
	Before   time.Time
	BeforeID string
	Limit    int
}

// ListMovements returns the member's entries and the gifts the member received (completed), newest first.
func (s *Store) ListMovements(ctx context.Context, memberID string, f MovementFilter) ([]Movement, error) {
	query := "SELECT " + movementColumns + ` FROM movements
		WHERE (member_id = ? OR (kind = ? AND recipient_member_id = ? AND recipient_member_id <> '' AND state = ?))`
	args := []any{memberID, MovementGift, memberID, MovementCompleted}
	if f.Kind != "" {
		query += " AND kind = ?"
		args = append(args, f.Kind)
	}
	if f.Exchange != "" {
		query += " AND exchange = ?"
		args = append(args, f.Exchange)
	}
	if f.State != "" {
		query += " AND state = ?"
		args = append(args, f.State)
	}
	if !f.Before.IsZero() {
		query += " AND (created_at < ? OR (created_at = ? AND id < ?))"
		args = append(args, micros(f.Before), micros(f.Before), f.BeforeID)
	}
	if f.Limit <= 0 || f.Limit > MaxMovementList {
		f.Limit = MaxMovementList
	}
	query += " ORDER BY created_at DESC, id DESC LIMIT ?"
	args = append(args, f.Limit)
	return s.movements(ctx, query, args...)
}

// MovementTotal sums the amounts of a member's movements of one kind, exchange and asset made since a time, leaving
// out those that moved nothing (rejected, failed): what a daily cap counts.
func (s *Store) MovementTotal(ctx context.Context, memberID, kind, exchange, asset string, since time.Time) (decimal.Decimal, error) {
	rows, err := s.r().query(ctx, `SELECT amount FROM movements WHERE member_id = ? AND kind = ? AND exchange = ?
		AND asset = ? AND created_at >= ? AND state NOT IN (?, ?)`,
		memberID, kind, exchange, asset, micros(since), MovementRejected, MovementFailed)
	if err != nil {
		return decimal.Zero, fmt.Errorf("store: movement total: %w", err)
	}
	defer rows.Close()
	sum := decimal.Zero
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			return decimal.Zero, fmt.Errorf("store: movement total: %w", err)
		}
		d, err := decimal.NewFromString(a)
		if err != nil {
			return decimal.Zero, fmt.Errorf("store: movement total: amount %q: %w", a, err)
		}
		sum = sum.Add(d)
	}
	return sum, rows.Err()
}

func (s *Store) movements(ctx context.Context, query string, args ...any) ([]Movement, error) {
	rows, err := s.r().query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: movements: %w", err)
	}
	defer rows.Close()
	var out []Movement
	for rows.Next() {
		m, err := scanMovement(rows)
		if err != nil {
			return nil, fmt.Errorf("store: movements: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: movements: %w", err)
	}
	return out, nil
}
