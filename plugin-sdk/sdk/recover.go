package sdk

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// ServerOptions are the gRPC server options Serve installs on every plugin: unary and stream interceptors that
// recover a panicking handler. The panic (its value and stack) is logged through log; the caller gets an INTERNAL
// status with an ErrorDetail of reason INTERNAL and a fixed message that names only the method, never the panic
// value or the request (either could carry an account's secrets). The plugin process keeps serving every other
// call. Hosts that serve an implementation in-process (tests, sdktest.ServeInProcess) can pass the same options.
//
// A panic in a goroutine the handler started itself is not recovered here: it still ends the process (and the host
// restarts it). Handlers that start goroutines recover in them.
func ServerOptions(log hclog.Logger) []grpc.ServerOption {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(recoverUnary(log)),
		grpc.ChainStreamInterceptor(recoverStream(log)),
	}
}

func recoverUnary(log hclog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if r := recover(); r != nil {
				resp, err = nil, panicError(log, info.FullMethod, r)
			}
		}()
		return handler(ctx, req)
	}
}

func recoverStream(log hclog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = panicError(log, info.FullMethod, r)
			}
		}()
		return handler(srv, ss)
	}
}

// panicError logs a recovered panic with its stack and returns the error the caller sees.
func panicError(log hclog.Logger, method string, r any) error {
	log.Error("plugin handler panicked; the call failed with INTERNAL and the plugin keeps serving",
		"method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	return Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "internal error in the plugin while serving %s (see the plugin log)", method)
}
