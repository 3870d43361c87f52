package accounts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/store"
	"github.com/exhub/exhub/bff/internal/store/storetest"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// engines runs fn on SQLite (a temp dir) and on a fresh PostgreSQL database.
func engines(t *testing.T, fn func(t *testing.T, st *store.Store)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, openStore(t, store.DefaultConfig(t.TempDir()))) })
	t.Run("postgres", func(t *testing.T) {
		cfg := store.DefaultConfig("")
		cfg.Driver, cfg.DSN = store.DriverPostgres, secret.New(storetest.Postgres(t))
		fn(t, openStore(t, cfg))
	})
}

func openStore(t *testing.T, cfg store.Config) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), cfg, store.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(st.Close)
	return st
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func member(t *testing.T, st *store.Store, id string) {
	t.Helper()
	if _, _, err := st.EnsureMember(ctxT(t), store.NewMember{ID: id, Nickname: "n" + id}); err != nil {
		t.Fatal(err)
	}
}

// fakeExchanges answers CheckCredentials by key: keys starting with "withdraw" may withdraw, "readonly" cannot
// trade, "bad" are refused by the exchange (echoing the key), "down" find the exchange unavailable.
type fakeExchanges struct {
	mu    sync.Mutex
	calls int
	refs  []*exchangev1.AccountRef
}

func (f *fakeExchanges) Has(ex string) bool { return ex == "binance" || ex == "okx" }

func (f *fakeExchanges) CheckCredentials(_ context.Context, ex string, ref *exchangev1.AccountRef) (*exchangev1.CheckCredentialsResponse, error) {
	f.mu.Lock()
	f.calls++
	f.refs = append(f.refs, ref)
	f.mu.Unlock()
	k := ref.GetApiKey()
	switch {
	case strings.HasPrefix(k, "withdraw"):
		return &exchangev1.CheckCredentialsResponse{CanRead: true, CanTrade: true, CanWithdraw: true}, nil
	case strings.HasPrefix(k, "readonly"):
		return &exchangev1.CheckCredentialsResponse{CanRead: true}, nil
	case strings.HasPrefix(k, "bad"):
		return nil, sdk.ExchangeError(exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED, "-2015", "Invalid API-key "+k+", IP, or permissions")
	case strings.HasPrefix(k, "down"):
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "maintenance")
	}
	return &exchangev1.CheckCredentialsResponse{CanRead: true, CanTrade: true, CanTransfer: true}, nil
}

