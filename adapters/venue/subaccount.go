package venue

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/shopspring/decimal"
)

// Broker sub-accounts: a master account owns sub-accounts (ordinary trading accounts of their own) and moves funds
// between itself and them. The venue knows nothing of API keys; emulators map a sub-account's keys to its account.

var (
	// ErrNotMaster: the account may not own sub-accounts (it is a sub-account itself).
	ErrNotMaster = errors.New("venue: a sub-account cannot own sub-accounts")
	// ErrUnknownSubAccount: the id is not a sub-account of this master.
	ErrUnknownSubAccount = errors.New("venue: not a sub-account of this master")
	// ErrSubAccountExists: the master already has a sub-account with this label; the existing one is returned.
	ErrSubAccountExists = errors.New("venue: a sub-account with this label exists")
	// ErrTooManySubAccounts: the master holds MaxSubAccounts sub-accounts.
	ErrTooManySubAccounts = errors.New("venue: too many sub-accounts")
)

// MaxSubAccounts bounds the sub-accounts of one master; MaxSubTransfers bounds the transfers a master remembers
// (the oldest are forgotten, and their client ids with them).
const (
	MaxSubAccounts  = 200000
	MaxSubTransfers = 200000
)

// SubAccount is one sub-account of a master. ID is also its venue account id.
type SubAccount struct {
	ID      string
	Master  string
	Label   string
	Created int64
}

// SubTransfer is a movement between a master and its sub-accounts. From and To are account ids ("" never: the
// master is named by its id).
type SubTransfer struct {
	ID       string
	ClientID string
	Master   string
	From     string
	To       string
	Asset    string
	Amount   decimal.Decimal
	Wallet   Wallet
	Kind     string // the emulator's own tag (e.g. spot or futures transfer), kept as given
	Time     int64
}

// SubTransferRequest asks for a SubTransfer. From or To "" is the master.
type SubTransferRequest struct {
	Master   string
	From     string
	To       string
	Asset    string
	Amount   decimal.Decimal
	Wallet   Wallet
	ClientID string
	Kind     string
}

type brokerState struct {
	subs      []SubAccount // creation order
	byLabel   map[string]int
	byID      map[string]int
	transfers []SubTransfer // oldest first, at most MaxSubTransfers
	byClient  map[string]SubTransfer
}

func (v *Venue) broker(master *account) (*brokerState, error) {
	if master.master != "" {
		return nil, fmt.Errorf("%w: %q", ErrNotMaster, master.id)
	}
	if master.broker == nil {
		master.broker = &brokerState{byLabel: map[string]int{}, byID: map[string]int{},
			byClient: map[string]SubTransfer{}}
	}
	return master.broker, nil
}

// CreateSubAccount creates the trading account id as a sub-account of master with a label unique per master. When
// the label is taken it returns the existing sub-account with ErrSubAccountExists and creates nothing.
func (v *Venue) CreateSubAccount(ctx context.Context, master, id, label string) (SubAccount, error) {
	if err := ctx.Err(); err != nil {
		return SubAccount{}, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	m, err := v.userAccount(master)
	if err != nil {
		return SubAccount{}, err
	}
	b, err := v.broker(m)
	if err != nil {
		return SubAccount{}, err
	}
	if i, ok := b.byLabel[label]; ok {
		return b.subs[i], ErrSubAccountExists
	}
	if len(b.subs) >= MaxSubAccounts {
		return SubAccount{}, ErrTooManySubAccounts
	}
	if id == "" || id[0] == '@' {
		return SubAccount{}, fmt.Errorf("%w: account id %q", ErrUnknownAccount, id)
	}
	if _, ok := v.accounts[id]; ok {
		return SubAccount{}, fmt.Errorf("%w: account %q exists", ErrInvalidOrder, id)
	}
	a := v.newAccount(id, false)
	a.master = master
	sa := SubAccount{ID: id, Master: master, Label: label, Created: v.Now()}
	b.subs = append(b.subs, sa)
	b.byLabel[label] = len(b.subs) - 1
	b.byID[id] = len(b.subs) - 1
	return sa, nil
}

// SubAccounts lists a master's sub-accounts in creation order.
func (v *Venue) SubAccounts(master string) ([]SubAccount, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	m, err := v.userAccount(master)
	if err != nil {
		return nil, err
	}
	b, err := v.broker(m)
	if err != nil {
		return nil, err
	}
	return append([]SubAccount(nil), b.subs...), nil
}

// SubAccountOf returns master's sub-account id, or ErrUnknownSubAccount.
func (v *Venue) SubAccountOf(master, id string) (SubAccount, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	m, err := v.userAccount(master)
	if err != nil {
		return SubAccount{}, err
	}
	b, err := v.broker(m)
	if err != nil {
		return SubAccount{}, err
	}
	i, ok := b.byID[id]
	if !ok {
		return SubAccount{}, fmt.Errorf("%w: %q", ErrUnknownSubAccount, id)
	}
	return b.subs[i], nil
}

// MasterOf returns the master of a sub-account, or "" for an account that is not one.
func (v *Venue) MasterOf(id string) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	if a, ok := v.accounts[id]; ok {
		return a.master
	}
	return ""
}

