package stream

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// fakeSource is an in-process exchange "fake" whose market stream the test drives event by event: it answers every
// book subscription with a snapshot (as a plugin does) and sends what the test injects, in order, on the one events
// channel the gateway reads, so a test can break a book at a chosen point.
type fakeSource struct {
	ex *fakeExchange
}

func newFakeSource(symbols ...string) *fakeSource {
	return &fakeSource{ex: &fakeExchange{symbols: symbols, books: map[string]*fakeBook{}}}
}

func (f *fakeSource) Exchange(slug string) (Exchange, bool) {
	if slug != "fake" {
		return nil, false
	}
	return f.ex, true
}

type fakeExchange struct {
	symbols []string

	mu     sync.Mutex
	stream *fakeStream
	books  map[string]*fakeBook // by symbol: the exchange's side of each book
}

// fakeBook is the exchange's book: a best bid and ask one apart, and the sequence of the last event sent.
type fakeBook struct {
	seq        int64
	bid        int64
	snapshots  int // snapshots sent (one per book subscription)
	subscribes int
}

func (e *fakeExchange) Describe() *exchangev1.DescribeResponse {
	return &exchangev1.DescribeResponse{Capabilities: &exchangev1.Capabilities{
		MarketTypes: []exchangev1.MarketType{exchangev1.MarketType_MARKET_TYPE_SPOT}}}
}

func (e *fakeExchange) Instruments(context.Context, exchangev1.MarketType) ([]*exchangev1.Instrument, error) {
	out := make([]*exchangev1.Instrument, len(e.symbols))
	for i, s := range e.symbols {
		out[i] = &exchangev1.Instrument{Symbol: s}
	}
	return out, nil
}

func (e *fakeExchange) StreamMarket(context.Context) MarketStream {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stream = &fakeStream{ex: e, events: make(chan *exchangev1.MarketEvent, 1024)}
	return e.stream
}

type fakeStream struct {
	ex     *fakeExchange
	events chan *exchangev1.MarketEvent
	once   sync.Once
}

func (s *fakeStream) Events() <-chan *exchangev1.MarketEvent { return s.events }

func (s *fakeStream) Subscribe(_ context.Context, subs ...*exchangev1.Subscription) error {
	s.ex.mu.Lock()
	defer s.ex.mu.Unlock()
	for _, sub := range subs {
		if sub.GetChannel() != exchangev1.Channel_CHANNEL_BOOK {
			continue
		}
		b := s.ex.books[sub.GetSymbol()]
		if b == nil {
			b = &fakeBook{seq: 100, bid: 1000}
			s.ex.books[sub.GetSymbol()] = b
		}
		b.subscribes++
		b.snapshots++
		b.seq += 10
		s.events <- &exchangev1.MarketEvent{Subscription: sub, Event: &exchangev1.MarketEvent_BookSnapshot{
			BookSnapshot: &exchangev1.BookUpdate{Sequence: b.seq, Bids: levels(b.bid, -1), Asks: levels(b.bid+1, 1)}}}
	}
	return nil
}

func (s *fakeStream) Unsubscribe(context.Context, ...*exchangev1.Subscription) error { return nil }

func (s *fakeStream) Close() { s.once.Do(func() { close(s.events) }) }

// levels is five levels from p, stepping by dir.
func levels(p, dir int64) []*exchangev1.PriceLevel {
	out := make([]*exchangev1.PriceLevel, 5)
	for i := range out {
		out[i] = &exchangev1.PriceLevel{Price: fmt.Sprint(p + dir*int64(i)), Qty: "1"}
	}
	return out
}

func bookSub(symbol string) *exchangev1.Subscription {
	return &exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_BOOK, MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT,
		Symbol: symbol}
}

// delta sends a well-chained update of symbol's book that changes the best bid's quantity.
func (e *fakeExchange) delta(symbol, qty string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	b := e.books[symbol]
	prev := b.seq
	b.seq++
	e.stream.events <- &exchangev1.MarketEvent{Subscription: bookSub(symbol), Event: &exchangev1.MarketEvent_BookDelta{
		BookDelta: &exchangev1.BookUpdate{PrevSequence: prev, Sequence: b.seq,
			Bids: []*exchangev1.PriceLevel{{Price: fmt.Sprint(b.bid), Qty: qty}}}}}
}

// gap sends an update whose previous sequence is not the last one sent: events were lost.
func (e *fakeExchange) gap(symbol string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	b := e.books[symbol]
	b.seq += 5
	e.stream.events <- &exchangev1.MarketEvent{Subscription: bookSub(symbol), Event: &exchangev1.MarketEvent_BookDelta{
		BookDelta: &exchangev1.BookUpdate{PrevSequence: b.seq - 1, Sequence: b.seq,
			Bids: []*exchangev1.PriceLevel{{Price: fmt.Sprint(b.bid), Qty: "2"}}}}}
}

// cross sends a well-chained update that puts a bid above the best ask: a crossed book.
func (e *fakeExchange) cross(symbol string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	b := e.books[symbol]
	prev := b.seq
	b.seq++
	e.stream.events <- &exchangev1.MarketEvent{Subscription: bookSub(symbol), Event: &exchangev1.MarketEvent_BookDelta{
		BookDelta: &exchangev1.BookUpdate{PrevSequence: prev, Sequence: b.seq,
			Bids: []*exchangev1.PriceLevel{{Price: fmt.Sprint(b.bid + 5), Qty: "1"}}}}}
}

func (e *fakeExchange) subscribes(symbol string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if b := e.books[symbol]; b != nil {
		return b.subscribes
	}
	return 0
}

// startFakeGateway runs a gateway on src behind an HTTP test server, with cfg as given (the origin check included).
func startFakeGateway(t *testing.T, cfg Config, src Source) (*Gateway, *httptest.Server) {
	t.Helper()
	gw := New(Options{Config: cfg, Source: src})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = gw.Run(ctx) }() // owned by the test: ends with cancel
	srv := httptest.NewServer(gw)
	t.Cleanup(func() {
		cancel()
		<-done
		srv.Close()
	})
	waitFor(t, "the gateway to run", func() bool {
		gw.mu.Lock()
		defer gw.mu.Unlock()
		return gw.ctx != nil
	})
	return gw, srv
}

func fakeSub(symbol string, extra ...any) map[string]any {
	m := sub("book", symbol, extra...)
	m["exchange"] = "fake"
	return m
}

func wsURL(srv *httptest.Server) string { return "ws" + strings.TrimPrefix(srv.URL, "http") }
