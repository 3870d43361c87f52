// Command exhub-emulators serves the local exchange emulators of demo mode: each exchange's own REST and WebSocket
// dialect on its own loopback port, every one on a simulated venue of its own (same engine, that exchange's
// instrument profile). The venues share a simulated chain: a withdrawal from one to a deposit address of the other
// arrives there after --chain-delay. The plugins are pointed at them by `exhub-stack`; `--print-settings` shows the
// plugin settings for each.
//
//	exhub-emulators --binance 127.0.0.1:7001 --okx 127.0.0.1:7002 --seed 1 --history-days 30 --chain-delay 30s-60s
//
// The Bybit emulator (market data and trading so far) runs only when --bybit (EXHUB_EMULATOR_BYBIT_ADDR) names an address.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shopspring/decimal"

	binanceemu "github.com/exhub/exhub/adapters/binance/emulator"
	bybitemu "github.com/exhub/exhub/adapters/bybit/emulator"
	okxemu "github.com/exhub/exhub/adapters/okx/emulator"
	"github.com/exhub/exhub/adapters/venue"
)

// emulator is one exchange's emulator as this command runs it.
type emulator struct {
	name     string
	profile  string
	addr     string
	handler  http.Handler
	close    func()
	settings map[string]string
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("exhub-emulators", flag.ContinueOnError)
	binanceAddr := fs.String("binance", envOr("EXHUB_EMULATOR_BINANCE_ADDR", "127.0.0.1:7001"), "listen address of the Binance emulator (empty: off)")
	okxAddr := fs.String("okx", envOr("EXHUB_EMULATOR_OKX_ADDR", "127.0.0.1:7002"), "listen address of the OKX emulator (empty: off)")
	bybitAddr := fs.String("bybit", envOr("EXHUB_EMULATOR_BYBIT_ADDR", ""), "listen address of the Bybit emulator, market data and trading so far (empty, the default: off), e.g. 127.0.0.1:7003")
	seed := fs.Int64("seed", 1, "seed of the synthetic markets (the same seed gives the same market)")
	historyDays := fs.Int("history-days", 30, "days of generated history before now")
	printSettings := fs.Bool("print-settings", false, "print the plugin settings for each emulator as JSON and exit")
	printAccounts := fs.Bool("print-accounts", false, "print the demo paper accounts' API credentials as JSON and exit")
	reserveFlag := fs.String("demo-reserve", envOr("EXHUB_EMULATOR_DEMO_RESERVE", defaultReserve),
		"funds added to each demo (broker master) account for the members' demo grants, ASSET=AMOUNT,... (\"none\": none)")
	chainDelay := fs.String("chain-delay", envOr("EXHUB_EMULATOR_CHAIN_DELAY", defaultChainDelay),
		"how long a withdrawal to another emulator's deposit address takes to arrive, MIN-MAX or one duration (demo mode compresses the real 30m-60m)")
	fundingFlag := fs.String("funding-interval", envOr("EXHUB_EMULATOR_FUNDING_INTERVAL", "8h"),
		"time between perpetual funding settlements (whole seconds; short values for tests and the conformance run)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: exhub-emulators [flags]\n\nServes the exchange emulators of demo mode on 127.0.0.1.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil)).With("component", "emulators")

	addrs := map[string]string{"binance": *binanceAddr, "okx": *okxAddr, "bybit": *bybitAddr}
	for name, a := range addrs {
		if a == "" {
			continue
		}
		host, _, err := net.SplitHostPort(a)
		if err != nil || (host != "127.0.0.1" && host != "localhost" && host != "::1") {
			fmt.Fprintf(os.Stderr, "exhub-emulators: --%s %q: must be a loopback host:port\n", name, a)
			return 2
		}
	}
	reserve, err := parseReserve(*reserveFlag)
	if err != nil {
		fmt.Fprintf(os.Stderr, "exhub-emulators: --demo-reserve: %v\n", err)
		return 2
	}
	minDelay, maxDelay, err := parseDelay(*chainDelay)
	if err != nil {
		fmt.Fprintf(os.Stderr, "exhub-emulators: --chain-delay: %v\n", err)
		return 2
	}
	fundingInterval, err := time.ParseDuration(*fundingFlag)
	if err != nil || fundingInterval < time.Second || fundingInterval%time.Second != 0 {
		fmt.Fprintf(os.Stderr, "exhub-emulators: --funding-interval %q: a duration of whole seconds, at least 1s\n", *fundingFlag)
		return 2
	}
	if *printAccounts {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]map[string]string{
			"binance": {"api_key": binanceemu.DemoAPIKey, "api_secret": binanceemu.DemoAPISecret, "broker": "true"},
			"okx": {"api_key": okxemu.DemoAPIKey, "api_secret": okxemu.DemoAPISecret, "passphrase": okxemu.DemoPassphrase,
				"broker": "true"},
			// No broker endpoints yet: not a master for sub-accounts.
			"bybit": {"api_key": bybitemu.DemoAPIKey, "api_secret": bybitemu.DemoAPISecret},
		})
		return 0
	}
	if *printSettings {
		out := map[string]map[string]string{}
		if *binanceAddr != "" {
			out["binance"] = binanceemu.PluginSettings("http://" + *binanceAddr)
		}
		if *okxAddr != "" {
			out["okx"] = okxemu.PluginSettings("http://" + *okxAddr)
		}
		if *bybitAddr != "" {
			out["bybit"] = bybitemu.PluginSettings("http://" + *bybitAddr)
		}
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(out)
		return 0
	}

	// Take the ports first so a busy one fails fast, before generating history.
	listeners := map[string]net.Listener{}
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for name, a := range addrs {
		if a == "" {
			continue
		}
		l, err := net.Listen("tcp", a)
		if err != nil {
			fmt.Fprintf(os.Stderr, "exhub-emulators: %s emulator: %s is already in use (set --%s or EXHUB_EMULATOR_%s_ADDR)\n", name, a, name, strings.ToUpper(name))
			return 1
		}
		listeners[name] = l
	}
	if len(listeners) == 0 {
		fmt.Fprintln(os.Stderr, "exhub-emulators: every emulator is off")
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var (
		wg   sync.WaitGroup
		emus []*emulator
	)
	defer wg.Wait()
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()

	start := time.Now()
	chain, err := venue.NewChain(venue.ChainConfig{MinDelay: minDelay, MaxDelay: maxDelay})
	if err != nil {
		log.Error("chain", "err", err)
		return 1
	}
	wg.Add(1)
	go func() { // the chain's deliveries; ends with runCtx
		defer wg.Done()
		_ = chain.Run(runCtx)
	}()
	for _, name := range sortedKeys(listeners) {
		v, err := venue.New(venue.Config{Profile: name, Seed: *seed, Simulate: true, HistoryDays: *historyDays,
			FundingInterval: fundingInterval})
		if err != nil {
			log.Error("venue", "exchange", name, "err", err)
			return 1
		}
		defer v.Close()
		if err := chain.Attach(name, v); err != nil {
			log.Error("chain", "exchange", name, "err", err)
			return 1
		}
		wg.Add(1)
		go func() { // the venue's clock; ends with runCtx
			defer wg.Done()
			_ = v.Run(runCtx)
		}()
		e, err := newEmulator(name, v, log.With("exchange", name), "http://"+listeners[name].Addr().String(), reserve)
		if err != nil {
			log.Error("emulator", "exchange", name, "err", err)
			return 1
		}
		defer e.close()
		emus = append(emus, e)
	}

	servers := make([]*http.Server, 0, len(emus))
	errc := make(chan error, len(emus))
	for _, e := range emus {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /-/ready", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte("ok\n"))
		})
		mux.Handle("/", e.handler)
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		servers = append(servers, srv)
		l := listeners[e.name]
		delete(listeners, e.name)
		wg.Add(1)
		go func() { // owned by run: ends when srv is shut down
			defer wg.Done()
			if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("%s emulator: %w", e.name, err)
			}
		}()
		log.Info("emulator ready", "exchange", e.name, "url", "http://"+l.Addr().String(), "settings", e.settings)
	}
	log.Info("emulators up", "count", len(emus), "startup_ms", time.Since(start).Milliseconds())

	code := 0
	select {
	case <-ctx.Done():
	case err := <-errc:
		log.Error("serve", "err", err)
		code = 1
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range servers {
		_ = srv.Shutdown(shutCtx)
	}
	cancelRun()
	return code
}

