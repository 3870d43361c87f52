package emulator

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/exhub/exhub/adapters/venue"
	"github.com/exhub/exhub/plugin-sdk/faults"
)

func TestBrokerSubAccounts(t *testing.T) {
	e := newEnv(t)
	var sub struct{ SubaccountID, Email, Tag string }
	e.signed(http.MethodPost, "/sapi/v1/broker/subAccount", url.Values{"tag": {"member-7"}}).expectOK(t).decode(t, &sub)
	if sub.SubaccountID == "" || sub.Email == "" || sub.Tag != "member-7" {
		t.Fatalf("create: %+v", sub)
	}
	var list []struct{ SubaccountID, Email, Tag string }
	e.signed(http.MethodGet, "/sapi/v1/broker/subAccount", url.Values{"subAccountId": {sub.SubaccountID}}).expectOK(t).decode(t, &list)
	if len(list) != 1 || list[0].Tag != "member-7" || list[0].Email != sub.Email {
		t.Fatalf("list: %+v", list)
	}
	var key struct {
		SubaccountID, APIKey, SecretKey string
		CanTrade, FuturesTrade          bool
	}
	e.signed(http.MethodPost, "/sapi/v1/broker/subAccountApi", url.Values{"subAccountId": {sub.SubaccountID},
		"canTrade": {"true"}, "futuresTrade": {"true"}}).expectOK(t).decode(t, &key)
	if key.APIKey == "" || key.SecretKey == "" || !key.CanTrade || !key.FuturesTrade {
		t.Fatalf("key: %+v", key)
	}
	// Only the broker key may call the broker endpoints.
	e.signedWith(key.APIKey, key.SecretKey, http.MethodPost, "/sapi/v1/broker/subAccount", nil).expectErr(t, http.StatusUnauthorized, codeRejectedMBXKey)
	e.signed(http.MethodPost, "/sapi/v1/broker/subAccountApi", url.Values{"subAccountId": {"1"}, "canTrade": {"true"}}).
		expectErr(t, http.StatusBadRequest, codeBadParam)

	tr := url.Values{"toId": {sub.SubaccountID}, "asset": {"USDT"}, "amount": {"1500.12345678"}, "clientTranId": {"grant1"}}
	var done struct{ TxnID, ClientTranID string }
	e.signed(http.MethodPost, "/sapi/v1/broker/transfer", tr).expectOK(t).decode(t, &done)
	if done.TxnID == "" || done.ClientTranID != "grant1" {
		t.Fatalf("transfer: %+v", done)
	}
	e.signed(http.MethodPost, "/sapi/v1/broker/transfer", tr).expectErr(t, http.StatusBadRequest, codeBadParam)
	var hist []struct{ FromID, ToID, Asset, Qty, TxnID, ClientTranID, Status string }
	e.signed(http.MethodGet, "/sapi/v1/broker/transfer", url.Values{"clientTranId": {"grant1"}}).expectOK(t).decode(t, &hist)
	if len(hist) != 1 || hist[0].FromID != "" || hist[0].ToID != sub.SubaccountID || hist[0].Qty != "1500.12345678" || hist[0].Status != "SUCCESS" {
		t.Fatalf("history: %+v", hist)
	}
	// The balance arrives exactly, as JSON numbers, and the sub-account's own key reads the same.
	r := e.signed(http.MethodGet, "/sapi/v3/sub-account/assets", url.Values{"email": {sub.Email}}).expectOK(t)
	if want := `{"balances":[{"asset":"USDT","free":1500.12345678,"freeze":0,"locked":0,"withdrawing":0}]}`; string(r.body) != want {
		t.Fatalf("assets %s, want %s", r.body, want)
	}
	var acct struct {
		Balances []struct{ Asset, Free string }
	}
	e.signedWith(key.APIKey, key.SecretKey, http.MethodGet, "/api/v3/account", nil).expectOK(t).decode(t, &acct)
	if len(acct.Balances) == 0 || acct.Balances[0].Asset != "USDT" || acct.Balances[0].Free != "1500.12345678" {
		t.Fatalf("sub account: %+v", acct)
	}
	// A futures transfer back to the master, found in the futures history only.
	e.signed(http.MethodPost, "/sapi/v1/broker/transfer/futures", url.Values{"fromId": {sub.SubaccountID}, "futuresType": {"1"},
		"asset": {"USDT"}, "amount": {"0.12345678"}, "clientTranId": {"back1"}}).expectOK(t)
	var fh struct {
		Success   bool
		Transfers []struct{ FromID, ToID, Qty, ClientTranID string }
	}
	e.signed(http.MethodGet, "/sapi/v1/broker/transfer/futures", url.Values{"subAccountId": {sub.SubaccountID}, "futuresType": {"1"}}).
		expectOK(t).decode(t, &fh)
	if !fh.Success || len(fh.Transfers) != 1 || fh.Transfers[0].ClientTranID != "back1" || fh.Transfers[0].ToID != "" {
		t.Fatalf("futures history: %+v", fh)
	}
	e.signed(http.MethodGet, "/sapi/v1/broker/transfer", url.Values{"clientTranId": {"back1"}}).expectOK(t).decode(t, &hist)
	if len(hist) != 0 {
		t.Fatalf("a futures transfer in the spot history: %+v", hist)
	}
	// Insufficient funds on the sub-account.
	e.signed(http.MethodPost, "/sapi/v1/broker/transfer", url.Values{"fromId": {sub.SubaccountID}, "asset": {"USDT"},
		"amount": {"5000"}, "clientTranId": {"back2"}}).expectErr(t, http.StatusBadRequest, -5002)
	// A lost answer: the transfer executed once.
	if err := e.s.Faults().Arm("grant2", faults.AcceptThenError); err != nil {
		t.Fatal(err)
	}
	e.signed(http.MethodPost, "/sapi/v1/broker/transfer", url.Values{"toId": {sub.SubaccountID}, "asset": {"USDT"},
		"amount": {"1"}, "clientTranId": {"grant2"}}).expectErr(t, http.StatusRequestTimeout, codeExecUnknown)
	e.signed(http.MethodGet, "/sapi/v1/broker/transfer", url.Values{"clientTranId": {"grant2"}}).expectOK(t).decode(t, &hist)
	if len(hist) != 1 {
		t.Fatalf("lost answer: %+v", hist)
	}
}

func TestDemoReserve(t *testing.T) {
	plain := newEnv(t)
	rich := newEnv(t, func(c *Config) { c.DemoReserve = DefaultDemoReserve() })
	usdt := func(e *env) string {
		bs, err := e.v.Balances(DemoAccount, venue.TradingWallet)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			if b.Asset == "USDT" {
				return b.Total.String()
			}
		}
		return ""
	}
	if got := usdt(plain); got != "80000" {
		t.Fatalf("demo USDT without a reserve %s", got)
	}
	if got := usdt(rich); got != "20080000" {
		t.Fatalf("demo USDT with the default reserve %s", got)
	}
}
