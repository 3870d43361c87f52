package pluginhost

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/plugintest"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// TestReferencePluginSurvivesSIGKILL runs the host against the real reference exchange plugin (plugins/reference):
// describe, list instruments, stream a book, kill the process, and stream again (RECONNECTING, RESYNCED, a snapshot,
// contiguous deltas).
func TestReferencePluginSurvivesSIGKILL(t *testing.T) {
	bin := plugintest.Path("reference")
	h := New([]Spec{{Key: 100, Slug: "reference", Name: "Reference Exchange", Path: bin}}, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()
	defer func() { cancel(); <-done }()
	sup, _ := h.Get("reference")
	wctx, wcancel := context.WithTimeout(ctx, wait)
	defer wcancel()
	if err := sup.WaitRunning(wctx); err != nil {
		t.Fatal(err)
	}
	first := sup.Status()
	if first.Describe.GetExchange().GetSlug() != "reference" || first.Describe.GetExchange().GetKey() != 100 {
		t.Fatalf("describe: %v", first.Describe.GetExchange())
	}
	var inst *exchangev1.Instrument
	err := sup.Call(ctx, "ListInstruments", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.ListInstruments(ctx, &exchangev1.ListInstrumentsRequest{})
		if err == nil && len(resp.GetInstruments()) > 0 {
			inst = resp.GetInstruments()[0]
		}
		return err
	})
	if err != nil || inst == nil {
		t.Fatalf("ListInstruments: %v, %v", inst, err)
	}
	ms := sup.StreamMarket(ctx)
	defer ms.Close()
	sub := &exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_BOOK, MarketType: inst.GetMarketType(), Symbol: inst.GetSymbol()}
	if err := ms.Subscribe(ctx, sub); err != nil {
		t.Fatal(err)
	}
	var (
		synced   bool
		lastSeq  int64
		deltas   int
		statuses []exchangev1.StreamStatus_State
	)
	next := func() {
		t.Helper()
		select {
		case ev := <-ms.Events():
			switch e := ev.GetEvent().(type) {
			case *exchangev1.MarketEvent_BookSnapshot:
				synced, lastSeq = true, e.BookSnapshot.GetSequence()
			case *exchangev1.MarketEvent_BookDelta:
				if !synced || e.BookDelta.GetPrevSequence() != lastSeq {
					t.Fatalf("delta prev %d after %d (synced %v)", e.BookDelta.GetPrevSequence(), lastSeq, synced)
				}
				lastSeq = e.BookDelta.GetSequence()
				deltas++
			case *exchangev1.MarketEvent_Status:
				statuses = append(statuses, e.Status.GetState())
				if e.Status.GetState() == exchangev1.StreamStatus_STATE_RESYNCED {
					synced = false
				}
			}
		case <-time.After(wait):
			t.Fatalf("no event within %s (status %+v)", wait, sup.Status())
		}
	}
	for deltas < 3 {
		next()
	}
	if err := syscall.Kill(first.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	before := deltas
	for !(synced && deltas >= before+2 && len(statuses) >= 2) {
		next()
	}
	if statuses[0] != exchangev1.StreamStatus_STATE_RECONNECTING || statuses[len(statuses)-1] != exchangev1.StreamStatus_STATE_RESYNCED {
		t.Fatalf("statuses %v", statuses)
	}
	for _, s := range statuses {
		if s == exchangev1.StreamStatus_STATE_ERROR {
			t.Fatalf("error status reached the consumer: %v", statuses)
		}
	}
	if st := sup.Status(); st.Pid == first.Pid || st.Restarts != 1 {
		t.Fatalf("after restart %+v", st)
	}
}
