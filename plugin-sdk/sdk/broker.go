package sdk

import (
	"slices"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// SDKVersion is the newest exchange.v1 revision this SDK describes (DescribeResponse.sdk_version).
const SDKVersion = "1.2"

// DefaultSubAccountKeyPermissions are what CreateSubAccountApiKey grants when the request names none: read, spot
// trade and futures trade. Withdraw is never granted.
func DefaultSubAccountKeyPermissions() []exchangev1.ApiKeyPermission {
	return []exchangev1.ApiKeyPermission{
		exchangev1.ApiKeyPermission_API_KEY_PERMISSION_READ,
		exchangev1.ApiKeyPermission_API_KEY_PERMISSION_SPOT_TRADE,
		exchangev1.ApiKeyPermission_API_KEY_PERMISSION_FUTURES_TRADE,
	}
}

// SubAccountKeyPermissions checks the permissions a CreateSubAccountApiKey request asks for and returns them
// sorted and deduplicated, READ always included (an exchange key can always read). Empty asks for the defaults.
// WITHDRAW or an unknown value is INVALID_ARGUMENT: a broker key never withdraws.
func SubAccountKeyPermissions(in []exchangev1.ApiKeyPermission) ([]exchangev1.ApiKeyPermission, error) {
	if len(in) == 0 {
		return DefaultSubAccountKeyPermissions(), nil
	}
	out := []exchangev1.ApiKeyPermission{exchangev1.ApiKeyPermission_API_KEY_PERMISSION_READ}
	for _, p := range in {
		switch p {
		case exchangev1.ApiKeyPermission_API_KEY_PERMISSION_READ, exchangev1.ApiKeyPermission_API_KEY_PERMISSION_SPOT_TRADE,
			exchangev1.ApiKeyPermission_API_KEY_PERMISSION_FUTURES_TRADE:
			out = append(out, p)
		case exchangev1.ApiKeyPermission_API_KEY_PERMISSION_WITHDRAW:
			return nil, FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "permissions",
				"a sub-account key is never given withdraw permission")
		default:
			return nil, FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "permissions",
				"unknown permission %v", p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// HasPermission reports whether perms holds p.
func HasPermission(perms []exchangev1.ApiKeyPermission, p exchangev1.ApiKeyPermission) bool {
	return slices.Contains(perms, p)
}

// SameSubAccountTransfer compares a transfer found by client id with a new request carrying the same id: nil when
// they are the same movement (the found one is the answer), DUPLICATE_CLIENT_ORDER_ID when the parameters differ.
// amount is the request's parsed amount; the record's amount is compared as a decimal.
func SameSubAccountTransfer(rec *exchangev1.SubAccountTransferRecord, req *exchangev1.SubAccountTransferRequest, amount decimal.Decimal) error {
	got, err := decimal.NewFromString(rec.GetAmount())
	same := err == nil && got.Equal(amount) && rec.GetAsset() == req.GetAsset() &&
		rec.GetFromSubAccountId() == req.GetFromSubAccountId() && rec.GetToSubAccountId() == req.GetToSubAccountId()
	if !same {
		return FieldError(exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID, "client_transfer_id",
			"client transfer id %q was used for another transfer (%s %s from %q to %q)", req.GetClientTransferId(),
			rec.GetAmount(), rec.GetAsset(), rec.GetFromSubAccountId(), rec.GetToSubAccountId())
	}
	return nil
}
