// Command trading is the trading load bench: members created through the real stack place and cancel resting
// limit orders through the edge at stepped target rates (open loop), with the order journal on SQLite and on
// PostgreSQL; one member subscribed to the private `fills` channel measures fill-to-stream latency; the BFF's CPU
// per order is read from /proc. It prints a table beside the targets of issue 13 and writes
// bench/results/trading.txt and .json.
//
//	go run ./bench/trading --stack     start bin/exhub-stack per journal (make build first), measure, stop it
//	go run ./bench/trading             measure the running stack at --edge (journal as that stack has it)
//
// Every run is bounded: --members members, each step --step long (sending stops at 1.5 times that), a fixed
// number of fill orders, loopback addresses only.
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
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"
)

// Targets of issue 13, section 4.
const (
	targetSustained = 2000.0 // orders/s
	targetAtRate    = 500.0  // the rate of the latency targets
	targetP50Ms     = 3.0
	targetP99Ms     = 15.0
	targetFillP99Ms = 50.0
)

type options struct {
	edge, root, out        string
	stack                  bool
	journals               []string
	exchange, typ, symbol  string
	members, workers, regC int
	rates                  []float64
	step                   time.Duration
	fillOrders             int
	fillRate               float64
	waitPort               time.Duration
	bffPID                 int
}

// JournalRun is one journal's run.
type JournalRun struct {
	Journal      string       `json:"journal"`
	Members      int          `json:"members"`
	RegisterSecs float64      `json:"registerSeconds"`
	AccountsSecs float64      `json:"accountsReadySeconds"`
	Market       market       `json:"market"`
	Steps        []StepResult `json:"steps"`
	Fill         *FillResult  `json:"fillToStream,omitempty"`
	FillError    string       `json:"fillToStreamError,omitempty"`
	Error        string       `json:"error,omitempty"`
	Load1Before  float64      `json:"loadAverage1mBefore"`
}

// Verdict is one target line.
type Verdict struct {
	Target   string `json:"target"`
	Measured string `json:"measured"`
	Pass     bool   `json:"pass"`
}

