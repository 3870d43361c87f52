package binance

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdktest"
)

// Ticker, candle and mark price streams through StreamMarket against the emulator's combined streams.
func TestEmulatorStreamTickerCandlesMark(t *testing.T) {
	s, _ := emu(t)
	c, stop, err := sdktest.ServeInProcess(s)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := c.StreamMarket(ctx)
	if err != nil {
		t.Fatal(err)
	}
	subs := []*exchangev1.Subscription{
		{Channel: exchangev1.Channel_CHANNEL_TICKER, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: "BTCUSDT"},
		{Channel: exchangev1.Channel_CHANNEL_CANDLES, MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT, Symbol: "ETHUSDT", Interval: "1m"},
		{Channel: exchangev1.Channel_CHANNEL_MARK_PRICE, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: "BTCUSDT"},
	}
	if err := st.Send(&exchangev1.StreamMarketRequest{Op: exchangev1.StreamMarketRequest_OP_SUBSCRIBE, Subscriptions: subs, RequestId: "r1"}); err != nil {
		t.Fatal(err)
	}
	var ticker *exchangev1.Ticker
	var candle *exchangev1.Candle
	var mark *exchangev1.MarkPriceUpdate
	for ticker == nil || candle == nil || mark == nil {
		ev, err := st.Recv()
		if err != nil {
			t.Fatalf("recv (ticker %v candle %v mark %v): %v", ticker != nil, candle != nil, mark != nil, err)
		}
		if e := ev.GetStatus().GetError(); e != nil {
			t.Fatalf("status error: %v", e)
		}
		switch {
		case ev.GetTicker() != nil:
			ticker = ev.GetTicker()
		case ev.GetCandle() != nil:
			candle = ev.GetCandle()
		case ev.GetMarkPrice() != nil:
			mark = ev.GetMarkPrice()
		}
	}
	pos := func(s string) bool { d, err := decimal.NewFromString(s); return err == nil && d.IsPositive() }
	if ticker.Symbol != "BTCUSDT" || !pos(ticker.Last) || !pos(ticker.Open_24H) || !pos(ticker.Low_24H) ||
		decimal.RequireFromString(ticker.Low_24H).GreaterThan(decimal.RequireFromString(ticker.High_24H)) {
		t.Fatalf("ticker: %+v", ticker)
	}
	if !pos(candle.Open) || !pos(candle.Low) || candle.OpenTime%60000 != 0 ||
		decimal.RequireFromString(candle.Low).GreaterThan(decimal.RequireFromString(candle.Close)) {
		t.Fatalf("candle: %+v", candle)
	}
	if !pos(mark.MarkPrice) || !pos(mark.IndexPrice) || mark.NextFundingTime == 0 {
		t.Fatalf("mark: %+v", mark)
	}
}

// The emulator drops the sockets, then loses depth updates: each time the book stream says so (RECONNECTING /
// RESYNCED) and a fresh snapshot follows.
func TestEmulatorBookRecovers(t *testing.T) {
	s, e := emu(t)
	c, stop, err := sdktest.ServeInProcess(s)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	st, err := c.StreamMarket(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sub := &exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_BOOK, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: "BTCUSDT", Depth: 10}
	if err := st.Send(&exchangev1.StreamMarketRequest{Op: exchangev1.StreamMarketRequest_OP_SUBSCRIBE, Subscriptions: []*exchangev1.Subscription{sub}}); err != nil {
		t.Fatal(err)
	}
	// next reads until ok, failing on a stream error.
	next := func(what string, ok func(*exchangev1.MarketEvent) bool) {
		t.Helper()
		for {
			ev, err := st.Recv()
			if err != nil {
				t.Fatalf("waiting for %s: %v", what, err)
			}
			if ev.GetStatus().GetState() == exchangev1.StreamStatus_STATE_ERROR {
				t.Fatalf("waiting for %s: %v", what, ev.GetStatus())
			}
			if ok(ev) {
				return
			}
		}
	}
	snapshot := func(ev *exchangev1.MarketEvent) bool { return len(ev.GetBookSnapshot().GetBids()) > 0 }
	delta := func(ev *exchangev1.MarketEvent) bool { return ev.GetBookDelta() != nil }
	status := func(st exchangev1.StreamStatus_State) func(*exchangev1.MarketEvent) bool {
		return func(ev *exchangev1.MarketEvent) bool { return ev.GetStatus().GetState() == st }
	}
	next("first snapshot", snapshot)
	next("a delta", delta)

	if n := e.DropConnections(); n == 0 {
		t.Fatal("no connection to drop")
	}
	next("RECONNECTING", status(exchangev1.StreamStatus_STATE_RECONNECTING))
	next("RESYNCED after the reconnect", status(exchangev1.StreamStatus_STATE_RESYNCED))
	next("snapshot after the reconnect", snapshot)
	next("a delta after the reconnect", delta)

	e.DropDepthUpdates(true, 3)
	next("RESYNCED after the gap", status(exchangev1.StreamStatus_STATE_RESYNCED))
	next("snapshot after the gap", snapshot)
	next("a delta after the gap", delta)
}
