package store

import (
	"context"
	"strings"
	"time"
)

// AttachedKeyPrefix starts the Idempotency-Key of an order exhub places for another one: "attached:<entry id>:tp"
// and ":sl" for the take-profit and stop-loss armed once an entry with TP/SL fills (the trading service's
// attached.go). The key makes the journal hold each at most once per entry.
const AttachedKeyPrefix = "attached:"

// EntriesToArm lists acknowledged SWAP orders on the given exchanges that carry a take-profit or stop-loss, whose
// exchange status is final with something filled (FILLED; CANCELLED or EXPIRED after a partial fill), updated at
// or after since (zero: any time), and for which the journal misses an attached order (a leg asked for); oldest first, at most
// limit.
func (s *Store) EntriesToArm(ctx context.Context, exchanges []string, since time.Time, limit int) ([]Order, error) {
	if len(exchanges) == 0 {
		return nil, nil
	}
	if limit <= 0 || limit > MaxOrderList {
		limit = MaxOrderList
	}
	query := `SELECT ` + orderColumns + ` FROM orders o WHERE o.kind = ? AND o.market_type = 'SWAP' AND o.state = ?
		AND (o.take_profit <> '' OR o.stop_loss <> '') AND o.order_status IN ('FILLED', 'CANCELLED', 'EXPIRED')
		AND o.filled_qty NOT IN ('', '0') AND o.exchange IN (?` + strings.Repeat(", ?", len(exchanges)-1) + `)
		AND o.updated_at >= ?
		AND ((o.take_profit <> '' AND NOT EXISTS (SELECT 1 FROM orders c WHERE c.member_id = o.member_id
				AND c.idempotency_key = CAST(? AS TEXT) || o.id || ':tp'))
			OR (o.stop_loss <> '' AND NOT EXISTS (SELECT 1 FROM orders c WHERE c.member_id = o.member_id
				AND c.idempotency_key = CAST(? AS TEXT) || o.id || ':sl')))
		ORDER BY o.updated_at, o.id LIMIT ?`
	args := []any{OrderKindOrder, OrderAcknowledged}
	for _, e := range exchanges {
		args = append(args, e)
	}
	var from int64
	if !since.IsZero() {
		from = micros(since)
	}
	args = append(args, from, AttachedKeyPrefix, AttachedKeyPrefix, limit)
	return s.orders(ctx, query, args...)
}

// AttachedToCancel lists the waiting legs exhub armed for an entry ("attached:<entry>:tp|sl") whose other leg has
// triggered: the position it protected is being closed, so the leg left would only act on a later position.
// Oldest first, at most limit.
func (s *Store) AttachedToCancel(ctx context.Context, limit int) ([]Order, error) {
	if limit <= 0 || limit > MaxOrderList {
		limit = MaxOrderList
	}
	query := `SELECT ` + orderColumns + ` FROM orders w WHERE w.kind = ? AND w.state = ? AND w.order_status = 'WAITING'
		AND w.idempotency_key LIKE ? AND EXISTS (SELECT 1 FROM orders t WHERE t.member_id = w.member_id
			AND t.kind = ? AND t.order_status = 'TRIGGERED'
			AND t.idempotency_key = substr(w.idempotency_key, 1, length(w.idempotency_key) - 2) ||
				CASE WHEN w.idempotency_key LIKE '%:tp' THEN 'sl' ELSE 'tp' END)
		ORDER BY w.updated_at, w.id LIMIT ?`
	return s.orders(ctx, query, OrderKindAlgo, OrderAcknowledged, AttachedKeyPrefix+"%", OrderKindAlgo, limit)
}
