package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exhub/exhub/bff/internal/accounts"
	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/store"
	"github.com/exhub/exhub/bff/internal/store/storetest"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// tradeOnly accepts every key as able to read and trade.
type tradeOnly struct{}

func (tradeOnly) Has(string) bool { return true }

func (tradeOnly) CheckCredentials(context.Context, string, *exchangev1.AccountRef) (*exchangev1.CheckCredentialsResponse, error) {
	return &exchangev1.CheckCredentialsResponse{CanRead: true, CanTrade: true}, nil
}

func TestAccountsRekey(t *testing.T) {
	for _, engine := range []string{store.DriverSQLite, store.DriverPostgres} {
		t.Run(engine, func(t *testing.T) {
			dataDir := t.TempDir()
			cfgFile := filepath.Join(t.TempDir(), "exhub.yaml")
			if err := os.WriteFile(cfgFile, []byte("mode: demo\ndata_dir: "+dataDir+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			storeCfg := store.DefaultConfig(dataDir)
			if engine == store.DriverPostgres {
				dsn := storetest.Postgres(t)
				t.Setenv("EXHUB_STORE_DRIVER", "postgres")
				t.Setenv("EXHUB_STORE_DSN", dsn)
				storeCfg.Driver, storeCfg.DSN = store.DriverPostgres, secret.New(dsn)
			}
			ctx := context.Background()
			old, next := accounts.NewKey(), accounts.NewKey()
			oldKeys, err := (accounts.Config{ActiveKey: "k1", KeyRing: secret.New("k1:" + old)}).Keyring()
			if err != nil {
				t.Fatal(err)
			}
			st, err := store.Open(ctx, storeCfg)
			if err != nil {
				t.Fatal(err)
			}
			svc, err := accounts.New(accounts.Options{Store: st, Keyring: oldKeys, Exchanges: tradeOnly{}})
			if err != nil {
				t.Fatal(err)
			}
			members := []string{"0191f7a0-0000-7000-8000-00000000000a", "0191f7a0-0000-7000-8000-00000000000b"}
			for _, m := range members {
				if _, _, err := st.EnsureMember(ctx, store.NewMember{ID: m}); err != nil {
					t.Fatal(err)
				}
				for _, ex := range []string{"binance", "okx"} {
					if _, err := svc.Link(ctx, m, accounts.LinkInput{Exchange: ex, Key: secret.New("KEY-" + ex + m),
						Secret: secret.New("SECRET-" + m)}); err != nil {
						t.Fatal(err)
					}
				}
			}
			st.Close()

			cmd := func(args ...string) (string, error) {
				var out, errOut bytes.Buffer
				err := run(ctx, append([]string{"--config", cfgFile}, args...), &out, &errOut)
				return out.String() + errOut.String(), err
			}
			// Without keys the command says what is missing.
			if out, err := cmd("accounts", "rekey"); err == nil || !strings.Contains(err.Error(), "key-encryption key") {
				t.Fatalf("rekey without keys: %v\n%s", err, out)
			}
			t.Setenv("EXHUB_ACCOUNTS_KEY_RING", "k1:"+old+",k2:"+next)
			t.Setenv("EXHUB_ACCOUNTS_ACTIVE_KEY", "k2")
			out, err := cmd("accounts", "rekey")
			if err != nil || !strings.Contains(out, "rekey under k2: 4 resealed, 0 changed meanwhile (run again), 0 did not open") {
				t.Fatalf("rekey: %v\n%s", err, out)
			}
			if strings.Contains(out, old) || strings.Contains(out, next) || strings.Contains(out, "SECRET-") {
				t.Fatalf("output shows key material:\n%s", out)
			}
			out, err = cmd("accounts", "rekey")
			if err != nil || !strings.Contains(out, ": 0 resealed") {
				t.Fatalf("second rekey: %v\n%s", err, out)
			}
			if _, err := cmd("accounts", "rotate"); err == nil {
				t.Fatal("unknown accounts command accepted")
			}

			// The old key is no longer needed.
			st, err = store.Open(ctx, storeCfg)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			newKeys, err := (accounts.Config{ActiveKey: "k2", KeyRing: secret.New("k2:" + next)}).Keyring()
			if err != nil {
				t.Fatal(err)
			}
			svc, err = accounts.New(accounts.Options{Store: st, Keyring: newKeys, Exchanges: tradeOnly{}})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range members {
				ref, err := svc.AccountRef(ctx, m, "okx")
				if err != nil || ref.GetApiKey() != "KEY-okx"+m || ref.GetApiSecret() != "SECRET-"+m {
					t.Fatalf("%s after rekey: %v", m, err)
				}
			}

			// A failed broker account is listed with its reason and put back into provisioning.
			failed, err := st.CreateExchangeAccount(ctx, store.ExchangeAccount{ID: "0191f7a0-0000-7000-8000-0000000000ff",
				MemberID: members[0], Exchange: "bybit", Mode: store.AccountBroker, Status: store.AccountProvisioning})
			if err != nil {
				t.Fatal(err)
			}
			if err := st.FailExchangeAccount(ctx, failed.ID, "create_sub_account: too many sub-accounts"); err != nil {
				t.Fatal(err)
			}
			out, err = cmd("accounts", "list")
			if err != nil || !strings.Contains(out, failed.ID) || !strings.Contains(out, "too many sub-accounts") ||
				strings.Contains(out, "KEY-") || strings.Contains(out, "SECRET-") {
				t.Fatalf("list failed: %v\n%s", err, out)
			}
			out, err = cmd("accounts", "list", "--status", "active")
			if err != nil || strings.Count(out, "linked") != 4 || strings.Contains(out, failed.ID) {
				t.Fatalf("list active: %v\n%s", err, out)
			}
			out, err = cmd("accounts", "retry", failed.ID)
			if err != nil || !strings.Contains(out, "provisioning again") {
				t.Fatalf("retry: %v\n%s", err, out)
			}
			if a, _ := st.ExchangeAccount(ctx, members[0], failed.ID); a.Status != store.AccountProvisioning {
				t.Fatalf("after retry %+v", a)
			}
			if _, err := cmd("accounts", "retry", failed.ID); !errors.Is(err, store.ErrConflict) {
				t.Fatalf("retry of a provisioning account: %v", err)
			}
			if _, err := cmd("accounts", "retry"); err == nil {
				t.Fatal("retry without an id accepted")
			}
		})
	}
}
