package okx

import (
	"context"
	"crypto/rand"
	"math/big"
	"net/url"
	"regexp"
	"strings"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// Broker sub-accounts (exchange.v1 1.2) over OKX's non-disclosed broker API with the master's key.

const (
	// LabelPattern: the labels the plugin accepts; the label is the OKX sub-account name, which also needs a letter.
	LabelPattern = `^[A-Za-z0-9]{6,20}$`
	// transferTypeToSub and transferTypeToMaster are asset/transfer types with the master's key.
	transferTypeToSub    = "1"
	transferTypeToMaster = "2"
	// keyLabel names the keys the plugin creates when the request gives no label.
	keyLabel = "exhub"
)

var labelRe = regexp.MustCompile(LabelPattern)

func brokerCapabilities() *exchangev1.BrokerCapabilities {
	return &exchangev1.BrokerCapabilities{
		CreateSubAccount: true, CreateSubAccountApiKey: true, SubAccountTransfer: true, SubAccountBalances: true,
		TransferWallets: []exchangev1.SubAccountWallet{exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_SPOT,
			exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_FUNDING, exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_FUTURES},
		LabelFormat:      &exchangev1.ClientIdFormat{MaxLength: 20, Pattern: LabelPattern},
		TransferIdFormat: &exchangev1.ClientIdFormat{MaxLength: clientIDMaxLen, Pattern: clientIDPattern},
		KeyPermissions:   sdk.DefaultSubAccountKeyPermissions(),
	}
}

func invalidField(field, format string, args ...any) error {
	return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, field, format, args...)
}

func subNameParam(field, name string) (string, error) {
	if !labelRe.MatchString(name) || !strings.ContainsFunc(name, func(r rune) bool { return r > '9' }) {
		return "", invalidField(field, "%s %q is not an OKX sub-account name (6 to 20 letters and digits, with a letter)", field, name)
	}
	return name, nil
}

// findSubAccount looks a sub-account up by name (nil when the master has none with it).
func (s *Server) findSubAccount(ctx context.Context, creds *Credentials, name string) (*exchangev1.SubAccount, error) {
	data, err := s.client().Get(ctx, pathBrokerSubAccountInfo, url.Values{"subAcct": {name}}, creds)
	if err != nil {
		return nil, err
	}
	subs, err := ParseNDSubAccountInfo(data)
	if err != nil {
		return nil, internalf("subaccount-info: %v", err)
	}
	for _, sa := range subs {
		if sa.GetSubAccountId() == name {
			return sa, nil
		}
	}
	return nil, nil
}

// CreateSubAccount returns the master's sub-account named label, or creates it. The name is unique at OKX, and the
// plugin looks it up first, so a retry after a lost answer finds the first one.
func (s *Server) CreateSubAccount(ctx context.Context, req *exchangev1.CreateSubAccountRequest) (*exchangev1.CreateSubAccountResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	name, err := subNameParam("label", req.GetLabel())
	if err != nil {
		return nil, err
	}
	if prev, err := s.findSubAccount(ctx, creds, name); err != nil {
		return nil, err
	} else if prev != nil {
		return &exchangev1.CreateSubAccountResponse{SubAccount: prev, Existing: true}, nil
	}
	data, err := s.client().Write(ctx, pathBrokerCreateSubAccount, map[string]string{"subAcct": name, "label": name}, creds)
	if err != nil {
		return nil, err
	}
	if err := itemsOK(data); err != nil {
		return nil, err
	}
	sa, err := ParseNDSubAccountCreated(data)
	if err != nil {
		return nil, internalf("create-subaccount: %v", err)
	}
	return &exchangev1.CreateSubAccountResponse{SubAccount: sa}, nil
}

// newPassphrase makes a key passphrase OKX accepts: 8 to 32 characters with a lower and an upper case letter, a
// digit and a special character (24 here, from crypto/rand).
func newPassphrase() (string, error) {
	const (
		lower   = "abcdefghijkmnopqrstuvwxyz"
		upper   = "ABCDEFGHJKLMNPQRSTUVWXYZ"
		digits  = "23456789"
		special = "!@#$%*-_=+"
	)
	all := lower + upper + digits + special
	pick := func(set string) (byte, error) {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(set))))
		if err != nil {
			return 0, err
		}
		return set[n.Int64()], nil
	}
	out := make([]byte, 0, 24)
	for _, set := range []string{lower, upper, digits, special} {
		c, err := pick(set)
		if err != nil {
			return "", err
		}
		out = append(out, c)
	}
	for len(out) < 24 {
		c, err := pick(all)
		if err != nil {
			return "", err
		}
		out = append(out, c)
	}
	// Shuffle so the classes are not in a fixed place.
	for i := len(out) - 1; i > 0; i-- {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(i+1)))
		if err != nil {
			return "", err
		}
		j := n.Int64()
		out[i], out[j] = out[j], out[i]
	}
	return string(out), nil
}

