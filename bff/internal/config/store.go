package config

import (
	"path/filepath"

	"github.com/exhub/exhub/bff/internal/config/secret"
)

// Store drivers.
const (
	StoreSQLite   = "sqlite"
	StorePostgres = "postgres"
)

// Store is the member database (accounts' data, favorites, preferences, KYC): SQLite by default, PostgreSQL in
// production.
type Store struct {
	// Driver is sqlite or postgres.
	Driver string `yaml:"driver"`
	// DSN is the connection string: for postgres a URL or key=value string (required); for sqlite a file path
	// (relative to the root) or file: URI, empty for exhub.db under data_dir. A secret: EXHUB_STORE_DSN_FILE reads
	// it from a file.
	DSN secret.Secret `yaml:"dsn"`
}

// DefaultStore is SQLite under data_dir.
func DefaultStore() Store { return Store{Driver: StoreSQLite} }

// Validate names each bad key relative to the section.
func (s Store) Validate() error {
	var p Problems
	switch s.Driver {
	case StoreSQLite:
	case StorePostgres:
		if s.DSN.IsZero() {
			p.Add("dsn", "is required with driver postgres (EXHUB_STORE_DSN or EXHUB_STORE_DSN_FILE)")
		}
	default:
		p.Add("driver", "%q is not sqlite or postgres", s.Driver)
	}
	return p.Err()
}

// StoreDSN is the store's data source: the configured DSN, with a relative SQLite path resolved against the root,
// and for SQLite without one, exhub.db in the data directory.
func (c *Config) StoreDSN() secret.Secret {
	if c.Store.Driver != StoreSQLite {
		return c.Store.DSN
	}
	d := c.Store.DSN.Reveal()
	switch {
	case d == "":
		return secret.New(filepath.Join(c.DataPath(), "exhub.db"))
	case len(d) >= 5 && d[:5] == "file:":
		return c.Store.DSN
	default:
		return secret.New(c.resolve(d))
	}
}
