package wallet

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/store"
	walletsvc "github.com/exhub/exhub/bff/internal/wallet"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// callTimeout bounds one plugin call of a read.
const callTimeout = 15 * time.Second

// defaultPrecision is the decimals of a coin's amount in a transfer or convert (the contract names no per-coin
// precision; the exchanges' wallet amounts have 8 decimals). A network's comes from the wallet service.
const defaultPrecision = 8

// Wallet names in answers.
const (
	WalletFunding = "funding"
	WalletTrading = "trading"
)

// --- answers ---------------------------------------------------------------------------------------------------

// CoinBalance is one coin in one wallet.
type CoinBalance struct {
	Coin      string `json:"coin" example:"BTC"`
	Available string `json:"available" doc:"Free to move or trade" example:"0.5"`
	Frozen    string `json:"frozen" doc:"Held by open orders, positions or pending withdrawals" example:"0.1"`
	Total     string `json:"total" example:"0.6"`
	USDTPrice string `json:"usdt_price" doc:"The coin's last price in USDT on this exchange (1 for USDT); empty when the exchange lists no COIN/USDT market" example:"65000"`
	USDTValue string `json:"usdt_value" doc:"total x usdt_price; empty without a price" example:"39000"`
}

// WalletBalances are one wallet's coins.
type WalletBalances struct {
	Wallet    string        `json:"wallet" enum:"funding,trading"`
	Coins     []CoinBalance `json:"coins" doc:"Coins with a non-zero total, by coin"`
	TotalUSDT string        `json:"total_usdt" doc:"The sum of the coins' usdt_value (coins without a price count 0)"`
}

// ExchangeBalances are the member's wallets on one exchange, or why they are missing.
type ExchangeBalances struct {
	Exchange  string           `json:"exchange" example:"binance"`
	Status    string           `json:"status" enum:"ok,no_account,error" doc:"ok; no_account: the member has no account there (yet); error: the exchange could not be asked"`
	Error     *ExchangeError   `json:"error,omitempty" doc:"Set when status is error"`
	Wallets   []WalletBalances `json:"wallets" doc:"funding then trading (empty unless ok)"`
	TotalUSDT string           `json:"total_usdt" doc:"Both wallets' estimate in USDT (\"0\" unless ok)"`
	Unpriced  []string         `json:"unpriced" doc:"Coins held here that have no USDT price (left out of the totals)"`
}

// ExchangeError says why one exchange's part is missing.
type ExchangeError struct {
	Code   string `json:"code" example:"exchange_unavailable"`
	Detail string `json:"detail"`
}

// Overview is the member's balances across every exchange.
type Overview struct {
	Exchanges []ExchangeBalances `json:"exchanges" doc:"In the configured order; exchanges without a plugin (coming soon) are left out"`
	TotalUSDT string             `json:"total_usdt" doc:"The estimate across every exchange that answered"`
	Time      int64              `json:"time" doc:"When the balances were read (Unix ms)"`
}

// Network is one way to deposit or withdraw a coin.
type Network struct {
	Network         string `json:"network" example:"TRC20"`
	Name            string `json:"name" example:"Tron (TRC20)"`
	DepositEnabled  bool   `json:"deposit_enabled"`
	WithdrawEnabled bool   `json:"withdraw_enabled"`
	WithdrawFee     string `json:"withdraw_fee" example:"1"`
	WithdrawMin     string `json:"withdraw_min" example:"10"`
	WithdrawMax     string `json:"withdraw_max" doc:"Empty when the exchange sets none" example:"1000000"`
	MemoRequired    bool   `json:"memo_required" doc:"A memo or tag must go with the address"`
	Confirmations   int32  `json:"confirmations"`
	WithdrawStep    string `json:"withdraw_step" doc:"Smallest withdrawal increment: an amount is a whole multiple of it. Empty when the exchange does not say" example:"0.00000001"`
	Precision       int32  `json:"precision" doc:"Most decimals of an amount on this network: those of withdraw_step, else 8 or more when the fee or minimum need more" example:"8"`
}

// Asset is a coin with its networks (the spec's GetCurrencies and GetNetWorks).
type Asset struct {
	Coin      string    `json:"coin" example:"USDT"`
	Name      string    `json:"name" example:"Tether USD"`
	Precision int32     `json:"precision" doc:"Most decimals of an amount of this coin (transfer, convert)" example:"8"`
	Networks  []Network `json:"networks"`
}