// TransferSub moves free funds of one wallet between a master and one of its sub-accounts, or between two of its
// sub-accounts, exactly (no rounding, no fee). A repeated ClientID returns the first transfer with
// ErrDuplicateClientID and moves nothing; a client id is required.
func (v *Venue) TransferSub(ctx context.Context, r SubTransferRequest) (SubTransfer, error) {
	if err := ctx.Err(); err != nil {
		return SubTransfer{}, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	defer v.flushLocked()
	m, err := v.userAccount(r.Master)
	if err != nil {
		return SubTransfer{}, err
	}
	b, err := v.broker(m)
	if err != nil {
		return SubTransfer{}, err
	}
	if r.ClientID == "" {
		return SubTransfer{}, fmt.Errorf("%w: client transfer id required", ErrInvalidOrder)
	}
	if t, ok := b.byClient[r.ClientID]; ok {
		return t, ErrDuplicateClientID
	}
	if _, err := v.asset(r.Asset); err != nil {
		return SubTransfer{}, err
	}
	if r.Wallet != Funding && r.Wallet != TradingWallet {
		return SubTransfer{}, fmt.Errorf("%w: wallet %s", ErrInvalidOrder, r.Wallet)
	}
	if !r.Amount.IsPositive() {
		return SubTransfer{}, fmt.Errorf("%w: amount %s", ErrOutOfRange, r.Amount)
	}
	side := func(id string) (*account, error) {
		if id == "" || id == r.Master {
			return m, nil
		}
		if _, ok := b.byID[id]; !ok {
			return nil, fmt.Errorf("%w: %q", ErrUnknownSubAccount, id)
		}
		return v.accounts[id], nil
	}
	from, err := side(r.From)
	if err != nil {
		return SubTransfer{}, err
	}
	to, err := side(r.To)
	if err != nil {
		return SubTransfer{}, err
	}
	if from == to {
		return SubTransfer{}, fmt.Errorf("%w: transfer to the same account", ErrInvalidOrder)
	}
	if r.Wallet == TradingWallet && r.Asset == "USDT" && v.availableMargin(from, r.Asset).LessThan(r.Amount) {
		return SubTransfer{}, fmt.Errorf("%w: available margin %s", ErrInsufficientFunds, v.availableMargin(from, r.Asset))
	}
	v.nextQ++
	id := strconv.FormatUint(v.nextQ, 10)
	if err := v.move(LedgerSubTransfer, from, r.Wallet, to, r.Wallet, r.Asset, r.Amount, false, "sub"+id); err != nil {
		return SubTransfer{}, err
	}
	t := SubTransfer{ID: id, ClientID: r.ClientID, Master: r.Master, From: from.id, To: to.id, Asset: r.Asset,
		Amount: r.Amount, Wallet: r.Wallet, Kind: r.Kind, Time: v.Now()}
	if len(b.transfers) >= MaxSubTransfers {
		delete(b.byClient, b.transfers[0].ClientID)
		b.transfers = b.transfers[1:]
	}
	b.transfers = append(b.transfers, t)
	b.byClient[t.ClientID] = t
	return t, nil
}

// SubTransfers lists a master's transfers, newest first, optionally only those with clientID or touching account
// (a sub-account id or the master's), at most limit (0: all remembered).
func (v *Venue) SubTransfers(master, clientID, account string, limit int) ([]SubTransfer, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	m, err := v.userAccount(master)
	if err != nil {
		return nil, err
	}
	b, err := v.broker(m)
	if err != nil {
		return nil, err
	}
	if clientID != "" {
		t, ok := b.byClient[clientID]
		if !ok || account != "" && t.From != account && t.To != account {
			return nil, nil
		}
		return []SubTransfer{t}, nil
	}
	all := b.transfers
	out := make([]SubTransfer, 0, len(all))
	for i := len(all) - 1; i >= 0; i-- {
		t := all[i]
		if account != "" && t.From != account && t.To != account {
			continue
		}
		out = append(out, t)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out, nil
}
