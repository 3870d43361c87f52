// Command brokenplugin is the reference exchange with its candles in the wrong order: pluginctl's tests use it to
// check that a failing conformance run exits with status 1.
package main

import (
	"context"
	"slices"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
	"github.com/exhub/exhub/plugin-sdk/sdktest"
)

type broken struct{ *sdktest.Server }

func (b broken) GetCandles(ctx context.Context, req *exchangev1.GetCandlesRequest) (*exchangev1.GetCandlesResponse, error) {
	r, err := b.Server.GetCandles(ctx, req)
	if err == nil {
		slices.Reverse(r.Candles)
	}
	return r, err
}

func main() {
	ex := sdktest.New(sdktest.Options{})
	defer ex.Close()
	sdk.Serve(broken{ex})
}
