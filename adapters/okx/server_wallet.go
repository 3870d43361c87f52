package okx

import (
	"context"
	"net/url"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// ListAssets lists currencies and their networks (/asset/currencies).
func (s *Server) ListAssets(ctx context.Context, req *exchangev1.ListAssetsRequest) (*exchangev1.ListAssetsResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	data, err := s.client().Get(ctx, pathAssetCurrencies, nil, creds)
	if err != nil {
		return nil, err
	}
	out, err := ParseCurrencies(data)
	if err != nil {
		return nil, internalf("%s: %v", pathAssetCurrencies, err)
	}
	return &exchangev1.ListAssetsResponse{Assets: out}, nil
}

// networkOf strips the currency prefix from an OKX chain ("USDT-TRC20" -> "TRC20").
func networkOf(ccy, chain string) string {
	if rest, ok := strings.CutPrefix(chain, ccy+"-"); ok {
		return rest
	}
	return chain
}

// chainOf is OKX's chain name for a network.
func chainOf(ccy, network string) string {
	if network == "" || strings.HasPrefix(network, ccy+"-") {
		return network
	}
	return ccy + "-" + network
}

// GetBalances reads the trading account (/account/balance) and the funding account (/asset/balances).
func (s *Server) GetBalances(ctx context.Context, req *exchangev1.GetBalancesRequest) (*exchangev1.GetBalancesResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	out := &exchangev1.GetBalancesResponse{}
	w := req.GetWallet()
	if w == exchangev1.WalletType_WALLET_TYPE_UNSPECIFIED || w == exchangev1.WalletType_WALLET_TYPE_TRADING {
		data, err := s.client().Get(ctx, pathAccountBalance, nil, creds)
		if err != nil {
			return nil, err
		}
		bs, eq, upl, avail, err := ParseTradingBalance(data)
		if err != nil {
			return nil, internalf("balance: %v", err)
		}
		out.Balances = append(out.Balances, bs...)
		out.Equity, out.UnrealizedPnl, out.AvailableMargin = eq, upl, avail
	}
	if w == exchangev1.WalletType_WALLET_TYPE_UNSPECIFIED || w == exchangev1.WalletType_WALLET_TYPE_FUNDING {
		data, err := s.client().Get(ctx, pathAssetBalances, nil, creds)
		if err != nil {
			return nil, err
		}
		bs, err := ParseFundingBalances(data)
		if err != nil {
			return nil, internalf("asset balances: %v", err)
		}
		out.Balances = append(out.Balances, bs...)
	}
	return out, nil
}

func walletID(w exchangev1.WalletType) (string, error) {
	switch w {
	case exchangev1.WalletType_WALLET_TYPE_FUNDING:
		return accountFunding, nil
	case exchangev1.WalletType_WALLET_TYPE_TRADING:
		return accountTrading, nil
	}
	return "", sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "wallet", "wallet is required")
}

func positiveAmount(field, s string) (decimal.Decimal, error) {
	d, ok, err := parseDec(field, s)
	if err != nil || !ok || !d.IsPositive() {
		return decimal.Zero, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, field, "%s %q must be a positive decimal", field, s)
	}
	return d, nil
}

// Transfer moves funds between the funding (6) and trading (18) accounts.
func (s *Server) Transfer(ctx context.Context, req *exchangev1.TransferRequest) (*exchangev1.TransferResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	amt, err := positiveAmount("amount", req.GetAmount())
	if err != nil {
		return nil, err
	}
	from, err := walletID(req.GetFrom())
	if err != nil {
		return nil, err
	}
	to, err := walletID(req.GetTo())
	if err != nil {
		return nil, err
	}
	if from == to {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "to", "from and to are the same wallet")
	}
	body := map[string]string{"ccy": req.GetAsset(), "amt": canon(amt), "from": from, "to": to, "type": "0"}
	if req.GetClientId() != "" {
		if !clOrdIDRe.MatchString(req.GetClientId()) {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "client_id", "OKX client ids are 1 to 32 letters and digits")
		}
		body["clientId"] = req.GetClientId()
	}
	type ack struct {
		TransID  string `json:"transId"`
		ClientID string `json:"clientId"`
	}
	a, err := writeCall[ack](ctx, s, pathAssetTransfer, body, creds)
	if err != nil {
		return nil, err
	}
	rec := &exchangev1.TransferRecord{Id: a.TransID, ClientId: req.GetClientId(), Asset: req.GetAsset(), Amount: canon(amt),
		From: req.GetFrom(), To: req.GetTo(), Status: exchangev1.TransferStatus_TRANSFER_STATUS_PENDING}
	if sd, err := s.client().Get(ctx, pathAssetTransferState, url.Values{"transId": {a.TransID}}, creds); err == nil {
		type st struct {
			State string `json:"state"`
			Ts    string `json:"ts"`
		}
		if rows, err := decodeList[st](sd); err == nil && len(rows) > 0 {
			rec.Status = transferStatusOf(rows[0].State)
			rec.Time, _ = parseMs("ts", rows[0].Ts)
		}
	}
	return &exchangev1.TransferResponse{Transfer: rec}, nil
}

