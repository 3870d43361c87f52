package wallet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/bff/internal/accounts"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/servicegate"
	"github.com/exhub/exhub/bff/internal/store"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// TransferRequest moves a coin between the member's funding and trading wallets on one exchange.
type TransferRequest struct {
	Exchange string
	Asset    string
	Amount   string
	From     string // FUNDING or TRADING
	To       string
}

// WithdrawRequest sends a coin from the member's funding wallet to an address. Amount is what arrives; the
// network's fee is charged on top.
type WithdrawRequest struct {
	Exchange string
	Asset    string
	Network  string // empty: the coin's first network that takes withdrawals
	Amount   string
	Address  string
	Memo     string
}

// QuoteRequest asks for a convert quote by the amount given (FromAmount) or wanted (ToAmount).
type QuoteRequest struct {
	Exchange   string
	From       string
	To         string
	FromAmount string
	ToAmount   string
}

// Quote is a convert quote; it can be traded until ExpiresAt.
type Quote struct {
	Exchange   string
	QuoteID    string
	From       string
	To         string
	FromAmount string
	ToAmount   string
	Price      string
	ExpiresAt  time.Time
}

// ConvertRequest trades a quote (its fields as the quote gave them: the journal records them).
type ConvertRequest struct {
	Exchange   string
	QuoteID    string
	From       string
	To         string
	FromAmount string
	ToAmount   string
}

// GiftRequest sends a coin to another member (by member id or e-mail) on one exchange.
type GiftRequest struct {
	Exchange  string
	Asset     string
	Amount    string
	Recipient string
}

// FaucetRequest asks for demo funds on one exchange (Asset empty: the configured faucet asset).
type FaucetRequest struct {
	Exchange string
	Asset    string
}

// ExchangeTransferRequest sends a coin from the member's funding wallet on Exchange to the member's deposit address
// on Target.
type ExchangeTransferRequest struct {
	Exchange string
	Target   string
	Asset    string
	Network  string
	Amount   string
}

var walletNames = map[string]exchangev1.WalletType{"FUNDING": exchangev1.WalletType_WALLET_TYPE_FUNDING,
	"TRADING": exchangev1.WalletType_WALLET_TYPE_TRADING}

// gate refuses a service the exchange's config gates on two-factor or KYC the member lacks.
func (s *Service) gate(ctx context.Context, c Caller, exchange, service string) error {
	if s.gates == nil {
		return nil
	}
	st, err := s.gates.Check(ctx, servicegate.Member{ID: c.ID, TwoFactor: c.TwoFactor}, exchange, service)
	if err != nil {
		return fmt.Errorf("wallet: service gates: %w", err)
	}
	if st.Allowed() {
		return nil
	}
	return refuse(http.StatusForbidden, st.Code, "", servicegate.Detail(st.Code, s.gates.Name(exchange), service))
}

// withdrawAllowed refuses money leaving the member's accounts during the lockout after a security change, and
// without a recent second factor of a member who enrolled one (secondFactor).
func (s *Service) withdrawAllowed(ctx context.Context, c Caller) error {
	if err := s.secondFactor(c); err != nil {
		return err
	}
	row, err := s.st.Member(ctx, c.ID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("wallet: member: %w", err)
	}
	if err == nil && row.WithdrawLocked(s.now()) {
		return refuse(http.StatusForbidden, "withdraw_locked", "",
			fmt.Sprintf("Withdrawals are locked for 24 hours after a security change, until %s UTC.",
				row.WithdrawLockedUntil.UTC().Format("2006-01-02 15:04")))
	}
	return nil
}

// Transfer journals and sends a transfer between the member's funding and trading wallets.
func (s *Service) Transfer(ctx context.Context, c Caller, key string, r TransferRequest) (store.Movement, error) {
	if e := checkKey(key); e != nil {
		return store.Movement{}, e
	}
	asset, e := assetOf("asset", r.Asset)
	if e != nil {
		return store.Movement{}, e
	}
	amount, e := amountOf("amount", r.Amount)
	if e != nil {
		return store.Movement{}, e
	}
	from, ok1 := walletNames[strings.ToUpper(r.From)]
	to, ok2 := walletNames[strings.ToUpper(r.To)]
	if !ok1 {
		return store.Movement{}, invalid("from", "from is FUNDING or TRADING.")
	}
	if !ok2 || to == from {
		return store.Movement{}, invalid("to", "to is the other wallet: FUNDING or TRADING.")
	}
	intent := store.Movement{MemberID: c.ID, Exchange: r.Exchange, Kind: store.MovementTransfer, Asset: asset,
		Amount: amount.String(), FromWallet: strings.ToUpper(r.From), ToWallet: strings.ToUpper(r.To), IdempotencyKey: key}
	intent.RequestHash = hashOf(intent)
	if m, found, err := s.prior(ctx, c.ID, key, intent.RequestHash); found {
		return m, err
	}
	if err := s.gate(ctx, c, r.Exchange, servicegate.Transfer); err != nil {
		return store.Movement{}, err
	}
	sup, err := s.supervisor(r.Exchange)
	if err != nil {
		return store.Movement{}, err
	}
	ref, _, err := s.account(ctx, c.ID, r.Exchange)
	if err != nil {
		return store.Movement{}, err
	}
	intent.AccountID, intent.ClientID = ref.GetAccountId(), s.newClientID(32)
	m, fresh, err := s.journal(ctx, intent)
	if err != nil || !fresh {
		return m, err
	}
	req := &exchangev1.TransferRequest{Account: ref, Asset: asset, Amount: m.Amount, From: from, To: to, ClientId: m.ClientID}
	return s.send(ctx, sup, m, "Transfer", func(ctx context.Context, cl exchangev1.ExchangeClient) (result, error) {
		resp, err := cl.Transfer(ctx, req)
		t := resp.GetTransfer()
		return result{out: store.MovementOutcome{ExchangeID: t.GetId()}, status: t.GetStatus()}, err
	})
}

