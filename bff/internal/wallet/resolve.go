package wallet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/store"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// lookBack widens a history search before the intent's time (clock offsets between exhub and the exchange).
const lookBack = time.Minute

// resolveBatch is the most entries one pass of the resolver looks at.
const resolveBatch = 100

// Run resolves unknown outcomes and follows movements on their way until ctx ends. It is the service's only
// goroutine; at start it takes every open entry the journal holds (a restart's leftovers) at once.
func (s *Service) Run(ctx context.Context) {
	tick := time.NewTicker(s.cfg.Tick.D())
	defer tick.Stop()
	for {
		s.resolveDue(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-s.kick:
		}
	}
}

// resolveDue looks at every entry due: unknown ones, sent ones left stale (never one whose call runs in this
// process), and acknowledged ones due to be followed.
func (s *Service) resolveDue(ctx context.Context) {
	now := s.now()
	list, err := s.st.MovementsToResolve(ctx, now, now.Add(-s.cfg.SentStale.D()), resolveBatch)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("journal: movements to resolve", "err", err)
		}
		return
	}
	for _, m := range list {
		if ctx.Err() != nil {
			return
		}
		s.mu.Lock()
		_, running := s.inflight[m.ID]
		s.mu.Unlock()
		if running {
			continue
		}
		s.resolve(ctx, m)
	}
}

// errNotFound: the exchange does not know the movement (yet).
var errNotFound = errors.New("movement not found at the exchange")

// resolve looks one entry up at the exchange and records what it finds. Nothing is ever sent again.
func (s *Service) resolve(ctx context.Context, m store.Movement) {
	sup, ok := s.plugins.Get(m.Exchange)
	if !ok {
		s.later(ctx, m, "the exchange's plugin is not running")
		return
	}
	var res result
	var err error
	switch m.Kind {
	case store.MovementTransfer:
		res, err = s.findTransfer(ctx, sup, m)
	case store.MovementWithdraw, store.MovementExchangeTransfer:
		if m.FromSubAccount != "" {
			res, err = s.findBrokerWithdrawal(ctx, sup, m)
		} else {
			res, err = s.findWithdrawal(ctx, sup, m)
		}
		if err == nil && m.Kind == store.MovementExchangeTransfer &&
			res.status != exchangev1.TransferStatus_TRANSFER_STATUS_FAILED {
			res, err = s.arrival(ctx, m, res)
		}
	case store.MovementConvert:
		res, err = s.findConvert(ctx, sup, m)
	case store.MovementGift:
		if viaMaster(sup) {
			res, err = s.findGiftViaMaster(ctx, sup, m)
		} else {
			res, err = s.findSubTransfer(ctx, sup, m, m.ClientID, m.FromSubAccount)
		}
	case store.MovementFaucet:
		res, err = s.findSubTransfer(ctx, sup, m, m.ClientID, m.ToSubAccount)
	default:
		err = fmt.Errorf("kind %q", m.Kind)
	}
	jctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.CallTimeout.D())
	defer cancel()
	switch {
	case err == nil:
		next, jerr := s.record(jctx, m, res)
		if jerr != nil {
			s.log.Error("journal: resolved movement not recorded", "movement", m.ID, "err", jerr)
			return
		}
		if m.State != store.MovementAcknowledged {
			s.stats.resolved.Add(1)
		}
		if res.arrived && next.State == store.MovementCompleted {
			s.stats.arrived.Add(1)
		}
	case errors.Is(err, errNotFound) && m.State != store.MovementAcknowledged:
		if s.now().Sub(m.CreatedAt) < s.cfg.NotFoundGrace.D() {
			s.later(jctx, m, "not visible at the exchange yet")
			return
		}
		s.log.Info("unknown movement resolved as not executed", "movement", m.ID, "kind", m.Kind, "exchange", m.Exchange)
		s.stats.notExecuted.Add(1)
		if _, jerr := s.st.FailMovement(jctx, m.ID, store.MovementOutcome{ErrorCode: "not_executed",
			ErrorText: "The exchange did not execute this movement; nothing moved."}); jerr != nil {
			s.log.Error("journal: movement not executed, not recorded", "movement", m.ID, "err", jerr)
		}
	default:
		s.later(jctx, m, err.Error())
	}
}

