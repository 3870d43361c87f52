package stream

import (
	"encoding/json"
	"testing"

	"github.com/exhub/exhub/bff/internal/accountstream/feed"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// TestPrivateQueueIsBoundedNeverLossy: a private subscription queues every message in order up to
// MaxPrivatePending; one more is refused (the manager then resets it), and the reset replaces the backlog with
// status resyncing and the snapshot, after which the chain continues from the snapshot's seq.
func TestPrivateQueueIsBoundedNeverLossy(t *testing.T) {
	g := &Gateway{cfg: Config{}.withDefaults()}
	c := &conn{g: g, pending: map[string]*item{}, notify: make(chan struct{}, 1)}
	p := &privSub{c: c, key: "priv|fills|reference", channel: "fills", exchange: "reference",
		kinds: privateChannels["fills"], max: 3}
	snap := func(seq int64, fills ...string) feed.Update {
		s := &feed.Snapshot{}
		for _, id := range fills {
			s.Fills = append(s.Fills, &exchangev1.Fill{TradeId: id})
		}
		return feed.Update{Exchange: "reference", Seq: seq, Kind: feed.KindSnapshot, Snapshot: s}
	}
	fill := func(seq int64, id string) feed.Update {
		return feed.Update{Exchange: "reference", Seq: seq, Kind: feed.KindFill,
			Event: &exchangev1.AccountEvent{Event: &exchangev1.AccountEvent_Fill{Fill: &exchangev1.Fill{TradeId: id}}}}
	}
	order := feed.Update{Exchange: "reference", Seq: 3, Kind: feed.KindOrder,
		Event: &exchangev1.AccountEvent{Event: &exchangev1.AccountEvent_Order{Order: &exchangev1.Order{OrderId: "o"}}}}
	if !p.Offer(snap(1)) || !p.Offer(fill(2, "1")) || !p.Offer(order) || !p.Offer(fill(4, "2")) {
		t.Fatal("refused within the bound (the order is not for this channel)")
	}
	if p.Offer(fill(5, "3")) {
		t.Fatal("accepted past MaxPrivatePending")
	}
	p.Reset([]feed.Update{{Exchange: "reference", Kind: feed.KindResync, Reason: "slow_subscriber"}, snap(5, "1", "2", "3")})
	if !p.Offer(fill(6, "4")) {
		t.Fatal("refused after the reset")
	}
	var got []map[string]any
	for _, it := range c.take(nil) {
		var m map[string]any
		if err := json.Unmarshal(it.bytes(), &m); err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
	}
	want := []struct {
		typ           string
		seq, prevSeq  float64
		state, reason string
	}{{typ: "status", state: "resyncing", reason: "slow_subscriber"}, {typ: "snapshot", seq: 5}, {typ: "fill", seq: 6, prevSeq: 5}}
	if len(got) != len(want) {
		t.Fatalf("queued %v", got)
	}
	for i, w := range want {
		m := got[i]
		if m["type"] != w.typ || m["channel"] != "fills" || m["exchange"] != "reference" {
			t.Fatalf("message %d: %v", i, m)
		}
		if seq, _ := m["seq"].(float64); seq != w.seq {
			t.Fatalf("message %d seq: %v", i, m)
		}
		if prev, _ := m["prevSeq"].(float64); prev != w.prevSeq {
			t.Fatalf("message %d prevSeq: %v", i, m)
		}
		if w.state != "" && (m["state"] != w.state || m["reason"] != w.reason) {
			t.Fatalf("message %d: %v", i, m)
		}
	}
	if fills, _ := got[1]["fills"].([]any); len(fills) != 3 {
		t.Fatalf("snapshot fills %v", got[1])
	}
	if _, ok := got[1]["orders"]; ok {
		t.Fatalf("a fills snapshot with orders: %v", got[1])
	}
}