// AssetsOutput lists an exchange's coins.
type AssetsOutput struct {
	Exchange string  `json:"exchange"`
	Assets   []Asset `json:"assets" doc:"By coin"`
	// WithdrawWallet is the member's wallet withdrawals and transfers to another exchange are paid from there.
	WithdrawWallet string `json:"withdraw_wallet" enum:"funding,trading" doc:"The member's wallet that withdrawals and transfers to another exchange are paid from here: trading for an account exhub opened on an exchange whose broker transfers take the spot wallet only (Binance), else funding"`
}

// DepositAddress is where to send a coin.
type DepositAddress struct {
	Exchange string `json:"exchange"`
	Coin     string `json:"coin"`
	Network  string `json:"network"`
	Address  string `json:"address"`
	Memo     string `json:"memo,omitempty" doc:"Memo or tag to send with the address, when the network needs one"`
}

// DepositExchange is the member's target exchange for deposits.
type DepositExchange struct {
	Exchange string `json:"exchange" doc:"Exchange slug; empty when the member chose none"`
}

// Deposit is one deposit on an exchange.
type Deposit struct {
	ID      string `json:"id"`
	Coin    string `json:"coin"`
	Network string `json:"network"`
	Amount  string `json:"amount"`
	Address string `json:"address"`
	Memo    string `json:"memo,omitempty"`
	TxID    string `json:"tx_id,omitempty"`
	Status  string `json:"status" enum:"pending,success,failed,unknown"`
	Time    int64  `json:"time" doc:"Unix ms"`
}

// Withdrawal is one withdrawal on an exchange.
type Withdrawal struct {
	ID       string `json:"id"`
	ClientID string `json:"client_id,omitempty"`
	Coin     string `json:"coin"`
	Network  string `json:"network"`
	Amount   string `json:"amount" doc:"Amount received; the fee came on top"`
	Fee      string `json:"fee"`
	Address  string `json:"address"`
	Memo     string `json:"memo,omitempty"`
	TxID     string `json:"tx_id,omitempty"`
	Status   string `json:"status" enum:"pending,success,failed,unknown"`
	Time     int64  `json:"time" doc:"Unix ms"`
}

// Transfer is one transfer between an exchange's funding and trading wallets.
type Transfer struct {
	ID       string `json:"id"`
	ClientID string `json:"client_id,omitempty"`
	Coin     string `json:"coin"`
	Amount   string `json:"amount"`
	From     string `json:"from" enum:"funding,trading,"`
	To       string `json:"to" enum:"funding,trading,"`
	Status   string `json:"status" enum:"pending,success,failed,unknown"`
	Time     int64  `json:"time" doc:"Unix ms"`
}

// Convert is one conversion of a coin into another.
type Convert struct {
	ID         string `json:"id"`
	QuoteID    string `json:"quote_id,omitempty"`
	FromCoin   string `json:"from_coin"`
	ToCoin     string `json:"to_coin"`
	FromAmount string `json:"from_amount"`
	ToAmount   string `json:"to_amount"`
	Price      string `json:"price" doc:"to_amount / from_amount"`
	Status     string `json:"status" enum:"pending,success,failed,unknown"`
	Time       int64  `json:"time" doc:"Unix ms"`
}

// HistoryPage is one page of an exchange's history, newest first.
type HistoryPage[T any] struct {
	Exchange   string `json:"exchange"`
	Items      []T    `json:"items"`
	NextCursor string `json:"next_cursor,omitempty" doc:"Pass as cursor for older rows; absent on the last page"`
}

// CoinHistory is the member's last coins of one kind.
type CoinHistory struct {
	Kind  string   `json:"kind" enum:"OTHER,DEPOSIT,WITHDRAW,EXCHANGE,CONVERT"`
	Coins []string `json:"coins" doc:"At most 5 distinct coins, newest first"`
}

// --- requests --------------------------------------------------------------------------------------------------

// ExchangeParam names one exchange.
type ExchangeParam struct {
	Exchange string `query:"exchange" required:"true" pattern:"^[a-z0-9]+(-[a-z0-9]+)*$" maxLength:"40" doc:"Exchange slug" example:"binance"`
}

// HistoryParams select a window of an exchange's history.
type HistoryParams struct {
	ExchangeParam
	Coin   string `query:"coin" pattern:"^[A-Z0-9]{1,20}$" doc:"Only this coin; empty: every coin" example:"USDT"`
	Start  int64  `query:"start" minimum:"0" doc:"Oldest time (Unix ms); 0: unbounded"`
	End    int64  `query:"end" minimum:"0" doc:"Newest time (Unix ms); 0: unbounded"`
	Limit  int32  `query:"limit" minimum:"0" maximum:"100" doc:"Most rows (0: the exchange's default)"`
	Cursor string `query:"cursor" maxLength:"512" doc:"next_cursor of the previous page, for older rows"`
}

