package store

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

func intent(member, key, cid, hash string) Order {
	return Order{MemberID: member, AccountID: "acc-" + member, Exchange: "binance", MarketType: "SWAP", Symbol: "BTCUSDT",
		Kind: OrderKindOrder, Side: "BUY", Type: "LIMIT", TimeInForce: "GTC", Price: "40000.5", Qty: "0.001",
		ClientOrderID: cid, IdempotencyKey: key, RequestHash: hash}
}

func TestOrderJournalIdempotency(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		o, created, err := s.CreateOrder(ctx, intent("a", "k1", "cid1", "h1"))
		if err != nil || !created || o.State != OrderSent || o.ID == "" || o.Price != "40000.5" {
			t.Fatalf("create %+v %v %v", o, created, err)
		}
		// Same key, same request: the same entry, nothing new.
		again, created, err := s.CreateOrder(ctx, intent("a", "k1", "cid2", "h1"))
		if err != nil || created || again.ID != o.ID || again.ClientOrderID != "cid1" {
			t.Fatalf("repeat %+v %v %v", again, created, err)
		}
		// Same key, other request: refused.
		_, _, err = s.CreateOrder(ctx, intent("a", "k1", "cid3", "h2"))
		wantErr(t, err, ErrKeyReused)
		wantErr(t, err, ErrConflict)
		// The key is per member: member b may use it.
		b, created, err := s.CreateOrder(ctx, intent("b", "k1", "cid4", "h2"))
		if err != nil || !created || b.ID == o.ID {
			t.Fatalf("other member %+v %v %v", b, created, err)
		}
		// A client id is unique per exchange.
		_, _, err = s.CreateOrder(ctx, intent("a", "k9", "cid1", "h9"))
		wantErr(t, err, ErrConflict)
		// Member b never reads a's entry.
		_, err = s.MemberOrder(ctx, "b", o.ID)
		wantErr(t, err, ErrNotFound)
		if got, err := s.MemberOrder(ctx, "a", o.ID); err != nil || got.ID != o.ID {
			t.Fatalf("own order %+v %v", got, err)
		}
		bad := intent("a", "k5", "cid5", "h")
		bad.MarketType = "FUTURES"
		_, _, err = s.CreateOrder(ctx, bad)
		wantErr(t, err, ErrInvalid)
	})
}

func TestOrderJournalConcurrentKey(t *testing.T) {
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
				o, created, err := s.CreateOrder(ctx, intent("a", "same", fmt.Sprintf("c%d", i), "h"))
				if err != nil {
					t.Errorf("create %d: %v", i, err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				ids[i] = o.ID
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
		list, err := s.ListOrders(ctx, "a", OrderFilter{})
		if err != nil || len(list) != 1 {
			t.Fatalf("journal has %d entries: %v", len(list), err)
		}
	})
}

