package emulator

import (
	"strconv"
	"strings"

	"github.com/exhub/exhub/adapters/venue"
)

// Bill types and sub-types of GET /api/v5/account/bills the emulator serves.
const (
	billTypeFunding       = "8"
	billSubFundingExpense = "173"
	billSubFundingIncome  = "174"
)

func (s *Server) billRoutes() {
	s.route("GET", "/api/v5/account/bills", 6, true, s.accountBills)
}

// accountBills is GET /api/v5/account/bills: the trading account's bills newest first, at most limit (100), paged
// by billId (after: older than, before: newer than) and by time (begin, end: Unix ms, inclusive). Only funding fee
// bills (type 8, sub-type 173 expense / 174 income) exist here, from the venue's funding ledger: sz is the position
// size in contracts, px the funding rate, balChg and pnl the signed amount. Other types answer an empty list.
func (s *Server) accountBills(q *request) (result, *apiError) {
	rows := []obj{}
	after, before, limit, aerr := paging(q, 100, 100)
	if aerr != nil {
		return result{}, aerr
	}
	var begin, end int64
	for name, p := range map[string]*int64{"begin": &begin, "end": &end} {
		if v := q.get(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return result{}, errParam(name)
			}
			*p = n
		}
	}
	instID := ""
	if id := q.get("instId"); id != "" {
		i, ok := s.byID[id]
		if !ok || !i.swap {
			return result{data: rows}, nil
		}
		instID = i.v.ID
	}
	if t := strings.ToUpper(q.get("instType")); t != "" && t != "SWAP" {
		return result{data: rows}, nil
	}
	if t := q.get("type"); t != "" && t != billTypeFunding {
		return result{data: rows}, nil
	}
	sub := q.get("subType")
	if sub != "" && sub != billSubFundingExpense && sub != billSubFundingIncome {
		return result{data: rows}, nil
	}
	ccy := strings.ToUpper(q.get("ccy"))
	ps, err := s.v.FundingPayments(q.account, venue.FundingQuery{Instrument: instID, From: begin, To: end,
		BeforeID: uint64(after), AfterID: uint64(before)})
	if err != nil {
		return result{}, internal(err)
	}
	for _, p := range ps {
		if len(rows) == limit {
			break
		}
		st := billSubFundingIncome
		if p.Amount.IsNegative() {
			st = billSubFundingExpense
		}
		if ccy != "" && p.Asset != ccy || sub != "" && sub != st {
			continue
		}
		i := s.byVenue[p.Instrument]
		rows = append(rows, obj{"bal": "", "balChg": dec(p.Amount), "billId": strconv.FormatUint(p.ID, 10),
			"ccy": p.Asset, "clOrdId": "", "execType": "", "fee": "0", "fillFwdPx": "", "fillIdxPx": "",
			"fillMarkPx": "", "fillMarkVol": "", "fillPxUsd": "", "fillPxVol": "", "fillTime": "", "from": "",
			"instId": i.id, "instType": "SWAP", "interest": "0", "mgnMode": "", "notes": "", "ordId": "",
			"pnl": dec(p.Amount), "posBal": "", "posBalChg": "", "px": dec(p.Rate), "subType": st,
			"sz": dec(i.toWire(p.Qty.Abs())), "tag": "", "to": "", "tradeId": "", "ts": ms(p.Time),
			"type": billTypeFunding})
	}
	return result{data: rows}, nil
}
