package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// common holds the flags every launching command takes.
type common struct {
	plugin   string
	settings map[string]string
	sha256   string
	timeout  time.Duration
	verbose  bool
}

type settingsFlag map[string]string

func (s settingsFlag) String() string { return "" }
func (s settingsFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("want key=value, got %q", v)
	}
	s[k] = val
	return nil
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func newFlagSet(name string, c *common) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.settings = map[string]string{}
	fs.Var(settingsFlag(c.settings), "set", "setting passed to Configure, key=value (repeatable)")
	fs.StringVar(&c.sha256, "sha256", "", "expected SHA-256 of the plugin binary (hex)")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Second, "bound for launching and for one call")
	fs.BoolVar(&c.verbose, "verbose", false, "copy the plugin's log lines to stderr")
	return fs
}

// parse accepts flags before, between and after the positional arguments.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, usagef("%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

var commandHelp = map[string]string{
	"describe": `pluginctl describe <plugin> [--set key=value]... [--sha256 HEX] [--timeout D] [--verbose]

Launches the plugin, configures it, and prints its DescribeResponse as JSON: exchange key, slug, name, version,
status, logo, capabilities (market types, order types, intervals, analytics, page limits, streams) and the
settings Configure accepts.

Example:
  pluginctl describe bin/plugins/reference
`,
	"methods": `pluginctl methods

Lists every exchange.v1 method with its request and response message, and whether it streams. Method names are
what pluginctl call takes.
`,
	"call": `pluginctl call <plugin> <Method> ['<json request>' | -] [--set key=value]... [--sha256 HEX] [--timeout D]

Calls one unary exchange.v1 method. The request is protojson: field names in lowerCamelCase (or as in the
.proto), enums by name, decimals as strings. Omit it for an empty request; '-' reads it from stdin. The response
is printed as JSON. On failure the typed reason, the field and the exchange's own code are printed and the exit
status is 1. Streaming methods go through pluginctl stream.

Examples:
  pluginctl call bin/plugins/reference ListInstruments '{"marketType":"MARKET_TYPE_SWAP"}'
  pluginctl call bin/plugins/reference GetOrderBook '{"marketType":"MARKET_TYPE_SWAP","symbol":"BTCUSDT","depth":5}'
  pluginctl call bin/plugins/reference GetBalances '{"account":{"apiKey":"paper1"}}'
  echo '{"symbol":"BTCUSDT"}' | pluginctl call bin/plugins/reference GetFundingRate -
`,
	"stream": `pluginctl stream <plugin> --sub SPEC [--sub SPEC]... [--count N] [--duration D] [flags]
pluginctl stream <plugin> --account-key KEY [--account-secret S] [--account-passphrase P] [--count N] [--duration D] [flags]

Opens StreamMarket with the given subscriptions (or StreamAccount for an account) and prints every event as one
JSON line until --count events, --duration, or Ctrl-C.

SPEC is channel:MARKET:SYMBOL[:extra] with channel one of book, trades, ticker, candles, mark; MARKET is SPOT or
SWAP; extra is the interval for candles (default 1m) and the depth for book.

Examples:
  pluginctl stream bin/plugins/reference --sub book:SWAP:BTCUSDT:10 --count 5
  pluginctl stream bin/plugins/reference --sub trades:SPOT:ETHUSDT --sub candles:SPOT:ETHUSDT:1m --duration 10s
  pluginctl stream bin/plugins/reference --account-key paper1
`,
	"conformance": `pluginctl conformance <plugin> [--account-key KEY [--account-secret S] [--account-passphrase P]]
                      [--expect FILE] [--fault-url URL] [--check NAME]... [--symbol [MARKET:]SYMBOL]... [--json]
                      [--stream-wait D] [--funding-wait D] [--set key=value]... [--sha256 HEX] [--timeout D]

Runs the conformance kit: Describe, per-market capabilities, instruments, tickers, order books, candles, paging
and ranges, trades, derivatives series, book, trade, ticker, candle and mark price streams; with --account-key
also CheckCredentials, trading round trips (place, get, amend, cancel, idempotent client order ids, cancel-all),
typed error reasons, the account stream, positions and leverage, algo orders, fills paging and wallet checks,
for what the plugin claims. Trading checks place small limit buys 10% below the bid and cancel them, and a few
minimum-size market orders that they trade back.

--expect FILE names the checks the plugin must pass (plugins/<slug>/conformance.expect: one check per line, #
starts a comment). A listed check that fails or is not applicable fails the run; a name that is not a check is
a usage error. --fault-url points the unknown-outcome check at an emulator's fault-arming endpoint (never a real
exchange). --check runs only the named checks. funding-payments holds a minimum-size long until the next funding
settlement and reads the payment back; it applies only when that settlement is within --funding-wait (default 30s):
run it against an emulator with a short funding interval (exhub-emulators --funding-interval 5s, the reference's
funding_interval setting).

Prints a table (or the report as JSON with --json); the exit status is 1 when a check fails.

Examples:
  pluginctl conformance bin/plugins/reference --account-key paper1 --expect plugins/reference/conformance.expect \
      --set fault_listen=127.0.0.1:7300 --fault-url http://127.0.0.1:7300 --set funding_interval=5s
  pluginctl conformance bin/plugins/okx --symbol SWAP:BTC-USDT-SWAP --symbol SPOT:BTC-USDT --set base_url=http://127.0.0.1:9101
  pluginctl conformance bin/plugins/reference --account-key paper1 --check account-stream
`,
}
