package ingest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/exhub/exhub/analytics/chtest"
	"github.com/exhub/exhub/analytics/schema"
)

// fixedServer runs exhub-clickhouse on fixed ports so it can be stopped and started again at the same address.
type fixedServer struct {
	t                testing.TB
	dir              string
	tcpPort, httpPrt int
	cmd              *exec.Cmd
	done             chan struct{}
}

func newFixedServer(t testing.TB) *fixedServer {
	ports := chtest.FreePorts(t, 2)
	s := &fixedServer{t: t, dir: t.TempDir(), tcpPort: ports[0], httpPrt: ports[1]}
	t.Cleanup(s.stop)
	return s
}

func (s *fixedServer) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.tcpPort)) }

func (s *fixedServer) start() {
	s.t.Helper()
	log, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		s.t.Fatal(err)
	}
	s.cmd = exec.Command(chtest.Binary(s.t), "--path", filepath.Join(s.dir, "data"), "--tcp-port", strconv.Itoa(s.tcpPort),
		"--http-port", strconv.Itoa(s.httpPrt), "--lib", chtest.Lib(s.t))
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.done = make(chan struct{})
	cmd, done := s.cmd, s.done
	go func() { _ = cmd.Wait(); _ = log.Close(); close(done) }() // owned by the server; ends when the child exits
	httpAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.httpPrt))
	deadline := time.Now().Add(60 * time.Second)
	client := &http.Client{Timeout: time.Second}
	for !chtest.Ping(client, httpAddr) {
		if time.Now().After(deadline) {
			s.t.Fatalf("clickhouse did not start on %s", httpAddr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *fixedServer) stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd = nil
}

func open(t testing.TB, addr string) driver.Conn {
	c, err := clickhouse.Open(&clickhouse.Options{
		Addr: []string{addr}, Auth: clickhouse.Auth{Database: "default", Username: "default"},
		DialTimeout: 2 * time.Second, ReadTimeout: 30 * time.Second, MaxOpenConns: 4,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func tradeRow(i int) []any {
	return []any{"binance", "SWAP", "BTCUSDT", int64(1_700_000_000_000 + i), strconv.Itoa(i),
		fmt.Sprintf("%d.125", 60000+i%1000), "0.001", "60.000125", "buy", time.Now().UnixMilli()}
}

// TestStopClickHouseMidIngest stops the ClickHouse process for 30 seconds while rows keep coming; every row must
// arrive exactly once.
func TestStopClickHouseMidIngest(t *testing.T) {
	srv := newFixedServer(t)
	srv.start()
	conn := open(t, srv.addr())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := schema.Apply(ctx, conn, schema.Options{Database: "ing"}, nil); err != nil {
		t.Fatal(err)
	}
	w, err := New(Config{Conn: conn, Database: "ing", SpoolDir: t.TempDir(), FlushInterval: 200 * time.Millisecond,
		BatchRows: 5000, InsertTimeout: 3 * time.Second, RetryInterval: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stopRun := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.Run(runCtx) }()

	const perSecond, seconds = 5000, 40
	total := perSecond * seconds
	prodDone := make(chan struct{})
	go func() { // the producer: a steady stream of trades, 100 rows every 20 ms
		defer close(prodDone)
		tk := time.NewTicker(20 * time.Millisecond)
		defer tk.Stop()
		for i := 0; i < total; {
			<-tk.C
			rows := make([][]any, 0, 100)
			for j := 0; j < 100 && i < total; j++ {
				rows = append(rows, tradeRow(i))
				i++
			}
			if err := w.Add(ctx, schema.Trades, rows...); err != nil {
				t.Errorf("add: %v", err)
				return
			}
		}
	}()
	time.Sleep(4 * time.Second)
	srv.stop()
	t.Logf("clickhouse stopped after %d rows written", w.Stats().Written)
	time.Sleep(30 * time.Second)
	st := w.Stats()
	if st.Spooled == 0 || st.SpoolFiles == 0 {
		t.Fatalf("nothing spooled while ClickHouse was down: %+v", st)
	}
	t.Logf("during the outage: %+v", st)
	srv.start()
	<-prodDone
	deadline := time.Now().Add(60 * time.Second)
	for {
		st = w.Stats()
		if st.Written == uint64(total) && st.SpoolFiles == 0 && st.Pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not drained: %+v", st)
		}
		time.Sleep(100 * time.Millisecond)
	}
	stopRun()
	wg.Wait()
	if st.Replayed == 0 {
		t.Fatalf("nothing replayed: %+v", st)
	}
	var physical, distinct uint64
	if err := conn.QueryRow(ctx, "SELECT count(), uniqExact(trade_id) FROM ing.trades").Scan(&physical, &distinct); err != nil {
		t.Fatal(err)
	}
	if physical != uint64(total) || distinct != uint64(total) {
		t.Fatalf("stored %d rows, %d distinct trade ids; want %d of each", physical, distinct, total)
	}
	t.Logf("final: %+v", st)
}

// A batch replayed with the token of a batch already stored is dropped by the server.
func TestReplayIsDeduplicated(t *testing.T) {
	srv := chtest.Start(t)
	ctx := context.Background()
	if err := schema.Apply(ctx, srv.Conn, schema.Options{Database: "dd"}, nil); err != nil {
		t.Fatal(err)
	}
	w, err := New(Config{Conn: srv.Conn, Database: "dd", SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	b := &batch{table: schema.Trades, token: "tok-1"}
	for i := 0; i < 10; i++ {
		b.rows = append(b.rows, tradeRow(i))
	}
	for i := 0; i < 3; i++ {
		if err := w.insert(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	var n uint64
	if err := srv.Conn.QueryRow(ctx, "SELECT count() FROM dd.trades").Scan(&n); err != nil || n != 10 {
		t.Fatalf("%d rows (%v), want 10", n, err)
	}
}

func TestSpoolRoundTripAndBound(t *testing.T) {
	dir := t.TempDir()
	sp, err := openSpool(dir, 4096)
	if err != nil {
		t.Fatal(err)
	}
	b := &batch{table: schema.MarkPrices, token: "a-1", rows: [][]any{
		{"okx", "BTC-USDT-SWAP", int64(1700000000123), "60000.5", nil, "0.0001", int64(1700006400000), int64(5)},
	}}
	if err := sp.put(b); err != nil {
		t.Fatal(err)
	}
	big := &batch{table: schema.Trades, token: "a-2"}
	for i := 0; i < 200; i++ {
		big.rows = append(big.rows, tradeRow(i))
	}
	if err := sp.put(big); err != errSpoolFull {
		t.Fatalf("put over the bound: %v, want errSpoolFull", err)
	}
	// A reopened spool finds the batch and reads back the same typed values.
	sp2, err := openSpool(dir, 4096)
	if err != nil {
		t.Fatal(err)
	}
	got, name, err := sp2.oldest()
	if err != nil || got == nil {
		t.Fatalf("oldest: %v %v", got, err)
	}
	if fmt.Sprintf("%#v", got.rows) != fmt.Sprintf("%#v", b.rows) || got.token != "a-1" || got.table != schema.MarkPrices {
		t.Fatalf("round trip:\n%#v\n%#v", got.rows, b.rows)
	}
	if err := sp2.remove(name); err != nil {
		t.Fatal(err)
	}
	if files, _, bytes := sp2.stats(); files != 0 || bytes != 0 {
		t.Fatalf("after remove: %d files %d bytes", files, bytes)
	}
}

func TestBatchesFlushAtRowCount(t *testing.T) {
	srv := chtest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := schema.Apply(ctx, srv.Conn, schema.Options{Database: "bt"}, nil); err != nil {
		t.Fatal(err)
	}
	// A long interval: only the row count can trigger the flush.
	w, err := New(Config{Conn: srv.Conn, Database: "bt", SpoolDir: t.TempDir(), BatchRows: 1000, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	rows := make([][]any, 2500)
	for i := range rows {
		rows[i] = tradeRow(i)
	}
	if err := w.Add(ctx, schema.Trades, rows...); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for w.Stats().Written < 2000 {
		if time.Now().After(deadline) {
			t.Fatalf("no flush at BatchRows: %+v", w.Stats())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st := w.Stats(); st.Written != 2000 || st.Pending != 500 {
		t.Fatalf("after the count flush: %+v (want 2000 written, 500 pending)", st)
	}
	cancel()
	<-done // Run flushes the rest when it stops
	var n uint64
	if err := srv.Conn.QueryRow(context.Background(), "SELECT count() FROM bt.trades").Scan(&n); err != nil || n != 2500 {
		t.Fatalf("%d rows (%v), want 2500", n, err)
	}
}

// With ClickHouse unreachable and the spool at its bound, rows stay in memory, the alarm is raised and Add blocks
// at MaxPendingRows instead of growing without bound.
func TestSpoolFullBlocksAndAlarms(t *testing.T) {
	port := chtest.FreePorts(t, 1)[0] // nothing listens there
	conn := open(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	w, err := New(Config{Conn: conn, Database: "none", SpoolDir: t.TempDir(), SpoolMaxBytes: 2000, BatchRows: 10,
		MaxPendingRows: 40, FlushInterval: 20 * time.Millisecond, RetryInterval: 20 * time.Millisecond, InsertTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	defer func() { cancel(); <-done }()
	added := 0
	for i := 0; ; i++ {
		actx, acancel := context.WithTimeout(ctx, 2*time.Second)
		err := w.Add(actx, schema.Trades, tradeRow(i))
		acancel()
		if err != nil {
			break // blocked at the bound
		}
		added++
		if added > 1000 {
			t.Fatal("Add never blocked")
		}
	}
	st := w.Stats()
	if !st.SpoolFull || st.Pending != 40 || st.SpoolBytes > 2000 || st.SpoolRows+st.Pending != added {
		t.Fatalf("after %d rows: %+v", added, st)
	}
}

// recordingConn hands every insert to the real connection and keeps the contexts the inserts gave clickhouse-go.
type recordingConn struct {
	driver.Conn
	mu   sync.Mutex
	ctxs []context.Context
}

func (c *recordingConn) PrepareBatch(ctx context.Context, query string, opts ...driver.PrepareBatchOption) (driver.Batch, error) {
	c.mu.Lock()
	c.ctxs = append(c.ctxs, ctx)
	c.mu.Unlock()
	return c.Conn.PrepareBatch(ctx, query, opts...)
}

func (c *recordingConn) last() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ctxs[len(c.ctxs)-1]
}

// clickhouse-go's batch Send closes the TCP connection when the batch's context ends, from a goroutine that can
// still see the end after Send returned the connection to the pool. The context an insert hands over must
// therefore never end once the insert returned; it still ends an insert that outlives InsertTimeout.
func TestInsertContextEndsOnlyInFlight(t *testing.T) {
	srv := chtest.Start(t)
	ctx := context.Background()
	if err := schema.Apply(ctx, srv.Conn, schema.Options{Database: "ic"}, nil); err != nil {
		t.Fatal(err)
	}
	rc := &recordingConn{Conn: srv.Conn}
	// patient never times out on a busy machine; it warms the pooled connection the short-timeout writer then uses.
	patient, err := New(Config{Conn: rc, Database: "ic", SpoolDir: t.TempDir(), InsertTimeout: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := patient.insert(ctx, &batch{table: schema.Trades, token: "ic-0", rows: [][]any{tradeRow(0)}}); err != nil {
		t.Fatal(err)
	}
	const timeout = time.Second // a third of the server's 3 s hold below
	w, err := New(Config{Conn: rc, Database: "ic", SpoolDir: t.TempDir(), InsertTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	b := &batch{table: schema.Trades, token: "ic-1", rows: [][]any{tradeRow(1), tradeRow(2)}}
	callerCtx, cancelCaller := context.WithCancel(ctx)
	if err := w.insert(callerCtx, b); err != nil {
		t.Fatal(err)
	}
	sent := rc.last()
	cancelCaller() // the caller's context ending later must not reach the finished insert either
	select {
	case <-sent.Done():
		t.Fatalf("the context of a finished insert ended (%v): clickhouse-go may close a pooled connection", sent.Err())
	case <-time.After(2 * timeout):
	}
	if sent.Err() != nil {
		t.Fatalf("Err of a finished insert's context: %v", sent.Err())
	}
	if d, ok := sent.Deadline(); !ok || d.IsZero() {
		t.Fatal("the insert context carries no deadline")
	}

	// An insert still in flight is interrupted at InsertTimeout, or when the caller's context ends. The server holds
	// inserts into mark_prices for 3 s in a materialized view (sleepEachRow), so an insert that was not interrupted
	// would succeed: the error alone proves the interruption, with no clock read here.
	if err := srv.Conn.Exec(ctx, "CREATE MATERIALIZED VIEW ic.slow ENGINE = Null AS SELECT sleepEachRow(3) AS s FROM ic.mark_prices"); err != nil {
		t.Fatal(err)
	}
	slow := func(token string) *batch {
		return &batch{table: schema.MarkPrices, token: token, rows: [][]any{
			{"okx", "BTC-USDT-SWAP", int64(1700000000123), "60000.5", nil, nil, nil, int64(5)}}}
	}
	if err := w.insert(ctx, slow("ic-2")); err == nil {
		t.Fatalf("an insert the server holds for 3 s passed a %v InsertTimeout", timeout)
	}
	callerCtx, cancelCaller = context.WithCancel(ctx)
	time.AfterFunc(timeout, cancelCaller)
	if err := patient.insert(callerCtx, slow("ic-3")); err == nil {
		t.Fatal("an insert the server holds for 3 s passed although its caller gave up")
	}
	// The pool still works.
	if err := patient.insert(ctx, &batch{table: schema.Trades, token: "ic-4", rows: [][]any{tradeRow(3)}}); err != nil {
		t.Fatal(err)
	}
}

// A sustained ingest with two inserters and small batches, while other goroutines keep the scheduler busy (as the
// BFF's stream handling does), must not fail a single insert: nothing may go to the spool.
func TestSustainedIngestNeverSpools(t *testing.T) {
	srv := chtest.Start(t)
	ctx := context.Background()
	if err := schema.Apply(ctx, srv.Conn, schema.Options{Database: "si"}, nil); err != nil {
		t.Fatal(err)
	}
	conn := open(t, srv.TCPAddr)
	w, err := New(Config{Conn: conn, Database: "si", SpoolDir: t.TempDir(), BatchRows: 200, Inserters: 2})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stopRun := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); w.Run(runCtx) }()
	defer func() { stopRun(); <-done }()

	// Busy goroutines: short bursts of work between yields keep the run queues full, so freshly started
	// goroutines (such as the driver's per-Send context watchdog) wait before they first run.
	stopBusy := make(chan struct{})
	var busy sync.WaitGroup
	for k := 0; k < 3; k++ {
		busy.Add(1)
		go func() { // owned by the test; ends when stopBusy closes
			defer busy.Done()
			x := 0
			for {
				select {
				case <-stopBusy:
					return
				default:
				}
				for j := 0; j < 20000; j++ {
					x += j ^ x
				}
			}
		}()
	}
	defer func() { close(stopBusy); busy.Wait() }()

	const total = 60_000
	rows := make([][]any, 0, 1000)
	for i := 0; i < total; i++ {
		rows = append(rows, tradeRow(i))
		if len(rows) == cap(rows) {
			if err := w.Add(ctx, schema.Trades, rows...); err != nil {
				t.Fatal(err)
			}
			rows = make([][]any, 0, 1000)
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for st := w.Stats(); st.Written < total; st = w.Stats() {
		if st.Spooled > 0 || st.InsertErrors > 0 {
			t.Fatalf("inserts failed during a sustained ingest with ClickHouse up: %+v", st)
		}
		if time.Now().After(deadline) {
			t.Fatalf("not written in time: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st := w.Stats(); st.Spooled != 0 || st.InsertErrors != 0 || st.SpoolFiles != 0 {
		t.Fatalf("inserts failed during a sustained ingest with ClickHouse up: %+v", st)
	}
}
