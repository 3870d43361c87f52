package accounts

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/store"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// Broker makes broker accounts with the operator's master credentials (exchange.v1 1.2's broker calls);
// HostBroker serves it from the plugin host.
type Broker interface {
	// Exchanges are the exchanges the broker provisions on, sorted.
	Exchanges() []string
	// CreateSubAccount makes the sub-account with label, or returns the one that already has it (idempotent by
	// label, so a resumed step never makes a second one).
	CreateSubAccount(ctx context.Context, exchange, label string) (subAccountID string, err error)
	// CreateAPIKey makes a new key of the sub-account (read and trade, never withdraw). Not idempotent: after a
	// lost answer another key is made.
	CreateAPIKey(ctx context.Context, exchange, subAccountID, label string) (Credentials, Permissions, error)
	// Transfer moves amount of asset from the master to the sub-account, at most once per transferID.
	Transfer(ctx context.Context, exchange, subAccountID, asset string, amount decimal.Decimal, transferID string) error
	// FindTransfer reports whether the transfer with transferID exists (false: it did not execute).
	FindTransfer(ctx context.Context, exchange, subAccountID, transferID string) (bool, error)
}

// resumeInterval is how often the provisioner resumes accounts whose last step could not finish (the exchange was
// down, the answer was lost).
const resumeInterval = 30 * time.Second

// sweepInterval is how often the provisioner looks for members without a broker account (EveryMember), and
// sweepLimit how many it queues per exchange each time.
const (
	sweepInterval = 2 * time.Second
	sweepLimit    = 100
)

// errRetryLater: a step could not finish now and stays journaled as started; the provisioner resumes it.
var errRetryLater = errors.New("provisioning step will be resumed")

// provisioner runs broker provisioning on one goroutine (Run), from a bounded queue of member ids.
type provisioner struct {
	s      *Service
	b      Broker
	asset  string
	amount decimal.Decimal // zero: no grant
	queue  chan string
	// everyMember: Run queues every member without a broker account (demo mode).
	everyMember bool

	mu      sync.Mutex // one provisioning at a time in this process
	pmu     sync.Mutex
	pending map[string]bool // member ids in the queue
}

func newProvisioner(s *Service, b Broker) (*provisioner, error) {
	p := &provisioner{s: s, b: b, asset: s.cfg.Broker.GrantAsset, queue: make(chan string, s.cfg.Broker.QueueSize),
		pending: map[string]bool{}}
	if s.cfg.Broker.GrantAmount != "" {
		d, err := decimal.NewFromString(s.cfg.Broker.GrantAmount)
		if err != nil {
			return nil, fmt.Errorf("accounts: broker.grant_amount: %w", err)
		}
		p.amount = d
	}
	return p, nil
}

func (p *provisioner) exchanges() []string { return p.b.Exchanges() }

func (p *provisioner) serves(exchange string) bool { return slices.Contains(p.b.Exchanges(), exchange) }

// request queues the member's broker accounts; a full queue drops the request (the member's next need asks again).
func (p *provisioner) request(memberID string) {
	p.pmu.Lock()
	defer p.pmu.Unlock()
	if p.pending[memberID] {
		return
	}
	select {
	case p.queue <- memberID:
		p.pending[memberID] = true
	default:
		p.s.log.Warn("broker provisioning queue full; the request is dropped until the member's next need", "member", memberID)
	}
}

// RequestBroker asks for the member's broker accounts on every broker exchange (a new member in demo mode); it
// returns at once. Without broker mode it does nothing.
func (s *Service) RequestBroker(memberID string) {
	if s.prov != nil {
		s.prov.request(memberID)
	}
}

// Run provisions broker accounts until ctx ends: first the ones a previous run left unfinished, then the queued
// members, resuming unfinished steps every 30 s and, with EveryMember, queueing members without a broker account
// every 2 s. Without broker mode it returns at once.
func (s *Service) Run(ctx context.Context) error {
	if s.prov == nil {
		return nil
	}
	p := s.prov
	p.resume(ctx)
	t := time.NewTicker(resumeInterval)
	defer t.Stop()
	var sweep <-chan time.Time
	if p.everyMember {
		st := time.NewTicker(sweepInterval)
		defer st.Stop()
		sweep = st.C
		p.sweep(ctx)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			p.resume(ctx)
		case <-sweep:
			p.sweep(ctx)
		case m := <-p.queue:
			p.pmu.Lock()
			delete(p.pending, m)
			p.pmu.Unlock()
			if _, err := s.ProvisionMember(ctx, m); err != nil && ctx.Err() == nil {
				s.log.Warn("broker provisioning", "member", m, "err", err)
			}
		}
	}
}

// sweep queues members who have no account on a broker exchange yet, newest first.
func (p *provisioner) sweep(ctx context.Context) {
	for _, ex := range p.exchanges() {
		ids, err := p.s.st.MembersWithoutAccount(ctx, ex, sweepLimit)
		if err != nil {
			if ctx.Err() == nil {
				p.s.log.Error("broker provisioning: listing members without an account", "exchange", ex, "err", err)
			}
			return
		}
		for _, id := range ids {
			p.request(id)
		}
	}
}

