package conformance

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
	"google.golang.org/protobuf/proto"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

type recvResult struct {
	ev  *exchangev1.MarketEvent
	err error
}

// openStream opens StreamMarket and pumps its events into a bounded channel. The pump goroutine belongs to the
// returned cancel: it ends when the stream's context is cancelled.
func (e *env) openStream(ctx context.Context) (exchangev1.Exchange_StreamMarketClient, <-chan recvResult, context.CancelFunc, error) {
	sctx, cancel := context.WithCancel(ctx)
	st, err := e.c.StreamMarket(sctx)
	if err != nil {
		cancel()
		return nil, nil, nil, describeErr("StreamMarket", err)
	}
	ch := make(chan recvResult, 256)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			ev, err := st.Recv()
			select {
			case ch <- recvResult{ev, err}:
			case <-sctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return st, ch, func() { cancel(); <-done }, nil
}

func sameSub(a, b *exchangev1.Subscription) bool {
	return a.GetChannel() == b.GetChannel() && a.GetMarketType() == b.GetMarketType() && a.GetSymbol() == b.GetSymbol()
}

// next waits for the next event until the deadline.
func next(ch <-chan recvResult, deadline time.Time) (*exchangev1.MarketEvent, error) {
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("stream ended: %s [%s]", sdk.MessageOf(r.err), sdk.ReasonName(sdk.DetailOf(r.err).GetReason()))
		}
		return r.ev, nil
	case <-time.After(time.Until(deadline)):
		return nil, errTimeout
	}
}

var errTimeout = errors.New("timed out")

// statusError turns an ERROR status about our request into a failure.
func statusError(ev *exchangev1.MarketEvent, requestID string) error {
	st := ev.GetStatus()
	if st != nil && st.GetState() == exchangev1.StreamStatus_STATE_ERROR && (st.GetRequestId() == requestID || st.GetRequestId() == "") {
		return fmt.Errorf("stream refused the subscription: %s [%s]", st.GetMessage(), sdk.ReasonName(st.GetError().GetReason()))
	}
	return nil
}

type localBook struct{ bids, asks map[string]decimal.Decimal }

func (b *localBook) apply(u *exchangev1.BookUpdate, replace bool) error {
	if replace {
		b.bids, b.asks = map[string]decimal.Decimal{}, map[string]decimal.Decimal{}
	}
	for _, side := range []struct {
		m  map[string]decimal.Decimal
		ls []*exchangev1.PriceLevel
	}{{b.bids, u.GetBids()}, {b.asks, u.GetAsks()}} {
		for _, l := range side.ls {
			p, err := positive("price", l.GetPrice())
			if err != nil {
				return err
			}
			q, err := dec("qty", l.GetQty())
			if err != nil {
				return err
			}
			if q.IsZero() {
				delete(side.m, p.String())
			} else {
				side.m[p.String()] = q
			}
		}
	}
	return nil
}

func (b *localBook) crossed() error {
	var bestBid, bestAsk *decimal.Decimal
	for k := range b.bids {
		p := decimal.RequireFromString(k)
		if bestBid == nil || p.GreaterThan(*bestBid) {
			bestBid = &p
		}
	}
	for k := range b.asks {
		p := decimal.RequireFromString(k)
		if bestAsk == nil || p.LessThan(*bestAsk) {
			bestAsk = &p
		}
	}
	if bestBid != nil && bestAsk != nil && !bestBid.LessThan(*bestAsk) {
		return fmt.Errorf("book crossed after applying deltas: bid %s >= ask %s", bestBid, bestAsk)
	}
	return nil
}