func (p HistoryParams) page() *exchangev1.HistoryPage {
	return &exchangev1.HistoryPage{StartTime: p.Start, EndTime: p.End, Limit: p.Limit, Cursor: p.Cursor}
}

func (p HistoryParams) check() error {
	if p.Start != 0 && p.End != 0 && p.Start > p.End {
		return problem(http.StatusUnprocessableEntity, "invalid_argument", "start", "The start of the date range is after its end.")
	}
	return nil
}

type depositAddressInput struct {
	ExchangeParam
	Coin    string `query:"coin" required:"true" pattern:"^[A-Z0-9]{1,20}$" example:"USDT"`
	Network string `query:"network" pattern:"^[A-Za-z0-9._-]{0,40}$" doc:"Empty: the coin's default network" example:"TRC20"`
}

type putDepositExchangeInput struct {
	Body DepositExchange
}

type coinHistoryQuery struct {
	Kind string `query:"kind" required:"true" enum:"OTHER,DEPOSIT,WITHDRAW,EXCHANGE,CONVERT"`
}

type recordCoinInput struct {
	Body struct {
		Kind string `json:"kind" enum:"OTHER,DEPOSIT,WITHDRAW,EXCHANGE,CONVERT"`
		Coin string `json:"coin" pattern:"^[A-Z0-9]{1,20}$" example:"BTC"`
	}
}

// --- routes ----------------------------------------------------------------------------------------------------

func (r *routes) registerReads(api huma.API) {
	huma.Register(api, r.op("get-wallet-overview", http.MethodGet, "/api/v1/wallet/overview", "Balances on every exchange",
		"The member's funding and trading wallets on every configured exchange: per coin available, frozen and total, "+
			"with the USDT estimate from the exchange's COIN/USDT last price (USDT is 1), per-exchange totals and the "+
			"total across exchanges. An exchange that cannot be asked is listed with status error (never a 500); one "+
			"where the member has no account with status no_account; one without a plugin (coming soon) is left out."), r.overview)
	huma.Register(api, r.op("list-wallet-assets", http.MethodGet, "/api/v1/wallet/assets", "Coins and networks",
		"An exchange's coins and, per coin, its networks: deposit and withdrawal enabled, withdrawal fee, minimum "+
			"and maximum, whether a memo or tag is required, and the precision of amounts.", http.StatusNotFound, http.StatusConflict), r.assets)
	huma.Register(api, r.op("get-deposit-address", http.MethodGet, "/api/v1/wallet/deposit-address", "Deposit address",
		"The member's deposit address for a coin on a network of an exchange, with its memo or tag when the network "+
			"needs one.", http.StatusNotFound, http.StatusConflict), r.depositAddress)
	huma.Register(api, r.op("get-deposit-exchange", http.MethodGet, "/api/v1/wallet/deposit-exchange", "Deposit exchange",
		"The exchange the member chose as their target for deposits (empty when none)."), r.getDepositExchange)
	huma.Register(api, r.op("put-deposit-exchange", http.MethodPut, "/api/v1/wallet/deposit-exchange", "Set the deposit exchange",
		"Choose the exchange deposits go to by default (a configured exchange).", http.StatusNotFound), r.putDepositExchange)
	huma.Register(api, r.op("list-wallet-deposits", http.MethodGet, "/api/v1/wallet/deposits", "Deposit history",
		"The exchange's deposits into the member's account, newest first, paged by cursor.", http.StatusNotFound, http.StatusConflict), r.deposits)
	huma.Register(api, r.op("list-wallet-withdrawals", http.MethodGet, "/api/v1/wallet/withdrawals", "Withdrawal history",
		"The exchange's withdrawals from the member's account with their statuses, newest first, paged by cursor.",
		http.StatusNotFound, http.StatusConflict), r.withdrawals)
	huma.Register(api, r.op("list-wallet-transfers", http.MethodGet, "/api/v1/wallet/transfers", "Transfer history",
		"Transfers between the member's funding and trading wallets on the exchange, newest first, paged by cursor.",
		http.StatusNotFound, http.StatusConflict), r.transfers)
	huma.Register(api, r.op("list-wallet-converts", http.MethodGet, "/api/v1/wallet/converts", "Convert history",
		"The member's conversions on the exchange, newest first, paged by cursor. With coin, only conversions from "+
			"or to that coin (a page may then hold fewer rows than limit).", http.StatusNotFound, http.StatusConflict), r.converts)
	huma.Register(api, r.op("get-wallet-settings", http.MethodGet, "/api/v1/wallet/settings", "Wallet settings",
		"What the wallet pages show of the operator's settings: whether demo funds can be asked for (demo mode), "+
			"and the fee-free exchange with its coin and range for transfers to another exchange."), r.settings)
	huma.Register(api, r.op("get-coin-history", http.MethodGet, "/api/v1/wallet/coin-history", "Recently used coins",
		"The last 5 distinct coins the member picked in a kind of wallet form, newest first."), r.coinHistory)
	huma.Register(api, r.op("record-coin-history", http.MethodPost, "/api/v1/wallet/coin-history", "Remember a coin",
		"Put a coin at the front of the member's history for a kind (moving it there when it is in already); "+
			"answers the history afterwards.", http.StatusNotFound), r.recordCoin)
}

