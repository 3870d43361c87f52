package config

import (
	"path/filepath"
	"strings"

	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/store"
)

// resolveStore gives the store section its data directory (where the default SQLite file lives) and resolves a
// relative SQLite file path against the root, like every other path of the configuration.
func (c *Config) resolveStore() {
	c.Store = c.Store.WithDataDir(c.DataPath())
	if c.Store.Driver != store.DriverSQLite || c.Store.DSN.IsZero() {
		return
	}
	d := c.Store.DSN.Reveal()
	if strings.HasPrefix(d, "file:") || filepath.IsAbs(d) || d == ":memory:" {
		return
	}
	c.Store.DSN = secret.New(c.resolve(d))
}
