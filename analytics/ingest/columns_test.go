package ingest

import (
	"context"
	"errors"
	"testing"

	"github.com/exhub/exhub/analytics/chtest"
	"github.com/exhub/exhub/analytics/schema"
)

// TestColumnPathWritesExactValues writes decimals through the column-wise path and reads them back with toString:
// every value must be stored exactly; a batch with a value that is not an exact Decimal(38, 18) is rejected whole.
func TestColumnPathWritesExactValues(t *testing.T) {
	srv := chtest.Start(t)
	ctx := context.Background()
	if err := schema.Apply(ctx, srv.Conn, schema.Options{Database: "cp"}, nil); err != nil {
		t.Fatal(err)
	}
	w, err := New(Config{Conn: srv.Conn, Database: "cp", SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	// ClickHouse's toString of a Decimal drops trailing zeros.
	cases := [][3]string{ // price, qty, quote_qty as sent
		{"65000.1", "0.002", "130.0002"},
		{"-0.000000000000000001", "99999999999999999999.999999999999999999", "-12345678901234567890.123456789012345678"},
		{"0", "18446744073709551616", "170141183460469231.731687303715884105"},
		{"00012.3400", "+5", "1.000000000000000000000"},
	}
	want := [][3]string{
		{"65000.1", "0.002", "130.0002"},
		{"-0.000000000000000001", "99999999999999999999.999999999999999999", "-12345678901234567890.123456789012345678"},
		{"0", "18446744073709551616", "170141183460469231.731687303715884105"},
		{"12.34", "5", "1"},
	}
	rows := make([][]any, len(cases))
	for i, c := range cases {
		rows[i] = []any{"binance", "SWAP", "BTCUSDT", int64(1_700_000_000_000 + i), string(rune('a' + i)), c[0], c[1], c[2], "sell", int64(1)}
	}
	if stored, err := w.WriteNow(ctx, schema.Trades, rows); err != nil || !stored {
		t.Fatalf("stored %v, err %v", stored, err)
	}
	if n := w.slowBatches.Load(); n != 0 {
		t.Fatalf("%d batches took the row-by-row path: clickhouse-go's Decimal column layout changed", n)
	}
	q, err := srv.Conn.Query(ctx, "SELECT trade_id, toString(price), toString(qty), toString(quote_qty), toString(side), toUnixTimestamp64Milli(time) FROM cp.trades ORDER BY trade_id")
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	i := 0
	for ; q.Next(); i++ {
		var id, p, qty, qq, side string
		var ms int64
		if err := q.Scan(&id, &p, &qty, &qq, &side, &ms); err != nil {
			t.Fatal(err)
		}
		if got := [3]string{p, qty, qq}; got != want[i] || side != "sell" || ms != 1_700_000_000_000+int64(i) {
			t.Errorf("row %d (%s): got %v %s %d, want %v sell %d", i, id, got, side, ms, want[i], 1_700_000_000_000+i)
		}
	}
	if i != len(want) {
		t.Fatalf("%d rows read back, want %d", i, len(want))
	}

	for _, bad := range []string{"0.0000000000000000001", "100000000000000000000", "1,5", "", "NaN"} {
		row := []any{"binance", "SWAP", "BTCUSDT", int64(1_700_000_001_000), "bad", "1", bad, "1", "buy", int64(1)}
		_, err := w.WriteNow(ctx, schema.Trades, [][]any{tradeRow(1), row})
		if !errors.Is(err, errBadRow) {
			t.Errorf("qty %q: err %v, want a bad row", bad, err)
		}
	}
	var n uint64
	if err := srv.Conn.QueryRow(ctx, "SELECT count() FROM cp.trades").Scan(&n); err != nil || n != uint64(len(want)) {
		t.Fatalf("%d rows after the bad batches (%v), want %d", n, err, len(want))
	}
	if st := w.Stats(); st.Rejected != 10 || st.Spooled != 0 {
		t.Fatalf("stats %+v: want 10 rejected, 0 spooled", st)
	}
}
