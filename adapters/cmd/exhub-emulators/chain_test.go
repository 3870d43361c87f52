package main

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/binance"
	binanceemu "github.com/exhub/exhub/adapters/binance/emulator"
	"github.com/exhub/exhub/adapters/okx"
	okxemu "github.com/exhub/exhub/adapters/okx/emulator"
	"github.com/exhub/exhub/adapters/venue"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// smallVenue is an exchange profile cut to BTC and ETH (building the full market is the slow part), without the
// synthetic market: only the wallet matters here.
func smallVenue(t *testing.T, profile string) *venue.Venue {
	t.Helper()
	p, err := venue.LoadProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	var ins []*venue.Instrument
	for _, in := range p.Instruments {
		if in.Base == "BTC" || in.Base == "ETH" {
			ins = append(ins, in)
		}
	}
	v, err := venue.New(venue.Config{Profile: profile, Instruments: ins, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	return v
}

// TestChainBetweenEmulators: a withdrawal on the Binance emulator to the OKX emulator's deposit address arrives in
// OKX's deposit history (pending, then credited, with the withdrawal's tx id), and one from OKX back to Binance's
// address arrives there, through both adapters and both exchanges' wire protocols. The chain runs in real time with
// a delay of a few hundred milliseconds.
func TestChainBetweenEmulators(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	chain, err := venue.NewChain(venue.ChainConfig{MinDelay: 200 * time.Millisecond, MaxDelay: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stopChain := context.WithCancel(context.Background())
	chainDone := make(chan struct{})
	go func() { defer close(chainDone); _ = chain.Run(runCtx) }()
	t.Cleanup(func() { stopChain(); <-chainDone })
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))

	bv, ov := smallVenue(t, "binance"), smallVenue(t, "okx")
	if err := chain.Attach("binance", bv); err != nil {
		t.Fatal(err)
	}
	if err := chain.Attach("okx", ov); err != nil {
		t.Fatal(err)
	}
	be, err := binanceemu.New(binanceemu.Config{Venue: bv, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	oe, err := okxemu.New(okxemu.Config{Venue: ov, Logger: log, DisableRateLimits: true})
	if err != nil {
		t.Fatal(err)
	}
	bs, os := httptest.NewServer(be.Handler()), httptest.NewServer(oe.Handler())
	t.Cleanup(func() { bs.Close(); os.Close(); be.Close(); oe.Close() })
	bin := binance.New(binance.Options{Logger: log})
	if _, err := bin.Configure(ctx, &exchangev1.ConfigureRequest{Settings: binanceemu.PluginSettings(bs.URL)}); err != nil {
		t.Fatal(err)
	}
	ok := okx.New(okx.Options{Logger: log})
	if _, err := ok.Configure(ctx, &exchangev1.ConfigureRequest{Settings: okxemu.PluginSettings(os.URL)}); err != nil {
		t.Fatal(err)
	}
	bAcct := &exchangev1.AccountRef{ApiKey: binanceemu.DemoAPIKey, ApiSecret: binanceemu.DemoAPISecret}
	oAcct := &exchangev1.AccountRef{ApiKey: okxemu.DemoAPIKey, ApiSecret: okxemu.DemoAPISecret, Passphrase: okxemu.DemoPassphrase}

	// eventually polls cond until it holds (a generous bound: the chain's delay is a few hundred ms).
	eventually := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 60s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	fundingUSDT := func(get func() (*exchangev1.GetBalancesResponse, error)) decimal.Decimal {
		t.Helper()
		r, err := get()
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range r.Balances {
			if b.Asset == "USDT" && b.Wallet == exchangev1.WalletType_WALLET_TYPE_FUNDING {
				return decimal.RequireFromString(b.Total)
			}
		}
		return decimal.Zero
	}
	okxFunding := func() decimal.Decimal {
		return fundingUSDT(func() (*exchangev1.GetBalancesResponse, error) {
			return ok.GetBalances(ctx, &exchangev1.GetBalancesRequest{Account: oAcct, Wallet: exchangev1.WalletType_WALLET_TYPE_FUNDING})
		})
	}
	binFunding := func() decimal.Decimal {
		return fundingUSDT(func() (*exchangev1.GetBalancesResponse, error) {
			return bin.GetBalances(ctx, &exchangev1.GetBalancesRequest{Account: bAcct, Wallet: exchangev1.WalletType_WALLET_TYPE_FUNDING})
		})
	}

	// Binance -> OKX.
	oAddr, err := ok.GetDepositAddress(ctx, &exchangev1.GetDepositAddressRequest{Account: oAcct, Asset: "USDT"})
	if err != nil || oAddr.Address == "" {
		t.Fatalf("okx deposit address: %v %+v", err, oAddr)
	}
	okxBefore := okxFunding()
	wd, err := bin.Withdraw(ctx, &exchangev1.WithdrawRequest{Account: bAcct, Asset: "USDT", Network: "SIM", Amount: "25",
		Address: oAddr.Address, ClientId: "chain-b2o-1"})
	if err != nil {
		t.Fatal(err)
	}
	var txID string
	eventually("binance withdrawal completed with a tx id", func() bool {
		r, err := bin.ListWithdrawals(ctx, &exchangev1.ListWithdrawalsRequest{Account: bAcct, Asset: "USDT"})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range r.Withdrawals {
			if w.Id == wd.Withdrawal.Id && w.Status == exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS && w.TxId != "" {
				txID = w.TxId
				return true
			}
		}
		return false
	})
	eventually("okx deposit credited", func() bool {
		r, err := ok.ListDeposits(ctx, &exchangev1.ListDepositsRequest{Account: oAcct, Asset: "USDT"})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range r.Deposits {
			if d.TxId == txID {
				if d.Amount != "25" || d.Address != oAddr.Address {
					t.Fatalf("okx deposit %+v", d)
				}
				return d.Status == exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS
			}
		}
		return false
	})
	if got := okxFunding().Sub(okxBefore); !got.Equal(decimal.NewFromInt(25)) {
		t.Fatalf("okx funding grew by %s, want 25", got)
	}

	// OKX -> Binance.
	bAddr, err := bin.GetDepositAddress(ctx, &exchangev1.GetDepositAddressRequest{Account: bAcct, Asset: "USDT"})
	if err != nil || bAddr.Address == "" || bAddr.Address == oAddr.Address {
		t.Fatalf("binance deposit address: %v %+v", err, bAddr)
	}
	binBefore := binFunding()
	back, err := ok.Withdraw(ctx, &exchangev1.WithdrawRequest{Account: oAcct, Asset: "USDT", Network: "SIM", Amount: "12.5",
		Address: bAddr.Address, ClientId: "chainO2B1"})
	if err != nil {
		t.Fatal(err)
	}
	var backTx string
	eventually("okx withdrawal completed", func() bool {
		r, err := ok.ListWithdrawals(ctx, &exchangev1.ListWithdrawalsRequest{Account: oAcct, Asset: "USDT"})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range r.Withdrawals {
			if w.Id == back.Withdrawal.Id && w.Status == exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS && w.TxId != "" {
				if w.ClientId != "chainO2B1" {
					t.Fatalf("okx withdrawal lost its client id: %+v", w)
				}
				backTx = w.TxId
				return true
			}
		}
		return false
	})
	eventually("binance deposit credited", func() bool {
		r, err := bin.ListDeposits(ctx, &exchangev1.ListDepositsRequest{Account: bAcct, Asset: "USDT"})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range r.Deposits {
			if d.TxId == backTx {
				return d.Status == exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS && d.Amount == "12.5"
			}
		}
		return false
	})
	if got := binFunding().Sub(binBefore); !got.Equal(decimal.RequireFromString("12.5")) {
		t.Fatalf("binance funding grew by %s, want 12.5", got)
	}
	if chain.InFlight() != 0 {
		t.Fatalf("%d transfers still on the chain", chain.InFlight())
	}
}

func TestParseDelay(t *testing.T) {
	for in, want := range map[string][2]time.Duration{"30s-60s": {30 * time.Second, time.Minute}, "250ms": {250 * time.Millisecond, 250 * time.Millisecond}} {
		lo, hi, err := parseDelay(in)
		if err != nil || lo != want[0] || hi != want[1] {
			t.Errorf("%q: %s %s %v", in, lo, hi, err)
		}
	}
	for _, bad := range []string{"", "x", "60s-30s", "0s", "-1s"} {
		if _, _, err := parseDelay(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
