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
	ID      string
	Account string
	Asset   string
	Amount  decimal.Decimal // credited (deposit) or sent (withdrawal, fee excluded)
	Fee     decimal.Decimal
	Address string
	Network string
	Status  string // "COMPLETED"
	Time    int64
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

// DepositAddress is a stable pseudo address for an account and asset.
func (v *Venue) DepositAddress(account, asset string) (string, error) {
	if _, err := v.asset(asset); err != nil {
		return "", err
	}
	h := sha256.Sum256([]byte(account + "/" + asset))
	return "sim1" + hex.EncodeToString(h[:20]), nil
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
	addr, _ := v.DepositAddress(account, asset)
	tx := WalletTx{ID: id, Account: account, Asset: asset, Amount: amount, Fee: decimal.Zero, Address: addr,
		Network: "SIM", Status: "COMPLETED", Time: v.Now()}
	return tx, nil
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
	mustOK(v.move(LedgerWithdraw, a, Funding, v.external, Funding, asset, amount, false, id))
	mustOK(v.move(LedgerWithdrawFee, a, Funding, v.fees, Funding, asset, c.WithdrawFee, false, id))
	return WalletTx{ID: id, Account: account, Asset: asset, Amount: amount, Fee: c.WithdrawFee, Address: address,
		Network: "SIM", Status: "COMPLETED", Time: v.Now()}, nil
}

// WalletHistory lists an account's deposits and withdrawals from its ledger, oldest first.
func (v *Venue) WalletHistory(account string) ([]WalletTx, error) {
	es, err := v.Ledger(account, 0)
	if err != nil {
		return nil, err
	}
	var out []WalletTx
	for _, e := range es {
		switch e.Kind {
		case LedgerDeposit:
			out = append(out, WalletTx{ID: e.Ref, Account: account, Asset: e.Asset, Amount: e.Amount,
				Fee: decimal.Zero, Network: "SIM", Status: "COMPLETED", Time: e.Time})
		case LedgerWithdraw:
			out = append(out, WalletTx{ID: e.Ref, Account: account, Asset: e.Asset, Amount: e.Amount,
				Network: "SIM", Status: "COMPLETED", Time: e.Time})
		case LedgerWithdrawFee:
			if n := len(out); n > 0 && out[n-1].ID == e.Ref {
				out[n-1].Fee = e.Amount
			}
		}
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
