package venue

import (
	"fmt"
	"sort"
	"strings"

	"github.com/shopspring/decimal"
)

type balance struct {
	total  decimal.Decimal
	locked decimal.Decimal
}

type posKey struct {
	inst *instState
	side PositionSide
}

type position struct {
	acct     *account
	inst     *instState
	side     PositionSide
	qty      int64 // lots; signed in one-way mode (PosBoth), non-negative in hedge mode
	entry    decimal.Decimal
	realized decimal.Decimal
	margin   decimal.Decimal // isolated margin (also held in the wallet's locked amount)
	isolated bool
	updated  int64
}

type instSettings struct {
	leverage int
	isolated bool
}

type account struct {
	id        string
	house     bool // may go negative; not subject to self-trade prevention
	system    bool // not usable through the trading API
	wallets   [3]map[string]*balance
	positions map[posKey]*position
	settings  map[*instState]*instSettings
	hedge     bool
	open      map[uint64]*order
	clientIDs map[string]*order
	closed    ring[*order]
	fills     ring[Fill]
	ledger    ring[LedgerEntry]
	master    string                // the master of a sub-account; "" for any other account
	broker    *brokerState          // the sub-accounts of a master, created on first use
	funding   *ring[FundingPayment] // settled funding payments, created on the first one
	// deposits and withdrawals, oldest first (bounded by walletKeep), and by id for status changes
	walletTxs  []*WalletTx
	walletByID map[string]*WalletTx
}

func (v *Venue) newAccount(id string, house bool) *account {
	a := &account{
		id: id, house: house, system: house,
		positions: map[posKey]*position{},
		settings:  map[*instState]*instSettings{},
		open:      map[uint64]*order{},
		clientIDs: map[string]*order{},
		closed:    newRing[*order](1000),
		fills:     newRing[Fill](1000),
		ledger:    newRing[LedgerEntry](1000),
	}
	a.wallets[Funding] = map[string]*balance{}
	a.wallets[TradingWallet] = map[string]*balance{}
	v.accounts[id] = a
	return a
}

func (a *account) bal(w Wallet, asset string) *balance {
	b := a.wallets[w][asset]
	if b == nil {
		b = &balance{}
		a.wallets[w][asset] = b
	}
	return b
}

func (a *account) settingsFor(st *instState) *instSettings {
	s := a.settings[st]
	if s == nil {
		s = &instSettings{leverage: min(20, st.in.MaxLeverage)}
		a.settings[st] = s
	}
	return s
}

// LedgerKind classifies balance movements.
type LedgerKind string

const (
	LedgerDeposit     LedgerKind = "DEPOSIT"
	LedgerWithdraw    LedgerKind = "WITHDRAW"
	LedgerWithdrawFee LedgerKind = "WITHDRAW_FEE"
	LedgerTransfer    LedgerKind = "TRANSFER"
	LedgerTrade       LedgerKind = "TRADE"
	LedgerFee         LedgerKind = "FEE"
	LedgerRealized    LedgerKind = "REALIZED_PNL"
	LedgerFunding     LedgerKind = "FUNDING"
	LedgerConvert     LedgerKind = "CONVERT"
	LedgerInsurance   LedgerKind = "INSURANCE"
	LedgerSubTransfer LedgerKind = "SUB_TRANSFER"
)

// LedgerEntry is one double-entry movement of an asset between two account wallets.
type LedgerEntry struct {
	ID         uint64
	Kind       LedgerKind
	Asset      string
	Amount     decimal.Decimal
	From       string
	FromWallet Wallet
	To         string
	ToWallet   Wallet
	Ref        string // order id, withdrawal id, quote id...
	Time       int64
}

