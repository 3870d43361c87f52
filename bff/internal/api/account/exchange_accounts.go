package account

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/exhub/exhub/bff/internal/accounts"
	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/config/secret"
)

// AccountsTag is the OpenAPI tag of the exchange account routes.
const AccountsTag = "accounts"

// Machine codes of the exchange account problems.
const (
	CodeCredentialsRefused  = "credentials_refused"
	CodeWithdrawPermission  = "withdraw_permission"
	CodeAccountExists       = "account_exists"
	CodeExchangeUnavailable = "exchange_unavailable"
	CodeUnknownExchange     = "unknown_exchange"
	CodeBrokerAccount       = "broker_account"
	CodeAccountsUnavailable = "accounts_unavailable"
)

// AccountPermissions are what the account's key could do when it was linked or made (never withdraw: such keys
// are refused).
type AccountPermissions struct {
	Read     bool `json:"read"`
	Trade    bool `json:"trade"`
	Transfer bool `json:"transfer" doc:"Moves between the account's own wallets"`
}

// ExchangeAccount is one of the member's exchange accounts. The key, secret and passphrase are never returned.
type ExchangeAccount struct {
	ID           string             `json:"id"`
	Exchange     string             `json:"exchange" doc:"Exchange slug"`
	Mode         string             `json:"mode" enum:"broker,linked" doc:"broker: a sub-account exhub made for the member; linked: the member's own API key"`
	Name         string             `json:"name"`
	SubAccountID string             `json:"sub_account_id,omitempty" doc:"The exchange's sub-account id (broker accounts)"`
	KeyLast4     string             `json:"key_last4" doc:"The API key's last four characters"`
	Permissions  AccountPermissions `json:"permissions"`
	Status       string             `json:"status" enum:"provisioning,active,failed"`
	StatusReason string             `json:"status_reason,omitempty" doc:"Why provisioning failed"`
	CreatedAt    time.Time          `json:"created_at"`
	UpdatedAt    time.Time          `json:"updated_at"`
}

// ExchangeAccounts is the member's accounts by exchange.
type ExchangeAccounts struct {
	Accounts []ExchangeAccount `json:"accounts"`
	// Broker says whether this server makes broker accounts (missing ones are being made).
	Broker bool `json:"broker"`
}

// LinkAccount is a member's own API key to link. The key must read and trade and must not withdraw.
type LinkAccount struct {
	Exchange   string `json:"exchange" pattern:"^[a-z0-9][a-z0-9-]{0,31}$" doc:"Exchange slug"`
	Name       string `json:"name,omitempty" doc:"A name for the account (default: the exchange slug); 1 to 64 characters"`
	APIKey     string `json:"api_key" doc:"The API key (at most 256 characters)"`
	APISecret  string `json:"api_secret" doc:"The API secret (at most 512 characters)"`
	Passphrase string `json:"passphrase,omitempty" doc:"The key's passphrase where the exchange has one (OKX)"`
}

var slugRe = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)

type accountPath struct {
	ID string `path:"id" maxLength:"64" doc:"The account id"`
}

// created is a 201 answer.
type created[T any] struct {
	Status       int
	CacheControl string `header:"Cache-Control"`
	Body         T
}

// noContent is a 204 answer.
type noContent struct {
	CacheControl string `header:"Cache-Control"`
}

func (r *routes) accountsOp(id, method, path, summary, description string, errs ...int) huma.Operation {
	op := r.op(id, method, path, summary, description, errs...)
	op.Tags = []string{AccountsTag}
	return op
}