// --- plugin access ---------------------------------------------------------------------------------------------

// knownExchange is 404 exchange_not_found for a slug that is not configured.
func (r *routes) knownExchange(slug string) error {
	if !slices.Contains(r.Exchanges, slug) {
		return problem(http.StatusNotFound, "exchange_not_found", "exchange", "This exchange is not available.")
	}
	return nil
}

// account is the member's account on the exchange and its plugin.
func (r *routes) account(ctx context.Context, memberID, exchange string) (*pluginhost.Supervisor, *exchangev1.AccountRef, error) {
	if err := r.knownExchange(exchange); err != nil {
		return nil, nil, err
	}
	if r.Accounts == nil || r.Plugins == nil {
		return nil, nil, unavailable("The wallet")
	}
	sup, ok := r.Plugins.Get(exchange)
	if !ok {
		return nil, nil, problem(http.StatusNotFound, "exchange_not_found", "exchange", "This exchange is not available.")
	}
	ref, err := r.Accounts.AccountRef(ctx, memberID, exchange)
	if err != nil {
		if r.NoAccount != nil && errors.Is(err, r.NoAccount) {
			return nil, nil, problem(http.StatusConflict, "no_account", "exchange",
				"You have no account on this exchange yet. Link one in Dashboard > Accounts, or wait a moment while it is set up.")
		}
		return nil, nil, err
	}
	return sup, ref, nil
}

// call runs one plugin read bounded by callTimeout.
func call(ctx context.Context, sup *pluginhost.Supervisor, method string, fn func(context.Context, exchangev1.ExchangeClient) error) error {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return sup.Call(cctx, method, fn)
}

// readProblem maps a failed plugin read to its problem.
func readProblem(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, pluginhost.ErrUnavailable) || sdk.IsUnknownOutcome(err) {
		return problem(http.StatusServiceUnavailable, "exchange_unavailable", "",
			"The exchange is not reachable right now; try again shortly.")
	}
	d := sdk.DetailOf(err)
	switch d.GetReason() {
	case exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, exchangev1.ErrorReason_ERROR_REASON_CLOCK_SKEW:
		return problem(http.StatusServiceUnavailable, "exchange_unavailable", "",
			"The exchange is not reachable right now; try again shortly.")
	case exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED:
		return problem(http.StatusTooManyRequests, "rate_limited", "",
			"The exchange is receiving too many requests from this account; try again in a few seconds.")
	case exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED, exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED:
		return problem(http.StatusForbidden, sdk.ReasonName(d.GetReason()), "",
			"The exchange refused this account's API key. Check the key or link it again.")
	case exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED:
		return problem(http.StatusUnprocessableEntity, "not_supported", "", "This exchange does not support that.")
	case exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, exchangev1.ErrorReason_ERROR_REASON_PRECISION:
		field := d.GetField()
		switch field {
		case "asset":
			field = "coin"
		case "start_time":
			field = "start"
		}
		msg := sdk.MessageOf(err)
		if m := d.GetExchangeMessage(); m != "" {
			msg = m
		}
		p := problem(http.StatusUnprocessableEntity, "invalid_argument", field, "The exchange refused a value: "+msg)
		p.ExchangeCode = d.GetExchangeCode()
		return p
	default:
		p := problem(http.StatusBadGateway, sdk.ReasonName(d.GetReason()), "", "The exchange could not process the request; try again shortly.")
		p.ExchangeCode = d.GetExchangeCode()
		return p
	}
}

