package sdktest

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// balance is one asset in one wallet. Available is total - locked; locked covers open orders and position margin.
type balance struct{ total, locked decimal.Decimal }

func (b *balance) available() decimal.Decimal {
	return decimal.Max(b.total.Sub(b.locked), decimal.Zero)
}

type balKey struct {
	wallet exchangev1.WalletType
	asset  string
}

// account is a paper account.
type account struct {
	id       string
	balances map[balKey]*balance

	orders   []*order // every order, oldest first
	byID     map[string]*order
	byClient map[string]*order
	fills    []*exchangev1.Fill
	algos    []*algo

	positions  map[string]*position // by positionKey
	leverage   map[string]int64     // SWAP symbol -> leverage
	marginMode map[string]exchangev1.MarginMode
	mode       exchangev1.PositionMode
	// readOnly keys (api_key starting with "readonly") may read but not trade, transfer or withdraw.
	readOnly bool
	// cancelAfter: armed dead man's switches, by market type and symbol, to the Unix ms they fire at.
	cancelAfter map[string]int64

	transfers   []*exchangev1.TransferRecord
	deposits    []*exchangev1.DepositRecord
	withdrawals []*exchangev1.WithdrawalRecord
	converts    []*exchangev1.ConvertRecord
	funding     []*exchangev1.FundingPayment // settled funding, oldest first
	quotes      map[string]*exchangev1.ConvertQuote

	// Broker sub-accounts (since 1.2): parent is the master of a sub-account (nil for a master); a master keeps its
	// sub-accounts by label and by id, and the transfers it made by client id.
	parent       *account
	subs         map[string]*subAccount // by label
	subByID      map[string]*subAccount
	subTransfers map[string]*exchangev1.SubAccountTransferRecord // by client_transfer_id

	// Changes not yet sent to StreamAccount subscribers.
	dirtyBal    map[balKey]bool
	dirtyOrders map[*order]bool
	dirtyPos    map[string]bool
	dirtyAlgos  map[*algo]bool
	newFills    []*exchangev1.Fill
	sessions    map[*accountSession]struct{}
}

// Paper accounts start with a faucet deposit into the funding wallet, half of which is moved to trading.
var faucet = []struct{ asset, amount string }{
	{"USDT", "100000"}, {"BTC", "1"}, {"ETH", "10"}, {"SOL", "100"},
}

// assetInfo lists the wallet assets and their networks (fees and minimums are for withdrawals).
var assetInfo = []*exchangev1.Asset{
	{Asset: "USDT", Name: "Tether USD", Networks: []*exchangev1.Network{
		{Network: "TRC20", Name: "Tron (TRC20)", DepositEnabled: true, WithdrawEnabled: true, WithdrawFee: "1", WithdrawMin: "10", WithdrawMax: "1000000", Confirmations: 20},
		{Network: "ERC20", Name: "Ethereum (ERC20)", DepositEnabled: true, WithdrawEnabled: true, WithdrawFee: "5", WithdrawMin: "20", WithdrawMax: "1000000", Confirmations: 12},
	}},
	{Asset: "BTC", Name: "Bitcoin", Networks: []*exchangev1.Network{
		{Network: "BTC", Name: "Bitcoin", DepositEnabled: true, WithdrawEnabled: true, WithdrawFee: "0.0002", WithdrawMin: "0.001", WithdrawMax: "100", Confirmations: 2},
	}},
	{Asset: "ETH", Name: "Ether", Networks: []*exchangev1.Network{
		{Network: "ETH", Name: "Ethereum", DepositEnabled: true, WithdrawEnabled: true, WithdrawFee: "0.002", WithdrawMin: "0.01", WithdrawMax: "1000", Confirmations: 12},
	}},
	{Asset: "SOL", Name: "Solana", Networks: []*exchangev1.Network{
		{Network: "SOL", Name: "Solana", DepositEnabled: true, WithdrawEnabled: true, WithdrawFee: "0.01", WithdrawMin: "0.1", WithdrawMax: "100000", Confirmations: 1},
	}},
}