func newEmulator(name string, v *venue.Venue, log *slog.Logger, base string, reserve map[string]decimal.Decimal) (*emulator, error) {
	switch name {
	case "binance":
		s, err := binanceemu.New(binanceemu.Config{Venue: v, Logger: log, DemoReserve: reserve})
		if err != nil {
			return nil, err
		}
		return &emulator{name: name, handler: s.Handler(), close: s.Close, settings: binanceemu.PluginSettings(base)}, nil
	case "okx":
		s, err := okxemu.New(okxemu.Config{Venue: v, Logger: log, DemoReserve: reserve})
		if err != nil {
			return nil, err
		}
		return &emulator{name: name, handler: s.Handler(), close: s.Close, settings: okxemu.PluginSettings(base)}, nil
	case "bybit":
		s, err := bybitemu.New(bybitemu.Config{Venue: v, Logger: log})
		if err != nil {
			return nil, err
		}
		return &emulator{name: name, handler: s.Handler(), close: s.Close, settings: bybitemu.PluginSettings(base)}, nil
	default:
		return nil, fmt.Errorf("no emulator for %q", name)
	}
}

// defaultChainDelay compresses the spec's half an hour to an hour between exchanges for demo mode.
const defaultChainDelay = "30s-60s"

// parseDelay reads MIN-MAX ("30s-60s") or one duration (both ends).
func parseDelay(s string) (time.Duration, time.Duration, error) {
	lo, hi, ok := strings.Cut(strings.TrimSpace(s), "-")
	if !ok {
		hi = lo
	}
	min, err1 := time.ParseDuration(strings.TrimSpace(lo))
	max, err2 := time.ParseDuration(strings.TrimSpace(hi))
	if err1 != nil || err2 != nil || min <= 0 || max < min {
		return 0, 0, fmt.Errorf("%q is not MIN-MAX (e.g. 30s-60s) or one positive duration", s)
	}
	return min, max, nil
}

// defaultReserve is the demo master's reserve for members' grants: 20 million USDT is 2,000 grants of 10,000.
const defaultReserve = "USDT=20000000,BTC=200,ETH=2000"

// parseReserve reads ASSET=AMOUNT,... ("none" or empty: no reserve).
func parseReserve(s string) (map[string]decimal.Decimal, error) {
	out := map[string]decimal.Decimal{}
	if s = strings.TrimSpace(s); s == "" || s == "none" {
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		asset, amt, ok := strings.Cut(strings.TrimSpace(part), "=")
		d, err := decimal.NewFromString(strings.TrimSpace(amt))
		if !ok || asset == "" || err != nil || d.IsNegative() {
			return nil, fmt.Errorf("%q is not ASSET=AMOUNT", part)
		}
		out[strings.ToUpper(strings.TrimSpace(asset))] = d
	}
	return out, nil
}

func envOr(key, def string) string {
	if v, ok := os.LookupEnv(key); ok {
		return v
	}
	return def
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
