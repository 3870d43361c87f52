// Package app assembles the BFF: it builds every component from the configuration (the HTTP listener, the member
// store, the cache, the plugin host, the market service, analytics, the stream gateway, the session checker and the
// self-service gate, the member and KYC services, the members' exchange accounts, the HTTP server, and as they land
// trading and wallet) and runs them with a Lifecycle: started in order, stopped in reverse order, every goroutine
// owned. cmd/exhub-bff only parses flags and calls Serve or OpenAPI.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"syscall"

	"github.com/exhub/exhub/analytics/service"
	"github.com/exhub/exhub/bff/internal/accounts"
	"github.com/exhub/exhub/bff/internal/accountstream"
	"github.com/exhub/exhub/bff/internal/api"
	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/auth/gate"
	"github.com/exhub/exhub/bff/internal/cache"
	"github.com/exhub/exhub/bff/internal/config"
	"github.com/exhub/exhub/bff/internal/kyc"
	"github.com/exhub/exhub/bff/internal/market"
	"github.com/exhub/exhub/bff/internal/member"
	"github.com/exhub/exhub/bff/internal/metrics"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/ratelimit"
	"github.com/exhub/exhub/bff/internal/rewards"
	"github.com/exhub/exhub/bff/internal/store"
	"github.com/exhub/exhub/bff/internal/stream"
	"github.com/exhub/exhub/bff/internal/trading"
	"github.com/exhub/exhub/bff/internal/wallet"
)

// BFF is the assembled backend-for-frontend. Its fields are set by the components' Open steps, in start order, so
// a component may use what the components before it opened.
type BFF struct {
	cfg     *config.Config
	log     *slog.Logger
	version string

	ln        net.Listener
	store     *store.Store
	cache     cache.Cache
	metrics   *metrics.Metrics
	host      *pluginhost.Host
	market    *market.Service
	history   *service.Service // nil when analytics is off
	analytics api.Analytics    // history as the API sees it (a nil interface when off)
	gateway   *stream.Gateway
	checker   *auth.Checker
	gate      *gate.Gate
	members   *member.Service
	kyc       *kyc.Service
	accounts  *accounts.Service // nil in demo mode without a key-encryption key
	// accountStreams are the members' private account streams (nil without accounts).
	accountStreams *accountstream.Manager
	// trading is the order journal and path (nil without accounts).
	trading *trading.Service
	// wallet is the money-movement journal and path (nil without accounts).
	wallet *wallet.Service
	// rewards is the referral rewards job (nil without the trading service or with rewards.enabled off).
	rewards *rewards.Job
	server  *http.Server
}

// New assembles the BFF; nothing starts before Run.
func New(cfg *config.Config, version string, log *slog.Logger) *BFF {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &BFF{cfg: cfg, log: log, version: version, metrics: metrics.New()}
}

// Serve runs the BFF until ctx ends, logging JSON lines to logw at cfg.Log.Level, and makes that logger the
// default.
func Serve(ctx context.Context, cfg *config.Config, version string, logw io.Writer) error {
	log := NewLogger(cfg.Log.Level, logw)
	slog.SetDefault(log)
	return New(cfg, version, log).Run(ctx)
}

// OpenAPI returns the API's OpenAPI 3.1 document as JSON without starting anything.
func OpenAPI(cfg *config.Config, version string) ([]byte, error) { return api.OpenAPI(cfg, version) }

// NewLogger is a JSON logger at level (debug, info, warn, error).
func NewLogger(level string, w io.Writer) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}

// Run starts the components and serves until ctx ends; see Lifecycle.Run.
func (b *BFF) Run(ctx context.Context) error {
	b.log.Info("exhub-bff starting", "version", b.version, "mode", b.cfg.Mode, "addr", b.cfg.HTTP.Addr,
		"config", b.cfg.File, "root", b.cfg.Root)
	err := NewLifecycle(b.log, b.Components()...).Run(ctx)
	b.log.Info("exhub-bff stopped")
	return err
}

