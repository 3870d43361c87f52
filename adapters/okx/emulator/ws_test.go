package emulator

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
)

// live keeps the harness market moving in real time (250 ms of venue time every 10 ms) until the test ends.
func (h *harness) live() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				h.clock.Advance(250 * time.Millisecond)
				h.v.AdvanceTo(h.clock.Now())
			}
		}
	}()
	h.t.Cleanup(func() { cancel(); <-done })
}

type wsClient struct {
	t  *testing.T
	c  *websocket.Conn
	ct context.Context
}

func (h *harness) dial(path string) *wsClient {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a bound for a whole test under load, not a timing check
	h.t.Cleanup(cancel)
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(h.ts.URL, "http")+path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	c.SetReadLimit(1 << 22)
	h.t.Cleanup(func() { _ = c.CloseNow() })
	return &wsClient{t: h.t, c: c, ct: ctx}
}

func (w *wsClient) write(v any) {
	w.t.Helper()
	var b []byte
	if s, ok := v.(string); ok {
		b = []byte(s)
	} else {
		b, _ = json.Marshal(v)
	}
	if err := w.c.Write(w.ct, websocket.MessageText, b); err != nil {
		w.t.Fatal(err)
	}
}

func (w *wsClient) read() []byte {
	w.t.Helper()
	_, b, err := w.c.Read(w.ct)
	if err != nil {
		w.t.Fatalf("read: %v", err)
	}
	return b
}

func (w *wsClient) readObj() map[string]any {
	w.t.Helper()
	var m map[string]any
	b := w.read()
	if err := json.Unmarshal(b, &m); err != nil {
		w.t.Fatalf("%s: %v", b, err)
	}
	return m
}

// until reads frames until one satisfies ok, returning it raw.
func (w *wsClient) until(ok func(map[string]any) bool) []byte {
	w.t.Helper()
	for {
		b := w.read()
		var m map[string]any
		if json.Unmarshal(b, &m) == nil && ok(m) {
			return b
		}
	}
}

func sub(args ...map[string]string) map[string]any {
	return map[string]any{"op": "subscribe", "args": args}
}

func isPush(channel string) func(map[string]any) bool {
	return func(m map[string]any) bool {
		a, _ := m["arg"].(map[string]any)
		return a != nil && a["channel"] == channel && m["data"] != nil
	}
}

// testChecksum is written independently of the server's: OKX's CRC32 over up to 25 bid/ask pairs.
func testChecksum(bids, asks [][]string) int32 {
	var b strings.Builder
	for k := range 25 {
		if k < len(bids) {
			fmt.Fprintf(&b, "%s:%s:", bids[k][0], bids[k][1])
		}
		if k < len(asks) {
			fmt.Fprintf(&b, "%s:%s:", asks[k][0], asks[k][1])
		}
	}
	s := strings.TrimSuffix(b.String(), ":")
	return int32(crc32.ChecksumIEEE([]byte(s)))
}

func TestChecksumKnownValue(t *testing.T) {
	t.Parallel()
	// A worked example: the string "3366.1:7:3366.8:9:3366:6:3368:8" (two levels each side).
	bids := [][]string{{"3366.1", "7"}, {"3366", "6"}}
	asks := [][]string{{"3366.8", "9"}, {"3368", "8"}}
	want := int32(crc32.ChecksumIEEE([]byte("3366.1:7:3366.8:9:3366:6:3368:8")))
	if got := Checksum(bids, asks); got != want || testChecksum(bids, asks) != want {
		t.Fatalf("checksum %d, want %d", got, want)
	}
	// Uneven sides: the longer side's extra levels follow alone.
	bids = append(bids, []string{"3365", "1"})
	want = int32(crc32.ChecksumIEEE([]byte("3366.1:7:3366.8:9:3366:6:3368:8:3365:1")))
	if got := Checksum(bids, asks); got != want {
		t.Fatalf("uneven checksum %d, want %d", got, want)
	}
}

type bookMsg struct {
	Action string `json:"action"`
	Data   []struct {
		Asks      [][]string `json:"asks"`
		Bids      [][]string `json:"bids"`
		Checksum  int32      `json:"checksum"`
		SeqID     int64      `json:"seqId"`
		PrevSeqID int64      `json:"prevSeqId"`
	} `json:"data"`
}

