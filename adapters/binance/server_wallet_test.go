package binance

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/binance/emulator"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

func demoAccount() *exchangev1.AccountRef {
	return &exchangev1.AccountRef{ApiKey: emulator.DemoAPIKey, ApiSecret: emulator.DemoAPISecret}
}

func avail(t *testing.T, s *Server, w exchangev1.WalletType, asset string) decimal.Decimal {
	t.Helper()
	r, err := s.GetBalances(context.Background(), &exchangev1.GetBalancesRequest{Account: demoAccount(), Wallet: w})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range r.Balances {
		if b.Asset == asset && b.Wallet == w {
			return decimal.RequireFromString(b.Available)
		}
	}
	return decimal.Zero
}

// Every wallet RPC against the emulator's sapi routes, with balances checked before and after.
func TestEmulatorWallet(t *testing.T) {
	s, _ := emu(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	acct := demoAccount()

	as, err := s.ListAssets(ctx, &exchangev1.ListAssetsRequest{Account: acct})
	if err != nil || len(as.Assets) == 0 {
		t.Fatalf("assets: %v", err)
	}
	var usdt *exchangev1.Asset
	for _, a := range as.Assets {
		if a.Asset == "USDT" {
			usdt = a
		}
	}
	if usdt == nil || len(usdt.Networks) == 0 || usdt.Networks[0].WithdrawFee == "" || !usdt.Networks[0].WithdrawEnabled ||
		usdt.Networks[0].WithdrawStep != "0.00000001" {
		t.Fatalf("USDT asset: %+v", usdt)
	}

	// Transfers both ways move exactly the amount.
	trading0 := avail(t, s, exchangev1.WalletType_WALLET_TYPE_TRADING, "USDT")
	funding0 := avail(t, s, exchangev1.WalletType_WALLET_TYPE_FUNDING, "USDT")
	if !trading0.GreaterThan(decimal.NewFromInt(100)) {
		t.Fatalf("demo account trading USDT %s", trading0)
	}
	tr, err := s.Transfer(ctx, &exchangev1.TransferRequest{Account: acct, Asset: "usdt", Amount: "25.5",
		From: exchangev1.WalletType_WALLET_TYPE_TRADING, To: exchangev1.WalletType_WALLET_TYPE_FUNDING, ClientId: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Transfer.Id == "" || tr.Transfer.ClientId != "t1" || tr.Transfer.Status != exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS {
		t.Fatalf("transfer: %+v", tr.Transfer)
	}
	if got := avail(t, s, exchangev1.WalletType_WALLET_TYPE_FUNDING, "USDT"); !got.Equal(funding0.Add(decimal.RequireFromString("25.5"))) {
		t.Fatalf("funding USDT %s after +25.5 from %s", got, funding0)
	}
	if got := avail(t, s, exchangev1.WalletType_WALLET_TYPE_TRADING, "USDT"); !got.Equal(trading0.Sub(decimal.RequireFromString("25.5"))) {
		t.Fatalf("trading USDT %s after -25.5 from %s", got, trading0)
	}
	// The same client id again: the first transfer, nothing moved.
	again, err := s.Transfer(ctx, &exchangev1.TransferRequest{Account: acct, Asset: "usdt", Amount: "25.5",
		From: exchangev1.WalletType_WALLET_TYPE_TRADING, To: exchangev1.WalletType_WALLET_TYPE_FUNDING, ClientId: "t1"})
	if err != nil || again.Transfer.Id != tr.Transfer.Id {
		t.Fatalf("repeated transfer: %v %+v", err, again)
	}
	if got := avail(t, s, exchangev1.WalletType_WALLET_TYPE_FUNDING, "USDT"); !got.Equal(funding0.Add(decimal.RequireFromString("25.5"))) {
		t.Fatalf("funding USDT %s after a repeated transfer", got)
	}
	if _, err := s.Transfer(ctx, &exchangev1.TransferRequest{Account: acct, Asset: "USDT", Amount: "5",
		From: exchangev1.WalletType_WALLET_TYPE_FUNDING, To: exchangev1.WalletType_WALLET_TYPE_TRADING}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Transfer(ctx, &exchangev1.TransferRequest{Account: acct, Asset: "USDT", Amount: "100000000",
		From: exchangev1.WalletType_WALLET_TYPE_FUNDING, To: exchangev1.WalletType_WALLET_TYPE_TRADING})
	if sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS {
		t.Fatalf("oversized transfer: %v", err)
	}
	_, err = s.Transfer(ctx, &exchangev1.TransferRequest{Account: acct, Asset: "USDT", Amount: "1",
		From: exchangev1.WalletType_WALLET_TYPE_TRADING, To: exchangev1.WalletType_WALLET_TYPE_TRADING})
	if sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT {
		t.Fatalf("same-wallet transfer: %v", err)
	}
	lt, err := s.ListTransfers(ctx, &exchangev1.ListTransfersRequest{Account: acct, Asset: "USDT"})
	if err != nil || len(lt.Transfers) != 2 {
		t.Fatalf("transfers: %v %+v", err, lt)
	}
	if lt.Transfers[0].Amount != "5" || lt.Transfers[0].From != exchangev1.WalletType_WALLET_TYPE_FUNDING ||
		lt.Transfers[1].Amount != "25.5" || lt.Transfers[1].To != exchangev1.WalletType_WALLET_TYPE_FUNDING {
		t.Fatalf("transfers newest first: %+v", lt.Transfers)
	}

	// Deposit address on the default network; deposits include the demo funding.
	da, err := s.GetDepositAddress(ctx, &exchangev1.GetDepositAddressRequest{Account: acct, Asset: "USDT"})
	if err != nil || da.Address == "" || da.Network != usdt.Networks[0].Network || da.Asset != "USDT" {
		t.Fatalf("deposit address: %v %+v", err, da)
	}
	ds, err := s.ListDeposits(ctx, &exchangev1.ListDepositsRequest{Account: acct, Asset: "USDT"})
	if err != nil || len(ds.Deposits) == 0 || ds.Deposits[0].Status != exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS {
		t.Fatalf("deposits: %v %+v", err, ds)
	}

	// Withdraw from funding: the fee is on top.
	funding1 := avail(t, s, exchangev1.WalletType_WALLET_TYPE_FUNDING, "USDT")
	wd, err := s.Withdraw(ctx, &exchangev1.WithdrawRequest{Account: acct, Asset: "USDT", Amount: "12", Address: "sim-addr-1", ClientId: "w-1"})
	if err != nil {
		t.Fatal(err)
	}
	fee := decimal.RequireFromString(usdt.Networks[0].WithdrawFee)
	if wd.Withdrawal.Id == "" || wd.Withdrawal.Amount != "12" || wd.Withdrawal.ClientId != "w-1" || wd.Withdrawal.Fee != fee.String() {
		t.Fatalf("withdrawal: %+v", wd.Withdrawal)
	}
	if got := avail(t, s, exchangev1.WalletType_WALLET_TYPE_FUNDING, "USDT"); !got.Equal(funding1.Sub(decimal.NewFromInt(12)).Sub(fee)) {
		t.Fatalf("funding USDT %s after withdrawing 12 + fee %s from %s", got, fee, funding1)
	}
	wd2, err := s.Withdraw(ctx, &exchangev1.WithdrawRequest{Account: acct, Asset: "USDT", Amount: "12", Address: "sim-addr-1", ClientId: "w-1"})
	if err != nil || wd2.Withdrawal.Id != wd.Withdrawal.Id {
		t.Fatalf("repeated withdrawal: %v %+v", err, wd2)
	}
	if got := avail(t, s, exchangev1.WalletType_WALLET_TYPE_FUNDING, "USDT"); !got.Equal(funding1.Sub(decimal.NewFromInt(12)).Sub(fee)) {
		t.Fatalf("funding USDT %s after a repeated withdrawal", got)
	}
	lw, err := s.ListWithdrawals(ctx, &exchangev1.ListWithdrawalsRequest{Account: acct})
	if err != nil || len(lw.Withdrawals) != 1 || lw.Withdrawals[0].Id != wd.Withdrawal.Id || lw.Withdrawals[0].Time == 0 {
		t.Fatalf("withdrawals: %v %+v", err, lw)
	}
	_, err = s.Withdraw(ctx, &exchangev1.WithdrawRequest{Account: acct, Asset: "USDT", Amount: "1", Address: ""})
	if sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT {
		t.Fatalf("withdraw without address: %v", err)
	}

	// Convert USDT to BTC: quote, accept, listed.
	q, err := s.GetConvertQuote(ctx, &exchangev1.GetConvertQuoteRequest{Account: acct, FromAsset: "USDT", ToAsset: "BTC", FromAmount: "20"})
	if err != nil {
		t.Fatal(err)
	}
	if q.Quote.QuoteId == "" || q.Quote.FromAmount != "20" || q.Quote.FromAsset != "USDT" || q.Quote.ToAsset != "BTC" ||
		!decimal.RequireFromString(q.Quote.ToAmount).IsPositive() {
		t.Fatalf("quote: %+v", q.Quote)
	}
	cv, err := s.Convert(ctx, &exchangev1.ConvertRequest{Account: acct, QuoteId: q.Quote.QuoteId})
	if err != nil {
		t.Fatal(err)
	}
	if cv.Convert.Id == "" || cv.Convert.Status != exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS || cv.Convert.ToAmount != q.Quote.ToAmount ||
		cv.Convert.FromAsset != "USDT" {
		t.Fatalf("convert: %+v", cv.Convert)
	}
	lc, err := s.ListConverts(ctx, &exchangev1.ListConvertsRequest{Account: acct})
	if err != nil || len(lc.Converts) != 1 || lc.Converts[0].Id != cv.Convert.Id {
		t.Fatalf("converts: %v %+v", err, lc)
	}
	if _, err := s.Convert(ctx, &exchangev1.ConvertRequest{Account: acct, QuoteId: q.Quote.QuoteId}); err == nil {
		t.Fatal("a quote accepted twice")
	}
	_, err = s.GetConvertQuote(ctx, &exchangev1.GetConvertQuoteRequest{Account: acct, FromAsset: "USDT", ToAsset: "BTC", FromAmount: "1", ToAmount: "1"})
	if sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT {
		t.Fatalf("both amounts: %v", err)
	}
	bad := &exchangev1.AccountRef{ApiKey: emulator.DemoAPIKey, ApiSecret: strings.Repeat("x", 64)}
	if _, err := s.ListAssets(ctx, &exchangev1.ListAssetsRequest{Account: bad}); sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED {
		t.Fatalf("bad secret: %v", err)
	}
}
