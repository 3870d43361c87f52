package emulator

import (
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
)

// tpsl is the take-profit and stop-loss trading-stop set on one position: venue conditional orders that close it.
type tpsl struct {
	tp, sl           uint64
	tpPrice, slPrice decimal.Decimal
	tpBy, slBy       string
}

func tpslKey(acct string, i *inst, idx int) string {
	return acct + "|" + i.v.ID + "|" + strconv.Itoa(idx)
}

// livePosTpSl is the position's trading-stop with legs whose orders are gone (triggered or cancelled) cleared.
func (s *Server) livePosTpSl(acct string, i *inst, idx int) tpsl {
	s.tpslMu.Lock()
	t := s.tpsls[tpslKey(acct, i, idx)]
	s.tpslMu.Unlock()
	open := func(id uint64) bool {
		if id == 0 {
			return false
		}
		o, err := s.v.GetOrder(acct, id, "")
		return err == nil && !o.Status.Final()
	}
	if !open(t.tp) {
		t.tp, t.tpPrice, t.tpBy = 0, decimal.Zero, ""
	}
	if !open(t.sl) {
		t.sl, t.slPrice, t.slBy = 0, decimal.Zero, ""
	}
	return t
}

func priceOrEmpty(d decimal.Decimal) string {
	if d.IsZero() {
		return ""
	}
	return dec(d)
}

func (s *Server) positionRow(i *inst, acct string, p venue.Position, st venue.PerpSettings) obj {
	idx := posIdxOf(p.Side)
	side := ""
	size := p.Qty.Abs()
	switch {
	case p.Side == venue.PosLong || (p.Side == venue.PosBoth && p.Qty.IsPositive()):
		side = "Buy"
	case p.Side == venue.PosShort || (p.Side == venue.PosBoth && p.Qty.IsNegative()):
		side = "Sell"
	}
	if size.IsZero() {
		side = ""
	}
	mode := 0
	if st.Isolated {
		mode = 1
	}
	t := s.livePosTpSl(acct, i, idx)
	return obj{"positionIdx": idx, "riskId": 1, "riskLimitValue": "2000000", "symbol": i.symbol, "side": side,
		"size": dec(size), "avgPrice": dec(p.EntryPrice), "positionValue": dec(p.Notional), "tradeMode": mode,
		"autoAddMargin": 0, "positionStatus": "Normal", "leverage": strconv.Itoa(st.Leverage), "markPrice": dec(p.MarkPrice),
		"liqPrice": priceOrEmpty(p.LiqPrice), "bustPrice": "", "positionIM": dec(p.Margin), "positionMM": dec(p.MaintMargin),
		"positionBalance": dec(p.Margin), "takeProfit": priceOrEmpty(t.tpPrice), "stopLoss": priceOrEmpty(t.slPrice),
		"trailingStop": "0", "sessionAvgPrice": "", "breakEvenPrice": dec(p.BreakEven), "positionIMByMp": dec(p.Margin),
		"positionMMByMp": dec(p.MaintMargin),
		"unrealisedPnl":  dec(p.UnrealizedPnL), "curRealisedPnl": dec(p.RealizedPnL), "cumRealisedPnl": dec(p.RealizedPnL),
		"adlRankIndicator": 2, "createdTime": ms(p.Updated), "updatedTime": ms(p.Updated), "seq": p.Updated,
		"isReduceOnly": false, "mmrSysUpdateTime": "", "leverageSysUpdatedTime": "", "tpslMode": "Full"}
}

