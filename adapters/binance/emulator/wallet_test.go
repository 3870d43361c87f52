package emulator

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
)

// A broker sub-account's API key has no withdraw permission: its withdrawal is refused with Binance's -2015 and
// nothing moves. The master withdraws, from its spot wallet with walletType 0 (what a broker transfer moved there),
// the fee included, and a refused spot withdrawal leaves the spot wallet as it was.
func TestBrokerWithdrawals(t *testing.T) {
	e := newEnv(t)
	var sub struct{ SubaccountID string }
	e.signed(http.MethodPost, "/sapi/v1/broker/subAccount", url.Values{"tag": {"member-9"}}).expectOK(t).decode(t, &sub)
	var key struct{ APIKey, SecretKey string }
	e.signed(http.MethodPost, "/sapi/v1/broker/subAccountApi", url.Values{"subAccountId": {sub.SubaccountID},
		"canTrade": {"true"}}).expectOK(t).decode(t, &key)
	e.signed(http.MethodPost, "/sapi/v1/broker/transfer", url.Values{"toId": {sub.SubaccountID}, "asset": {"USDT"},
		"amount": {"100"}, "clientTranId": {"grant9"}}).expectOK(t)
	var restr struct{ EnableWithdrawals bool }
	e.signedWith(key.APIKey, key.SecretKey, http.MethodGet, "/sapi/v1/account/apiRestrictions", nil).expectOK(t).decode(t, &restr)
	if restr.EnableWithdrawals {
		t.Fatal("a sub-account key reports the withdraw permission")
	}
	for _, wt := range []string{"0", "1"} {
		e.signedWith(key.APIKey, key.SecretKey, http.MethodPost, "/sapi/v1/capital/withdraw/apply", url.Values{"coin": {"USDT"},
			"address": {"sim1elsewhere"}, "amount": {"20"}, "walletType": {wt}, "withdrawOrderId": {"wd9" + wt}}).
			expectErr(t, http.StatusUnauthorized, codeRejectedMBXKey)
	}
	subAcct := DemoAccount + "/sub" + sub.SubaccountID
	if got := e.balance(subAcct, venue.TradingWallet, "USDT"); !got.Equal(decimal.NewFromInt(100)) {
		t.Fatalf("sub spot %s after the refusals", got)
	}
	var hist []any
	e.signedWith(key.APIKey, key.SecretKey, http.MethodGet, "/sapi/v1/capital/withdraw/history", nil).expectOK(t).decode(t, &hist)
	if len(hist) != 0 {
		t.Fatalf("withdrawals after the refusals: %v", hist)
	}

	fee := e.v.Assets()["USDT"].WithdrawFee
	spot, funding := e.balance(DemoAccount, venue.TradingWallet, "USDT"), e.balance(DemoAccount, venue.Funding, "USDT")
	e.signed(http.MethodPost, "/sapi/v1/capital/withdraw/apply", url.Values{"coin": {"USDT"}, "address": {"sim1elsewhere"},
		"amount": {"20"}, "walletType": {"0"}, "withdrawOrderId": {"wdm1"}}).expectOK(t)
	if got := e.balance(DemoAccount, venue.TradingWallet, "USDT"); !got.Equal(spot.Sub(decimal.NewFromInt(20)).Sub(fee)) {
		t.Fatalf("master spot %s, want %s - 20 - fee %s", got, spot, fee)
	}
	if got := e.balance(DemoAccount, venue.Funding, "USDT"); !got.Equal(funding) {
		t.Fatalf("master funding %s, want %s", got, funding)
	}
	// Below the minimum: refused, the spot wallet as it was.
	spot = e.balance(DemoAccount, venue.TradingWallet, "USDT")
	e.signed(http.MethodPost, "/sapi/v1/capital/withdraw/apply", url.Values{"coin": {"USDT"}, "address": {"sim1elsewhere"},
		"amount": {"0.01"}, "walletType": {"0"}}).expectErr(t, http.StatusBadRequest, -4022)
	e.signed(http.MethodPost, "/sapi/v1/capital/withdraw/apply", url.Values{"coin": {"USDT"}, "address": {"sim1elsewhere"},
		"amount": {"20"}, "walletType": {"7"}}).expectErr(t, http.StatusBadRequest, codeBadParam)
	if got := e.balance(DemoAccount, venue.TradingWallet, "USDT"); !got.Equal(spot) {
		t.Fatalf("master spot %s after refusals, want %s", got, spot)
	}
}

func (e *env) balance(account string, w venue.Wallet, asset string) decimal.Decimal {
	e.t.Helper()
	bs, err := e.v.Balances(account, w)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, b := range bs {
		if b.Asset == asset {
			return b.Free
		}
	}
	return decimal.Zero
}

// capital/config/getall sends each venue asset's precision as withdrawIntegerMultiple.
func TestCoinConfigWithdrawStep(t *testing.T) {
	e := newEnv(t)
	var coins []struct {
		Coin        string
		NetworkList []struct {
			WithdrawIntegerMultiple string `json:"withdrawIntegerMultiple"`
		} `json:"networkList"`
	}
	e.signed(http.MethodGet, "/sapi/v1/capital/config/getall", nil).expectOK(t).decode(t, &coins)
	assets := e.v.Assets()
	if len(coins) != len(assets) {
		t.Fatalf("%d coins for %d venue assets", len(coins), len(assets))
	}
	for _, c := range coins {
		want := decimal.New(1, -assets[c.Coin].Scale)
		if len(c.NetworkList) != 1 || c.NetworkList[0].WithdrawIntegerMultiple != want.String() {
			t.Errorf("%s: networks %+v, want withdrawIntegerMultiple %s", c.Coin, c.NetworkList, want)
		}
	}
}
