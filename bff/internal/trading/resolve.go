package trading

import (
	"context"
	"errors"

	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/store"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// resolveBatch is the most entries one pass of the loop resolves.
const resolveBatch = 100

// resolveDue looks up every journal entry whose outcome is open and due: unknown ones at their time, sent ones left
// by a crash (older than SentStale and not under way here).
func (s *Service) resolveDue(ctx context.Context) {
	now := s.now()
	list, err := s.st.OrdersToResolve(ctx, now, now.Add(-s.cfg.SentStale.D()), resolveBatch)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("journal: listing entries to resolve", "err", err)
		}
		return
	}
	for _, o := range list {
		if ctx.Err() != nil {
			return
		}
		s.mu.Lock()
		_, busy := s.inflight[o.ID]
		s.mu.Unlock()
		if busy {
			continue
		}
		s.resolve(ctx, o)
	}
}

// resolve asks the exchange about one entry by its client id and records what it says. "Not found" only concludes
// "not placed" once NotFoundGrace has passed since the intent.
func (s *Service) resolve(ctx context.Context, o store.Order) {
	later := func(why string, err error) {
		next := s.now().Add(s.backoff(o.ResolveAttempts + 1))
		if _, jerr := s.st.MarkOrderUnknown(ctx, o.ID, next); jerr != nil && ctx.Err() == nil {
			s.log.Error("journal: rescheduling a resolution", "order", o.ID, "err", jerr)
		}
		s.log.Info("order outcome still unknown", "order", o.ID, "exchange", o.Exchange, "why", why, "err", err,
			"attempts", o.ResolveAttempts+1, "next", next)
	}
	sup, ok := s.plugins.Get(o.Exchange)
	if !ok {
		later("exchange not configured", nil)
		return
	}
	acct, err := s.account(ctx, o.MemberID, o.Exchange)
	if err != nil {
		later("account", err)
		return
	}
	if acct.GetAccountId() != o.AccountID {
		// The member's account changed since the order: asking the new one would wrongly find nothing.
		later("the member's account on the exchange changed", nil)
		return
	}
	m := exchangev1.MarketType(exchangev1.MarketType_value["MARKET_TYPE_"+o.MarketType])
	var out store.OrderOutcome
	if o.Kind == store.OrderKindAlgo {
		var found bool
		err = s.call(ctx, sup, "ListAlgoOrders", func(ctx context.Context, c exchangev1.ExchangeClient) error {
			resp, err := c.ListAlgoOrders(ctx, &exchangev1.ListAlgoOrdersRequest{Account: acct, MarketType: m,
				Symbol: o.Symbol, IncludeHistory: true})
			for _, a := range resp.GetAlgoOrders() {
				if a.GetClientAlgoId() == o.ClientOrderID {
					out, found = algoOutcomeOf(a), true
				}
			}
			return err
		})
		if err == nil && !found {
			err = sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND, "no algo order with this client id")
		}
	} else {
		err = s.call(ctx, sup, "GetOrder", func(ctx context.Context, c exchangev1.ExchangeClient) error {
			resp, err := c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: acct, MarketType: m, Symbol: o.Symbol,
				ClientOrderId: o.ClientOrderID})
			out = outcomeOf(resp.GetOrder())
			return err
		})
	}
	switch {
	case err == nil && out.ExchangeOrderID != "":
		if _, jerr := s.st.AcknowledgeOrder(ctx, o.ID, out); jerr != nil {
			s.log.Error("journal: recording a resolved order", "order", o.ID, "err", jerr)
			return
		}
		s.stats.byLookup.Add(1)
		s.log.Info("order outcome resolved: placed", "order", o.ID, "exchange", o.Exchange, "status", out.OrderStatus)
	case err != nil && sdk.DetailOf(err).GetReason() == exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND:
		if s.now().Sub(o.CreatedAt) < s.cfg.NotFoundGrace.D() {
			later("not visible yet", nil)
			return
		}
		if _, jerr := s.st.MarkOrderNotPlaced(ctx, o.ID, "The order did not reach the exchange."); jerr != nil {
			s.log.Error("journal: recording a resolution", "order", o.ID, "err", jerr)
			return
		}
		s.stats.notPlaced.Add(1)
		s.log.Info("order outcome resolved: not placed", "order", o.ID, "exchange", o.Exchange)
	default:
		if ctx.Err() != nil {
			return
		}
		later("lookup failed", err)
	}
}

