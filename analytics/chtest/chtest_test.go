package chtest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/analytics/chtest"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

type trade struct {
	symbol string
	ts     time.Time
	price  decimal.Decimal
	qty    decimal.Decimal
	id     uint64
}

// makeTrades builds rows whose prices and sizes use all 18 fractional digits, so any float on the way loses them.
func makeTrades(n int, base time.Time) []trade {
	out := make([]trade, n)
	for i := range n {
		out[i] = trade{
			symbol: []string{"BTCUSDT", "ETHUSDT", "SOLUSDT"}[i%3],
			ts:     base.Add(time.Duration(i) * time.Millisecond),
			price:  decimal.RequireFromString(fmt.Sprintf("%d.%018d", 60000+i%997, 123456789012345678+int64(i))),
			qty:    decimal.RequireFromString(fmt.Sprintf("0.%018d", 100000000000000001+int64(i)*7)),
			id:     uint64(i + 1),
		}
	}
	return out
}

func roundTrip(t *testing.T, conn driver.Conn, db string) {
	ctx := ctxT(t)
	table := db + ".trades"
	if err := conn.Exec(ctx, `CREATE TABLE `+table+` (
		symbol LowCardinality(String),
		ts     DateTime64(3, 'UTC'),
		price  Decimal(38, 18),
		qty    Decimal(38, 18),
		id     UInt64
	) ENGINE = MergeTree ORDER BY (symbol, ts, id)`); err != nil {
		t.Fatalf("create: %v", err)
	}
	base := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	rows := makeTrades(5000, base)
	batch, err := conn.PrepareBatch(ctx, "INSERT INTO "+table)
	if err != nil {
		t.Fatalf("prepare batch: %v", err)
	}
	for _, r := range rows {
		if err := batch.Append(r.symbol, r.ts, r.price, r.qty, r.id); err != nil {
			t.Fatalf("append: %v", err)
		}
	}
	if err := batch.Send(); err != nil {
		t.Fatalf("send: %v", err)
	}

	// Every row comes back exactly: decimals digit for digit, times to the millisecond.
	got, err := conn.Query(ctx, "SELECT symbol, ts, price, qty, id FROM "+table+" ORDER BY id")
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	defer got.Close()
	i := 0
	for got.Next() {
		var r trade
		if err := got.Scan(&r.symbol, &r.ts, &r.price, &r.qty, &r.id); err != nil {
			t.Fatalf("scan: %v", err)
		}
		want := rows[i]
		if r.symbol != want.symbol || !r.ts.Equal(want.ts) || r.price.String() != want.price.String() ||
			r.qty.String() != want.qty.String() || r.id != want.id {
			t.Fatalf("row %d = %+v, want %+v", i, r, want)
		}
		i++
	}
	if err := got.Err(); err != nil {
		t.Fatalf("rows: %v", err)
	}
	if i != len(rows) {
		t.Fatalf("read %d rows, want %d", i, len(rows))
	}

	// Aggregates stay exact decimals on the server. Decimal(38,18) * Decimal(38,18) has scale 36 and overflows
	// Decimal128 silently, so the notional is computed in Decimal256 (Decimal(76, 36)).
	wantQty, wantNotional := decimal.Zero, decimal.Zero
	for _, r := range rows {
		if r.symbol == "ETHUSDT" {
			wantQty = wantQty.Add(r.qty)
			wantNotional = wantNotional.Add(r.price.Mul(r.qty))
		}
	}
	var qty, notional decimal.Decimal
	var last time.Time
	if err := conn.QueryRow(ctx, "SELECT sum(qty), sum(CAST(price AS Decimal(76, 18)) * qty), max(ts) FROM "+table+
		" WHERE symbol = ?", "ETHUSDT").Scan(&qty, &notional, &last); err != nil {
		t.Fatalf("sum: %v", err)
	}
	if !qty.Equal(wantQty) || !notional.Equal(wantNotional) {
		t.Fatalf("sum(qty), sum(price*qty) = %s, %s; want %s, %s", qty, notional, wantQty, wantNotional)
	}
	if want := base.Add(4999 * time.Millisecond); !last.Equal(want) {
		t.Fatalf("max(ts) = %s, want %s", last.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
	}

	// Millisecond boundaries filter exactly. A time.Time bound to a positional `?` is sent with second precision,
	// so millisecond bounds travel as Unix milliseconds.
	var n uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM "+table+
		" WHERE ts >= fromUnixTimestamp64Milli(?, 'UTC') AND ts < fromUnixTimestamp64Milli(?, 'UTC')",
		base.Add(10*time.Millisecond).UnixMilli(), base.Add(20*time.Millisecond).UnixMilli()).Scan(&n); err != nil {
		t.Fatalf("range count: %v", err)
	}
	if n != 10 {
		t.Fatalf("rows in [10ms, 20ms) = %d, want 10", n)
	}
}

