package rewards

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	binanceemu "github.com/exhub/exhub/adapters/binance/emulator"
	"github.com/exhub/exhub/adapters/venue"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/plugintest"
	"github.com/exhub/exhub/bff/internal/store"
	"github.com/exhub/exhub/bff/internal/store/storetest"
	"github.com/exhub/exhub/bff/internal/trading"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func TestMain(m *testing.M) { os.Exit(plugintest.Run(m, storetest.Run, "binance")) }

// accountsOf maps members to their Binance credentials (an accounts.Service stand-in).
type accountsOf map[string]*exchangev1.AccountRef

func (a accountsOf) AccountRef(_ context.Context, member, exchange string) (*exchangev1.AccountRef, error) {
	if ref, ok := a[member]; ok && exchange == "binance" {
		return ref, nil
	}
	return nil, fmt.Errorf("member %s on %s: %w", member, exchange, trading.ErrNoAccount)
}

// TestRewardFromAnEmulatorFill: a referee's market order on the Binance emulator (through the real plugin and the
// trading service) pays its fee; the job turns that fill into exactly one reward of rate x fee for the referrer, in
// the fee's coin, and a second pass adds nothing.
func TestRewardFromAnEmulatorFill(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.DefaultConfig(t.TempDir()), store.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)

	v, err := venue.New(venue.Config{Profile: "binance", Seed: 7, Simulate: true, HistoryDays: 1})
	if err != nil {
		t.Fatal(err)
	}
	vctx, vcancel := context.WithCancel(ctx)
	vdone := make(chan struct{})
	go func() { defer close(vdone); _ = v.Run(vctx) }()
	emu, err := binanceemu.New(binanceemu.Config{Venue: v, Logger: slog.New(slog.DiscardHandler),
		Credentials: []binanceemu.Credential{{Key: "referee-key", Secret: "referee-secret", Account: "binance-referee"}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(emu.Handler())
	t.Cleanup(func() { srv.Close(); emu.Close(); vcancel(); <-vdone; v.Close() })
	amt := decimal.NewFromInt(100000)
	if _, err := v.Deposit(ctx, "binance-referee", "USDT", amt); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Transfer(ctx, "binance-referee", "USDT", amt, venue.Funding, venue.TradingWallet); err != nil {
		t.Fatal(err)
	}

	host := pluginhost.New([]pluginhost.Spec{{Key: 1, Slug: "binance", Name: "Binance",
		Path: plugintest.Path("binance"), Settings: binanceemu.PluginSettings(srv.URL)}},
		pluginhost.Options{Logger: slog.New(slog.DiscardHandler)})
	hctx, hcancel := context.WithCancel(ctx)
	hdone := make(chan struct{})
	go func() { defer close(hdone); host.Run(hctx) }()
	t.Cleanup(func() { hcancel(); <-hdone })
	for _, sup := range host.Supervisors() {
		wctx, cancel := context.WithTimeout(hctx, 90*time.Second)
		err := sup.WaitRunning(wctx)
		cancel()
		if err != nil {
			t.Fatalf("%s not running: %v", sup.Slug(), err)
		}
	}

	referrer, _, err := st.EnsureMember(ctx, store.NewMember{ID: "0191f7a0-0000-7000-8000-0000000000a1"})
	if err != nil {
		t.Fatal(err)
	}
	referee := "0191f7a0-0000-7000-8000-0000000000b1"
	if _, _, err := st.EnsureMember(ctx, store.NewMember{ID: referee, ReferralCode: referrer.ReferralCode}); err != nil {
		t.Fatal(err)
	}
	svc, err := trading.New(trading.Defaults(), st, host,
		accountsOf{referee: {AccountId: "bin-referee", ApiKey: "referee-key", ApiSecret: "referee-secret"}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := svc.Place(ctx, referee, "reward-test-order-1", trading.PlaceRequest{Exchange: "binance", MarketType: "SWAP",
		Symbol: "ETHUSDT", Side: "BUY", Type: "MARKET", Qty: "0.1"})
	if err != nil {
		t.Fatalf("place: %v", err)
	}
	t.Logf("order %s %s", o.ID, o.State)

	// The fill as the exchange reports it.
	var fill trading.Fill
	deadline := time.Now().Add(90 * time.Second)
	for {
		fills, _, err := svc.WalkFills(ctx, referee, trading.Scope{Exchange: "binance", MarketType: "SWAP"},
			trading.Walk{}, nil)
		if err == nil && len(fills) == 1 {
			fill = fills[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no fill: %+v %v", fills, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	fee := decimal.RequireFromString(fill.Fee)
	if !fee.IsPositive() {
		t.Fatalf("the fill paid no fee: %+v", fill)
	}

	job, err := New(DefaultConfig(), st, svc, nil, WithClock(func() time.Time { return time.Now().Add(time.Second) }))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := job.Pass(ctx); err != nil || n != 1 {
		t.Fatalf("pass: %d rewards, %v; want 1", n, err)
	}
	if n, err := job.Pass(ctx); err != nil || n != 0 {
		t.Fatalf("second pass: %d rewards, %v; want 0", n, err)
	}
	list, err := st.ListRewards(ctx, referrer.ID, 10)
	if err != nil || len(list) != 1 {
		t.Fatalf("rewards %+v %v", list, err)
	}
	want := fee.Mul(decimal.RequireFromString("0.2")).Truncate(8)
	if r := list[0]; !r.Amount.Equal(want) || r.Coin != fill.FeeAsset || r.RefereeID != referee || r.State != store.RewardUnsettled {
		t.Fatalf("reward %+v, want %s %s from %s", r, want, fill.FeeAsset, referee)
	}
	if l, _ := st.ListRewards(ctx, referee, 10); len(l) != 0 {
		t.Fatalf("the referee sees %+v", l)
	}
}
