package backfill

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/exhub/exhub/analytics/chtest"
	"github.com/exhub/exhub/analytics/ingest"
	"github.com/exhub/exhub/analytics/schema"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
	"github.com/exhub/exhub/plugin-sdk/sdktest"
)

// counting wraps a source, counts calls and answers the first n calls with a rate limit error.
type counting struct {
	exchangev1.ExchangeClient
	candleCalls atomic.Int64
	limitFirst  atomic.Int64
}

func (c *counting) GetCandles(ctx context.Context, in *exchangev1.GetCandlesRequest, opts ...grpc.CallOption) (*exchangev1.GetCandlesResponse, error) {
	c.candleCalls.Add(1)
	if c.limitFirst.Add(-1) >= 0 {
		return nil, sdk.RateLimited(50*time.Millisecond, "slow down")
	}
	return c.ExchangeClient.GetCandles(ctx, in, opts...)
}

type env struct {
	srv    *chtest.Server
	db     string
	bf     *Backfiller
	src    *counting
	desc   *exchangev1.DescribeResponse
	swap   string
	other  string // a second SWAP symbol
	nowMin int64
}

func setup(t *testing.T) *env {
	t.Helper()
	srv := chtest.Start(t)
	_, client := sdktest.Start(t, sdktest.Options{Manual: true, HistoryDays: 3})
	ctx := context.Background()
	db := srv.NewDatabase(t)
	if err := schema.Apply(ctx, srv.Conn, schema.Options{Database: db}, nil); err != nil {
		t.Fatal(err)
	}
	w, err := ingest.New(ingest.Config{Conn: srv.Conn, Database: db, SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	desc, err := client.Describe(ctx, &exchangev1.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	ins, err := client.ListInstruments(ctx, &exchangev1.ListInstrumentsRequest{MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP})
	if err != nil {
		t.Fatal(err)
	}
	var swap, other string
	for _, in := range ins.GetInstruments() {
		if strings.HasPrefix(in.GetSymbol(), "BTC") {
			swap = in.GetSymbol()
		} else if other == "" {
			other = in.GetSymbol()
		}
	}
	src := &counting{ExchangeClient: client}
	return &env{srv: srv, db: db, src: src, desc: desc, swap: swap, other: other, nowMin: time.Now().UnixMilli() / 60_000 * 60_000,
		bf: &Backfiller{Conn: srv.Conn, Database: db, Writer: w}}
}

func (e *env) count(t *testing.T, q string, args ...any) uint64 {
	t.Helper()
	var n uint64
	if err := e.srv.Conn.QueryRow(context.Background(), strings.ReplaceAll(q, "DB", e.db), args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCandlesPagedResumableAndGapsFilled(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	mt := exchangev1.MarketType_MARKET_TYPE_SWAP
	from, to := e.nowMin-36*3_600_000, e.nowMin-60_000 // 36 hours of closed minutes: 2160 slots
	e.src.limitFirst.Store(2)                          // the first two calls are rate limited and retried
	r, err := e.bf.Candles(ctx, e.src, "ref", mt, e.swap, from, to, 1000)
	if err != nil {
		t.Fatal(err)
	}
	slots := uint64((to-from)/60_000 + 1)
	if r.Gaps != 1 || r.Pages != 3 || uint64(r.Rows) < slots {
		t.Fatalf("first run %+v: want one gap, 3 pages of <=1000 and >= %d rows", r, slots)
	}
	if calls := e.src.candleCalls.Load(); calls != 5 {
		t.Fatalf("%d calls, want 3 pages + 2 rate-limited retries", calls)
	}
	inRange := "SELECT uniqExact(open_time) FROM DB.candles_1m WHERE symbol = ? AND open_time BETWEEN fromUnixTimestamp64Milli(?, 'UTC') AND fromUnixTimestamp64Milli(?, 'UTC')"
	if n := e.count(t, inRange, e.swap, from, to); n != slots {
		t.Fatalf("%d distinct minutes stored, want %d", n, slots)
	}
	// A second run finds nothing missing and makes no call.
	before := e.src.candleCalls.Load()
	r, err = e.bf.Candles(ctx, e.src, "ref", mt, e.swap, from, to, 1000)
	if err != nil || r.Gaps != 0 || r.Pages != 0 || e.src.candleCalls.Load() != before {
		t.Fatalf("second run %+v %v: want no gaps and no calls", r, err)
	}
	// Punch two holes (an outage) and run again: only the holes are fetched.
	holeA, holeB := from+100*60_000, from+2000*60_000
	if err := e.srv.Conn.Exec(ctx, "DELETE FROM "+e.db+".candles_1m WHERE (open_time >= fromUnixTimestamp64Milli(?, 'UTC') AND open_time < fromUnixTimestamp64Milli(?, 'UTC')) OR (open_time >= fromUnixTimestamp64Milli(?, 'UTC') AND open_time < fromUnixTimestamp64Milli(?, 'UTC'))",
		holeA, holeA+30*60_000, holeB, holeB+5*60_000); err != nil {
		t.Fatal(err)
	}
	gaps, err := Gaps(ctx, e.srv.Conn, e.db, Series{Table: schema.Candles1m, TimeCol: "open_time", StepMs: 60_000,
		Where: map[string]string{"exchange": "ref", "market_type": "SWAP", "symbol": e.swap}}, from, to)
	if err != nil {
		t.Fatal(err)
	}
	want := []Gap{{holeA, holeA + 29*60_000}, {holeB, holeB + 4*60_000}}
	if len(gaps) != 2 || gaps[0] != want[0] || gaps[1] != want[1] {
		t.Fatalf("gaps %v, want %v", gaps, want)
	}
	r, err = e.bf.Candles(ctx, e.src, "ref", mt, e.swap, from, to, 1000)
	if err != nil || r.Gaps != 2 || r.Pages != 2 || r.Rows != 35 {
		t.Fatalf("hole run %+v %v: want 2 gaps, 2 pages, 35 rows", r, err)
	}
	if n := e.count(t, inRange, e.swap, from, to); n != slots {
		t.Fatalf("after filling holes %d minutes, want %d", n, slots)
	}
	if n := e.count(t, "SELECT count() FROM DB.candles_1m FINAL WHERE symbol = ?", e.swap); n != e.count(t, "SELECT uniqExact(open_time) FROM DB.candles_1m WHERE symbol = ?", e.swap) {
		t.Fatalf("duplicate candles after FINAL")
	}
	// A minute whose newest row was stored still forming (a crash between the forming and the closed write) is a gap:
	// the next run fetches it again and the closed row replaces the forming one.
	forming := from + 500*60_000
	if err := e.srv.Conn.Exec(ctx, "INSERT INTO "+e.db+".candles_1m SELECT * REPLACE (false AS closed, now64(3, 'UTC') AS ingested_at) FROM "+e.db+".candles_1m FINAL WHERE symbol = ? AND open_time = fromUnixTimestamp64Milli(?, 'UTC')",
		e.swap, forming); err != nil {
		t.Fatal(err)
	}
	gaps, err = Gaps(ctx, e.srv.Conn, e.db, Series{Table: schema.Candles1m, TimeCol: "open_time", StepMs: 60_000,
		Where: map[string]string{"exchange": "ref", "market_type": "SWAP", "symbol": e.swap}, Complete: "closed"}, from, to)
	if err != nil || len(gaps) != 1 || gaps[0] != (Gap{forming, forming}) {
		t.Fatalf("gaps %v %v, want the forming minute %d", gaps, err, forming)
	}
	r, err = e.bf.Candles(ctx, e.src, "ref", mt, e.swap, from, to, 1000)
	if err != nil || r.Gaps != 1 || r.Rows < 1 {
		t.Fatalf("forming run %+v %v: want the one forming minute fetched", r, err)
	}
	if n := e.count(t, "SELECT countIf(NOT closed) FROM DB.candles_1m FINAL WHERE symbol = ?", e.swap); n != 0 {
		t.Fatalf("%d forming minutes left after the run", n)
	}
}

func TestHistoryStartStopsPaging(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	// Ask for ten days while the exchange has three: paging stops at the first empty page.
	from := e.nowMin - 10*86_400_000
	r, err := e.bf.Candles(ctx, e.src, "ref", exchangev1.MarketType_MARKET_TYPE_SPOT, "BTCUSDT", from, e.nowMin, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if r.Rows < 3*1440 || r.Pages > 7 {
		t.Fatalf("%+v: want >= %d rows in at most 5 pages + 1 empty", r, 3*1440)
	}
}

func TestSymbolDerivativesSeries(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	from, to := e.nowMin-2*86_400_000, e.nowMin
	r, err := e.bf.Symbol(ctx, e.src, e.desc, Plan{Exchange: "ref", MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP,
		Symbol: e.swap, From: from, To: to, Periods: []string{"5m", "1h"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Rows == 0 {
		t.Fatal("nothing backfilled")
	}
	// 2 days of 1h periods: 48 or 49 slots per series.
	for _, q := range []string{
		"SELECT count() FROM DB.open_interest FINAL WHERE period = '1h'",
		"SELECT count() FROM DB.taker_volume FINAL WHERE period = '1h'",
		"SELECT count() FROM DB.long_short_ratio FINAL WHERE period = '1h' AND kind = 'accounts'",
	} {
		if n := e.count(t, q); n < 48 || n > 49 {
			t.Errorf("%s: %d rows, want 48-49", q, n)
		}
	}
	if n := e.count(t, "SELECT count() FROM DB.open_interest FINAL WHERE period = '5m'"); n < 576 || n > 577 {
		t.Errorf("5m open interest: %d rows, want 576-577", n)
	}
	if n := e.count(t, "SELECT count() FROM DB.funding_rates FINAL"); n < 6 || n > 7 {
		t.Errorf("funding: %d settlements in 2 days, want 6-7", n)
	}
	// Everything is in place: a second run fetches nothing.
	r2, err := e.bf.Symbol(ctx, e.src, e.desc, Plan{Exchange: "ref", MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP,
		Symbol: e.swap, From: from, To: to, Periods: []string{"5m", "1h"}})
	if err != nil || r2.Rows != 0 {
		t.Fatalf("second run %+v %v: want nothing new", r2, err)
	}
}

// A part runs only its own series: candles without the derivatives series, and the series without candles.
func TestSymbolParts(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	from, to := e.nowMin-86_400_000, e.nowMin
	plan := Plan{Exchange: "ref", MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: e.swap, From: from, To: to,
		Periods: []string{"1h"}, Part: PartSeries}
	if _, err := e.bf.Symbol(ctx, e.src, e.desc, plan); err != nil {
		t.Fatal(err)
	}
	if n := e.src.candleCalls.Load(); n != 0 {
		t.Fatalf("the series part fetched candles %d times", n)
	}
	if n := e.count(t, "SELECT count() FROM DB.open_interest FINAL WHERE period = '1h'"); n == 0 {
		t.Fatal("the series part wrote no open interest")
	}
	if n := e.count(t, "SELECT count() FROM DB.candles_1m FINAL"); n != 0 {
		t.Fatalf("the series part wrote %d candles", n)
	}
	other := Plan{Exchange: "ref", MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: e.other, From: from, To: to,
		Periods: []string{"1h"}, Part: PartCandles}
	if _, err := e.bf.Symbol(ctx, e.src, e.desc, other); err != nil {
		t.Fatal(err)
	}
	if e.src.candleCalls.Load() == 0 || e.count(t, "SELECT count() FROM DB.candles_1m FINAL WHERE symbol = ?", e.other) == 0 {
		t.Fatal("the candles part wrote no candles")
	}
	for _, q := range []string{"open_interest", "funding_rates", "taker_volume"} {
		if n := e.count(t, "SELECT count() FROM DB."+q+" FINAL WHERE symbol = ?", e.other); n != 0 {
			t.Fatalf("the candles part wrote %d rows of %s", n, q)
		}
	}
}

func TestPeriodMs(t *testing.T) {
	for p, want := range map[string]int64{"5m": 300_000, "15m": 900_000, "1h": 3_600_000, "4h": 14_400_000, "1d": 86_400_000} {
		if got, err := PeriodMs(p); err != nil || got != want {
			t.Errorf("%s: %d %v", p, got, err)
		}
	}
	for _, bad := range []string{"", "m", "0m", "5x", "-1h"} {
		if _, err := PeriodMs(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
