package store

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

func movementIntent(member, key, cid, hash string) Movement {
	return Movement{MemberID: member, Exchange: "binance", AccountID: "acc-" + member, Kind: MovementWithdraw,
		ClientID: cid, IdempotencyKey: key, RequestHash: hash, Asset: "USDT", Amount: "25.5", Fee: "1",
		Network: "TRX", Address: "T-addr", Memo: ""}
}

func TestMovementJournalIdempotency(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		m, created, err := s.CreateMovement(ctx, movementIntent("a", "k1", "c1", "h1"))
		if err != nil || !created || m.State != MovementSent || m.ID == "" || m.Amount != "25.5" {
			t.Fatalf("create %+v %v %v", m, created, err)
		}
		again, created, err := s.CreateMovement(ctx, movementIntent("a", "k1", "c2", "h1"))
		if err != nil || created || again.ID != m.ID || again.ClientID != "c1" {
			t.Fatalf("repeat %+v %v %v", again, created, err)
		}
		_, _, err = s.CreateMovement(ctx, movementIntent("a", "k1", "c3", "h2"))
		wantErr(t, err, ErrKeyReused)
		b, created, err := s.CreateMovement(ctx, movementIntent("b", "k1", "c4", "h2"))
		if err != nil || !created || b.ID == m.ID {
			t.Fatalf("other member %+v %v %v", b, created, err)
		}
		_, _, err = s.CreateMovement(ctx, movementIntent("a", "k9", "c1", "h9"))
		wantErr(t, err, ErrConflict)
		_, err = s.MemberMovement(ctx, "b", m.ID)
		wantErr(t, err, ErrNotFound)
		if got, err := s.MemberMovement(ctx, "a", m.ID); err != nil || got.ID != m.ID {
			t.Fatalf("own movement %+v %v", got, err)
		}
		if got, err := s.MovementByKey(ctx, "a", "k1"); err != nil || got.ID != m.ID {
			t.Fatalf("by key %+v %v", got, err)
		}
		bad := movementIntent("a", "k5", "c5", "h")
		bad.Kind = "loan"
		_, _, err = s.CreateMovement(ctx, bad)
		wantErr(t, err, ErrInvalid)
		bad = movementIntent("a", "k6", "c6", "h")
		bad.Amount = "1e3x"
		_, _, err = s.CreateMovement(ctx, bad)
		wantErr(t, err, ErrInvalid)
	})
}

func TestMovementJournalConcurrentKey(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		const n = 8
		ids := make([]string, n)
		createdN := 0
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				m, created, err := s.CreateMovement(ctx, movementIntent("a", "same", fmt.Sprintf("c%d", i), "h"))
				if err != nil {
					t.Errorf("create %d: %v", i, err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				ids[i] = m.ID
				if created {
					createdN++
				}
			}()
		}
		wg.Wait()
		if createdN != 1 {
			t.Fatalf("%d entries created for one key", createdN)
		}
		for _, id := range ids {
			if id != ids[0] {
				t.Fatalf("different answers for one key: %v", ids)
			}
		}
		if list, err := s.ListMovements(ctx, "a", MovementFilter{}); err != nil || len(list) != 1 {
			t.Fatalf("journal has %d entries: %v", len(list), err)
		}
	})
}

func TestMovementJournalTransitions(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		m, _, err := s.CreateMovement(ctx, movementIntent("a", "k1", "c1", "h"))
		if err != nil {
			t.Fatal(err)
		}
		next := time.Now().Add(time.Hour)
		u, err := s.MarkMovementUnknown(ctx, m.ID, next)
		if err != nil || u.State != MovementUnknown || u.ResolveAttempts != 1 {
			t.Fatalf("unknown %+v %v", u, err)
		}
		if list, err := s.MovementsToResolve(ctx, time.Now(), time.Now().Add(-time.Hour), 10); err != nil || len(list) != 0 {
			t.Fatalf("resolve now %+v %v", list, err)
		}
		if list, err := s.MovementsToResolve(ctx, next.Add(time.Second), time.Now().Add(-time.Hour), 10); err != nil || len(list) != 1 {
			t.Fatalf("resolve later %+v %v", list, err)
		}
		// Acknowledged and followed: due again at its next time.
		later := time.Now().Add(2 * time.Hour)
		a, err := s.AcknowledgeMovement(ctx, m.ID, MovementOutcome{ExchangeID: "w1", ExchangeStatus: "PENDING", Fee: "1.5"}, later)
		if err != nil || a.State != MovementAcknowledged || a.ExchangeID != "w1" || a.Fee != "1.5" {
			t.Fatalf("ack %+v %v", a, err)
		}
		if list, err := s.MovementsToResolve(ctx, later.Add(time.Second), time.Now().Add(-time.Hour), 10); err != nil || len(list) != 1 {
			t.Fatalf("follow %+v %v", list, err)
		}
		_, err = s.RejectMovement(ctx, m.ID, MovementOutcome{ErrorCode: "x"})
		wantErr(t, err, ErrInvalidTransition)
		c, err := s.CompleteMovement(ctx, m.ID, MovementOutcome{ExchangeStatus: "SUCCESS", TxID: "tx9"})
		if err != nil || c.State != MovementCompleted || c.ExchangeID != "w1" || c.TxID != "tx9" || !c.Final() {
			t.Fatalf("complete %+v %v", c, err)
		}
		_, err = s.FailMovement(ctx, m.ID, MovementOutcome{})
		wantErr(t, err, ErrInvalidTransition)
		if got, err := s.MovementByExchangeID(ctx, "binance", "acc-a", MovementWithdraw, "w1"); err != nil || got.ID != m.ID {
			t.Fatalf("by exchange id %+v %v", got, err)
		}
		_, err = s.MovementByExchangeID(ctx, "binance", "acc-b", MovementWithdraw, "w1")
		wantErr(t, err, ErrNotFound)

		// A sent entry left behind is stale after its bound.
		m2, _, err := s.CreateMovement(ctx, movementIntent("a", "k2", "c2", "h"))
		if err != nil {
			t.Fatal(err)
		}
		if list, err := s.MovementsToResolve(ctx, time.Now(), time.Now().Add(time.Minute), 10); err != nil || len(list) != 1 || list[0].ID != m2.ID {
			t.Fatalf("stale sent %+v %v", list, err)
		}
		r, err := s.RejectMovement(ctx, m2.ID, MovementOutcome{ErrorCode: "insufficient_funds", ExchangeCode: "-5002", ErrorText: "no"})
		if err != nil || r.State != MovementRejected || r.ExchangeCode != "-5002" {
			t.Fatalf("reject %+v %v", r, err)
		}
		m3, _, _ := s.CreateMovement(ctx, movementIntent("a", "k3", "c3", "h"))
		f, err := s.FailMovement(ctx, m3.ID, MovementOutcome{ErrorCode: "not_executed"})
		if err != nil || f.State != MovementFailed {
			t.Fatalf("fail %+v %v", f, err)
		}
	})
}

