package binance

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/binance/emulator"
	"github.com/exhub/exhub/plugin-sdk/faults"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// TestEmulatorFaultsUnknownOutcome: when the emulator loses the answer to an order placement (after executing it or
// before), PlaceOrder and PlaceAlgoOrder answer UNKNOWN_OUTCOME, and GetOrder by client id afterwards finds the
// order exactly when it was executed.
func TestEmulatorFaultsUnknownOutcome(t *testing.T) {
	s, v, e := manualEmuCfg(t, emulator.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	acct := demoAccount()
	kinds := []faults.Kind{faults.AcceptThenError, faults.AcceptThenDrop, faults.DropBefore}
	for _, mt := range []exchangev1.MarketType{exchangev1.MarketType_MARKET_TYPE_SPOT, exchangev1.MarketType_MARKET_TYPE_SWAP} {
		id := "BTC/USDT"
		if mt == exchangev1.MarketType_MARKET_TYPE_SWAP {
			id = "BTC/USDT:PERP"
		}
		b := buildBook(t, v, id)
		if mt == exchangev1.MarketType_MARKET_TYPE_SWAP {
			if err := v.SetMarkPrice(id, b.ref); err != nil {
				t.Fatal(err)
			}
		}
		rest := b.bid.Sub(b.ref.Mul(decimal.RequireFromString("0.02"))).Round(0).String()
		for _, k := range kinds {
			cid := "flt-" + mt.String()[12:] + "-" + string(k)
			if err := e.Faults().Arm(cid, k); err != nil {
				t.Fatal(err)
			}
			_, err := s.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: acct, MarketType: mt, Symbol: "BTCUSDT",
				Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: rest, Qty: "0.01", ClientOrderId: cid})
			if reason(err) != exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME {
				t.Fatalf("%v %s: %v, want UNKNOWN_OUTCOME", mt, k, err)
			}
			got, gerr := s.GetOrder(ctx, &exchangev1.GetOrderRequest{Account: acct, MarketType: mt, Symbol: "BTCUSDT", ClientOrderId: cid})
			switch {
			case k.Executes() && (gerr != nil || got.GetOrder().GetClientOrderId() != cid):
				t.Fatalf("%v %s: executed order not found by client id: %v", mt, k, gerr)
			case !k.Executes() && reason(gerr) != exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND:
				t.Fatalf("%v %s: an order dropped before execution exists: %v %+v", mt, k, gerr, got)
			}
		}
		if e.Faults().Pending() != 0 {
			t.Fatalf("faults left armed: %d", e.Faults().Pending())
		}
	}

	// Conditional orders (futures) take the same path.
	swap := exchangev1.MarketType_MARKET_TYPE_SWAP
	mk, err := v.Mark("BTC/USDT:PERP")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		cid := "flt-algo-" + string(k)
		if err := e.Faults().Arm(cid, k); err != nil {
			t.Fatal(err)
		}
		_, err := s.PlaceAlgoOrder(ctx, &exchangev1.PlaceAlgoOrderRequest{Account: acct, MarketType: swap, Symbol: "BTCUSDT",
			Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_STOP_MARKET,
			TriggerPrice: mk.Mark.Mul(decimal.RequireFromString("1.5")).Round(0).String(), Qty: "0.01",
			TriggerPriceType: exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK, ClientAlgoId: cid})
		if reason(err) != exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME {
			t.Fatalf("algo %s: %v, want UNKNOWN_OUTCOME", k, err)
		}
		al, err := s.ListAlgoOrders(ctx, &exchangev1.ListAlgoOrdersRequest{Account: acct, MarketType: swap, Symbol: "BTCUSDT"})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, a := range al.GetAlgoOrders() {
			found = found || a.GetClientAlgoId() == cid
		}
		if found != k.Executes() {
			t.Fatalf("algo %s: found %v, executed %v", k, found, k.Executes())
		}
	}
}

// TestEmulatorTransferUnknownOutcome: Binance's universal transfer takes no client id, so a lost answer is
// UNKNOWN_OUTCOME and a retry with the same client id looks the transfer up in the history (type, asset, amount,
// since it was sent): exactly one transfer is made whether or not the first attempt executed.
func TestEmulatorTransferUnknownOutcome(t *testing.T) {
	s, _, e := manualEmuCfg(t, emulator.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	acct := demoAccount()
	for i, k := range []faults.Kind{faults.AcceptThenError, faults.AcceptThenDrop, faults.DropBefore} {
		amount := "1." + string(rune('1'+i)) // one amount per case, so the history tells the cases apart
		if err := e.Faults().Arm(emulator.TransferFaultID(transferMainToFunding, "USDT", amount), k); err != nil {
			t.Fatal(err)
		}
		tr := &exchangev1.TransferRequest{Account: acct, Asset: "USDT", Amount: amount, ClientId: "tr-" + string(k),
			From: exchangev1.WalletType_WALLET_TYPE_TRADING, To: exchangev1.WalletType_WALLET_TYPE_FUNDING}
		if _, err := s.Transfer(ctx, tr); reason(err) != exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME {
			t.Fatalf("%s: %v, want UNKNOWN_OUTCOME", k, err)
		}
		made := func() []*exchangev1.TransferRecord {
			t.Helper()
			l, err := s.ListTransfers(ctx, &exchangev1.ListTransfersRequest{Account: acct, Asset: "USDT"})
			if err != nil {
				t.Fatal(err)
			}
			var out []*exchangev1.TransferRecord
			for _, r := range l.Transfers {
				if decEqual(r.GetAmount(), amount) {
					out = append(out, r)
				}
			}
			return out
		}
		if n := len(made()); (n == 1) != k.Executes() || n > 1 {
			t.Fatalf("%s: %d transfers after the lost answer", k, n)
		}
		got, err := s.Transfer(ctx, tr)
		if err != nil || got.Transfer.GetClientId() != tr.ClientId {
			t.Fatalf("%s: retry: %v %v", k, err, got)
		}
		if again, err := s.Transfer(ctx, tr); err != nil || again.Transfer.GetId() != got.Transfer.GetId() {
			t.Fatalf("%s: second retry: %v %v, want %s", k, err, again, got.Transfer.GetId())
		}
		if m := made(); len(m) != 1 || m[0].GetId() != got.Transfer.GetId() {
			t.Fatalf("%s: transfers %v, want exactly %s", k, m, got.Transfer.GetId())
		}
	}
	if e.Faults().Pending() != 0 {
		t.Fatalf("faults left armed: %d", e.Faults().Pending())
	}
}