func findNetwork(asset, network string) (*exchangev1.Network, error) {
	for _, a := range assetInfo {
		if a.Asset != asset {
			continue
		}
		for _, n := range a.Networks {
			if network == "" || n.Network == network {
				return n, nil
			}
		}
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "network",
			"asset %s has no network %q", asset, network)
	}
	return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "asset", "unknown asset %q", asset)
}

// maxAmountDecimals is the precision of wallet amounts.
const maxAmountDecimals = 8

func parseAmount(field, s string) (decimal.Decimal, error) {
	d, err := parsePositive(field, s)
	if err != nil {
		return d, err
	}
	if !d.Equal(d.Truncate(maxAmountDecimals)) {
		return d, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_PRECISION, field,
			"%s %s has more than %d decimals", field, s, maxAmountDecimals)
	}
	return d, nil
}

// account returns the paper account a request acts for, creating it (with its faucet deposit) on first use.
func (s *Server) account(ref *exchangev1.AccountRef) (*account, error) {
	id := ref.GetApiKey()
	if id == "" {
		id = ref.GetAccountId()
	}
	if id == "" {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED, "account",
			"an account is required: set api_key (or account_id) to name a paper account")
	}
	if sub, ok := s.subKeys[id]; ok {
		id = sub
	}
	if a, ok := s.accounts[id]; ok {
		return a, nil
	}
	a := s.newAccount(id)
	now := s.nowMs()
	for _, f := range faucet {
		amt := mustDec(f.amount)
		s.credit(a, exchangev1.WalletType_WALLET_TYPE_FUNDING, f.asset, amt, now, "faucet")
		half := amt.Div(decimal.NewFromInt(2))
		s.move(a, f.asset, half, exchangev1.WalletType_WALLET_TYPE_FUNDING, exchangev1.WalletType_WALLET_TYPE_TRADING)
		a.transfers = append(a.transfers, &exchangev1.TransferRecord{
			Id: s.newID(), Asset: f.asset, Amount: half.String(), From: exchangev1.WalletType_WALLET_TYPE_FUNDING,
			To: exchangev1.WalletType_WALLET_TYPE_TRADING, Status: exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS, Time: now,
		})
	}
	clear(a.dirtyBal) // nobody streams an account that did not exist: its first stream starts with a snapshot
	return a, nil
}

// newAccount registers an empty paper account.
func (s *Server) newAccount(id string) *account {
	a := &account{
		id: id, balances: map[balKey]*balance{}, byID: map[string]*order{}, byClient: map[string]*order{},
		positions: map[string]*position{}, leverage: map[string]int64{}, marginMode: map[string]exchangev1.MarginMode{},
		mode:     exchangev1.PositionMode_POSITION_MODE_ONE_WAY,
		readOnly: strings.HasPrefix(id, readOnlyPrefix), cancelAfter: map[string]int64{},
		quotes:   map[string]*exchangev1.ConvertQuote{},
		dirtyBal: map[balKey]bool{}, dirtyOrders: map[*order]bool{}, dirtyPos: map[string]bool{},
		dirtyAlgos: map[*algo]bool{}, sessions: map[*accountSession]struct{}{},
	}
	s.accounts[id] = a
	return a
}

// Faucet credits a paper account's funding wallet, as a deposit. Tests and demo tooling use it.
func (s *Server) Faucet(apiKey, asset string, amount decimal.Decimal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.account(&exchangev1.AccountRef{ApiKey: apiKey})
	if err != nil {
		return err
	}
	if _, err := findNetwork(asset, ""); err != nil {
		return err
	}
	s.credit(a, exchangev1.WalletType_WALLET_TYPE_FUNDING, asset, amount, s.nowMs(), "faucet")
	s.flushAccounts(s.nowMs())
	return nil
}

