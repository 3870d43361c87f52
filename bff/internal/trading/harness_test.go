package trading

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	binanceemu "github.com/exhub/exhub/adapters/binance/emulator"
	okxemu "github.com/exhub/exhub/adapters/okx/emulator"
	"github.com/exhub/exhub/adapters/venue"
	"github.com/exhub/exhub/bff/internal/accounts"
	"github.com/exhub/exhub/bff/internal/accountstream"
	"github.com/exhub/exhub/bff/internal/accountstream/feed"
	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/config/setting"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/plugintest"
	"github.com/exhub/exhub/bff/internal/store"
	"github.com/exhub/exhub/bff/internal/store/storetest"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func TestMain(m *testing.M) { os.Exit(plugintest.Run(m, storetest.Run, "reference", "binance", "okx")) }

// wait bounds every wait on a condition: generous, so a loaded machine never fails a test; a normal run finishes
// each wait at once.
const wait = 90 * time.Second

// fakeAccounts maps members to exchange credentials (an accounts.Service stand-in).
type fakeAccounts struct {
	mu   sync.Mutex
	refs map[string]map[string]*exchangev1.AccountRef // member -> exchange -> ref
}

func (f *fakeAccounts) set(member, exchange string, ref *exchangev1.AccountRef) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refs == nil {
		f.refs = map[string]map[string]*exchangev1.AccountRef{}
	}
	if f.refs[member] == nil {
		f.refs[member] = map[string]*exchangev1.AccountRef{}
	}
	f.refs[member][exchange] = ref
}

func (f *fakeAccounts) AccountRef(_ context.Context, member, exchange string) (*exchangev1.AccountRef, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ref, ok := f.refs[member][exchange]
	if !ok {
		return nil, fmt.Errorf("member %s on %s: %w", member, exchange, ErrNoAccount)
	}
	return ref, nil
}

// gate holds requests to an emulator that carry a client id until released (the "between request and answer"
// window of the kill test).
type gate struct {
	mu      sync.Mutex
	cid     string
	arrived chan struct{}
	release chan struct{}
}

func (g *gate) arm(cid string) (arrived, release chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.cid, g.arrived, g.release = cid, make(chan struct{}), make(chan struct{})
	return g.arrived, g.release
}

func (g *gate) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		cid, arrived, release := g.cid, g.arrived, g.release
		g.mu.Unlock()
		if cid != "" && r.Method != http.MethodGet {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if strings.Contains(string(body), cid) || strings.Contains(r.URL.RawQuery, cid) {
				g.mu.Lock()
				g.cid = ""
				g.mu.Unlock()
				close(arrived)
				<-release
				// An exchange that took a request executes it though its client went away.
				r = r.WithContext(context.WithoutCancel(r.Context()))
			}
		}
		h.ServeHTTP(w, r)
	})
}

// exch is one exchange under test.
type exch struct {
	slug   string
	spot   string // a spot symbol
	swap   string // a perpetual symbol
	faults string // base URL of the fault endpoint
	gate   *gate  // nil for the reference exchange (in-process in its plugin)
}

type env struct {
	t    *testing.T
	st   *store.Store
	host *pluginhost.Host
	svc  *Service
	acc  *fakeAccounts
	ex   map[string]*exch
	// stopLoop stops the service's loop (a crash, for the restart tests).
	stopLoop func()
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

func openStore(t *testing.T, pg bool) *store.Store {
	t.Helper()
	cfg := store.DefaultConfig(t.TempDir())
	if pg {
		cfg = store.DefaultConfig("")
		cfg.Driver = store.DriverPostgres
		cfg.DSN = secret.New(storetest.Postgres(t))
	}
	st, err := store.Open(context.Background(), cfg, store.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(st.Close)
	return st
}

// startEmulator serves an emulator on a loopback listener behind a gate.
func startEmulator(t *testing.T, profile string, build func(v *venue.Venue) (http.Handler, func(), error)) (string, *gate) {
	t.Helper()
	v, err := venue.New(venue.Config{Profile: profile, Seed: 7, Simulate: true, HistoryDays: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = v.Run(ctx) }()
	h, closeEmu, err := build(v)
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{}
	srv := httptest.NewUnstartedServer(g.wrap(h))
	srv.Start()
	t.Cleanup(func() {
		g.mu.Lock()
		if g.release != nil {
			select {
			case <-g.release:
			default:
				close(g.release)
			}
		}
		g.mu.Unlock()
		srv.Close()
		closeEmu()
		cancel()
		<-done
		v.Close()
	})
	return srv.URL, g
}

func fund(t *testing.T, v *venue.Venue, account string) {
	t.Helper()
	ctx := context.Background()
	amt := decimal.NewFromInt(100000)
	if _, err := v.Deposit(ctx, account, "USDT", amt); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Transfer(ctx, account, "USDT", amt, venue.Funding, venue.TradingWallet); err != nil {
		t.Fatal(err)
	}
}

// newEnv starts the reference, binance and okx plugins (the last two against their emulators) under one host, and
// the service on a store. Member "a" and member "b" each have an account on every exchange.
func newEnv(t *testing.T, pg bool) *env {
	t.Helper()
	e := &env{t: t, st: openStore(t, pg), acc: &fakeAccounts{}, ex: map[string]*exch{}}
	refFaults := freeAddr(t)
	e.ex["reference"] = &exch{slug: "reference", spot: "BTCUSDT", swap: "BTCUSDT", faults: "http://" + refFaults}
	e.acc.set("a", "reference", &exchangev1.AccountRef{AccountId: "ref-a", ApiKey: "paper-a"})
	e.acc.set("b", "reference", &exchangev1.AccountRef{AccountId: "ref-b", ApiKey: "paper-b"})

	var binV *venue.Venue
	bURL, bGate := startEmulator(t, "binance", func(v *venue.Venue) (http.Handler, func(), error) {
		binV = v
		s, err := binanceemu.New(binanceemu.Config{Venue: v, Logger: slog.New(slog.DiscardHandler),
			Credentials: []binanceemu.Credential{{Key: "binance-key-b", Secret: "binance-secret-b", Account: "binance-b"}}})
		if err != nil {
			return nil, nil, err
		}
		return s.Handler(), s.Close, nil
	})
	fund(t, binV, "binance-b")
	e.ex["binance"] = &exch{slug: "binance", spot: "ETHUSDT", swap: "ETHUSDT", faults: bURL, gate: bGate}
	e.acc.set("a", "binance", &exchangev1.AccountRef{AccountId: "bin-a", ApiKey: binanceemu.DemoAPIKey, ApiSecret: binanceemu.DemoAPISecret})
	e.acc.set("b", "binance", &exchangev1.AccountRef{AccountId: "bin-b", ApiKey: "binance-key-b", ApiSecret: "binance-secret-b"})

	var okxV *venue.Venue
	oURL, oGate := startEmulator(t, "okx", func(v *venue.Venue) (http.Handler, func(), error) {
		okxV = v
		s, err := okxemu.New(okxemu.Config{Venue: v, Logger: slog.New(slog.DiscardHandler), DisableRateLimits: true,
			Credentials: []okxemu.Credentials{{APIKey: "okx-key-b", Secret: "okx-secret-b", Passphrase: "okx-pass-b", Account: "okx-b"}}})
		if err != nil {
			return nil, nil, err
		}
		return s.Handler(), s.Close, nil
	})
	fund(t, okxV, "okx-b")
	e.ex["okx"] = &exch{slug: "okx", spot: "ETH-USDT", swap: "ETH-USDT-SWAP", faults: oURL, gate: oGate}
	e.acc.set("a", "okx", &exchangev1.AccountRef{AccountId: "okx-a", ApiKey: okxemu.DemoAPIKey, ApiSecret: okxemu.DemoAPISecret, Passphrase: okxemu.DemoPassphrase})
	e.acc.set("b", "okx", &exchangev1.AccountRef{AccountId: "okx-b", ApiKey: "okx-key-b", ApiSecret: "okx-secret-b", Passphrase: "okx-pass-b"})

	specs := []pluginhost.Spec{
		{Key: 100, Slug: "reference", Name: "Reference", Path: plugintest.Path("reference"),
			Settings: map[string]string{"fault_listen": refFaults, "history_days": "1"}},
		{Key: 1, Slug: "binance", Name: "Binance", Path: plugintest.Path("binance"), Settings: binanceemu.PluginSettings(bURL)},
		{Key: 2, Slug: "okx", Name: "OKX", Path: plugintest.Path("okx"), Settings: okxemu.PluginSettings(oURL)},
	}
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	e.host = pluginhost.New(specs, pluginhost.Options{Logger: log, Backoff: pluginhost.Backoff{Initial: 50 * time.Millisecond, Max: time.Second}})
	hctx, hcancel := context.WithCancel(context.Background())
	hdone := make(chan struct{})
	go func() { defer close(hdone); e.host.Run(hctx) }()
	t.Cleanup(func() { hcancel(); <-hdone })
	for _, sup := range e.host.Supervisors() {
		wctx, cancel := context.WithTimeout(hctx, wait)
		err := sup.WaitRunning(wctx)
		cancel()
		if err != nil {
			t.Fatalf("%s not running: %v (%+v)", sup.Slug(), err, sup.Status())
		}
	}

	cfg := Defaults()
	cfg.ResolveInitial, cfg.ResolveMax = setting.Duration(50*time.Millisecond), setting.Duration(500*time.Millisecond)
	cfg.NotFoundGrace = setting.Duration(2 * time.Second)
	cfg.Tick = setting.Duration(50 * time.Millisecond)
	svc, err := New(cfg, e.st, e.host, e.acc, WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	e.start()
	return e
}

// start runs the service's loop until the test ends (or stop).
func (e *env) start() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.svc.Run(ctx) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	e.t.Cleanup(stop)
	e.stopLoop = stop
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// eventually polls cond until it holds or wait passes.
func eventually(t *testing.T, what string, cond func() (string, bool)) {
	t.Helper()
	deadline := time.Now().Add(wait)
	var last string
	for time.Now().Before(deadline) {
		var ok bool
		if last, ok = cond(); ok {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("%s: not within %s (last: %s)", what, wait, last)
}

// The BFF's own collaborators fit the service's interfaces.
var (
	_ AccountSource   = (*accounts.Service)(nil)
	_ Plugins         = (*pluginhost.Host)(nil)
	_ feed.Subscriber = (*accountstream.Manager)(nil)
)
