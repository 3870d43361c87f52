package wallet

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	binanceemu "github.com/exhub/exhub/adapters/binance/emulator"
	"github.com/exhub/exhub/bff/internal/accounts"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/servicegate"
	"github.com/exhub/exhub/bff/internal/store"
	"github.com/exhub/exhub/plugin-sdk/faults"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

const (
	funding = exchangev1.WalletType_WALLET_TYPE_FUNDING
	trading = exchangev1.WalletType_WALLET_TYPE_TRADING
)

func wantCode(t *testing.T, err error, code, msg string) *Error {
	t.Helper()
	var we *Error
	if !errors.As(err, &we) {
		t.Fatalf("error %v, want code %s", err, code)
	}
	if we.Code != code || (msg != "" && we.Message != msg) {
		t.Fatalf("error %+v, want code %s message %q", we, code, msg)
	}
	return we
}

func TestFaucetAndTransferBothWays(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, ex := range []string{"binance", "okx"} {
		t.Run(ex, func(t *testing.T) {
			ctx := ctxT(t)
			e.broker("a", ex)
			a := Caller{ID: "a"}
			before := e.balance("a", ex, "USDT", trading)
			f, err := e.svc.Faucet(ctx, a, "faucet-"+ex, FaucetRequest{Exchange: ex})
			if err != nil || f.State != store.MovementCompleted || f.Kind != store.MovementFaucet || f.Amount != "10000" {
				t.Fatalf("faucet %+v %v", f, err)
			}
			if got := e.balance("a", ex, "USDT", trading); !got.Equal(before.Add(dec("10000"))) {
				t.Fatalf("trading after faucet %s, want %s + 10000", got, before)
			}
			// Trading -> funding, then part of it back.
			tr, err := e.svc.Transfer(ctx, a, "t1-"+ex, TransferRequest{Exchange: ex, Asset: "usdt", Amount: "1500.5",
				From: "TRADING", To: "FUNDING"})
			if err != nil || tr.ExchangeID == "" {
				t.Fatalf("transfer %+v %v", tr, err)
			}
			e.completed(t, "a", tr)
			if got := e.balance("a", ex, "USDT", funding); !got.Equal(dec("1500.5")) {
				t.Fatalf("funding %s, want 1500.5", got)
			}
			back, err := e.svc.Transfer(ctx, a, "t2-"+ex, TransferRequest{Exchange: ex, Asset: "USDT", Amount: "500",
				From: "FUNDING", To: "TRADING"})
			if err != nil {
				t.Fatalf("transfer back %+v %v", back, err)
			}
			e.completed(t, "a", back)
			if got := e.balance("a", ex, "USDT", funding); !got.Equal(dec("1000.5")) {
				t.Fatalf("funding %s, want 1000.5", got)
			}
			if got := e.balance("a", ex, "USDT", trading); !got.Equal(before.Add(dec("9000")).Sub(dec("0.5"))) {
				t.Fatalf("trading %s", got)
			}
			// More than the wallet holds: refused, the journal says rejected, nothing moved.
			_, err = e.svc.Transfer(ctx, a, "t3-"+ex, TransferRequest{Exchange: ex, Asset: "USDT", Amount: "5000",
				From: "FUNDING", To: "TRADING"})
			wantCode(t, err, "insufficient_funds", MsgAvailable)
			if m := e.svc.MovementByKey(ctx, "a", "t3-"+ex); m.State != store.MovementRejected {
				t.Fatalf("refused transfer journaled as %+v", m)
			}
			list, err := e.svc.List(ctx, "a", store.MovementFilter{Exchange: ex, Kind: store.MovementTransfer})
			if err != nil || len(list) != 3 || list[0].ID != e.svc.MovementByKey(ctx, "a", "t3-"+ex).ID {
				t.Fatalf("journal %+v %v", list, err)
			}
		})
	}
}

