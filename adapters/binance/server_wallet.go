package binance

import (
	"cmp"
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// Page sizes of the wallet history endpoints.
const (
	transferPageMax    = 100
	walletHistoryMax   = 1000
	convertFlowMax     = 1000
	convertFlowSpan    = 30 * 24 * time.Hour // tradeFlow refuses a wider window
	depositHistorySpan = 90 * 24 * time.Hour // deposit and withdraw history windows are at most 90 days
)

func assetParam(field, v string) (string, error) {
	v = strings.ToUpper(strings.TrimSpace(v))
	if v == "" {
		return "", invalid(field, "%s is required", field)
	}
	return v, nil
}

func historyLimit(p *exchangev1.HistoryPage, max int) int {
	l := int(p.GetLimit())
	if l <= 0 || l > max {
		return max
	}
	return l
}

// ListAssets lists coins and their networks from /sapi/v1/capital/config/getall.
func (s *Server) ListAssets(ctx context.Context, req *exchangev1.ListAssetsRequest) (*exchangev1.ListAssetsResponse, error) {
	c, _ := s.client()
	as, err := call(ctx, c, rest{m: Spot, method: http.MethodGet, path: pathCoinConfig, weight: 10, acct: req.GetAccount(), what: "capital config"}, ParseCoinConfig)
	if err != nil {
		return nil, err
	}
	return &exchangev1.ListAssetsResponse{Assets: as}, nil
}

// transferIDs remembers the transfers made per (api key, client_id), so a retried Transfer returns the first one:
// Binance's universal transfer takes no client id. Bounded; it lives as long as the plugin process.
type transferIDs struct {
	mu    sync.Mutex // also serialises transfers that carry a client id
	order []string
	recs  map[string]*exchangev1.TransferRecord
	// lost holds transfers whose answer was lost (UNKNOWN_OUTCOME), per key: a retry with the same client id
	// looks for them in the transfer history before sending again. Bounded like recs.
	lost map[string]lostTransfer
}

// lostTransfer is what a transfer with an unknown outcome asked for, and when (server time before sending).
type lostTransfer struct {
	typ, asset, amount string
	sent               int64
}

const transferIDsKeep = 1000

func (t *transferIDs) get(k string) *exchangev1.TransferRecord {
	if t.recs == nil {
		return nil
	}
	return t.recs[k]
}

func (t *transferIDs) put(k string, r *exchangev1.TransferRecord) {
	if t.recs == nil {
		t.recs = map[string]*exchangev1.TransferRecord{}
	}
	if len(t.order) >= transferIDsKeep {
		delete(t.recs, t.order[0])
		t.order = t.order[1:]
	}
	t.order = append(t.order, k)
	t.recs[k] = r
	delete(t.lost, k)
}

func (t *transferIDs) markLost(k string, l lostTransfer) {
	if t.lost == nil {
		t.lost = map[string]lostTransfer{}
	}
	if _, ok := t.lost[k]; !ok && len(t.lost) >= transferIDsKeep {
		for old := range t.lost { // any one: the map is only a bound, not an order
			delete(t.lost, old)
			break
		}
	}
	t.lost[k] = l
}

// claimed reports whether a transfer id already answers some client id.
func (t *transferIDs) claimed(id string) bool {
	for _, r := range t.recs {
		if r.GetId() == id {
			return true
		}
	}
	return false
}

// Transfer moves funds between the funding and the trading (spot) wallet with a universal transfer. Binance has no
// client id for transfers: a repeated client_id returns the transfer this plugin process made for it.
func (s *Server) Transfer(ctx context.Context, req *exchangev1.TransferRequest) (*exchangev1.TransferResponse, error) {
	if req.GetClientId() == "" {
		return s.transfer(ctx, req)
	}
	k := req.GetAccount().GetApiKey() + "\x00" + req.GetClientId()
	s.transfers.mu.Lock()
	defer s.transfers.mu.Unlock()
	if r := s.transfers.get(k); r != nil {
		return &exchangev1.TransferResponse{Transfer: proto.Clone(r).(*exchangev1.TransferRecord)}, nil
	}
	if l, ok := s.transfers.lost[k]; ok {
		// The first attempt's answer was lost. Binance books a universal transfer synchronously, so if it was
		// made it is in the history by now: the oldest unclaimed transfer of the same type, asset and amount since
		// it was sent. If there is none, it was not made and is sent again.
		r, err := s.findLostTransfer(ctx, req, l)
		if err != nil {
			return nil, err
		}
		if r != nil {
			s.transfers.put(k, r)
			return &exchangev1.TransferResponse{Transfer: proto.Clone(r).(*exchangev1.TransferRecord)}, nil
		}
	}
	r, err := s.transfer(ctx, req)
	if err != nil {
		return nil, err
	}
	s.transfers.put(k, proto.Clone(r.GetTransfer()).(*exchangev1.TransferRecord))
	return r, nil
}

// lostSkew widens the history search of a lost transfer before its send time (clock offset, server booking time).
const lostSkew = 5 * time.Second

// findLostTransfer looks a transfer whose answer was lost up in the history (nil when it was not made).
func (s *Server) findLostTransfer(ctx context.Context, req *exchangev1.TransferRequest, l lostTransfer) (*exchangev1.TransferRecord, error) {
	c, _ := s.client()
	q := url.Values{"type": {l.typ}, "size": {strconv.Itoa(transferPageMax)}}
	setWindow(q, l.sent-lostSkew.Milliseconds(), 0)
	rs, err := call(ctx, c, rest{m: Spot, method: http.MethodGet, path: pathTransfer, q: q, weight: 1, acct: req.GetAccount(), what: "transfers"}, ParseTransfers)
	if err != nil {
		return nil, err
	}
	var found *exchangev1.TransferRecord
	for _, r := range rs { // newest first: the last match is the oldest
		if r.GetAsset() == l.asset && decEqual(r.GetAmount(), l.amount) && !s.transfers.claimed(r.GetId()) {
			found = r
		}
	}
	if found != nil {
		found.ClientId = req.GetClientId()
	}
	return found, nil
}

func (s *Server) transfer(ctx context.Context, req *exchangev1.TransferRequest) (*exchangev1.TransferResponse, error) {
	asset, err := assetParam("asset", req.GetAsset())
	if err != nil {
		return nil, err
	}
	amount, err := decParam("amount", req.GetAmount(), true)
	if err != nil {
		return nil, err
	}
	typ, ok := transferType(req.GetFrom(), req.GetTo())
	if !ok {
		return nil, invalid("to", "transfers go between FUNDING and TRADING, not %v to %v", req.GetFrom(), req.GetTo())
	}
	c, _ := s.client()
	sent := c.serverNow(Spot).UnixMilli()
	id, err := writeCall(ctx, c, rest{m: Spot, method: http.MethodPost, path: pathTransfer,
		q: url.Values{"type": {typ}, "asset": {asset}, "amount": {amount}}, weight: 900, acct: req.GetAccount(), what: "transfer"}, ParseTransferID)
	if err != nil {
		if req.GetClientId() != "" && sdk.DetailOf(err).GetReason() == exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME {
			// Transfer holds s.transfers.mu for calls with a client id.
			s.transfers.markLost(req.GetAccount().GetApiKey()+"\x00"+req.GetClientId(), lostTransfer{typ: typ, asset: asset, amount: amount, sent: sent})
		}
		return nil, err
	}
	// A tranId means the universal transfer is booked; Binance settles it synchronously.
	return &exchangev1.TransferResponse{Transfer: &exchangev1.TransferRecord{Id: id, ClientId: req.GetClientId(), Asset: asset,
		Amount: amount, From: req.GetFrom(), To: req.GetTo(), Status: exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS,
		Time: c.serverNow(Spot).UnixMilli()}}, nil
}

// ListTransfers merges both directions of universal transfers between funding and spot, newest first, with a
// cursor to older ones.
func (s *Server) ListTransfers(ctx context.Context, req *exchangev1.ListTransfersRequest) (*exchangev1.ListTransfersResponse, error) {
	w, err := newWindow(req.GetPage(), transferPageMax)
	if err != nil {
		return nil, err
	}
	asset := strings.ToUpper(strings.TrimSpace(req.GetAsset()))
	c, _ := s.client()
	var all []*exchangev1.TransferRecord
	more := false
	for _, typ := range []string{transferFundingToMain, transferMainToFunding} {
		// Binance lists transfers newest first, so the window's bounds can both be sent.
		q := url.Values{"type": {typ}, "size": {strconv.Itoa(transferPageMax)}}
		setWindow(q, w.start, w.end)
		rs, err := call(ctx, c, rest{m: Spot, method: http.MethodGet, path: pathTransfer, q: q, weight: 1, acct: req.GetAccount(), what: "transfers"}, ParseTransfers)
		if err != nil {
			return nil, err
		}
		more = more || len(rs) >= transferPageMax
		for _, r := range rs {
			if asset == "" || r.GetAsset() == asset {
				all = append(all, r)
			}
		}
	}
	page, next := newestPage(w, all, more, func(r *exchangev1.TransferRecord) int64 { return r.GetTime() },
		func(r *exchangev1.TransferRecord) string { return r.GetId() })
	return &exchangev1.ListTransfersResponse{Transfers: page, NextCursor: next}, nil
}

func compareInt64(a, b int64) int { return cmp.Compare(a, b) }

// GetDepositAddress returns the deposit address of a coin on a network (the coin's default network when none is
// given; capital config names it).
func (s *Server) GetDepositAddress(ctx context.Context, req *exchangev1.GetDepositAddressRequest) (*exchangev1.GetDepositAddressResponse, error) {
	coin, err := assetParam("asset", req.GetAsset())
	if err != nil {
		return nil, err
	}
	c, _ := s.client()
	cr := creds(req.GetAccount())
	network := strings.TrimSpace(req.GetNetwork())
	if network == "" {
		body, err := c.signed(ctx, Spot, http.MethodGet, pathCoinConfig, nil, 10, cr)
		if err != nil {
			return nil, err
		}
		if network, err = defaultNetwork(body, coin); err != nil {
			return nil, parseErr("capital config", err)
		}
		if network == "" {
			return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "no deposit network for %s", coin)
		}
	}
	r, err := call(ctx, c, rest{m: Spot, method: http.MethodGet, path: pathDepositAddress, q: url.Values{"coin": {coin}, "network": {network}}, weight: 10, acct: req.GetAccount(), what: "deposit address"}, ParseDepositAddress)
	if err != nil {
		return nil, err
	}
	if r.Asset == "" {
		r.Asset = coin
	}
	r.Network = network
	return r, nil
}

