package accountstream_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/bff/internal/accountstream"
	"github.com/exhub/exhub/bff/internal/stream"
)

// chain follows one private subscription of a client and checks its promises: a snapshot first, each delta's
// prevSeq is the previous snapshot's or delta's seq, and after status resyncing the next data message is a
// snapshot.
type chain struct {
	t        *testing.T
	channel  string
	synced   bool
	last     int64
	resyncs  []string
	snapshot map[string]any
}

// see checks one message of the chain's channel (others are ignored) and reports whether it was one.
func (ch *chain) see(m map[string]any) bool {
	ch.t.Helper()
	if m["channel"] != ch.channel || m["type"] == "subscribed" {
		return false
	}
	seq, _ := m["seq"].(float64)
	switch m["type"] {
	case "snapshot":
		ch.synced, ch.last, ch.snapshot = true, int64(seq), m
	case "status":
		if m["state"] == "resyncing" {
			ch.synced = false
			ch.resyncs = append(ch.resyncs, fmt.Sprint(m["reason"]))
		}
	case "error":
		ch.t.Fatalf("error on %s: %v", ch.channel, m)
	default:
		if !ch.synced {
			ch.t.Fatalf("%s delta before its snapshot: %v", ch.channel, m)
		}
		if prev, _ := m["prevSeq"].(float64); int64(prev) != ch.last || int64(seq) <= ch.last {
			ch.t.Fatalf("%s delta seq %v prevSeq %v after seq %d: a message was lost or reordered", ch.channel, m["seq"], m["prevSeq"], ch.last)
		}
		ch.last = int64(seq)
	}
	return true
}

func field(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}

// fills collects, per client order id, the quantity filled on a subscription, and the order of first fills.
type fills struct {
	qty   map[string]decimal.Decimal
	order []string
}

func (f *fills) add(m map[string]any) {
	if m["type"] != "fill" {
		return
	}
	id, _ := field(m, "fill", "clientOrderId").(string)
	q, err := decimal.NewFromString(fmt.Sprint(field(m, "fill", "qty")))
	if err != nil {
		panic(err)
	}
	if _, ok := f.qty[id]; !ok {
		f.order = append(f.order, id)
	}
	f.qty[id] = f.qty[id].Add(q)
}

