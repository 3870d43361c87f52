package sdktest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"slices"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// Broker sub-accounts (exchange.v1 1.2). Any paper account that is not itself a sub-account is a master: it creates
// sub-accounts (empty paper accounts), API keys for them (a key names the sub-account's paper account), moves funds
// between itself and its sub-accounts, and reads their balances.

const (
	// labelPattern is the sub-account labels the reference accepts.
	labelPattern = `^[A-Za-z0-9_-]{1,32}$`
	// maxSubAccounts bounds the sub-accounts of one master.
	maxSubAccounts = 100000
)

var labelRe = regexp.MustCompile(labelPattern)

// subAccount is a master's sub-account and its paper account.
type subAccount struct {
	rec  *exchangev1.SubAccount
	acct *account
}

func brokerCapabilities() *exchangev1.BrokerCapabilities {
	return &exchangev1.BrokerCapabilities{
		CreateSubAccount: true, CreateSubAccountApiKey: true, SubAccountTransfer: true, SubAccountBalances: true,
		SubToSubTransfer: true,
		TransferWallets: []exchangev1.SubAccountWallet{
			exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_SPOT, exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_FUNDING,
			exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_FUTURES,
		},
		LabelFormat:      &exchangev1.ClientIdFormat{MaxLength: 32, Pattern: labelPattern},
		TransferIdFormat: &exchangev1.ClientIdFormat{MaxLength: clientIDMaxLen, Pattern: clientIDPattern},
		KeyPermissions: []exchangev1.ApiKeyPermission{
			exchangev1.ApiKeyPermission_API_KEY_PERMISSION_READ, exchangev1.ApiKeyPermission_API_KEY_PERMISSION_SPOT_TRADE,
			exchangev1.ApiKeyPermission_API_KEY_PERMISSION_FUTURES_TRADE,
		},
	}
}

// master returns the broker account of a request: a paper account that is not a sub-account and may trade.
func (s *Server) master(ref *exchangev1.AccountRef) (*account, error) {
	a, err := s.tradeAccount(ref)
	if err != nil {
		return nil, err
	}
	if a.parent != nil {
		return nil, sdk.ExchangeError(exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED, "-2015",
			"a sub-account key cannot call the broker endpoints")
	}
	if a.subs == nil {
		a.subs, a.subByID = map[string]*subAccount{}, map[string]*subAccount{}
		a.subTransfers = map[string]*exchangev1.SubAccountTransferRecord{}
	}
	return a, nil
}

func (m *account) sub(field, id string) (*subAccount, error) {
	if id == "" {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, field, "%s is required", field)
	}
	sa, ok := m.subByID[id]
	if !ok {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, field,
			"%s %q is not a sub-account of this master", field, id)
	}
	return sa, nil
}

// CreateSubAccount creates an empty sub-account, or returns the one that already has the label.
func (s *Server) CreateSubAccount(_ context.Context, req *exchangev1.CreateSubAccountRequest) (*exchangev1.CreateSubAccountResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.master(req.GetAccount())
	if err != nil {
		return nil, err
	}
	if !labelRe.MatchString(req.GetLabel()) {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "label",
			"label %q does not match %s", req.GetLabel(), labelPattern)
	}
	if sa, ok := m.subs[req.GetLabel()]; ok {
		return &exchangev1.CreateSubAccountResponse{SubAccount: sa.rec, Existing: true}, nil
	}
	if len(m.subs) >= maxSubAccounts {
		return nil, sdk.ExchangeError(exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED, "-3002",
			"the master has the most sub-accounts it may have")
	}
	id := "sub" + s.newID()
	sa := &subAccount{
		rec: &exchangev1.SubAccount{SubAccountId: id, Label: req.GetLabel(), ExchangeName: id,
			Email: id + "@reference.invalid", CreateTime: s.nowMs()},
		acct: s.newAccount(m.id + "/" + id),
	}
	sa.acct.parent = m
	m.subs[req.GetLabel()] = sa
	m.subByID[id] = sa
	return &exchangev1.CreateSubAccountResponse{SubAccount: sa.rec}, nil
}

// CreateSubAccountApiKey makes a new key naming the sub-account's paper account.
func (s *Server) CreateSubAccountApiKey(_ context.Context, req *exchangev1.CreateSubAccountApiKeyRequest) (*exchangev1.CreateSubAccountApiKeyResponse, error) {
	perms, err := sdk.SubAccountKeyPermissions(req.GetPermissions())
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.master(req.GetAccount())
	if err != nil {
		return nil, err
	}
	sa, err := m.sub("sub_account_id", req.GetSubAccountId())
	if err != nil {
		return nil, err
	}
	key, secret := "subkey"+randomHex(16), randomHex(32)
	s.subKeys[key] = sa.acct.id
	return &exchangev1.CreateSubAccountApiKeyResponse{SubAccountId: sa.rec.SubAccountId, ApiKey: key, ApiSecret: secret,
		Permissions: perms}, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand panics on a broken system source)
	return hex.EncodeToString(b)
}

func subWallet(w exchangev1.SubAccountWallet) (exchangev1.WalletType, error) {
	switch w {
	case exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_UNSPECIFIED, exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_SPOT,
		exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_FUTURES:
		return exchangev1.WalletType_WALLET_TYPE_TRADING, nil
	case exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_FUNDING:
		return exchangev1.WalletType_WALLET_TYPE_FUNDING, nil
	}
	return 0, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "wallet", "unknown wallet %v", w)
}

