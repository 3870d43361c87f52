package conformance

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/plugin-sdk/faults"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// Broker sub-accounts (exchange.v1 1.2). Options.Account is the broker master. One sub-account is created per run
// (its label made from the run's tag) and shared by the broker checks: created, given a key, funded with USDT,
// traded with its own key, and funded through lost answers.

// brokerGrant is what the transfer check moves to the sub-account: enough for one resting order of the plan.
var brokerGrant = decimal.RequireFromString("100.1234")

type brokerState struct {
	sub     *exchangev1.SubAccount
	key     *exchangev1.AccountRef
	granted bool
}

func (e *env) broker() *exchangev1.BrokerCapabilities { return e.desc.GetCapabilities().GetBroker() }

// needBroker says whether the broker checks apply: the plugin claims the calls and an account (the master) is set.
func (e *env) needBroker(what string, claimed func(*exchangev1.BrokerCapabilities) bool) error {
	if err := e.needDescribe(); err != nil {
		return err
	}
	if !claimed(e.broker()) {
		return na("the plugin does not claim %s", what)
	}
	if e.opts.Account == nil {
		return na("no account given (set Options.Account / --account-key to the broker master)")
	}
	return nil
}

func canCreate(b *exchangev1.BrokerCapabilities) bool {
	return b.GetCreateSubAccount() && b.GetCreateSubAccountApiKey()
}

func canFund(b *exchangev1.BrokerCapabilities) bool {
	return canCreate(b) && b.GetSubAccountTransfer() && b.GetSubAccountBalances()
}

// brokerLabel is the run's sub-account label: the run tag, which every label format of the known exchanges takes.
func (e *env) brokerLabel() (string, error) {
	label := e.tag + "sub"
	if f := e.broker().GetLabelFormat(); f.GetPattern() != "" {
		re, err := regexp.Compile(f.GetPattern())
		if err != nil {
			return "", fmt.Errorf("label_format pattern %q: %w", f.GetPattern(), err)
		}
		if !re.MatchString(label) {
			return "", fmt.Errorf("the run's label %q does not match the plugin's label_format %q", label, f.GetPattern())
		}
	}
	return label, nil
}

// subAccount creates the run's sub-account and its key on first use.
func (e *env) subAccount(ctx context.Context) (*brokerState, error) {
	if e.brk.key != nil {
		return &e.brk, nil
	}
	label, err := e.brokerLabel()
	if err != nil {
		return nil, err
	}
	r, err := e.c.CreateSubAccount(ctx, &exchangev1.CreateSubAccountRequest{Account: e.opts.Account, Label: label,
		ClientRequestId: e.clientID("csa")})
	if err != nil {
		return nil, describeErr("CreateSubAccount", err)
	}
	if r.GetSubAccount().GetSubAccountId() == "" {
		return nil, fmt.Errorf("CreateSubAccount answered no sub_account_id: %v", r)
	}
	k, err := e.c.CreateSubAccountApiKey(ctx, &exchangev1.CreateSubAccountApiKeyRequest{Account: e.opts.Account,
		SubAccountId: r.GetSubAccount().GetSubAccountId(), Label: "conformance"})
	if err != nil {
		return nil, describeErr("CreateSubAccountApiKey", err)
	}
	if k.GetApiKey() == "" {
		return nil, fmt.Errorf("CreateSubAccountApiKey answered no api_key")
	}
	e.brk.sub = r.GetSubAccount()
	e.brk.key = &exchangev1.AccountRef{AccountId: "conformance-sub", ApiKey: k.GetApiKey(), ApiSecret: k.GetApiSecret(),
		Passphrase: k.GetPassphrase()}
	return &e.brk, checkKeyPermissions(k.GetPermissions())
}

// checkKeyPermissions: a broker key reads and trades spot, and never withdraws.
func checkKeyPermissions(perms []exchangev1.ApiKeyPermission) error {
	if sdk.HasPermission(perms, exchangev1.ApiKeyPermission_API_KEY_PERMISSION_WITHDRAW) {
		return fmt.Errorf("the sub-account's key may withdraw: %v", perms)
	}
	if !sdk.HasPermission(perms, exchangev1.ApiKeyPermission_API_KEY_PERMISSION_READ) ||
		!sdk.HasPermission(perms, exchangev1.ApiKeyPermission_API_KEY_PERMISSION_SPOT_TRADE) {
		return fmt.Errorf("the sub-account's key must read and trade spot, it reports %v", perms)
	}
	return nil
}

