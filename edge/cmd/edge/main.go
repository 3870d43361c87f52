// Command exhub-edge is exhub's build of the Caddy web server: the standard
// modules plus the HTTP cache handler with an in-memory and a Redis/Valkey store. It serves the
// UI build, proxies /api to the BFF and /.ory to Kratos (see edge/Caddyfile).
//
// Before handing over to Caddy it derives a few environment variables the
// Caddyfile reads (see prepareEnv).
package main

import (
	"fmt"
	"os"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	// Standard Caddy modules (file server, reverse proxy, encoders, headers...).
	_ "github.com/caddyserver/caddy/v2/modules/standard"
	// HTTP cache handler (the `cache` directive), its bounded in-memory store
	// (otter) and its Valkey/Redis store.
	_ "github.com/caddyserver/cache-handler"
	_ "github.com/darkweak/storages/otter/caddy"
	_ "github.com/darkweak/storages/redis/caddy"
)

func main() {
	if err := prepareEnv(osEnv{}); err != nil {
		fmt.Fprintf(os.Stderr, "exhub-edge: %v\n", err)
		os.Exit(2)
	}
	caddycmd.Main()
}