func TestWSBooksSnapshotUpdatesChecksumSeq(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.live()
	w := h.dial("/ws/v5/public")
	arg := map[string]string{"channel": "books", "instId": "BTC-USDT-SWAP"}
	w.write(sub(arg))
	ack := w.readObj()
	if ack["event"] != "subscribe" || ack["connId"] == "" {
		t.Fatalf("ack %v", ack)
	}
	bids, asks := map[string]string{}, map[string]string{}
	apply := func(side map[string]string, rows [][]string) {
		for _, r := range rows {
			if r[1] == "0" {
				delete(side, r[0])
			} else {
				side[r[0]] = r[1]
			}
		}
	}
	top := func(side map[string]string, desc bool) [][]string {
		var ps []string
		for p := range side {
			ps = append(ps, p)
		}
		sort.Slice(ps, func(a, b int) bool {
			x, y := decimal.RequireFromString(ps[a]), decimal.RequireFromString(ps[b])
			if desc {
				return x.GreaterThan(y)
			}
			return x.LessThan(y)
		})
		var out [][]string
		for _, p := range ps {
			out = append(out, []string{p, side[p]})
		}
		return out
	}
	var last int64
	updates := 0
	for updates < 8 {
		raw := w.until(isPush("books"))
		var m bookMsg
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		if last == 0 {
			if m.Action != "snapshot" || m.Data[0].PrevSeqID != -1 || len(m.Data[0].Bids) < 10 {
				t.Fatalf("first push %s", raw[:200])
			}
			checkShape(t, "ws_books", raw)
		} else {
			if m.Action != "update" {
				t.Fatalf("action %q", m.Action)
			}
			if m.Data[0].PrevSeqID != last {
				t.Fatalf("prevSeqId %d, last seqId %d", m.Data[0].PrevSeqID, last)
			}
			updates++
		}
		d := m.Data[0]
		apply(bids, d.Bids)
		apply(asks, d.Asks)
		if d.SeqID <= last {
			t.Fatalf("seqId %d after %d", d.SeqID, last)
		}
		last = d.SeqID
		if cs := testChecksum(top(bids, true), top(asks, false)); cs != d.Checksum {
			t.Fatalf("checksum %d, recomputed %d", d.Checksum, cs)
		}
		b, a := top(bids, true), top(asks, false)
		if decimal.RequireFromString(b[0][0]).GreaterThanOrEqual(decimal.RequireFromString(a[0][0])) {
			t.Fatalf("crossed book %v %v", b[0], a[0])
		}
	}
}

func TestWSPublicChannelsShapes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.live()
	w := h.dial("/ws/v5/public")
	for _, c := range []struct{ channel, inst, shape string }{
		{"tickers", "BTC-USDT", "ws_tickers"},
		{"trades", "BTC-USDT-SWAP", "ws_trades"},
		{"mark-price", "BTC-USDT-SWAP", "ws_mark_price"},
		{"funding-rate", "BTC-USDT-SWAP", "ws_funding_rate"},
		{"books5", "ETH-USDT", "ws_books5"},
	} {
		w.write(sub(map[string]string{"channel": c.channel, "instId": c.inst}))
		raw := w.until(isPush(c.channel))
		checkShape(t, c.shape, raw)
		w.write(map[string]any{"op": "unsubscribe", "args": []map[string]string{{"channel": c.channel, "instId": c.inst}}})
		w.until(func(m map[string]any) bool { return m["event"] == "unsubscribe" })
	}
	// Swap trades carry contracts.
	w.write(sub(map[string]string{"channel": "trades", "instId": "BTC-USDT-SWAP"}))
	var m struct {
		Data []struct {
			Sz string `json:"sz"`
		} `json:"data"`
	}
	_ = json.Unmarshal(w.until(isPush("trades")), &m)
	sz := decimal.RequireFromString(m.Data[0].Sz)
	if !sz.Mul(decimal.NewFromInt(10)).IsInteger() { // a tenth of a contract is the lot
		t.Errorf("swap trade size %s is not in contracts", sz)
	}
}

func TestWSCandlesOnBusinessOnly(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.live()
	p := h.dial("/ws/v5/public")
	p.write(sub(map[string]string{"channel": "candle1m", "instId": "BTC-USDT"}))
	if m := p.readObj(); m["event"] != "error" || m["code"] != "60018" {
		t.Fatalf("public candle subscribe: %v", m)
	}
	b := h.dial("/ws/v5/business")
	b.write(sub(map[string]string{"channel": "candle1Dutc", "instId": "BTC-USDT-SWAP"}))
	raw := b.until(isPush("candle1Dutc"))
	checkShape(t, "ws_candle", raw)
	var m struct {
		Data [][]string `json:"data"`
	}
	_ = json.Unmarshal(raw, &m)
	ts, _ := strconv.ParseInt(m.Data[0][0], 10, 64)
	if ts%dayMs != 0 || m.Data[0][8] != "0" {
		t.Errorf("candle1Dutc row %v", m.Data[0])
	}
}

