// Package store keeps the BFF's member data: members and their security events, favorites, preferences, KYC and
// referrals. It runs on SQLite (the default, one file under the data dir) or PostgreSQL (production), with one set
// of migrations applied by Open and plain SQL written once for both engines (see docs/decisions/0007-store.md).
//
// Times are stored as Unix microseconds (BIGINT) and money as decimal text, so both engines hold the same values.
// Methods return errors that wrap the sentinels below; API code maps them to problem+json with errors.Is.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Sentinel errors. Every error a method returns for one of these cases wraps the sentinel.
var (
	// ErrNotFound: the member, application or row does not exist.
	ErrNotFound = errors.New("not found")
	// ErrConflict: a concurrent change won (stale version) or the row already exists in a state that forbids this.
	ErrConflict = errors.New("conflict")
	// ErrInvalidTransition: a KYC application cannot move from its state to the one asked.
	ErrInvalidTransition = errors.New("invalid state transition")
	// ErrLimit: a per-member cap (such as the number of favorites) would be exceeded.
	ErrLimit = errors.New("limit reached")
	// ErrInvalid: an argument is malformed (empty id, unknown market type, bad decimal...).
	ErrInvalid = errors.New("invalid argument")
)

// Store is the member database. It is safe for concurrent use.
type Store struct {
	pg bool
	// write runs every write and transaction. On SQLite it is one connection, so writers queue in Go instead of
	// failing with SQLITE_BUSY; on PostgreSQL it is the same pool as read.
	write *sql.DB
	// read runs plain reads. On SQLite a separate pool of read-only connections (WAL lets them run beside the writer).
	read *sql.DB
	log  *slog.Logger
	now  func() time.Time

	rebound sync.Map // query text -> PostgreSQL text with $n placeholders

	// stmts caches SQLite prepared statements per pool and query text (see prepared); nStmts bounds it.
	stmts  sync.Map // stmtKey -> *sql.Stmt
	nStmts atomic.Int32
	// txWant holds queries first run inside a transaction: they are prepared on the writer once it is free (the
	// transaction holds its only connection).
	txWant sync.Map // query text -> struct{}
}

// stmtKey names one cached statement: the pool it is prepared on and its text.
type stmtKey struct {
	db    *sql.DB
	query string
}

// maxStmts bounds the statement cache (the package's queries are a fixed set plus a few filter combinations).
const maxStmts = 256

// Option adjusts Open.
type Option func(*Store)

// WithLogger sets the logger for migrations (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(s *Store) { s.log = l } }

// WithClock sets the clock used for created_at and similar stamps (tests).
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// Open connects, applies pending migrations and returns the store. Close releases it.
func Open(ctx context.Context, cfg Config, opts ...Option) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Store{pg: cfg.Driver == DriverPostgres, log: slog.Default(), now: time.Now}
	for _, o := range opts {
		o(s)
	}
	var err error
	if s.pg {
		err = s.openPostgres(ctx, cfg)
	} else {
		err = s.openSQLite(ctx, cfg)
	}
	if err != nil {
		return nil, err
	}
	if err := s.migrate(ctx, cfg); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) openPostgres(ctx context.Context, cfg Config) error {
	db, err := sql.Open("pgx", cfg.DSN.Reveal())
	if err != nil {
		// pgx's parse errors can quote the DSN: never pass them on.
		return errors.New("store: postgres dsn does not parse")
	}
	db.SetMaxOpenConns(cfg.MaxOpenConns)
	db.SetMaxIdleConns(cfg.MaxIdleConns)
	db.SetConnMaxLifetime(cfg.ConnMaxLifetime)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return fmt.Errorf("store: connect to postgres: %w", redactConnErr(err))
	}
	s.write, s.read = db, db
	return nil
}

// redactConnErr keeps what helps (the PostgreSQL error code and message, a network failure) and drops pgx's
// connect-error text, which may carry the configured DSN.
func redactConnErr(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return fmt.Errorf("%s (SQLSTATE %s)", pgErr.Message, pgErr.Code)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		if u := ce.Unwrap(); u != nil {
			return u
		}
	}
	return errors.New("connection failed")
}

