package okx_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/exhub/exhub/plugin-sdk/faults"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// TestBrokerAgainstEmulator drives the four broker calls over the emulator's non-disclosed broker endpoints.
func TestBrokerAgainstEmulator(t *testing.T) {
	w := shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m := w.acct
	name := fmt.Sprintf("brk%d", time.Now().UnixNano()%1_000_000_000)
	created, err := w.c.CreateSubAccount(ctx, &exchangev1.CreateSubAccountRequest{Account: m, Label: name})
	if err != nil || created.Existing || created.SubAccount.SubAccountId != name {
		t.Fatalf("create: %v %v", created, err)
	}
	again, err := w.c.CreateSubAccount(ctx, &exchangev1.CreateSubAccountRequest{Account: m, Label: name})
	if err != nil || !again.Existing {
		t.Fatalf("a repeated name must find the first sub-account: %v %v", again, err)
	}
	if _, err := w.c.CreateSubAccount(ctx, &exchangev1.CreateSubAccountRequest{Account: m, Label: "123456"}); sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT {
		t.Fatalf("an all-digit name: %v", err)
	}
	key, err := w.c.CreateSubAccountApiKey(ctx, &exchangev1.CreateSubAccountApiKeyRequest{Account: m, SubAccountId: name})
	if err != nil || key.Passphrase == "" || len(key.Permissions) != 3 || sdk.HasPermission(key.Permissions, exchangev1.ApiKeyPermission_API_KEY_PERMISSION_WITHDRAW) {
		t.Fatalf("key: %v %v", key, err)
	}
	sub := &exchangev1.AccountRef{ApiKey: key.ApiKey, ApiSecret: key.ApiSecret, Passphrase: key.Passphrase}
	// The sub-account's key is refused by the broker endpoints, OKX's code kept raw.
	_, err = w.c.CreateSubAccount(ctx, &exchangev1.CreateSubAccountRequest{Account: sub, Label: name + "x"})
	if d := sdk.DetailOf(err); d.GetReason() != exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED || d.GetExchangeCode() != "59608" {
		t.Fatalf("a sub key as broker: %v", err)
	}
	cid := name + "g1"
	tr := &exchangev1.SubAccountTransferRequest{Account: m, ToSubAccountId: name, Asset: "USDT", Amount: "100.12345678", ClientTransferId: cid}
	first, err := w.c.SubAccountTransfer(ctx, tr)
	if err != nil || first.Transfer.Status != exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS {
		t.Fatalf("transfer: %v %v", first, err)
	}
	second, err := w.c.SubAccountTransfer(ctx, tr)
	if err != nil || second.Transfer.TransferId != first.Transfer.TransferId {
		t.Fatalf("a repeated client id must return the first transfer: %v %v", second, err)
	}
	bal, err := w.c.GetSubAccountBalances(ctx, &exchangev1.GetSubAccountBalancesRequest{Account: m, SubAccountId: name,
		Wallet: exchangev1.WalletType_WALLET_TYPE_TRADING})
	if err != nil || len(bal.Balances) != 1 || bal.Balances[0].Total != "100.12345678" {
		t.Fatalf("sub balances: %v %v", bal, err)
	}
	// The sub-account's own key reads the same balance on the ordinary endpoint.
	own, err := w.c.GetBalances(ctx, &exchangev1.GetBalancesRequest{Account: sub, Wallet: exchangev1.WalletType_WALLET_TYPE_TRADING})
	if err != nil || len(own.Balances) != 1 || own.Balances[0].Total != "100.12345678" {
		t.Fatalf("own balances: %v %v", own, err)
	}
	// The sub-account's key opens the account stream: the snapshot holds the grant, and a grant made while it runs
	// arrives as a balance update.
	st, err := w.c.StreamAccount(ctx, &exchangev1.StreamAccountRequest{Account: sub})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := st.Recv()
	if err != nil || snap.GetSnapshot() == nil {
		t.Fatalf("first event %v %v, want a snapshot", snap, err)
	}
	if bs := snap.GetSnapshot().GetBalances(); len(bs) == 0 || !hasBalance(bs, "USDT", "100.12345678") {
		t.Fatalf("the snapshot does not hold the grant: %v", bs)
	}
	if _, err := w.c.SubAccountTransfer(ctx, &exchangev1.SubAccountTransferRequest{Account: m, ToSubAccountId: name, Asset: "USDT",
		Amount: "0.5", ClientTransferId: name + "g0"}); err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := st.Recv() // bounded by ctx
		if err != nil {
			t.Fatalf("waiting for the second grant on the stream: %v", err)
		}
		if b := ev.GetBalance(); b != nil && b.Asset == "USDT" && b.Total == "100.62345678" {
			break
		}
	}
	// A lost answer is UNKNOWN_OUTCOME and resolves to exactly one transfer.
	if err := w.emu.Faults().Arm(name+"g2", faults.AcceptThenError); err != nil {
		t.Fatal(err)
	}
	_, err = w.c.SubAccountTransfer(ctx, &exchangev1.SubAccountTransferRequest{Account: m, ToSubAccountId: name, Asset: "USDT",
		Amount: "1", ClientTransferId: name + "g2"})
	if !sdk.IsUnknownOutcome(err) {
		t.Fatalf("want an unknown outcome, got %v", err)
	}
	got, err := w.c.GetSubAccountTransfer(ctx, &exchangev1.GetSubAccountTransferRequest{Account: m, ClientTransferId: name + "g2"})
	if err != nil || got.Transfer.Amount != "1" || got.Transfer.ToSubAccountId != name {
		t.Fatalf("lookup: %v %v", got, err)
	}
	back, err := w.c.SubAccountTransfer(ctx, &exchangev1.SubAccountTransferRequest{Account: m, FromSubAccountId: name, Asset: "USDT",
		Amount: "101.62345678", ClientTransferId: name + "b1"})
	if err != nil || back.Transfer.FromSubAccountId != name {
		t.Fatalf("back to the master: %v %v", back, err)
	}
	bal, err = w.c.GetSubAccountBalances(ctx, &exchangev1.GetSubAccountBalancesRequest{Account: m, SubAccountId: name})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bal.Balances {
		if b.Asset == "USDT" && b.Total != "0" {
			t.Fatalf("after returning everything the sub-account holds %v", bal.Balances)
		}
	}
	_, err = w.c.GetSubAccountTransfer(ctx, &exchangev1.GetSubAccountTransferRequest{Account: m, ClientTransferId: name + "zz"})
	if sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND {
		t.Fatalf("unknown client id: %v", err)
	}
	_, err = w.c.SubAccountTransfer(ctx, &exchangev1.SubAccountTransferRequest{Account: m, FromSubAccountId: name, ToSubAccountId: name + "x",
		Asset: "USDT", Amount: "1", ClientTransferId: name + "s1"})
	if sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED {
		t.Fatalf("sub to sub: %v", err)
	}
}

func hasBalance(bs []*exchangev1.Balance, asset, total string) bool {
	for _, b := range bs {
		if b.Asset == asset && b.Total == total {
			return true
		}
	}
	return false
}
