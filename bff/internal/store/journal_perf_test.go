package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestJournalKeyLookupsUseTheirIndex: the Idempotency-Key lookups of the order journal are searches of the partial
// unique indexes on SQLite, not a walk through the member's entries.
func TestJournalKeyLookupsUseTheirIndex(t *testing.T) {
	s := openSQLite(t, t.TempDir())
	ctx := ctxT(t)
	for table, index := range map[string]string{"orders": "orders_idempotency", "order_actions": "order_actions_idempotency"} {
		rows, err := s.read.QueryContext(ctx, "EXPLAIN QUERY PLAN SELECT id FROM "+table+" WHERE "+byKeyWhere, "m", "k")
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		if got := strings.Join(plan, "; "); !strings.Contains(got, "USING INDEX "+index+" (member_id=? AND idempotency_key=?)") {
			t.Fatalf("%s: plan %q does not search %s by member and key", table, got, index)
		}
	}
}

// TestPreparedStatementsUnderConcurrentJournalWrites: on SQLite the journal's statements are prepared once and
// reused, inside transactions too (the writer's one connection is never asked for a second time while a transaction
// holds it: this would hang), and concurrent intents, acknowledgements and reads all land.
func TestPreparedStatementsUnderConcurrentJournalWrites(t *testing.T) {
	s := openSQLite(t, t.TempDir())
	ctx := ctxT(t)
	const workers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- journalRounds(ctx, s, w, each)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := s.nStmts.Load(); n == 0 || n > maxStmts {
		t.Fatalf("%d statements cached", n)
	}
	list, err := s.ListOrders(ctx, "m0", OrderFilter{})
	if err != nil || len(list) != each {
		t.Fatalf("member m0: %d entries, %v", len(list), err)
	}
	for _, o := range list {
		if o.State != OrderAcknowledged || o.OrderStatus != "NEW" || o.ExchangeOrderID != "x-"+o.ClientOrderID {
			t.Fatalf("entry %+v", o)
		}
	}
}

// TestPreparedStatementsInTransactions: a statement first run inside a transaction runs as text there (the
// transaction holds the writer's one connection, so preparing it on the pool would wait forever), is prepared on
// the writer once the transaction ends, and the next transactions use it.
func TestPreparedStatementsInTransactions(t *testing.T) {
	s := openSQLite(t, t.TempDir())
	ctx := ctxT(t)
	const query = "SELECT COUNT(*) FROM orders WHERE member_id = ?"
	for i := range 3 {
		err := s.tx(ctx, func(x q) error {
			var n int
			if err := x.row(ctx, query, "m").Scan(&n); err != nil {
				return err
			}
			_, err := x.exec(ctx, "UPDATE orders SET updated_at = ? WHERE member_id = ?", i, "m")
			return err
		})
		if err != nil {
			t.Fatalf("transaction %d: %v", i, err)
		}
		if _, ok := s.stmts.Load(stmtKey{s.write, query}); !ok {
			t.Fatalf("after transaction %d the statement is not prepared on the writer", i)
		}
	}
}

func journalRounds(ctx context.Context, s *Store, w, n int) error {
	member := fmt.Sprintf("m%d", w)
	for i := range n {
		key := fmt.Sprintf("k%d", i)
		cid := fmt.Sprintf("c%d-%d", w, i)
		o, created, err := s.CreateOrder(ctx, intent(member, key, cid, "h"))
		if err != nil || !created {
			return fmt.Errorf("create %s: %v %v", cid, created, err)
		}
		if _, err := s.AcknowledgeOrder(ctx, o.ID, OrderOutcome{ExchangeOrderID: "x-" + cid, OrderStatus: "NEW"}); err != nil {
			return fmt.Errorf("acknowledge %s: %w", cid, err)
		}
		got, err := s.OrderByKey(ctx, member, key)
		if err != nil || got.ID != o.ID || got.State != OrderAcknowledged {
			return fmt.Errorf("by key %s: %+v %v", key, got, err)
		}
		again, created, err := s.CreateOrder(ctx, intent(member, key, cid+"b", "h"))
		if err != nil || created || again.ID != o.ID {
			return fmt.Errorf("repeat %s: %v %v", key, created, err)
		}
	}
	return nil
}