// network finds a coin's network among the exchange's assets (the first that takes withdrawals when name is "").
func (s *Service) network(ctx context.Context, sup *pluginhost.Supervisor, ref *exchangev1.AccountRef, asset, name string) (*exchangev1.Network, error) {
	var assets []*exchangev1.Asset
	err := s.call(ctx, sup, "ListAssets", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.ListAssets(ctx, &exchangev1.ListAssetsRequest{Account: ref})
		assets = resp.GetAssets()
		return err
	})
	if err != nil {
		return nil, readError(ctx, err)
	}
	for _, a := range assets {
		if !strings.EqualFold(a.GetAsset(), asset) {
			continue
		}
		for _, n := range a.GetNetworks() {
			if name == "" && n.GetWithdrawEnabled() || strings.EqualFold(n.GetNetwork(), name) {
				if !n.GetWithdrawEnabled() {
					return nil, refuse(http.StatusUnprocessableEntity, "not_supported", "network",
						"Withdrawals of this coin on this network are suspended.")
				}
				return n, nil
			}
		}
		if name == "" {
			return nil, refuse(http.StatusUnprocessableEntity, "not_supported", "asset", "This coin cannot be withdrawn now.")
		}
		return nil, invalid("network", fmt.Sprintf("%s is not a network of %s on this exchange.", name, asset))
	}
	return nil, invalid("asset", fmt.Sprintf("%s is not a coin of this exchange.", asset))
}

// available is the member's available amount of a coin in a wallet (funding or trading).
func (s *Service) available(ctx context.Context, sup *pluginhost.Supervisor, ref *exchangev1.AccountRef, asset string,
	w exchangev1.WalletType) (decimal.Decimal, error) {
	var bals []*exchangev1.Balance
	err := s.call(ctx, sup, "GetBalances", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.GetBalances(ctx, &exchangev1.GetBalancesRequest{Account: ref, Wallet: w})
		bals = resp.GetBalances()
		return err
	})
	if err != nil {
		return decimal.Zero, readError(ctx, err)
	}
	sum := decimal.Zero
	for _, b := range bals {
		inWallet := b.GetWallet() != exchangev1.WalletType_WALLET_TYPE_TRADING
		if w == exchangev1.WalletType_WALLET_TYPE_TRADING {
			inWallet = b.GetWallet() == exchangev1.WalletType_WALLET_TYPE_TRADING
		}
		if strings.EqualFold(b.GetAsset(), asset) && inWallet {
			if d, err := decimal.NewFromString(b.GetAvailable()); err == nil {
				sum = sum.Add(d)
			}
		}
	}
	return sum, nil
}

// checkWithdrawal applies the exchange's rules for a withdrawal (network, precision, memo, minimum, maximum) and the balance of
// the wallet it is paid from, with the spec's sentences, and returns the network and its fee.
func (s *Service) checkWithdrawal(ctx context.Context, sup *pluginhost.Supervisor, ref *exchangev1.AccountRef, asset, network string,
	amount decimal.Decimal, memo string, from exchangev1.WalletType) (*exchangev1.Network, decimal.Decimal, error) {
	n, err := s.network(ctx, sup, ref, asset, network)
	if err != nil {
		return nil, decimal.Zero, err
	}
	// The network's precision and increment (the wallet API's assets route tells the UI the same).
	if e := checkPrecision(amount, n); e != nil {
		return nil, decimal.Zero, e
	}
	if n.GetMemoRequired() && strings.TrimSpace(memo) == "" {
		return nil, decimal.Zero, refuse(http.StatusUnprocessableEntity, "memo_required", "memo",
			"This network needs a memo or tag: the receiving platform requires it.")
	}
	if lo, err := decimal.NewFromString(n.GetWithdrawMin()); err == nil && amount.LessThan(lo) {
		return nil, decimal.Zero, refuse(http.StatusUnprocessableEntity, "min_amount", "amount", MsgMinimum)
	}
	if hi, err := decimal.NewFromString(n.GetWithdrawMax()); err == nil && hi.IsPositive() && amount.GreaterThan(hi) {
		return nil, decimal.Zero, refuse(http.StatusUnprocessableEntity, "max_amount", "amount",
			fmt.Sprintf("The amount is above this network's maximum of %s.", hi.String()))
	}
	fee := decimal.Zero
	if f, err := decimal.NewFromString(n.GetWithdrawFee()); err == nil {
		fee = f
	}
	avail, err := s.available(ctx, sup, ref, asset, from)
	if err != nil {
		return nil, decimal.Zero, err
	}
	if amount.GreaterThan(avail) {
		return nil, decimal.Zero, refuse(http.StatusUnprocessableEntity, "insufficient_funds", "amount", MsgExceeds)
	}
	if amount.Add(fee).GreaterThan(avail) {
		return nil, decimal.Zero, refuse(http.StatusUnprocessableEntity, "insufficient_funds", "amount", MsgCoverFees)
	}
	return n, fee, nil
}