// --- overview --------------------------------------------------------------------------------------------------

func (r *routes) overview(ctx context.Context, _ *struct{}) (*reply[Overview], error) {
	id, err := memberID(ctx)
	if err != nil {
		return nil, err
	}
	// Exchanges without a plugin (coming soon) hold no wallets: they are left out. One whose plugin is down is an
	// error entry.
	exchanges := make([]string, 0, len(r.Exchanges))
	for _, ex := range r.Exchanges {
		if r.Plugins == nil {
			exchanges = append(exchanges, ex)
		} else if _, ok := r.Plugins.Get(ex); ok {
			exchanges = append(exchanges, ex)
		}
	}
	out := Overview{Exchanges: make([]ExchangeBalances, len(exchanges)), Time: time.Now().UnixMilli()}
	var wg sync.WaitGroup
	for i, ex := range exchanges {
		wg.Add(1)
		go func() { // owned: the handler waits for every exchange below
			defer wg.Done()
			out.Exchanges[i] = r.exchangeBalances(ctx, id, ex)
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, r.fail(ctx, ctx.Err())
	}
	total := decimal.Zero
	for _, e := range out.Exchanges {
		if t, err := decimal.NewFromString(e.TotalUSDT); err == nil {
			total = total.Add(t)
		}
	}
	out.TotalUSDT = total.String()
	return ok(out), nil
}

// exchangeBalances reads one exchange's wallets; a failure is the entry's status, never the answer's.
func (r *routes) exchangeBalances(ctx context.Context, memberID, exchange string) ExchangeBalances {
	out := ExchangeBalances{Exchange: exchange, Status: "ok", Wallets: []WalletBalances{}, TotalUSDT: "0", Unpriced: []string{}}
	fail := func(err error) ExchangeBalances {
		out.Status = "error"
		var p *Problem
		if errors.As(err, &p) {
			if p.Code == "no_account" {
				out.Status = "no_account"
				return out
			}
			out.Error = &ExchangeError{Code: p.Code, Detail: p.Detail}
			return out
		}
		if !errors.Is(err, context.Canceled) {
			r.Logger.WarnContext(ctx, "wallet overview: an exchange failed", "exchange", exchange, "err", err)
		}
		out.Error = &ExchangeError{Code: "internal", Detail: "The balances of this exchange could not be read."}
		return out
	}
	sup, ref, err := r.account(ctx, memberID, exchange)
	if err != nil {
		return fail(err)
	}
	var resp *exchangev1.GetBalancesResponse
	if err := call(ctx, sup, "GetBalances", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		var err error
		resp, err = c.GetBalances(ctx, &exchangev1.GetBalancesRequest{Account: ref})
		return err
	}); err != nil {
		return fail(readProblem(ctx, err))
	}
	prices := r.usdtPrices(ctx, exchange)
	byWallet := map[exchangev1.WalletType][]CoinBalance{}
	totals := map[exchangev1.WalletType]decimal.Decimal{}
	unpriced := map[string]bool{}
	for _, b := range resp.GetBalances() {
		total, err := decimal.NewFromString(b.GetTotal())
		if err != nil || total.IsZero() {
			continue
		}
		w := b.GetWallet()
		if w != exchangev1.WalletType_WALLET_TYPE_FUNDING && w != exchangev1.WalletType_WALLET_TYPE_TRADING {
			continue
		}
		cb := CoinBalance{Coin: b.GetAsset(), Available: decOr(b.GetAvailable()), Frozen: decOr(b.GetLocked()), Total: total.String()}
		if p, ok := prices[b.GetAsset()]; ok {
			v := total.Mul(p)
			cb.USDTPrice, cb.USDTValue = p.String(), v.String()
			totals[w] = totals[w].Add(v)
		} else {
			unpriced[b.GetAsset()] = true
		}
		byWallet[w] = append(byWallet[w], cb)
	}
	sum := decimal.Zero
	for _, w := range []exchangev1.WalletType{exchangev1.WalletType_WALLET_TYPE_FUNDING, exchangev1.WalletType_WALLET_TYPE_TRADING} {
		coins := byWallet[w]
		if coins == nil {
			coins = []CoinBalance{}
		}
		sort.Slice(coins, func(i, j int) bool { return coins[i].Coin < coins[j].Coin })
		out.Wallets = append(out.Wallets, WalletBalances{Wallet: walletName(w), Coins: coins, TotalUSDT: totals[w].String()})
		sum = sum.Add(totals[w])
	}
	out.TotalUSDT = sum.String()
	for c := range unpriced {
		out.Unpriced = append(out.Unpriced, c)
	}
	sort.Strings(out.Unpriced)
	return out
}