// Components are the BFF's components in start order.
func (b *BFF) Components() []Component {
	return []Component{
		Func{ID: "listener", OpenFn: b.listen, CloseFn: b.closeListener},
		Func{ID: "store", OpenFn: b.openStore, CloseFn: func() error { b.store.Close(); return nil }},
		Func{ID: "content", OpenFn: b.seedContent},
		Func{ID: "cache", OpenFn: b.openCache, CloseFn: func() error { b.cache.Close(); return nil }},
		Func{ID: "plugins", OpenFn: b.newHost, RunFn: func(ctx context.Context) error {
			b.host.Run(ctx)
			b.log.Info("plugins stopped")
			return nil
		}},
		Func{ID: "market", OpenFn: b.newMarket, RunFn: func(ctx context.Context) error { b.market.Run(ctx); return nil }},
		Func{ID: "analytics", OpenFn: b.newAnalytics, RunFn: b.runAnalytics},
		Func{ID: "auth", OpenFn: b.newAuth},
		Func{ID: "members", OpenFn: b.newMembers, RunFn: b.runKYCAutoReview},
		Func{ID: "accounts", OpenFn: b.newAccounts, RunFn: b.runAccounts},
		Func{ID: "account-streams", OpenFn: b.newAccountStreams, RunFn: b.runAccountStreams},
		Func{ID: "trading", OpenFn: b.newTrading, RunFn: b.runTrading},
		Func{ID: "rewards", OpenFn: b.newRewards, RunFn: b.runRewards},
		Func{ID: "wallet", OpenFn: b.newWallet, RunFn: b.runWallet},
		Func{ID: "stream", OpenFn: b.newGateway, RunFn: b.runGateway},
		Func{ID: "http", OpenFn: b.newServer, RunFn: b.serveHTTP},
	}
}

// listen binds the HTTP address first, so a busy port fails the start before anything else opens.
func (b *BFF) listen(context.Context) error {
	ln, err := net.Listen("tcp", b.cfg.HTTP.Addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("%s is already in use: stop what holds it or set EXHUB_HTTP_ADDR (http.addr) to a free port", b.cfg.HTTP.Addr)
		}
		return fmt.Errorf("listen on %s: %w", b.cfg.HTTP.Addr, err)
	}
	b.ln = ln
	return nil
}

