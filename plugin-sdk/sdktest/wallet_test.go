package sdktest

import (
	"context"
	"testing"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func TestWallet(t *testing.T) {
	_, c, clock := manual(t)
	ctx := context.Background()
	a, b := acct("alice"), acct("bob")
	// A new paper account starts with the faucet: deposits into funding, half moved to trading.
	if got := balanceOf(t, c, a, funding, "USDT"); got.Total != "50000" {
		t.Fatalf("funding USDT %v", got)
	}
	deps := must(c.ListDeposits(ctx, &exchangev1.ListDepositsRequest{Account: a})).Deposits
	if len(deps) != len(faucet) {
		t.Fatalf("faucet deposits: %v", deps)
	}
	tr := &exchangev1.TransferRequest{Account: a, Asset: "USDT", Amount: "1000", From: funding, To: trading, ClientId: "t1"}
	first := must(c.Transfer(ctx, tr)).Transfer
	second := must(c.Transfer(ctx, tr)).Transfer
	if first.Id != second.Id || balanceOf(t, c, a, trading, "USDT").Total != "51000" {
		t.Fatal("a repeated client_id must not move funds twice")
	}
	_, err := c.Transfer(ctx, &exchangev1.TransferRequest{Account: a, Asset: "USDT", Amount: "1000000", From: funding, To: trading})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS)
	_, err = c.Transfer(ctx, &exchangev1.TransferRequest{Account: a, Asset: "USDT", Amount: "1.000000001", From: funding, To: trading})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_PRECISION)
	_, err = c.Transfer(ctx, &exchangev1.TransferRequest{Account: a, Asset: "USDT", Amount: "1", From: funding, To: funding})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)

	// A withdrawal to another paper account's address arrives there as a deposit; the fee is charged on top.
	addr := must(c.GetDepositAddress(ctx, &exchangev1.GetDepositAddressRequest{Account: b, Asset: "USDT", Network: "TRC20"}))
	w := must(c.Withdraw(ctx, &exchangev1.WithdrawRequest{Account: a, Asset: "USDT", Network: "TRC20", Amount: "100", Address: addr.Address})).Withdrawal
	if w.Fee != "1" || balanceOf(t, c, a, funding, "USDT").Total != "48899" {
		t.Fatalf("withdrawal %v, funding %v", w, balanceOf(t, c, a, funding, "USDT"))
	}
	if got := balanceOf(t, c, b, funding, "USDT").Total; got != "50100" {
		t.Fatalf("bob's funding USDT %s, want 50100", got)
	}
	_, err = c.Withdraw(ctx, &exchangev1.WithdrawRequest{Account: a, Asset: "USDT", Network: "TRC20", Amount: "5", Address: addr.Address})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)
	_, err = c.Withdraw(ctx, &exchangev1.WithdrawRequest{Account: a, Asset: "BTC", Amount: "0.5", Address: "x"})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS)

	// Convert: the quote's amounts move exactly, once.
	q := must(c.GetConvertQuote(ctx, &exchangev1.GetConvertQuoteRequest{Account: a, FromAsset: "USDT", ToAsset: "ETH", FromAmount: "340"})).Quote
	ethBefore := d(balanceOf(t, c, a, funding, "ETH").Total)
	usdtBefore := d(balanceOf(t, c, a, funding, "USDT").Total)
	cv := must(c.Convert(ctx, &exchangev1.ConvertRequest{Account: a, QuoteId: q.QuoteId})).Convert
	if cv.ToAmount != q.ToAmount || !d(balanceOf(t, c, a, funding, "ETH").Total).Equal(ethBefore.Add(d(q.ToAmount))) ||
		!d(balanceOf(t, c, a, funding, "USDT").Total).Equal(usdtBefore.Sub(d("340"))) {
		t.Fatalf("convert %v did not move the quoted amounts", cv)
	}
	if got := d(q.ToAmount); got.LessThan(d("0.09")) || got.GreaterThan(d("0.11")) {
		t.Fatalf("340 USDT bought %s ETH at about 3400", got)
	}
	_, err = c.Convert(ctx, &exchangev1.ConvertRequest{Account: a, QuoteId: q.QuoteId})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)
	q = must(c.GetConvertQuote(ctx, &exchangev1.GetConvertQuoteRequest{Account: a, FromAsset: "BTC", ToAsset: "USDT", ToAmount: "1000"})).Quote
	clock.advance(11 * time.Second)
	_, err = c.Convert(ctx, &exchangev1.ConvertRequest{Account: a, QuoteId: q.QuoteId})
	wantReason(t, err, exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED)
	if n := len(must(c.ListConverts(ctx, &exchangev1.ListConvertsRequest{Account: a})).Converts); n != 1 {
		t.Fatalf("%d converts recorded, want 1", n)
	}
	// Max order size follows the trading wallet.
	m := must(c.GetMaxOrderSize(ctx, &exchangev1.GetMaxOrderSizeRequest{Account: a, MarketType: spot, Symbol: "ETHUSDT", Price: "3000"}))
	if m.MaxBuyQty != "16.983" || m.MaxSellQty != "5" {
		t.Fatalf("max order size: %v (51000 USDT / 3003 per ETH with fee; 5 ETH held)", m)
	}
}
