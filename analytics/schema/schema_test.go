package schema

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/exhub/exhub/analytics/chtest"
)

func TestSingleServerDDL(t *testing.T) {
	plan := Plan(Options{Database: "mh"})
	if plan[0] != "CREATE DATABASE IF NOT EXISTS `mh`" {
		t.Fatalf("database statement: %q", plan[0])
	}
	// Database, version table, tables, roll-ups and the statement that fills candles_1h from stored minutes.
	if len(plan) != 2+len(Tables)+len(Rollups)+1 {
		t.Fatalf("%d statements, want %d", len(plan), 2+len(Tables)+len(Rollups)+1)
	}
	if last := plan[len(plan)-1]; !strings.HasPrefix(last, "INSERT INTO `mh`.`candles_1h`") || !strings.Contains(last, "FROM `mh`.`candles_1m` FINAL\nGROUP BY") {
		t.Errorf("roll-up fill: %s", last)
	}
	for _, s := range plan[:len(plan)-1] {
		if !strings.Contains(s, "IF NOT EXISTS") {
			t.Errorf("not idempotent: %s", firstLine(s))
		}
		if strings.Contains(s, "ON CLUSTER") || strings.Contains(s, "Replicated") || strings.Contains(s, "Distributed") {
			t.Errorf("cluster DDL in single mode: %s", s)
		}
	}
	c := CreateTable(Tables[0], Options{Database: "mh"})[0]
	for _, want := range []string{
		"CREATE TABLE IF NOT EXISTS `mh`.`candles_1m`\n(",
		"`open` Decimal(38, 18) COMMENT 'First trade price",
		"`open_time` DateTime64(3, 'UTC')",
		"ENGINE = ReplacingMergeTree(ingested_at)\nPARTITION BY toYYYYMM(open_time)\nORDER BY (exchange, market_type, symbol, open_time)\nSETTINGS non_replicated_deduplication_window = 10000\nCOMMENT 'One-minute",
	} {
		if !strings.Contains(c, want) {
			t.Errorf("candles DDL lacks %q:\n%s", want, c)
		}
	}
}

func TestClusterDDL(t *testing.T) {
	o := Options{Database: "mh", Cluster: "main"}
	tr, _ := Lookup(Trades)
	got := CreateTable(tr, o)
	if len(got) != 2 {
		t.Fatalf("%d statements, want local + distributed", len(got))
	}
	for _, want := range []string{
		"CREATE TABLE IF NOT EXISTS `mh`.`trades_local` ON CLUSTER `main`\n(",
		"ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/mh/trades_local', '{replica}', ingested_at)",
		"ORDER BY (exchange, market_type, symbol, time, trade_id)\nSETTINGS replicated_deduplication_window = 10000\n",
	} {
		if !strings.Contains(got[0], want) {
			t.Errorf("local DDL lacks %q:\n%s", want, got[0])
		}
	}
	wantDist := "CREATE TABLE IF NOT EXISTS `mh`.`trades` ON CLUSTER `main` AS `mh`.`trades_local`\n" +
		"ENGINE = Distributed(`main`, `mh`, `trades_local`, cityHash64(exchange, symbol))"
	if got[1] != wantDist {
		t.Errorf("distributed DDL:\n%s\nwant\n%s", got[1], wantDist)
	}
	plan := Plan(o)
	if plan[0] != "CREATE DATABASE IF NOT EXISTS `mh` ON CLUSTER `main`" {
		t.Errorf("database: %q", plan[0])
	}
	if !strings.Contains(plan[1], "ON CLUSTER `main`") || !strings.Contains(plan[1], "ReplicatedReplacingMergeTree('/clickhouse/exhub/mh/schema_migrations', '{shard}-{replica}', applied_at)") {
		t.Errorf("migrations table: %s", plan[1])
	}
	if len(plan) != 2+2*len(Tables)+2*len(Rollups)+1 {
		t.Errorf("%d statements, want %d", len(plan), 2+2*len(Tables)+2*len(Rollups)+1)
	}
	for _, s := range plan[:len(plan)-1] { // the last fills candles_1h once, through the Distributed tables
		if !strings.Contains(s, "ON CLUSTER `main`") {
			t.Errorf("statement without ON CLUSTER: %s", firstLine(s))
		}
	}
	o.ZooPath = "/ch/{cluster}/{shard}"
	if s := CreateTable(tr, o)[0]; !strings.Contains(s, "'/ch/{cluster}/{shard}/mh/trades_local'") {
		t.Errorf("zoo path not used: %s", s)
	}
}

