// Command rest measures the REST market API through the edge: GET /api/v1/tickers requests per second and latency
// percentiles, answered from the edge's HTTP cache (anonymous requests) and not (requests carrying a cookie, which
// the edge always sends to the BFF, as for a signed-in user), plus the BFF alone for reference. It prints a table
// and writes the figures as JSON.
//
//	go run ./bench/rest --stack                      start bin/exhub-stack (make build first), measure, stop it
//	go run ./bench/rest --edge http://127.0.0.1:8080 --bff http://127.0.0.1:8090   measure a running stack
//
// The scenarios take turns in --rounds rounds (after one warm-up each), so a change in the machine's load during the
// run weighs on all of them alike; req/s counts every round, and each round's figure is kept too.
//
// Every run is bounded: at most --max-requests requests and --duration per scenario, loopback addresses only.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"
)

// Target of the issue: cached tickers through the edge.
const targetCachedRPS = 10_000

type options struct {
	edge, bff     string
	exchange, typ string
	concurrency   int
	duration      time.Duration
	warmup        time.Duration
	maxRequests   int64
	rounds        int
	out           string
	stack         bool
	root          string
	// acceptEncoding is sent on every request ("" sends none: answers come uncompressed).
	acceptEncoding string
	// analytics keeps the stack's analytics ingest and backfill running (--stack).
	analytics bool
}

// Result is one scenario's figures.
type Result struct {
	Name          string  `json:"name"`
	URL           string  `json:"url"`
	Cookie        bool    `json:"cookie"`
	Requests      int64   `json:"requests"`
	Errors        int64   `json:"errors"`
	Seconds       float64 `json:"seconds"`
	ReqPerSec     float64 `json:"reqPerSec"`
	P50Ms         float64 `json:"p50Ms"`
	P90Ms         float64 `json:"p90Ms"`
	P99Ms         float64 `json:"p99Ms"`
	MaxMs         float64 `json:"maxMs"`
	CacheHitRatio float64 `json:"cacheHitRatio"`
	// CacheStore is the edge cache store named by the hits' Cache-Status (detail=...), e.g. OTTER (in memory)
	// or REDIS (Valkey); empty without hits.
	CacheStore  string `json:"cacheStore,omitempty"`
	BytesPerReq int64  `json:"bytesPerReq"`
	// LoadAvg1 is the machine's 1-minute load average just after the scenario's last round (the load tool
	// included): above the CPU count, other work competed with the measured servers.
	LoadAvg1 float64 `json:"loadAvg1,omitempty"`
	// RoundReqPerSec is each round's figure; ReqPerSec covers all rounds together.
	RoundReqPerSec []float64 `json:"roundReqPerSec"`
}

// Report is the JSON file.
type Report struct {
	Benchmark   string `json:"benchmark"`
	Time        string `json:"time"`
	GoVersion   string `json:"goVersion"`
	CPUs        int    `json:"cpus"`
	Exchange    string `json:"exchange"`
	Type        string `json:"type"`
	Concurrency int    `json:"concurrency"`
	Duration    string `json:"duration"`
	Rounds      int    `json:"rounds"`
	MaxRequests int64  `json:"maxRequests"`
	// AcceptEncoding is the Accept-Encoding every request sent (empty: none, answers uncompressed).
	AcceptEncoding string `json:"acceptEncoding,omitempty"`
	// StackAnalytics says whether the stack started by --stack ran analytics ingest and backfill.
	StackAnalytics *bool `json:"stackAnalytics,omitempty"`
	// LoadAvg1Before is the 1-minute load average before anything was started: other work on the machine.
	LoadAvg1Before float64   `json:"loadAvg1Before,omitempty"`
	Results        []Result  `json:"results"`
	Target         TargetRes `json:"target"`
}

