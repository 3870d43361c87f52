// Command reference is the reference exchange served as an exhub plugin: the in-memory market of
// plugin-sdk/sdktest behind the exchange.v1 contract. The host starts it (it is not run by hand); Configure
// accepts seed, tick_interval and history_days.
package main

import (
	"github.com/exhub/exhub/plugin-sdk/sdk"
	"github.com/exhub/exhub/plugin-sdk/sdktest"
)

func main() {
	ex := sdktest.New(sdktest.Options{})
	defer ex.Close()
	sdk.Serve(ex)
}