// subUSDT is the sub-account's USDT in its trading wallet, read with the master's key.
func (e *env) subUSDT(ctx context.Context, subID string) (decimal.Decimal, error) {
	r, err := e.c.GetSubAccountBalances(ctx, &exchangev1.GetSubAccountBalancesRequest{Account: e.opts.Account, SubAccountId: subID})
	if err != nil {
		return decimal.Zero, describeErr("GetSubAccountBalances", err)
	}
	sum := decimal.Zero
	for _, b := range r.GetBalances() {
		if b.GetAsset() == "USDT" && b.GetWallet() == exchangev1.WalletType_WALLET_TYPE_TRADING {
			t, err := dec("total", b.GetTotal())
			if err != nil {
				return decimal.Zero, err
			}
			sum = sum.Add(t)
		}
	}
	return sum, nil
}

func (e *env) grant(subID string, amount decimal.Decimal, clientID string) *exchangev1.SubAccountTransferRequest {
	return &exchangev1.SubAccountTransferRequest{Account: e.opts.Account, ToSubAccountId: subID, Asset: "USDT",
		Amount: amount.String(), ClientTransferId: clientID}
}

// checkBrokerSubAccount: a sub-account is created, a repeated label returns it, its key reads and trades but never
// withdraws, a key with withdraw permission is refused, and the sub-account's key is not a broker key.
func checkBrokerSubAccount(ctx context.Context, e *env) error {
	if err := e.needBroker("sub-account creation", canCreate); err != nil {
		return err
	}
	b, err := e.subAccount(ctx)
	if err != nil {
		return err
	}
	label, _ := e.brokerLabel()
	again, err := e.c.CreateSubAccount(ctx, &exchangev1.CreateSubAccountRequest{Account: e.opts.Account, Label: label})
	if err != nil {
		return describeErr("CreateSubAccount (repeated label)", err)
	}
	if !again.GetExisting() || again.GetSubAccount().GetSubAccountId() != b.sub.GetSubAccountId() {
		return fmt.Errorf("a repeated label must return the sub-account %s with existing=true, got %v", b.sub.GetSubAccountId(), again)
	}
	_, err = e.c.CreateSubAccountApiKey(ctx, &exchangev1.CreateSubAccountApiKeyRequest{Account: e.opts.Account,
		SubAccountId: b.sub.GetSubAccountId(),
		Permissions:  []exchangev1.ApiKeyPermission{exchangev1.ApiKeyPermission_API_KEY_PERMISSION_WITHDRAW}})
	if err := reasonIs(err, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT); err != nil {
		return fmt.Errorf("a key with withdraw permission: %w", err)
	}
	_, err = e.c.CreateSubAccount(ctx, &exchangev1.CreateSubAccountRequest{Account: b.key, Label: label + "x"})
	if err := reasonIs(err, exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED); err != nil {
		return fmt.Errorf("the sub-account's key calling CreateSubAccount: %w", err)
	}
	return nil
}

