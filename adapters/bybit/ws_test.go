package bybit_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/exhub/exhub/adapters/bybit"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdktest"
)

// fakeBybit serves instruments-info from the fixtures and a scripted public WebSocket: each accepted connection is
// handed to the test, and every frame the client sends arrives on frames.
type fakeBybit struct {
	ts     *httptest.Server
	conns  chan *websocket.Conn
	frames chan map[string]any
}

func newFakeBybit(t *testing.T) *fakeBybit {
	f := &fakeBybit{conns: make(chan *websocket.Conn, 4), frames: make(chan map[string]any, 256)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v5/market/instruments-info", func(w http.ResponseWriter, r *http.Request) {
		b, err := os.ReadFile(filepath.Join("testdata", "instruments_"+r.URL.Query().Get("category")+".json"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		// The fixture names a next page; this fake has one page only.
		_, _ = w.Write([]byte(strings.Replace(string(b), "first%3DETHUSDT%26last%3DDOGEUSDT", "", 1)))
	})
	mux.HandleFunc("GET /ws", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		f.conns <- c
		for {
			_, b, err := c.Read(r.Context())
			if err != nil {
				return
			}
			var m map[string]any
			if json.Unmarshal(b, &m) == nil {
				if m["op"] == "ping" {
					// Bybit answers every ping: without it the client drops a connection silent for two ping
					// intervals, which a loaded machine reaches between the test's pushes.
					_ = c.Write(r.Context(), websocket.MessageText, []byte(`{"success":true,"ret_msg":"pong","conn_id":"fake","op":"ping"}`))
				}
				select {
				case f.frames <- m:
				default:
				}
			}
		}
	})
	f.ts = httptest.NewServer(mux)
	t.Cleanup(f.ts.Close)
	return f
}

func push(t *testing.T, c *websocket.Conn, msg string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		t.Fatal(err)
	}
}

// waitFrame waits for a client frame with the op (and a topic among its args when topic is set); pings are skipped
// unless asked for.
func (f *fakeBybit) waitFrame(t *testing.T, op, topic string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case m := <-f.frames:
			if m["op"] != op {
				continue
			}
			if topic == "" {
				return
			}
			args, _ := m["args"].([]any)
			for _, a := range args {
				if a == topic {
					return
				}
			}
		case <-deadline:
			t.Fatalf("no %s %s from the client", op, topic)
		}
	}
}

type eventStream struct {
	t  *testing.T
	ch chan *exchangev1.MarketEvent
}

// next waits for the next event that is not a CONNECTED or SUBSCRIBED status.
func (e *eventStream) next() *exchangev1.MarketEvent {
	e.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-e.ch:
			if st := ev.GetStatus(); st != nil && (st.GetState() == exchangev1.StreamStatus_STATE_CONNECTED || st.GetState() == exchangev1.StreamStatus_STATE_SUBSCRIBED) {
				continue
			}
			return ev
		case <-deadline:
			e.t.Fatal("no market event")
		}
	}
}

