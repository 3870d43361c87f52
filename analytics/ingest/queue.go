package ingest

// rowQueue holds one table's pending rows in chunks of at most BatchRows rows, oldest first, so that queuing rows
// never copies the rows queued before them (one contiguous slice was regrown and copied, hundreds of thousands of
// rows at a time, while the writer sat at MaxPendingRows) and a full batch is taken without copying.
type rowQueue struct {
	chunks [][][]any
	n      int
}

// push appends rows, filling the newest chunk up to its capacity before starting another of batchRows.
func (q *rowQueue) push(rows [][]any, batchRows int) {
	for len(rows) > 0 {
		if len(q.chunks) == 0 || len(q.chunks[len(q.chunks)-1]) == cap(q.chunks[len(q.chunks)-1]) {
			q.chunks = append(q.chunks, make([][]any, 0, batchRows))
		}
		last := &q.chunks[len(q.chunks)-1]
		k := min(cap(*last)-len(*last), len(rows))
		*last = append(*last, rows[:k]...)
		rows = rows[k:]
		q.n += k
	}
}

// pop removes and returns the oldest rows, at most batchRows; the queue keeps no reference to them.
func (q *rowQueue) pop(batchRows int) [][]any {
	if first := q.chunks[0]; len(first) == batchRows || len(q.chunks) == 1 && len(first) <= batchRows {
		q.chunks[0] = nil
		q.chunks = q.chunks[1:]
		q.n -= len(first)
		return first
	}
	// A short chunk (given back, or the rest of a split one) at the front: fill a batch from the following ones.
	out := make([][]any, 0, batchRows)
	for len(out) < batchRows && len(q.chunks) > 0 {
		c := q.chunks[0]
		k := min(batchRows-len(out), len(c))
		out = append(out, c[:k]...)
		if k == len(c) {
			q.chunks[0] = nil
			q.chunks = q.chunks[1:]
		} else {
			q.chunks[0] = c[k:]
		}
	}
	q.n -= len(out)
	return out
}

// pushFront puts rows back in front of everything queued (a batch that could go nowhere).
func (q *rowQueue) pushFront(rows [][]any) {
	if len(rows) == 0 {
		return
	}
	q.chunks = append([][][]any{rows[:len(rows):len(rows)]}, q.chunks...)
	q.n += len(rows)
}
