package ingest

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/exhub/exhub/analytics/schema"
)

const hourMs = 3_600_000

// rollupWhere is the candles_1m condition selecting every whole hour the batch's minutes fall in, per instrument
// (from the first to the last touched hour), with its arguments. ok is false when the batch holds no usable row.
func rollupWhere(rows [][]any) (where string, args []any, ok bool) {
	type key struct{ exchange, marketType, symbol string }
	span := map[key][2]int64{}
	for _, r := range rows {
		if len(r) < 4 {
			continue
		}
		ex, ok1 := r[0].(string)
		mt, ok2 := r[1].(string)
		sym, ok3 := r[2].(string)
		t, ok4 := r[3].(int64)
		if !ok1 || !ok2 || !ok3 || !ok4 {
			continue
		}
		h := t - ((t%hourMs)+hourMs)%hourMs
		k := key{ex, mt, sym}
		if s, seen := span[k]; !seen {
			span[k] = [2]int64{h, h}
		} else {
			span[k] = [2]int64{min(s[0], h), max(s[1], h)}
		}
	}
	if len(span) == 0 {
		return "", nil, false
	}
	keys := make([]key, 0, len(span))
	for k := range span {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		return a.exchange+"\x00"+a.marketType+"\x00"+a.symbol < b.exchange+"\x00"+b.marketType+"\x00"+b.symbol
	})
	conds := make([]string, 0, len(keys))
	for _, k := range keys {
		s := span[k]
		conds = append(conds, "(exchange = ? AND market_type = ? AND symbol = ? AND open_time >= fromUnixTimestamp64Milli(?, 'UTC') AND open_time < fromUnixTimestamp64Milli(?, 'UTC'))")
		args = append(args, k.exchange, k.marketType, k.symbol, s[0], s[1]+hourMs)
	}
	return strings.Join(conds, " OR "), args, true
}

// rollup recomputes the candles_1h hours of a candles_1m batch ClickHouse acknowledged. Recomputations run one at a
// time per writer, each after its minutes were acknowledged, so a later one reads every minute an earlier one read
// and, stored with a later version, wins. An error fails the batch like a failed insert: it goes to the spool and
// its replay (the minutes deduplicated by their token) recomputes the hours again.
func (w *Writer) rollup(ctx context.Context, b *batch) error {
	where, args, ok := rollupWhere(b.rows)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, w.cfg.InsertTimeout)
	defer cancel()
	ctx = clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"distributed_foreground_insert": 1}))
	w.rollupMu.Lock()
	defer w.rollupMu.Unlock()
	if err := w.cfg.Conn.Exec(ctx, schema.RollupCandles1h(w.cfg.Database, where), args...); err != nil {
		return fmt.Errorf("ingest: roll up %s into %s: %w", b.table, schema.Candles1h, err)
	}
	return nil
}