// Report is the JSON file.
type Report struct {
	Benchmark string       `json:"benchmark"`
	Time      string       `json:"time"`
	GoVersion string       `json:"goVersion"`
	CPUs      int          `json:"cpus"`
	Uptime    string       `json:"uptimeBefore"`
	Step      string       `json:"stepDuration"`
	Workers   int          `json:"workers"`
	Runs      []JournalRun `json:"runs"`
	Targets   []Verdict    `json:"targets"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench/trading:", err)
		os.Exit(1)
	}
}

func run() error {
	var o options
	var journals, rates string
	flag.StringVar(&o.edge, "edge", "http://127.0.0.1:8080", "edge base URL of a running stack (loopback; ignored with --stack)")
	flag.BoolVar(&o.stack, "stack", false, "start bin/exhub-stack from --root for each journal (fresh data dir) and stop it after")
	flag.StringVar(&o.root, "root", ".", "repository root")
	flag.StringVar(&journals, "journal", "sqlite,postgres", "with --stack: journals to measure, in order (sqlite, postgres)")
	flag.StringVar(&o.exchange, "exchange", "okx", "exchange of the orders")
	flag.StringVar(&o.typ, "type", "SWAP", "market type (SPOT or SWAP)")
	flag.StringVar(&o.symbol, "symbol", "BTC-USDT-SWAP", "symbol as the API names it")
	flag.IntVar(&o.members, "members", 300, "members placing orders (the exchanges limit requests per account: the OKX plugin makes 2 requests to /trade/order, 60 per 2 s, for each resting order placed, and its cancel one to /trade/cancel-order, so each member takes at most 15 orders/s)")
	flag.IntVar(&o.workers, "workers", 256, "requests in flight at most (open loop: a request due while all are busy waits, and its wait counts)")
	flag.IntVar(&o.regC, "register-concurrency", 2, "sign-ups at once (Kratos on SQLite takes one write at a time)")
	flag.StringVar(&rates, "rates", "100,500,1000,2000", "target orders/s of the steps")
	flag.DurationVar(&o.step, "step", 20*time.Second, "duration of each step")
	flag.IntVar(&o.fillOrders, "fill-orders", 40, "marketable orders for the fill-to-stream figure")
	flag.Float64Var(&o.fillRate, "fill-rate", 4, "marketable orders per second")
	flag.DurationVar(&o.waitPort, "wait-port", 20*time.Minute, "with --stack: how long to wait for the edge and BFF ports to be free")
	flag.IntVar(&o.bffPID, "bff-pid", 0, "pid of the BFF whose CPU is read (default: found under the stack, or the only exhub-bff)")
	flag.StringVar(&o.out, "out", "bench/results/trading.json", "JSON results (the table goes beside it as .txt; empty: none)")
	flag.Parse()
	for _, r := range strings.Split(rates, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(r), 64)
		if err != nil || v <= 0 || v > 10_000 {
			return fmt.Errorf("--rates: %q is not a rate in 1..10000", r)
		}
		o.rates = append(o.rates, v)
	}
	for _, j := range strings.Split(journals, ",") {
		j = strings.TrimSpace(j)
		if j != "sqlite" && j != "postgres" {
			return fmt.Errorf("--journal: %q (sqlite or postgres)", j)
		}
		o.journals = append(o.journals, j)
	}
	if o.members < 1 || o.members > 1000 || o.workers < 1 || o.workers > 4096 || o.step <= 0 || o.step > 2*time.Minute ||
		o.fillOrders < 0 || o.fillOrders > 1000 || o.fillRate <= 0 || o.regC < 1 || o.regC > 32 {
		return errors.New("--members 1..1000, --workers 1..4096, --step up to 2m, --fill-orders 0..1000, --register-concurrency 1..32")
	}
	root, err := filepath.Abs(o.root)
	if err != nil {
		return err
	}
	o.root = root
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	rep := Report{Benchmark: "trading", Time: time.Now().UTC().Format(time.RFC3339), GoVersion: runtime.Version(),
		CPUs: runtime.NumCPU(), Uptime: uptime(), Step: o.step.String(), Workers: o.workers}
	if !o.stack {
		o.journals = []string{"as running"}
	}
	var pg *benchDB
	if o.stack && slices.Contains(o.journals, "postgres") {
		// Made before any load: the cluster's port is in the range the kernel hands out to outgoing connections, and
		// after a step's thousands of connections it can be taken for a while.
		db, err := newBenchDB(ctx, o.root)
		if err != nil {
			return fmt.Errorf("postgres journal: %w", err)
		}
		defer db.drop()
		pg = db
	}
	for _, j := range o.journals {
		r := runJournal(ctx, o, j, pg)
		if r.Error != "" {
			fmt.Fprintf(os.Stderr, "bench/trading: %s: %s\n", j, r.Error)
		}
		rep.Runs = append(rep.Runs, r)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	rep.Targets = verdicts(rep.Runs)
	var table strings.Builder
	printTable(&table, rep)
	fmt.Print(table.String())
	if o.out != "" {
		out := o.out
		if !filepath.IsAbs(out) {
			out = filepath.Join(o.root, out)
		}
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
			return err
		}
		txt := strings.TrimSuffix(out, filepath.Ext(out)) + ".txt"
		if err := os.WriteFile(txt, []byte(table.String()), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "bench/trading: wrote %s and %s\n", out, txt)
	}
	for _, r := range rep.Runs {
		if r.Error != "" {
			return fmt.Errorf("%s: %s", r.Journal, r.Error)
		}
	}
	return nil
}

// runJournal measures one journal: the stack (started when --stack), the members, the steps and fill to stream.
func runJournal(ctx context.Context, o options, journal string, pg *benchDB) JournalRun {
	r := JournalRun{Journal: journal, Load1Before: loadAvg1()}
	edge := o.edge
	bffPID, stackPID := o.bffPID, 0
	if o.stack {
		// The stack listens on free loopback ports of its own (the usual 8080 and friends may be another stack's,
		// e.g. the e2e one); a port named in the environment is used as named, waited for when taken.
		ports, named, err := stackPorts()
		if err != nil {
			r.Error = err.Error()
			return r
		}
		if err := waitPorts(ctx, named, o.waitPort); err != nil {
			r.Error = err.Error()
			return r
		}
		extra := ports
		if journal == "postgres" {
			extra = append(extra, "EXHUB_STORE_DRIVER=postgres", "EXHUB_STORE_DSN="+pg.dsn)
		} else {
			extra = append(extra, "EXHUB_STORE_DRIVER=sqlite")
		}
		st, err := startStack(ctx, o.root, journal, extra)
		if err != nil {
			r.Error = err.Error()
			return r
		}
		defer st.stop()
		edge = st.edge
		stackPID = st.cmd.Process.Pid
		if bffPID == 0 {
			if bffPID, err = findBFF(st.cmd.Process.Pid); err != nil {
				r.Error = err.Error()
				return r
			}
		}
		r.Load1Before = loadAvg1()
	} else if bffPID == 0 {
		var err error
		if bffPID, err = findBFF(0); err != nil {
			fmt.Fprintf(os.Stderr, "bench/trading: BFF CPU not measured: %v\n", err)
		}
	}
	if err := loopbackOnly(edge); err != nil {
		r.Error = err.Error()
		return r
	}
	transport := &http.Transport{MaxIdleConns: o.workers * 2, MaxIdleConnsPerHost: o.workers * 2,
		MaxConnsPerHost: o.workers * 2, IdleConnTimeout: 60 * time.Second, DisableCompression: true}
	defer transport.CloseIdleConnections()

	// Members: the load members and one more for fill to stream.
	t0 := time.Now()
	members, err := register(ctx, edge, transport, o.members+1, o.regC)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.RegisterSecs = time.Since(t0).Seconds()
	r.Members = o.members
	fmt.Fprintf(os.Stderr, "bench/trading: %d members signed up in %.1f s; waiting for their %s accounts\n", len(members), r.RegisterSecs, o.exchange)
	t1 := time.Now()
	if err := waitAccounts(ctx, members, o.exchange, 5*time.Minute, 8); err != nil {
		r.Error = err.Error()
		return r
	}
	r.AccountsSecs = time.Since(t1).Seconds()
	fillMember, load := members[0], members[1:]
	mk, err := loadMarket(ctx, fillMember, o.exchange, o.typ, o.symbol)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.Market = mk
	fmt.Fprintf(os.Stderr, "bench/trading: accounts ready in %.1f s; orders on %s %s %s: buy %s at %s (last %s)\n",
		r.AccountsSecs, o.exchange, o.typ, o.symbol, mk.Qty, mk.RestPrice, mk.Last)

	// Warm-up (not recorded): connections, caches, each account's first calls.
	_ = runStep(ctx, load, mk, min(o.rates[0], float64(len(load))*2), 3*time.Second, o.workers, 0, 0)
	for _, rate := range o.rates {
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(os.Stderr, "bench/trading: %s journal, %.0f orders/s for %s\n", journal, rate, o.step)
		s := runStep(ctx, load, mk, rate, o.step, o.workers, bffPID, stackPID)
		s.Journal = journal
		fmt.Fprintf(os.Stderr, "bench/trading:   %.0f orders/s achieved, p50 %.2f ms, p99 %.2f ms, errors: %s\n",
			s.AchievedRate, s.Place.P50Ms, s.Place.P99Ms, errorList(s.Errors))
		r.Steps = append(r.Steps, s)
		// Let the previous step's backlog (resting orders, account streams) settle.
		_ = sleepCtx(ctx, 3*time.Second)
	}
	if o.fillOrders > 0 && ctx.Err() == nil {
		fr, err := fillToStream(ctx, fillMember, o.exchange, mk, o.fillOrders, o.fillRate, 2*time.Minute)
		if err != nil {
			r.FillError = err.Error()
		} else {
			r.Fill = &fr
		}
	}
	return r
}

// register signs n members up, c at a time.
func register(ctx context.Context, edge string, transport http.RoundTripper, n, c int) ([]*Member, error) {
	out := make([]*Member, n)
	errs := make([]error, n)
	tag := strconv.FormatInt(time.Now().Unix(), 36)
	next := make(chan int)
	var wg sync.WaitGroup
	for range c {
		wg.Add(1)
		go func() { // owned by register, which waits for it
			defer wg.Done()
			for i := range next {
				// Kratos on SQLite (demo mode) answers 500 "database is locked" when sign-ups overlap; such a
				// sign-up wrote nothing and is made again with a new flow.
				for attempt := 0; attempt < 5; attempt++ {
					rctx, cancel := context.WithTimeout(ctx, time.Minute)
					out[i], errs[i] = Register(rctx, edge, transport, tag)
					cancel()
					if errs[i] == nil || !strings.Contains(errs[i].Error(), "database is locked") {
						break
					}
					_ = sleepCtx(ctx, 200*time.Millisecond)
				}
			}
		}()
	}
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("sign-up: %w", err)
		}
	}
	return out, ctx.Err()
}

// waitAccounts waits (bounded) until every member has an active account on exchange.
func waitAccounts(ctx context.Context, members []*Member, exchange string, bound time.Duration, c int) error {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	errs := make([]error, len(members))
	next := make(chan int)
	var wg sync.WaitGroup
	for range c {
		wg.Add(1)
		go func() { // owned by waitAccounts, which waits for it
			defer wg.Done()
			for i := range next {
				errs[i] = members[i].WaitAccount(ctx, exchange)
			}
		}()
	}
	for i := range members {
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// verdicts are the targets, each against the figure that answers it, per journal.
func verdicts(runs []JournalRun) []Verdict {
	var out []Verdict
	for _, r := range runs {
		var at500, top *StepResult
		for i := range r.Steps {
			s := &r.Steps[i]
			if s.TargetRate == targetAtRate {
				at500 = s
			}
			if top == nil || s.AchievedRate > top.AchievedRate {
				top = s
			}
		}
		v := Verdict{Target: fmt.Sprintf("%s journal: %.0f orders/s sustained", r.Journal, targetSustained), Measured: "not measured"}
		if top != nil {
			v.Measured = fmt.Sprintf("best %.0f orders/s (step %.0f/s, %d errors, %d not sent)", top.AchievedRate, top.TargetRate, sum(top.Errors), top.NotSent)
			v.Pass = top.AchievedRate >= targetSustained*0.98 && top.NotSent == 0 && sum(top.Errors)*100 <= top.Sent
		}
		out = append(out, v)
		v = Verdict{Target: fmt.Sprintf("%s journal: p50 < %.0f ms and p99 < %.0f ms at %.0f orders/s", r.Journal, targetP50Ms, targetP99Ms, targetAtRate), Measured: "not measured"}
		if at500 != nil && at500.Place.Count > 0 {
			v.Measured = fmt.Sprintf("p50 %.2f ms, p99 %.2f ms (%.0f orders/s achieved)", at500.Place.P50Ms, at500.Place.P99Ms, at500.AchievedRate)
			v.Pass = at500.Place.P50Ms < targetP50Ms && at500.Place.P99Ms < targetP99Ms && at500.AchievedRate >= targetAtRate*0.98
		}
		out = append(out, v)
		v = Verdict{Target: fmt.Sprintf("%s journal: fill to stream p99 < %.0f ms", r.Journal, targetFillP99Ms), Measured: "not measured"}
		if r.Fill != nil && r.Fill.Fills > 0 {
			v.Measured = fmt.Sprintf("p50 %.1f ms, p99 %.1f ms (%d fills)", r.Fill.Latency.P50Ms, r.Fill.Latency.P99Ms, r.Fill.Fills)
			v.Pass = r.Fill.Latency.P99Ms < targetFillP99Ms
		} else if r.FillError != "" {
			v.Measured = "error: " + r.FillError
		}
		out = append(out, v)
	}
	return out
}

// coresList is each process's CPU over the step in cores, busiest first (those under 0.01 core left out).
func total(m map[string]float64) float64 {
	t := 0.0
	for _, v := range m {
		t += v
	}
	return t
}

// coresList names the processes by CPU used, most first: cores and, when orders were acknowledged, CPU ms per order.
func coresList(cpu map[string]float64, secs float64, orders int) string {
	names := make([]string, 0, len(cpu))
	for k, v := range cpu {
		if v/1000/secs >= 0.01 {
			names = append(names, k)
		}
	}
	sort.Slice(names, func(i, j int) bool { return cpu[names[i]] > cpu[names[j]] })
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s %.2f", k, cpu[k]/1000/secs)
		if orders > 0 {
			parts[i] += fmt.Sprintf(" (%.2f)", cpu[k]/float64(orders))
		}
	}
	return strings.Join(parts, ", ")
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func printTable(w io.Writer, rep Report) {
	fmt.Fprintf(w, "\nTrading load through the edge (place + cancel resting limit orders, open loop, %s per step, %d requests in flight at most), %d CPUs, %s\n",
		rep.Step, rep.Workers, rep.CPUs, rep.Time)
	fmt.Fprintf(w, "machine before the run: %s\n", rep.Uptime)
	for _, r := range rep.Runs {
		fmt.Fprintf(w, "\njournal %s: %d members (signed up in %.1f s, accounts ready %.1f s later), %s %s %s, buy %s at %s (last %s)\n",
			r.Journal, r.Members, r.RegisterSecs, r.AccountsSecs, r.Market.Exchange, r.Market.Type, r.Market.Symbol,
			r.Market.Qty, r.Market.RestPrice, r.Market.Last)
		if r.Error != "" {
			fmt.Fprintf(w, "  error: %s\n", r.Error)
		}
		if len(r.Steps) > 0 {
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "target/s\tachieved/s\tsent\tnot sent\tacked\tpending\tp50 ms\tp90 ms\tp99 ms\tmax ms\tcancel p50\tcancel p99\tBFF cores\tBFF CPU ms/order\tload\t")
			for _, s := range r.Steps {
				fmt.Fprintf(tw, "%.0f\t%.0f\t%d\t%d\t%d\t%d\t%.2f\t%.2f\t%.2f\t%.1f\t%.2f\t%.2f\t%.2f\t%.3f\t%.1f\t\n",
					s.TargetRate, s.AchievedRate, s.Sent, s.NotSent, s.Acked, s.Pending, s.Place.P50Ms, s.Place.P90Ms,
					s.Place.P99Ms, s.Place.MaxMs, s.Cancel.P50Ms, s.Cancel.P99Ms, s.BFFCores, s.CPUmsOrder, s.Load1After)
			}
			tw.Flush()
			for _, s := range r.Steps {
				fmt.Fprintf(w, "  %.0f/s errors by problem code: place: %s; cancel: %s\n", s.TargetRate, errorList(s.Errors), errorList(s.CancelErrors))
				if len(s.ProcessCPUms) > 0 {
					fmt.Fprintf(w, "  %.0f/s CPU by process, cores (ms per order): %s\n", s.TargetRate, coresList(s.ProcessCPUms, s.Seconds, s.Acked))
					if s.MachineCores > 0 {
						fmt.Fprintf(w, "  %.0f/s whole machine %.2f of %d cores busy, %.2f of them outside this stack and load tool\n", s.TargetRate,
							s.MachineCores, rep.CPUs, max(0, s.MachineCores-total(s.ProcessCPUms)/1000/s.Seconds))
					}
				}
			}
		}
		if r.Fill != nil {
			fmt.Fprintf(w, "  fill to stream: %d marketable orders, %d fills received, p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms; sequence gaps %d; order errors: %s\n",
				r.Fill.Orders, r.Fill.Fills, r.Fill.Latency.P50Ms, r.Fill.Latency.P90Ms, r.Fill.Latency.P99Ms, r.Fill.Latency.MaxMs, r.Fill.Gaps, errorList(r.Fill.Errors))
		} else if r.FillError != "" {
			fmt.Fprintf(w, "  fill to stream: error: %s\n", r.FillError)
		}
	}
	fmt.Fprintln(w, "\ntargets (issue 13, section 4):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, v := range rep.Targets {
		verdict := "MISS"
		if v.Pass {
			verdict = "pass"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", v.Target, v.Measured, verdict)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nLatency is from each order's due time on the open-loop clock to its acknowledgement (201, or 202 pending); fill to stream from the fill's exchange time (ms) to the message's arrival, so up to 1 ms high. BFF CPU per order covers the order's place and cancel.")
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

// loadAvg1 is the 1-minute load average (0 where /proc/loadavg is missing).
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

// uptime is the load averages as /proc/loadavg gives them.
func uptime() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return "load average " + strings.Join(f[:3], ", ")
}
