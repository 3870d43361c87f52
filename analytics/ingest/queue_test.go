package ingest

import (
	"math/rand/v2"
	"testing"
)

// TestRowQueueKeepsOrder pushes, pops and gives back rows at random and checks that every row comes out once, in
// order, in batches of at most BatchRows (full ones whenever enough rows are queued).
func TestRowQueueKeepsOrder(t *testing.T) {
	const batchRows = 7
	rnd := rand.New(rand.NewPCG(1, 2))
	var q rowQueue
	next := 0
	var model []int // what the queue should hold, oldest first
	for step := 0; step < 5000; step++ {
		switch op := rnd.IntN(3); {
		case op == 0 || q.n == 0:
			rows := make([][]any, rnd.IntN(20))
			for i := range rows {
				rows[i] = []any{next}
				model = append(model, next)
				next++
			}
			q.push(rows, batchRows)
		case op == 1:
			full := q.n >= batchRows
			got := q.pop(batchRows)
			if len(got) == 0 || len(got) > batchRows || full && len(got) != batchRows {
				t.Fatalf("step %d: popped %d rows with %d queued", step, len(got), q.n+len(got))
			}
			for _, r := range got {
				if r[0].(int) != model[0] {
					t.Fatalf("step %d: popped %v, want %d", step, r[0], model[0])
				}
				model = model[1:]
			}
			if rnd.IntN(4) == 0 { // could go nowhere: back to the front
				q.pushFront(got)
				back := make([]int, len(got))
				for i, r := range got {
					back[i] = r[0].(int)
				}
				model = append(back, model...)
			}
		default:
			continue
		}
		if q.n != len(model) {
			t.Fatalf("step %d: n = %d, model holds %d", step, q.n, len(model))
		}
	}
}
