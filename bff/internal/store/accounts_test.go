package store

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

func linked(id, member, ex string) ExchangeAccount {
	return ExchangeAccount{ID: id, MemberID: member, Exchange: ex, Mode: AccountLinked, Name: "main", KeyLast4: "WXYZ",
		Sealed: "c2VhbGVk", KEKID: "k1", Permissions: "read,trade", Status: AccountActive}
}

func TestExchangeAccounts(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		mustMember(t, s, "a")
		mustMember(t, s, "b")
		got, err := s.CreateExchangeAccount(ctx, linked("acc-1", "a", "binance"))
		if err != nil || got.CreatedAt.IsZero() || got.Status != AccountActive {
			t.Fatalf("create: %+v %v", got, err)
		}
		// One account per member and exchange.
		_, err = s.CreateExchangeAccount(ctx, linked("acc-2", "a", "binance"))
		wantErr(t, err, ErrConflict)
		// Another member may have one on the same exchange; an unknown member may not.
		if _, err := s.CreateExchangeAccount(ctx, linked("acc-3", "b", "binance")); err != nil {
			t.Fatal(err)
		}
		_, err = s.CreateExchangeAccount(ctx, linked("acc-4", "ghost", "okx"))
		wantErr(t, err, ErrNotFound)
		for name, bad := range map[string]func(a *ExchangeAccount){
			"mode":      func(a *ExchangeAccount) { a.Mode = "shared" },
			"slug":      func(a *ExchangeAccount) { a.Exchange = "Bin ance" },
			"status":    func(a *ExchangeAccount) { a.Status = "done" },
			"unsealed":  func(a *ExchangeAccount) { a.Sealed = "" },
			"name":      func(a *ExchangeAccount) { a.Name = " padded " },
			"long name": func(a *ExchangeAccount) { a.Name = fmt.Sprintf("%065d", 0) },
		} {
			a := linked("acc-bad", "a", "okx")
			bad(&a)
			if _, err := s.CreateExchangeAccount(ctx, a); err == nil {
				t.Errorf("%s: created %+v", name, a)
			} else {
				wantErr(t, err, ErrInvalid)
			}
		}

		// Members without an account on an exchange (the demo provisioner's sweep).
		if ids, err := s.MembersWithoutAccount(ctx, "binance", 10); err != nil || len(ids) != 0 {
			t.Fatalf("without binance: %v %v", ids, err)
		}
		if ids, err := s.MembersWithoutAccount(ctx, "okx", 10); err != nil || len(ids) != 2 {
			t.Fatalf("without okx: %v %v", ids, err)
		}
		if ids, err := s.MembersWithoutAccount(ctx, "okx", 1); err != nil || len(ids) != 1 {
			t.Fatalf("without okx, limit 1: %v %v", ids, err)
		}
		list, err := s.ExchangeAccounts(ctx, "a")
		if err != nil || len(list) != 1 || list[0].ID != "acc-1" || list[0].Sealed != "c2VhbGVk" || list[0].KEKID != "k1" {
			t.Fatalf("list a: %+v %v", list, err)
		}
		// A member never reads another's account, by id or exchange.
		_, err = s.ExchangeAccount(ctx, "b", "acc-1")
		wantErr(t, err, ErrNotFound)
		if a, err := s.ExchangeAccountOn(ctx, "b", "binance"); err != nil || a.ID != "acc-3" {
			t.Fatalf("b on binance: %+v %v", a, err)
		}
		_, err = s.ExchangeAccountOn(ctx, "a", "okx")
		wantErr(t, err, ErrNotFound)

		// Delete: only the member's own, only of the mode asked.
		wantErr(t, s.DeleteExchangeAccount(ctx, "b", "acc-1", AccountLinked), ErrNotFound)
		wantErr(t, s.DeleteExchangeAccount(ctx, "a", "acc-1", AccountBroker), ErrNotFound)
		if err := s.DeleteExchangeAccount(ctx, "a", "acc-1", AccountLinked); err != nil {
			t.Fatal(err)
		}
		if list, err := s.ExchangeAccounts(ctx, "a"); err != nil || len(list) != 0 {
			t.Fatalf("after delete: %+v %v", list, err)
		}
		if a, err := s.ExchangeAccount(ctx, "b", "acc-3"); err != nil || a.MemberID != "b" {
			t.Fatalf("b's account after a's delete: %+v %v", a, err)
		}
	})
}

func TestExchangeAccountConcurrentCreate(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		mustMember(t, s, "a")
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins, conflicts := 0, 0
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.CreateExchangeAccount(ctx, linked(fmt.Sprintf("acc-%d", i), "a", "okx"))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins++
				case errors.Is(err, ErrConflict):
					conflicts++
				default:
					t.Errorf("create: %v", err)
				}
			}()
		}
		wg.Wait()
		if wins != 1 || conflicts != 7 {
			t.Fatalf("wins %d conflicts %d, want 1 and 7", wins, conflicts)
		}
	})
}