// window bounds a history query that needs both times: the page's, else the last span up to a minute ahead of the
// server clock estimate (so a record made just now is never cut off by clock skew).
func window(p *exchangev1.HistoryPage, now time.Time, span time.Duration) (int64, int64) {
	start, end := p.GetStartTime(), p.GetEndTime()
	if end == 0 {
		end = now.Add(time.Minute).UnixMilli()
	}
	if start == 0 || end-start > span.Milliseconds() {
		start = end - span.Milliseconds()
	}
	return start, end
}

// historyParams sets a deposit or withdraw history window (Binance lists them newest first, at most 90 days per
// call: a wider or open window is narrowed to the 90 days before its end).
func historyParams(q url.Values, w histWindow, now time.Time) {
	start, end := w.start, w.end
	if end <= 0 {
		end = now.Add(time.Minute).UnixMilli()
	}
	if start <= 0 || end-start > depositHistorySpan.Milliseconds() {
		start = end - depositHistorySpan.Milliseconds()
	}
	setWindow(q, start, end)
	q.Set("limit", strconv.Itoa(w.fetch(walletHistoryMax)))
}

// ListDeposits lists deposits, newest first (Binance's default: the last 90 days).
func (s *Server) ListDeposits(ctx context.Context, req *exchangev1.ListDepositsRequest) (*exchangev1.ListDepositsResponse, error) {
	page, next, err := walletHistory(ctx, s, req.GetPage(), req.GetAsset(), req.GetAccount(), pathDepositHistory, 1, "deposits", ParseDeposits)
	if err != nil {
		return nil, err
	}
	return &exchangev1.ListDepositsResponse{Deposits: page, NextCursor: next}, nil
}

