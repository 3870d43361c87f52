package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// migrations holds one ordered set of SQL files, one file per area, written so both engines run them unchanged.
//
//go:embed migrations/*.sql
var migrations embed.FS

// MigrationTable is the table goose records applied versions in.
const MigrationTable = "store_migrations"

// migrationLockID is the PostgreSQL advisory lock replicas take while migrating (any constant unique to exhub).
const migrationLockID int64 = 0x65786875625f7374 // "exhub_st"

// migrate applies pending migrations. On PostgreSQL it holds a session advisory lock, so replicas starting together
// run them once, one after the other; on SQLite the single writer connection and SQLite's file lock do the same.
func (s *Store) migrate(ctx context.Context, cfg Config) error {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	dialect := goose.DialectSQLite3
	opts := []goose.ProviderOption{goose.WithTableName(MigrationTable), goose.WithDisableGlobalRegistry(true)}
	if s.pg {
		dialect = goose.DialectPostgres
		const probe = time.Second
		tries := uint64(cfg.MigrationLockTimeout / probe)
		locker, err := lock.NewPostgresSessionLocker(
			lock.WithLockID(migrationLockID),
			lock.WithLockTimeout(uint64(probe/time.Second), tries),
			lock.WithUnlockTimeout(uint64(probe/time.Second), 30),
		)
		if err != nil {
			return fmt.Errorf("store: migration lock: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(dialect, s.write, fsys, opts...)
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	res, err := p.Up(ctx)
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	for _, r := range res {
		s.log.Info("store migration applied", "driver", s.Driver(), "version", r.Source.Version, "file", r.Source.Path,
			"duration", r.Duration)
	}
	return nil
}

// SchemaVersion returns the highest applied migration version.
func (s *Store) SchemaVersion(ctx context.Context) (int64, error) {
	var v int64
	err := s.r().row(ctx, "SELECT COALESCE(MAX(version_id), 0) FROM "+MigrationTable+" WHERE is_applied").Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("store: schema version: %w", err)
	}
	return v, nil
}
