// Command exhub-stack starts the whole exhub stack on this machine, in demo mode by default: ClickHouse, Valkey,
// Mailpit (the demo mail and SMS inbox), Kratos, the BFF with its plugins and the Caddy edge, each on 127.0.0.1, in order, each waited for until ready.
// Every child's output is prefixed with its name. Ctrl-C (or SIGTERM) stops everything in reverse order. When a
// child dies on its own the whole stack stops with a non-zero status: a half-running stack is worse than none.
//
// It does not build anything: `make run` builds what is missing first, then starts this.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

func main() {
	os.Exit(run())
}

func run() int {
	var (
		root      = flag.String("root", ".", "repository root (binaries in bin/, data in .data/)")
		readyFile = flag.String("ready-file", "", "write this file once every service is ready (for scripts)")
		noVK      = flag.Bool("no-valkey", false, "do not start valkey-server; the BFF uses its in-process fallback")
	)
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: exhub-stack [flags]\n\nStarts ClickHouse, Valkey, Mailpit, Kratos, the BFF and the edge on 127.0.0.1; Ctrl-C stops them.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()

	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	abs, err := filepath.Abs(*root)
	if err != nil {
		log.Error("bad --root", "err", err)
		return 2
	}
	cfg := defaultConfig(abs)
	cfg.NoValkey = *noVK

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	s := &Stack{cfg: cfg, log: log, out: os.Stdout}
	if err := s.Start(ctx); err != nil {
		s.Stop()
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(os.Stderr, "exhub: start interrupted")
			return 130
		}
		fmt.Fprintf(os.Stderr, "exhub: %v\n", err)
		return 1
	}
	fmt.Fprintf(s.out, "\n  exhub is up (demo mode): %s\n  Demo inbox (sign-up and recovery codes sent by e-mail and SMS): %s\n  %s\n  Ctrl-C stops it.\n\n",
		cfg.PublicURL(), cfg.InboxURL(), cfg.analystHint())
	if *readyFile != "" {
		if err := writeAtomic(*readyFile, []byte(cfg.PublicURL()+"\n")); err != nil {
			log.Warn("cannot write ready file", "err", err)
		}
	}
	code := 0
	select {
	case <-ctx.Done():
		fmt.Fprintln(os.Stderr, "exhub: stopping")
	case d := <-s.Died():
		fmt.Fprintf(os.Stderr, "exhub: %s exited unexpectedly (%v); stopping the stack\n", d.name, d.err)
		code = 1
	}
	start := time.Now()
	s.Stop()
	fmt.Fprintf(os.Stderr, "exhub: stopped in %s\n", time.Since(start).Round(time.Millisecond))
	if *readyFile != "" {
		_ = os.Remove(*readyFile)
	}
	return code
}

// writeAtomic writes a file that appears whole or not at all: a script polling for the ready file reads the URL in
// it the moment the file exists, never an empty file caught between create and write.
func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}