// move transfers amount of asset between wallets. fromLocked takes it out of the sender's locked part (which is
// released by the same amount). Non-system senders may not go below zero free (or locked) balance: that is a bug in
// the caller's checks, so move returns an error and changes nothing.
func (v *Venue) move(kind LedgerKind, from *account, fw Wallet, to *account, tw Wallet, asset string,
	amount decimal.Decimal, fromLocked bool, ref string) error {
	if amount.IsZero() {
		return nil
	}
	if amount.IsNegative() {
		from, to, fw, tw = to, from, tw, fw
		amount = amount.Neg()
		if fromLocked {
			return fmt.Errorf("%w: negative movement out of locked funds", ErrInvalidOrder)
		}
	}
	fb := from.bal(fw, asset)
	if !from.house {
		if fromLocked {
			if fb.locked.LessThan(amount) {
				return fmt.Errorf("%w: %s %s locked %s < %s", ErrInsufficientFunds, from.id, asset, fb.locked, amount)
			}
		} else if fb.total.Sub(fb.locked).LessThan(amount) {
			return fmt.Errorf("%w: %s %s free %s < %s", ErrInsufficientFunds, from.id, asset,
				fb.total.Sub(fb.locked), amount)
		}
	}
	if fromLocked {
		fb.locked = fb.locked.Sub(amount)
	}
	fb.total = fb.total.Sub(amount)
	tb := to.bal(tw, asset)
	tb.total = tb.total.Add(amount)
	v.nextLedger++
	e := LedgerEntry{ID: v.nextLedger, Kind: kind, Asset: asset, Amount: amount, From: from.id, FromWallet: fw,
		To: to.id, ToWallet: tw, Ref: ref, Time: v.Now()}
	if !from.system || !to.system {
		from.ledger.push(e)
		if to != from {
			to.ledger.push(e)
		}
	}
	if !from.house {
		v.emitBalance(from, fw, asset)
	}
	if !to.house {
		v.emitBalance(to, tw, asset)
	}
	return nil
}

// lockFunds moves amount from free to locked.
func (v *Venue) lockFunds(a *account, w Wallet, asset string, amount decimal.Decimal) error {
	if amount.IsZero() || a.house {
		return nil
	}
	b := a.bal(w, asset)
	if b.total.Sub(b.locked).LessThan(amount) {
		return fmt.Errorf("%w: %s free %s < %s", ErrInsufficientFunds, asset, b.total.Sub(b.locked), amount)
	}
	b.locked = b.locked.Add(amount)
	v.emitBalance(a, w, asset)
	return nil
}

// unlockFunds releases locked funds.
func (v *Venue) unlockFunds(a *account, w Wallet, asset string, amount decimal.Decimal) {
	if amount.IsZero() || a.house {
		return
	}
	b := a.bal(w, asset)
	b.locked = b.locked.Sub(amount)
	if b.locked.IsNegative() {
		// Cannot happen when locks are released exactly once; clamp so a bug never creates money.
		b.locked = decimal.Zero
	}
	v.emitBalance(a, w, asset)
}

// CreateAccount registers a trading account; existing ids are returned unchanged (idempotent).
func (v *Venue) CreateAccount(id string) error {
	if id == "" || strings.HasPrefix(id, "@") {
		return fmt.Errorf("%w: account id %q", ErrUnknownAccount, id)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.accounts[id]; !ok {
		v.newAccount(id, false)
	}
	return nil
}

func (v *Venue) userAccount(id string) (*account, error) {
	a, ok := v.accounts[id]
	if !ok || a.system {
		return nil, fmt.Errorf("%w: %q", ErrUnknownAccount, id)
	}
	return a, nil
}

// Balances lists an account's balances in one wallet (0 = both), sorted by wallet then asset.
func (v *Venue) Balances(id string, w Wallet) ([]Balance, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	a, ok := v.accounts[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownAccount, id)
	}
	var out []Balance
	for _, wl := range []Wallet{Funding, TradingWallet} {
		if w != 0 && w != wl {
			continue
		}
		for asset := range a.wallets[wl] {
			out = append(out, a.balanceView(wl, asset))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Wallet != out[j].Wallet {
			return out[i].Wallet < out[j].Wallet
		}
		return out[i].Asset < out[j].Asset
	})
	return out, nil
}

func (a *account) balanceView(w Wallet, asset string) Balance {
	b := a.bal(w, asset)
	return Balance{Account: a.id, Wallet: w, Asset: asset, Total: b.total, Locked: b.locked, Free: b.total.Sub(b.locked)}
}

// Ledger returns an account's newest ledger entries (up to limit), oldest first.
func (v *Venue) Ledger(id string, limit int) ([]LedgerEntry, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	a, ok := v.accounts[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownAccount, id)
	}
	return a.ledger.last(limit), nil
}

// AssetTotals sums every account's balances per asset (both wallets). The ledger is double-entry, so every sum is
// zero: deposits are balanced by the external account, trading by the house and fee accounts.
func (v *Venue) AssetTotals() map[string]decimal.Decimal {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := map[string]decimal.Decimal{}
	for _, a := range v.accounts {
		for _, w := range []Wallet{Funding, TradingWallet} {
			for asset, b := range a.wallets[w] {
				out[asset] = out[asset].Add(b.total)
			}
		}
	}
	return out
}
