package binance

import (
	"testing"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func lv(p, q string) []*exchangev1.PriceLevel { return []*exchangev1.PriceLevel{{Price: p, Qty: q}} }

func snapshot(id int64) *Depth {
	return &Depth{LastUpdateID: id, Bids: []*exchangev1.PriceLevel{{Price: "99", Qty: "1"}, {Price: "98", Qty: "2"}},
		Asks: []*exchangev1.PriceLevel{{Price: "101", Qty: "1"}}}
}

func TestBookSyncSpotProcedure(t *testing.T) {
	b := NewBookSync(false, 0)
	// Buffered before the snapshot: one stale (u <= 100), one straddling 101, one following.
	for _, ev := range []DepthEvent{{FirstID: 90, FinalID: 100, Bids: lv("97", "5")}, {FirstID: 99, FinalID: 103, Bids: lv("99", "3")},
		{FirstID: 104, FinalID: 105, Asks: lv("101", "0")}} {
		if d, gap, err := b.OnEvent(ev); d != nil || gap || err != nil {
			t.Fatal("unsynced events must be buffered")
		}
	}
	snap, deltas, stale, err := b.ApplySnapshot(snapshot(100))
	if err != nil || stale || snap.Sequence != 100 || len(deltas) != 2 {
		t.Fatalf("snapshot: %v stale=%v deltas=%d", err, stale, len(deltas))
	}
	if deltas[0].PrevSequence != 100 || deltas[0].Sequence != 103 || deltas[1].PrevSequence != 103 || deltas[1].Sequence != 105 {
		t.Fatalf("sequence chain: %+v %+v", deltas[0], deltas[1])
	}
	bids, asks := b.Levels(0)
	if len(asks) != 0 || bids[0].Price != "99" || bids[0].Qty != "3" || len(bids) != 2 {
		t.Fatalf("book: %v %v", bids, asks)
	}
	// Duplicate and out-of-order (already covered) events are ignored.
	if d, gap, _ := b.OnEvent(DepthEvent{FirstID: 104, FinalID: 105}); d != nil || gap {
		t.Fatal("duplicate must be dropped")
	}
	if d, gap, _ := b.OnEvent(DepthEvent{FirstID: 100, FinalID: 102}); d != nil || gap {
		t.Fatal("old event must be dropped")
	}
	d, gap, _ := b.OnEvent(DepthEvent{FirstID: 106, FinalID: 106, Bids: lv("98", "0")})
	if d == nil || gap || d.PrevSequence != 105 {
		t.Fatalf("next: %+v %v", d, gap)
	}
	// A gap (U skips ahead) drops the book.
	if d, gap, _ := b.OnEvent(DepthEvent{FirstID: 110, FinalID: 111}); d != nil || !gap || b.Synced() {
		t.Fatal("gap not detected")
	}
	if b.Resyncs != 1 {
		t.Fatalf("resyncs %d", b.Resyncs)
	}
}

func TestBookSyncSnapshotTooOld(t *testing.T) {
	b := NewBookSync(false, 0)
	b.OnEvent(DepthEvent{FirstID: 200, FinalID: 210})
	_, _, stale, err := b.ApplySnapshot(snapshot(150))
	if err != nil || !stale || b.Synced() {
		t.Fatalf("a snapshot older than the buffer must be refused: stale=%v err=%v", stale, err)
	}
	// Buffer empty after a fresh snapshot: the first live event must straddle it.
	b2 := NewBookSync(false, 0)
	if _, _, stale, _ := b2.ApplySnapshot(snapshot(300)); stale {
		t.Fatal("empty buffer is fine")
	}
	if _, gap, _ := b2.OnEvent(DepthEvent{FirstID: 305, FinalID: 306}); !gap {
		t.Fatal("first event after snapshot must satisfy U <= id+1 <= u")
	}
}

func TestBookSyncFuturesChaining(t *testing.T) {
	b := NewBookSync(true, 1)
	b.OnEvent(DepthEvent{FirstID: 95, FinalID: 100, PrevFinalID: 94})
	b.OnEvent(DepthEvent{FirstID: 101, FinalID: 108, PrevFinalID: 100, Bids: lv("99", "4")})
	snap, deltas, stale, err := b.ApplySnapshot(snapshot(104))
	if err != nil || stale || len(deltas) != 1 || len(snap.Bids) != 1 {
		t.Fatalf("futures snapshot: %v %v %d %d", err, stale, len(deltas), len(snap.Bids))
	}
	// pu must equal the previous u, whatever U is.
	if d, gap, _ := b.OnEvent(DepthEvent{FirstID: 115, FinalID: 120, PrevFinalID: 108}); d == nil || gap || d.PrevSequence != 108 {
		t.Fatalf("pu chain: %+v %v", d, gap)
	}
	if _, gap, _ := b.OnEvent(DepthEvent{FirstID: 121, FinalID: 125, PrevFinalID: 119}); !gap {
		t.Fatal("broken pu chain must be a gap")
	}
}

func TestBookSyncBadLevel(t *testing.T) {
	b := NewBookSync(false, 0)
	b.ApplySnapshot(snapshot(1))
	if _, _, err := b.OnEvent(DepthEvent{FirstID: 2, FinalID: 2, Bids: lv("x", "1")}); err == nil {
		t.Fatal("bad level must be an error")
	}
}
