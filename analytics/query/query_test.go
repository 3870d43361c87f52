package query

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/exhub/exhub/analytics/chtest"
	"github.com/exhub/exhub/analytics/ingest"
	"github.com/exhub/exhub/analytics/schema"
)

const t0 = int64(1_767_225_600_000) // 2026-01-01T00:00:00Z

func setup(t *testing.T) (*chtest.Server, *Store, *ingest.Writer) {
	t.Helper()
	srv := chtest.Start(t)
	ctx := context.Background()
	if err := schema.Apply(ctx, srv.Conn, schema.Options{Database: "q"}, nil); err != nil {
		t.Fatal(err)
	}
	w, err := ingest.New(ingest.Config{Conn: srv.Conn, Database: "q", SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return srv, &Store{Conn: srv.Conn, Database: "q"}, w
}

func write(t *testing.T, w *ingest.Writer, table string, rows ...[]any) {
	t.Helper()
	if ok, err := w.WriteNow(context.Background(), table, rows); err != nil || !ok {
		t.Fatalf("write %s: %v %v", table, ok, err)
	}
}

func TestSeriesQueriesAndRollUps(t *testing.T) {
	srv, st, w := setup(t)
	_ = srv
	ctx := context.Background()
	// 5m open interest over one hour: 12 points, value i*10; stored twice (re-ingest) with a later version.
	for v := int64(1); v <= 2; v++ {
		var rows [][]any
		for i := int64(0); i < 12; i++ {
			rows = append(rows, []any{"binance", "BTCUSDT", "5m", t0 + i*300_000, strings.Repeat("1", 1) + "0.5", "100.25", v})
			rows[i][4] = decStr(i*10) + ".5"
		}
		write(t, w, schema.OpenInterest, rows...)
	}
	r := Range{Exchange: "binance", Symbol: "BTCUSDT", Period: "5m", From: t0, To: t0 + 3_600_000}
	oi, err := st.OpenInterest(ctx, r)
	if err != nil || len(oi) != 12 || oi[3].OpenInterest != "30.5" || oi[3].Time != t0+900_000 || oi[0].OpenInterestValue != "100.25" {
		t.Fatalf("5m OI: %v %+v", err, oi)
	}
	r.Period = "15m" // rolled up: last value of each 15 minutes
	oi, err = st.OpenInterest(ctx, r)
	if err != nil || len(oi) != 4 || oi[0].OpenInterest != "20.5" || oi[3].OpenInterest != "110.5" {
		t.Fatalf("15m OI: %v %+v", err, oi)
	}
	r.Period = "1d"
	r.From, r.To = t0, t0+5*86_400_000
	if oi, err = st.OpenInterest(ctx, r); err != nil || len(oi) != 1 || oi[0].OpenInterest != "110.5" {
		t.Fatalf("1d OI: %v %+v", err, oi)
	}
	// With 1h stored too, 1d reads the coarsest stored period that divides it (1h); 15m still reads 5m, since 1h
	// does not divide 15m; a period stored only outside the range is not picked.
	write(t, w, schema.OpenInterest, []any{"binance", "BTCUSDT", "1h", t0, "999.5", "1", int64(1)},
		[]any{"binance", "BTCUSDT", "1h", t0 + 10*86_400_000, "777.5", "1", int64(1)})
	if oi, err = st.OpenInterest(ctx, r); err != nil || len(oi) != 1 || oi[0].OpenInterest != "999.5" {
		t.Fatalf("1d OI from the stored 1h: %v %+v", err, oi)
	}
	if oi, err = st.OpenInterest(ctx, Range{Exchange: "binance", Symbol: "BTCUSDT", Period: "15m", From: t0, To: t0 + 3_600_000}); err != nil || len(oi) != 4 || oi[3].OpenInterest != "110.5" {
		t.Fatalf("15m OI with 1h stored: %v %+v", err, oi)
	}
	if oi, err = st.OpenInterest(ctx, Range{Exchange: "binance", Symbol: "BTCUSDT", Period: "1d", From: t0 + 86_400_000, To: t0 + 5*86_400_000}); err != nil || len(oi) != 0 {
		t.Fatalf("1d OI over days without data: %v %+v", err, oi)
	}
	// No stored period divides 4m... and nothing stored for another symbol: empty, not an error.
	if oi, err = st.OpenInterest(ctx, Range{Exchange: "binance", Symbol: "ETHUSDT", Period: "1h", From: t0, To: t0 + 3_600_000}); err != nil || len(oi) != 0 {
		t.Fatalf("unknown symbol: %v %+v", err, oi)
	}
	if _, err = st.OpenInterest(ctx, Range{Exchange: "binance", Symbol: "BTCUSDT", Period: "5m", From: t0, To: t0 + 365*86_400_000}); !errors.Is(err, ErrTooManyPoints) {
		t.Fatalf("a year of 5m: %v, want ErrTooManyPoints", err)
	}

	// Taker volume: 5m buys 1.1 and sells 0.9 each; a 1h bucket sums 12 of them.
	var tv [][]any
	for i := int64(0); i < 12; i++ {
		tv = append(tv, []any{"okx", "SWAP", "BTC-USDT-SWAP", "5m", t0 + i*300_000, "1.1", "0.9", "1.22222222", int64(1)})
	}
	write(t, w, schema.TakerVolume, tv...)
	pts, err := st.TakerVolume(ctx, Range{Exchange: "okx", Symbol: "BTC-USDT-SWAP", Period: "1h", From: t0, To: t0 + 3_600_000}, "SWAP")
	if err != nil || len(pts) != 1 || pts[0].BuyVolume != "13.2" || pts[0].SellVolume != "10.8" || pts[0].BuySellRatio != "1.22222222" {
		t.Fatalf("taker 1h: %v %+v", err, pts)
	}
	// Large volumes: Decimal(38, 18) / Decimal(38, 18) overflows Decimal128 once the dividend passes about 170, so the
	// ratio is divided in Decimal256 (1100.5 / 900.25 = 1.2224382116...).
	tv = tv[:0]
	for i := int64(0); i < 12; i++ {
		tv = append(tv, []any{"okx", "SWAP", "ETH-USDT-SWAP", "5m", t0 + i*300_000, "1100.5", "900.25", "1.22243821", int64(1)})
	}
	write(t, w, schema.TakerVolume, tv...)
	pts, err = st.TakerVolume(ctx, Range{Exchange: "okx", Symbol: "ETH-USDT-SWAP", Period: "1h", From: t0, To: t0 + 3_600_000}, "SWAP")
	if err != nil || len(pts) != 1 || pts[0].BuyVolume != "13206" || pts[0].SellVolume != "10803" || pts[0].BuySellRatio != "1.22243821" {
		t.Fatalf("taker 1h, large volumes: %v %+v", err, pts)
	}

	// Long/short: kinds are separate series.
	write(t, w, schema.LongShortRatio,
		[]any{"binance", "BTCUSDT", "accounts", "1h", t0, "1.5", "0.6", "0.4", int64(1)},
		[]any{"binance", "BTCUSDT", "top_positions", "1h", t0, "0.6666", "0.4", "0.6", int64(1)})
	ls, err := st.LongShortRatio(ctx, Range{Exchange: "binance", Symbol: "BTCUSDT", Period: "4h", From: t0, To: t0 + 4*3_600_000}, "top_positions")
	if err != nil || len(ls) != 1 || ls[0].LongShortRatio != "0.6666" || ls[0].ShortRatio != "0.6" {
		t.Fatalf("long/short: %v %+v", err, ls)
	}

	// Funding: three 8h settlements in a day add up.
	write(t, w, schema.FundingRates,
		[]any{"binance", "BTCUSDT", t0, "0.0001", "65000.1", int64(1)},
		[]any{"binance", "BTCUSDT", t0 + 8*3_600_000, "-0.00005", nil, int64(1)},
		[]any{"binance", "BTCUSDT", t0 + 16*3_600_000, "0.0002", "65100", int64(1)})
	fr, err := st.FundingRate(ctx, Range{Exchange: "binance", Symbol: "BTCUSDT", Period: "1d", From: t0, To: t0 + 86_400_000})
	if err != nil || len(fr) != 1 || fr[0].Rate != "0.00025" || fr[0].Settlements != 3 || fr[0].LastRate != "0.0002" || fr[0].MarkPrice != "65100" {
		t.Fatalf("funding 1d: %v %+v", err, fr)
	}
	fr, err = st.FundingRate(ctx, Range{Exchange: "binance", Symbol: "BTCUSDT", Period: "1h", From: t0, To: t0 + 86_400_000})
	if err != nil || len(fr) != 3 || fr[1].Rate != "-0.00005" || fr[1].MarkPrice != "" {
		t.Fatalf("funding 1h: %v %+v", err, fr)
	}
}

func decStr(n int64) string { return strconv.FormatInt(n, 10) }

func candleRows(n int, closedUntil int) [][]any {
	var rows [][]any
	for i := 0; i < n; i++ {
		p := 100 + i
		rows = append(rows, []any{"binance", "SPOT", "BTCUSDT", t0 + int64(i)*60_000,
			decStr(int64(p)), decStr(int64(p + 2)), decStr(int64(p - 1)), decStr(int64(p + 1)), "0.5", "50.25", uint64(3), i < closedUntil, int64(1)})
	}
	return rows
}

func TestCandlesRollUp(t *testing.T) {
	_, st, w := setup(t)
	ctx := context.Background()
	write(t, w, schema.Candles1m, candleRows(120, 120)...)
	cs, err := st.Candles(ctx, "binance", "SPOT", "BTCUSDT", "1h", t0+2*3_600_000-1, 10)
	if err != nil || len(cs) != 2 {
		t.Fatalf("1h: %v %+v", err, cs)
	}
	c := cs[1]
	if c.OpenTime != t0+3_600_000 || c.Open != "160" || c.High != "221" || c.Low != "159" || c.Close != "220" ||
		c.Volume != "30" || c.QuoteVolume != "3015" || c.Trades != 180 || !c.Closed {
		t.Fatalf("second hour: %+v", c)
	}
	// limit counts back from end.
	cs, err = st.Candles(ctx, "binance", "SPOT", "BTCUSDT", "15m", t0+2*3_600_000-1, 3)
	if err != nil || len(cs) != 3 || cs[0].OpenTime != t0+75*60_000 {
		t.Fatalf("15m limit 3: %v %+v", err, cs)
	}
}

// queryTimeHours rolls candles_1m up to hours at query time, the reference the hourly roll-up must equal.
func queryTimeHours(t *testing.T, st *Store, symbol string) []string {
	t.Helper()
	var out []string
	err := st.scan(context.Background(), `SELECT concat(toString(intDiv(toUnixTimestamp64Milli(open_time), 3600000)), ' ',
    toString(argMin(open, open_time)), ' ', toString(max(high)), ' ', toString(min(low)), ' ', toString(argMax(close, open_time)), ' ',
    toString(sum(volume)), ' ', toString(sum(quote_volume)), ' ', toString(sum(trades)), ' ', toString(min(closed)))
FROM q.candles_1m FINAL WHERE symbol = ? GROUP BY intDiv(toUnixTimestamp64Milli(open_time), 3600000) ORDER BY 1`, []any{symbol},
		func(rows driver.Rows) error {
			var v string
			if err := rows.Scan(&v); err != nil {
				return err
			}
			out = append(out, v)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func hourStrings(cs []HistoryCandle) []string {
	var out []string
	for _, c := range cs {
		out = append(out, strings.Join([]string{decStr(c.OpenTime / 3_600_000), c.Open, c.High, c.Low, c.Close, c.Volume, c.QuoteVolume,
			strconv.FormatUint(c.Trades, 10), strconv.FormatBool(c.Closed)}, " "))
	}
	return out
}

// Hourly candles come from candles_1h; re-ingested minutes (the forming minute replaced when it closes, backfill
// over stored minutes, a spool replay) replace their earlier copy in the hour instead of adding to it.
func TestHourlyRollupNeverDoubleCounts(t *testing.T) {
	_, st, w := setup(t)
	ctx := context.Background()
	// Three hours, stored forming first, then all of it again closed with other prices and a later version, then
	// the middle hour a third time (a replay of the same rows).
	forming := candleRows(180, 0)
	write(t, w, schema.Candles1m, forming...)
	closed := candleRows(180, 180)
	for _, r := range closed {
		r[4], r[12] = "99", int64(2)
	}
	write(t, w, schema.Candles1m, closed...)
	write(t, w, schema.Candles1m, closed[60:120]...)
	// A gap filled later: the last minute of the first hour missing, then backfilled alone.
	var gap [][]any
	for _, r := range candleRows(60, 60) {
		r[2], r[12] = "ETHUSDT", int64(1)
		gap = append(gap, r)
	}
	write(t, w, schema.Candles1m, gap[:59]...)
	write(t, w, schema.Candles1m, gap[59])

	for _, sym := range []string{"BTCUSDT", "ETHUSDT"} {
		cs, err := st.Candles(ctx, "binance", "SPOT", sym, "1h", t0+3*3_600_000-1, 10)
		if err != nil {
			t.Fatal(err)
		}
		got, want := hourStrings(cs), queryTimeHours(t, st, sym)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s hourly roll-up:\n%s\nwant (query time from candles_1m):\n%s", sym, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	cs, err := st.Candles(ctx, "binance", "SPOT", "BTCUSDT", "1h", t0+3*3_600_000-1, 10)
	if err != nil || len(cs) != 3 || cs[1].Volume != "30" || cs[1].Trades != 180 || cs[1].Open != "99" || !cs[1].Closed {
		t.Fatalf("second hour after re-ingest: %v %+v (want volume 30, 180 trades, open 99, closed)", err, cs)
	}
	// Two-hour candles add up hourly rows.
	if cs, err = st.Candles(ctx, "binance", "SPOT", "BTCUSDT", "2h", t0+2*3_600_000, 2); err != nil || len(cs) != 2 || cs[0].Volume != "60" || cs[1].Volume != "30" {
		t.Fatalf("2h: %v %+v", err, cs)
	}
}

// The migration fills candles_1h from minutes stored before it (any writer, even plain SQL).
func TestRollupFillsFromStoredMinutes(t *testing.T) {
	srv, st, _ := setup(t)
	ctx := context.Background()
	if err := srv.Conn.Exec(ctx, `INSERT INTO q.candles_1m SELECT 'okx', 'SWAP', 'BTC-USDT-SWAP',
    fromUnixTimestamp64Milli(toInt64(?) + number * 60000, 'UTC'), 100 + number, 110 + number, 90, 105, 1.5, 150, 2, true,
    fromUnixTimestamp64Milli(1, 'UTC') FROM numbers(150)`, t0); err != nil {
		t.Fatal(err)
	}
	if err := srv.Conn.Exec(ctx, schema.RollupCandles1h("q", "")); err != nil {
		t.Fatal(err)
	}
	cs, err := st.Candles(ctx, "okx", "SWAP", "BTC-USDT-SWAP", "1h", t0+2*3_600_000, 3)
	if err != nil || len(cs) != 3 || cs[0].Open != "100" || cs[0].High != "169" || cs[0].Close != "105" || cs[0].Volume != "90" ||
		cs[2].Volume != "45" || cs[2].Trades != 60 {
		t.Fatalf("filled hours: %v %+v", err, cs)
	}
}

func TestExportFormats(t *testing.T) {
	srv, _, w := setup(t)
	write(t, w, schema.Candles1m, candleRows(100, 100)...)
	e := &Exporter{HTTPAddr: srv.HTTPAddr, Database: "q"}
	ctx := context.Background()
	req := ExportRequest{Dataset: "candles_1m", Exchange: "binance", Symbol: "BTCUSDT", From: t0 + 10*60_000, To: t0 + 20*60_000}

	var buf bytes.Buffer
	req.Format = "csv"
	if _, err := e.Export(ctx, &buf, req); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 11 || !strings.HasPrefix(lines[0], `"exchange","market_type","symbol","open_time","open"`) ||
		!strings.Contains(lines[1], `"2026-01-01 00:10:00.000",110,112,109,111,0.5,50.25,3,true`) {
		t.Fatalf("csv:\n%s", buf.String())
	}
	buf.Reset()
	req.Format = "jsonl"
	if _, err := e.Export(ctx, &buf, req); err != nil {
		t.Fatal(err)
	}
	jl := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var first map[string]any
	if len(jl) != 10 || json.Unmarshal([]byte(jl[0]), &first) != nil || first["symbol"] != "BTCUSDT" {
		t.Fatalf("jsonl:\n%s", buf.String())
	}
	buf.Reset()
	req.Format = "parquet"
	if _, err := e.Export(ctx, &buf, req); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if len(b) < 8 || string(b[:4]) != "PAR1" || string(b[len(b)-4:]) != "PAR1" {
		t.Fatalf("parquet: %d bytes, no PAR1 magic", len(b))
	}
	// Values are bound as parameters: an injection attempt matches nothing.
	buf.Reset()
	req.Format, req.Symbol = "csv", "x' OR 1=1 --"
	if _, err := e.Export(ctx, &buf, req); err != nil || strings.Count(strings.TrimSpace(buf.String()), "\n") != 0 {
		t.Fatalf("injection: %v\n%s", err, buf.String())
	}
	if _, err := e.Export(ctx, &buf, ExportRequest{Dataset: "users", Format: "csv"}); err == nil {
		t.Fatal("unknown dataset accepted")
	}
}
