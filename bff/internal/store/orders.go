package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Journal states of an order (orders.state).
const (
	// OrderSent: the intent is written and the plugin call is (or was, before a crash) under way.
	OrderSent = "sent"
	// OrderAcknowledged: the exchange holds the order (ExchangeOrderID set); OrderStatus follows it.
	OrderAcknowledged = "acknowledged"
	// OrderRejected: the exchange (or the host, before sending) refused it; nothing was placed.
	OrderRejected = "rejected"
	// OrderUnknown: the call may have executed; the trading service resolves it by client id.
	OrderUnknown = "unknown"
	// OrderNotPlaced: an unknown outcome resolved as never placed (the exchange does not know the client id after
	// the grace period).
	OrderNotPlaced = "not_placed"
)

// Order kinds.
const (
	OrderKindOrder = "order"
	// OrderKindClose is the market order of a position close (ClosePosition).
	OrderKindClose = "close"
	// OrderKindAlgo is a conditional order (PlaceAlgoOrder); its client id is the client algo id and its exchange
	// order id the algo id.
	OrderKindAlgo = "algo"
)

// Order action kinds and states (order_actions).
const (
	ActionAmend  = "amend"
	ActionCancel = "cancel"

	ActionSent     = "sent"
	ActionDone     = "done"
	ActionRejected = "rejected"
	ActionUnknown  = "unknown"
)

// ErrKeyReused: an Idempotency-Key came back with a different request. It wraps ErrConflict.
var ErrKeyReused = fmt.Errorf("%w: idempotency key reused with a different request", ErrConflict)