// later puts an entry off: an unknown (or stale sent) one by its backoff, an acknowledged one by the follow interval.
func (s *Service) later(ctx context.Context, m store.Movement, why string) {
	var err error
	if m.State == store.MovementAcknowledged {
		_, err = s.st.AcknowledgeMovement(ctx, m.ID, store.MovementOutcome{}, s.now().Add(s.follow(m.ResolveAttempts)))
	} else {
		_, err = s.st.MarkMovementUnknown(ctx, m.ID, s.now().Add(s.backoff(m.ResolveAttempts+1)))
		s.log.Debug("movement still unresolved", "movement", m.ID, "why", why)
	}
	if err != nil && !errors.Is(err, store.ErrInvalidTransition) {
		s.log.Error("journal: movement not put off", "movement", m.ID, "err", err)
	}
}

// ref is the account an entry was made from; an entry whose member now uses another account there is not
// concluded from the new one.
func (s *Service) ref(ctx context.Context, m store.Movement) (*exchangev1.AccountRef, error) {
	ref, err := s.accounts.AccountRef(ctx, m.MemberID, m.Exchange)
	if err != nil {
		return nil, err
	}
	if ref.GetAccountId() != m.AccountID {
		return nil, fmt.Errorf("the member's account on %s changed since the movement", m.Exchange)
	}
	return ref, nil
}

func page(m store.Movement) *exchangev1.HistoryPage {
	return &exchangev1.HistoryPage{StartTime: m.CreatedAt.Add(-lookBack).UnixMilli(), Limit: 100}
}

func sameAmount(a, b string) bool {
	x, err1 := decimal.NewFromString(a)
	y, err2 := decimal.NewFromString(b)
	return err1 == nil && err2 == nil && x.Equal(y)
}

// claimed reports whether another journal entry of the account already took this exchange record.
func (s *Service) claimed(ctx context.Context, m store.Movement, exchangeID string) bool {
	other, err := s.st.MovementByExchangeID(ctx, m.Exchange, m.AccountID, m.Kind, exchangeID)
	return err == nil && other.ID != m.ID
}

// findTransfer looks a transfer up in the account's transfer history: by client id where the exchange keeps it
// (OKX), else (Binance's universal transfer takes none) the oldest record of the same coin, amount and direction
// since the intent that no other journal entry claimed.
func (s *Service) findTransfer(ctx context.Context, sup *pluginhost.Supervisor, m store.Movement) (result, error) {
	ref, err := s.ref(ctx, m)
	if err != nil {
		return result{}, err
	}
	var recs []*exchangev1.TransferRecord
	err = s.call(ctx, sup, "ListTransfers", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.ListTransfers(ctx, &exchangev1.ListTransfersRequest{Account: ref, Asset: m.Asset, Page: page(m)})
		recs = resp.GetTransfers()
		return err
	})
	if err != nil {
		return result{}, err
	}
	from, to := walletNames[m.FromWallet], walletNames[m.ToWallet]
	var found *exchangev1.TransferRecord
	for _, r := range recs {
		if r.GetClientId() == m.ClientID {
			found = r
			break
		}
	}
	if found == nil {
		since := m.CreatedAt.Add(-5 * time.Second).UnixMilli()
		for _, r := range recs { // newest first: the last match is the oldest
			if r.GetClientId() == "" && r.GetAsset() == m.Asset && sameAmount(r.GetAmount(), m.Amount) &&
				r.GetFrom() == from && r.GetTo() == to && r.GetTime() >= since && !s.claimed(ctx, m, r.GetId()) {
				found = r
			}
		}
	}
	if found == nil {
		return result{}, errNotFound
	}
	return result{out: store.MovementOutcome{ExchangeID: found.GetId()}, status: found.GetStatus()}, nil
}

// findWithdrawal looks a withdrawal from the member's own account up by its client id (or its exchange id once
// known): entries journaled before withdrawals went through the master.
func (s *Service) findWithdrawal(ctx context.Context, sup *pluginhost.Supervisor, m store.Movement) (result, error) {
	ref, err := s.ref(ctx, m)
	if err != nil {
		return result{}, err
	}
	return s.findWithdrawalOf(ctx, sup, m, ref)
}

