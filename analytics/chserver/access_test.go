package chserver_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/exhub/exhub/analytics/chserver"
	"github.com/exhub/exhub/analytics/chtest"
)

// refused matches ClickHouse's refusals: missing grant, read-only mode, a constant setting.
var refused = regexp.MustCompile(`Not enough privileges|ACCESS_DENIED|readonly mode|Cannot modify|should not be changed|prohibited`)

// TestAnalystIsReadOnly starts a real server with the analyst password from the environment and checks the
// read-only user over both protocols: it can read the exhub database, and cannot write, drop, create, change its
// settings or read another database; a wrong password is refused.
func TestAnalystIsReadOnly(t *testing.T) {
	const password = "read-only-test-password"
	t.Setenv("EXHUB_CLICKHOUSE_ANALYST_PASSWORD", password) // inherited by the launched server
	srv := chtest.Start(t)
	ctx := context.Background()
	for _, q := range []string{
		"CREATE DATABASE exhub",
		"CREATE TABLE exhub.t (x UInt8) ENGINE = MergeTree ORDER BY x",
		"INSERT INTO exhub.t VALUES (1), (2)",
		"CREATE DATABASE other",
		"CREATE TABLE other.u (x UInt8) ENGINE = MergeTree ORDER BY x",
	} {
		if err := srv.Conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	users, err := os.ReadFile(filepath.Join(srv.DataDir, "exhub-users.xml"))
	if err != nil || strings.Contains(string(users), password) || !strings.Contains(string(users), "<readonly>2</readonly>") {
		t.Fatalf("users file (must hold the password's hash only): %v\n%s", err, users)
	}

	open := func(proto clickhouse.Protocol, addr, pw string) clickhouse.Conn {
		c, err := clickhouse.Open(&clickhouse.Options{Protocol: proto, Addr: []string{addr}, DialTimeout: 5 * time.Second,
			Auth: clickhouse.Auth{Username: "analyst", Password: pw, Database: "exhub"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	for name, c := range map[string]clickhouse.Conn{
		"native": open(clickhouse.Native, srv.TCPAddr, password),
		"http":   open(clickhouse.HTTP, srv.HTTPAddr, password),
	} {
		var n uint64
		if err := c.QueryRow(ctx, "SELECT count() FROM exhub.t").Scan(&n); err != nil || n != 2 {
			t.Fatalf("%s: analyst SELECT: %d %v", name, n, err)
		}
		for _, q := range []string{
			"INSERT INTO exhub.t VALUES (3)",
			"DROP TABLE exhub.t",
			"TRUNCATE TABLE exhub.t",
			"ALTER TABLE exhub.t DELETE WHERE x = 1",
			"CREATE TABLE exhub.v (x UInt8) ENGINE = Memory",
			"DROP DATABASE exhub",
			"SET readonly = 0",
			"SET allow_ddl = 1",
			"SELECT count() FROM other.u",
		} {
			err := c.Exec(ctx, q)
			if testing.Verbose() && err != nil {
				t.Logf("%s: %q: %.120s", name, q, err)
			}
			if err == nil || !refused.MatchString(err.Error()) {
				t.Fatalf("%s: analyst %q: want refused, got %v", name, q, err)
			}
		}
	}
	var n uint64
	if err := srv.Conn.QueryRow(ctx, "SELECT count() FROM exhub.t").Scan(&n); err != nil || n != 2 {
		t.Fatalf("the table changed: %d %v", n, err)
	}
	if err := open(clickhouse.Native, srv.TCPAddr, chserver.DefaultAnalystPassword).Ping(ctx); err == nil ||
		!strings.Contains(err.Error(), "AUTHENTICATION_FAILED") && !strings.Contains(err.Error(), "Authentication failed") {
		t.Fatalf("the demo password still works although another was set: %v", err)
	}
}
