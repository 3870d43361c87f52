package okx

import (
	"context"
	"net/url"
	"strconv"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// billsPageLimit is the most rows GET /api/v5/account/bills returns.
const billsPageLimit = 100

// ListFundingPayments lists funding fee bills (type 8) of SWAP positions, newest first, from
// GET /api/v5/account/bills (OKX keeps the last 7 days there); the cursor is the last billId (OKX's `after`).
func (s *Server) ListFundingPayments(ctx context.Context, req *exchangev1.ListFundingPaymentsRequest) (*exchangev1.ListFundingPaymentsResponse, error) {
	creds, err := credsOf(req.GetAccount())
	if err != nil {
		return nil, err
	}
	p := req.GetPage()
	limit := int(p.GetLimit())
	if limit <= 0 || limit > billsPageLimit {
		limit = billsPageLimit
	}
	q := url.Values{"instType": {instSwap}, "type": {billTypeFunding}, "limit": {strconv.Itoa(limit)}}
	if req.GetSymbol() != "" {
		in, err := s.instrument(ctx, exchangev1.MarketType_MARKET_TYPE_SWAP, req.GetSymbol())
		if err != nil {
			return nil, err
		}
		q.Set("instId", in.InstID)
	}
	if p.GetStartTime() > 0 && p.GetEndTime() > 0 && p.GetStartTime() > p.GetEndTime() {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "page.start_time", "start_time is after end_time")
	}
	if p.GetStartTime() > 0 {
		q.Set("begin", msStr(p.GetStartTime()))
	}
	if p.GetEndTime() > 0 {
		q.Set("end", msStr(p.GetEndTime()))
	}
	if c := p.GetCursor(); c != "" {
		if !validID(c) {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "page.cursor", "cursor %q was not made by this plugin", c)
		}
		q.Set("after", c)
	}
	data, err := s.client().Get(ctx, pathAccountBills, q, creds)
	if err != nil {
		return nil, err
	}
	rows, err := ParseBills(data)
	if err != nil {
		return nil, internalf("%s: %v", pathAccountBills, err)
	}
	resp := &exchangev1.ListFundingPaymentsResponse{}
	for _, r := range rows {
		if r.Type != billTypeFunding {
			continue
		}
		conv, err := s.convFor(ctx, r.InstID)
		if err != nil {
			return nil, err
		}
		fp, err := fundingPaymentProto(r, conv)
		if err != nil {
			return nil, internalf("bills: %v", err)
		}
		resp.Payments = append(resp.Payments, fp)
	}
	if len(rows) == limit {
		resp.NextCursor = rows[len(rows)-1].BillID
	}
	return resp, nil
}
