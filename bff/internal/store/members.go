package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Member is one signed-up user, keyed by the Kratos identity id.
type Member struct {
	ID        string
	CreatedAt time.Time
	Nickname  string
	Locale    string
	// ReferralCode is the member's own code, shown to people they refer.
	ReferralCode string
	// ReferredBy is the referrer's member id, empty when none.
	ReferredBy string
	// LastLogin is the newest recorded login (this session's, once RecordLogin ran for it).
	LastLogin Login
	// PreviousLogin is the login before LastLogin: what "last login" on the profile shows during a session.
	PreviousLogin Login
	// WithdrawLockedUntil is the end of the withdrawal lockout after a security change (zero: never locked).
	WithdrawLockedUntil time.Time
}

// WithdrawLocked reports whether withdrawals are locked at now.
func (m Member) WithdrawLocked(now time.Time) bool { return now.Before(m.WithdrawLockedUntil) }

// Login is one sign-in. A zero At means none recorded.
type Login struct {
	At time.Time
	IP string
	// SessionID is the Kratos session the login belongs to (RecordLogin ignores a second call for the same one).
	SessionID string
}

// NewMember is what EnsureMember needs to create a member on first sight.
type NewMember struct {
	ID       string
	Nickname string
	Locale   string
	// ReferralCode is the code the member signed up with (someone else's). Applied only when the row is created:
	// an unknown code or the member's own is ignored.
	ReferralCode string
}

// Security event kinds: the changes that start the withdrawal lockout.
const (
	SecurityPassword = "password"
	SecurityEmail    = "email"
	SecurityMobile   = "mobile"
	SecurityTOTP     = "totp"
	// SecurityRecoveryCodes is a new set of recovery codes (Kratos' lookup secrets) for the second factor.
	SecurityRecoveryCodes = "recovery_codes"
	SecurityOTPReset      = "otp_reset"
)

// SecurityEvent is one security change of a member.
type SecurityEvent struct {
	ID   string
	Kind string
	At   time.Time
	IP   string
}

// Limits on member fields.
const (
	MaxIDLen       = 64
	MaxNicknameLen = 32 // characters
	MaxLocaleLen   = 16
	referralLen    = 8
	// referralAlphabet leaves out 0/O, 1/I/L so codes read back unambiguously.
	referralAlphabet = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
)

const memberColumns = `id, created_at, nickname, locale, referral_code, COALESCE(referred_by, ''),
	last_login_at, last_login_ip, last_login_session, prev_login_at, prev_login_ip, withdraw_locked_until`

func scanMember(sc interface{ Scan(...any) error }) (Member, error) {
	var m Member
	var created int64
	var last, prev, locked sql.NullInt64
	err := sc.Scan(&m.ID, &created, &m.Nickname, &m.Locale, &m.ReferralCode, &m.ReferredBy,
		&last, &m.LastLogin.IP, &m.LastLogin.SessionID, &prev, &m.PreviousLogin.IP, &locked)
	if err != nil {
		return Member{}, err
	}
	m.CreatedAt = fromMicros(created)
	m.LastLogin.At = nullMicros(last)
	m.PreviousLogin.At = nullMicros(prev)
	m.WithdrawLockedUntil = nullMicros(locked)
	return m, nil
}

func validID(id string) error {
	if id == "" || len(id) > MaxIDLen || strings.TrimSpace(id) != id || !utf8.ValidString(id) {
		return fmt.Errorf("%w: member id %q", ErrInvalid, id)
	}
	return nil
}

// ValidNickname checks a nickname: 1 to 32 characters, no control characters, no surrounding spaces.
func ValidNickname(n string) error {
	if !utf8.ValidString(n) || n == "" || utf8.RuneCountInString(n) > MaxNicknameLen || strings.TrimSpace(n) != n {
		return fmt.Errorf("%w: nickname must be 1 to %d characters without surrounding spaces", ErrInvalid, MaxNicknameLen)
	}
	for _, r := range n {
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: nickname has a control character", ErrInvalid)
		}
	}
	return nil
}

// NormalizeReferralCode upper-cases and trims a code typed by a person.
func NormalizeReferralCode(code string) string { return strings.ToUpper(strings.TrimSpace(code)) }

