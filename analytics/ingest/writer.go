// Package ingest writes market rows to ClickHouse in batches: a batch is flushed when it reaches BatchRows rows or
// when FlushInterval has passed, whichever comes first. When ClickHouse is down or slow, batches go to a bounded
// disk spool and are replayed, oldest first, once it answers again. Every batch carries an insert deduplication
// token, so a batch that ClickHouse stored but never acknowledged is dropped by the server when it is replayed;
// the tables are ReplacingMergeTree on their natural keys as a second line of defence.
//
// Rows are []any in the column order of the table (schema.Tables): strings for String, LowCardinality, Enum and
// Decimal columns (canonical decimal strings, never floats), int64 Unix milliseconds for DateTime64 columns,
// uint64 for UInt64, bool for Bool and nil for NULL. The row helpers in rows.go build them from exchange.v1 values.
package ingest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/exhub/exhub/analytics/schema"
)

// Config tunes a Writer. Zero values take the defaults noted.
type Config struct {
	Conn driver.Conn
	// Database holds the tables (default "exhub").
	Database string
	// BatchRows flushes a table's rows once this many are pending (default 10000).
	BatchRows int
	// FlushInterval flushes whatever is pending at least this often (default 1s).
	FlushInterval time.Duration
	// MaxPendingRows bounds the rows held in memory; Add blocks beyond it (default 20 * BatchRows).
	MaxPendingRows int
	// SpoolDir holds batches ClickHouse did not take (required).
	SpoolDir string
	// SpoolMaxBytes bounds the spool (default 1 GiB). When it is full, rows stay in memory, Add blocks and the
	// writer logs "analytics spool full" at error level until ClickHouse takes rows again.
	SpoolMaxBytes int64
	// InsertTimeout bounds one insert (default 10s).
	InsertTimeout time.Duration
	// Inserters is how many inserts may be in flight at once (default 2), so that encoding one batch overlaps
	// with the server storing another.
	Inserters int
	// RetryInterval is how often the spool is retried while ClickHouse fails (default 1s).
	RetryInterval time.Duration
	Logger        *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.Database == "" {
		c.Database = "exhub"
	}
	if c.BatchRows <= 0 {
		c.BatchRows = 10000
	}
	if c.FlushInterval <= 0 {
		c.FlushInterval = time.Second
	}
	if c.MaxPendingRows <= 0 {
		c.MaxPendingRows = 20 * c.BatchRows
	}
	if c.SpoolMaxBytes <= 0 {
		c.SpoolMaxBytes = 1 << 30
	}
	if c.InsertTimeout <= 0 {
		c.InsertTimeout = 10 * time.Second
	}
	if c.Inserters <= 0 {
		c.Inserters = 2
	}
	if c.RetryInterval <= 0 {
		c.RetryInterval = time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// errBadRow marks a batch ClickHouse can never take (a row does not fit its columns); it is dropped, not spooled.
var errBadRow = errors.New("row does not match the table")

type batch struct {
	table string
	token string
	rows  [][]any
}

// Stats are the writer's counters.
type Stats struct {
	// Added rows accepted by Add; Written rows acknowledged by ClickHouse (directly or replayed), in all and by
	// table.
	Added, Written uint64
	WrittenByTable map[string]uint64
	// Spooled rows ever written to the spool; Replayed rows later written from it.
	Spooled, Replayed uint64
	// InsertErrors counts failed inserts; Rejected rows were dropped because they did not fit their table.
	InsertErrors, Rejected uint64
	// Pending rows in memory; SpoolFiles, SpoolRows and SpoolBytes are what waits on disk.
	Pending    int
	SpoolFiles int
	SpoolRows  int
	SpoolBytes int64
	// SpoolFull is true while the spool is at its bound.
	SpoolFull bool
}

// Writer batches rows into ClickHouse. Add is safe from any goroutine; Run owns the flushing.
type Writer struct {
	cfg     Config
	log     *slog.Logger
	spool   *spool
	inserts map[string]string // table -> INSERT statement

	mu      sync.Mutex
	pending map[string]*rowQueue
	npend   int
	space   chan struct{} // closed and replaced when pending rows shrink
	full    chan struct{} // capacity Inserters: a table reached BatchRows

	replayMu sync.Mutex // one replay at a time
	rollupMu sync.Mutex // one candles_1h recomputation at a time

	tokenPrefix string
	tokenSeq    atomic.Uint64

	added, written, spooled, replayed, insertErrs, rejected atomic.Uint64
	writtenBy                                               map[string]*atomic.Uint64 // by table; fixed after New
	spoolFull                                               atomic.Bool
	slowBatches                                             atomic.Uint64 // sent row by row (see fillColumns)
}

// New opens the spool (replaying nothing yet) and returns a writer.
func New(cfg Config) (*Writer, error) {
	cfg = cfg.withDefaults()
	if cfg.Conn == nil {
		return nil, errors.New("ingest: Conn is required")
	}
	if cfg.SpoolDir == "" {
		return nil, errors.New("ingest: SpoolDir is required")
	}
	sp, err := openSpool(cfg.SpoolDir, cfg.SpoolMaxBytes)
	if err != nil {
		return nil, err
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	w := &Writer{
		cfg: cfg, log: cfg.Logger.With("component", "analytics-ingest"), spool: sp,
		inserts: map[string]string{}, pending: map[string]*rowQueue{},
		space: make(chan struct{}), full: make(chan struct{}, cfg.Inserters),
		tokenPrefix: hex.EncodeToString(rnd[:]) + "-" + fmt.Sprint(time.Now().UnixMilli()),
	}
	w.writtenBy = make(map[string]*atomic.Uint64, len(schema.Tables))
	for _, t := range schema.Tables {
		w.writtenBy[t.Name] = new(atomic.Uint64)
		w.inserts[t.Name] = fmt.Sprintf("INSERT INTO `%s`.`%s` (%s)", cfg.Database, t.Name, strings.Join(t.ColumnNames(), ", "))
	}
	if files, rows, _ := sp.stats(); files > 0 {
		w.log.Info("analytics spool has batches to replay", "files", files, "rows", rows, "dir", cfg.SpoolDir)
	}
	return w, nil
}

// Add queues rows of one table. It blocks while MaxPendingRows rows are pending (back-pressure) until ctx ends.
func (w *Writer) Add(ctx context.Context, table string, rows ...[]any) error {
	if _, ok := w.inserts[table]; !ok {
		return fmt.Errorf("ingest: unknown table %q", table)
	}
	for {
		w.mu.Lock()
		if w.npend < w.cfg.MaxPendingRows {
			break
		}
		space := w.space
		w.mu.Unlock()
		select {
		case <-space:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	q := w.pending[table]
	if q == nil {
		q = &rowQueue{}
		w.pending[table] = q
	}
	q.push(rows, w.cfg.BatchRows)
	w.npend += len(rows)
	n := q.n
	w.mu.Unlock()
	w.added.Add(uint64(len(rows)))
	if n >= w.cfg.BatchRows {
		select {
		case w.full <- struct{}{}:
		default:
		}
	}
	return nil
}

// Stats returns a snapshot of the counters.
func (w *Writer) Stats() Stats {
	w.mu.Lock()
	pend := w.npend
	w.mu.Unlock()
	files, rows, bytes := w.spool.stats()
	by := make(map[string]uint64, len(w.writtenBy))
	for t, n := range w.writtenBy {
		by[t] = n.Load()
	}
	return Stats{
		Added: w.added.Load(), Written: w.written.Load(), WrittenByTable: by, Spooled: w.spooled.Load(), Replayed: w.replayed.Load(),
		InsertErrors: w.insertErrs.Load(), Rejected: w.rejected.Load(), Pending: pend, SpoolFiles: files, SpoolRows: rows, SpoolBytes: bytes,
		SpoolFull: w.spoolFull.Load(),
	}
}

// wrote counts rows ClickHouse acknowledged.
func (w *Writer) wrote(table string, n int) {
	w.written.Add(uint64(n))
	if c := w.writtenBy[table]; c != nil {
		c.Add(uint64(n))
	}
}

// Run flushes until ctx ends, then flushes what is pending once more (to ClickHouse, else to the spool) and
// returns.
func (w *Writer) Run(ctx context.Context) {
	tick := time.NewTicker(w.cfg.FlushInterval)
	defer tick.Stop()
	retry := time.NewTicker(w.cfg.RetryInterval)
	defer retry.Stop()
	var wg sync.WaitGroup
	for i := 0; i < w.cfg.Inserters; i++ {
		wg.Add(1)
		go func() { // owned by Run: one inserter; ends with ctx
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case <-w.full:
					for ctx.Err() == nil && w.flushOne(ctx) {
					}
				case <-tick.C:
					w.flush(ctx, true)
				case <-retry.C:
					w.replay(ctx)
				}
			}
		}()
	}
	wg.Wait()
	w.flush(context.Background(), true)
}

// flushOne writes one full batch, if any; it reports whether it found one and placed it (in ClickHouse or the
// spool).
func (w *Writer) flushOne(ctx context.Context) bool {
	bs := w.take(false, 1)
	if len(bs) == 0 {
		return false
	}
	return w.write(ctx, bs)
}

// Flush writes everything pending now (tests and shutdown paths).
func (w *Writer) Flush(ctx context.Context) { w.flush(ctx, true) }

// take removes up to BatchRows rows of each table with pending rows (all tables when all is set, else only
// those at BatchRows).
func (w *Writer) take(all bool, maxBatches int) []*batch {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*batch
	for table, q := range w.pending {
		for q.n > 0 && (all || q.n >= w.cfg.BatchRows) && (maxBatches <= 0 || len(out) < maxBatches) {
			out = append(out, &batch{table: table, token: w.nextToken(), rows: q.pop(w.cfg.BatchRows)})
		}
		if q.n == 0 {
			delete(w.pending, table)
		}
	}
	return out
}

// giveBack returns batches that could go nowhere (spool full) to the front of pending.
func (w *Writer) giveBack(bs []*batch) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := len(bs) - 1; i >= 0; i-- {
		b := bs[i]
		q := w.pending[b.table]
		if q == nil {
			q = &rowQueue{}
			w.pending[b.table] = q
		}
		q.pushFront(b.rows)
	}
}

func (w *Writer) released(n int) {
	w.mu.Lock()
	w.npend -= n
	close(w.space)
	w.space = make(chan struct{})
	w.mu.Unlock()
}

func (w *Writer) nextToken() string {
	return fmt.Sprintf("%s-%d", w.tokenPrefix, w.tokenSeq.Add(1))
}

func (w *Writer) flush(ctx context.Context, all bool) {
	bs := w.take(all, 0)
	if len(bs) == 0 {
		w.replay(ctx)
		return
	}
	w.write(ctx, bs)
}

// write sends batches to ClickHouse, or to the spool when it fails; batches that fit nowhere go back to pending
// and write reports false.
func (w *Writer) write(ctx context.Context, bs []*batch) bool {
	// While older batches wait in the spool, replay them first; if that fails ClickHouse is still down and new
	// batches go straight to the spool.
	down := !w.replay(ctx)
	var keep []*batch
	for _, b := range bs {
		if !down {
			if err := w.insert(ctx, b); err == nil {
				w.wrote(b.table, len(b.rows))
				w.released(len(b.rows))
				continue
			} else if errors.Is(err, errBadRow) {
				w.rejected.Add(uint64(len(b.rows)))
				w.released(len(b.rows))
				w.log.Error("analytics batch rejected", "table", b.table, "rows", len(b.rows), "err", err)
				continue
			} else {
				down = true
				w.log.Warn("analytics insert failed: spooling", "table", b.table, "rows", len(b.rows), "err", err)
			}
		}
		switch err := w.spool.put(b); {
		case err == nil:
			w.spooled.Add(uint64(len(b.rows)))
			w.released(len(b.rows))
		case errors.Is(err, errSpoolFull):
			if !w.spoolFull.Swap(true) {
				_, _, bytes := w.spool.stats()
				w.log.Error("analytics spool full: rows are held in memory and ingest is blocking until ClickHouse takes rows again",
					"dir", w.cfg.SpoolDir, "bytes", bytes, "max_bytes", w.cfg.SpoolMaxBytes)
			}
			keep = append(keep, b)
		default:
			w.log.Error("analytics spool write failed", "err", err)
			keep = append(keep, b)
		}
	}
	if len(keep) > 0 {
		w.giveBack(keep)
		return false
	}
	return true
}

// replay writes spooled batches oldest first; it reports whether the spool is now empty.
func (w *Writer) replay(ctx context.Context) bool {
	if !w.replayMu.TryLock() {
		return true // another inserter is replaying; new batches may go straight in
	}
	defer w.replayMu.Unlock()
	for ctx.Err() == nil {
		b, name, err := w.spool.oldest()
		if err != nil {
			w.log.Error("analytics spool unreadable", "err", err)
			return false
		}
		if b == nil {
			if w.spoolFull.Swap(false) {
				w.log.Info("analytics spool drained")
			}
			return true
		}
		err = w.insert(ctx, b)
		if err != nil && !errors.Is(err, errBadRow) {
			return false
		}
		if rerr := w.spool.remove(name); rerr != nil {
			w.log.Error("analytics spool remove failed", "err", rerr)
			return false
		}
		if err != nil {
			w.rejected.Add(uint64(len(b.rows)))
			w.log.Error("analytics spooled batch rejected", "file", name, "err", err)
		} else {
			w.wrote(b.table, len(b.rows))
			w.replayed.Add(uint64(len(b.rows)))
		}
		if w.spoolFull.Swap(false) {
			w.log.Info("analytics spool has room again")
		}
	}
	return false
}

func (w *Writer) insert(ctx context.Context, b *batch) error {
	err := w.insertBatch(ctx, b)
	if err == nil && b.table == schema.Candles1m {
		err = w.rollup(ctx, b)
	}
	if err != nil {
		w.insertErrs.Add(1)
	}
	return err
}

func (w *Writer) insertBatch(ctx context.Context, b *batch) error {
	// Not context.WithTimeout with a deferred cancel: see sendContext.
	sctx, finished := newSendContext(ctx, w.cfg.InsertTimeout)
	defer finished()
	ctx = clickhouse.Context(sctx, clickhouse.WithSettings(clickhouse.Settings{
		"insert_deduplicate":            1,
		"insert_deduplication_token":    b.token,
		"distributed_foreground_insert": 1,
	}))
	return w.send(ctx, b)
}

func (w *Writer) send(ctx context.Context, b *batch) error {
	pb, err := w.cfg.Conn.PrepareBatch(ctx, w.inserts[b.table])
	if err != nil {
		return fmt.Errorf("ingest: prepare %s: %w", b.table, err)
	}
	defer func() { _ = pb.Abort() }()
	fast, err := fillColumns(pb, b.rows)
	if err != nil {
		return fmt.Errorf("ingest: append %s: %w: %w", b.table, errBadRow, err)
	}
	if !fast {
		w.slowBatches.Add(1)
		for _, r := range b.rows {
			if err := pb.Append(r...); err != nil {
				return fmt.Errorf("ingest: append %s: %w: %w", b.table, errBadRow, err)
			}
		}
	}
	if err := pb.Send(); err != nil {
		return fmt.Errorf("ingest: send %s: %w", b.table, err)
	}
	return nil
}

// WriteNow inserts rows of one table at once, bypassing the batching (backfill pages): it returns when ClickHouse
// acknowledged them, or after they were spooled for replay when it did not (stored reports which).
func (w *Writer) WriteNow(ctx context.Context, table string, rows [][]any) (stored bool, err error) {
	if _, ok := w.inserts[table]; !ok {
		return false, fmt.Errorf("ingest: unknown table %q", table)
	}
	if len(rows) == 0 {
		return true, nil
	}
	w.added.Add(uint64(len(rows)))
	b := &batch{table: table, token: w.nextToken(), rows: rows}
	if w.spool.empty() {
		ierr := w.insert(ctx, b)
		if ierr == nil {
			w.wrote(table, len(rows))
			return true, nil
		}
		if errors.Is(ierr, errBadRow) {
			w.rejected.Add(uint64(len(rows)))
			return false, ierr
		}
	}
	if err := w.spool.put(b); err != nil {
		return false, fmt.Errorf("ingest: ClickHouse and the spool both refused %d %s rows: %w", len(rows), table, err)
	}
	w.spooled.Add(uint64(len(rows)))
	return false, nil
}
