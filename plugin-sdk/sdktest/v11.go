package sdktest

import (
	"context"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// CheckCredentials is not implemented by the reference exchange yet.
func (s *Server) CheckCredentials(context.Context, *exchangev1.CheckCredentialsRequest) (*exchangev1.CheckCredentialsResponse, error) {
	return nil, sdk.NotSupported("CheckCredentials")
}

// BatchPlaceOrders is not implemented by the reference exchange yet.
func (s *Server) BatchPlaceOrders(context.Context, *exchangev1.BatchPlaceOrdersRequest) (*exchangev1.BatchPlaceOrdersResponse, error) {
	return nil, sdk.NotSupported("BatchPlaceOrders")
}

// BatchCancelOrders is not implemented by the reference exchange yet.
func (s *Server) BatchCancelOrders(context.Context, *exchangev1.BatchCancelOrdersRequest) (*exchangev1.BatchCancelOrdersResponse, error) {
	return nil, sdk.NotSupported("BatchCancelOrders")
}

// CancelAllAfter is not implemented by the reference exchange yet.
func (s *Server) CancelAllAfter(context.Context, *exchangev1.CancelAllAfterRequest) (*exchangev1.CancelAllAfterResponse, error) {
	return nil, sdk.NotSupported("CancelAllAfter")
}
