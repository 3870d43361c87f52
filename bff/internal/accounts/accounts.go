// Package accounts gives members their accounts on the exchanges, in two modes behind one service: broker mode
// (the operator's master credentials create a sub-account per member on each exchange, with an API key and a
// starting grant) and linked keys (a member links their own API key). Credentials are sealed at rest with
// AES-256-GCM per record under a key-encryption key from the configuration (seal.go), bound to member, account and
// exchange, never logged and never returned (the last four characters of the key only). The trading path asks
// AccountRef for the plugin's AccountRef of a member's account. See docs/decisions/0018.
package accounts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/store"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// Errors the service returns (wrapped; match with errors.Is).
var (
	// ErrNoAccount: the member has no active account on the exchange (none, or one still provisioning or failed).
	ErrNoAccount = errors.New("no active account on this exchange")
	// ErrNotFound: the account does not exist or is another member's.
	ErrNotFound = errors.New("account not found")
	// ErrExists: the member already has an account on the exchange.
	ErrExists = errors.New("an account on this exchange already exists")
	// ErrInvalid: malformed input (name, key, secret, exchange slug).
	ErrInvalid = errors.New("invalid input")
	// ErrUnknownExchange: no plugin serves the exchange.
	ErrUnknownExchange = errors.New("unknown exchange")
	// ErrCredentialsRefused: the exchange refused the key, or the key cannot read or trade.
	ErrCredentialsRefused = errors.New("credentials refused")
	// ErrWithdrawPermission: the key may withdraw; exhub never holds such a key.
	ErrWithdrawPermission = errors.New("the key has withdraw permission")
	// ErrExchangeUnavailable: the exchange or its plugin did not answer; try again later.
	ErrExchangeUnavailable = errors.New("exchange unavailable")
	// ErrBrokerAccount: a broker account cannot be unlinked by the member.
	ErrBrokerAccount = errors.New("a broker account cannot be unlinked")
)

// Limits of linked credentials.
const (
	MaxKeyLen        = 256
	MaxSecretLen     = 512
	MaxPassphraseLen = 128
)

// Exchanges is what the service asks the exchange plugins; HostExchanges serves it from the plugin host.
type Exchanges interface {
	// Has reports whether a plugin serves the exchange.
	Has(exchange string) bool
	// CheckCredentials reads what a key may do.
	CheckCredentials(ctx context.Context, exchange string, ref *exchangev1.AccountRef) (*exchangev1.CheckCredentialsResponse, error)
}

// Permissions are what a key could do when it was linked or made.
type Permissions struct {
	Read     bool
	Trade    bool
	Transfer bool
}

func (p Permissions) String() string {
	var parts []string
	for _, x := range []struct {
		on   bool
		name string
	}{{p.Read, "read"}, {p.Trade, "trade"}, {p.Transfer, "transfer"}} {
		if x.on {
			parts = append(parts, x.name)
		}
	}
	return strings.Join(parts, ",")
}

func parsePermissions(s string) Permissions {
	var p Permissions
	for _, part := range strings.Split(s, ",") {
		switch part {
		case "read":
			p.Read = true
		case "trade":
			p.Trade = true
		case "transfer":
			p.Transfer = true
		}
	}
	return p
}

