package wallet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/store"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// MaxKeyLen is the longest Idempotency-Key taken.
const MaxKeyLen = 255

// maxScale is the most decimal places an amount may have (the exchanges' wallets count in 1e-8), except a
// withdrawal on a network whose withdraw_step says otherwise, or without one whose fee or minimum are written with more.
const maxScale = 8

// maxWideScale bounds the decimal places of a withdrawal's amount before its network's precision is known.
const maxWideScale = 18

func checkKey(key string) *Error {
	if key == "" {
		return &Error{Status: http.StatusBadRequest, Code: "idempotency_key_required", Field: "Idempotency-Key",
			Message: "The request needs an Idempotency-Key header."}
	}
	if len(key) > MaxKeyLen {
		return &Error{Status: http.StatusBadRequest, Code: "invalid_argument", Field: "Idempotency-Key",
			Message: fmt.Sprintf("The Idempotency-Key header must be at most %d characters.", MaxKeyLen)}
	}
	return nil
}

var errKeyReused = &Error{Status: http.StatusUnprocessableEntity, Code: "idempotency_key_reused", Field: "Idempotency-Key",
	Message: "This Idempotency-Key was already used for a different request."}

// amountOf parses a positive decimal amount with at most maxScale decimal places.
func amountOf(field, v string) (decimal.Decimal, *Error) { return amountScaled(field, v, maxScale) }

// places is the number of decimal places a decimal is written with, trailing zeros left out.
func places(d decimal.Decimal) int32 {
	for p := int32(0); p < 40; p++ {
		if d.Equal(d.Truncate(p)) {
			return p
		}
	}
	return 40
}

// amountScaled parses a positive decimal amount with at most scale decimal places.
func amountScaled(field, v string, scale int32) (decimal.Decimal, *Error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return decimal.Zero, invalid(field, field+" is required.")
	}
	if len(v) > 40 || strings.ContainsAny(v, "eE") {
		return decimal.Zero, invalid(field, field+" must be a decimal number.")
	}
	d, err := decimal.NewFromString(v)
	if err != nil || !d.IsPositive() {
		return decimal.Zero, invalid(field, field+" must be a positive decimal number.")
	}
	if places(d) > scale {
		return decimal.Zero, &Error{Status: http.StatusUnprocessableEntity, Code: "precision", Field: field,
			Message: fmt.Sprintf("The amount has more than %d decimal places.", scale)}
	}
	return d, nil
}

// assetOf normalises a coin name.
func assetOf(field, v string) (string, *Error) {
	v = strings.ToUpper(strings.TrimSpace(v))
	if v == "" || len(v) > 20 {
		return "", invalid(field, field+" is required.")
	}
	for _, r := range v {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return "", invalid(field, fmt.Sprintf("%q is not a coin.", v))
		}
	}
	return v, nil
}

