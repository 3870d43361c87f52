// Command plugin measures the plugin boundary: market events per second from a plugin process, over gRPC through
// the BFF's plugin host (durable market stream) into the stream gateway, which applies and publishes them. The
// load plugin (bench/plugin/loadplugin) floods trades on every subscribed symbol as fast as the stream takes; a
// WebSocket client subscribed to all of them counts what came through (trades the gateway merged for that client
// and left out are counted as delivered to the gateway: the "dropped" field of a trades message). It prints a
// table and writes bench/results/plugin.json.
//
//	go run ./bench/plugin [-symbols 50] [-duration 5s]
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/exhub/exhub/bench/plugin/harness"
)

func main() {
	symbols := flag.Int("symbols", 50, "symbols flooded with trades")
	duration := flag.Duration("duration", 5*time.Second, "measurement window")
	flag.Parse()
	if err := run(*symbols, *duration); err != nil {
		fmt.Fprintln(os.Stderr, "bench/plugin:", err)
		os.Exit(1)
	}
}

type symCount struct {
	first, last int64
	got         int64
}

func run(nSymbols int, window time.Duration) error {
	loadBefore := harness.LoadAverage()
	harness.RaiseNoFile()
	dir, err := os.MkdirTemp("", "exhub-bench-plugin")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bffBin, pluginBin, err := harness.Build(dir)
	if err != nil {
		return err
	}
	bff, err := harness.StartBFF(dir, bffBin, pluginBin, map[string]string{"mode": "flood", "symbols": strconv.Itoa(nSymbols)}, 4096)
	if err != nil {
		return err
	}
	defer bff.Stop()
	c, err := harness.DialWS(bff.URL(), 10*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	for i := range nSymbols {
		b, _ := json.Marshal(map[string]any{"op": "subscribe", "channel": "trades", "exchange": "load", "marketType": "SPOT",
			"symbol": fmt.Sprintf("L%03dUSDT", i)})
		if err := c.WriteText(b); err != nil {
			return err
		}
	}
	var (
		received, dropped, msgs int64
		counts                  = map[string]*symCount{}
		measuring               bool
		start, warmEnd          time.Time
	)
	warmEnd = time.Now().Add(time.Second)
	cpu0 := 0.0
	for {
		frame, err := c.Read()
		if err != nil {
			return fmt.Errorf("read: %w (see %s)", err, bff.Log)
		}
		now := time.Now()
		if !measuring && now.After(warmEnd) {
			measuring, start, cpu0 = true, now, bff.CPUSeconds()
		}
		if measuring && now.Sub(start) >= window {
			break
		}
		var failed []byte
		harness.Messages(frame, func(b []byte) {
			if bytes.HasPrefix(b, []byte(`{"type":"error"`)) {
				failed = append([]byte(nil), b...)
			}
			if !measuring || !bytes.HasPrefix(b, []byte(`{"type":"trades"`)) {
				return
			}
			msgs++
			sym := string(between(b, `"symbol":"`, `"`))
			sc := counts[sym]
			if sc == nil {
				sc = &symCount{first: -1}
				counts[sym] = sc
			}
			rest := b
			for {
				k := bytes.Index(rest, []byte(`"id":"`))
				if k < 0 {
					break
				}
				rest = rest[k+6:]
				id := rest[:bytes.IndexByte(rest, '"')]
				n, _ := strconv.ParseInt(string(id[bytes.IndexByte(id, '-')+1:]), 10, 64)
				if sc.first < 0 {
					sc.first = n
				}
				sc.last = n
				sc.got++
				received++
			}
			if d := between(b, `"dropped":`, `,`); d != nil {
				n, _ := strconv.ParseInt(strings.TrimRight(string(d), "}"), 10, 64)
				dropped += n
			}
		})
		if failed != nil {
			return fmt.Errorf("gateway error: %s", failed)
		}
	}
	elapsed := time.Since(start).Seconds()
	cpu := (bff.CPUSeconds() - cpu0) / elapsed
	var generated int64
	for _, sc := range counts {
		generated += sc.last - sc.first + 1
	}
	intoGateway := float64(received+dropped) / elapsed
	res := map[string]any{
		"benchmark": "plugin boundary",
		"path":      "bench/plugin/loadplugin process -> gRPC (go-plugin, mTLS) -> plugin host durable stream -> stream gateway (apply, publish) -> one WebSocket client",
		"symbols":   nSymbols, "windowSeconds": elapsed,
		"eventsPerSecondIntoGateway":   intoGateway,
		"eventsPerSecondToClient":      float64(received) / elapsed,
		"generatedPerSecond":           float64(generated) / elapsed,
		"lostBeforeGatewayFraction":    1 - float64(received+dropped)/float64(max(generated, 1)),
		"clientMessagesPerSecond":      float64(msgs) / elapsed,
		"mergedForSlowClientPerSecond": float64(dropped) / elapsed,
		"bffCpuCores":                  cpu,
		"loadAverage1mBefore":          loadBefore,
		"target":                       300000, "pass": intoGateway > 300000,
		"machine": harness.Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS},
	}
	path, err := harness.WriteJSON("plugin", res)
	if err != nil {
		return err
	}
	fmt.Printf("plugin boundary: %d symbols flooded with trades, %.1fs window\n", nSymbols, elapsed)
	fmt.Printf("  %-34s %12s\n", "metric", "value")
	fmt.Printf("  %-34s %12.0f  (target > 300000)\n", "events/s into the gateway", intoGateway)
	fmt.Printf("  %-34s %12.0f\n", "events/s delivered to the client", float64(received)/elapsed)
	fmt.Printf("  %-34s %12.0f\n", "events/s generated by the plugin", float64(generated)/elapsed)
	fmt.Printf("  %-34s %12.4f\n", "lost before the gateway (fraction)", 1-float64(received+dropped)/float64(max(generated, 1)))
	fmt.Printf("  %-34s %12.0f\n", "client messages/s (batched trades)", float64(msgs)/elapsed)
	fmt.Printf("  %-34s %12.2f\n", "BFF CPU (cores)", cpu)
	fmt.Printf("  %-28s %12.2f\n", "load average before (1m)", loadBefore)
	fmt.Printf("  written to %s\n", path)
	return nil
}

// between returns the bytes after start up to end (nil when start is absent).
func between(b []byte, start, end string) []byte {
	i := bytes.Index(b, []byte(start))
	if i < 0 {
		return nil
	}
	b = b[i+len(start):]
	j := bytes.Index(b, []byte(end))
	if j < 0 {
		return b
	}
	return b[:j]
}