// findBrokerWithdrawal resolves a broker member's withdrawal (two steps through the master, one journal entry) by
// each step's own id, before anything is sent again:
//   - the master's withdrawal found: its status is the outcome (failed by the exchange: its amount, back at the
//     master, is returned to the member first);
//   - the return to the member found: failed, the money back;
//   - the pull from the member not found: not known (not executed once not_found_grace has passed); failed: nothing
//     moved;
//   - the pull found and the withdrawal not, once not_found_grace has passed: the master withdraws now (its id is
//     fixed and was just looked up), and a refusal returns the money to the member.
func (s *Service) findBrokerWithdrawal(ctx context.Context, sup *pluginhost.Supervisor, m store.Movement) (result, error) {
	master, ok := s.master(m.Exchange)
	if !ok {
		return result{}, fmt.Errorf("no master account for %s", m.Exchange)
	}
	failed := exchangev1.TransferStatus_TRANSFER_STATUS_FAILED
	returned := func(text string) (result, error) {
		err := s.call(ctx, sup, "SubAccountTransfer", func(ctx context.Context, c exchangev1.ExchangeClient) error {
			return giveBack(ctx, c, master, m)
		})
		if err != nil {
			return result{}, fmt.Errorf("returning the withdrawal's amount: %w", err)
		}
		s.log.Info("broker withdrawal not made; its amount returned to the member", "movement", m.ID, "exchange", m.Exchange)
		return result{status: failed, out: store.MovementOutcome{ErrorCode: "failed", ErrorText: text}}, nil
	}
	res, err := s.findWithdrawalOf(ctx, sup, m, master)
	switch {
	case err == nil && res.status == failed:
		return returned(msgReturned)
	case err == nil:
		return res, nil
	case !errors.Is(err, errNotFound):
		return result{}, err
	}
	if _, err := s.findSubTransfer(ctx, sup, m, legBack(m.ClientID), m.FromSubAccount); err == nil {
		return result{status: failed, out: store.MovementOutcome{ErrorCode: "failed", ErrorText: msgReturned}}, nil
	} else if !errors.Is(err, errNotFound) {
		return result{}, err
	}
	first, err := s.findSubTransfer(ctx, sup, m, legPull(m.ClientID), m.FromSubAccount)
	if err != nil {
		return result{}, err
	}
	if first.status == failed {
		return result{status: failed}, nil
	}
	if s.now().Sub(m.CreatedAt) < s.cfg.NotFoundGrace.D() {
		return result{}, errors.New("the withdrawal is not visible at the exchange yet")
	}
	err = s.call(ctx, sup, "Withdraw", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		var err error
		res, err = payOut(ctx, c, master, m)
		return err
	})
	switch {
	case err == nil && res.status != failed:
		s.log.Info("broker withdrawal sent by the resolver", "movement", m.ID, "exchange", m.Exchange)
		return res, nil
	case err != nil && (sdk.IsUnknownOutcome(err) || ctx.Err() != nil):
		return result{}, fmt.Errorf("sending the withdrawal: %w", err)
	case err != nil:
		return returned(pluginError(err).Message + " The amount and its fee are back in your account.")
	}
	return returned(msgReturned)
}

// findWithdrawalOf looks a withdrawal of an account up by its client id (or its exchange id once known).
func (s *Service) findWithdrawalOf(ctx context.Context, sup *pluginhost.Supervisor, m store.Movement, ref *exchangev1.AccountRef) (result, error) {
	var recs []*exchangev1.WithdrawalRecord
	err := s.call(ctx, sup, "ListWithdrawals", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.ListWithdrawals(ctx, &exchangev1.ListWithdrawalsRequest{Account: ref, Asset: m.Asset, Page: page(m)})
		recs = resp.GetWithdrawals()
		return err
	})
	if err != nil {
		return result{}, err
	}
	for _, w := range recs {
		if w.GetClientId() == m.ClientID || m.ExchangeID != "" && w.GetId() == m.ExchangeID {
			return result{out: store.MovementOutcome{ExchangeID: w.GetId(), Fee: w.GetFee(), TxID: w.GetTxId()},
				status: w.GetStatus()}, nil
		}
	}
	return result{}, errNotFound
}