func TestWSErrorsPingIdleAndDrop(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.IdleTimeout = 400 * time.Millisecond })
	w := h.dial("/ws/v5/public")
	w.write("ping")
	if b := w.read(); string(b) != "pong" {
		t.Fatalf("ping answered %q", b)
	}
	w.write("{nope")
	if m := w.readObj(); m["event"] != "error" || m["code"] != "60012" {
		t.Fatalf("bad json: %v", m)
	}
	w.write(sub(map[string]string{"channel": "tickers", "instId": "NOPE-USDT"}))
	if m := w.readObj(); m["event"] != "error" || m["code"] != "60018" {
		t.Fatalf("bad inst: %v", m)
	}
	// Idle: nothing either way for longer than the timeout closes the connection (the read is bounded by the
	// harness's context, far above the 400 ms timeout).
	if _, _, err := w.c.Read(w.ct); err == nil {
		t.Fatal("idle connection stayed open")
	}
	// Drop hook.
	w2 := h.dial("/ws/v5/business")
	w2.write("ping")
	w2.read()
	if n := h.s.DropConnections(); n < 1 {
		t.Fatalf("dropped %d", n)
	}
	if _, _, err := w2.c.Read(w2.ct); err == nil {
		t.Fatal("connection survived the drop")
	}
}

func TestWSLogin(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	w := h.dial("/ws/v5/private")
	w.write(sub(map[string]string{"channel": "orders", "instType": "ANY"}))
	if m := w.readObj(); m["code"] != "60011" {
		t.Fatalf("subscribe before login: %v", m)
	}
	ts := strconv.FormatInt(h.v.Now()/1000, 10)
	login := func(key, pass, ts, sign string) map[string]any {
		w.write(map[string]any{"op": "login", "args": []map[string]string{{"apiKey": key, "passphrase": pass,
			"timestamp": ts, "sign": sign}}})
		return w.readObj()
	}
	good := WSLoginSign(DemoAPISecret, ts)
	if m := login("nokey", DemoPassphrase, ts, good); m["code"] != "60005" {
		t.Errorf("bad key: %v", m)
	}
	if m := login(DemoAPIKey, "wrong", ts, good); m["code"] != "60024" {
		t.Errorf("bad passphrase: %v", m)
	}
	old := strconv.FormatInt(h.v.Now()/1000-120, 10)
	if m := login(DemoAPIKey, DemoPassphrase, old, WSLoginSign(DemoAPISecret, old)); m["code"] != "60004" {
		t.Errorf("old timestamp: %v", m)
	}
	if m := login(DemoAPIKey, DemoPassphrase, ts, WSLoginSign("other", ts)); m["code"] != "60007" {
		t.Errorf("bad sign: %v", m)
	}
	if m := login(DemoAPIKey, DemoPassphrase, ts, good); m["event"] != "login" || m["code"] != "0" {
		t.Fatalf("login: %v", m)
	}
	w.write(sub(map[string]string{"channel": "orders", "instType": "ANY"}))
	if m := w.readObj(); m["event"] != "subscribe" {
		t.Fatalf("subscribe after login: %v", m)
	}
}

// TestWSAckAfterFeedSubscribed: the subscribe ack goes out once the feed receives the venue's events, so the first
// trade after a client saw the ack reaches it (the feed used to subscribe to the venue after acking).
func TestWSAckAfterFeedSubscribed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	w := h.dial("/ws/v5/public")
	inst, ok := h.s.lookup("BTC-USDT-SWAP")
	if !ok {
		t.Fatal("no BTC-USDT-SWAP")
	}
	arg := map[string]string{"channel": "trades", "instId": "BTC-USDT-SWAP"}
	for round := range 10 {
		w.write(sub(arg))
		w.until(func(m map[string]any) bool { return m["event"] == "subscribe" })
		// Right after the ack: trades on the venue, counted by the test's own venue subscription.
		vctx, cancel := context.WithCancel(context.Background())
		vs := h.v.Subscribe(vctx, venue.Filter{Kinds: []venue.EventKind{venue.EvTrade}, Instruments: []string{inst.v.ID}}, 1<<16)
		var first uint64
		for first == 0 {
			h.step(time.Second)
			h.v.Barrier()
		drain:
			for {
				select {
				case e := <-vs.C:
					if first == 0 {
						first = e.Trade.ID
					}
				default:
					break drain
				}
			}
		}
		cancel()
		// The previous round's feed may still push its last trades (older ids): skip those.
		for {
			var m struct {
				Data []struct {
					TradeID string `json:"tradeId"`
				} `json:"data"`
			}
			if err := json.Unmarshal(w.until(isPush("trades")), &m); err != nil || len(m.Data) == 0 {
				t.Fatalf("round %d: bad trades push: %v", round, err)
			}
			id, err := strconv.ParseUint(m.Data[0].TradeID, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			if id < first {
				continue
			}
			if id != first {
				t.Fatalf("round %d: first pushed trade %d, want the venue's first trade after the ack %d", round, id, first)
			}
			break
		}
		w.write(map[string]any{"op": "unsubscribe", "args": []map[string]string{arg}})
		w.until(func(m map[string]any) bool { return m["event"] == "unsubscribe" })
	}
}
