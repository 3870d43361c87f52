package account_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/exhub/exhub/bff/internal/accounts"
	"github.com/exhub/exhub/bff/internal/api/account"
	"github.com/exhub/exhub/bff/internal/api/account/accounttest"
	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/store"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// checkByKey stands in for the exchange's CheckCredentials: keys starting with "withdraw" may withdraw,
// "readonly" cannot trade, "rejected" are refused by the exchange with a message that echoes the key.
type checkByKey struct{}

func (checkByKey) Has(ex string) bool { return ex == "binance" || ex == "okx" }

func (checkByKey) CheckCredentials(_ context.Context, _ string, ref *exchangev1.AccountRef) (*exchangev1.CheckCredentialsResponse, error) {
	k := ref.GetApiKey()
	switch {
	case strings.HasPrefix(k, "withdraw"):
		return &exchangev1.CheckCredentialsResponse{CanRead: true, CanTrade: true, CanWithdraw: true}, nil
	case strings.HasPrefix(k, "readonly"):
		return &exchangev1.CheckCredentialsResponse{CanRead: true}, nil
	case strings.HasPrefix(k, "rejected"):
		return nil, sdk.ExchangeError(exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED, "50113", "Invalid sign for key "+k)
	case strings.HasPrefix(k, "down"):
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "maintenance")
	}
	return &exchangev1.CheckCredentialsResponse{CanRead: true, CanTrade: true}, nil
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// seen keeps every answer (headers and body) for the planted-secret check.
type seen struct {
	mu  sync.Mutex
	all strings.Builder
}

func (s *seen) keep(resp *httptest.ResponseRecorder) *httptest.ResponseRecorder {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range resp.Header() {
		s.all.WriteString(k + ": " + strings.Join(v, ",") + "\n")
	}
	s.all.Write(resp.Body.Bytes())
	s.all.WriteString("\n")
	return resp
}