// walletRecord is a deposit or withdrawal.
type walletRecord interface {
	GetTime() int64
	GetId() string
}

// walletHistory reads one page of the deposit or withdrawal history: the same window and coin parameters.
func walletHistory[T walletRecord](ctx context.Context, s *Server, p *exchangev1.HistoryPage, asset string, acct *exchangev1.AccountRef,
	path string, weight int, what string, parse func([]byte) ([]T, error)) ([]T, string, error) {
	w, err := newWindow(p, walletHistoryMax)
	if err != nil {
		return nil, "", err
	}
	c, _ := s.client()
	q := url.Values{}
	historyParams(q, w, c.serverNow(Spot))
	if a := strings.ToUpper(strings.TrimSpace(asset)); a != "" {
		q.Set("coin", a)
	}
	rs, err := call(ctx, c, rest{m: Spot, method: http.MethodGet, path: path, q: q, weight: weight, acct: acct, what: what}, parse)
	if err != nil {
		return nil, "", err
	}
	page, next := newestPage(w, rs, len(rs) >= w.fetch(walletHistoryMax), T.GetTime, T.GetId)
	return page, next, nil
}

// Withdraw requests a withdrawal; the fee is charged on top of amount. client_id is sent as withdrawOrderId.
func (s *Server) Withdraw(ctx context.Context, req *exchangev1.WithdrawRequest) (*exchangev1.WithdrawResponse, error) {
	coin, err := assetParam("asset", req.GetAsset())
	if err != nil {
		return nil, err
	}
	amount, err := decParam("amount", req.GetAmount(), true)
	if err != nil {
		return nil, err
	}
	addr := strings.TrimSpace(req.GetAddress())
	if addr == "" {
		return nil, invalid("address", "address is required")
	}
	// walletType 1 pays from the funding wallet, 0 from the spot wallet (a broker master's withdrawal of what a
	// broker transfer moved into its spot wallet).
	walletType := "1"
	if req.GetWallet() == exchangev1.WalletType_WALLET_TYPE_TRADING {
		walletType = "0"
	}
	q := url.Values{"coin": {coin}, "address": {addr}, "amount": {amount}, "walletType": {walletType}}
	if n := strings.TrimSpace(req.GetNetwork()); n != "" {
		q.Set("network", n)
	}
	if req.GetMemo() != "" {
		q.Set("addressTag", req.GetMemo())
	}
	if req.GetClientId() != "" {
		q.Set("withdrawOrderId", req.GetClientId())
	}
	if req.GetClientId() != "" {
		// Idempotency: a withdrawal already made with this client id (withdrawOrderId) is returned, not repeated.
		if prev, err := s.findWithdrawal(ctx, req.GetAccount(), coin, req.GetClientId()); err != nil {
			return nil, err
		} else if prev != nil {
			return &exchangev1.WithdrawResponse{Withdrawal: prev}, nil
		}
	}
	c, _ := s.client()
	id, err := writeCall(ctx, c, rest{m: Spot, method: http.MethodPost, path: pathWithdraw, q: q, weight: 900, acct: req.GetAccount(), what: "withdraw"}, ParseWithdrawID)
	if err != nil {
		return nil, err
	}
	rec := &exchangev1.WithdrawalRecord{Id: id, ClientId: req.GetClientId(), Asset: coin, Network: req.GetNetwork(), Amount: amount,
		Address: addr, Memo: req.GetMemo(), Status: exchangev1.TransferStatus_TRANSFER_STATUS_PENDING, Time: c.serverNow(Spot).UnixMilli()}
	// The apply answer has only the id: complete the record (fee, network, status) from the history if it is there.
	if h, err := s.ListWithdrawals(ctx, &exchangev1.ListWithdrawalsRequest{Account: req.GetAccount(), Asset: coin,
		Page: &exchangev1.HistoryPage{Limit: 50}}); err == nil {
		for _, w := range h.GetWithdrawals() {
			if w.GetId() == id {
				rec = w
				break
			}
		}
	}
	return &exchangev1.WithdrawResponse{Withdrawal: rec}, nil
}

