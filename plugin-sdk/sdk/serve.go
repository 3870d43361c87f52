package sdk

import (
	"os"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// ServeOption tunes Serve.
type ServeOption func(*plugin.ServeConfig)

// WithLogger replaces the default JSON logger on stderr (the host forwards those lines into its own log).
func WithLogger(l hclog.Logger) ServeOption {
	return func(c *plugin.ServeConfig) { c.Logger = l }
}

// Serve runs an exchange implementation as a plugin. Call it from the plugin's main; it returns when the host
// closes the plugin. Started by hand (not by a host), it prints a hint and exits with status 1.
//
// Every call is served behind ServerOptions: a handler that panics fails that one call with INTERNAL (the panic and
// its stack go to the plugin log) and the plugin keeps serving.
func Serve(impl exchangev1.ExchangeServer, opts ...ServeOption) {
	cfg := &plugin.ServeConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: VersionedPlugins(impl),
		Logger: hclog.New(&hclog.LoggerOptions{
			Name:       "plugin",
			Output:     os.Stderr,
			JSONFormat: true,
			Level:      hclog.Info,
		}),
	}
	for _, o := range opts {
		o(cfg)
	}
	log := cfg.Logger
	cfg.GRPCServer = func(base []grpc.ServerOption) *grpc.Server {
		return grpc.NewServer(append(base, ServerOptions(log)...)...)
	}
	plugin.Serve(cfg)
}