func TestTransferIdempotencyAndIsolation(t *testing.T) {
	e := newEnv(t, envOptions{pg: true})
	ctx := ctxT(t)
	e.broker("a", "binance")
	e.broker("b", "binance")
	a, b := Caller{ID: "a"}, Caller{ID: "b"}
	if _, err := e.svc.Faucet(ctx, a, "f", FaucetRequest{Exchange: "binance"}); err != nil {
		t.Fatal(err)
	}
	req := TransferRequest{Exchange: "binance", Asset: "USDT", Amount: "10", From: "TRADING", To: "FUNDING"}
	first, err := e.svc.Transfer(ctx, a, "same", req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.svc.Transfer(ctx, a, "same", req)
	if err != nil || again.ID != first.ID {
		t.Fatalf("repeat %+v %v", again, err)
	}
	if got := e.balance("a", "binance", "USDT", funding); !got.Equal(dec("10")) {
		t.Fatalf("funding %s after one transfer asked twice", got)
	}
	other := req
	other.Amount = "11"
	_, err = e.svc.Transfer(ctx, a, "same", other)
	wantCode(t, err, "idempotency_key_reused", "")
	// Member b never reads a's movement nor sees it listed; b's own key "same" is b's.
	_, err = e.svc.Movement(ctx, "b", first.ID)
	if we := wantCode(t, err, "movement_not_found", ""); we.Status != http.StatusNotFound {
		t.Fatalf("status %d", we.Status)
	}
	if list, err := e.svc.List(ctx, "b", store.MovementFilter{}); err != nil || len(list) != 0 {
		t.Fatalf("b sees %+v %v", list, err)
	}
	_, err = e.svc.Transfer(ctx, b, "same", req)
	wantCode(t, err, "insufficient_funds", "") // b's own (empty) wallet, not a's entry
	if got, err := e.svc.Movement(ctx, "a", first.ID); err != nil || got.ID != first.ID {
		t.Fatalf("a's movement %+v %v", got, err)
	}
}

// paysFrom is the member's wallet a withdrawal is paid from: OKX's broker transfer takes the funding account,
// Binance's only the spot wallet (the master then withdraws from spot).
func paysFrom(exchange string) exchangev1.WalletType {
	if exchange == "okx" {
		return funding
	}
	return trading
}

// fund gives member a on exchange 100 USDT in the wallet withdrawals are paid from (the faucet's 10,000 land in
// the trading wallet; the rest goes to the other wallet).
func (e *env) fund(t *testing.T, member, exchange string) {
	t.Helper()
	ctx := ctxT(t)
	c := Caller{ID: member}
	g, err := e.svc.Faucet(ctx, c, "f-"+exchange, FaucetRequest{Exchange: exchange})
	if err != nil {
		t.Fatal(err)
	}
	e.completed(t, member, g)
	amount := "9900"
	if paysFrom(exchange) == funding {
		amount = "100"
	}
	tr, err := e.svc.Transfer(ctx, c, "fund-"+exchange, TransferRequest{Exchange: exchange, Asset: "USDT", Amount: amount,
		From: "TRADING", To: "FUNDING"})
	if err != nil {
		t.Fatal(err)
	}
	e.completed(t, member, tr)
	if got := e.balance(member, exchange, "USDT", paysFrom(exchange)); !got.Equal(dec("100")) {
		t.Fatalf("%s: %s in the paying wallet, want 100", exchange, got)
	}
}

// Withdrawal rules on both exchanges; an accepted one goes through the master (a broker sub-account's key cannot
// withdraw): the member pays the amount and the fee, the master ends as it was.
func TestWithdrawRules(t *testing.T) {
	for _, ex := range []string{"binance", "okx"} {
		t.Run(ex, func(t *testing.T) {
			e := newEnv(t, envOptions{})
			ctx := ctxT(t)
			e.broker("a", ex)
			a := Caller{ID: "a"}
			e.fund(t, "a", ex)
			n, err := e.svc.network(ctx, mustSup(t, e, ex), mustRef(t, e, "a", ex), "USDT", "")
			if err != nil {
				t.Fatal(err)
			}
			fee, min := dec(n.GetWithdrawFee()), dec(n.GetWithdrawMin())
			if !fee.IsPositive() || !min.IsPositive() || min.Add(fee).GreaterThan(dec("100")) {
				t.Fatalf("network %+v: the test needs a fee and a minimum below 100", n)
			}
			if got := e.svc.WithdrawWallet(ctx, "a", ex); got != walletName(paysFrom(ex)) {
				t.Fatalf("WithdrawWallet %s, want %s", got, walletName(paysFrom(ex)))
			}
			w := func(key, amount string) (store.Movement, error) {
				return e.svc.Withdraw(ctx, a, key, WithdrawRequest{Exchange: ex, Asset: "USDT", Amount: amount, Address: "sim1destination"})
			}
			_, err = w("below", min.Sub(dec("0.01")).String())
			wantCode(t, err, "min_amount", MsgMinimum)
			_, err = w("above", "100.01")
			wantCode(t, err, "insufficient_funds", MsgExceeds)
			_, err = w("fees", dec("100").Sub(fee).Add(dec("0.01")).String())
			wantCode(t, err, "insufficient_funds", MsgCoverFees)
			_, err = w("precise", "20.123456789")
			wantCode(t, err, "precision", "")
			for _, k := range []string{"below", "above", "fees", "precise"} {
				if m := e.svc.MovementByKey(ctx, "a", k); m.ID != "" {
					t.Fatalf("a refused withdrawal was journaled: %+v", m)
				}
			}
			// A member with an authenticator app withdraws from a session that passed it only.
			_, err = e.svc.Withdraw(ctx, Caller{ID: "a", TwoFactor: true, AAL: "aal1"}, "2fa",
				WithdrawRequest{Exchange: ex, Asset: "USDT", Amount: "20", Address: "sim1destination"})
			wantCode(t, err, "aal2_required", "")
			// Accepted: the fee comes on top of the amount; the master ends as it was.
			master := e.masterTotal(ex, "USDT")
			m, err := e.svc.Withdraw(ctx, Caller{ID: "a", TwoFactor: true, AAL: "aal2", SecondFactorAt: time.Now()}, "ok",
				WithdrawRequest{Exchange: ex, Asset: "USDT", Amount: "20", Address: "sim1destination"})
			if err != nil || m.ExchangeID == "" || m.Fee != fee.String() || (m.State != store.MovementCompleted && m.State != store.MovementAcknowledged) {
				t.Fatalf("withdraw %+v %v", m, err)
			}
			if got := e.balance("a", ex, "USDT", paysFrom(ex)); !got.Equal(dec("80").Sub(fee)) {
				t.Fatalf("paying wallet %s, want 80 - fee %s", got, fee)
			}
			e.completed(t, "a", m)
			if got := e.masterTotal(ex, "USDT"); !got.Equal(master) {
				t.Fatalf("master %s after the withdrawal, was %s", got, master)
			}
			if got := e.masterWithdrawals(ex, m.ClientID); got != 1 {
				t.Fatalf("%d withdrawals of the master with the entry's client id", got)
			}
			// The lockout after a security change refuses the next one, journaling nothing.
			if err := e.st.StartWithdrawLockout(ctx, "a", store.SecurityEvent{Kind: store.SecurityPassword, At: time.Now()},
				time.Now().Add(24*time.Hour)); err != nil {
				t.Fatal(err)
			}
			_, err = w("locked", "20")
			wantCode(t, err, "withdraw_locked", "")
			if got := e.svc.MovementByKey(ctx, "a", "locked"); got.ID != "" {
				t.Fatalf("a locked withdrawal was journaled: %+v", got)
			}
		})
	}
}

// masterWithdrawals counts the master's withdrawals with a client id.
func (e *env) masterWithdrawals(exchange, clientID string) int {
	e.t.Helper()
	sup, _ := e.host.Get(exchange)
	var n int
	err := sup.Call(context.Background(), "ListWithdrawals", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.ListWithdrawals(ctx, &exchangev1.ListWithdrawalsRequest{Account: e.master[exchange], Asset: "USDT",
			Page: &exchangev1.HistoryPage{StartTime: time.Now().Add(-time.Hour).UnixMilli(), Limit: 100}})
		for _, w := range resp.GetWithdrawals() {
			if w.GetClientId() == clientID {
				n++
			}
		}
		return err
	})
	if err != nil {
		e.t.Fatalf("master withdrawals: %v", err)
	}
	return n
}