// Withdraw journals and sends a withdrawal from the member's funding wallet.
func (s *Service) Withdraw(ctx context.Context, c Caller, key string, r WithdrawRequest) (store.Movement, error) {
	if e := checkKey(key); e != nil {
		return store.Movement{}, e
	}
	asset, e := assetOf("asset", r.Asset)
	if e != nil {
		return store.Movement{}, e
	}
	amount, e := amountScaled("amount", r.Amount, maxWideScale) // the network's precision is checked below
	if e != nil {
		return store.Movement{}, e
	}
	addr := strings.TrimSpace(r.Address)
	if addr == "" || len(addr) > 256 {
		return store.Movement{}, invalid("address", "address is required.")
	}
	if len(r.Memo) > 128 {
		return store.Movement{}, invalid("memo", "memo is too long.")
	}
	intent := store.Movement{MemberID: c.ID, Exchange: r.Exchange, Kind: store.MovementWithdraw, Asset: asset,
		Amount: amount.String(), Network: strings.TrimSpace(r.Network), Address: addr, Memo: strings.TrimSpace(r.Memo),
		IdempotencyKey: key}
	intent.RequestHash = hashOf(intent)
	if m, found, err := s.prior(ctx, c.ID, key, intent.RequestHash); found {
		return m, err
	}
	if err := s.gate(ctx, c, r.Exchange, servicegate.Withdraw); err != nil {
		return store.Movement{}, err
	}
	if err := s.withdrawAllowed(ctx, c); err != nil {
		return store.Movement{}, err
	}
	sup, err := s.supervisor(r.Exchange)
	if err != nil {
		return store.Movement{}, err
	}
	ref, acct, err := s.account(ctx, c.ID, r.Exchange)
	if err != nil {
		return store.Movement{}, err
	}
	path, err := s.withdrawPath(sup, r.Exchange, acct)
	if err != nil {
		return store.Movement{}, err
	}
	n, fee, err := s.checkWithdrawal(ctx, sup, ref, asset, intent.Network, amount, intent.Memo, path.from)
	if err != nil {
		return store.Movement{}, err
	}
	intent.Network, intent.Fee = n.GetNetwork(), fee.String()
	if path.master != nil {
		intent.FromSubAccount, intent.FromWallet = acct.SubAccountID, walletName(path.from)
	}
	intent.AccountID, intent.ClientID = ref.GetAccountId(), s.newClientID(32)
	m, fresh, err := s.journal(ctx, intent)
	if err != nil || !fresh {
		return m, err
	}
	return s.withdrawVia(ctx, sup, m, ref, path)
}

// withdrawVia sends a journaled withdrawal: through the master for a broker member, else directly with the linked
// key (which exhub linked only without the withdraw permission, so the exchange refuses it: the refusal says so).
func (s *Service) withdrawVia(ctx context.Context, sup *pluginhost.Supervisor, m store.Movement, ref *exchangev1.AccountRef,
	path withdrawalPath) (store.Movement, error) {
	if path.master != nil {
		return s.brokerWithdrawCall(ctx, sup, m, path.master)
	}
	req := &exchangev1.WithdrawRequest{Account: ref, Asset: m.Asset, Network: m.Network, Amount: m.Amount,
		Address: m.Address, Memo: m.Memo, ClientId: m.ClientID}
	return s.send(ctx, sup, m, "Withdraw", func(ctx context.Context, cl exchangev1.ExchangeClient) (result, error) {
		resp, err := cl.Withdraw(ctx, req)
		w := resp.GetWithdrawal()
		return result{out: store.MovementOutcome{ExchangeID: w.GetId(), Fee: w.GetFee(), TxID: w.GetTxId()},
			status: w.GetStatus(), denied: msgLinkedNoWithdraw}, err
	})
}

// msgLinkedNoWithdraw answers a linked key's withdrawal the exchange refused for want of the permission.
const msgLinkedNoWithdraw = "A linked API key cannot withdraw through exhub: exhub links only keys without the " +
	"withdraw permission. Withdraw from this account on the exchange itself."

// withdrawalPath is how a member's withdrawal leaves the exchange. A broker sub-account's key never has the
// withdraw permission (only the master withdraws), so the amount and fee move from the member's sub-account to the
// master and the master withdraws them. from is the member's wallet the withdrawal is paid from: the funding wallet
// where the exchange's broker transfer takes it (OKX), else the spot (trading) wallet, which the master's withdrawal
// then pays from too (Binance: its broker transfer moves spot only, and it pays withdrawals from spot, walletType 0).
// A linked key withdraws directly from its funding wallet (master nil).
type withdrawalPath struct {
	master *exchangev1.AccountRef
	from   exchangev1.WalletType
}

// withdrawPath chooses the path of a member's withdrawal; an exchange without broker transfers or a master account
// has no way to withdraw for a broker member.
func (s *Service) withdrawPath(sup *pluginhost.Supervisor, exchange string, acct accounts.Account) (withdrawalPath, error) {
	if acct.Mode != store.AccountBroker || acct.SubAccountID == "" {
		return withdrawalPath{from: exchangev1.WalletType_WALLET_TYPE_FUNDING}, nil
	}
	master, ok := s.master(exchange)
	br := sup.Describe().GetCapabilities().GetBroker()
	if !ok || !br.GetSubAccountTransfer() {
		return withdrawalPath{}, refuse(http.StatusUnprocessableEntity, "not_supported", "exchange",
			"Withdrawals are not available on this exchange.")
	}
	p := withdrawalPath{master: master, from: exchangev1.WalletType_WALLET_TYPE_TRADING}
	if slices.Contains(br.GetTransferWallets(), exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_FUNDING) {
		p.from = exchangev1.WalletType_WALLET_TYPE_FUNDING
	}
	return p, nil
}

