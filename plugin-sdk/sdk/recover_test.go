package sdk

import (
	"bytes"
	"context"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// panicky panics in GetTickers and StreamAccount and answers Health normally.
type panicky struct {
	exchangev1.UnimplementedExchangeServer
}

func (panicky) Health(context.Context, *exchangev1.HealthRequest) (*exchangev1.HealthResponse, error) {
	return &exchangev1.HealthResponse{Ok: true}, nil
}

func (panicky) GetTickers(_ context.Context, req *exchangev1.GetTickersRequest) (*exchangev1.GetTickersResponse, error) {
	panic("boom for " + strings.Join(req.GetSymbols(), ","))
}

func (panicky) StreamAccount(req *exchangev1.StreamAccountRequest, _ exchangev1.Exchange_StreamAccountServer) error {
	panic("stream boom for " + req.GetAccount().GetApiSecret())
}

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func serveWithRecovery(t *testing.T, impl exchangev1.ExchangeServer, log hclog.Logger) exchangev1.ExchangeClient {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer(ServerOptions(log)...)
	exchangev1.RegisterExchangeServer(srv, impl)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // owned by the test cleanup: Serve returns on Stop
		defer wg.Done()
		_ = srv.Serve(lis)
	}()
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		srv.Stop()
		wg.Wait()
	})
	return exchangev1.NewExchangeClient(conn)
}

// checkPanicStatus asserts err is the INTERNAL status a recovered panic becomes, without the request's contents.
func checkPanicStatus(t *testing.T, err error, secret string) {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.Internal {
		t.Fatalf("want an INTERNAL status, got %v", err)
	}
	if r := DetailOf(err).GetReason(); r != exchangev1.ErrorReason_ERROR_REASON_INTERNAL {
		t.Fatalf("reason %v, want INTERNAL", r)
	}
	if strings.Contains(st.Message(), secret) || strings.Contains(st.Message(), "boom") {
		t.Fatalf("the status message leaks the panic or the request: %q", st.Message())
	}
	if IsUnknownOutcome(err) {
		t.Fatal("a recovered panic is a typed failure, not an unknown outcome")
	}
}

func TestPanicsBecomeInternalAndTheServerKeepsServing(t *testing.T) {
	var logs lockedBuffer
	log := hclog.New(&hclog.LoggerOptions{Output: &logs, JSONFormat: true, Level: hclog.Info})
	c := serveWithRecovery(t, panicky{}, log)
	ctx := t.Context()
	const secret = "SECRET-SYMBOL-7f3a"
	for i := 0; i < 3; i++ {
		_, err := c.GetTickers(ctx, &exchangev1.GetTickersRequest{Symbols: []string{secret}})
		checkPanicStatus(t, err, secret)
		if h, err := c.Health(ctx, &exchangev1.HealthRequest{}); err != nil || !h.GetOk() {
			t.Fatalf("Health after a panic: %v, %v", h, err)
		}
	}
	st, err := c.StreamAccount(ctx, &exchangev1.StreamAccountRequest{Account: &exchangev1.AccountRef{ApiKey: "k", ApiSecret: secret}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Recv()
	checkPanicStatus(t, err, secret)
	if h, err := c.Health(ctx, &exchangev1.HealthRequest{}); err != nil || !h.GetOk() {
		t.Fatalf("Health after a stream panic: %v, %v", h, err)
	}
	out := logs.String()
	for _, want := range []string{"plugin handler panicked", "/exchange.v1.Exchange/GetTickers",
		"/exchange.v1.Exchange/StreamAccount", "recover_test.go", "goroutine"} {
		if !strings.Contains(out, want) {
			t.Errorf("the plugin log lacks %q:\n%s", want, out)
		}
	}
}