// credit records a completed deposit into a wallet.
func (s *Server) credit(a *account, w exchangev1.WalletType, asset string, amt decimal.Decimal, now int64, source string) {
	n, _ := findNetwork(asset, "")
	a.bal(w, asset).total = a.bal(w, asset).total.Add(amt)
	a.dirtyBal[balKey{w, asset}] = true
	id := s.newID()
	a.deposits = append(a.deposits, &exchangev1.DepositRecord{
		Id: id, Asset: asset, Network: n.GetNetwork(), Amount: amt.String(), Address: depositAddress(a.id, asset, n.GetNetwork()),
		TxId: source + "-" + id, Status: exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS, Time: now,
	})
}

func (s *Server) move(a *account, asset string, amt decimal.Decimal, from, to exchangev1.WalletType) {
	a.bal(from, asset).total = a.bal(from, asset).total.Sub(amt)
	a.bal(to, asset).total = a.bal(to, asset).total.Add(amt)
	a.dirtyBal[balKey{from, asset}] = true
	a.dirtyBal[balKey{to, asset}] = true
}

func (a *account) bal(w exchangev1.WalletType, asset string) *balance {
	k := balKey{w, asset}
	b, ok := a.balances[k]
	if !ok {
		b = &balance{}
		a.balances[k] = b
	}
	return b
}

// trading is the trading wallet balance of an asset, marked as changed.
func (a *account) trading(asset string) *balance {
	a.dirtyBal[balKey{exchangev1.WalletType_WALLET_TYPE_TRADING, asset}] = true
	return a.bal(exchangev1.WalletType_WALLET_TYPE_TRADING, asset)
}

func depositAddress(accountID, asset, network string) string {
	sum := sha256.Sum256([]byte(accountID + "|" + asset + "|" + network))
	return "ref1" + hex.EncodeToString(sum[:16])
}

func balanceProto(k balKey, b *balance) *exchangev1.Balance {
	return &exchangev1.Balance{
		Asset: k.asset, Wallet: k.wallet, Total: b.total.String(), Available: b.available().String(),
		Locked: decimal.Min(b.locked, b.total).String(),
	}
}

// pageOf selects the newest `limit` records inside [start_time, end_time], newest first, from records kept oldest
// first (appended as they happen). The cursor is the number of records, counted from the oldest, that the next page
// looks at: records[:cursor]. New records are appended after it, so the cursor stays valid while history grows and
// a page never repeats or skips a row.
func pageOf[T any](items []T, timeOf func(T) int64, p *exchangev1.HistoryPage, def, maxLimit int) ([]T, string, error) {
	limit, err := pageLimit(p.GetLimit(), def, maxLimit)
	if err != nil {
		return nil, "", err
	}
	upto := len(items)
	if c := p.GetCursor(); c != "" {
		n, err := strconv.Atoi(c)
		if err != nil || n < 0 || n > len(items) {
			return nil, "", sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "cursor", "bad cursor %q", c)
		}
		upto = n
	}
	if p.GetStartTime() != 0 && p.GetEndTime() != 0 && p.GetStartTime() > p.GetEndTime() {
		return nil, "", sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "start_time", "start_time is after end_time")
	}
	in := func(t int64) bool {
		return (p.GetStartTime() == 0 || t >= p.GetStartTime()) && (p.GetEndTime() == 0 || t <= p.GetEndTime())
	}
	var sel []T
	i := upto - 1
	for ; i >= 0 && len(sel) < limit; i-- {
		if in(timeOf(items[i])) {
			sel = append(sel, items[i])
		}
	}
	// More rows inside the window below i+1? Then the next page looks at items[:i+1].
	for j := i; j >= 0; j-- {
		if in(timeOf(items[j])) {
			return sel, strconv.Itoa(i + 1), nil
		}
	}
	return sel, "", nil
}

// ---------------------------------------------------------------------------------------------------------------
// Wallet RPCs

