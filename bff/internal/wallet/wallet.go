// Package wallet is the BFF's money-movement path: transfers between a member's funding and trading wallets,
// withdrawals, converts, gifts to other members, demo faucet grants and transfers to a partner exchange. Every
// movement is written to the journal (store table movements) with a client id the BFF assigns before the one plugin
// call; the call is made once, detached from the request, and its outcome recorded. An unknown outcome is pending,
// resolved by asking the exchange by client id (never by sending again); movements on their way (a withdrawal, a
// transfer to another exchange) are followed until they complete. Decision 0023.
//
// A member only ever acts on their own accounts: every call takes the session's member, and the account comes from
// the account source for that member, never from the request.
package wallet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/bff/internal/accounts"
	"github.com/exhub/exhub/bff/internal/config/setting"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/servicegate"
	"github.com/exhub/exhub/bff/internal/store"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// Config is the wallet section of the BFF configuration (suggested environment names EXHUB_WALLET_<KEY>).
type Config struct {
	// CallTimeout bounds one plugin call.
	CallTimeout setting.Duration `yaml:"call_timeout"`
	// ResolveInitial and ResolveMax are the backoff between two lookups of an unknown outcome.
	ResolveInitial setting.Duration `yaml:"resolve_initial"`
	ResolveMax     setting.Duration `yaml:"resolve_max"`
	// NotFoundGrace is how long after the intent a movement the exchange does not know may still appear; only after
	// it does "not found" conclude "not executed".
	NotFoundGrace setting.Duration `yaml:"not_found_grace"`
	// SentStale is the age after which an entry still sent, with no call under way in this process, is resolved
	// like an unknown outcome (a crash between the journal write and the answer).
	SentStale setting.Duration `yaml:"sent_stale"`
	// FollowInterval is how often a movement on its way (a withdrawal, a transfer to another exchange) is read again.
	FollowInterval setting.Duration `yaml:"follow_interval"`
	// Tick is how often the resolver looks for due entries.
	Tick setting.Duration `yaml:"tick"`
	// IdempotencyWait is how long a repeated request waits for the first one's outcome before answering pending.
	IdempotencyWait setting.Duration `yaml:"idempotency_wait"`
	// Faucet: demo mode's grant from the operator's master account to a member's sub-account.
	FaucetAsset    string `yaml:"faucet_asset"`
	FaucetAmount   string `yaml:"faucet_amount"`
	FaucetDailyCap string `yaml:"faucet_daily_cap"`
	// FeeFreeExchange is the partner exchange that transfers in FeeFreeAsset go to between FeeFreeMin and
	// FeeFreeMax (the spec's 20 to 20,000 USDT); empty: none.
	FeeFreeExchange string `yaml:"fee_free_exchange"`
	FeeFreeAsset    string `yaml:"fee_free_asset"`
	FeeFreeMin      string `yaml:"fee_free_min"`
	FeeFreeMax      string `yaml:"fee_free_max"`
	// SecondFactorWindow is how recently a member with an authenticator app must have entered a code in this
	// session for money to leave the account (withdrawals, transfers to another exchange, gifts); older: 403
	// second_factor_stale and the UI asks for a code again.
	SecondFactorWindow setting.Duration `yaml:"second_factor_window"`
}

// Defaults are the production settings.
func Defaults() Config {
	return Config{
		CallTimeout:     setting.Duration(10 * time.Second),
		ResolveInitial:  setting.Duration(500 * time.Millisecond),
		ResolveMax:      setting.Duration(30 * time.Second),
		NotFoundGrace:   setting.Duration(30 * time.Second),
		SentStale:       setting.Duration(30 * time.Second),
		FollowInterval:  setting.Duration(30 * time.Second),
		Tick:            setting.Duration(250 * time.Millisecond),
		IdempotencyWait: setting.Duration(15 * time.Second),
		FaucetAsset:     "USDT",
		FaucetAmount:    "10000",
		FaucetDailyCap:  "30000",
		FeeFreeExchange: "binance",
		FeeFreeAsset:    "USDT",
		FeeFreeMin:      "20",
		FeeFreeMax:      "20000",

		SecondFactorWindow: setting.Duration(5 * time.Minute),
	}
}

