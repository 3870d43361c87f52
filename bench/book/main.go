// Command book measures local order book maintenance: deltas applied per second on one core. It runs the
// BenchmarkApply and BenchmarkGrouped benchmarks of bff/internal/book with GOMAXPROCS=1 (go test -cpu 1), prints a
// table and writes bench/results/book.json.
//
//	go run ./bench/book [-benchtime 3s]
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"github.com/exhub/exhub/bench/plugin/harness"
)

func main() {
	benchtime := flag.String("benchtime", "3s", "go test -benchtime")
	flag.Parse()
	if err := run(*benchtime); err != nil {
		fmt.Fprintln(os.Stderr, "bench/book:", err)
		os.Exit(1)
	}
}

func run(benchtime string) error {
	root, err := harness.Root()
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", "^(BenchmarkApply|BenchmarkGrouped)$", "-benchmem",
		"-benchtime", benchtime, "-cpu", "1", "-count", "1", "./bff/internal/book")
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go test -bench: %w\n%s", err, out.String())
	}
	// Lines look like: BenchmarkApply  22876382  196.3 ns/op  5094704 deltas/s  7629300 levels/s  0 B/op  0 allocs/op
	metrics := map[string]map[string]float64{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		m := map[string]float64{}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err == nil {
				m[f[i+1]] = v
			}
		}
		metrics[strings.TrimSuffix(f[0], "-1")] = m
	}
	apply, ok := metrics["BenchmarkApply"]
	if !ok {
		return fmt.Errorf("no BenchmarkApply result in:\n%s", out.String())
	}
	grouped := metrics["BenchmarkGrouped"]
	res := map[string]any{
		"benchmark":              "book maintenance",
		"what":                   "deltas (1-2 levels each, mostly near the top) applied to one 1,000-level-a-side book on one core (GOMAXPROCS=1), with sequence checks and crossed-book detection",
		"deltasPerSecondPerCore": apply["deltas/s"],
		"levelsPerSecondPerCore": apply["levels/s"],
		"nsPerDelta":             apply["ns/op"],
		"allocsPerDelta":         apply["allocs/op"],
		"groupedViewNs":          grouped["ns/op"],
		"target":                 1000000, "pass": apply["deltas/s"] > 1000000,
		"machine": harness.Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS},
	}
	path, err := harness.WriteJSON("book", res)
	if err != nil {
		return err
	}
	fmt.Println("book maintenance: one book, 1,000 levels a side, one core")
	fmt.Printf("  %-32s %14s\n", "metric", "value")
	fmt.Printf("  %-32s %14.0f  (target > 1000000)\n", "deltas applied/s per core", apply["deltas/s"])
	fmt.Printf("  %-32s %14.0f\n", "level updates/s per core", apply["levels/s"])
	fmt.Printf("  %-32s %14.1f\n", "ns per delta", apply["ns/op"])
	fmt.Printf("  %-32s %14.0f\n", "allocations per delta", apply["allocs/op"])
	fmt.Printf("  %-32s %14.1f\n", "grouped 20-bucket view (us)", grouped["ns/op"]/1000)
	fmt.Printf("  written to %s\n", path)
	return nil
}