// A withdrawal the master's exchange refuses after the first step moved the money: the money goes back to the
// member in the same entry, which reports the refusal; the master ends as it was. A linked key cannot withdraw
// through exhub at all.
func TestBrokerWithdrawRefusedReturns(t *testing.T) {
	for _, ex := range []string{"binance", "okx"} {
		t.Run(ex, func(t *testing.T) {
			e := newEnv(t, envOptions{restrictedMaster: true})
			ctx := ctxT(t)
			e.broker("a", ex)
			e.fund(t, "a", ex)
			master := e.masterTotal(ex, "USDT")
			m, err := e.svc.Withdraw(ctx, Caller{ID: "a"}, "w", WithdrawRequest{Exchange: ex, Asset: "USDT", Amount: "20", Address: "sim1destination"})
			wantCode(t, err, "permission_denied", "")
			if m.State != store.MovementRejected {
				t.Fatalf("entry %+v", m)
			}
			if got := e.balance("a", ex, "USDT", paysFrom(ex)); !got.Equal(dec("100")) {
				t.Fatalf("member %s after the refusal, want 100", got)
			}
			if got := e.masterTotal(ex, "USDT"); !got.Equal(master) {
				t.Fatalf("master %s after the refusal, was %s", got, master)
			}
			list, err := e.svc.List(ctx, "a", store.MovementFilter{Kind: store.MovementWithdraw})
			if err != nil || len(list) != 1 || list[0].State != store.MovementRejected {
				t.Fatalf("journal %+v %v", list, err)
			}
		})
	}
	// A linked key withdraws directly; exhub links only keys without the withdraw permission, so the exchange
	// refuses it and the refusal says that a linked key cannot withdraw through exhub.
	e := newEnv(t, envOptions{restrictedMaster: true})
	ctx := ctxT(t)
	if _, _, err := e.st.EnsureMember(ctx, store.NewMember{ID: "l"}); err != nil {
		t.Fatal(err)
	}
	e.acc.set("l", accounts.Account{ID: "l-okx", Exchange: "okx", Mode: store.AccountLinked, Status: store.AccountActive},
		&exchangev1.AccountRef{ApiKey: restrictedOKXKey, ApiSecret: restrictedOKXSecret, Passphrase: restrictedOKXPassphrase})
	m, err := e.svc.Withdraw(ctx, Caller{ID: "l"}, "w", WithdrawRequest{Exchange: "okx", Asset: "USDT", Amount: "20", Address: "sim1destination"})
	if we := wantCode(t, err, "permission_denied", msgLinkedNoWithdraw); we.ExchangeCode != "50120" || m.State != store.MovementRejected {
		t.Fatalf("linked key's withdrawal %+v %+v", m, we)
	}
}