// closeListener closes the listener when the server never took it (a later component failed to open).
func (b *BFF) closeListener() error {
	if err := b.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// openStore connects the member database and applies pending migrations (replicas take turns on PostgreSQL).
func (b *BFF) openStore(ctx context.Context) error {
	st, err := store.Open(ctx, b.cfg.Store, store.WithLogger(b.log))
	if err != nil {
		return err
	}
	b.store = st
	b.log.Info("store open", "driver", st.Driver())
	return nil
}

func (b *BFF) openCache(ctx context.Context) error {
	v := b.cfg.Valkey
	c, err := cache.Open(ctx, v.Config(), b.log)
	if err != nil {
		return err
	}
	b.cache = c
	return nil
}

func (b *BFF) newHost(context.Context) error {
	cfg := b.cfg
	var specs []pluginhost.Spec
	for _, e := range cfg.Exchanges {
		if e.Plugin == "" {
			continue
		}
		specs = append(specs, pluginhost.Spec{
			Key: e.Key, Slug: e.Slug, Name: e.Name, Path: cfg.PluginPath(e), SHA256: e.SHA256, Settings: e.Settings,
			Env: e.Env, EnvAllow: cfg.PluginEnvAllow(e),
		})
	}
	opts := cfg.Plugins.Options()
	opts.Logger, opts.Observer = b.log, b.metrics
	b.host = pluginhost.New(specs, opts)
	return nil
}

func (b *BFF) newMarket(context.Context) error {
	opts := b.cfg.Market.Options()
	opts.Exchanges, opts.Cache, opts.Logger = api.MarketExchanges(b.cfg, b.host), b.cache, b.log
	b.market = market.New(opts)
	return nil
}

// newAnalytics builds market history (schema migrations, live ingest and backfill into ClickHouse) when it is
// enabled and ClickHouse is configured. With Valkey, replicas share it: one at a time runs each exchange's ingest
// (a lease, taken over when the holder dies); without it this replica runs them all.
func (b *BFF) newAnalytics(context.Context) error {
	if !b.cfg.Analytics.Enabled || b.cfg.ClickHouse.Addr == "" {
		return nil
	}
	ac := api.AnalyticsConfig(b.cfg, b.host)
	ac.Logger = b.log
	if v, ok := b.cache.(*cache.Valkey); ok {
		ac.Lease = service.NewValkeyLease(service.ValkeyLeaseOptions{Client: v.Client(), Logger: b.log})
	}
	svc := service.New(ac)
	b.metrics.RegisterAnalytics(svc)
	b.history, b.analytics = svc, svc
	return nil
}

// runAnalytics runs until ctx ends, flushing on the way out. A failure is logged, not fatal: the BFF serves without
// history (the analytics routes and /readyz say so).
func (b *BFF) runAnalytics(ctx context.Context) error {
	if b.history == nil {
		return nil
	}
	if err := b.history.Run(ctx); err != nil {
		b.log.Error("analytics stopped", "err", err)
	}
	return nil
}

// newGateway builds the live stream gateway; replicas share upstream streams through Valkey when the cache uses it.
func (b *BFF) newGateway(context.Context) error {
	var broker stream.Broker
	if v, ok := b.cache.(*cache.Valkey); ok {
		vo := stream.ValkeyOptionsFrom(b.cfg.Stream)
		vo.Client, vo.Logger = v.Client(), b.log
		broker = stream.NewValkeyBroker(vo)
	}
	o := stream.Options{Config: stream.ConfigFrom(b.cfg.Stream),
		Source: stream.HostSource{Host: b.host}, Broker: broker, Logger: b.log, Sessions: b.checker}
	if b.accountStreams != nil {
		o.Accounts = b.accountStreams
	}
	b.gateway = stream.New(o)
	b.metrics.RegisterStream(b.gateway)
	return nil
}

// runGateway serves stream connections until ctx ends, then closes them (1001) before the plugins stop.
func (b *BFF) runGateway(ctx context.Context) error {
	if err := b.gateway.Run(ctx); err != nil {
		b.log.Warn("stream gateway", "err", err)
	}
	return nil
}

// newAuth builds the session checker of the private routes and the self-service gate. Rate limits are shared by
// the replicas through Valkey when the cache uses it, else counted in process.
func (b *BFF) newAuth(context.Context) error {
	checker, err := auth.NewChecker(b.cfg.AuthConfig(), auth.WithLogger(b.log))
	if err != nil {
		return err
	}
	var limiter ratelimit.Limiter = ratelimit.NewLocal(b.cfg.RateLimit)
	if v, ok := b.cache.(*cache.Valkey); ok {
		vl, err := ratelimit.NewValkey(b.cfg.RateLimit, v.Client(), b.log)
		if err != nil {
			return err
		}
		limiter = vl
	}
	g, err := gate.New(b.cfg.GateConfig(), gate.Deps{Limiter: limiter, Forget: checker.Forget, Logger: b.log})
	if err != nil {
		return err
	}
	b.checker, b.gate = checker, g
	return nil
}

// newMembers builds the member layer (Kratos' web hooks, lazy member rows, lockout) and KYC over the store.
func (b *BFF) newMembers(context.Context) error {
	b.members = member.New(b.store, b.cfg.Member, b.log)
	kc := b.cfg.KYC
	if len(kc.Exchanges) == 0 {
		for _, e := range b.cfg.Exchanges {
			kc.Exchanges = append(kc.Exchanges, e.Slug)
		}
	}
	b.kyc = kyc.New(b.store, b.cfg.DataPath(), kc, b.log)
	return nil
}

// runKYCAutoReview completes KYC applications in review after kyc.auto_review_delay, in demo mode only, until ctx
// ends.
func (b *BFF) runKYCAutoReview(ctx context.Context) error {
	if b.cfg.Mode != "demo" || !b.cfg.KYC.AutoReview {
		return nil
	}
	b.log.Info("kyc auto-review on (demo mode)", "delay", b.cfg.KYC.AutoReviewDelay.String())
	return b.kyc.RunAutoReview(ctx)
}

// newAccounts builds the members' exchange accounts over the store and the plugins: linked keys checked with the
// exchange and sealed under the configured key-encryption keys, and in broker mode sub-accounts made with the
// master credentials. Live mode refuses to start without a key; demo mode runs without accounts (the routes answer
// 503) and says what to set.
func (b *BFF) newAccounts(context.Context) error {
	cfg := b.cfg.Accounts.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("config: accounts: %w", err)
	}
	if !cfg.HasKeys() {
		if b.cfg.Mode != "demo" {
			return cfg.Require()
		}
		b.log.Warn("exchange accounts are off: no key-encryption key", "hint", cfg.Require().Error())
		return nil
	}
	keys, err := cfg.Keyring()
	if err != nil {
		return err
	}
	o := accounts.Options{Store: b.store, Keyring: keys, Exchanges: accounts.HostExchanges{Host: b.host}, Config: cfg,
		Logger: b.log}
	if cfg.Broker.Enabled {
		masters, err := cfg.Broker.Masters()
		if err != nil {
			return fmt.Errorf("config: accounts.broker.credentials: %w", err)
		}
		if len(masters) == 0 {
			b.log.Warn("broker mode is on without master credentials (accounts.broker.credentials): no broker accounts are made")
		}
		o.Broker = accounts.NewHostBroker(b.host, masters)
		// Demo mode's faucet: every member gets a funded sub-account on every exchange at once.
		o.EveryMember = b.cfg.Mode == "demo"
	}
	svc, err := accounts.New(o)
	if err != nil {
		return err
	}
	b.accounts = svc
	b.log.Info("exchange accounts ready", "active_key", keys.Active(), "keys", len(keys.IDs()), "broker", svc.BrokerMode())
	return nil
}

