package store

import (
	"testing"
	"time"
)

// TestEntriesToArm: a filled SWAP entry with TP/SL is listed until both its legs are journaled; one with only a
// take-profit until that leg is; an unfilled, open, spot or other-exchange entry never.
func TestEntriesToArm(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		mk := func(key, cid, status, filled string, edit func(*Order)) Order {
			t.Helper()
			o := intent("a", key, cid, key)
			o.TakeProfit, o.StopLoss = `{"trigger_price":"50000"}`, `{"trigger_price":"30000"}`
			if edit != nil {
				edit(&o)
			}
			o, _, err := s.CreateOrder(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			o, err = s.AcknowledgeOrder(ctx, o.ID, OrderOutcome{ExchangeOrderID: "x-" + cid, OrderStatus: status, FilledQty: filled})
			if err != nil {
				t.Fatal(err)
			}
			return o
		}
		both := mk("k1", "c1", "FILLED", "0.001", nil)
		tpOnly := mk("k2", "c2", "CANCELLED", "0.0005", func(o *Order) { o.StopLoss = "" })
		mk("k3", "c3", "CANCELLED", "0", nil)
		mk("k4", "c4", "NEW", "0", nil)
		mk("k5", "c5", "FILLED", "0.001", func(o *Order) { o.MarketType = "SPOT" })
		mk("k6", "c6", "FILLED", "0.001", func(o *Order) { o.Exchange = "okx" })
		ids := func(since time.Time) []string {
			t.Helper()
			got, err := s.EntriesToArm(ctx, []string{"binance"}, since, 10)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, o := range got {
				out = append(out, o.ID)
			}
			return out
		}
		if got := ids(time.Time{}); len(got) != 2 || got[0] != both.ID || got[1] != tpOnly.ID {
			t.Fatalf("to arm %v, want %s %s", got, both.ID, tpOnly.ID)
		}
		if got := ids(time.Now().Add(time.Hour)); len(got) != 0 {
			t.Fatalf("updated since an hour ahead: %v", got)
		}
		leg := func(entry Order, name, cid string) {
			t.Helper()
			o := intent("a", AttachedKeyPrefix+entry.ID+":"+name, cid, cid)
			o.Kind = OrderKindAlgo
			if _, _, err := s.CreateOrder(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		leg(both, "tp", "l1")
		if got := ids(time.Time{}); len(got) != 2 {
			t.Fatalf("one leg of two journaled: %v", got)
		}
		leg(both, "sl", "l2")
		leg(tpOnly, "tp", "l3")
		if got := ids(time.Time{}); len(got) != 0 {
			t.Fatalf("every leg journaled: %v", got)
		}
	})
}

// TestAttachedToCancel: a waiting leg is listed once its sibling triggered, not before, and never another waiting
// algo order.
func TestAttachedToCancel(t *testing.T) {
	engines(t, func(t *testing.T, s *Store) {
		ctx := ctxT(t)
		leg := func(key, cid, status string) Order {
			t.Helper()
			o := intent("a", key, cid, cid)
			o.Kind = OrderKindAlgo
			o, _, err := s.CreateOrder(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			if o, err = s.AcknowledgeOrder(ctx, o.ID, OrderOutcome{ExchangeOrderID: "x-" + cid, OrderStatus: status}); err != nil {
				t.Fatal(err)
			}
			return o
		}
		tp := leg(AttachedKeyPrefix+"e1:tp", "t1", "WAITING")
		sl := leg(AttachedKeyPrefix+"e1:sl", "s1", "WAITING")
		leg("plain", "p1", "WAITING")
		list := func() []string {
			t.Helper()
			got, err := s.AttachedToCancel(ctx, 10)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, o := range got {
				ids = append(ids, o.ID)
			}
			return ids
		}
		if got := list(); len(got) != 0 {
			t.Fatalf("nothing triggered yet: %v", got)
		}
		if _, err := s.UpdateOrderStatus(ctx, tp.ID, OrderOutcome{OrderStatus: "TRIGGERED"}); err != nil {
			t.Fatal(err)
		}
		if got := list(); len(got) != 1 || got[0] != sl.ID {
			t.Fatalf("the take-profit triggered: %v, want the stop-loss %s", got, sl.ID)
		}
	})
}