type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newService(t *testing.T, st *store.Store, k *Keyring, b Broker, logs *logBuffer) (*Service, *fakeExchanges) {
	t.Helper()
	fx := &fakeExchanges{}
	var w interface{ Write([]byte) (int, error) } = &logBuffer{}
	if logs != nil {
		w = logs
	}
	svc, err := New(Options{Store: st, Keyring: k, Exchanges: fx, Broker: b,
		Logger: slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	return svc, fx
}

func link(key string) LinkInput {
	return LinkInput{Exchange: "binance", Name: "main", Key: secret.New(key), Secret: secret.New("S3CR3T-" + key),
		Passphrase: secret.New("PASS-" + key)}
}

func TestLinkUseUnlink(t *testing.T) {
	engines(t, func(t *testing.T, st *store.Store) {
		ctx := ctxT(t)
		member(t, st, "a")
		member(t, st, "b")
		logs := &logBuffer{}
		svc, fx := newService(t, st, testKeyring(t, "k1", "k1"), nil, logs)
		const planted = "PLANTEDKEY9fz8Q"
		acc, err := svc.Link(ctx, "a", link(planted))
		if err != nil {
			t.Fatal(err)
		}
		if acc.KeyLast4 != "fz8Q" || acc.Mode != store.AccountLinked || acc.Status != store.AccountActive ||
			!acc.Permissions.Read || !acc.Permissions.Trade || acc.Name != "main" {
			t.Fatalf("linked %+v", acc)
		}
		// The key was checked with the exchange under the new account's id.
		if fx.calls != 1 || fx.refs[0].GetAccountId() != acc.ID || fx.refs[0].GetApiSecret() != "S3CR3T-"+planted {
			t.Fatalf("check calls %d %v", fx.calls, fx.refs)
		}
		// At rest: sealed, never in the clear.
		row, err := st.ExchangeAccount(ctx, "a", acc.ID)
		if err != nil || row.KEKID != "k1" || strings.Contains(row.Sealed, planted) || row.Sealed == "" {
			t.Fatalf("row %+v %v", row, err)
		}
		// Second account on the same exchange: refused before the exchange is asked.
		if _, err := svc.Link(ctx, "a", link("other-key-1")); !errors.Is(err, ErrExists) {
			t.Fatalf("second link: %v", err)
		}
		if fx.calls != 1 {
			t.Fatalf("exchange asked for a duplicate link")
		}
		ref, err := svc.AccountRef(ctx, "a", "binance")
		if err != nil || ref.GetApiKey() != planted || ref.GetApiSecret() != "S3CR3T-"+planted ||
			ref.GetPassphrase() != "PASS-"+planted || ref.GetAccountId() != acc.ID {
			t.Fatalf("ref %v %v", ref.GetAccountId(), err)
		}
		// The caller owns the message: changing it does not change the next answer.
		ref.ApiKey = "mutated"
		if ref2, _ := svc.AccountRef(ctx, "a", "binance"); ref2.GetApiKey() != planted {
			t.Fatal("cached ref was mutated through a returned one")
		}
		// Member b: no account, cannot see, use or unlink a's.
		if _, err := svc.AccountRef(ctx, "b", "binance"); !errors.Is(err, ErrNoAccount) {
			t.Fatalf("b's ref: %v", err)
		}
		if list, err := svc.List(ctx, "b"); err != nil || len(list) != 0 {
			t.Fatalf("b's list %+v %v", list, err)
		}
		if _, err := svc.Get(ctx, "b", acc.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("b gets a's: %v", err)
		}
		if err := svc.Unlink(ctx, "b", acc.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("b unlinks a's: %v", err)
		}
		if list, _ := svc.List(ctx, "a"); len(list) != 1 {
			t.Fatalf("a's list after b's attempts: %+v", list)
		}
		// b links on the same exchange: its own account.
		if _, err := svc.Link(ctx, "b", link("b-key-12345")); err != nil {
			t.Fatal(err)
		}
		if err := svc.Unlink(ctx, "a", acc.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.AccountRef(ctx, "a", "binance"); !errors.Is(err, ErrNoAccount) {
			t.Fatalf("ref after unlink (cache dropped): %v", err)
		}
		if _, err := st.ExchangeAccount(ctx, "a", acc.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("row after unlink: %v", err)
		}
		if ref, err := svc.AccountRef(ctx, "b", "binance"); err != nil || ref.GetApiKey() != "b-key-12345" {
			t.Fatalf("b's ref: %v", err)
		}
		if got := logs.String(); strings.Contains(got, planted) || strings.Contains(got, "S3CR3T") || !strings.Contains(got, "exchange account linked") {
			t.Fatalf("logs:\n%s", got)
		}
	})
}

func TestLinkRefusals(t *testing.T) {
	engines(t, func(t *testing.T, st *store.Store) {
		ctx := ctxT(t)
		member(t, st, "a")
		logs := &logBuffer{}
		svc, _ := newService(t, st, testKeyring(t, "k1", "k1"), nil, logs)
		cases := []struct {
			in   LinkInput
			want error
		}{
			{link("withdraw-key-1"), ErrWithdrawPermission},
			{link("readonly-key-1"), ErrCredentialsRefused},
			{link("bad-key-SECRETISH"), ErrCredentialsRefused},
			{link("down-key-1"), ErrExchangeUnavailable},
			{LinkInput{Exchange: "kraken", Key: secret.New("k1234"), Secret: secret.New("s1234")}, ErrUnknownExchange},
			{LinkInput{Exchange: "binance", Key: secret.New(""), Secret: secret.New("s")}, ErrInvalid},
			{LinkInput{Exchange: "binance", Key: secret.New("k"), Secret: secret.New("")}, ErrInvalid},
			{LinkInput{Exchange: "binance", Key: secret.New("k with space"), Secret: secret.New("s")}, ErrInvalid},
			{LinkInput{Exchange: "binance", Key: secret.New(strings.Repeat("k", MaxKeyLen+1)), Secret: secret.New("s")}, ErrInvalid},
			{LinkInput{Exchange: "binance", Name: "bad\x01name", Key: secret.New("k"), Secret: secret.New("s")}, ErrInvalid},
		}
		for _, c := range cases {
			_, err := svc.Link(ctx, "a", c.in)
			if !errors.Is(err, c.want) {
				t.Errorf("%s: %v, want %v", c.in.Key.Reveal(), err, c.want)
			}
			if err != nil && strings.Contains(err.Error(), "SECRETISH") {
				t.Errorf("error echoes the key: %v", err)
			}
		}
		if list, _ := svc.List(ctx, "a"); len(list) != 0 {
			t.Fatalf("refused keys stored: %+v", list)
		}
		if strings.Contains(logs.String(), "SECRETISH") {
			t.Fatalf("logs echo the key:\n%s", logs.String())
		}
	})
}

// fakeBroker keeps sub-accounts by label and transfers by id; lose makes the next call of a method execute and
// then answer with a lost answer (unknown outcome), failNext refuses it.
type fakeBroker struct {
	mu        sync.Mutex
	subs      map[string]string // label -> id
	keys      int
	transfers map[string]decimal.Decimal
	sends     map[string]int // method -> calls
	lose      map[string]bool
	down      map[string]bool
}

func newFakeBroker() *fakeBroker {
	return &fakeBroker{subs: map[string]string{}, transfers: map[string]decimal.Decimal{}, sends: map[string]int{},
		lose: map[string]bool{}, down: map[string]bool{}}
}

var errLost = sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME, "answer lost")

func (f *fakeBroker) Exchanges() []string { return []string{"binance", "okx"} }

func (f *fakeBroker) outcome(method string) (lost bool, err error) {
	f.sends[method]++
	if f.down[method] {
		return false, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "down")
	}
	if f.lose[method] {
		f.lose[method] = false
		return true, nil
	}
	return false, nil
}

func (f *fakeBroker) CreateSubAccount(_ context.Context, ex, label string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	lost, err := f.outcome("sub")
	if err != nil {
		return "", err
	}
	id, ok := f.subs[ex+"/"+label]
	if !ok {
		id = fmt.Sprintf("sub-%d", len(f.subs)+1)
		f.subs[ex+"/"+label] = id
	}
	if lost {
		return "", errLost
	}
	return id, nil
}

func (f *fakeBroker) CreateAPIKey(_ context.Context, ex, sub, label string) (Credentials, Permissions, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	lost, err := f.outcome("key")
	if err != nil {
		return Credentials{}, Permissions{}, err
	}
	f.keys++
	if lost {
		return Credentials{}, Permissions{}, errLost
	}
	return creds(fmt.Sprintf("BROKERKEY-%s-%d", sub, f.keys), "BROKERSECRET", ""), Permissions{Read: true, Trade: true}, nil
}

func (f *fakeBroker) Transfer(_ context.Context, ex, sub, asset string, amount decimal.Decimal, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	lost, err := f.outcome("transfer")
	if err != nil {
		return err
	}
	if _, ok := f.transfers[id]; !ok { // at most once per id
		f.transfers[id] = amount
	}
	if lost {
		return errLost
	}
	return nil
}

func (f *fakeBroker) FindTransfer(_ context.Context, ex, sub, id string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sends["find"]++
	_, ok := f.transfers[id]
	return ok, nil
}

func TestBrokerProvisioning(t *testing.T) {
	engines(t, func(t *testing.T, st *store.Store) {
		ctx := ctxT(t)
		member(t, st, "a")
		fb := newFakeBroker()
		svc, _ := newService(t, st, testKeyring(t, "k1", "k1"), fb, nil)
		list, err := svc.ProvisionMember(ctx, "a")
		if err != nil || len(list) != 2 {
			t.Fatalf("provision: %+v %v", list, err)
		}
		for _, a := range list {
			if a.Mode != store.AccountBroker || a.Status != store.AccountActive || a.SubAccountID == "" || a.KeyLast4 == "" {
				t.Fatalf("broker account %+v", a)
			}
		}
		if len(fb.subs) != 2 || len(fb.transfers) != 2 || fb.keys != 2 {
			t.Fatalf("broker calls: subs %d transfers %d keys %d", len(fb.subs), len(fb.transfers), fb.keys)
		}
		for _, amt := range fb.transfers {
			if !amt.Equal(decimal.RequireFromString("10000")) {
				t.Fatalf("grant %s", amt)
			}
		}
		ref, err := svc.AccountRef(ctx, "a", "okx")
		if err != nil || !strings.HasPrefix(ref.GetApiKey(), "BROKERKEY-") {
			t.Fatalf("ref %v", err)
		}
		// Again: nothing new.
		if _, err := svc.ProvisionMember(ctx, "a"); err != nil || len(fb.subs) != 2 || fb.keys != 2 {
			t.Fatalf("second provisioning made more: %v subs %d keys %d", err, len(fb.subs), fb.keys)
		}
		// A broker account cannot be unlinked by the member.
		if err := svc.Unlink(ctx, "a", list[0].ID); !errors.Is(err, ErrBrokerAccount) {
			t.Fatalf("unlink broker: %v", err)
		}
		// A member who linked their own key keeps it: the broker makes nothing there.
		member(t, st, "c")
		if _, err := svc.Link(ctx, "c", link("c-own-key")); err != nil {
			t.Fatal(err)
		}
		list, err = svc.ProvisionMember(ctx, "c")
		if err != nil || len(list) != 2 || list[0].Exchange != "binance" || list[0].Mode != store.AccountLinked {
			t.Fatalf("c: %+v %v", list, err)
		}
	})
}

// Lost answers and outages leave steps journaled; resuming never makes a second sub-account or moves the grant
// twice.
func TestBrokerProvisioningResumes(t *testing.T) {
	engines(t, func(t *testing.T, st *store.Store) {
		ctx := ctxT(t)
		member(t, st, "a")
		fb := newFakeBroker()
		svc, _ := newService(t, st, testKeyring(t, "k1", "k1"), fb, nil)

		// The sub-account is made but its answer is lost.
		fb.lose["sub"] = true
		a, err := svc.Provision(ctx, "a", "binance")
		if err == nil || a.Status != store.AccountProvisioning {
			t.Fatalf("lost sub-account answer: %+v %v", a, err)
		}
		if _, err := svc.AccountRef(ctx, "a", "binance"); !errors.Is(err, ErrNoAccount) {
			t.Fatalf("ref while provisioning: %v", err)
		}
		// The transfer executes and its answer is lost.
		fb.lose["transfer"] = true
		if _, err := svc.Provision(ctx, "a", "binance"); err == nil {
			t.Fatal("lost transfer answer: no error")
		}
		// The exchange is down for the key.
		fb.down["key"] = true
		if _, err := svc.Provision(ctx, "a", "binance"); err == nil {
			t.Fatal("key while down: no error")
		}
		fb.down["key"] = false
		// A "restarted" service (a new one over the same store) resumes from the journal.
		svc2, _ := newService(t, st, testKeyring(t, "k1", "k1"), fb, nil)
		svc2.prov.resume(ctx)
		a, err = svc2.Get(ctx, "a", a.ID)
		if err != nil || a.Status != store.AccountActive {
			t.Fatalf("after resume: %+v %v", a, err)
		}
		if len(fb.subs) != 1 {
			t.Fatalf("%d sub-accounts, want 1", len(fb.subs))
		}
		if len(fb.transfers) != 1 || fb.sends["transfer"] != 1 || fb.sends["find"] < 1 {
			t.Fatalf("transfers %d, sends %d, finds %d: the grant was sent again instead of looked up",
				len(fb.transfers), fb.sends["transfer"], fb.sends["find"])
		}
		steps, err := st.ProvisionSteps(ctx, a.ID)
		if err != nil || len(steps) != 3 {
			t.Fatalf("journal %+v %v", steps, err)
		}
		for _, s := range steps {
			if s.State != store.StepDone {
				t.Fatalf("step %+v", s)
			}
		}
	})
}

func TestRunProvisionsQueuedMembers(t *testing.T) {
	engines(t, func(t *testing.T, st *store.Store) {
		ctx, cancel := context.WithCancel(ctxT(t))
		member(t, st, "new")
		fb := newFakeBroker()
		svc, _ := newService(t, st, testKeyring(t, "k1", "k1"), fb, nil)
		done := make(chan error, 1)
		go func() { done <- svc.Run(ctx) }()
		// First need: the trading path finds nothing and asks for it.
		if _, err := svc.AccountRef(ctx, "new", "okx"); !errors.Is(err, ErrNoAccount) {
			t.Fatalf("first ref: %v", err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			if ref, err := svc.AccountRef(ctx, "new", "okx"); err == nil && ref.GetApiKey() != "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the queued member was not provisioned")
			}
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// Demo mode: every member gets broker accounts without asking (a member row is enough).
func TestRunProvisionsEveryMember(t *testing.T) {
	engines(t, func(t *testing.T, st *store.Store) {
		ctx, cancel := context.WithCancel(ctxT(t))
		fb := newFakeBroker()
		svc, err := New(Options{Store: st, Keyring: testKeyring(t, "k1", "k1"), Exchanges: &fakeExchanges{}, Broker: fb,
			EveryMember: true})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- svc.Run(ctx) }()
		member(t, st, "early")
		member(t, st, "late")
		deadline := time.Now().Add(30 * time.Second)
		for {
			active := 0
			for _, m := range []string{"early", "late"} {
				list, err := st.ExchangeAccounts(ctx, m)
				if err != nil {
					t.Fatal(err)
				}
				for _, a := range list {
					if a.Status == store.AccountActive && a.Mode == store.AccountBroker {
						active++
					}
				}
			}
			if active == 4 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of 4 broker accounts active", active)
			}
			time.Sleep(50 * time.Millisecond)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		fb.mu.Lock()
		defer fb.mu.Unlock()
		if len(fb.subs) != 4 || len(fb.transfers) != 4 {
			t.Fatalf("subs %d transfers %d, want 4 each", len(fb.subs), len(fb.transfers))
		}
	})
}

func TestRekey(t *testing.T) {
	engines(t, func(t *testing.T, st *store.Store) {
		ctx := ctxT(t)
		raw1, _ := DecodeKey(NewKey())
		raw2, _ := DecodeKey(NewKey())
		k1, _ := NewKeyring("k1", map[string][]byte{"k1": raw1})
		svc, _ := newService(t, st, k1, nil, nil)
		for _, m := range []string{"a", "b", "c"} {
			member(t, st, m)
			if _, err := svc.Link(ctx, m, link("key-of-"+m)); err != nil {
				t.Fatal(err)
			}
		}
		both, _ := NewKeyring("k2", map[string][]byte{"k1": raw1, "k2": raw2})
		res, err := Rekey(ctx, st, both, nil)
		if err != nil || res.Resealed != 3 || res.Failed != 0 {
			t.Fatalf("rekey %+v %v", res, err)
		}
		// Only k2 is needed now.
		k2only, _ := NewKeyring("k2", map[string][]byte{"k2": raw2})
		svc2, _ := newService(t, st, k2only, nil, nil)
		for _, m := range []string{"a", "b", "c"} {
			ref, err := svc2.AccountRef(ctx, m, "binance")
			if err != nil || ref.GetApiKey() != "key-of-"+m {
				t.Fatalf("%s after rekey: %v", m, err)
			}
		}
		if res, err := Rekey(ctx, st, both, nil); err != nil || res.Resealed != 0 {
			t.Fatalf("second rekey %+v %v", res, err)
		}
		// A row copied onto another member's account does not open; rekey reports it and goes on.
		ra, _ := st.ExchangeAccountOn(ctx, "a", "binance")
		rb, _ := st.ExchangeAccountOn(ctx, "b", "binance")
		if ok, err := st.Resealed(ctx, rb.ID, rb.KEKID, rb.Sealed, "k1", ra.Sealed); err != nil || !ok {
			t.Fatal(err)
		}
		res, err = Rekey(ctx, st, both, nil)
		if err == nil || res.Failed != 1 {
			t.Fatalf("rekey of a copied row %+v %v", res, err)
		}
		if _, err := svc2.AccountRef(ctx, "b", "okx"); !errors.Is(err, ErrNoAccount) {
			t.Fatalf("b on okx: %v", err)
		}
		svc2.Forget()
		if _, err := svc2.AccountRef(ctx, "b", "binance"); err == nil {
			t.Fatal("a copied row opened for another member")
		}
	})
}

func TestRefCacheBounded(t *testing.T) {
	c := newRefCache(2, time.Minute)
	now := time.Unix(0, 0)
	c.now = func() time.Time { return now }
	for i := range 5 {
		c.put(fmt.Sprint(i), "x", &exchangev1.AccountRef{AccountId: fmt.Sprint(i)})
	}
	if c.len() != 2 {
		t.Fatalf("len %d", c.len())
	}
	if _, ok := c.get("0", "x"); ok {
		t.Fatal("oldest kept")
	}
	if r, ok := c.get("4", "x"); !ok || r.GetAccountId() != "4" {
		t.Fatal("newest lost")
	}
	now = now.Add(2 * time.Minute)
	if _, ok := c.get("4", "x"); ok {
		t.Fatal("expired entry served")
	}
}
