package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Exchange account modes.
const (
	AccountBroker = "broker" // a sub-account of the operator's master account, made for the member
	AccountLinked = "linked" // the member's own API key
)

// Exchange account states.
const (
	AccountProvisioning = "provisioning"
	AccountActive       = "active"
	AccountFailed       = "failed"
)

// Provisioning steps of a broker account, in order.
const (
	StepCreateSubAccount = "create_sub_account"
	StepCreateAPIKey     = "create_api_key"
	StepTransfer         = "transfer"
)

// Provisioning step states.
const (
	StepStarted = "started"
	StepDone    = "done"
	StepFailed  = "failed"
)

// Limits on exchange account fields.
const (
	MaxAccountNameLen = 64 // characters
	maxSealedLen      = 8192
)

// ExchangeAccount is a member's account on one exchange. Sealed holds the credentials encrypted under the
// key-encryption key KEKID (the store never sees them in the clear).
type ExchangeAccount struct {
	ID           string
	MemberID     string
	Exchange     string
	Mode         string // AccountBroker or AccountLinked
	Name         string
	SubAccountID string // the exchange's sub-account id (broker mode)
	KeyLast4     string // the API key's last four characters, the only part shown
	Sealed       string
	KEKID        string
	// Permissions are what the key could do when it was linked or made, comma-separated ("read,trade").
	Permissions  string
	Status       string
	StatusReason string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// ProvisionStep is one journaled provisioning call.
type ProvisionStep struct {
	AccountID string
	Step      string
	// RequestID is the client request id sent with the call, written before it: a resumed step sends it again.
	RequestID string
	State     string
	Result    string // what the step made that later steps need (the sub-account id), never a secret
	Error     string
	Attempts  int
	CreatedAt time.Time
	UpdatedAt time.Time
}

const accountColumns = `id, member_id, exchange, mode, name, sub_account_id, key_last4, sealed, kek_id, permissions,
	status, status_reason, created_at, updated_at`

func scanAccount(sc interface{ Scan(...any) error }) (ExchangeAccount, error) {
	var a ExchangeAccount
	var created, updated int64
	err := sc.Scan(&a.ID, &a.MemberID, &a.Exchange, &a.Mode, &a.Name, &a.SubAccountID, &a.KeyLast4, &a.Sealed, &a.KEKID,
		&a.Permissions, &a.Status, &a.StatusReason, &created, &updated)
	if err != nil {
		return ExchangeAccount{}, err
	}
	a.CreatedAt, a.UpdatedAt = fromMicros(created), fromMicros(updated)
	return a, nil
}

func (a ExchangeAccount) validate() error {
	if a.ID == "" || len(a.ID) > MaxIDLen {
		return fmt.Errorf("%w: account id %q", ErrInvalid, a.ID)
	}
	if err := validID(a.MemberID); err != nil {
		return err
	}
	if !slugRe.MatchString(a.Exchange) {
		return fmt.Errorf("%w: exchange %q is not a slug", ErrInvalid, a.Exchange)
	}
	if a.Mode != AccountBroker && a.Mode != AccountLinked {
		return fmt.Errorf("%w: account mode %q", ErrInvalid, a.Mode)
	}
	if err := ValidAccountName(a.Name); err != nil {
		return err
	}
	switch a.Status {
	case AccountProvisioning, AccountFailed:
	case AccountActive:
		if a.Sealed == "" || a.KEKID == "" {
			return fmt.Errorf("%w: an active account needs sealed credentials", ErrInvalid)
		}
	default:
		return fmt.Errorf("%w: account status %q", ErrInvalid, a.Status)
	}
	if len(a.Sealed) > maxSealedLen || len(a.KeyLast4) > 16 || len(a.SubAccountID) > 128 || len(a.Permissions) > 256 {
		return fmt.Errorf("%w: account field too long", ErrInvalid)
	}
	return nil
}

// ValidAccountName checks an account's display name: 1 to 64 characters, no control characters, no surrounding
// spaces.
func ValidAccountName(n string) error {
	if err := ValidNickname(n); err != nil || len([]rune(n)) > MaxAccountNameLen {
		return fmt.Errorf("%w: account name must be 1 to %d characters without surrounding spaces or control characters",
			ErrInvalid, MaxAccountNameLen)
	}
	return nil
}

// CreateExchangeAccount stores a new account. ErrConflict when the member already has one on that exchange,
// ErrNotFound when the member does not exist.
func (s *Store) CreateExchangeAccount(ctx context.Context, a ExchangeAccount) (ExchangeAccount, error) {
	now := s.stamp()
	a.CreatedAt, a.UpdatedAt = now, now
	if a.Name == "" {
		a.Name = a.Exchange
	}
	if err := a.validate(); err != nil {
		return ExchangeAccount{}, err
	}
	_, err := s.w().exec(ctx, `INSERT INTO exchange_accounts (`+accountColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.MemberID, a.Exchange, a.Mode, a.Name, a.SubAccountID, a.KeyLast4, a.Sealed, a.KEKID, a.Permissions,
		a.Status, a.StatusReason, micros(now), micros(now))
	switch {
	case isUnique(err):
		return ExchangeAccount{}, fmt.Errorf("%w: the member already has an account on %s", ErrConflict, a.Exchange)
	case isForeignKey(err):
		return ExchangeAccount{}, fmt.Errorf("%w: member %q", ErrNotFound, a.MemberID)
	case err != nil:
		return ExchangeAccount{}, fmt.Errorf("store: create exchange account: %w", err)
	}
	return a, nil
}

// ExchangeAccounts lists the member's accounts by exchange.
func (s *Store) ExchangeAccounts(ctx context.Context, memberID string) ([]ExchangeAccount, error) {
	return s.accounts(ctx, s.r(), "SELECT "+accountColumns+" FROM exchange_accounts WHERE member_id = ? ORDER BY exchange", memberID)
}

// ExchangeAccount returns one of the member's accounts; ErrNotFound when it does not exist or is another member's.
func (s *Store) ExchangeAccount(ctx context.Context, memberID, id string) (ExchangeAccount, error) {
	return s.account(ctx, s.r(), "SELECT "+accountColumns+" FROM exchange_accounts WHERE member_id = ? AND id = ?", memberID, id)
}

// ExchangeAccountOn returns the member's account on an exchange; ErrNotFound when there is none.
func (s *Store) ExchangeAccountOn(ctx context.Context, memberID, exchange string) (ExchangeAccount, error) {
	return s.account(ctx, s.r(), "SELECT "+accountColumns+" FROM exchange_accounts WHERE member_id = ? AND exchange = ?",
		memberID, exchange)
}

// ExchangeAccountsByStatus lists accounts in a state, oldest change first (the provisioner resumes them).
func (s *Store) ExchangeAccountsByStatus(ctx context.Context, status string, limit int) ([]ExchangeAccount, error) {
	if limit < 1 || limit > 10000 {
		return nil, fmt.Errorf("%w: limit %d", ErrInvalid, limit)
	}
	return s.accounts(ctx, s.r(), "SELECT "+accountColumns+` FROM exchange_accounts WHERE status = ?
		ORDER BY updated_at, id LIMIT ?`, status, limit)
}

// ExchangeAccountsToRekey lists accounts with sealed credentials under a key other than kekID, at most limit, by
// id after the id given (paging; "" starts).
func (s *Store) ExchangeAccountsToRekey(ctx context.Context, kekID, after string, limit int) ([]ExchangeAccount, error) {
	if limit < 1 || limit > 10000 {
		return nil, fmt.Errorf("%w: limit %d", ErrInvalid, limit)
	}
	return s.accounts(ctx, s.r(), "SELECT "+accountColumns+` FROM exchange_accounts WHERE sealed <> '' AND kek_id <> ?
		AND id > ? ORDER BY id LIMIT ?`, kekID, after, limit)
}

// MembersWithoutAccount lists members with no account on the exchange, newest first, at most limit (the demo
// provisioner gives every new member a broker account).
func (s *Store) MembersWithoutAccount(ctx context.Context, exchange string, limit int) ([]string, error) {
	if limit < 1 || limit > 10000 {
		return nil, fmt.Errorf("%w: limit %d", ErrInvalid, limit)
	}
	rows, err := s.r().query(ctx, `SELECT m.id FROM members m WHERE NOT EXISTS (SELECT 1 FROM exchange_accounts a
		WHERE a.member_id = m.id AND a.exchange = ?) ORDER BY m.created_at DESC, m.id LIMIT ?`, exchange, limit)
	if err != nil {
		return nil, fmt.Errorf("store: members without account: %w", err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: members without account: %w", err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: members without account: %w", err)
	}
	return out, nil
}

// Resealed replaces an account's sealed credentials if they are still the ones read (from under oldKEK as
// oldSealed); false when the row changed or went away meanwhile.
func (s *Store) Resealed(ctx context.Context, id, oldKEK, oldSealed, newKEK, newSealed string) (bool, error) {
	if newKEK == "" || newSealed == "" || len(newSealed) > maxSealedLen {
		return false, fmt.Errorf("%w: resealed credentials", ErrInvalid)
	}
	res, err := s.w().exec(ctx, `UPDATE exchange_accounts SET kek_id = ?, sealed = ?, updated_at = ?
		WHERE id = ? AND kek_id = ? AND sealed = ?`, newKEK, newSealed, micros(s.stamp()), id, oldKEK, oldSealed)
	if err != nil {
		return false, fmt.Errorf("store: reseal: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: reseal: %w", err)
	}
	return n == 1, nil
}

// ActivateExchangeAccount stores the credentials a provisioning made and marks the account active. ErrNotFound
// when the account is gone; ErrConflict when it is not provisioning.
func (s *Store) ActivateExchangeAccount(ctx context.Context, id, subAccountID, keyLast4, kekID, sealed, permissions string) error {
	if kekID == "" || sealed == "" || len(sealed) > maxSealedLen || len(keyLast4) > 16 || len(subAccountID) > 128 {
		return fmt.Errorf("%w: activation needs sealed credentials", ErrInvalid)
	}
	return s.transitionAccount(ctx, id, `sub_account_id = ?, key_last4 = ?, kek_id = ?, sealed = ?, permissions = ?,
		status = 'active', status_reason = ''`, subAccountID, keyLast4, kekID, sealed, permissions)
}

// FailExchangeAccount marks a provisioning account failed with a reason the member may see.
func (s *Store) FailExchangeAccount(ctx context.Context, id, reason string) error {
	return s.transitionAccount(ctx, id, "status = 'failed', status_reason = ?", truncate(reason, 500))
}

// RetryExchangeAccount puts a failed account back into provisioning.
func (s *Store) RetryExchangeAccount(ctx context.Context, id string) error {
	res, err := s.w().exec(ctx, `UPDATE exchange_accounts SET status = 'provisioning', status_reason = '', updated_at = ?
		WHERE id = ? AND status = 'failed'`, micros(s.stamp()), id)
	if err != nil {
		return fmt.Errorf("store: retry exchange account: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("%w: account %q is not failed", ErrConflict, id)
	}
	return nil
}

func (s *Store) transitionAccount(ctx context.Context, id, set string, args ...any) error {
	args = append(args, micros(s.stamp()), id)
	res, err := s.w().exec(ctx, "UPDATE exchange_accounts SET "+set+", updated_at = ? WHERE id = ? AND status = 'provisioning'", args...)
	if err != nil {
		return fmt.Errorf("store: update exchange account: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: update exchange account: %w", err)
	}
	if n == 1 {
		return nil
	}
	var status string
	err = s.w().row(ctx, "SELECT status FROM exchange_accounts WHERE id = ?", id).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: exchange account %q", ErrNotFound, id)
	}
	if err != nil {
		return fmt.Errorf("store: update exchange account: %w", err)
	}
	return fmt.Errorf("%w: exchange account %q is %s, not provisioning", ErrConflict, id, status)
}

// DeleteExchangeAccount deletes one of the member's accounts of the given mode, with its sealed credentials and
// provisioning journal. ErrNotFound when the member has no such account (another member's included).
func (s *Store) DeleteExchangeAccount(ctx context.Context, memberID, id, mode string) error {
	res, err := s.w().exec(ctx, "DELETE FROM exchange_accounts WHERE member_id = ? AND id = ? AND mode = ?", memberID, id, mode)
	if err != nil {
		return fmt.Errorf("store: delete exchange account: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: delete exchange account: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("%w: exchange account %q", ErrNotFound, id)
	}
	return nil
}

// StartProvisionStep journals a step before its call: the first call writes requestID and returns it; a later
// call for the same step (a resume) returns the row already there, with its original request id, and counts the
// attempt. A step already done is returned as it is.
func (s *Store) StartProvisionStep(ctx context.Context, accountID, step, requestID string) (ProvisionStep, error) {
	switch step {
	case StepCreateSubAccount, StepCreateAPIKey, StepTransfer:
	default:
		return ProvisionStep{}, fmt.Errorf("%w: provisioning step %q", ErrInvalid, step)
	}
	if requestID == "" || len(requestID) > 64 {
		return ProvisionStep{}, fmt.Errorf("%w: request id %q", ErrInvalid, requestID)
	}
	var out ProvisionStep
	err := s.tx(ctx, func(x q) error {
		now := micros(s.stamp())
		_, err := x.exec(ctx, `INSERT INTO account_provisioning (account_id, step, request_id, state, created_at, updated_at)
			VALUES (?, ?, ?, 'started', ?, ?) ON CONFLICT (account_id, step) DO UPDATE SET
			attempts = account_provisioning.attempts + 1, updated_at = excluded.updated_at`,
			accountID, step, requestID, now, now)
		switch {
		case isForeignKey(err):
			return fmt.Errorf("%w: exchange account %q", ErrNotFound, accountID)
		case err != nil:
			return fmt.Errorf("store: start provisioning step: %w", err)
		}
		out, err = provisionStep(ctx, x, accountID, step)
		return err
	})
	return out, err
}

// FinishProvisionStep records a step's end: StepDone with its result, or StepFailed with the error.
func (s *Store) FinishProvisionStep(ctx context.Context, accountID, step, state, result, errText string) error {
	if state != StepDone && state != StepFailed {
		return fmt.Errorf("%w: step state %q", ErrInvalid, state)
	}
	res, err := s.w().exec(ctx, `UPDATE account_provisioning SET state = ?, result = ?, error = ?, updated_at = ?
		WHERE account_id = ? AND step = ?`, state, truncate(result, 256), truncate(errText, 500), micros(s.stamp()), accountID, step)
	if err != nil {
		return fmt.Errorf("store: finish provisioning step: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("%w: provisioning step %s of %q", ErrNotFound, step, accountID)
	}
	return nil
}

// ProvisionSteps lists an account's journaled steps.
func (s *Store) ProvisionSteps(ctx context.Context, accountID string) ([]ProvisionStep, error) {
	rows, err := s.r().query(ctx, `SELECT account_id, step, request_id, state, result, error, attempts, created_at, updated_at
		FROM account_provisioning WHERE account_id = ? ORDER BY created_at, step`, accountID)
	if err != nil {
		return nil, fmt.Errorf("store: provisioning steps: %w", err)
	}
	defer rows.Close()
	out := []ProvisionStep{}
	for rows.Next() {
		p, err := scanStep(rows)
		if err != nil {
			return nil, fmt.Errorf("store: provisioning steps: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: provisioning steps: %w", err)
	}
	return out, nil
}

func provisionStep(ctx context.Context, x q, accountID, step string) (ProvisionStep, error) {
	p, err := scanStep(x.row(ctx, `SELECT account_id, step, request_id, state, result, error, attempts, created_at, updated_at
		FROM account_provisioning WHERE account_id = ? AND step = ?`, accountID, step))
	if errors.Is(err, sql.ErrNoRows) {
		return ProvisionStep{}, fmt.Errorf("%w: provisioning step %s of %q", ErrNotFound, step, accountID)
	}
	if err != nil {
		return ProvisionStep{}, fmt.Errorf("store: provisioning step: %w", err)
	}
	return p, nil
}

func scanStep(sc interface{ Scan(...any) error }) (ProvisionStep, error) {
	var p ProvisionStep
	var attempts, created, updated int64
	if err := sc.Scan(&p.AccountID, &p.Step, &p.RequestID, &p.State, &p.Result, &p.Error, &attempts, &created, &updated); err != nil {
		return ProvisionStep{}, err
	}
	p.Attempts, p.CreatedAt, p.UpdatedAt = int(attempts), fromMicros(created), fromMicros(updated)
	return p, nil
}

func (s *Store) account(ctx context.Context, x q, query string, args ...any) (ExchangeAccount, error) {
	a, err := scanAccount(x.row(ctx, query, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return ExchangeAccount{}, fmt.Errorf("%w: exchange account", ErrNotFound)
	}
	if err != nil {
		return ExchangeAccount{}, fmt.Errorf("store: exchange account: %w", err)
	}
	return a, nil
}

func (s *Store) accounts(ctx context.Context, x q, query string, args ...any) ([]ExchangeAccount, error) {
	rows, err := x.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: exchange accounts: %w", err)
	}
	defer rows.Close()
	out := []ExchangeAccount{}
	for rows.Next() {
		a, err := scanAccount(rows)
		if err != nil {
			return nil, fmt.Errorf("store: exchange accounts: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: exchange accounts: %w", err)
	}
	return out, nil
}

// truncate cuts s to at most n bytes, dropping a character cut in half.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
