package sdktest

import (
	"context"
	"maps"
	"slices"

	"google.golang.org/protobuf/proto"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// settleFunding pays funding on every open SWAP position at settlement time at: a position receives
// -mark × qty × rate (qty signed: longs pay a positive rate, shorts receive it), in USDT on the trading wallet,
// rounded to 8 decimals. A payment larger than the wallet takes what is there. Caller holds s.mu.
func (s *Server) settleFunding(at int64) {
	for _, id := range slices.Sorted(maps.Keys(s.accounts)) {
		a := s.accounts[id]
		for _, k := range slices.Sorted(maps.Keys(a.positions)) {
			p := a.positions[k]
			if p.qty == 0 {
				continue
			}
			m := s.markOf(p.in)
			qty := p.in.qty(p.qty)
			amt := m.mark.Mul(qty).Mul(m.fundingRate).Neg().Round(8)
			usdt := a.trading("USDT")
			if amt.IsNegative() && usdt.total.LessThan(amt.Neg()) {
				amt = usdt.total.Neg()
			}
			if amt.IsZero() {
				continue
			}
			usdt.total = usdt.total.Add(amt)
			a.dirtyBal[balKey{exchangev1.WalletType_WALLET_TYPE_TRADING, "USDT"}] = true
			a.funding = append(a.funding, &exchangev1.FundingPayment{Id: s.newID(), Symbol: p.in.info.Symbol,
				Amount: amt.String(), Asset: "USDT", FundingRate: m.fundingRate.String(), PositionSize: qty.Abs().String(),
				PositionSide: p.side, Time: at})
		}
	}
}

// ListFundingPayments lists the funding fees an account paid or received on its SWAP positions, newest first.
func (s *Server) ListFundingPayments(_ context.Context, req *exchangev1.ListFundingPaymentsRequest) (*exchangev1.ListFundingPaymentsResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.account(req.GetAccount())
	if err != nil {
		return nil, err
	}
	items := a.funding
	if sym := req.GetSymbol(); sym != "" {
		if _, err := s.swapInstrument(sym); err != nil {
			return nil, err
		}
		items = nil
		for _, p := range a.funding {
			if p.Symbol == sym {
				items = append(items, p)
			}
		}
	}
	page, next, err := pageOf(items, func(p *exchangev1.FundingPayment) int64 { return p.GetTime() }, req.GetPage(), 100, 1000)
	if err != nil {
		return nil, err
	}
	out := make([]*exchangev1.FundingPayment, len(page))
	for i, p := range page {
		out[i] = cloneFunding(p)
	}
	return &exchangev1.ListFundingPaymentsResponse{Payments: out, NextCursor: next}, nil
}

func cloneFunding(p *exchangev1.FundingPayment) *exchangev1.FundingPayment {
	return proto.Clone(p).(*exchangev1.FundingPayment)
}
