package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/exhub/exhub/plugin-sdk/conformance"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func needPlugin(pos []string, n int, what string) error {
	if len(pos) < n {
		return usagef("missing %s", what)
	}
	return nil
}

func cmdDescribe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c common
	fs := newFlagSet("describe", &c)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := needPlugin(pos, 1, "plugin binary path"); err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("unexpected arguments %q", pos[1:])
	}
	c.plugin = pos[0]
	l, err := launch(ctx, &c, stderr)
	if err != nil {
		return err
	}
	defer l.p.Kill()
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	d, err := l.client().Describe(cctx, &exchangev1.DescribeRequest{})
	if err != nil {
		return err
	}
	return printMessage(stdout, d, isTTY(stdout))
}

// service is the exchange.v1 service descriptor: pluginctl finds methods by reflection on it.
func service() protoreflect.ServiceDescriptor {
	return exchangev1.File_exchange_v1_exchange_proto.Services().ByName("Exchange")
}

func methodNames() []string {
	ms := service().Methods()
	out := make([]string, ms.Len())
	for i := range ms.Len() {
		out[i] = string(ms.Get(i).Name())
	}
	return out
}

// findMethod looks a method up by name, forgiving case.
func findMethod(name string) (protoreflect.MethodDescriptor, error) {
	ms := service().Methods()
	for i := range ms.Len() {
		if strings.EqualFold(string(ms.Get(i).Name()), name) {
			return ms.Get(i), nil
		}
	}
	return nil, usagef("unknown method %q; methods are: %s", name, joinComma(methodNames()))
}

func cmdMethods(stdout io.Writer) error {
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "METHOD\tREQUEST\tRESPONSE\tKIND")
	ms := service().Methods()
	for i := range ms.Len() {
		m := ms.Get(i)
		kind := "unary (pluginctl call)"
		switch {
		case m.IsStreamingClient() && m.IsStreamingServer():
			kind = "bidirectional stream (pluginctl stream)"
		case m.IsStreamingServer():
			kind = "server stream (pluginctl stream --account-key)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Name(), m.Input().Name(), m.Output().Name(), kind)
	}
	return tw.Flush()
}

func cmdCall(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var c common
	fs := newFlagSet("call", &c)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := needPlugin(pos, 2, "plugin binary path and method name"); err != nil {
		return err
	}
	if len(pos) > 3 {
		return usagef("unexpected arguments %q (quote the JSON request)", pos[3:])
	}
	c.plugin = pos[0]
	md, err := findMethod(pos[1])
	if err != nil {
		return err
	}
	if md.IsStreamingClient() || md.IsStreamingServer() {
		return usagef("%s streams: use `pluginctl stream`", md.Name())
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName())
	if err != nil {
		return fmt.Errorf("request type %s: %w", md.Input().FullName(), err)
	}
	req := mt.New().Interface()
	body := "{}"
	if len(pos) == 3 {
		body = pos[2]
		if body == "-" {
			b, err := io.ReadAll(stdin)
			if err != nil {
				return fmt.Errorf("read request from stdin: %w", err)
			}
			body = string(b)
		}
	}
	if strings.TrimSpace(body) == "" {
		body = "{}"
	}
	if err := protojson.Unmarshal([]byte(body), req); err != nil {
		return usagef("request is not a valid %s: %v", md.Input().Name(), err)
	}
	l, err := launch(ctx, &c, stderr)
	if err != nil {
		return err
	}
	defer l.p.Kill()
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	resp, err := invoke(cctx, l.client(), string(md.Name()), req)
	if err != nil {
		return err
	}
	return printMessage(stdout, resp, isTTY(stdout))
}

// invoke calls a unary method of the typed client by name.
func invoke(ctx context.Context, client exchangev1.ExchangeClient, method string, req proto.Message) (proto.Message, error) {
	m := reflect.ValueOf(client).MethodByName(method)
	if !m.IsValid() {
		return nil, fmt.Errorf("the client has no method %s", method)
	}
	out := m.Call([]reflect.Value{reflect.ValueOf(ctx), reflect.ValueOf(req)})
	if e := out[1].Interface(); e != nil {
		return nil, e.(error)
	}
	return out[0].Interface().(proto.Message), nil
}