// WithdrawWallet names the member's wallet ("FUNDING" or "TRADING") that withdrawals and transfers to another
// exchange are paid from on an exchange, for the pages' available amounts: the spot (trading) wallet of a broker
// account where the exchange's broker transfer takes no funding wallet (Binance), else the funding wallet.
func (s *Service) WithdrawWallet(ctx context.Context, memberID, exchange string) string {
	sup, err := s.supervisor(exchange)
	if err != nil {
		return "FUNDING"
	}
	_, acct, err := s.account(ctx, memberID, exchange)
	if err != nil {
		return "FUNDING"
	}
	path, err := s.withdrawPath(sup, exchange, acct)
	if err != nil {
		return "FUNDING"
	}
	return walletName(path.from)
}

func walletName(w exchangev1.WalletType) string {
	if w == exchangev1.WalletType_WALLET_TYPE_TRADING {
		return "TRADING"
	}
	return "FUNDING"
}

// The legs of a broker withdrawal share its journal entry, and their client transfer ids are fixed by the entry's
// client id (which the master's withdrawal itself carries): pull moves the amount and fee from the member's
// sub-account to the master, back returns them when the withdrawal is not made.
func legPull(cid string) string { return "wp" + strings.TrimPrefix(cid, "ex") }
func legBack(cid string) string { return "wb" + strings.TrimPrefix(cid, "ex") }

// subWallet is the broker transfer wallet of a withdrawal's legs; payWallet the master's wallet paying it.
func subWallet(m store.Movement) exchangev1.SubAccountWallet {
	if m.FromWallet == "FUNDING" {
		return exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_FUNDING
	}
	return exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_SPOT
}

func payWallet(m store.Movement) exchangev1.WalletType {
	if m.FromWallet == "FUNDING" {
		return exchangev1.WalletType_WALLET_TYPE_FUNDING
	}
	return exchangev1.WalletType_WALLET_TYPE_TRADING
}

// legTotal is what the legs move: the amount and the network's fee.
func legTotal(m store.Movement) string {
	a, _ := decimal.NewFromString(m.Amount)
	f, _ := decimal.NewFromString(m.Fee)
	return a.Add(f).String()
}

func subStatus(t *exchangev1.SubAccountTransferRecord) exchangev1.TransferStatus {
	if st := t.GetStatus(); st != exchangev1.TransferStatus_TRANSFER_STATUS_UNSPECIFIED {
		return st
	}
	return exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS
}

// pull moves a withdrawal's amount and fee from the member's sub-account to the master.
func pull(ctx context.Context, cl exchangev1.ExchangeClient, master *exchangev1.AccountRef, m store.Movement) (exchangev1.TransferStatus, error) {
	resp, err := cl.SubAccountTransfer(ctx, &exchangev1.SubAccountTransferRequest{Account: master,
		FromSubAccountId: m.FromSubAccount, Asset: m.Asset, Amount: legTotal(m), ClientTransferId: legPull(m.ClientID),
		Wallet: subWallet(m)})
	return subStatus(resp.GetTransfer()), err
}

// giveBack returns a withdrawal's amount and fee from the master to the member's sub-account. Its id is fixed and
// the plugin looks it up before sending, so it never moves twice.
func giveBack(ctx context.Context, cl exchangev1.ExchangeClient, master *exchangev1.AccountRef, m store.Movement) error {
	resp, err := cl.SubAccountTransfer(ctx, &exchangev1.SubAccountTransferRequest{Account: master,
		ToSubAccountId: m.FromSubAccount, Asset: m.Asset, Amount: legTotal(m), ClientTransferId: legBack(m.ClientID),
		Wallet: subWallet(m)})
	if err == nil && subStatus(resp.GetTransfer()) == exchangev1.TransferStatus_TRANSFER_STATUS_FAILED {
		return errors.New("the exchange reports that the return transfer failed")
	}
	return err
}

// payOut is the master's withdrawal of a broker member's movement, with the movement's client id.
func payOut(ctx context.Context, cl exchangev1.ExchangeClient, master *exchangev1.AccountRef, m store.Movement) (result, error) {
	resp, err := cl.Withdraw(ctx, &exchangev1.WithdrawRequest{Account: master, Asset: m.Asset, Network: m.Network,
		Amount: m.Amount, Address: m.Address, Memo: m.Memo, ClientId: m.ClientID, Wallet: payWallet(m)})
	w := resp.GetWithdrawal()
	return result{out: store.MovementOutcome{ExchangeID: w.GetId(), Fee: w.GetFee(), TxID: w.GetTxId()}, status: w.GetStatus()}, err
}

// msgReturned is the failure of a broker withdrawal whose amount and fee went back to the member.
const msgReturned = "The exchange did not make the withdrawal; the amount and its fee are back in your account."

// brokerWithdrawCall sends a broker member's withdrawal in two steps inside its one journal entry: (a) the amount
// and fee from the member's sub-account to the master, (b) the master's withdrawal with the entry's client id. A
// refusal of (a) moved nothing (rejected). Once (a) moved money, a lost answer is pending (the resolver finds each
// step by its own id before anything is sent again), and a refusal of (b) moves the money back to the member before
// the refusal is reported; a return not confirmed leaves the entry pending until the resolver has made it. The
// master never keeps a member's money.
func (s *Service) brokerWithdrawCall(ctx context.Context, sup *pluginhost.Supervisor, m store.Movement, master *exchangev1.AccountRef) (store.Movement, error) {
	return s.send(ctx, sup, m, "Withdraw", func(ctx context.Context, cl exchangev1.ExchangeClient) (result, error) {
		st, err := pull(ctx, cl, master, m)
		if err != nil {
			return result{}, err
		}
		if st == exchangev1.TransferStatus_TRANSFER_STATUS_FAILED {
			return result{status: st}, nil
		}
		res, err := payOut(ctx, cl, master, m)
		res.halfway = true
		if err == nil && res.status != exchangev1.TransferStatus_TRANSFER_STATUS_FAILED || sdk.IsUnknownOutcome(err) {
			return res, err
		}
		if berr := giveBack(ctx, cl, master, m); berr != nil {
			s.log.Error("broker withdrawal not made and its amount not yet returned; resolving", "movement", m.ID, "err", berr)
			if err == nil {
				err = berr
			}
			return result{halfway: true}, fmt.Errorf("withdrawal not made, amount not yet returned: %w", err)
		}
		if err == nil { // the exchange failed it at once; the money is back
			return result{status: exchangev1.TransferStatus_TRANSFER_STATUS_FAILED,
				out: store.MovementOutcome{ErrorCode: "failed", ErrorText: msgReturned}}, nil
		}
		return result{}, err // refused; the money is back: nothing moved
	})
}