// ListAssets lists wallet assets and their networks.
func (s *Server) ListAssets(context.Context, *exchangev1.ListAssetsRequest) (*exchangev1.ListAssetsResponse, error) {
	return &exchangev1.ListAssetsResponse{Assets: assetInfo}, nil
}

// GetBalances lists balances of one or both wallets, and the trading account's USDT totals.
func (s *Server) GetBalances(_ context.Context, req *exchangev1.GetBalancesRequest) (*exchangev1.GetBalancesResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.account(req.GetAccount())
	if err != nil {
		return nil, err
	}
	out := &exchangev1.GetBalancesResponse{}
	keys := slices.SortedFunc(maps.Keys(a.balances), func(x, y balKey) int {
		return cmp.Or(cmp.Compare(x.wallet, y.wallet), cmp.Compare(x.asset, y.asset))
	})
	for _, k := range keys {
		if req.GetWallet() == exchangev1.WalletType_WALLET_TYPE_UNSPECIFIED || req.GetWallet() == k.wallet {
			out.Balances = append(out.Balances, balanceProto(k, a.balances[k]))
		}
	}
	upnl := decimal.Zero
	for _, p := range a.positions {
		upnl = upnl.Add(s.unrealized(p))
	}
	usdt := a.bal(exchangev1.WalletType_WALLET_TYPE_TRADING, "USDT")
	out.Equity = decimal.Max(usdt.total.Add(upnl), decimal.Zero).String()
	out.UnrealizedPnl = upnl.String()
	out.AvailableMargin = decimal.Max(usdt.total.Sub(usdt.locked).Add(decimal.Min(upnl, decimal.Zero)), decimal.Zero).String()
	return out, nil
}

func checkWallet(field string, w exchangev1.WalletType) error {
	if w != exchangev1.WalletType_WALLET_TYPE_FUNDING && w != exchangev1.WalletType_WALLET_TYPE_TRADING {
		return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, field, "%s wallet is required", field)
	}
	return nil
}

// Transfer moves an asset between the funding and trading wallets. A repeated client_id returns the first transfer.
func (s *Server) Transfer(_ context.Context, req *exchangev1.TransferRequest) (*exchangev1.TransferResponse, error) {
	armed, drop := s.fault(req.GetClientId())
	if drop {
		return nil, unknownOutcome("transfer", req.GetClientId(), false)
	}
	r, err := s.transfer(req)
	if err == nil && armed {
		return nil, unknownOutcome("transfer", req.GetClientId(), true)
	}
	return r, err
}

func (s *Server) transfer(req *exchangev1.TransferRequest) (*exchangev1.TransferResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.tradeAccount(req.GetAccount())
	if err != nil {
		return nil, err
	}
	if err := checkClientID("client_id", req.GetClientId()); err != nil {
		return nil, err
	}
	if req.GetClientId() != "" {
		for _, t := range a.transfers {
			if t.ClientId == req.GetClientId() {
				return &exchangev1.TransferResponse{Transfer: t}, nil
			}
		}
	}
	if _, err := findNetwork(req.GetAsset(), ""); err != nil {
		return nil, err
	}
	if err := checkWallet("from", req.GetFrom()); err != nil {
		return nil, err
	}
	if err := checkWallet("to", req.GetTo()); err != nil {
		return nil, err
	}
	if req.GetFrom() == req.GetTo() {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "to", "from and to are the same wallet")
	}
	amt, err := parseAmount("amount", req.GetAmount())
	if err != nil {
		return nil, err
	}
	if avail := a.bal(req.GetFrom(), req.GetAsset()).available(); avail.LessThan(amt) {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS, "amount",
			"%s %s available, %s requested", avail, req.GetAsset(), amt)
	}
	s.move(a, req.GetAsset(), amt, req.GetFrom(), req.GetTo())
	rec := &exchangev1.TransferRecord{
		Id: s.newID(), ClientId: req.GetClientId(), Asset: req.GetAsset(), Amount: amt.String(), From: req.GetFrom(),
		To: req.GetTo(), Status: exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS, Time: s.nowMs(),
	}
	a.transfers = append(a.transfers, rec)
	s.flushAccounts(rec.Time)
	return &exchangev1.TransferResponse{Transfer: rec}, nil
}

