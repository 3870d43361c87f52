package binance

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/binance/emulator"
	"github.com/exhub/exhub/adapters/venue"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func TestParseIncome(t *testing.T) {
	ps, err := ParseIncome(fixture(t, "futures_income.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The COMMISSION row is not a funding payment.
	if len(ps) != 2 {
		t.Fatalf("payments %+v", ps)
	}
	p := ps[0]
	if p.Id != "4410093817231" || p.Symbol != "ETHUSDT" || p.Amount != "-0.01830412" || p.Asset != "USDT" ||
		p.Time != 1763971200000 || p.FundingRate != "" || p.PositionSize != "" {
		t.Fatalf("first payment %+v", p)
	}
	if ps[1].Amount != "0.0042" || ps[1].Id != "4410102299114" {
		t.Fatalf("second payment %+v", ps[1])
	}
	for _, bad := range []string{
		`[{"symbol":"BTCUSDT","incomeType":"FUNDING_FEE","income":"x","asset":"USDT","time":1,"tranId":1}]`,
		`[{"symbol":"BTCUSDT","incomeType":"FUNDING_FEE","income":"1","asset":"USDT","time":1}]`,
		`[{"incomeType":"FUNDING_FEE","income":"1","asset":"USDT","time":1,"tranId":1}]`,
	} {
		if _, err := ParseIncome([]byte(bad)); err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
	for _, b := range []string{"", "{", "<html>502</html>", `{"code":-1121,"msg":"Invalid symbol."}`} {
		if _, err := ParseIncome([]byte(b)); err == nil {
			t.Errorf("%q parsed", b)
		}
	}
}

// TestEmulatorFundingPayments: a long opened on the emulator pays funding at each settlement of a 1-second funding
// interval; ListFundingPayments pages them newest first, by symbol, and walks Binance's oldest-first answers past
// 1000 rows.
func TestEmulatorFundingPayments(t *testing.T) {
	start := time.Now().Add(-2 * time.Hour).Truncate(time.Second)
	clock := venue.NewManualClock(start)
	s, v, _ := manualEmuVenue(t, venue.Config{Profile: "binance", Seed: 3, Clock: clock, FundingInterval: time.Second}, emulator.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	acct := demoAccount()
	b := buildBook(t, v, "BTC/USDT:PERP")
	if err := v.SetMarkPrice("BTC/USDT:PERP", b.ref); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: acct, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP,
		Symbol: "BTCUSDT", Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_MARKET, Qty: "0.01"}); err != nil {
		t.Fatal(err)
	}
	list := func(symbol string, page *exchangev1.HistoryPage) *exchangev1.ListFundingPaymentsResponse {
		t.Helper()
		r, err := s.ListFundingPayments(ctx, &exchangev1.ListFundingPaymentsRequest{Account: acct, Symbol: symbol, Page: page})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := list("BTCUSDT", nil); len(r.Payments) != 0 {
		t.Fatalf("payments before any settlement: %+v", r.Payments)
	}
	const settlements = 1005
	clock.Advance(settlements*time.Second + 500*time.Millisecond)
	v.AdvanceTo(clock.Now())
	want, err := v.FundingPayments(emulator.DemoAccount, venue.FundingQuery{})
	if err != nil || len(want) != settlements {
		t.Fatalf("venue has %d payments (%v)", len(want), err)
	}
	// Newest first, 300 a page, every payment once, down to the first.
	var got []*exchangev1.FundingPayment
	cursor := ""
	for range 10 {
		r := list("BTCUSDT", &exchangev1.HistoryPage{Limit: 300, Cursor: cursor})
		got = append(got, r.Payments...)
		if cursor = r.NextCursor; cursor == "" {
			break
		}
	}
	if len(got) != settlements {
		t.Fatalf("paged %d payments, want %d", len(got), settlements)
	}
	for i, p := range got {
		w := want[i]
		if p.Id != itoa(int64(w.ID)) || p.Symbol != "BTCUSDT" || p.Asset != "USDT" || p.Time != w.Time ||
			!decimal.RequireFromString(p.Amount).Equal(w.Amount) || !w.Amount.IsNegative() {
			t.Fatalf("payment %d: %+v, venue %+v", i, p, w)
		}
	}
	// A window: the newest 5 at or before the 10th settlement.
	tenth := want[settlements-10].Time
	r := list("", &exchangev1.HistoryPage{EndTime: tenth, Limit: 5})
	if len(r.Payments) != 5 || r.Payments[0].Time != tenth || r.NextCursor == "" {
		t.Fatalf("window: %+v", r)
	}
	// Another symbol has none.
	if r := list("ETHUSDT", nil); len(r.Payments) != 0 {
		t.Fatalf("ETHUSDT payments %+v", r.Payments)
	}
	if _, err := s.ListFundingPayments(ctx, &exchangev1.ListFundingPaymentsRequest{Account: acct, Symbol: "NOPEUSDT"}); reason(err) != exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND {
		t.Fatalf("unknown symbol: %v", err)
	}
}
