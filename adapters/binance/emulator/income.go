package emulator

import (
	"net/http"

	"github.com/exhub/exhub/adapters/venue"
)

// incomeRoutes serves GET /fapi/v1/income for the FUNDING_FEE income type, from the venue's funding ledger.
func (s *Server) incomeRoutes(mux *http.ServeMux) {
	s.handle(mux, "GET /fapi/v1/income", route{futures: true, sec: secSigned, weight: 30, fn: s.futIncome})
}

// incomeWeek is the window Binance answers when neither startTime nor endTime is sent.
const incomeWeek = 7 * 24 * 3600 * 1000

// futIncome lists income rows as Binance does: oldest first inside [startTime, endTime], at most limit (default 100,
// max 1000); without either time, the last 7 days. Only FUNDING_FEE rows exist here (the venue's other movements are
// served by their own endpoints): any other incomeType answers an empty list.
func (s *Server) futIncome(q *req) (any, error) {
	type income struct {
		Symbol     string `json:"symbol"`
		IncomeType string `json:"incomeType"`
		Income     string `json:"income"`
		Asset      string `json:"asset"`
		Info       string `json:"info"`
		Time       int64  `json:"time"`
		TranID     int64  `json:"tranId"`
		TradeID    string `json:"tradeId"`
	}
	out := []income{}
	instID := ""
	if q.has("symbol") {
		in, err := s.symbolParam(q)
		if err != nil {
			return nil, err
		}
		instID = in.ID
	}
	limit, err := q.intParam("limit", 100)
	if err != nil {
		return nil, err
	}
	if limit < 1 || limit > 1000 {
		return nil, illegal("limit")
	}
	start, err := q.int64Param("startTime", 0)
	if err != nil {
		return nil, err
	}
	end, err := q.int64Param("endTime", 0)
	if err != nil {
		return nil, err
	}
	if start == 0 && end == 0 {
		start = s.v.Now() - incomeWeek
	}
	if start > 0 && end > 0 && start > end {
		return nil, illegal("startTime")
	}
	if t := q.str("incomeType"); t != "" && t != "FUNDING_FEE" {
		return out, nil
	}
	ps, err := s.v.FundingPayments(q.account, venue.FundingQuery{Instrument: instID, From: start, To: end,
		Limit: limit, OldestFirst: true})
	if err != nil {
		return nil, orderError(true, err)
	}
	for _, p := range ps {
		out = append(out, income{Symbol: s.native[p.Instrument], IncomeType: "FUNDING_FEE", Income: p.Amount.String(),
			Asset: p.Asset, Info: "FUNDING_FEE", Time: p.Time, TranID: int64(p.ID), TradeID: ""})
	}
	return out, nil
}