func (s *Store) openSQLite(ctx context.Context, cfg Config) error {
	path := cfg.sqlitePath()
	if !strings.HasPrefix(path, "file:") {
		if dir := filepath.Dir(path); dir != "" {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return fmt.Errorf("store: sqlite directory: %w", err)
			}
		}
	}
	base := path
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(cfg.BusyTimeout.Milliseconds(), 10)+")")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	w := url.Values{"_pragma": append([]string{"journal_mode(WAL)"}, q["_pragma"]...), "_txlock": {"immediate"}}
	r := url.Values{"_pragma": append(append([]string{}, q["_pragma"]...), "query_only(1)")}

	write, err := sql.Open("sqlite", base+sep+w.Encode())
	if err != nil {
		return fmt.Errorf("store: open sqlite: %w", err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	// The writer connects first: it switches the file to WAL before any reader opens it.
	if err := write.PingContext(ctx); err != nil {
		_ = write.Close()
		return fmt.Errorf("store: open sqlite %s: %w", path, err)
	}
	if !strings.HasPrefix(path, "file:") {
		// Member data: readable by the BFF's user only (SQLite gives the -wal and -shm files the same mode).
		if err := os.Chmod(path, 0o600); err != nil {
			_ = write.Close()
			return fmt.Errorf("store: sqlite file mode: %w", err)
		}
	}
	read, err := sql.Open("sqlite", base+sep+r.Encode())
	if err != nil {
		_ = write.Close()
		return fmt.Errorf("store: open sqlite: %w", err)
	}
	read.SetMaxOpenConns(cfg.MaxOpenConns)
	read.SetMaxIdleConns(cfg.MaxIdleConns)
	read.SetConnMaxLifetime(cfg.ConnMaxLifetime)
	s.write, s.read = write, read
	return nil
}

// Close closes the connections.
func (s *Store) Close() {
	s.stmts.Range(func(_, v any) bool {
		_ = v.(*sql.Stmt).Close()
		return true
	})
	if s.read != nil && s.read != s.write {
		_ = s.read.Close()
	}
	if s.write != nil {
		_ = s.write.Close()
	}
}

// Driver reports "sqlite" or "postgres".
func (s *Store) Driver() string {
	if s.pg {
		return DriverPostgres
	}
	return DriverSQLite
}

// Ping checks the database answers (readiness).
func (s *Store) Ping(ctx context.Context) error { return s.write.PingContext(ctx) }

// ---- query helpers --------------------------------------------------------------------------------------------

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// q runs SQL written with "?" placeholders on either engine.
type q struct {
	s  *Store
	db querier
}

func (s *Store) r() q { return q{s, s.read} }
func (s *Store) w() q { return q{s, s.write} }

func (x q) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := x.prepared(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return x.db.ExecContext(ctx, x.s.rebind(query), args...)
}

func (x q) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := x.prepared(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return x.db.QueryContext(ctx, x.s.rebind(query), args...)
}

func (x q) row(ctx context.Context, query string, args ...any) *sql.Row {
	if st := x.prepared(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return x.db.QueryRowContext(ctx, x.s.rebind(query), args...)
}

// prepared is the cached prepared statement of query on SQLite (nil: run the text). modernc's driver parses and
// plans every statement it is given as text, which cost more CPU than running it on the order path; a statement
// prepared once per pool is reused on each of its connections (database/sql prepares it on a connection the first
// time it runs there), and inside a transaction through Tx.StmtContext (closed with the transaction). PostgreSQL
// needs none of this: pgx caches prepared statements per connection itself.
func (x q) prepared(ctx context.Context, query string) *sql.Stmt {
	if x.s.pg {
		return nil
	}
	var db *sql.DB
	var tx *sql.Tx
	switch v := x.db.(type) {
	case *sql.DB:
		db = v
	case *sql.Tx:
		db, tx = x.s.write, v
	default:
		return nil
	}
	k := stmtKey{db, query}
	st, ok := x.s.stmts.Load(k)
	if !ok {
		if tx != nil {
			x.s.txWant.Store(query, struct{}{})
			return nil
		}
		if x.s.nStmts.Load() >= maxStmts {
			return nil
		}
		p, err := db.PrepareContext(ctx, query)
		if err != nil {
			return nil // the plain call reports the error
		}
		var loaded bool
		if st, loaded = x.s.stmts.LoadOrStore(k, p); loaded {
			_ = p.Close()
		} else {
			x.s.nStmts.Add(1)
		}
	}
	if tx != nil {
		return tx.StmtContext(ctx, st.(*sql.Stmt))
	}
	return st.(*sql.Stmt)
}

// rebind turns "?" placeholders into PostgreSQL's $1, $2... Queries in this package hold no "?" inside literals.
func (s *Store) rebind(query string) string {
	if !s.pg {
		return query
	}
	if v, ok := s.rebound.Load(query); ok {
		return v.(string)
	}
	var b strings.Builder
	b.Grow(len(query) + 8)
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(query[i])
	}
	out := b.String()
	s.rebound.Store(query, out)
	return out
}

// tx runs fn in one transaction on the writer; it commits when fn returns nil.
func (s *Store) tx(ctx context.Context, fn func(x q) error) error {
	t, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	if err := fn(q{s, t}); err != nil {
		_ = t.Rollback()
		return err
	}
	if err := t.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	s.prepareWanted(ctx)
	return nil
}

// prepareWanted prepares on the writer the queries a transaction ran as text (SQLite), for the next transactions.
func (s *Store) prepareWanted(ctx context.Context) {
	s.txWant.Range(func(k, _ any) bool {
		s.txWant.Delete(k)
		_ = s.w().prepared(ctx, k.(string))
		return true
	})
}

// lockMember takes the member's row for the rest of the transaction (PostgreSQL; SQLite's single writer already
// serialises transactions) so per-member caps hold under concurrent requests. ErrNotFound when there is no member.
func (x q) lockMember(ctx context.Context, memberID string) error {
	query := "SELECT id FROM members WHERE id = ?"
	if x.s.pg {
		query += " FOR UPDATE"
	}
	var id string
	if err := x.row(ctx, query, memberID).Scan(&id); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: member %q", ErrNotFound, memberID)
		}
		return fmt.Errorf("store: lock member: %w", err)
	}
	return nil
}

// isUnique reports a unique or primary key violation on either engine.
func isUnique(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505"
	}
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) {
		c := sqErr.Code()
		return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// isForeignKey reports a foreign key violation on either engine.
func isForeignKey(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23503"
	}
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) {
		return sqErr.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
	}
	return false
}

// ---- value helpers ----------------------------------------------------------------------------------------------

func newID() string { return uuid.Must(uuid.NewV7()).String() }

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

func nullMicros(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromMicros(v.Int64)
}

func (s *Store) stamp() time.Time { return s.now().UTC().Truncate(time.Microsecond) }