func TestBrokerProvisioningJournal(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		mustMember(t, s, "a")
		acc := ExchangeAccount{ID: "acc-b", MemberID: "a", Exchange: "binance", Mode: AccountBroker, Status: AccountProvisioning}
		got, err := s.CreateExchangeAccount(ctx, acc)
		if err != nil || got.Name != "binance" {
			t.Fatalf("create: %+v %v", got, err)
		}
		if list, err := s.ExchangeAccountsByStatus(ctx, AccountProvisioning, 10); err != nil || len(list) != 1 {
			t.Fatalf("provisioning list %+v %v", list, err)
		}
		step, err := s.StartProvisionStep(ctx, "acc-b", StepCreateSubAccount, "req-1")
		if err != nil || step.RequestID != "req-1" || step.State != StepStarted || step.Attempts != 1 {
			t.Fatalf("start: %+v %v", step, err)
		}
		// A resume after a crash gets the original request id back, never a new one.
		step, err = s.StartProvisionStep(ctx, "acc-b", StepCreateSubAccount, "req-2")
		if err != nil || step.RequestID != "req-1" || step.Attempts != 2 {
			t.Fatalf("resume: %+v %v", step, err)
		}
		if err := s.FinishProvisionStep(ctx, "acc-b", StepCreateSubAccount, StepDone, "sub-77", ""); err != nil {
			t.Fatal(err)
		}
		step, err = s.StartProvisionStep(ctx, "acc-b", StepCreateSubAccount, "req-3")
		if err != nil || step.State != StepDone || step.Result != "sub-77" || step.RequestID != "req-1" {
			t.Fatalf("done step: %+v %v", step, err)
		}
		wantErr(t, s.FinishProvisionStep(ctx, "acc-b", StepTransfer, StepDone, "", ""), ErrNotFound)
		_, err = s.StartProvisionStep(ctx, "ghost", StepTransfer, "req-9")
		wantErr(t, err, ErrNotFound)
		_, err = s.StartProvisionStep(ctx, "acc-b", "withdraw", "req-9")
		wantErr(t, err, ErrInvalid)

		// Activation needs sealed credentials and a provisioning account.
		wantErr(t, s.ActivateExchangeAccount(ctx, "acc-b", "sub-77", "ABCD", "", "", "read,trade"), ErrInvalid)
		if err := s.ActivateExchangeAccount(ctx, "acc-b", "sub-77", "ABCD", "k1", "c2VhbGVk", "read,trade"); err != nil {
			t.Fatal(err)
		}
		a, err := s.ExchangeAccount(ctx, "a", "acc-b")
		if err != nil || a.Status != AccountActive || a.SubAccountID != "sub-77" || a.KeyLast4 != "ABCD" {
			t.Fatalf("active: %+v %v", a, err)
		}
		wantErr(t, s.ActivateExchangeAccount(ctx, "acc-b", "x", "x", "k1", "c2VhbGVk", ""), ErrConflict)
		wantErr(t, s.FailExchangeAccount(ctx, "acc-b", "late"), ErrConflict)
		wantErr(t, s.FailExchangeAccount(ctx, "nope", "x"), ErrNotFound)
		steps, err := s.ProvisionSteps(ctx, "acc-b")
		if err != nil || len(steps) != 1 {
			t.Fatalf("steps %+v %v", steps, err)
		}
		// The member cannot delete a broker account as a linked one; deleting it drops its journal.
		wantErr(t, s.DeleteExchangeAccount(ctx, "a", "acc-b", AccountLinked), ErrNotFound)
		if err := s.DeleteExchangeAccount(ctx, "a", "acc-b", AccountBroker); err != nil {
			t.Fatal(err)
		}
		if steps, err := s.ProvisionSteps(ctx, "acc-b"); err != nil || len(steps) != 0 {
			t.Fatalf("journal after delete %+v %v", steps, err)
		}

		// Failed and retried.
		acc.ID = "acc-o"
		acc.Exchange = "okx"
		if _, err := s.CreateExchangeAccount(ctx, acc); err != nil {
			t.Fatal(err)
		}
		if err := s.FailExchangeAccount(ctx, "acc-o", "exchange said no"); err != nil {
			t.Fatal(err)
		}
		if a, _ := s.ExchangeAccount(ctx, "a", "acc-o"); a.Status != AccountFailed || a.StatusReason != "exchange said no" {
			t.Fatalf("failed: %+v", a)
		}
		if err := s.RetryExchangeAccount(ctx, "acc-o"); err != nil {
			t.Fatal(err)
		}
		wantErr(t, s.RetryExchangeAccount(ctx, "acc-o"), ErrConflict)
	})
}

func TestExchangeAccountsRekeyQueries(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		mustMember(t, s, "a")
		for i, ex := range []string{"binance", "okx", "bybit"} {
			a := linked(fmt.Sprintf("acc-%d", i), "a", ex)
			if i == 2 {
				a.KEKID = "k2"
			}
			if _, err := s.CreateExchangeAccount(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
		page, err := s.ExchangeAccountsToRekey(ctx, "k2", "", 1)
		if err != nil || len(page) != 1 || page[0].ID != "acc-0" {
			t.Fatalf("page 1 %+v %v", page, err)
		}
		page, err = s.ExchangeAccountsToRekey(ctx, "k2", page[0].ID, 10)
		if err != nil || len(page) != 1 || page[0].ID != "acc-1" {
			t.Fatalf("page 2 %+v %v", page, err)
		}
		// Compare and swap: a stale read does not overwrite.
		if ok, err := s.Resealed(ctx, "acc-1", "k1", "other", "k2", "bmV3"); err != nil || ok {
			t.Fatalf("stale reseal %v %v", ok, err)
		}
		if ok, err := s.Resealed(ctx, "acc-1", "k1", "c2VhbGVk", "k2", "bmV3"); err != nil || !ok {
			t.Fatalf("reseal %v %v", ok, err)
		}
		if a, _ := s.ExchangeAccount(ctx, "a", "acc-1"); a.KEKID != "k2" || a.Sealed != "bmV3" {
			t.Fatalf("resealed row %+v", a)
		}
		if page, _ := s.ExchangeAccountsToRekey(ctx, "k2", "", 10); len(page) != 1 || page[0].ID != "acc-0" {
			t.Fatalf("left to rekey %+v", page)
		}
	})
}