// ListTransfers pages transfers, newest first.
func (s *Server) ListTransfers(_ context.Context, req *exchangev1.ListTransfersRequest) (*exchangev1.ListTransfersResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.account(req.GetAccount())
	if err != nil {
		return nil, err
	}
	recs := slices.DeleteFunc(slices.Clone(a.transfers), func(t *exchangev1.TransferRecord) bool {
		return req.GetAsset() != "" && t.Asset != req.GetAsset()
	})
	page, next, err := pageOf(recs, func(t *exchangev1.TransferRecord) int64 { return t.Time }, req.GetPage(), 100, 500)
	if err != nil {
		return nil, err
	}
	return &exchangev1.ListTransfersResponse{Transfers: page, NextCursor: next}, nil
}

// GetDepositAddress returns the account's address for an asset and network. Withdrawing from another paper
// account to this address arrives here as a deposit.
func (s *Server) GetDepositAddress(_ context.Context, req *exchangev1.GetDepositAddressRequest) (*exchangev1.GetDepositAddressResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.account(req.GetAccount())
	if err != nil {
		return nil, err
	}
	n, err := findNetwork(req.GetAsset(), req.GetNetwork())
	if err != nil {
		return nil, err
	}
	return &exchangev1.GetDepositAddressResponse{
		Asset: req.GetAsset(), Network: n.Network, Address: depositAddress(a.id, req.GetAsset(), n.Network),
	}, nil
}

// ListDeposits pages deposits (faucet and transfers from other paper accounts), newest first.
func (s *Server) ListDeposits(_ context.Context, req *exchangev1.ListDepositsRequest) (*exchangev1.ListDepositsResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.account(req.GetAccount())
	if err != nil {
		return nil, err
	}
	recs := slices.DeleteFunc(slices.Clone(a.deposits), func(d *exchangev1.DepositRecord) bool {
		return req.GetAsset() != "" && d.Asset != req.GetAsset()
	})
	page, next, err := pageOf(recs, func(d *exchangev1.DepositRecord) int64 { return d.Time }, req.GetPage(), 100, 500)
	if err != nil {
		return nil, err
	}
	return &exchangev1.ListDepositsResponse{Deposits: page, NextCursor: next}, nil
}

// Withdraw sends an amount from the funding wallet; the network fee is charged on top. An address that belongs to
// another paper account credits that account.
func (s *Server) Withdraw(_ context.Context, req *exchangev1.WithdrawRequest) (*exchangev1.WithdrawResponse, error) {
	armed, drop := s.fault(req.GetClientId())
	if drop {
		return nil, unknownOutcome("withdrawal", req.GetClientId(), false)
	}
	r, err := s.withdraw(req)
	if err == nil && armed {
		return nil, unknownOutcome("withdrawal", req.GetClientId(), true)
	}
	return r, err
}

