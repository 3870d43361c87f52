package venue

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/shopspring/decimal"
)

// WalletTx is a deposit or a withdrawal.
type WalletTx struct {
	ID      string // "dep..." for deposits, "wd..." for withdrawals
	Account string
	Asset   string
	Amount  decimal.Decimal // credited (deposit) or sent (withdrawal, fee excluded)
	Fee     decimal.Decimal
	Address string
	Network string
	// Status: a deposit is TxPending until credited, then TxCompleted; a withdrawal is TxProcessing until it is on
	// the chain, then TxCompleted. Without a chain both complete at once.
	Status string
	// TxID is the chain transaction both sides show ("" for faucet deposits and withdrawals without a chain).
	TxID    string
	Time    int64 // created
	Updated int64 // last status change
}

// Wallet transaction statuses.
const (
	TxPending    = "PENDING"
	TxProcessing = "PROCESSING"
	TxCompleted  = "COMPLETED"
)

// walletKeep is how many deposits and withdrawals an account remembers (newest kept).
const walletKeep = 5000

// addWalletTx records a deposit or withdrawal on an account. Caller holds v.mu.
func (a *account) addWalletTx(tx WalletTx) {
	if a.walletByID == nil {
		a.walletByID = map[string]*WalletTx{}
	}
	p := &tx
	a.walletTxs = append(a.walletTxs, p)
	a.walletByID[tx.ID] = p
	if n := len(a.walletTxs); n > walletKeep {
		drop := n - walletKeep
		for _, old := range a.walletTxs[:drop] {
			delete(a.walletByID, old.ID)
		}
		a.walletTxs = append(a.walletTxs[:0:0], a.walletTxs[drop:]...)
	}
}

// Assets lists the wallet assets and their parameters.
func (v *Venue) Assets() map[string]AssetConfig {
	out := make(map[string]AssetConfig, len(v.assets))
	for k, a := range v.assets {
		out[k] = a
	}
	return out
}

func (v *Venue) asset(name string) (AssetConfig, error) {
	c, ok := v.assets[name]
	if !ok {
		return AssetConfig{}, fmt.Errorf("%w: %q", ErrUnknownAsset, name)
	}
	return c, nil
}

// DepositAddress is a stable pseudo address for an account and asset. On a chain it is salted with the venue's
// chain name (so venues never share an address) and registered there: a withdrawal to it from another venue of the
// chain arrives here.
func (v *Venue) DepositAddress(account, asset string) (string, error) {
	if _, err := v.asset(asset); err != nil {
		return "", err
	}
	v.mu.Lock()
	c, name := v.chain, v.chainName
	v.mu.Unlock()
	seed := account + "/" + asset
	if c != nil {
		seed = name + "/" + seed
	}
	h := sha256.Sum256([]byte(seed))
	addr := "sim1" + hex.EncodeToString(h[:20])
	if c != nil {
		c.register(addr, name, account, asset)
	}
	return addr, nil
}

