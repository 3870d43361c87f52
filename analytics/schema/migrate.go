package schema

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Options choose where and how the schema is created.
type Options struct {
	// Database holds every table (created when missing). Default "exhub".
	Database string
	// Cluster, when set, creates replicated local tables and Distributed tables ON CLUSTER this cluster (a name
	// from the servers' remote_servers configuration). Empty: a single server.
	Cluster string
	// ZooPath is the replication path prefix in cluster mode; {shard} and {replica} are the servers' macros.
	// Default "/clickhouse/tables/{shard}".
	ZooPath string
}

func (o Options) withDefaults() Options {
	if o.Database == "" {
		o.Database = "exhub"
	}
	if o.ZooPath == "" {
		o.ZooPath = "/clickhouse/tables/{shard}"
	}
	return o
}

// Migration is one schema version. Its statements are idempotent (IF NOT EXISTS), so a migration interrupted
// half-way is simply applied again.
type Migration struct {
	Version uint32
	Name    string
	// Statements builds the SQL for the given options.
	Statements func(o Options) []string
}

// Migrations are every schema version in order. Append only: a released migration never changes.
var Migrations = []Migration{
	{Version: 1, Name: "market history tables", Statements: func(o Options) []string {
		var out []string
		for _, t := range Tables {
			out = append(out, CreateTable(t, o)...)
		}
		return out
	}},
	{Version: 2, Name: "hourly candle roll-up", Statements: func(o Options) []string {
		var out []string
		for _, t := range Rollups {
			out = append(out, CreateTable(t, o)...)
		}
		// Roll up the minutes stored so far; the ingest writer keeps the table current from here on. Run again
		// (an interrupted migration), it stores the same hours with a later version.
		return append(out, RollupCandles1h(o.Database, ""))
	}},
}

// DedupWindow is how many recent insert blocks per table are remembered for insert deduplication: a batch
// replayed from the ingest spool with the token of a block already stored is dropped by the server.
const DedupWindow = 10000

// MigrationsTable records applied versions.
const MigrationsTable = "schema_migrations"

func q(ident string) string { return "`" + strings.ReplaceAll(ident, "`", "``") + "`" }

func str(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func onCluster(o Options) string {
	if o.Cluster == "" {
		return ""
	}
	return " ON CLUSTER " + q(o.Cluster)
}

// CreateDatabase is the statement that creates the database.
func CreateDatabase(o Options) string {
	o = o.withDefaults()
	return "CREATE DATABASE IF NOT EXISTS " + q(o.Database) + onCluster(o)
}

// CreateTable returns the statements that create t: one on a single server; the replicated local table and the
// Distributed table in front of it on a cluster.
func CreateTable(t Table, o Options) []string {
	o = o.withDefaults()
	var cols strings.Builder
	for i, c := range t.Columns {
		if i > 0 {
			cols.WriteString(",\n")
		}
		fmt.Fprintf(&cols, "    %s %s COMMENT %s", q(c.Name), c.Type, str(c.Doc))
	}
	tail := func(engine, settings string) string {
		return fmt.Sprintf("(\n%s\n)\nENGINE = %s\nPARTITION BY %s\nORDER BY %s\n%sCOMMENT %s",
			cols.String(), engine, t.PartitionBy, t.OrderBy, settings, str(t.Doc))
	}
	if o.Cluster == "" {
		// The deduplication window makes a retried insert with the same insert_deduplication_token a no-op on a
		// single server, as replicated tables do by default.
		return []string{fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.%s\n%s", q(o.Database), q(t.Name),
			tail("ReplacingMergeTree(ingested_at)", fmt.Sprintf("SETTINGS non_replicated_deduplication_window = %d\n", DedupWindow)))}
	}
	local := t.Name + "_local"
	engine := fmt.Sprintf("ReplicatedReplacingMergeTree(%s, '{replica}', ingested_at)",
		str(o.ZooPath+"/"+o.Database+"/"+local))
	return []string{
		fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.%s%s\n%s", q(o.Database), q(local), onCluster(o),
			tail(engine, fmt.Sprintf("SETTINGS replicated_deduplication_window = %d\n", DedupWindow))),
		fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.%s%s AS %s.%s\nENGINE = Distributed(%s, %s, %s, %s)",
			q(o.Database), q(t.Name), onCluster(o), q(o.Database), q(local),
			q(o.Cluster), q(o.Database), q(local), t.ShardBy),
	}
}

