package pluginhost

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"syscall"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// TestPanicInAPluginFailsOneCall: through a real plugin process, a panicking handler (unary or stream) fails that
// call with INTERNAL, its stack reaches the host's log, and the same process keeps serving.
func TestPanicInAPluginFailsOneCall(t *testing.T) {
	logs := &lockedBuffer{}
	h := startHost(t, nil, Options{Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	first := h.waitRunning()
	const secret = "SECRET-7c1e"
	ctx := t.Context()
	for i := 0; i < 3; i++ {
		err := h.sup.Call(ctx, "GetTickers", func(ctx context.Context, c exchangev1.ExchangeClient) error {
			_, err := c.GetTickers(ctx, &exchangev1.GetTickersRequest{Symbols: []string{secret}})
			return err
		})
		if st, _ := status.FromError(err); st.Code() != codes.Internal || sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_INTERNAL {
			t.Fatalf("GetTickers: %v, want INTERNAL with reason INTERNAL", err)
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "exploded") {
			t.Fatalf("the error leaks the request or the panic: %v", err)
		}
	}
	st, err := h.sup.StreamAccount(ctx, &exchangev1.AccountRef{ApiKey: "panic", ApiSecret: secret}, AccountStreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The stream's panic is recovered in the plugin; the host stream just keeps retrying (nothing delivered).
	eventually(t, "the stream reopened after its panics", func() (uint64, bool) { return st.Stats().Reopens, st.Stats().Reopens >= 2 })
	st.Close()
	if s := st.Stats(); s.Events != 0 || !strings.Contains(s.LastError, "internal error in the plugin") || strings.Contains(s.LastError, secret) {
		t.Fatalf("account stream of a panicking plugin: %+v", s)
	}

	err = h.sup.Call(ctx, "Health", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.Health(ctx, &exchangev1.HealthRequest{})
		if err == nil && !resp.GetOk() {
			err = fmt.Errorf("not ok: %s", resp.GetMessage())
		}
		return err
	})
	if err != nil {
		t.Fatalf("Health after panics: %v", err)
	}
	if s := h.sup.Status(); s.Pid != first.Pid || s.Restarts != 0 {
		t.Fatalf("the plugin was restarted: %+v (first pid %d)", s, first.Pid)
	}
	methods := map[string]bool{}
	for _, rec := range logs.records() {
		if rec["msg"] != "plugin handler panicked; the call failed with INTERNAL and the plugin keeps serving" {
			continue
		}
		if stack, _ := rec["stack"].(string); !strings.Contains(stack, "goroutine") || !strings.Contains(stack, "main.(*server)") {
			t.Fatalf("panic logged without the handler's stack: %v", rec)
		}
		methods[fmt.Sprint(rec["method"])] = true
	}
	for _, m := range []string{"/exchange.v1.Exchange/GetTickers", "/exchange.v1.Exchange/StreamAccount"} {
		if !methods[m] {
			t.Fatalf("no panic logged for %s; logged: %v\n%s", m, methods, logs.String())
		}
	}
}

// TestPluginEnvironmentIsAnAllowlist: host secrets never reach a plugin process; the base set, the allowed names
// and the explicit values do.
func TestPluginEnvironmentIsAnAllowlist(t *testing.T) {
	t.Setenv("EXHUB_STORE_DSN", "postgres://exhub:hunter2@127.0.0.1/exhub")
	t.Setenv("EXHUB_KEK", "c2VjcmV0LWtleS1lbmNyeXB0aW9uLWtleQ==")
	t.Setenv("TESTPLUGIN_PASSED", "yes")
	t.Setenv("TESTPLUGIN_NOT_PASSED", "no")
	h := startHostSpec(t, func(sp *Spec) {
		sp.EnvAllow = []string{"TESTPLUGIN_PASSED"}
		sp.Env = append(sp.Env, "TESTPLUGIN_EXPLICIT=1")
	}, Options{})
	st := h.waitRunning()
	var names []string
	for _, l := range h.logLines("env") {
		f := strings.Fields(l)
		if len(f) == 3 && f[1] == fmt.Sprint(st.Pid) {
			names = append(names, f[2])
		}
	}
	for _, want := range []string{"PATH", "TESTPLUGIN_LOG", "TESTPLUGIN_EXPLICIT", "TESTPLUGIN_PASSED", "PLUGIN_CLIENT_CERT", sdk.Handshake.MagicCookieKey} {
		if !slices.Contains(names, want) {
			t.Errorf("the plugin lacks %s; it has %v", want, names)
		}
	}
	for _, name := range names {
		if strings.HasPrefix(name, "EXHUB_") && name != sdk.Handshake.MagicCookieKey || name == "TESTPLUGIN_NOT_PASSED" {
			t.Errorf("the plugin sees %s; it has %v", name, names)
		}
	}
}

// TestPlaceOrderOnADyingPluginIsAnUnknownOutcome: a plugin killed while PlaceOrder runs leaves an unknown outcome
// (never a failure), and the host does not send the order again, to this process or to the restarted one.
func TestPlaceOrderOnADyingPluginIsAnUnknownOutcome(t *testing.T) {
	h := startHost(t, nil, Options{})
	first := h.waitRunning()
	errc := make(chan error, 1)
	go func() { // ends when the call returns, which the SIGKILL below causes
		errc <- h.sup.Call(t.Context(), "PlaceOrder", func(ctx context.Context, c exchangev1.ExchangeClient) error {
			_, err := c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{
				Account: &exchangev1.AccountRef{ApiKey: "k"}, Symbol: "BTCUSDT", Side: exchangev1.Side_SIDE_BUY,
				Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: "40000", Qty: "0.001", ClientOrderId: "cid-1",
			})
			return err
		})
	}()
	eventually(t, "PlaceOrder reached the plugin", func() (int, bool) { n := h.logCount("place"); return n, n == 1 })
	if err := syscall.Kill(first.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := <-errc
	if !sdk.IsUnknownOutcome(err) || sdk.OutcomeOf(err) != sdk.OutcomeUnknown {
		t.Fatalf("PlaceOrder on a killed plugin: %v (outcome %s), want an unknown outcome", err, sdk.OutcomeOf(err))
	}
	h.waitRestarted(first.Pid)
	// The restarted plugin answers other calls; PlaceOrder was sent once in all.
	if err := h.sup.Call(t.Context(), "Health", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		_, err := c.Health(ctx, &exchangev1.HealthRequest{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if lines := h.logLines("place"); len(lines) != 1 || !strings.HasSuffix(lines[0], " cid-1") {
		t.Fatalf("PlaceOrder reached the plugin %d times: %v", len(lines), lines)
	}
	// A call while no plugin runs never left the host: a failure, not an unknown outcome.
	if sdk.IsUnknownOutcome(fmt.Errorf("x: %w", ErrUnavailable)) {
		t.Fatal("ErrUnavailable classified as an unknown outcome")
	}
}