// Validate names each bad key relative to the section.
func (c Config) Validate() error {
	var p setting.Problems
	p.Positive(setting.KeyDuration{Key: "call_timeout", D: c.CallTimeout},
		setting.KeyDuration{Key: "resolve_initial", D: c.ResolveInitial}, setting.KeyDuration{Key: "resolve_max", D: c.ResolveMax},
		setting.KeyDuration{Key: "not_found_grace", D: c.NotFoundGrace}, setting.KeyDuration{Key: "sent_stale", D: c.SentStale},
		setting.KeyDuration{Key: "follow_interval", D: c.FollowInterval}, setting.KeyDuration{Key: "tick", D: c.Tick},
		setting.KeyDuration{Key: "idempotency_wait", D: c.IdempotencyWait},
		setting.KeyDuration{Key: "second_factor_window", D: c.SecondFactorWindow})
	if c.ResolveMax < c.ResolveInitial {
		p.Add("resolve_max", "%s is below resolve_initial %s", c.ResolveMax.D(), c.ResolveInitial.D())
	}
	if c.SentStale > 0 && c.SentStale <= c.CallTimeout {
		p.Add("sent_stale", "%s must exceed call_timeout %s (a call under way is not stale)", c.SentStale.D(), c.CallTimeout.D())
	}
	for key, v := range map[string]string{"faucet_amount": c.FaucetAmount, "faucet_daily_cap": c.FaucetDailyCap,
		"fee_free_min": c.FeeFreeMin, "fee_free_max": c.FeeFreeMax} {
		if d, err := decimal.NewFromString(v); err != nil || d.IsNegative() {
			p.Add(key, "%q is not a decimal amount", v)
		}
	}
	if c.FaucetAsset == "" {
		p.Add("faucet_asset", "must be set")
	}
	if c.FeeFreeExchange != "" && c.FeeFreeAsset == "" {
		p.Add("fee_free_asset", "must be set with fee_free_exchange")
	}
	if lo, err1 := decimal.NewFromString(c.FeeFreeMin); err1 == nil {
		if hi, err2 := decimal.NewFromString(c.FeeFreeMax); err2 == nil && hi.LessThan(lo) {
			p.Add("fee_free_max", "%s is below fee_free_min %s", c.FeeFreeMax, c.FeeFreeMin)
		}
	}
	return p.Err()
}

// Accounts gives a member's exchange accounts (accounts.Service is one). AccountRef's error wraps
// accounts.ErrNoAccount when the member has no active account on the exchange.
type Accounts interface {
	AccountRef(ctx context.Context, memberID, exchange string) (*exchangev1.AccountRef, error)
	List(ctx context.Context, memberID string) ([]accounts.Account, error)
}

// Plugins are the running exchange plugins (*pluginhost.Host is one).
type Plugins interface {
	Get(slug string) (*pluginhost.Supervisor, bool)
	Supervisors() []*pluginhost.Supervisor
}

// Directory finds a member by e-mail (Kratos' admin API: KratosDirectory). ErrNoMember when there is none.
type Directory interface {
	MemberIDByEmail(ctx context.Context, email string) (string, error)
}

// ErrNoMember: no member has that e-mail address.
var ErrNoMember = errors.New("wallet: no such member")

// Caller is the signed-in member a movement is made for, as the session says.
type Caller struct {
	ID string
	// TwoFactor: an authenticator app is enrolled; AAL the session's assurance level (aal1, aal2).
	TwoFactor bool
	AAL       string
	// SecondFactorAt is when the session last completed the second factor (zero: never).
	SecondFactorAt time.Time
}