// SubAccountTransfer moves funds between the master and a sub-account, or between two sub-accounts. A repeated
// client_transfer_id returns the first transfer (same parameters) or DUPLICATE_CLIENT_ORDER_ID.
func (s *Server) SubAccountTransfer(_ context.Context, req *exchangev1.SubAccountTransferRequest) (*exchangev1.SubAccountTransferResponse, error) {
	armed, drop := s.fault(req.GetClientTransferId())
	if drop {
		return nil, unknownOutcome("sub-account transfer", req.GetClientTransferId(), false)
	}
	r, err := s.subTransfer(req)
	if err == nil && armed {
		return nil, unknownOutcome("sub-account transfer", req.GetClientTransferId(), true)
	}
	return r, err
}

func (s *Server) subTransfer(req *exchangev1.SubAccountTransferRequest) (*exchangev1.SubAccountTransferResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.master(req.GetAccount())
	if err != nil {
		return nil, err
	}
	cid := req.GetClientTransferId()
	if cid == "" {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "client_transfer_id",
			"client_transfer_id is required")
	}
	if err := checkClientID("client_transfer_id", cid); err != nil {
		return nil, err
	}
	amt, err := parseAmount("amount", req.GetAmount())
	if err != nil {
		return nil, err
	}
	if prev, ok := m.subTransfers[cid]; ok {
		if err := sdk.SameSubAccountTransfer(prev, req, amt); err != nil {
			return nil, err
		}
		return &exchangev1.SubAccountTransferResponse{Transfer: prev}, nil
	}
	if _, err := findNetwork(req.GetAsset(), ""); err != nil {
		return nil, err
	}
	w, err := subWallet(req.GetWallet())
	if err != nil {
		return nil, err
	}
	side := func(field, id string) (*account, error) {
		if id == "" {
			return m, nil
		}
		sa, err := m.sub(field, id)
		if err != nil {
			return nil, err
		}
		return sa.acct, nil
	}
	from, err := side("from_sub_account_id", req.GetFromSubAccountId())
	if err != nil {
		return nil, err
	}
	to, err := side("to_sub_account_id", req.GetToSubAccountId())
	if err != nil {
		return nil, err
	}
	if from == to {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "to_sub_account_id",
			"from and to are the same account")
	}
	if avail := from.bal(w, req.GetAsset()).available(); avail.LessThan(amt) {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS, "amount",
			"%s %s available, %s requested", avail, req.GetAsset(), amt)
	}
	from.bal(w, req.GetAsset()).total = from.bal(w, req.GetAsset()).total.Sub(amt)
	to.bal(w, req.GetAsset()).total = to.bal(w, req.GetAsset()).total.Add(amt)
	from.dirtyBal[balKey{w, req.GetAsset()}] = true
	to.dirtyBal[balKey{w, req.GetAsset()}] = true
	rec := &exchangev1.SubAccountTransferRecord{
		TransferId: s.newID(), ClientTransferId: cid, FromSubAccountId: req.GetFromSubAccountId(),
		ToSubAccountId: req.GetToSubAccountId(), Asset: req.GetAsset(), Amount: amt.String(), Wallet: req.GetWallet(),
		Status: exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS, Time: s.nowMs(),
	}
	m.subTransfers[cid] = rec
	s.flushAccounts(rec.Time)
	return &exchangev1.SubAccountTransferResponse{Transfer: rec}, nil
}

// GetSubAccountTransfer finds a transfer of the master by client id.
func (s *Server) GetSubAccountTransfer(_ context.Context, req *exchangev1.GetSubAccountTransferRequest) (*exchangev1.GetSubAccountTransferResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.master(req.GetAccount())
	if err != nil {
		return nil, err
	}
	rec, ok := m.subTransfers[req.GetClientTransferId()]
	if !ok {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND, "client_transfer_id",
			"no transfer with client id %q", req.GetClientTransferId())
	}
	return &exchangev1.GetSubAccountTransferResponse{Transfer: rec}, nil
}

// GetSubAccountBalances lists a sub-account's balances.
func (s *Server) GetSubAccountBalances(_ context.Context, req *exchangev1.GetSubAccountBalancesRequest) (*exchangev1.GetSubAccountBalancesResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.master(req.GetAccount())
	if err != nil {
		return nil, err
	}
	sa, err := m.sub("sub_account_id", req.GetSubAccountId())
	if err != nil {
		return nil, err
	}
	out := &exchangev1.GetSubAccountBalancesResponse{SubAccountId: sa.rec.SubAccountId}
	keys := make([]balKey, 0, len(sa.acct.balances))
	for k := range sa.acct.balances {
		if req.GetWallet() == exchangev1.WalletType_WALLET_TYPE_UNSPECIFIED || req.GetWallet() == k.wallet {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(x, y balKey) int {
		if x.wallet != y.wallet {
			return int(x.wallet) - int(y.wallet)
		}
		switch {
		case x.asset < y.asset:
			return -1
		case x.asset > y.asset:
			return 1
		}
		return 0
	})
	for _, k := range keys {
		out.Balances = append(out.Balances, balanceProto(k, sa.acct.balances[k]))
	}
	return out, nil
}
