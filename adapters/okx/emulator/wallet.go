package emulator

import (
	"slices"
	"strconv"
	"strings"

	"github.com/exhub/exhub/adapters/venue"
)

func (s *Server) walletRoutes() {
	s.route("GET", "/api/v5/asset/currencies", 6, true, s.currencies)
	s.route("GET", "/api/v5/asset/balances", 6, true, s.assetBalances)
	s.route("POST", "/api/v5/asset/transfer", 2, true, s.transfer)
	s.route("GET", "/api/v5/asset/deposit-address", 6, true, s.depositAddress)
	s.route("GET", "/api/v5/asset/deposit-history", 6, true, s.depositHistory)
	s.route("POST", "/api/v5/asset/withdrawal", 6, true, s.withdrawal)
	s.route("GET", "/api/v5/asset/withdrawal-history", 6, true, s.withdrawalHistory)
	s.route("POST", "/api/v5/asset/convert/estimate-quote", 10, true, s.convertQuote)
	s.route("POST", "/api/v5/asset/convert/trade", 10, true, s.convertTrade)
	s.route("GET", "/api/v5/asset/convert/history", 6, true, s.convertHistory)
	s.route("GET", "/api/v5/asset/bills", 6, true, s.assetBills)
	s.brokerRoutes()
}

func splitComma(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.ToUpper(s), ",")
}

// currencies is GET /api/v5/asset/currencies: every venue asset on its one simulated chain ("<ccy>-SIM", the chain
// deposit-address and the withdrawal history name), with the venue's withdrawal fee and minimum, filtered by ccy
// (comma separated). Numbers are strings as OKX sends them; wdTickSz is the withdrawal precision in decimal places.
// minFee and maxFee (deprecated by OKX, still sent) equal the fixed fee. Nothing needs a tag on the simulated chain.
func (s *Server) currencies(q *request) (result, *apiError) {
	only := splitComma(q.get("ccy"))
	assets := s.v.Assets()
	names := make([]string, 0, len(assets))
	for a := range assets {
		if len(only) == 0 || slices.Contains(only, a) {
			names = append(names, a)
		}
	}
	slices.Sort(names)
	rows := []obj{}
	for _, a := range names {
		c := assets[a]
		tick := c.Scale
		if tick <= 0 {
			tick = 8
		}
		fee := dec(c.WithdrawFee)
		rows = append(rows, obj{"ccy": a, "name": a, "logoLink": "", "chain": a + chainSuffix, "ctAddr": "",
			"canDep": true, "canWd": true, "canInternal": true, "depEstOpenTime": "", "wdEstOpenTime": "",
			"minDep": "0.00000001", "minWd": dec(c.WithdrawMin), "minInternal": "0.00000001",
			"maxWd": "9999999999", "wdTickSz": strconv.Itoa(int(tick)), "wdQuota": "10000000", "usedWdQuota": "0",
			"fee": fee, "minFee": fee, "maxFee": fee, "minFeeForCtAddr": fee, "maxFeeForCtAddr": fee,
			"burningFeeRate": "", "mainNet": true, "needTag": false, "minDepArrivalConfirm": "1",
			"minWdUnlockConfirm": "1", "depQuotaFixed": "", "usedDepQuotaFixed": "", "depQuoteDailyLayer2": ""})
	}
	return result{data: rows}, nil
}

// assetBalances is the funding account.
func (s *Server) assetBalances(q *request) (result, *apiError) {
	bs, err := s.v.Balances(q.account, venue.Funding)
	if err != nil {
		return result{}, internal(err)
	}
	only := splitComma(q.get("ccy"))
	rows := []obj{}
	for _, b := range bs {
		if len(only) > 0 && !slices.Contains(only, b.Asset) {
			continue
		}
		rows = append(rows, obj{"ccy": b.Asset, "bal": dec(b.Total), "frozenBal": dec(b.Locked), "availBal": dec(b.Free)})
	}
	return result{data: rows}, nil
}

// OKX account types: 6 funding, 18 trading.
func walletOf(t string) (venue.Wallet, bool) {
	switch t {
	case "6":
		return venue.Funding, true
	case "18":
		return venue.TradingWallet, true
	}
	return 0, false
}