// reconcilePending runs the reconciliations asked for (start, plugin restarts, Reconcile, the interval). An
// exchange whose plugin is not running keeps its flag for the next pass.
func (s *Service) reconcilePending(ctx context.Context) {
	s.mu.Lock()
	var slugs []string
	for slug, on := range s.reconcile {
		if on {
			slugs = append(slugs, slug)
		}
	}
	s.mu.Unlock()
	for _, slug := range slugs {
		sup, ok := s.plugins.Get(slug)
		if !ok {
			s.clearReconcile(slug)
			continue
		}
		if _, err := sup.Client(); err != nil {
			continue // not running: try again on a later pass
		}
		s.clearReconcile(slug)
		if err := s.reconcileExchange(ctx, slug); err != nil && ctx.Err() == nil {
			s.log.Warn("reconciliation incomplete; will run again", "exchange", slug, "err", err)
			s.markReconcile(slug)
		}
	}
}

func (s *Service) clearReconcile(slug string) {
	s.mu.Lock()
	delete(s.reconcile, slug)
	s.mu.Unlock()
}

// reconcileExchange re-reads the open orders of every account with journal entries on an exchange and brings the
// journal in line: statuses and fills of open orders, and the final status of those no longer open.
func (s *Service) reconcileExchange(ctx context.Context, slug string) error {
	accts, err := s.st.OpenJournalAccounts(ctx, slug)
	if err != nil {
		return err
	}
	var errs []error
	for _, a := range accts {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := s.reconcileAccount(ctx, a); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (s *Service) reconcileAccount(ctx context.Context, a store.JournalAccount) error {
	sup, ok := s.plugins.Get(a.Exchange)
	if !ok {
		return nil
	}
	acct, err := s.account(ctx, a.MemberID, a.Exchange)
	if err != nil {
		return err
	}
	if acct.GetAccountId() != a.AccountID {
		return nil // another account now: its orders are not this account's
	}
	journal, err := s.st.OpenJournalOrders(ctx, a)
	if err != nil {
		return err
	}
	var orders, algos []store.Order
	for _, j := range journal {
		if j.Kind == store.OrderKindAlgo {
			algos = append(algos, j)
		} else {
			orders = append(orders, j)
		}
	}
	m := exchangev1.MarketType(exchangev1.MarketType_value["MARKET_TYPE_"+a.MarketType])
	s.stats.reconciliations.Add(1)
	return errors.Join(s.reconcileOrders(ctx, sup, acct, m, orders), s.reconcileAlgos(ctx, sup, acct, m, algos))
}

// reconcileOrders brings the journal's open orders of one account and market in line with the exchange's open
// orders; one no longer open is read with GetOrder for its final status and fills.
func (s *Service) reconcileOrders(ctx context.Context, sup *pluginhost.Supervisor, acct *exchangev1.AccountRef,
	m exchangev1.MarketType, journal []store.Order) error {
	if len(journal) == 0 {
		return nil
	}
	var open []*exchangev1.Order
	err := s.call(ctx, sup, "ListOpenOrders", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.ListOpenOrders(ctx, &exchangev1.ListOpenOrdersRequest{Account: acct, MarketType: m})
		open = resp.GetOrders()
		return err
	})
	if err != nil {
		return err
	}
	byCID := make(map[string]*exchangev1.Order, len(open))
	for _, x := range open {
		byCID[x.GetClientOrderId()] = x
	}
	var errs []error
	for _, j := range journal {
		x, ok := byCID[j.ClientOrderID]
		if !ok {
			// No longer open: read its final state.
			err := s.call(ctx, sup, "GetOrder", func(ctx context.Context, c exchangev1.ExchangeClient) error {
				resp, err := c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: acct, MarketType: m, Symbol: j.Symbol,
					ClientOrderId: j.ClientOrderID, OrderId: j.ExchangeOrderID})
				x = resp.GetOrder()
				return err
			})
			if err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if err := s.reconciled(ctx, j, outcomeOf(x)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// algoHistoryPages bounds the history pages read per symbol when looking for algo orders no longer waiting.
const algoHistoryPages = 5

// reconcileAlgos brings the journal's waiting algo orders of one account and market in line with the exchange's
// waiting ones (ListAlgoOrders), matched by client algo id; one no longer waiting is looked for in its symbol's
// algo history for its final status (triggered, cancelled, failed).
func (s *Service) reconcileAlgos(ctx context.Context, sup *pluginhost.Supervisor, acct *exchangev1.AccountRef,
	m exchangev1.MarketType, journal []store.Order) error {
	if len(journal) == 0 {
		return nil
	}
	var waiting []*exchangev1.AlgoOrder
	err := s.call(ctx, sup, "ListAlgoOrders", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.ListAlgoOrders(ctx, &exchangev1.ListAlgoOrdersRequest{Account: acct, MarketType: m})
		waiting = resp.GetAlgoOrders()
		return err
	})
	if err != nil {
		return err
	}
	byCID := make(map[string]*exchangev1.AlgoOrder, len(waiting))
	for _, a := range waiting {
		byCID[a.GetClientAlgoId()] = a
	}
	gone := map[string][]store.Order{} // symbol -> entries no longer waiting
	var errs []error
	for _, j := range journal {
		if a, ok := byCID[j.ClientOrderID]; ok {
			if err := s.reconciled(ctx, j, algoOutcomeOf(a)); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		gone[j.Symbol] = append(gone[j.Symbol], j)
	}
	for symbol, js := range gone {
		want := make(map[string]store.Order, len(js))
		for _, j := range js {
			want[j.ClientOrderID] = j
		}
		cursor := ""
		for page := 0; page < algoHistoryPages && len(want) > 0; page++ {
			var got []*exchangev1.AlgoOrder
			var next string
			err := s.call(ctx, sup, "ListAlgoOrders", func(ctx context.Context, c exchangev1.ExchangeClient) error {
				resp, err := c.ListAlgoOrders(ctx, &exchangev1.ListAlgoOrdersRequest{Account: acct, MarketType: m,
					Symbol: symbol, IncludeHistory: true, Page: &exchangev1.HistoryPage{Cursor: cursor}})
				got, next = resp.GetAlgoOrders(), resp.GetNextCursor()
				return err
			})
			if err != nil {
				errs = append(errs, err)
				break
			}
			for _, a := range got {
				j, ok := want[a.GetClientAlgoId()]
				if !ok {
					continue
				}
				delete(want, a.GetClientAlgoId())
				if err := s.reconciled(ctx, j, algoOutcomeOf(a)); err != nil {
					errs = append(errs, err)
				}
			}
			if next == "" {
				break
			}
			cursor = next
		}
		for _, j := range want {
			// Neither waiting nor in the history read: left as it is (an error here would re-run the
			// reconciliation on every pass); the account stream or a later reconciliation may still say.
			s.log.Warn("reconciliation: an algo order no longer waiting was not found in its history", "order", j.ID,
				"exchange", j.Exchange, "client_algo_id", j.ClientOrderID)
		}
	}
	return errors.Join(errs...)
}

// reconciled records the exchange's view of one journal entry when it differs.
func (s *Service) reconciled(ctx context.Context, j store.Order, out store.OrderOutcome) error {
	if out.OrderStatus == j.OrderStatus && out.FilledQty == j.FilledQty && out.AvgPrice == j.AvgPrice {
		return nil
	}
	if _, err := s.st.UpdateOrderStatus(ctx, j.ID, out); err != nil {
		return err
	}
	s.stats.reconcileUpdates.Add(1)
	return nil
}