// CreateMigrationsTable is the statement that creates the version table. On a cluster every node keeps a full
// replica of it (one replication path for all shards).
func CreateMigrationsTable(o Options) string {
	o = o.withDefaults()
	engine := "ReplacingMergeTree(applied_at)"
	if o.Cluster != "" {
		engine = fmt.Sprintf("ReplicatedReplacingMergeTree(%s, '{shard}-{replica}', applied_at)",
			str("/clickhouse/exhub/"+o.Database+"/"+MigrationsTable))
	}
	return fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.%s%s\n(\n    `version` UInt32,\n    `name` String,\n"+
		"    `applied_at` %s\n)\nENGINE = %s\nORDER BY version", q(o.Database), q(MigrationsTable), onCluster(o), Time, engine)
}

// Plan is every statement Apply would run on an empty server, in order (for review and tests).
func Plan(o Options) []string {
	o = o.withDefaults()
	out := []string{CreateDatabase(o), CreateMigrationsTable(o)}
	for _, m := range Migrations {
		out = append(out, m.Statements(o)...)
	}
	return out
}

// Conn is the part of a clickhouse-go connection the migrations use.
type Conn interface {
	Exec(ctx context.Context, query string, args ...any) error
	Query(ctx context.Context, query string, args ...any) (driver.Rows, error)
}

// Applied returns the versions recorded as applied.
func Applied(ctx context.Context, c Conn, o Options) (map[uint32]bool, error) {
	o = o.withDefaults()
	rows, err := c.Query(ctx, "SELECT version FROM "+q(o.Database)+"."+q(MigrationsTable)+" FINAL")
	if err != nil {
		return nil, fmt.Errorf("schema: read applied versions: %w", err)
	}
	defer rows.Close()
	out := map[uint32]bool{}
	for rows.Next() {
		var v uint32
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("schema: read applied versions: %w", err)
		}
		out[v] = true
	}
	return out, rows.Err()
}

// Apply brings the schema up to date: it creates the database and the version table, then runs every migration
// not yet recorded and records it. Running it again (or from several processes at once) changes nothing.
func Apply(ctx context.Context, c Conn, o Options, log *slog.Logger) error {
	o = o.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	for _, s := range []string{CreateDatabase(o), CreateMigrationsTable(o)} {
		if err := c.Exec(ctx, s); err != nil {
			return fmt.Errorf("schema: %s: %w", firstLine(s), err)
		}
	}
	done, err := Applied(ctx, c, o)
	if err != nil {
		return err
	}
	for _, m := range Migrations {
		if done[m.Version] {
			continue
		}
		start := time.Now()
		for _, s := range m.Statements(o) {
			if err := c.Exec(ctx, s); err != nil {
				return fmt.Errorf("schema: migration %d (%s): %s: %w", m.Version, m.Name, firstLine(s), err)
			}
		}
		if err := c.Exec(ctx, "INSERT INTO "+q(o.Database)+"."+q(MigrationsTable)+
			" (version, name, applied_at) VALUES (?, ?, fromUnixTimestamp64Milli(?, 'UTC'))",
			m.Version, m.Name, time.Now().UnixMilli()); err != nil {
			return fmt.Errorf("schema: record migration %d: %w", m.Version, err)
		}
		log.Info("analytics schema migrated", "version", m.Version, "name", m.Name, "database", o.Database,
			"cluster", o.Cluster, "duration_ms", time.Since(start).Milliseconds())
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Latest is the newest schema version.
func Latest() uint32 { return Migrations[len(Migrations)-1].Version }
