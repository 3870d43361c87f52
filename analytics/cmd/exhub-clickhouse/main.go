// Command exhub-clickhouse runs a local ClickHouse server (native TCP and HTTP on 127.0.0.1) from the ClickHouse
// engine library installed by `make deps`, until SIGINT or SIGTERM. Readiness: GET http://127.0.0.1:<http-port>/ping
// answers "Ok.". The data directory persists across restarts.
//
//	exhub-clickhouse --path .data/clickhouse --tcp-port 9000 --http-port 8123
//
// Every flag has an EXHUB_CLICKHOUSE_* environment default (PATH, TCP_PORT, HTTP_PORT, LISTEN_HOST, LIB,
// ANALYST_USER, ANALYST_PASSWORD, ANALYST_DATABASE).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/exhub/exhub/analytics/chserver"
)

// restartEnv counts quick consecutive restarts across re-executions of this process.
const restartEnv = "EXHUB_CLICKHOUSE_QUICK_RESTARTS"

const (
	maxQuickRestarts = 5
	quickRun         = 30 * time.Second
)

func main() {
	os.Exit(run())
}

func run() int {
	fs := flag.NewFlagSet("exhub-clickhouse", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: exhub-clickhouse [flags]\n\nRuns a local ClickHouse server on 127.0.0.1 until SIGINT/SIGTERM.\n\n")
		fs.PrintDefaults()
	}
	path := fs.String("path", env("EXHUB_CLICKHOUSE_PATH", ".data/clickhouse"), "data directory (created if missing; env EXHUB_CLICKHOUSE_PATH)")
	tcpPort := fs.Int("tcp-port", envInt("EXHUB_CLICKHOUSE_TCP_PORT", 9000), "native protocol port (env EXHUB_CLICKHOUSE_TCP_PORT)")
	httpPort := fs.Int("http-port", envInt("EXHUB_CLICKHOUSE_HTTP_PORT", 8123), "HTTP port, readiness at /ping (env EXHUB_CLICKHOUSE_HTTP_PORT)")
	host := fs.String("listen-host", env("EXHUB_CLICKHOUSE_LISTEN_HOST", "127.0.0.1"), "loopback address to bind (env EXHUB_CLICKHOUSE_LISTEN_HOST)")
	lib := fs.String("lib", os.Getenv(chserver.LibEnv), "path to libchdb.so (env "+chserver.LibEnv+"; default: found under "+chserver.LibRelPath+")")
	analystUser := fs.String("analyst-user", env("EXHUB_CLICKHOUSE_ANALYST_USER", "analyst"), "read-only user (readonly=1, SELECT on --analyst-database only; env EXHUB_CLICKHOUSE_ANALYST_USER)")
	analystPassword := fs.String("analyst-password", env("EXHUB_CLICKHOUSE_ANALYST_PASSWORD", chserver.DefaultAnalystPassword), "the read-only user's password (env EXHUB_CLICKHOUSE_ANALYST_PASSWORD; the default is a demo password)")
	analystDB := fs.String("analyst-database", env("EXHUB_CLICKHOUSE_ANALYST_DATABASE", "exhub"), "the database the read-only user may read (env EXHUB_CLICKHOUSE_ANALYST_DATABASE)")
	readyTimeout := fs.Duration("ready-timeout", 60*time.Second, "how long to wait for the server to answer /ping")
	level := fs.String("log-level", env("EXHUB_LOG_LEVEL", "info"), "log level: debug, info, warn, error")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}

	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		fmt.Fprintf(os.Stderr, "exhub-clickhouse: bad --log-level %q\n", *level)
		return 2
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: lvl})).With("component", "clickhouse")

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	started := time.Now()
	err := chserver.Run(ctx, chserver.Config{
		Path:            *path,
		ListenHost:      *host,
		TCPPort:         *tcpPort,
		HTTPPort:        *httpPort,
		LibPath:         *lib,
		ReadyTimeout:    *readyTimeout,
		Logger:          log,
		AnalystUser:     *analystUser,
		AnalystPassword: *analystPassword,
		AnalystDatabase: *analystDB,
	})
	switch {
	case err == nil:
		return 0
	case ctx.Err() != nil:
		// A signal arrived before the server was ready: a requested stop, not a failure.
		log.Info("clickhouse stopped before it was ready", "reason", err.Error())
		return 0
	case errors.Is(err, chserver.ErrHoldEnded) && ctx.Err() == nil:
		return restart(log, err, time.Since(started))
	default:
		log.Error("clickhouse failed", "err", err.Error())
		return 1
	}
}

// restart replaces this process with a fresh copy of itself (same PID, same arguments): the engine runs once per
// process, and the supervisor keeps tracking the same PID. Quick repeated failures give up instead of looping.
func restart(log *slog.Logger, cause error, ran time.Duration) int {
	quick := 0
	if ran < quickRun {
		quick, _ = strconv.Atoi(os.Getenv(restartEnv))
		quick++
	}
	if quick > maxQuickRestarts {
		log.Error("clickhouse keeps stopping, giving up", "err", cause.Error(), "quick_restarts", quick-1)
		return 1
	}
	log.Warn("clickhouse stopped on its own, restarting", "err", cause.Error(), "ran", ran.Round(time.Millisecond).String())
	if err := os.Setenv(restartEnv, strconv.Itoa(quick)); err != nil {
		log.Error("clickhouse restart", "err", err.Error())
		return 1
	}
	time.Sleep(time.Duration(quick) * 500 * time.Millisecond)
	exe, err := os.Executable()
	if err != nil {
		log.Error("clickhouse restart: find executable", "err", err.Error())
		return 1
	}
	err = syscall.Exec(exe, os.Args, os.Environ())
	log.Error("clickhouse restart: exec", "err", err.Error())
	return 1
}

func env(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func envInt(key string, def int) int {
	if v := os.Getenv(key); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
		fmt.Fprintf(os.Stderr, "exhub-clickhouse: ignoring %s=%q (not a number)\n", key, v)
	}
	return def
}
