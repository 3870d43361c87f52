package okx

import (
	"encoding/json"
	"os"
	"testing"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func TestParseBrokerSubAccounts(t *testing.T) {
	sa, err := ParseNDSubAccountCreated(fixture(t, "broker_create_subaccount.json"))
	if err != nil || sa.SubAccountId != "m7c21d0a" || sa.Label != "m7c21d0a" || sa.ExchangeName != "502211473380128" || sa.CreateTime != 1761000000123 {
		t.Fatalf("created: %v %v", sa, err)
	}
	subs, err := ParseNDSubAccountInfo(fixture(t, "broker_subaccount_info.json"))
	if err != nil || len(subs) != 2 || subs[1].SubAccountId != "m90be44f" {
		t.Fatalf("info: %v %v", subs, err)
	}
	if subs, err := ParseNDSubAccountInfo(json.RawMessage(`[{"page":"1","totalPage":"0","details":[]}]`)); err != nil || len(subs) != 0 {
		t.Fatalf("empty info: %v %v", subs, err)
	}
	k, err := ParseNDAPIKey(fixture(t, "broker_apikey.json"))
	if err != nil || k.ApiKey == "" || k.ApiSecret == "" || k.Passphrase == "" || k.SubAccountId != "m7c21d0a" || len(k.Permissions) != 3 {
		t.Fatalf("key: %v %v", k, err)
	}
}

func TestParseSubTransferStates(t *testing.T) {
	rs, err := ParseSubTransferStates(fixture(t, "transfer_state_sub.json"))
	if err != nil || len(rs) != 2 {
		t.Fatalf("states: %v %v", rs, err)
	}
	if r := rs[0]; r.TransferId != "754147" || r.ClientTransferId != "g7c21d0a1" || r.ToSubAccountId != "m7c21d0a" || r.FromSubAccountId != "" ||
		r.Amount != "10000.5" || r.Status != exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS {
		t.Fatalf("to the sub-account: %v", r)
	}
	if r := rs[1]; r.FromSubAccountId != "m7c21d0a" || r.ToSubAccountId != "" || r.Asset != "USDT" || r.Amount != "0.25" ||
		r.Wallet != exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_FUNDING || r.Status != exchangev1.TransferStatus_TRANSFER_STATUS_PENDING {
		t.Fatalf("to the master: %v", r)
	}
}

func TestParseBrokerBadBodies(t *testing.T) {
	common := []string{``, `null`, `{}`, `[`, `"x"`}
	bad := map[string][]string{
		"create": append([]string{`[]`, `[{}]`, `[{"subAcct":"a","ts":"x"}]`, `[{"subAcct":"a"},{"subAcct":"b"}]`}, common...),
		"info":   append([]string{`[{"page":"1"}]`, `[{"details":[{"subAcct":""}]}]`, `[{"details":[{"subAcct":"a","ts":"x"}]}]`}, common...),
		"key": append([]string{`[]`, `[{}]`, `[{"subAcct":"a","apiKey":"k","secretKey":"s","perm":"read_only,fly"}]`,
			`[{"subAcct":"a","apiKey":"k","perm":"trade"}]`}, common...),
		"state": append([]string{
			`[{"amt":"x","ccy":"USDT","subAcct":"a","to":"18","state":"success","transId":"1","type":"1"}]`,
			`[{"amt":"1","ccy":"USDT","subAcct":"a","to":"99","state":"success","transId":"1","type":"1"}]`,
			`[{"amt":"1","ccy":"USDT","subAcct":"","to":"18","state":"success","transId":"1","type":"2"}]`}, common...),
	}
	parse := map[string]func(json.RawMessage) error{
		"create": func(b json.RawMessage) error { _, err := ParseNDSubAccountCreated(b); return err },
		"info":   func(b json.RawMessage) error { _, err := ParseNDSubAccountInfo(b); return err },
		"key":    func(b json.RawMessage) error { _, err := ParseNDAPIKey(b); return err },
		"state":  func(b json.RawMessage) error { _, err := ParseSubTransferStates(b); return err },
	}
	for name, bodies := range bad {
		for _, b := range bodies {
			if err := parse[name](json.RawMessage(b)); err == nil {
				t.Errorf("%s parser accepted %s", name, b)
			}
		}
	}
	// An error envelope never reaches a parser: ParseEnvelope keeps the code.
	raw, err := os.ReadFile("testdata/error_broker.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseEnvelope(raw); err == nil {
		t.Fatal("an error envelope parsed")
	}
}

func FuzzParseBroker(f *testing.F) {
	for _, name := range []string{"broker_create_subaccount.json", "broker_subaccount_info.json", "broker_apikey.json", "transfer_state_sub.json"} {
		raw, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		data, err := ParseEnvelope(raw)
		if err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(data))
	}
	f.Add([]byte(`[{}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseNDSubAccountCreated(b)
		_, _ = ParseNDSubAccountInfo(b)
		_, _ = ParseNDAPIKey(b)
		_, _ = ParseSubTransferStates(b)
	})
}
