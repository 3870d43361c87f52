// Command pluginctl is the exchange integrator's tool: it launches any exhub exchange plugin binary the way the
// host does (go-plugin handshake, AutoMTLS, optional SHA-256 pin), then describes it, calls any exchange.v1 method
// with a JSON request, prints stream events as JSON lines, or runs the conformance kit against it.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

const usage = `pluginctl: describe, call, stream from and conformance-test an exhub exchange plugin.

Usage:
  pluginctl describe    <plugin> [flags]                     Describe the plugin (identity, capabilities, settings)
  pluginctl methods                                          List the exchange.v1 methods and their request types
  pluginctl call        <plugin> <Method> ['<json>'|-] [flags]  Call one method; the request is protojson ('-': stdin)
  pluginctl stream      <plugin> --sub SPEC... [flags]       Print market (or --account-key: account) events as JSON lines
  pluginctl conformance <plugin> [flags]                     Run the conformance kit; exit status 1 when a check fails
  pluginctl help [command]                                   Help for a command

Flags every command that launches a plugin takes:
  --set key=value   a setting passed to Configure (repeatable)
  --sha256 HEX      refuse to run the binary unless its SHA-256 matches
  --timeout D       bound for launching and for one call (default 30s)
  --verbose         copy the plugin's own log lines to stderr

Examples:
  pluginctl describe bin/plugins/reference
  pluginctl call bin/plugins/reference GetTickers '{"marketType":"MARKET_TYPE_SWAP"}'
  pluginctl call bin/plugins/reference GetCandles '{"marketType":"MARKET_TYPE_SPOT","symbol":"BTCUSDT","interval":"1h","limit":3}'
  pluginctl call bin/plugins/reference PlaceOrder '{"account":{"apiKey":"paper1"},"marketType":"MARKET_TYPE_SPOT",
      "symbol":"BTCUSDT","side":"SIDE_BUY","type":"ORDER_TYPE_MARKET","qty":"0.01"}'
  pluginctl stream bin/plugins/reference --sub book:SWAP:BTCUSDT --sub trades:SPOT:ETHUSDT --count 20
  pluginctl stream bin/plugins/reference --account-key paper1 --duration 30s
  pluginctl conformance bin/plugins/reference --account-key paper1 --set tick_interval=50ms
  pluginctl conformance bin/plugins/reference --json > report.json

Errors print the typed reason (insufficient_funds, precision, ...) and, when the exchange gave them, its own code
and message. Exit status: 0 success, 1 the call or a conformance check failed, 2 bad usage.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// usageError is bad command-line input (exit status 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd, rest := args[0], args[1:]
	var err error
	switch cmd {
	case "describe":
		err = cmdDescribe(ctx, rest, stdout, stderr)
	case "methods":
		err = cmdMethods(stdout)
	case "call":
		err = cmdCall(ctx, rest, stdin, stdout, stderr)
	case "stream":
		err = cmdStream(ctx, rest, stdout, stderr)
	case "conformance":
		err = cmdConformance(ctx, rest, stdout, stderr)
	case "help", "-h", "-help", "--help":
		if len(rest) > 0 {
			if h, ok := commandHelp[rest[0]]; ok {
				fmt.Fprint(stdout, h)
				return 0
			}
		}
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "pluginctl: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "pluginctl %s: %s\n(run `pluginctl help %s`)\n", cmd, ue.msg, cmd)
		return 2
	case errors.Is(err, errChecksFailed):
		return 1
	default:
		printError(stderr, err)
		return 1
	}
}

var errChecksFailed = errors.New("conformance checks failed")

// printError shows a plugin error with its typed reason and the exchange's own code.
func printError(w io.Writer, err error) {
	var le launchError
	if errors.As(err, &le) {
		fmt.Fprintf(w, "error: %v\n", le.err)
		return
	}
	d := sdk.DetailOf(err)
	fmt.Fprintf(w, "error: %s\n  reason: %s\n", sdk.MessageOf(err), sdk.ReasonName(d.GetReason()))
	if d.GetField() != "" {
		fmt.Fprintf(w, "  field: %s\n", d.GetField())
	}
	if d.GetExchangeCode() != "" || d.GetExchangeMessage() != "" {
		fmt.Fprintf(w, "  exchange code: %s\n  exchange message: %s\n", d.GetExchangeCode(), d.GetExchangeMessage())
	}
	if d.GetRetryAfterMs() > 0 {
		fmt.Fprintf(w, "  retry after: %s\n", time.Duration(d.GetRetryAfterMs())*time.Millisecond)
	}
}

// isTTY reports whether w is a terminal, for pretty output.
func isTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// printMessage writes one message as JSON: indented on a terminal, one line otherwise.
func printMessage(w io.Writer, m proto.Message, pretty bool) error {
	opts := protojson.MarshalOptions{}
	if pretty {
		opts.Multiline, opts.Indent = true, "  "
	}
	b, err := opts.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode %s: %w", m.ProtoReflect().Descriptor().FullName(), err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// launchError is a failure to start the plugin (printed without a reason block).
type launchError struct{ err error }

func (e launchError) Error() string { return e.err.Error() }
func (e launchError) Unwrap() error { return e.err }

// launched is a running plugin configured with the --set settings.
type launched struct {
	p       *sdk.Plugin
	timeout time.Duration
}

func (l *launched) client() exchangev1.ExchangeClient { return l.p.Exchange }

func launch(ctx context.Context, c *common, stderr io.Writer) (*launched, error) {
	var logger *slog.Logger
	if c.verbose {
		logger = slog.New(slog.NewJSONHandler(stderr, nil))
	}
	lctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	p, err := sdk.Launch(lctx, sdk.LaunchConfig{Path: c.plugin, SHA256: c.sha256, StartTimeout: c.timeout, Logger: logger})
	if err != nil {
		return nil, launchError{err}
	}
	l := &launched{p: p, timeout: c.timeout}
	cctx, ccancel := context.WithTimeout(ctx, c.timeout)
	defer ccancel()
	if _, err := p.Exchange.Configure(cctx, &exchangev1.ConfigureRequest{Settings: c.settings}); err != nil {
		p.Kill()
		return nil, fmt.Errorf("configure: %w", err)
	}
	return l, nil
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func joinComma(ss []string) string { return strings.Join(ss, ", ") }