func checkStreamBook(ctx context.Context, e *env) error {
	if err := e.needSymbols(); err != nil {
		return err
	}
	if !e.desc.GetCapabilities().GetStreams().GetBook() {
		return na("the plugin does not claim book streams")
	}
	mt := e.marketTypes()[0]
	in := e.symbols[mt]
	st, ch, stop, err := e.openStream(ctx)
	if err != nil {
		return err
	}
	defer stop()
	sub := &exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_BOOK, MarketType: mt, Symbol: in.GetSymbol(), Depth: 20}
	if err := st.Send(&exchangev1.StreamMarketRequest{Op: exchangev1.StreamMarketRequest_OP_SUBSCRIBE,
		Subscriptions: []*exchangev1.Subscription{sub}, RequestId: e.tag + "-sub"}); err != nil {
		return fmt.Errorf("send subscribe: %w", err)
	}
	deadline := time.Now().Add(e.opts.StreamWait)
	var book localBook
	lastSeq, deltas, snapshot := int64(0), 0, false
	for deltas < e.opts.MinDeltas {
		ev, err := next(ch, deadline)
		if err != nil {
			return fmt.Errorf("after %d deltas (snapshot: %v): %w", deltas, snapshot, err)
		}
		if err := statusError(ev, e.tag+"-sub"); err != nil {
			return err
		}
		if !sameSub(ev.GetSubscription(), sub) {
			continue
		}
		switch x := ev.GetEvent().(type) {
		case *exchangev1.MarketEvent_BookSnapshot:
			if err := book.apply(x.BookSnapshot, true); err != nil {
				return fmt.Errorf("snapshot: %w", err)
			}
			if err := book.crossed(); err != nil {
				return fmt.Errorf("snapshot: %w", err)
			}
			snapshot, lastSeq = true, x.BookSnapshot.GetSequence()
		case *exchangev1.MarketEvent_BookDelta:
			d := x.BookDelta
			if !snapshot {
				return errors.New("a book delta came before the snapshot")
			}
			if d.GetPrevSequence() != lastSeq {
				return fmt.Errorf("sequence gap: delta prev_sequence %d, last sequence %d", d.GetPrevSequence(), lastSeq)
			}
			if d.GetSequence() <= lastSeq {
				return fmt.Errorf("sequence %d does not advance past %d", d.GetSequence(), lastSeq)
			}
			if err := book.apply(d, false); err != nil {
				return fmt.Errorf("delta %d: %w", d.GetSequence(), err)
			}
			if err := book.crossed(); err != nil {
				return fmt.Errorf("delta %d: %w", d.GetSequence(), err)
			}
			lastSeq = d.GetSequence()
			deltas++
		}
	}
	// Unsubscribe: after the acknowledgement no more events of this subscription may arrive.
	if err := st.Send(&exchangev1.StreamMarketRequest{Op: exchangev1.StreamMarketRequest_OP_UNSUBSCRIBE,
		Subscriptions: []*exchangev1.Subscription{proto.Clone(sub).(*exchangev1.Subscription)}, RequestId: e.tag + "-unsub"}); err != nil {
		return fmt.Errorf("send unsubscribe: %w", err)
	}
	acked := false
	quiet := time.Time{}
	for {
		limit := deadline.Add(5 * time.Second)
		if acked {
			limit = quiet
		}
		ev, err := next(ch, limit)
		if errors.Is(err, errTimeout) {
			if !acked {
				return errors.New("no UNSUBSCRIBED status acknowledged the unsubscribe request")
			}
			return nil
		}
		if err != nil {
			return err
		}
		if s := ev.GetStatus(); s != nil && s.GetState() == exchangev1.StreamStatus_STATE_UNSUBSCRIBED && s.GetRequestId() == e.tag+"-unsub" {
			acked, quiet = true, time.Now().Add(time.Second)
			continue
		}
		if acked && sameSub(ev.GetSubscription(), sub) && ev.GetStatus() == nil {
			return fmt.Errorf("a %T event arrived after the unsubscribe was acknowledged", ev.GetEvent())
		}
	}
}

func checkStreamTrades(ctx context.Context, e *env) error {
	if err := e.needSymbols(); err != nil {
		return err
	}
	if !e.desc.GetCapabilities().GetStreams().GetTrades() {
		return na("the plugin does not claim trade streams")
	}
	mt := e.marketTypes()[0]
	in := e.symbols[mt]
	st, ch, stop, err := e.openStream(ctx)
	if err != nil {
		return err
	}
	defer stop()
	sub := &exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_TRADES, MarketType: mt, Symbol: in.GetSymbol()}
	if err := st.Send(&exchangev1.StreamMarketRequest{Op: exchangev1.StreamMarketRequest_OP_SUBSCRIBE,
		Subscriptions: []*exchangev1.Subscription{sub}, RequestId: e.tag + "-trades"}); err != nil {
		return fmt.Errorf("send subscribe: %w", err)
	}
	deadline := time.Now().Add(e.opts.StreamWait)
	var lastTime int64
	for got := 0; got < 3; {
		ev, err := next(ch, deadline)
		if err != nil {
			return fmt.Errorf("after %d trades: %w", got, err)
		}
		if err := statusError(ev, e.tag+"-trades"); err != nil {
			return err
		}
		t := ev.GetTrade()
		if t == nil || !sameSub(ev.GetSubscription(), sub) {
			continue
		}
		if _, err := positive("price", t.GetPrice()); err != nil {
			return err
		}
		if _, err := positive("qty", t.GetQty()); err != nil {
			return err
		}
		if t.GetTime() < lastTime {
			return fmt.Errorf("trade %s at %d is older than the previous one (%d)", t.GetId(), t.GetTime(), lastTime)
		}
		lastTime = t.GetTime()
		got++
	}
	return nil
}

