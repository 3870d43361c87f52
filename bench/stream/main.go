// Command stream measures the live stream gateway's fan-out: a real exhub-bff process serving the synthetic load
// plugin (bench/plugin/loadplugin, paced: book deltas and trades at a fixed rate per symbol) and thousands of
// WebSocket clients on loopback, each watching one symbol's book and trades. It prints a table and writes
// bench/results/stream.json.
//
//	go run ./bench/stream [-clients 5000] [-symbols 50] [-rate 10] [-duration 10s]
//
// Latency is from the moment the plugin created an event to the client's receipt: trades carry the plugin's
// creation time in nanoseconds in their id; book messages carry the exchange time in milliseconds (so book
// latencies are whole-millisecond-truncated creation times: up to 1 ms high).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/exhub/exhub/bench/plugin/harness"
)

type clientStats struct {
	books, trades int64
	frames        int64
	bookLat       []float64
	tradeLat      []float64
	snap          bool
}

func main() {
	clients := flag.Int("clients", 5000, "WebSocket clients")
	symbols := flag.Int("symbols", 50, "symbols (clients are spread evenly)")
	rate := flag.Int("rate", 10, "book updates and trades per second per symbol")
	duration := flag.Duration("duration", 10*time.Second, "measurement window")
	depth := flag.Int("depth", 20, "book depth each client asks for")
	flag.Parse()
	if err := run(*clients, *symbols, *rate, *depth, *duration); err != nil {
		fmt.Fprintln(os.Stderr, "bench/stream:", err)
		os.Exit(1)
	}
}