func (s *Server) transfer(q *request) (result, *apiError) {
	var r struct {
		Ccy      string `json:"ccy"`
		Amt      string `json:"amt"`
		From     string `json:"from"`
		To       string `json:"to"`
		Type     string `json:"type"`
		ClientID string `json:"clientId"`
		SubAcct  string `json:"subAcct"`
	}
	if e := q.decode(&r); e != nil {
		return result{}, e
	}
	if s.takeFault(q, r.ClientID) {
		return result{}, nil
	}
	from, ok1 := walletOf(r.From)
	to, ok2 := walletOf(r.To)
	if r.Type == "1" || r.Type == "2" {
		if !ok1 || !ok2 {
			return result{}, errParam("from/to")
		}
		return s.subTransfer(q, r.Type, r.SubAcct, strings.ToUpper(r.Ccy), r.ClientID, r.Amt, from, to)
	}
	if !ok1 || !ok2 || from == to {
		return result{}, errParam("from/to")
	}
	if r.Type != "" && r.Type != "0" {
		return result{}, errParam("type")
	}
	amt, err := venue.ParseDecimal(r.Amt)
	if err != nil || !amt.IsPositive() {
		return result{}, errParam("amt")
	}
	e, err := s.v.Transfer(q.r.Context(), q.account, strings.ToUpper(r.Ccy), amt, from, to)
	if err != nil {
		return result{}, bizErr(err)
	}
	s.addBill(q.account, e, r.ClientID, from)
	return result{data: []obj{{"transId": strconv.FormatUint(e.ID, 10), "ccy": e.Asset, "clientId": r.ClientID,
		"from": r.From, "amt": dec(amt), "to": r.To}}}, nil
}

// OKX funding bill types of transfers with the trading account.
const (
	billFromTrading = "130" // into the funding account
	billToTrading   = "131" // out of the funding account
)

// maxBills bounds the bills the server keeps (OKX keeps a month of them).
const maxBills = 1000

// maxWdClients bounds the withdrawal client ids the server remembers.
const maxWdClients = 10000