func (s *Server) withdraw(req *exchangev1.WithdrawRequest) (*exchangev1.WithdrawResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.tradeAccount(req.GetAccount())
	if err != nil {
		return nil, err
	}
	if err := checkClientID("client_id", req.GetClientId()); err != nil {
		return nil, err
	}
	if req.GetClientId() != "" {
		for _, w := range a.withdrawals {
			if w.ClientId == req.GetClientId() {
				return &exchangev1.WithdrawResponse{Withdrawal: w}, nil
			}
		}
	}
	n, err := findNetwork(req.GetAsset(), req.GetNetwork())
	if err != nil {
		return nil, err
	}
	amt, err := parseAmount("amount", req.GetAmount())
	if err != nil {
		return nil, err
	}
	if amt.LessThan(mustDec(n.WithdrawMin)) || amt.GreaterThan(mustDec(n.WithdrawMax)) {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "amount",
			"amount %s is outside %s..%s %s", amt, n.WithdrawMin, n.WithdrawMax, req.GetAsset())
	}
	if req.GetAddress() == "" {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "address", "address is required")
	}
	fee := mustDec(n.WithdrawFee)
	funding := a.bal(exchangev1.WalletType_WALLET_TYPE_FUNDING, req.GetAsset())
	if funding.available().LessThan(amt.Add(fee)) {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS, "amount",
			"%s %s available in funding, %s + fee %s needed", funding.available(), req.GetAsset(), amt, fee)
	}
	now := s.nowMs()
	funding.total = funding.total.Sub(amt.Add(fee))
	a.dirtyBal[balKey{exchangev1.WalletType_WALLET_TYPE_FUNDING, req.GetAsset()}] = true
	id := s.newID()
	rec := &exchangev1.WithdrawalRecord{
		Id: id, ClientId: req.GetClientId(), Asset: req.GetAsset(), Network: n.Network, Amount: amt.String(),
		Fee: fee.String(), Address: req.GetAddress(), Memo: req.GetMemo(), TxId: "reftx-" + id,
		Status: exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS, Time: now,
	}
	a.withdrawals = append(a.withdrawals, rec)
	for _, other := range s.accounts {
		if depositAddress(other.id, req.GetAsset(), n.Network) == req.GetAddress() {
			s.credit(other, exchangev1.WalletType_WALLET_TYPE_FUNDING, req.GetAsset(), amt, now, "reftx")
		}
	}
	s.flushAccounts(now)
	return &exchangev1.WithdrawResponse{Withdrawal: rec}, nil
}

// ListWithdrawals pages withdrawals, newest first.
func (s *Server) ListWithdrawals(_ context.Context, req *exchangev1.ListWithdrawalsRequest) (*exchangev1.ListWithdrawalsResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.account(req.GetAccount())
	if err != nil {
		return nil, err
	}
	recs := slices.DeleteFunc(slices.Clone(a.withdrawals), func(w *exchangev1.WithdrawalRecord) bool {
		return req.GetAsset() != "" && w.Asset != req.GetAsset()
	})
	page, next, err := pageOf(recs, func(w *exchangev1.WithdrawalRecord) int64 { return w.Time }, req.GetPage(), 100, 500)
	if err != nil {
		return nil, err
	}
	return &exchangev1.ListWithdrawalsResponse{Withdrawals: page, NextCursor: next}, nil
}

// usdtPrice is an asset's price in USDT: the spot mid for a base asset.
func (s *Server) usdtPrice(asset string) (decimal.Decimal, error) {
	if asset == "USDT" {
		return decimal.NewFromInt(1), nil
	}
	in, ok := s.insts[instKey(exchangev1.MarketType_MARKET_TYPE_SPOT, asset+"USDT")]
	if !ok {
		return decimal.Decimal{}, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "asset",
			"cannot convert %q", asset)
	}
	return in.price(in.mid()), nil
}

// convertSpread is what the convert desk keeps.
var convertSpread = mustDec("0.001")

const quoteTTLMs = 10_000

