package binance

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// Broker sub-accounts (exchange.v1 1.2) over Binance Link: /sapi/v1/broker/... with the master's key.

const (
	// LabelPattern: the sub-account tags the plugin accepts (Binance: under 32 characters).
	LabelPattern = `^[A-Za-z0-9_-]{1,31}$`
	// TransferIDPattern: the clientTranIds the plugin accepts.
	TransferIDPattern = `^[A-Za-z0-9_-]{1,32}$`
	// subAccountPage is the page size of the sub-account list; subAccountPagesMax bounds a label lookup.
	subAccountPage     = 500
	subAccountPagesMax = 400
)

var (
	labelRe      = regexp.MustCompile(LabelPattern)
	transferIDRe = regexp.MustCompile(TransferIDPattern)
)

func brokerCapabilities() *exchangev1.BrokerCapabilities {
	return &exchangev1.BrokerCapabilities{
		CreateSubAccount: true, CreateSubAccountApiKey: true, SubAccountTransfer: true, SubAccountBalances: true,
		SubToSubTransfer: true,
		TransferWallets: []exchangev1.SubAccountWallet{exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_SPOT,
			exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_FUTURES},
		LabelFormat:      &exchangev1.ClientIdFormat{MaxLength: 31, Pattern: LabelPattern},
		TransferIdFormat: &exchangev1.ClientIdFormat{MaxLength: 32, Pattern: TransferIDPattern},
		KeyPermissions:   sdk.DefaultSubAccountKeyPermissions(),
	}
}

func (s *Server) brokerCall(acct *exchangev1.AccountRef, method, path string, q url.Values, weight int, what string) rest {
	return rest{m: Spot, method: method, path: path, q: q, weight: weight, acct: acct, what: what}
}

// findSubAccount looks a sub-account up by tag among the master's (nil when none has it). Binance does not filter
// the list by tag, so the list is paged.
func (s *Server) findSubAccount(ctx context.Context, acct *exchangev1.AccountRef, tag string) (*exchangev1.SubAccount, error) {
	c, _ := s.client()
	for page := 1; page <= subAccountPagesMax; page++ {
		q := url.Values{"page": {strconv.Itoa(page)}, "size": {strconv.Itoa(subAccountPage)}}
		subs, err := call(ctx, c, s.brokerCall(acct, http.MethodGet, pathBrokerSubAccount, q, 1, "sub-accounts"), ParseSubAccounts)
		if err != nil {
			return nil, err
		}
		for _, sa := range subs {
			if sa.GetLabel() == tag {
				return sa, nil
			}
		}
		if len(subs) < subAccountPage {
			return nil, nil
		}
	}
	return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "more than %d sub-accounts: the label lookup stopped",
		subAccountPage*subAccountPagesMax)
}

// CreateSubAccount returns the master's sub-account tagged with the label, or creates one. Binance does not keep
// tags unique, so the lookup comes first; a lost answer to the create is UNKNOWN_OUTCOME and the next call finds it.
func (s *Server) CreateSubAccount(ctx context.Context, req *exchangev1.CreateSubAccountRequest) (*exchangev1.CreateSubAccountResponse, error) {
	if !labelRe.MatchString(req.GetLabel()) {
		return nil, invalid("label", "label %q does not match %s", req.GetLabel(), LabelPattern)
	}
	if prev, err := s.findSubAccount(ctx, req.GetAccount(), req.GetLabel()); err != nil {
		return nil, err
	} else if prev != nil {
		return &exchangev1.CreateSubAccountResponse{SubAccount: prev, Existing: true}, nil
	}
	c, _ := s.client()
	sa, err := writeCall(ctx, c, s.brokerCall(req.GetAccount(), http.MethodPost, pathBrokerSubAccount,
		url.Values{"tag": {req.GetLabel()}}, 1, "sub-account"), ParseSubAccountCreated)
	if err != nil {
		return nil, err
	}
	if sa.CreateTime == 0 {
		sa.CreateTime = c.serverNow(Spot).UnixMilli()
	}
	return &exchangev1.CreateSubAccountResponse{SubAccount: sa}, nil
}

func subAccountIDParam(field, id string) (string, error) {
	id = strings.TrimSpace(id)
	if n, err := strconv.ParseInt(id, 10, 64); err != nil || n <= 0 {
		return "", invalid(field, "%s %q is not a Binance sub-account id", field, id)
	}
	return id, nil
}