// findWithdrawal looks a withdrawal up by its client id (withdrawOrderId) in the default history window.
func (s *Server) findWithdrawal(ctx context.Context, acct *exchangev1.AccountRef, coin, clientID string) (*exchangev1.WithdrawalRecord, error) {
	c, _ := s.client()
	q := url.Values{"coin": {coin}, "withdrawOrderId": {clientID}, "limit": {strconv.Itoa(walletHistoryMax)}}
	ws, err := call(ctx, c, rest{m: Spot, method: http.MethodGet, path: pathWithdrawHistory, q: q, weight: 30, acct: acct, what: "withdrawals"}, ParseWithdrawals)
	if err != nil {
		return nil, err
	}
	for _, w := range ws {
		if w.GetClientId() == clientID {
			return w, nil
		}
	}
	return nil, nil
}

// ListWithdrawals lists withdrawals, newest first (Binance's default: the last 90 days).
func (s *Server) ListWithdrawals(ctx context.Context, req *exchangev1.ListWithdrawalsRequest) (*exchangev1.ListWithdrawalsResponse, error) {
	page, next, err := walletHistory(ctx, s, req.GetPage(), req.GetAsset(), req.GetAccount(), pathWithdrawHistory, 30, "withdrawals", ParseWithdrawals)
	if err != nil {
		return nil, err
	}
	return &exchangev1.ListWithdrawalsResponse{Withdrawals: page, NextCursor: next}, nil
}

