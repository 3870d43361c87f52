package sdktest

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// ServeInProcess serves any exchange implementation over an in-memory gRPC connection (bufconn) and returns a
// client speaking real gRPC to it: errors travel as statuses with their ErrorDetail, exactly as from a plugin
// process. stop closes the connection and the server and waits for them.
func ServeInProcess(impl exchangev1.ExchangeServer) (client exchangev1.ExchangeClient, stop func(), err error) {
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer(sdk.ServerOptions(nil)...) // panics recovered as in a served plugin
	exchangev1.RegisterExchangeServer(srv, impl)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // owned by stop: Serve returns when srv.Stop is called
		defer wg.Done()
		_ = srv.Serve(lis)
	}()
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		srv.Stop()
		wg.Wait()
		return nil, nil, fmt.Errorf("dial in-process exchange: %w", err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = conn.Close()
			srv.Stop()
			wg.Wait()
		})
	}
	return exchangev1.NewExchangeClient(conn), stop, nil
}

// Start runs a reference exchange with opts in-process for a test and returns it with a gRPC client. Both are
// closed when the test ends.
func Start(t testing.TB, opts Options) (*Server, exchangev1.ExchangeClient) {
	t.Helper()
	s := New(opts)
	client, stop, err := ServeInProcess(s)
	if err != nil {
		s.Close()
		t.Fatalf("serve reference exchange: %v", err)
	}
	t.Cleanup(func() {
		stop()
		s.Close()
	})
	return s, client
}