func TestNativeAndHTTPRoundTrip(t *testing.T) {
	srv := chtest.Start(t)
	t.Run("native", func(t *testing.T) { roundTrip(t, srv.Conn, srv.NewDatabase(t)) })
	t.Run("http", func(t *testing.T) { roundTrip(t, srv.OpenHTTP(t), srv.NewDatabase(t)) })

	// The plain HTTP interface answers too, and reports the engine version this project pins.
	// No keep-alive: an idle client connection makes the server's shutdown wait for it.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Post(srv.HTTPURL()+"/", "text/plain", strings.NewReader("SELECT version()"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(string(body), "26.7.") {
		t.Fatalf("version over HTTP: %s %q", resp.Status, body)
	}
}

func TestReplacingMergeTreeFinal(t *testing.T) {
	srv := chtest.Start(t)
	db := srv.NewDatabase(t)
	ctx := ctxT(t)
	conn := srv.Conn
	if err := conn.Exec(ctx, `CREATE TABLE `+db+`.funding (
		symbol  LowCardinality(String),
		ts      DateTime64(3, 'UTC'),
		rate    Decimal(38, 18),
		version UInt64
	) ENGINE = ReplacingMergeTree(version) ORDER BY (symbol, ts)`); err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	// Three inserts make three parts; the same key appears in each with a growing version.
	for v, rate := range []string{"0.000100000000000001", "0.000125000000000002", "-0.000050000000000003"} {
		b, err := conn.PrepareBatch(ctx, "INSERT INTO "+db+".funding")
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Append("BTCUSDT", ts, decimal.RequireFromString(rate), uint64(v+1)); err != nil {
			t.Fatal(err)
		}
		if err := b.Append("ETHUSDT", ts.Add(time.Duration(v)*time.Hour), decimal.RequireFromString("0.0001"), uint64(1)); err != nil {
			t.Fatal(err)
		}
		if err := b.Send(); err != nil {
			t.Fatal(err)
		}
	}
	var raw uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM "+db+".funding").Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if raw != 6 {
		t.Fatalf("rows before merge = %d, want 6 (three parts, no merge yet)", raw)
	}
	var rate decimal.Decimal
	var version uint64
	if err := conn.QueryRow(ctx, "SELECT rate, version FROM "+db+".funding FINAL WHERE symbol = 'BTCUSDT'").Scan(&rate, &version); err != nil {
		t.Fatal(err)
	}
	if rate.String() != "-0.000050000000000003" || version != 3 {
		t.Fatalf("FINAL row = %s v%d, want -0.000050000000000003 v3", rate, version)
	}
	var final uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM "+db+".funding FINAL").Scan(&final); err != nil {
		t.Fatal(err)
	}
	if final != 4 {
		t.Fatalf("rows with FINAL = %d, want 4 (1 BTCUSDT + 3 distinct ETHUSDT keys)", final)
	}
	if err := conn.Exec(ctx, "OPTIMIZE TABLE "+db+".funding FINAL"); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, "SELECT count() FROM "+db+".funding").Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if raw != 4 {
		t.Fatalf("rows after OPTIMIZE FINAL = %d, want 4", raw)
	}
}

func TestRestartKeepsData(t *testing.T) {
	dir := t.TempDir()
	first := chtest.StartAt(t, dir)
	ctx := ctxT(t)
	if err := first.Conn.Exec(ctx, "CREATE TABLE default.kept (k UInt32, v Decimal(38, 18), ts DateTime64(3, 'UTC')) ENGINE = MergeTree ORDER BY k"); err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 11, 2, 3, 4, 5, 678_000_000, time.UTC)
	if err := first.Conn.Exec(ctx, "INSERT INTO default.kept VALUES (1, '12345678901234567890.123456789012345678', @ts)",
		clickhouse.DateNamed("ts", ts, clickhouse.MilliSeconds)); err != nil {
		t.Fatal(err)
	}
	firstPID := first.Proc.PID
	first.Stop(t)
	if err := first.Proc.ExitErr(); err != nil {
		t.Logf("first server exit status: %v", err)
	}

	second := chtest.StartAt(t, dir)
	if second.Proc.PID == firstPID {
		t.Fatalf("second server reused pid %d: it was not a new process", firstPID)
	}
	var v decimal.Decimal
	var got time.Time
	if err := second.Conn.QueryRow(ctx, "SELECT v, ts FROM default.kept WHERE k = 1").Scan(&v, &got); err != nil {
		t.Fatalf("read after restart: %v", err)
	}
	if v.String() != "12345678901234567890.123456789012345678" || !got.Equal(ts) {
		t.Fatalf("after restart: %s %s", v, got.Format(time.RFC3339Nano))
	}
}