// Quote asks the exchange for a convert quote (a read: nothing is journaled until the quote is traded).
func (s *Service) Quote(ctx context.Context, c Caller, r QuoteRequest) (Quote, error) {
	from, e := assetOf("from", r.From)
	if e != nil {
		return Quote{}, e
	}
	to, e := assetOf("to", r.To)
	if e != nil {
		return Quote{}, e
	}
	if from == to {
		return Quote{}, invalid("to", "Convert to another coin.")
	}
	req := &exchangev1.GetConvertQuoteRequest{FromAsset: from, ToAsset: to}
	switch {
	case r.FromAmount != "" && r.ToAmount != "":
		return Quote{}, invalid("to_amount", "Give the amount to convert or the amount wanted, not both.")
	case r.ToAmount != "":
		a, e := amountOf("to_amount", r.ToAmount)
		if e != nil {
			return Quote{}, e
		}
		req.ToAmount = a.String()
	default:
		a, e := amountOf("from_amount", r.FromAmount)
		if e != nil {
			return Quote{}, e
		}
		req.FromAmount = a.String()
	}
	sup, err := s.supervisor(r.Exchange)
	if err != nil {
		return Quote{}, err
	}
	ref, _, err := s.account(ctx, c.ID, r.Exchange)
	if err != nil {
		return Quote{}, err
	}
	req.Account = ref
	var q *exchangev1.ConvertQuote
	err = s.call(ctx, sup, "GetConvertQuote", func(ctx context.Context, cl exchangev1.ExchangeClient) error {
		resp, err := cl.GetConvertQuote(ctx, req)
		q = resp.GetQuote()
		return err
	})
	if err != nil {
		return Quote{}, readError(ctx, err)
	}
	out := Quote{Exchange: r.Exchange, QuoteID: q.GetQuoteId(), From: q.GetFromAsset(), To: q.GetToAsset(),
		FromAmount: q.GetFromAmount(), ToAmount: q.GetToAmount(), Price: q.GetPrice()}
	if t := q.GetExpiresTime(); t > 0 {
		out.ExpiresAt = time.UnixMilli(t).UTC()
	}
	return out, nil
}

// Convert journals and sends the trade of a quote.
func (s *Service) Convert(ctx context.Context, c Caller, key string, r ConvertRequest) (store.Movement, error) {
	if e := checkKey(key); e != nil {
		return store.Movement{}, e
	}
	qid := strings.TrimSpace(r.QuoteID)
	if qid == "" || len(qid) > 128 {
		return store.Movement{}, invalid("quote_id", "quote_id is required.")
	}
	from, e := assetOf("from", r.From)
	if e != nil {
		return store.Movement{}, e
	}
	to, e := assetOf("to", r.To)
	if e != nil {
		return store.Movement{}, e
	}
	amount, e := amountOf("from_amount", r.FromAmount)
	if e != nil {
		return store.Movement{}, e
	}
	toAmount := ""
	if r.ToAmount != "" {
		a, e := amountOf("to_amount", r.ToAmount)
		if e != nil {
			return store.Movement{}, e
		}
		toAmount = a.String()
	}
	intent := store.Movement{MemberID: c.ID, Exchange: r.Exchange, Kind: store.MovementConvert, Asset: from,
		Amount: amount.String(), ToAsset: to, ToAmount: toAmount, QuoteID: qid, IdempotencyKey: key}
	intent.RequestHash = hashOf(intent)
	if m, found, err := s.prior(ctx, c.ID, key, intent.RequestHash); found {
		return m, err
	}
	sup, err := s.supervisor(r.Exchange)
	if err != nil {
		return store.Movement{}, err
	}
	ref, _, err := s.account(ctx, c.ID, r.Exchange)
	if err != nil {
		return store.Movement{}, err
	}
	intent.AccountID, intent.ClientID = ref.GetAccountId(), s.newClientID(32)
	m, fresh, err := s.journal(ctx, intent)
	if err != nil || !fresh {
		return m, err
	}
	req := &exchangev1.ConvertRequest{Account: ref, QuoteId: qid}
	return s.send(ctx, sup, m, "Convert", func(ctx context.Context, cl exchangev1.ExchangeClient) (result, error) {
		resp, err := cl.Convert(ctx, req)
		cv := resp.GetConvert()
		st := cv.GetStatus()
		if err == nil && st == exchangev1.TransferStatus_TRANSFER_STATUS_UNSPECIFIED {
			st = exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS // a convert answered with its order is done
		}
		return result{out: store.MovementOutcome{ExchangeID: cv.GetId(), ToAmount: cv.GetToAmount()}, status: st}, err
	})
}