// A lost answer on either step of a broker withdrawal resolves to exactly one withdrawal: the first step's answer
// lost (the resolver finds it, then sends the second after the grace), the second's lost after the exchange took it
// (found by its client id), and the second never reaching the exchange (sent by the resolver once).
func TestBrokerWithdrawLostAnswers(t *testing.T) {
	for _, ex := range []string{"binance", "okx"} {
		t.Run(ex, func(t *testing.T) {
			e := newEnv(t, envOptions{})
			ctx := ctxT(t)
			e.broker("a", ex)
			e.fund(t, "a", ex)
			n, err := e.svc.network(ctx, mustSup(t, e, ex), mustRef(t, e, "a", ex), "USDT", "")
			if err != nil {
				t.Fatal(err)
			}
			fee := dec(n.GetWithdrawFee())
			master := e.masterTotal(ex, "USDT")
			cases := []struct {
				name string
				arm  func(cid string) (string, faults.Kind)
			}{
				{"pull lost", func(cid string) (string, faults.Kind) { return legPull(cid), faults.AcceptThenDrop }},
				{"withdrawal lost", func(cid string) (string, faults.Kind) { return cid, faults.AcceptThenDrop }},
				{"withdrawal never sent", func(cid string) (string, faults.Kind) { return cid, faults.DropBefore }},
			}
			for i, c := range cases {
				cid := "ex" + randHex(15)
				id, kind := c.arm(cid)
				if err := faults.Arm(http.DefaultClient, e.urls[ex], id, kind); err != nil {
					t.Fatal(err)
				}
				e.useID(cid)
				m, err := e.svc.Withdraw(ctx, Caller{ID: "a"}, c.name, WithdrawRequest{Exchange: ex, Asset: "USDT", Amount: "10",
					Address: "sim1destination"})
				if err != nil || m.State != store.MovementUnknown {
					t.Fatalf("%s: %+v %v", c.name, m, err)
				}
				e.completed(t, "a", m)
				if got := e.masterWithdrawals(ex, cid); got != 1 {
					t.Fatalf("%s: %d withdrawals of the master", c.name, got)
				}
				want := dec("100").Sub(dec("10").Add(fee).Mul(decimal.NewFromInt(int64(i + 1))))
				if got := e.balance("a", ex, "USDT", paysFrom(ex)); !got.Equal(want) {
					t.Fatalf("%s: member %s, want %s", c.name, got, want)
				}
			}
			if got := e.masterTotal(ex, "USDT"); !got.Equal(master) {
				t.Fatalf("master %s, was %s", got, master)
			}
		})
	}
}

func TestConvertQuoteThenTrade(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := ctxT(t)
	e.broker("a", "binance")
	a := Caller{ID: "a"}
	if _, err := e.svc.Faucet(ctx, a, "f", FaucetRequest{Exchange: "binance"}); err != nil {
		t.Fatal(err)
	}
	q, err := e.svc.Quote(ctx, a, QuoteRequest{Exchange: "binance", From: "USDT", To: "BTC", FromAmount: "100"})
	if err != nil || q.QuoteID == "" || q.ExpiresAt.Before(time.Now().Add(-time.Minute)) || !dec(q.ToAmount).IsPositive() {
		t.Fatalf("quote %+v %v", q, err)
	}
	// Binance converts from the funding wallet.
	if _, err := e.svc.Transfer(ctx, a, "to-funding", TransferRequest{Exchange: "binance", Asset: "USDT", Amount: "300",
		From: "TRADING", To: "FUNDING"}); err != nil {
		t.Fatal(err)
	}
	usdt := e.balance("a", "binance", "USDT", funding)
	m, err := e.svc.Convert(ctx, a, "cv", ConvertRequest{Exchange: "binance", QuoteID: q.QuoteID, From: q.From, To: q.To,
		FromAmount: q.FromAmount, ToAmount: q.ToAmount})
	if err != nil || m.State != store.MovementCompleted || m.ExchangeID == "" || m.QuoteID != q.QuoteID {
		t.Fatalf("convert %+v %v", m, err)
	}
	if got := e.balance("a", "binance", "USDT", funding); !got.Equal(usdt.Sub(dec("100"))) {
		t.Fatalf("USDT %s, want %s - 100", got, usdt)
	}
	if got := e.balance("a", "binance", "BTC", funding); !got.Equal(dec(m.ToAmount)) {
		t.Fatalf("BTC %s, want %s", got, m.ToAmount)
	}
}

func TestGiftBetweenMembers(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := ctxT(t)
	e.broker("a", "binance")
	e.broker("b", "binance")
	if _, _, err := e.st.EnsureMember(ctx, store.NewMember{ID: "c"}); err != nil {
		t.Fatal(err)
	}
	a := Caller{ID: "a"}
	if _, err := e.svc.Faucet(ctx, a, "f", FaucetRequest{Exchange: "binance"}); err != nil {
		t.Fatal(err)
	}
	bBefore := e.balance("b", "binance", "USDT", trading)
	g, err := e.svc.Gift(ctx, a, "g1", GiftRequest{Exchange: "binance", Asset: "USDT", Amount: "25", Recipient: "B@example.com"})
	if err != nil || g.State != store.MovementCompleted || g.RecipientMemberID != "b" {
		t.Fatalf("gift %+v %v", g, err)
	}
	if got := e.balance("b", "binance", "USDT", trading); !got.Equal(bBefore.Add(dec("25"))) {
		t.Fatalf("b has %s, want %s + 25", got, bBefore)
	}
	// By member id too.
	if _, err := e.svc.Gift(ctx, a, "g2", GiftRequest{Exchange: "binance", Asset: "USDT", Amount: "5", Recipient: "b"}); err != nil {
		t.Fatal(err)
	}
	// Both sides see it; a third member neither reads nor lists it.
	if got, err := e.svc.Movement(ctx, "b", g.ID); err != nil || got.ID != g.ID {
		t.Fatalf("recipient reads %+v %v", got, err)
	}
	if list, _ := e.svc.List(ctx, "b", store.MovementFilter{Kind: store.MovementGift}); len(list) != 2 {
		t.Fatalf("b's gifts %+v", list)
	}
	if list, _ := e.svc.List(ctx, "c", store.MovementFilter{}); len(list) != 0 {
		t.Fatalf("c sees %+v", list)
	}
	_, err = e.svc.Movement(ctx, "c", g.ID)
	wantCode(t, err, "movement_not_found", "")
	// Unknown recipients, oneself, a member without an account there, a linked key.
	_, err = e.svc.Gift(ctx, a, "g3", GiftRequest{Exchange: "binance", Asset: "USDT", Amount: "5", Recipient: "nobody@example.com"})
	wantCode(t, err, "recipient_not_found", "")
	_, err = e.svc.Gift(ctx, a, "g4", GiftRequest{Exchange: "binance", Asset: "USDT", Amount: "5", Recipient: "c"})
	wantCode(t, err, "recipient_not_found", "")
	_, err = e.svc.Gift(ctx, a, "g5", GiftRequest{Exchange: "binance", Asset: "USDT", Amount: "5", Recipient: "a"})
	wantCode(t, err, "invalid_argument", "")
}