// Order is one journal entry: what the member asked, the client id exhub gave it, and what became of it. Prices and
// sizes are decimal strings as the exchange takes them.
type Order struct {
	ID           string
	MemberID     string
	AccountID    string
	Exchange     string
	MarketType   string // SPOT or SWAP
	Symbol       string
	Kind         string // order or close
	Side         string
	Type         string
	TimeInForce  string
	Price        string
	Qty          string
	QuoteQty     string
	ReduceOnly   bool
	PositionSide string
	MarginMode   string
	// TakeProfit and StopLoss are small JSON documents (empty: none).
	TakeProfit string
	StopLoss   string
	// PriceMatch: the exchange prices the order from its book (QUEUE, OPPONENT, ...; empty: Price).
	PriceMatch string
	// Algo orders.
	TriggerPrice   string
	TriggerType    string
	ClosePosition  bool
	ClientOrderID  string
	IdempotencyKey string
	RequestHash    string

	State           string
	ExchangeOrderID string
	OrderStatus     string
	FilledQty       string
	AvgPrice        string
	RejectCode      string
	ExchangeCode    string
	RejectMessage   string
	ResolveAttempts int
	NextResolveAt   time.Time
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// Final reports whether the journal state can no longer change (the exchange's status of an acknowledged order
// still can).
func (o Order) Final() bool { return o.State == OrderRejected || o.State == OrderNotPlaced }

// Open reports whether the order rests on the exchange as far as the journal knows.
func (o Order) Open() bool {
	return o.State == OrderAcknowledged &&
		(o.OrderStatus == "NEW" || o.OrderStatus == "PARTIALLY_FILLED" || o.OrderStatus == "WAITING")
}

// OrderAction is one amend or cancel sent for a journal order.
type OrderAction struct {
	ID             string
	MemberID       string
	OrderID        string
	Action         string
	Price          string
	Qty            string
	IdempotencyKey string
	RequestHash    string
	State          string
	RejectCode     string
	ExchangeCode   string
	RejectMessage  string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Limits on journal fields.
const (
	maxOrderText      = 64
	maxIdempotencyKey = 255
	maxRejectMessage  = 1000
	// MaxOrderList is the most rows one ListOrders call returns.
	MaxOrderList = 500
)

const orderColumns = `id, member_id, account_id, exchange, market_type, symbol, kind, side, type, time_in_force, price,
	qty, quote_qty, reduce_only, position_side, margin_mode, take_profit, stop_loss, trigger_price, trigger_type,
	close_position, client_order_id, idempotency_key,
	request_hash, state, exchange_order_id, order_status, filled_qty, avg_price, reject_code, exchange_code,
	reject_message, resolve_attempts, next_resolve_at, created_at, updated_at, price_match`

func scanOrder(sc interface{ Scan(...any) error }) (Order, error) {
	var o Order
	var next sql.NullInt64
	var created, updated int64
	err := sc.Scan(&o.ID, &o.MemberID, &o.AccountID, &o.Exchange, &o.MarketType, &o.Symbol, &o.Kind, &o.Side, &o.Type,
		&o.TimeInForce, &o.Price, &o.Qty, &o.QuoteQty, &o.ReduceOnly, &o.PositionSide, &o.MarginMode, &o.TakeProfit,
		&o.StopLoss, &o.TriggerPrice, &o.TriggerType, &o.ClosePosition, &o.ClientOrderID, &o.IdempotencyKey, &o.RequestHash, &o.State, &o.ExchangeOrderID, &o.OrderStatus,
		&o.FilledQty, &o.AvgPrice, &o.RejectCode, &o.ExchangeCode, &o.RejectMessage, &o.ResolveAttempts, &next,
		&created, &updated, &o.PriceMatch)
	if err != nil {
		return Order{}, err
	}
	o.NextResolveAt = nullMicros(next)
	o.CreatedAt = fromMicros(created)
	o.UpdatedAt = fromMicros(updated)
	return o, nil
}

func validOrder(o Order) error {
	for name, v := range map[string]string{"member id": o.MemberID, "account id": o.AccountID, "exchange": o.Exchange,
		"symbol": o.Symbol, "side": o.Side, "type": o.Type, "client order id": o.ClientOrderID} {
		if v == "" || len(v) > maxOrderText {
			return fmt.Errorf("%w: order %s %q", ErrInvalid, name, v)
		}
	}
	if o.MarketType != "SPOT" && o.MarketType != "SWAP" {
		return fmt.Errorf("%w: market type %q", ErrInvalid, o.MarketType)
	}
	if o.Kind != OrderKindOrder && o.Kind != OrderKindClose && o.Kind != OrderKindAlgo {
		return fmt.Errorf("%w: order kind %q", ErrInvalid, o.Kind)
	}
	if len(o.IdempotencyKey) > maxIdempotencyKey {
		return fmt.Errorf("%w: idempotency key longer than %d", ErrInvalid, maxIdempotencyKey)
	}
	return nil
}

// CreateOrder writes an intent in state sent, before the plugin call. A row with the member's IdempotencyKey
// already there is returned instead (created false) when its RequestHash matches; a different hash is
// ErrKeyReused. A client order id already journaled on the exchange is ErrConflict.
func (s *Store) CreateOrder(ctx context.Context, o Order) (Order, bool, error) {
	if err := validOrder(o); err != nil {
		return Order{}, false, err
	}
	// A key already used is found by the insert (the unique index on member and key) and answered from its row
	// below: no lookup before it, which the trading service has just made (one read less per order).
	now := s.stamp()
	o.ID = newID()
	o.State = OrderSent
	o.CreatedAt, o.UpdatedAt = now, now
	_, err := s.w().exec(ctx, `INSERT INTO orders (id, member_id, account_id, exchange, market_type, symbol, kind, side,
		type, time_in_force, price, qty, quote_qty, reduce_only, position_side, margin_mode, take_profit, stop_loss,
		trigger_price, trigger_type, close_position, client_order_id, idempotency_key, request_hash, state, created_at,
		updated_at, price_match) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		o.ID, o.MemberID, o.AccountID, o.Exchange, o.MarketType, o.Symbol, o.Kind, o.Side, o.Type, o.TimeInForce,
		o.Price, o.Qty, o.QuoteQty, o.ReduceOnly, o.PositionSide, o.MarginMode, o.TakeProfit, o.StopLoss,
		o.TriggerPrice, o.TriggerType, o.ClosePosition, o.ClientOrderID, o.IdempotencyKey, o.RequestHash, o.State, micros(now), micros(now),
		o.PriceMatch)
	if err != nil {
		if isUnique(err) {
			// A concurrent request with the same key won the insert; answer with its row.
			if o.IdempotencyKey != "" {
				if prev, err2 := s.orderByKey(ctx, s.w(), o.MemberID, o.IdempotencyKey); err2 == nil {
					return sameRequest(prev, o.RequestHash)
				}
			}
			return Order{}, false, fmt.Errorf("%w: client order id %q already journaled", ErrConflict, o.ClientOrderID)
		}
		return Order{}, false, fmt.Errorf("store: insert order: %w", err)
	}
	return o, true, nil
}

func sameRequest(prev Order, hash string) (Order, bool, error) {
	if prev.RequestHash != hash {
		return Order{}, false, ErrKeyReused
	}
	return prev, false, nil
}

// byKeyWhere finds a member's row by Idempotency-Key. The non-empty key condition repeats the condition of the partial
// unique indexes (orders_idempotency, order_actions_idempotency): without it neither SQLite nor PostgreSQL's generic
// plan can use them for a bound key, and the lookup reads every journal entry of the member (the order path's
// largest cost once a member had a few thousand orders).
const byKeyWhere = "member_id = ? AND idempotency_key = ? AND idempotency_key <> ''"

func (s *Store) orderByKey(ctx context.Context, x q, memberID, key string) (Order, error) {
	return oneOrder(x.row(ctx, "SELECT "+orderColumns+" FROM orders WHERE "+byKeyWhere, memberID, key))
}

func oneOrder(row *sql.Row) (Order, error) {
	o, err := scanOrder(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Order{}, fmt.Errorf("%w: order", ErrNotFound)
	}
	if err != nil {
		return Order{}, fmt.Errorf("store: order: %w", err)
	}
	return o, nil
}

// Order returns one journal entry by id.
func (s *Store) Order(ctx context.Context, id string) (Order, error) {
	return oneOrder(s.r().row(ctx, "SELECT "+orderColumns+" FROM orders WHERE id = ?", id))
}

// MemberOrder returns the member's journal entry; ErrNotFound when it does not exist or is another member's.
func (s *Store) MemberOrder(ctx context.Context, memberID, id string) (Order, error) {
	return oneOrder(s.r().row(ctx, "SELECT "+orderColumns+" FROM orders WHERE id = ? AND member_id = ?", id, memberID))
}

// OrderByKey returns the member's journal entry made with an Idempotency-Key.
func (s *Store) OrderByKey(ctx context.Context, memberID, key string) (Order, error) {
	return s.orderByKey(ctx, s.r(), memberID, key)
}

// OrderByClientID returns the journal entry of a client order id on an exchange.
func (s *Store) OrderByClientID(ctx context.Context, exchange, clientOrderID string) (Order, error) {
	return oneOrder(s.r().row(ctx, "SELECT "+orderColumns+" FROM orders WHERE exchange = ? AND client_order_id = ?",
		exchange, clientOrderID))
}

// OrderOutcome is what the exchange said about an order (or what resolving it found).
type OrderOutcome struct {
	ExchangeOrderID string
	OrderStatus     string
	FilledQty       string
	AvgPrice        string
	// Rejections.
	RejectCode    string
	ExchangeCode  string
	RejectMessage string
}

// AcknowledgeOrder records that the exchange holds the order (from sent or unknown; an acknowledged order just
// takes the newer status). A rejected or not-placed order is ErrInvalidTransition: the journal never contradicts a
// final answer silently.
func (s *Store) AcknowledgeOrder(ctx context.Context, id string, out OrderOutcome) (Order, error) {
	if out.ExchangeOrderID == "" {
		return Order{}, fmt.Errorf("%w: acknowledgement without an exchange order id", ErrInvalid)
	}
	return s.transition(ctx, id, []string{OrderSent, OrderUnknown, OrderAcknowledged}, OrderAcknowledged, out, time.Time{})
}

// RejectOrder records a refusal (from sent or unknown).
func (s *Store) RejectOrder(ctx context.Context, id string, out OrderOutcome) (Order, error) {
	return s.transition(ctx, id, []string{OrderSent, OrderUnknown}, OrderRejected, out, time.Time{})
}

// MarkOrderUnknown records that the call may have executed; the resolver looks at it again at next.
func (s *Store) MarkOrderUnknown(ctx context.Context, id string, next time.Time) (Order, error) {
	return s.transition(ctx, id, []string{OrderSent, OrderUnknown}, OrderUnknown, OrderOutcome{}, next)
}

// MarkOrderNotPlaced records that an unknown outcome was resolved as never placed.
func (s *Store) MarkOrderNotPlaced(ctx context.Context, id, message string) (Order, error) {
	return s.transition(ctx, id, []string{OrderSent, OrderUnknown}, OrderNotPlaced,
		OrderOutcome{RejectCode: "NOT_PLACED", RejectMessage: message}, time.Time{})
}

func (s *Store) transition(ctx context.Context, id string, from []string, to string, out OrderOutcome, next time.Time) (Order, error) {
	// One UPDATE ... RETURNING: the state check is its WHERE clause, so no transaction, no read before it and (on
	// PostgreSQL) one round trip instead of four. Empty outcome fields keep the column's value.
	now := s.stamp()
	set := "state = ?, updated_at = ?"
	args := []any{to, micros(now)}
	switch to {
	case OrderAcknowledged:
		set += `, exchange_order_id = CASE WHEN ? = '' THEN exchange_order_id ELSE ? END,
			order_status = CASE WHEN ? = '' THEN order_status ELSE ? END,
			filled_qty = CASE WHEN ? = '' THEN filled_qty ELSE ? END,
			avg_price = CASE WHEN ? = '' THEN avg_price ELSE ? END, next_resolve_at = NULL`
		args = append(args, out.ExchangeOrderID, out.ExchangeOrderID, out.OrderStatus, out.OrderStatus, out.FilledQty,
			out.FilledQty, out.AvgPrice, out.AvgPrice)
	case OrderRejected, OrderNotPlaced:
		set += ", reject_code = ?, exchange_code = ?, reject_message = ?, order_status = 'REJECTED', next_resolve_at = NULL"
		args = append(args, out.RejectCode, out.ExchangeCode, clip(out.RejectMessage, maxRejectMessage))
	case OrderUnknown:
		set += ", resolve_attempts = resolve_attempts + 1, next_resolve_at = ?"
		args = append(args, micros(next.UTC().Truncate(time.Microsecond)))
	default:
		return Order{}, fmt.Errorf("%w: order state %q", ErrInvalid, to)
	}
	args = append(args, id)
	for _, f := range from {
		args = append(args, f)
	}
	query := "UPDATE orders SET " + set + " WHERE id = ? AND state IN (?" + strings.Repeat(", ?", len(from)-1) +
		") RETURNING " + orderColumns
	o, err := oneOrder(s.w().row(ctx, query, args...))
	if errors.Is(err, ErrNotFound) {
		cur, rerr := s.Order(ctx, id)
		if rerr != nil {
			return Order{}, rerr
		}
		return Order{}, fmt.Errorf("%w: order %s is %s, cannot become %s", ErrInvalidTransition, id, cur.State, to)
	}
	if err != nil {
		return Order{}, fmt.Errorf("store: update order: %w", err)
	}
	return o, nil
}

// clip cuts s to at most n bytes without splitting a character.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// OrdersToResolve returns entries whose outcome is open: unknown ones due at now, and sent ones untouched since
// sentBefore (left by a crash or a call that never came back), oldest first.
func (s *Store) OrdersToResolve(ctx context.Context, now, sentBefore time.Time, limit int) ([]Order, error) {
	if limit <= 0 || limit > MaxOrderList {
		limit = MaxOrderList
	}
	return s.orders(ctx, `SELECT `+orderColumns+` FROM orders
		WHERE (state = ? AND (next_resolve_at IS NULL OR next_resolve_at <= ?)) OR (state = ? AND updated_at < ?)
		ORDER BY created_at LIMIT ?`,
		OrderUnknown, micros(now), OrderSent, micros(sentBefore), limit)
}

// OrderFilter selects a member's journal entries. Empty fields match everything.
type OrderFilter struct {
	Exchange   string
	MarketType string
	Symbol     string
	// Open: acknowledged and NEW or PARTIALLY_FILLED, plus sent and unknown (still being resolved).
	Open bool
	// Before pages older rows (created_at < Before).
	Before time.Time
	Limit  int
}

// ListOrders returns the member's journal entries, newest first.
func (s *Store) ListOrders(ctx context.Context, memberID string, f OrderFilter) ([]Order, error) {
	query := "SELECT " + orderColumns + " FROM orders WHERE member_id = ?"
	args := []any{memberID}
	if f.Exchange != "" {
		query += " AND exchange = ?"
		args = append(args, f.Exchange)
	}
	if f.MarketType != "" {
		query += " AND market_type = ?"
		args = append(args, f.MarketType)
	}
	if f.Symbol != "" {
		query += " AND symbol = ?"
		args = append(args, f.Symbol)
	}
	if f.Open {
		query += " AND (state IN (?, ?) OR (state = ? AND order_status IN ('NEW', 'PARTIALLY_FILLED', 'WAITING')))"
		args = append(args, OrderSent, OrderUnknown, OrderAcknowledged)
	}
	if !f.Before.IsZero() {
		query += " AND created_at < ?"
		args = append(args, micros(f.Before))
	}
	if f.Limit <= 0 || f.Limit > MaxOrderList {
		f.Limit = MaxOrderList
	}
	query += " ORDER BY created_at DESC, id DESC LIMIT ?"
	args = append(args, f.Limit)
	return s.orders(ctx, query, args...)
}

// JournalAccount is one account with journal entries that may still rest on the exchange.
type JournalAccount struct {
	MemberID   string
	Exchange   string
	AccountID  string
	MarketType string
}

// openJournalStatus is the condition on an acknowledged entry the journal believes still live on the exchange: an
// order (or close) new or partially filled, an algo order waiting.
const openJournalStatus = `((kind <> 'algo' AND order_status IN ('NEW', 'PARTIALLY_FILLED'))
		OR (kind = 'algo' AND order_status = 'WAITING'))`

// OpenJournalAccounts lists the accounts (per market type) of an exchange (all when empty) that have acknowledged
// entries the journal believes live (orders open, algo orders waiting): what reconciliation re-reads and the
// account stream follower follows.
func (s *Store) OpenJournalAccounts(ctx context.Context, exchange string) ([]JournalAccount, error) {
	query := `SELECT DISTINCT member_id, exchange, account_id, market_type FROM orders
		WHERE state = ? AND ` + openJournalStatus
	args := []any{OrderAcknowledged}
	if exchange != "" {
		query += " AND exchange = ?"
		args = append(args, exchange)
	}
	rows, err := s.r().query(ctx, query+" ORDER BY member_id, exchange, account_id, market_type", args...)
	if err != nil {
		return nil, fmt.Errorf("store: journal accounts: %w", err)
	}
	defer rows.Close()
	var out []JournalAccount
	for rows.Next() {
		var a JournalAccount
		if err := rows.Scan(&a.MemberID, &a.Exchange, &a.AccountID, &a.MarketType); err != nil {
			return nil, fmt.Errorf("store: journal accounts: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// OpenJournalOrders returns the acknowledged entries of one account and market type the journal believes live:
// orders and closes new or partially filled, algo orders waiting (tell them apart by Kind).
func (s *Store) OpenJournalOrders(ctx context.Context, a JournalAccount) ([]Order, error) {
	return s.orders(ctx, `SELECT `+orderColumns+` FROM orders WHERE member_id = ? AND exchange = ? AND account_id = ?
		AND market_type = ? AND state = ? AND `+openJournalStatus+` ORDER BY created_at LIMIT ?`,
		a.MemberID, a.Exchange, a.AccountID, a.MarketType, OrderAcknowledged, MaxOrderList)
}

// UpdateOrderStatus records the exchange's newer view of an acknowledged order (reconciliation, cancel, amend).
// Empty fields keep their value.
func (s *Store) UpdateOrderStatus(ctx context.Context, id string, out OrderOutcome) (Order, error) {
	return s.transition(ctx, id, []string{OrderAcknowledged}, OrderAcknowledged, OrderOutcome{
		ExchangeOrderID: out.ExchangeOrderID, OrderStatus: out.OrderStatus, FilledQty: out.FilledQty, AvgPrice: out.AvgPrice,
	}, time.Time{})
}

// OrderChange is what an amend changed: empty fields keep their value. A cancel-replace (Binance spot) gives the
// order a new exchange order id and client id.
type OrderChange struct {
	Price           string
	Qty             string
	ClientOrderID   string
	ExchangeOrderID string
}

// UpdateOrderRequest records an amend's new values.
func (s *Store) UpdateOrderRequest(ctx context.Context, id string, c OrderChange) error {
	_, err := s.w().exec(ctx, `UPDATE orders SET price = CASE WHEN ? = '' THEN price ELSE ? END,
		qty = CASE WHEN ? = '' THEN qty ELSE ? END,
		client_order_id = CASE WHEN ? = '' THEN client_order_id ELSE ? END,
		exchange_order_id = CASE WHEN ? = '' THEN exchange_order_id ELSE ? END, updated_at = ? WHERE id = ?`,
		c.Price, c.Price, c.Qty, c.Qty, c.ClientOrderID, c.ClientOrderID, c.ExchangeOrderID, c.ExchangeOrderID,
		micros(s.stamp()), id)
	if err != nil {
		if isUnique(err) {
			return fmt.Errorf("%w: client order id %q already journaled", ErrConflict, c.ClientOrderID)
		}
		return fmt.Errorf("store: update order request: %w", err)
	}
	return nil
}

func (s *Store) orders(ctx context.Context, query string, args ...any) ([]Order, error) {
	rows, err := s.r().query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: orders: %w", err)
	}
	defer rows.Close()
	var out []Order
	for rows.Next() {
		o, err := scanOrder(rows)
		if err != nil {
			return nil, fmt.Errorf("store: orders: %w", err)
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: orders: %w", err)
	}
	return out, nil
}

// ---- actions ------------------------------------------------------------------------------------------------------

const actionColumns = `id, member_id, order_id, action, price, qty, idempotency_key, request_hash, state, reject_code,
	exchange_code, reject_message, created_at, updated_at`

func scanAction(sc interface{ Scan(...any) error }) (OrderAction, error) {
	var a OrderAction
	var created, updated int64
	err := sc.Scan(&a.ID, &a.MemberID, &a.OrderID, &a.Action, &a.Price, &a.Qty, &a.IdempotencyKey, &a.RequestHash,
		&a.State, &a.RejectCode, &a.ExchangeCode, &a.RejectMessage, &created, &updated)
	if err != nil {
		return OrderAction{}, err
	}
	a.CreatedAt, a.UpdatedAt = fromMicros(created), fromMicros(updated)
	return a, nil
}

func oneAction(row *sql.Row) (OrderAction, error) {
	a, err := scanAction(row)
	if errors.Is(err, sql.ErrNoRows) {
		return OrderAction{}, fmt.Errorf("%w: order action", ErrNotFound)
	}
	if err != nil {
		return OrderAction{}, fmt.Errorf("store: order action: %w", err)
	}
	return a, nil
}

// CreateOrderAction writes an amend or cancel before it is sent. With an IdempotencyKey the member already used, the
// earlier action comes back (created false) when the request hash matches, ErrKeyReused otherwise.
func (s *Store) CreateOrderAction(ctx context.Context, a OrderAction) (OrderAction, bool, error) {
	if a.Action != ActionAmend && a.Action != ActionCancel {
		return OrderAction{}, false, fmt.Errorf("%w: action %q", ErrInvalid, a.Action)
	}
	if a.MemberID == "" || a.OrderID == "" || len(a.IdempotencyKey) > maxIdempotencyKey {
		return OrderAction{}, false, fmt.Errorf("%w: order action", ErrInvalid)
	}
	lookup := func(x q) (OrderAction, bool, error) {
		prev, err := oneAction(x.row(ctx, "SELECT "+actionColumns+" FROM order_actions WHERE "+byKeyWhere,
			a.MemberID, a.IdempotencyKey))
		if err != nil {
			return OrderAction{}, false, err
		}
		if prev.RequestHash != a.RequestHash {
			return OrderAction{}, false, ErrKeyReused
		}
		return prev, false, nil
	}
	if a.IdempotencyKey != "" {
		if prev, created, err := lookup(s.r()); !errors.Is(err, ErrNotFound) {
			return prev, created, err
		}
	}
	now := s.stamp()
	a.ID, a.State, a.CreatedAt, a.UpdatedAt = newID(), ActionSent, now, now
	_, err := s.w().exec(ctx, `INSERT INTO order_actions (id, member_id, order_id, action, price, qty, idempotency_key,
		request_hash, state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.MemberID, a.OrderID, a.Action, a.Price, a.Qty, a.IdempotencyKey, a.RequestHash, a.State, micros(now), micros(now))
	if err != nil {
		if isUnique(err) && a.IdempotencyKey != "" {
			return lookup(s.w())
		}
		return OrderAction{}, false, fmt.Errorf("store: insert order action: %w", err)
	}
	return a, true, nil
}

// FinishOrderAction records an action's outcome: done, rejected (with the reason) or unknown.
func (s *Store) FinishOrderAction(ctx context.Context, id, state string, out OrderOutcome) (OrderAction, error) {
	if state != ActionDone && state != ActionRejected && state != ActionUnknown {
		return OrderAction{}, fmt.Errorf("%w: action state %q", ErrInvalid, state)
	}
	res, err := s.w().exec(ctx, `UPDATE order_actions SET state = ?, reject_code = ?, exchange_code = ?, reject_message = ?,
		updated_at = ? WHERE id = ? AND state IN (?, ?)`,
		state, out.RejectCode, out.ExchangeCode, clip(out.RejectMessage, maxRejectMessage), micros(s.stamp()), id,
		ActionSent, ActionUnknown)
	if err != nil {
		return OrderAction{}, fmt.Errorf("store: finish order action: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return OrderAction{}, fmt.Errorf("%w: order action %s is not open", ErrInvalidTransition, id)
	}
	return s.OrderAction(ctx, id)
}

// OrderAction returns one action.
func (s *Store) OrderAction(ctx context.Context, id string) (OrderAction, error) {
	return oneAction(s.r().row(ctx, "SELECT "+actionColumns+" FROM order_actions WHERE id = ?", id))
}

// OrderActions lists the actions of one journal order, oldest first.
func (s *Store) OrderActions(ctx context.Context, orderID string) ([]OrderAction, error) {
	rows, err := s.r().query(ctx, "SELECT "+actionColumns+" FROM order_actions WHERE order_id = ? ORDER BY created_at, id", orderID)
	if err != nil {
		return nil, fmt.Errorf("store: order actions: %w", err)
	}
	defer rows.Close()
	var out []OrderAction
	for rows.Next() {
		a, err := scanAction(rows)
		if err != nil {
			return nil, fmt.Errorf("store: order actions: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}