// resume continues every account still provisioning.
func (p *provisioner) resume(ctx context.Context) {
	rows, err := p.s.st.ExchangeAccountsByStatus(ctx, store.AccountProvisioning, 1000)
	if err != nil {
		if ctx.Err() == nil {
			p.s.log.Error("broker provisioning: listing unfinished accounts", "err", err)
		}
		return
	}
	for _, a := range rows {
		if ctx.Err() != nil {
			return
		}
		if a.Mode != store.AccountBroker {
			continue
		}
		if _, err := p.provision(ctx, a); err != nil && !errors.Is(err, errRetryLater) {
			p.s.log.Warn("broker provisioning resumed", "member", a.MemberID, "exchange", a.Exchange, "account", a.ID, "err", err)
		}
	}
}

// ProvisionMember makes (or finishes) the member's broker account on every broker exchange where the member has
// no account, and returns the member's accounts. A step that cannot finish now stays journaled and is resumed by
// Run; its error is returned.
func (s *Service) ProvisionMember(ctx context.Context, memberID string) ([]Account, error) {
	if s.prov == nil {
		return nil, errors.New("accounts: broker mode is off")
	}
	var errs []error
	for _, ex := range s.prov.exchanges() {
		if _, err := s.Provision(ctx, memberID, ex); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", ex, err))
		}
	}
	list, err := s.st.ExchangeAccounts(ctx, memberID)
	if err != nil {
		return nil, err
	}
	out := make([]Account, 0, len(list))
	for _, a := range list {
		out = append(out, accountOf(a))
	}
	return out, errors.Join(errs...)
}

// Provision makes (or finishes) the member's broker account on one exchange. A member who linked their own key
// there keeps it; an active or failed account is returned as it is.
func (s *Service) Provision(ctx context.Context, memberID, exchange string) (Account, error) {
	if s.prov == nil {
		return Account{}, errors.New("accounts: broker mode is off")
	}
	if !s.prov.serves(exchange) {
		return Account{}, fmt.Errorf("accounts: %w %q for the broker", ErrUnknownExchange, exchange)
	}
	a, err := s.st.ExchangeAccountOn(ctx, memberID, exchange)
	if errors.Is(err, store.ErrNotFound) {
		a, err = s.st.CreateExchangeAccount(ctx, store.ExchangeAccount{ID: uuid.Must(uuid.NewV7()).String(),
			MemberID: memberID, Exchange: exchange, Mode: store.AccountBroker, Name: exchange, Status: store.AccountProvisioning})
		if errors.Is(err, store.ErrConflict) { // made meanwhile (a link, another replica)
			a, err = s.st.ExchangeAccountOn(ctx, memberID, exchange)
		}
	}
	if err != nil {
		return Account{}, err
	}
	return s.prov.provision(ctx, a)
}

