package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// engines runs fn once on SQLite (a temp dir) and once on a fresh PostgreSQL database.
func engines(t *testing.T, fn func(t *testing.T, s *Store)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, openSQLite(t, t.TempDir())) })
	t.Run("postgres", func(t *testing.T) { fn(t, openPostgres(t, storetest.Postgres(t))) })
}

func openSQLite(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(context.Background(), DefaultConfig(dir))
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

func postgresConfig(dsn string) Config {
	cfg := DefaultConfig("")
	cfg.Driver = DriverPostgres
	cfg.DSN = secret.New(dsn)
	cfg.MaxOpenConns = 16
	cfg.MaxIdleConns = 4
	return cfg
}

func openPostgres(t *testing.T, dsn string) *Store {
	t.Helper()
	s, err := Open(context.Background(), postgresConfig(dsn))
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func mustMember(t *testing.T, s *Store, id string) Member {
	t.Helper()
	m, _, err := s.EnsureMember(ctxT(t), NewMember{ID: id, Nickname: "n-" + id, Locale: "en"})
	if err != nil {
		t.Fatalf("EnsureMember(%s): %v", id, err)
	}
	return m
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want %v", err, target)
	}
}

func TestMigrationsFromEmpty(t *testing.T) {
	entries, err := migrations.ReadDir("migrations")
	if err != nil || len(entries) == 0 {
		t.Fatalf("embedded migrations: %v (%d files)", err, len(entries))
	}
	want := int64(len(entries))
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		v, err := s.SchemaVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v != want {
			t.Fatalf("schema version %d, want %d (one per file)", v, want)
		}
		for _, table := range []string{"members", "security_events", "favorites", "preferences", "kyc_applications",
			"kyc_documents", "member_exchange_kyc", "referral_rewards"} {
			var n int
			if err := s.r().row(ctx, "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil || n != 0 {
				t.Fatalf("table %s: count %d, %v", table, n, err)
			}
		}
	})
}

func TestReopenKeepsDataAndSkipsMigrations(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		s := openSQLite(t, dir)
		mustMember(t, s, "a")
		s.Close()
		s2 := openSQLite(t, dir)
		if _, err := s2.Member(ctxT(t), "a"); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(filepath.Join(dir, SQLiteFile))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Fatalf("database file mode %v, want 0600", fi.Mode().Perm())
		}
		var mode string
		if err := s2.w().row(ctxT(t), "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
			t.Fatalf("journal_mode %q, %v; want wal", mode, err)
		}
		var fk int
		if err := s2.r().row(ctxT(t), "PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
			t.Fatalf("reader foreign_keys %d, %v; want 1", fk, err)
		}
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := storetest.Postgres(t)
		s := openPostgres(t, dsn)
		mustMember(t, s, "a")
		s.Close()
		s2 := openPostgres(t, dsn)
		if _, err := s2.Member(ctxT(t), "a"); err != nil {
			t.Fatal(err)
		}
	})
}

// Replicas starting at once against one PostgreSQL: the advisory lock makes one migrate, the others find it done.
func TestConcurrentOpenPostgres(t *testing.T) {
	dsn := storetest.Postgres(t)
	const n = 4
	errs := make(chan error, n)
	stores := make(chan *Store, n)
	for range n {
		go func() {
			s, err := Open(ctxT(t), postgresConfig(dsn))
			if err == nil {
				stores <- s
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("concurrent open: %v", err)
		}
	}
	close(stores)
	for s := range stores {
		v, err := s.SchemaVersion(ctxT(t))
		if err != nil || v == 0 {
			t.Errorf("schema version %d, %v", v, err)
		}
		var rows int
		if err := s.r().row(ctxT(t), "SELECT COUNT(*) FROM "+MigrationTable+" WHERE version_id > 0").Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if int64(rows) != v {
			t.Errorf("%d applied migration rows for version %d: some ran twice", rows, v)
		}
		s.Close()
	}
}

func TestConfigValidate(t *testing.T) {
	ok := DefaultConfig("/tmp/x")
	if err := ok.Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	cases := map[string]func(c *Config){
		"driver":       func(c *Config) { c.Driver = "mysql" },
		"pg no dsn":    func(c *Config) { c.Driver = DriverPostgres },
		"no data dir":  func(c *Config) { *c = DefaultConfig("") },
		"pool":         func(c *Config) { c.MaxOpenConns = 0 },
		"idle":         func(c *Config) { c.MaxIdleConns = c.MaxOpenConns + 1 },
		"busy":         func(c *Config) { c.BusyTimeout = -1 },
		"lock timeout": func(c *Config) { c.MigrationLockTimeout = 0 },
	}
	for name, mutate := range cases {
		c := DefaultConfig("/tmp/x")
		mutate(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", name, c)
		}
	}
	if got := DefaultConfig("/d").sqlitePath(); got != filepath.Join("/d", SQLiteFile) {
		t.Errorf("default sqlite path %q", got)
	}
}

func TestRebind(t *testing.T) {
	s := &Store{pg: true}
	if got := s.rebind("SELECT a FROM t WHERE a = ? AND b IN (?, ?)"); got != "SELECT a FROM t WHERE a = $1 AND b IN ($2, $3)" {
		t.Fatalf("rebind: %q", got)
	}
	s.pg = false
	if got := s.rebind("a = ?"); got != "a = ?" {
		t.Fatalf("sqlite rebind changed the query: %q", got)
	}
}

func isConflict(err error) bool { return errors.Is(err, ErrConflict) }
func isInvalid(err error) bool  { return errors.Is(err, ErrInvalid) }

// Two stores on one SQLite file (two BFF processes on one data dir, say) write at once: busy_timeout and
// immediate transactions make every write wait its turn instead of failing with SQLITE_BUSY.
func TestSQLiteTwoWritersOneFile(t *testing.T) {
	dir := t.TempDir()
	a, b := openSQLite(t, dir), openSQLite(t, dir)
	mustMember(t, a, "m")
	errs := make(chan error, 200)
	for i := range 200 {
		s := a
		if i%2 == 1 {
			s = b
		}
		go func() {
			_, err := s.AddFavorite(ctxT(t), "m", Favorite{Exchange: "okx", MarketType: MarketSpot,
				Symbol: fmt.Sprintf("S%03d-USDT", i)})
			errs <- err
		}()
	}
	for range 200 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent write: %v", err)
		}
	}
	list, err := b.ListFavorites(ctxT(t), "m")
	if err != nil || len(list) != 200 {
		t.Fatalf("%d favorites (%v), want 200", len(list), err)
	}
}