func TestFaucetCapAndLiveMode(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := ctxT(t)
	e.broker("a", "okx")
	a := Caller{ID: "a"}
	for i := range 3 {
		if _, err := e.svc.Faucet(ctx, a, "f"+string(rune('0'+i)), FaucetRequest{Exchange: "okx"}); err != nil {
			t.Fatalf("grant %d: %v", i, err)
		}
	}
	_, err := e.svc.Faucet(ctx, a, "f3", FaucetRequest{Exchange: "okx"})
	wantCode(t, err, "faucet_daily_cap", "")

	live := newEnv(t, envOptions{live: true})
	live.broker("a", "okx")
	_, err = live.svc.Faucet(ctx, a, "f", FaucetRequest{Exchange: "okx"})
	wantCode(t, err, "faucet_demo_only", "")
}

// The faucet's daily cap is exact across BFF replicas on one store: requests at once through two services grant
// exactly cap/amount times (SQLite and PostgreSQL).
func TestFaucetCapAcrossReplicas(t *testing.T) {
	for _, pg := range []bool{false, true} {
		name := "sqlite"
		if pg {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, envOptions{pg: pg})
			ctx := ctxT(t)
			e.broker("a", "okx")
			svcs := []*Service{e.svc, e.replica()}
			const n = 8
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = svcs[i%2].Faucet(ctx, Caller{ID: "a"}, fmt.Sprintf("k%d", i), FaucetRequest{Exchange: "okx"})
				}()
			}
			wg.Wait()
			granted, capped := 0, 0
			for i, err := range errs {
				var we *Error
				switch {
				case err == nil:
					granted++
				case errors.As(err, &we) && we.Code == "faucet_daily_cap":
					capped++
				default:
					t.Fatalf("request %d: %v", i, err)
				}
			}
			if granted != 3 || capped != n-3 {
				t.Fatalf("%d granted, %d capped; want 3 and %d", granted, capped, n-3)
			}
			if got := e.balance("a", "okx", "USDT", trading); !got.Equal(dec("30000")) {
				t.Fatalf("trading %s, want 30000", got)
			}
			list, err := e.svc.List(ctx, "a", store.MovementFilter{Kind: store.MovementFaucet})
			if err != nil || len(list) != 3 {
				t.Fatalf("faucet entries %d %v", len(list), err)
			}
			// A repeated key answers its own grant, not another slot.
			again, err := svcs[1].Faucet(ctx, Caller{ID: "a"}, "k0", FaucetRequest{Exchange: "okx"})
			if errs[0] == nil && (err != nil || again.State != store.MovementCompleted) {
				t.Fatalf("repeat of a granted key: %+v %v", again, err)
			}
		})
	}
}

// completed waits until the journal says the movement completed.
func (e *env) completed(t *testing.T, member string, m store.Movement) store.Movement {
	t.Helper()
	var cur store.Movement
	eventually(t, m.Kind+" completed", func() (string, bool) {
		cur, _ = e.svc.Movement(t.Context(), member, m.ID)
		return cur.State + " " + cur.ExchangeStatus, cur.State == store.MovementCompleted
	})
	return cur
}

func mustSup(t *testing.T, e *env, ex string) *pluginhost.Supervisor {
	t.Helper()
	sup, ok := e.host.Get(ex)
	if !ok {
		t.Fatalf("no plugin %s", ex)
	}
	return sup
}