func TestMovementListGiftsAndTotals(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		start := time.Now().Add(-time.Minute)
		gift := Movement{MemberID: "a", Exchange: "okx", AccountID: "acc-a", Kind: MovementGift, ClientID: "g1",
			IdempotencyKey: "g", RequestHash: "h", Asset: "USDT", Amount: "5", RecipientMemberID: "b",
			FromSubAccount: "suba", ToSubAccount: "subb"}
		g, _, err := s.CreateMovement(ctx, gift)
		if err != nil {
			t.Fatal(err)
		}
		// The recipient sees a gift once it completed.
		if _, err := s.MemberMovement(ctx, "b", g.ID); err == nil {
			t.Fatal("the recipient reads a gift not completed")
		}
		if lb, _ := s.ListMovements(ctx, "b", MovementFilter{}); len(lb) != 0 {
			t.Fatalf("the recipient lists a gift not completed: %+v", lb)
		}
		if _, err := s.CompleteMovement(ctx, g.ID, MovementOutcome{ExchangeID: "t1"}); err != nil {
			t.Fatal(err)
		}
		for i, amt := range []string{"100", "250.25", "7"} {
			f := Movement{MemberID: "b", Exchange: "okx", Kind: MovementFaucet, ClientID: fmt.Sprintf("f%d", i),
				Asset: "USDT", Amount: amt, ToSubAccount: "subb"}
			fm, _, err := s.CreateMovement(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if i == 2 {
				if _, err := s.RejectMovement(ctx, fm.ID, MovementOutcome{ErrorCode: "x"}); err != nil {
					t.Fatal(err)
				}
			}
		}
		// b sees the gift it received and its faucet grants; a sees only its gift; c sees nothing.
		lb, err := s.ListMovements(ctx, "b", MovementFilter{})
		if err != nil || len(lb) != 4 {
			t.Fatalf("b's list %d %v", len(lb), err)
		}
		if got, err := s.MemberMovement(ctx, "b", g.ID); err != nil || got.ID != g.ID {
			t.Fatalf("recipient reads the gift: %+v %v", got, err)
		}
		la, err := s.ListMovements(ctx, "a", MovementFilter{})
		if err != nil || len(la) != 1 || la[0].ID != g.ID {
			t.Fatalf("a's list %+v %v", la, err)
		}
		if lc, err := s.ListMovements(ctx, "c", MovementFilter{}); err != nil || len(lc) != 0 {
			t.Fatalf("c's list %+v %v", lc, err)
		}
		_, err = s.MemberMovement(ctx, "c", g.ID)
		wantErr(t, err, ErrNotFound)
		// Filters and paging, newest first.
		fb, err := s.ListMovements(ctx, "b", MovementFilter{Kind: MovementFaucet, Limit: 2})
		if err != nil || len(fb) != 2 || fb[0].Amount != "7" || fb[1].Amount != "250.25" {
			t.Fatalf("faucet page %+v %v", fb, err)
		}
		rest, err := s.ListMovements(ctx, "b", MovementFilter{Kind: MovementFaucet, Before: fb[1].CreatedAt, BeforeID: fb[1].ID})
		if err != nil || len(rest) != 1 || rest[0].Amount != "100" {
			t.Fatalf("next page %+v %v", rest, err)
		}
		if rj, err := s.ListMovements(ctx, "b", MovementFilter{State: MovementRejected}); err != nil || len(rj) != 1 {
			t.Fatalf("state filter %+v %v", rj, err)
		}
		if ex, err := s.ListMovements(ctx, "b", MovementFilter{Exchange: "binance"}); err != nil || len(ex) != 0 {
			t.Fatalf("exchange filter %+v %v", ex, err)
		}
		// The cap counts what moved or may have moved: 100 + 250.25, not the rejected 7.
		sum, err := s.MovementTotal(ctx, "b", MovementFaucet, "okx", "USDT", start)
		if err != nil || sum.String() != "350.25" {
			t.Fatalf("total %s %v", sum, err)
		}
		if sum, err := s.MovementTotal(ctx, "b", MovementFaucet, "okx", "USDT", time.Now().Add(time.Hour)); err != nil || !sum.IsZero() {
			t.Fatalf("total later %s %v", sum, err)
		}
	})
}