// CreateSubAccountApiKey creates a key of the sub-account with a passphrase the plugin generates: "read_only" and,
// when any trade permission is asked, "trade" (OKX's trade covers spot and swaps); never "withdraw".
func (s *Server) CreateSubAccountApiKey(ctx context.Context, req *exchangev1.CreateSubAccountApiKeyRequest) (*exchangev1.CreateSubAccountApiKeyResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	perms, err := sdk.SubAccountKeyPermissions(req.GetPermissions())
	if err != nil {
		return nil, err
	}
	name, err := subNameParam("sub_account_id", req.GetSubAccountId())
	if err != nil {
		return nil, err
	}
	perm := "read_only"
	if sdk.HasPermission(perms, exchangev1.ApiKeyPermission_API_KEY_PERMISSION_SPOT_TRADE) ||
		sdk.HasPermission(perms, exchangev1.ApiKeyPermission_API_KEY_PERMISSION_FUTURES_TRADE) {
		perm = "read_only,trade"
	}
	label := req.GetLabel()
	if label == "" {
		label = keyLabel
	}
	if len(label) > 50 {
		return nil, invalidField("label", "an OKX key label has at most 50 characters")
	}
	if len(req.GetIpAllowlist()) > 20 {
		return nil, invalidField("ip_allowlist", "an OKX key takes at most 20 addresses")
	}
	pass, err := newPassphrase()
	if err != nil {
		return nil, internalf("passphrase: %v", err)
	}
	body := map[string]string{"subAcct": name, "label": label, "passphrase": pass, "perm": perm}
	if len(req.GetIpAllowlist()) > 0 {
		body["ip"] = strings.Join(req.GetIpAllowlist(), ",")
	}
	data, err := s.client().Write(ctx, pathBrokerSubAccountAPIKey, body, creds)
	if err != nil {
		return nil, err
	}
	if err := itemsOK(data); err != nil {
		return nil, err
	}
	k, err := ParseNDAPIKey(data)
	if err != nil {
		return nil, internalf("subaccount apikey: %v", err)
	}
	if k.Passphrase == "" {
		k.Passphrase = pass
	}
	if sdk.HasPermission(k.Permissions, exchangev1.ApiKeyPermission_API_KEY_PERMISSION_WITHDRAW) {
		// Never expected: the request did not ask for it. Reported, so the host refuses the key.
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED, "okx created a key with withdraw permission")
	}
	return k, nil
}

// subAccountID maps a wallet to OKX's account id: the trading account (18) margins spot and swaps alike.
func subAccountID(w exchangev1.SubAccountWallet) (string, error) {
	switch w {
	case exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_UNSPECIFIED, exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_SPOT,
		exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_FUTURES:
		return accountTrading, nil
	case exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_FUNDING:
		return accountFunding, nil
	}
	return "", invalidField("wallet", "unknown wallet %v", w)
}

// isUnknownClientID: OKX answers transfer-state for a client id it has no transfer with by 51000 "Parameter
// clientId error" rather than an empty list.
func isUnknownClientID(err error) bool {
	d := sdk.DetailOf(err)
	return err != nil && d.GetExchangeCode() == "51000" && strings.Contains(strings.ToLower(d.GetExchangeMessage()), "clientid")
}

