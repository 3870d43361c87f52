// Command exhub-bff is the exhub backend-for-frontend: the REST API, the plugin host, the stream gateway and
// analytics (assembled by bff/internal/app).
//
//	exhub-bff [--config bff/exhub.yaml]   serve (the default)
//	exhub-bff openapi [--config ...]      print the OpenAPI 3.1 document (JSON) and exit; starts nothing
//	exhub-bff version                     print the version and exit
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/exhub/exhub/bff/internal/app"
	"github.com/exhub/exhub/bff/internal/config"
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
		doc, err := app.OpenAPI(cfg, version)
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
		return app.Serve(ctx, cfg, version, stderr)
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
