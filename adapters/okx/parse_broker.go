package okx

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// Parsers of the non-disclosed broker endpoints and of asset/transfer-state. Each takes the envelope's data array.

// requireArray refuses a data field that is not a JSON array: an answer to a look-up that says nothing must not
// read as "none found".
func requireArray(data []byte, what string) error {
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '[' {
		return fmt.Errorf("%s: data is not an array", what)
	}
	return nil
}

type rawSubAccount struct {
	SubAcct string `json:"subAcct"`
	Label   string `json:"label"`
	UID     string `json:"uid"`
	Ts      string `json:"ts"`
}

func (r rawSubAccount) proto() (*exchangev1.SubAccount, error) {
	if r.SubAcct == "" {
		return nil, errors.New("sub-account without subAcct")
	}
	ts, err := parseMs("ts", r.Ts)
	if err != nil {
		return nil, err
	}
	// The contract's label is the name the host chose: on OKX that is subAcct; OKX's own label is a note.
	return &exchangev1.SubAccount{SubAccountId: r.SubAcct, Label: r.SubAcct, ExchangeName: r.UID, CreateTime: ts}, nil
}

// ParseNDSubAccountCreated parses POST /api/v5/broker/nd/create-subaccount.
func ParseNDSubAccountCreated(data []byte) (*exchangev1.SubAccount, error) {
	rows, err := decodeList[rawSubAccount](data)
	if err != nil {
		return nil, err
	}
	if len(rows) != 1 {
		return nil, fmt.Errorf("create-subaccount: %d rows, want 1", len(rows))
	}
	return rows[0].proto()
}

// ParseNDSubAccountInfo parses GET /api/v5/broker/nd/subaccount-info: the sub-accounts of one page.
func ParseNDSubAccountInfo(data []byte) ([]*exchangev1.SubAccount, error) {
	type page struct {
		TotalPage string           `json:"totalPage"`
		Details   *[]rawSubAccount `json:"details"`
	}
	if err := requireArray(data, "subaccount-info"); err != nil {
		return nil, err
	}
	rows, err := decodeList[page](data)
	if err != nil {
		return nil, err
	}
	var out []*exchangev1.SubAccount
	for _, p := range rows {
		if p.Details == nil {
			return nil, errors.New("subaccount-info: no details")
		}
		for _, r := range *p.Details {
			sa, err := r.proto()
			if err != nil {
				return nil, fmt.Errorf("subaccount-info: %w", err)
			}
			out = append(out, sa)
		}
	}
	return out, nil
}

// permissionsOf maps OKX's perm list ("read_only,trade"): trade covers spot and swaps alike.
func permissionsOf(perm string) ([]exchangev1.ApiKeyPermission, error) {
	out := []exchangev1.ApiKeyPermission{exchangev1.ApiKeyPermission_API_KEY_PERMISSION_READ}
	for _, p := range strings.Split(perm, ",") {
		switch strings.TrimSpace(p) {
		case "read_only", "":
		case "trade":
			out = append(out, exchangev1.ApiKeyPermission_API_KEY_PERMISSION_SPOT_TRADE,
				exchangev1.ApiKeyPermission_API_KEY_PERMISSION_FUTURES_TRADE)
		case "withdraw":
			out = append(out, exchangev1.ApiKeyPermission_API_KEY_PERMISSION_WITHDRAW)
		default:
			return nil, fmt.Errorf("unknown permission %q", p)
		}
	}
	return out, nil
}

// ParseNDAPIKey parses POST /api/v5/broker/nd/subaccount/apikey.
func ParseNDAPIKey(data []byte) (*exchangev1.CreateSubAccountApiKeyResponse, error) {
	type row struct {
		SubAcct    string `json:"subAcct"`
		APIKey     string `json:"apiKey"`
		SecretKey  string `json:"secretKey"`
		Passphrase string `json:"passphrase"`
		Perm       string `json:"perm"`
	}
	rows, err := decodeList[row](data)
	if err != nil {
		return nil, err
	}
	if len(rows) != 1 {
		return nil, fmt.Errorf("subaccount apikey: %d rows, want 1", len(rows))
	}
	r := rows[0]
	if r.SubAcct == "" || r.APIKey == "" || r.SecretKey == "" || r.Perm == "" {
		return nil, errors.New("subaccount apikey: subAcct, apiKey, secretKey and perm are required")
	}
	perms, err := permissionsOf(r.Perm)
	if err != nil {
		return nil, fmt.Errorf("subaccount apikey: %w", err)
	}
	return &exchangev1.CreateSubAccountApiKeyResponse{SubAccountId: r.SubAcct, ApiKey: r.APIKey, ApiSecret: r.SecretKey,
		Passphrase: r.Passphrase, Permissions: perms}, nil
}

// subWalletOf maps an OKX account id to the wallet of a sub-account transfer.
func subWalletOf(id string) (exchangev1.SubAccountWallet, bool) {
	switch id {
	case accountFunding:
		return exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_FUNDING, true
	case accountTrading:
		return exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_UNSPECIFIED, true
	}
	return 0, false
}

// ParseSubTransferStates parses GET /api/v5/asset/transfer-state for transfers between the master and its
// sub-accounts (type 1: master to sub-account, 2: sub-account to master). Rows of other types are skipped. The
// record's wallet is the receiving side's.
func ParseSubTransferStates(data []byte) ([]*exchangev1.SubAccountTransferRecord, error) {
	type row struct {
		Amt      string `json:"amt"`
		Ccy      string `json:"ccy"`
		ClientID string `json:"clientId"`
		From     string `json:"from"`
		To       string `json:"to"`
		State    string `json:"state"`
		SubAcct  string `json:"subAcct"`
		TransID  string `json:"transId"`
		Type     string `json:"type"`
	}
	if err := requireArray(data, "transfer-state"); err != nil {
		return nil, err
	}
	rows, err := decodeList[row](data)
	if err != nil {
		return nil, err
	}
	var out []*exchangev1.SubAccountTransferRecord
	for _, r := range rows {
		if r.Type != "1" && r.Type != "2" {
			continue
		}
		amt, err := canonStr("amt", r.Amt)
		if err != nil {
			return nil, fmt.Errorf("transfer-state: %w", err)
		}
		w, ok := subWalletOf(r.To)
		if r.TransID == "" || r.Ccy == "" || amt == "" || r.SubAcct == "" || !ok || r.State == "" {
			return nil, errors.New("transfer-state: a transfer without transId, ccy, amt, subAcct, to or state")
		}
		rec := &exchangev1.SubAccountTransferRecord{TransferId: r.TransID, ClientTransferId: r.ClientID,
			ToSubAccountId: r.SubAcct, Asset: strings.ToUpper(r.Ccy), Amount: amt, Wallet: w, Status: transferStatusOf(r.State)}
		if r.Type == "2" {
			rec.FromSubAccountId, rec.ToSubAccountId = r.SubAcct, ""
		}
		out = append(out, rec)
	}
	return out, nil
}