func hashOf(v any) string {
	b, _ := json.Marshal(v)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// prior answers a request whose Idempotency-Key the member already used: the same entry (waiting for its outcome
// while in flight), or errKeyReused for a different request. found false: no entry for the key yet.
func (s *Service) prior(ctx context.Context, memberID, key, hash string) (store.Movement, bool, error) {
	prev, err := s.st.MovementByKey(ctx, memberID, key)
	if errors.Is(err, store.ErrNotFound) {
		return store.Movement{}, false, nil
	}
	if err != nil {
		return store.Movement{}, true, fmt.Errorf("wallet: journal: %w", err)
	}
	if prev.RequestHash != hash {
		return store.Movement{}, true, errKeyReused
	}
	m, err := s.settled(ctx, prev)
	return m, true, err
}

// settled waits (up to IdempotencyWait) for an entry still sent to get its answer, then returns it; a rejected
// entry comes back with its refusal as the error.
func (s *Service) settled(ctx context.Context, m store.Movement) (store.Movement, error) {
	if m.State == store.MovementSent {
		deadline := time.NewTimer(s.cfg.IdempotencyWait.D())
		defer deadline.Stop()
		poll := time.NewTicker(50 * time.Millisecond)
		defer poll.Stop()
	wait:
		for {
			s.mu.Lock()
			done := s.inflight[m.ID]
			s.mu.Unlock()
			select {
			case <-ctx.Done():
				return store.Movement{}, ctx.Err()
			case <-deadline.C:
				break wait
			case <-done: // nil (another replica's call): the poll below
			case <-poll.C:
			}
			cur, err := s.st.Movement(ctx, m.ID)
			if err != nil {
				return store.Movement{}, fmt.Errorf("wallet: journal: %w", err)
			}
			m = cur
			if m.State != store.MovementSent {
				break
			}
		}
	}
	if m.State == store.MovementRejected {
		return m, rejectionOf(m)
	}
	return m, nil
}

// rejectionOf rebuilds the refusal a rejected entry was answered with.
func rejectionOf(m store.Movement) *Error {
	r := exchangev1.ErrorReason(exchangev1.ErrorReason_value["ERROR_REASON_"+strings.ToUpper(m.ErrorCode)])
	status := reasonStatus(r)
	if r == exchangev1.ErrorReason_ERROR_REASON_UNSPECIFIED {
		status = http.StatusUnprocessableEntity
	}
	if m.ErrorCode == "exchange_unavailable" {
		status = http.StatusServiceUnavailable
	}
	return &Error{Status: status, Code: m.ErrorCode, ExchangeCode: m.ExchangeCode, Message: m.ErrorText}
}

// journal writes the intent (state sent) before any call. fresh false: a concurrent request with the same key wrote
// its entry first, and m is that entry once settled (its refusal as the error).
func (s *Service) journal(ctx context.Context, intent store.Movement) (m store.Movement, fresh bool, err error) {
	m, created, err := s.st.CreateMovement(ctx, intent)
	if err != nil {
		if errors.Is(err, store.ErrKeyReused) {
			return store.Movement{}, false, errKeyReused
		}
		return store.Movement{}, false, fmt.Errorf("wallet: journal: %w", err)
	}
	if !created {
		m, err = s.settled(ctx, m)
		return m, false, err
	}
	return m, true, nil
}

// result is what one plugin call of a movement answered.
type result struct {
	out    store.MovementOutcome
	status exchangev1.TransferStatus
	// arrived: a transfer to another exchange shows in the target's deposit history.
	arrived bool
	// halfway: the first leg of a two-leg movement (a gift through the master) moved money; an error after it is
	// an unknown outcome, never a refusal.
	halfway bool
	// denied, when set, is the member's sentence for a refusal for want of permission (PERMISSION_DENIED).
	denied string
}

// send makes the one plugin call of a journaled intent and records its outcome: completed (the exchange reports
// success), acknowledged (taken, on its way: followed by the resolver), failed (the exchange reports it failed),
// rejected (refused: nothing moved) or unknown (pending: resolved by client id, never a failure).
func (s *Service) send(ctx context.Context, sup *pluginhost.Supervisor, m store.Movement, method string,
	fn func(context.Context, exchangev1.ExchangeClient) (result, error)) (store.Movement, error) {
	done := make(chan struct{})
	s.mu.Lock()
	s.inflight[m.ID] = done
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.inflight, m.ID)
		s.mu.Unlock()
		close(done)
	}()
	var res result
	err := s.call(ctx, sup, method, func(ctx context.Context, c exchangev1.ExchangeClient) error {
		var err error
		res, err = fn(ctx, c)
		return err
	})
	// The journal writes outlive the request: the answer must be recorded even if the client left.
	jctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.CallTimeout.D())
	defer cancel()
	switch {
	case err != nil && res.halfway:
		s.stats.unknown.Add(1)
		s.log.Error("second leg of a movement not made; resolving", "movement", m.ID, "kind", m.Kind, "err", err)
		next, jerr := s.st.MarkMovementUnknown(jctx, m.ID, s.now().Add(s.backoff(1)))
		s.wake()
		if jerr != nil {
			return s.current(jctx, m), nil
		}
		return next, nil
	case err == nil:
		next, jerr := s.record(jctx, m, res)
		switch next.State {
		case store.MovementCompleted:
			s.stats.completed.Add(1)
		case store.MovementAcknowledged:
			s.stats.acknowledged.Add(1)
		case store.MovementFailed:
			s.stats.failed.Add(1)
		}
		if jerr != nil {
			s.log.Error("journal: movement outcome not recorded; the resolver will read it back", "movement", m.ID, "err", jerr)
			return s.current(jctx, m), nil
		}
		return next, nil
	case sdk.IsUnknownOutcome(err):
		s.stats.unknown.Add(1)
		s.log.Warn("movement outcome unknown; resolving by client id", "movement", m.ID, "kind", m.Kind,
			"exchange", m.Exchange, "client_id", m.ClientID, "err", err)
		next, jerr := s.st.MarkMovementUnknown(jctx, m.ID, s.now().Add(s.backoff(1)))
		s.wake()
		if jerr != nil {
			s.log.Error("journal: unknown outcome not recorded; the resolver will pick the entry up", "movement", m.ID, "err", jerr)
			return s.current(jctx, m), nil
		}
		return next, nil
	default:
		s.stats.rejected.Add(1)
		pe := pluginError(err)
		if res.denied != "" && pe.Code == "permission_denied" {
			pe.Message = res.denied
		}
		next, jerr := s.st.RejectMovement(jctx, m.ID, store.MovementOutcome{ErrorCode: pe.Code,
			ExchangeCode: pe.ExchangeCode, ErrorText: pe.Message})
		if jerr != nil {
			s.log.Error("journal: rejection not recorded", "movement", m.ID, "err", jerr)
			return m, pe
		}
		return next, pe
	}
}