// positionList answers /v5/position/list (linear only): with a symbol, its rows even when flat (one, or one per
// side in hedge mode); with settleCoin, the open positions.
func (s *Server) positionList(q *privRequest) (any, *apiError) {
	if q.get("category") != "linear" {
		return nil, &apiError{10001, "params error: category only support linear,inverse,option"}
	}
	cat, i, e := s.listScope(q, true)
	if e != nil {
		return nil, e
	}
	limit, e := limitParam(q, 20, 200)
	if e != nil {
		return nil, e
	}
	ps, err := s.v.Positions(q.account())
	if err != nil {
		return nil, mapErr(err, false)
	}
	rows := []obj{}
	seen := map[string]bool{}
	for _, p := range ps {
		in, ok := s.inScope(cat, i, p.Instrument)
		if !ok {
			continue
		}
		st, _ := s.v.Settings(q.account(), p.Instrument)
		rows = append(rows, s.positionRow(in, q.account(), p, st))
		seen[strconv.Itoa(posIdxOf(p.Side))] = true
	}
	if i != nil {
		st, err := s.v.Settings(q.account(), i.v.ID)
		if err != nil {
			return nil, mapErr(err, false)
		}
		sides := []venue.PositionSide{venue.PosBoth}
		if st.Hedge {
			sides = []venue.PositionSide{venue.PosLong, venue.PosShort}
		}
		for _, sd := range sides {
			if !seen[strconv.Itoa(posIdxOf(sd))] {
				rows = append(rows, s.positionRow(i, q.account(), venue.Position{Instrument: i.v.ID, Side: sd, Updated: s.v.Now()}, st))
			}
		}
	}
	list, next, e := pageRows(rows, q.get("cursor"), limit)
	if e != nil {
		return nil, e
	}
	if list == nil {
		list = []obj{}
	}
	return obj{"category": "linear", "list": list, "nextPageCursor": next}, nil
}

func (s *Server) linearInst(category, symbol string) (*inst, *apiError) {
	if category != "linear" {
		return nil, &apiError{10001, "params error: category only support linear,inverse"}
	}
	return s.bodyInst(category, symbol)
}

func (s *Server) setLeverage(q *privRequest) (any, *apiError) {
	var r struct {
		Category     string `json:"category"`
		Symbol       string `json:"symbol"`
		BuyLeverage  string `json:"buyLeverage"`
		SellLeverage string `json:"sellLeverage"`
	}
	if e := q.decode(&r); e != nil {
		return nil, e
	}
	i, e := s.linearInst(r.Category, r.Symbol)
	if e != nil {
		return nil, e
	}
	if r.BuyLeverage != r.SellLeverage {
		return nil, &apiError{10001, "params error: buy leverage must equal sell leverage"}
	}
	lev, err := decimal.NewFromString(r.BuyLeverage)
	if err != nil || !lev.IsInteger() || !lev.IsPositive() {
		return nil, &apiError{10001, "params error: leverage invalid"}
	}
	st, err := s.v.Settings(q.account(), i.v.ID)
	if err != nil {
		return nil, mapErr(err, false)
	}
	if int64(st.Leverage) == lev.IntPart() {
		return nil, &apiError{110043, "Set leverage not modified"}
	}
	if err := s.v.SetLeverage(q.account(), i.v.ID, int(lev.IntPart())); err != nil {
		return nil, mapErr(err, false)
	}
	return obj{}, nil
}

// switchMode is /v5/position/switch-mode: mode 0 merged single (one-way), 3 both sides (hedge). The venue keeps
// one mode per account, so a symbol or a coin switches the account.
func (s *Server) switchMode(q *privRequest) (any, *apiError) {
	var r struct {
		Category string `json:"category"`
		Symbol   string `json:"symbol"`
		Coin     string `json:"coin"`
		Mode     *int   `json:"mode"`
	}
	if e := q.decode(&r); e != nil {
		return nil, e
	}
	if r.Category != "linear" {
		return nil, &apiError{10001, "params error: category only support linear,inverse"}
	}
	if r.Symbol == "" && r.Coin == "" {
		return nil, errParams("symbol or coin is required")
	}
	if r.Mode == nil || (*r.Mode != 0 && *r.Mode != 3) {
		return nil, errParams("mode invalid")
	}
	ref := ""
	for _, i := range s.order {
		if i.linear && (r.Symbol == "" || i.symbol == r.Symbol) {
			ref = i.v.ID
			break
		}
	}
	if ref == "" {
		return nil, mapErr(venue.ErrInstrument, false)
	}
	st, err := s.v.Settings(q.account(), ref)
	if err != nil {
		return nil, mapErr(err, false)
	}
	hedge := *r.Mode == 3
	if st.Hedge == hedge {
		return nil, &apiError{110025, "Position mode is not modified"}
	}
	if err := s.v.SetPositionMode(q.account(), hedge); err != nil {
		return nil, mapErr(err, false)
	}
	return obj{}, nil
}