// brokerSide is a member's broker sub-account on an exchange.
func (s *Service) brokerSide(ctx context.Context, memberID, exchange string) (string, string, bool) {
	list, err := s.accounts.List(ctx, memberID)
	if err != nil {
		return "", "", false
	}
	for _, a := range list {
		if a.Exchange == exchange && a.Mode == store.AccountBroker && a.Status == store.AccountActive && a.SubAccountID != "" {
			return a.ID, a.SubAccountID, true
		}
	}
	return "", "", false
}

// master is the operator's master account on an exchange, and the plugin's broker capabilities.
func (s *Service) master(exchange string) (*exchangev1.AccountRef, bool) {
	ref, ok := s.masters[exchange]
	return ref, ok && ref != nil
}

func (s *Service) subTransferCall(ctx context.Context, sup *pluginhost.Supervisor, m store.Movement, master *exchangev1.AccountRef) (store.Movement, error) {
	req := &exchangev1.SubAccountTransferRequest{Account: master, FromSubAccountId: m.FromSubAccount,
		ToSubAccountId: m.ToSubAccount, Asset: m.Asset, Amount: m.Amount, ClientTransferId: m.ClientID}
	return s.send(ctx, sup, m, "SubAccountTransfer", func(ctx context.Context, cl exchangev1.ExchangeClient) (result, error) {
		resp, err := cl.SubAccountTransfer(ctx, req)
		t := resp.GetTransfer()
		st := t.GetStatus()
		if err == nil && st == exchangev1.TransferStatus_TRANSFER_STATUS_UNSPECIFIED {
			st = exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS
		}
		return result{out: store.MovementOutcome{ExchangeID: t.GetTransferId()}, status: st}, err
	})
}

// recipient finds a gift's recipient by member id or e-mail.
func (s *Service) recipient(ctx context.Context, who string) (string, error) {
	who = strings.TrimSpace(who)
	if strings.Contains(who, "@") {
		if s.directory == nil {
			return "", ErrNoMember
		}
		return s.directory.MemberIDByEmail(ctx, who)
	}
	if _, err := s.st.Member(ctx, who); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return "", ErrNoMember
		}
		return "", err
	}
	return who, nil
}

// Gift journals and sends a coin from the member's broker sub-account to another member's on the same exchange.
func (s *Service) Gift(ctx context.Context, c Caller, key string, r GiftRequest) (store.Movement, error) {
	if e := checkKey(key); e != nil {
		return store.Movement{}, e
	}
	asset, e := assetOf("asset", r.Asset)
	if e != nil {
		return store.Movement{}, e
	}
	amount, e := amountOf("amount", r.Amount)
	if e != nil {
		return store.Movement{}, e
	}
	who := strings.TrimSpace(r.Recipient)
	if who == "" || len(who) > 254 {
		return store.Movement{}, invalid("recipient", "Give the member id or e-mail address of the recipient.")
	}
	// The recipient as given is part of the request (an e-mail and an id naming one member are two requests).
	hashed := struct {
		store.Movement
		Recipient string
	}{store.Movement{MemberID: c.ID, Exchange: r.Exchange, Kind: store.MovementGift, Asset: asset, Amount: amount.String(),
		IdempotencyKey: key}, strings.ToLower(who)}
	hash := hashOf(hashed)
	if m, found, err := s.prior(ctx, c.ID, key, hash); found {
		return m, err
	}
	if err := s.gate(ctx, c, r.Exchange, servicegate.Transfer); err != nil {
		return store.Movement{}, err
	}
	if err := s.secondFactor(c); err != nil {
		return store.Movement{}, err
	}
	sup, err := s.supervisor(r.Exchange)
	if err != nil {
		return store.Movement{}, err
	}
	ref, acct, err := s.account(ctx, c.ID, r.Exchange)
	if err != nil {
		return store.Movement{}, err
	}
	if acct.Mode != store.AccountBroker || acct.SubAccountID == "" {
		return store.Movement{}, refuse(http.StatusConflict, "gift_broker_only", "exchange",
			"Gifts go between accounts exhub opened for its members; they are not offered for a linked API key.")
	}
	master, ok := s.master(r.Exchange)
	br := sup.Describe().GetCapabilities().GetBroker()
	if !ok || !br.GetSubAccountTransfer() {
		return store.Movement{}, refuse(http.StatusUnprocessableEntity, "not_supported", "exchange",
			"Gifts are not available on this exchange.")
	}
	rid, err := s.recipient(ctx, who)
	if err != nil && !errors.Is(err, ErrNoMember) {
		return store.Movement{}, fmt.Errorf("wallet: gift recipient: %w", err)
	}
	noRecipient := refuse(http.StatusUnprocessableEntity, "recipient_not_found", "recipient",
		"No member with that id or e-mail address can receive gifts on this exchange.")
	if errors.Is(err, ErrNoMember) {
		return store.Movement{}, noRecipient
	}
	if rid == c.ID {
		return store.Movement{}, invalid("recipient", "Send a gift to another member.")
	}
	_, toSub, ok := s.brokerSide(ctx, rid, r.Exchange)
	if !ok {
		return store.Movement{}, noRecipient
	}
	intent := hashed.Movement
	intent.RequestHash = hash
	intent.AccountID, intent.RecipientMemberID = ref.GetAccountId(), rid
	intent.FromSubAccount, intent.ToSubAccount = acct.SubAccountID, toSub
	intent.ClientID = s.newClientID(br.GetTransferIdFormat().GetMaxLength())
	m, fresh, err := s.journal(ctx, intent)
	if err != nil || !fresh {
		return m, err
	}
	if br.GetSubToSubTransfer() {
		return s.subTransferCall(ctx, sup, m, master)
	}
	return s.giftViaMaster(ctx, sup, m, master)
}

