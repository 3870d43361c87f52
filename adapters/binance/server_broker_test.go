package binance

import (
	"context"
	"testing"
	"time"

	"github.com/exhub/exhub/adapters/binance/emulator"
	"github.com/exhub/exhub/plugin-sdk/faults"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
	"github.com/exhub/exhub/plugin-sdk/sdktest"
)

func reasonOf(err error) exchangev1.ErrorReason { return sdk.DetailOf(err).GetReason() }

// TestBrokerAgainstEmulator drives the four broker calls over the emulator's Binance Link endpoints.
func TestBrokerAgainstEmulator(t *testing.T) {
	s, v, e := manualEmuCfg(t, emulator.Config{})
	ctx := context.Background()
	m := demoAccount()
	d, err := s.Describe(ctx, &exchangev1.DescribeRequest{})
	if err != nil || !d.Capabilities.GetBroker().GetSubAccountTransfer() || d.SdkVersion != "1.2" {
		t.Fatalf("describe: %v %v", d.GetCapabilities().GetBroker(), err)
	}
	created, err := s.CreateSubAccount(ctx, &exchangev1.CreateSubAccountRequest{Account: m, Label: "m-42"})
	if err != nil || created.Existing || created.SubAccount.SubAccountId == "" {
		t.Fatalf("create: %v %v", created, err)
	}
	again, err := s.CreateSubAccount(ctx, &exchangev1.CreateSubAccountRequest{Account: m, Label: "m-42"})
	if err != nil || !again.Existing || again.SubAccount.SubAccountId != created.SubAccount.SubAccountId {
		t.Fatalf("a repeated label must find the first sub-account: %v %v", again, err)
	}
	if subs, _ := v.SubAccounts(emulator.DemoAccount); len(subs) != 1 {
		t.Fatalf("the venue holds %d sub-accounts, want 1", len(subs))
	}
	id := created.SubAccount.SubAccountId
	if _, err := s.CreateSubAccountApiKey(ctx, &exchangev1.CreateSubAccountApiKeyRequest{Account: m, SubAccountId: id,
		Permissions: []exchangev1.ApiKeyPermission{exchangev1.ApiKeyPermission_API_KEY_PERMISSION_WITHDRAW}}); reasonOf(err) != exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT {
		t.Fatalf("withdraw permission: %v", err)
	}
	key, err := s.CreateSubAccountApiKey(ctx, &exchangev1.CreateSubAccountApiKeyRequest{Account: m, SubAccountId: id})
	if err != nil || key.ApiKey == "" || len(key.Permissions) != 3 {
		t.Fatalf("key: %v %v", key, err)
	}
	sub := &exchangev1.AccountRef{ApiKey: key.ApiKey, ApiSecret: key.ApiSecret}
	// The sub-account's key is refused by the broker endpoints with Binance's code, kept raw.
	_, err = s.CreateSubAccount(ctx, &exchangev1.CreateSubAccountRequest{Account: sub, Label: "x"})
	if d := sdk.DetailOf(err); d.GetExchangeCode() != "-2015" {
		t.Fatalf("a sub key as broker: %v", err)
	}

	tr := &exchangev1.SubAccountTransferRequest{Account: m, ToSubAccountId: id, Asset: "USDT", Amount: "1000.5", ClientTransferId: "grant-1"}
	first, err := s.SubAccountTransfer(ctx, tr)
	if err != nil || first.Transfer.TransferId == "" {
		t.Fatalf("transfer: %v %v", first, err)
	}
	second, err := s.SubAccountTransfer(ctx, tr)
	if err != nil || second.Transfer.TransferId != first.Transfer.TransferId {
		t.Fatalf("a repeated client id must return the first transfer: %v %v", second, err)
	}
	_, err = s.SubAccountTransfer(ctx, &exchangev1.SubAccountTransferRequest{Account: m, ToSubAccountId: id, Asset: "USDT",
		Amount: "2", ClientTransferId: "grant-1"})
	if reasonOf(err) != exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID {
		t.Fatalf("a reused client id: %v", err)
	}
	bal, err := s.GetSubAccountBalances(ctx, &exchangev1.GetSubAccountBalancesRequest{Account: m, SubAccountId: id})
	if err != nil || len(bal.Balances) != 1 || bal.Balances[0].Total != "1000.5" {
		t.Fatalf("sub balances: %v %v", bal, err)
	}
	own, err := s.GetBalances(ctx, &exchangev1.GetBalancesRequest{Account: sub, Wallet: exchangev1.WalletType_WALLET_TYPE_TRADING})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, b := range own.Balances {
		found = found || b.Asset == "USDT" && b.Total == "1000.5"
	}
	if !found {
		t.Fatalf("the sub-account's own key does not see its 1000.5 USDT: %v", own.Balances)
	}
	_, err = s.SubAccountTransfer(ctx, &exchangev1.SubAccountTransferRequest{Account: m, FromSubAccountId: id, Asset: "USDT",
		Amount: "5000", ClientTransferId: "back-1"})
	if reasonOf(err) != exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS {
		t.Fatalf("overdraw: %v", err)
	}
	// A lost answer is UNKNOWN_OUTCOME and resolves to exactly one transfer.
	if err := e.Faults().Arm("grant-2", faults.AcceptThenError); err != nil {
		t.Fatal(err)
	}
	_, err = s.SubAccountTransfer(ctx, &exchangev1.SubAccountTransferRequest{Account: m, ToSubAccountId: id, Asset: "USDT",
		Amount: "1", ClientTransferId: "grant-2"})
	if !sdk.IsUnknownOutcome(err) {
		t.Fatalf("want an unknown outcome, got %v", err)
	}
	got, err := s.GetSubAccountTransfer(ctx, &exchangev1.GetSubAccountTransferRequest{Account: m, ClientTransferId: "grant-2"})
	if err != nil || got.Transfer.Amount != "1" {
		t.Fatalf("lookup: %v %v", got, err)
	}
	bal, _ = s.GetSubAccountBalances(ctx, &exchangev1.GetSubAccountBalancesRequest{Account: m, SubAccountId: id})
	if bal.Balances[0].Total != "1001.5" {
		t.Fatalf("after the lost answer the sub-account holds %v", bal.Balances)
	}
	_, err = s.GetSubAccountTransfer(ctx, &exchangev1.GetSubAccountTransferRequest{Account: m, ClientTransferId: "never"})
	if reasonOf(err) != exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND {
		t.Fatalf("unknown client id: %v", err)
	}
	// Futures: a transfer back to the master, found through the sub-account.
	if _, err := s.SubAccountTransfer(ctx, &exchangev1.SubAccountTransferRequest{Account: m, FromSubAccountId: id, Asset: "USDT",
		Amount: "0.5", ClientTransferId: "back-2", Wallet: exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_FUTURES}); err != nil {
		t.Fatal(err)
	}
	got, err = s.GetSubAccountTransfer(ctx, &exchangev1.GetSubAccountTransferRequest{Account: m, ClientTransferId: "back-2",
		SubAccountId: id, Wallet: exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_FUTURES})
	if err != nil || got.Transfer.FromSubAccountId != id || got.Transfer.Amount != "0.5" {
		t.Fatalf("futures lookup: %v %v", got, err)
	}
	_, err = s.SubAccountTransfer(ctx, &exchangev1.SubAccountTransferRequest{Account: m, ToSubAccountId: id, Asset: "USDT",
		Amount: "1", ClientTransferId: "f-1", Wallet: exchangev1.SubAccountWallet_SUB_ACCOUNT_WALLET_FUNDING})
	if reasonOf(err) != exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED {
		t.Fatalf("funding wallet: %v", err)
	}
}

