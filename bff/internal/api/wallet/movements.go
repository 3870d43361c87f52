package wallet

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/store"
	walletsvc "github.com/exhub/exhub/bff/internal/wallet"
)

// Movement is one entry of the member's money-movement journal, as the member sees it.
type Movement struct {
	ID       string `json:"id" doc:"Journal id"`
	Kind     string `json:"kind" enum:"transfer,withdraw,convert,gift,faucet,exchange_transfer"`
	Exchange string `json:"exchange" doc:"The exchange the movement was made on (the source of a transfer to another exchange)"`
	Status   string `json:"status" enum:"pending,processing,in_transit,completed,rejected,failed" doc:"pending: the exchange's answer was lost and is being resolved (never a failure); processing: taken, on its way; in_transit: left for the target exchange, not arrived yet"`
	State    string `json:"state" enum:"sent,acknowledged,completed,rejected,unknown,failed" doc:"The journal's state"`
	// Direction is the member's side: a gift received and a faucet grant come in.
	Direction      string    `json:"direction" enum:"in,out,internal" doc:"in: money came to the member (a gift received, demo funds); out: it left (withdrawal, gift sent, transfer to another exchange); internal: between the member's own wallets or coins"`
	Asset          string    `json:"asset"`
	Amount         string    `json:"amount" doc:"Decimal string; a withdrawal's amount arrives, its fee comes on top"`
	Fee            string    `json:"fee,omitempty"`
	ToAsset        string    `json:"to_asset,omitempty" doc:"Convert: the coin received"`
	ToAmount       string    `json:"to_amount,omitempty"`
	FromWallet     string    `json:"from_wallet,omitempty" enum:"FUNDING,TRADING,"`
	ToWallet       string    `json:"to_wallet,omitempty" enum:"FUNDING,TRADING,"`
	Network        string    `json:"network,omitempty"`
	Address        string    `json:"address,omitempty"`
	Memo           string    `json:"memo,omitempty"`
	TargetExchange string    `json:"target_exchange,omitempty"`
	Recipient      string    `json:"recipient,omitempty" doc:"Gift sent: the recipient's member id"`
	Sender         string    `json:"sender,omitempty" doc:"Gift received: the sender's member id"`
	QuoteID        string    `json:"quote_id,omitempty"`
	ExchangeID     string    `json:"exchange_id,omitempty" doc:"The exchange's id of the movement"`
	ExchangeStatus string    `json:"exchange_status,omitempty" doc:"The exchange's status as last read (PENDING, SUCCESS, FAILED; ARRIVED once a transfer to another exchange shows there)"`
	TxID           string    `json:"tx_id,omitempty"`
	ErrorCode      string    `json:"error_code,omitempty"`
	ExchangeCode   string    `json:"exchange_code,omitempty"`
	Error          string    `json:"error,omitempty" doc:"Why it was refused or failed"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// viewOf is an entry as the member sees it: a gift's recipient sees neither the sender's account nor its errors.
func viewOf(m store.Movement, member string) Movement {
	v := Movement{ID: m.ID, Kind: m.Kind, Exchange: m.Exchange, State: m.State, Asset: m.Asset, Amount: m.Amount,
		Status: statusOf(m), CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
	if m.MemberID != member { // a gift received
		v.Direction, v.Sender = "in", m.MemberID
		return v
	}
	v.Fee, v.ToAsset, v.ToAmount, v.FromWallet, v.ToWallet = m.Fee, m.ToAsset, m.ToAmount, m.FromWallet, m.ToWallet
	v.Network, v.Address, v.Memo, v.TargetExchange, v.Recipient = m.Network, m.Address, m.Memo, m.TargetExchange, m.RecipientMemberID
	v.QuoteID, v.ExchangeID, v.ExchangeStatus, v.TxID = m.QuoteID, m.ExchangeID, m.ExchangeStatus, m.TxID
	v.ErrorCode, v.ExchangeCode, v.Error = m.ErrorCode, m.ExchangeCode, m.ErrorText
	switch m.Kind {
	case store.MovementFaucet:
		v.Direction = "in"
	case store.MovementWithdraw, store.MovementGift, store.MovementExchangeTransfer:
		v.Direction = "out"
	default:
		v.Direction = "internal"
	}
	return v
}

func statusOf(m store.Movement) string {
	switch m.State {
	case store.MovementSent, store.MovementUnknown:
		return "pending"
	case store.MovementAcknowledged:
		if m.Kind == store.MovementExchangeTransfer && m.ExchangeStatus == "SUCCESS" {
			return "in_transit"
		}
		return "processing"
	}
	return m.State
}

// TransferBody moves a coin between the member's funding and trading wallets.
type TransferBody struct {
	Exchange string `json:"exchange" pattern:"^[a-z0-9]+(-[a-z0-9]+)*$" maxLength:"40" example:"binance"`
	Asset    string `json:"asset" maxLength:"20" example:"USDT"`
	Amount   string `json:"amount" maxLength:"40" doc:"Decimal string" example:"100"`
	From     string `json:"from" enum:"FUNDING,TRADING"`
	To       string `json:"to" enum:"FUNDING,TRADING"`
}

// WithdrawBody sends a coin from the funding wallet to an address.
type WithdrawBody struct {
	Exchange string `json:"exchange" pattern:"^[a-z0-9]+(-[a-z0-9]+)*$" maxLength:"40" example:"binance"`
	Asset    string `json:"asset" maxLength:"20" example:"USDT"`
	Network  string `json:"network,omitempty" maxLength:"40" doc:"The coin's network (GET /api/v1/wallet/assets); empty: its first one that takes withdrawals"`
	Amount   string `json:"amount" maxLength:"40" doc:"What arrives (decimal string); the network's fee comes on top"`
	Address  string `json:"address" maxLength:"256"`
	Memo     string `json:"memo,omitempty" maxLength:"128" doc:"Memo or tag, where the network needs one"`
}

// QuoteBody asks for a convert quote by the amount given or wanted.
type QuoteBody struct {
	Exchange   string `json:"exchange" pattern:"^[a-z0-9]+(-[a-z0-9]+)*$" maxLength:"40" example:"binance"`
	From       string `json:"from" maxLength:"20" example:"USDT"`
	To         string `json:"to" maxLength:"20" example:"BTC"`
	FromAmount string `json:"from_amount,omitempty" maxLength:"40" doc:"The amount to convert (or to_amount)"`
	ToAmount   string `json:"to_amount,omitempty" maxLength:"40" doc:"The amount wanted (or from_amount)"`
}

// Quote is a convert quote; POST it to /api/v1/wallet/converts before expires_at.
type Quote struct {
	Exchange   string    `json:"exchange"`
	QuoteID    string    `json:"quote_id"`
	From       string    `json:"from"`
	To         string    `json:"to"`
	FromAmount string    `json:"from_amount"`
	ToAmount   string    `json:"to_amount"`
	Price      string    `json:"price" doc:"to_amount / from_amount"`
	ExpiresAt  time.Time `json:"expires_at"`
}

// ConvertBody trades a quote (its fields as the quote gave them).
type ConvertBody struct {
	Exchange   string `json:"exchange" pattern:"^[a-z0-9]+(-[a-z0-9]+)*$" maxLength:"40" example:"binance"`
	QuoteID    string `json:"quote_id" maxLength:"128"`
	From       string `json:"from" maxLength:"20"`
	To         string `json:"to" maxLength:"20"`
	FromAmount string `json:"from_amount" maxLength:"40"`
	ToAmount   string `json:"to_amount,omitempty" maxLength:"40"`
}

// GiftBody sends a coin to another member.
type GiftBody struct {
	Exchange  string `json:"exchange" pattern:"^[a-z0-9]+(-[a-z0-9]+)*$" maxLength:"40" example:"binance"`
	Asset     string `json:"asset" maxLength:"20" example:"USDT"`
	Amount    string `json:"amount" maxLength:"40"`
	Recipient string `json:"recipient" maxLength:"254" doc:"The recipient's member id or e-mail address"`
}

// FaucetBody asks for demo funds.
type FaucetBody struct {
	Exchange string `json:"exchange" pattern:"^[a-z0-9]+(-[a-z0-9]+)*$" maxLength:"40" example:"binance"`
	Asset    string `json:"asset,omitempty" maxLength:"20" doc:"Empty: the faucet's coin (USDT)"`
}

// ExchangeTransferBody sends a coin to the member's own account on another exchange.
type ExchangeTransferBody struct {
	Exchange string `json:"exchange" pattern:"^[a-z0-9]+(-[a-z0-9]+)*$" maxLength:"40" example:"binance"`
	Target   string `json:"target" pattern:"^[a-z0-9]+(-[a-z0-9]+)*$" maxLength:"40" doc:"The exchange it goes to"`
	Asset    string `json:"asset" maxLength:"20" example:"USDT"`
	Network  string `json:"network,omitempty" maxLength:"40"`
	Amount   string `json:"amount" maxLength:"40"`
}

type transferInput struct {
	IdempotencyKey string `header:"Idempotency-Key" required:"true" minLength:"1" maxLength:"255" doc:"A key the client makes per movement; a retry with the same key and request answers the same movement and never moves money twice"`
	Body           TransferBody
}

type withdrawInput struct {
	IdempotencyKey string `header:"Idempotency-Key" required:"true" minLength:"1" maxLength:"255" doc:"A key the client makes per movement; a retry with the same key and request answers the same movement and never moves money twice"`
	Body           WithdrawBody
}

type quoteInput struct{ Body QuoteBody }

type convertInput struct {
	IdempotencyKey string `header:"Idempotency-Key" required:"true" minLength:"1" maxLength:"255" doc:"A key the client makes per movement; a retry with the same key and request answers the same movement and never moves money twice"`
	Body           ConvertBody
}

type giftInput struct {
	IdempotencyKey string `header:"Idempotency-Key" required:"true" minLength:"1" maxLength:"255" doc:"A key the client makes per movement; a retry with the same key and request answers the same movement and never moves money twice"`
	Body           GiftBody
}

type faucetInput struct {
	IdempotencyKey string `header:"Idempotency-Key" required:"true" minLength:"1" maxLength:"255" doc:"A key the client makes per movement; a retry with the same key and request answers the same movement and never moves money twice"`
	Body           FaucetBody
}

type exchangeTransferInput struct {
	IdempotencyKey string `header:"Idempotency-Key" required:"true" minLength:"1" maxLength:"255" doc:"A key the client makes per movement; a retry with the same key and request answers the same movement and never moves money twice"`
	Body           ExchangeTransferBody
}

type movementInput struct {
	ID string `path:"id" maxLength:"64" doc:"Journal id of the movement"`
}

type listMovementsInput struct {
	Kind     string `query:"kind" enum:"transfer,withdraw,convert,gift,faucet,exchange_transfer," doc:"Empty: every kind"`
	Exchange string `query:"exchange" pattern:"^([a-z0-9]+(-[a-z0-9]+)*)?$" maxLength:"40"`
	State    string `query:"state" enum:"sent,acknowledged,completed,rejected,unknown,failed," doc:"The journal state; empty: every state"`
	Limit    int    `query:"limit" minimum:"0" maximum:"200" doc:"Most rows (0: 50)"`
	Cursor   string `query:"cursor" maxLength:"128" doc:"next_cursor of the previous page, for older rows"`
}

// MovementList is a page of the member's journal, newest first.
type MovementList struct {
	Movements  []Movement `json:"movements"`
	NextCursor string     `json:"next_cursor,omitempty" doc:"Pass as cursor for the next older page"`
}

// movementReply answers a movement with the status its outcome gives.
type movementReply struct {
	Status       int
	CacheControl string `header:"Cache-Control"`
	Body         Movement
}

func (r *routes) registerMovements(api huma.API) {
	post := func(id, path, summary, description string) huma.Operation {
		return r.op(id, http.MethodPost, path, summary, description+" Journaled before it is sent, with a client "+
			"id exhub assigns; the exchange is called once. 201 when the exchange took it (status completed, "+
			"processing or in_transit); 202 with status pending when its answer was lost (resolved by asking the "+
			"exchange: GET the movement later; never a failure). The same Idempotency-Key with the same body "+
			"answers the same movement (200); with another body 422 idempotency_key_reused.",
			http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusConflict,
			http.StatusTooManyRequests, http.StatusServiceUnavailable)
	}
	huma.Register(api, post("create-wallet-transfer", "/api/v1/wallet/transfers", "Transfer between wallets",
		"Moves a coin between the member's funding and trading wallets on one exchange (service gate transfer)."), r.transfer)
	huma.Register(api, post("create-withdrawal", "/api/v1/wallet/withdrawals", "Withdraw",
		"Sends a coin from the member's funding wallet to an address. Checked first with the exchange's coins "+
			"(network, minimum: 'Cannot be less than the minimum amount', memo or tag) and the funding balance ('The "+
			"amount exceeds the balance'; 'Your balance insufficient to cover withdrawal amount and fees.'). 403 "+
			"withdraw_locked during the 24 hours after a security change, aal2_required when the member has an "+
			"authenticator app and this session did not pass it, two_factor_required or kyc_required where the "+
			"exchange's withdrawals are gated."), r.withdraw)
	huma.Register(api, r.op("create-convert-quote", http.MethodPost, "/api/v1/wallet/convert/quotes", "Convert quote",
		"Asks the exchange for a quote to convert from one coin to another, by the amount given (from_amount) or "+
			"wanted (to_amount). A read: nothing moves and nothing is journaled; trade it with POST "+
			"/api/v1/wallet/converts before expires_at.", http.StatusNotFound, http.StatusConflict,
		http.StatusServiceUnavailable), r.quote)
	huma.Register(api, post("create-convert", "/api/v1/wallet/converts", "Convert",
		"Trades a quote from POST /api/v1/wallet/convert/quotes (an expired quote is refused by the exchange)."), r.convert)
	huma.Register(api, post("create-gift", "/api/v1/wallet/gifts", "Send a gift",
		"Sends a coin to another member (member id or e-mail) on one exchange, from the member's sub-account to "+
			"theirs: broker accounts only (409 gift_broker_only for a linked API key); 422 recipient_not_found when no "+
			"member with that id or e-mail can receive it there. The recipient sees it in their movements."), r.gift)
	huma.Register(api, post("create-faucet-grant", "/api/v1/wallet/faucet", "Get demo funds",
		"Demo mode only (403 faucet_demo_only otherwise): the operator's master account grants demo funds to the "+
			"member's sub-account on the exchange, up to a daily cap per member (429 faucet_daily_cap)."), r.faucet)
	huma.Register(api, post("create-exchange-transfer", "/api/v1/wallet/exchange-transfers", "Transfer to another exchange",
		"Sends a coin from the member's funding wallet on one exchange to the member's own deposit address on the "+
			"target exchange (a withdrawal, with its fee). To the fee-free exchange: 20 to 20,000 USDT. The movement "+
			"is in_transit until the target's deposit history shows it, then completed. Refused like a withdrawal "+
			"(lockout, second factor, gates)."), r.exchangeTransfer)
	huma.Register(api, r.op("list-wallet-movements", http.MethodGet, "/api/v1/wallet/movements", "Money movements",
		"The member's journal of transfers, withdrawals, converts, gifts (sent and received), demo funds and "+
			"transfers to other exchanges, newest first, paged with cursor."), r.listMovements)
	huma.Register(api, r.op("get-wallet-movement", http.MethodGet, "/api/v1/wallet/movements/{id}", "One money movement",
		"One entry of the member's journal (or a gift the member received): pending until its outcome is known.",
		http.StatusNotFound), r.getMovement)
}

// caller is the session's member for the wallet service; 503 without the service.
func (r *routes) caller(ctx context.Context) (walletsvc.Caller, error) {
	m, ok := auth.MemberFrom(ctx)
	if !ok {
		return walletsvc.Caller{}, auth.Unauthorized()
	}
	if r.Wallet == nil {
		return walletsvc.Caller{}, unavailable("Money movements are")
	}
	return walletsvc.Caller{ID: m.ID, TwoFactor: m.TOTP, AAL: m.AAL, SecondFactorAt: m.SecondFactorAt}, nil
}

// payer is caller for money leaving the account (withdrawals, transfers to another exchange, gifts): when the
// session's second factor looks older than the wallet's window, Kratos is asked once more past the session cache,
// so a code entered a moment ago (possibly through another replica) counts. The service then applies the rule.
func (r *routes) payer(ctx context.Context) (walletsvc.Caller, error) {
	c, err := r.caller(ctx)
	if err != nil || !r.Wallet.SecondFactorStale(c) {
		return c, err
	}
	m, err := auth.Recheck(ctx)
	if err != nil {
		if errors.Is(err, auth.ErrNotChecked) {
			return c, nil // a guard other than the auth checker: the service decides on what it has
		}
		return walletsvc.Caller{}, auth.ProblemOf(err)
	}
	if m.ID != c.ID {
		return walletsvc.Caller{}, auth.Unauthorized()
	}
	return walletsvc.Caller{ID: m.ID, TwoFactor: m.TOTP, AAL: m.AAL, SecondFactorAt: m.SecondFactorAt}, nil
}

// moveFail maps a wallet service error: a refusal to its problem, anything else as fail does.
func (r *routes) moveFail(ctx context.Context, err error) error {
	var we *walletsvc.Error
	if errors.As(err, &we) {
		p := &Problem{Type: "about:blank", Title: http.StatusText(we.Status), Status: we.Status, Detail: we.Message,
			Code: we.Code, ExchangeCode: we.ExchangeCode, Field: we.Field}
		if we.Code == walletsvc.CodeSecondFactorStale {
			p.StepUp = auth.StepUpURL(ctx)
		}
		return p
	}
	return r.fail(ctx, err)
}

// coinKinds are the coin history kinds a movement's coin is recorded under.
var coinKinds = map[string]string{store.MovementTransfer: store.CoinKindOther, store.MovementGift: store.CoinKindOther,
	store.MovementWithdraw: store.CoinKindWithdraw, store.MovementExchangeTransfer: store.CoinKindExchange,
	store.MovementConvert: store.CoinKindConvert}

// moved answers a movement call: 202 pending, 201 new, 200 a replay; the coin goes to the member's coin history.
func (r *routes) moved(ctx context.Context, c walletsvc.Caller, key string, run func() (store.Movement, error)) (*movementReply, error) {
	prior := r.Wallet.MovementByKey(ctx, c.ID, key)
	m, err := run()
	if err != nil {
		return nil, r.moveFail(ctx, err)
	}
	if kind, ok := coinKinds[m.Kind]; ok && r.Store != nil && prior.ID == "" {
		if _, err := r.Store.RecordCoin(ctx, c.ID, kind, m.Asset); err != nil {
			r.Logger.WarnContext(ctx, "coin history not recorded", "err", err)
		}
	}
	status := http.StatusCreated
	switch {
	case statusOf(m) == "pending":
		status = http.StatusAccepted
	case prior.ID != "":
		status = http.StatusOK
	}
	return &movementReply{Status: status, CacheControl: noStore, Body: viewOf(m, c.ID)}, nil
}

func (r *routes) transfer(ctx context.Context, in *transferInput) (*movementReply, error) {
	c, err := r.caller(ctx)
	if err != nil {
		return nil, err
	}
	b := in.Body
	return r.moved(ctx, c, in.IdempotencyKey, func() (store.Movement, error) {
		return r.Wallet.Transfer(ctx, c, in.IdempotencyKey, walletsvc.TransferRequest{Exchange: b.Exchange, Asset: b.Asset,
			Amount: b.Amount, From: b.From, To: b.To})
	})
}

func (r *routes) withdraw(ctx context.Context, in *withdrawInput) (*movementReply, error) {
	c, err := r.payer(ctx)
	if err != nil {
		return nil, err
	}
	b := in.Body
	return r.moved(ctx, c, in.IdempotencyKey, func() (store.Movement, error) {
		return r.Wallet.Withdraw(ctx, c, in.IdempotencyKey, walletsvc.WithdrawRequest{Exchange: b.Exchange, Asset: b.Asset,
			Network: b.Network, Amount: b.Amount, Address: b.Address, Memo: b.Memo})
	})
}

func (r *routes) quote(ctx context.Context, in *quoteInput) (*reply[Quote], error) {
	c, err := r.caller(ctx)
	if err != nil {
		return nil, err
	}
	b := in.Body
	q, err := r.Wallet.Quote(ctx, c, walletsvc.QuoteRequest{Exchange: b.Exchange, From: b.From, To: b.To,
		FromAmount: b.FromAmount, ToAmount: b.ToAmount})
	if err != nil {
		return nil, r.moveFail(ctx, err)
	}
	return ok(Quote{Exchange: q.Exchange, QuoteID: q.QuoteID, From: q.From, To: q.To, FromAmount: q.FromAmount,
		ToAmount: q.ToAmount, Price: q.Price, ExpiresAt: q.ExpiresAt}), nil
}

func (r *routes) convert(ctx context.Context, in *convertInput) (*movementReply, error) {
	c, err := r.caller(ctx)
	if err != nil {
		return nil, err
	}
	b := in.Body
	return r.moved(ctx, c, in.IdempotencyKey, func() (store.Movement, error) {
		return r.Wallet.Convert(ctx, c, in.IdempotencyKey, walletsvc.ConvertRequest{Exchange: b.Exchange, QuoteID: b.QuoteID,
			From: b.From, To: b.To, FromAmount: b.FromAmount, ToAmount: b.ToAmount})
	})
}

func (r *routes) gift(ctx context.Context, in *giftInput) (*movementReply, error) {
	c, err := r.payer(ctx)
	if err != nil {
		return nil, err
	}
	b := in.Body
	return r.moved(ctx, c, in.IdempotencyKey, func() (store.Movement, error) {
		return r.Wallet.Gift(ctx, c, in.IdempotencyKey, walletsvc.GiftRequest{Exchange: b.Exchange, Asset: b.Asset,
			Amount: b.Amount, Recipient: b.Recipient})
	})
}

func (r *routes) faucet(ctx context.Context, in *faucetInput) (*movementReply, error) {
	c, err := r.caller(ctx)
	if err != nil {
		return nil, err
	}
	b := in.Body
	return r.moved(ctx, c, in.IdempotencyKey, func() (store.Movement, error) {
		return r.Wallet.Faucet(ctx, c, in.IdempotencyKey, walletsvc.FaucetRequest{Exchange: b.Exchange, Asset: b.Asset})
	})
}

func (r *routes) exchangeTransfer(ctx context.Context, in *exchangeTransferInput) (*movementReply, error) {
	c, err := r.payer(ctx)
	if err != nil {
		return nil, err
	}
	b := in.Body
	return r.moved(ctx, c, in.IdempotencyKey, func() (store.Movement, error) {
		return r.Wallet.ExchangeTransfer(ctx, c, in.IdempotencyKey, walletsvc.ExchangeTransferRequest{Exchange: b.Exchange,
			Target: b.Target, Asset: b.Asset, Network: b.Network, Amount: b.Amount})
	})
}

func (r *routes) getMovement(ctx context.Context, in *movementInput) (*reply[Movement], error) {
	c, err := r.caller(ctx)
	if err != nil {
		return nil, err
	}
	m, err := r.Wallet.Movement(ctx, c.ID, in.ID)
	if err != nil {
		return nil, r.moveFail(ctx, err)
	}
	return ok(viewOf(m, c.ID)), nil
}

// movementCursor is "<created Unix µs>_<id>" of the last row of a page.
func movementCursor(m store.Movement) string {
	return strconv.FormatInt(m.CreatedAt.UnixMicro(), 10) + "_" + m.ID
}

func (r *routes) listMovements(ctx context.Context, in *listMovementsInput) (*reply[MovementList], error) {
	c, err := r.caller(ctx)
	if err != nil {
		return nil, err
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 50
	}
	f := store.MovementFilter{Kind: in.Kind, Exchange: in.Exchange, State: in.State, Limit: limit + 1}
	if in.Cursor != "" {
		us, id, found := strings.Cut(in.Cursor, "_")
		n, perr := strconv.ParseInt(us, 10, 64)
		if !found || perr != nil || id == "" {
			return nil, problem(http.StatusUnprocessableEntity, "invalid_argument", "cursor", "The cursor is not one this API gave.")
		}
		f.Before, f.BeforeID = time.UnixMicro(n).UTC(), id
	}
	list, err := r.Wallet.List(ctx, c.ID, f)
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	out := MovementList{Movements: make([]Movement, 0, len(list))}
	if len(list) > limit {
		list = list[:limit]
		out.NextCursor = movementCursor(list[len(list)-1])
	}
	for _, m := range list {
		out.Movements = append(out.Movements, viewOf(m, c.ID))
	}
	return ok(out), nil
}