// CreateSubAccountApiKey creates an HMAC key of the sub-account: canTrade (spot) and futuresTrade as asked, never
// margin or withdrawals. Futures is enabled on the sub-account first when the key should trade futures.
func (s *Server) CreateSubAccountApiKey(ctx context.Context, req *exchangev1.CreateSubAccountApiKeyRequest) (*exchangev1.CreateSubAccountApiKeyResponse, error) {
	perms, err := sdk.SubAccountKeyPermissions(req.GetPermissions())
	if err != nil {
		return nil, err
	}
	id, err := subAccountIDParam("sub_account_id", req.GetSubAccountId())
	if err != nil {
		return nil, err
	}
	if len(req.GetIpAllowlist()) > 0 {
		return nil, sdk.NotSupported("an IP list on a broker sub-account key")
	}
	c, _ := s.client()
	futures := sdk.HasPermission(perms, exchangev1.ApiKeyPermission_API_KEY_PERMISSION_FUTURES_TRADE)
	if futures {
		// Enabling futures twice is harmless: Binance answers with the same state.
		if _, err := call(ctx, c, s.brokerCall(req.GetAccount(), http.MethodPost, pathBrokerSubAccountFut,
			url.Values{"subAccountId": {id}, "futures": {"true"}}, 1, "enable futures"), func([]byte) (struct{}, error) {
			return struct{}{}, nil
		}); err != nil {
			return nil, err
		}
	}
	q := url.Values{"subAccountId": {id},
		"canTrade":     {strconv.FormatBool(sdk.HasPermission(perms, exchangev1.ApiKeyPermission_API_KEY_PERMISSION_SPOT_TRADE))},
		"futuresTrade": {strconv.FormatBool(futures)}, "marginTrade": {"false"}}
	return writeCall(ctx, c, s.brokerCall(req.GetAccount(), http.MethodPost, pathBrokerSubAccountAPI, q, 8, "sub-account api key"),
		ParseSubAccountAPIKey)
}

// brokerFutures reports whether a wallet goes over the futures broker transfer; FUNDING has no broker transfer.
func brokerFutures(w exchangev1.SubAccountWallet) (bool, error) {
	switch w {
	case exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_UNSPECIFIED, exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_SPOT:
		return false, nil
	case exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_FUTURES:
		return true, nil
	}
	return false, sdk.NotSupported(fmt.Sprintf("a broker transfer in the %v wallet (Binance moves spot or USD-M futures)", w))
}

// findBrokerTransfer looks a transfer up by client id (nil when Binance has none).
func (s *Server) findBrokerTransfer(ctx context.Context, acct *exchangev1.AccountRef, clientID, subID string, futures bool) (*exchangev1.SubAccountTransferRecord, error) {
	c, _ := s.client()
	var (
		recs []*exchangev1.SubAccountTransferRecord
		err  error
	)
	if futures {
		if subID == "" {
			return nil, invalid("sub_account_id", "a futures transfer is found through its sub-account")
		}
		q := url.Values{"subAccountId": {subID}, "futuresType": {"1"}, "clientTranId": {clientID}}
		recs, err = call(ctx, c, s.brokerCall(acct, http.MethodGet, pathBrokerTransferFutures, q, 1, "broker futures transfers"),
			ParseBrokerFuturesTransfers)
	} else {
		q := url.Values{"clientTranId": {clientID}, "showAllStatus": {"true"}}
		recs, err = call(ctx, c, s.brokerCall(acct, http.MethodGet, pathBrokerTransfer, q, 1, "broker transfers"), ParseBrokerTransfers)
	}
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		if r.GetClientTransferId() == clientID {
			return r, nil
		}
	}
	return nil, nil
}

