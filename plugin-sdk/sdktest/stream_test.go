package sdktest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func subscribe(t *testing.T, st exchangev1.Exchange_StreamMarketClient, id string, subs ...*exchangev1.Subscription) {
	t.Helper()
	if err := st.Send(&exchangev1.StreamMarketRequest{Op: exchangev1.StreamMarketRequest_OP_SUBSCRIBE, Subscriptions: subs, RequestId: id}); err != nil {
		t.Fatal(err)
	}
}

// localBook applies snapshots and deltas the way a host does.
type localBook struct {
	seq        int64
	bids, asks map[string]string
}

func (b *localBook) apply(t *testing.T, ev *exchangev1.MarketEvent) {
	t.Helper()
	var u *exchangev1.BookUpdate
	switch x := ev.Event.(type) {
	case *exchangev1.MarketEvent_BookSnapshot:
		u = x.BookSnapshot
		b.bids, b.asks = map[string]string{}, map[string]string{}
	case *exchangev1.MarketEvent_BookDelta:
		u = x.BookDelta
		if b.bids == nil {
			t.Fatal("delta before snapshot")
		}
		if u.PrevSequence != b.seq {
			t.Fatalf("gap: prev_sequence %d after sequence %d", u.PrevSequence, b.seq)
		}
	default:
		return
	}
	for _, side := range []struct {
		m  map[string]string
		ls []*exchangev1.PriceLevel
	}{{b.bids, u.Bids}, {b.asks, u.Asks}} {
		for _, l := range side.ls {
			if l.Qty == "0" {
				delete(side.m, l.Price)
			} else {
				side.m[l.Price] = l.Qty
			}
		}
	}
	b.seq = u.Sequence
}

func (b *localBook) equal(ob *exchangev1.OrderBook) error {
	if len(ob.Bids) != len(b.bids) || len(ob.Asks) != len(b.asks) {
		return fmt.Errorf("level counts differ: local %d/%d, book %d/%d", len(b.bids), len(b.asks), len(ob.Bids), len(ob.Asks))
	}
	for _, l := range ob.Bids {
		if b.bids[l.Price] != l.Qty {
			return fmt.Errorf("bid %s: local %q, book %q", l.Price, b.bids[l.Price], l.Qty)
		}
	}
	for _, l := range ob.Asks {
		if b.asks[l.Price] != l.Qty {
			return fmt.Errorf("ask %s: local %q, book %q", l.Price, b.asks[l.Price], l.Qty)
		}
	}
	return nil
}

func TestStreamedBookEqualsTheBook(t *testing.T) {
	s, c, clock := manual(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st := must(c.StreamMarket(ctx))
	sub := &exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_BOOK, MarketType: swap, Symbol: "BTCUSDT", Depth: bookLevels}
	subscribe(t, st, "r1", sub)
	var lb localBook
	states := []exchangev1.StreamStatus_State{}
	// Read until the snapshot, then move the market (ticks and an order that changes the book).
	for lb.bids == nil {
		ev := must(st.Recv())
		if s := ev.GetStatus(); s != nil {
			states = append(states, s.State)
		}
		lb.apply(t, ev)
	}
	if len(states) != 2 || states[0] != exchangev1.StreamStatus_STATE_CONNECTED || states[1] != exchangev1.StreamStatus_STATE_SUBSCRIBED {
		t.Fatalf("want CONNECTED then SUBSCRIBED before the snapshot, got %v", states)
	}
	step(s, clock, 30)
	b := book(t, c, swap, "BTCUSDT", 1)
	must(c.PlaceOrder(ctx, limit(acct("s"), swap, "BTCUSDT", buy, d(b.Bids[0].Price).Add(d("0.1")).String(), "1.234", 0)))
	step(s, clock, 5)
	want := book(t, c, swap, "BTCUSDT", bookLevels)
	for lb.seq < want.Sequence {
		lb.apply(t, must(st.Recv()))
	}
	if lb.seq != want.Sequence {
		t.Fatalf("stream passed the book: %d vs %d", lb.seq, want.Sequence)
	}
	if err := lb.equal(want); err != nil {
		t.Fatalf("after applying deltas up to %d: %v", lb.seq, err)
	}
}