// switchIsolated is /v5/position/switch-isolated: tradeMode 0 cross, 1 isolated, per symbol, with the leverage.
func (s *Server) switchIsolated(q *privRequest) (any, *apiError) {
	var r struct {
		Category     string `json:"category"`
		Symbol       string `json:"symbol"`
		TradeMode    *int   `json:"tradeMode"`
		BuyLeverage  string `json:"buyLeverage"`
		SellLeverage string `json:"sellLeverage"`
	}
	if e := q.decode(&r); e != nil {
		return nil, e
	}
	i, e := s.linearInst(r.Category, r.Symbol)
	if e != nil {
		return nil, e
	}
	if r.TradeMode == nil || (*r.TradeMode != 0 && *r.TradeMode != 1) {
		return nil, errParams("tradeMode invalid")
	}
	st, err := s.v.Settings(q.account(), i.v.ID)
	if err != nil {
		return nil, mapErr(err, false)
	}
	iso := *r.TradeMode == 1
	if st.Isolated == iso {
		return nil, &apiError{110026, "Cross/isolated margin mode is not modified"}
	}
	if err := s.v.SetMarginMode(q.account(), i.v.ID, iso); err != nil {
		if strings.Contains(err.Error(), "mode") {
			return nil, &apiError{110027, "Margin mode cannot be switched with open orders or positions"}
		}
		return nil, mapErr(err, false)
	}
	if lev, err := decimal.NewFromString(r.BuyLeverage); err == nil && lev.IsPositive() && int(lev.IntPart()) != st.Leverage {
		if err := s.v.SetLeverage(q.account(), i.v.ID, int(lev.IntPart())); err != nil {
			return nil, mapErr(err, false)
		}
	}
	return obj{}, nil
}

func triggerOf(by string) (venue.TriggerPrice, bool) {
	switch by {
	case "", "LastPrice":
		return venue.TriggerLast, true
	case "MarkPrice":
		return venue.TriggerMark, true
	}
	return 0, false
}

// tradingStop is /v5/position/trading-stop in Full mode: a take-profit and/or stop-loss that close the whole
// position at market when the trigger price is reached; "0" removes a leg, an absent leg is kept.
func (s *Server) tradingStop(q *privRequest) (any, *apiError) {
	var r struct {
		Category    string  `json:"category"`
		Symbol      string  `json:"symbol"`
		TakeProfit  *string `json:"takeProfit"`
		StopLoss    *string `json:"stopLoss"`
		TpTriggerBy string  `json:"tpTriggerBy"`
		SlTriggerBy string  `json:"slTriggerBy"`
		TpslMode    string  `json:"tpslMode"`
		PositionIdx int     `json:"positionIdx"`
	}
	if e := q.decode(&r); e != nil {
		return nil, e
	}
	i, e := s.linearInst(r.Category, r.Symbol)
	if e != nil {
		return nil, e
	}
	if r.TpslMode != "" && r.TpslMode != "Full" {
		return nil, errParams("tpslMode only Full is offered by this emulator")
	}
	ps, ok := posSideOf(r.PositionIdx)
	if !ok {
		return nil, errParams("positionIdx invalid")
	}
	acct := q.account()
	positions, err := s.v.Positions(acct)
	if err != nil {
		return nil, mapErr(err, false)
	}
	var pos *venue.Position
	for k := range positions {
		if positions[k].Instrument == i.v.ID && positions[k].Side == ps && !positions[k].Qty.IsZero() {
			pos = &positions[k]
		}
	}
	if pos == nil {
		return nil, &apiError{10001, "can not set tp/sl/ts for zero position"}
	}
	closeSide := venue.Sell
	if pos.Side == venue.PosShort || (pos.Side == venue.PosBoth && pos.Qty.IsNegative()) {
		closeSide = venue.Buy
	}
	t := s.livePosTpSl(acct, i, r.PositionIdx)
	leg := func(price *string, by string, typ venue.OrderType, id *uint64, px *decimal.Decimal, byName *string) *apiError {
		if price == nil || *price == "" {
			return nil
		}
		p, err := decimal.NewFromString(*price)
		if err != nil || p.IsNegative() {
			return errParams("trigger price invalid")
		}
		trig, ok := triggerOf(by)
		if !ok {
			return errParams("triggerBy invalid")
		}
		if *id != 0 {
			_, _ = s.v.Cancel(q.r.Context(), acct, i.v.ID, *id, "")
			*id, *px, *byName = 0, decimal.Zero, ""
		}
		if p.IsZero() {
			return nil
		}
		o, err := s.v.Place(q.r.Context(), venue.OrderRequest{Account: acct, Instrument: i.v.ID, Side: closeSide, Type: typ,
			StopPrice: p, TriggerBy: trig, ClosePosition: true, PositionSide: ps})
		if err != nil {
			return mapErr(err, false)
		}
		if by == "" {
			by = "LastPrice"
		}
		*id, *px, *byName = o.ID, p, by
		return nil
	}
	if e := leg(r.TakeProfit, r.TpTriggerBy, venue.TakeProfitMarket, &t.tp, &t.tpPrice, &t.tpBy); e != nil {
		return nil, e
	}
	if e := leg(r.StopLoss, r.SlTriggerBy, venue.StopMarket, &t.sl, &t.slPrice, &t.slBy); e != nil {
		return nil, e
	}
	s.tpslMu.Lock()
	if len(s.tpsls) >= 100_000 {
		clear(s.tpsls)
	}
	s.tpsls[tpslKey(acct, i, r.PositionIdx)] = t
	s.tpslMu.Unlock()
	return obj{}, nil
}