// legTwo is the client transfer id of a gift's second leg (master to recipient) on an exchange that moves nothing
// between two sub-accounts: the first leg's id with another prefix.
func legTwo(cid string) string {
	if len(cid) < 3 {
		return "g2" + cid
	}
	return "g2" + cid[2:]
}

// viaMaster reports whether gifts on the exchange go through the master (sender to master, master to recipient).
func viaMaster(sup *pluginhost.Supervisor) bool {
	return !sup.Describe().GetCapabilities().GetBroker().GetSubToSubTransfer()
}

// deliver is a gift's second leg: the master sends it on to the recipient. Its client id is fixed by the first
// leg's, and the plugin looks a client transfer id up before sending it, so it never moves money twice.
func deliver(ctx context.Context, cl exchangev1.ExchangeClient, master *exchangev1.AccountRef, m store.Movement) (result, error) {
	resp, err := cl.SubAccountTransfer(ctx, &exchangev1.SubAccountTransferRequest{Account: master,
		ToSubAccountId: m.ToSubAccount, Asset: m.Asset, Amount: m.Amount, ClientTransferId: legTwo(m.ClientID)})
	t := resp.GetTransfer()
	st := t.GetStatus()
	if err == nil && st == exchangev1.TransferStatus_TRANSFER_STATUS_UNSPECIFIED {
		st = exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS
	}
	return result{out: store.MovementOutcome{ExchangeID: t.GetTransferId()}, status: st}, err
}

// giftViaMaster sends a gift in two legs where the exchange moves nothing between two sub-accounts (OKX): the
// sender's sub-account to the master, then the master to the recipient's. A refusal of the first leg moved nothing
// (rejected); anything after it is pending until the resolver has delivered the second leg.
func (s *Service) giftViaMaster(ctx context.Context, sup *pluginhost.Supervisor, m store.Movement, master *exchangev1.AccountRef) (store.Movement, error) {
	return s.send(ctx, sup, m, "SubAccountTransfer", func(ctx context.Context, cl exchangev1.ExchangeClient) (result, error) {
		resp, err := cl.SubAccountTransfer(ctx, &exchangev1.SubAccountTransferRequest{Account: master,
			FromSubAccountId: m.FromSubAccount, Asset: m.Asset, Amount: m.Amount, ClientTransferId: m.ClientID})
		if err != nil {
			return result{}, err
		}
		if resp.GetTransfer().GetStatus() == exchangev1.TransferStatus_TRANSFER_STATUS_FAILED {
			return result{status: exchangev1.TransferStatus_TRANSFER_STATUS_FAILED}, nil
		}
		res, err := deliver(ctx, cl, master, m)
		res.halfway = true
		return res, err
	})
}

// Faucet journals and sends demo funds from the operator's master account to the member's sub-account (demo mode
// only, up to the daily cap per member, exchange and coin).
func (s *Service) Faucet(ctx context.Context, c Caller, key string, r FaucetRequest) (store.Movement, error) {
	if e := checkKey(key); e != nil {
		return store.Movement{}, e
	}
	if !s.demo {
		return store.Movement{}, refuse(http.StatusForbidden, "faucet_demo_only", "", "Demo funds exist in demo mode only.")
	}
	asset := s.cfg.FaucetAsset
	if r.Asset != "" {
		a, e := assetOf("asset", r.Asset)
		if e != nil {
			return store.Movement{}, e
		}
		if a != asset {
			return store.Movement{}, invalid("asset", fmt.Sprintf("The faucet gives %s.", asset))
		}
	}
	intent := store.Movement{MemberID: c.ID, Exchange: r.Exchange, Kind: store.MovementFaucet, Asset: asset,
		Amount: s.faucetAmount.String(), IdempotencyKey: key}
	intent.RequestHash = hashOf(intent)
	if m, found, err := s.prior(ctx, c.ID, key, intent.RequestHash); found {
		return m, err
	}
	sup, err := s.supervisor(r.Exchange)
	if err != nil {
		return store.Movement{}, err
	}
	_, acct, err := s.account(ctx, c.ID, r.Exchange)
	if err != nil {
		return store.Movement{}, err
	}
	master, ok := s.master(r.Exchange)
	br := sup.Describe().GetCapabilities().GetBroker()
	if acct.Mode != store.AccountBroker || acct.SubAccountID == "" || !ok || !br.GetSubAccountTransfer() {
		return store.Movement{}, refuse(http.StatusConflict, "faucet_unavailable", "exchange",
			"Demo funds go to the accounts exhub opened for its members; this account cannot receive them.")
	}
	intent.AccountID, intent.ToSubAccount = acct.ID, acct.SubAccountID
	capped := refuse(http.StatusTooManyRequests, "faucet_daily_cap", "",
		fmt.Sprintf("You have had today's demo funds (%s %s a day); come back tomorrow (UTC).", s.faucetCap.String(), asset))
	// The cap is exact across BFF replicas sharing the store: a day has cap/amount slots per account and coin, and
	// each slot's grant carries a client id derived from them, which the journal keeps unique per exchange. A
	// request takes the first free slot; when none is left the cap is reached. A slot stays taken by a grant the
	// exchange refused or failed.
	day := s.now().UTC().Truncate(24 * time.Hour)
	slots := 0
	if s.faucetAmount.IsPositive() {
		slots = int(s.faucetCap.Div(s.faucetAmount).IntPart())
	}
	for k := range slots {
		intent.ClientID = faucetSlotID(acct.ID, asset, day, k, br.GetTransferIdFormat().GetMaxLength())
		m, created, err := s.st.CreateMovement(ctx, intent)
		switch {
		case errors.Is(err, store.ErrKeyReused):
			return store.Movement{}, errKeyReused
		case errors.Is(err, store.ErrConflict): // the slot is taken
			continue
		case err != nil:
			return store.Movement{}, fmt.Errorf("wallet: journal: %w", err)
		case !created: // a concurrent request with the same key wrote it first: its outcome
			return s.settled(ctx, m)
		}
		return s.subTransferCall(ctx, sup, m, master)
	}
	return store.Movement{}, capped
}