// Deposit credits an account's funding wallet from outside (the demo faucet). Amount zero uses the asset's faucet
// amount.
func (v *Venue) Deposit(ctx context.Context, account, asset string, amount decimal.Decimal) (WalletTx, error) {
	if err := ctx.Err(); err != nil {
		return WalletTx{}, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	defer v.flushLocked()
	a, err := v.userAccount(account)
	if err != nil {
		return WalletTx{}, err
	}
	c, err := v.asset(asset)
	if err != nil {
		return WalletTx{}, err
	}
	if amount.IsZero() {
		amount = c.Faucet
	}
	if !amount.IsPositive() {
		return WalletTx{}, fmt.Errorf("%w: deposit amount %s", ErrOutOfRange, amount)
	}
	v.nextQ++
	id := "dep" + strconv.FormatUint(v.nextQ, 10)
	if err := v.move(LedgerDeposit, v.external, Funding, a, Funding, asset, amount, false, id); err != nil {
		return WalletTx{}, err
	}
	now := v.Now()
	tx := WalletTx{ID: id, Account: account, Asset: asset, Amount: amount, Fee: decimal.Zero,
		Address: v.depositAddressLocked(account, asset), Network: "SIM", Status: TxCompleted, Time: now, Updated: now}
	a.addWalletTx(tx)
	return tx, nil
}

// depositAddressLocked is DepositAddress for a caller holding v.mu (the address is not registered again).
func (v *Venue) depositAddressLocked(account, asset string) string {
	seed := account + "/" + asset
	if v.chain != nil {
		seed = v.chainName + "/" + seed
	}
	h := sha256.Sum256([]byte(seed))
	return "sim1" + hex.EncodeToString(h[:20])
}

// Withdraw sends amount (plus the asset's fee) out of the funding wallet.
func (v *Venue) Withdraw(ctx context.Context, account, asset string, amount decimal.Decimal, address string) (WalletTx, error) {
	if err := ctx.Err(); err != nil {
		return WalletTx{}, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	defer v.flushLocked()
	a, err := v.userAccount(account)
	if err != nil {
		return WalletTx{}, err
	}
	c, err := v.asset(asset)
	if err != nil {
		return WalletTx{}, err
	}
	if address == "" {
		return WalletTx{}, fmt.Errorf("%w: withdrawal address required", ErrInvalidOrder)
	}
	if amount.LessThan(c.WithdrawMin) {
		return WalletTx{}, fmt.Errorf("%w: %s < %s", ErrWithdrawMin, amount, c.WithdrawMin)
	}
	b := a.bal(Funding, asset)
	if b.total.Sub(b.locked).LessThan(amount.Add(c.WithdrawFee)) {
		return WalletTx{}, fmt.Errorf("%w: %s %s free, %s + fee %s needed", ErrInsufficientFunds,
			b.total.Sub(b.locked), asset, amount, c.WithdrawFee)
	}
	v.nextQ++
	id := "wd" + strconv.FormatUint(v.nextQ, 10)
	now := v.Now()
	tx := WalletTx{ID: id, Account: account, Asset: asset, Amount: amount, Fee: c.WithdrawFee, Address: address,
		Network: "SIM", Status: TxCompleted, Time: now, Updated: now}
	if v.chain != nil {
		txID, err := v.chain.submit(v, account, id, asset, amount, address, now)
		if err != nil {
			return WalletTx{}, err
		}
		tx.Status, tx.TxID = TxProcessing, txID
	}
	mustOK(v.move(LedgerWithdraw, a, Funding, v.external, Funding, asset, amount, false, id))
	mustOK(v.move(LedgerWithdrawFee, a, Funding, v.fees, Funding, asset, c.WithdrawFee, false, id))
	a.addWalletTx(tx)
	return tx, nil
}

// chainWithdrawalDone marks a chain withdrawal COMPLETED (it is on the chain).
func (v *Venue) chainWithdrawalDone(account, wdID, txID string, at int64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if a, ok := v.accounts[account]; ok {
		if tx := a.walletByID[wdID]; tx != nil {
			tx.Status, tx.TxID, tx.Updated = TxCompleted, txID, at
		}
	}
}

// chainDepositPending records an incoming chain deposit, not yet credited, and returns its id. The account is
// created when the address's owner has none yet.
func (v *Venue) chainDepositPending(account, asset string, amount decimal.Decimal, address, txID string, at int64) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	a, ok := v.accounts[account]
	if !ok {
		a = v.newAccount(account, false)
	}
	v.nextQ++
	id := "dep" + strconv.FormatUint(v.nextQ, 10)
	a.addWalletTx(WalletTx{ID: id, Account: account, Asset: asset, Amount: amount, Fee: decimal.Zero, Address: address,
		Network: "SIM", Status: TxPending, TxID: txID, Time: at, Updated: at})
	return id
}

// chainDepositCredit credits a pending chain deposit to the account's funding wallet.
func (v *Venue) chainDepositCredit(account, depID string, at int64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	defer v.flushLocked()
	a, ok := v.accounts[account]
	if !ok {
		return
	}
	tx := a.walletByID[depID]
	if tx == nil || tx.Status != TxPending {
		return
	}
	if _, known := v.assets[tx.Asset]; !known {
		return // an asset this venue does not list never arrives (the funds stay with the outside world)
	}
	mustOK(v.move(LedgerDeposit, v.external, Funding, a, Funding, tx.Asset, tx.Amount, false, depID))
	tx.Status, tx.Updated = TxCompleted, at
}

// WalletHistory lists an account's deposits and withdrawals, oldest first (the newest 5,000 are kept).
func (v *Venue) WalletHistory(account string) ([]WalletTx, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	a, ok := v.accounts[account]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownAccount, account)
	}
	out := make([]WalletTx, len(a.walletTxs))
	for i, tx := range a.walletTxs {
		out[i] = *tx
	}
	return out, nil
}

