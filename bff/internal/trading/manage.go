package trading

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/store"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

var errOrderNotFound = &Error{Status: http.StatusNotFound, Code: "order_not_found", Message: "There is no such order."}

// memberOrder is the member's own journal entry; another member's id is "not found", never "forbidden".
func (s *Service) memberOrder(ctx context.Context, memberID, id string) (store.Order, error) {
	o, err := s.st.MemberOrder(ctx, memberID, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Order{}, errOrderNotFound
	}
	if err != nil {
		return store.Order{}, fmt.Errorf("trading: journal: %w", err)
	}
	return o, nil
}

// Order returns the member's journal entry.
func (s *Service) Order(ctx context.Context, memberID, id string) (store.Order, error) {
	return s.memberOrder(ctx, memberID, id)
}

// AwaitOutcome returns the member's journal entry once its outcome is known (no longer pending: the call answered,
// or the resolver settled a lost answer), or ctx's error. For callers that act on an order right after placing it
// (a tool, a test) and must not race the resolver on a loaded machine.
func (s *Service) AwaitOutcome(ctx context.Context, memberID, id string) (store.Order, error) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		o, err := s.memberOrder(ctx, memberID, id)
		if err != nil || StatusOf(o) != StatusPending {
			return o, err
		}
		select {
		case <-ctx.Done():
			return o, ctx.Err()
		case <-tick.C:
		}
	}
}

// target is an entry with its plugin and the member's account.
func (s *Service) target(ctx context.Context, o store.Order) (*pluginhost.Supervisor, *exchangev1.AccountRef, exchangev1.MarketType, error) {
	sup, err := s.supervisor(o.Exchange)
	if err != nil {
		return nil, nil, 0, err
	}
	acct, err := s.account(ctx, o.MemberID, o.Exchange)
	if err != nil {
		return nil, nil, 0, err
	}
	if acct.GetAccountId() != o.AccountID {
		return nil, nil, 0, &Error{Status: http.StatusConflict, Code: "account_changed",
			Message: "This order belongs to an exchange account you no longer use here."}
	}
	return sup, acct, exchangev1.MarketType(exchangev1.MarketType_value["MARKET_TYPE_"+o.MarketType]), nil
}

// AmendRequest changes an open order's price and/or size (empty keeps the value).
type AmendRequest struct {
	Price string
	Qty   string
}

