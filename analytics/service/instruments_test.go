package service

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// listOnly answers ListInstruments; any other call panics (nil embedded client).
type listOnly struct {
	exchangev1.ExchangeClient
	swap, spot []*exchangev1.Instrument
}

func (l listOnly) ListInstruments(_ context.Context, in *exchangev1.ListInstrumentsRequest, _ ...grpc.CallOption) (*exchangev1.ListInstrumentsResponse, error) {
	if in.GetMarketType() == exchangev1.MarketType_MARKET_TYPE_SWAP {
		return &exchangev1.ListInstrumentsResponse{Instruments: l.swap}, nil
	}
	return &exchangev1.ListInstrumentsResponse{Instruments: l.spot}, nil
}

// The first bases' spot markets are taken before the other swap markets, so the default markets of both types are
// backfilled first.
func TestInstrumentsTakeFirstBasesOfEveryTypeFirst(t *testing.T) {
	trading := exchangev1.InstrumentStatus_INSTRUMENT_STATUS_TRADING
	mk := func(base string) *exchangev1.Instrument {
		return &exchangev1.Instrument{Symbol: base + "USDT", Base: base, Quote: "USDT", Status: trading}
	}
	c := listOnly{
		swap: []*exchangev1.Instrument{mk("AAVE"), mk("ETH"), mk("BTC")},
		spot: []*exchangev1.Instrument{mk("ADA"), mk("BTC")},
	}
	got, err := New(Config{}).instruments(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, in := range got {
		order = append(order, in.mt.String()+" "+in.symbol)
	}
	want := []string{"MARKET_TYPE_SWAP BTCUSDT", "MARKET_TYPE_SPOT BTCUSDT", "MARKET_TYPE_SWAP ETHUSDT",
		"MARKET_TYPE_SWAP AAVEUSDT", "MARKET_TYPE_SPOT ADAUSDT"}
	if strings.Join(order, ",") != strings.Join(want, ",") {
		t.Fatalf("order %v, want %v", order, want)
	}
}

// The markets a new user sees first are taken first, whatever the exchange's list order, and MaxSymbols still bounds
// the rest; halted instruments are never taken.
func TestInstrumentsTakeFirstBasesFirst(t *testing.T) {
	mk := func(base string, st exchangev1.InstrumentStatus) *exchangev1.Instrument {
		return &exchangev1.Instrument{Symbol: base + "USDT", Base: base, Quote: "USDT", Status: st}
	}
	trading := exchangev1.InstrumentStatus_INSTRUMENT_STATUS_TRADING
	c := listOnly{swap: []*exchangev1.Instrument{
		mk("AAVE", trading), mk("ADA", trading), mk("DOGE", trading), mk("APT", trading),
		mk("ETH", exchangev1.InstrumentStatus_INSTRUMENT_STATUS_SUSPENDED), mk("BTC", trading), mk("ARB", trading),
	}}
	s := New(Config{MaxSymbols: 4})
	got, err := s.instruments(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	var syms []string
	for _, in := range got {
		syms = append(syms, in.symbol)
	}
	want := []string{"BTCUSDT", "DOGEUSDT", "AAVEUSDT", "ADAUSDT"}
	if len(syms) != len(want) {
		t.Fatalf("took %v, want %v", syms, want)
	}
	for i := range want {
		if syms[i] != want[i] {
			t.Fatalf("took %v, want %v", syms, want)
		}
	}
}