// arrival: a transfer to another exchange is completed once the target's deposit history shows it (the same
// transaction id, else the same amount since the intent); until then it stays acknowledged with the withdrawal's
// status.
func (s *Service) arrival(ctx context.Context, m store.Movement, res result) (result, error) {
	tsup, ok := s.plugins.Get(m.TargetExchange)
	if !ok {
		return res, nil
	}
	tref, err := s.accounts.AccountRef(ctx, m.MemberID, m.TargetExchange)
	if err != nil {
		return res, nil
	}
	var deps []*exchangev1.DepositRecord
	err = s.call(ctx, tsup, "ListDeposits", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.ListDeposits(ctx, &exchangev1.ListDepositsRequest{Account: tref, Asset: m.Asset, Page: page(m)})
		deps = resp.GetDeposits()
		return err
	})
	if err != nil {
		return res, nil
	}
	txID := res.out.TxID
	if txID == "" {
		txID = m.TxID
	}
	for _, d := range deps {
		match := txID != "" && d.GetTxId() == txID
		if !match && (txID == "" || d.GetTxId() == "") {
			match = sameAmount(d.GetAmount(), m.Amount) && d.GetTime() >= m.CreatedAt.UnixMilli()-5000 &&
				(d.GetAddress() == "" || d.GetAddress() == m.Address)
		}
		if match && d.GetStatus() == exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS {
			res.status, res.arrived = exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS, true
			res.out.ExchangeStatus = "ARRIVED"
			return res, nil
		}
	}
	return res, nil
}

// findConvert looks a convert up in the convert history by its quote id.
func (s *Service) findConvert(ctx context.Context, sup *pluginhost.Supervisor, m store.Movement) (result, error) {
	ref, err := s.ref(ctx, m)
	if err != nil {
		return result{}, err
	}
	var recs []*exchangev1.ConvertRecord
	err = s.call(ctx, sup, "ListConverts", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.ListConverts(ctx, &exchangev1.ListConvertsRequest{Account: ref, Page: page(m)})
		recs = resp.GetConverts()
		return err
	})
	if err != nil {
		return result{}, err
	}
	for _, r := range recs {
		if r.GetQuoteId() == m.QuoteID {
			st := r.GetStatus()
			if st == exchangev1.TransferStatus_TRANSFER_STATUS_UNSPECIFIED {
				st = exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS
			}
			return result{out: store.MovementOutcome{ExchangeID: r.GetId(), ToAmount: r.GetToAmount()}, status: st}, nil
		}
	}
	return result{}, errNotFound
}

// findGiftViaMaster resolves a gift sent in two legs: the second leg found is the gift's outcome; else the first
// leg found (the money is at the master) is delivered now, with the second leg's fixed client id; neither found is
// "not executed".
func (s *Service) findGiftViaMaster(ctx context.Context, sup *pluginhost.Supervisor, m store.Movement) (result, error) {
	res, err := s.findSubTransfer(ctx, sup, m, legTwo(m.ClientID), m.ToSubAccount)
	if !errors.Is(err, errNotFound) {
		return res, err
	}
	first, err := s.findSubTransfer(ctx, sup, m, m.ClientID, m.FromSubAccount)
	if err != nil || first.status == exchangev1.TransferStatus_TRANSFER_STATUS_FAILED {
		return first, err
	}
	master, _ := s.master(m.Exchange)
	err = s.call(ctx, sup, "SubAccountTransfer", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		var err error
		res, err = deliver(ctx, c, master, m)
		return err
	})
	if err != nil {
		return result{}, fmt.Errorf("delivering the gift: %w", err)
	}
	s.log.Info("gift delivered by the resolver", "movement", m.ID, "exchange", m.Exchange)
	return res, nil
}

// findSubTransfer looks a gift or faucet grant (or one leg of a gift) up with GetSubAccountTransfer by its client
// transfer id and its sub-account side (with the master's credentials; ORDER_NOT_FOUND: the exchange does not know
// it).
func (s *Service) findSubTransfer(ctx context.Context, sup *pluginhost.Supervisor, m store.Movement, id, sub string) (result, error) {
	master, ok := s.master(m.Exchange)
	if !ok {
		return result{}, fmt.Errorf("no master account for %s", m.Exchange)
	}
	var t *exchangev1.SubAccountTransferRecord
	err := s.call(ctx, sup, "GetSubAccountTransfer", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.GetSubAccountTransfer(ctx, &exchangev1.GetSubAccountTransferRequest{Account: master,
			ClientTransferId: id, SubAccountId: sub})
		t = resp.GetTransfer()
		return err
	})
	if sdk.DetailOf(err).GetReason() == exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND {
		return result{}, errNotFound
	}
	if err != nil {
		return result{}, err
	}
	st := t.GetStatus()
	if st == exchangev1.TransferStatus_TRANSFER_STATUS_UNSPECIFIED {
		st = exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS
	}
	return result{out: store.MovementOutcome{ExchangeID: t.GetTransferId()}, status: st}, nil
}