// provision runs the journaled steps of a broker account: create the sub-account (label journaled first),
// transfer the grant (transfer id journaled first; a resumed transfer is looked up before it is sent again), create
// the API key, seal it and activate the account.
func (p *provisioner) provision(ctx context.Context, a store.ExchangeAccount) (Account, error) {
	if a.Mode != store.AccountBroker || a.Status != store.AccountProvisioning {
		return accountOf(a), nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// Another call may have finished it while this one waited.
	cur, err := p.s.st.ExchangeAccount(ctx, a.MemberID, a.ID)
	if err != nil {
		return Account{}, err
	}
	if cur.Status != store.AccountProvisioning {
		return accountOf(cur), nil
	}
	log := p.s.log.With("member", a.MemberID, "exchange", a.Exchange, "account", a.ID)

	// 1. The sub-account, idempotent by its journaled label.
	step, err := p.s.st.StartProvisionStep(ctx, a.ID, store.StepCreateSubAccount, newRequestID())
	if err != nil {
		return Account{}, err
	}
	sub := step.Result
	if step.State != store.StepDone {
		cctx, cancel := p.callCtx(ctx)
		sub, err = p.b.CreateSubAccount(cctx, a.Exchange, step.RequestID)
		cancel()
		if err != nil {
			return p.stepFailed(ctx, a, step, err)
		}
		if err := p.s.st.FinishProvisionStep(ctx, a.ID, step.Step, store.StepDone, sub, ""); err != nil {
			return Account{}, err
		}
		log.Info("broker sub-account created", "sub_account", sub, "label", step.RequestID)
	}

	// 2. The grant: a money movement, at most once per journaled transfer id.
	if p.amount.IsPositive() {
		step, err := p.s.st.StartProvisionStep(ctx, a.ID, store.StepTransfer, newRequestID())
		if err != nil {
			return Account{}, err
		}
		if step.State == store.StepStarted {
			if err := p.transfer(ctx, a, step, sub); err != nil {
				return Account{}, err
			}
			log.Info("broker grant transferred", "asset", p.asset, "amount", p.amount.String(), "transfer", step.RequestID)
		}
	}

	// 3. The API key: sealed and stored with the activation, then the step is done. A key lost between the
	// exchange's answer and the activation is replaced by a new one on resume (the exchanges allow several).
	step, err = p.s.st.StartProvisionStep(ctx, a.ID, store.StepCreateAPIKey, newRequestID())
	if err != nil {
		return Account{}, err
	}
	cctx, cancel := p.callCtx(ctx)
	creds, perms, err := p.b.CreateAPIKey(cctx, a.Exchange, sub, step.RequestID)
	cancel()
	if err != nil {
		return p.stepFailed(ctx, a, step, err)
	}
	kek, blob, err := p.s.keys.Seal(creds, Binding{MemberID: a.MemberID, AccountID: a.ID, Exchange: a.Exchange})
	if err != nil {
		return Account{}, err
	}
	if err := p.s.st.ActivateExchangeAccount(ctx, a.ID, sub, creds.Last4(), kek, blob, perms.String()); err != nil {
		return Account{}, err
	}
	if err := p.s.st.FinishProvisionStep(ctx, a.ID, step.Step, store.StepDone, "", ""); err != nil {
		return Account{}, err
	}
	p.s.cache.drop(a.MemberID, a.Exchange)
	log.Info("broker account active", "sub_account", sub, "kek", kek)
	done, err := p.s.st.ExchangeAccount(ctx, a.MemberID, a.ID)
	if err != nil {
		return Account{}, err
	}
	return accountOf(done), nil
}

// transfer sends the grant, or on a resumed step first asks the exchange whether the journaled transfer id already
// moved the money. An unknown outcome stays started (resolved on the next resume); a refusal marks the step
// failed and provisioning goes on without the grant.
func (p *provisioner) transfer(ctx context.Context, a store.ExchangeAccount, step store.ProvisionStep, sub string) error {
	if step.Attempts > 1 {
		cctx, cancel := p.callCtx(ctx)
		found, err := p.b.FindTransfer(cctx, a.Exchange, sub, step.RequestID)
		cancel()
		if err != nil {
			p.s.log.Warn("broker grant: looking the transfer up", "account", a.ID, "transfer", step.RequestID, "err", err)
			return fmt.Errorf("%w: %v", errRetryLater, err)
		}
		if found {
			return p.s.st.FinishProvisionStep(ctx, a.ID, step.Step, store.StepDone, step.RequestID, "")
		}
	}
	cctx, cancel := p.callCtx(ctx)
	err := p.b.Transfer(cctx, a.Exchange, sub, p.asset, p.amount, step.RequestID)
	cancel()
	switch {
	case err == nil:
		return p.s.st.FinishProvisionStep(ctx, a.ID, step.Step, store.StepDone, step.RequestID, "")
	case retryable(err):
		p.s.log.Warn("broker grant outcome unknown; resolved by its transfer id on resume", "account", a.ID,
			"transfer", step.RequestID, "err", err)
		return fmt.Errorf("%w: %v", errRetryLater, err)
	default:
		p.s.log.Warn("broker grant refused; the account is made without it", "account", a.ID, "transfer", step.RequestID, "err", err)
		return p.s.st.FinishProvisionStep(ctx, a.ID, step.Step, store.StepFailed, "", sdk.MessageOf(err))
	}
}

// stepFailed leaves a step that may succeed later journaled as started (errRetryLater) and fails the account on
// a refusal.
func (p *provisioner) stepFailed(ctx context.Context, a store.ExchangeAccount, step store.ProvisionStep, err error) (Account, error) {
	if retryable(err) {
		p.s.log.Warn("broker provisioning step will be resumed", "account", a.ID, "step", step.Step, "err", err)
		return accountOf(a), fmt.Errorf("%w: %s: %v", errRetryLater, step.Step, err)
	}
	msg := sdk.MessageOf(err)
	if ferr := p.s.st.FinishProvisionStep(ctx, a.ID, step.Step, store.StepFailed, "", msg); ferr != nil {
		return Account{}, ferr
	}
	if ferr := p.s.st.FailExchangeAccount(ctx, a.ID, step.Step+": "+msg); ferr != nil {
		return Account{}, ferr
	}
	p.s.log.Error("broker provisioning failed", "member", a.MemberID, "exchange", a.Exchange, "account", a.ID,
		"step", step.Step, "err", msg)
	return accountOf(a), fmt.Errorf("accounts: broker provisioning failed at %s: %s", step.Step, msg)
}

func (p *provisioner) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, p.s.cfg.CallTimeout.D())
}

// retryable: the call may succeed later, or may have executed (never a refusal).
func retryable(err error) bool {
	if errors.Is(err, pluginhost.ErrUnavailable) || sdk.IsUnknownOutcome(err) {
		return true
	}
	switch sdk.DetailOf(err).GetReason() {
	case exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED,
		exchangev1.ErrorReason_ERROR_REASON_CLOCK_SKEW, exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME:
		return true
	}
	return false
}

// newRequestID is a client request id, label and transfer id: "exh" and 16 hex digits (letters and digits only,
// 19 characters, within every exchange's label and client id rules).
func newRequestID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // never fails (crypto/rand panics on its own failure)
	return "exh" + hex.EncodeToString(b)
}
