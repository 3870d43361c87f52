package trading

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/exhub/exhub/bff/internal/accountstream/feed"
	"github.com/exhub/exhub/bff/internal/store"
)

// feedQueueSize bounds the account updates waiting for the loop (all followed accounts together). Past it, an
// account's updates are dropped for a reconciliation of its exchange (the journal never depends on every event).
const feedQueueSize = 4096

// followEvery is how often the loop re-computes which accounts it follows.
const followEvery = time.Second

// WithAccountFeed makes the service follow the private account stream (accountstream.Manager) of every account with
// journal entries open or pending: an order event whose client id is journaled resolves or updates that entry at
// once, and a resync marker (a gap in the stream) reconciles the exchange.
func WithAccountFeed(sub feed.Subscriber) Option { return func(s *Service) { s.feed = sub } }

type feedItem struct {
	member string
	u      feed.Update
}

// feedQueue is the bounded queue the followed accounts' sinks fill and the loop drains.
type feedQueue struct {
	mu     sync.Mutex
	items  []feedItem
	notify chan struct{}
}

func (q *feedQueue) offer(it feedItem) bool {
	q.mu.Lock()
	if len(q.items) >= feedQueueSize {
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, it)
	q.mu.Unlock()
	select {
	case q.notify <- struct{}{}:
	default:
	}
	return true
}

func (q *feedQueue) take() []feedItem {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.items
	q.items = nil
	return out
}

// journalSink is one followed account's sink.
type journalSink struct {
	s        *Service
	member   string
	exchange string
}

// Offer implements feed.Sink.
func (j journalSink) Offer(u feed.Update) bool { return j.s.feedQ.offer(feedItem{j.member, u}) }

// Reset implements feed.Sink: the queue was full, so some updates were not seen; reconciliation re-reads them.
func (j journalSink) Reset(us []feed.Update) {
	j.s.markReconcile(j.exchange)
	for _, u := range us {
		if u.Kind == feed.KindSnapshot {
			j.s.feedQ.offer(feedItem{j.member, u})
		}
	}
	j.s.wake()
}

type followKey struct{ member, exchange string }

// follow subscribes to the accounts with open or pending journal entries and ends the subscriptions of the others.
// It runs on the loop's goroutine.
func (s *Service) follow(ctx context.Context, subs map[followKey]func()) {
	want := map[followKey]bool{}
	accts, err := s.st.OpenJournalAccounts(ctx, "")
	if err != nil {
		return
	}
	for _, a := range accts {
		want[followKey{a.MemberID, a.Exchange}] = true
	}
	far := s.now().Add(24 * time.Hour)
	pending, err := s.st.OrdersToResolve(ctx, far, far, store.MaxOrderList)
	if err != nil {
		return
	}
	for _, o := range pending {
		want[followKey{o.MemberID, o.Exchange}] = true
	}
	for k, cancel := range subs {
		if !want[k] {
			cancel()
			delete(subs, k)
		}
	}
	for k := range want {
		if _, ok := subs[k]; ok {
			continue
		}
		cancel, err := s.feed.Subscribe(ctx, k.member, k.exchange, journalSink{s: s, member: k.member, exchange: k.exchange})
		if err != nil {
			if !errors.Is(err, feed.ErrNoAccount) && ctx.Err() == nil {
				s.log.Warn("following an account stream", "exchange", k.exchange, "err", err)
			}
			continue
		}
		subs[k] = cancel
	}
}

// applyFeed brings the journal in line with account updates.
func (s *Service) applyFeed(ctx context.Context, items []feedItem) {
	for _, it := range items {
		u := it.u
		switch u.Kind {
		case feed.KindResync:
			s.markReconcile(u.Exchange)
		case feed.KindSnapshot:
			if u.Snapshot == nil {
				continue
			}
			for _, o := range u.Snapshot.Orders {
				s.applyOrder(ctx, it.member, u.Exchange, o.GetClientOrderId(), false, outcomeOf(o))
			}
			for _, a := range u.Snapshot.AlgoOrders {
				s.applyOrder(ctx, it.member, u.Exchange, a.GetClientAlgoId(), true, algoOutcomeOf(a))
			}
		case feed.KindOrder:
			o := u.Event.GetOrder()
			s.applyOrder(ctx, it.member, u.Exchange, o.GetClientOrderId(), false, outcomeOf(o))
		case feed.KindAlgo:
			a := u.Event.GetAlgoOrder()
			s.applyOrder(ctx, it.member, u.Exchange, a.GetClientAlgoId(), true, algoOutcomeOf(a))
		}
	}
}

// applyOrder records what the stream says about one order (algo: an algo order event) of the member, when the
// journal has it: a pending entry is resolved as placed, an acknowledged one takes the newer status. An algo entry
// only takes algo order events: the order a triggered stop creates may carry the same client id (Binance), and its
// fills are not the algo order's status.
func (s *Service) applyOrder(ctx context.Context, member, exchange, cid string, algo bool, out store.OrderOutcome) {
	if cid == "" || out.ExchangeOrderID == "" {
		return
	}
	j, err := s.st.OrderByClientID(ctx, exchange, cid)
	if err != nil || j.MemberID != member {
		return // not placed through exhub, or not this member's
	}
	if (j.Kind == store.OrderKindAlgo) != algo {
		return
	}
	switch j.State {
	case store.OrderSent, store.OrderUnknown:
		if _, err := s.st.AcknowledgeOrder(ctx, j.ID, out); err != nil {
			s.log.Warn("journal: recording an order seen on the account stream", "order", j.ID, "err", err)
			return
		}
		s.stats.byStream.Add(1)
		s.log.Info("order outcome resolved from the account stream", "order", j.ID, "exchange", exchange)
	case store.OrderAcknowledged:
		if out.OrderStatus == j.OrderStatus && out.FilledQty == j.FilledQty && out.AvgPrice == j.AvgPrice {
			return
		}
		if _, err := s.st.UpdateOrderStatus(ctx, j.ID, out); err != nil {
			s.log.Warn("journal: recording an order update from the account stream", "order", j.ID, "err", err)
		}
	}
}
