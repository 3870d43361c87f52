package sdktest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

const (
	spot = exchangev1.MarketType_MARKET_TYPE_SPOT
	swap = exchangev1.MarketType_MARKET_TYPE_SWAP
	buy  = exchangev1.Side_SIDE_BUY
	sell = exchangev1.Side_SIDE_SELL
)

// fakeClock is a settable clock, so tests control time exactly.
type fakeClock struct{ ms atomic.Int64 }

func newClock() *fakeClock {
	c := &fakeClock{}
	c.ms.Store(time.Date(2026, 11, 20, 10, 30, 15, 0, time.UTC).UnixMilli())
	return c
}
func (c *fakeClock) now() time.Time          { return time.UnixMilli(c.ms.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }

// manual starts a reference exchange without a ticker goroutine on a fake clock; tests call step to move it.
func manual(t *testing.T) (*Server, exchangev1.ExchangeClient, *fakeClock) {
	t.Helper()
	clock := newClock()
	s, c := Start(t, Options{Manual: true, Now: clock.now, HistoryDays: 3})
	return s, c, clock
}

func step(s *Server, clock *fakeClock, n int) {
	for range n {
		clock.advance(DefaultTickInterval)
		s.Tick()
	}
}

func acct(name string) *exchangev1.AccountRef { return &exchangev1.AccountRef{ApiKey: name} }

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// must unwraps a call result; an unexpected error fails the test loudly (a panic names the line).
func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprintf("unexpected error: %v", err))
	}
	return v
}

func wantReason(t *testing.T, err error, want exchangev1.ErrorReason) {
	t.Helper()
	if err == nil {
		t.Fatalf("want %v, got success", want)
	}
	if got := sdk.DetailOf(err).GetReason(); got != want {
		t.Fatalf("want %v, got %v (%v)", want, got, err)
	}
}

func book(t *testing.T, c exchangev1.ExchangeClient, mt exchangev1.MarketType, sym string, depth int32) *exchangev1.OrderBook {
	t.Helper()
	return must(c.GetOrderBook(context.Background(), &exchangev1.GetOrderBookRequest{MarketType: mt, Symbol: sym, Depth: depth})).Book
}

func balanceOf(t *testing.T, c exchangev1.ExchangeClient, a *exchangev1.AccountRef, w exchangev1.WalletType, asset string) *exchangev1.Balance {
	t.Helper()
	r := must(c.GetBalances(context.Background(), &exchangev1.GetBalancesRequest{Account: a, Wallet: w}))
	for _, b := range r.Balances {
		if b.Asset == asset {
			return b
		}
	}
	return &exchangev1.Balance{Asset: asset, Wallet: w, Total: "0", Available: "0", Locked: "0"}
}

const trading = exchangev1.WalletType_WALLET_TYPE_TRADING
const funding = exchangev1.WalletType_WALLET_TYPE_FUNDING

func limit(a *exchangev1.AccountRef, mt exchangev1.MarketType, sym string, side exchangev1.Side, price, qty string, tif exchangev1.TimeInForce) *exchangev1.PlaceOrderRequest {
	return &exchangev1.PlaceOrderRequest{Account: a, MarketType: mt, Symbol: sym, Side: side, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT,
		TimeInForce: tif, Price: price, Qty: qty}
}

func market(a *exchangev1.AccountRef, mt exchangev1.MarketType, sym string, side exchangev1.Side, qty string) *exchangev1.PlaceOrderRequest {
	return &exchangev1.PlaceOrderRequest{Account: a, MarketType: mt, Symbol: sym, Side: side, Type: exchangev1.OrderType_ORDER_TYPE_MARKET, Qty: qty}
}
