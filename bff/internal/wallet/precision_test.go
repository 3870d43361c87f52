package wallet

import (
	"testing"

	"github.com/exhub/exhub/adapters/binance"
	"github.com/exhub/exhub/adapters/okx"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// A network's precision and increment as each exchange's adapter reads them: Binance's withdrawIntegerMultiple and
// OKX's wdTickSz (decimal places) become withdraw_step; without one the precision is 8, or more for a fee or minimum
// written with more.
func TestNetworkPrecisionFromEachExchange(t *testing.T) {
	bAssets, err := binance.ParseCoinConfig([]byte(`[{"coin":"XRP","networkList":[
		{"network":"XRP","withdrawFee":"0.2","withdrawMin":"20","withdrawIntegerMultiple":"0.01"},
		{"network":"HALF","withdrawFee":"0.5","withdrawMin":"1","withdrawIntegerMultiple":"0.5"},
		{"network":"OLD","withdrawFee":"0.0000000002","withdrawMin":"1"}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	oAssets, err := okx.ParseCurrencies([]byte(`[
		{"ccy":"USDT","chain":"USDT-TRC20","canWd":true,"fee":"1","minWd":"2","maxWd":"100","wdTickSz":"2"},
		{"ccy":"USDT","chain":"USDT-ERC20","canWd":true,"fee":"3","minWd":"10","maxWd":"100","wdTickSz":""}]`))
	if err != nil {
		t.Fatal(err)
	}
	bNets, oNets := bAssets[0].Networks, oAssets[0].Networks
	cases := []struct {
		n         *exchangev1.Network
		precision int32
		ok, bad   []string // amounts taken and refused
		message   string   // the refusal of bad[0]
	}{
		{bNets[0], 2, []string{"25.25", "25.1", "25"}, []string{"25.255", "25.00000001"}, "The amount has more than 2 decimal places."},
		{bNets[1], 1, []string{"2.5", "3"}, []string{"2.3", "2.25"}, "The amount must be a multiple of 0.5."},
		{bNets[2], 10, []string{"1.0000000001"}, []string{"1.00000000001"}, "The amount has more than 10 decimal places."},
		{oNets[0], 2, []string{"3.01", "3"}, []string{"3.001"}, "The amount has more than 2 decimal places."},
		{oNets[1], 8, []string{"10.12345678"}, []string{"10.123456789"}, "The amount has more than 8 decimal places."},
	}
	for _, c := range cases {
		if got := NetworkPrecision(c.n); got != c.precision {
			t.Errorf("%s: precision %d, want %d", c.n.GetNetwork(), got, c.precision)
		}
		for _, a := range c.ok {
			if e := checkPrecision(dec(a), c.n); e != nil {
				t.Errorf("%s: %s refused: %+v", c.n.GetNetwork(), a, e)
			}
		}
		for i, a := range c.bad {
			e := checkPrecision(dec(a), c.n)
			if e == nil || e.Code != "precision" || e.Field != "amount" || e.Status != 422 || (i == 0 && e.Message != c.message) {
				t.Errorf("%s: %s gave %+v, want 422 precision on amount (%q)", c.n.GetNetwork(), a, e, c.message)
			}
		}
	}
}

// On the emulators (through the plugins) a network names its step, and a withdrawal or a transfer to another
// exchange off it is refused with precision on amount, nothing journaled.
func TestWithdrawalOffTheStep(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := ctxT(t)
	a := Caller{ID: "a"}
	for _, ex := range []string{"binance", "okx"} {
		e.broker("a", ex)
	}
	for _, ex := range []string{"binance", "okx"} {
		n, err := e.svc.network(ctx, mustSup(t, e, ex), mustRef(t, e, "a", ex), "USDT", "")
		if err != nil || n.GetWithdrawStep() != "0.00000001" || NetworkPrecision(n) != 8 {
			t.Fatalf("%s: network %+v %v, want withdraw_step 0.00000001", ex, n, err)
		}
		other := map[string]string{"binance": "okx", "okx": "binance"}[ex]
		_, err = e.svc.Withdraw(ctx, a, "w-"+ex, WithdrawRequest{Exchange: ex, Asset: "USDT", Amount: "20.123456789",
			Address: "sim1destination"})
		if we := wantCode(t, err, "precision", "The amount has more than 8 decimal places."); we.Field != "amount" || we.Status != 422 {
			t.Fatalf("%s withdrawal: %+v", ex, we)
		}
		_, err = e.svc.ExchangeTransfer(ctx, a, "x-"+ex, ExchangeTransferRequest{Exchange: ex, Target: other, Asset: "USDT",
			Amount: "20.000000001"})
		if we := wantCode(t, err, "precision", ""); we.Field != "amount" || we.Status != 422 {
			t.Fatalf("%s exchange transfer: %+v", ex, we)
		}
		for _, k := range []string{"w-" + ex, "x-" + ex} {
			if m := e.svc.MovementByKey(ctx, "a", k); m.ID != "" {
				t.Fatalf("a refused movement was journaled: %+v", m)
			}
		}
	}
}
