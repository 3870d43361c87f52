// Command analytics measures the analytics store on a real local ClickHouse server (exhub-clickhouse, started on
// free loopback ports in a temporary directory and stopped by PID):
//
//   - ingest: market events (trades as the plugin stream delivers them) turned into rows and written by the
//     batching writer (10,000 rows or 1 s), end to end until ClickHouse acknowledged every row; target > 500,000/s,
//     and not one insert may fail (a failed insert goes through the disk spool, which makes the figure a failure);
//   - roll-up: one year of one-minute candles of one symbol rolled up to 8,760 hourly candles; target < 50 ms;
//   - series: each analytics query behind /api/v1/analytics/* over 30 days (p50/p99 of repeated runs); target
//     p99 < 30 ms;
//   - export: that year of candles as Parquet through the streaming exporter: time, bytes and this process's peak
//     heap while streaming.
//
// Before each latency phase it waits until the server has no merges running (the ingest phase leaves hundreds of
// parts to merge; queries measured during that merge storm say more about the storm than about the queries) and
// collects the Go heap, then warms up and takes -runs samples. It prints the load average first: figures taken
// with a load average above 1.5 on this 2-core machine are not comparable.
//
// It prints a table and writes bench/results/analytics.json (-out); it exits 1 when an insert failed.
//
// For the ingest phase it also prints the CPU time per row of this process and of the ClickHouse server (merges
// included): both share the machine's 2 cores, so their sum bounds the rate. -ingest-cpuprofile writes a CPU
// profile of this process during the ingest phase.
//
//	go run ./bench/analytics [-trades 3000000] [-runs 200] [-out bench/results/analytics.json] [-ingest-cpuprofile f]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/exhub/exhub/analytics/chserver"
	"github.com/exhub/exhub/analytics/ingest"
	"github.com/exhub/exhub/analytics/query"
	"github.com/exhub/exhub/analytics/schema"
	"github.com/exhub/exhub/analytics/service"
	"github.com/exhub/exhub/bench/plugin/harness"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func main() {
	trades := flag.Int("trades", 3_000_000, "trades to ingest")
	runs := flag.Int("runs", 200, "runs per query for p50/p99 (after warm-up runs)")
	out := flag.String("out", "", "results file (default bench/results/analytics.json under the repository root)")
	flag.StringVar(&ingestProfile, "ingest-cpuprofile", "", "write a CPU profile of the ingest phase to this file")
	flag.Parse()
	if err := run(*trades, *runs, *out); err != nil {
		fmt.Fprintln(os.Stderr, "bench/analytics:", err)
		os.Exit(1)
	}
}

type result struct {
	Machine                  string             `json:"machine"`
	LoadAverage1mBefore      string             `json:"loadAverage1mBefore"`
	IngestRows               int                `json:"ingestRows"`
	IngestRowsPerSecond      float64            `json:"ingestRowsPerSecond"`
	IngestSpooledRows        uint64             `json:"ingestSpooledRows"`
	IngestFailedInserts      uint64             `json:"ingestFailedInserts"`
	IngestCPUMicrosRow       float64            `json:"ingestCpuMicrosPerRow"`
	IngestServerCPUMicrosRow float64            `json:"ingestServerCpuMicrosPerRow"`
	Runs                     int                `json:"runs"`
	RollupYearTo1hMs         map[string]float64 `json:"rollupYearTo1hMs"`
	SeriesP50Ms              map[string]float64 `json:"seriesP50Ms"`
	SeriesP99Ms              map[string]float64 `json:"seriesP99Ms"`
	ExportParquetSeconds     float64            `json:"exportParquetSeconds"`
	ExportParquetBytes       int64              `json:"exportParquetBytes"`
	ExportPeakHeapMB         float64            `json:"exportPeakHeapMB"`
}

var ingestProfile string

var errInsertsFailed = errors.New("inserts failed while ClickHouse was up (rows went through the spool): the ingest figure does not count")

func run(nTrades, runs int, out string) error {
	root, err := harness.Root()
	if err != nil {
		return err
	}
	if out == "" {
		out = filepath.Join(root, "bench", "results", "analytics.json")
	}
	load, _ := os.ReadFile("/proc/loadavg")
	res := result{Machine: fmt.Sprintf("%s/%s, %d cores", runtime.GOOS, runtime.GOARCH, runtime.NumCPU()), Runs: runs,
		RollupYearTo1hMs: map[string]float64{}, SeriesP50Ms: map[string]float64{}, SeriesP99Ms: map[string]float64{}}
	if f := splitFields(string(load)); len(f) > 0 {
		res.LoadAverage1mBefore = f[0]
	}
	fmt.Printf("load average before: %s", load)
	if l, err := strconv.ParseFloat(res.LoadAverage1mBefore, 64); err == nil && l > 1.5 {
		fmt.Printf("warning: load average %.2f > 1.5: the machine is busy, the figures are not comparable\n", l)
	}
	dir, err := os.MkdirTemp("", "exhub-bench-analytics-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	srv, err := startClickHouse(root, dir)
	if err != nil {
		return err
	}
	defer srv.stop()
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: []string{srv.tcp}, Auth: clickhouse.Auth{Database: "default", Username: "default"},
		DialTimeout: 5 * time.Second, ReadTimeout: 120 * time.Second, MaxOpenConns: 8})
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx := context.Background()
	if err := schema.Apply(ctx, conn, schema.Options{Database: "bench"}, nil); err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	w, err := ingest.New(ingest.Config{Conn: conn, Database: "bench", SpoolDir: filepath.Join(dir, "spool"), Logger: logger})
	if err != nil {
		return err
	}
	wctx, stopW := context.WithCancel(ctx)
	wdone := make(chan struct{})
	go func() { defer close(wdone); w.Run(wctx) }() // owned by run; stopped below
	defer func() { stopW(); <-wdone }()

	// 1. ingest
	if ingestProfile != "" {
		f, err := os.Create(ingestProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	cpu0, srvCPU0 := cpuTime(), procCPUTime(srv.cmd.Process.Pid)
	start := time.Now()
	events := make([]*exchangev1.MarketEvent, 1000)
	sub := &exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_TRADES, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: "BTCUSDT"}
	base := time.Now().Add(-24 * time.Hour).UnixMilli()
	batch := make([][]any, 0, 1000)
	for i := 0; i < nTrades; i += len(events) {
		batch = batch[:0]
		for j := range events {
			n := i + j
			events[j] = &exchangev1.MarketEvent{Subscription: sub, Time: base + int64(n/50), Event: &exchangev1.MarketEvent_Trade{Trade: &exchangev1.Trade{
				Id: strconv.Itoa(n), Price: "65000.1", Qty: "0.002", QuoteQty: "130.0002", Side: exchangev1.Side_SIDE_BUY, Time: base + int64(n/50)}}}
			_, row := service.EventRows("binance", events[j], base)
			batch = append(batch, row)
		}
		if err := w.Add(ctx, schema.Trades, batch...); err != nil {
			return err
		}
		batch = make([][]any, 0, 1000)
	}
	for w.Stats().Written < uint64(nTrades) {
		if st := w.Stats(); st.Rejected > 0 {
			return fmt.Errorf("ingest rejected rows: %+v", st)
		}
		time.Sleep(5 * time.Millisecond)
	}
	el := time.Since(start)
	res.IngestRows, res.IngestRowsPerSecond = nTrades, float64(nTrades)/el.Seconds()
	res.IngestCPUMicrosRow = float64((cpuTime() - cpu0).Microseconds()) / float64(nTrades)
	res.IngestServerCPUMicrosRow = float64((procCPUTime(srv.cmd.Process.Pid) - srvCPU0).Microseconds()) / float64(nTrades)
	if ingestProfile != "" {
		pprof.StopCPUProfile()
	}
	ist := w.Stats()
	res.IngestSpooledRows, res.IngestFailedInserts = ist.Spooled, ist.InsertErrors

	// 2. one year of one-minute candles, then the hourly roll-up
	yearStart := (time.Now().UnixMilli()/86_400_000 - 365) * 86_400_000
	const minutes = 365 * 1440
	rows := make([][]any, 0, 10000)
	for i := 0; i < minutes; i++ {
		p := 60000 + i%5000
		rows = append(rows, []any{"binance", "SWAP", "BTCUSDT", yearStart + int64(i)*60_000, strconv.Itoa(p), strconv.Itoa(p + 5),
			strconv.Itoa(p - 5), strconv.Itoa(p + 1), "1.5", "90000.25", uint64(10), true, int64(1)})
		if len(rows) == cap(rows) || i == minutes-1 {
			if _, err := w.WriteNow(ctx, schema.Candles1m, rows); err != nil {
				return err
			}
			rows = make([][]any, 0, 10000)
		}
	}
	_ = conn.Exec(ctx, "OPTIMIZE TABLE bench.candles_1m FINAL")
	if err := settle(ctx, conn); err != nil {
		return err
	}
	st := &query.Store{Conn: conn, Database: "bench"}
	end := yearStart + minutes*60_000 - 1
	lat, err := measure(runs, func() error {
		cs, err := st.Candles(ctx, "binance", "SWAP", "BTCUSDT", "1h", end, 8760)
		if err == nil && len(cs) != 8760 {
			err = fmt.Errorf("roll-up gave %d candles, want 8760", len(cs))
		}
		return err
	})
	if err != nil {
		return err
	}
	res.RollupYearTo1hMs["p50"], res.RollupYearTo1hMs["p99"] = pct(lat, 50), pct(lat, 99)

	// 3. 30 days of 5m series and 8h funding; every query of the API over them
	if err := seriesData(ctx, w); err != nil {
		return err
	}
	if err := settle(ctx, conn); err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	r30 := query.Range{Exchange: "binance", Symbol: "BTCUSDT", Period: "1h", From: now - 30*86_400_000, To: now}
	for name, fn := range map[string]func() error{
		"open-interest":    func() error { _, err := st.OpenInterest(ctx, r30); return err },
		"long-short-ratio": func() error { _, err := st.LongShortRatio(ctx, r30, "accounts"); return err },
		"taker-volume":     func() error { _, err := st.TakerVolume(ctx, r30, "SWAP"); return err },
		"funding-rate":     func() error { _, err := st.FundingRate(ctx, r30); return err },
	} {
		lat, err := measure(runs, fn)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		res.SeriesP50Ms[name], res.SeriesP99Ms[name] = pct(lat, 50), pct(lat, 99)
	}

	// 4. export the year as Parquet
	runtime.GC()
	var peak atomic.Uint64
	stopSample := make(chan struct{})
	sampled := make(chan struct{})
	go func() { // owned by run; samples the heap until the export ends
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stopSample:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	exp := &query.Exporter{HTTPAddr: srv.http, Database: "bench"}
	start = time.Now()
	n, err := exp.Export(ctx, io.Discard, query.ExportRequest{Dataset: "candles_1m", Exchange: "binance", Symbol: "BTCUSDT",
		From: yearStart, To: end + 1, Format: "parquet"})
	close(stopSample)
	<-sampled
	if err != nil {
		return err
	}
	res.ExportParquetSeconds, res.ExportParquetBytes, res.ExportPeakHeapMB = time.Since(start).Seconds(), n, float64(peak.Load())/(1<<20)

	fmt.Printf("%-44s %14s %10s\n", "figure", "measured", "target")
	fmt.Printf("%-44s %14.0f %10s\n", "ingest, trades/s (stream event -> ClickHouse)", res.IngestRowsPerSecond, "> 500000")
	fmt.Printf("%-44s %11.2f us %10s\n", "  CPU per row: this process", res.IngestCPUMicrosRow, "")
	fmt.Printf("%-44s %11.2f us %10s\n", "  CPU per row: ClickHouse (merges included)", res.IngestServerCPUMicrosRow, "")
	verdict := "0"
	if res.IngestFailedInserts > 0 || res.IngestSpooledRows > 0 {
		verdict = "0: FAIL"
	}
	fmt.Printf("%-44s %14s %10s\n", "  failed inserts / spooled rows", fmt.Sprintf("%d / %d", res.IngestFailedInserts, res.IngestSpooledRows), verdict)
	fmt.Printf("%-44s %11.1f ms %10s\n", "roll-up 1y of 1m -> 1h, p50", res.RollupYearTo1hMs["p50"], "")
	fmt.Printf("%-44s %11.1f ms %10s\n", "roll-up 1y of 1m -> 1h, p99", res.RollupYearTo1hMs["p99"], "< 50 ms")
	names := make([]string, 0, len(res.SeriesP99Ms))
	for k := range res.SeriesP99Ms {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Printf("%-44s %11.1f ms %10s\n", k+" 30d 1h, p99 (p50 "+strconv.FormatFloat(res.SeriesP50Ms[k], 'f', 1, 64)+")", res.SeriesP99Ms[k], "< 30 ms")
	}
	fmt.Printf("%-44s %12.2f s %10s\n", "export 1y of 1m candles as Parquet", res.ExportParquetSeconds, "")
	fmt.Printf("%-44s %11.1f MB %10s\n", "  parquet size", float64(res.ExportParquetBytes)/(1<<20), "")
	fmt.Printf("%-44s %11.1f MB %10s\n", "  peak Go heap while streaming", res.ExportPeakHeapMB, "flat")
	b, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
		return err
	}
	if res.IngestFailedInserts > 0 || res.IngestSpooledRows > 0 {
		return errInsertsFailed
	}
	return nil
}

// settle waits until the server runs no merges (at most two minutes) and collects this process's garbage, so the
// next latency phase measures the queries rather than the previous phase's aftermath.
func settle(ctx context.Context, conn driver.Conn) error {
	start := time.Now()
	for {
		var n uint64
		if err := conn.QueryRow(ctx, "SELECT count() FROM system.merges").Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			break
		}
		if time.Since(start) > 2*time.Minute {
			fmt.Printf("warning: %d merges still running after 2 minutes; measuring anyway\n", n)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Printf("(waited %.1f s for merges to finish)\n", time.Since(start).Seconds())
	runtime.GC()
	return nil
}

func seriesData(ctx context.Context, w *ingest.Writer) error {
	now := time.Now().UnixMilli() / 300_000 * 300_000
	var oi, ls, tv, fr [][]any
	for t := now - 30*86_400_000; t <= now; t += 300_000 {
		oi = append(oi, []any{"binance", "BTCUSDT", "5m", t, "81234.567", "5280246855.5", int64(1)})
		ls = append(ls, []any{"binance", "BTCUSDT", "accounts", "5m", t, "1.4286", "0.5882", "0.4118", int64(1)})
		tv = append(tv, []any{"binance", "SWAP", "BTCUSDT", "5m", t, "152.5", "131.25", "1.1619", int64(1)})
		if t%(8*3_600_000) == 0 {
			fr = append(fr, []any{"binance", "BTCUSDT", t, "0.0001", "65000.5", int64(1)})
		}
	}
	for table, rows := range map[string][][]any{schema.OpenInterest: oi, schema.LongShortRatio: ls, schema.TakerVolume: tv, schema.FundingRates: fr} {
		if _, err := w.WriteNow(ctx, table, rows); err != nil {
			return err
		}
	}
	return nil
}

// warmups are the untimed runs before the samples (connections, marks and page cache, the server's compiled
// expressions).
const warmups = 5

func measure(runs int, fn func() error) ([]time.Duration, error) {
	for i := 0; i < warmups; i++ {
		if err := fn(); err != nil {
			return nil, err
		}
	}
	out := make([]time.Duration, 0, runs)
	for i := 0; i < runs; i++ {
		s := time.Now()
		if err := fn(); err != nil {
			return nil, err
		}
		out = append(out, time.Since(s))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

func pct(d []time.Duration, p int) float64 {
	i := (len(d)*p + 99) / 100
	i = min(max(i-1, 0), len(d)-1)
	return float64(d[i].Microseconds()) / 1000
}

func splitFields(s string) []string { return strings.Fields(s) }

// procCPUTime is the user and system CPU time process pid used so far (0 when /proc does not say).
func procCPUTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // fields from the state on (the name may hold spaces)
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64) // utime and stime are fields 14 and 15, in clock ticks
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / clockTicks
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times (100 on Linux).
const clockTicks = 100

// cpuTime is the user and system CPU time this process used so far (all its threads: the writer, the Go GC).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type chProc struct {
	cmd       *exec.Cmd
	done      chan struct{}
	tcp, http string
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func startClickHouse(root, dir string) (*chProc, error) {
	bin := filepath.Join(dir, "exhub-clickhouse")
	b := exec.Command("go", "build", "-o", bin, "./analytics/cmd/exhub-clickhouse")
	b.Dir = root
	if out, err := b.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build exhub-clickhouse: %w\n%s", err, out)
	}
	lib, err := chserver.FindLib()
	if err != nil {
		return nil, err
	}
	tp, err := freePort()
	if err != nil {
		return nil, err
	}
	hp, err := freePort()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "clickhouse.log"))
	if err != nil {
		return nil, err
	}
	p := &chProc{tcp: net.JoinHostPort("127.0.0.1", strconv.Itoa(tp)), http: net.JoinHostPort("127.0.0.1", strconv.Itoa(hp)), done: make(chan struct{})}
	p.cmd = exec.Command(bin, "--path", filepath.Join(dir, "data"), "--tcp-port", strconv.Itoa(tp), "--http-port", strconv.Itoa(hp), "--lib", lib)
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = p.cmd.Wait(); _ = logf.Close(); close(p.done) }() // owned by chProc; ends when the child exits
	client := &http.Client{Timeout: time.Second}
	for deadline := time.Now().Add(60 * time.Second); ; {
		if resp, err := client.Get("http://" + p.http + "/ping"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p, nil
			}
		}
		select {
		case <-p.done:
			return nil, errors.New("exhub-clickhouse exited at start; see its log")
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, errors.New("exhub-clickhouse did not become ready")
		}
	}
}

func (p *chProc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}
