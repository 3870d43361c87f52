package sdk

import (
	"context"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// rev11 is a plugin built against revision 1.1: it has none of the broker calls.
type rev11 struct {
	exchangev1.UnimplementedExchangeServer
}

func TestBrokerCallsOfA11PluginAreNotSupported(t *testing.T) {
	c := serveWithRecovery(t, rev11{}, hclog.NewNullLogger())
	ctx := context.Background()
	_, err := c.CreateSubAccount(ctx, &exchangev1.CreateSubAccountRequest{Label: "x"})
	if DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED || OutcomeOf(err) != OutcomeFailed {
		t.Fatalf("CreateSubAccount on a 1.1 plugin: %v", err)
	}
	_, err = c.SubAccountTransfer(ctx, &exchangev1.SubAccountTransferRequest{ClientTransferId: "t"})
	if DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED || IsUnknownOutcome(err) {
		t.Fatalf("SubAccountTransfer on a 1.1 plugin must be a plain NOT_SUPPORTED: %v", err)
	}
	if !IsNonIdempotent("SubAccountTransfer") || !IsNonIdempotent("/exchange.v1.Exchange/CreateSubAccountApiKey") ||
		IsNonIdempotent("CreateSubAccount") || IsNonIdempotent("GetSubAccountTransfer") {
		t.Fatal("SubAccountTransfer and CreateSubAccountApiKey are never retried; CreateSubAccount (by label) and the reads may be")
	}
}

func TestSubAccountKeyPermissions(t *testing.T) {
	p, err := SubAccountKeyPermissions(nil)
	if err != nil || len(p) != 3 || HasPermission(p, exchangev1.ApiKeyPermission_API_KEY_PERMISSION_WITHDRAW) {
		t.Fatalf("defaults: %v %v", p, err)
	}
	p, err = SubAccountKeyPermissions([]exchangev1.ApiKeyPermission{exchangev1.ApiKeyPermission_API_KEY_PERMISSION_SPOT_TRADE,
		exchangev1.ApiKeyPermission_API_KEY_PERMISSION_SPOT_TRADE})
	if err != nil || len(p) != 2 || p[0] != exchangev1.ApiKeyPermission_API_KEY_PERMISSION_READ ||
		p[1] != exchangev1.ApiKeyPermission_API_KEY_PERMISSION_SPOT_TRADE {
		t.Fatalf("spot only: %v %v", p, err)
	}
	for _, bad := range []exchangev1.ApiKeyPermission{exchangev1.ApiKeyPermission_API_KEY_PERMISSION_WITHDRAW, 99} {
		if _, err := SubAccountKeyPermissions([]exchangev1.ApiKeyPermission{bad}); DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT {
			t.Fatalf("%v: %v", bad, err)
		}
	}
}

func TestSameSubAccountTransfer(t *testing.T) {
	rec := &exchangev1.SubAccountTransferRecord{TransferId: "1", ClientTransferId: "c", ToSubAccountId: "s", Asset: "USDT", Amount: "10.5"}
	req := &exchangev1.SubAccountTransferRequest{ClientTransferId: "c", ToSubAccountId: "s", Asset: "USDT", Amount: "10.50"}
	if err := SameSubAccountTransfer(rec, req, decimal.RequireFromString("10.50")); err != nil {
		t.Fatalf("the same movement: %v", err)
	}
	for _, other := range []*exchangev1.SubAccountTransferRequest{
		{ClientTransferId: "c", ToSubAccountId: "s", Asset: "USDT"},
		{ClientTransferId: "c", ToSubAccountId: "t", Asset: "USDT"},
		{ClientTransferId: "c", FromSubAccountId: "s", Asset: "USDT"},
		{ClientTransferId: "c", ToSubAccountId: "s", Asset: "BTC"},
	} {
		amt := decimal.RequireFromString("10.5")
		if other.ToSubAccountId == "s" && other.Asset == "USDT" {
			amt = decimal.RequireFromString("11")
		}
		if err := SameSubAccountTransfer(rec, other, amt); DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID {
			t.Fatalf("%v: %v", other, err)
		}
	}
}
