package storetest

import (
	"strings"
	"testing"
)

func TestMissingBinariesNameTheInstallCommand(t *testing.T) {
	t.Setenv(EnvBin, t.TempDir())
	_, err := binDir()
	if err == nil || !strings.Contains(err.Error(), "sudo scripts/apt-deps.sh") {
		t.Fatalf("binDir with no binaries: %v; want the install command", err)
	}
}

func TestWithDatabase(t *testing.T) {
	got, err := withDatabase("postgres://u:p@127.0.0.1:5432/postgres?sslmode=disable", "t1")
	if err != nil || got != "postgres://u:p@127.0.0.1:5432/t1?sslmode=disable" {
		t.Fatalf("url: %q %v", got, err)
	}
	got, err = withDatabase("host=127.0.0.1 port=5432 user=u dbname=postgres", "t1")
	if err != nil || got != "host=127.0.0.1 port=5432 user=u dbname=postgres dbname=t1" {
		t.Fatalf("key=value: %q %v", got, err)
	}
}

// The cluster (or the server EXHUB_TEST_POSTGRES_DSN names) hands out distinct, empty databases.
func TestPostgresGivesFreshDatabases(t *testing.T) {
	a, b := Postgres(t), Postgres(t)
	if a == b {
		t.Fatalf("two calls returned the same database %q", a)
	}
	if err := adminExec(t.Context(), a, "CREATE TABLE t (x int)"); err != nil {
		t.Fatal(err)
	}
	if err := adminExec(t.Context(), b, "CREATE TABLE t (x int)"); err != nil {
		t.Fatalf("second database is not empty or not separate: %v", err)
	}
}

func TestMain(m *testing.M) { Main(m) }
