package backfill

import (
	"context"
	"fmt"

	"github.com/exhub/exhub/analytics/schema"
)

// Gap is a missing time range, both ends inclusive: slot times From, From+step, ..., To hold no row.
type Gap struct {
	From, To int64
}

// Series names one stored series: a table, its time column, its slot width and the filter naming the series.
type Series struct {
	Table   string
	TimeCol string
	StepMs  int64
	// Where are column = value filters (exchange, symbol, market_type, period, kind).
	Where map[string]string
	// Complete, when set, is a condition on the newest row of a slot (by ingested_at, as FINAL picks it) for the slot
	// to count as stored: candles use "closed", so a minute stored while still forming (e.g. left by a crash) is a
	// gap and gets fetched again.
	Complete string
}

// Gaps returns the missing slots of s between from and to (inclusive, aligned to the step): leading and trailing
// ranges and holes between stored rows. An empty series is one gap.
func Gaps(ctx context.Context, c schema.Conn, database string, s Series, from, to int64) ([]Gap, error) {
	from = alignUp(from, s.StepMs)
	to = to / s.StepMs * s.StepMs
	if to < from {
		return nil, nil
	}
	where, args := s.filter()
	// stored lists the slot times that count as stored.
	stored := fmt.Sprintf(`SELECT DISTINCT toUnixTimestamp64Milli(%[1]s) AS t FROM %[2]s.%[3]s
          WHERE %[4]s AND %[1]s >= fromUnixTimestamp64Milli(?, 'UTC') AND %[1]s <= fromUnixTimestamp64Milli(?, 'UTC')`,
		s.TimeCol, "`"+database+"`", "`"+s.Table+"`", where)
	if s.Complete != "" {
		stored = fmt.Sprintf(`SELECT toUnixTimestamp64Milli(%[1]s) AS t FROM %[2]s.%[3]s
          WHERE %[4]s AND %[1]s >= fromUnixTimestamp64Milli(?, 'UTC') AND %[1]s <= fromUnixTimestamp64Milli(?, 'UTC')
          GROUP BY t HAVING argMax(%[5]s, ingested_at)`, s.TimeCol, "`"+database+"`", "`"+s.Table+"`", where, s.Complete)
	}
	q := fmt.Sprintf(`SELECT prev, t FROM (
    SELECT t, lagInFrame(t, 1, toInt64(-1)) OVER (ORDER BY t ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS prev
    FROM (%[1]s)
) WHERE prev = -1 OR t - prev > ?
UNION ALL
SELECT max(t), -2 FROM (%[1]s) HAVING count() > 0`, stored)
	all := append(append(append([]any{}, args...), from, to, s.StepMs), append(append([]any{}, args...), from, to)...)
	rows, err := c.Query(ctx, q, all...)
	if err != nil {
		return nil, fmt.Errorf("backfill: gaps in %s: %w", s.Table, err)
	}
	defer rows.Close()
	var gaps []Gap
	last := int64(-1)
	for rows.Next() {
		var prev, t int64
		if err := rows.Scan(&prev, &t); err != nil {
			return nil, fmt.Errorf("backfill: gaps in %s: %w", s.Table, err)
		}
		switch {
		case t == -2: // the newest stored slot
			last = prev
		case prev == -1: // the oldest stored slot
			if t > from {
				gaps = append(gaps, Gap{From: from, To: t - s.StepMs})
			}
		default:
			gaps = append(gaps, Gap{From: prev + s.StepMs, To: t - s.StepMs})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("backfill: gaps in %s: %w", s.Table, err)
	}
	if last == -1 {
		return []Gap{{From: from, To: to}}, nil
	}
	if last < to {
		gaps = append(gaps, Gap{From: last + s.StepMs, To: to})
	}
	sortGaps(gaps)
	return gaps, nil
}

func (s Series) filter() (string, []any) {
	keys := make([]string, 0, len(s.Where))
	for k := range s.Where {
		keys = append(keys, k)
	}
	sortStrings(keys)
	where := "1"
	var args []any
	for _, k := range keys {
		where += " AND `" + k + "` = ?"
		args = append(args, s.Where[k])
	}
	return where, args
}

func alignUp(t, step int64) int64 {
	if r := t % step; r != 0 {
		return t + step - r
	}
	return t
}