var channels = map[string]exchangev1.Channel{
	"book": exchangev1.Channel_CHANNEL_BOOK, "trades": exchangev1.Channel_CHANNEL_TRADES,
	"ticker": exchangev1.Channel_CHANNEL_TICKER, "candles": exchangev1.Channel_CHANNEL_CANDLES,
	"mark": exchangev1.Channel_CHANNEL_MARK_PRICE, "mark_price": exchangev1.Channel_CHANNEL_MARK_PRICE,
}

func parseMarket(s string) (exchangev1.MarketType, error) {
	switch strings.ToUpper(s) {
	case "SPOT":
		return exchangev1.MarketType_MARKET_TYPE_SPOT, nil
	case "SWAP":
		return exchangev1.MarketType_MARKET_TYPE_SWAP, nil
	}
	return 0, usagef("market type %q: want SPOT or SWAP", s)
}

// parseSub reads channel:MARKET:SYMBOL[:extra].
func parseSub(spec string) (*exchangev1.Subscription, error) {
	parts := strings.Split(spec, ":")
	if len(parts) < 3 || len(parts) > 4 {
		return nil, usagef("--sub %q: want channel:MARKET:SYMBOL[:interval|depth]", spec)
	}
	ch, ok := channels[strings.ToLower(parts[0])]
	if !ok {
		return nil, usagef("--sub %q: channel must be book, trades, ticker, candles or mark", spec)
	}
	mt, err := parseMarket(parts[1])
	if err != nil {
		return nil, err
	}
	sub := &exchangev1.Subscription{Channel: ch, MarketType: mt, Symbol: parts[2]}
	extra := ""
	if len(parts) == 4 {
		extra = parts[3]
	}
	switch ch {
	case exchangev1.Channel_CHANNEL_CANDLES:
		sub.Interval = extra
		if sub.Interval == "" {
			sub.Interval = "1m"
		}
	case exchangev1.Channel_CHANNEL_BOOK:
		if extra != "" {
			d, err := strconv.Atoi(extra)
			if err != nil || d <= 0 {
				return nil, usagef("--sub %q: book depth must be a positive number", spec)
			}
			sub.Depth = int32(d)
		}
	default:
		if extra != "" {
			return nil, usagef("--sub %q: %s takes no extra part", spec, parts[0])
		}
	}
	return sub, nil
}

func cmdStream(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c common
	fs := newFlagSet("stream", &c)
	var subs listFlag
	fs.Var(&subs, "sub", "subscription channel:MARKET:SYMBOL[:extra] (repeatable)")
	count := fs.Int("count", 0, "stop after this many events (0: no limit)")
	duration := fs.Duration("duration", 0, "stop after this long (0: until Ctrl-C)")
	accountKey := fs.String("account-key", "", "stream this account's events (StreamAccount) instead of market data")
	accountSecret := fs.String("account-secret", "", "api_secret of the account")
	accountPass := fs.String("account-passphrase", "", "passphrase of the account, for exchanges that have one")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := needPlugin(pos, 1, "plugin binary path"); err != nil {
		return err
	}
	c.plugin = pos[0]
	if (len(subs) == 0) == (*accountKey == "") {
		return usagef("give --sub specs or --account-key (one of them)")
	}
	var parsed []*exchangev1.Subscription
	for _, s := range subs {
		sub, err := parseSub(s)
		if err != nil {
			return err
		}
		parsed = append(parsed, sub)
	}
	l, err := launch(ctx, &c, stderr)
	if err != nil {
		return err
	}
	defer l.p.Kill()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if *duration > 0 {
		var dcancel context.CancelFunc
		sctx, dcancel = context.WithTimeout(sctx, *duration)
		defer dcancel()
	}
	var recv func() (proto.Message, error)
	if *accountKey != "" {
		st, err := l.client().StreamAccount(sctx, &exchangev1.StreamAccountRequest{Account: &exchangev1.AccountRef{
			AccountId: *accountKey, ApiKey: *accountKey, ApiSecret: *accountSecret, Passphrase: *accountPass}})
		if err != nil {
			return err
		}
		recv = func() (proto.Message, error) { return st.Recv() }
	} else {
		st, err := l.client().StreamMarket(sctx)
		if err != nil {
			return err
		}
		if err := st.Send(&exchangev1.StreamMarketRequest{Op: exchangev1.StreamMarketRequest_OP_SUBSCRIBE, Subscriptions: parsed, RequestId: "pluginctl"}); err != nil {
			return fmt.Errorf("subscribe: %w", err)
		}
		recv = func() (proto.Message, error) { return st.Recv() }
	}
	for n := 0; *count == 0 || n < *count; n++ {
		ev, err := recv()
		if err != nil {
			// --duration elapsed or Ctrl-C. gRPC's own deadline timer may fire a moment before the context's.
			if ctx.Err() != nil || sctx.Err() != nil || (*duration > 0 && status.Code(err) == codes.DeadlineExceeded) {
				return nil
			}
			return err
		}
		if err := printMessage(stdout, ev, false); err != nil {
			return err
		}
	}
	return nil
}

