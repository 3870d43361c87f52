package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/exhub/exhub/bff/internal/config/secret"
)

// Drivers accepted in Config.Driver.
const (
	DriverSQLite   = "sqlite"
	DriverPostgres = "postgres"
)

// SQLiteFile is the database file name inside the data directory when no DSN is given.
const SQLiteFile = "exhub.sqlite"

// Config selects and tunes the database. The zero value is not usable: start from DefaultConfig.
//
// Suggested environment names for the BFF's config loader: EXHUB_STORE_DRIVER, EXHUB_STORE_DSN and
// EXHUB_STORE_DSN_FILE (a file holding the DSN, for a PostgreSQL password kept out of the environment).
type Config struct {
	// Driver is "sqlite" (default) or "postgres".
	Driver string `yaml:"driver"`
	// DSN is the data source. SQLite: a file path (or a "file:" URI); empty means <data_dir>/exhub.sqlite.
	// PostgreSQL: a URL or key=value string as pgx reads it; required. It may hold a password, so it never prints.
	DSN secret.Secret `yaml:"dsn"`
	// MaxOpenConns bounds the connection pool (PostgreSQL) or the reader pool (SQLite; SQLite writes always go through
	// one connection).
	MaxOpenConns int `yaml:"max_open_conns"`
	// MaxIdleConns bounds idle connections kept open.
	MaxIdleConns int `yaml:"max_idle_conns"`
	// ConnMaxLifetime closes connections older than this (0 keeps them).
	ConnMaxLifetime time.Duration `yaml:"conn_max_lifetime"`
	// BusyTimeout is how long SQLite waits for a lock held by another process before SQLITE_BUSY.
	BusyTimeout time.Duration `yaml:"busy_timeout"`
	// MigrationLockTimeout is how long a PostgreSQL replica waits for another replica's migrations to finish.
	MigrationLockTimeout time.Duration `yaml:"migration_lock_timeout"`

	// dataDir is where the default SQLite file lives (set by DefaultConfig).
	dataDir string
}

// DefaultConfig is SQLite in dataDir with small pools.
func DefaultConfig(dataDir string) Config {
	return Config{
		Driver:               DriverSQLite,
		MaxOpenConns:         8,
		MaxIdleConns:         4,
		ConnMaxLifetime:      30 * time.Minute,
		BusyTimeout:          10 * time.Second,
		MigrationLockTimeout: 5 * time.Minute,
		dataDir:              dataDir,
	}
}

// WithDataDir returns c with the directory the default SQLite file lives in (for a Config built without
// DefaultConfig, such as one decoded from YAML onto a zero value).
func (c Config) WithDataDir(dir string) Config {
	c.dataDir = dir
	return c
}

// Validate reports the first invalid field, naming its YAML key.
func (c Config) Validate() error {
	switch c.Driver {
	case DriverSQLite:
		if c.DSN.IsZero() && c.dataDir == "" {
			return errors.New("store.dsn: empty and no data_dir to put " + SQLiteFile + " in")
		}
	case DriverPostgres:
		if c.DSN.IsZero() {
			return errors.New("store.dsn: required for driver postgres")
		}
	default:
		return fmt.Errorf("store.driver: %q is neither %q nor %q", c.Driver, DriverSQLite, DriverPostgres)
	}
	if c.MaxOpenConns < 1 {
		return fmt.Errorf("store.max_open_conns: %d, want at least 1", c.MaxOpenConns)
	}
	if c.MaxIdleConns < 0 || c.MaxIdleConns > c.MaxOpenConns {
		return fmt.Errorf("store.max_idle_conns: %d, want 0 to max_open_conns (%d)", c.MaxIdleConns, c.MaxOpenConns)
	}
	if c.ConnMaxLifetime < 0 {
		return errors.New("store.conn_max_lifetime: negative")
	}
	if c.BusyTimeout < 0 {
		return errors.New("store.busy_timeout: negative")
	}
	if c.MigrationLockTimeout < time.Second {
		return fmt.Errorf("store.migration_lock_timeout: %s, want at least 1s", c.MigrationLockTimeout)
	}
	return nil
}

// sqlitePath is the file the SQLite DSN names (the default file when DSN is empty).
func (c Config) sqlitePath() string {
	if c.DSN.IsZero() {
		return filepath.Join(c.dataDir, SQLiteFile)
	}
	return c.DSN.Reveal()
}