// Account is a member's exchange account as the member may see it: never the key, the secret or the passphrase.
type Account struct {
	ID           string
	Exchange     string
	Mode         string // store.AccountBroker or store.AccountLinked
	Name         string
	SubAccountID string
	KeyLast4     string
	Permissions  Permissions
	Status       string // store.AccountProvisioning, AccountActive or AccountFailed
	StatusReason string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

func accountOf(a store.ExchangeAccount) Account {
	return Account{ID: a.ID, Exchange: a.Exchange, Mode: a.Mode, Name: a.Name, SubAccountID: a.SubAccountID,
		KeyLast4: a.KeyLast4, Permissions: parsePermissions(a.Permissions), Status: a.Status, StatusReason: a.StatusReason,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
}

// LinkInput is a member's own API key to link.
type LinkInput struct {
	Exchange   string
	Name       string // "" names the account after the exchange
	Key        secret.Secret
	Secret     secret.Secret
	Passphrase secret.Secret
}

// Options builds a Service.
type Options struct {
	Store   *store.Store
	Keyring *Keyring
	// Exchanges checks linked keys.
	Exchanges Exchanges
	// Broker provisions broker accounts; nil turns broker mode off.
	Broker Broker
	// EveryMember gives every member a broker account at once (demo mode's faucet): Run looks for members without
	// one every two seconds. Otherwise a member's broker accounts are made on their first need.
	EveryMember bool
	Config      Config
	Logger      *slog.Logger
}

// Service manages members' exchange accounts. It is safe for concurrent use.
type Service struct {
	st        *store.Store
	keys      *Keyring
	exchanges Exchanges
	broker    Broker
	cfg       Config
	log       *slog.Logger
	cache     *refCache
	prov      *provisioner // nil without a broker
}

// New builds the service. Run (the provisioner) is needed only in broker mode.
func New(o Options) (*Service, error) {
	if o.Store == nil || o.Keyring == nil || o.Exchanges == nil {
		return nil, errors.New("accounts: store, keyring and exchanges are required")
	}
	cfg := o.Config.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("accounts: %w", err)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{st: o.Store, keys: o.Keyring, exchanges: o.Exchanges, broker: o.Broker, cfg: cfg,
		log: o.Logger.With("component", "accounts"), cache: newRefCache(cfg.CacheSize, cfg.CacheTTL.D())}
	if o.Broker != nil {
		p, err := newProvisioner(s, o.Broker)
		if err != nil {
			return nil, err
		}
		p.everyMember = o.EveryMember
		s.prov = p
	}
	return s, nil
}

// BrokerMode reports whether broker accounts are provisioned.
func (s *Service) BrokerMode() bool { return s.prov != nil }

// List returns the member's accounts by exchange. In broker mode it also asks for the member's missing broker
// accounts (provisioned in the background).
func (s *Service) List(ctx context.Context, memberID string) ([]Account, error) {
	rows, err := s.st.ExchangeAccounts(ctx, memberID)
	if err != nil {
		return nil, err
	}
	out := make([]Account, 0, len(rows))
	have := map[string]bool{}
	for _, r := range rows {
		out = append(out, accountOf(r))
		have[r.Exchange] = true
	}
	if s.prov != nil {
		for _, ex := range s.prov.exchanges() {
			if !have[ex] {
				s.prov.request(memberID)
				break
			}
		}
	}
	return out, nil
}

// Get returns one of the member's accounts; ErrNotFound for another member's.
func (s *Service) Get(ctx context.Context, memberID, accountID string) (Account, error) {
	a, err := s.st.ExchangeAccount(ctx, memberID, accountID)
	if errors.Is(err, store.ErrNotFound) {
		return Account{}, fmt.Errorf("accounts: %w", ErrNotFound)
	}
	if err != nil {
		return Account{}, err
	}
	return accountOf(a), nil
}

// Link checks the member's key with the exchange and stores it sealed. Refused: a key that may withdraw
// (ErrWithdrawPermission), a key that cannot read or trade or that the exchange rejects (ErrCredentialsRefused), a
// second account on the exchange (ErrExists).
func (s *Service) Link(ctx context.Context, memberID string, in LinkInput) (Account, error) {
	if err := validLink(&in); err != nil {
		return Account{}, err
	}
	if !s.exchanges.Has(in.Exchange) {
		return Account{}, fmt.Errorf("accounts: %w %q", ErrUnknownExchange, in.Exchange)
	}
	if _, err := s.st.ExchangeAccountOn(ctx, memberID, in.Exchange); err == nil {
		return Account{}, fmt.Errorf("accounts: %w (%s)", ErrExists, in.Exchange)
	} else if !errors.Is(err, store.ErrNotFound) {
		return Account{}, err
	}
	id := uuid.Must(uuid.NewV7()).String()
	creds := Credentials{Key: in.Key, Secret: in.Secret, Passphrase: in.Passphrase}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout.D())
	perm, err := s.exchanges.CheckCredentials(cctx, in.Exchange, refOf(id, creds))
	cancel()
	if err != nil {
		return Account{}, s.checkError(in.Exchange, creds, err)
	}
	switch {
	case perm.GetCanWithdraw():
		return Account{}, fmt.Errorf("accounts: %w: create a key without withdrawals on %s", ErrWithdrawPermission, in.Exchange)
	case !perm.GetCanRead() || !perm.GetCanTrade():
		return Account{}, fmt.Errorf("accounts: %w: the key must be able to read and trade", ErrCredentialsRefused)
	}
	b := Binding{MemberID: memberID, AccountID: id, Exchange: in.Exchange}
	kek, blob, err := s.keys.Seal(creds, b)
	if err != nil {
		return Account{}, err
	}
	row, err := s.st.CreateExchangeAccount(ctx, store.ExchangeAccount{ID: id, MemberID: memberID, Exchange: in.Exchange,
		Mode: store.AccountLinked, Name: in.Name, KeyLast4: creds.Last4(), Sealed: blob, KEKID: kek,
		Permissions: Permissions{Read: perm.GetCanRead(), Trade: perm.GetCanTrade(), Transfer: perm.GetCanTransfer()}.String(),
		Status:      store.AccountActive})
	if errors.Is(err, store.ErrConflict) {
		return Account{}, fmt.Errorf("accounts: %w (%s)", ErrExists, in.Exchange)
	}
	if err != nil {
		return Account{}, err
	}
	s.cache.drop(memberID, in.Exchange)
	s.log.InfoContext(ctx, "exchange account linked", "member", memberID, "exchange", in.Exchange, "account", id, "kek", kek)
	return accountOf(row), nil
}

// checkError maps a CheckCredentials failure; the exchange's message is kept without the member's credentials.
func (s *Service) checkError(exchange string, c Credentials, err error) error {
	if errors.Is(err, ErrUnknownExchange) {
		return fmt.Errorf("accounts: %w %q", ErrUnknownExchange, exchange)
	}
	msg := scrub(sdk.MessageOf(err), c)
	switch sdk.DetailOf(err).GetReason() {
	case exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED, exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED,
		exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, exchangev1.ErrorReason_ERROR_REASON_ACCOUNT_MODE_MISMATCH,
		exchangev1.ErrorReason_ERROR_REASON_CLOCK_SKEW:
		return fmt.Errorf("accounts: %w: %s", ErrCredentialsRefused, msg)
	case exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED:
		return fmt.Errorf("accounts: %w: %s cannot check a key's permissions, so exhub cannot link keys there", ErrCredentialsRefused, exchange)
	}
	s.log.Warn("checking credentials failed", "exchange", exchange, "err", msg)
	return fmt.Errorf("accounts: %w: %s", ErrExchangeUnavailable, msg)
}

// scrub removes the credentials from a message an exchange may have echoed them in.
func scrub(msg string, c Credentials) string {
	for _, v := range []string{c.Key.Reveal(), c.Secret.Reveal(), c.Passphrase.Reveal()} {
		if len(v) >= 4 {
			msg = strings.ReplaceAll(msg, v, "[redacted]")
		}
	}
	return msg
}

// Unlink deletes one of the member's linked accounts with its sealed credentials. ErrNotFound for another
// member's account, ErrBrokerAccount for a broker account.
func (s *Service) Unlink(ctx context.Context, memberID, accountID string) error {
	a, err := s.st.ExchangeAccount(ctx, memberID, accountID)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("accounts: %w", ErrNotFound)
	}
	if err != nil {
		return err
	}
	if a.Mode == store.AccountBroker {
		return fmt.Errorf("accounts: %w", ErrBrokerAccount)
	}
	err = s.st.DeleteExchangeAccount(ctx, memberID, accountID, store.AccountLinked)
	s.cache.drop(memberID, a.Exchange)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("accounts: %w", ErrNotFound)
	}
	if err != nil {
		return err
	}
	s.log.InfoContext(ctx, "exchange account unlinked", "member", memberID, "exchange", a.Exchange, "account", accountID)
	return nil
}