// Options builds a Service.
type Options struct {
	Config   Config
	Store    *store.Store
	Plugins  Plugins
	Accounts Accounts
	// Masters are the operator's master (broker) accounts per exchange: withdrawals (a sub-account's key cannot
	// withdraw: the master does), gifts (sub-account to sub-account) and the faucet (master to sub-account) are sent
	// with them. Nil: no withdrawals, gifts or faucet.
	Masters map[string]*exchangev1.AccountRef
	// Directory finds a gift's recipient by e-mail; nil: gifts by member id only.
	Directory Directory
	// Gates refuses withdrawals and transfers an exchange's config gates on two-factor or KYC; nil gates nothing.
	Gates *servicegate.Checker
	// Demo: demo mode (the faucet is open only then).
	Demo   bool
	Logger *slog.Logger
	// Now is the clock (tests); nil time.Now.
	Now func() time.Time
	// ClientIDs, when set, gives the next client id (tests that arm an emulator fault for a known id); "" falls back
	// to a random one.
	ClientIDs func() string
}

// Service is the money-movement path. Run must be running for unknown outcomes to be resolved and movements on
// their way to be followed.
type Service struct {
	cfg       Config
	st        *store.Store
	plugins   Plugins
	accounts  Accounts
	masters   map[string]*exchangev1.AccountRef
	directory Directory
	gates     *servicegate.Checker
	demo      bool
	log       *slog.Logger
	now       func() time.Time
	clientIDs func() string

	faucetAmount, faucetCap, feeFreeMin, feeFreeMax decimal.Decimal

	// kick wakes the resolver at once (an unknown outcome). Capacity 1; extra kicks are dropped.
	kick chan struct{}

	mu sync.Mutex
	// inflight holds the journal ids whose plugin call runs in this process; the channel closes when it returns.
	inflight map[string]chan struct{}

	stats counters
}

// New builds the service. Nothing runs before Run.
func New(o Options) (*Service, error) {
	if err := o.Config.Validate(); err != nil {
		return nil, err
	}
	if o.Store == nil || o.Plugins == nil || o.Accounts == nil {
		return nil, errors.New("wallet: store, plugins and accounts are required")
	}
	s := &Service{cfg: o.Config, st: o.Store, plugins: o.Plugins, accounts: o.Accounts, masters: o.Masters,
		directory: o.Directory, gates: o.Gates, demo: o.Demo, log: o.Logger, now: o.Now, clientIDs: o.ClientIDs,
		kick: make(chan struct{}, 1), inflight: map[string]chan struct{}{}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.faucetAmount = decimal.RequireFromString(o.Config.FaucetAmount)
	s.faucetCap = decimal.RequireFromString(o.Config.FaucetDailyCap)
	s.feeFreeMin = decimal.RequireFromString(o.Config.FeeFreeMin)
	s.feeFreeMax = decimal.RequireFromString(o.Config.FeeFreeMax)
	return s, nil
}

// Error is a refusal a member sees: an HTTP status, a stable code, the field at fault, the exchange's own code and
// a sentence (the spec's where it has one).
type Error struct {
	Status       int
	Code         string
	Field        string
	ExchangeCode string
	Message      string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Messages the spec fixes.
const (
	MsgCoverFees = "Your balance insufficient to cover withdrawal amount and fees."
	MsgExceeds   = "The amount exceeds the balance"
	MsgMinimum   = "Cannot be less than the minimum amount"
	MsgAvailable = "Your available balance is insufficient."
)

func invalid(field, msg string) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Code: "invalid_argument", Field: field, Message: msg}
}

func refuse(status int, code, field, msg string) *Error {
	return &Error{Status: status, Code: code, Field: field, Message: msg}
}

// supervisor returns the running plugin of an exchange.
func (s *Service) supervisor(exchange string) (*pluginhost.Supervisor, error) {
	sup, ok := s.plugins.Get(exchange)
	if !ok {
		return nil, refuse(http.StatusNotFound, "exchange_not_found", "exchange", "This exchange is not available.")
	}
	if sup.Describe() == nil {
		return nil, refuse(http.StatusServiceUnavailable, "exchange_unavailable", "",
			"The exchange is not reachable right now; try again shortly.")
	}
	return sup, nil
}