// GetConvertQuote prices a conversion from the spot mids, minus a small spread. The quote is valid for 10 s.
func (s *Server) GetConvertQuote(_ context.Context, req *exchangev1.GetConvertQuoteRequest) (*exchangev1.GetConvertQuoteResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.account(req.GetAccount())
	if err != nil {
		return nil, err
	}
	if req.GetFromAsset() == req.GetToAsset() {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "to_asset", "from and to assets are the same")
	}
	pf, err := s.usdtPrice(req.GetFromAsset())
	if err != nil {
		return nil, err
	}
	pt, err := s.usdtPrice(req.GetToAsset())
	if err != nil {
		return nil, err
	}
	price := pf.Div(pt).Mul(decimal.NewFromInt(1).Sub(convertSpread)).Truncate(12)
	var from, to decimal.Decimal
	switch {
	case req.GetFromAmount() != "" && req.GetToAmount() == "":
		if from, err = parseAmount("from_amount", req.GetFromAmount()); err != nil {
			return nil, err
		}
		to = from.Mul(price).Truncate(maxAmountDecimals)
	case req.GetToAmount() != "" && req.GetFromAmount() == "":
		if to, err = parseAmount("to_amount", req.GetToAmount()); err != nil {
			return nil, err
		}
		from = to.Div(price).RoundUp(maxAmountDecimals)
	default:
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "from_amount",
			"set exactly one of from_amount and to_amount")
	}
	if !to.IsPositive() {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "from_amount", "amount too small to convert")
	}
	q := &exchangev1.ConvertQuote{
		QuoteId: s.newID(), FromAsset: req.GetFromAsset(), ToAsset: req.GetToAsset(), FromAmount: from.String(),
		ToAmount: to.String(), Price: price.String(), ExpiresTime: s.nowMs() + quoteTTLMs,
	}
	a.quotes[q.QuoteId] = q
	return &exchangev1.GetConvertQuoteResponse{Quote: q}, nil
}

// Convert executes a quote once, in the funding wallet.
func (s *Server) Convert(_ context.Context, req *exchangev1.ConvertRequest) (*exchangev1.ConvertResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.tradeAccount(req.GetAccount())
	if err != nil {
		return nil, err
	}
	q, ok := a.quotes[req.GetQuoteId()]
	if !ok {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "quote_id", "unknown or used quote %q", req.GetQuoteId())
	}
	now := s.nowMs()
	if now > q.ExpiresTime {
		delete(a.quotes, q.QuoteId)
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED, "quote_id", "quote %s expired", q.QuoteId)
	}
	from, to := mustDec(q.FromAmount), mustDec(q.ToAmount)
	fb := a.bal(exchangev1.WalletType_WALLET_TYPE_FUNDING, q.FromAsset)
	if fb.available().LessThan(from) {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS, "from_amount",
			"%s %s available in funding, %s needed", fb.available(), q.FromAsset, from)
	}
	delete(a.quotes, q.QuoteId)
	fb.total = fb.total.Sub(from)
	tb := a.bal(exchangev1.WalletType_WALLET_TYPE_FUNDING, q.ToAsset)
	tb.total = tb.total.Add(to)
	a.dirtyBal[balKey{exchangev1.WalletType_WALLET_TYPE_FUNDING, q.FromAsset}] = true
	a.dirtyBal[balKey{exchangev1.WalletType_WALLET_TYPE_FUNDING, q.ToAsset}] = true
	rec := &exchangev1.ConvertRecord{
		Id: s.newID(), QuoteId: q.QuoteId, FromAsset: q.FromAsset, ToAsset: q.ToAsset, FromAmount: q.FromAmount,
		ToAmount: q.ToAmount, Price: q.Price, Status: exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS, Time: now,
	}
	a.converts = append(a.converts, rec)
	s.flushAccounts(now)
	return &exchangev1.ConvertResponse{Convert: rec}, nil
}

// ListConverts pages conversions, newest first.
func (s *Server) ListConverts(_ context.Context, req *exchangev1.ListConvertsRequest) (*exchangev1.ListConvertsResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.account(req.GetAccount())
	if err != nil {
		return nil, err
	}
	page, next, err := pageOf(a.converts, func(c *exchangev1.ConvertRecord) int64 { return c.Time }, req.GetPage(), 100, 500)
	if err != nil {
		return nil, err
	}
	return &exchangev1.ListConvertsResponse{Converts: page, NextCursor: next}, nil
}