// Amend changes an open order. Amend is not idempotent on the exchanges: it is journaled (with the member's
// Idempotency-Key when given) and an unknown outcome is resolved by reading the order. pending reports that the
// outcome is not known yet.
func (s *Service) Amend(ctx context.Context, memberID, id, key string, req AmendRequest) (o store.Order, pending bool, err error) {
	if len(key) > MaxKeyLen {
		return store.Order{}, false, checkKey(key)
	}
	o, err = s.memberOrder(ctx, memberID, id)
	if err != nil {
		return store.Order{}, false, err
	}
	price, e := decimalOf("price", req.Price, false)
	if e != nil {
		return store.Order{}, false, e
	}
	qty, e := decimalOf("qty", req.Qty, false)
	if e != nil {
		return store.Order{}, false, e
	}
	if price.IsZero() && qty.IsZero() {
		return store.Order{}, false, invalid("price", "Give a new price, a new size or both.")
	}
	act := store.OrderAction{MemberID: memberID, OrderID: o.ID, Action: store.ActionAmend, Price: str(price), Qty: str(qty),
		IdempotencyKey: key}
	act.RequestHash = hashOf(act)
	if key != "" {
		if a, created, err := s.st.CreateOrderAction(ctx, act); err != nil || !created {
			if errors.Is(err, store.ErrKeyReused) {
				return store.Order{}, false, errKeyReused
			}
			if err != nil {
				return store.Order{}, false, fmt.Errorf("trading: journal: %w", err)
			}
			// The same amend again: answer with the order as it is now.
			cur, err := s.memberOrder(ctx, memberID, id)
			return cur, a.State == store.ActionSent || a.State == store.ActionUnknown, err
		} else {
			act = a
		}
	}
	// A refusal before sending closes the journaled action.
	refuse := func(err error) (store.Order, bool, error) {
		out := store.OrderOutcome{RejectCode: "internal", RejectMessage: err.Error()}
		var e *Error
		if errors.As(err, &e) {
			out = store.OrderOutcome{RejectCode: e.Code, RejectMessage: e.Message}
		}
		s.finishAction(ctx, act, store.ActionRejected, out)
		return store.Order{}, false, err
	}
	if o.Kind != store.OrderKindOrder || !o.Open() {
		e := &Error{Status: http.StatusConflict, Code: "order_not_open", Message: "Only an open order can be amended."}
		if StatusOf(o) == StatusPending {
			e.Message = "The order is still being confirmed by the exchange; try again in a moment."
		}
		return refuse(e)
	}
	sup, acct, m, err := s.target(ctx, o)
	if err != nil {
		return refuse(err)
	}
	typ := exchangev1.OrderType(exchangev1.OrderType_value["ORDER_TYPE_"+o.Type])
	in, err := s.instrument(ctx, sup, o.Exchange, m, o.Symbol)
	if err != nil {
		return refuse(err)
	}
	checkPrice, checkQty := price, qty
	if checkPrice.IsZero() {
		checkPrice = dec(o.Price)
	}
	if checkQty.IsZero() {
		checkQty = dec(o.Qty)
	}
	if e := checkRules(in, typ, checkPrice, checkQty, decimal.Zero); e != nil {
		return refuse(e)
	}
	if act.ID == "" {
		a, _, err := s.st.CreateOrderAction(ctx, act)
		if err != nil {
			return store.Order{}, false, fmt.Errorf("trading: journal: %w", err)
		}
		act = a
	}
	var got *exchangev1.Order
	err = s.call(ctx, sup, "AmendOrder", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.AmendOrder(ctx, &exchangev1.AmendOrderRequest{Account: acct, MarketType: m, Symbol: o.Symbol,
			OrderId: o.ExchangeOrderID, Price: act.Price, Qty: act.Qty})
		got = resp.GetOrder()
		return err
	})
	jctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.CallTimeout.D())
	defer cancel()
	switch {
	case err == nil:
		return s.amended(jctx, o, act, got), false, nil
	case sdk.IsUnknownOutcome(err):
		// Read the order back: the new values there mean the amend went through.
		var cur *exchangev1.Order
		rerr := s.call(ctx, sup, "GetOrder", func(ctx context.Context, c exchangev1.ExchangeClient) error {
			resp, err := c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: acct, MarketType: m, Symbol: o.Symbol,
				OrderId: o.ExchangeOrderID, ClientOrderId: o.ClientOrderID})
			cur = resp.GetOrder()
			return err
		})
		if rerr == nil && (act.Price == "" || dec(cur.GetPrice()).Equal(price)) && (act.Qty == "" || dec(cur.GetQty()).Equal(qty)) {
			return s.amended(jctx, o, act, cur), false, nil
		}
		s.finishAction(jctx, act, store.ActionUnknown, store.OrderOutcome{})
		s.stats.amendsUnknown.Add(1)
		s.log.Warn("amend outcome unknown", "order", o.ID, "err", err)
		return o, true, nil
	default:
		pe := pluginError(err)
		s.finishAction(jctx, act, store.ActionRejected, store.OrderOutcome{RejectCode: pe.Code, ExchangeCode: pe.ExchangeCode,
			RejectMessage: pe.Message})
		return store.Order{}, false, pe
	}
}

func (s *Service) finishAction(ctx context.Context, a store.OrderAction, state string, out store.OrderOutcome) {
	if a.ID == "" {
		return
	}
	if _, err := s.st.FinishOrderAction(ctx, a.ID, state, out); err != nil {
		s.log.Error("journal: finishing an order action", "action", a.ID, "err", err)
	}
}

