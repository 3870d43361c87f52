package okx_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/okx"
	"github.com/exhub/exhub/adapters/okx/emulator"
	"github.com/exhub/exhub/adapters/venue"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdktest"
)

// TestEmulatorFundingPayments: a short opened on the emulator receives funding at each settlement of a 1-second
// funding interval (the rate is positive); ListFundingPayments reads them from the funding fee bills, newest first,
// with the rate and the position size in base units, paged by billId.
func TestEmulatorFundingPayments(t *testing.T) {
	clock := venue.NewManualClock(time.Now().Add(-time.Hour).Truncate(time.Second))
	v, err := venue.New(venue.Config{Profile: "okx", Seed: 5, Clock: clock, FundingInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// The venue clock is moved by the test: the signed timestamps of the adapter (wall clock) stay inside the window.
	emu, err := emulator.New(emulator.Config{Venue: v, DisableRateLimits: true, TimestampWindow: 3 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(emu.Handler())
	t.Cleanup(func() { ts.Close(); emu.Close(); v.Close() })
	c, _, err := sdktest.ServeInProcess(okx.New(okx.Options{Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := c.Configure(ctx, &exchangev1.ConfigureRequest{Settings: emulator.PluginSettings(ts.URL)}); err != nil {
		t.Fatal(err)
	}
	acct := &exchangev1.AccountRef{ApiKey: emulator.DemoAPIKey, ApiSecret: emulator.DemoAPISecret, Passphrase: emulator.DemoPassphrase}
	const perp = "BTC/USDT:PERP"
	mark, err := v.Mark(perp)
	if err != nil {
		t.Fatal(err)
	}
	in, _ := v.Instrument(perp)
	bid := mark.Mark.Mul(decimal.RequireFromString("0.99")).Div(in.TickSize).Floor().Mul(in.TickSize)
	if _, err := v.AddLiquidity(perp, venue.Buy, bid, decimal.NewFromInt(10)); err != nil {
		t.Fatal(err)
	}
	// Sell 0.05 BTC (5 contracts of 0.01): a short.
	if _, err := c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: acct, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP,
		Symbol: "BTC-USDT-SWAP", Side: exchangev1.Side_SIDE_SELL, Type: exchangev1.OrderType_ORDER_TYPE_MARKET, Qty: "0.05",
		MarginMode: exchangev1.MarginMode_MARGIN_MODE_CROSS}); err != nil {
		t.Fatal(err)
	}
	const settlements = 250
	clock.Advance(settlements*time.Second + 500*time.Millisecond)
	v.AdvanceTo(clock.Now())
	want, err := v.FundingPayments(emulator.DemoAccount, venue.FundingQuery{})
	if err != nil || len(want) != settlements {
		t.Fatalf("venue has %d payments (%v)", len(want), err)
	}
	var got []*exchangev1.FundingPayment
	cursor := ""
	for range 10 {
		r, err := c.ListFundingPayments(ctx, &exchangev1.ListFundingPaymentsRequest{Account: acct, Symbol: "BTC-USDT-SWAP",
			Page: &exchangev1.HistoryPage{Limit: 100, Cursor: cursor}})
		if err != nil {
			t.Fatal(err)
		}
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
		if p.Id != strconv.FormatUint(w.ID, 10) || p.Symbol != "BTC-USDT-SWAP" || p.Asset != "USDT" || p.Time != w.Time ||
			!decimal.RequireFromString(p.Amount).Equal(w.Amount) || p.PositionSize != "0.05" ||
			!decimal.RequireFromString(p.FundingRate).Equal(w.Rate) {
			t.Fatalf("payment %d: %+v, venue %+v", i, p, w)
		}
	}
	// A time window without a symbol; an unknown symbol.
	r, err := c.ListFundingPayments(ctx, &exchangev1.ListFundingPaymentsRequest{Account: acct,
		Page: &exchangev1.HistoryPage{StartTime: want[2].Time, EndTime: want[0].Time}})
	if err != nil || len(r.Payments) != 3 || r.Payments[0].Id != got[0].Id || r.NextCursor != "" {
		t.Fatalf("window: %v %+v", err, r)
	}
	if _, err := c.ListFundingPayments(ctx, &exchangev1.ListFundingPaymentsRequest{Account: acct, Symbol: "NOPE-USDT-SWAP"}); err == nil {
		t.Fatal("unknown symbol listed")
	}
}
