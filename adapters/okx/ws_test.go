package okx

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdktest"
)

// fakeOKX is a tiny OKX of our own: REST instruments for one swap, and a public WebSocket whose book messages a
// test scripts. Each subscribe to books gets the next script.
type fakeOKX struct {
	t       *testing.T
	mu      sync.Mutex
	scripts [][]string // per books subscription: messages to send
	subs    atomic.Int32
	pings   atomic.Int32
	silent  bool // never answer pings
	conns   atomic.Int32
}

func bookMsg(action string, bids, asks [][]string, seq, prev int64, checksum int32) string {
	m := map[string]any{"arg": map[string]string{"channel": "books", "instId": "T-USDT-SWAP"}, "action": action,
		"data": []map[string]any{{"bids": bids, "asks": asks, "ts": "1767225600000", "checksum": checksum, "seqId": seq, "prevSeqId": prev}}}
	b, _ := json.Marshal(m)
	return string(b)
}

func crcOf(s string) int32 { return int32(crc32.ChecksumIEEE([]byte(s))) }

func (f *fakeOKX) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v5/public/instruments", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"code":"0","msg":"","data":[{"instType":"SWAP","instId":"T-USDT-SWAP","instFamily":"T-USDT","settleCcy":"USDT",
			"ctVal":"0.1","ctMult":"1","ctValCcy":"T","ctType":"linear","tickSz":"0.1","lotSz":"1","minSz":"1","maxLmtSz":"1000","maxMktSz":"100","lever":"50","listTime":"1","state":"live"}]}`)
	})
	mux.HandleFunc("/ws/v5/public", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		f.conns.Add(1)
		ctx := r.Context()
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			if string(data) == "ping" {
				f.pings.Add(1)
				if !f.silent {
					_ = c.Write(ctx, websocket.MessageText, []byte("pong"))
				}
				continue
			}
			var req struct {
				Op   string  `json:"op"`
				Args []wsArg `json:"args"`
			}
			if json.Unmarshal(data, &req) != nil || req.Op != "subscribe" {
				continue
			}
			for _, a := range req.Args {
				ack, _ := json.Marshal(map[string]any{"event": "subscribe", "arg": a, "connId": "x"})
				_ = c.Write(ctx, websocket.MessageText, ack)
				if a["channel"] != "books" {
					continue
				}
				n := int(f.subs.Add(1)) - 1
				f.mu.Lock()
				var script []string
				if n < len(f.scripts) {
					script = f.scripts[n]
				}
				f.mu.Unlock()
				for _, m := range script {
					_ = c.Write(ctx, websocket.MessageText, []byte(m))
				}
			}
		}
	})
	return mux
}

type fakeRig struct {
	c   exchangev1.ExchangeClient
	srv *Server
}

func startFake(t *testing.T, f *fakeOKX, extra map[string]string) exchangev1.ExchangeClient {
	t.Helper()
	return startFakeRig(t, f, extra).c
}

func startFakeRig(t *testing.T, f *fakeOKX, extra map[string]string) fakeRig {
	t.Helper()
	ts := httptest.NewServer(f.handler())
	t.Cleanup(ts.Close)
	srv := New(Options{Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	t.Cleanup(srv.Close)
	c, stop, err := sdktest.ServeInProcess(srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	ws := "ws" + strings.TrimPrefix(ts.URL, "http") + "/ws/v5/public"
	settings := map[string]string{"rest_url": ts.URL, "ws_public_url": ws, "ws_business_url": ws, "ws_private_url": ws,
		"reconnect_min": "20ms", "reconnect_max": "100ms"}
	for k, v := range extra {
		settings[k] = v
	}
	if _, err := c.Configure(context.Background(), &exchangev1.ConfigureRequest{Settings: settings}); err != nil {
		t.Fatal(err)
	}
	return fakeRig{c: c, srv: srv}
}

// collect subscribes to the T-USDT-SWAP book and returns events until n snapshots arrived.
func collect(t *testing.T, c exchangev1.ExchangeClient, snapshots int) []*exchangev1.MarketEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // generous: a bound, not a budget
	defer cancel()
	st, err := c.StreamMarket(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sub := &exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_BOOK, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: "T-USDT-SWAP"}
	if err := st.Send(&exchangev1.StreamMarketRequest{Op: exchangev1.StreamMarketRequest_OP_SUBSCRIBE, Subscriptions: []*exchangev1.Subscription{sub}}); err != nil {
		t.Fatal(err)
	}
	var evs []*exchangev1.MarketEvent
	for n := 0; n < snapshots; {
		ev, err := st.Recv()
		if err != nil {
			t.Fatalf("after %d events: %v", len(evs), err)
		}
		evs = append(evs, ev)
		if ev.GetBookSnapshot() != nil {
			n++
		}
	}
	return evs
}

var (
	snapBids = [][]string{{"100.1", "5", "0", "1"}, {"100", "3", "0", "1"}}
	snapAsks = [][]string{{"100.2", "4", "0", "1"}}
	snapSum  = crcOf("100.1:5:100.2:4:100:3")
	// An update changing the best bid to 7 contracts: the checksum OKX would send, and a wrong one.
	updBids = [][]string{{"100.1", "7", "0", "1"}}
	updSum  = crcOf("100.1:7:100.2:4:100:3")
)

func states(evs []*exchangev1.MarketEvent) string {
	var b strings.Builder
	for _, ev := range evs {
		switch {
		case ev.GetBookSnapshot() != nil:
			fmt.Fprintf(&b, "S%d ", ev.GetBookSnapshot().GetSequence())
		case ev.GetBookDelta() != nil:
			fmt.Fprintf(&b, "D%d/%d ", ev.GetBookDelta().GetSequence(), ev.GetBookDelta().GetPrevSequence())
		case ev.GetStatus() != nil:
			b.WriteString(strings.TrimPrefix(ev.GetStatus().GetState().String(), "STATE_") + " ")
		}
	}
	return strings.TrimSpace(b.String())
}

func TestBookChecksumMismatchResyncs(t *testing.T) {
	f := &fakeOKX{t: t, scripts: [][]string{
		{bookMsg("snapshot", snapBids, snapAsks, 10, -1, snapSum), bookMsg("update", updBids, nil, 11, 10, updSum),
			bookMsg("update", [][]string{{"100", "0", "0", "0"}}, nil, 12, 11, 12345)}, // wrong checksum
		{bookMsg("snapshot", snapBids, snapAsks, 20, -1, snapSum)},
	}}
	c := startFake(t, f, nil)
	evs := collect(t, c, 2)
	got := states(evs)
	if want := "SUBSCRIBED CONNECTED S1 D2/1 RESYNCED S3"; got != want && got != "CONNECTED SUBSCRIBED S1 D2/1 RESYNCED S3" {
		t.Fatalf("events %q, want %q", got, want)
	}
	d := evs[3].GetBookDelta()
	if d == nil || d.GetBids()[0].GetQty() != "0.7" {
		t.Fatalf("delta not in base units: %v", evs[3])
	}
}

func TestBookSequenceGapResyncs(t *testing.T) {
	f := &fakeOKX{t: t, scripts: [][]string{
		{bookMsg("snapshot", snapBids, snapAsks, 10, -1, snapSum), bookMsg("update", updBids, nil, 13, 12, updSum)}, // prev 12 != 10
		{bookMsg("snapshot", snapBids, snapAsks, 30, -1, snapSum), bookMsg("update", updBids, nil, 31, 30, updSum)},
	}}
	c := startFake(t, f, nil)
	evs := collect(t, c, 2)
	if got := states(evs); !strings.HasSuffix(got, "S1 RESYNCED S2") {
		t.Fatalf("events %q", got)
	}
	if f.subs.Load() != 2 {
		t.Fatalf("%d book subscriptions, want a resubscribe", f.subs.Load())
	}
}

func TestSnapshotWithBadChecksumIsRefetched(t *testing.T) {
	f := &fakeOKX{t: t, scripts: [][]string{
		{bookMsg("snapshot", snapBids, snapAsks, 10, -1, snapSum+1)},
		{bookMsg("snapshot", snapBids, snapAsks, 11, -1, snapSum)},
	}}
	c := startFake(t, f, nil)
	evs := collect(t, c, 1)
	if got := states(evs); !strings.HasSuffix(got, "RESYNCED S1") {
		t.Fatalf("events %q", got)
	}
}

// A silent connection is pinged after the idle interval, then dropped and re-established with the subscription.
func TestIdlePingAndReconnect(t *testing.T) {
	f := &fakeOKX{t: t, silent: true, scripts: [][]string{
		{bookMsg("snapshot", snapBids, snapAsks, 10, -1, snapSum)},
		{bookMsg("snapshot", snapBids, snapAsks, 40, -1, snapSum)},
	}}
	c := startFake(t, f, map[string]string{"ws_ping_interval": "150ms"})
	evs := collect(t, c, 2)
	got := states(evs)
	if !strings.Contains(got, "S1 RECONNECTING RESYNCED S2") {
		t.Fatalf("events %q", got)
	}
	// The silent connection was dropped only after a ping; the fake reads that ping on its own goroutine, which
	// may run after the new connection's snapshot reached us: wait for it under a generous bound.
	deadline := time.Now().Add(10 * time.Second)
	for f.pings.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if f.pings.Load() == 0 || f.conns.Load() < 2 {
		t.Fatalf("pings %d connections %d", f.pings.Load(), f.conns.Load())
	}
}

// TestCloseEndsStreams: Close on the server ends a running StreamMarket even though the host keeps it open.
func TestCloseEndsStreams(t *testing.T) {
	f := &fakeOKX{t: t, scripts: [][]string{{bookMsg("snapshot", snapBids, snapAsks, 10, -1, snapSum)}}}
	ts := startFakeRig(t, f, nil)
	st, err := ts.c.StreamMarket(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	sub := &exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_BOOK, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: "T-USDT-SWAP"}
	if err := st.Send(&exchangev1.StreamMarketRequest{Op: exchangev1.StreamMarketRequest_OP_SUBSCRIBE, Subscriptions: []*exchangev1.Subscription{sub}}); err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if ev.GetBookSnapshot() != nil {
			break
		}
	}
	done := make(chan error, 1)
	go func() {
		for {
			if _, err := st.Recv(); err != nil {
				done <- err
				return
			}
		}
	}()
	ts.srv.Close()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("StreamMarket still running after Close")
	}
}
