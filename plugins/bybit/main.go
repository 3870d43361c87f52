// Command bybit is the Bybit exchange plugin: the adapter of adapters/bybit (Bybit v5 spot and USDT linear
// perpetuals; market data for now) served behind the exchange.v1 contract. The host starts it; Configure points
// it at Bybit or at the local emulator.
package main

import (
	"log/slog"
	"os"

	"github.com/exhub/exhub/adapters/bybit"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	srv := bybit.New(bybit.Options{Logger: log})
	defer srv.Close()
	sdk.Serve(srv)
}
