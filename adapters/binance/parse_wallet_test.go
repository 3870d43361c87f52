package binance

import (
	"encoding/json"
	"testing"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func walletFixture(t testing.TB) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(fixture(t, "sapi_wallet.json"), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestParseWalletBodies(t *testing.T) {
	w := walletFixture(t)
	as, err := ParseCoinConfig(w["coins"])
	if err != nil || len(as) != 2 {
		t.Fatalf("coins: %v", err)
	}
	trx := as[0].Networks[1]
	if as[0].Asset != "USDT" || trx.Network != "TRX" || trx.WithdrawEnabled || trx.WithdrawFee != "1.2" || trx.WithdrawMin != "10" ||
		trx.Confirmations != 1 || !as[1].Networks[0].MemoRequired || as[1].Networks[0].WithdrawFee != "0.2" {
		t.Fatalf("coins: %+v", as)
	}
	// withdrawIntegerMultiple is the step; absent (TRX) or zero (XRP) means the exchange does not say.
	if eth := as[0].Networks[0]; eth.WithdrawStep != "0.000001" || trx.WithdrawStep != "" || as[1].Networks[0].WithdrawStep != "" {
		t.Fatalf("withdraw steps: %q %q %q", eth.WithdrawStep, trx.WithdrawStep, as[1].Networks[0].WithdrawStep)
	}
	if n, err := defaultNetwork(w["coins"], "USDT"); err != nil || n != "TRX" {
		t.Fatalf("default network %q %v", n, err)
	}
	if n, _ := defaultNetwork(w["coins"], "NOPE"); n != "" {
		t.Fatalf("unknown coin network %q", n)
	}

	ts, err := ParseTransfers(w["transfers"])
	if err != nil || len(ts) != 2 {
		t.Fatalf("transfers (MAIN_MARGIN skipped): %v %+v", err, ts)
	}
	if ts[0].Id != "71000000001" || ts[0].Amount != "40" || ts[0].From != exchangev1.WalletType_WALLET_TYPE_TRADING ||
		ts[0].To != exchangev1.WalletType_WALLET_TYPE_FUNDING || ts[0].Status != exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS ||
		ts[1].Status != exchangev1.TransferStatus_TRANSFER_STATUS_PENDING || ts[1].Time != 1761000002000 {
		t.Fatalf("transfers: %+v", ts)
	}
	if empty, err := ParseTransfers([]byte(`{"total":0}`)); err != nil || len(empty) != 0 {
		t.Fatalf("no rows: %v", err)
	}

	ds, err := ParseDeposits(w["deposits"])
	if err != nil || len(ds) != 2 || ds[0].Amount != "250" || ds[0].Status != exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS ||
		ds[1].Status != exchangev1.TransferStatus_TRANSFER_STATUS_PENDING || ds[1].Memo != "4412" || ds[0].TxId != "0xfeed01" {
		t.Fatalf("deposits: %v %+v", err, ds)
	}
	ws, err := ParseWithdrawals(w["withdrawals"])
	if err != nil || len(ws) != 2 || ws[0].Time != 1761035400000 || ws[0].ClientId != "mine-1" || ws[0].Fee != "1.2" ||
		ws[0].Status != exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS || ws[1].Status != exchangev1.TransferStatus_TRANSFER_STATUS_PENDING {
		t.Fatalf("withdrawals: %v %+v", err, ws)
	}
	q, err := ParseConvertQuote(w["quote"], "USDT", "BTC")
	if err != nil || q.QuoteId != "q-5544" || q.Price != "0.00001602" || q.ToAmount != "0.0003204" || q.ExpiresTime != 1761000300000 {
		t.Fatalf("quote: %v %+v", err, q)
	}
	a, err := ParseConvertAccept(w["accept"])
	if err != nil || a.Id != "940000000017" || a.Status != exchangev1.TransferStatus_TRANSFER_STATUS_PENDING {
		t.Fatalf("accept: %v %+v", err, a)
	}
	fl, more, err := ParseConvertFlow(w["flow"])
	if err != nil || more || len(fl) != 1 || fl[0].Id != "940000000017" || fl[0].Status != exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS {
		t.Fatalf("flow: %v %+v", err, fl)
	}
	if id, err := ParseTransferID([]byte(`{"tranId":13526853623}`)); err != nil || id != "13526853623" {
		t.Fatalf("tranId %q %v", id, err)
	}
	if id, err := ParseWithdrawID([]byte(`{"id":"7213fea8e94b4a5593d507237e5a555b"}`)); err != nil || id != "7213fea8e94b4a5593d507237e5a555b" {
		t.Fatalf("withdraw id %q %v", id, err)
	}
}

func TestParseWalletErrors(t *testing.T) {
	parsers := map[string]func([]byte) error{
		"coins":      func(b []byte) error { _, err := ParseCoinConfig(b); return err },
		"transfers":  func(b []byte) error { _, err := ParseTransfers(b); return err },
		"tranId":     func(b []byte) error { _, err := ParseTransferID(b); return err },
		"address":    func(b []byte) error { _, err := ParseDepositAddress(b); return err },
		"deposits":   func(b []byte) error { _, err := ParseDeposits(b); return err },
		"withdrawId": func(b []byte) error { _, err := ParseWithdrawID(b); return err },
		"quote":      func(b []byte) error { _, err := ParseConvertQuote(b, "A", "B"); return err },
		"accept":     func(b []byte) error { _, err := ParseConvertAccept(b); return err },
		"flow":       func(b []byte) error { _, _, err := ParseConvertFlow(b); return err },
	}
	for name, p := range parsers {
		for _, b := range badBodies {
			// A JSON array or object of the wrong shape may decode to "nothing" for list parsers; those must
			// still not panic, and every non-JSON or scalar body must fail.
			if err := p([]byte(b)); err == nil && !listy(name, b) {
				t.Errorf("%s(%q): want error", name, b)
			}
		}
	}
	if _, err := ParseWithdrawals([]byte(`[{"id":"1","amount":"1","applyTime":"yesterday"}]`)); err == nil {
		t.Error("bad applyTime accepted")
	}
	if _, err := ParseDeposits([]byte(`[{"id":"1","amount":"x"}]`)); err == nil {
		t.Error("bad amount accepted")
	}
	if _, err := ParseCoinConfig([]byte(`[{"coin":"A","networkList":[{"withdrawFee":"-x"}]}]`)); err == nil {
		t.Error("bad fee accepted")
	}
	for _, m := range []string{`"x"`, `"-0.01"`} {
		if _, err := ParseCoinConfig([]byte(`[{"coin":"A","networkList":[{"withdrawIntegerMultiple":` + m + `}]}]`)); err == nil {
			t.Errorf("withdrawIntegerMultiple %s accepted", m)
		}
	}
}

func listy(name, body string) bool {
	switch name {
	case "deposits", "coins":
		return body == `[{"price":"abc"}]` && name == "deposits"
	}
	return false
}

func FuzzParseWallet(f *testing.F) {
	w := walletFixture(f)
	for _, v := range w {
		f.Add([]byte(v))
	}
	for _, b := range badBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseCoinConfig(b)
		_, _ = ParseTransfers(b)
		_, _ = ParseDeposits(b)
		_, _ = ParseWithdrawals(b)
		_, _ = ParseConvertQuote(b, "A", "B")
		_, _ = ParseConvertAccept(b)
		_, _, _ = ParseConvertFlow(b)
	})
}
