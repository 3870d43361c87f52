package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/kyc"
	"github.com/exhub/exhub/bff/internal/store"
	"github.com/exhub/exhub/bff/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

var png = append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{1}, 64)...)

func TestKYCCommands(t *testing.T) {
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

			// Two members with applications in review, one pending, seeded through the store and the KYC service.
			st, err := store.Open(ctx, storeCfg)
			if err != nil {
				t.Fatal(err)
			}
			svc := kyc.New(st, dataDir, kyc.DefaultConfig(), nil)
			var apps []store.KYCApplication
			for _, id := range []string{"0191f7a0-0000-7000-8000-00000000000a", "0191f7a0-0000-7000-8000-00000000000b", "0191f7a0-0000-7000-8000-00000000000c"} {
				if _, _, err := st.EnsureMember(ctx, store.NewMember{ID: id}); err != nil {
					t.Fatal(err)
				}
				a, err := svc.Start(ctx, id, store.KYCPerson)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := svc.Upload(ctx, id, "id.png", bytes.NewReader(png)); err != nil {
					t.Fatal(err)
				}
				apps = append(apps, a)
			}
			for _, a := range apps[:2] {
				if _, err := svc.Submit(ctx, a.MemberID); err != nil {
					t.Fatal(err)
				}
			}
			st.Close()

			cmd := func(args ...string) (string, error) {
				var out, errOut bytes.Buffer
				err := run(ctx, append([]string{"--config", cfgFile}, args...), &out, &errOut)
				return out.String() + errOut.String(), err
			}
			out, err := cmd("kyc", "list")
			if err != nil || !strings.Contains(out, apps[0].ID) || !strings.Contains(out, apps[1].ID) || strings.Contains(out, apps[2].ID) {
				t.Fatalf("list in_review: %v\n%s", err, out)
			}
			out, err = cmd("kyc", "list", "--state", "pending")
			if err != nil || !strings.Contains(out, apps[2].ID) || strings.Contains(out, apps[0].ID) {
				t.Fatalf("list pending: %v\n%s", err, out)
			}
			// Approve by member id, decline by application id with a reason.
			out, err = cmd("kyc", "approve", apps[0].MemberID, "--reviewer", "ops")
			if err != nil || !strings.Contains(out, "is completed (reviewer ops)") {
				t.Fatalf("approve: %v\n%s", err, out)
			}
			if _, err := cmd("kyc", "decline", apps[1].ID); err == nil {
				t.Fatal("decline without a reason succeeded")
			}
			out, err = cmd("kyc", "decline", apps[1].ID, "--reason", "photo unreadable")
			if err != nil || !strings.Contains(out, "is declined") {
				t.Fatalf("decline: %v\n%s", err, out)
			}
			// A pending application cannot be decided; a decided one cannot be decided again; unknown ids are errors.
			if _, err := cmd("kyc", "approve", apps[2].ID); !errors.Is(err, store.ErrInvalidTransition) {
				t.Fatalf("approve pending: %v", err)
			}
			if _, err := cmd("kyc", "approve", apps[1].ID); !errors.Is(err, store.ErrInvalidTransition) {
				t.Fatalf("approve declined: %v", err)
			}
			if _, err := cmd("kyc", "approve", "nobody"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("approve unknown: %v", err)
			}
			if _, err := cmd("kyc", "frobnicate"); err == nil {
				t.Fatal("unknown command accepted")
			}

			st, err = store.Open(ctx, storeCfg)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			a0, _ := st.KYCApplication(ctx, apps[0].ID)
			a1, _ := st.KYCApplication(ctx, apps[1].ID)
			flags, err := st.ExchangeKYC(ctx, apps[0].MemberID)
			if err != nil {
				t.Fatal(err)
			}
			if a0.State != store.KYCCompleted || a0.Reviewer != "ops" || a1.State != store.KYCDeclined ||
				a1.Reason != "photo unreadable" || !flags["binance"] || !flags["okx"] {
				t.Fatalf("after the commands: %+v %+v flags %v", a0, a1, flags)
			}
		})
	}
}