func TestStreamBookTickerPingReconnect(t *testing.T) {
	f := newFakeBybit(t)
	srv := bybit.New(bybit.Options{})
	defer srv.Close()
	c, _, err := sdktest.ServeInProcess(srv)
	if err != nil {
		t.Fatal(err)
	}
	ws := "ws" + strings.TrimPrefix(f.ts.URL, "http") + "/ws"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := c.Configure(ctx, &exchangev1.ConfigureRequest{Settings: map[string]string{"rest_url": f.ts.URL,
		"ws_spot_url": ws, "ws_linear_url": ws, "ws_ping_interval": "1s", "reconnect_min": "10ms", "reconnect_max": "50ms"}}); err != nil {
		t.Fatal(err)
	}
	stream, err := c.StreamMarket(ctx)
	if err != nil {
		t.Fatal(err)
	}
	events := &eventStream{t: t, ch: make(chan *exchangev1.MarketEvent, 256)}
	go func() {
		for {
			ev, err := stream.Recv()
			if err != nil {
				return
			}
			events.ch <- ev
		}
	}()
	book := &exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_BOOK, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: "ETHUSDT", Depth: 50}
	ticker := &exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_TICKER, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: "ETHUSDT"}
	if err := stream.Send(&exchangev1.StreamMarketRequest{Op: exchangev1.StreamMarketRequest_OP_SUBSCRIBE,
		Subscriptions: []*exchangev1.Subscription{book, ticker}}); err != nil {
		t.Fatal(err)
	}
	conn := <-f.conns
	f.waitFrame(t, "subscribe", "orderbook.50.ETHUSDT")
	f.waitFrame(t, "ping", "") // every ws_ping_interval, as Bybit asks

	book1 := `{"topic":"orderbook.50.ETHUSDT","type":"snapshot","ts":1,"data":{"s":"ETHUSDT","b":[["100","1"],["99","2"]],"a":[["101","1"]],"u":10,"seq":500}}`
	push(t, conn, book1)
	ev := events.next()
	if s := ev.GetBookSnapshot(); s == nil || len(s.GetBids()) != 2 || s.GetSequence() != 1 {
		t.Fatalf("snapshot: %v", ev)
	}
	push(t, conn, `{"topic":"orderbook.50.ETHUSDT","type":"delta","ts":2,"data":{"s":"ETHUSDT","b":[["100","0"]],"a":[],"u":11,"seq":501}}`)
	ev = events.next()
	if d := ev.GetBookDelta(); d == nil || d.GetSequence() != 2 || d.GetPrevSequence() != 1 || d.GetBids()[0].GetQty() != "0" {
		t.Fatalf("delta: %v", ev)
	}
	// A duplicate is dropped; a gap resyncs: RESYNCED, then the topic is asked again.
	push(t, conn, `{"topic":"orderbook.50.ETHUSDT","type":"delta","ts":3,"data":{"s":"ETHUSDT","b":[["98","5"]],"a":[],"u":11,"seq":501}}`)
	push(t, conn, `{"topic":"orderbook.50.ETHUSDT","type":"delta","ts":4,"data":{"s":"ETHUSDT","b":[["97","5"]],"a":[],"u":13,"seq":503}}`)
	ev = events.next()
	if st := ev.GetStatus(); st == nil || st.GetState() != exchangev1.StreamStatus_STATE_RESYNCED || ev.GetSubscription().GetChannel() != exchangev1.Channel_CHANNEL_BOOK {
		t.Fatalf("want RESYNCED after the gap (the duplicate dropped), got %v", ev)
	}
	f.waitFrame(t, "unsubscribe", "orderbook.50.ETHUSDT")
	f.waitFrame(t, "subscribe", "orderbook.50.ETHUSDT")
	// A delta before the new snapshot is ignored; the snapshot restarts the book with the next sequence.
	push(t, conn, `{"topic":"orderbook.50.ETHUSDT","type":"delta","ts":5,"data":{"s":"ETHUSDT","b":[["96","5"]],"a":[],"u":14,"seq":504}}`)
	push(t, conn, `{"topic":"orderbook.50.ETHUSDT","type":"snapshot","ts":6,"data":{"s":"ETHUSDT","b":[["95","1"]],"a":[["96","1"]],"u":40,"seq":600}}`)
	ev = events.next()
	if s := ev.GetBookSnapshot(); s == nil || s.GetSequence() != 3 || s.GetBids()[0].GetPrice() != "95" {
		t.Fatalf("snapshot after resync: %v", ev)
	}
	// A snapshot mid-stream (no gap) replaces the book too.
	push(t, conn, `{"topic":"orderbook.50.ETHUSDT","type":"snapshot","ts":7,"data":{"s":"ETHUSDT","b":[["94","1"]],"a":[["95.5","2"]],"u":41,"seq":601}}`)
	ev = events.next()
	if s := ev.GetBookSnapshot(); s == nil || s.GetSequence() != 4 || s.GetBids()[0].GetPrice() != "94" || len(s.GetBids()) != 1 {
		t.Fatalf("mid-stream snapshot: %v", ev)
	}

	// Tickers: a snapshot, then a delta merged field by field.
	push(t, conn, `{"topic":"tickers.ETHUSDT","type":"snapshot","ts":10,"cs":1,"data":{"symbol":"ETHUSDT","lastPrice":"100","markPrice":"100.1","indexPrice":"100.2","prevPrice24h":"90","price24hPcnt":"0.111111","volume24h":"5","turnover24h":"500","fundingRate":"0.0001","nextFundingTime":"28800000","bid1Price":"99.9","bid1Size":"1","ask1Price":"100.1","ask1Size":"2"}}`)
	ev = events.next()
	if tk := ev.GetTicker(); tk == nil || tk.GetLast() != "100" || tk.GetBid() != "99.9" {
		t.Fatalf("ticker snapshot: %v", ev)
	}
	push(t, conn, `{"topic":"tickers.ETHUSDT","type":"delta","ts":11,"cs":2,"data":{"symbol":"ETHUSDT","lastPrice":"100.5","bid1Price":"100.4"}}`)
	ev = events.next()
	if tk := ev.GetTicker(); tk == nil || tk.GetLast() != "100.5" || tk.GetBid() != "100.4" || tk.GetAsk() != "100.1" || tk.GetMarkPrice() != "100.1" || tk.GetVolume_24H() != "5" {
		t.Fatalf("merged ticker: %v", ev)
	}

	// The server drops the connection: RECONNECTING, a new connection resubscribes both topics, RESYNCED.
	conn.CloseNow()
	ev = events.next()
	if st := ev.GetStatus(); st == nil || st.GetState() != exchangev1.StreamStatus_STATE_RECONNECTING {
		t.Fatalf("want RECONNECTING, got %v", ev)
	}
	conn = <-f.conns
	f.waitFrame(t, "subscribe", "tickers.ETHUSDT")
	ev = events.next()
	if st := ev.GetStatus(); st == nil || st.GetState() != exchangev1.StreamStatus_STATE_RESYNCED {
		t.Fatalf("want RESYNCED, got %v", ev)
	}
	// A delta before the new snapshot is not merged into the old row.
	push(t, conn, `{"topic":"tickers.ETHUSDT","type":"delta","ts":12,"cs":3,"data":{"symbol":"ETHUSDT","lastPrice":"101"}}`)
	push(t, conn, book1)
	ev = events.next()
	if s := ev.GetBookSnapshot(); s == nil || s.GetSequence() != 5 {
		t.Fatalf("snapshot after reconnect (the ticker delta before any snapshot dropped): %v", ev)
	}
	// A refused subscription is an ERROR status.
	push(t, conn, `{"success":false,"ret_msg":"Invalid topic: tickers.NOPE","conn_id":"c1","op":"subscribe"}`)
	ev = events.next()
	if st := ev.GetStatus(); st == nil || st.GetState() != exchangev1.StreamStatus_STATE_ERROR || !strings.Contains(st.GetMessage(), "Invalid topic") {
		t.Fatalf("want ERROR, got %v", ev)
	}
}

