package sdk

import (
	"errors"
	"testing"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

type recordStream struct {
	got  []*exchangev1.AccountEvent
	fail bool
}

func (r *recordStream) Send(ev *exchangev1.AccountEvent) error {
	if r.fail {
		return errors.New("broken")
	}
	r.got = append(r.got, ev)
	return nil
}

func TestAccountSenderSequencesSnapshotAndResync(t *testing.T) {
	rs := &recordStream{}
	s := NewAccountSender(rs)
	if err := s.Snapshot(&exchangev1.AccountSnapshot{Balances: []*exchangev1.Balance{{Asset: "USDT"}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&exchangev1.AccountEvent{Time: 42, Event: &exchangev1.AccountEvent_Fill{Fill: &exchangev1.Fill{TradeId: "1"}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Resynced("reconnected", &exchangev1.AccountSnapshot{}); err != nil {
		t.Fatal(err)
	}
	if len(rs.got) != 4 {
		t.Fatalf("sent %d events, want 4", len(rs.got))
	}
	for i, ev := range rs.got {
		if ev.GetSequence() != int64(i+1) {
			t.Fatalf("event %d has sequence %d", i, ev.GetSequence())
		}
		if ev.GetTime() == 0 {
			t.Fatalf("event %d has no time", i)
		}
	}
	if rs.got[0].GetSnapshot() == nil || rs.got[3].GetSnapshot() == nil {
		t.Fatal("snapshots missing")
	}
	if rs.got[1].GetTime() != 42 {
		t.Fatal("an event's own time was replaced")
	}
	if rs.got[2].GetStatus().GetState() != exchangev1.StreamStatus_STATE_RESYNCED {
		t.Fatalf("event 3 = %v, want RESYNCED", rs.got[2])
	}
	if s.Sequence() != 4 {
		t.Fatalf("Sequence() = %d", s.Sequence())
	}
	rs.fail = true
	if err := s.Status(exchangev1.StreamStatus_STATE_CONNECTED, ""); err == nil {
		t.Fatal("a failed send reported success")
	}
}