// amended records a successful amend: the new values (and a cancel-replace's new ids) and the exchange's status.
func (s *Service) amended(ctx context.Context, o store.Order, act store.OrderAction, got *exchangev1.Order) store.Order {
	s.finishAction(ctx, act, store.ActionDone, store.OrderOutcome{})
	ch := store.OrderChange{Price: act.Price, Qty: act.Qty}
	if got.GetOrderId() != "" && got.GetOrderId() != o.ExchangeOrderID {
		ch.ExchangeOrderID = got.GetOrderId()
	}
	if got.GetClientOrderId() != "" && got.GetClientOrderId() != o.ClientOrderID {
		ch.ClientOrderID = got.GetClientOrderId()
	}
	if err := s.st.UpdateOrderRequest(ctx, o.ID, ch); err != nil {
		s.log.Error("journal: recording an amend", "order", o.ID, "err", err)
	}
	if got != nil {
		if _, err := s.st.UpdateOrderStatus(ctx, o.ID, outcomeOf(got)); err != nil {
			s.log.Error("journal: recording an amend", "order", o.ID, "err", err)
		}
	}
	cur, err := s.st.Order(ctx, o.ID)
	if err != nil {
		return o
	}
	return cur
}

// Cancel cancels the member's order. Cancel is idempotent on the exchanges: an unknown outcome is asked once more,
// then the order is read. pending reports that the outcome is not known yet.
func (s *Service) Cancel(ctx context.Context, memberID, id string) (store.Order, bool, error) {
	o, err := s.memberOrder(ctx, memberID, id)
	if err != nil {
		return store.Order{}, false, err
	}
	if o.Final() || (o.State == store.OrderAcknowledged && !o.Open()) {
		return o, false, nil // nothing rests: cancelling again changes nothing
	}
	if StatusOf(o) == StatusPending {
		return store.Order{}, false, &Error{Status: http.StatusConflict, Code: "order_pending",
			Message: "The order is still being confirmed by the exchange; cancel it once it shows as open."}
	}
	sup, acct, m, err := s.target(ctx, o)
	if err != nil {
		return store.Order{}, false, err
	}
	act, _, err := s.st.CreateOrderAction(ctx, store.OrderAction{MemberID: memberID, OrderID: o.ID, Action: store.ActionCancel})
	if err != nil {
		return store.Order{}, false, fmt.Errorf("trading: journal: %w", err)
	}
	jctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*s.cfg.CallTimeout.D())
	defer cancel()
	var got *exchangev1.Order
	attempt := func() error {
		if o.Kind == store.OrderKindAlgo {
			return s.call(ctx, sup, "CancelAlgoOrder", func(ctx context.Context, c exchangev1.ExchangeClient) error {
				resp, err := c.CancelAlgoOrder(ctx, &exchangev1.CancelAlgoOrderRequest{Account: acct, MarketType: m,
					Symbol: o.Symbol, AlgoId: o.ExchangeOrderID, ClientAlgoId: o.ClientOrderID})
				if a := resp.GetAlgoOrder(); a != nil {
					out := algoOutcomeOf(a)
					got = &exchangev1.Order{OrderId: out.ExchangeOrderID}
					got.Status = exchangev1.OrderStatus_ORDER_STATUS_CANCELLED
				}
				return err
			})
		}
		return s.call(ctx, sup, "CancelOrder", func(ctx context.Context, c exchangev1.ExchangeClient) error {
			resp, err := c.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: acct, MarketType: m, Symbol: o.Symbol,
				OrderId: o.ExchangeOrderID, ClientOrderId: o.ClientOrderID})
			got = resp.GetOrder()
			return err
		})
	}
	err = attempt()
	if sdk.IsUnknownOutcome(err) && !errors.Is(err, context.Canceled) {
		err = attempt() // idempotent: asking again is safe
	}
	switch {
	case err == nil:
		s.finishAction(jctx, act, store.ActionDone, store.OrderOutcome{})
		return s.recordCancel(jctx, o, got), false, nil
	case sdk.IsUnknownOutcome(err):
		s.finishAction(jctx, act, store.ActionUnknown, store.OrderOutcome{})
		s.stats.cancelsUnknown.Add(1)
		return o, true, nil
	default:
		pe := pluginError(err)
		if pe.Code == sdk.ReasonName(exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND) && o.Kind != store.OrderKindAlgo {
			// Filled or cancelled meanwhile: the order's own state is the answer.
			var cur *exchangev1.Order
			if rerr := s.call(ctx, sup, "GetOrder", func(ctx context.Context, c exchangev1.ExchangeClient) error {
				resp, err := c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: acct, MarketType: m, Symbol: o.Symbol,
					OrderId: o.ExchangeOrderID, ClientOrderId: o.ClientOrderID})
				cur = resp.GetOrder()
				return err
			}); rerr == nil && cur.GetOrderId() != "" {
				s.finishAction(jctx, act, store.ActionDone, store.OrderOutcome{})
				return s.recordCancel(jctx, o, cur), false, nil
			}
		}
		s.finishAction(jctx, act, store.ActionRejected, store.OrderOutcome{RejectCode: pe.Code, ExchangeCode: pe.ExchangeCode,
			RejectMessage: pe.Message})
		return store.Order{}, false, pe
	}
}