// AccountRef is the plugin's AccountRef (credentials included) of the member's active account on the exchange;
// an error wrapping ErrNoAccount when there is none. In broker mode a missing account is asked for (provisioned
// in the background). The caller owns the returned message.
func (s *Service) AccountRef(ctx context.Context, memberID, exchange string) (*exchangev1.AccountRef, error) {
	if ref, ok := s.cache.get(memberID, exchange); ok {
		return proto.Clone(ref).(*exchangev1.AccountRef), nil
	}
	a, err := s.st.ExchangeAccountOn(ctx, memberID, exchange)
	if errors.Is(err, store.ErrNotFound) {
		if s.prov != nil && s.prov.serves(exchange) {
			s.prov.request(memberID)
			return nil, fmt.Errorf("accounts: %w on %s: it is being created", ErrNoAccount, exchange)
		}
		return nil, fmt.Errorf("accounts: %w on %s", ErrNoAccount, exchange)
	}
	if err != nil {
		return nil, err
	}
	if a.Status != store.AccountActive {
		return nil, fmt.Errorf("accounts: %w on %s: the account is %s", ErrNoAccount, exchange, a.Status)
	}
	c, err := s.keys.Open(a.KEKID, a.Sealed, Binding{MemberID: memberID, AccountID: a.ID, Exchange: exchange})
	if err != nil {
		s.log.ErrorContext(ctx, "sealed credentials do not open", "member", memberID, "exchange", exchange, "account", a.ID,
			"kek", a.KEKID, "err", err)
		return nil, err
	}
	ref := refOf(a.ID, c)
	s.cache.put(memberID, exchange, ref)
	return proto.Clone(ref).(*exchangev1.AccountRef), nil
}