func TestSlowConsumerGetsConflatedState(t *testing.T) {
	s, c, clock := manual(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st := must(c.StreamMarket(ctx))
	subscribe(t, st, "slow",
		&exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_BOOK, MarketType: spot, Symbol: "ETHUSDT"},
		&exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_TRADES, MarketType: spot, Symbol: "ETHUSDT"},
		&exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_TICKER, MarketType: spot, Symbol: "ETHUSDT"})
	var lb localBook
	for lb.bids == nil {
		lb.apply(t, must(st.Recv()))
	}
	// Stop reading while the market runs on: the per-stream queue must stay bounded.
	for range 3000 {
		step(s, clock, 1)
		s.mu.Lock()
		for sess := range s.marketSubs {
			sess.q.mu.Lock()
			n := len(sess.q.keys)
			sess.q.mu.Unlock()
			if n > queueSize {
				s.mu.Unlock()
				t.Fatalf("queue grew to %d", n)
			}
		}
		s.mu.Unlock()
	}
	// Reading again: the book chain is still contiguous, and the stream ends up at the current book.
	want := book(t, c, spot, "ETHUSDT", defaultBookDepth)
	dropped := false
	for lb.seq < want.Sequence {
		ev := must(st.Recv())
		if s := ev.GetStatus(); s != nil && s.State == exchangev1.StreamStatus_STATE_CONNECTED && s.Message != "connected" {
			dropped = true
		}
		lb.apply(t, ev)
	}
	if err := lb.equal(want); err != nil {
		t.Fatal(err)
	}
	if !dropped {
		t.Fatal("3000 ticks of trades should overflow the queue and be reported as dropped")
	}
}

func TestSubscriptionErrorsAndUnsubscribe(t *testing.T) {
	s, c, clock := manual(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st := must(c.StreamMarket(ctx))
	subscribe(t, st, "bad",
		&exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_BOOK, MarketType: spot, Symbol: "NOPE"},
		&exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_MARK_PRICE, MarketType: spot, Symbol: "BTCUSDT"},
		&exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_CANDLES, MarketType: swap, Symbol: "BTCUSDT", Interval: "1m"})
	var reasons []exchangev1.ErrorReason
	gotCandle := false
	for len(reasons) < 2 || !gotCandle {
		ev := must(st.Recv())
		if s := ev.GetStatus(); s != nil && s.State == exchangev1.StreamStatus_STATE_ERROR {
			if s.RequestId != "bad" {
				t.Fatalf("error status without the request id: %v", s)
			}
			reasons = append(reasons, s.Error.GetReason())
		}
		gotCandle = gotCandle || ev.GetCandle() != nil
	}
	if reasons[0] != exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND || reasons[1] != exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED {
		t.Fatalf("reasons: %v", reasons)
	}
	if err := st.Send(&exchangev1.StreamMarketRequest{Op: exchangev1.StreamMarketRequest_OP_UNSUBSCRIBE, RequestId: "u",
		Subscriptions: []*exchangev1.Subscription{{Channel: exchangev1.Channel_CHANNEL_CANDLES, MarketType: swap, Symbol: "BTCUSDT", Interval: "1m"}}}); err != nil {
		t.Fatal(err)
	}
	for {
		ev := must(st.Recv())
		if s := ev.GetStatus(); s != nil && s.State == exchangev1.StreamStatus_STATE_UNSUBSCRIBED && s.RequestId == "u" {
			break
		}
	}
	step(s, clock, 300) // over a minute: candles would roll
	if err := st.Send(&exchangev1.StreamMarketRequest{Op: exchangev1.StreamMarketRequest_OP_SUBSCRIBE, RequestId: "marker",
		Subscriptions: []*exchangev1.Subscription{{Channel: exchangev1.Channel_CHANNEL_TICKER, MarketType: spot, Symbol: "SOLUSDT"}}}); err != nil {
		t.Fatal(err)
	}
	for {
		ev := must(st.Recv())
		if ev.GetCandle() != nil {
			t.Fatalf("candle after unsubscribe: %v", ev)
		}
		if s := ev.GetStatus(); s != nil && s.RequestId == "marker" {
			return
		}
	}
}