// TargetRes says whether the cached figure beat the target.
type TargetRes struct {
	CachedReqPerSec float64 `json:"cachedReqPerSec"`
	Met             bool    `json:"met"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench/rest:", err)
		os.Exit(1)
	}
}

func run() error {
	var o options
	flag.StringVar(&o.edge, "edge", "http://127.0.0.1:8080", "edge base URL (loopback)")
	flag.StringVar(&o.bff, "bff", "http://127.0.0.1:8090", "BFF base URL for the direct figure (loopback; empty: skip)")
	flag.StringVar(&o.exchange, "exchange", "", "exchange slug (default: the first running exchange with SWAP markets)")
	flag.StringVar(&o.typ, "type", "SWAP", "market type")
	flag.IntVar(&o.concurrency, "concurrency", 64, "concurrent connections")
	flag.DurationVar(&o.duration, "duration", 8*time.Second, "measured time per scenario")
	flag.DurationVar(&o.warmup, "warmup", time.Second, "unmeasured warm-up per scenario")
	flag.Int64Var(&o.maxRequests, "max-requests", 400_000, "most measured requests per scenario")
	flag.IntVar(&o.rounds, "rounds", 4, "rounds per scenario, the scenarios taking turns (a change in the machine's load then hits all of them)")
	flag.StringVar(&o.out, "out", "bench/results/rest.json", "JSON results file (empty: none)")
	flag.BoolVar(&o.stack, "stack", false, "start bin/exhub-stack from --root for the run and stop it after")
	flag.StringVar(&o.root, "root", ".", "repository root (with --stack)")
	flag.BoolVar(&o.analytics, "analytics", false, "with --stack: keep analytics ingest and backfill into ClickHouse running during the run (off by default: the REST path does not use them, and on 2 CPUs their start-up backfill competes with it)")
	flag.StringVar(&o.acceptEncoding, "accept-encoding", "", `Accept-Encoding of every request (e.g. "gzip, deflate, br, zstd" as browsers send; empty: none)`)
	flag.Parse()
	if o.concurrency < 1 || o.concurrency > 1024 || o.duration <= 0 || o.duration > 5*time.Minute || o.maxRequests < 1 ||
		o.rounds < 1 || o.rounds > 20 || o.maxRequests < int64(o.rounds) {
		return errors.New("--concurrency must be 1..1024, --duration up to 5m, --rounds 1..20, --max-requests at least --rounds")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	loadBefore := loadAvg1()

	if o.stack {
		edge, bff, stopStack, err := startStack(ctx, o.root, o.analytics)
		if err != nil {
			return err
		}
		defer stopStack()
		o.edge, o.bff = edge, bff
	}
	for _, u := range []string{o.edge, o.bff} {
		if u == "" {
			continue
		}
		if err := loopbackOnly(u); err != nil {
			return err
		}
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		MaxIdleConns: o.concurrency * 2, MaxIdleConnsPerHost: o.concurrency * 2, MaxConnsPerHost: o.concurrency * 2,
		IdleConnTimeout: 30 * time.Second, DisableCompression: true,
	}}
	if o.exchange == "" {
		slug, err := pickExchange(ctx, client, o.edge, o.typ)
		if err != nil {
			return err
		}
		o.exchange = slug
	}
	path := fmt.Sprintf("/api/v1/tickers?exchange=%s&type=%s", url.QueryEscape(o.exchange), url.QueryEscape(o.typ))
	scenarios := []*scenario{
		{name: "tickers via edge, cached", target: o.edge + path},
		{name: "tickers via edge, uncached (cookie)", target: o.edge + path, cookie: true},
	}
	if o.bff != "" {
		scenarios = append(scenarios, &scenario{name: "tickers from the BFF directly", target: o.bff + path})
	}
	rep := Report{Benchmark: "rest", Time: time.Now().UTC().Format(time.RFC3339), GoVersion: runtime.Version(),
		CPUs: runtime.NumCPU(), Exchange: o.exchange, Type: o.typ, Concurrency: o.concurrency, Duration: o.duration.String(),
		Rounds: o.rounds, MaxRequests: o.maxRequests, AcceptEncoding: o.acceptEncoding, LoadAvg1Before: loadBefore}
	if o.stack {
		rep.StackAnalytics = &o.analytics
	}
	perRound := o.duration / time.Duration(o.rounds)
	for r := range o.rounds {
		for _, sc := range scenarios {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if r == 0 {
				fmt.Fprintf(os.Stderr, "bench/rest: %s (%s)\n", sc.name, sc.target)
				sc.warm(ctx, client, o)
			}
			if err := sc.round(ctx, client, o, perRound, o.maxRequests/int64(o.rounds)); err != nil {
				return fmt.Errorf("%s: %w", sc.name, err)
			}
		}
	}
	for _, sc := range scenarios {
		res, err := sc.result()
		if err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
		rep.Results = append(rep.Results, res)
	}
	rep.Target.CachedReqPerSec = targetCachedRPS
	rep.Target.Met = rep.Results[0].ReqPerSec >= targetCachedRPS && rep.Results[0].Errors == 0
	printTable(os.Stdout, rep)
	if o.out != "" {
		if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
			return err
		}
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(o.out, append(b, '\n'), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "bench/rest: wrote %s\n", o.out)
	}
	return nil
}

func loopbackOnly(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" {
		return fmt.Errorf("%q is not an http URL", raw)
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s is not a loopback address: this load tool only targets the local machine", raw)
	}
	return nil
}

// pickExchange asks the API for the first running exchange offering the market type.
func pickExchange(ctx context.Context, c *http.Client, base, typ string) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/exchanges", nil)
	resp, err := c.Do(req)
	if err != nil {
		return "", fmt.Errorf("list exchanges: %w", err)
	}
	defer resp.Body.Close()
	var out struct {
		Exchanges []struct {
			Slug        string   `json:"slug"`
			PluginState string   `json:"pluginState"`
			MarketTypes []string `json:"marketTypes"`
		} `json:"exchanges"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", fmt.Errorf("list exchanges: %w", err)
	}
	for _, e := range out.Exchanges {
		if e.PluginState == "running" && slices.Contains(e.MarketTypes, typ) {
			return e.Slug, nil
		}
	}
	return "", fmt.Errorf("no running exchange offers %s markets", typ)
}