func run(nClients, nSymbols, rate, depth int, window time.Duration) error {
	// The load tool's own garbage collection would show up as latency: collect rarely.
	debug.SetGCPercent(400)
	loadBefore := harness.LoadAverage()
	nofile := harness.RaiseNoFile()
	if need := uint64(2*nClients + 256); nofile < need {
		return fmt.Errorf("open-file limit %d is below the %d this run needs", nofile, need)
	}
	dir, err := os.MkdirTemp("", "exhub-bench-stream")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bffBin, pluginBin, err := harness.Build(dir)
	if err != nil {
		return err
	}
	bff, err := harness.StartBFF(dir, bffBin, pluginBin, map[string]string{"mode": "paced", "rate": strconv.Itoa(rate),
		"symbols": strconv.Itoa(nSymbols)}, 4096)
	if err != nil {
		return err
	}
	defer bff.Stop()

	var (
		measuring atomic.Bool
		stats     = make([]*clientStats, nClients)
		mus       = make([]sync.Mutex, nClients)
		conns     = make([]*harness.WSClient, nClients)
		wg        sync.WaitGroup
		ready     atomic.Int64
		failed    atomic.Int64
	)
	// Dial with bounded concurrency.
	dialStart := time.Now()
	sem := make(chan struct{}, 64)
	var dialErr atomic.Value
	for i := range nClients {
		sem <- struct{}{}
		wg.Add(1)
		go func() { // owned by run; dials one client
			defer wg.Done()
			defer func() { <-sem }()
			c, err := harness.DialWS(bff.URL(), 30*time.Second)
			if err != nil {
				dialErr.Store(err)
				failed.Add(1)
				return
			}
			conns[i] = c
			// Room for the whole window, so the load tool does not grow slices (and collect garbage) mid-run.
			expect := int(window.Seconds()+2) * rate * 2
			stats[i] = &clientStats{bookLat: make([]float64, 0, expect), tradeLat: make([]float64, 0, expect)}
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		return fmt.Errorf("%d of %d clients failed to connect: %v", failed.Load(), nClients, dialErr.Load())
	}
	dialTook := time.Since(dialStart)
	var readers sync.WaitGroup
	for i, c := range conns {
		readers.Add(1)
		go func() { // owned by run; reads one client until the connection closes
			defer readers.Done()
			st, mu := stats[i], &mus[i]
			sym := fmt.Sprintf("L%03dUSDT", i%nSymbols)
			for _, ch := range []string{"book", "trades"} {
				op := map[string]any{"op": "subscribe", "channel": ch, "exchange": "load", "marketType": "SPOT", "symbol": sym}
				if ch == "book" {
					op["depth"] = depth
				}
				b, _ := json.Marshal(op)
				if err := c.WriteText(b); err != nil {
					failed.Add(1)
					return
				}
			}
			for {
				frame, err := c.Read()
				if err != nil {
					return
				}
				now := time.Now()
				if measuring.Load() {
					mu.Lock()
					st.frames++
					mu.Unlock()
				}
				harness.Messages(frame, func(b []byte) {
					switch {
					case bytes.HasPrefix(b, []byte(`{"type":"update"`)), bytes.HasPrefix(b, []byte(`{"type":"snapshot"`)):
						if !st.snap && bytes.HasPrefix(b, []byte(`{"type":"snapshot"`)) {
							st.snap = true
							ready.Add(1)
						}
						if !measuring.Load() {
							return
						}
						t := intAfter(b, []byte(`"time":`))
						mu.Lock()
						st.books++
						st.bookLat = append(st.bookLat, float64(now.UnixMicro()-t*1000)/1000)
						mu.Unlock()
					case bytes.HasPrefix(b, []byte(`{"type":"trades"`)):
						if !measuring.Load() {
							return
						}
						mu.Lock()
						rest := b
						for {
							k := bytes.Index(rest, []byte(`"id":"`))
							if k < 0 {
								break
							}
							rest = rest[k+6:]
							ns := intAfter(rest, nil)
							st.tradeLat = append(st.tradeLat, float64(now.UnixNano()-ns)/1e6)
						}
						st.trades++
						mu.Unlock()
					case bytes.HasPrefix(b, []byte(`{"type":"error"`)):
						fmt.Fprintf(os.Stderr, "client %d: %s\n", i, b)
						failed.Add(1)
					}
				})
			}
		}()
	}
	// Wait for every client's first snapshot.
	warm := time.Now()
	for ready.Load() < int64(nClients) {
		if time.Since(warm) > 60*time.Second || failed.Load() > 0 {
			return fmt.Errorf("%d of %d clients got their book snapshot (%d failed); see %s", ready.Load(), nClients, failed.Load(), bff.Log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	warmTook := time.Since(warm)
	time.Sleep(time.Second) // settle
	cpu0 := bff.CPUSeconds()
	measuring.Store(true)
	start := time.Now()
	time.Sleep(window)
	measuring.Store(false)
	elapsed := time.Since(start).Seconds()
	cpu1 := bff.CPUSeconds()
	for _, c := range conns {
		c.Close()
	}
	readers.Wait()

	var books, trades, frames int64
	var bookLat, tradeLat []float64
	served, minMsgs := 0, int64(-1)
	for i, st := range stats {
		mus[i].Lock()
		books += st.books
		trades += st.trades
		frames += st.frames
		bookLat = append(bookLat, st.bookLat...)
		tradeLat = append(tradeLat, st.tradeLat...)
		n := st.books + st.trades
		if st.books > 0 && st.trades > 0 {
			served++
		}
		if minMsgs < 0 || n < minMsgs {
			minMsgs = n
		}
		mus[i].Unlock()
	}
	bl, tl := harness.Summarize(bookLat), harness.Summarize(tradeLat)
	all := harness.Summarize(append(append([]float64(nil), bookLat...), tradeLat...))
	offered := float64(nClients) * float64(2*rate)
	res := map[string]any{
		"benchmark": "stream fan-out",
		"source":    "bench/plugin/loadplugin (a real plugin process, paced) behind a real exhub-bff process; clients on loopback",
		"clients":   nClients, "symbols": nSymbols, "ratePerSymbolPerChannel": rate, "depth": depth,
		"windowSeconds":          elapsed,
		"deliveredMsgsPerSecond": float64(books+trades) / elapsed,
		"offeredMsgsPerSecond":   offered,
		"framesPerSecond":        float64(frames) / elapsed,
		"bookMsgsPerSecond":      float64(books) / elapsed, "tradeMsgsPerSecond": float64(trades) / elapsed,
		"clientsServed": served, "minMsgsPerClient": minMsgs,
		"latencyAll": all, "latencyBook": bl, "latencyTrades": tl,
		"bffCpuCores":         (cpu1 - cpu0) / elapsed,
		"loadAverage1mBefore": loadBefore,
		"connectSeconds":      dialTook.Seconds(), "allSnapshotsSeconds": warmTook.Seconds(),
		"targetP99Ms": 50, "pass": all.P99 < 50 && served == nClients,
		"machine": harness.Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS},
	}
	path, err := harness.WriteJSON("stream", res)
	if err != nil {
		return err
	}
	fmt.Printf("stream fan-out: %d clients, %d symbols, book+trades at %d/s per symbol, %.1fs window\n", nClients, nSymbols, rate, elapsed)
	fmt.Printf("  %-28s %12s\n", "metric", "value")
	fmt.Printf("  %-28s %12.0f  (offered %.0f)\n", "delivered msgs/s", float64(books+trades)/elapsed, offered)
	fmt.Printf("  %-28s %12.0f\n", "frames/s", float64(frames)/elapsed)
	fmt.Printf("  %-28s %12s\n", "clients served", fmt.Sprintf("%d/%d", served, nClients))
	fmt.Printf("  %-28s %12d\n", "min msgs per client", minMsgs)
	fmt.Printf("  %-28s %12.2f\n", "latency p50 ms (all)", all.P50)
	fmt.Printf("  %-28s %12.2f  (target < 50)\n", "latency p99 ms (all)", all.P99)
	fmt.Printf("  %-28s %12.2f / %.2f\n", "trades p50 / p99 ms", tl.P50, tl.P99)
	fmt.Printf("  %-28s %12.2f / %.2f\n", "book p50 / p99 ms", bl.P50, bl.P99)
	fmt.Printf("  %-28s %12.2f\n", "latency max ms", all.Max)
	fmt.Printf("  %-28s %12.2f\n", "BFF CPU (cores)", (cpu1-cpu0)/elapsed)
	fmt.Printf("  %-28s %12.2f\n", "load average before (1m)", loadBefore)
	fmt.Printf("  written to %s\n", path)
	return nil
}

// intAfter parses the decimal integer after the first occurrence of key (or at the start when key is nil).
func intAfter(b, key []byte) int64 {
	if key != nil {
		k := bytes.Index(b, key)
		if k < 0 {
			return 0
		}
		b = b[k+len(key):]
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int64(c-'0')
	}
	return n
}