// ListTransfers reads the funding account's bills (asset/bills) and keeps the transfers with the trading account,
// newest first, paged by time and bill id.
func (s *Server) ListTransfers(ctx context.Context, req *exchangev1.ListTransfersRequest) (*exchangev1.ListTransfersResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	type bill struct {
		BillID   string `json:"billId"`
		ClientID string `json:"clientId"`
		Ccy      string `json:"ccy"`
		BalChg   string `json:"balChg"`
		Type     string `json:"type"`
		Ts       string `json:"ts"`
	}
	// asset/bills filters one type per call; both directions come from one walk over the account's bills.
	rows, next, err := timePage(ctx, s, creds, pathAssetBills, assetQuery(req.GetAsset()), req.GetPage(),
		func(r bill) (string, string) { return r.Ts, r.BillID },
		func(r bill) bool { return r.Type == billFromTrading || r.Type == billToTrading })
	if err != nil {
		return nil, err
	}
	out := &exchangev1.ListTransfersResponse{NextCursor: next}
	for _, r := range rows {
		amt, _, err := parseDec("balChg", r.BalChg)
		if err != nil {
			return nil, internalf("bills: %v", err)
		}
		ts, err := parseMs("ts", r.Ts)
		if err != nil {
			return nil, internalf("bills: %v", err)
		}
		rec := &exchangev1.TransferRecord{Id: r.BillID, ClientId: r.ClientID, Asset: r.Ccy, Amount: canon(amt.Abs()),
			Status: exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS, Time: ts,
			From: exchangev1.WalletType_WALLET_TYPE_TRADING, To: exchangev1.WalletType_WALLET_TYPE_FUNDING}
		if r.Type == billToTrading {
			rec.From, rec.To = rec.To, rec.From
		}
		out.Transfers = append(out.Transfers, rec)
	}
	return out, nil
}

// assetQuery is the currency filter of an asset history endpoint.
func assetQuery(ccy string) url.Values {
	q := url.Values{}
	if ccy != "" {
		q.Set("ccy", ccy)
	}
	return q
}

// GetDepositAddress returns the address for a currency on a network (OKX's selected chain when none is given).
func (s *Server) GetDepositAddress(ctx context.Context, req *exchangev1.GetDepositAddressRequest) (*exchangev1.GetDepositAddressResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	type row struct {
		Ccy      string `json:"ccy"`
		Chain    string `json:"chain"`
		Addr     string `json:"addr"`
		Tag      string `json:"tag"`
		Memo     string `json:"memo"`
		Selected bool   `json:"selected"`
	}
	rows, err := call[row](ctx, s, pathAssetDepositAddress, url.Values{"ccy": {req.GetAsset()}}, creds)
	if err != nil {
		return nil, err
	}
	var pick *row
	want := chainOf(req.GetAsset(), req.GetNetwork())
	for i := range rows {
		r := &rows[i]
		if (want != "" && r.Chain == want) || (want == "" && r.Selected) {
			pick = r
			break
		}
	}
	if pick == nil && want == "" && len(rows) > 0 {
		pick = &rows[0]
	}
	if pick == nil {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "network", "no %s deposit address on %q", req.GetAsset(), req.GetNetwork())
	}
	memo := pick.Memo
	if memo == "" {
		memo = pick.Tag
	}
	return &exchangev1.GetDepositAddressResponse{Asset: req.GetAsset(), Network: networkOf(req.GetAsset(), pick.Chain), Address: pick.Addr, Memo: memo}, nil
}