type worker struct {
	lat   []time.Duration
	errs  int64
	hits  int64
	bytes int64
	first error
	store string
}

// loadAvg1 returns the 1-minute load average (0 where /proc/loadavg is missing).
func loadAvg1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var v float64
	if _, err := fmt.Sscan(string(b), &v); err != nil {
		return 0
	}
	return v
}

// cacheDetail returns the detail=... parameter of a Cache-Status header.
func cacheDetail(cs string) string {
	for part := range strings.SplitSeq(cs, ";") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(part), "detail="); ok {
			return v
		}
	}
	return ""
}

// request returns the function a worker calls for each request to target.
func request(c *http.Client, target string, cookie bool, acceptEncoding string) func(context.Context, *worker) {
	return func(ctx context.Context, w *worker) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		if cookie {
			req.Header.Set("Cookie", "exhub_bench=1")
		}
		if acceptEncoding != "" {
			req.Header.Set("Accept-Encoding", acceptEncoding)
		}
		start := time.Now()
		resp, err := c.Do(req)
		if err != nil {
			if ctx.Err() == nil {
				w.errs++
				if w.first == nil {
					w.first = err
				}
			}
			return
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		d := time.Since(start)
		if resp.StatusCode != http.StatusOK {
			w.errs++
			if w.first == nil {
				w.first = fmt.Errorf("status %d", resp.StatusCode)
			}
			return
		}
		w.lat = append(w.lat, d)
		w.bytes += n
		if cs := resp.Header.Get("Cache-Status"); strings.Contains(cs, "; hit") {
			w.hits++
			if w.store == "" {
				w.store = cacheDetail(cs)
			}
		}
	}
}

// scenario accumulates one scenario's rounds.
type scenario struct {
	name, target string
	cookie       bool
	lat          []time.Duration
	errs, hits   int64
	bytes        int64
	store        string
	elapsed      time.Duration
	rounds       []float64
	load         float64
}

// warm runs unmeasured requests for the warm-up time: fills the caches and the connection pool.
func (sc *scenario) warm(ctx context.Context, c *http.Client, o options) {
	wctx, cancel := context.WithTimeout(ctx, o.warmup)
	defer cancel()
	runWorkers(wctx, o.concurrency, nil, request(c, sc.target, sc.cookie, o.acceptEncoding))
}

