package feed

import "testing"

func TestQueueBoundedAndReset(t *testing.T) {
	q := NewQueue(3)
	for i := int64(1); i <= 3; i++ {
		if !q.Offer(Update{Seq: i, Kind: KindFill}) {
			t.Fatalf("refused update %d within the bound", i)
		}
	}
	if q.Offer(Update{Seq: 4, Kind: KindFill}) {
		t.Fatal("accepted past the bound")
	}
	select {
	case <-q.Notify():
	default:
		t.Fatal("no notification")
	}
	q.Reset([]Update{{Kind: KindResync, Reason: "slow_subscriber"}, {Seq: 4, Kind: KindSnapshot, Snapshot: &Snapshot{}}})
	if !q.Offer(Update{Seq: 5, Kind: KindFill}) {
		t.Fatal("refused after the reset")
	}
	got := q.Take()
	if len(got) != 3 || got[0].Kind != KindResync || got[1].Kind != KindSnapshot || got[2].Seq != 5 {
		t.Fatalf("took %+v", got)
	}
	if q.Take() != nil {
		t.Fatal("took twice")
	}
	if NewQueue(0).size != 2 {
		t.Fatal("a queue must hold a marker and a snapshot")
	}
}
