package trading

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/accountstream/feed"
	"github.com/exhub/exhub/bff/internal/config/setting"
	"github.com/exhub/exhub/bff/internal/store"
	"github.com/exhub/exhub/plugin-sdk/faults"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// fakeFeed is an account stream the test drives: it remembers each subscription's sink.
type fakeFeed struct {
	mu    sync.Mutex
	sinks map[string]feed.Sink // member/exchange -> sink
}

func (f *fakeFeed) Subscribe(_ context.Context, member, exchange string, sink feed.Sink) (func(), error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sinks == nil {
		f.sinks = map[string]feed.Sink{}
	}
	k := member + "/" + exchange
	f.sinks[k] = sink
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.sinks, k)
	}, nil
}

func (f *fakeFeed) sink(k string) feed.Sink {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sinks[k]
}

// TestAccountFeedResolvesAndReconciles: with lookups by client id pushed far out, the account stream alone resolves
// a lost answer; another member's stream never touches the entry; a resync marker reconciles the exchange.
func TestAccountFeedResolvesAndReconciles(t *testing.T) {
	e := newEnv(t, false)
	e.stopLoop()
	ff := &fakeFeed{}
	var next atomic.Value
	next.Store("")
	cfg := e.svc.cfg
	hour := setting.Duration(time.Hour)
	cfg.ResolveInitial, cfg.ResolveMax, cfg.ReconcileInterval = hour, hour, hour
	svc, err := New(cfg, e.st, e.host, e.acc, WithAccountFeed(ff), WithClientIDs(func() string { return next.Swap("").(string) }))
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	e.start()

	m := e.market(t, "reference", "SPOT")
	ctx := ctxT(t)
	cid := fmt.Sprintf("exfeed%d", time.Now().UnixNano()%1e12)
	if err := faults.Arm(http.DefaultClient, m.ex.faults, cid, faults.AcceptThenError); err != nil {
		t.Fatal(err)
	}
	next.Store(cid)
	price := m.price(0.7)
	o, err := e.svc.Place(ctx, "a", newKey(), m.limit("BUY", price, m.qty(price, 1)))
	if err != nil || StatusOf(o) != StatusPending {
		t.Fatalf("place: %+v %v", o, err)
	}
	eventually(t, "the service follows a's account", func() (string, bool) { return "", ff.sink("a/reference") != nil })

	// The order as the exchange has it.
	sup, _ := e.host.Get("reference")
	acct, _ := e.acc.AccountRef(ctx, "a", "reference")
	var x *exchangev1.Order
	if err := sup.Call(ctx, "GetOrder", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: acct, MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT,
			Symbol: m.symbol, ClientOrderId: cid})
		x = resp.GetOrder()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ev := &exchangev1.AccountEvent{Event: &exchangev1.AccountEvent_Order{Order: x}}

	// Member b's stream carrying a's client id changes nothing.
	e.svc.applyFeed(ctx, []feedItem{{member: "b", u: feed.Update{Exchange: "reference", Kind: feed.KindOrder, Event: ev}}})
	if cur, _ := e.st.Order(ctx, o.ID); cur.State != store.OrderUnknown {
		t.Fatalf("b's stream changed a's entry: %+v", cur)
	}

	ff.sink("a/reference").Offer(feed.Update{Exchange: "reference", Kind: feed.KindOrder, Event: ev})
	if r := e.waitStatus(t, o.ID, StatusOpen); r.ExchangeOrderID != x.GetOrderId() {
		t.Fatalf("resolved from the stream: %+v", r)
	}

	// Cancelled on the exchange behind the journal's back: a resync marker makes the loop re-read.
	if err := sup.Call(ctx, "CancelOrder", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		_, err := c.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: acct, MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT,
			Symbol: m.symbol, ClientOrderId: cid})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ff.sink("a/reference").Offer(feed.Update{Exchange: "reference", Kind: feed.KindResync, Reason: "sequence_gap"})
	e.waitStatus(t, o.ID, StatusCancelled)
	// Nothing open or pending: the subscription ends.
	eventually(t, "the service stops following a's account", func() (string, bool) { return "", ff.sink("a/reference") == nil })
}