func mustRef(t *testing.T, e *env, member, ex string) *exchangev1.AccountRef {
	t.Helper()
	ref, err := e.acc.AccountRef(t.Context(), member, ex)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// A lost answer is pending, never a failure, and resolves by asking the exchange: to exactly one movement when the
// exchange executed it, to "failed" (nothing moved) when it did not. Nothing is sent twice.
func TestUnknownOutcomesResolve(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := ctxT(t)
	e.broker("a", "binance")
	e.broker("b", "binance")
	a := Caller{ID: "a"}
	if _, err := e.svc.Faucet(ctx, a, "f", FaucetRequest{Exchange: "binance"}); err != nil {
		t.Fatal(err)
	}
	fundingBefore := e.balance("a", "binance", "USDT", funding)

	// A transfer (Binance's universal transfer takes no client id: found in the history by coin, amount and
	// direction since the intent).
	if err := faults.Arm(http.DefaultClient, e.urls["binance"], binanceemu.TransferFaultID("MAIN_FUNDING", "USDT", "123"),
		faults.AcceptThenError); err != nil {
		t.Fatal(err)
	}
	tr, err := e.svc.Transfer(ctx, a, "lost-transfer", TransferRequest{Exchange: "binance", Asset: "USDT", Amount: "123",
		From: "TRADING", To: "FUNDING"})
	if err != nil || tr.State != store.MovementUnknown {
		t.Fatalf("lost transfer %+v %v", tr, err)
	}
	done := e.completed(t, "a", tr)
	if done.ExchangeID == "" {
		t.Fatalf("resolved without the exchange's id: %+v", done)
	}
	if got := e.balance("a", "binance", "USDT", funding); !got.Equal(fundingBefore.Add(dec("123"))) {
		t.Fatalf("funding %s, want %s + 123 (once)", got, fundingBefore)
	}

	// A withdrawal whose connection dropped after the exchange took it: found by its client id.
	cid := "exw" + randHex(14)
	if err := faults.Arm(http.DefaultClient, e.urls["binance"], cid, faults.AcceptThenDrop); err != nil {
		t.Fatal(err)
	}
	e.useID(cid)
	wd, err := e.svc.Withdraw(ctx, a, "lost-withdraw", WithdrawRequest{Exchange: "binance", Asset: "USDT", Amount: "50",
		Address: "sim1destination"})
	if err != nil || wd.State != store.MovementUnknown || wd.ClientID != cid {
		t.Fatalf("lost withdrawal %+v %v", wd, err)
	}
	// Asked again with the same key meanwhile: the same pending entry, nothing sent.
	if again, err := e.svc.Withdraw(ctx, a, "lost-withdraw", WithdrawRequest{Exchange: "binance", Asset: "USDT", Amount: "50",
		Address: "sim1destination"}); err != nil || again.ID != wd.ID {
		t.Fatalf("repeat %+v %v", again, err)
	}
	e.completed(t, "a", wd)
	list, err := e.svc.List(ctx, "a", store.MovementFilter{Kind: store.MovementWithdraw})
	if err != nil || len(list) != 1 {
		t.Fatalf("withdrawals journaled: %+v %v", list, err)
	}

	// A gift that never reached the exchange: resolved as not executed after the grace; b got nothing.
	bBefore := e.balance("b", "binance", "USDT", trading)
	gid := "exg" + randHex(14)
	if err := faults.Arm(http.DefaultClient, e.urls["binance"], gid, faults.DropBefore); err != nil {
		t.Fatal(err)
	}
	e.useID(gid)
	g, err := e.svc.Gift(ctx, a, "lost-gift", GiftRequest{Exchange: "binance", Asset: "USDT", Amount: "7", Recipient: "b"})
	if err != nil || g.State != store.MovementUnknown {
		t.Fatalf("lost gift %+v %v", g, err)
	}
	eventually(t, "gift resolved", func() (string, bool) {
		cur, _ := e.svc.Movement(ctx, "a", g.ID)
		return cur.State, cur.State == store.MovementFailed
	})
	if got := e.balance("b", "binance", "USDT", trading); !got.Equal(bBefore) {
		t.Fatalf("b has %s after a gift that never executed, want %s", got, bBefore)
	}
	if st := e.svc.Stats(); st.Unknown != 3 || st.Resolved != 2 || st.NotExecuted != 1 || st.InFlight != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// A transfer to the fee-free exchange takes 20 to 20,000 USDT; it is a withdrawal (through the master, as every
// broker withdrawal) to the member's own deposit address there, in transit (acknowledged) until the target's deposit
// history shows it. Both ways: binance to okx (made the fee-free exchange here) and okx to binance.
func TestExchangeTransfer(t *testing.T) {
	e := newEnv(t, envOptions{feeFree: "okx"})
	ctx := ctxT(t)
	e.broker("a", "binance")
	e.broker("a", "okx")
	a := Caller{ID: "a"}
	e.fund(t, "a", "binance")
	req := ExchangeTransferRequest{Exchange: "binance", Target: "okx", Asset: "USDT", Amount: "19"}
	_, err := e.svc.ExchangeTransfer(ctx, a, "x19", req)
	wantCode(t, err, "min_amount", MsgMinimum)
	req.Amount = "20000.01"
	_, err = e.svc.ExchangeTransfer(ctx, a, "xbig", req)
	wantCode(t, err, "max_amount", "")
	req.Amount = "20"
	m, err := e.svc.ExchangeTransfer(ctx, a, "x20", req)
	if err != nil || m.ExchangeID == "" || m.TargetExchange != "okx" || m.Address == "" ||
		(m.State != store.MovementAcknowledged && m.State != store.MovementCompleted) {
		t.Fatalf("exchange transfer %+v %v", m, err)
	}
	// The address is the member's own deposit address on the target.
	sup, _ := e.host.Get("okx")
	var addr string
	if err := sup.Call(ctx, "GetDepositAddress", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.GetDepositAddress(ctx, &exchangev1.GetDepositAddressRequest{Account: mustRef(t, e, "a", "okx"), Asset: "USDT", Network: m.Network})
		addr = resp.GetAddress()
		return err
	}); err != nil || addr != m.Address {
		t.Fatalf("deposit address %q %v, journal %q", addr, err, m.Address)
	}
	if got := e.balance("a", "binance", "USDT", paysFrom("binance")); !got.Equal(dec("80").Sub(dec(m.Fee))) {
		t.Fatalf("binance %s, want 80 - fee %s", got, m.Fee)
	}
	// It arrives: the target's deposit history shows it, and the member's funding wallet there (empty before) has it.
	done := e.completed(t, "a", m)
	if done.ExchangeStatus != "ARRIVED" {
		t.Fatalf("arrived as %+v", done)
	}
	eventually(t, "credited on okx", func() (string, bool) {
		got := e.balance("a", "okx", "USDT", funding)
		return got.String(), got.Equal(dec("20"))
	})

	// And back from okx (its coin list from the emulator's asset/currencies) to binance, which is not fee-free.
	okxBefore := e.balance("a", "okx", "USDT", funding)
	binBefore := e.balance("a", "binance", "USDT", funding)
	back, err := e.svc.ExchangeTransfer(ctx, a, "back", ExchangeTransferRequest{Exchange: "okx", Target: "binance", Asset: "USDT", Amount: "15"})
	if err != nil || back.ExchangeID == "" || back.Address == "" || back.Fee == "" {
		t.Fatalf("okx to binance %+v %v", back, err)
	}
	if got := e.balance("a", "okx", "USDT", funding); !got.Equal(okxBefore.Sub(dec("15")).Sub(dec(back.Fee))) {
		t.Fatalf("okx funding %s, want %s - 15 - fee %s", got, okxBefore, back.Fee)
	}
	if done := e.completed(t, "a", back); done.ExchangeStatus != "ARRIVED" {
		t.Fatalf("arrived as %+v", done)
	}
	eventually(t, "credited on binance", func() (string, bool) {
		got := e.balance("a", "binance", "USDT", funding)
		return got.String(), got.Equal(binBefore.Add(dec("15")))
	})

	// Without an account on the target it is refused before anything is journaled.
	e.broker("z", "binance")
	_, err = e.svc.ExchangeTransfer(ctx, Caller{ID: "z"}, "xz", req)
	if we := wantCode(t, err, "no_account", ""); we.Field != "target" {
		t.Fatalf("field %q", we.Field)
	}
}

// Entries a crash left in state sent are resolved from the exchange's history once stale: the one the exchange
// executed completes, the one it never saw fails; nothing is sent again.
func TestCrashLeftoversResolve(t *testing.T) {
	e := newEnv(t, envOptions{stale: true})
	ctx := ctxT(t)
	acct := e.broker("a", "okx")
	f, err := e.svc.Faucet(ctx, Caller{ID: "a"}, "f", FaucetRequest{Exchange: "okx"})
	if err != nil {
		t.Fatal(err)
	}
	e.completed(t, "a", f)
	// The crash: the intent was written and the transfer made, but no outcome recorded.
	executed := store.Movement{MemberID: "a", Exchange: "okx", AccountID: acct.ID, Kind: store.MovementTransfer,
		ClientID: "excrash" + randHex(12), IdempotencyKey: "crash-1", Asset: "USDT", Amount: "42", FromWallet: "TRADING",
		ToWallet: "FUNDING"}
	m1, _, err := e.st.CreateMovement(ctx, executed)
	if err != nil {
		t.Fatal(err)
	}
	sup, _ := e.host.Get("okx")
	if err := sup.Call(ctx, "Transfer", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		_, err := c.Transfer(ctx, &exchangev1.TransferRequest{Account: mustRef(t, e, "a", "okx"), Asset: "USDT", Amount: "42",
			From: trading, To: funding, ClientId: executed.ClientID})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	never := executed
	never.ClientID, never.IdempotencyKey, never.Amount = "excrash"+randHex(12), "crash-2", "43"
	m2, _, err := e.st.CreateMovement(ctx, never)
	if err != nil {
		t.Fatal(err)
	}
	e.completed(t, "a", m1)
	eventually(t, "never sent: failed", func() (string, bool) {
		cur, _ := e.svc.Movement(ctx, "a", m2.ID)
		return cur.State, cur.State == store.MovementFailed
	})
	eventually(t, "funding holds the one transfer", func() (string, bool) {
		got := e.balance("a", "okx", "USDT", funding)
		return got.String(), got.Equal(dec("42"))
	})
}

// Six requests at once with one key make one movement.
func TestConcurrentKeyOneMovement(t *testing.T) {
	e := newEnv(t, envOptions{pg: true})
	ctx := ctxT(t)
	e.broker("a", "binance")
	a := Caller{ID: "a"}
	if _, err := e.svc.Faucet(ctx, a, "f", FaucetRequest{Exchange: "binance"}); err != nil {
		t.Fatal(err)
	}
	req := TransferRequest{Exchange: "binance", Asset: "USDT", Amount: "3", From: "TRADING", To: "FUNDING"}
	var wg sync.WaitGroup
	ids := make([]string, 6)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := e.svc.Transfer(ctx, a, "burst", req)
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			ids[i] = m.ID
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("answers %v", ids)
		}
	}
	if got := e.balance("a", "binance", "USDT", funding); !got.Equal(dec("3")) {
		t.Fatalf("funding %s after one key sent six times", got)
	}
}