// recordCancel writes what a cancel returned: an entry still unknown becomes acknowledged (it existed).
func (s *Service) recordCancel(ctx context.Context, o store.Order, got *exchangev1.Order) store.Order {
	out := outcomeOf(got)
	if o.Kind == store.OrderKindAlgo {
		out.OrderStatus = "CANCELLED"
	}
	if out.ExchangeOrderID == "" {
		out.ExchangeOrderID = o.ExchangeOrderID
	}
	if out.ExchangeOrderID == "" {
		return o
	}
	next, err := s.st.AcknowledgeOrder(ctx, o.ID, out)
	if err != nil {
		s.log.Error("journal: recording a cancel", "order", o.ID, "err", err)
		return o
	}
	return next
}

// Scope names one market of an exchange, optionally one symbol.
type Scope struct {
	Exchange   string
	MarketType string
	Symbol     string
}

func (s *Service) scope(ctx context.Context, memberID string, sc Scope, marketRequired bool) (*pluginhost.Supervisor, *exchangev1.AccountRef, exchangev1.MarketType, error) {
	var m exchangev1.MarketType
	if sc.MarketType != "" || marketRequired {
		var e *Error
		if m, e = marketOf(sc.MarketType); e != nil {
			return nil, nil, 0, e
		}
	}
	sup, err := s.supervisor(sc.Exchange)
	if err != nil {
		return nil, nil, 0, err
	}
	acct, err := s.account(ctx, memberID, sc.Exchange)
	if err != nil {
		return nil, nil, 0, err
	}
	return sup, acct, m, nil
}

// CancelAll cancels the member's open orders of a market (one symbol, or all when Symbol is empty) and records what
// the exchange cancelled in the journal. pending is true when the exchange's answer was lost: the cancellation may
// or may not have happened, so it is not sent again (an order placed meanwhile would be cancelled too); the orders
// still open are read back and returned instead, and the exchange's journal is reconciled.
func (s *Service) CancelAll(ctx context.Context, memberID string, sc Scope) (orders []Order, pending bool, err error) {
	sup, acct, m, err := s.scope(ctx, memberID, sc, true)
	if err != nil {
		return nil, false, err
	}
	var got []*exchangev1.Order
	err = s.call(ctx, sup, "CancelAllOrders", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.CancelAllOrders(ctx, &exchangev1.CancelAllOrdersRequest{Account: acct, MarketType: m, Symbol: sc.Symbol})
		got = resp.GetOrders()
		return err
	})
	if sdk.IsUnknownOutcome(err) && ctx.Err() == nil {
		s.stats.cancelsUnknown.Add(1)
		s.Reconcile(sc.Exchange)
		open, rerr := s.OpenOrders(ctx, memberID, sc)
		if rerr != nil {
			open = nil // not known either: the client reads the open orders again later
		}
		return open, true, nil
	}
	if err != nil {
		return nil, false, readError(ctx, err)
	}
	jctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.CallTimeout.D())
	defer cancel()
	out := make([]Order, 0, len(got))
	for _, x := range got {
		v := viewOf(sc.Exchange, x)
		if j, err := s.st.OrderByClientID(jctx, sc.Exchange, x.GetClientOrderId()); err == nil && j.MemberID == memberID {
			j = s.recordCancel(jctx, j, x)
			v = View(j)
		}
		out = append(out, v)
	}
	return out, false, nil
}

// annotate gives orders read from the exchange their journal id when exhub placed them for this member.
func (s *Service) annotate(ctx context.Context, memberID, exchange string, xs []*exchangev1.Order) []Order {
	out := make([]Order, 0, len(xs))
	for _, x := range xs {
		v := viewOf(exchange, x)
		if cid := x.GetClientOrderId(); cid != "" {
			if j, err := s.st.OrderByClientID(ctx, exchange, cid); err == nil && j.MemberID == memberID {
				v.ID, v.Kind = j.ID, j.Kind
			}
		}
		out = append(out, v)
	}
	return out
}