// checkBrokerTransfer: USDT moves master -> sub-account exactly; the same client id again returns the same transfer
// and moves nothing; the same client id with other parameters is DUPLICATE_CLIENT_ORDER_ID; the lookup finds it.
func checkBrokerTransfer(ctx context.Context, e *env) error {
	if err := e.needBroker("sub-account transfers and balances", canFund); err != nil {
		return err
	}
	b, err := e.subAccount(ctx)
	if err != nil {
		return err
	}
	id := b.sub.GetSubAccountId()
	before, err := e.subUSDT(ctx, id)
	if err != nil {
		return err
	}
	req := e.grant(id, brokerGrant, e.clientID("bt1"))
	first, err := e.c.SubAccountTransfer(ctx, req)
	if err != nil {
		return describeErr("SubAccountTransfer", err)
	}
	b.granted = true
	if err := sameDec("amount", first.GetTransfer().GetAmount(), brokerGrant); err != nil {
		return err
	}
	if err := e.waitSubUSDT(ctx, id, before.Add(brokerGrant)); err != nil {
		return err
	}
	second, err := e.c.SubAccountTransfer(ctx, req)
	if err != nil {
		return describeErr("SubAccountTransfer (same client id)", err)
	}
	if second.GetTransfer().GetTransferId() != first.GetTransfer().GetTransferId() {
		return fmt.Errorf("the same client id made a second transfer: %s then %s", first.GetTransfer().GetTransferId(),
			second.GetTransfer().GetTransferId())
	}
	if got, err := e.subUSDT(ctx, id); err != nil {
		return err
	} else if !got.Equal(before.Add(brokerGrant)) {
		return fmt.Errorf("after a repeated client id the sub-account holds %s USDT, want %s", got, before.Add(brokerGrant))
	}
	_, err = e.c.SubAccountTransfer(ctx, e.grant(id, decimal.NewFromInt(1), req.GetClientTransferId()))
	if err := reasonIs(err, exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID); err != nil {
		return fmt.Errorf("a client id reused for another amount: %w", err)
	}
	found, err := e.c.GetSubAccountTransfer(ctx, &exchangev1.GetSubAccountTransferRequest{Account: e.opts.Account,
		ClientTransferId: req.GetClientTransferId(), SubAccountId: id})
	if err != nil {
		return describeErr("GetSubAccountTransfer", err)
	}
	if found.GetTransfer().GetTransferId() != first.GetTransfer().GetTransferId() {
		return fmt.Errorf("GetSubAccountTransfer found %s, want %s", found.GetTransfer().GetTransferId(), first.GetTransfer().GetTransferId())
	}
	return nil
}

// waitSubUSDT waits until the sub-account holds want USDT (an exchange may book a transfer a moment later).
func (e *env) waitSubUSDT(ctx context.Context, id string, want decimal.Decimal) error {
	deadline := time.Now().Add(e.opts.StreamWait)
	for {
		got, err := e.subUSDT(ctx, id)
		if err != nil {
			return err
		}
		if got.Equal(want) {
			return nil
		}
		if time.Now().After(deadline) || got.GreaterThan(want) {
			return fmt.Errorf("the sub-account holds %s USDT, want exactly %s", got, want)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// funded makes sure the run's sub-account has received the grant.
func (e *env) funded(ctx context.Context) (*brokerState, error) {
	b, err := e.subAccount(ctx)
	if err != nil || b.granted {
		return b, err
	}
	if _, err := e.c.SubAccountTransfer(ctx, e.grant(b.sub.GetSubAccountId(), brokerGrant, e.clientID("bt1"))); err != nil {
		return nil, describeErr("SubAccountTransfer", err)
	}
	b.granted = true
	return b, nil
}

// checkBrokerSubTrading: the sub-account's own key places a resting spot order (it is open) and cancels it.
func checkBrokerSubTrading(ctx context.Context, e *env) error {
	if err := e.needBroker("sub-account transfers and balances", canFund); err != nil {
		return err
	}
	if err := e.needTrading(); err != nil {
		return err
	}
	in, ok := e.symbols[exchangev1.MarketType_MARKET_TYPE_SPOT]
	if !ok {
		return na("the plugin has no spot market for a USDT-funded sub-account to trade")
	}
	b, err := e.funded(ctx)
	if err != nil {
		return err
	}
	p, err := e.planFor(ctx, in)
	if err != nil {
		return err
	}
	if cost := p.price.Mul(p.qty); cost.GreaterThan(brokerGrant) {
		return na("one resting order of %s costs %s USDT, more than the %s USDT grant", in.GetSymbol(), cost, brokerGrant)
	}
	req := e.limitBuy(p, p.price, p.qty, e.clientID("bso"))
	req.Account = b.key
	r, err := e.c.PlaceOrder(ctx, req)
	if err != nil {
		return describeErr("PlaceOrder with the sub-account's key", err)
	}
	o := r.GetOrder()
	got, err := e.c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: b.key, MarketType: p.mt, Symbol: in.GetSymbol(), OrderId: o.GetOrderId()})
	if err != nil {
		return describeErr("GetOrder with the sub-account's key", err)
	}
	if got.GetOrder().GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_NEW {
		return fmt.Errorf("the sub-account's resting order is %v, want NEW", got.GetOrder().GetStatus())
	}
	// The master does not see the sub-account's order.
	if _, err := e.c.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: e.opts.Account, MarketType: p.mt, Symbol: in.GetSymbol(),
		ClientOrderId: req.GetClientOrderId()}); reasonIs(err, exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND) != nil {
		_, _ = e.c.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: b.key, MarketType: p.mt, Symbol: in.GetSymbol(), OrderId: o.GetOrderId()})
		return fmt.Errorf("the master's key finds the sub-account's order by client id (want ORDER_NOT_FOUND): %v", err)
	}
	c, err := e.c.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: b.key, MarketType: p.mt, Symbol: in.GetSymbol(), OrderId: o.GetOrderId()})
	if err != nil {
		return describeErr("CancelOrder with the sub-account's key", err)
	}
	if c.GetOrder().GetStatus() != exchangev1.OrderStatus_ORDER_STATUS_CANCELLED {
		return fmt.Errorf("the cancelled order is %v, want CANCELLED", c.GetOrder().GetStatus())
	}
	return nil
}

