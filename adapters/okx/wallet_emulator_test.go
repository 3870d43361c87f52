package okx_test

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// ListAssets over the emulator: every venue asset on its simulated chain, the step from the venue's precision.
func TestEmulatorListAssets(t *testing.T) {
	w := shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := w.c.ListAssets(ctx, &exchangev1.ListAssetsRequest{Account: w.acct})
	if err != nil {
		t.Fatal(err)
	}
	assets := w.v.Assets()
	if len(r.Assets) != len(assets) {
		t.Fatalf("%d assets, the venue has %d", len(r.Assets), len(assets))
	}
	for _, a := range r.Assets {
		want := decimal.New(1, -assets[a.Asset].Scale).String()
		if len(a.Networks) != 1 || a.Networks[0].Network != "SIM" || a.Networks[0].WithdrawStep != want {
			t.Errorf("%s: %v, want withdraw_step %s", a.Asset, a.Networks, want)
		}
	}
}
