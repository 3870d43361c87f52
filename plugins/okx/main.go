// Command okx is the OKX exchange plugin: the adapter of adapters/okx (OKX v5 spot and USDT swaps) served behind
// the exchange.v1 contract. The host starts it; Configure points it at OKX or at the local emulator.
package main

import (
	"log/slog"
	"os"

	"github.com/exhub/exhub/adapters/okx"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	srv := okx.New(okx.Options{Logger: log})
	defer srv.Close()
	sdk.Serve(srv)
}
