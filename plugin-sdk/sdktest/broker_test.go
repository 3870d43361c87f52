package sdktest

import (
	"context"
	"testing"

	"github.com/exhub/exhub/plugin-sdk/faults"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

func TestBrokerSubAccounts(t *testing.T) {
	s, c, _ := manual(t)
	ctx := context.Background()
	m := acct("master")
	created := must(c.CreateSubAccount(ctx, &exchangev1.CreateSubAccountRequest{Account: m, Label: "member-1"}))
	if created.Existing || created.SubAccount.SubAccountId == "" {
		t.Fatalf("create: %v", created)
	}
	again := must(c.CreateSubAccount(ctx, &exchangev1.CreateSubAccountRequest{Account: m, Label: "member-1"}))
	if !again.Existing || again.SubAccount.SubAccountId != created.SubAccount.SubAccountId {
		t.Fatalf("a repeated label must return the same sub-account: %v", again)
	}
	_, err := c.CreateSubAccount(ctx, &exchangev1.CreateSubAccountRequest{Account: m, Label: "bad label!"})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)
	id := created.SubAccount.SubAccountId

	_, err = c.CreateSubAccountApiKey(ctx, &exchangev1.CreateSubAccountApiKeyRequest{Account: m, SubAccountId: id,
		Permissions: []exchangev1.ApiKeyPermission{exchangev1.ApiKeyPermission_API_KEY_PERMISSION_WITHDRAW}})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)
	key := must(c.CreateSubAccountApiKey(ctx, &exchangev1.CreateSubAccountApiKeyRequest{Account: m, SubAccountId: id}))
	if key.ApiKey == "" || key.ApiSecret == "" || len(key.Permissions) != 3 ||
		sdk.HasPermission(key.Permissions, exchangev1.ApiKeyPermission_API_KEY_PERMISSION_WITHDRAW) {
		t.Fatalf("key: %v", key)
	}
	sub := &exchangev1.AccountRef{ApiKey: key.ApiKey, ApiSecret: key.ApiSecret}
	// A new sub-account is empty: no faucet.
	if bs := must(c.GetBalances(ctx, &exchangev1.GetBalancesRequest{Account: sub})).Balances; len(bs) != 0 {
		t.Fatalf("a new sub-account holds %v", bs)
	}
	// The sub-account's key is not a broker key.
	_, err = c.CreateSubAccount(ctx, &exchangev1.CreateSubAccountRequest{Account: sub, Label: "x"})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED)
	// Another master does not see this master's sub-account.
	_, err = c.GetSubAccountBalances(ctx, &exchangev1.GetSubAccountBalancesRequest{Account: acct("other"), SubAccountId: id})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)

	masterBefore := d(balanceOf(t, c, m, trading, "USDT").Total)
	tr := &exchangev1.SubAccountTransferRequest{Account: m, ToSubAccountId: id, Asset: "USDT", Amount: "1234.5678",
		ClientTransferId: "grant-1"}
	first := must(c.SubAccountTransfer(ctx, tr)).Transfer
	second := must(c.SubAccountTransfer(ctx, tr)).Transfer
	if first.TransferId != second.TransferId {
		t.Fatal("a repeated client transfer id must return the first transfer")
	}
	if got := d(balanceOf(t, c, sub, trading, "USDT").Total); !got.Equal(d("1234.5678")) {
		t.Fatalf("sub USDT %s, want exactly 1234.5678", got)
	}
	if got := d(balanceOf(t, c, m, trading, "USDT").Total); !got.Equal(masterBefore.Sub(d("1234.5678"))) {
		t.Fatalf("master USDT %s, want %s - 1234.5678", got, masterBefore)
	}
	_, err = c.SubAccountTransfer(ctx, &exchangev1.SubAccountTransferRequest{Account: m, ToSubAccountId: id, Asset: "USDT",
		Amount: "1", ClientTransferId: "grant-1"})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID)
	_, err = c.SubAccountTransfer(ctx, &exchangev1.SubAccountTransferRequest{Account: m, FromSubAccountId: id, Asset: "USDT",
		Amount: "5000", ClientTransferId: "back-1"})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS)
	_, err = c.SubAccountTransfer(ctx, &exchangev1.SubAccountTransferRequest{Account: m, ToSubAccountId: id, Asset: "USDT", Amount: "1"})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)
	bal := must(c.GetSubAccountBalances(ctx, &exchangev1.GetSubAccountBalancesRequest{Account: m, SubAccountId: id}))
	if len(bal.Balances) != 1 || bal.Balances[0].Total != "1234.5678" || bal.Balances[0].Wallet != trading {
		t.Fatalf("sub balances %v", bal.Balances)
	}
	found := must(c.GetSubAccountTransfer(ctx, &exchangev1.GetSubAccountTransferRequest{Account: m, ClientTransferId: "grant-1"}))
	if found.Transfer.TransferId != first.TransferId {
		t.Fatalf("lookup %v", found)
	}
	_, err = c.GetSubAccountTransfer(ctx, &exchangev1.GetSubAccountTransferRequest{Account: m, ClientTransferId: "never"})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND)

	// A lost answer after executing is UNKNOWN_OUTCOME; the lookup finds exactly the one transfer.
	if err := s.Faults().Arm("grant-2", faults.AcceptThenError); err != nil {
		t.Fatal(err)
	}
	_, err = c.SubAccountTransfer(ctx, &exchangev1.SubAccountTransferRequest{Account: m, ToSubAccountId: id, Asset: "USDT",
		Amount: "10", ClientTransferId: "grant-2"})
	if !sdk.IsUnknownOutcome(err) {
		t.Fatalf("want unknown outcome, got %v", err)
	}
	must(c.GetSubAccountTransfer(ctx, &exchangev1.GetSubAccountTransferRequest{Account: m, ClientTransferId: "grant-2"}))
	if got := d(balanceOf(t, c, sub, trading, "USDT").Total); !got.Equal(d("1244.5678")) {
		t.Fatalf("sub USDT %s after the lost answer, want 1244.5678", got)
	}
	// The sub-account trades with its own key.
	if _, err := c.CancelAllOrders(ctx, &exchangev1.CancelAllOrdersRequest{Account: sub, MarketType: spot}); err != nil {
		t.Fatalf("sub key cannot trade: %v", err)
	}
}