// OpenOrders lists the member's open orders on a market as the exchange has them, with the journal's entries still
// pending (being confirmed) first.
func (s *Service) OpenOrders(ctx context.Context, memberID string, sc Scope) ([]Order, error) {
	sup, acct, m, err := s.scope(ctx, memberID, sc, true)
	if err != nil {
		return nil, err
	}
	var got []*exchangev1.Order
	err = s.call(ctx, sup, "ListOpenOrders", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.ListOpenOrders(ctx, &exchangev1.ListOpenOrdersRequest{Account: acct, MarketType: m, Symbol: sc.Symbol})
		got = resp.GetOrders()
		return err
	})
	if err != nil {
		return nil, readError(ctx, err)
	}
	pending, err := s.st.ListOrders(ctx, memberID, store.OrderFilter{Exchange: sc.Exchange, MarketType: marketName(m),
		Symbol: sc.Symbol, Open: true, Limit: store.MaxOrderList})
	if err != nil {
		return nil, fmt.Errorf("trading: journal: %w", err)
	}
	var out []Order
	for _, p := range pending {
		if StatusOf(p) == StatusPending && p.Kind != store.OrderKindAlgo {
			out = append(out, View(p))
		}
	}
	return append(out, s.annotate(ctx, memberID, sc.Exchange, got)...), nil
}

// Page is a history window (HistoryPage).
type Page struct {
	StartTime int64
	EndTime   int64
	Limit     int32
	Cursor    string
}

func (p Page) proto() *exchangev1.HistoryPage {
	return &exchangev1.HistoryPage{StartTime: p.StartTime, EndTime: p.EndTime, Limit: p.Limit, Cursor: p.Cursor}
}

// OrderHistory lists the member's past orders on a market, newest first, as the exchange has them; next is the
// cursor of the next older page.
func (s *Service) OrderHistory(ctx context.Context, memberID string, sc Scope, p Page) (orders []Order, next string, err error) {
	sup, acct, m, err := s.scope(ctx, memberID, sc, true)
	if err != nil {
		return nil, "", err
	}
	var got []*exchangev1.Order
	err = s.call(ctx, sup, "ListOrderHistory", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.ListOrderHistory(ctx, &exchangev1.ListOrderHistoryRequest{Account: acct, MarketType: m, Symbol: sc.Symbol, Page: p.proto()})
		got, next = resp.GetOrders(), resp.GetNextCursor()
		return err
	})
	if err != nil {
		return nil, "", readError(ctx, err)
	}
	return s.annotate(ctx, memberID, sc.Exchange, got), next, nil
}

// Fills lists the member's executions on a market, newest first.
func (s *Service) Fills(ctx context.Context, memberID string, sc Scope, p Page) (fills []Fill, next string, err error) {
	sup, acct, m, err := s.scope(ctx, memberID, sc, true)
	if err != nil {
		return nil, "", err
	}
	var got []*exchangev1.Fill
	err = s.call(ctx, sup, "ListFills", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.ListFills(ctx, &exchangev1.ListFillsRequest{Account: acct, MarketType: m, Symbol: sc.Symbol, Page: p.proto()})
		got, next = resp.GetFills(), resp.GetNextCursor()
		return err
	})
	if err != nil {
		return nil, "", readError(ctx, err)
	}
	fills = make([]Fill, 0, len(got))
	for _, f := range got {
		fills = append(fills, fillOf(f))
	}
	return fills, next, nil
}

// AlgoOrders lists the member's conditional orders (waiting ones; with history also past ones).
func (s *Service) AlgoOrders(ctx context.Context, memberID string, sc Scope, history bool, p Page) ([]Order, string, error) {
	sup, acct, m, err := s.scope(ctx, memberID, sc, true)
	if err != nil {
		return nil, "", err
	}
	var got []*exchangev1.AlgoOrder
	var next string
	err = s.call(ctx, sup, "ListAlgoOrders", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.ListAlgoOrders(ctx, &exchangev1.ListAlgoOrdersRequest{Account: acct, MarketType: m, Symbol: sc.Symbol,
			IncludeHistory: history, Page: p.proto()})
		got, next = resp.GetAlgoOrders(), resp.GetNextCursor()
		return err
	})
	if err != nil {
		return nil, "", readError(ctx, err)
	}
	out := make([]Order, 0, len(got))
	for _, a := range got {
		v := algoViewOf(sc.Exchange, a)
		if cid := a.GetClientAlgoId(); cid != "" {
			if j, err := s.st.OrderByClientID(ctx, sc.Exchange, cid); err == nil && j.MemberID == memberID {
				v.ID = j.ID
			}
		}
		out = append(out, v)
	}
	return out, next, nil
}