func TestOrderJournalTransitions(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		o, _, err := s.CreateOrder(ctx, intent("a", "k1", "cid1", "h"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.AcknowledgeOrder(ctx, o.ID, OrderOutcome{})
		wantErr(t, err, ErrInvalid)
		next := time.Now().Add(time.Hour)
		u, err := s.MarkOrderUnknown(ctx, o.ID, next)
		if err != nil || u.State != OrderUnknown || u.ResolveAttempts != 1 {
			t.Fatalf("unknown %+v %v", u, err)
		}
		// Not due yet; due later.
		if list, err := s.OrdersToResolve(ctx, time.Now(), time.Now(), 10); err != nil || len(list) != 0 {
			t.Fatalf("resolve now %+v %v", list, err)
		}
		if list, err := s.OrdersToResolve(ctx, next.Add(time.Second), time.Now(), 10); err != nil || len(list) != 1 {
			t.Fatalf("resolve later %+v %v", list, err)
		}
		a, err := s.AcknowledgeOrder(ctx, o.ID, OrderOutcome{ExchangeOrderID: "9001", OrderStatus: "NEW", FilledQty: "0"})
		if err != nil || a.State != OrderAcknowledged || a.ExchangeOrderID != "9001" || !a.Open() {
			t.Fatalf("ack %+v %v", a, err)
		}
		_, err = s.RejectOrder(ctx, o.ID, OrderOutcome{RejectCode: "X"})
		wantErr(t, err, ErrInvalidTransition)
		accts, err := s.OpenJournalAccounts(ctx, "binance")
		if err != nil || len(accts) != 1 || accts[0] != (JournalAccount{MemberID: "a", Exchange: "binance", AccountID: "acc-a", MarketType: "SWAP"}) {
			t.Fatalf("journal accounts %+v %v", accts, err)
		}
		open, err := s.OpenJournalOrders(ctx, accts[0])
		if err != nil || len(open) != 1 || open[0].ID != o.ID {
			t.Fatalf("open %+v %v", open, err)
		}
		f, err := s.UpdateOrderStatus(ctx, o.ID, OrderOutcome{OrderStatus: "FILLED", FilledQty: "0.001", AvgPrice: "40000.5"})
		if err != nil || f.Open() || f.ExchangeOrderID != "9001" || f.FilledQty != "0.001" {
			t.Fatalf("filled %+v %v", f, err)
		}
		if accts, _ := s.OpenJournalAccounts(ctx, ""); len(accts) != 0 {
			t.Fatalf("filled order still open: %+v", accts)
		}
		if err := s.UpdateOrderRequest(ctx, o.ID, OrderChange{Price: "41000", ClientOrderID: "cid1b"}); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Order(ctx, o.ID); got.Price != "41000" || got.Qty != "0.001" || got.ClientOrderID != "cid1b" || got.ExchangeOrderID != "9001" {
			t.Fatalf("amended request %+v", got)
		}

		// A rejection is final; a crash-left sent entry is picked once stale.
		r, _, _ := s.CreateOrder(ctx, intent("a", "k2", "cid2", "h"))
		rej, err := s.RejectOrder(ctx, r.ID, OrderOutcome{RejectCode: "INSUFFICIENT_FUNDS", ExchangeCode: "-2019", RejectMessage: "Margin is insufficient."})
		if err != nil || rej.State != OrderRejected || !rej.Final() || rej.ExchangeCode != "-2019" {
			t.Fatalf("reject %+v %v", rej, err)
		}
		_, err = s.AcknowledgeOrder(ctx, r.ID, OrderOutcome{ExchangeOrderID: "1"})
		wantErr(t, err, ErrInvalidTransition)
		sent, _, _ := s.CreateOrder(ctx, intent("a", "k3", "cid3", "h"))
		if list, _ := s.OrdersToResolve(ctx, time.Now(), sent.UpdatedAt, 10); len(list) != 0 {
			t.Fatalf("fresh sent entry picked: %+v", list)
		}
		list, err := s.OrdersToResolve(ctx, time.Now(), sent.UpdatedAt.Add(time.Second), 10)
		if err != nil || len(list) != 1 || list[0].ID != sent.ID {
			t.Fatalf("stale sent %+v %v", list, err)
		}
		np, err := s.MarkOrderNotPlaced(ctx, sent.ID, "not found")
		if err != nil || np.State != OrderNotPlaced || !np.Final() {
			t.Fatalf("not placed %+v %v", np, err)
		}
		if got, err := s.OrderByClientID(ctx, "binance", "cid3"); err != nil || got.ID != sent.ID {
			t.Fatalf("by client id %+v %v", got, err)
		}
		all, err := s.ListOrders(ctx, "a", OrderFilter{Exchange: "binance", MarketType: "SWAP", Symbol: "BTCUSDT"})
		if err != nil || len(all) != 3 || all[0].ID != sent.ID {
			t.Fatalf("list %+v %v", all, err)
		}
		if open, _ := s.ListOrders(ctx, "a", OrderFilter{Open: true}); len(open) != 0 {
			t.Fatalf("open list %+v", open)
		}
	})
}

