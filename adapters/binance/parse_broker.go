package binance

import (
	"errors"
	"fmt"
	"strings"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// Parsers of the Binance Link (broker) sub-account endpoints. A field that does not parse is an error, never a zero.

type subAccountRow struct {
	SubaccountID flexInt `json:"subaccountId"`
	Email        string  `json:"email"`
	Tag          string  `json:"tag"`
	CreateTime   flexInt `json:"createTime"`
}

func (r subAccountRow) proto(what string) (*exchangev1.SubAccount, error) {
	if r.SubaccountID <= 0 {
		return nil, fmt.Errorf("%s: no subaccountId", what)
	}
	return &exchangev1.SubAccount{SubAccountId: itoa64(int64(r.SubaccountID)), Label: r.Tag, ExchangeName: r.Email,
		Email: r.Email, CreateTime: int64(r.CreateTime)}, nil
}

// ParseSubAccountCreated parses POST /sapi/v1/broker/subAccount.
func ParseSubAccountCreated(body []byte) (*exchangev1.SubAccount, error) {
	var r subAccountRow
	if err := decodeJSON(body, &r, "sub-account"); err != nil {
		return nil, err
	}
	return r.proto("sub-account")
}

// ParseSubAccounts parses GET /sapi/v1/broker/subAccount (an array, empty when there are none).
func ParseSubAccounts(body []byte) ([]*exchangev1.SubAccount, error) {
	var rows []subAccountRow
	if err := decodeJSON(body, &rows, "sub-accounts"); err != nil {
		return nil, err
	}
	out := make([]*exchangev1.SubAccount, 0, len(rows))
	for _, r := range rows {
		sa, err := r.proto("sub-accounts")
		if err != nil {
			return nil, err
		}
		out = append(out, sa)
	}
	return out, nil
}

// ParseSubAccountAPIKey parses POST /sapi/v1/broker/subAccountApi. The permissions are those Binance reports:
// read always, spot trade for canTrade, futures trade for futuresTrade.
func ParseSubAccountAPIKey(body []byte) (*exchangev1.CreateSubAccountApiKeyResponse, error) {
	var w struct {
		SubaccountID flexInt `json:"subaccountId"`
		APIKey       string  `json:"apiKey"`
		SecretKey    string  `json:"secretKey"`
		CanTrade     *bool   `json:"canTrade"`
		FuturesTrade bool    `json:"futuresTrade"`
	}
	if err := decodeJSON(body, &w, "sub-account api key"); err != nil {
		return nil, err
	}
	if w.APIKey == "" || w.SecretKey == "" || w.SubaccountID <= 0 || w.CanTrade == nil {
		return nil, errors.New("sub-account api key: subaccountId, apiKey, secretKey and canTrade are required")
	}
	perms := []exchangev1.ApiKeyPermission{exchangev1.ApiKeyPermission_API_KEY_PERMISSION_READ}
	if *w.CanTrade {
		perms = append(perms, exchangev1.ApiKeyPermission_API_KEY_PERMISSION_SPOT_TRADE)
	}
	if w.FuturesTrade {
		perms = append(perms, exchangev1.ApiKeyPermission_API_KEY_PERMISSION_FUTURES_TRADE)
	}
	return &exchangev1.CreateSubAccountApiKeyResponse{SubAccountId: itoa64(int64(w.SubaccountID)), ApiKey: w.APIKey,
		ApiSecret: w.SecretKey, Permissions: perms}, nil
}

// ParseBrokerTransferID parses POST /sapi/v1/broker/transfer and /sapi/v1/broker/transfer/futures: the transfer id
// and the client id Binance echoes.
func ParseBrokerTransferID(body []byte) (txnID, clientTranID string, err error) {
	var w struct {
		TxnID        flexInt `json:"txnId"`
		ClientTranID string  `json:"clientTranId"`
		Success      *bool   `json:"success"`
	}
	if err := decodeJSON(body, &w, "broker transfer"); err != nil {
		return "", "", err
	}
	if w.Success != nil && !*w.Success {
		return "", "", errors.New("broker transfer: success false")
	}
	if w.TxnID <= 0 {
		return "", "", errors.New("broker transfer: no txnId")
	}
	return itoa64(int64(w.TxnID)), w.ClientTranID, nil
}

type brokerTransferRow struct {
	FromID       flexID  `json:"fromId"`
	ToID         flexID  `json:"toId"`
	Asset        string  `json:"asset"`
	Qty          flexStr `json:"qty"`
	Time         flexInt `json:"time"`
	TxnID        flexInt `json:"txnId"`
	TranID       flexInt `json:"tranId"`
	ClientTranID string  `json:"clientTranId"`
	Status       string  `json:"status"`
}

func (r brokerTransferRow) proto(d *decs, wallet exchangev1.SubAccountWallet) *exchangev1.SubAccountTransferRecord {
	id := r.TxnID
	if id == 0 {
		id = r.TranID
	}
	st := exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS // the futures history lists booked transfers only
	if r.Status != "" {
		st = transferStatus(r.Status)
	}
	return &exchangev1.SubAccountTransferRecord{TransferId: itoa64(int64(id)), ClientTransferId: r.ClientTranID,
		FromSubAccountId: string(r.FromID), ToSubAccountId: string(r.ToID), Asset: strings.ToUpper(r.Asset), Amount: d.c("qty", r.Qty),
		Wallet: wallet, Status: st, Time: int64(r.Time)}
}

func brokerTransfers(rows []brokerTransferRow, wallet exchangev1.SubAccountWallet, what string) ([]*exchangev1.SubAccountTransferRecord, error) {
	out := make([]*exchangev1.SubAccountTransferRecord, 0, len(rows))
	var d decs
	for _, r := range rows {
		rec := r.proto(&d, wallet)
		if d.err == nil && (rec.TransferId == "0" || rec.Asset == "" || rec.Amount == "") {
			return nil, fmt.Errorf("%s: a row without id, asset or qty", what)
		}
		out = append(out, rec)
	}
	if d.err != nil {
		return nil, fmt.Errorf("%s: %w", what, d.err)
	}
	return out, nil
}

// ParseBrokerTransfers parses GET /sapi/v1/broker/transfer (an array, newest first).
func ParseBrokerTransfers(body []byte) ([]*exchangev1.SubAccountTransferRecord, error) {
	var rows []brokerTransferRow
	if err := decodeJSON(body, &rows, "broker transfers"); err != nil {
		return nil, err
	}
	return brokerTransfers(rows, exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_SPOT, "broker transfers")
}

// ParseBrokerFuturesTransfers parses GET /sapi/v1/broker/transfer/futures ({"success":true,"futuresType":1,
// "transfers":[...]}).
func ParseBrokerFuturesTransfers(body []byte) ([]*exchangev1.SubAccountTransferRecord, error) {
	var w struct {
		Success   *bool               `json:"success"`
		Transfers []brokerTransferRow `json:"transfers"`
	}
	if err := decodeJSON(body, &w, "broker futures transfers"); err != nil {
		return nil, err
	}
	if w.Success == nil || !*w.Success {
		return nil, errors.New("broker futures transfers: success is not true")
	}
	return brokerTransfers(w.Transfers, exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_FUTURES, "broker futures transfers")
}

// ParseSubAccountAssets parses GET /sapi/v3/sub-account/assets: the sub-account's spot balances. Binance sends free
// and locked as JSON numbers; they are read as decimal text, never through a float.
func ParseSubAccountAssets(body []byte) ([]*exchangev1.Balance, error) {
	var w struct {
		Balances *[]struct {
			Asset  string  `json:"asset"`
			Free   flexStr `json:"free"`
			Locked flexStr `json:"locked"`
		} `json:"balances"`
	}
	if err := decodeJSON(body, &w, "sub-account assets"); err != nil {
		return nil, err
	}
	if w.Balances == nil {
		return nil, errors.New("sub-account assets: no balances field")
	}
	out := make([]*exchangev1.Balance, 0, len(*w.Balances))
	for _, b := range *w.Balances {
		if b.Asset == "" || b.Free == "" || b.Locked == "" {
			return nil, errors.New("sub-account assets: a balance without asset, free or locked")
		}
		free, locked, err := decPair(string(b.Free), string(b.Locked))
		if err != nil {
			return nil, fmt.Errorf("sub-account assets: %s: %w", b.Asset, err)
		}
		out = append(out, &exchangev1.Balance{Asset: strings.ToUpper(b.Asset), Wallet: exchangev1.WalletType_WALLET_TYPE_TRADING,
			Total: free.Add(locked).String(), Available: free.String(), Locked: locked.String()})
	}
	return out, nil
}
