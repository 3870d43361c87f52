package conformance

// Checks of exchange.v1 revision 1.1: per-market capabilities, CheckCredentials, the account stream, positions,
// algo orders, fills paging and unknown outcomes.

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/plugin-sdk/faults"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

var conditionalTypes = []exchangev1.OrderType{
	exchangev1.OrderType_ORDER_TYPE_STOP_MARKET, exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_MARKET,
	exchangev1.OrderType_ORDER_TYPE_STOP_LIMIT, exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_LIMIT,
}

// mcaps is what one market type takes: the per-market entry where the plugin gives one, else the flat fields.
type mcaps struct {
	algoTypes  []exchangev1.OrderType
	idempotent bool
	amend      bool
}

func (e *env) marketCaps(mt exchangev1.MarketType) mcaps {
	t := e.trading()
	for _, m := range t.GetMarkets() {
		if m.GetMarketType() == mt {
			return mcaps{algoTypes: m.GetAlgoOrderTypes(), idempotent: m.GetIdempotentClientOrderId(), amend: m.GetAmend()}
		}
	}
	c := mcaps{idempotent: t.GetIdempotentClientOrderId(), amend: t.GetAmend()}
	for _, ot := range t.GetOrderTypes() {
		if slices.Contains(conditionalTypes, ot) {
			c.algoTypes = append(c.algoTypes, ot)
		}
	}
	return c
}

// since11 says whether the plugin follows revision 1.1 or later.
func (e *env) since11() bool {
	switch e.desc.GetSdkVersion() {
	case "", "1", "1.0":
		return false
	}
	return true
}