func TestCommentsEscaped(t *testing.T) {
	if got := str(`it's a \ test`); got != `'it\'s a \\ test'` {
		t.Fatalf("str: %s", got)
	}
	if got := q("we`ird"); got != "`we``ird`" {
		t.Fatalf("q: %s", got)
	}
}

func TestEveryTableHasVersionColumn(t *testing.T) {
	for _, tb := range append(append([]Table{}, Tables...), Rollups...) {
		last := tb.Columns[len(tb.Columns)-1]
		if last.Name != "ingested_at" || last.Type != Time {
			t.Errorf("%s: last column %s %s, want ingested_at %s", tb.Name, last.Name, last.Type, Time)
		}
		for _, c := range tb.Columns {
			if c.Doc == "" {
				t.Errorf("%s.%s has no doc", tb.Name, c.Name)
			}
			if strings.Contains(c.Type, "Float") {
				t.Errorf("%s.%s is a float", tb.Name, c.Name)
			}
		}
	}
}

func TestApplyOnServer(t *testing.T) {
	srv := chtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o := Options{Database: "mh_apply"}
	for i := 0; i < 2; i++ { // the second run is a no-op
		if err := Apply(ctx, srv.Conn, o, nil); err != nil {
			t.Fatalf("apply %d: %v", i, err)
		}
	}
	done, err := Applied(ctx, srv.Conn, o)
	if err != nil || !done[Latest()] || len(done) != len(Migrations) {
		t.Fatalf("applied %v, %v", done, err)
	}
	var n uint64
	if err := srv.Conn.QueryRow(ctx, "SELECT count() FROM mh_apply.schema_migrations").Scan(&n); err != nil || n != uint64(len(Migrations)) {
		t.Fatalf("migration rows %d (%v): a second Apply recorded again", n, err)
	}
	for _, tb := range append(append([]Table{}, Tables...), Rollups...) {
		var engine, sortingKey string
		if err := srv.Conn.QueryRow(ctx, "SELECT engine, sorting_key FROM system.tables WHERE database = 'mh_apply' AND name = ?", tb.Name).Scan(&engine, &sortingKey); err != nil {
			t.Fatalf("%s: %v", tb.Name, err)
		}
		if engine != "ReplacingMergeTree" || "("+sortingKey+")" != tb.OrderBy {
			t.Errorf("%s: engine %s key %s", tb.Name, engine, sortingKey)
		}
		var cols uint64
		if err := srv.Conn.QueryRow(ctx, "SELECT count() FROM system.columns WHERE database = 'mh_apply' AND table = ? AND comment != ''", tb.Name).Scan(&cols); err != nil || cols != uint64(len(tb.Columns)) {
			t.Errorf("%s: %d commented columns (%v), want %d", tb.Name, cols, err, len(tb.Columns))
		}
	}
	// Re-ingesting a row must not duplicate it: the later ingest wins.
	ins := "INSERT INTO mh_apply.funding_rates (exchange, symbol, funding_time, rate, mark_price, ingested_at) VALUES ('okx', 'BTC-USDT-SWAP', fromUnixTimestamp64Milli(1700000000000, 'UTC'), ?, NULL, fromUnixTimestamp64Milli(?, 'UTC'))"
	if err := srv.Conn.Exec(ctx, ins, "0.0001", int64(1)); err != nil {
		t.Fatal(err)
	}
	if err := srv.Conn.Exec(ctx, ins, "0.00012", int64(2)); err != nil {
		t.Fatal(err)
	}
	var rows uint64
	var rate string
	if err := srv.Conn.QueryRow(ctx, "SELECT count(), toString(any(rate)) FROM mh_apply.funding_rates FINAL").Scan(&rows, &rate); err != nil {
		t.Fatal(err)
	}
	if rows != 1 || rate != "0.00012" {
		t.Fatalf("after re-ingest: %d rows, rate %s", rows, rate)
	}
}