// Positions lists the member's open positions on an exchange (one symbol or all).
func (s *Service) Positions(ctx context.Context, memberID string, sc Scope) ([]Position, error) {
	sup, acct, _, err := s.scope(ctx, memberID, sc, false)
	if err != nil {
		return nil, err
	}
	var got []*exchangev1.Position
	err = s.call(ctx, sup, "ListPositions", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: acct, Symbol: sc.Symbol})
		got = resp.GetPositions()
		return err
	})
	if err != nil {
		return nil, readError(ctx, err)
	}
	out := make([]Position, 0, len(got))
	for _, p := range got {
		out = append(out, positionOf(p))
	}
	return out, nil
}

// Leverage is a symbol's leverage setting.
type Leverage struct {
	Leverage    string `json:"leverage"`
	MaxLeverage string `json:"max_leverage,omitempty"`
	MarginMode  string `json:"margin_mode,omitempty" enum:"CROSS,ISOLATED"`
}

// GetLeverage reads the member's leverage and margin mode on a symbol.
func (s *Service) GetLeverage(ctx context.Context, memberID string, sc Scope) (Leverage, error) {
	sup, acct, _, err := s.scope(ctx, memberID, sc, false)
	if err != nil {
		return Leverage{}, err
	}
	var out Leverage
	err = s.call(ctx, sup, "GetLeverage", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.GetLeverage(ctx, &exchangev1.GetLeverageRequest{Account: acct, Symbol: sc.Symbol})
		out = Leverage{Leverage: resp.GetLeverage(), MaxLeverage: resp.GetMaxLeverage(),
			MarginMode: enumName(exchangev1.MarginMode_name, resp.GetMarginMode(), "MARGIN_MODE_")}
		return err
	})
	if err != nil {
		return Leverage{}, readError(ctx, err)
	}
	return out, nil
}

// SetLeverage sets the member's leverage on a symbol (idempotent on the exchanges).
func (s *Service) SetLeverage(ctx context.Context, memberID string, sc Scope, leverage, marginMode, positionSide string) (Leverage, error) {
	lev, e := decimalOf("leverage", leverage, true)
	if e != nil {
		return Leverage{}, e
	}
	mm, e := enumOf[exchangev1.MarginMode](exchangev1.MarginMode_value, "MARGIN_MODE_", "margin_mode", marginMode, true)
	if e != nil {
		return Leverage{}, e
	}
	ps, e := enumOf[exchangev1.PositionSide](exchangev1.PositionSide_value, "POSITION_SIDE_", "position_side", positionSide, true)
	if e != nil {
		return Leverage{}, e
	}
	sup, acct, _, err := s.scope(ctx, memberID, sc, false)
	if err != nil {
		return Leverage{}, err
	}
	var out Leverage
	err = s.call(ctx, sup, "SetLeverage", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.SetLeverage(ctx, &exchangev1.SetLeverageRequest{Account: acct, Symbol: sc.Symbol, Leverage: lev.String(),
			MarginMode: mm, PositionSide: ps})
		out = Leverage{Leverage: resp.GetLeverage(), MarginMode: marginMode}
		return err
	})
	s.marginModes.forget(marginKey{sup.Slug(), acct.GetAccountId(), sc.Symbol}) // it may have set the margin mode
	if err != nil {
		return Leverage{}, readError(ctx, err)
	}
	return out, nil
}