func checkMarketCapabilities(_ context.Context, e *env) error {
	if err := e.needDescribe(); err != nil {
		return err
	}
	t := e.trading()
	if !t.GetEnabled() {
		return na("the plugin does not claim trading")
	}
	if !e.since11() && len(t.GetMarkets()) == 0 {
		return na("sdk_version %q predates per-market capabilities (1.1)", e.desc.GetSdkVersion())
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	claimed := e.desc.GetCapabilities().GetMarketTypes()
	seen := map[exchangev1.MarketType]bool{}
	for _, m := range t.GetMarkets() {
		mt := m.GetMarketType()
		switch {
		case !slices.Contains(claimed, mt):
			bad("markets lists %v, which market_types does not claim", mt)
		case seen[mt]:
			bad("markets lists %v twice", mt)
		}
		seen[mt] = true
		if !slices.Contains(m.GetOrderTypes(), exchangev1.OrderType_ORDER_TYPE_LIMIT) {
			bad("%v: order_types lacks LIMIT", mt)
		}
		for _, ot := range m.GetOrderTypes() {
			if ot != exchangev1.OrderType_ORDER_TYPE_LIMIT && ot != exchangev1.OrderType_ORDER_TYPE_MARKET {
				bad("%v: order_types lists %v; conditional types belong in algo_order_types", mt, ot)
			}
		}
		for _, ot := range m.GetAlgoOrderTypes() {
			if !slices.Contains(conditionalTypes, ot) {
				bad("%v: algo_order_types lists %v, which is not a conditional type", mt, ot)
			}
		}
		if len(m.GetTimeInForce()) == 0 || slices.Contains(m.GetTimeInForce(), exchangev1.TimeInForce_TIME_IN_FORCE_UNSPECIFIED) {
			bad("%v: time_in_force is empty or lists UNSPECIFIED", mt)
		}
		if slices.Contains(m.GetTpslKinds(), exchangev1.TpSlKind_TP_SL_KIND_UNSPECIFIED) ||
			slices.Contains(m.GetTriggerPriceTypes(), exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_UNSPECIFIED) {
			bad("%v: tpsl_kinds or trigger_price_types lists UNSPECIFIED", mt)
		}
		if slices.Contains(m.GetTpslKinds(), exchangev1.TpSlKind_TP_SL_KIND_CONDITIONAL) && len(m.GetAlgoOrderTypes()) == 0 {
			bad("%v: CONDITIONAL TP/SL claimed without algo_order_types", mt)
		}
		if m.GetBatchPlaceMax() < 0 || m.GetBatchCancelMax() < 0 {
			bad("%v: negative batch maximum", mt)
		}
		switch mt {
		case exchangev1.MarketType_MARKET_TYPE_SPOT:
			if len(m.GetMarginModes()) > 0 || len(m.GetPositionModes()) > 0 || m.GetReduceOnly() {
				bad("SPOT claims margin modes, position modes or reduce-only")
			}
		case exchangev1.MarketType_MARKET_TYPE_SWAP:
			if len(m.GetMarginModes()) == 0 || len(m.GetPositionModes()) == 0 {
				bad("SWAP needs margin_modes and position_modes")
			}
		default:
			bad("markets lists %v", mt)
		}
	}
	if e.since11() {
		for _, mt := range claimed {
			if !seen[mt] {
				bad("markets has no entry for %v (required since 1.1)", mt)
			}
		}
		f := t.GetClientOrderIdFormat()
		if f.GetMaxLength() <= 0 || f.GetPattern() == "" {
			bad("client_order_id_format needs max_length and pattern (required since 1.1)")
		} else if re, err := regexp.Compile(f.GetPattern()); err != nil {
			bad("client_order_id_format pattern %q: %v", f.GetPattern(), err)
		} else if id := e.clientID("idemf"); !re.MatchString(id) || len(id) > int(f.GetMaxLength()) {
			bad("client_order_id_format rejects a plain alphanumeric id %q", id)
		}
	}
	return errorsJoin(errs)
}

func checkCredentials(ctx context.Context, e *env) error {
	if err := e.needDescribe(); err != nil {
		return err
	}
	if !e.trading().GetCheckCredentials() {
		return na("the plugin does not claim CheckCredentials")
	}
	if e.opts.Account == nil {
		return na("no account given (set Options.Account / --account-key)")
	}
	r, err := e.c.CheckCredentials(ctx, &exchangev1.CheckCredentialsRequest{Account: e.opts.Account})
	if err != nil {
		return describeErr("CheckCredentials", err)
	}
	var errs []error
	if !r.GetCanRead() {
		errs = append(errs, errors.New("can_read is false for the key this run reads with"))
	}
	if e.trading().GetEnabled() && !r.GetCanTrade() {
		errs = append(errs, errors.New("can_trade is false for the key this run trades with"))
	}
	if r.GetIpRestricted() && len(r.GetIpAllowlist()) == 0 {
		errs = append(errs, errors.New("ip_restricted without an ip_allowlist"))
	}
	if r.GetExpiresTime() < 0 {
		errs = append(errs, fmt.Errorf("expires_time %d is negative", r.GetExpiresTime()))
	}
	if slices.Contains(e.desc.GetCapabilities().GetMarketTypes(), exchangev1.MarketType_MARKET_TYPE_SWAP) && e.trading().GetEnabled() {
		if r.GetPositionMode() == exchangev1.PositionMode_POSITION_MODE_UNSPECIFIED {
			errs = append(errs, errors.New("position_mode is UNSPECIFIED on an exchange with SWAP trading"))
		} else if m, err := e.c.GetPositionMode(ctx, &exchangev1.GetPositionModeRequest{Account: e.opts.Account}); err == nil && m.GetMode() != r.GetPositionMode() {
			errs = append(errs, fmt.Errorf("position_mode %v, but GetPositionMode says %v", r.GetPositionMode(), m.GetMode()))
		}
	}
	return errorsJoin(errs)
}

// ---------------------------------------------------------------------------------------------------------------
// The account stream

type accountRecv struct {
	ev  *exchangev1.AccountEvent
	err error
}

// openAccountStream opens StreamAccount and pumps its events into a bounded channel; stop ends the pump.
func (e *env) openAccountStream(ctx context.Context) (<-chan accountRecv, func(), error) {
	sctx, cancel := context.WithCancel(ctx)
	st, err := e.c.StreamAccount(sctx, &exchangev1.StreamAccountRequest{Account: e.opts.Account})
	if err != nil {
		cancel()
		return nil, nil, describeErr("StreamAccount", err)
	}
	ch := make(chan accountRecv, 256)
	done := make(chan struct{})
	go func() { // owned by stop: ends when the stream's context is cancelled
		defer close(done)
		for {
			ev, err := st.Recv()
			select {
			case ch <- accountRecv{ev, err}:
			case <-sctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return ch, func() { cancel(); <-done }, nil
}

func nextAccount(ch <-chan accountRecv, deadline time.Time) (*exchangev1.AccountEvent, error) {
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("account stream ended: %s [%s]", sdk.MessageOf(r.err), sdk.ReasonName(sdk.DetailOf(r.err).GetReason()))
		}
		return r.ev, nil
	case <-time.After(time.Until(deadline)):
		return nil, errTimeout
	}
}

// swapOrTrade is the instrument for checks that want positions: SWAP when offered, else the trade symbol.
func (e *env) swapOrTrade() *exchangev1.Instrument {
	if in, ok := e.symbols[exchangev1.MarketType_MARKET_TYPE_SWAP]; ok {
		return in
	}
	return e.tradeSymbol()
}

func checkAccountStream(ctx context.Context, e *env) error {
	if err := e.needTrading(); err != nil {
		return err
	}
	if !e.desc.GetCapabilities().GetStreams().GetAccount() {
		return na("the plugin does not claim the account stream")
	}
	p, err := e.planFor(ctx, e.swapOrTrade())
	if err != nil {
		return err
	}
	ch, stop, err := e.openAccountStream(ctx)
	if err != nil {
		return err
	}
	defer stop()
	deadline := time.Now().Add(2 * e.opts.StreamWait)
	first, err := nextAccount(ch, deadline)
	if err != nil {
		return fmt.Errorf("waiting for the snapshot: %w", err)
	}
	if first.GetSnapshot() == nil || first.GetSequence() != 1 {
		return fmt.Errorf("the account stream starts with %T sequence %d, want a snapshot with sequence 1", first.GetEvent(), first.GetSequence())
	}
	cid := e.clientID("as")
	o, err := e.place(ctx, e.marketOrder(p, exchangev1.Side_SIDE_BUY, p.qty, cid, false))
	if err != nil {
		return describeErr("market PlaceOrder", err)
	}
	defer e.flatten(ctx, p, p.qty)
	wantPosition := p.mt == exchangev1.MarketType_MARKET_TYPE_SWAP
	seq := first.GetSequence()
	var gotOrder, gotFill, gotBalance, gotPosition bool
	for !gotOrder || !gotFill || !gotBalance || (wantPosition && !gotPosition) {
		ev, err := nextAccount(ch, deadline)
		if err != nil {
			return fmt.Errorf("after a filled market order (order event %v, fill %v, balance %v, position %v): %w",
				gotOrder, gotFill, gotBalance, gotPosition, err)
		}
		if ev.GetSequence() != seq+1 {
			return fmt.Errorf("sequence %d follows %d: the account stream skipped or repeated events", ev.GetSequence(), seq)
		}
		seq = ev.GetSequence()
		switch x := ev.GetEvent().(type) {
		case *exchangev1.AccountEvent_Order:
			gotOrder = gotOrder || x.Order.GetOrderId() == o.GetOrderId() || x.Order.GetClientOrderId() == cid
		case *exchangev1.AccountEvent_Fill:
			if x.Fill.GetOrderId() == o.GetOrderId() {
				if _, err := positive("fill qty", x.Fill.GetQty()); err != nil {
					return err
				}
				gotFill = true
			}
		case *exchangev1.AccountEvent_Balance:
			gotBalance = true
		case *exchangev1.AccountEvent_Position:
			gotPosition = gotPosition || x.Position.GetSymbol() == p.in.GetSymbol()
		}
	}
	return nil
}

// ---------------------------------------------------------------------------------------------------------------
// Positions and leverage

func (e *env) position(ctx context.Context, p *plan) (*exchangev1.Position, error) {
	r, err := e.c.ListPositions(ctx, &exchangev1.ListPositionsRequest{Account: e.opts.Account, Symbol: p.in.GetSymbol()})
	if err != nil {
		return nil, describeErr("ListPositions", err)
	}
	for _, x := range r.GetPositions() {
		q, err := dec("position qty", x.GetQty())
		if err != nil {
			return nil, err
		}
		if x.GetSymbol() == p.in.GetSymbol() && !q.IsZero() {
			return x, nil
		}
	}
	return nil, nil
}

func checkPositionsLeverage(ctx context.Context, e *env) error {
	if err := e.needTrading(); err != nil {
		return err
	}
	in, ok := e.symbols[exchangev1.MarketType_MARKET_TYPE_SWAP]
	if !ok {
		return na("the plugin offers no SWAP market")
	}
	if !e.trading().GetClosePosition() {
		return na("the plugin does not claim close_position")
	}
	p, err := e.planFor(ctx, in)
	if err != nil {
		return err
	}
	if pos, err := e.position(ctx, p); err != nil || pos != nil {
		return errors.Join(err, fmt.Errorf("the account already holds a %s position; run on a flat account", in.GetSymbol()))
	}
	lv, err := e.c.GetLeverage(ctx, &exchangev1.GetLeverageRequest{Account: e.opts.Account, Symbol: in.GetSymbol()})
	if err != nil {
		return describeErr("GetLeverage", err)
	}
	target := decimal.NewFromInt(2)
	if cur, err := dec("leverage", lv.GetLeverage()); err == nil && cur.Equal(target) {
		target = decimal.NewFromInt(3)
	}
	set, err := e.c.SetLeverage(ctx, &exchangev1.SetLeverageRequest{Account: e.opts.Account, Symbol: in.GetSymbol(), Leverage: target.String(),
		MarginMode: lv.GetMarginMode()})
	if err != nil {
		return describeErr("SetLeverage "+target.String(), err)
	}
	if err := sameDec("SetLeverage leverage", set.GetLeverage(), target); err != nil {
		return err
	}
	if lv.GetLeverage() != "" {
		defer func() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_, _ = e.c.SetLeverage(cctx, &exchangev1.SetLeverageRequest{Account: e.opts.Account, Symbol: in.GetSymbol(), Leverage: lv.GetLeverage(), MarginMode: lv.GetMarginMode()})
		}()
	}
	got, err := e.c.GetLeverage(ctx, &exchangev1.GetLeverageRequest{Account: e.opts.Account, Symbol: in.GetSymbol()})
	if err != nil {
		return describeErr("GetLeverage", err)
	}
	if err := sameDec("leverage read back", got.GetLeverage(), target); err != nil {
		return err
	}
	if _, err := e.place(ctx, e.marketOrder(p, exchangev1.Side_SIDE_BUY, p.qty, e.clientID("pl"), false)); err != nil {
		return describeErr("market PlaceOrder", err)
	}
	var pos *exchangev1.Position
	deadline := time.Now().Add(e.opts.StreamWait)
	for pos == nil && time.Now().Before(deadline) {
		if pos, err = e.position(ctx, p); err != nil {
			return err
		}
		if pos == nil {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if pos == nil {
		e.flatten(ctx, p, p.qty)
		return fmt.Errorf("no %s position after buying %s", in.GetSymbol(), p.qty)
	}
	if q, _ := dec("qty", pos.GetQty()); !q.Abs().Equal(p.qty) {
		e.flatten(ctx, p, q.Abs())
		return fmt.Errorf("position qty %s after buying %s", pos.GetQty(), p.qty)
	}
	cid := e.clientID("close")
	cr, err := e.c.ClosePosition(ctx, &exchangev1.ClosePositionRequest{Account: e.opts.Account, Symbol: in.GetSymbol(),
		PositionSide: pos.GetPositionSide(), ClientOrderId: cid, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, MarginMode: p.marginMode})
	if err != nil {
		e.flatten(ctx, p, p.qty)
		return describeErr("ClosePosition", err)
	}
	if cr.GetOrder().GetClientOrderId() != cid {
		return fmt.Errorf("the closing order carries client_order_id %q, want %q", cr.GetOrder().GetClientOrderId(), cid)
	}
	byClient, err := e.getOrder(ctx, p, "", cid)
	if err != nil {
		return fmt.Errorf("the closing order by its client id: %w", err)
	}
	if byClient.GetOrderId() != cr.GetOrder().GetOrderId() {
		return fmt.Errorf("GetOrder by the close's client id returned %s, want %s", byClient.GetOrderId(), cr.GetOrder().GetOrderId())
	}
	for {
		pos, err := e.position(ctx, p)
		if err != nil {
			return err
		}
		if pos == nil {
			return nil
		}
		if time.Now().After(deadline.Add(e.opts.StreamWait)) {
			return fmt.Errorf("the %s position is still %s after ClosePosition", in.GetSymbol(), pos.GetQty())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ---------------------------------------------------------------------------------------------------------------
// Algo orders

func checkAlgoOrders(ctx context.Context, e *env) error {
	if err := e.needTrading(); err != nil {
		return err
	}
	in := e.swapOrTrade()
	types := e.marketCaps(in.GetMarketType()).algoTypes
	if !slices.Contains(types, exchangev1.OrderType_ORDER_TYPE_STOP_MARKET) {
		return na("the plugin does not claim STOP_MARKET algo orders on %v", in.GetMarketType())
	}
	p, err := e.planFor(ctx, in)
	if err != nil {
		return err
	}
	b, err := e.c.GetOrderBook(ctx, &exchangev1.GetOrderBookRequest{MarketType: p.mt, Symbol: in.GetSymbol(), Depth: 5})
	if err != nil {
		return describeErr("GetOrderBook", err)
	}
	if len(b.GetBook().GetAsks()) == 0 || len(b.GetBook().GetBids()) == 0 {
		return errors.New("the book has an empty side")
	}
	ask, _ := dec("ask", b.GetBook().GetAsks()[0].GetPrice())
	bid, _ := dec("bid", b.GetBook().GetBids()[0].GetPrice())
	// A buy stop well above the market, and a buy take-profit well below it: neither triggers during the check.
	legs := []struct {
		typ     exchangev1.OrderType
		trigger decimal.Decimal
	}{{exchangev1.OrderType_ORDER_TYPE_STOP_MARKET, ask.Mul(decimal.New(13, -1)).Div(p.tick).Ceil().Mul(p.tick)}}
	if slices.Contains(types, exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_MARKET) {
		legs = append(legs, struct {
			typ     exchangev1.OrderType
			trigger decimal.Decimal
		}{exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_MARKET, bid.Mul(decimal.New(8, -1)).Div(p.tick).Floor().Mul(p.tick)})
	}
	var placed []*exchangev1.AlgoOrder
	defer func() {
		for _, g := range placed {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_, _ = e.c.CancelAlgoOrder(cctx, &exchangev1.CancelAlgoOrderRequest{Account: e.opts.Account, MarketType: p.mt, Symbol: in.GetSymbol(), AlgoId: g.GetAlgoId()})
			cancel()
		}
	}()
	for i, leg := range legs {
		cid := e.clientID(fmt.Sprintf("algo%d", i))
		r, err := e.c.PlaceAlgoOrder(ctx, &exchangev1.PlaceAlgoOrderRequest{Account: e.opts.Account, MarketType: p.mt, Symbol: in.GetSymbol(),
			Side: exchangev1.Side_SIDE_BUY, Type: leg.typ, TriggerPrice: leg.trigger.String(), Qty: p.qty.String(),
			PositionSide: p.posSide, ClientAlgoId: cid, MarginMode: p.marginMode})
		if err != nil {
			return describeErr(fmt.Sprintf("PlaceAlgoOrder %v trigger %s", leg.typ, leg.trigger), err)
		}
		g := r.GetAlgoOrder()
		if g.GetAlgoId() == "" || g.GetStatus() != exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_WAITING || g.GetType() != leg.typ {
			return fmt.Errorf("placed algo order: id %q status %v type %v", g.GetAlgoId(), g.GetStatus(), g.GetType())
		}
		if err := sameDec("trigger_price", g.GetTriggerPrice(), leg.trigger); err != nil {
			return err
		}
		placed = append(placed, g)
	}
	listed := func() (map[string]*exchangev1.AlgoOrder, error) {
		r, err := e.c.ListAlgoOrders(ctx, &exchangev1.ListAlgoOrdersRequest{Account: e.opts.Account, MarketType: p.mt, Symbol: in.GetSymbol()})
		if err != nil {
			return nil, describeErr("ListAlgoOrders", err)
		}
		out := map[string]*exchangev1.AlgoOrder{}
		for _, g := range r.GetAlgoOrders() {
			out[g.GetAlgoId()] = g
		}
		return out, nil
	}
	l, err := listed()
	if err != nil {
		return err
	}
	for _, g := range placed {
		if got, ok := l[g.GetAlgoId()]; !ok || got.GetStatus() != exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_WAITING ||
			(g.GetClientAlgoId() != "" && got.GetClientAlgoId() != g.GetClientAlgoId()) {
			return fmt.Errorf("algo order %s (%v) is missing from ListAlgoOrders or not waiting", g.GetAlgoId(), g.GetType())
		}
	}
	for _, g := range placed {
		r, err := e.c.CancelAlgoOrder(ctx, &exchangev1.CancelAlgoOrderRequest{Account: e.opts.Account, MarketType: p.mt, Symbol: in.GetSymbol(), AlgoId: g.GetAlgoId()})
		if err != nil {
			return describeErr("CancelAlgoOrder", err)
		}
		if r.GetAlgoOrder().GetStatus() != exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_CANCELLED {
			return fmt.Errorf("CancelAlgoOrder returned status %v", r.GetAlgoOrder().GetStatus())
		}
	}
	placed = nil
	l, err = listed()
	if err != nil {
		return err
	}
	for _, g := range l {
		if g.GetStatus() == exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_WAITING && g.GetClientAlgoId() != "" && len(g.GetClientAlgoId()) > len(e.tag) && g.GetClientAlgoId()[:len(e.tag)] == e.tag {
			return fmt.Errorf("cancelled algo order %s is still listed as waiting", g.GetAlgoId())
		}
	}
	return nil
}

// ---------------------------------------------------------------------------------------------------------------
// Fills

func checkFillsHistory(ctx context.Context, e *env) error {
	if err := e.needTrading(); err != nil {
		return err
	}
	p, err := e.plan(ctx)
	if err != nil {
		return err
	}
	since := time.Now().Add(-time.Minute).UnixMilli()
	buy, err := e.place(ctx, e.marketOrder(p, exchangev1.Side_SIDE_BUY, p.qty, e.clientID("fb"), false))
	if err != nil {
		return describeErr("market buy", err)
	}
	sell, err := e.place(ctx, e.marketOrder(p, exchangev1.Side_SIDE_SELL, p.qty, e.clientID("fs"), true))
	if err != nil {
		return describeErr("market sell", err)
	}
	want := map[string]bool{buy.GetOrderId(): false, sell.GetOrderId(): false}
	deadline := time.Now().Add(e.opts.StreamWait)
	for {
		for k := range want {
			want[k] = false
		}
		seen := map[string]bool{}
		cursor, pages, lastTime := "", 0, int64(0)
		for {
			r, err := e.c.ListFills(ctx, &exchangev1.ListFillsRequest{Account: e.opts.Account, MarketType: p.mt, Symbol: p.in.GetSymbol(),
				Page: &exchangev1.HistoryPage{StartTime: since, Limit: 1, Cursor: cursor}})
			if err != nil {
				return describeErr("ListFills", err)
			}
			pages++
			if len(r.GetFills()) > 1 {
				return fmt.Errorf("ListFills returned %d fills for limit 1", len(r.GetFills()))
			}
			for _, f := range r.GetFills() {
				if seen[f.GetTradeId()] {
					return fmt.Errorf("fill %s came again on page %d: the cursor does not page on", f.GetTradeId(), pages)
				}
				seen[f.GetTradeId()] = true
				if lastTime != 0 && f.GetTime() > lastTime {
					return fmt.Errorf("fill %s at %d is newer than the page before (%d): pages must go from newest to oldest", f.GetTradeId(), f.GetTime(), lastTime)
				}
				lastTime = f.GetTime()
				if _, err := positive("fill price", f.GetPrice()); err != nil {
					return err
				}
				if _, err := positive("fill qty", f.GetQty()); err != nil {
					return err
				}
				if _, ok := want[f.GetOrderId()]; ok {
					want[f.GetOrderId()] = true
				}
			}
			cursor = r.GetNextCursor()
			if cursor == "" || pages >= 200 {
				break
			}
		}
		if want[buy.GetOrderId()] && want[sell.GetOrderId()] {
			if pages < 2 {
				return errors.New("two fills with limit 1 came on one page (next_cursor missing)")
			}
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("paging ListFills with limit 1 (%d pages) did not reach the fills of the buy %s and the sell %s (found %v)",
				pages, buy.GetOrderId(), sell.GetOrderId(), want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// ---------------------------------------------------------------------------------------------------------------
// Unknown outcome

func checkUnknownOutcome(ctx context.Context, e *env) error {
	if err := e.needTrading(); err != nil {
		return err
	}
	if e.opts.FaultURL == "" {
		return na("no fault endpoint (set Options.FaultURL / --fault-url to an emulator)")
	}
	p, err := e.plan(ctx)
	if err != nil {
		return err
	}
	for i, k := range []faults.Kind{faults.AcceptThenError, faults.AcceptThenDrop, faults.DropBefore} {
		cid := e.clientID(fmt.Sprintf("uo%d", i))
		if err := faults.Arm(e.opts.HTTPClient, e.opts.FaultURL, cid, k); err != nil {
			return err
		}
		_, err := e.place(ctx, e.limitBuy(p, p.price, p.qty, cid))
		if err := reasonIs(err, exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME); err != nil {
			return fmt.Errorf("%s: a lost answer must be UNKNOWN_OUTCOME: %w", k, err)
		}
		deadline := time.Now().Add(e.opts.StreamWait)
		for {
			r, err := e.c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: e.opts.Account, MarketType: p.mt, Symbol: p.in.GetSymbol(), ClientOrderId: cid})
			if err == nil {
				e.orderIDs = append(e.orderIDs, r.GetOrder().GetOrderId())
				if !k.Executes() {
					return fmt.Errorf("%s: the order was never sent, yet GetOrder by client id found %s", k, r.GetOrder().GetOrderId())
				}
				break
			}
			if reasonIs(err, exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND) != nil {
				return fmt.Errorf("%s: resolving by client id: %w", k, describeErr("GetOrder", err))
			}
			if !k.Executes() {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s: the order executed, but GetOrder by client id %s does not find it", k, cid)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

// checkUnknownOutcomeAmend: an amend whose answer is lost is UNKNOWN_OUTCOME (it may have changed the order; a
// refusal would let the host believe the old terms), and reading the order by client id afterwards shows the new
// price exactly when the fault executed the amend.
func checkUnknownOutcomeAmend(ctx context.Context, e *env) error {
	if err := e.needTrading(); err != nil {
		return err
	}
	if e.opts.FaultURL == "" {
		return na("no fault endpoint (set Options.FaultURL / --fault-url to an emulator)")
	}
	var in *exchangev1.Instrument
	for _, mt := range e.marketTypes() {
		if sym, ok := e.symbols[mt]; ok && e.marketCaps(mt).amend {
			in = sym
			break
		}
	}
	if in == nil {
		return na("no market type claims amend")
	}
	p, err := e.planFor(ctx, in)
	if err != nil {
		return err
	}
	moved := decimal.Max(p.price.Sub(p.tick), p.tick)
	if moved.Equal(p.price) {
		return errors.New("the resting price cannot move down a tick")
	}
	for i, k := range []faults.Kind{faults.AcceptThenError, faults.AcceptThenDrop, faults.DropBefore} {
		cid := e.clientID(fmt.Sprintf("ua%d", i))
		if _, err := e.place(ctx, e.limitBuy(p, p.price, p.qty, cid)); err != nil {
			return describeErr("PlaceOrder", err)
		}
		if err := faults.Arm(e.opts.HTTPClient, e.opts.FaultURL, cid, k); err != nil {
			return err
		}
		_, err := e.c.AmendOrder(ctx, &exchangev1.AmendOrderRequest{Account: e.opts.Account, MarketType: p.mt,
			Symbol: p.in.GetSymbol(), ClientOrderId: cid, Price: moved.String()})
		if err := reasonIs(err, exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME); err != nil {
			return fmt.Errorf("%s: a lost amend answer must be UNKNOWN_OUTCOME: %w", k, err)
		}
		got, err := e.getOrder(ctx, p, "", cid)
		if err != nil {
			return fmt.Errorf("%s: resolving by client id: %w", k, err)
		}
		want := p.price
		if k.Executes() {
			want = moved
		}
		if err := sameDec(fmt.Sprintf("%s: price after the lost amend", k), got.GetPrice(), want); err != nil {
			return err
		}
	}
	return nil
}
