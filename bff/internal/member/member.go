// Package member keeps the BFF's member rows in step with Kratos: it creates a member on first sight (from Kratos'
// after-registration web hook or lazily on the member's first authenticated request), records logins (IP and time,
// once per session) and starts the withdrawal lockout after security changes (Kratos' after-settings web hook).
// Nothing depends on a hook having run: the hooks are asynchronous in Kratos and may be lost when the BFF is down,
// so every authenticated request of the account API calls Ensure first.
package member

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/store"
)

// Service is the member layer over the store. It is safe for concurrent use.
type Service struct {
	store *store.Store
	cfg   Config
	log   *slog.Logger
	now   func() time.Time
	seen  *sessionSet
}

// Option adjusts New.
type Option func(*Service)

// WithClock sets the clock (tests).
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// New returns the service over st.
func New(st *store.Store, cfg Config, log *slog.Logger, opts ...Option) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Service{store: st, cfg: cfg, log: log, now: time.Now, seen: newSessionSet(maxSeenSessions)}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Store is the store the service writes to.
func (s *Service) Store() *store.Store { return s.store }

// Config is the service's configuration.
func (s *Service) Config() Config { return s.cfg }

// Now is the service's clock.
func (s *Service) Now() time.Time { return s.now() }

// Ensure returns the member row of the signed-in member m, creating it on first sight (nickname, locale and
// referral code from the identity's traits) and recording the session's login once per session.
func (s *Service) Ensure(ctx context.Context, m *auth.Member) (store.Member, error) {
	row, err := s.ensure(ctx, m.ID, traits{Nickname: m.Nickname, Locale: m.Locale, ReferralCode: m.ReferralCode})
	if err != nil {
		return store.Member{}, err
	}
	if m.SessionID == "" || s.seen.has(m.SessionID) {
		return row, nil
	}
	at := m.AuthenticatedAt
	if at.IsZero() {
		at = s.now()
	}
	if err := s.recordOnce(ctx, row, store.Login{At: at, IP: m.ClientIP, SessionID: m.SessionID}); err != nil {
		return store.Member{}, err
	}
	s.seen.add(m.SessionID)
	return s.store.Member(ctx, m.ID)
}

// recordOnce records l. The store keeps only a newer sign-in than the latest recorded, so the login web hook and
// the session's first request (both carrying the session's authentication time) record one sign-in once, whichever
// comes first, and two sign-ins moments apart stay two.
func (s *Service) recordOnce(ctx context.Context, row store.Member, l store.Login) error {
	if l.SessionID != "" && row.LastLogin.SessionID == l.SessionID {
		return nil
	}
	if err := s.store.RecordLogin(ctx, row.ID, l); err != nil {
		return fmt.Errorf("member: record login: %w", err)
	}
	return nil
}

type traits struct {
	Email        string `json:"email"`
	Phone        string `json:"phone"`
	Nickname     string `json:"nickname"`
	Locale       string `json:"locale"`
	ReferralCode string `json:"referral_code"`
}

func (s *Service) ensure(ctx context.Context, id string, t traits) (store.Member, error) {
	row, created, err := s.store.EnsureMember(ctx, store.NewMember{ID: id, Nickname: t.Nickname, Locale: t.Locale,
		ReferralCode: t.ReferralCode})
	if err != nil {
		return store.Member{}, fmt.Errorf("member: ensure %s: %w", id, err)
	}
	if created {
		code := store.NormalizeReferralCode(t.ReferralCode)
		switch {
		case code != "" && row.ReferredBy == "":
			s.log.Info("member created; referral code ignored (no other member has it)", "member", id, "referral_code", code)
		case code != "":
			s.log.Info("member created", "member", id, "referred_by", row.ReferredBy)
		default:
			s.log.Info("member created", "member", id)
		}
	}
	return row, nil
}

// RecordLogin records a sign-in reported by Kratos (the login web hook): the member is created if needed.
func (s *Service) RecordLogin(ctx context.Context, id string, t traits, l store.Login) error {
	row, err := s.ensure(ctx, id, t)
	if err != nil {
		return err
	}
	if l.At.IsZero() {
		l.At = s.now()
	}
	if err := s.recordOnce(ctx, row, l); err != nil {
		return err
	}
	if l.SessionID != "" {
		s.seen.add(l.SessionID)
	}
	return nil
}

// SecurityChange starts the withdrawal lockout (Config.WithdrawLockout from now) and appends a security event of
// kind (store.SecurityPassword, SecurityEmail, ...).
func (s *Service) SecurityChange(ctx context.Context, id, kind, ip string) error {
	if _, err := s.ensure(ctx, id, traits{}); err != nil {
		return err
	}
	now := s.now()
	if err := s.store.StartWithdrawLockout(ctx, id, store.SecurityEvent{Kind: kind, At: now, IP: ip},
		now.Add(s.cfg.WithdrawLockout)); err != nil {
		return fmt.Errorf("member: security change %s of %s: %w", kind, id, err)
	}
	s.log.Info("withdrawal lockout started", "member", id, "change", kind, "until", now.Add(s.cfg.WithdrawLockout))
	return nil
}

// maxSeenSessions bounds the set of sessions whose login is known to be recorded.
const maxSeenSessions = 50_000

// sessionSet remembers session ids up to a bound; when full it starts over (a forgotten session costs one idempotent
// RecordLogin on its next request).
type sessionSet struct {
	mu  sync.Mutex
	max int
	m   map[string]struct{}
}

func newSessionSet(max int) *sessionSet { return &sessionSet{max: max, m: make(map[string]struct{})} }

func (s *sessionSet) has(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.m[id]
	return ok
}

func (s *sessionSet) add(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) >= s.max {
		clear(s.m)
	}
	s.m[id] = struct{}{}
}

// IsNotFound reports a store ErrNotFound.
func IsNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }
