// Command history measures how long a freshly started stack takes to hold complete one-minute candle history for
// the markets a new user sees first: BTC, ETH, SOL, XRP and DOGE against USDT, spot and perpetual swap, on every
// exchange of the demo stack (binance and okx; analytics takes these bases first, see analytics/service).
//
//	go run ./bench/history            start bin/exhub-stack on a temporary data dir (make build first), measure, stop it
//
// The stack starts from nothing (its ClickHouse, Valkey and Kratos data live in a temporary directory removed at
// the end), so every candle comes from the start-up backfill and live ingest. The tool polls ClickHouse every
// --poll until every market holds every closed minute of its window, or --limit (10 min) after the start passes.
// A market's window is the 30 days before the stack was ready, less --margin at each end: the backfill pass starts
// within seconds of the ready signal and covers the 30 days before it, so the window does not depend on when it
// starts. It prints, per market, the time from the stack's start to complete history and the rows held, writes
// bench/results/history.json and fails when a market is not complete in time. The stack is stopped by its PID.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// bases are the base assets analytics takes and backfills first (analytics/service Config.FirstBases).
var bases = []string{"BTC", "ETH", "SOL", "XRP", "DOGE"}

type options struct {
	root     string
	out      string
	days     int
	limit    time.Duration
	poll     time.Duration
	margin   time.Duration
	database string
}

type market struct {
	Exchange string `json:"exchange"`
	Type     string `json:"type"`
	Symbol   string `json:"symbol"`
	// Minutes is how many closed minutes the window holds, Want how many it has.
	Minutes uint64 `json:"minutes"`
	Want    uint64 `json:"wantMinutes"`
	// Rows is every one-minute candle row stored for the market (any time), when it completed or at the end.
	Rows uint64 `json:"rows"`
	// CompleteAfterMs is the time from the stack's start to complete history; 0 when it never completed.
	CompleteAfterMs int64 `json:"completeAfterMs"`
	Complete        bool  `json:"complete"`
}

type result struct {
	Measured       string    `json:"measured"`
	CPUs           int       `json:"cpus"`
	LoadAvg1Before float64   `json:"loadAverage1mBefore"`
	Days           int       `json:"days"`
	MarginMinutes  int       `json:"marginMinutes"`
	LimitSeconds   int       `json:"limitSeconds"`
	ReadyAfterMs   int64     `json:"readyAfterMs"`
	AllCompleteMs  int64     `json:"allCompleteAfterMs"`
	Complete       bool      `json:"complete"`
	Markets        []*market `json:"markets"`
}

func main() {
	var o options
	flag.StringVar(&o.root, "root", ".", "repository root (bin/exhub-stack, bench/results)")
	flag.StringVar(&o.out, "out", "bench/results/history.json", "where to write the figures (relative to --root)")
	flag.IntVar(&o.days, "days", 30, "days of history a market must hold (the stack's analytics.backfill_days)")
	flag.DurationVar(&o.limit, "limit", 10*time.Minute, "fail when history is not complete this long after the stack's start")
	flag.DurationVar(&o.poll, "poll", 5*time.Second, "how often ClickHouse is asked")
	flag.DurationVar(&o.margin, "margin", 10*time.Minute, "left out of the window at each end (see the package doc)")
	flag.StringVar(&o.database, "database", "exhub", "the analytics database (analytics.database)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench/history:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	root, err := filepath.Abs(o.root)
	if err != nil {
		return err
	}
	res := &result{Measured: time.Now().UTC().Format(time.RFC3339), CPUs: runtime.NumCPU(), LoadAvg1Before: loadAvg1(),
		Days: o.days, MarginMinutes: int(o.margin / time.Minute), LimitSeconds: int(o.limit / time.Second)}
	st, err := startStack(ctx, root)
	if err != nil {
		return err
	}
	defer st.stop()
	deadline := st.started.Add(o.limit)

	if err := st.waitReady(ctx, deadline); err != nil {
		return err
	}
	ready := time.Now()
	res.ReadyAfterMs = ready.Sub(st.started).Milliseconds()
	fmt.Fprintf(os.Stderr, "bench/history: stack ready after %s; waiting for %d days of 1m candles\n",
		ready.Sub(st.started).Round(time.Millisecond), o.days)

	markets, err := defaultMarkets(ctx, st.edge, deadline)
	if err != nil {
		return err
	}
	res.Markets = markets
	readyMin := ready.UnixMilli() / 60_000 * 60_000
	from := readyMin - int64(o.days)*86_400_000 + o.margin.Milliseconds()
	to := readyMin - o.margin.Milliseconds()
	want := uint64((to-from)/60_000 + 1)
	for _, m := range markets {
		m.Want = want
	}

	ch := &chClient{url: "http://" + st.chHTTP + "/", db: o.database}
	var lastErr error
	for {
		counts, rows, err := ch.minutes(ctx, markets, from, to)
		now := time.Now()
		if err != nil {
			lastErr = err // ClickHouse busy or the tables not created yet: ask again
		} else {
			lastErr = nil
			for _, m := range markets {
				k := key(m.Exchange, m.Type, m.Symbol)
				if !m.Complete {
					m.Minutes, m.Rows = counts[k], rows[k]
					if m.Minutes >= want {
						m.Complete = true
						m.CompleteAfterMs = now.Sub(st.started).Milliseconds()
						fmt.Fprintf(os.Stderr, "bench/history: %-8s %-4s %-14s complete after %s (%d rows)\n", m.Exchange, m.Type, m.Symbol,
							now.Sub(st.started).Round(time.Second), m.Rows)
					}
				}
			}
		}
		if !slices.ContainsFunc(markets, func(m *market) bool { return !m.Complete }) {
			res.Complete = true
			res.AllCompleteMs = now.Sub(st.started).Milliseconds()
			break
		}
		if now.After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(o.poll):
		}
	}
	report(os.Stdout, res)
	if err := write(filepath.Join(root, o.out), res); err != nil {
		return err
	}
	if !res.Complete {
		var missing []string
		for _, m := range markets {
			if !m.Complete {
				missing = append(missing, fmt.Sprintf("%s %s %s (%d of %d minutes)", m.Exchange, m.Type, m.Symbol, m.Minutes, m.Want))
			}
		}
		if lastErr != nil {
			missing = append(missing, "last ClickHouse error: "+lastErr.Error())
		}
		return fmt.Errorf("history not complete %s after the stack's start: %s", o.limit, strings.Join(missing, "; "))
	}
	return nil
}

func key(exchange, typ, symbol string) string { return exchange + "|" + typ + "|" + symbol }

// defaultMarkets lists, from the BFF's instruments API, each exchange's USDT market of every base in bases, spot
// and swap.
func defaultMarkets(ctx context.Context, edge string, deadline time.Time) ([]*market, error) {
	var out []*market
	for _, ex := range []string{"binance", "okx"} {
		for _, typ := range []string{"SWAP", "SPOT"} {
			var list struct {
				Instruments []instrument `json:"instruments"`
			}
			u := edge + "/api/v1/instruments?exchange=" + ex + "&type=" + typ
			for {
				err := getJSON(ctx, u, &list)
				if err == nil {
					break
				}
				if time.Now().After(deadline) {
					return nil, fmt.Errorf("instruments of %s %s: %w", ex, typ, err)
				}
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(time.Second):
				}
			}
			for _, b := range bases {
				i := slices.IndexFunc(list.Instruments, func(in instrument) bool { return in.Base == b && in.Quote == "USDT" })
				if i < 0 {
					return nil, fmt.Errorf("%s %s lists no %s/USDT market", ex, typ, b)
				}
				out = append(out, &market{Exchange: ex, Type: typ, Symbol: list.Instruments[i].Symbol})
			}
		}
	}
	return out, nil
}

type instrument struct {
	Symbol string `json:"symbol"`
	Base   string `json:"base"`
	Quote  string `json:"quote"`
}

func getJSON(ctx context.Context, u string, v any) error {
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("GET %s: HTTP %d: %s", u, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// chClient asks ClickHouse over its HTTP interface (the stack's default user, loopback only).
type chClient struct {
	url string
	db  string
}

// minutes returns, per market key, the closed minutes stored in [from, to] (the newest row of a minute decides,
// as the backfill's gap check reads them) and every one-minute row stored for the market.
func (c *chClient) minutes(ctx context.Context, markets []*market, from, to int64) (window, rows map[string]uint64, err error) {
	var in []string
	for _, m := range markets {
		in = append(in, fmt.Sprintf("(%s, %s, %s)", quote(m.Exchange), quote(m.Type), quote(m.Symbol)))
	}
	filter := "(exchange, market_type, symbol) IN (" + strings.Join(in, ", ") + ")"
	table := "`" + c.db + "`.candles_1m"
	q := fmt.Sprintf(`SELECT exchange, market_type, symbol, 'window', count() FROM (
    SELECT exchange, market_type, symbol, open_time FROM %[1]s
    WHERE %[2]s AND open_time >= fromUnixTimestamp64Milli(toInt64(%[3]d), 'UTC') AND open_time <= fromUnixTimestamp64Milli(toInt64(%[4]d), 'UTC')
    GROUP BY exchange, market_type, symbol, open_time HAVING argMax(closed, ingested_at)
) GROUP BY exchange, market_type, symbol
UNION ALL
SELECT exchange, market_type, symbol, 'rows', count() FROM %[1]s WHERE %[2]s GROUP BY exchange, market_type, symbol
FORMAT TabSeparated`, table, filter, from, to)
	qctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(qctx, http.MethodPost, c.url, strings.NewReader(q))
	if err != nil {
		return nil, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return nil, nil, fmt.Errorf("ClickHouse: HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(b)))
	}
	window, rows = map[string]uint64{}, map[string]uint64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 5 {
			return nil, nil, fmt.Errorf("ClickHouse: unexpected row %q", sc.Text())
		}
		n, err := strconv.ParseUint(f[4], 10, 64)
		if err != nil {
			return nil, nil, fmt.Errorf("ClickHouse: unexpected row %q", sc.Text())
		}
		if f[3] == "window" {
			window[key(f[0], f[1], f[2])] = n
		} else {
			rows[key(f[0], f[1], f[2])] = n
		}
	}
	return window, rows, sc.Err()
}

func quote(s string) string { return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'" }

type stack struct {
	cmd     *exec.Cmd
	exited  chan struct{}
	started time.Time
	ready   string
	edge    string
	chHTTP  string
	dir     string
	logf    *os.File
	logPath string
}

// startStack runs bin/exhub-stack on a temporary data dir with a ready file.
func startStack(ctx context.Context, root string) (*stack, error) {
	bin := filepath.Join(root, "bin", "exhub-stack")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%s is missing: run make build first", bin)
	}
	chHTTP := "127.0.0.1:" + envOr("EXHUB_CLICKHOUSE_HTTP_PORT", "8123")
	for _, a := range []string{envOr("EXHUB_EDGE_ADDR", "127.0.0.1:8080"), envOr("EXHUB_HTTP_ADDR", "127.0.0.1:8090"), chHTTP} {
		if c, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("%s is already in use (another stack?): stop it or move this one with the EXHUB_* port variables", a)
		}
	}
	dir, err := os.MkdirTemp("", "bench-history-")
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(root, ".data", "bench", "history-stack.log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	s := &stack{exited: make(chan struct{}), ready: filepath.Join(dir, "ready"), chHTTP: chHTTP, dir: dir, logf: logf, logPath: logPath}
	s.cmd = exec.Command(bin, "--root", root, "--ready-file", s.ready)
	s.cmd.Dir = root
	// A fresh stack: every service's data, and the analytics spool, in the temporary directory.
	s.cmd.Env = append(os.Environ(), "EXHUB_DATA_DIR="+filepath.Join(dir, "data"),
		"EXHUB_ANALYTICS_SPOOL_DIR="+filepath.Join(dir, "spool"))
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	s.started = time.Now()
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() { // owned by the stack's stop, which waits for it
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	fmt.Fprintf(os.Stderr, "bench/history: starting the stack (pid %d, data %s, log %s)\n", s.cmd.Process.Pid, dir, logPath)
	return s, nil
}

func (s *stack) waitReady(ctx context.Context, deadline time.Time) error {
	for {
		if b, err := os.ReadFile(s.ready); err == nil && len(b) > 0 {
			s.edge = strings.TrimRight(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]), "/")
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("the stack exited before it was ready; see %s", s.logPath)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the stack was not ready by the limit; see %s", s.logPath)
		}
	}
}

// stop interrupts the stack by its PID (it stops its services in order) and waits; SIGKILL after two minutes.
func (s *stack) stop() {
	select {
	case <-s.exited:
	default:
		_ = s.cmd.Process.Signal(os.Interrupt)
		select {
		case <-s.exited:
		case <-time.After(2 * time.Minute):
			fmt.Fprintf(os.Stderr, "bench/history: stack pid %d did not stop in 2 min; killing it\n", s.cmd.Process.Pid)
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	}
	s.logf.Close()
	os.RemoveAll(s.dir)
}

func report(w io.Writer, r *result) {
	fmt.Fprintf(w, "\nbench/history: %d days of 1m candles per market (window less %d min at each end), stack ready after %.1f s\n\n",
		r.Days, r.MarginMinutes, float64(r.ReadyAfterMs)/1000)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "exchange\ttype\tsymbol\tcomplete after\tminutes\trows\t")
	for _, m := range r.Markets {
		after := "NOT COMPLETE"
		if m.Complete {
			after = fmt.Sprintf("%.0f s", float64(m.CompleteAfterMs)/1000)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t%d\t\n", m.Exchange, m.Type, m.Symbol, after, m.Minutes, m.Want, m.Rows)
	}
	tw.Flush()
	if r.Complete {
		fmt.Fprintf(w, "\nevery market complete after %.0f s (limit %d s)\n", float64(r.AllCompleteMs)/1000, r.LimitSeconds)
	} else {
		fmt.Fprintf(w, "\nNOT every market complete within %d s\n", r.LimitSeconds)
	}
	if r.LoadAvg1Before > float64(r.CPUs)/2 {
		fmt.Fprintf(w, "note: the 1-minute load average was %.1f on %d CPUs before the run: other work competed with it\n",
			r.LoadAvg1Before, r.CPUs)
	}
}

func write(path string, r *result) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func loadAvg1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

func envOr(k, def string) string {
	if v, ok := os.LookupEnv(k); ok && v != "" {
		return v
	}
	return def
}