func (r *routes) registerExchangeAccounts(api huma.API) {
	const base = "/api/v1/accounts"
	huma.Register(api, r.accountsOp("list-exchange-accounts", http.MethodGet, base, "The member's exchange accounts",
		"One account per exchange: broker accounts exhub made for the member and linked API keys. Never the key, "+
			"secret or passphrase: the key's last four characters only."), r.listExchangeAccounts)
	link := r.accountsOp("link-exchange-account", http.MethodPost, base, "Link an API key",
		"Checks the key with the exchange first. Refused: a key with withdraw permission (422 withdraw_permission), "+
			"a key that cannot read and trade or that the exchange rejects (422 credentials_refused), an unknown "+
			"exchange (422 unknown_exchange), a second account on the exchange (409 account_exists); 503 "+
			"exchange_unavailable when the exchange does not answer. The key is stored encrypted.",
		http.StatusConflict, http.StatusUnprocessableEntity)
	link.DefaultStatus = http.StatusCreated
	link.SkipValidateBody = true
	huma.Register(api, link, r.linkExchangeAccount)
	// huma's parse and validation errors quote the offending value (the whole body for a missing property or a
	// wrong type), which would send a key or secret back. The body is read raw and checked in Go by messages that
	// never hold a value; the document still shows its schema.
	if post := api.OpenAPI().Paths[base].Post; post != nil && post.RequestBody != nil {
		schema := api.OpenAPI().Components.Schemas.Schema(reflect.TypeFor[LinkAccount](), true, "LinkAccount")
		post.RequestBody.Required = true
		post.RequestBody.Content = map[string]*huma.MediaType{"application/json": {Schema: schema}}
	}
	unlink := r.accountsOp("unlink-exchange-account", http.MethodDelete, base+"/{id}", "Unlink an API key",
		"Deletes a linked account and its encrypted key. 404 for an account that is not the member's; 409 "+
			"broker_account for a broker account.", http.StatusNotFound, http.StatusConflict)
	unlink.DefaultStatus = http.StatusNoContent
	huma.Register(api, unlink, r.unlinkExchangeAccount)
}

func exchangeAccountOf(a accounts.Account) ExchangeAccount {
	return ExchangeAccount{ID: a.ID, Exchange: a.Exchange, Mode: a.Mode, Name: a.Name, SubAccountID: a.SubAccountID,
		KeyLast4: a.KeyLast4, Permissions: AccountPermissions{Read: a.Permissions.Read, Trade: a.Permissions.Trade,
			Transfer: a.Permissions.Transfer}, Status: a.Status, StatusReason: a.StatusReason,
		CreatedAt: a.CreatedAt.UTC(), UpdatedAt: a.UpdatedAt.UTC()}
}

// accountsMember is the session's member (row ensured) when the accounts service is there.
func (r *routes) accountsMember(ctx context.Context) (*auth.Member, error) {
	if r.Accounts == nil {
		if _, ok := auth.MemberFrom(ctx); !ok {
			return nil, auth.Unauthorized()
		}
		return nil, problem(http.StatusServiceUnavailable, CodeAccountsUnavailable, "exchange accounts are not configured on this server")
	}
	m, _, err := r.member(ctx)
	return m, err
}

func (r *routes) listExchangeAccounts(ctx context.Context, _ *struct{}) (*reply[ExchangeAccounts], error) {
	m, err := r.accountsMember(ctx)
	if err != nil {
		return nil, err
	}
	list, err := r.Accounts.List(ctx, m.ID)
	if err != nil {
		return nil, r.accountsFail(ctx, err)
	}
	out := ExchangeAccounts{Accounts: make([]ExchangeAccount, 0, len(list)), Broker: r.Accounts.BrokerMode()}
	for _, a := range list {
		out.Accounts = append(out.Accounts, exchangeAccountOf(a))
	}
	return ok(out), nil
}

// linkInput is the raw body of a link (see registerExchangeAccounts).
type linkInput struct {
	RawBody []byte `contentType:"application/json"`
}