// checkBrokerUnknownOutcome: a transfer whose answer is lost is UNKNOWN_OUTCOME, and resolves by client id to
// exactly one transfer (executed) or none (never sent); sending it again with the same client id moves nothing more.
func checkBrokerUnknownOutcome(ctx context.Context, e *env) error {
	if err := e.needBroker("sub-account transfers and balances", canFund); err != nil {
		return err
	}
	if e.opts.FaultURL == "" {
		return na("no fault endpoint (set Options.FaultURL / --fault-url to an emulator)")
	}
	b, err := e.subAccount(ctx)
	if err != nil {
		return err
	}
	id := b.sub.GetSubAccountId()
	amount := decimal.RequireFromString("1.5")
	for i, k := range []faults.Kind{faults.AcceptThenError, faults.AcceptThenDrop, faults.DropBefore} {
		cid := e.clientID(fmt.Sprintf("buo%d", i))
		before, err := e.subUSDT(ctx, id)
		if err != nil {
			return err
		}
		if err := faults.Arm(e.opts.HTTPClient, e.opts.FaultURL, cid, k); err != nil {
			return err
		}
		_, err = e.c.SubAccountTransfer(ctx, e.grant(id, amount, cid))
		if !sdk.IsUnknownOutcome(err) {
			return fmt.Errorf("%s: a lost answer must be an unknown outcome, got %v", k, err)
		}
		want := before
		if k.Executes() {
			want = before.Add(amount)
		}
		deadline := time.Now().Add(e.opts.StreamWait)
		for {
			r, err := e.c.GetSubAccountTransfer(ctx, &exchangev1.GetSubAccountTransferRequest{Account: e.opts.Account,
				ClientTransferId: cid, SubAccountId: id})
			if err == nil {
				if !k.Executes() {
					return fmt.Errorf("%s: the transfer was never sent, yet GetSubAccountTransfer found %s", k, r.GetTransfer().GetTransferId())
				}
				if err := sameDec("amount", r.GetTransfer().GetAmount(), amount); err != nil {
					return fmt.Errorf("%s: %w", k, err)
				}
				break
			}
			if reasonIs(err, exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND) != nil {
				return fmt.Errorf("%s: resolving by client id: %w", k, describeErr("GetSubAccountTransfer", err))
			}
			if !k.Executes() {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s: the transfer executed, but GetSubAccountTransfer by client id %s does not find it", k, cid)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err := e.waitSubUSDT(ctx, id, want); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		if k.Executes() {
			// The host never resends; a plugin that is asked again must still not move the money twice.
			if _, err := e.c.SubAccountTransfer(ctx, e.grant(id, amount, cid)); err != nil {
				return fmt.Errorf("%s: the same client id after the lost answer: %w", k, describeErr("SubAccountTransfer", err))
			}
			if err := e.waitSubUSDT(ctx, id, want); err != nil {
				return fmt.Errorf("%s: after resending: %w", k, err)
			}
		}
	}
	return nil
}