// runAccounts provisions broker accounts (resuming unfinished ones) until ctx ends.
func (b *BFF) runAccounts(ctx context.Context) error {
	if b.accounts == nil {
		return nil
	}
	return b.accounts.Run(ctx)
}

// Accounts is the exchange accounts service (nil in demo mode without a key-encryption key), for the trading path's
// AccountRef.
func (b *BFF) Accounts() *accounts.Service { return b.accounts }

func (b *BFF) newServer(context.Context) error {
	handler, _ := api.New(api.Deps{Config: b.cfg, Host: b.host, Cache: b.cache, Metrics: b.metrics, Logger: b.log,
		Version: b.version, Market: b.market, Stream: b.gateway, Analytics: b.analytics, Auth: b.checker, Gate: b.gate,
		Members: b.members, KYC: b.kyc, Accounts: b.accounts, Trading: b.trading, Wallet: b.wallet, Content: b.store})
	b.server = &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: b.cfg.HTTP.ReadHeaderTimeout.D(),
		ErrorLog:          slog.NewLogLogger(b.log.Handler(), slog.LevelWarn),
	}
	return nil
}

// serveHTTP serves until ctx ends, then drains in-flight requests for at most http.shutdown_timeout.
func (b *BFF) serveHTTP(ctx context.Context) error {
	serveErr := make(chan error, 1)
	go func() { // owned by serveHTTP: ends when the server is shut down, waited for below
		serveErr <- b.server.Serve(b.ln)
	}()
	b.log.Info("exhub-bff listening", "url", "http://"+b.ln.Addr().String())
	select {
	case err := <-serveErr:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	b.log.Info("shutting down: draining HTTP")
	sctx, cancel := context.WithTimeout(context.Background(), b.cfg.HTTP.ShutdownTimeout.D())
	defer cancel()
	if err := b.server.Shutdown(sctx); err != nil {
		b.log.Warn("http shutdown incomplete", "err", err)
	}
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http server: %w", err)
	}
	return nil
}