// addBill records a transfer as the funding account's bill: balChg is signed (negative when funds leave it) and
// bal is the funding balance just after.
func (s *Server) addBill(account string, e venue.LedgerEntry, clientID string, from venue.Wallet) {
	typ, chg := billFromTrading, e.Amount
	if from == venue.Funding {
		typ, chg = billToTrading, e.Amount.Neg()
	}
	bal := "0"
	if bs, err := s.v.Balances(account, venue.Funding); err == nil {
		for _, b := range bs {
			if b.Asset == e.Asset {
				bal = dec(b.Total)
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	s.bills = append(s.bills, obj{"billId": strconv.FormatUint(s.nextID, 10), "ccy": e.Asset, "clientId": clientID,
		"balChg": dec(chg), "bal": bal, "type": typ, "ts": ms(e.Time), "notes": "", "account": account})
	if len(s.bills) > maxBills {
		s.bills = s.bills[1:]
	}
}

// assetBills is GET /api/v5/asset/bills: the funding account's bills newest first, at most limit (100) inside
// after/before (Unix ms), filtered by ccy and type.
func (s *Server) assetBills(q *request) (result, *apiError) {
	after, before, limit, aerr := paging(q, 100, 100)
	if aerr != nil {
		return result{}, aerr
	}
	ccy, typ := strings.ToUpper(q.get("ccy")), q.get("type")
	s.mu.Lock()
	defer s.mu.Unlock()
	rows := []obj{}
	for k := len(s.bills) - 1; k >= 0 && len(rows) < limit; k-- {
		b := s.bills[k]
		ts, _ := strconv.ParseInt(b["ts"].(string), 10, 64)
		if b["account"] != q.account || (ccy != "" && b["ccy"] != ccy) || (typ != "" && b["type"] != typ) || !inWindow(ts, after, before) {
			continue
		}
		row := obj{}
		for k, v := range b {
			if k != "account" {
				row[k] = v
			}
		}
		rows = append(rows, row)
	}
	return result{data: rows}, nil
}

const chainSuffix = "-SIM"

func (s *Server) depositAddress(q *request) (result, *apiError) {
	ccy := strings.ToUpper(q.get("ccy"))
	if ccy == "" {
		return result{}, errEmpty("ccy")
	}
	addr, err := s.v.DepositAddress(q.account, ccy)
	if err != nil {
		return result{}, bizErr(err)
	}
	return result{data: []obj{{"chain": ccy + chainSuffix, "ctAddr": "", "ccy": ccy, "to": "6", "addr": addr,
		"verifiedName": "", "selected": true}}}, nil
}

// inWindow applies OKX's history paging: after returns rows older than it, before rows newer than it (Unix ms).
func inWindow(ts, after, before int64) bool {
	return (after == 0 || ts < after) && (before == 0 || ts > before)
}

// walletTxs lists deposits or withdrawals newest first: at most limit (100) rows inside after/before.
func (s *Server) walletTxs(q *request, deposits bool) ([]obj, *apiError) {
	after, before, limit, aerr := paging(q, 100, 100)
	if aerr != nil {
		return nil, aerr
	}
	txs, _ := s.v.WalletHistory(q.account)
	ccy := strings.ToUpper(q.get("ccy"))
	rows := []obj{}
	for k := len(txs) - 1; k >= 0 && len(rows) < limit; k-- {
		t := txs[k]
		isDep := !strings.HasPrefix(t.ID, "wd")
		if isDep != deposits || (ccy != "" && t.Asset != ccy) || !inWindow(t.Time, after, before) {
			continue
		}
		txID := t.TxID
		if txID == "" {
			txID = t.ID
		}
		if deposits {
			// A chain deposit waits for confirmation (0) until credited (2).
			state, confirms := "2", "1"
			if t.Status == venue.TxPending {
				state, confirms = "0", "0"
			}
			rows = append(rows, obj{"actualDepBlkConfirm": confirms, "amt": dec(t.Amount), "areaCodeFrom": "",
				"ccy": t.Asset, "chain": t.Asset + chainSuffix, "depId": t.ID, "from": "", "fromWdId": "",
				"state": state, "to": t.Address, "ts": ms(t.Time), "txId": txID})
		} else {
			// A chain withdrawal is broadcasting (1, no tx id yet) until it is on the chain (2).
			state := "2"
			if t.Status == venue.TxProcessing {
				state, txID = "1", ""
			}
			s.mu.Lock()
			clientID := s.wdClients[t.ID]
			s.mu.Unlock()
			rows = append(rows, obj{"chain": t.Asset + chainSuffix, "fee": dec(t.Fee), "feeCcy": t.Asset,
				"ccy": t.Asset, "clientId": clientID, "amt": dec(t.Amount), "txId": txID, "from": "", "areaCodeFrom": "",
				"to": t.Address, "areaCodeTo": "", "state": state, "ts": ms(t.Time), "nonTradeAsset": false,
				"wdId": t.ID})
		}
	}
	return rows, nil
}

func (s *Server) depositHistory(q *request) (result, *apiError) {
	rows, aerr := s.walletTxs(q, true)
	return result{data: rows}, aerr
}

func (s *Server) withdrawalHistory(q *request) (result, *apiError) {
	rows, aerr := s.walletTxs(q, false)
	return result{data: rows}, aerr
}

func (s *Server) withdrawal(q *request) (result, *apiError) {
	var r struct {
		Ccy      string `json:"ccy"`
		Amt      string `json:"amt"`
		Dest     string `json:"dest"`
		ToAddr   string `json:"toAddr"`
		Chain    string `json:"chain"`
		ClientID string `json:"clientId"`
	}
	if e := q.decode(&r); e != nil {
		return result{}, e
	}
	if s.takeFault(q, r.ClientID) {
		return result{}, nil
	}
	if r.Dest != "4" && r.Dest != "3" {
		return result{}, errParam("dest")
	}
	if r.ToAddr == "" {
		return result{}, errEmpty("toAddr")
	}
	amt, err := venue.ParseDecimal(r.Amt)
	if err != nil || !amt.IsPositive() {
		return result{}, errParam("amt")
	}
	tx, err := s.v.Withdraw(q.r.Context(), q.account, strings.ToUpper(r.Ccy), amt, r.ToAddr)
	if err != nil {
		return result{}, bizErr(err)
	}
	if r.ClientID != "" {
		s.mu.Lock()
		if s.wdClients == nil {
			s.wdClients = map[string]string{}
		}
		s.wdClients[tx.ID] = r.ClientID
		s.wdOrder = append(s.wdOrder, tx.ID)
		if len(s.wdOrder) > maxWdClients {
			delete(s.wdClients, s.wdOrder[0])
			s.wdOrder = s.wdOrder[1:]
		}
		s.mu.Unlock()
	}
	return result{data: []obj{{"amt": dec(tx.Amount), "wdId": tx.ID, "ccy": tx.Asset, "clientId": r.ClientID,
		"chain": tx.Asset + chainSuffix}}}, nil
}

// convertQuote prices a conversion. side buy spends quoteCcy for baseCcy, sell spends baseCcy; rfqSz is in
// rfqSzCcy, which must be the currency spent (the venue quotes by the amount given).
func (s *Server) convertQuote(q *request) (result, *apiError) {
	var r struct {
		BaseCcy  string `json:"baseCcy"`
		QuoteCcy string `json:"quoteCcy"`
		Side     string `json:"side"`
		RfqSz    string `json:"rfqSz"`
		RfqSzCcy string `json:"rfqSzCcy"`
		ClQReqID string `json:"clQReqId"`
		Tag      string `json:"tag"`
	}
	if e := q.decode(&r); e != nil {
		return result{}, e
	}
	base, quote := strings.ToUpper(r.BaseCcy), strings.ToUpper(r.QuoteCcy)
	from, to := quote, base
	switch r.Side {
	case "buy":
	case "sell":
		from, to = base, quote
	default:
		return result{}, errParam("side")
	}
	if strings.ToUpper(r.RfqSzCcy) != from {
		return result{}, errParam("rfqSzCcy")
	}
	amt, err := venue.ParseDecimal(r.RfqSz)
	if err != nil || !amt.IsPositive() {
		return result{}, errParam("rfqSz")
	}
	cq, err := s.v.RequestQuote(q.r.Context(), q.account, from, to, amt)
	if err != nil {
		return result{}, bizErr(err)
	}
	baseSz, quoteSz := cq.ToAmt, cq.FromAmt
	if r.Side == "sell" {
		baseSz, quoteSz = cq.FromAmt, cq.ToAmt
	}
	px := quoteSz.DivRound(baseSz, 12)
	now := s.v.Now()
	return result{data: []obj{{"quoteTime": ms(now), "ttlMs": ms(cq.Expires - now), "clQReqId": r.ClQReqID,
		"quoteId": cq.ID, "baseCcy": base, "quoteCcy": quote, "side": r.Side, "origRfqSz": dec(amt),
		"rfqSz": dec(amt), "rfqSzCcy": from, "cnvtPx": dec(px), "baseSz": dec(baseSz), "quoteSz": dec(quoteSz)}}}, nil
}

func (s *Server) convertTrade(q *request) (result, *apiError) {
	var r struct {
		QuoteID  string `json:"quoteId"`
		BaseCcy  string `json:"baseCcy"`
		QuoteCcy string `json:"quoteCcy"`
		Side     string `json:"side"`
		Sz       string `json:"sz"`
		SzCcy    string `json:"szCcy"`
		ClTReqID string `json:"clTReqId"`
	}
	if e := q.decode(&r); e != nil {
		return result{}, e
	}
	if s.takeFault(q, r.ClTReqID) {
		return result{}, nil
	}
	if r.QuoteID == "" {
		return result{}, errEmpty("quoteId")
	}
	cq, err := s.v.AcceptQuote(q.r.Context(), q.account, r.QuoteID)
	if err != nil {
		return result{}, bizErr(err)
	}
	base, quote := strings.ToUpper(r.BaseCcy), strings.ToUpper(r.QuoteCcy)
	baseSz, quoteSz := cq.ToAmt, cq.FromAmt
	if cq.From == base {
		baseSz, quoteSz = cq.FromAmt, cq.ToAmt
	}
	s.mu.Lock()
	s.nextID++
	row := obj{"tradeId": strconv.FormatUint(s.nextID, 10), "quoteId": cq.ID, "clTReqId": r.ClTReqID,
		"state": "fullyFilled", "instId": base + "-" + quote, "baseCcy": base, "quoteCcy": quote, "side": r.Side,
		"fillPx": dec(quoteSz.DivRound(baseSz, 12)), "fillBaseSz": dec(baseSz), "fillQuoteSz": dec(quoteSz),
		"ts": ms(s.v.Now()), "account": q.account}
	s.converts = append(s.converts, row)
	if len(s.converts) > 1000 {
		s.converts = s.converts[1:]
	}
	s.mu.Unlock()
	return result{data: []obj{publicConvert(row)}}, nil
}

func publicConvert(row obj) obj {
	out := obj{}
	for k, v := range row {
		if k != "account" {
			out[k] = v
		}
	}
	return out
}

// convertHistory lists the account's converts newest first: at most limit (100) rows inside after/before.
func (s *Server) convertHistory(q *request) (result, *apiError) {
	after, before, limit, aerr := paging(q, 100, 100)
	if aerr != nil {
		return result{}, aerr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rows := []obj{}
	for k := len(s.converts) - 1; k >= 0 && len(rows) < limit; k-- {
		c := s.converts[k]
		tss, _ := c["ts"].(string)
		ts, _ := strconv.ParseInt(tss, 10, 64)
		if c["account"] == q.account && inWindow(ts, after, before) {
			rows = append(rows, publicConvert(c))
		}
	}
	return result{data: rows}, nil
}
