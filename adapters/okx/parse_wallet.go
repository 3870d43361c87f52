package okx

import (
	"strconv"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// Wallet payloads: trading and funding balances, convert quotes and trades.

type rawBalanceDetail struct {
	Ccy       string `json:"ccy"`
	Eq        string `json:"eq"`
	CashBal   string `json:"cashBal"`
	AvailBal  string `json:"availBal"`
	AvailEq   string `json:"availEq"`
	FrozenBal string `json:"frozenBal"`
	Upl       string `json:"upl"`
}

type rawAccountBalance struct {
	TotalEq string             `json:"totalEq"`
	Details []rawBalanceDetail `json:"details"`
}

// ParseTradingBalance parses /account/balance (and the account channel): per-currency balances of the trading
// wallet, total equity, unrealized PnL and the USDT available margin.
func ParseTradingBalance(data []byte) (bs []*exchangev1.Balance, equity, upl, avail string, err error) {
	rows, err := decodeList[rawAccountBalance](data)
	if err != nil {
		return nil, "", "", "", err
	}
	sumUpl := decimal.Zero
	for _, r := range rows {
		if equity, err = canonStr("totalEq", r.TotalEq); err != nil {
			return nil, "", "", "", err
		}
		for _, d := range r.Details {
			b, err := balanceOf(d.Ccy, exchangev1.WalletType_WALLET_TYPE_TRADING, d.CashBal, d.AvailBal, d.FrozenBal)
			if err != nil {
				return nil, "", "", "", err
			}
			bs = append(bs, b)
			if u, ok, err := parseDec("upl", d.Upl); err == nil && ok {
				sumUpl = sumUpl.Add(u)
			}
			if d.Ccy == "USDT" {
				avail = b.Available
				if v, err := canonStr("availEq", d.AvailEq); err == nil && v != "" {
					avail = v
				}
			}
		}
	}
	return bs, equity, canon(sumUpl), avail, nil
}

// ParseFundingBalances parses /asset/balances.
func ParseFundingBalances(data []byte) ([]*exchangev1.Balance, error) {
	type row struct {
		Ccy       string `json:"ccy"`
		Bal       string `json:"bal"`
		AvailBal  string `json:"availBal"`
		FrozenBal string `json:"frozenBal"`
	}
	rows, err := decodeList[row](data)
	if err != nil {
		return nil, err
	}
	var out []*exchangev1.Balance
	for _, r := range rows {
		b, err := balanceOf(r.Ccy, exchangev1.WalletType_WALLET_TYPE_FUNDING, r.Bal, r.AvailBal, r.FrozenBal)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// balanceOf builds a balance; a missing available amount is total minus frozen.
func balanceOf(ccy string, w exchangev1.WalletType, total, avail, frozen string) (*exchangev1.Balance, error) {
	t, _, err1 := parseDec("total", total)
	a, okA, err2 := parseDec("available", avail)
	f, _, err3 := parseDec("frozen", frozen)
	for _, err := range []error{err1, err2, err3} {
		if err != nil {
			return nil, err
		}
	}
	if ccy == "" {
		return nil, errMalformed
	}
	if !okA {
		a = t.Sub(f)
	}
	a = decimal.Max(decimal.Zero, decimal.Min(a, t))
	f = decimal.Max(decimal.Zero, decimal.Min(f, t))
	return &exchangev1.Balance{Asset: ccy, Wallet: w, Total: canon(t), Available: canon(a), Locked: canon(f)}, nil
}

type rawConvertQuote struct {
	QuoteID   string `json:"quoteId"`
	BaseCcy   string `json:"baseCcy"`
	QuoteCcy  string `json:"quoteCcy"`
	Side      string `json:"side"`
	RfqSz     string `json:"rfqSz"`
	RfqSzCcy  string `json:"rfqSzCcy"`
	CnvtPx    string `json:"cnvtPx"`
	BaseSz    string `json:"baseSz"`
	QuoteSz   string `json:"quoteSz"`
	TTLMs     string `json:"ttlMs"`
	QuoteTime string `json:"quoteTime"`
}

type rawConvertTrade struct {
	TradeID     string `json:"tradeId"`
	QuoteID     string `json:"quoteId"`
	State       string `json:"state"`
	BaseCcy     string `json:"baseCcy"`
	QuoteCcy    string `json:"quoteCcy"`
	Side        string `json:"side"`
	FillPx      string `json:"fillPx"`
	FillBaseSz  string `json:"fillBaseSz"`
	FillQuoteSz string `json:"fillQuoteSz"`
	Ts          string `json:"ts"`
}

func convertRecord(r rawConvertTrade) (*exchangev1.ConvertRecord, error) {
	b, _, err1 := parseDec("fillBaseSz", r.FillBaseSz)
	q, _, err2 := parseDec("fillQuoteSz", r.FillQuoteSz)
	ts, err3 := parseMs("ts", r.Ts)
	if err1 != nil || err2 != nil || err3 != nil {
		return nil, errMalformed
	}
	rec := &exchangev1.ConvertRecord{Id: r.TradeID, QuoteId: r.QuoteID, FromAsset: r.BaseCcy, ToAsset: r.QuoteCcy,
		FromAmount: canon(b), ToAmount: canon(q), Time: ts, Status: exchangev1.TransferStatus_TRANSFER_STATUS_PENDING}
	if r.Side == "buy" {
		rec.FromAsset, rec.ToAsset, rec.FromAmount, rec.ToAmount = r.QuoteCcy, r.BaseCcy, canon(q), canon(b)
	}
	if fa, _, _ := parseDec("from", rec.FromAmount); fa.IsPositive() {
		ta, _, _ := parseDec("to", rec.ToAmount)
		rec.Price = canon(ta.DivRound(fa, 12))
	}
	switch r.State {
	case "fullyFilled":
		rec.Status = exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS
	case "rejected":
		rec.Status = exchangev1.TransferStatus_TRANSFER_STATUS_FAILED
	}
	return rec, nil
}

// ParseCurrencies parses /asset/currencies (one row per currency and chain) into assets with their networks, in the
// order OKX lists them. A number OKX leaves empty or writes badly is left empty.
func ParseCurrencies(data []byte) ([]*exchangev1.Asset, error) {
	type row struct {
		Ccy       string `json:"ccy"`
		Name      string `json:"name"`
		Chain     string `json:"chain"`
		CanDep    bool   `json:"canDep"`
		CanWd     bool   `json:"canWd"`
		MinFee    string `json:"minFee"`
		Fee       string `json:"fee"`
		MinWd     string `json:"minWd"`
		MaxWd     string `json:"maxWd"`
		WdTickSz  string `json:"wdTickSz"`
		NeedTag   bool   `json:"needTag"`
		MinDepCfm string `json:"minDepArrivalConfirm"`
	}
	rows, err := decodeList[row](data)
	if err != nil {
		return nil, err
	}
	byCcy := map[string]*exchangev1.Asset{}
	var out []*exchangev1.Asset
	for _, r := range rows {
		a := byCcy[r.Ccy]
		if a == nil {
			a = &exchangev1.Asset{Asset: r.Ccy, Name: r.Name}
			byCcy[r.Ccy] = a
			out = append(out, a)
		}
		fee := r.Fee
		if fee == "" {
			fee = r.MinFee
		}
		n := &exchangev1.Network{Network: networkOf(r.Ccy, r.Chain), Name: r.Chain, DepositEnabled: r.CanDep, WithdrawEnabled: r.CanWd,
			MemoRequired: r.NeedTag, WithdrawStep: withdrawStep(r.WdTickSz)}
		n.WithdrawFee, _ = canonStr("fee", fee)
		n.WithdrawMin, _ = canonStr("minWd", r.MinWd)
		n.WithdrawMax, _ = canonStr("maxWd", r.MaxWd)
		if c, err := strconv.Atoi(r.MinDepCfm); err == nil {
			n.Confirmations = int32(c)
		}
		a.Networks = append(a.Networks, n)
	}
	return out, nil
}

// withdrawStep is the increment of a withdrawal from OKX's wdTickSz, the withdrawal precision in decimal places
// ("8" -> "0.00000001", "0" -> "1"); "" when OKX leaves it empty or writes something else.
func withdrawStep(wdTickSz string) string {
	n, err := strconv.Atoi(wdTickSz)
	if err != nil || n < 0 || n > 30 {
		return ""
	}
	return decimal.New(1, -int32(n)).String()
}
