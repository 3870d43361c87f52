package emulator

import (
	"errors"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
)

// walletStore keeps what Binance reports about wallet operations and the venue does not record in that form:
// universal transfers, withdrawal requests (address, network, client id) and convert orders. Bounded per account.
type walletStore struct {
	mu          sync.Mutex
	next        int64
	transfers   map[string][]transferRec
	withdrawals map[string][]withdrawRec
	converts    map[string][]convertRec
}

const walletKeep = 1000

type transferRec struct {
	Asset     string `json:"asset"`
	Amount    string `json:"amount"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	TranID    int64  `json:"tranId"`
	Timestamp int64  `json:"timestamp"`
}

type withdrawRec struct {
	id, coin, address, network, clientID string
	amount, fee                          decimal.Decimal
	time                                 int64
}

type convertRec struct {
	QuoteID      string `json:"quoteId"`
	OrderID      int64  `json:"orderId"`
	OrderStatus  string `json:"orderStatus"`
	FromAsset    string `json:"fromAsset"`
	FromAmount   string `json:"fromAmount"`
	ToAsset      string `json:"toAsset"`
	ToAmount     string `json:"toAmount"`
	Ratio        string `json:"ratio"`
	InverseRatio string `json:"inverseRatio"`
	CreateTime   int64  `json:"createTime"`
}

func keepLast[T any](list []T) []T {
	if len(list) > walletKeep {
		return slices.Clone(list[len(list)-walletKeep:])
	}
	return list
}

func (s *Server) walletRoutes(mux *http.ServeMux) {
	w := func(weight int, fn func(*req) (any, error)) route {
		return route{sec: secSigned, weight: weight, fn: fn}
	}
	s.handle(mux, "POST /sapi/v1/asset/transfer", route{sec: secSigned, weight: 900, clientIDs: transferIDs, fn: s.sapiTransfer})
	s.handle(mux, "GET /sapi/v1/asset/transfer", w(1, s.sapiTransferHistory))
	s.handle(mux, "POST /sapi/v1/asset/get-funding-asset", w(1, s.sapiFundingAsset))
	s.handle(mux, "POST /sapi/v3/asset/getUserAsset", w(5, s.sapiUserAsset))
	s.handle(mux, "GET /sapi/v1/capital/config/getall", w(10, s.sapiCoins))
	s.handle(mux, "GET /sapi/v1/capital/deposit/address", w(10, s.sapiDepositAddress))
	s.handle(mux, "GET /sapi/v1/capital/deposit/hisrec", w(1, s.sapiDepositHistory))
	s.handle(mux, "POST /sapi/v1/capital/withdraw/apply", route{sec: secSigned, weight: 900, clientIDs: paramIDs("withdrawOrderId"), fn: s.sapiWithdraw})
	s.handle(mux, "GET /sapi/v1/capital/withdraw/history", w(18000/600, s.sapiWithdrawHistory))
	s.handle(mux, "POST /sapi/v1/convert/getQuote", w(200, s.sapiConvertQuote))
	s.handle(mux, "POST /sapi/v1/convert/acceptQuote", route{sec: secSigned, weight: 500, clientIDs: paramIDs("quoteId"), fn: s.sapiConvertAccept})
	s.handle(mux, "GET /sapi/v1/convert/orderStatus", w(100, s.sapiConvertStatus))
	s.handle(mux, "GET /sapi/v1/convert/tradeFlow", w(3000/100, s.sapiConvertFlow))
	// Not Binance: the demo faucet, so a paper account can be topped up over HTTP.
	s.handle(mux, "GET /sapi/v1/account/apiRestrictions", w(1, s.apiRestrictions))
	s.handle(mux, "POST /sapi/v1/emulator/faucet", w(1, s.sapiFaucet))
	s.brokerRoutes(mux)
}

func walletOf(name string) (venue.Wallet, bool) {
	switch name {
	case "MAIN", "UMFUTURE":
		return venue.TradingWallet, true
	case "FUNDING":
		return venue.Funding, true
	}
	return 0, false
}

func walletError(err error) error {
	var e *apiError
	if errors.As(err, &e) {
		return e
	}
	switch {
	case errors.Is(err, venue.ErrInsufficientFunds):
		return errf(http.StatusBadRequest, -5002, "You have insufficient balance.")
	case errors.Is(err, venue.ErrUnknownAsset):
		return errf(http.StatusBadRequest, -4003, "Asset not supported.")
	case errors.Is(err, venue.ErrWithdrawMin):
		return errf(http.StatusBadRequest, -4022, "The amount must be greater than the minimum.")
	case errors.Is(err, venue.ErrQuoteExpired):
		return errf(http.StatusBadRequest, 345239, "Quote expired or unknown.")
	case errors.Is(err, venue.ErrOutOfRange), errors.Is(err, venue.ErrBadNumber), errors.Is(err, venue.ErrPrecision):
		return errf(http.StatusBadRequest, codeBadParam, "Data sent for parameter 'amount' is not valid.")
	}
	return errf(http.StatusInternalServerError, codeUnknown, "An unknown error occurred while processing the request.")
}

func (s *Server) sapiTransfer(q *req) (any, error) {
	typ := q.str("type")
	if typ == "" {
		return nil, badParam("type")
	}
	from, to, ok := strings.Cut(typ, "_")
	fw, ok1 := walletOf(from)
	tw, ok2 := walletOf(to)
	if !ok || !ok1 || !ok2 || from == to {
		return nil, illegal("type")
	}
	asset := strings.ToUpper(q.str("asset"))
	if asset == "" {
		return nil, badParam("asset")
	}
	amount, err := q.decimalParam("amount")
	if err != nil {
		return nil, err
	}
	if !amount.IsPositive() {
		return nil, badParam("amount")
	}
	if fw != tw {
		if _, err := s.v.Transfer(s.ctx, q.account, asset, amount, fw, tw); err != nil {
			return nil, walletError(err)
		}
	} else if bs, err := s.v.Balances(q.account, fw); err == nil {
		// Spot and USD-M futures share the venue's trading wallet: the transfer only checks the funds.
		free := decimal.Zero
		for _, b := range bs {
			if b.Asset == asset {
				free = b.Free
			}
		}
		if free.LessThan(amount) {
			return nil, walletError(venue.ErrInsufficientFunds)
		}
	}
	// The spot user data stream reports deltas of the spot wallet as balanceUpdate.
	now := s.v.Now()
	switch {
	case from == "MAIN" && to != "MAIN":
		s.pushUser(q.account, false, mustJSON(map[string]any{"e": "balanceUpdate", "E": now, "a": asset,
			"d": amount.Neg().String(), "T": now}))
	case to == "MAIN" && from != "MAIN":
		s.pushUser(q.account, false, mustJSON(map[string]any{"e": "balanceUpdate", "E": now, "a": asset,
			"d": amount.String(), "T": now}))
	}
	s.wallet.mu.Lock()
	defer s.wallet.mu.Unlock()
	s.wallet.next++
	id := 100000000000 + s.wallet.next
	rec := transferRec{Asset: asset, Amount: amount.String(), Type: typ, Status: "CONFIRMED", TranID: id, Timestamp: s.v.Now()}
	s.wallet.transfers[q.account] = keepLast(append(s.wallet.transfers[q.account], rec))
	return map[string]int64{"tranId": id}, nil
}

func (s *Server) sapiTransferHistory(q *req) (any, error) {
	typ := q.str("type")
	if typ == "" {
		return nil, badParam("type")
	}
	start, err := q.int64Param("startTime", 0)
	if err != nil {
		return nil, err
	}
	end, err := q.int64Param("endTime", 0)
	if err != nil {
		return nil, err
	}
	current, err := q.intParam("current", 1)
	if err != nil {
		return nil, err
	}
	size, err := q.intParam("size", 10)
	if err != nil {
		return nil, err
	}
	size = max(1, min(size, 100))
	current = max(current, 1)
	s.wallet.mu.Lock()
	var rows []transferRec
	for _, r := range s.wallet.transfers[q.account] {
		if r.Type == typ && (start == 0 || r.Timestamp >= start) && (end == 0 || r.Timestamp <= end) {
			rows = append(rows, r)
		}
	}
	s.wallet.mu.Unlock()
	total := len(rows)
	// Newest first, paged.
	slices.Reverse(rows)
	lo := min((current-1)*size, len(rows))
	hi := min(lo+size, len(rows))
	out := map[string]any{"total": total}
	if hi > lo {
		out["rows"] = rows[lo:hi]
	}
	return out, nil
}

func (s *Server) sapiFundingAsset(q *req) (any, error) {
	return s.assetList(q, venue.Funding)
}

func (s *Server) sapiUserAsset(q *req) (any, error) {
	return s.assetList(q, venue.TradingWallet)
}

func (s *Server) assetList(q *req, w venue.Wallet) (any, error) {
	bs, err := s.v.Balances(q.account, w)
	if err != nil {
		return nil, walletError(err)
	}
	only := strings.ToUpper(q.str("asset"))
	out := []map[string]string{}
	for _, b := range bs {
		if only != "" && b.Asset != only || b.Total.IsZero() {
			continue
		}
		m := map[string]string{"asset": b.Asset, "free": b.Free.String(), "locked": b.Locked.String(), "freeze": "0",
			"withdrawing": "0", "btcValuation": "0"}
		if w == venue.TradingWallet {
			m["ipoable"] = "0"
		}
		out = append(out, m)
	}
	return out, nil
}

func (s *Server) sapiCoins(q *req) (any, error) {
	assets := s.v.Assets()
	names := make([]string, 0, len(assets))
	for a := range assets {
		names = append(names, a)
	}
	sort.Strings(names)
	free := map[string]decimal.Decimal{}
	if bs, err := s.v.Balances(q.account, 0); err == nil {
		for _, b := range bs {
			free[b.Asset] = free[b.Asset].Add(b.Free)
		}
	}
	out := make([]map[string]any, 0, len(names))
	for _, a := range names {
		c := assets[a]
		// withdrawIntegerMultiple is the venue asset's precision (1e-8 when it names none).
		step := decimal.New(1, -8)
		if c.Scale > 0 {
			step = decimal.New(1, -c.Scale)
		}
		out = append(out, map[string]any{
			"coin": a, "name": a, "depositAllEnable": true, "withdrawAllEnable": true, "free": free[a].String(),
			"locked": "0", "freeze": "0", "withdrawing": "0", "ipoing": "0", "ipoable": "0", "storage": "0",
			"isLegalMoney": false, "trading": true,
			"networkList": []map[string]any{{
				"network": "SIM", "coin": a, "name": "Simulated network", "isDefault": true, "depositEnable": true,
				"withdrawEnable": true, "withdrawFee": c.WithdrawFee.String(), "withdrawMin": c.WithdrawMin.String(),
				"withdrawMax": "9999999999.99999999", "withdrawIntegerMultiple": step.String(), "minConfirm": 1,
				"unLockConfirm": 0, "addressRegex": "", "memoRegex": "", "sameAddress": false,
				"depositDesc": "", "withdrawDesc": "", "specialTips": "", "busy": false, "resetAddressStatus": false,
				"estimatedArrivalTime": 1, "depositDust": "0.00000001", "contractAddress": "",
			}},
		})
	}
	return out, nil
}

func (s *Server) sapiDepositAddress(q *req) (any, error) {
	coin := strings.ToUpper(q.str("coin"))
	if coin == "" {
		return nil, badParam("coin")
	}
	if _, ok := s.v.Assets()[coin]; !ok {
		return nil, walletError(venue.ErrUnknownAsset)
	}
	addr, err := s.v.DepositAddress(q.account, coin)
	if err != nil {
		return nil, walletError(err)
	}
	return map[string]string{"address": addr, "coin": coin, "tag": "", "url": ""}, nil
}

// timeWindow applies Binance's startTime/endTime/limit filters to times, newest first.
func timeWindow(q *req, def, maxLimit int) (int64, int64, int, error) {
	start, err := q.int64Param("startTime", 0)
	if err != nil {
		return 0, 0, 0, err
	}
	end, err := q.int64Param("endTime", 0)
	if err != nil {
		return 0, 0, 0, err
	}
	limit, err := q.intParam("limit", def)
	if err != nil {
		return 0, 0, 0, err
	}
	return start, end, max(1, min(limit, maxLimit)), nil
}

func (s *Server) sapiDepositHistory(q *req) (any, error) {
	start, end, limit, err := timeWindow(q, 1000, 1000)
	if err != nil {
		return nil, err
	}
	coin := strings.ToUpper(q.str("coin"))
	txs, err := s.v.WalletHistory(q.account)
	if err != nil {
		return nil, walletError(err)
	}
	out := []map[string]any{}
	for i := len(txs) - 1; i >= 0 && len(out) < limit; i-- {
		t := txs[i]
		if !strings.HasPrefix(t.ID, "dep") || coin != "" && t.Asset != coin ||
			start > 0 && t.Time < start || end > 0 && t.Time > end {
			continue
		}
		// A chain deposit is pending (0) until credited (1); its tx id is the chain's.
		status, confirms, txID := 1, "1/1", t.TxID
		if t.Status == venue.TxPending {
			status, confirms = 0, "0/1"
		}
		if txID == "" {
			txID = "sim-" + t.ID
		}
		out = append(out, map[string]any{
			"id": t.ID, "amount": t.Amount.String(), "coin": t.Asset, "network": t.Network, "status": status,
			"address": t.Address, "addressTag": "", "txId": txID, "insertTime": t.Time, "completeTime": t.Updated,
			"transferType": 0, "confirmTimes": confirms, "unlockConfirm": 0, "walletType": 0,
		})
	}
	return out, nil
}

func (s *Server) sapiWithdraw(q *req) (any, error) {
	if !s.mayWithdraw(q.apiKey) {
		return nil, errf(http.StatusUnauthorized, codeRejectedMBXKey, "Invalid API-key, IP, or permissions for action.")
	}
	coin := strings.ToUpper(q.str("coin"))
	if coin == "" {
		return nil, badParam("coin")
	}
	addr := q.str("address")
	if addr == "" {
		return nil, badParam("address")
	}
	amount, err := q.decimalParam("amount")
	if err != nil {
		return nil, err
	}
	if !amount.IsPositive() {
		return nil, badParam("amount")
	}
	network := q.str("network")
	if network == "" {
		network = "SIM"
	}
	var tx venue.WalletTx
	switch q.str("walletType") {
	case "", "1":
		tx, err = s.v.Withdraw(s.ctx, q.account, coin, amount, addr)
	case "0":
		tx, err = s.withdrawFromSpot(q.account, coin, amount, addr)
	default:
		return nil, illegal("walletType")
	}
	if err != nil {
		return nil, walletError(err)
	}
	s.wallet.mu.Lock()
	s.wallet.withdrawals[q.account] = keepLast(append(s.wallet.withdrawals[q.account], withdrawRec{id: tx.ID, coin: coin,
		address: addr, network: network, clientID: q.str("withdrawOrderId"), amount: tx.Amount, fee: tx.Fee, time: tx.Time}))
	s.wallet.mu.Unlock()
	return map[string]string{"id": tx.ID}, nil
}

// mayWithdraw reports whether a key holds the withdraw permission. A broker sub-account's key never does (only the
// master withdraws); a key given permissions with SetPermissions has it when they enable withdrawals; other keys
// (the demo key, Config.Credentials) may withdraw. Binance answers a key without it with -2015.
func (s *Server) mayWithdraw(key string) bool {
	if s.subAccountKey(key) {
		return false
	}
	s.tm.mu.Lock()
	p, set := s.tm.perms[key]
	s.tm.mu.Unlock()
	return !set || p.EnableWithdrawals
}

// withdrawFromSpot pays a withdrawal (walletType 0) from the spot wallet. The venue pays withdrawals from its
// funding wallet, so the emulator moves amount and fee there first and back when the withdrawal is refused; the
// move shows in no transfer history (simplification).
func (s *Server) withdrawFromSpot(account, coin string, amount decimal.Decimal, addr string) (venue.WalletTx, error) {
	c, ok := s.v.Assets()[coin]
	if !ok {
		return venue.WalletTx{}, venue.ErrUnknownAsset
	}
	if amount.LessThan(c.WithdrawMin) {
		return venue.WalletTx{}, venue.ErrWithdrawMin
	}
	total := amount.Add(c.WithdrawFee)
	if _, err := s.v.Transfer(s.ctx, account, coin, total, venue.TradingWallet, venue.Funding); err != nil {
		return venue.WalletTx{}, err
	}
	tx, err := s.v.Withdraw(s.ctx, account, coin, amount, addr)
	if err != nil {
		if _, berr := s.v.Transfer(s.ctx, account, coin, total, venue.Funding, venue.TradingWallet); berr != nil {
			s.log.Error("spot withdrawal refused and its funds not moved back", "account", account, "err", berr)
		}
		return venue.WalletTx{}, err
	}
	return tx, nil
}

func binanceTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05")
}

func (s *Server) sapiWithdrawHistory(q *req) (any, error) {
	start, end, limit, err := timeWindow(q, 1000, 1000)
	if err != nil {
		return nil, err
	}
	coin := strings.ToUpper(q.str("coin"))
	s.wallet.mu.Lock()
	recs := slices.Clone(s.wallet.withdrawals[q.account])
	s.wallet.mu.Unlock()
	// The venue knows each withdrawal's state on the chain: processing (4) until it is sent, then completed (6).
	txs, _ := s.v.WalletHistory(q.account)
	state := make(map[string]venue.WalletTx, len(txs))
	for _, t := range txs {
		state[t.ID] = t
	}
	out := []map[string]any{}
	for i := len(recs) - 1; i >= 0 && len(out) < limit; i-- {
		r := recs[i]
		if coin != "" && r.coin != coin || start > 0 && r.time < start || end > 0 && r.time > end {
			continue
		}
		status, txID, done := 6, "sim-"+r.id, r.time
		if t, ok := state[r.id]; ok {
			if t.TxID != "" {
				txID = t.TxID
			}
			if t.Status == venue.TxProcessing {
				status, txID = 4, ""
			}
			done = t.Updated
		}
		m := map[string]any{
			"id": r.id, "amount": r.amount.String(), "transactionFee": r.fee.String(), "coin": r.coin, "status": status,
			"address": r.address, "txId": txID, "applyTime": binanceTime(r.time), "network": r.network,
			"transferType": 0, "info": "", "confirmNo": 1, "walletType": 1, "txKey": "",
		}
		if status == 6 {
			m["completeTime"] = binanceTime(done)
		}
		if r.clientID != "" {
			m["withdrawOrderId"] = r.clientID
		}
		out = append(out, m)
	}
	return out, nil
}

func (s *Server) sapiConvertQuote(q *req) (any, error) {
	from, to := strings.ToUpper(q.str("fromAsset")), strings.ToUpper(q.str("toAsset"))
	if from == "" {
		return nil, badParam("fromAsset")
	}
	if to == "" {
		return nil, badParam("toAsset")
	}
	amount, err := q.decimalParam("fromAmount")
	if err != nil {
		return nil, err
	}
	if !amount.IsPositive() {
		return nil, badParam("fromAmount")
	}
	qt, err := s.v.RequestQuote(s.ctx, q.account, from, to, amount)
	if err != nil {
		return nil, walletError(err)
	}
	inv := decimal.Zero
	if qt.Price.IsPositive() {
		inv = decimal.NewFromInt(1).DivRound(qt.Price, 8)
	}
	return map[string]any{"quoteId": qt.ID, "ratio": qt.Price.String(), "inverseRatio": inv.String(),
		"validTimestamp": qt.Expires, "toAmount": qt.ToAmt.String(), "fromAmount": qt.FromAmt.String()}, nil
}

func (s *Server) sapiConvertAccept(q *req) (any, error) {
	id := q.str("quoteId")
	if id == "" {
		return nil, badParam("quoteId")
	}
	qt, err := s.v.AcceptQuote(s.ctx, q.account, id)
	if err != nil {
		return nil, walletError(err)
	}
	inv := decimal.Zero
	if qt.Price.IsPositive() {
		inv = decimal.NewFromInt(1).DivRound(qt.Price, 8)
	}
	now := s.v.Now()
	s.wallet.mu.Lock()
	s.wallet.next++
	orderID := 900000000000 + s.wallet.next
	s.wallet.converts[q.account] = keepLast(append(s.wallet.converts[q.account], convertRec{QuoteID: qt.ID,
		OrderID: orderID, OrderStatus: "SUCCESS", FromAsset: qt.From, FromAmount: qt.FromAmt.String(), ToAsset: qt.To,
		ToAmount: qt.ToAmt.String(), Ratio: qt.Price.String(), InverseRatio: inv.String(), CreateTime: now}))
	s.wallet.mu.Unlock()
	return map[string]any{"orderId": strconv.FormatInt(orderID, 10), "createTime": now, "orderStatus": "SUCCESS"}, nil
}

func (s *Server) sapiConvertStatus(q *req) (any, error) {
	oid, qid := q.str("orderId"), q.str("quoteId")
	if oid == "" && qid == "" {
		return nil, badParam("orderId")
	}
	s.wallet.mu.Lock()
	defer s.wallet.mu.Unlock()
	for _, r := range s.wallet.converts[q.account] {
		if oid != "" && strconv.FormatInt(r.OrderID, 10) == oid || qid != "" && r.QuoteID == qid {
			return map[string]any{"orderId": r.OrderID, "orderStatus": r.OrderStatus, "fromAsset": r.FromAsset,
				"fromAmount": r.FromAmount, "toAsset": r.ToAsset, "toAmount": r.ToAmount, "ratio": r.Ratio,
				"inverseRatio": r.InverseRatio, "createTime": r.CreateTime}, nil
		}
	}
	return nil, errf(http.StatusBadRequest, 345233, "Order does not exist.")
}

func (s *Server) sapiConvertFlow(q *req) (any, error) {
	if !q.has("startTime") {
		return nil, badParam("startTime")
	}
	if !q.has("endTime") {
		return nil, badParam("endTime")
	}
	start, end, limit, err := timeWindow(q, 100, 1000)
	if err != nil {
		return nil, err
	}
	s.wallet.mu.Lock()
	list := []convertRec{}
	more := false
	for _, r := range s.wallet.converts[q.account] {
		if r.CreateTime < start || r.CreateTime > end {
			continue
		}
		if len(list) == limit {
			more = true
			break
		}
		list = append(list, r)
	}
	s.wallet.mu.Unlock()
	return map[string]any{"list": list, "startTime": start, "endTime": end, "limit": limit, "moreData": more}, nil
}

func (s *Server) sapiFaucet(q *req) (any, error) {
	coin := strings.ToUpper(q.str("coin"))
	if coin == "" {
		return nil, badParam("coin")
	}
	amount, err := q.decimalParam("amount")
	if err != nil {
		return nil, err
	}
	tx, err := s.v.Deposit(s.ctx, q.account, coin, amount)
	if err != nil {
		return nil, walletError(err)
	}
	return map[string]string{"id": tx.ID, "coin": tx.Asset, "amount": tx.Amount.String()}, nil
}

// transferIDs names what a fault for a universal transfer is armed with. Binance's transfer takes no client id, so
// besides a test client's own clientTranId a fault matches the test-only key TransferFaultID(type, asset, amount)
// built from the real parameters (the wire stays Binance's).
func transferIDs(q *req) []string {
	ids := []string{TransferFaultID(q.str("type"), q.str("asset"), q.str("amount"))}
	if id := q.str("clientTranId"); id != "" {
		ids = append(ids, id)
	}
	return ids
}

// TransferFaultID is the id to arm a fault for the next universal transfer of type (e.g. MAIN_FUNDING), asset and
// amount (as the client sends it) with: POST /__exhub/faults {"client_id": TransferFaultID(...), ...}.
func TransferFaultID(typ, asset, amount string) string {
	return "transfer:" + typ + ":" + asset + ":" + amount
}