// Transfer moves free funds between an account's funding and trading wallets.
func (v *Venue) Transfer(ctx context.Context, account, asset string, amount decimal.Decimal, from, to Wallet) (LedgerEntry, error) {
	if err := ctx.Err(); err != nil {
		return LedgerEntry{}, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	defer v.flushLocked()
	a, err := v.userAccount(account)
	if err != nil {
		return LedgerEntry{}, err
	}
	if _, err := v.asset(asset); err != nil {
		return LedgerEntry{}, err
	}
	if from == to || (from != Funding && from != TradingWallet) || (to != Funding && to != TradingWallet) {
		return LedgerEntry{}, fmt.Errorf("%w: transfer %s -> %s", ErrInvalidOrder, from, to)
	}
	if !amount.IsPositive() {
		return LedgerEntry{}, fmt.Errorf("%w: amount %s", ErrOutOfRange, amount)
	}
	if from == TradingWallet && asset == "USDT" {
		// Perpetual margin: cannot move out more than the available margin.
		if v.availableMargin(a, asset).LessThan(amount) {
			return LedgerEntry{}, fmt.Errorf("%w: available margin %s", ErrInsufficientFunds, v.availableMargin(a, asset))
		}
	}
	v.nextQ++
	id := "tr" + strconv.FormatUint(v.nextQ, 10)
	if err := v.move(LedgerTransfer, a, from, a, to, asset, amount, false, id); err != nil {
		return LedgerEntry{}, err
	}
	es := a.ledger.last(1)
	return es[0], nil
}

// ConvertQuote is a firm price to convert one asset into another, valid until Expires.
type ConvertQuote struct {
	ID       string
	Account  string
	From     string
	To       string
	FromAmt  decimal.Decimal
	ToAmt    decimal.Decimal
	Price    decimal.Decimal // To per From
	Expires  int64
	Accepted bool
}

// quoteTTL is how long a conversion quote stays valid.
const quoteTTL = 10 * time.Second

// RequestQuote prices converting fromAmt of one asset (from the funding wallet) into another. The price is the
// mid of the markets against USDT with a 0.1% spread against the user.
func (v *Venue) RequestQuote(ctx context.Context, account, from, to string, fromAmt decimal.Decimal) (ConvertQuote, error) {
	if err := ctx.Err(); err != nil {
		return ConvertQuote{}, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, err := v.userAccount(account); err != nil {
		return ConvertQuote{}, err
	}
	if from == to {
		return ConvertQuote{}, fmt.Errorf("%w: convert %s to itself", ErrInvalidOrder, from)
	}
	if !fromAmt.IsPositive() {
		return ConvertQuote{}, fmt.Errorf("%w: amount %s", ErrOutOfRange, fromAmt)
	}
	pf, err := v.usdtValue(from)
	if err != nil {
		return ConvertQuote{}, err
	}
	pt, err := v.usdtValue(to)
	if err != nil {
		return ConvertQuote{}, err
	}
	ct, _ := v.asset(to)
	price := pf.Div(pt).Mul(decimal.RequireFromString("0.999"))
	toAmt := fromAmt.Mul(price).RoundFloor(ct.Scale)
	if !toAmt.IsPositive() {
		return ConvertQuote{}, fmt.Errorf("%w: amount too small to convert", ErrOutOfRange)
	}
	v.nextQ++
	q := &ConvertQuote{ID: "q" + strconv.FormatUint(v.nextQ, 10), Account: account, From: from, To: to,
		FromAmt: fromAmt, ToAmt: toAmt, Price: price.Round(12), Expires: v.Now() + quoteTTL.Milliseconds()}
	// Drop expired quotes so the map stays bounded by the request rate over one TTL.
	now := v.Now()
	for id, old := range v.quotes {
		if old.Expires < now {
			delete(v.quotes, id)
		}
	}
	v.quotes[q.ID] = q
	return *q, nil
}

// usdtValue is one unit of asset in USDT at the current mid (USDT itself is 1).
func (v *Venue) usdtValue(asset string) (decimal.Decimal, error) {
	if asset == "USDT" {
		return decimal.NewFromInt(1), nil
	}
	if _, err := v.asset(asset); err != nil {
		return decimal.Decimal{}, err
	}
	st, ok := v.instruments[asset+"/USDT"]
	if !ok {
		st, ok = v.instruments[asset+"/USDT:PERP"]
	}
	if !ok {
		return decimal.Decimal{}, fmt.Errorf("%w: no USDT market for %s", ErrUnknownAsset, asset)
	}
	bb, ok1 := st.book.BestBid()
	ba, ok2 := st.book.BestAsk()
	if ok1 && ok2 {
		return st.in.Price(bb + ba).Div(decimal.NewFromInt(2)), nil
	}
	return st.lastPrice(), nil
}

// AcceptQuote executes a quote before it expires: from-asset goes to the house, to-asset comes back, both in the
// funding wallet. A quote executes at most once.
func (v *Venue) AcceptQuote(ctx context.Context, account, quoteID string) (ConvertQuote, error) {
	if err := ctx.Err(); err != nil {
		return ConvertQuote{}, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	defer v.flushLocked()
	a, err := v.userAccount(account)
	if err != nil {
		return ConvertQuote{}, err
	}
	q, ok := v.quotes[quoteID]
	if !ok || q.Account != account || q.Accepted || q.Expires < v.Now() {
		return ConvertQuote{}, fmt.Errorf("%w: %q", ErrQuoteExpired, quoteID)
	}
	b := a.bal(Funding, q.From)
	if b.total.Sub(b.locked).LessThan(q.FromAmt) {
		return ConvertQuote{}, fmt.Errorf("%w: %s %s free", ErrInsufficientFunds, b.total.Sub(b.locked), q.From)
	}
	mustOK(v.move(LedgerConvert, a, Funding, v.house, Funding, q.From, q.FromAmt, false, q.ID))
	mustOK(v.move(LedgerConvert, v.house, Funding, a, Funding, q.To, q.ToAmt, false, q.ID))
	q.Accepted = true
	delete(v.quotes, quoteID)
	return *q, nil
}