// OKX moves nothing between two sub-accounts: a gift goes through the master in two legs. A lost answer on the
// second leg is pending and resolved by reading both legs back; the recipient gets it exactly once.
func TestGiftViaMaster(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := ctxT(t)
	e.broker("a", "okx")
	e.broker("b", "okx")
	a := Caller{ID: "a"}
	if _, err := e.svc.Faucet(ctx, a, "f", FaucetRequest{Exchange: "okx"}); err != nil {
		t.Fatal(err)
	}
	aBefore, bBefore := e.balance("a", "okx", "USDT", trading), e.balance("b", "okx", "USDT", trading)
	g, err := e.svc.Gift(ctx, a, "g1", GiftRequest{Exchange: "okx", Asset: "USDT", Amount: "25", Recipient: "b"})
	if err != nil {
		t.Fatalf("gift %+v %v", g, err)
	}
	e.completed(t, "a", g)
	eventually(t, "b got 25", func() (string, bool) {
		got := e.balance("b", "okx", "USDT", trading)
		return got.String(), got.Equal(bBefore.Add(dec("25")))
	})
	if got := e.balance("a", "okx", "USDT", trading); !got.Equal(aBefore.Sub(dec("25"))) {
		t.Fatalf("a has %s, want %s - 25", got, aBefore)
	}

	// The second leg's answer is lost (executed, then an error).
	cid := "exg" + randHex(14)
	if err := faults.Arm(http.DefaultClient, e.urls["okx"], legTwo(cid), faults.AcceptThenError); err != nil {
		t.Fatal(err)
	}
	e.useID(cid)
	lost, err := e.svc.Gift(ctx, a, "g2", GiftRequest{Exchange: "okx", Asset: "USDT", Amount: "5", Recipient: "b"})
	if err != nil || lost.State != store.MovementUnknown {
		t.Fatalf("lost second leg %+v %v", lost, err)
	}
	e.completed(t, "a", lost)
	eventually(t, "b got 30 in all", func() (string, bool) {
		got := e.balance("b", "okx", "USDT", trading)
		return got.String(), got.Equal(bBefore.Add(dec("30")))
	})

	// The second leg never reached the exchange: the resolver delivers it once.
	cid = "exh" + randHex(14)
	if err := faults.Arm(http.DefaultClient, e.urls["okx"], legTwo(cid), faults.DropBefore); err != nil {
		t.Fatal(err)
	}
	e.useID(cid)
	dropped, err := e.svc.Gift(ctx, a, "g3", GiftRequest{Exchange: "okx", Asset: "USDT", Amount: "2", Recipient: "b"})
	if err != nil || dropped.State != store.MovementUnknown {
		t.Fatalf("dropped second leg %+v %v", dropped, err)
	}
	e.completed(t, "a", dropped)
	eventually(t, "b got 32 in all", func() (string, bool) {
		got := e.balance("b", "okx", "USDT", trading)
		return got.String(), got.Equal(bBefore.Add(dec("32")))
	})
	if got := e.balance("a", "okx", "USDT", trading); !got.Equal(aBefore.Sub(dec("32"))) {
		t.Fatalf("a has %s, want %s - 32", got, aBefore)
	}
}

