package okx

import (
	"testing"

	"github.com/shopspring/decimal"
)

// contracts converts OKX sizes with a contract value of 0.01.
func contracts(sz decimal.Decimal) decimal.Decimal { return sz.Mul(decimal.RequireFromString("0.01")) }

func TestParseFundingBills(t *testing.T) {
	rows, err := ParseBills(fixture(t, "account_bills_funding.json"))
	if err != nil || len(rows) != 2 {
		t.Fatalf("bills: %v %+v", err, rows)
	}
	p, err := fundingPaymentProto(rows[0], contracts)
	if err != nil {
		t.Fatal(err)
	}
	if p.Id != "712004856313057283" || p.Symbol != "ETH-USDT-SWAP" || p.Amount != "0.0173604" || p.Asset != "USDT" ||
		p.FundingRate != "-0.0000532" || p.PositionSize != "0.12" || p.Time != 1764000000412 {
		t.Fatalf("income bill %+v", p)
	}
	// A short's size comes as a negative number of contracts: the size is absolute.
	p, err = fundingPaymentProto(rows[1], contracts)
	if err != nil || p.Amount != "-0.3104208" || p.PositionSize != "0.35" || p.FundingRate != "0.0001" {
		t.Fatalf("expense bill %+v %v", p, err)
	}
	for _, bad := range []rawBill{
		{Type: "2", BillID: "1", InstID: "BTC-USDT-SWAP", Ccy: "USDT", BalChg: "1", Ts: "1"},
		{Type: "8", InstID: "BTC-USDT-SWAP", Ccy: "USDT", BalChg: "1", Ts: "1"},
		{Type: "8", BillID: "1", InstID: "BTC-USDT-SWAP", Ccy: "USDT", Ts: "1"},
		{Type: "8", BillID: "1", InstID: "BTC-USDT-SWAP", Ccy: "USDT", BalChg: "x", Ts: "1"},
		{Type: "8", BillID: "1", InstID: "BTC-USDT-SWAP", Ccy: "USDT", BalChg: "1", Ts: ""},
		{Type: "8", BillID: "1", InstID: "BTC-USDT-SWAP", Ccy: "USDT", BalChg: "1", Ts: "1", Px: "rate"},
		{Type: "8", BillID: "1", InstID: "BTC-USDT-SWAP", Ccy: "USDT", BalChg: "1", Ts: "1", Sz: "1e"},
	} {
		if _, err := fundingPaymentProto(bad, contracts); err == nil {
			t.Errorf("%+v parsed", bad)
		}
	}
	if _, err := ParseBills([]byte(`{"billId":"1"}`)); err == nil {
		t.Error("an object parsed as a list of bills")
	}
}

func FuzzParseFundingBills(f *testing.F) {
	f.Add([]byte(`[{"billId":"1","type":"8","subType":"173","instId":"BTC-USDT-SWAP","ccy":"USDT","balChg":"-0.1","sz":"3","px":"0.0001","ts":"1"}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := ParseBills(b)
		if err != nil {
			return
		}
		for _, r := range rows {
			p, err := fundingPaymentProto(r, contracts)
			if err != nil {
				continue
			}
			if _, err := decimal.NewFromString(p.Amount); err != nil || p.Id == "" || p.Time <= 0 {
				t.Fatalf("payment %+v from %+v", p, r)
			}
			if p.PositionSize != "" && decimal.RequireFromString(p.PositionSize).IsNegative() {
				t.Fatalf("negative size %q", p.PositionSize)
			}
		}
	})
}