// usdtPrices are the last prices in USDT of the coins the exchange lists against USDT on its spot market (USDT 1).
// Without a market (or when it cannot be read) only USDT is priced.
func (r *routes) usdtPrices(ctx context.Context, exchange string) map[string]decimal.Decimal {
	out := map[string]decimal.Decimal{"USDT": decimal.NewFromInt(1)}
	if r.Prices == nil {
		return out
	}
	instruments, _, err := r.Prices.Instruments(ctx, exchange, "SPOT")
	if err != nil {
		return out
	}
	tickers, _, err := r.Prices.Tickers(ctx, exchange, "SPOT")
	if err != nil {
		return out
	}
	last := make(map[string]string, len(tickers))
	for _, t := range tickers {
		last[t.Symbol] = t.Last
	}
	for _, in := range instruments {
		if in.Quote != "USDT" || in.Base == "" {
			continue
		}
		if p, err := decimal.NewFromString(last[in.Symbol]); err == nil && p.IsPositive() {
			out[in.Base] = p
		}
	}
	return out
}

func decOr(s string) string {
	d, err := decimal.NewFromString(s)
	if err != nil {
		return "0"
	}
	return d.String()
}

func walletName(w exchangev1.WalletType) string {
	switch w {
	case exchangev1.WalletType_WALLET_TYPE_FUNDING:
		return WalletFunding
	case exchangev1.WalletType_WALLET_TYPE_TRADING:
		return WalletTrading
	default:
		return ""
	}
}

func statusName(s exchangev1.TransferStatus) string {
	switch s {
	case exchangev1.TransferStatus_TRANSFER_STATUS_PENDING:
		return "pending"
	case exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS:
		return "success"
	case exchangev1.TransferStatus_TRANSFER_STATUS_FAILED:
		return "failed"
	default:
		return "unknown"
	}
}

// --- assets and deposit addresses ------------------------------------------------------------------------------

func (r *routes) assets(ctx context.Context, in *ExchangeParam) (*reply[AssetsOutput], error) {
	id, err := memberID(ctx)
	if err != nil {
		return nil, err
	}
	sup, ref, err := r.account(ctx, id, in.Exchange)
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	var resp *exchangev1.ListAssetsResponse
	if err := call(ctx, sup, "ListAssets", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		var err error
		resp, err = c.ListAssets(ctx, &exchangev1.ListAssetsRequest{Account: ref})
		return err
	}); err != nil {
		return nil, r.fail(ctx, readProblem(ctx, err))
	}
	out := AssetsOutput{Exchange: in.Exchange, Assets: make([]Asset, 0, len(resp.GetAssets())), WithdrawWallet: "funding"}
	if r.Wallet != nil {
		out.WithdrawWallet = strings.ToLower(r.Wallet.WithdrawWallet(ctx, id, in.Exchange))
	}
	for _, a := range resp.GetAssets() {
		as := Asset{Coin: a.GetAsset(), Name: a.GetName(), Precision: defaultPrecision, Networks: make([]Network, 0, len(a.GetNetworks()))}
		for _, n := range a.GetNetworks() {
			as.Networks = append(as.Networks, Network{
				Network: n.GetNetwork(), Name: n.GetName(), DepositEnabled: n.GetDepositEnabled(), WithdrawEnabled: n.GetWithdrawEnabled(),
				WithdrawFee: decOr(n.GetWithdrawFee()), WithdrawMin: decOr(n.GetWithdrawMin()), WithdrawMax: n.GetWithdrawMax(),
				WithdrawStep: n.GetWithdrawStep(), MemoRequired: n.GetMemoRequired(), Confirmations: n.GetConfirmations(),
				Precision: walletsvc.NetworkPrecision(n),
			})
		}
		out.Assets = append(out.Assets, as)
	}
	sort.Slice(out.Assets, func(i, j int) bool { return out.Assets[i].Coin < out.Assets[j].Coin })
	return ok(out), nil
}