// findSubTransfer looks a master <-> sub-account transfer up by client id (nil when OKX has none).
func (s *Server) findSubTransfer(ctx context.Context, creds *Credentials, clientID string, types ...string) (*exchangev1.SubAccountTransferRecord, error) {
	if len(types) == 0 {
		types = []string{transferTypeToSub, transferTypeToMaster}
	}
	for _, typ := range types {
		data, err := s.client().Get(ctx, pathAssetTransferState, url.Values{"clientId": {clientID}, "type": {typ}}, creds)
		if isUnknownClientID(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		recs, err := ParseSubTransferStates(data)
		if err != nil {
			return nil, internalf("transfer-state: %v", err)
		}
		for _, r := range recs {
			if r.GetClientTransferId() == clientID {
				return r, nil
			}
		}
	}
	return nil, nil
}

// SubAccountTransfer moves funds between the master and one sub-account (asset/transfer type 1 or 2). The client id
// is looked up first: a transfer already made with it is returned (same parameters) or refused (different ones).
func (s *Server) SubAccountTransfer(ctx context.Context, req *exchangev1.SubAccountTransferRequest) (*exchangev1.SubAccountTransferResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	cid := req.GetClientTransferId()
	if !clOrdIDRe.MatchString(cid) {
		return nil, invalidField("client_transfer_id", "client_transfer_id %q does not match %s", cid, clientIDPattern)
	}
	amt, err := positiveAmount("amount", req.GetAmount())
	if err != nil {
		return nil, err
	}
	ccy := strings.ToUpper(strings.TrimSpace(req.GetAsset()))
	if ccy == "" {
		return nil, invalidField("asset", "asset is required")
	}
	acct, err := subAccountID(req.GetWallet())
	if err != nil {
		return nil, err
	}
	from, to := req.GetFromSubAccountId(), req.GetToSubAccountId()
	typ, sub := transferTypeToSub, to
	switch {
	case from != "" && to != "":
		return nil, sdk.NotSupported("a transfer between two sub-accounts")
	case from == "" && to == "":
		return nil, invalidField("to_sub_account_id", "one side must be a sub-account")
	case from != "":
		typ, sub = transferTypeToMaster, from
	}
	if sub, err = subNameParam("sub_account_id", sub); err != nil {
		return nil, err
	}
	if prev, err := s.findSubTransfer(ctx, creds, cid); err != nil {
		return nil, err
	} else if prev != nil {
		if err := sdk.SameSubAccountTransfer(prev, req, amt); err != nil {
			return nil, err
		}
		prev.Wallet = req.GetWallet()
		return &exchangev1.SubAccountTransferResponse{Transfer: prev}, nil
	}
	body := map[string]string{"ccy": ccy, "amt": canon(amt), "from": acct, "to": acct, "type": typ, "subAcct": sub, "clientId": cid}
	type ackRow struct {
		TransID  string `json:"transId"`
		ClientID string `json:"clientId"`
	}
	a, err := writeCall[ackRow](ctx, s, pathAssetTransfer, body, creds)
	if err != nil {
		return nil, err
	}
	if a.TransID == "" {
		return nil, internalf("asset transfer: no transId")
	}
	rec := &exchangev1.SubAccountTransferRecord{TransferId: a.TransID, ClientTransferId: cid, FromSubAccountId: from,
		ToSubAccountId: to, Asset: ccy, Amount: canon(amt), Wallet: req.GetWallet(),
		Status: exchangev1.TransferStatus_TRANSFER_STATUS_PENDING}
	if st, err := s.findSubTransfer(ctx, creds, cid, typ); err == nil && st != nil {
		rec.Status = st.GetStatus()
	}
	return &exchangev1.SubAccountTransferResponse{Transfer: rec}, nil
}

// GetSubAccountTransfer finds a master <-> sub-account transfer by client id (asset/transfer-state, types 1 and 2).
func (s *Server) GetSubAccountTransfer(ctx context.Context, req *exchangev1.GetSubAccountTransferRequest) (*exchangev1.GetSubAccountTransferResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	cid := req.GetClientTransferId()
	if !clOrdIDRe.MatchString(cid) {
		return nil, invalidField("client_transfer_id", "client_transfer_id %q does not match %s", cid, clientIDPattern)
	}
	rec, err := s.findSubTransfer(ctx, creds, cid)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND, "client_transfer_id",
			"okx has no sub-account transfer with client id %q", cid)
	}
	return &exchangev1.GetSubAccountTransferResponse{Transfer: rec}, nil
}

// GetSubAccountBalances reads a sub-account's trading account (account/subaccount/balances) and funding account
// (asset/subaccount/balances) with the master's key.
func (s *Server) GetSubAccountBalances(ctx context.Context, req *exchangev1.GetSubAccountBalancesRequest) (*exchangev1.GetSubAccountBalancesResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	name, err := subNameParam("sub_account_id", req.GetSubAccountId())
	if err != nil {
		return nil, err
	}
	out := &exchangev1.GetSubAccountBalancesResponse{SubAccountId: name}
	q := url.Values{"subAcct": {name}}
	w := req.GetWallet()
	if w == exchangev1.WalletType_WALLET_TYPE_UNSPECIFIED || w == exchangev1.WalletType_WALLET_TYPE_TRADING {
		data, err := s.client().Get(ctx, pathSubAccountBalances, q, creds)
		if err != nil {
			return nil, err
		}
		bs, _, _, _, err := ParseTradingBalance(data)
		if err != nil {
			return nil, internalf("sub-account balance: %v", err)
		}
		out.Balances = append(out.Balances, bs...)
	}
	if w == exchangev1.WalletType_WALLET_TYPE_UNSPECIFIED || w == exchangev1.WalletType_WALLET_TYPE_FUNDING {
		data, err := s.client().Get(ctx, pathSubAccountFunding, q, creds)
		if err != nil {
			return nil, err
		}
		bs, err := ParseFundingBalances(data)
		if err != nil {
			return nil, internalf("sub-account funding balance: %v", err)
		}
		out.Balances = append(out.Balances, bs...)
	}
	return out, nil
}
