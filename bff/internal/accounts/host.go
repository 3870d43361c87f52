package accounts

import (
	"context"
	"fmt"
	"regexp"
	"sort"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// HostExchanges serves Exchanges from the plugin host.
type HostExchanges struct{ Host *pluginhost.Host }

// Has reports whether a plugin serves the exchange.
func (h HostExchanges) Has(exchange string) bool {
	if h.Host == nil {
		return false
	}
	_, ok := h.Host.Get(exchange)
	return ok
}

// CheckCredentials calls the exchange's plugin once.
func (h HostExchanges) CheckCredentials(ctx context.Context, exchange string, ref *exchangev1.AccountRef) (*exchangev1.CheckCredentialsResponse, error) {
	sup, ok := h.Host.Get(exchange)
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownExchange, exchange)
	}
	var out *exchangev1.CheckCredentialsResponse
	err := sup.Call(ctx, "CheckCredentials", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.CheckCredentials(ctx, &exchangev1.CheckCredentialsRequest{Account: ref})
		out = resp
		return err
	})
	return out, err
}

// HostBroker serves Broker from the plugin host with the operator's master credentials per exchange.
type HostBroker struct {
	host    *pluginhost.Host
	masters map[string]Credentials
	slugs   []string
}

// NewHostBroker is the broker of the exchanges that have both a plugin and master credentials.
func NewHostBroker(host *pluginhost.Host, masters map[string]Credentials) *HostBroker {
	b := &HostBroker{host: host, masters: masters}
	for slug := range masters {
		if _, ok := host.Get(slug); ok {
			b.slugs = append(b.slugs, slug)
		}
	}
	sort.Strings(b.slugs)
	return b
}

// Masters parses the broker section's master credentials (slug -> credentials).
func (c BrokerConfig) Masters() (map[string]Credentials, error) { return c.masters() }

// Exchanges are the exchanges with master credentials whose running plugin announces the broker calls it needs
// (CreateSubAccount and CreateSubAccountApiKey; exchange.v1 1.2). A plugin not running yet, or one without them, is
// left out until it does: its members are provisioned on their next need.
func (b *HostBroker) Exchanges() []string {
	out := make([]string, 0, len(b.slugs))
	for _, slug := range b.slugs {
		sup, _ := b.host.Get(slug)
		br := sup.Describe().GetCapabilities().GetBroker()
		if br.GetCreateSubAccount() && br.GetCreateSubAccountApiKey() {
			out = append(out, slug)
		}
	}
	return out
}

func (b *HostBroker) master(exchange string) (*pluginhost.Supervisor, *exchangev1.AccountRef, error) {
	sup, ok := b.host.Get(exchange)
	m, has := b.masters[exchange]
	if !ok || !has {
		return nil, nil, fmt.Errorf("%w %q for the broker", ErrUnknownExchange, exchange)
	}
	return sup, &exchangev1.AccountRef{AccountId: "broker:" + exchange, ApiKey: m.Key.Reveal(), ApiSecret: m.Secret.Reveal(),
		Passphrase: m.Passphrase.Reveal()}, nil
}

// fits checks an id against a plugin's announced format (none announced: anything).
func fits(f *exchangev1.ClientIdFormat, id string) error {
	if f == nil {
		return nil
	}
	if f.GetMaxLength() > 0 && len(id) > int(f.GetMaxLength()) {
		return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "label", "%q is longer than %d", id, f.GetMaxLength())
	}
	if p := f.GetPattern(); p != "" {
		re, err := regexp.Compile(p)
		if err == nil && !re.MatchString(id) {
			return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "label", "%q does not match %s", id, p)
		}
	}
	return nil
}

