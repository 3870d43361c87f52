package okx_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/exhub/exhub/adapters/okx"
	"github.com/exhub/exhub/adapters/okx/emulator"
	"github.com/exhub/exhub/adapters/venue"
	"github.com/exhub/exhub/plugin-sdk/conformance"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
	"github.com/exhub/exhub/plugin-sdk/sdktest"
)

// world is a venue moving in real time, the OKX emulator over it on a loopback listener, and the adapter served
// in-process over gRPC, configured to the emulator.
type world struct {
	v    *venue.Venue
	emu  *emulator.Server
	ts   *httptest.Server
	srv  *okx.Server
	c    exchangev1.ExchangeClient
	acct *exchangev1.AccountRef
	// hits counts the emulator's REST requests by path.
	hits *pathCounter
}

var (
	sharedOnce  sync.Once
	sharedWorld *world
	sharedErr   error
)

func newWorld() (*world, error) {
	v, err := venue.New(venue.Config{Profile: "okx", Seed: 11, Simulate: true, HistoryDays: 1, StepInterval: 250 * time.Millisecond})
	if err != nil {
		return nil, err
	}
	go func() { _ = v.Run(context.Background()) }() // lives for the test binary
	emu, err := emulator.New(emulator.Config{Venue: v, DisableRateLimits: true, Credentials: []emulator.Credentials{
		{APIKey: readOnlyKey, Secret: "ro-secret", Passphrase: "ro-pass", Account: emulator.DemoAccount, Perm: "read_only", IPs: []string{"127.0.0.1", "10.0.0.7"}},
		{APIKey: deadmanKey, Secret: "dm-secret", Passphrase: "dm-pass", Account: deadmanAccount},
		{APIKey: historyKey, Secret: "h-secret", Passphrase: "h-pass", Account: historyAccount}},
		MinCancelAllAfter: time.Second})
	if err != nil {
		return nil, err
	}
	hits := &pathCounter{n: map[string]int{}}
	ts := httptest.NewServer(hits.wrap(emu.Handler()))
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	srv := okx.New(okx.Options{Logger: log})
	c, _, err := sdktest.ServeInProcess(srv)
	if err != nil {
		return nil, err
	}
	settings := emulator.PluginSettings(ts.URL)
	settings["reconnect_min"] = "50ms"
	settings["reconnect_max"] = "500ms"
	settings["rest_timeout"] = "30s"
	if _, err := c.Configure(context.Background(), &exchangev1.ConfigureRequest{Settings: settings}); err != nil {
		return nil, err
	}
	return &world{v: v, emu: emu, ts: ts, srv: srv, c: c, acct: &exchangev1.AccountRef{AccountId: "demo",
		ApiKey: emulator.DemoAPIKey, ApiSecret: emulator.DemoAPISecret, Passphrase: emulator.DemoPassphrase}, hits: hits}, nil
}

// readOnlyKey is a second key of the demo account that may only read, bound to two IP addresses.
const readOnlyKey = "okx-read-only-key"

// deadmanKey is the key of an account of its own, for tests whose effects reach every order of an account.
const (
	deadmanKey     = "okx-deadman-key"
	deadmanAccount = "okx-deadman"
	// historyKey's account holds only what the history tests put there.
	historyKey     = "okx-history-key"
	historyAccount = "okx-history"
)

// shared returns one world per test binary (history generation is the slow part).
func shared(t *testing.T) *world {
	t.Helper()
	sharedOnce.Do(func() { sharedWorld, sharedErr = newWorld() })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return sharedWorld
}

