package emulator

import (
	"testing"

	"github.com/shopspring/decimal"
)

// GET /api/v5/asset/currencies lists the venue's assets on its simulated chain with the venue's withdrawal fee and
// minimum, in OKX's shape, filtered by ccy.
func TestCurrencies(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	all := h.signed("GET", "/api/v5/asset/currencies", nil)
	checkShape(t, "currencies", all.raw)
	rows := all.objects(t)
	assets := h.v.Assets()
	if len(rows) != len(assets) {
		t.Fatalf("%d currencies, the venue has %d assets", len(rows), len(assets))
	}
	for _, r := range rows {
		ccy := r["ccy"].(string)
		c, ok := assets[ccy]
		if !ok {
			t.Fatalf("currency %s is not a venue asset", ccy)
		}
		if r["chain"] != ccy+"-SIM" || r["canWd"] != true || r["canDep"] != true || r["needTag"] != false {
			t.Errorf("%s: %v", ccy, r)
		}
		if fee := decimal.RequireFromString(r["fee"].(string)); !fee.Equal(c.WithdrawFee) {
			t.Errorf("%s fee %s, venue %s", ccy, fee, c.WithdrawFee)
		}
		if lo := decimal.RequireFromString(r["minWd"].(string)); !lo.Equal(c.WithdrawMin) {
			t.Errorf("%s minWd %s, venue %s", ccy, lo, c.WithdrawMin)
		}
	}
	one := h.signed("GET", "/api/v5/asset/currencies?ccy=usdt,BTC", nil).objects(t)
	if len(one) != 2 || one[0]["ccy"] != "BTC" || one[1]["ccy"] != "USDT" {
		t.Fatalf("ccy=usdt,BTC: %v", one)
	}
	if none := h.signed("GET", "/api/v5/asset/currencies?ccy=NOPE", nil).objects(t); len(none) != 0 {
		t.Fatalf("an unknown ccy: %v", none)
	}
	// The deposit address is on the chain the list names.
	addr := h.signed("GET", "/api/v5/asset/deposit-address?ccy=USDT", nil).objects(t)
	if len(addr) != 1 || addr[0]["chain"] != "USDT-SIM" {
		t.Fatalf("deposit address: %v", addr)
	}
}

// A broker sub-account's API key has no withdraw permission (OKX creates them read_only,trade at most): its
// withdrawal is refused with 50120 and nothing moves; the master's key withdraws.
func TestSubAccountKeyCannotWithdraw(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.signed("POST", "/api/v5/broker/nd/create-subaccount", map[string]string{"subAcct": "member8w", "label": "m-8"}).ok(t, nil)
	if r := h.signed("POST", "/api/v5/broker/nd/subaccount/apikey", map[string]string{"subAcct": "member8w", "label": "k1",
		"passphrase": "Aa1!aaaaaa", "perm": "read_only,trade,withdraw"}); r.Code != "51000" {
		t.Fatalf("a sub-account key with withdraw: %s", r.raw)
	}
	var keys []struct{ APIKey, SecretKey, Passphrase string }
	h.signed("POST", "/api/v5/broker/nd/subaccount/apikey", map[string]string{"subAcct": "member8w", "label": "k1",
		"passphrase": "Aa1!aaaaaa", "perm": "read_only,trade"}).ok(t, &keys)
	sub := Credentials{APIKey: keys[0].APIKey, Secret: keys[0].SecretKey, Passphrase: keys[0].Passphrase}
	h.signed("POST", "/api/v5/asset/transfer", map[string]string{"ccy": "USDT", "amt": "100", "from": "18", "to": "6",
		"type": "1", "subAcct": "member8w", "clientId": "grant8"}).ok(t, nil)
	wd := map[string]any{"ccy": "USDT", "amt": "20", "dest": "4", "toAddr": "sim1elsewhere", "chain": "USDT-SIM", "clientId": "wd8"}
	r := h.signed("POST", "/api/v5/asset/withdrawal", wd, sub)
	if r.Code != "50120" {
		t.Fatalf("sub-account key's withdrawal: HTTP %d %s", r.Status, r.raw)
	}
	var fund []struct{ Ccy, Bal string }
	h.signed("GET", "/api/v5/asset/balances?ccy=USDT", nil, sub).ok(t, &fund)
	if len(fund) != 1 || fund[0].Bal != "100" {
		t.Fatalf("sub funding after the refusal: %+v", fund)
	}
	if hist := h.signed("GET", "/api/v5/asset/withdrawal-history", nil, sub).objects(t); len(hist) != 0 {
		t.Fatalf("withdrawal history after the refusal: %v", hist)
	}
	// The master's own key may withdraw.
	h.signed("POST", "/api/v5/asset/withdrawal", wd).ok(t, nil)
}
