package binance

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// incomeRetention is how far back Binance keeps income history (three months).
const incomeRetention = 90 * 24 * time.Hour

// incomeCalls bounds the /fapi/v1/income calls of one ListFundingPayments page.
const incomeCalls = 20

// ListFundingPayments lists FUNDING_FEE income, newest first, with a cursor to older rows. Binance answers the
// OLDEST rows from startTime (ascending, at most 1000), so the adapter reads the whole window forward from its start
// (at most incomeCalls full answers; rows sharing the last time of one answer are asked again and de-duplicated by
// tranId) and keeps the newest page. The window starts at start_time, never before Binance's three months of
// income history; next_cursor moves its end back like every other history call of this adapter.
func (s *Server) ListFundingPayments(ctx context.Context, req *exchangev1.ListFundingPaymentsRequest) (*exchangev1.ListFundingPaymentsResponse, error) {
	if sym := req.GetSymbol(); sym != "" {
		if _, _, err := s.instrument(ctx, exchangev1.MarketType_MARKET_TYPE_SWAP, sym); err != nil {
			return nil, err
		}
	}
	w, err := newWindow(req.GetPage(), IncomeLimit)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	end := w.end
	if end <= 0 {
		end = now.Add(time.Minute).UnixMilli() // a little ahead: the exchange's clock may run before ours
	}
	from := max(w.start, now.Add(-incomeRetention).UnixMilli())
	if from > end {
		return &exchangev1.ListFundingPaymentsResponse{}, nil
	}
	c, _ := s.client()
	var rows []*exchangev1.FundingPayment
	seen := map[string]bool{}
	for i := 0; ; i++ {
		if i == incomeCalls {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "page",
				"more than %d funding payments in the window: ask for a shorter one", incomeCalls*IncomeLimit)
		}
		q := url.Values{"incomeType": {"FUNDING_FEE"}, "startTime": {strconv.FormatInt(from, 10)},
			"endTime": {strconv.FormatInt(end, 10)}, "limit": {strconv.Itoa(IncomeLimit)}}
		if req.GetSymbol() != "" {
			q.Set("symbol", req.GetSymbol())
		}
		got, err := call(ctx, c, rest{m: Futures, method: http.MethodGet, path: pathFutIncome, q: q, weight: 30,
			acct: req.GetAccount(), what: "income"}, ParseIncome)
		if err != nil {
			return nil, err
		}
		fresh := 0
		for _, p := range got {
			if !seen[p.GetId()] {
				seen[p.GetId()] = true
				rows = append(rows, p)
				fresh++
			}
		}
		if len(got) < IncomeLimit || fresh == 0 {
			break
		}
		from = got[len(got)-1].GetTime()
	}
	page, next := newestPage(w, rows, false,
		func(p *exchangev1.FundingPayment) int64 { return p.GetTime() }, func(p *exchangev1.FundingPayment) string { return p.GetId() })
	return &exchangev1.ListFundingPaymentsResponse{Payments: page, NextCursor: next}, nil
}