func TestEmulatorMarketData(t *testing.T) {
	w := shared(t)
	ctx := t.Context()
	ins, err := w.c.ListInstruments(ctx, &exchangev1.ListInstrumentsRequest{MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: "BTC-USDT-SWAP"})
	if err != nil || len(ins.GetInstruments()) != 1 {
		t.Fatalf("instruments: %v %v", err, ins)
	}
	in := ins.GetInstruments()[0]
	if in.GetContractValue() == "" || in.GetContractValue() == "1" || in.GetSettle() != "USDT" {
		t.Fatalf("BTC-USDT-SWAP contract value %q settle %q", in.GetContractValue(), in.GetSettle())
	}
	// Mark price, index and open interest are best-effort extras (one call each); under a loaded machine one may
	// time out, so the ticker is asked for again a few times before the test gives up.
	var x *exchangev1.Ticker
	for range 3 {
		tk, err := w.c.GetTickers(ctx, &exchangev1.GetTickersRequest{MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbols: []string{"BTC-USDT-SWAP"}})
		if err != nil || len(tk.GetTickers()) != 1 {
			t.Fatalf("tickers: %v %v", err, tk)
		}
		x = tk.GetTickers()[0]
		if x.GetMarkPrice() != "" {
			break
		}
	}
	if x.GetOpen_24H() == "" || x.GetChangePct_24H() == "" || x.GetMarkPrice() == "" || x.GetFundingRate() == "" {
		t.Errorf("SWAP ticker lacks open/change/mark/funding: %v", x)
	}
	// Candles page back through history with end_time, ascending and without overlap.
	end := time.Now().Add(-6 * time.Hour).UnixMilli()
	cs, err := w.c.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: "BTC-USDT-SWAP",
		Interval: "1m", EndTime: end, Limit: 250})
	if err != nil {
		t.Fatal(err)
	}
	got := cs.GetCandles()
	if len(got) != 250 || got[len(got)-1].GetOpenTime() > end || got[len(got)-1].GetOpenTime() < end-60_000 {
		t.Fatalf("%d candles, last %d for end %d", len(got), got[len(got)-1].GetOpenTime(), end)
	}
	for i := 1; i < len(got); i++ {
		if got[i].GetOpenTime()-got[i-1].GetOpenTime() != 60_000 {
			t.Fatalf("gap or overlap at %d: %d after %d", i, got[i].GetOpenTime(), got[i-1].GetOpenTime())
		}
	}
	day, err := w.c.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT, Symbol: "BTC-USDT", Interval: "1d", Limit: 2})
	if err != nil || len(day.GetCandles()) == 0 || day.GetCandles()[0].GetOpenTime()%86_400_000 != 0 {
		t.Fatalf("daily candles not aligned to UTC: %v %v", err, day)
	}
}

func TestEmulatorConformance(t *testing.T) {
	w := shared(t)
	// Market data and streams. The kit's trading checks size their order at the spot instrument's min_qty; the
	// venue behind the emulator also enforces a 5 USDT minimum notional that OKX's instrument listing cannot
	// express, so they run here once the emulator folds that minimum into minSz. Trading flows are covered by
	// trading_emulator_test.go meanwhile.
	conformance.Test(t, w.c, conformance.Options{Account: w.acct, StreamWait: 20 * time.Second, CheckTimeout: 40 * time.Second})
}