// Forget drops every opened account from memory (after a rekey or a bulk change).
func (s *Service) Forget() { s.cache.reset() }

func refOf(accountID string, c Credentials) *exchangev1.AccountRef {
	return &exchangev1.AccountRef{AccountId: accountID, ApiKey: c.Key.Reveal(), ApiSecret: c.Secret.Reveal(),
		Passphrase: c.Passphrase.Reveal()}
}

func validLink(in *LinkInput) error {
	in.Exchange = strings.TrimSpace(in.Exchange)
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" {
		in.Name = in.Exchange
	}
	if err := store.ValidAccountName(in.Name); err != nil {
		return fmt.Errorf("accounts: %w: name must be 1 to %d characters without control characters", ErrInvalid, store.MaxAccountNameLen)
	}
	for _, f := range []struct {
		name     string
		v        string
		max      int
		required bool
	}{
		{"api_key", in.Key.Reveal(), MaxKeyLen, true},
		{"api_secret", in.Secret.Reveal(), MaxSecretLen, true},
		{"passphrase", in.Passphrase.Reveal(), MaxPassphraseLen, false},
	} {
		if f.v == "" {
			if f.required {
				return fmt.Errorf("accounts: %w: %s is required", ErrInvalid, f.name)
			}
			continue
		}
		if len(f.v) > f.max {
			return fmt.Errorf("accounts: %w: %s is longer than %d characters", ErrInvalid, f.name, f.max)
		}
		for _, r := range f.v {
			if unicode.IsSpace(r) || unicode.IsControl(r) || r > unicode.MaxASCII {
				return fmt.Errorf("accounts: %w: %s has a space, control or non-ASCII character", ErrInvalid, f.name)
			}
		}
	}
	return nil
}