// TestBrokerSubAccountStream: the sub-account's own key opens the account stream; its snapshot holds the granted
// USDT, and a grant made while it runs arrives as a balance update.
func TestBrokerSubAccountStream(t *testing.T) {
	s, _, _ := manualEmuCfg(t, emulator.Config{})
	c, stop, err := sdktest.ServeInProcess(s)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m := demoAccount()
	created, err := c.CreateSubAccount(ctx, &exchangev1.CreateSubAccountRequest{Account: m, Label: "m-stream"})
	if err != nil {
		t.Fatal(err)
	}
	id := created.SubAccount.SubAccountId
	key, err := c.CreateSubAccountApiKey(ctx, &exchangev1.CreateSubAccountApiKeyRequest{Account: m, SubAccountId: id})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SubAccountTransfer(ctx, &exchangev1.SubAccountTransferRequest{Account: m, ToSubAccountId: id, Asset: "USDT",
		Amount: "40", ClientTransferId: "s-1"}); err != nil {
		t.Fatal(err)
	}
	w := watchAccount(t, ctx, c, &exchangev1.AccountRef{ApiKey: key.ApiKey, ApiSecret: key.ApiSecret})
	w.until("a snapshot with the granted 40 USDT", func(ev *exchangev1.AccountEvent) bool {
		for _, b := range ev.GetSnapshot().GetBalances() {
			if b.Asset == "USDT" && b.Total == "40" {
				return true
			}
		}
		return false
	})
	w.until("CONNECTED", isStatus(exchangev1.StreamStatus_STATE_CONNECTED))
	if _, err := c.SubAccountTransfer(ctx, &exchangev1.SubAccountTransferRequest{Account: m, ToSubAccountId: id, Asset: "USDT",
		Amount: "2.5", ClientTransferId: "s-2"}); err != nil {
		t.Fatal(err)
	}
	w.until("the second grant as a balance update", func(ev *exchangev1.AccountEvent) bool {
		b := ev.GetBalance()
		return b != nil && b.Asset == "USDT" && b.Total == "42.5"
	})
}