// ListDeposits reads deposit-history, newest first.
func (s *Server) ListDeposits(ctx context.Context, req *exchangev1.ListDepositsRequest) (*exchangev1.ListDepositsResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	type row struct {
		DepID string `json:"depId"`
		Ccy   string `json:"ccy"`
		Chain string `json:"chain"`
		Amt   string `json:"amt"`
		To    string `json:"to"`
		TxID  string `json:"txId"`
		State string `json:"state"`
		Ts    string `json:"ts"`
	}
	rows, next, err := timePage(ctx, s, creds, pathAssetDepositHistory, assetQuery(req.GetAsset()), req.GetPage(),
		func(r row) (string, string) { return r.Ts, r.DepID }, nil)
	if err != nil {
		return nil, err
	}
	out := &exchangev1.ListDepositsResponse{NextCursor: next}
	for _, r := range rows {
		amt, err := canonStr("amt", r.Amt)
		ts, err2 := parseMs("ts", r.Ts)
		if err != nil || err2 != nil {
			return nil, internalf("deposit-history: malformed row")
		}
		out.Deposits = append(out.Deposits, &exchangev1.DepositRecord{Id: r.DepID, Asset: r.Ccy, Network: networkOf(r.Ccy, r.Chain), Amount: amt,
			Address: r.To, TxId: r.TxID, Status: depositStatusOf(r.State), Time: ts})
	}
	return out, nil
}

// Withdraw sends an on-chain withdrawal (dest 4).
func (s *Server) Withdraw(ctx context.Context, req *exchangev1.WithdrawRequest) (*exchangev1.WithdrawResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	amt, err := positiveAmount("amount", req.GetAmount())
	if err != nil {
		return nil, err
	}
	if req.GetAddress() == "" {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "address", "address is required")
	}
	if req.GetWallet() == exchangev1.WalletType_WALLET_TYPE_TRADING {
		return nil, sdk.NotSupported("a withdrawal from the trading account (OKX pays withdrawals from the funding account)")
	}
	addr := req.GetAddress()
	if req.GetMemo() != "" {
		addr += ":" + req.GetMemo()
	}
	body := map[string]string{"ccy": req.GetAsset(), "amt": canon(amt), "dest": "4", "toAddr": addr}
	if req.GetNetwork() != "" {
		body["chain"] = chainOf(req.GetAsset(), req.GetNetwork())
	}
	if req.GetClientId() != "" {
		body["clientId"] = req.GetClientId()
	}
	type ack struct {
		WdID  string `json:"wdId"`
		Chain string `json:"chain"`
	}
	a, err := writeCall[ack](ctx, s, pathAssetWithdrawal, body, creds)
	if err != nil {
		return nil, err
	}
	return &exchangev1.WithdrawResponse{Withdrawal: &exchangev1.WithdrawalRecord{Id: a.WdID, ClientId: req.GetClientId(), Asset: req.GetAsset(),
		Network: networkOf(req.GetAsset(), a.Chain), Amount: canon(amt), Address: req.GetAddress(), Memo: req.GetMemo(),
		Status: exchangev1.TransferStatus_TRANSFER_STATUS_PENDING}}, nil
}

// ListWithdrawals reads withdrawal-history, newest first.
func (s *Server) ListWithdrawals(ctx context.Context, req *exchangev1.ListWithdrawalsRequest) (*exchangev1.ListWithdrawalsResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	type row struct {
		WdID     string `json:"wdId"`
		ClientID string `json:"clientId"`
		Ccy      string `json:"ccy"`
		Chain    string `json:"chain"`
		Amt      string `json:"amt"`
		Fee      string `json:"fee"`
		To       string `json:"to"`
		ToAddr   string `json:"toAddr"`
		Tag      string `json:"tag"`
		Memo     string `json:"memo"`
		TxID     string `json:"txId"`
		State    string `json:"state"`
		Ts       string `json:"ts"`
	}
	rows, next, err := timePage(ctx, s, creds, pathAssetWithdrawalHistory, assetQuery(req.GetAsset()), req.GetPage(),
		func(r row) (string, string) { return r.Ts, r.WdID }, nil)
	if err != nil {
		return nil, err
	}
	out := &exchangev1.ListWithdrawalsResponse{NextCursor: next}
	for _, r := range rows {
		amt, err1 := canonStr("amt", r.Amt)
		fee, err2 := canonStr("fee", r.Fee)
		ts, err3 := parseMs("ts", r.Ts)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, internalf("withdrawal-history: malformed row")
		}
		addr := r.ToAddr
		if addr == "" {
			addr = r.To
		}
		memo := r.Memo
		if memo == "" {
			memo = r.Tag
		}
		out.Withdrawals = append(out.Withdrawals, &exchangev1.WithdrawalRecord{Id: r.WdID, ClientId: r.ClientID, Asset: r.Ccy,
			Network: networkOf(r.Ccy, r.Chain), Amount: amt, Fee: fee, Address: addr, Memo: memo, TxId: r.TxID,
			Status: withdrawalStatusOf(r.State), Time: ts})
	}
	return out, nil
}

