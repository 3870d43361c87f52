package binance

import (
	"encoding/json"
	"testing"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func brokerFixture(t testing.TB, key string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(fixture(t, "sapi_broker.json"), &m); err != nil {
		t.Fatal(err)
	}
	b, ok := m[key]
	if !ok {
		t.Fatalf("sapi_broker.json has no %q", key)
	}
	return b
}

func TestParseBrokerSubAccounts(t *testing.T) {
	sa, err := ParseSubAccountCreated(brokerFixture(t, "subAccountCreated"))
	if err != nil || sa.SubAccountId != "40000012" || sa.Label != "m-1f3a9c" || sa.Email != "sub40000012_virtual@broker.example" {
		t.Fatalf("created: %v %v", sa, err)
	}
	subs, err := ParseSubAccounts(brokerFixture(t, "subAccounts"))
	if err != nil || len(subs) != 2 || subs[1].SubAccountId != "40000012" || subs[1].CreateTime != 1761000060000 || subs[0].Label != "m-0b11" {
		t.Fatalf("list: %v %v", subs, err)
	}
	if subs, err := ParseSubAccounts([]byte(`[]`)); err != nil || len(subs) != 0 {
		t.Fatalf("empty list: %v %v", subs, err)
	}
	k, err := ParseSubAccountAPIKey(brokerFixture(t, "apiKey"))
	if err != nil || k.ApiKey == "" || k.ApiSecret == "" || k.SubAccountId != "40000012" || len(k.Permissions) != 3 ||
		k.Permissions[2] != exchangev1.ApiKeyPermission_API_KEY_PERMISSION_FUTURES_TRADE {
		t.Fatalf("key: %v %v", k, err)
	}
	if k, err := ParseSubAccountAPIKey([]byte(`{"subaccountId":"1","apiKey":"a","secretKey":"b","canTrade":false}`)); err != nil ||
		len(k.Permissions) != 1 || k.Permissions[0] != exchangev1.ApiKeyPermission_API_KEY_PERMISSION_READ {
		t.Fatalf("read-only key: %v %v", k, err)
	}
}

func TestParseBrokerTransfers(t *testing.T) {
	id, cid, err := ParseBrokerTransferID(brokerFixture(t, "transfer"))
	if err != nil || id != "310558201" || cid != "g-2c7e" {
		t.Fatalf("transfer: %s %s %v", id, cid, err)
	}
	id, cid, err = ParseBrokerTransferID(brokerFixture(t, "futuresTransfer"))
	if err != nil || id != "410777342" || cid != "g-2c7f" {
		t.Fatalf("futures transfer: %s %s %v", id, cid, err)
	}
	rs, err := ParseBrokerTransfers(brokerFixture(t, "transfers"))
	if err != nil || len(rs) != 2 {
		t.Fatalf("history: %v %v", rs, err)
	}
	if r := rs[0]; r.TransferId != "310558201" || r.FromSubAccountId != "" || r.ToSubAccountId != "40000012" || r.Amount != "10000" ||
		r.Status != exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS || r.Wallet != exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_SPOT {
		t.Fatalf("row 0: %v", r)
	}
	if r := rs[1]; r.Amount != "0.001" || r.FromSubAccountId != "40000011" || r.Status != exchangev1.TransferStatus_TRANSFER_STATUS_PENDING {
		t.Fatalf("row 1: %v", r)
	}
	fs, err := ParseBrokerFuturesTransfers(brokerFixture(t, "futuresTransfers"))
	if err != nil || len(fs) != 1 || fs[0].TransferId != "410777342" || fs[0].Amount != "250.5" ||
		fs[0].Wallet != exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_FUTURES {
		t.Fatalf("futures history: %v %v", fs, err)
	}
}

func TestParseSubAccountAssets(t *testing.T) {
	bs, err := ParseSubAccountAssets(brokerFixture(t, "assets"))
	if err != nil || len(bs) != 2 {
		t.Fatalf("assets: %v %v", bs, err)
	}
	// JSON numbers are read as exact decimals: 9999.87654321 + 0.12345679 is exactly 10000.
	if b := bs[0]; b.Asset != "USDT" || b.Total != "10000" || b.Available != "9999.87654321" || b.Locked != "0.12345679" ||
		b.Wallet != exchangev1.WalletType_WALLET_TYPE_TRADING {
		t.Fatalf("USDT: %v", b)
	}
}

func TestParseBrokerBadBodies(t *testing.T) {
	bad := append([]string{`{"subaccountId":"0"}`, `[{"subaccountId":"x"}]`, `{"txnId":0}`, `{"success":false,"txnId":5}`,
		`[{"txnId":1,"asset":"USDT","qty":"abc"}]`, `[{"txnId":1,"asset":"","qty":"1"}]`, `{"success":false,"transfers":[]}`,
		`{"balances":[{"asset":"USDT","free":"x","locked":0}]}`, `{"balances":[{"asset":"USDT","free":1}]}`, `{}`,
		`{"subaccountId":"1","apiKey":"a","secretKey":"b"}`}, badBodies...)
	for _, b := range bad {
		if _, err := ParseSubAccountCreated([]byte(b)); err == nil && b != `{"subaccountId":"1","apiKey":"a","secretKey":"b"}` {
			t.Errorf("ParseSubAccountCreated(%s) accepted", b)
		}
		if _, _, err := ParseBrokerTransferID([]byte(b)); err == nil {
			t.Errorf("ParseBrokerTransferID(%s) accepted", b)
		}
		if _, err := ParseSubAccountAssets([]byte(b)); err == nil {
			t.Errorf("ParseSubAccountAssets(%s) accepted", b)
		}
		if _, err := ParseBrokerFuturesTransfers([]byte(b)); err == nil {
			t.Errorf("ParseBrokerFuturesTransfers(%s) accepted", b)
		}
		if _, err := ParseSubAccountAPIKey([]byte(b)); err == nil {
			t.Errorf("ParseSubAccountAPIKey(%s) accepted", b)
		}
	}
	for _, b := range []string{`[{"txnId":1,"asset":"USDT","qty":"abc"}]`, `[{"txnId":1,"asset":"","qty":"1"}]`, `{}`, "", "null", `[{"subaccountId":"x"}]`} {
		if _, err := ParseBrokerTransfers([]byte(b)); err == nil {
			t.Errorf("ParseBrokerTransfers(%s) accepted", b)
		}
		if _, err := ParseSubAccounts([]byte(b)); err == nil {
			t.Errorf("ParseSubAccounts(%s) accepted", b)
		}
	}
}
