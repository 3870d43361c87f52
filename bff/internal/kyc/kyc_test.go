package kyc_test

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/kyc"
	"github.com/exhub/exhub/bff/internal/store"
	"github.com/exhub/exhub/bff/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func engines(t *testing.T, fn func(t *testing.T, cfg store.Config)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, store.DefaultConfig(t.TempDir())) })
	t.Run("postgres", func(t *testing.T) {
		cfg := store.DefaultConfig("")
		cfg.Driver, cfg.DSN = store.DriverPostgres, secret.New(storetest.Postgres(t))
		fn(t, cfg)
	})
}

func TestAutoReviewAfterTheDelay(t *testing.T) {
	engines(t, func(t *testing.T, scfg store.Config) {
		ctx := context.Background()
		c := &clock{t: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)}
		st, err := store.Open(ctx, scfg, store.WithClock(c.now))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		cfg := kyc.DefaultConfig()
		cfg.Exchanges = []string{"binance"}
		svc := kyc.New(st, t.TempDir(), cfg, nil, kyc.WithClock(c.now))
		const id = "0191f7a0-0000-7000-8000-0000000000aa"
		if _, _, err := st.EnsureMember(ctx, store.NewMember{ID: id}); err != nil {
			t.Fatal(err)
		}
		app, err := svc.Start(ctx, id, store.KYCCompany)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Upload(ctx, id, "deed.pdf", bytes.NewReader([]byte("%PDF-1.7\n%%EOF\n"))); err != nil {
			t.Fatal(err)
		}
		// Pending applications are never auto-reviewed.
		c.add(time.Hour)
		if err := svc.ReviewDue(ctx); err != nil {
			t.Fatal(err)
		}
		if a, _ := st.KYCApplication(ctx, app.ID); a.State != store.KYCPending {
			t.Fatalf("pending application reviewed: %+v", a)
		}
		if _, err := svc.Submit(ctx, id); err != nil {
			t.Fatal(err)
		}
		c.add(cfg.AutoReviewDelay - time.Second)
		if err := svc.ReviewDue(ctx); err != nil {
			t.Fatal(err)
		}
		if a, _ := st.KYCApplication(ctx, app.ID); a.State != store.KYCInReview {
			t.Fatalf("reviewed before the delay: %+v", a)
		}
		c.add(time.Second)
		if err := svc.ReviewDue(ctx); err != nil {
			t.Fatal(err)
		}
		a, _ := st.KYCApplication(ctx, app.ID)
		flags, _ := st.ExchangeKYC(ctx, id)
		if a.State != store.KYCCompleted || a.Reviewer != kyc.AutoReviewer || !flags["binance"] {
			t.Fatalf("after the delay: %+v %v", a, flags)
		}
	})
}

func TestRunAutoReviewStopsWithItsContext(t *testing.T) {
	st, err := store.Open(context.Background(), store.DefaultConfig(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := kyc.DefaultConfig()
	cfg.AutoReviewInterval = 100 * time.Millisecond
	svc := kyc.New(st, t.TempDir(), cfg, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.RunAutoReview(ctx) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("RunAutoReview did not return after its context ended")
	}
}

func TestConfigValidate(t *testing.T) {
	if err := kyc.DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := kyc.DefaultConfig()
	bad.MaxDocuments, bad.AutoReviewInterval = 0, 0
	if err := bad.Validate(); err == nil {
		t.Fatal("bad config accepted")
	}
}
