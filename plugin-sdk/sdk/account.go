package sdk

import (
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// AccountSender writes a StreamAccount answer the way exchange.v1 1.1 asks: every event gets the next sequence
// (1, 2, 3, ... per call), the stream starts with a snapshot, and a gap is announced with STATE_RESYNCED followed by
// a fresh snapshot. It is not safe for concurrent use: one goroutine owns a stream's sends.
type AccountSender struct {
	send func(*exchangev1.AccountEvent) error
	seq  int64
	now  func() time.Time
}

// NewAccountSender wraps a StreamAccount server stream (anything with Send).
func NewAccountSender(stream interface {
	Send(*exchangev1.AccountEvent) error
}) *AccountSender {
	return &AccountSender{send: stream.Send, now: time.Now}
}

// Sequence is the sequence of the last event sent (0 before the first).
func (s *AccountSender) Sequence() int64 { return s.seq }

// Send stamps ev with the next sequence (and the time, when ev has none) and sends it. A failed send still uses the
// sequence: the stream is broken then and the receiver starts over.
func (s *AccountSender) Send(ev *exchangev1.AccountEvent) error {
	s.seq++
	ev.Sequence = s.seq
	if ev.Time == 0 {
		ev.Time = s.now().UnixMilli()
	}
	return s.send(ev)
}

// Snapshot sends the account's whole state; it replaces what the receiver held.
func (s *AccountSender) Snapshot(snap *exchangev1.AccountSnapshot) error {
	return s.Send(&exchangev1.AccountEvent{Event: &exchangev1.AccountEvent_Snapshot{Snapshot: snap}})
}

// Status sends a stream status event.
func (s *AccountSender) Status(state exchangev1.StreamStatus_State, message string) error {
	return s.Send(&exchangev1.AccountEvent{Event: &exchangev1.AccountEvent_Status{
		Status: &exchangev1.StreamStatus{State: state, Message: message},
	}})
}

// Resynced announces that the plugin lost events from the exchange and re-read the account: STATE_RESYNCED, then
// snap.
func (s *AccountSender) Resynced(message string, snap *exchangev1.AccountSnapshot) error {
	if err := s.Status(exchangev1.StreamStatus_STATE_RESYNCED, message); err != nil {
		return err
	}
	return s.Snapshot(snap)
}