func (r *routes) depositAddress(ctx context.Context, in *depositAddressInput) (*reply[DepositAddress], error) {
	id, err := memberID(ctx)
	if err != nil {
		return nil, err
	}
	sup, ref, err := r.account(ctx, id, in.Exchange)
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	var resp *exchangev1.GetDepositAddressResponse
	if err := call(ctx, sup, "GetDepositAddress", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		var err error
		resp, err = c.GetDepositAddress(ctx, &exchangev1.GetDepositAddressRequest{Account: ref, Asset: in.Coin, Network: in.Network})
		return err
	}); err != nil {
		return nil, r.fail(ctx, readProblem(ctx, err))
	}
	network := resp.GetNetwork()
	if network == "" {
		network = in.Network
	}
	return ok(DepositAddress{Exchange: in.Exchange, Coin: in.Coin, Network: network, Address: resp.GetAddress(), Memo: resp.GetMemo()}), nil
}

// --- deposit exchange and coin history -------------------------------------------------------------------------

// storeProblem maps a store error: a member the store does not know yet, a bad value, or a 500.
func storeProblem(err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return problem(http.StatusNotFound, "member_not_found", "", "Your member record is not ready yet; reload the page.")
	case errors.Is(err, store.ErrInvalid):
		return problem(http.StatusUnprocessableEntity, "invalid_argument", "", "A value is not valid.")
	}
	return err
}

func (r *routes) getDepositExchange(ctx context.Context, _ *struct{}) (*reply[DepositExchange], error) {
	id, err := memberID(ctx)
	if err != nil {
		return nil, err
	}
	if r.Store == nil {
		return nil, unavailable("The wallet")
	}
	ex, err := r.Store.DepositExchange(ctx, id)
	if err != nil {
		return nil, r.fail(ctx, storeProblem(err))
	}
	if ex != "" && !slices.Contains(r.Exchanges, ex) {
		ex = "" // an exchange the operator removed since
	}
	return ok(DepositExchange{Exchange: ex}), nil
}

func (r *routes) putDepositExchange(ctx context.Context, in *putDepositExchangeInput) (*reply[DepositExchange], error) {
	id, err := memberID(ctx)
	if err != nil {
		return nil, err
	}
	if r.Store == nil {
		return nil, unavailable("The wallet")
	}
	if err := r.knownExchange(in.Body.Exchange); err != nil {
		return nil, err
	}
	if err := r.Store.SetDepositExchange(ctx, id, in.Body.Exchange); err != nil {
		return nil, r.fail(ctx, storeProblem(err))
	}
	return ok(DepositExchange{Exchange: in.Body.Exchange}), nil
}

func (r *routes) coinHistory(ctx context.Context, in *coinHistoryQuery) (*reply[CoinHistory], error) {
	id, err := memberID(ctx)
	if err != nil {
		return nil, err
	}
	if r.Store == nil {
		return nil, unavailable("The wallet")
	}
	coins, err := r.Store.CoinHistory(ctx, id, in.Kind)
	if err != nil {
		return nil, r.fail(ctx, storeProblem(err))
	}
	return ok(CoinHistory{Kind: in.Kind, Coins: coins}), nil
}

func (r *routes) recordCoin(ctx context.Context, in *recordCoinInput) (*reply[CoinHistory], error) {
	id, err := memberID(ctx)
	if err != nil {
		return nil, err
	}
	if r.Store == nil {
		return nil, unavailable("The wallet")
	}
	coins, err := r.Store.RecordCoin(ctx, id, in.Body.Kind, in.Body.Coin)
	if err != nil {
		return nil, r.fail(ctx, storeProblem(err))
	}
	return ok(CoinHistory{Kind: in.Body.Kind, Coins: coins}), nil
}

func (r *routes) settings(ctx context.Context, _ *struct{}) (*reply[Settings], error) {
	if _, err := memberID(ctx); err != nil {
		return nil, err
	}
	return ok(r.Settings), nil
}

// --- histories -------------------------------------------------------------------------------------------------

func (r *routes) deposits(ctx context.Context, in *HistoryParams) (*reply[HistoryPage[Deposit]], error) {
	sup, ref, err := r.history(ctx, in)
	if err != nil {
		return nil, err
	}
	var resp *exchangev1.ListDepositsResponse
	if err := call(ctx, sup, "ListDeposits", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		var err error
		resp, err = c.ListDeposits(ctx, &exchangev1.ListDepositsRequest{Account: ref, Asset: in.Coin, Page: in.page()})
		return err
	}); err != nil {
		return nil, r.fail(ctx, readProblem(ctx, err))
	}
	out := HistoryPage[Deposit]{Exchange: in.Exchange, Items: []Deposit{}, NextCursor: resp.GetNextCursor()}
	for _, d := range resp.GetDeposits() {
		out.Items = append(out.Items, Deposit{ID: d.GetId(), Coin: d.GetAsset(), Network: d.GetNetwork(), Amount: d.GetAmount(),
			Address: d.GetAddress(), Memo: d.GetMemo(), TxID: d.GetTxId(), Status: statusName(d.GetStatus()), Time: d.GetTime()})
	}
	return ok(out), nil
}