// TestStreamSharedTickerTopic: CHANNEL_TICKER and CHANNEL_MARK_PRICE of a perpetual share the tickers topic;
// dropping one keeps the topic for the other, and mark updates come only when mark, index or funding change.
func TestStreamSharedTickerTopic(t *testing.T) {
	f := newFakeBybit(t)
	srv := bybit.New(bybit.Options{})
	defer srv.Close()
	c, _, err := sdktest.ServeInProcess(srv)
	if err != nil {
		t.Fatal(err)
	}
	ws := "ws" + strings.TrimPrefix(f.ts.URL, "http") + "/ws"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := c.Configure(ctx, &exchangev1.ConfigureRequest{Settings: map[string]string{"rest_url": f.ts.URL,
		"ws_spot_url": ws, "ws_linear_url": ws}}); err != nil {
		t.Fatal(err)
	}
	stream, err := c.StreamMarket(ctx)
	if err != nil {
		t.Fatal(err)
	}
	events := &eventStream{t: t, ch: make(chan *exchangev1.MarketEvent, 256)}
	go func() {
		for {
			ev, err := stream.Recv()
			if err != nil {
				return
			}
			events.ch <- ev
		}
	}()
	ticker := &exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_TICKER, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: "ETHUSDT"}
	mark := &exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_MARK_PRICE, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: "ETHUSDT"}
	if err := stream.Send(&exchangev1.StreamMarketRequest{Op: exchangev1.StreamMarketRequest_OP_SUBSCRIBE,
		Subscriptions: []*exchangev1.Subscription{ticker, mark}}); err != nil {
		t.Fatal(err)
	}
	conn := <-f.conns
	f.waitFrame(t, "subscribe", "tickers.ETHUSDT")
	push(t, conn, `{"topic":"tickers.ETHUSDT","type":"snapshot","ts":10,"cs":1,"data":{"symbol":"ETHUSDT","lastPrice":"100","markPrice":"100.1","indexPrice":"100.2","fundingRate":"0.0001","nextFundingTime":"28800000"}}`)
	got := map[exchangev1.Channel]int{}
	for range 2 {
		ev := events.next()
		got[ev.GetSubscription().GetChannel()]++
		if m := ev.GetMarkPrice(); m != nil && (m.GetMarkPrice() != "100.1" || m.GetIndexPrice() != "100.2" || m.GetFundingRate() != "0.0001" || m.GetNextFundingTime() != 28800000) {
			t.Fatalf("mark %v", m)
		}
	}
	if got[exchangev1.Channel_CHANNEL_TICKER] != 1 || got[exchangev1.Channel_CHANNEL_MARK_PRICE] != 1 {
		t.Fatalf("events by channel %v", got)
	}
	if err := stream.Send(&exchangev1.StreamMarketRequest{Op: exchangev1.StreamMarketRequest_OP_UNSUBSCRIBE,
		Subscriptions: []*exchangev1.Subscription{ticker}}); err != nil {
		t.Fatal(err)
	}
	if ev := events.next(); ev.GetStatus().GetState() != exchangev1.StreamStatus_STATE_UNSUBSCRIBED {
		t.Fatalf("want UNSUBSCRIBED, got %v", ev)
	}
	// A last-price change alone gives the mark subscription nothing; a mark change does.
	push(t, conn, `{"topic":"tickers.ETHUSDT","type":"delta","ts":11,"cs":2,"data":{"symbol":"ETHUSDT","lastPrice":"101"}}`)
	push(t, conn, `{"topic":"tickers.ETHUSDT","type":"delta","ts":12,"cs":3,"data":{"symbol":"ETHUSDT","markPrice":"100.7"}}`)
	ev := events.next()
	if m := ev.GetMarkPrice(); m == nil || m.GetMarkPrice() != "100.7" || m.GetIndexPrice() != "100.2" || ev.GetTime() != 12 {
		t.Fatalf("mark after the delta: %v", ev)
	}
	// The client never asked Bybit to drop the topic the mark subscription still uses.
	for {
		select {
		case m := <-f.frames:
			if m["op"] == "unsubscribe" {
				t.Fatalf("unsubscribed a shared topic: %v", m)
			}
			continue
		default:
		}
		break
	}
}