// CreateSubAccount calls CreateSubAccount with label as the label and the client request id.
func (b *HostBroker) CreateSubAccount(ctx context.Context, exchange, label string) (string, error) {
	sup, ref, err := b.master(exchange)
	if err != nil {
		return "", err
	}
	if err := fits(sup.Describe().GetCapabilities().GetBroker().GetLabelFormat(), label); err != nil {
		return "", err
	}
	var id string
	err = sup.Call(ctx, "CreateSubAccount", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.CreateSubAccount(ctx, &exchangev1.CreateSubAccountRequest{Account: ref, Label: label, ClientRequestId: label})
		id = resp.GetSubAccount().GetSubAccountId()
		return err
	})
	if err == nil && id == "" {
		return "", sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "CreateSubAccount answered without a sub-account id")
	}
	return id, err
}

// CreateAPIKey calls CreateSubAccountApiKey with the default permissions (read, spot and futures trade).
func (b *HostBroker) CreateAPIKey(ctx context.Context, exchange, subAccountID, label string) (Credentials, Permissions, error) {
	sup, ref, err := b.master(exchange)
	if err != nil {
		return Credentials{}, Permissions{}, err
	}
	var resp *exchangev1.CreateSubAccountApiKeyResponse
	err = sup.Call(ctx, "CreateSubAccountApiKey", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		r, err := c.CreateSubAccountApiKey(ctx, &exchangev1.CreateSubAccountApiKeyRequest{Account: ref, SubAccountId: subAccountID,
			Label: label})
		resp = r
		return err
	})
	if err != nil {
		return Credentials{}, Permissions{}, err
	}
	perms := resp.GetPermissions()
	if sdk.HasPermission(perms, exchangev1.ApiKeyPermission_API_KEY_PERMISSION_WITHDRAW) {
		return Credentials{}, Permissions{}, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL,
			"the exchange made a sub-account key with withdraw permission")
	}
	if resp.GetApiKey() == "" || resp.GetApiSecret() == "" {
		return Credentials{}, Permissions{}, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "CreateSubAccountApiKey answered without a key")
	}
	p := Permissions{Read: true,
		Trade: len(perms) == 0 || sdk.HasPermission(perms, exchangev1.ApiKeyPermission_API_KEY_PERMISSION_SPOT_TRADE) ||
			sdk.HasPermission(perms, exchangev1.ApiKeyPermission_API_KEY_PERMISSION_FUTURES_TRADE)}
	return Credentials{Key: secret.New(resp.GetApiKey()), Secret: secret.New(resp.GetApiSecret()), Passphrase: secret.New(resp.GetPassphrase())}, p, nil
}

// Transfer calls SubAccountTransfer from the master to the sub-account's trading wallet.
func (b *HostBroker) Transfer(ctx context.Context, exchange, subAccountID, asset string, amount decimal.Decimal, transferID string) error {
	sup, ref, err := b.master(exchange)
	if err != nil {
		return err
	}
	var status exchangev1.TransferStatus
	err = sup.Call(ctx, "SubAccountTransfer", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.SubAccountTransfer(ctx, &exchangev1.SubAccountTransferRequest{Account: ref, ToSubAccountId: subAccountID,
			Asset: asset, Amount: amount.String(), ClientTransferId: transferID})
		status = resp.GetTransfer().GetStatus()
		return err
	})
	if err == nil && status == exchangev1.TransferStatus_TRANSFER_STATUS_FAILED {
		return sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED, "the exchange reports transfer %s failed", transferID)
	}
	return err
}

// FindTransfer calls GetSubAccountTransfer; ORDER_NOT_FOUND or a failed transfer means the money did not move.
func (b *HostBroker) FindTransfer(ctx context.Context, exchange, subAccountID, transferID string) (bool, error) {
	sup, ref, err := b.master(exchange)
	if err != nil {
		return false, err
	}
	var status exchangev1.TransferStatus
	err = sup.Call(ctx, "GetSubAccountTransfer", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.GetSubAccountTransfer(ctx, &exchangev1.GetSubAccountTransferRequest{Account: ref,
			ClientTransferId: transferID, SubAccountId: subAccountID})
		status = resp.GetTransfer().GetStatus()
		return err
	})
	if sdk.DetailOf(err).GetReason() == exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return status != exchangev1.TransferStatus_TRANSFER_STATUS_FAILED, nil
}
