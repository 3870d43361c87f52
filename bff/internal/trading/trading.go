// Package trading is the BFF's order path: it journals every order intent in the store before the plugin call,
// records the outcome (acknowledged, rejected or unknown), resolves unknown outcomes by client id, and reconciles the
// journal with the exchanges' open orders after a start, a plugin restart or on demand. Reads (open orders, history,
// fills, positions, leverage and modes) go to the member's own account on the exchange.
//
// A member only ever acts on their own accounts: every call takes the member id of the session, and the account
// comes from the AccountSource for that member, never from the request.
package trading

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"time"

	"github.com/exhub/exhub/bff/internal/accountstream/feed"
	"github.com/exhub/exhub/bff/internal/config/setting"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/store"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// AccountSource gives the exchange account of a member (accounts.Service is one). An error wrapping the sentinel
// given with WithNoAccountError (or ErrNoAccount) means the member has no account on that exchange.
type AccountSource interface {
	AccountRef(ctx context.Context, memberID, exchange string) (*exchangev1.AccountRef, error)
}

// Plugins are the running exchange plugins (*pluginhost.Host is one).
type Plugins interface {
	Get(slug string) (*pluginhost.Supervisor, bool)
	Supervisors() []*pluginhost.Supervisor
}

// ErrNoAccount: the member has no account on the exchange.
var ErrNoAccount = errors.New("no exchange account")

// Config is the trading section of the BFF configuration (bff/exhub.yaml; suggested environment names
// EXHUB_TRADING_<KEY>). Zero values are invalid: start from Defaults.
type Config struct {
	// CallTimeout bounds one plugin call.
	CallTimeout setting.Duration `yaml:"call_timeout"`
	// ResolveInitial and ResolveMax are the backoff between two lookups of an unknown outcome.
	ResolveInitial setting.Duration `yaml:"resolve_initial"`
	ResolveMax     setting.Duration `yaml:"resolve_max"`
	// NotFoundGrace is how long after the intent an order the exchange does not know may still appear (an order in
	// flight is not visible at once); only after it does "not found" conclude "not placed".
	NotFoundGrace setting.Duration `yaml:"not_found_grace"`
	// SentStale is the age after which an entry still in state sent, with no call under way in this process, is
	// resolved like an unknown outcome (a crash between the journal write and the answer).
	SentStale setting.Duration `yaml:"sent_stale"`
	// ReconcileInterval is the period of the full reconciliation of open orders (besides start and plugin
	// restarts).
	ReconcileInterval setting.Duration `yaml:"reconcile_interval"`
	// Tick is how often the service's loop looks for due resolutions and plugin restarts.
	Tick setting.Duration `yaml:"tick"`
	// InstrumentTTL is how long a plugin's instrument list is cached per exchange and market type.
	InstrumentTTL setting.Duration `yaml:"instrument_ttl"`
	// IdempotencyWait is how long a repeated request waits for the first one's outcome before answering pending.
	IdempotencyWait setting.Duration `yaml:"idempotency_wait"`
}

// Defaults are the production settings.
func Defaults() Config {
	return Config{
		CallTimeout:       setting.Duration(10 * time.Second),
		ResolveInitial:    setting.Duration(500 * time.Millisecond),
		ResolveMax:        setting.Duration(30 * time.Second),
		NotFoundGrace:     setting.Duration(30 * time.Second),
		SentStale:         setting.Duration(30 * time.Second),
		ReconcileInterval: setting.Duration(5 * time.Minute),
		Tick:              setting.Duration(250 * time.Millisecond),
		InstrumentTTL:     setting.Duration(5 * time.Minute),
		IdempotencyWait:   setting.Duration(15 * time.Second),
	}
}

