package market

import (
	"context"
	"slices"
	"testing"

	"github.com/exhub/exhub/adapters/binance"
	"github.com/exhub/exhub/adapters/okx"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// The exchanges' TP/SL-on-entry rules reach the order form as the plugins describe them (and as the trading
// service checks them): Binance spot an OTOCO order list, Binance futures armed by exhub, OKX attached on both.
func TestTpSlOnEntryRulesFromThePlugins(t *testing.T) {
	describe := func(d interface {
		Describe(context.Context, *exchangev1.DescribeRequest) (*exchangev1.DescribeResponse, error)
	}) TradingCapabilities {
		t.Helper()
		r, err := d.Describe(t.Context(), &exchangev1.DescribeRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return capabilities(r.GetCapabilities()).Trading
	}
	rule := func(tc TradingCapabilities, mt string) TpSlOnEntryRules {
		t.Helper()
		for _, r := range tc.TpSlOnEntryRules {
			if r.MarketType == mt {
				return r
			}
		}
		t.Fatalf("no TP/SL-on-entry rules for %s in %+v", mt, tc.TpSlOnEntryRules)
		return TpSlOnEntryRules{}
	}

	bin := describe(binance.New(binance.Options{}))
	if !slices.Equal(bin.TpSlOnEntry, []string{"SPOT", "SWAP"}) {
		t.Fatalf("binance tpslOnEntry %v", bin.TpSlOnEntry)
	}
	if r := rule(bin, "SPOT"); !slices.Equal(r.OrderTypes, []string{"LIMIT"}) || !r.BothLegs || r.LimitPrice ||
		!slices.Equal(r.TriggerPriceTypes, []string{"LAST"}) || r.ArmedBy != "exchange" {
		t.Fatalf("binance spot %+v", r)
	}
	if r := rule(bin, "SWAP"); len(r.OrderTypes) != 0 || r.BothLegs || r.LimitPrice ||
		!slices.Equal(r.TriggerPriceTypes, []string{"LAST", "MARK"}) || r.ArmedBy != "exhub" {
		t.Fatalf("binance futures %+v", r)
	}

	ok := describe(okx.New(okx.Options{}))
	if r := rule(ok, "SPOT"); !slices.Equal(r.OrderTypes, []string{"LIMIT", "MARKET"}) || r.BothLegs || !r.LimitPrice ||
		!slices.Equal(r.TriggerPriceTypes, []string{"LAST"}) || r.ArmedBy != "exchange" {
		t.Fatalf("okx spot %+v", r)
	}
	if r := rule(ok, "SWAP"); !slices.Equal(r.OrderTypes, []string{"LIMIT", "MARKET"}) || r.BothLegs || !r.LimitPrice ||
		!slices.Equal(r.TriggerPriceTypes, []string{"LAST", "MARK", "INDEX"}) {
		t.Fatalf("okx futures %+v", r)
	}
}
