package emulator

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
)

// TestFuturesIncomeFundingFee: funding settled on a position is served by GET /fapi/v1/income as FUNDING_FEE rows,
// oldest first inside startTime/endTime, limited, filtered by symbol and income type, the last 7 days by default.
func TestFuturesIncomeFundingFee(t *testing.T) {
	clock := venue.NewManualClock(t0)
	p, err := venue.LoadProfile("binance")
	if err != nil {
		t.Fatal(err)
	}
	vc := venue.Config{Profile: "binance", Seed: 7, Clock: clock, FundingInterval: 10 * time.Second}
	for _, in := range p.Instruments {
		if in.Base == "BTC" || in.Base == "ETH" {
			vc.Instruments = append(vc.Instruments, in)
		}
	}
	v, err := venue.New(vc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	s, err := New(Config{Venue: v, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() { s.Close(); ts.Close() })
	e := &env{t: t, v: v, clock: clock, s: s, ts: ts}
	mk, _ := v.Mark("BTC/USDT:PERP")
	in, _ := v.Instrument("BTC/USDT:PERP")
	ask := mk.Mark.Mul(decimal.RequireFromString("1.01")).Div(in.TickSize).Ceil().Mul(in.TickSize)
	if _, err := v.AddLiquidity("BTC/USDT:PERP", venue.Sell, ask, decimal.NewFromInt(10)); err != nil {
		t.Fatal(err)
	}
	e.signed(http.MethodPost, "/fapi/v1/order", url.Values{"symbol": {"BTCUSDT"}, "side": {"BUY"}, "type": {"MARKET"},
		"quantity": {"0.01"}}).expectOK(t)
	for range 3 {
		clock.Advance(10 * time.Second)
		v.AdvanceTo(clock.Now())
	}
	type row struct {
		Symbol, IncomeType, Income, Asset string
		Time, TranID                      int64
	}
	list := func(q url.Values) []row {
		t.Helper()
		r := e.signed(http.MethodGet, "/fapi/v1/income", q).expectOK(t)
		checkShape(t, "futures_income", r.body)
		var rows []row
		if err := json.Unmarshal(r.body, &rows); err != nil {
			t.Fatal(err)
		}
		return rows
	}
	rows := list(url.Values{"incomeType": {"FUNDING_FEE"}})
	if len(rows) != 3 {
		t.Fatalf("income %+v", rows)
	}
	for i, r := range rows {
		if r.Symbol != "BTCUSDT" || r.IncomeType != "FUNDING_FEE" || r.Asset != "USDT" ||
			r.Time != t0.Add(time.Duration(10*(i+1))*time.Second).UnixMilli() || !decimal.RequireFromString(r.Income).IsNegative() {
			t.Fatalf("row %d: %+v", i, r)
		}
	}
	start := strconv.FormatInt(rows[1].Time, 10)
	if got := list(url.Values{"startTime": {start}, "endTime": {strconv.FormatInt(rows[2].Time, 10)}, "limit": {"1"}}); len(got) != 1 || got[0].TranID != rows[1].TranID {
		t.Fatalf("window: %+v", got)
	}
	for _, q := range []url.Values{{"symbol": {"ETHUSDT"}}, {"incomeType": {"COMMISSION"}}} {
		if got := list(q); len(got) != 0 {
			t.Fatalf("%v: %+v", q, got)
		}
	}
	// Without times: the last 7 days only.
	clock.Advance(8 * 24 * time.Hour)
	if got := list(url.Values{"symbol": {"BTCUSDT"}}); len(got) != 0 {
		t.Fatalf("older than 7 days without times: %+v", got)
	}
	e.signed(http.MethodGet, "/fapi/v1/income", url.Values{"limit": {"1001"}}).expectErr(t, 400, -1130)
}