// Validate names each bad key relative to the section.
func (c Config) Validate() error {
	var p setting.Problems
	p.Positive(setting.KeyDuration{Key: "call_timeout", D: c.CallTimeout},
		setting.KeyDuration{Key: "resolve_initial", D: c.ResolveInitial}, setting.KeyDuration{Key: "resolve_max", D: c.ResolveMax},
		setting.KeyDuration{Key: "not_found_grace", D: c.NotFoundGrace}, setting.KeyDuration{Key: "sent_stale", D: c.SentStale},
		setting.KeyDuration{Key: "reconcile_interval", D: c.ReconcileInterval}, setting.KeyDuration{Key: "tick", D: c.Tick},
		setting.KeyDuration{Key: "instrument_ttl", D: c.InstrumentTTL},
		setting.KeyDuration{Key: "idempotency_wait", D: c.IdempotencyWait})
	if c.ResolveMax < c.ResolveInitial {
		p.Add("resolve_max", "%s is below resolve_initial %s", c.ResolveMax.D(), c.ResolveInitial.D())
	}
	if c.SentStale > 0 && c.SentStale <= c.CallTimeout {
		p.Add("sent_stale", "%s must exceed call_timeout %s (a call under way is not stale)", c.SentStale.D(), c.CallTimeout.D())
	}
	return p.Err()
}

// Option adjusts New.
type Option func(*Service)

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(s *Service) { s.log = l } }

// WithClock sets the clock (tests).
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// WithNoAccountError names the AccountSource's "no account" sentinel (accounts.ErrNoAccount).
func WithNoAccountError(err error) Option { return func(s *Service) { s.noAccount = err } }

// WithClientIDs makes the service take its client order ids from next (an empty answer: a random id as usual).
// Tests and tools that must know an id before the order is sent (to arm an emulator fault) use it.
func WithClientIDs(next func() string) Option { return func(s *Service) { s.testClientID = next } }

// Service is the order path. Run must be running for unknown outcomes to be resolved and the journal reconciled.
type Service struct {
	cfg       Config
	st        *store.Store
	plugins   Plugins
	accounts  AccountSource
	log       *slog.Logger
	now       func() time.Time
	noAccount error

	// kick wakes the loop at once (an unknown outcome, a reconcile request). Capacity 1; extra kicks are dropped.
	kick chan struct{}

	mu sync.Mutex
	// inflight holds the journal ids whose plugin call runs in this process; the channel closes when it returns.
	inflight map[string]chan struct{}
	// reconcileAll is set by Reconcile and by plugin restarts; the loop runs a reconciliation and clears it.
	reconcile map[string]bool // exchange slug -> pending
	attached  attachedState   // TP/SL on entry armed by exhub (attached.go; the loop's)
	instr     map[instrKey]instrEntry
	// marginModes caches the symbols' margin modes read for SWAP orders sent without one (marginmode.go).
	marginModes marginModes
	// feed, when set, is the private account stream the loop follows; feedQ holds its updates for the loop.
	feed  feed.Subscriber
	feedQ *feedQueue

	// patterns caches the compiled client id patterns plugins declare.
	patterns map[string]*regexp.Regexp

	// testClientID, when set (WithClientIDs), gives the next client order id; an empty answer falls back to a random
	// one.
	testClientID func() string

	stats counters
}

// New builds the service. Nothing runs before Run.
func New(cfg Config, st *store.Store, plugins Plugins, accounts AccountSource, opts ...Option) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if st == nil || plugins == nil || accounts == nil {
		return nil, errors.New("trading: store, plugins and accounts are required")
	}
	s := &Service{cfg: cfg, st: st, plugins: plugins, accounts: accounts, log: slog.New(slog.DiscardHandler),
		now: time.Now, noAccount: ErrNoAccount, kick: make(chan struct{}, 1), inflight: map[string]chan struct{}{},
		reconcile: map[string]bool{}, instr: map[instrKey]instrEntry{}, patterns: map[string]*regexp.Regexp{},
		feedQ: &feedQueue{notify: make(chan struct{}, 1)}}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// Run resolves unknown outcomes and reconciles the journal until ctx ends: at start (every exchange), after a
