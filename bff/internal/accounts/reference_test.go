package accounts

import (
	"context"
	"errors"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/store"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// startReference runs the real reference exchange plugin (plugins/reference) under a plugin host.
func startReference(t *testing.T) *pluginhost.Host {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "reference")
	if out, err := exec.Command("go", "build", "-o", bin, "../../../plugins/reference").CombinedOutput(); err != nil {
		t.Fatalf("building plugins/reference: %v\n%s", err, out)
	}
	h := pluginhost.New([]pluginhost.Spec{{Key: 100, Slug: "reference", Name: "Reference Exchange", Path: bin}},
		pluginhost.Options{Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	sup, _ := h.Get("reference")
	wctx, wcancel := context.WithTimeout(ctx, 60*time.Second)
	defer wcancel()
	if err := sup.WaitRunning(wctx); err != nil {
		t.Fatal(err)
	}
	return h
}

// Against the real reference plugin: linked keys are checked (a paper key may withdraw and is refused, a read-only
// key cannot trade), and broker mode makes a sub-account, funds it and gives the member a key whose balance the
// exchange shows.
func TestReferenceExchange(t *testing.T) {
	h := startReference(t)
	engines(t, func(t *testing.T, st *store.Store) {
		ctx := ctxT(t)
		member(t, st, "m1")
		logs := &logBuffer{}
		masters := map[string]Credentials{"reference": creds("broker-master-"+t.Name(), "MASTERSECRET", "")}
		cfg := DefaultConfig()
		cfg.Broker.GrantAmount = "250.5"
		svc, err := New(Options{Store: st, Keyring: testKeyring(t, "k1", "k1"), Exchanges: HostExchanges{Host: h},
			Broker: NewHostBroker(h, masters), Config: cfg,
			Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		if err != nil {
			t.Fatal(err)
		}
		if ex := svc.prov.exchanges(); len(ex) != 1 || ex[0] != "reference" {
			t.Fatalf("broker exchanges %v", ex)
		}
		_, err = svc.Link(ctx, "m1", LinkInput{Exchange: "reference", Key: secret.New("paper-" + t.Name()), Secret: secret.New("x")})
		if !errors.Is(err, ErrWithdrawPermission) {
			t.Fatalf("paper key that may withdraw: %v", err)
		}
		_, err = svc.Link(ctx, "m1", LinkInput{Exchange: "reference", Key: secret.New("readonly-" + t.Name()), Secret: secret.New("x")})
		if !errors.Is(err, ErrCredentialsRefused) {
			t.Fatalf("read-only key: %v", err)
		}

		list, err := svc.ProvisionMember(ctx, "m1")
		if err != nil || len(list) != 1 || list[0].Status != store.AccountActive || list[0].SubAccountID == "" {
			t.Fatalf("provision: %+v %v", list, err)
		}
		ref, err := svc.AccountRef(ctx, "m1", "reference")
		if err != nil {
			t.Fatal(err)
		}
		sup, _ := h.Get("reference")
		var bals []*exchangev1.Balance
		err = sup.Call(ctx, "GetBalances", func(ctx context.Context, c exchangev1.ExchangeClient) error {
			resp, err := c.GetBalances(ctx, &exchangev1.GetBalancesRequest{Account: ref})
			bals = resp.GetBalances()
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		total := decimal.Zero
		for _, b := range bals {
			if b.GetAsset() == "USDT" {
				total = total.Add(decimal.RequireFromString(b.GetTotal()))
			}
		}
		if !total.Equal(decimal.RequireFromString("250.5")) {
			t.Fatalf("sub-account USDT %s, want the grant 250.5 (%v)", total, bals)
		}
		// A second provisioning (a restart) makes no second sub-account and moves nothing again.
		steps, _ := st.ProvisionSteps(ctx, list[0].ID)
		svc2, err := New(Options{Store: st, Keyring: testKeyring(t, "k1", "k1"), Exchanges: HostExchanges{Host: h},
			Broker: NewHostBroker(h, masters), Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		again, err := svc2.ProvisionMember(ctx, "m1")
		if err != nil || len(again) != 1 || again[0].ID != list[0].ID || again[0].SubAccountID != list[0].SubAccountID {
			t.Fatalf("again %+v %v", again, err)
		}
		if steps2, _ := st.ProvisionSteps(ctx, list[0].ID); len(steps2) != len(steps) || len(steps) != 3 {
			t.Fatalf("journal %d then %d steps", len(steps), len(steps2))
		}
		if got := logs.String(); strings.Contains(got, ref.GetApiSecret()) || strings.Contains(got, "MASTERSECRET") {
			t.Fatalf("a secret is in the log:\n%s", got)
		}
	})
}
