// Command exhub-bff is the exhub backend-for-frontend: the REST API, the plugin host and (later) the stream gateway.
//
//	exhub-bff [--config bff/exhub.yaml]   serve (the default)
//	exhub-bff openapi [--config ...]      print the OpenAPI 3.1 document (JSON) and exit
//	exhub-bff version                     print the version and exit
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/exhub/exhub/analytics/service"
	"github.com/exhub/exhub/bff/internal/api"
	"github.com/exhub/exhub/bff/internal/cache"
	"github.com/exhub/exhub/bff/internal/config"
	"github.com/exhub/exhub/bff/internal/market"
	"github.com/exhub/exhub/bff/internal/metrics"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/stream"
)

// version is set at build time: -ldflags "-X main.version=1.2.3".
var version = "dev"

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "exhub-bff:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("exhub-bff "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", os.Getenv("EXHUB_CONFIG"),
		"YAML config file (default: bff/exhub.yaml when it exists in the working directory; env EXHUB_CONFIG)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch cmd {
	case "version":
		_, err := fmt.Fprintln(stdout, version)
		return err
	case "openapi":
		cfg, err := loadConfig(*configPath)
		if err != nil {
			return err
		}
		doc, err := api.OpenAPI(cfg, version)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", doc)
		return err
	case "serve":
		cfg, err := loadConfig(*configPath)
		if err != nil {
			return err
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return serve(ctx, cfg, stderr)
	default:
		return fmt.Errorf("unknown command %q (commands: serve, openapi, version)", cmd)
	}
}

func loadConfig(path string) (*config.Config, error) {
	if path == "" {
		if _, err := os.Stat("bff/exhub.yaml"); err == nil {
			path = "bff/exhub.yaml"
		}
	}
	return config.Load(path)
}

func newLogger(level string, w io.Writer) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}

// serve runs until ctx ends: it drains HTTP first, then stops the plugins.
func serve(ctx context.Context, cfg *config.Config, logw io.Writer) error {
	log := newLogger(cfg.Log.Level, logw)
	slog.SetDefault(log)

	ln, err := net.Listen("tcp", cfg.HTTP.Addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("%s is already in use: stop what holds it or set EXHUB_HTTP_ADDR (http.addr) to a free port", cfg.HTTP.Addr)
		}
		return fmt.Errorf("listen on %s: %w", cfg.HTTP.Addr, err)
	}
	log.Info("exhub-bff starting", "version", version, "mode", cfg.Mode, "addr", ln.Addr().String(),
		"config", cfg.File, "root", cfg.Root)

	c, err := cache.Open(ctx, cache.Config{
		Addr: cfg.Valkey.Addr, Required: cfg.Valkey.Required, DialTimeout: cfg.Valkey.DialTimeout.D(),
		LocalMaxEntries: cfg.Valkey.LocalMaxEntries,
	}, log)
	if err != nil {
		ln.Close()
		return err
	}
	defer c.Close()

	m := metrics.New()
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
	host := pluginhost.New(specs, pluginhost.Options{
		StartTimeout:   cfg.Plugins.StartTimeout.D(),
		CallTimeout:    cfg.Plugins.CallTimeout.D(),
		HealthInterval: cfg.Plugins.HealthInterval.D(),
		Backoff:        pluginhost.Backoff{Initial: cfg.Plugins.BackoffInitial.D(), Max: cfg.Plugins.BackoffMax.D()},
		StableAfter:    cfg.Plugins.StableAfter.D(),
		StreamBuffer:   cfg.Plugins.StreamBuffer,
		Logger:         log,
		Observer:       m,
	})
	hostCtx, stopHost := context.WithCancel(context.Background())
	var hostDone sync.WaitGroup
	hostDone.Add(1)
	go func() { // owned by serve; stops with hostCtx after HTTP has drained
		defer hostDone.Done()
		host.Run(hostCtx)
	}()
	defer func() {
		stopHost()
		hostDone.Wait()
		log.Info("plugins stopped")
	}()

	mk := market.New(market.Options{
		Exchanges:           api.MarketExchanges(cfg, host),
		Cache:               c,
		Logger:              log,
		TickerInterval:      cfg.Market.TickerInterval.D(),
		InstrumentsTTL:      cfg.Market.InstrumentsTTL.D(),
		TickersMaxStale:     cfg.Market.TickersMaxStale.D(),
		InstrumentsMaxStale: cfg.Market.InstrumentsMaxStale.D(),
		CallTimeout:         cfg.Market.CallTimeout.D(),
	})
	hostDone.Add(1)
	go func() { // owned by serve; refreshes tickers until hostCtx ends
		defer hostDone.Done()
		mk.Run(hostCtx)
	}()

	// Analytics: schema migrations, live ingest and backfill into ClickHouse; stops (flushing) with the plugins.
	// With Valkey, replicas share it: one at a time runs each exchange's ingest (a lease, taken over when the
	// holder dies); without it this replica runs them all.
	var analytics api.Analytics
	if cfg.Analytics.Enabled && cfg.ClickHouse.Addr != "" {
		ac := api.AnalyticsConfig(cfg, host)
		ac.Logger = log
		if v, ok := c.(*cache.Valkey); ok {
			ac.Lease = service.NewValkeyLease(service.ValkeyLeaseOptions{Client: v.Client(), Logger: log})
		}
		svc := service.New(ac)
		m.RegisterAnalytics(svc)
		analytics = svc
		hostDone.Add(1)
		go func() { // owned by serve; stops with hostCtx after HTTP has drained
			defer hostDone.Done()
			if err := svc.Run(hostCtx); err != nil {
				log.Error("analytics stopped", "err", err)
			}
		}()
	}

	// The live stream gateway: replicas share upstream streams through Valkey when the cache uses it.
	var broker stream.Broker
	if v, ok := c.(*cache.Valkey); ok {
		vo := stream.ValkeyOptionsFrom(cfg.Stream)
		vo.Client, vo.Logger = v.Client(), log
		broker = stream.NewValkeyBroker(vo)
	}
	gw := stream.New(stream.Options{Config: stream.ConfigFrom(cfg.Stream), Source: stream.HostSource{Host: host},
		Broker: broker, Logger: log})
	m.RegisterStream(gw)
	gwCtx, stopGw := context.WithCancel(context.Background())
	gwDone := make(chan struct{})
	go func() { // owned by serve; closes stream connections (1001) before the plugins stop
		defer close(gwDone)
		if err := gw.Run(gwCtx); err != nil {
			log.Warn("stream gateway", "err", err)
		}
	}()
	defer func() { stopGw(); <-gwDone }()

	handler, _ := api.New(api.Deps{Config: cfg, Host: host, Cache: c, Metrics: m, Logger: log, Version: version, Market: mk, Stream: gw, Analytics: analytics})
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: cfg.HTTP.ReadHeaderTimeout.D(),
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	serveErr := make(chan error, 1)
	go func() { // owned by serve; ends when the server is shut down
		serveErr <- srv.Serve(ln)
	}()
	log.Info("exhub-bff listening", "url", "http://"+ln.Addr().String())

	select {
	case err := <-serveErr:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down: draining HTTP")
	sctx, cancel := context.WithTimeout(context.Background(), cfg.HTTP.ShutdownTimeout.D())
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("http shutdown incomplete", "err", err)
	}
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http server: %w", err)
	}
	return nil
}