func cmdConformance(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c common
	fs := newFlagSet("conformance", &c)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	accountKey := fs.String("account-key", "", "account for trading and wallet checks (api_key; a paper account in demo mode)")
	accountSecret := fs.String("account-secret", "", "api_secret of the account")
	accountPass := fs.String("account-passphrase", "", "passphrase of the account, for exchanges that have one")
	streamWait := fs.Duration("stream-wait", 10*time.Second, "how long stream checks wait for events")
	expectFile := fs.String("expect", "", "file listing the checks the plugin must pass (one per line, # comments)")
	faultURL := fs.String("fault-url", "", "base URL of the emulator's fault-arming endpoint (enables unknown-outcome)")
	fundingWait := fs.Duration("funding-wait", 30*time.Second, "how long funding-payments waits for a funding settlement (n/a when the next is further away)")
	var symbols, only listFlag
	fs.Var(&symbols, "symbol", "instrument to test, [MARKET:]SYMBOL (repeatable)")
	fs.Var(&only, "check", "run only this check (repeatable; describe and instruments always run)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := needPlugin(pos, 1, "plugin binary path"); err != nil {
		return err
	}
	c.plugin = pos[0]
	opts := conformance.Options{StreamWait: *streamWait, FaultURL: *faultURL, Only: only, FundingWait: *fundingWait}
	if err := conformance.ValidateNames(only); err != nil {
		return usagef("--check: %v", err)
	}
	if *expectFile != "" {
		f, err := os.Open(*expectFile)
		if err != nil {
			return usagef("--expect: %v", err)
		}
		names, err := conformance.ParseExpect(f)
		f.Close()
		if err != nil {
			return usagef("--expect %s: %v", *expectFile, err)
		}
		opts.MustPass = names
	}
	if *accountKey != "" {
		opts.Account = &exchangev1.AccountRef{AccountId: *accountKey, ApiKey: *accountKey, ApiSecret: *accountSecret, Passphrase: *accountPass}
	}
	for _, s := range symbols {
		sym := conformance.Symbol{Symbol: s}
		if m, rest, ok := strings.Cut(s, ":"); ok {
			mt, err := parseMarket(m)
			if err != nil {
				return err
			}
			sym = conformance.Symbol{MarketType: mt, Symbol: rest}
		}
		opts.Symbols = append(opts.Symbols, sym)
	}
	l, err := launch(ctx, &c, stderr)
	if err != nil {
		return err
	}
	defer l.p.Kill()
	rep := conformance.Run(ctx, l.client(), opts)
	if *asJSON {
		b, err := rep.JSON()
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", b)
	} else if err := rep.WriteTable(stdout); err != nil {
		return err
	}
	if !rep.OK() {
		return errChecksFailed
	}
	return nil
}