func TestStreamAccount(t *testing.T) {
	_, c, _ := manual(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a := acct("streamer")
	st := must(c.StreamAccount(ctx, &exchangev1.StreamAccountRequest{Account: a}))
	first := must(st.Recv())
	if first.GetSnapshot() == nil || first.Sequence != 1 || len(first.GetSnapshot().Balances) == 0 {
		t.Fatalf("first event should be a snapshot with sequence 1: %v", first)
	}
	o := must(c.PlaceOrder(ctx, market(a, swap, "SOLUSDT", buy, "10"))).Order
	var order *exchangev1.Order
	fills, positions := decimal.Zero, 0
	usdt := false
	seq := first.Sequence
	for order == nil || fills.LessThan(d("10")) || positions == 0 || !usdt {
		ev := must(st.Recv())
		if ev.Sequence != seq+1 {
			t.Fatalf("sequence %d after %d", ev.Sequence, seq)
		}
		seq = ev.Sequence
		switch x := ev.Event.(type) {
		case *exchangev1.AccountEvent_Order:
			order = x.Order
		case *exchangev1.AccountEvent_Fill:
			fills = fills.Add(d(x.Fill.Qty))
		case *exchangev1.AccountEvent_Position:
			positions++
		case *exchangev1.AccountEvent_Balance:
			usdt = usdt || (x.Balance.Asset == "USDT" && x.Balance.Wallet == trading)
		}
	}
	if order.OrderId != o.OrderId || order.Status != exchangev1.OrderStatus_ORDER_STATUS_FILLED {
		t.Fatalf("order event: %v", order)
	}
	_, err := c.StreamAccount(ctx, &exchangev1.StreamAccountRequest{})
	if err == nil {
		st2 := must(c.StreamAccount(ctx, &exchangev1.StreamAccountRequest{}))
		_, err = st2.Recv()
	}
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED)
}

func TestQueueConflatesAndBounds(t *testing.T) {
	q := newQueue[int]()
	for i := range 5000 {
		q.put("state", i, false)
		q.put(fmt.Sprintf("trade%d", i), i, true)
	}
	items, dropped := q.take()
	if len(items) != queueSize || dropped != 5001-queueSize {
		t.Fatalf("%d items, %d dropped", len(items), dropped)
	}
	if items[0] != 4999 {
		t.Fatalf("the keyed state should hold the latest value first in line, got %d", items[0])
	}
	if items[len(items)-1] != 4999 || items[1] != 5000-queueSize+1 {
		t.Fatalf("the oldest trades should be the ones dropped: %d..%d", items[1], items[len(items)-1])
	}
	if again, n := q.take(); len(again) != 0 || n != 0 {
		t.Fatal("take should empty the queue")
	}
}

func TestRebuildResyncsStreams(t *testing.T) {
	s, c, clock := manual(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st := must(c.StreamMarket(ctx))
	subscribe(t, st, "r", &exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_BOOK, MarketType: swap, Symbol: "SOLUSDT"})
	var lb localBook
	for lb.bids == nil {
		lb.apply(t, must(st.Recv()))
	}
	step(s, clock, 10)
	must(c.Configure(ctx, &exchangev1.ConfigureRequest{Settings: map[string]string{"seed": "77"}}))
	step(s, clock, 10)
	before := lb.seq
	resynced := false
	for {
		ev := must(st.Recv())
		if s := ev.GetStatus(); s != nil && s.State == exchangev1.StreamStatus_STATE_RESYNCED {
			resynced = true
			continue
		}
		if !resynced {
			lb.apply(t, ev)
			continue
		}
		if ev.GetBookSnapshot() == nil {
			t.Fatalf("after RESYNCED the book must restart with a snapshot, got %T", ev.Event)
		}
		if ev.GetBookSnapshot().Sequence <= before {
			t.Fatalf("sequence went back from %d to %d", before, ev.GetBookSnapshot().Sequence)
		}
		lb.apply(t, ev)
		break
	}
	want := book(t, c, swap, "SOLUSDT", defaultBookDepth)
	for lb.seq < want.Sequence {
		lb.apply(t, must(st.Recv()))
	}
	if err := lb.equal(want); err != nil {
		t.Fatal(err)
	}
}
