package service

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/exhub/exhub/analytics/backfill"
	"github.com/exhub/exhub/analytics/query"
	"github.com/exhub/exhub/analytics/schema"
)

// ChartIntervals are the candle intervals the store rolls up from one-minute candles for the chart: whole minutes
// up to a day whose buckets are aligned to the Unix epoch the way the exchanges align them (days start at 00:00
// UTC). Coarser intervals (3d, 1w, 1M) are aligned differently per exchange and are served by the plugins.
var ChartIntervals = []string{"1m", "3m", "5m", "15m", "30m", "1h", "2h", "4h", "6h", "8h", "12h", "1d"}

// ChartStep is the length of a chart interval in milliseconds, 0 for an interval the store does not serve.
func ChartStep(interval string) int64 {
	if !slices.Contains(ChartIntervals, interval) {
		return 0
	}
	ms, err := backfill.PeriodMs(interval)
	if err != nil {
		return 0
	}
	return ms
}

// StoredCandle is one candle rolled up from stored one-minute candles, with the number of minutes it holds (a
// complete candle of interval step holds step/60000 minutes).
type StoredCandle struct {
	OpenTime                                    int64
	Open, High, Low, Close, Volume, QuoteVolume string
	Trades                                      uint64
	// Closed is false while the interval has not ended or any of its minutes was stored still forming.
	Closed bool
	// Minutes is how many one-minute candles it is made of; Forming how many of them were stored still forming.
	Minutes, Forming uint64
}

// chartSettings apply to the chart query: partitions follow the time column, so FINAL never merges across them.
var chartSettings = clickhouse.Settings{"do_not_merge_across_partitions_select_final": 1, "readonly": 2}

// StoredCandles returns the candles of one instrument whose open time is in [from, to] (Unix ms, multiples of
// stepMs), ascending, rolled up at query time from candles_1m with buckets aligned to the epoch. Buckets without
// any stored minute are absent.
func StoredCandles(ctx context.Context, st *query.Store, exchange, marketType, symbol string, stepMs, from, to int64) ([]StoredCandle, error) {
	if stepMs <= 0 || stepMs%60_000 != 0 {
		return nil, fmt.Errorf("analytics: candle step %d ms is not a whole number of minutes", stepMs)
	}
	db := st.Database
	if db == "" {
		db = "exhub"
	}
	q := fmt.Sprintf(`SELECT intDiv(toUnixTimestamp64Milli(open_time), %d) * %d AS t,
    toString(argMin(open, open_time)), toString(max(high)), toString(min(low)), toString(argMax(close, open_time)),
    toString(sum(volume)), toString(sum(quote_volume)), sum(trades), countIf(NOT closed), count()
FROM `+"`%s`.`%s`"+` FINAL
WHERE exchange = ? AND market_type = ? AND symbol = ?
  AND open_time >= fromUnixTimestamp64Milli(?, 'UTC') AND open_time < fromUnixTimestamp64Milli(?, 'UTC')
GROUP BY t ORDER BY t`, stepMs, stepMs, db, schema.Candles1m)
	ctx = clickhouse.Context(ctx, clickhouse.WithSettings(chartSettings))
	rows, err := st.Conn.Query(ctx, q, exchange, marketType, symbol, from, to+stepMs)
	if err != nil {
		return nil, fmt.Errorf("analytics: candles: %w", err)
	}
	defer rows.Close()
	now := time.Now().UnixMilli()
	var out []StoredCandle
	for rows.Next() {
		var c StoredCandle
		if err := rows.Scan(&c.OpenTime, &c.Open, &c.High, &c.Low, &c.Close, &c.Volume, &c.QuoteVolume, &c.Trades, &c.Forming, &c.Minutes); err != nil {
			return nil, fmt.Errorf("analytics: candles: scan: %w", err)
		}
		c.Closed = c.Forming == 0 && c.OpenTime+stepMs <= now
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("analytics: candles: %w", err)
	}
	return out, nil
}
