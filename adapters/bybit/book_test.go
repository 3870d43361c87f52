package bybit

import (
	"errors"
	"testing"
)

func lv(px, sz string) []string { return []string{px, sz} }

func TestBookSync(t *testing.T) {
	var b Book
	if err := b.Update(rawBook{S: "X", U: 5, B: [][]string{lv("1", "1")}}); !errors.Is(err, ErrBookGap) {
		t.Fatalf("a delta before a snapshot: %v", err)
	}
	b.Reset(rawBook{S: "X", U: 10, Seq: 100, B: [][]string{lv("100", "1"), lv("99", "2")}, A: [][]string{lv("101", "1"), lv("102", "3")}})
	// The next update id applies: a level changes, one is deleted, one is added.
	if err := b.Update(rawBook{S: "X", U: 11, Seq: 105, B: [][]string{lv("100", "0"), lv("99.5", "4")}, A: [][]string{lv("101", "0.5")}}); err != nil {
		t.Fatal(err)
	}
	bids, asks := b.Levels(0)
	if len(bids) != 2 || bids[0].Price != "99.5" || bids[0].Qty != "4" || bids[1].Price != "99" || asks[0].Qty != "0.5" || b.U() != 11 || b.Seq() != 105 {
		t.Fatalf("after delta: %v %v", bids, asks)
	}
	// A duplicate (or older) message is stale and changes nothing.
	if err := b.Update(rawBook{S: "X", U: 11, B: [][]string{lv("98", "1")}}); !errors.Is(err, ErrStale) {
		t.Fatalf("duplicate: %v", err)
	}
	if err := b.Update(rawBook{S: "X", U: 13, B: [][]string{lv("98", "1")}}); !errors.Is(err, ErrBookGap) {
		t.Fatalf("gap: %v", err)
	}
	if bids, _ := b.Levels(0); len(bids) != 2 {
		t.Fatalf("a refused update changed the book: %v", bids)
	}
	// u = 1 is Bybit's snapshot after a restart: it replaces the book.
	if err := b.Update(rawBook{S: "X", U: 1, Seq: 7, B: [][]string{lv("50", "1")}, A: [][]string{lv("51", "1")}}); err != nil {
		t.Fatal(err)
	}
	bids, asks = b.Levels(0)
	if len(bids) != 1 || bids[0].Price != "50" || len(asks) != 1 || b.U() != 1 {
		t.Fatalf("after u=1: %v %v", bids, asks)
	}
	if err := b.Update(rawBook{S: "X", U: 2, A: [][]string{lv("51", "0")}}); err != nil {
		t.Fatal(err)
	}
	if _, asks := b.Levels(0); len(asks) != 0 {
		t.Fatalf("ask not deleted: %v", asks)
	}
	// Depth limits the levels returned.
	b.Reset(rawBook{S: "X", U: 3, B: [][]string{lv("3", "1"), lv("2", "1"), lv("1", "1")}})
	if bids, _ := b.Levels(2); len(bids) != 2 || bids[1].Price != "2" {
		t.Fatalf("depth 2: %v", bids)
	}
}
