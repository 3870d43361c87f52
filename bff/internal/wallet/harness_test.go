package wallet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
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
	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/config/setting"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/plugintest"
	"github.com/exhub/exhub/bff/internal/servicegate"
	"github.com/exhub/exhub/bff/internal/store"
	"github.com/exhub/exhub/bff/internal/store/storetest"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func TestMain(m *testing.M) { os.Exit(plugintest.Run(m, storetest.Run, "binance", "okx")) }

// wait bounds every wait on a condition: generous, so a loaded machine never fails a test.
const wait = 90 * time.Second

// fakeAccounts is an accounts.Service stand-in: members' accounts per exchange.
type fakeAccounts struct {
	mu   sync.Mutex
	refs map[string]map[string]*exchangev1.AccountRef
	list map[string][]accounts.Account
}

func (f *fakeAccounts) set(member string, a accounts.Account, ref *exchangev1.AccountRef) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refs == nil {
		f.refs, f.list = map[string]map[string]*exchangev1.AccountRef{}, map[string][]accounts.Account{}
	}
	if f.refs[member] == nil {
		f.refs[member] = map[string]*exchangev1.AccountRef{}
	}
	ref.AccountId = a.ID
	f.refs[member][a.Exchange] = ref
	f.list[member] = append(f.list[member], a)
}

func (f *fakeAccounts) AccountRef(_ context.Context, member, exchange string) (*exchangev1.AccountRef, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ref, ok := f.refs[member][exchange]
	if !ok {
		return nil, fmt.Errorf("member %s on %s: %w", member, exchange, accounts.ErrNoAccount)
	}
	return ref, nil
}

func (f *fakeAccounts) List(_ context.Context, member string) ([]accounts.Account, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]accounts.Account(nil), f.list[member]...), nil
}

type fakeDirectory map[string]string

func (d fakeDirectory) MemberIDByEmail(_ context.Context, email string) (string, error) {
	if id, ok := d[strings.ToLower(email)]; ok {
		return id, nil
	}
	return "", ErrNoMember
}

type env struct {
	t      *testing.T
	st     *store.Store
	host   *pluginhost.Host
	svc    *Service
	acc    *fakeAccounts
	venues map[string]*venue.Venue
	urls   map[string]string // emulator base URLs (faults)
	master map[string]*exchangev1.AccountRef
	opts   Options // the service's options (another replica on the same store and plugins: replica)
	// nextID, when set, is the next client id the service takes.
	mu     sync.Mutex
	nextID string
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

func startEmulator(t *testing.T, profile string, build func(v *venue.Venue) (http.Handler, func(), error)) (string, *venue.Venue) {
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
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		closeEmu()
		cancel()
		<-done
		v.Close()
	})
	return srv.URL, v
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

type envOptions struct {
	pg   bool
	live bool
	// feeFree is the fee-free partner exchange (default the config's).
	feeFree string
	// stale: a sent entry is a crash leftover after 6 s (plugin calls bounded by 5 s: generous on a loaded machine).
	stale bool
	// gates are the service gates per exchange.
	gates map[string]servicegate.Rules
	// restrictedMaster: the broker masters are keys of the demo accounts without the withdraw permission (they
	// move money between the master and sub-accounts, and every withdrawal through them is refused).
	restrictedMaster bool
}

// Keys of the demo (master) accounts without the withdraw permission (envOptions.restrictedMaster).
const (
	restrictedBinanceKey, restrictedBinanceSecret = "restricted-binance-master", "restricted-binance-secret"
	restrictedOKXKey, restrictedOKXSecret         = "restricted-okx-master", "restricted-okx-secret"
	restrictedOKXPassphrase                       = "Restricted-1"
)

// newEnv starts the binance and okx plugins against their emulators under one host, and the wallet service on a
// store, in demo mode with the emulators' demo accounts as the broker masters.
func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	e := &env{t: t, st: openStore(t, o.pg), acc: &fakeAccounts{}, venues: map[string]*venue.Venue{},
		urls: map[string]string{}, master: map[string]*exchangev1.AccountRef{}}
	reserve := map[string]decimal.Decimal{"USDT": decimal.NewFromInt(1_000_000)}
	// Both venues on one simulated chain: a withdrawal to the other's deposit address arrives there shortly.
	chain, err := venue.NewChain(venue.ChainConfig{MinDelay: 200 * time.Millisecond, MaxDelay: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cctx, ccancel := context.WithCancel(context.Background())
	cdone := make(chan struct{})
	go func() { defer close(cdone); _ = chain.Run(cctx) }()
	t.Cleanup(func() { ccancel(); <-cdone })
	bURL, bv := startEmulator(t, "binance", func(v *venue.Venue) (http.Handler, func(), error) {
		if err := chain.Attach("binance", v); err != nil {
			return nil, nil, err
		}
		cfg := binanceemu.Config{Venue: v, Logger: slog.New(slog.DiscardHandler), DemoReserve: reserve}
		if o.restrictedMaster {
			cfg.Credentials = []binanceemu.Credential{{Key: restrictedBinanceKey, Secret: restrictedBinanceSecret,
				Account: binanceemu.DemoAccount, Broker: true}}
		}
		s, err := binanceemu.New(cfg)
		if err != nil {
			return nil, nil, err
		}
		if o.restrictedMaster {
			s.SetPermissions(restrictedBinanceKey, binanceemu.DefaultPermissions) // no withdrawals
		}
		return s.Handler(), s.Close, nil
	})
	oURL, ov := startEmulator(t, "okx", func(v *venue.Venue) (http.Handler, func(), error) {
		if err := chain.Attach("okx", v); err != nil {
			return nil, nil, err
		}
		cfg := okxemu.Config{Venue: v, Logger: slog.New(slog.DiscardHandler), DisableRateLimits: true, DemoReserve: reserve}
		if o.restrictedMaster {
			cfg.Credentials = []okxemu.Credentials{{APIKey: restrictedOKXKey, Secret: restrictedOKXSecret,
				Passphrase: restrictedOKXPassphrase, Account: okxemu.DemoAccount, Perm: "read_only,trade", Broker: true}}
		}
		s, err := okxemu.New(cfg)
		if err != nil {
			return nil, nil, err
		}
		return s.Handler(), s.Close, nil
	})
	e.venues["binance"], e.venues["okx"] = bv, ov
	e.urls["binance"], e.urls["okx"] = bURL, oURL
	e.master["binance"] = &exchangev1.AccountRef{AccountId: "broker:binance", ApiKey: binanceemu.DemoAPIKey, ApiSecret: binanceemu.DemoAPISecret}
	e.master["okx"] = &exchangev1.AccountRef{AccountId: "broker:okx", ApiKey: okxemu.DemoAPIKey, ApiSecret: okxemu.DemoAPISecret,
		Passphrase: okxemu.DemoPassphrase}
	if o.restrictedMaster {
		e.master["binance"] = &exchangev1.AccountRef{AccountId: "broker:binance", ApiKey: restrictedBinanceKey, ApiSecret: restrictedBinanceSecret}
		e.master["okx"] = &exchangev1.AccountRef{AccountId: "broker:okx", ApiKey: restrictedOKXKey, ApiSecret: restrictedOKXSecret,
			Passphrase: restrictedOKXPassphrase}
	}

	specs := []pluginhost.Spec{
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
	cfg.FollowInterval = setting.Duration(200 * time.Millisecond)
	cfg.Tick = setting.Duration(50 * time.Millisecond)
	if o.stale {
		cfg.CallTimeout, cfg.SentStale = setting.Duration(5*time.Second), setting.Duration(6*time.Second)
	}
	if o.feeFree != "" {
		cfg.FeeFreeExchange = o.feeFree
	}
	e.opts = Options{Config: cfg, Store: e.st, Plugins: e.host, Accounts: e.acc, Masters: e.master,
		Directory: fakeDirectory{"b@example.com": "b"}, Demo: !o.live, Logger: log, ClientIDs: e.takeID,
		Gates: servicegate.New(o.gates, nil, e.st)}
	svc, err := New(e.opts)
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); svc.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return e
}

// replica is another BFF's wallet service on the same store and plugins (its resolver not running).
func (e *env) replica() *Service {
	e.t.Helper()
	svc, err := New(e.opts)
	if err != nil {
		e.t.Fatal(err)
	}
	return svc
}

func (e *env) takeID() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	id := e.nextID
	e.nextID = ""
	return id
}

// useID makes id the client id of the next movement.
func (e *env) useID(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.nextID = id
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// broker gives member a broker sub-account on exchange (made through the plugin with the master's credentials,
// as the accounts service does) and a member row.
func (e *env) broker(member, exchange string) accounts.Account {
	e.t.Helper()
	ctx := context.Background()
	if _, _, err := e.st.EnsureMember(ctx, store.NewMember{ID: member}); err != nil {
		e.t.Fatal(err)
	}
	sup, _ := e.host.Get(exchange)
	label := "w" + randHex(6)
	var sub string
	err := sup.Call(ctx, "CreateSubAccount", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.CreateSubAccount(ctx, &exchangev1.CreateSubAccountRequest{Account: e.master[exchange], Label: label, ClientRequestId: label})
		sub = resp.GetSubAccount().GetSubAccountId()
		return err
	})
	if err != nil {
		e.t.Fatalf("sub-account on %s: %v", exchange, err)
	}
	var key *exchangev1.CreateSubAccountApiKeyResponse
	err = sup.Call(ctx, "CreateSubAccountApiKey", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.CreateSubAccountApiKey(ctx, &exchangev1.CreateSubAccountApiKeyRequest{Account: e.master[exchange], SubAccountId: sub, Label: label})
		key = resp
		return err
	})
	if err != nil {
		e.t.Fatalf("sub-account key on %s: %v", exchange, err)
	}
	a := accounts.Account{ID: member + "-" + exchange, Exchange: exchange, Mode: store.AccountBroker, SubAccountID: sub,
		Status: store.AccountActive}
	e.acc.set(member, a, &exchangev1.AccountRef{ApiKey: key.GetApiKey(), ApiSecret: key.GetApiSecret(), Passphrase: key.GetPassphrase()})
	return a
}

// balance is the member's available amount of asset in a wallet.
func (e *env) balance(member, exchange, asset string, w exchangev1.WalletType) decimal.Decimal {
	e.t.Helper()
	ref, err := e.acc.AccountRef(context.Background(), member, exchange)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.balanceOf(ref, exchange, asset, w)
}

// masterTotal is the master's amount of asset in its funding and trading wallets together.
func (e *env) masterTotal(exchange, asset string) decimal.Decimal {
	e.t.Helper()
	return e.balanceOf(e.master[exchange], exchange, asset, funding).Add(e.balanceOf(e.master[exchange], exchange, asset, trading))
}

func (e *env) balanceOf(ref *exchangev1.AccountRef, exchange, asset string, w exchangev1.WalletType) decimal.Decimal {
	e.t.Helper()
	sup, _ := e.host.Get(exchange)
	var bals []*exchangev1.Balance
	err := sup.Call(context.Background(), "GetBalances", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.GetBalances(ctx, &exchangev1.GetBalancesRequest{Account: ref, Wallet: w})
		bals = resp.GetBalances()
		return err
	})
	if err != nil {
		e.t.Fatalf("balances: %v", err)
	}
	sum := decimal.Zero
	for _, b := range bals {
		if b.GetAsset() == asset && b.GetWallet() == w {
			sum = sum.Add(decimal.RequireFromString(b.GetAvailable()))
		}
	}
	return sum
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

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// The BFF's own collaborators fit the service's interfaces.
var (
	_ Accounts  = (*accounts.Service)(nil)
	_ Plugins   = (*pluginhost.Host)(nil)
	_ Directory = KratosDirectory{}
)