func (r *routes) withdrawals(ctx context.Context, in *HistoryParams) (*reply[HistoryPage[Withdrawal]], error) {
	sup, ref, err := r.history(ctx, in)
	if err != nil {
		return nil, err
	}
	var resp *exchangev1.ListWithdrawalsResponse
	if err := call(ctx, sup, "ListWithdrawals", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		var err error
		resp, err = c.ListWithdrawals(ctx, &exchangev1.ListWithdrawalsRequest{Account: ref, Asset: in.Coin, Page: in.page()})
		return err
	}); err != nil {
		return nil, r.fail(ctx, readProblem(ctx, err))
	}
	out := HistoryPage[Withdrawal]{Exchange: in.Exchange, Items: []Withdrawal{}, NextCursor: resp.GetNextCursor()}
	for _, w := range resp.GetWithdrawals() {
		out.Items = append(out.Items, Withdrawal{ID: w.GetId(), ClientID: w.GetClientId(), Coin: w.GetAsset(), Network: w.GetNetwork(),
			Amount: w.GetAmount(), Fee: w.GetFee(), Address: w.GetAddress(), Memo: w.GetMemo(), TxID: w.GetTxId(),
			Status: statusName(w.GetStatus()), Time: w.GetTime()})
	}
	return ok(out), nil
}

func (r *routes) transfers(ctx context.Context, in *HistoryParams) (*reply[HistoryPage[Transfer]], error) {
	sup, ref, err := r.history(ctx, in)
	if err != nil {
		return nil, err
	}
	var resp *exchangev1.ListTransfersResponse
	if err := call(ctx, sup, "ListTransfers", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		var err error
		resp, err = c.ListTransfers(ctx, &exchangev1.ListTransfersRequest{Account: ref, Asset: in.Coin, Page: in.page()})
		return err
	}); err != nil {
		return nil, r.fail(ctx, readProblem(ctx, err))
	}
	out := HistoryPage[Transfer]{Exchange: in.Exchange, Items: []Transfer{}, NextCursor: resp.GetNextCursor()}
	for _, t := range resp.GetTransfers() {
		out.Items = append(out.Items, Transfer{ID: t.GetId(), ClientID: t.GetClientId(), Coin: t.GetAsset(), Amount: t.GetAmount(),
			From: walletName(t.GetFrom()), To: walletName(t.GetTo()), Status: statusName(t.GetStatus()), Time: t.GetTime()})
	}
	return ok(out), nil
}

func (r *routes) converts(ctx context.Context, in *HistoryParams) (*reply[HistoryPage[Convert]], error) {
	sup, ref, err := r.history(ctx, in)
	if err != nil {
		return nil, err
	}
	var resp *exchangev1.ListConvertsResponse
	if err := call(ctx, sup, "ListConverts", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		var err error
		resp, err = c.ListConverts(ctx, &exchangev1.ListConvertsRequest{Account: ref, Page: in.page()})
		return err
	}); err != nil {
		return nil, r.fail(ctx, readProblem(ctx, err))
	}
	out := HistoryPage[Convert]{Exchange: in.Exchange, Items: []Convert{}, NextCursor: resp.GetNextCursor()}
	for _, c := range resp.GetConverts() {
		if in.Coin != "" && c.GetFromAsset() != in.Coin && c.GetToAsset() != in.Coin {
			continue
		}
		out.Items = append(out.Items, Convert{ID: c.GetId(), QuoteID: c.GetQuoteId(), FromCoin: c.GetFromAsset(), ToCoin: c.GetToAsset(),
			FromAmount: c.GetFromAmount(), ToAmount: c.GetToAmount(), Price: c.GetPrice(), Status: statusName(c.GetStatus()), Time: c.GetTime()})
	}
	return ok(out), nil
}

// history checks a history request and opens the member's account.
func (r *routes) history(ctx context.Context, in *HistoryParams) (*pluginhost.Supervisor, *exchangev1.AccountRef, error) {
	id, err := memberID(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := in.check(); err != nil {
		return nil, nil, err
	}
	sup, ref, err := r.account(ctx, id, in.Exchange)
	if err != nil {
		return nil, nil, r.fail(ctx, err)
	}
	return sup, ref, nil
}
