// Package sdk is what an exchange plugin and the exhub host share: the go-plugin handshake, Serve for plugin mains,
// Launch for the host, and the typed error helpers of the exchange.v1 contract.
package sdk

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// ProtocolVersion is the newest exchange protocol this SDK speaks. Plugins negotiate it through go-plugin's
// VersionedPlugins, so a v2 host can keep running v1 plugins.
const ProtocolVersion = 1

// PluginName is the key of the exchange service in every plugin set.
const PluginName = "exchange"

// Handshake is not a security measure: it stops a user from running a plugin binary by hand and makes sure host and
// plugin are both exhub.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "EXHUB_EXCHANGE_PLUGIN",
	MagicCookieValue: "5d1c2a8e-exhub-exchange",
}

// GRPCPlugin adapts an exchange.v1 server to go-plugin. Host side it hands out an exchangev1.ExchangeClient.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl exchangev1.ExchangeServer
}

var _ plugin.GRPCPlugin = (*GRPCPlugin)(nil)

// GRPCServer registers the implementation on the plugin's gRPC server.
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	exchangev1.RegisterExchangeServer(s, p.Impl)
	return nil
}

// GRPCClient returns the typed client the host uses.
func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return exchangev1.NewExchangeClient(c), nil
}

// VersionedPlugins is the plugin set per protocol version. Only version 1 exists today.
func VersionedPlugins(impl exchangev1.ExchangeServer) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		1: {PluginName: &GRPCPlugin{Impl: impl}},
	}
}