// The operator's service gates: withdrawals on binance need two-factor authentication, transfers (and gifts) a
// verified KYC; refused with the gate's code before anything is journaled.
func TestServiceGates(t *testing.T) {
	e := newEnv(t, envOptions{gates: map[string]servicegate.Rules{"binance": {
		servicegate.Withdraw: {servicegate.TwoFactor}, servicegate.Transfer: {servicegate.KYC}}}})
	ctx := ctxT(t)
	e.broker("a", "binance")
	_, err := e.svc.Withdraw(ctx, Caller{ID: "a"}, "w", WithdrawRequest{Exchange: "binance", Asset: "USDT", Amount: "20", Address: "sim1x"})
	if we := wantCode(t, err, servicegate.CodeTwoFactorRequired, ""); we.Status != http.StatusForbidden {
		t.Fatalf("status %d", we.Status)
	}
	_, err = e.svc.ExchangeTransfer(ctx, Caller{ID: "a"}, "x", ExchangeTransferRequest{Exchange: "binance", Target: "okx", Asset: "USDT", Amount: "20"})
	wantCode(t, err, servicegate.CodeTwoFactorRequired, "")
	_, err = e.svc.Transfer(ctx, Caller{ID: "a", TwoFactor: true, AAL: "aal2"}, "t", TransferRequest{Exchange: "binance", Asset: "USDT",
		Amount: "1", From: "TRADING", To: "FUNDING"})
	wantCode(t, err, servicegate.CodeKYCRequired, "")
	for _, k := range []string{"w", "x", "t"} {
		if m := e.svc.MovementByKey(ctx, "a", k); m.ID != "" {
			t.Fatalf("a gated movement was journaled: %+v", m)
		}
	}
	// okx is not gated.
	e.broker("a", "okx")
	if _, err := e.svc.Faucet(ctx, Caller{ID: "a"}, "f", FaucetRequest{Exchange: "okx"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Transfer(ctx, Caller{ID: "a"}, "t-okx", TransferRequest{Exchange: "okx", Asset: "USDT", Amount: "1",
		From: "TRADING", To: "FUNDING"}); err != nil {
		t.Fatal(err)
	}
}