func TestPrivateChannelsEndToEnd(t *testing.T) {
	h := startHost(t)
	accts := newAccounts()
	accts.add("member-a", "reference", "acct-a")
	accts.add("member-b", "reference", "acct-b")
	accts.add("member-c", "other", "acct-c")
	id := startIdentity(t)
	id.login("cookie-a", "member-a")
	id.login("cookie-b", "member-b")
	id.login("cookie-c", "member-c")
	m, _ := startManager(t, accountstream.Options{Source: accountstream.HostSource{Host: h}, Accounts: accts})
	srv := startGateway(t, h, m, id.checker(t), stream.Config{SessionRecheck: 200 * time.Millisecond})

	a := dial(t, srv, "cookie-a")
	a.send(privSub("1", "account", "reference"))
	a.send(privSub("2", "fills", "reference"))
	acct := &chain{t: t, channel: "account"}
	fl := &chain{t: t, channel: "fills"}
	for !acct.synced || !fl.synced {
		msg := a.next()
		if msg["type"] == "subscribed" {
			continue
		}
		if !acct.see(msg) && !fl.see(msg) {
			t.Fatalf("unexpected %v", msg)
		}
	}
	if bs, _ := acct.snapshot["balances"].([]any); len(bs) == 0 {
		t.Fatalf("account snapshot without balances: %v", acct.snapshot)
	}
	if _, ok := fl.snapshot["orders"]; ok {
		t.Fatalf("fills snapshot carries orders: %v", fl.snapshot)
	}

	// Orders placed through the plugin: each shows as an order event, then its fills, on the account channel;
	// every fill on the fills channel too, none missing (the filled quantity adds up).
	const n = 12
	placed := make([]string, n)
	for i := range n {
		placed[i] = fmt.Sprintf("a-%d", i)
		if o := placeMarket(t, h, "acct-a", placed[i], "0.001"); o.GetClientOrderId() != placed[i] {
			t.Fatalf("placed %v", o)
		}
	}
	onAcct := &fills{qty: map[string]decimal.Decimal{}}
	onFills := &fills{qty: map[string]decimal.Decimal{}}
	seenOrder := map[string]bool{}
	want := decimal.RequireFromString("0.001")
	done := func() bool {
		for _, id := range placed {
			if !onAcct.qty[id].Equal(want) || !onFills.qty[id].Equal(want) {
				return false
			}
		}
		return true
	}
	for !done() {
		msg := a.next()
		switch {
		case acct.see(msg):
			if msg["type"] == "order" {
				seenOrder[field(msg, "order", "clientOrderId").(string)] = true
			}
			if msg["type"] == "fill" {
				if id := field(msg, "fill", "clientOrderId").(string); !seenOrder[id] {
					t.Fatalf("fill of %s before its order event", id)
				}
			}
			onAcct.add(msg)
		case fl.see(msg):
			onFills.add(msg)
		}
	}
	for i, id := range onAcct.order {
		if id != placed[i] || onFills.order[i] != id {
			t.Fatalf("fills in order %v / %v, want %v", onAcct.order, onFills.order, placed)
		}
	}
	if len(acct.resyncs)+len(fl.resyncs) != 0 {
		t.Fatalf("resyncs without a cause: %v %v", acct.resyncs, fl.resyncs)
	}

	// Member B names the same exchange and gets their own account: never member A's orders.
	b := dial(t, srv, "cookie-b")
	b.send(privSub("1", "account", "reference"))
	bc := &chain{t: t, channel: "account"}
	b.until(func(m map[string]any) bool { bc.see(m); return bc.synced })
	if strings.Contains(fmt.Sprint(bc.snapshot), "clientOrderId:a-") {
		t.Fatalf("member B's snapshot shows member A's orders: %v", bc.snapshot)
	}
	placeMarket(t, h, "acct-a", "a-late", "0.001")
	placeMarket(t, h, "acct-b", "b-1", "0.001")
	b.until(func(m map[string]any) bool {
		bc.see(m)
		if s := fmt.Sprint(m); strings.Contains(s, "a-late") {
			t.Fatalf("member B sees member A's order: %v", m)
		}
		return m["type"] == "fill" && field(m, "fill", "clientOrderId") == "b-1"
	})
	// The ordinary subscribe op cannot name another member's account: there is no such field.
	b.send(map[string]any{"op": "subscribe", "id": "x", "channel": "orders", "exchange": "reference", "account": "acct-a", "member": "member-a"})
	b.until(func(m map[string]any) bool {
		bc.see(m)
		if m["type"] == "snapshot" && m["channel"] == "orders" && strings.Contains(fmt.Sprint(m), "clientOrderId:a-") {
			t.Fatalf("member B subscribed to member A's orders: %v", m)
		}
		return m["type"] == "snapshot" && m["channel"] == "orders"
	})

	// No account on the exchange: 404. No session: 401, and the market channels still work.
	c := dial(t, srv, "cookie-c")
	c.send(privSub("1", "orders", "reference"))
	if e := c.until(func(m map[string]any) bool { return m["type"] == "error" }); field(e, "error", "status") != float64(404) {
		t.Fatalf("subscribe without an account: %v", e)
	}
	anon := dial(t, srv, "")
	anon.send(privSub("1", "orders", "reference"))
	if e := anon.until(func(m map[string]any) bool { return m["type"] == "error" }); field(e, "error", "status") != float64(401) {
		t.Fatalf("private subscribe without a session: %v", e)
	}
	anon.send(map[string]any{"op": "subscribe", "id": "t", "channel": "ticker", "exchange": "reference", "marketType": "SPOT", "symbol": "BTCUSDT"})
	anon.until(func(m map[string]any) bool { return m["type"] == "ticker" })
	forged := dial(t, srv, "not-a-session")
	forged.send(privSub("1", "fills", "reference"))
	if e := forged.until(func(m map[string]any) bool { return m["type"] == "error" }); field(e, "error", "status") != float64(401) {
		t.Fatalf("private subscribe with an unknown session: %v", e)
	}

	// Logout: at the next check the private subscriptions end with an error each; nothing more arrives on them.
	id.logout("cookie-a")
	ended := map[string]bool{}
	a.until(func(m map[string]any) bool {
		if m["type"] == "error" {
			if field(m, "error", "status") != float64(401) {
				t.Fatalf("session end: %v", m)
			}
			ended[fmt.Sprint(m["channel"])] = true
		}
		return ended["account"] && ended["fills"]
	})
	placeMarket(t, h, "acct-a", "a-after-logout", "0.001")
	a.send(map[string]any{"op": "ping", "id": "p"})
	a.until(func(m map[string]any) bool {
		if strings.Contains(fmt.Sprint(m), "a-after-logout") {
			t.Fatalf("a private message after the session ended: %v", m)
		}
		return m["type"] == "pong"
	})
	a.send(privSub("3", "orders", "reference"))
	if e := a.until(func(m map[string]any) bool { return m["type"] == "error" }); field(e, "error", "status") != float64(401) {
		t.Fatalf("subscribe after logout: %v", e)
	}
}

// TestPluginRestartResyncs: the plugin dies; the member's subscription gets status resyncing and a snapshot from
// the restarted plugin, then its new events.
func TestPluginRestartResyncs(t *testing.T) {
	h := startHost(t)
	accts := newAccounts()
	accts.add("member-a", "reference", "acct-a")
	id := startIdentity(t)
	id.login("cookie-a", "member-a")
	m, _ := startManager(t, accountstream.Options{Source: accountstream.HostSource{Host: h}, Accounts: accts})
	srv := startGateway(t, h, m, id.checker(t), stream.Config{})
	c := dial(t, srv, "cookie-a")
	c.send(privSub("1", "orders", "reference"))
	ch := &chain{t: t, channel: "orders"}
	c.until(func(m map[string]any) bool { ch.see(m); return ch.synced })
	sup, _ := h.Get("reference")
	pid := sup.Status().Pid
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.until(func(m map[string]any) bool { ch.see(m); return len(ch.resyncs) > 0 && ch.synced })
	if ch.resyncs[0] != "stream_lost" {
		t.Fatalf("resync reasons %v", ch.resyncs)
	}
	waitFor(t, "the restarted plugin", func() bool { st := sup.Status(); return st.Pid != pid && st.Pid != 0 })
	placeMarket(t, h, "acct-a", "after-restart", "0.001")
	c.until(func(m map[string]any) bool {
		ch.see(m)
		return m["type"] == "order" && field(m, "order", "clientOrderId") == "after-restart"
	})
}