// account returns the member's account on exchange and what the accounts service knows of it (mode, sub-account).
func (s *Service) account(ctx context.Context, memberID, exchange string) (*exchangev1.AccountRef, accounts.Account, error) {
	ref, err := s.accounts.AccountRef(ctx, memberID, exchange)
	if err != nil {
		if errors.Is(err, accounts.ErrNoAccount) {
			return nil, accounts.Account{}, refuse(http.StatusConflict, "no_account", "exchange",
				"You have no account on this exchange yet: open or link one first.")
		}
		return nil, accounts.Account{}, fmt.Errorf("wallet: account of the member on %s: %w", exchange, err)
	}
	if ref.GetAccountId() == "" {
		return nil, accounts.Account{}, fmt.Errorf("wallet: account source gave no account id for %s", exchange)
	}
	list, err := s.accounts.List(ctx, memberID)
	if err != nil {
		return nil, accounts.Account{}, fmt.Errorf("wallet: accounts of the member: %w", err)
	}
	for _, a := range list {
		if a.ID == ref.GetAccountId() {
			return ref, a, nil
		}
	}
	return ref, accounts.Account{ID: ref.GetAccountId(), Exchange: exchange}, nil
}

// call runs one plugin call bounded by CallTimeout, detached from the request's cancellation: a client that goes
// away must not turn a sent movement into an unknown one.
func (s *Service) call(ctx context.Context, sup *pluginhost.Supervisor, method string,
	fn func(context.Context, exchangev1.ExchangeClient) error) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.CallTimeout.D())
	defer cancel()
	return sup.Call(cctx, method, fn)
}

// newClientID is "ex" and 30 random hex digits (letters and digits only, which every exchange's client id format
// takes), cut to max (at least 16) when the plugin declares a shorter one.
func (s *Service) newClientID(max int32) string {
	if s.clientIDs != nil {
		if id := s.clientIDs(); id != "" {
			return id
		}
	}
	var b [15]byte
	_, _ = rand.Read(b[:])
	id := "ex" + hex.EncodeToString(b[:])
	if max >= 16 && int(max) < len(id) {
		id = id[:max]
	}
	return id
}

func (s *Service) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// backoff is the wait before the attempt-th lookup of an unknown outcome.
func (s *Service) backoff(attempt int) time.Duration {
	d := s.cfg.ResolveInitial.D()
	for i := 1; i < attempt && d < s.cfg.ResolveMax.D(); i++ {
		d *= 2
	}
	return min(d, s.cfg.ResolveMax.D())
}

// follow is the wait before the next read of a movement on its way that was read attempts times: FollowInterval,
// doubled every ten reads up to 16 times it (a transfer that takes hours is not read every few seconds all along).
func (s *Service) follow(attempts int) time.Duration {
	return s.cfg.FollowInterval.D() * time.Duration(1<<min(attempts/10, 4))
}

// Movement returns one of the member's journal entries (or a gift the member received); another member's is
// movement_not_found.
func (s *Service) Movement(ctx context.Context, memberID, id string) (store.Movement, error) {
	m, err := s.st.MemberMovement(ctx, memberID, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Movement{}, refuse(http.StatusNotFound, "movement_not_found", "id", "There is no such movement.")
	}
	return m, err
}

// MovementByKey returns the member's entry made with an Idempotency-Key (zero when none).
func (s *Service) MovementByKey(ctx context.Context, memberID, key string) store.Movement {
	m, _ := s.st.MovementByKey(ctx, memberID, key)
	return m
}

// List returns the member's journal, newest first (the gifts the member received included).
func (s *Service) List(ctx context.Context, memberID string, f store.MovementFilter) ([]store.Movement, error) {
	return s.st.ListMovements(ctx, memberID, f)
}