func (r *routes) linkExchangeAccount(ctx context.Context, in *linkInput) (*created[ExchangeAccount], error) {
	m, err := r.accountsMember(ctx)
	if err != nil {
		return nil, err
	}
	var b LinkAccount
	dec := json.NewDecoder(bytes.NewReader(in.RawBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil || dec.More() {
		p := problem(http.StatusUnprocessableEntity, CodeInvalid,
			"the body must be one JSON object with the string properties exchange, name, api_key, api_secret and passphrase")
		p.Errors = []*huma.ErrorDetail{{Message: "expected a link object", Location: "body"}}
		return nil, p
	}
	if !slugRe.MatchString(b.Exchange) {
		p := problem(http.StatusUnprocessableEntity, CodeInvalid, "exchange must be an exchange slug such as binance")
		p.Errors = []*huma.ErrorDetail{{Message: "expected an exchange slug", Location: "body.exchange"}}
		return nil, p
	}
	a, err := r.Accounts.Link(ctx, m.ID, accounts.LinkInput{Exchange: b.Exchange, Name: b.Name, Key: secret.New(b.APIKey),
		Secret: secret.New(b.APISecret), Passphrase: secret.New(b.Passphrase)})
	if err != nil {
		return nil, r.accountsFail(ctx, err)
	}
	return &created[ExchangeAccount]{Status: http.StatusCreated, CacheControl: noStore, Body: exchangeAccountOf(a)}, nil
}

func (r *routes) unlinkExchangeAccount(ctx context.Context, in *accountPath) (*noContent, error) {
	m, err := r.accountsMember(ctx)
	if err != nil {
		return nil, err
	}
	if err := r.Accounts.Unlink(ctx, m.ID, in.ID); err != nil {
		return nil, r.accountsFail(ctx, err)
	}
	return &noContent{CacheControl: noStore}, nil
}

// accountsFail maps the accounts service's errors; the detail after the sentinel is kept (it never holds a
// credential: the service scrubs the exchange's messages).
func (r *routes) accountsFail(ctx context.Context, err error) error {
	detail := func(sentinel error) string {
		s := err.Error()
		if i := strings.Index(s, sentinel.Error()); i >= 0 {
			rest := strings.TrimPrefix(s[i+len(sentinel.Error()):], ":")
			if rest = strings.TrimSpace(rest); rest != "" {
				return sentinel.Error() + ": " + rest
			}
		}
		return sentinel.Error()
	}
	switch {
	case errors.Is(err, accounts.ErrNotFound):
		return problem(http.StatusNotFound, CodeNotFound, "no such account")
	case errors.Is(err, accounts.ErrExists):
		return problem(http.StatusConflict, CodeAccountExists, "you already have an account on this exchange: unlink it first")
	case errors.Is(err, accounts.ErrBrokerAccount):
		return problem(http.StatusConflict, CodeBrokerAccount, "this account was made for you by exhub and cannot be unlinked")
	case errors.Is(err, accounts.ErrWithdrawPermission):
		return problem(http.StatusUnprocessableEntity, CodeWithdrawPermission,
			"this API key can withdraw funds; exhub only accepts keys without withdraw permission. Create a key with reading and trading only.")
	case errors.Is(err, accounts.ErrCredentialsRefused):
		return problem(http.StatusUnprocessableEntity, CodeCredentialsRefused, detail(accounts.ErrCredentialsRefused))
	case errors.Is(err, accounts.ErrUnknownExchange):
		p := problem(http.StatusUnprocessableEntity, CodeUnknownExchange, "no such exchange")
		p.Errors = []*huma.ErrorDetail{{Message: "unknown exchange", Location: "body.exchange"}}
		return p
	case errors.Is(err, accounts.ErrInvalid):
		p := problem(http.StatusUnprocessableEntity, CodeInvalid, detail(accounts.ErrInvalid))
		for _, f := range []string{"api_key", "api_secret", "passphrase", "name"} {
			if strings.Contains(err.Error(), ": "+f+" ") {
				p.Errors = []*huma.ErrorDetail{{Message: detail(accounts.ErrInvalid), Location: "body." + f}}
				break
			}
		}
		return p
	case errors.Is(err, accounts.ErrExchangeUnavailable):
		p := problem(http.StatusServiceUnavailable, CodeExchangeUnavailable, "the exchange did not answer; try again in a moment")
		p.RetryAfter = 5 * time.Second
		return p
	}
	return r.fail(ctx, err)
}