// record writes what the exchange reported about a movement it took.
func (s *Service) record(ctx context.Context, m store.Movement, res result) (store.Movement, error) {
	if res.out.ExchangeStatus == "" {
		res.out.ExchangeStatus = statusName(res.status)
	}
	switch {
	case res.status == exchangev1.TransferStatus_TRANSFER_STATUS_FAILED:
		if res.out.ErrorCode == "" {
			res.out.ErrorCode, res.out.ErrorText = "failed", "The exchange reports that the movement failed."
		}
		return s.st.FailMovement(ctx, m.ID, res.out)
	case res.status == exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS &&
		(m.Kind != store.MovementExchangeTransfer || res.arrived):
		return s.st.CompleteMovement(ctx, m.ID, res.out)
	default:
		// Taken and on its way (a withdrawal, a transfer to another exchange until the target shows the deposit).
		return s.st.AcknowledgeMovement(ctx, m.ID, res.out, s.now().Add(s.follow(m.ResolveAttempts)))
	}
}

// current re-reads an entry (m itself when the read fails).
func (s *Service) current(ctx context.Context, m store.Movement) store.Movement {
	if cur, err := s.st.Movement(ctx, m.ID); err == nil {
		return cur
	}
	return m
}

func statusName(st exchangev1.TransferStatus) string {
	return strings.TrimPrefix(st.String(), "TRANSFER_STATUS_")
}

// reasonStatus maps a typed reason to the HTTP status of the refusal.
func reasonStatus(r exchangev1.ErrorReason) int {
	switch r {
	case exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED:
		return http.StatusTooManyRequests
	case exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND:
		return http.StatusNotFound
	case exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, exchangev1.ErrorReason_ERROR_REASON_CLOCK_SKEW:
		return http.StatusServiceUnavailable
	case exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED, exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED,
		exchangev1.ErrorReason_ERROR_REASON_NOT_CONFIGURED:
		return http.StatusForbidden
	case exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID:
		return http.StatusConflict
	case exchangev1.ErrorReason_ERROR_REASON_INTERNAL, exchangev1.ErrorReason_ERROR_REASON_UNSPECIFIED:
		return http.StatusBadGateway
	default:
		return http.StatusUnprocessableEntity
	}
}

func reasonMessage(r exchangev1.ErrorReason, exchangeMsg string) string {
	switch r {
	case exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS:
		return MsgAvailable
	case exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED:
		return "The exchange is receiving too many requests from this account; try again in a few seconds."
	case exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED:
		return "The exchange refused this account's API key. Check the key or link it again."
	case exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED:
		return "This account's API key may not do that. Check the key's permissions."
	case exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED:
		return "This exchange does not support that here."
	case exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE:
		return "The exchange is not reachable right now; try again shortly."
	case exchangev1.ErrorReason_ERROR_REASON_CLOCK_SKEW:
		return "The exchange refused the request's time stamp; try again shortly."
	default:
		if exchangeMsg != "" {
			return "The exchange refused the request: " + exchangeMsg
		}
		return "The exchange refused the request."
	}
}

// pluginError turns a failed plugin call (whose outcome is not unknown) into the member's refusal.
func pluginError(err error) *Error {
	if errors.Is(err, pluginhost.ErrUnavailable) {
		return &Error{Status: http.StatusServiceUnavailable, Code: "exchange_unavailable",
			Message: reasonMessage(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "")}
	}
	d := sdk.DetailOf(err)
	msg := d.GetExchangeMessage()
	if msg == "" && d.GetExchangeCode() == "" {
		msg = sdk.MessageOf(err)
	}
	return &Error{Status: reasonStatus(d.GetReason()), Code: sdk.ReasonName(d.GetReason()), ExchangeCode: d.GetExchangeCode(),
		Field: d.GetField(), Message: reasonMessage(d.GetReason(), msg)}
}

// readError maps a failed read (an idempotent call) for the API.
func readError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if sdk.IsUnknownOutcome(err) {
		return &Error{Status: http.StatusServiceUnavailable, Code: "exchange_unavailable",
			Message: reasonMessage(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "")}
	}
	return pluginError(err)
}