// stableQuotes are the currencies a conversion is quoted in when one side is one of them.
var stableQuotes = []string{"USDT", "USDC"}

// GetConvertQuote asks estimate-quote. OKX quotes a pair base/quote with a side: buying the target asset with a
// stablecoin is side buy of target/stable; anything else sells the source asset.
func (s *Server) GetConvertQuote(ctx context.Context, req *exchangev1.GetConvertQuoteRequest) (*exchangev1.GetConvertQuoteResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	from, to := req.GetFromAsset(), req.GetToAsset()
	if from == "" || to == "" || from == to {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "to_asset", "from_asset and to_asset must be two different assets")
	}
	base, quote, side := from, to, "sell"
	if slices.Contains(stableQuotes, from) {
		base, quote, side = to, from, "buy"
	}
	sz, szCcy := req.GetFromAmount(), from
	if sz == "" {
		sz, szCcy = req.GetToAmount(), to
	}
	amt, err := positiveAmount("from_amount", sz)
	if err != nil {
		return nil, err
	}
	data, err := s.client().Post(ctx, pathAssetConvertEstimateQuote, map[string]string{"baseCcy": base, "quoteCcy": quote,
		"side": side, "rfqSz": canon(amt), "rfqSzCcy": szCcy}, creds)
	if err != nil {
		return nil, err
	}
	rows, err := decodeList[rawConvertQuote](data)
	if err != nil || len(rows) == 0 {
		return nil, internalf("estimate-quote: malformed response")
	}
	r := rows[0]
	baseSz, _, err1 := parseDec("baseSz", r.BaseSz)
	quoteSz, _, err2 := parseDec("quoteSz", r.QuoteSz)
	qt, err3 := parseMs("quoteTime", r.QuoteTime)
	ttl, err4 := parseMs("ttlMs", r.TTLMs)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || r.QuoteID == "" || !baseSz.IsPositive() || !quoteSz.IsPositive() {
		return nil, internalf("estimate-quote: malformed response")
	}
	fromAmt, toAmt := baseSz, quoteSz
	if side == "buy" {
		fromAmt, toAmt = quoteSz, baseSz
	}
	s.state.mu.Lock()
	if len(s.state.quotes) >= 1000 {
		clear(s.state.quotes)
	}
	s.state.quotes[r.QuoteID] = convertQuote{baseCcy: base, quoteCcy: quote, side: side, sz: canon(amt), szCcy: szCcy}
	s.state.mu.Unlock()
	return &exchangev1.GetConvertQuoteResponse{Quote: &exchangev1.ConvertQuote{QuoteId: r.QuoteID, FromAsset: from, ToAsset: to,
		FromAmount: canon(fromAmt), ToAmount: canon(toAmt), Price: canon(toAmt.DivRound(fromAmt, 12)), ExpiresTime: qt + ttl}}, nil
}

// Convert executes a quote obtained from GetConvertQuote by this plugin.
func (s *Server) Convert(ctx context.Context, req *exchangev1.ConvertRequest) (*exchangev1.ConvertResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	s.state.mu.Lock()
	q, ok := s.state.quotes[req.GetQuoteId()]
	s.state.mu.Unlock()
	if !ok {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "quote_id", "unknown or expired quote %q", req.GetQuoteId())
	}
	row, err := writeCall[rawConvertTrade](ctx, s, pathAssetConvertTrade, map[string]string{"quoteId": req.GetQuoteId(),
		"baseCcy": q.baseCcy, "quoteCcy": q.quoteCcy, "side": q.side, "sz": q.sz, "szCcy": q.szCcy}, creds)
	if err != nil {
		return nil, err
	}
	rec, err := convertRecord(row)
	if err != nil {
		return nil, internalf("convert trade: %v", err)
	}
	return &exchangev1.ConvertResponse{Convert: rec}, nil
}

// ListConverts reads convert history, newest first.
func (s *Server) ListConverts(ctx context.Context, req *exchangev1.ListConvertsRequest) (*exchangev1.ListConvertsResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	rows, next, err := timePage(ctx, s, creds, pathAssetConvertHistory, url.Values{}, req.GetPage(),
		func(r rawConvertTrade) (string, string) { return r.Ts, r.TradeID }, nil)
	if err != nil {
		return nil, err
	}
	out := &exchangev1.ListConvertsResponse{NextCursor: next}
	for _, r := range rows {
		rec, err := convertRecord(r)
		if err != nil {
			return nil, internalf("convert history: %v", err)
		}
		out.Converts = append(out.Converts, rec)
	}
	return out, nil
}