// GetConvertQuote asks for a convert quote by the amount given or wanted.
func (s *Server) GetConvertQuote(ctx context.Context, req *exchangev1.GetConvertQuoteRequest) (*exchangev1.GetConvertQuoteResponse, error) {
	from, err := assetParam("from_asset", req.GetFromAsset())
	if err != nil {
		return nil, err
	}
	to, err := assetParam("to_asset", req.GetToAsset())
	if err != nil {
		return nil, err
	}
	q := url.Values{"fromAsset": {from}, "toAsset": {to}}
	switch {
	case req.GetFromAmount() != "" && req.GetToAmount() != "":
		return nil, invalid("to_amount", "give from_amount or to_amount, not both")
	case req.GetFromAmount() != "":
		a, err := decParam("from_amount", req.GetFromAmount(), true)
		if err != nil {
			return nil, err
		}
		q.Set("fromAmount", a)
	default:
		a, err := decParam("to_amount", req.GetToAmount(), true)
		if err != nil {
			return nil, err
		}
		q.Set("toAmount", a)
	}
	c, _ := s.client()
	qt, err := call(ctx, c, rest{m: Spot, method: http.MethodPost, path: pathConvertQuote, q: q, weight: 200, acct: req.GetAccount(), what: "convert quote"},
		func(b []byte) (*exchangev1.ConvertQuote, error) { return ParseConvertQuote(b, from, to) })
	if err != nil {
		return nil, err
	}
	return &exchangev1.GetConvertQuoteResponse{Quote: qt}, nil
}

// Convert accepts a quote and returns the resulting convert order (read back from orderStatus).
func (s *Server) Convert(ctx context.Context, req *exchangev1.ConvertRequest) (*exchangev1.ConvertResponse, error) {
	if strings.TrimSpace(req.GetQuoteId()) == "" {
		return nil, invalid("quote_id", "quote_id is required")
	}
	c, _ := s.client()
	cr := creds(req.GetAccount())
	rec, err := writeCall(ctx, c, rest{m: Spot, method: http.MethodPost, path: pathConvertAccept, q: url.Values{"quoteId": {req.GetQuoteId()}}, weight: 500, acct: req.GetAccount(), what: "convert accept"}, ParseConvertAccept)
	if err != nil {
		return nil, err
	}
	rec.QuoteId = req.GetQuoteId()
	if sb, err := c.signed(ctx, Spot, http.MethodGet, pathConvertStatus, url.Values{"orderId": {rec.GetId()}}, 100, cr); err == nil {
		if full, err := ParseConvertOrder(sb); err == nil {
			if full.QuoteId == "" {
				full.QuoteId = req.GetQuoteId()
			}
			rec = full
		}
	}
	return &exchangev1.ConvertResponse{Convert: rec}, nil
}

