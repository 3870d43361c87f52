package okx

import (
	"encoding/json"
	"testing"
)

// /asset/currencies: rows grouped by currency in OKX's order, the chain's prefix cut from the network, and wdTickSz
// (decimal places) turned into the withdrawal increment.
func TestParseCurrencies(t *testing.T) {
	as, err := ParseCurrencies(fixture(t, "asset_currencies.json"))
	if err != nil || len(as) != 3 {
		t.Fatalf("currencies: %v %v", as, err)
	}
	usdt, xrp, btc := as[0], as[1], as[2]
	if usdt.Asset != "USDT" || len(usdt.Networks) != 2 || xrp.Asset != "XRP" || btc.Asset != "BTC" {
		t.Fatalf("assets: %v", as)
	}
	trc, erc := usdt.Networks[0], usdt.Networks[1]
	if trc.Network != "TRC20" || trc.Name != "USDT-TRC20" || !trc.WithdrawEnabled || trc.WithdrawFee != "1.5" || trc.WithdrawMin != "2" ||
		trc.WithdrawMax != "10000000" || trc.Confirmations != 20 || trc.WithdrawStep != "0.000001" {
		t.Fatalf("TRC20: %v", trc)
	}
	// An empty fee falls back to minFee; an empty wdTickSz says nothing.
	if erc.WithdrawEnabled || erc.WithdrawFee != "3.2" || erc.WithdrawMin != "10" || erc.WithdrawMax != "" || erc.WithdrawStep != "" {
		t.Fatalf("ERC20: %v", erc)
	}
	if n := xrp.Networks[0]; n.Network != "Ripple" || !n.MemoRequired || n.WithdrawStep != "1" {
		t.Fatalf("XRP: %v", n)
	}
	if n := btc.Networks[0]; n.WithdrawStep != "0.00000001" || n.WithdrawFee != "0.0002" {
		t.Fatalf("BTC: %v", n)
	}
	if _, err := ParseCurrencies(json.RawMessage(`{"ccy":"BTC"}`)); err == nil {
		t.Fatal("an object for data accepted")
	}
}

func TestWithdrawStep(t *testing.T) {
	for in, want := range map[string]string{"8": "0.00000001", "2": "0.01", "0": "1", "": "", "-1": "", "1.5": "", "x": "", "31": ""} {
		if got := withdrawStep(in); got != want {
			t.Errorf("wdTickSz %q: %q, want %q", in, got, want)
		}
	}
}