// round runs concurrency workers for d or until budget requests were sent, and adds their figures.
func (sc *scenario) round(ctx context.Context, c *http.Client, o options, d time.Duration, budget int64) error {
	var left atomic.Int64
	left.Store(budget)
	mctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	start := time.Now()
	workers := runWorkers(mctx, o.concurrency, &left, request(c, sc.target, sc.cookie, o.acceptEncoding))
	elapsed := time.Since(start)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	n := 0
	for _, w := range workers {
		sc.lat = append(sc.lat, w.lat...)
		n += len(w.lat)
		sc.errs += w.errs
		sc.bytes += w.bytes
		sc.hits += w.hits
		if sc.store == "" {
			sc.store = w.store
		}
		if w.first != nil {
			fmt.Fprintf(os.Stderr, "bench/rest: error sample: %v\n", w.first)
		}
	}
	sc.elapsed += elapsed
	sc.rounds = append(sc.rounds, float64(n)/elapsed.Seconds())
	sc.load = loadAvg1()
	return nil
}

// result sums the rounds: requests per second over the whole measured time, percentiles over every request.
func (sc *scenario) result() (Result, error) {
	res := Result{Name: sc.name, URL: sc.target, Cookie: sc.cookie, Errors: sc.errs, CacheStore: sc.store,
		LoadAvg1: sc.load, RoundReqPerSec: sc.rounds}
	all := sc.lat
	res.Requests = int64(len(all))
	if res.Requests == 0 {
		return res, errors.New("no successful request")
	}
	slices.Sort(all)
	pct := func(p float64) float64 {
		i := int(float64(len(all))*p+0.5) - 1
		i = max(0, min(i, len(all)-1))
		return float64(all[i].Microseconds()) / 1000
	}
	res.Seconds = sc.elapsed.Seconds()
	res.ReqPerSec = float64(res.Requests) / sc.elapsed.Seconds()
	res.P50Ms, res.P90Ms, res.P99Ms, res.MaxMs = pct(0.50), pct(0.90), pct(0.99), float64(all[len(all)-1].Microseconds())/1000
	res.CacheHitRatio = float64(sc.hits) / float64(res.Requests)
	res.BytesPerReq = sc.bytes / res.Requests
	return res, nil
}

// runWorkers runs n workers calling fn until ctx ends or the budget (when given) is spent.
func runWorkers(ctx context.Context, n int, budget *atomic.Int64, fn func(context.Context, *worker)) []*worker {
	ws := make([]*worker, n)
	var wg sync.WaitGroup
	for i := range ws {
		ws[i] = &worker{lat: make([]time.Duration, 0, 4096)}
		wg.Add(1)
		go func(w *worker) { // owned by runWorkers; ends with ctx or the budget
			defer wg.Done()
			for ctx.Err() == nil {
				if budget != nil && budget.Add(-1) < 0 {
					return
				}
				fn(ctx, w)
			}
		}(ws[i])
	}
	wg.Wait()
	return ws
}

func printTable(w io.Writer, r Report) {
	fmt.Fprintf(w, "\nREST through the edge: GET /api/v1/tickers?exchange=%s&type=%s, %d connections, %s per scenario in %d rounds, %d CPUs\n\n",
		r.Exchange, r.Type, r.Concurrency, r.Duration, r.Rounds, r.CPUs)
	if r.AcceptEncoding != "" {
		fmt.Fprintf(w, "every request sent Accept-Encoding: %s\n\n", r.AcceptEncoding)
	}
	if r.StackAnalytics != nil && !*r.StackAnalytics {
		fmt.Fprintf(w, "the stack ran without analytics ingest and backfill (--analytics to keep them)\n\n")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\trequests\terrors\treq/s\trounds min-max\tp50 ms\tp90 ms\tp99 ms\tmax ms\tedge hits\tstore\tload\t")
	for _, x := range r.Results {
		store := x.CacheStore
		if store == "" {
			store = "-"
		}
		lo, hi := slices.Min(x.RoundReqPerSec), slices.Max(x.RoundReqPerSec)
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%.0f-%.0f\t%.2f\t%.2f\t%.2f\t%.1f\t%.0f%%\t%s\t%.1f\t\n", x.Name, x.Requests, x.Errors,
			x.ReqPerSec, lo, hi, x.P50Ms, x.P90Ms, x.P99Ms, x.MaxMs, x.CacheHitRatio*100, store, x.LoadAvg1)
	}
	tw.Flush()
	verdict := "MET"
	if !r.Target.Met {
		verdict = "NOT MET"
	}
	fmt.Fprintf(w, "\ntarget: cached over %.0f req/s: %s\n", r.Target.CachedReqPerSec, verdict)
	if r.LoadAvg1Before > float64(r.CPUs)/2 {
		fmt.Fprintf(w, "note: the 1-minute load average was %.1f on %d CPUs before the run: other work competed with it\n",
			r.LoadAvg1Before, r.CPUs)
	}
}