func newReferralCode() string {
	b := make([]byte, referralLen)
	_, _ = rand.Read(b) // never fails (crypto/rand panics on its own failure)
	out := make([]byte, referralLen)
	for i, v := range b {
		// 256 % 31 = 8: the first 8 letters are a little likelier; codes are identifiers, not secrets.
		out[i] = referralAlphabet[int(v)%len(referralAlphabet)]
	}
	return string(out)
}

// EnsureMember returns the member with nm.ID, creating it on first sight. created reports whether this call made
// the row (the caller then merges a new member's local favorites, say). Concurrent calls for one id create one row.
func (s *Store) EnsureMember(ctx context.Context, nm NewMember) (m Member, created bool, err error) {
	if err := validID(nm.ID); err != nil {
		return Member{}, false, err
	}
	if m, err := s.member(ctx, s.r(), nm.ID); err == nil { // the common case: seen before
		return m, false, nil
	} else if !errors.Is(err, ErrNotFound) {
		return Member{}, false, err
	}
	nick := strings.TrimSpace(nm.Nickname)
	if ValidNickname(nick) != nil {
		nick = ""
	}
	locale := nm.Locale
	if len(locale) > MaxLocaleLen {
		locale = ""
	}
	var referrer any // NULL unless the code names another member
	if code := NormalizeReferralCode(nm.ReferralCode); code != "" {
		var id string
		err := s.w().row(ctx, "SELECT id FROM members WHERE referral_code = ?", code).Scan(&id)
		switch {
		case err == nil && id != nm.ID:
			referrer = id
		case err != nil && !errors.Is(err, sql.ErrNoRows):
			return Member{}, false, fmt.Errorf("store: referral code: %w", err)
		}
	}
	// ON CONFLICT DO NOTHING covers both a concurrent insert of the same id and a referral code collision; the
	// second is told apart by the row still missing, and retried with a new code.
	for range 8 {
		res, err := s.w().exec(ctx, `INSERT INTO members (id, created_at, nickname, locale, referral_code, referred_by)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			nm.ID, micros(s.stamp()), nick, locale, newReferralCode(), referrer)
		if err != nil {
			return Member{}, false, fmt.Errorf("store: insert member: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return Member{}, false, fmt.Errorf("store: insert member: %w", err)
		}
		m, err := s.member(ctx, s.w(), nm.ID)
		if err == nil {
			return m, n == 1, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return Member{}, false, err
		}
	}
	return Member{}, false, fmt.Errorf("store: no free referral code after 8 tries")
}

// Member returns one member.
func (s *Store) Member(ctx context.Context, id string) (Member, error) {
	return s.member(ctx, s.r(), id)
}

func (s *Store) member(ctx context.Context, x q, id string) (Member, error) {
	m, err := scanMember(x.row(ctx, "SELECT "+memberColumns+" FROM members WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return Member{}, fmt.Errorf("%w: member %q", ErrNotFound, id)
	}
	if err != nil {
		return Member{}, fmt.Errorf("store: member: %w", err)
	}
	return m, nil
}

// MemberByReferralCode returns the member owning code (typed by a person: case and spaces do not matter).
func (s *Store) MemberByReferralCode(ctx context.Context, code string) (Member, error) {
	code = NormalizeReferralCode(code)
	m, err := scanMember(s.r().row(ctx, "SELECT "+memberColumns+" FROM members WHERE referral_code = ?", code))
	if errors.Is(err, sql.ErrNoRows) {
		return Member{}, fmt.Errorf("%w: referral code %q", ErrNotFound, code)
	}
	if err != nil {
		return Member{}, fmt.Errorf("store: member by referral code: %w", err)
	}
	return m, nil
}

// UpdateNickname sets the nickname (see ValidNickname).
func (s *Store) UpdateNickname(ctx context.Context, id, nickname string) error {
	if err := ValidNickname(nickname); err != nil {
		return err
	}
	res, err := s.w().exec(ctx, "UPDATE members SET nickname = ? WHERE id = ?", nickname, id)
	return oneRow(res, err, "member", id)
}

// SetLocale sets the member's locale (a BCP 47 tag such as "en" or "ja").
func (s *Store) SetLocale(ctx context.Context, id, locale string) error {
	if locale == "" || len(locale) > MaxLocaleLen {
		return fmt.Errorf("%w: locale %q", ErrInvalid, locale)
	}
	res, err := s.w().exec(ctx, "UPDATE members SET locale = ? WHERE id = ?", locale, id)
	return oneRow(res, err, "member", id)
}

// RecordLogin stores a sign-in: the newest login moves to PreviousLogin and l becomes LastLogin. Only a newer
// sign-in moves them: a second call with the same non-empty SessionID, or with an authentication time (to the
// microsecond) not after LastLogin's, changes nothing. So the two reports of one sign-in (Kratos' login web hook
// and the session's first request, which carry the same authentication time) record it once in either order, and a
// late report of an older sign-in never displaces a newer one.
func (s *Store) RecordLogin(ctx context.Context, id string, l Login) error {
	if l.At.IsZero() {
		return fmt.Errorf("%w: login time is zero", ErrInvalid)
	}
	res, err := s.w().exec(ctx, `UPDATE members SET
			prev_login_at = last_login_at, prev_login_ip = last_login_ip,
			last_login_at = ?, last_login_ip = ?, last_login_session = ?
		WHERE id = ? AND (? = '' OR last_login_session <> ?) AND (last_login_at IS NULL OR last_login_at < ?)`,
		micros(l.At), l.IP, l.SessionID, id, l.SessionID, l.SessionID, micros(l.At))
	if err != nil {
		return fmt.Errorf("store: record login: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: record login: %w", err)
	} else if n == 0 {
		_, err := s.member(ctx, s.w(), id) // same or older sign-in, or no such member
		return err
	}
	return nil
}

// StartWithdrawLockout locks withdrawals until `until` (an earlier end never shortens a running lockout) and
// appends ev to the member's security events, in one transaction.
func (s *Store) StartWithdrawLockout(ctx context.Context, id string, ev SecurityEvent, until time.Time) error {
	switch ev.Kind {
	case SecurityPassword, SecurityEmail, SecurityMobile, SecurityTOTP, SecurityRecoveryCodes, SecurityOTPReset:
	default:
		return fmt.Errorf("%w: security event kind %q", ErrInvalid, ev.Kind)
	}
	if ev.At.IsZero() {
		ev.At = s.stamp()
	}
	u := micros(until)
	return s.tx(ctx, func(x q) error {
		res, err := x.exec(ctx, `UPDATE members SET withdraw_locked_until =
				CASE WHEN withdraw_locked_until IS NULL OR withdraw_locked_until < ? THEN ? ELSE withdraw_locked_until END
			WHERE id = ?`, u, u, id)
		if err := oneRow(res, err, "member", id); err != nil {
			return err
		}
		_, err = x.exec(ctx, "INSERT INTO security_events (id, member_id, kind, at, ip) VALUES (?, ?, ?, ?, ?)",
			newID(), id, ev.Kind, micros(ev.At), ev.IP)
		if err != nil {
			return fmt.Errorf("store: security event: %w", err)
		}
		return nil
	})
}

// SecurityEvents returns the member's newest security events first, at most limit (1 to 1000).
func (s *Store) SecurityEvents(ctx context.Context, id string, limit int) ([]SecurityEvent, error) {
	if limit < 1 || limit > 1000 {
		return nil, fmt.Errorf("%w: limit %d", ErrInvalid, limit)
	}
	rows, err := s.r().query(ctx,
		"SELECT id, kind, at, ip FROM security_events WHERE member_id = ? ORDER BY at DESC, id DESC LIMIT ?", id, limit)
	if err != nil {
		return nil, fmt.Errorf("store: security events: %w", err)
	}
	defer rows.Close()
	var out []SecurityEvent
	for rows.Next() {
		var e SecurityEvent
		var at int64
		if err := rows.Scan(&e.ID, &e.Kind, &at, &e.IP); err != nil {
			return nil, fmt.Errorf("store: security events: %w", err)
		}
		e.At = fromMicros(at)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: security events: %w", err)
	}
	return out, nil
}

// oneRow turns an UPDATE's result into nil, ErrNotFound (no row matched) or the wrapped error.
func oneRow(res sql.Result, err error, what, id string) error {
	if err != nil {
		return fmt.Errorf("store: update %s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: update %s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %s %q", ErrNotFound, what, id)
	}
	return nil
}
