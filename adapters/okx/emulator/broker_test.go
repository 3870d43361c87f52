package emulator

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/plugin-sdk/faults"
)

func TestBrokerSubAccounts(t *testing.T) {
	h := newHarness(t)
	var created []struct{ SubAcct, Label, UID string }
	h.signed("POST", "/api/v5/broker/nd/create-subaccount", map[string]string{"subAcct": "member7x", "label": "m-7"}).ok(t, &created)
	if len(created) != 1 || created[0].SubAcct != "member7x" || created[0].Label != "m-7" || created[0].UID == "" {
		t.Fatalf("create: %+v", created)
	}
	if r := h.signed("POST", "/api/v5/broker/nd/create-subaccount", map[string]string{"subAcct": "member7x", "label": "m-7"}); r.Code != "59601" {
		t.Fatalf("a repeated name: %s", r.raw)
	}
	if r := h.signed("POST", "/api/v5/broker/nd/create-subaccount", map[string]string{"subAcct": "123456", "label": "x"}); r.Code != "51000" {
		t.Fatalf("an all-digit name: %s", r.raw)
	}
	var info []struct {
		TotalPage string
		Details   []struct{ SubAcct, Label string }
	}
	h.signed("GET", "/api/v5/broker/nd/subaccount-info?subAcct=member7x", nil).ok(t, &info)
	if len(info) != 1 || len(info[0].Details) != 1 || info[0].Details[0].Label != "m-7" {
		t.Fatalf("info: %+v", info)
	}
	if r := h.signed("POST", "/api/v5/broker/nd/subaccount/apikey", map[string]string{"subAcct": "member7x", "label": "k1",
		"passphrase": "weak", "perm": "read_only,trade"}); r.Code != "59505" {
		t.Fatalf("a weak passphrase: %s", r.raw)
	}
	var keys []struct{ APIKey, SecretKey, Passphrase, Perm string }
	h.signed("POST", "/api/v5/broker/nd/subaccount/apikey", map[string]string{"subAcct": "member7x", "label": "k1",
		"passphrase": "Aa1!aaaaaa", "perm": "read_only,trade"}).ok(t, &keys)
	if len(keys) != 1 || keys[0].APIKey == "" || keys[0].SecretKey == "" || keys[0].Perm != "read_only,trade" {
		t.Fatalf("key: %+v", keys)
	}
	sub := Credentials{APIKey: keys[0].APIKey, Secret: keys[0].SecretKey, Passphrase: keys[0].Passphrase}
	// The sub-account's key is not a broker key.
	if r := h.signed("POST", "/api/v5/broker/nd/create-subaccount", map[string]string{"subAcct": "other77", "label": "x"}, sub); r.Code != "59608" {
		t.Fatalf("sub key as broker: %s", r.raw)
	}
	if r := h.signed("GET", "/api/v5/account/subaccount/balances?subAcct=member7x", nil, sub); r.Code != "59604" {
		t.Fatalf("sub key reads sub balances: %s", r.raw)
	}
	// Master trading -> sub trading, exactly.
	tr := map[string]string{"ccy": "USDT", "amt": "2500.00000001", "from": "18", "to": "18", "type": "1", "subAcct": "member7x", "clientId": "grant1"}
	var done []struct{ TransID, ClientID, Amt string }
	h.signed("POST", "/api/v5/asset/transfer", tr).ok(t, &done)
	if len(done) != 1 || done[0].ClientID != "grant1" || done[0].Amt != "2500.00000001" {
		t.Fatalf("transfer: %+v", done)
	}
	var bal []struct {
		Details []struct{ Ccy, CashBal, AvailBal string }
	}
	h.signed("GET", "/api/v5/account/subaccount/balances?subAcct=member7x", nil).ok(t, &bal)
	if len(bal) != 1 || len(bal[0].Details) != 1 || bal[0].Details[0].CashBal != "2500.00000001" {
		t.Fatalf("sub balances: %+v", bal)
	}
	// The sub-account's own key sees the same on the ordinary endpoint.
	var own []struct {
		Details []struct{ Ccy, CashBal string }
	}
	h.signed("GET", "/api/v5/account/balance", nil, sub).ok(t, &own)
	if len(own) != 1 || len(own[0].Details) != 1 || own[0].Details[0].CashBal != "2500.00000001" {
		t.Fatalf("own balances: %+v", own)
	}
	// Into the sub-account's funding account from the master's trading account.
	h.signed("POST", "/api/v5/asset/transfer", map[string]string{"ccy": "USDT", "amt": "10", "from": "18", "to": "6",
		"type": "1", "subAcct": "member7x", "clientId": "grant2"}).ok(t, nil)
	var fund []struct{ Ccy, Bal string }
	h.signed("GET", "/api/v5/asset/subaccount/balances?subAcct=member7x", nil).ok(t, &fund)
	if len(fund) != 1 || fund[0].Bal != "10" {
		t.Fatalf("sub funding: %+v", fund)
	}
	var st []struct{ State, ClientID, SubAcct, Type, Amt string }
	h.signed("GET", "/api/v5/asset/transfer-state?clientId=grant1&type=1", nil).ok(t, &st)
	if len(st) != 1 || st[0].State != "success" || st[0].SubAcct != "member7x" || st[0].Amt != "2500.00000001" {
		t.Fatalf("state: %+v", st)
	}
	// An unknown client id is OKX's parameter error, not an empty list.
	if r := h.signed("GET", "/api/v5/asset/transfer-state?clientId=nosuch1&type=1", nil); r.Code != "51000" || r.Msg != "Parameter clientId error" {
		t.Fatalf("unknown client id: %s", r.raw)
	}
	// Sub-account back to the master, too much.
	if r := h.signed("POST", "/api/v5/asset/transfer", map[string]string{"ccy": "USDT", "amt": "9999", "from": "18", "to": "18",
		"type": "2", "subAcct": "member7x", "clientId": "back1"}); r.Code != "58350" {
		t.Fatalf("overdraw: %s", r.raw)
	}
	// A lost answer executes once.
	if err := h.s.Faults().Arm("grant3", faults.AcceptThenError); err != nil {
		t.Fatal(err)
	}
	if r := h.signed("POST", "/api/v5/asset/transfer", map[string]string{"ccy": "USDT", "amt": "1", "from": "18", "to": "18",
		"type": "1", "subAcct": "member7x", "clientId": "grant3"}); r.Code != "50004" {
		t.Fatalf("lost answer: %s", r.raw)
	}
	h.signed("GET", "/api/v5/asset/transfer-state?clientId=grant3", nil).ok(t, &st)
	if len(st) != 1 {
		t.Fatalf("state after a lost answer: %+v", st)
	}
	h.signed("GET", "/api/v5/account/subaccount/balances?subAcct=member7x", nil).ok(t, &bal)
	if got := decimal.RequireFromString(bal[0].Details[0].CashBal); !got.Equal(decimal.RequireFromString("2501.00000001")) {
		t.Fatalf("sub balance after the lost answer %s", got)
	}
}

func TestDemoReserve(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.DemoReserve = DefaultDemoReserve() })
	var bal []struct {
		Details []struct{ Ccy, CashBal string }
	}
	h.signed("GET", "/api/v5/account/balance?ccy=USDT", nil).ok(t, &bal)
	if got := decimal.RequireFromString(bal[0].Details[0].CashBal); got.LessThan(decimal.NewFromInt(20_000_000)) {
		t.Fatalf("demo USDT with the reserve %s", got)
	}
}