// queryAPI is /v5/user/query-api: the key's permissions (Bybit's shape, trimmed to what the adapter reads).
func (s *Server) queryAPI(q *privRequest) (any, *apiError) {
	ro := 0
	perms := obj{"ContractTrade": []string{"Order", "Position"}, "Spot": []string{"SpotTrade"}, "Wallet": []string{"AccountTransfer", "SubMemberTransfer"},
		"Options": []string{}, "Derivatives": []string{}, "CopyTrading": []string{}, "BlockTrade": []string{}, "Exchange": []string{}, "NFT": []string{}}
	if q.cred.ReadOnly {
		ro = 1
		perms = obj{"ContractTrade": []string{}, "Spot": []string{}, "Wallet": []string{}, "Options": []string{}, "Derivatives": []string{},
			"CopyTrading": []string{}, "BlockTrade": []string{}, "Exchange": []string{}, "NFT": []string{}}
	}
	return obj{"id": "1", "note": "exhub emulator", "apiKey": q.cred.APIKey, "readOnly": ro, "secret": "", "permissions": perms,
		"ips": []string{"*"}, "type": 1, "deadlineDay": -1, "expiredAt": "", "createdAt": "2024-01-01T00:00:00Z", "unified": 0,
		"uta": 1, "userID": uidOf(q.cred.Account), "inviterID": 0, "vipLevel": "No VIP", "mktMakerLevel": "0", "affiliateID": 0,
		"rsaPublicKey": "", "isMaster": true, "parentUid": "0", "kycLevel": "LEVEL_DEFAULT", "kycRegion": ""}, nil
}

// accountInfo is /v5/account/info: the unified account's margin mode.
func (s *Server) accountInfo(q *privRequest) (any, *apiError) {
	return obj{"unifiedMarginStatus": 5, "marginMode": "REGULAR_MARGIN", "isMasterTrader": false, "spotHedgingStatus": "OFF",
		"updatedTime": ms(s.v.Now()), "dcpStatus": "OFF", "timeWindow": 10, "smpGroup": 0}, nil
}

// uidOf is a stable numeric user id for a venue account.
func uidOf(acct string) int64 {
	var h int64 = 1469598103
	for _, c := range acct {
		h = (h*31 + int64(c)) % 900_000_000
	}
	return 100_000_000 + h
}