// SubAccountTransfer moves funds between the master and a sub-account (or two sub-accounts). The client id is looked
// up first: a transfer already made with it is returned (same parameters) or refused (different ones).
func (s *Server) SubAccountTransfer(ctx context.Context, req *exchangev1.SubAccountTransferRequest) (*exchangev1.SubAccountTransferResponse, error) {
	cid := req.GetClientTransferId()
	if !transferIDRe.MatchString(cid) {
		return nil, invalid("client_transfer_id", "client_transfer_id %q does not match %s", cid, TransferIDPattern)
	}
	asset, err := assetParam("asset", req.GetAsset())
	if err != nil {
		return nil, err
	}
	amount, err := decParam("amount", req.GetAmount(), true)
	if err != nil {
		return nil, err
	}
	futures, err := brokerFutures(req.GetWallet())
	if err != nil {
		return nil, err
	}
	q := url.Values{"asset": {asset}, "amount": {amount}, "clientTranId": {cid}}
	sub := ""
	for _, side := range []struct{ field, param, id string }{
		{"from_sub_account_id", "fromId", req.GetFromSubAccountId()}, {"to_sub_account_id", "toId", req.GetToSubAccountId()},
	} {
		if side.id == "" {
			continue
		}
		id, err := subAccountIDParam(side.field, side.id)
		if err != nil {
			return nil, err
		}
		q.Set(side.param, id)
		sub = id
	}
	if req.GetFromSubAccountId() == req.GetToSubAccountId() {
		return nil, invalid("to_sub_account_id", "from and to are the same account")
	}
	if prev, err := s.findBrokerTransfer(ctx, req.GetAccount(), cid, sub, futures); err != nil {
		return nil, err
	} else if prev != nil {
		if err := sdk.SameSubAccountTransfer(prev, req, decimal.RequireFromString(amount)); err != nil {
			return nil, err
		}
		return &exchangev1.SubAccountTransferResponse{Transfer: prev}, nil
	}
	path := pathBrokerTransfer
	if futures {
		path = pathBrokerTransferFutures
		q.Set("futuresType", "1")
	}
	c, _ := s.client()
	type ids struct{ txn, client string }
	got, err := writeCall(ctx, c, s.brokerCall(req.GetAccount(), http.MethodPost, path, q, 1, "broker transfer"), func(b []byte) (ids, error) {
		t, cl, err := ParseBrokerTransferID(b)
		return ids{t, cl}, err
	})
	if err != nil {
		return nil, err
	}
	wallet := exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_SPOT
	if futures {
		wallet = exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_FUTURES
	}
	// A txnId means the transfer is booked; Binance settles broker transfers synchronously.
	return &exchangev1.SubAccountTransferResponse{Transfer: &exchangev1.SubAccountTransferRecord{TransferId: got.txn,
		ClientTransferId: cid, FromSubAccountId: req.GetFromSubAccountId(), ToSubAccountId: req.GetToSubAccountId(),
		Asset: asset, Amount: amount, Wallet: wallet, Status: exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS,
		Time: c.serverNow(Spot).UnixMilli()}}, nil
}

// GetSubAccountTransfer finds a broker transfer by client id in the spot (or, for FUTURES, the futures) history.
func (s *Server) GetSubAccountTransfer(ctx context.Context, req *exchangev1.GetSubAccountTransferRequest) (*exchangev1.GetSubAccountTransferResponse, error) {
	cid := req.GetClientTransferId()
	if !transferIDRe.MatchString(cid) {
		return nil, invalid("client_transfer_id", "client_transfer_id %q does not match %s", cid, TransferIDPattern)
	}
	futures, err := brokerFutures(req.GetWallet())
	if err != nil {
		return nil, err
	}
	sub := ""
	if req.GetSubAccountId() != "" {
		if sub, err = subAccountIDParam("sub_account_id", req.GetSubAccountId()); err != nil {
			return nil, err
		}
	}
	rec, err := s.findBrokerTransfer(ctx, req.GetAccount(), cid, sub, futures)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND, "client_transfer_id",
			"binance has no broker transfer with client id %q", cid)
	}
	return &exchangev1.GetSubAccountTransferResponse{Transfer: rec}, nil
}

// GetSubAccountBalances reads a sub-account's spot balances: its e-mail from the broker list, then
// /sapi/v3/sub-account/assets.
func (s *Server) GetSubAccountBalances(ctx context.Context, req *exchangev1.GetSubAccountBalancesRequest) (*exchangev1.GetSubAccountBalancesResponse, error) {
	id, err := subAccountIDParam("sub_account_id", req.GetSubAccountId())
	if err != nil {
		return nil, err
	}
	if req.GetWallet() == exchangev1.WalletType_WALLET_TYPE_FUNDING {
		return nil, sdk.NotSupported("a broker sub-account's funding wallet")
	}
	c, _ := s.client()
	subs, err := call(ctx, c, s.brokerCall(req.GetAccount(), http.MethodGet, pathBrokerSubAccount,
		url.Values{"subAccountId": {id}}, 1, "sub-accounts"), ParseSubAccounts)
	if err != nil {
		return nil, err
	}
	if len(subs) != 1 || subs[0].GetSubAccountId() != id || subs[0].GetEmail() == "" {
		return nil, invalid("sub_account_id", "%s is not a sub-account of this broker", id)
	}
	bs, err := call(ctx, c, s.brokerCall(req.GetAccount(), http.MethodGet, pathSubAccountAssets,
		url.Values{"email": {subs[0].GetEmail()}}, 60, "sub-account assets"), ParseSubAccountAssets)
	if err != nil {
		return nil, err
	}
	return &exchangev1.GetSubAccountBalancesResponse{SubAccountId: id, Balances: bs}, nil
}
