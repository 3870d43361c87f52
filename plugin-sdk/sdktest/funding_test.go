package sdktest

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

func TestFundingPayments(t *testing.T) {
	clock := newClock()
	s, c := Start(t, Options{Manual: true, Now: clock.now, HistoryDays: 1, FundingInterval: 10 * time.Second})
	ctx := context.Background()
	a := acct("funder")
	if _, err := c.GetBalances(ctx, &exchangev1.GetBalancesRequest{Account: a}); err != nil {
		t.Fatal(err)
	}
	fr := must(c.GetFundingRate(ctx, &exchangev1.GetFundingRateRequest{Symbol: "BTCUSDT"}))
	if fr.NextFundingTime != (clock.now().UnixMilli()/10_000+1)*10_000 {
		t.Fatalf("next funding %d at %d", fr.NextFundingTime, clock.now().UnixMilli())
	}
	must(c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: a, MarketType: swap, Symbol: "BTCUSDT", Side: buy,
		Type: exchangev1.OrderType_ORDER_TYPE_MARKET, Qty: "0.01"}))
	must(c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: a, MarketType: swap, Symbol: "ETHUSDT", Side: sell,
		Type: exchangev1.OrderType_ORDER_TYPE_MARKET, Qty: "0.1"}))
	// 60 s of ticks: six settlements (a zero rate pays nothing, so at most six payments per position).
	step(s, clock, int(time.Minute/DefaultTickInterval))
	all := must(c.ListFundingPayments(ctx, &exchangev1.ListFundingPaymentsRequest{Account: a}))
	if len(all.Payments) < 4 || all.NextCursor != "" {
		t.Fatalf("payments %+v", all)
	}
	for i, p := range all.Payments {
		if i > 0 && p.Time > all.Payments[i-1].Time {
			t.Fatalf("not newest first: %+v", all.Payments)
		}
		if p.Time%10_000 != 0 || p.Asset != "USDT" || p.FundingRate == "" || p.Id == "" {
			t.Fatalf("payment %+v", p)
		}
		amt, rate := d(p.Amount), d(p.FundingRate)
		switch p.Symbol {
		case "BTCUSDT": // a long pays a positive rate
			if p.PositionSize != "0.01" || amt.Sign() != -rate.Sign() {
				t.Fatalf("long payment %+v", p)
			}
		case "ETHUSDT":
			if p.PositionSize != "0.1" || amt.Sign() != rate.Sign() {
				t.Fatalf("short payment %+v", p)
			}
		default:
			t.Fatalf("payment on %s", p.Symbol)
		}
	}
	// By symbol, paged two at a time: the same rows.
	var paged []*exchangev1.FundingPayment
	cursor := ""
	for range 10 {
		r := must(c.ListFundingPayments(ctx, &exchangev1.ListFundingPaymentsRequest{Account: a, Symbol: "BTCUSDT",
			Page: &exchangev1.HistoryPage{Limit: 2, Cursor: cursor}}))
		paged = append(paged, r.Payments...)
		if cursor = r.NextCursor; cursor == "" {
			break
		}
	}
	var btc []*exchangev1.FundingPayment
	for _, p := range all.Payments {
		if p.Symbol == "BTCUSDT" {
			btc = append(btc, p)
		}
	}
	if len(paged) != len(btc) || len(btc) == 0 || paged[0].Id != btc[0].Id || paged[len(paged)-1].Id != btc[len(btc)-1].Id {
		t.Fatalf("paged %d, listed %d", len(paged), len(btc))
	}
	// The wallet moved by the payments.
	sum := decimal.Zero
	for _, p := range all.Payments {
		sum = sum.Add(d(p.Amount))
	}
	if sum.IsZero() {
		t.Fatal("payments sum to zero")
	}
	// Another account sees none; an unknown symbol is INSTRUMENT_NOT_FOUND; the setting is checked.
	if r := must(c.ListFundingPayments(ctx, &exchangev1.ListFundingPaymentsRequest{Account: acct("other")})); len(r.Payments) != 0 {
		t.Fatalf("other account: %+v", r.Payments)
	}
	_, err := c.ListFundingPayments(ctx, &exchangev1.ListFundingPaymentsRequest{Account: a, Symbol: "NOPEUSDT"})
	if sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND {
		t.Fatalf("unknown symbol: %v", err)
	}
	for _, bad := range []string{"500ms", "1.5s", "9h", "x"} {
		if _, err := c.Configure(ctx, &exchangev1.ConfigureRequest{Settings: map[string]string{"funding_interval": bad}}); err == nil {
			t.Errorf("funding_interval %q accepted", bad)
		}
	}
	must(c.Configure(ctx, &exchangev1.ConfigureRequest{Settings: map[string]string{"funding_interval": "1m"}}))
	if fr := must(c.GetFundingRate(ctx, &exchangev1.GetFundingRateRequest{Symbol: "BTCUSDT"})); fr.NextFundingTime%60_000 != 0 {
		t.Fatalf("next funding %d after funding_interval=1m", fr.NextFundingTime)
	}
}