// plugin restart (that exchange), every ReconcileInterval and on Reconcile; with WithAccountFeed it also follows
// the account streams of the accounts with open or pending entries. It is the service's only goroutine.
func (s *Service) Run(ctx context.Context) {
	gens := map[string]int{} // slug -> pid seen running
	for _, sup := range s.plugins.Supervisors() {
		s.markReconcile(sup.Slug())
	}
	tick := time.NewTicker(s.cfg.Tick.D())
	defer tick.Stop()
	lastFull := s.now()
	subs := map[followKey]func(){} // followed account streams
	defer func() {
		for _, cancel := range subs {
			cancel()
		}
	}()
	var lastFollow time.Time
	for {
		if s.feed != nil && time.Since(lastFollow) >= followEvery {
			lastFollow = time.Now()
			s.follow(ctx, subs)
		}
		s.applyFeed(ctx, s.feedQ.take())
		// Plugin restarts: a new process of a plugin means the journal is re-read against it.
		for _, sup := range s.plugins.Supervisors() {
			st := sup.Status()
			if st.State != pluginhost.StateRunning || st.Pid == 0 {
				continue
			}
			if prev, ok := gens[st.Slug]; ok && prev != st.Pid {
				s.log.Info("plugin restarted: reconciling the order journal", "exchange", st.Slug)
				s.markReconcile(st.Slug)
			}
			gens[st.Slug] = st.Pid
		}
		if s.now().Sub(lastFull) >= s.cfg.ReconcileInterval.D() {
			lastFull = s.now()
			for _, sup := range s.plugins.Supervisors() {
				s.markReconcile(sup.Slug())
			}
		}
		s.resolveDue(ctx)
		s.reconcilePending(ctx)
		s.armAttachedDue(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-s.kick:
		case <-s.feedQ.notify:
		}
	}
}

// Reconcile asks the loop to re-read the open orders of every account with journal entries on exchange (every
// exchange when empty) and bring the journal in line. It returns at once.
func (s *Service) Reconcile(exchange string) {
	if exchange == "" {
		for _, sup := range s.plugins.Supervisors() {
			s.markReconcile(sup.Slug())
		}
	} else {
		s.markReconcile(exchange)
	}
	s.wake()
}

func (s *Service) markReconcile(slug string) {
	s.mu.Lock()
	s.reconcile[slug] = true
	s.mu.Unlock()
}

func (s *Service) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// supervisor returns the running plugin of an exchange.
func (s *Service) supervisor(exchange string) (*pluginhost.Supervisor, error) {
	sup, ok := s.plugins.Get(exchange)
	if !ok {
		return nil, &Error{Status: 404, Code: "exchange_not_found", Message: "This exchange is not available."}
	}
	return sup, nil
}

// account returns the member's account on exchange.
func (s *Service) account(ctx context.Context, memberID, exchange string) (*exchangev1.AccountRef, error) {
	ref, err := s.accounts.AccountRef(ctx, memberID, exchange)
	if err != nil {
		if errors.Is(err, s.noAccount) || errors.Is(err, ErrNoAccount) {
			return nil, &Error{Status: 409, Code: "no_account",
				Message: "You have no account on this exchange yet: open or link one first."}
		}
		return nil, fmt.Errorf("trading: account of the member on %s: %w", exchange, err)
	}
	if ref == nil || ref.GetAccountId() == "" {
		return nil, fmt.Errorf("trading: account source gave no account id for %s", exchange)
	}
	return ref, nil
}

// call runs one plugin call bounded by CallTimeout, detached from the request's cancellation: a client that goes
// away must not turn a sent order into an unknown outcome.
func (s *Service) call(ctx context.Context, sup *pluginhost.Supervisor, method string,
	fn func(context.Context, exchangev1.ExchangeClient) error) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.CallTimeout.D())
	defer cancel()
	return sup.Call(cctx, method, fn)
}

// backoff is the wait before the attempt-th lookup of an unknown outcome.
func (s *Service) backoff(attempt int) time.Duration {
	d := s.cfg.ResolveInitial.D()
	for i := 1; i < attempt && d < s.cfg.ResolveMax.D(); i++ {
		d *= 2
	}
	return min(d, s.cfg.ResolveMax.D())
}
