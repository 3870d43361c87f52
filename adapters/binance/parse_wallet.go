package binance

import (
	"errors"
	"fmt"
	"strings"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// ParseCoinConfig parses GET /sapi/v1/capital/config/getall into assets with their networks.
func ParseCoinConfig(body []byte) ([]*exchangev1.Asset, error) {
	var rows []struct {
		Coin        string `json:"coin"`
		Name        string `json:"name"`
		NetworkList []struct {
			Network        string  `json:"network"`
			Name           string  `json:"name"`
			DepositEnable  bool    `json:"depositEnable"`
			WithdrawEnable bool    `json:"withdrawEnable"`
			WithdrawFee    flexStr `json:"withdrawFee"`
			WithdrawMin    flexStr `json:"withdrawMin"`
			WithdrawMax    flexStr `json:"withdrawMax"`
			// withdrawIntegerMultiple is the withdrawal increment ("0.00000001"); absent or zero: not said.
			WithdrawMultiple flexStr `json:"withdrawIntegerMultiple"`
			MemoRegex        string  `json:"memoRegex"`
			SameAddress      bool    `json:"sameAddress"`
			MinConfirm       flexInt `json:"minConfirm"`
		} `json:"networkList"`
	}
	if err := decodeJSON(body, &rows, "capital config"); err != nil {
		return nil, err
	}
	out := make([]*exchangev1.Asset, 0, len(rows))
	for i, r := range rows {
		if r.Coin == "" {
			return nil, fmt.Errorf("capital config %d: no coin", i)
		}
		a := &exchangev1.Asset{Asset: r.Coin, Name: r.Name}
		var d decs
		for _, n := range r.NetworkList {
			a.Networks = append(a.Networks, &exchangev1.Network{Network: n.Network, Name: n.Name,
				DepositEnabled: n.DepositEnable, WithdrawEnabled: n.WithdrawEnable,
				WithdrawFee: d.c("withdrawFee", n.WithdrawFee), WithdrawMin: d.c("withdrawMin", n.WithdrawMin),
				WithdrawMax: d.c("withdrawMax", n.WithdrawMax), WithdrawStep: d.step("withdrawIntegerMultiple", n.WithdrawMultiple),
				// sameAddress: the network shares one address and tells deposits apart by memo (tag).
				MemoRequired: n.SameAddress, Confirmations: int32(n.MinConfirm)})
		}
		if d.err != nil {
			return nil, fmt.Errorf("capital config %s: %w", r.Coin, d.err)
		}
		out = append(out, a)
	}
	return out, nil
}

// defaultNetwork is the network capital config marks isDefault for a coin ("" when unknown).
func defaultNetwork(body []byte, coin string) (string, error) {
	var rows []struct {
		Coin        string `json:"coin"`
		NetworkList []struct {
			Network   string `json:"network"`
			IsDefault bool   `json:"isDefault"`
		} `json:"networkList"`
	}
	if err := decodeJSON(body, &rows, "capital config"); err != nil {
		return "", err
	}
	for _, r := range rows {
		if r.Coin != coin {
			continue
		}
		for _, n := range r.NetworkList {
			if n.IsDefault {
				return n.Network, nil
			}
		}
		if len(r.NetworkList) > 0 {
			return r.NetworkList[0].Network, nil
		}
	}
	return "", nil
}

// ParseTransferID parses the universal transfer answer {"tranId":13526853623}.
func ParseTransferID(body []byte) (string, error) {
	var w struct {
		TranID flexInt `json:"tranId"`
	}
	if err := decodeJSON(body, &w, "transfer"); err != nil {
		return "", err
	}
	if w.TranID == 0 {
		return "", errors.New("transfer: no tranId")
	}
	return itoa64(int64(w.TranID)), nil
}

// transferStatus maps Binance's transfer statuses (CONFIRMED, PENDING, FAILED).
func transferStatus(s string) exchangev1.TransferStatus {
	switch strings.ToUpper(s) {
	case "CONFIRMED", "SUCCESS":
		return exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS
	case "PENDING", "PROCESS":
		return exchangev1.TransferStatus_TRANSFER_STATUS_PENDING
	case "FAILED":
		return exchangev1.TransferStatus_TRANSFER_STATUS_FAILED
	}
	return exchangev1.TransferStatus_TRANSFER_STATUS_UNSPECIFIED
}

// ParseTransfers parses GET /sapi/v1/asset/transfer ({"total":N,"rows":[...]}; rows absent when empty).
func ParseTransfers(body []byte) ([]*exchangev1.TransferRecord, error) {
	var w struct {
		Total *flexInt `json:"total"`
		Rows  []struct {
			Asset     string  `json:"asset"`
			Amount    flexStr `json:"amount"`
			Type      string  `json:"type"`
			Status    string  `json:"status"`
			TranID    flexInt `json:"tranId"`
			Timestamp flexInt `json:"timestamp"`
		} `json:"rows"`
	}
	if err := decodeJSON(body, &w, "transfers"); err != nil {
		return nil, err
	}
	if w.Total == nil {
		return nil, errors.New("transfers: no total field")
	}
	out := make([]*exchangev1.TransferRecord, 0, len(w.Rows))
	var d decs
	for _, r := range w.Rows {
		from, to, ok := walletsOfTransferType(r.Type)
		if !ok {
			continue // between wallets the contract does not model (margin, coin-M, ...)
		}
		out = append(out, &exchangev1.TransferRecord{Id: itoa64(int64(r.TranID)), Asset: r.Asset, Amount: d.c("amount", r.Amount),
			From: from, To: to, Status: transferStatus(r.Status), Time: int64(r.Timestamp)})
	}
	if d.err != nil {
		return nil, fmt.Errorf("transfers: %w", d.err)
	}
	return out, nil
}

// Universal transfer types between the two wallets of the contract. The trading wallet is spot (MAIN).
const (
	transferFundingToMain = "FUNDING_MAIN"
	transferMainToFunding = "MAIN_FUNDING"
)

func transferType(from, to exchangev1.WalletType) (string, bool) {
	switch {
	case from == exchangev1.WalletType_WALLET_TYPE_FUNDING && to == exchangev1.WalletType_WALLET_TYPE_TRADING:
		return transferFundingToMain, true
	case from == exchangev1.WalletType_WALLET_TYPE_TRADING && to == exchangev1.WalletType_WALLET_TYPE_FUNDING:
		return transferMainToFunding, true
	}
	return "", false
}

func walletsOfTransferType(t string) (exchangev1.WalletType, exchangev1.WalletType, bool) {
	switch t {
	case transferFundingToMain:
		return exchangev1.WalletType_WALLET_TYPE_FUNDING, exchangev1.WalletType_WALLET_TYPE_TRADING, true
	case transferMainToFunding:
		return exchangev1.WalletType_WALLET_TYPE_TRADING, exchangev1.WalletType_WALLET_TYPE_FUNDING, true
	}
	return 0, 0, false
}

// ParseDepositAddress parses GET /sapi/v1/capital/deposit/address.
func ParseDepositAddress(body []byte) (*exchangev1.GetDepositAddressResponse, error) {
	var w struct {
		Address string `json:"address"`
		Coin    string `json:"coin"`
		Tag     string `json:"tag"`
	}
	if err := decodeJSON(body, &w, "deposit address"); err != nil {
		return nil, err
	}
	if w.Address == "" {
		return nil, errors.New("deposit address: empty address")
	}
	return &exchangev1.GetDepositAddressResponse{Asset: w.Coin, Address: w.Address, Memo: w.Tag}, nil
}

// depositStatus maps deposit history statuses: 0 pending, 6 credited (not yet withdrawable), 1 success,
// 7 wrong deposit, 8 waiting for the user, 2 rejected.
func depositStatus(n int64) exchangev1.TransferStatus {
	switch n {
	case 1:
		return exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS
	case 0, 6, 8:
		return exchangev1.TransferStatus_TRANSFER_STATUS_PENDING
	case 2, 7:
		return exchangev1.TransferStatus_TRANSFER_STATUS_FAILED
	}
	return exchangev1.TransferStatus_TRANSFER_STATUS_UNSPECIFIED
}

// ParseDeposits parses GET /sapi/v1/capital/deposit/hisrec.
func ParseDeposits(body []byte) ([]*exchangev1.DepositRecord, error) {
	var rows []struct {
		ID         flexID  `json:"id"`
		Amount     flexStr `json:"amount"`
		Coin       string  `json:"coin"`
		Network    string  `json:"network"`
		Status     flexInt `json:"status"`
		Address    string  `json:"address"`
		AddressTag string  `json:"addressTag"`
		TxID       string  `json:"txId"`
		InsertTime flexInt `json:"insertTime"`
	}
	if err := decodeJSON(body, &rows, "deposits"); err != nil {
		return nil, err
	}
	out := make([]*exchangev1.DepositRecord, 0, len(rows))
	var d decs
	for _, r := range rows {
		out = append(out, &exchangev1.DepositRecord{Id: string(r.ID), Asset: r.Coin, Network: r.Network, Amount: d.c("amount", r.Amount),
			Address: r.Address, Memo: r.AddressTag, TxId: r.TxID, Status: depositStatus(int64(r.Status)), Time: int64(r.InsertTime)})
	}
	if d.err != nil {
		return nil, fmt.Errorf("deposits: %w", d.err)
	}
	return out, nil
}

// ParseWithdrawID parses the withdraw answer {"id":"..."}.
func ParseWithdrawID(body []byte) (string, error) {
	var w struct {
		ID flexID `json:"id"`
	}
	if err := decodeJSON(body, &w, "withdraw"); err != nil {
		return "", err
	}
	if w.ID == "" {
		return "", errors.New("withdraw: no id")
	}
	return string(w.ID), nil
}

// withdrawStatus maps withdraw history statuses: 0 email sent, 2 awaiting approval, 4 processing, 6 completed,
// 1 cancelled, 3 rejected, 5 failure.
func withdrawStatus(n int64) exchangev1.TransferStatus {
	switch n {
	case 6:
		return exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS
	case 0, 2, 4:
		return exchangev1.TransferStatus_TRANSFER_STATUS_PENDING
	case 1, 3, 5:
		return exchangev1.TransferStatus_TRANSFER_STATUS_FAILED
	}
	return exchangev1.TransferStatus_TRANSFER_STATUS_UNSPECIFIED
}

// binanceDateTime parses "2006-01-02 15:04:05" (UTC) as withdraw history sends applyTime.
func binanceDateTime(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	t, err := time.Parse(time.DateTime, s)
	if err != nil {
		return 0, fmt.Errorf("time %q: %w", s, err)
	}
	return t.UnixMilli(), nil
}

// ParseWithdrawals parses GET /sapi/v1/capital/withdraw/history.
func ParseWithdrawals(body []byte) ([]*exchangev1.WithdrawalRecord, error) {
	var rows []struct {
		ID              flexID  `json:"id"`
		WithdrawOrderID string  `json:"withdrawOrderId"`
		Amount          flexStr `json:"amount"`
		TransactionFee  flexStr `json:"transactionFee"`
		Coin            string  `json:"coin"`
		Status          flexInt `json:"status"`
		Address         string  `json:"address"`
		AddressTag      string  `json:"addressTag"`
		TxID            string  `json:"txId"`
		ApplyTime       string  `json:"applyTime"`
		Network         string  `json:"network"`
	}
	if err := decodeJSON(body, &rows, "withdrawals"); err != nil {
		return nil, err
	}
	out := make([]*exchangev1.WithdrawalRecord, 0, len(rows))
	var d decs
	for i, r := range rows {
		t, err := binanceDateTime(r.ApplyTime)
		if err != nil {
			return nil, fmt.Errorf("withdrawal %d: %w", i, err)
		}
		out = append(out, &exchangev1.WithdrawalRecord{Id: string(r.ID), ClientId: r.WithdrawOrderID, Asset: r.Coin, Network: r.Network,
			Amount: d.c("amount", r.Amount), Fee: d.c("transactionFee", r.TransactionFee), Address: r.Address, Memo: r.AddressTag,
			TxId: r.TxID, Status: withdrawStatus(int64(r.Status)), Time: t})
	}
	if d.err != nil {
		return nil, fmt.Errorf("withdrawals: %w", d.err)
	}
	return out, nil
}

// ParseConvertQuote parses POST /sapi/v1/convert/getQuote. The answer does not echo the assets: the caller's are
// filled in.
func ParseConvertQuote(body []byte, from, to string) (*exchangev1.ConvertQuote, error) {
	var w struct {
		QuoteID        string  `json:"quoteId"`
		Ratio          flexStr `json:"ratio"`
		ValidTimestamp flexInt `json:"validTimestamp"`
		ToAmount       flexStr `json:"toAmount"`
		FromAmount     flexStr `json:"fromAmount"`
	}
	if err := decodeJSON(body, &w, "convert quote"); err != nil {
		return nil, err
	}
	if w.QuoteID == "" {
		return nil, errors.New("convert quote: no quoteId")
	}
	var d decs
	q := &exchangev1.ConvertQuote{QuoteId: w.QuoteID, FromAsset: from, ToAsset: to, FromAmount: d.c("fromAmount", w.FromAmount),
		ToAmount: d.c("toAmount", w.ToAmount), Price: d.c("ratio", w.Ratio), ExpiresTime: int64(w.ValidTimestamp)}
	if d.err != nil {
		return nil, fmt.Errorf("convert quote: %w", d.err)
	}
	return q, nil
}

func convertStatus(s string) exchangev1.TransferStatus {
	switch strings.ToUpper(s) {
	case "SUCCESS":
		return exchangev1.TransferStatus_TRANSFER_STATUS_SUCCESS
	case "PROCESS", "ACCEPT_SUCCESS":
		return exchangev1.TransferStatus_TRANSFER_STATUS_PENDING
	case "FAIL", "FAILED":
		return exchangev1.TransferStatus_TRANSFER_STATUS_FAILED
	}
	return exchangev1.TransferStatus_TRANSFER_STATUS_UNSPECIFIED
}

type wireConvert struct {
	QuoteID     string  `json:"quoteId"`
	OrderID     flexID  `json:"orderId"`
	OrderStatus string  `json:"orderStatus"`
	FromAsset   string  `json:"fromAsset"`
	FromAmount  flexStr `json:"fromAmount"`
	ToAsset     string  `json:"toAsset"`
	ToAmount    flexStr `json:"toAmount"`
	Ratio       flexStr `json:"ratio"`
	CreateTime  flexInt `json:"createTime"`
}

func (w *wireConvert) record() (*exchangev1.ConvertRecord, error) {
	if w.OrderID == "" {
		return nil, errors.New("no orderId")
	}
	var d decs
	r := &exchangev1.ConvertRecord{Id: string(w.OrderID), QuoteId: w.QuoteID, FromAsset: w.FromAsset, ToAsset: w.ToAsset,
		FromAmount: d.c("fromAmount", w.FromAmount), ToAmount: d.c("toAmount", w.ToAmount), Price: d.c("ratio", w.Ratio),
		Status: convertStatus(w.OrderStatus), Time: int64(w.CreateTime)}
	return r, d.err
}

// ParseConvertAccept parses POST /sapi/v1/convert/acceptQuote ({"orderId","createTime","orderStatus"}).
func ParseConvertAccept(body []byte) (*exchangev1.ConvertRecord, error) {
	var w wireConvert
	if err := decodeJSON(body, &w, "convert accept"); err != nil {
		return nil, err
	}
	r, err := w.record()
	if err != nil {
		return nil, fmt.Errorf("convert accept: %w", err)
	}
	return r, nil
}

// ParseConvertOrder parses GET /sapi/v1/convert/orderStatus.
func ParseConvertOrder(body []byte) (*exchangev1.ConvertRecord, error) {
	return ParseConvertAccept(body)
}

// ParseConvertFlow parses GET /sapi/v1/convert/tradeFlow ({"list":[...],"moreData":bool}).
func ParseConvertFlow(body []byte) ([]*exchangev1.ConvertRecord, bool, error) {
	var w struct {
		List     *[]wireConvert `json:"list"`
		MoreData bool           `json:"moreData"`
	}
	if err := decodeJSON(body, &w, "convert trade flow"); err != nil {
		return nil, false, err
	}
	if w.List == nil {
		return nil, false, errors.New("convert trade flow: no list field")
	}
	out := make([]*exchangev1.ConvertRecord, 0, len(*w.List))
	for i := range *w.List {
		r, err := (*w.List)[i].record()
		if err != nil {
			return nil, false, fmt.Errorf("convert trade flow %d: %w", i, err)
		}
		out = append(out, r)
	}
	return out, w.MoreData, nil
}
