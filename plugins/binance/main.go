// Command binance serves the Binance adapter (spot + USDT-M perpetuals) as an exhub plugin. The host starts it;
// Configure points it at Binance's real endpoints (the default) or at the local emulator in demo mode.
package main

import (
	"log/slog"
	"os"

	"github.com/exhub/exhub/adapters/binance"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	srv := binance.New(binance.Options{Logger: log})
	defer srv.Close()
	sdk.Serve(srv)
}