// streamEvents subscribes to one channel of the first market type (or mt, when given) and hands every event of
// that subscription to accept until it says done.
func (e *env) streamEvents(ctx context.Context, ch exchangev1.Channel, mt exchangev1.MarketType, interval string,
	accept func(*exchangev1.MarketEvent) (bool, error)) error {
	in := e.symbols[mt]
	st, events, stop, err := e.openStream(ctx)
	if err != nil {
		return err
	}
	defer stop()
	sub := &exchangev1.Subscription{Channel: ch, MarketType: mt, Symbol: in.GetSymbol(), Interval: interval}
	rid := e.tag + "-" + ch.String()
	if err := st.Send(&exchangev1.StreamMarketRequest{Op: exchangev1.StreamMarketRequest_OP_SUBSCRIBE,
		Subscriptions: []*exchangev1.Subscription{sub}, RequestId: rid}); err != nil {
		return fmt.Errorf("send subscribe: %w", err)
	}
	deadline := time.Now().Add(e.opts.StreamWait)
	for {
		ev, err := next(events, deadline)
		if err != nil {
			return err
		}
		if err := statusError(ev, rid); err != nil {
			return err
		}
		if !sameSub(ev.GetSubscription(), sub) || ev.GetStatus() != nil {
			continue
		}
		done, err := accept(ev)
		if err != nil || done {
			return err
		}
	}
}

func checkStreamTicker(ctx context.Context, e *env) error {
	if err := e.needSymbols(); err != nil {
		return err
	}
	if !e.desc.GetCapabilities().GetStreams().GetTicker() {
		return na("the plugin does not claim ticker streams")
	}
	mt := e.marketTypes()[0]
	got := 0
	err := e.streamEvents(ctx, exchangev1.Channel_CHANNEL_TICKER, mt, "", func(ev *exchangev1.MarketEvent) (bool, error) {
		t := ev.GetTicker()
		if t == nil {
			return false, nil
		}
		if t.GetSymbol() != e.symbols[mt].GetSymbol() {
			return false, fmt.Errorf("ticker for %q on a %s subscription", t.GetSymbol(), e.symbols[mt].GetSymbol())
		}
		if _, err := positive("last", t.GetLast()); err != nil {
			return false, err
		}
		got++
		return got >= 2, nil
	})
	if err != nil {
		return fmt.Errorf("after %d tickers: %w", got, err)
	}
	return nil
}

func checkStreamCandles(ctx context.Context, e *env) error {
	if err := e.needSymbols(); err != nil {
		return err
	}
	if !e.desc.GetCapabilities().GetStreams().GetCandles() {
		return na("the plugin does not claim candle streams")
	}
	mt := e.marketTypes()[0]
	iv := e.candleIntervals()[0]
	got, last := 0, int64(0)
	err := e.streamEvents(ctx, exchangev1.Channel_CHANNEL_CANDLES, mt, iv, func(ev *exchangev1.MarketEvent) (bool, error) {
		c := ev.GetCandle()
		if c == nil {
			return false, nil
		}
		if err := validateCandles([]*exchangev1.Candle{c}, iv); err != nil {
			return false, err
		}
		if c.GetOpenTime() < last {
			return false, fmt.Errorf("candle %d after candle %d", c.GetOpenTime(), last)
		}
		last = c.GetOpenTime()
		got++
		return got >= 2, nil
	})
	if err != nil {
		return fmt.Errorf("after %d candles: %w", got, err)
	}
	return nil
}

func checkStreamMarkPrice(ctx context.Context, e *env) error {
	if err := e.needSymbols(); err != nil {
		return err
	}
	if !e.desc.GetCapabilities().GetStreams().GetMarkPrice() {
		return na("the plugin does not claim mark price streams")
	}
	if _, ok := e.symbols[exchangev1.MarketType_MARKET_TYPE_SWAP]; !ok {
		return na("the plugin offers no SWAP market")
	}
	got := 0
	err := e.streamEvents(ctx, exchangev1.Channel_CHANNEL_MARK_PRICE, exchangev1.MarketType_MARKET_TYPE_SWAP, "", func(ev *exchangev1.MarketEvent) (bool, error) {
		m := ev.GetMarkPrice()
		if m == nil {
			return false, nil
		}
		if _, err := positive("mark_price", m.GetMarkPrice()); err != nil {
			return false, err
		}
		if err := errors.Join(optional("index_price", m.GetIndexPrice()), optional("funding_rate", m.GetFundingRate())); err != nil {
			return false, err
		}
		got++
		return got >= 2, nil
	})
	if err != nil {
		return fmt.Errorf("after %d mark prices: %w", got, err)
	}
	return nil
}
