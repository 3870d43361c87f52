package okx_test

import (
	"slices"
	"testing"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// TestDescribeV11: revision 1.1 with capabilities per market, the client id format and CheckCredentials.
func TestDescribeV11(t *testing.T) {
	w := shared(t)
	d, err := w.c.Describe(t.Context(), &exchangev1.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if d.GetSdkVersion() != "1.2" {
		t.Fatalf("sdk_version %q", d.GetSdkVersion())
	}
	tr := d.GetCapabilities().GetTrading()
	if !tr.GetCheckCredentials() || tr.GetClientOrderIdFormat().GetMaxLength() != 32 || tr.GetClientOrderIdFormat().GetPattern() != "^[a-zA-Z0-9]{1,32}$" {
		t.Fatalf("trading capabilities %v", tr)
	}
	byType := map[exchangev1.MarketType]*exchangev1.MarketTradingCapabilities{}
	for _, m := range tr.GetMarkets() {
		byType[m.GetMarketType()] = m
	}
	spot, swap := byType[exchangev1.MarketType_MARKET_TYPE_SPOT], byType[exchangev1.MarketType_MARKET_TYPE_SWAP]
	if spot == nil || swap == nil || len(tr.GetMarkets()) != 2 {
		t.Fatalf("markets %v", tr.GetMarkets())
	}
	for _, m := range []*exchangev1.MarketTradingCapabilities{spot, swap} {
		if m.GetBatchPlaceMax() != 20 || m.GetBatchCancelMax() != 20 || !m.GetCancelAllAfter() || !m.GetAmend() || !m.GetIdempotentClientOrderId() ||
			!slices.Contains(m.GetAlgoOrderTypes(), exchangev1.OrderType_ORDER_TYPE_STOP_MARKET) ||
			slices.Contains(m.GetTimeInForce(), exchangev1.TimeInForce_TIME_IN_FORCE_GTD) {
			t.Errorf("%v: %v", m.GetMarketType(), m)
		}
	}
	if spot.GetReduceOnly() || len(spot.GetMarginModes()) > 0 || len(spot.GetPositionModes()) > 0 {
		t.Errorf("spot claims swap features: %v", spot)
	}
	if !swap.GetReduceOnly() || len(swap.GetMarginModes()) != 2 || len(swap.GetPositionModes()) != 2 {
		t.Errorf("swap: %v", swap)
	}
}

// TestInstrumentsMinNotional: every instrument carries the minimum order value the venue behind the emulator
// enforces, SWAP included (the emulator refuses smaller orders with 51020).
func TestInstrumentsMinNotional(t *testing.T) {
	w := shared(t)
	for _, mt := range []exchangev1.MarketType{exchangev1.MarketType_MARKET_TYPE_SPOT, exchangev1.MarketType_MARKET_TYPE_SWAP} {
		r, err := w.c.ListInstruments(t.Context(), &exchangev1.ListInstrumentsRequest{MarketType: mt})
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range r.GetInstruments() {
			if in.GetMinNotional() == "" {
				t.Fatalf("%s has no min_notional", in.GetSymbol())
			}
			if in.GetSymbol() == "BTC-USDT-SWAP" && in.GetMinNotional() != "100" {
				t.Fatalf("BTC-USDT-SWAP min_notional %s, want the venue's 100", in.GetMinNotional())
			}
		}
	}
}

// TestGTDNotSupported: OKX has no good-till-date orders.
func TestGTDNotSupported(t *testing.T) {
	w := shared(t)
	_, err := w.c.PlaceOrder(t.Context(), &exchangev1.PlaceOrderRequest{Account: w.acct, MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT,
		Symbol: "BTC-USDT", Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT,
		TimeInForce: exchangev1.TimeInForce_TIME_IN_FORCE_GTD, Price: "1000", Qty: "0.001", ExpireTime: 1})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED)
}

// TestCheckCredentials: the demo key may read, trade and withdraw; a read-only key bound to two addresses says
// so, and its orders are PERMISSION_DENIED.
func TestCheckCredentials(t *testing.T) {
	w := shared(t)
	ctx := t.Context()
	full, err := w.c.CheckCredentials(ctx, &exchangev1.CheckCredentialsRequest{Account: w.acct})
	if err != nil {
		t.Fatal(err)
	}
	if !full.GetCanRead() || !full.GetCanTrade() || !full.GetCanWithdraw() || !full.GetCanTransfer() || full.GetIpRestricted() ||
		full.GetAccountMode() != "2" || full.GetExchangeAccountId() == "" ||
		full.GetPositionMode() == exchangev1.PositionMode_POSITION_MODE_UNSPECIFIED {
		t.Fatalf("demo key: %v", full)
	}
	ro := &exchangev1.AccountRef{AccountId: "ro", ApiKey: readOnlyKey, ApiSecret: "ro-secret", Passphrase: "ro-pass"}
	got, err := w.c.CheckCredentials(ctx, &exchangev1.CheckCredentialsRequest{Account: ro})
	if err != nil {
		t.Fatal(err)
	}
	if !got.GetCanRead() || got.GetCanTrade() || got.GetCanWithdraw() || got.GetCanTransfer() || !got.GetIpRestricted() ||
		!slices.Equal(got.GetIpAllowlist(), []string{"127.0.0.1", "10.0.0.7"}) || got.GetExchangeAccountId() != full.GetExchangeAccountId() {
		t.Fatalf("read-only key: %v", got)
	}
	_, err = w.c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: ro, MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT,
		Symbol: "BTC-USDT", Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: "1000", Qty: "0.01"})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED)
}