// SetMarginMode sets the member's margin mode on a symbol.
func (s *Service) SetMarginMode(ctx context.Context, memberID string, sc Scope, marginMode string) error {
	mm, e := enumOf[exchangev1.MarginMode](exchangev1.MarginMode_value, "MARGIN_MODE_", "margin_mode", marginMode, false)
	if e != nil {
		return e
	}
	sup, acct, _, err := s.scope(ctx, memberID, sc, false)
	if err != nil {
		return err
	}
	err = s.call(ctx, sup, "SetMarginMode", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		_, err := c.SetMarginMode(ctx, &exchangev1.SetMarginModeRequest{Account: acct, Symbol: sc.Symbol, MarginMode: mm})
		return err
	})
	// Forgotten after the call too (whatever it answered): an order placed meanwhile may have read the old mode.
	s.marginModes.forget(marginKey{sup.Slug(), acct.GetAccountId(), sc.Symbol})
	if err != nil {
		return readError(ctx, err)
	}
	return nil
}

// PositionMode reads the member's position mode on an exchange (ONE_WAY or HEDGE).
func (s *Service) PositionMode(ctx context.Context, memberID string, sc Scope) (string, error) {
	sup, acct, _, err := s.scope(ctx, memberID, sc, false)
	if err != nil {
		return "", err
	}
	var mode exchangev1.PositionMode
	err = s.call(ctx, sup, "GetPositionMode", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.GetPositionMode(ctx, &exchangev1.GetPositionModeRequest{Account: acct})
		mode = resp.GetMode()
		return err
	})
	if err != nil {
		return "", readError(ctx, err)
	}
	return enumName(exchangev1.PositionMode_name, mode, "POSITION_MODE_"), nil
}

// SetPositionMode sets the member's position mode on an exchange.
func (s *Service) SetPositionMode(ctx context.Context, memberID string, sc Scope, mode string) error {
	pm, e := enumOf[exchangev1.PositionMode](exchangev1.PositionMode_value, "POSITION_MODE_", "mode", mode, false)
	if e != nil {
		return e
	}
	sup, acct, _, err := s.scope(ctx, memberID, sc, false)
	if err != nil {
		return err
	}
	err = s.call(ctx, sup, "SetPositionMode", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		_, err := c.SetPositionMode(ctx, &exchangev1.SetPositionModeRequest{Account: acct, Mode: pm})
		return err
	})
	if err != nil {
		return readError(ctx, err)
	}
	return nil
}

// MaxOrderSize is the largest order the account can place now, in base units.
type MaxOrderSize struct {
	MaxBuyQty  string `json:"max_buy_qty"`
	MaxSellQty string `json:"max_sell_qty"`
}

// MaxOrderSize asks the exchange for the largest buy and sell at a price (empty: market).
func (s *Service) MaxOrderSize(ctx context.Context, memberID string, sc Scope, price, positionSide, marginMode string) (MaxOrderSize, error) {
	p, e := decimalOf("price", price, false)
	if e != nil {
		return MaxOrderSize{}, e
	}
	ps, e := enumOf[exchangev1.PositionSide](exchangev1.PositionSide_value, "POSITION_SIDE_", "position_side", positionSide, true)
	if e != nil {
		return MaxOrderSize{}, e
	}
	mm, e := enumOf[exchangev1.MarginMode](exchangev1.MarginMode_value, "MARGIN_MODE_", "margin_mode", marginMode, true)
	if e != nil {
		return MaxOrderSize{}, e
	}
	sup, acct, m, err := s.scope(ctx, memberID, sc, true)
	if err != nil {
		return MaxOrderSize{}, err
	}
	var out MaxOrderSize
	err = s.call(ctx, sup, "GetMaxOrderSize", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.GetMaxOrderSize(ctx, &exchangev1.GetMaxOrderSizeRequest{Account: acct, MarketType: m, Symbol: sc.Symbol,
			Price: str(p), PositionSide: ps, MarginMode: mm})
		out = MaxOrderSize{MaxBuyQty: resp.GetMaxBuyQty(), MaxSellQty: resp.GetMaxSellQty()}
		return err
	})
	if err != nil {
		return MaxOrderSize{}, readError(ctx, err)
	}
	return out, nil
}

// OrderByKey returns the member's entry made with an Idempotency-Key (zero Order when none).
func (s *Service) OrderByKey(ctx context.Context, memberID, key string) (store.Order, error) {
	o, err := s.st.OrderByKey(ctx, memberID, key)
	if errors.Is(err, store.ErrNotFound) {
		return store.Order{}, nil
	}
	return o, err
}