// TestStreamReconnect drops every emulator connection and expects RECONNECTING, RESYNCED and a fresh snapshot, with
// sequences that stay contiguous.
func TestStreamReconnect(t *testing.T) {
	w := shared(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	st, err := w.c.StreamMarket(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sub := &exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_BOOK, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: "ETH-USDT-SWAP"}
	if err := st.Send(&exchangev1.StreamMarketRequest{Op: exchangev1.StreamMarketRequest_OP_SUBSCRIBE, Subscriptions: []*exchangev1.Subscription{sub}, RequestId: "r1"}); err != nil {
		t.Fatal(err)
	}
	var lastSeq int64
	snapshots, deltas, dropped := 0, 0, false
	var sawReconnecting, sawResynced bool
	for snapshots < 2 || deltas < 3 {
		ev, err := st.Recv()
		if err != nil {
			t.Fatalf("after %d snapshots %d deltas: %v", snapshots, deltas, err)
		}
		switch e := ev.GetEvent().(type) {
		case *exchangev1.MarketEvent_BookSnapshot:
			snapshots++
			if snapshots == 2 && !(sawReconnecting && sawResynced) {
				t.Fatal("second snapshot without RECONNECTING and RESYNCED before it")
			}
			lastSeq = e.BookSnapshot.GetSequence()
		case *exchangev1.MarketEvent_BookDelta:
			if e.BookDelta.GetPrevSequence() != lastSeq {
				t.Fatalf("delta prev %d after %d", e.BookDelta.GetPrevSequence(), lastSeq)
			}
			lastSeq = e.BookDelta.GetSequence()
			deltas++
			if deltas == 3 && !dropped {
				dropped = true
				if n := w.emu.DropConnections(); n == 0 {
					t.Fatal("the emulator had no connection to drop")
				}
				deltas = 0
			}
		case *exchangev1.MarketEvent_Status:
			switch e.Status.GetState() {
			case exchangev1.StreamStatus_STATE_RECONNECTING:
				sawReconnecting = true
			case exchangev1.StreamStatus_STATE_RESYNCED:
				sawResynced = true
			case exchangev1.StreamStatus_STATE_ERROR:
				t.Fatalf("stream error: %v", e.Status)
			}
		}
	}
}

// TestStreamAccountLogin logs in to the private WebSocket: the demo key connects, a wrong secret is AUTH_FAILED.
func TestStreamAccountLogin(t *testing.T) {
	w := shared(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	st, err := w.c.StreamAccount(ctx, &exchangev1.StreamAccountRequest{Account: w.acct})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := st.Recv()
	if err != nil || ev.GetSnapshot() == nil || ev.GetSequence() != 1 {
		t.Fatalf("first event %v %v", ev, err)
	}
	bad := &exchangev1.AccountRef{ApiKey: emulator.DemoAPIKey, ApiSecret: "wrong", Passphrase: emulator.DemoPassphrase}
	st2, err := w.c.StreamAccount(ctx, &exchangev1.StreamAccountRequest{Account: bad})
	if err != nil {
		t.Fatal(err)
	}
	_, err = st2.Recv()
	if d := sdk.DetailOf(err); d.GetReason() != exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED {
		t.Fatalf("wrong secret: %v", err)
	}
}

// TestStreamChannels subscribes to ticker, trades, candles (business endpoint) and mark price of a swap and expects
// each to deliver in base units; an unknown interval is refused with an ERROR status naming the request.
func TestStreamChannels(t *testing.T) {
	w := shared(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	st, err := w.c.StreamMarket(ctx)
	if err != nil {
		t.Fatal(err)
	}
	swap := exchangev1.MarketType_MARKET_TYPE_SWAP
	subs := []*exchangev1.Subscription{
		{Channel: exchangev1.Channel_CHANNEL_TICKER, MarketType: swap, Symbol: "BTC-USDT-SWAP"},
		{Channel: exchangev1.Channel_CHANNEL_TRADES, MarketType: swap, Symbol: "BTC-USDT-SWAP"},
		{Channel: exchangev1.Channel_CHANNEL_CANDLES, MarketType: swap, Symbol: "BTC-USDT-SWAP", Interval: "1m"},
		{Channel: exchangev1.Channel_CHANNEL_MARK_PRICE, MarketType: swap, Symbol: "BTC-USDT-SWAP"},
	}
	if err := st.Send(&exchangev1.StreamMarketRequest{Op: exchangev1.StreamMarketRequest_OP_SUBSCRIBE, Subscriptions: subs, RequestId: "all"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&exchangev1.StreamMarketRequest{Op: exchangev1.StreamMarketRequest_OP_SUBSCRIBE, RequestId: "bad",
		Subscriptions: []*exchangev1.Subscription{{Channel: exchangev1.Channel_CHANNEL_CANDLES, MarketType: swap, Symbol: "BTC-USDT-SWAP", Interval: "7m"}}}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for len(seen) < 5 {
		ev, err := st.Recv()
		if err != nil {
			t.Fatalf("seen %v: %v", seen, err)
		}
		switch e := ev.GetEvent().(type) {
		case *exchangev1.MarketEvent_Ticker:
			if e.Ticker.GetOpen_24H() == "" || e.Ticker.GetLast() == "" {
				t.Fatalf("ticker %v", e.Ticker)
			}
			seen["ticker"] = true
		case *exchangev1.MarketEvent_Trade:
			seen["trade"] = true
		case *exchangev1.MarketEvent_Candle:
			if e.Candle.GetOpenTime()%60_000 != 0 {
				t.Fatalf("candle %v", e.Candle)
			}
			seen["candle"] = true
		case *exchangev1.MarketEvent_MarkPrice:
			if e.MarkPrice.GetMarkPrice() == "" {
				t.Fatalf("mark %v", e.MarkPrice)
			}
			seen["mark"] = true
		case *exchangev1.MarketEvent_Status:
			if e.Status.GetState() == exchangev1.StreamStatus_STATE_ERROR {
				if e.Status.GetRequestId() != "bad" || e.Status.GetError().GetReason() != exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT {
					t.Fatalf("unexpected error %v", e.Status)
				}
				seen["refused"] = true
			}
		}
	}
}