func TestExchangeAccountsAreOwnAndSecretsNeverShow(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, st *store.Store, dataDir string) {
		b := startBFF(t, st, dataDir)
		logs := &syncBuffer{}
		log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		raw := make([]byte, accounts.KeySize)
		for i := range raw {
			raw[i] = byte(i * 7)
		}
		keys, err := accounts.NewKeyring("k1", map[string][]byte{"k1": raw})
		if err != nil {
			t.Fatal(err)
		}
		svc, err := accounts.New(accounts.Options{Store: st, Keyring: keys, Exchanges: checkByKey{}, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		api := accounttest.New(t, account.Deps{Auth: b.checker, Members: b.members, Accounts: svc, Logger: log})
		alice, bob := b.signUp("alice"), b.signUp("bob")
		var out seen
		get := func(s *session) *httptest.ResponseRecorder {
			return out.keep(api.Get("/api/v1/accounts", s.read()))
		}
		post := func(s *session, body any) *httptest.ResponseRecorder {
			return out.keep(api.Post("/api/v1/accounts", with(s.write(), body)...))
		}
		del := func(s *session, id string) *httptest.ResponseRecorder {
			return out.keep(api.Delete("/api/v1/accounts/"+id, s.write()...))
		}

		const (
			plantedKey    = "PLANTEDKEYq7Rw2Lx9"
			plantedSecret = "PLANTEDSECRETz3Kp8Vb"
			plantedPass   = "PLANTEDPASSm4Tn"
		)
		var list account.ExchangeAccounts
		expect(t, get(alice), 200, "", &list)
		if len(list.Accounts) != 0 || list.Broker {
			t.Fatalf("empty list %+v", list)
		}
		// Without the CSRF token or a session: refused.
		expect(t, out.keep(api.Post("/api/v1/accounts", alice.read(), origin, map[string]any{"exchange": "okx",
			"api_key": plantedKey, "api_secret": plantedSecret})), http.StatusForbidden, "", nil)
		expect(t, out.keep(api.Get("/api/v1/accounts")), http.StatusUnauthorized, "unauthorized", nil)

		var acc account.ExchangeAccount
		expect(t, post(alice, map[string]any{"exchange": "okx", "name": "trading", "api_key": plantedKey,
			"api_secret": plantedSecret, "passphrase": plantedPass}), http.StatusCreated, "", &acc)
		if acc.Exchange != "okx" || acc.Mode != "linked" || acc.KeyLast4 != "2Lx9" || acc.Status != "active" ||
			!acc.Permissions.Read || !acc.Permissions.Trade || acc.Name != "trading" || acc.ID == "" {
			t.Fatalf("linked %+v", acc)
		}
		expect(t, get(alice), 200, "", &list)
		if len(list.Accounts) != 1 || list.Accounts[0].ID != acc.ID {
			t.Fatalf("alice's list %+v", list)
		}
		// One account per exchange.
		expect(t, post(alice, map[string]any{"exchange": "okx", "api_key": "another-key-1", "api_secret": "s"}),
			http.StatusConflict, "account_exists", nil)
		// Refusals and bad input.
		expect(t, post(alice, map[string]any{"exchange": "binance", "api_key": "withdraw-" + plantedKey, "api_secret": plantedSecret}),
			http.StatusUnprocessableEntity, "withdraw_permission", nil)
		expect(t, post(alice, map[string]any{"exchange": "binance", "api_key": "readonly-1", "api_secret": plantedSecret}),
			http.StatusUnprocessableEntity, "credentials_refused", nil)
		var p problemDoc
		expect(t, post(alice, map[string]any{"exchange": "binance", "api_key": "rejected-" + plantedKey, "api_secret": plantedSecret}),
			http.StatusUnprocessableEntity, "credentials_refused", &p)
		if !strings.Contains(p.Detail, "Invalid sign") {
			t.Fatalf("the exchange's reason is lost: %+v", p)
		}
		down := post(alice, map[string]any{"exchange": "binance", "api_key": "down-1", "api_secret": plantedSecret})
		expect(t, down, http.StatusServiceUnavailable, "exchange_unavailable", nil)
		if down.Header().Get("Retry-After") != "5" {
			t.Fatalf("Retry-After %q", down.Header().Get("Retry-After"))
		}
		expect(t, post(alice, map[string]any{"exchange": "kraken", "api_key": plantedKey, "api_secret": plantedSecret}),
			http.StatusUnprocessableEntity, "unknown_exchange", nil)
		expect(t, post(alice, map[string]any{"exchange": "Bin ance", "api_key": plantedKey, "api_secret": plantedSecret}),
			http.StatusUnprocessableEntity, "", nil)
		expect(t, post(alice, map[string]any{"exchange": "binance", "api_secret": plantedSecret}),
			http.StatusUnprocessableEntity, "", nil)
		expect(t, post(alice, map[string]any{"exchange": "binance", "api_key": plantedKey + " " + plantedKey, "api_secret": plantedSecret}),
			http.StatusUnprocessableEntity, "invalid", nil)
		expect(t, post(alice, map[string]any{"exchange": "binance", "api_key": plantedKey, "api_secret": strings.Repeat(plantedSecret, 40)}),
			http.StatusUnprocessableEntity, "invalid", nil)
		// Wrong types and stray properties: refused without quoting the body.
		if resp := post(alice, map[string]any{"exchange": "binance", "api_key": 12345, "api_secret": plantedSecret}); resp.Code < 400 || resp.Code >= 500 {
			t.Fatalf("api_key as a number: %d %s", resp.Code, resp.Body)
		}
		expect(t, out.keep(api.Post("/api/v1/accounts", with(alice.write(), "Content-Type: application/json",
			strings.NewReader(`{"exchange":"binance","api_key":"`+plantedKey+`","api_secret":"`+plantedSecret+`"`))...)),
			http.StatusUnprocessableEntity, "invalid", nil)
		expect(t, post(alice, map[string]any{"exchange": "binance", "apikey": plantedKey, "api_secret": plantedSecret}),
			http.StatusUnprocessableEntity, "invalid", nil)
		expect(t, get(alice), 200, "", &list)
		if len(list.Accounts) != 1 {
			t.Fatalf("a refused key was stored: %+v", list)
		}

		// Bob can neither list, use nor unlink Alice's account.
		expect(t, get(bob), 200, "", &list)
		if len(list.Accounts) != 0 {
			t.Fatalf("bob sees %+v", list)
		}
		expect(t, del(bob, acc.ID), http.StatusNotFound, "not_found", nil)
		if _, err := svc.AccountRef(context.Background(), bob.id(), "okx"); !errors.Is(err, accounts.ErrNoAccount) {
			t.Fatalf("bob uses okx: %v", err)
		}
		ref, err := svc.AccountRef(context.Background(), alice.id(), "okx")
		if err != nil || ref.GetApiKey() != plantedKey || ref.GetApiSecret() != plantedSecret || ref.GetPassphrase() != plantedPass ||
			ref.GetAccountId() != acc.ID {
			t.Fatalf("alice's ref: %v", err)
		}
		// Bob links his own key on the same exchange; Alice's stays hers.
		var bobs account.ExchangeAccount
		expect(t, post(bob, map[string]any{"exchange": "okx", "api_key": "bob-key-0001", "api_secret": "bob-secret"}), http.StatusCreated, "", &bobs)
		expect(t, del(alice, bobs.ID), http.StatusNotFound, "not_found", nil)
		expect(t, del(bob, "not-an-id"), http.StatusNotFound, "not_found", nil)

		// At rest the row holds no credential in the clear (nor base64 of one).
		row, err := st.ExchangeAccount(context.Background(), alice.id(), acc.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{plantedKey, plantedSecret, plantedPass} {
			if strings.Contains(row.Sealed, v) || strings.Contains(row.Sealed, base64.StdEncoding.EncodeToString([]byte(v))) {
				t.Fatalf("sealed row shows %s", v)
			}
		}

		// Unlink: the row and its sealed secret are gone; the trading path finds nothing.
		resp := del(alice, acc.ID)
		if resp.Code != http.StatusNoContent {
			t.Fatalf("unlink %d %s", resp.Code, resp.Body)
		}
		expect(t, del(alice, acc.ID), http.StatusNotFound, "not_found", nil)
		if _, err := st.ExchangeAccount(context.Background(), alice.id(), acc.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("row after unlink: %v", err)
		}
		if _, err := svc.AccountRef(context.Background(), alice.id(), "okx"); !errors.Is(err, accounts.ErrNoAccount) {
			t.Fatalf("alice's ref after unlink: %v", err)
		}
		expect(t, get(bob), 200, "", &list)
		if len(list.Accounts) != 1 || list.Accounts[0].ID != bobs.ID {
			t.Fatalf("bob's list after alice's unlink %+v", list)
		}

		// The planted credentials appear in no answer and no log line.
		answers, logged := out.all.String(), logs.String()
		if !strings.Contains(logged, "exchange account linked") {
			t.Fatalf("the link was not logged:\n%s", logged)
		}
		for _, v := range []string{plantedKey, plantedSecret, plantedPass, "bob-secret"} {
			if strings.Contains(answers, v) {
				t.Errorf("an answer shows %s:\n%s", v, answers)
			}
			if strings.Contains(logged, v) {
				t.Errorf("a log line shows %s:\n%s", v, logged)
			}
		}
	})
}

// The link body is documented with its schema although it is read raw.
func TestLinkBodyInOpenAPI(t *testing.T) {
	cfg := auth.Defaults()
	cfg.CSRFKey = secret.New("0123456789abcdef0123456789abcdef")
	checker, err := auth.NewChecker(cfg) // never asked: nothing is served
	if err != nil {
		t.Fatal(err)
	}
	api := accounttest.New(t, account.Deps{Auth: checker})
	post := api.OpenAPI().Paths["/api/v1/accounts"].Post
	if post == nil || post.RequestBody == nil || post.RequestBody.Content["application/json"] == nil {
		t.Fatal("no link body in the document")
	}
	ref := post.RequestBody.Content["application/json"].Schema.Ref
	schema := api.OpenAPI().Components.Schemas.SchemaFromRef(ref)
	if schema == nil || schema.Properties["api_key"] == nil || schema.Properties["exchange"] == nil {
		t.Fatalf("link body schema %q: %+v", ref, schema)
	}
	if tags := post.Tags; len(tags) != 1 || tags[0] != account.AccountsTag {
		t.Fatalf("tags %v", tags)
	}
}

// Without the accounts service the routes answer 503 (after the session check).
func TestExchangeAccountsUnavailable(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, st *store.Store, dataDir string) {
		b := startBFF(t, st, dataDir)
		api := accounttest.New(t, account.Deps{Auth: b.checker, Members: b.members})
		alice := b.signUp("alice")
		expect(t, api.Get("/api/v1/accounts", alice.read()), http.StatusServiceUnavailable, "accounts_unavailable", nil)
		expect(t, api.Get("/api/v1/accounts"), http.StatusUnauthorized, "unauthorized", nil)
	})
}