// startStack runs bin/exhub-stack with a ready file and returns the edge and BFF URLs and a stop function that
// interrupts it by PID and waits (killing it after 30 s).
func startStack(ctx context.Context, root string, analytics bool) (string, string, func(), error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return "", "", nil, err
	}
	bin := filepath.Join(root, "bin", "exhub-stack")
	if _, err := os.Stat(bin); err != nil {
		return "", "", nil, fmt.Errorf("%s is missing: run make build first", bin)
	}
	edgeAddr := envOr("EXHUB_EDGE_ADDR", "127.0.0.1:8080")
	bffAddr := envOr("EXHUB_HTTP_ADDR", "127.0.0.1:8090")
	for _, a := range []string{edgeAddr, bffAddr} {
		if c, err := net.DialTimeout("tcp", a, 200*time.Millisecond); err == nil {
			c.Close()
			return "", "", nil, fmt.Errorf("%s is already in use (another stack?): stop it or move this one with EXHUB_EDGE_ADDR, EXHUB_HTTP_ADDR and the other EXHUB_* port variables", a)
		}
	}
	dir, err := os.MkdirTemp("", "bench-rest-")
	if err != nil {
		return "", "", nil, err
	}
	ready := filepath.Join(dir, "ready")
	logPath := filepath.Join(root, ".data", "bench", "rest-stack.log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return "", "", nil, err
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return "", "", nil, err
	}
	cmd := exec.Command(bin, "--root", root, "--ready-file", ready)
	cmd.Dir = root
	if !analytics {
		// The BFF reads EXHUB_ANALYTICS_ENABLED from the stack's environment.
		cmd.Env = append(os.Environ(), "EXHUB_ANALYTICS_ENABLED=false")
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return "", "", nil, fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan struct{})
	go func() { // owned by startStack's stop function, which waits for it
		_ = cmd.Wait()
		close(exited)
	}()
	stop := func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Signal(os.Interrupt)
			select {
			case <-exited:
			case <-time.After(30 * time.Second):
				fmt.Fprintf(os.Stderr, "bench/rest: stack pid %d did not stop in 30 s; killing it\n", cmd.Process.Pid)
				_ = cmd.Process.Kill()
				<-exited
			}
		}
		logf.Close()
		os.RemoveAll(dir)
	}
	fmt.Fprintf(os.Stderr, "bench/rest: starting the stack (pid %d, log %s)\n", cmd.Process.Pid, logPath)
	deadline := time.Now().Add(180 * time.Second)
	for {
		if b, err := os.ReadFile(ready); err == nil && len(b) > 0 {
			edge := strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
			// Let the ticker refresher fill its cache before measuring.
			time.Sleep(time.Second)
			return strings.TrimRight(edge, "/"), "http://" + bffAddr, stop, nil
		}
		select {
		case <-exited:
			stop()
			return "", "", nil, fmt.Errorf("the stack exited before it was ready; see %s", logPath)
		case <-ctx.Done():
			stop()
			return "", "", nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return "", "", nil, fmt.Errorf("the stack was not ready in 180 s; see %s", logPath)
		}
	}
}

func envOr(k, def string) string {
	if v, ok := os.LookupEnv(k); ok && v != "" {
		return v
	}
	return def
}