func TestOrderActions(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		a, created, err := s.CreateOrderAction(ctx, OrderAction{MemberID: "a", OrderID: "o1", Action: ActionAmend, Price: "1", IdempotencyKey: "k", RequestHash: "h"})
		if err != nil || !created || a.State != ActionSent {
			t.Fatalf("create %+v %v", a, err)
		}
		again, created, err := s.CreateOrderAction(ctx, OrderAction{MemberID: "a", OrderID: "o1", Action: ActionAmend, Price: "1", IdempotencyKey: "k", RequestHash: "h"})
		if err != nil || created || again.ID != a.ID {
			t.Fatalf("repeat %+v %v", again, err)
		}
		_, _, err = s.CreateOrderAction(ctx, OrderAction{MemberID: "a", OrderID: "o1", Action: ActionAmend, Price: "2", IdempotencyKey: "k", RequestHash: "h2"})
		wantErr(t, err, ErrKeyReused)
		done, err := s.FinishOrderAction(ctx, a.ID, ActionDone, OrderOutcome{})
		if err != nil || done.State != ActionDone {
			t.Fatalf("finish %+v %v", done, err)
		}
		_, err = s.FinishOrderAction(ctx, a.ID, ActionRejected, OrderOutcome{})
		wantErr(t, err, ErrInvalidTransition)
		if list, err := s.OrderActions(ctx, "o1"); err != nil || len(list) != 1 {
			t.Fatalf("actions %+v %v", list, err)
		}
	})
}

// TestOpenJournalAlgoOrders: a waiting algo order is live (its account is reconciled and followed) until it is
// triggered, cancelled or failed; an order's own statuses keep their meaning.
func TestOpenJournalAlgoOrders(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		in := intent("a", "k-algo", "cid-algo", "h")
		in.Kind, in.Type, in.MarketType, in.TriggerPrice, in.TriggerType = OrderKindAlgo, "STOP_MARKET", "SPOT", "41000", "MARK"
		in.Price = ""
		algo, _, err := s.CreateOrder(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if accts, err := s.OpenJournalAccounts(ctx, ""); err != nil || len(accts) != 0 {
			t.Fatalf("a sent algo order is not yet live: %+v %v", accts, err)
		}
		if _, err := s.AcknowledgeOrder(ctx, algo.ID, OrderOutcome{ExchangeOrderID: "algo-1", OrderStatus: "WAITING"}); err != nil {
			t.Fatal(err)
		}
		// A plain order on another account of the same member, filled: not live.
		o, _, err := s.CreateOrder(ctx, intent("a", "k-order", "cid-order", "h2"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.AcknowledgeOrder(ctx, o.ID, OrderOutcome{ExchangeOrderID: "9", OrderStatus: "FILLED"}); err != nil {
			t.Fatal(err)
		}
		accts, err := s.OpenJournalAccounts(ctx, "binance")
		want := JournalAccount{MemberID: "a", Exchange: "binance", AccountID: "acc-a", MarketType: "SPOT"}
		if err != nil || len(accts) != 1 || accts[0] != want {
			t.Fatalf("journal accounts %+v %v, want only %+v", accts, err, want)
		}
		live, err := s.OpenJournalOrders(ctx, accts[0])
		if err != nil || len(live) != 1 || live[0].ID != algo.ID || live[0].Kind != OrderKindAlgo {
			t.Fatalf("live entries %+v %v", live, err)
		}
		if _, err := s.UpdateOrderStatus(ctx, algo.ID, OrderOutcome{OrderStatus: "TRIGGERED"}); err != nil {
			t.Fatal(err)
		}
		if accts, err := s.OpenJournalAccounts(ctx, ""); err != nil || len(accts) != 0 {
			t.Fatalf("a triggered algo order is still live: %+v %v", accts, err)
		}
	})
}