// faucetSlotID is the client transfer id of a faucet grant: the k-th of an account's grants of a coin on a UTC day.
// The account id is a fresh random id per account, so a new account (or a new store) never meets an old grant's id
// at the exchange.
func faucetSlotID(accountID, asset string, day time.Time, k int, max int32) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("faucet|%s|%s|%s|%d", accountID, asset, day.Format("2006-01-02"), k)))
	id := "fc" + hex.EncodeToString(h[:15])
	if max >= 16 && int(max) < len(id) {
		id = id[:max]
	}
	return id
}

// ExchangeTransfer journals and sends a withdrawal from the member's funding wallet on one exchange to the member's
// own deposit address on another. Transfers to the fee-free exchange take FeeFreeMin to FeeFreeMax of its coin.
func (s *Service) ExchangeTransfer(ctx context.Context, c Caller, key string, r ExchangeTransferRequest) (store.Movement, error) {
	if e := checkKey(key); e != nil {
		return store.Movement{}, e
	}
	asset, e := assetOf("asset", r.Asset)
	if e != nil {
		return store.Movement{}, e
	}
	amount, e := amountScaled("amount", r.Amount, maxWideScale) // the network's precision is checked below
	if e != nil {
		return store.Movement{}, e
	}
	if r.Target == "" || r.Target == r.Exchange {
		return store.Movement{}, invalid("target", "Choose another exchange to transfer to.")
	}
	if r.Target == s.cfg.FeeFreeExchange {
		if asset != s.cfg.FeeFreeAsset {
			return store.Movement{}, invalid("asset", fmt.Sprintf("Transfers to this exchange are in %s.", s.cfg.FeeFreeAsset))
		}
		if amount.LessThan(s.feeFreeMin) {
			return store.Movement{}, refuse(http.StatusUnprocessableEntity, "min_amount", "amount", MsgMinimum)
		}
		if amount.GreaterThan(s.feeFreeMax) {
			return store.Movement{}, refuse(http.StatusUnprocessableEntity, "max_amount", "amount",
				fmt.Sprintf("Transfers to this exchange are %s to %s %s.", s.feeFreeMin.String(), s.feeFreeMax.String(), asset))
		}
	}
	intent := store.Movement{MemberID: c.ID, Exchange: r.Exchange, Kind: store.MovementExchangeTransfer, Asset: asset,
		Amount: amount.String(), Network: strings.TrimSpace(r.Network), TargetExchange: r.Target, IdempotencyKey: key}
	intent.RequestHash = hashOf(intent)
	if m, found, err := s.prior(ctx, c.ID, key, intent.RequestHash); found {
		return m, err
	}
	if err := s.gate(ctx, c, r.Exchange, servicegate.Withdraw); err != nil {
		return store.Movement{}, err
	}
	if err := s.withdrawAllowed(ctx, c); err != nil {
		return store.Movement{}, err
	}
	sup, err := s.supervisor(r.Exchange)
	if err != nil {
		return store.Movement{}, err
	}
	tsup, err := s.supervisor(r.Target)
	if err != nil {
		var we *Error
		if errors.As(err, &we) {
			we.Field = "target"
		}
		return store.Movement{}, err
	}
	ref, acct, err := s.account(ctx, c.ID, r.Exchange)
	if err != nil {
		return store.Movement{}, err
	}
	path, err := s.withdrawPath(sup, r.Exchange, acct)
	if err != nil {
		return store.Movement{}, err
	}
	tref, _, err := s.account(ctx, c.ID, r.Target)
	if err != nil {
		var we *Error
		if errors.As(err, &we) {
			we.Field, we.Message = "target", "You have no account on the target exchange yet: open or link one first."
		}
		return store.Movement{}, err
	}
	n, fee, err := s.checkWithdrawal(ctx, sup, ref, asset, intent.Network, amount, "", path.from)
	if err != nil {
		return store.Movement{}, err
	}
	var dep *exchangev1.GetDepositAddressResponse
	err = s.call(ctx, tsup, "GetDepositAddress", func(ctx context.Context, cl exchangev1.ExchangeClient) error {
		resp, err := cl.GetDepositAddress(ctx, &exchangev1.GetDepositAddressRequest{Account: tref, Asset: asset, Network: n.GetNetwork()})
		dep = resp
		return err
	})
	if err != nil {
		return store.Movement{}, readError(ctx, err)
	}
	if dep.GetAddress() == "" {
		return store.Movement{}, refuse(http.StatusUnprocessableEntity, "not_supported", "target",
			"The target exchange gives no deposit address for this coin on this network.")
	}
	intent.Network, intent.Fee, intent.Address, intent.Memo = n.GetNetwork(), fee.String(), dep.GetAddress(), dep.GetMemo()
	if path.master != nil {
		intent.FromSubAccount, intent.FromWallet = acct.SubAccountID, walletName(path.from)
	}
	intent.AccountID, intent.ClientID = ref.GetAccountId(), s.newClientID(32)
	m, fresh, err := s.journal(ctx, intent)
	if err != nil || !fresh {
		return m, err
	}
	return s.withdrawVia(ctx, sup, m, ref, path)
}