// ListConverts lists convert orders of a window (the 30 days before its end unless the page says otherwise), newest
// first, with a cursor to older ones. tradeFlow answers the OLDEST rows of its window first (with moreData), so the
// adapter walks the window forward and keeps the newest rows.
func (s *Server) ListConverts(ctx context.Context, req *exchangev1.ListConvertsRequest) (*exchangev1.ListConvertsResponse, error) {
	w, err := newWindow(req.GetPage(), convertFlowMax)
	if err != nil {
		return nil, err
	}
	c, _ := s.client()
	start, end := window(&exchangev1.HistoryPage{StartTime: w.start, EndTime: w.end}, c.serverNow(Spot), convertFlowSpan)
	keep := w.fetch(convertFlowMax)
	var rs []*exchangev1.ConvertRecord
	// A window narrowed to 30 days (or open) may have older rows before it.
	more := w.start <= 0 || start > w.start
	for from, calls := start, 0; calls < maxConvertWalk; calls++ {
		q := url.Values{"startTime": {itoa64(from)}, "endTime": {itoa64(end)}, "limit": {strconv.Itoa(convertFlowMax)}}
		body, err := c.signed(ctx, Spot, http.MethodGet, pathConvertHistory, q, 30, creds(req.GetAccount()))
		if err != nil {
			return nil, err
		}
		got, moreData, err := ParseConvertFlow(body)
		if err != nil {
			return nil, parseErr("convert trade flow", err)
		}
		rs = append(rs, got...)
		if len(rs) > keep {
			slices.SortStableFunc(rs, func(a, b *exchangev1.ConvertRecord) int { return compareInt64(a.GetTime(), b.GetTime()) })
			rs, more = rs[len(rs)-keep:], true
		}
		if !moreData || len(got) == 0 {
			break
		}
		last := got[0].GetTime()
		for _, r := range got {
			last = max(last, r.GetTime())
		}
		if last+1 <= from {
			break
		}
		from = last + 1
	}
	page, next := newestPage(w, rs, more && len(rs) > 0, func(r *exchangev1.ConvertRecord) int64 { return r.GetTime() },
		func(r *exchangev1.ConvertRecord) string { return r.GetId() })
	return &exchangev1.ListConvertsResponse{Converts: page, NextCursor: next}, nil
}

// maxConvertWalk bounds the tradeFlow calls of one ListConverts page.
const maxConvertWalk = 20

// GetBalances: trading = spot account balances plus the USDT-M account; funding = the funding wallet.
func (s *Server) GetBalances(ctx context.Context, req *exchangev1.GetBalancesRequest) (*exchangev1.GetBalancesResponse, error) {
	c, _ := s.client()
	out := &exchangev1.GetBalancesResponse{}
	w := req.GetWallet()
	if w == exchangev1.WalletType_WALLET_TYPE_UNSPECIFIED || w == exchangev1.WalletType_WALLET_TYPE_TRADING {
		bs, err := call(ctx, c, rest{m: Spot, method: http.MethodGet, path: pathSpotAccount, q: url.Values{"omitZeroBalances": {"true"}}, weight: 20, acct: req.GetAccount(), what: "account"}, ParseSpotAccount)
		if err != nil {
			return nil, err
		}
		out.Balances = append(out.Balances, bs...)
		fa, err := call(ctx, c, rest{m: Futures, method: http.MethodGet, path: pathFutAccount, weight: 5, acct: req.GetAccount(), what: "futures account"}, ParseFuturesAccount)
		if err != nil {
			return nil, err
		}
		out.Equity, out.UnrealizedPnl, out.AvailableMargin = fa.Equity, fa.UnrealizedPnl, fa.AvailableMargin
	}
	if w == exchangev1.WalletType_WALLET_TYPE_UNSPECIFIED || w == exchangev1.WalletType_WALLET_TYPE_FUNDING {
		bs, err := call(ctx, c, rest{m: Spot, method: http.MethodPost, path: pathFundingAsset, weight: 1, acct: req.GetAccount(), what: "funding assets"}, ParseFundingAssets)
		if err != nil {
			return nil, err
		}
		out.Balances = append(out.Balances, bs...)
	}
	return out, nil
}
