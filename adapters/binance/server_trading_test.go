package binance

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// A fake futures REST: checks the order parameters the adapter sends and answers like Binance.
func TestPlaceOrderWire(t *testing.T) {
	info, _ := os.ReadFile("testdata/futures_exchangeInfo.json")
	order, _ := os.ReadFile("testdata/futures_order.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch r.URL.Path {
		case pathFutExchangeInfo:
			w.Write(info)
		case pathFutTime:
			w.Write([]byte(`{"serverTime":1760000000000}`))
		case pathFutOrder:
			if r.Method == http.MethodGet && q.Get("origClientOrderId") != "" {
				// The client id is looked up before placing; this one is unused.
				w.WriteHeader(400)
				w.Write([]byte(`{"code":-2013,"msg":"Order does not exist."}`))
				return
			}
			if r.Method != http.MethodPost || q.Get("timeInForce") != "GTX" || q.Get("positionSide") != "LONG" || q.Get("price") != "140" ||
				q.Get("quantity") != "3" || q.Get("signature") == "" {
				w.WriteHeader(400)
				w.Write([]byte(`{"code":-1102,"msg":"unexpected parameters ` + r.URL.RawQuery + `"}`))
				return
			}
			if q.Get("newClientOrderId") == "poor" {
				w.WriteHeader(400)
				w.Write([]byte(`{"code":-2019,"msg":"Margin is insufficient."}`))
				return
			}
			w.Write(order)
		default:
			w.WriteHeader(404)
		}
	}))
	defer srv.Close()
	s := New(Options{})
	ctx := context.Background()
	if _, err := s.Configure(ctx, &exchangev1.ConfigureRequest{Settings: map[string]string{SettingFuturesRESTURL: srv.URL}}); err != nil {
		t.Fatal(err)
	}
	req := &exchangev1.PlaceOrderRequest{Account: &exchangev1.AccountRef{ApiKey: "k", ApiSecret: "s"}, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP,
		Symbol: "SOLUSDT", Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, TimeInForce: exchangev1.TimeInForce_TIME_IN_FORCE_POST_ONLY,
		Price: "140.00", Qty: "3", PositionSide: exchangev1.PositionSide_POSITION_SIDE_LONG}
	r, err := s.PlaceOrder(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if r.Order.OrderId != "9100" || r.Order.Status != exchangev1.OrderStatus_ORDER_STATUS_NEW {
		t.Fatalf("%+v", r.Order)
	}
	req.ClientOrderId = "poor"
	_, err = s.PlaceOrder(ctx, req)
	if d := sdk.DetailOf(err); d.GetReason() != exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS || d.GetExchangeCode() != "-2019" {
		t.Fatalf("insufficient margin: %v", err)
	}
	req.Symbol = "NOPE"
	if _, err := s.PlaceOrder(ctx, req); sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND {
		t.Fatalf("unknown symbol: %v", err)
	}
	req.Symbol, req.Type = "SOLUSDT", exchangev1.OrderType_ORDER_TYPE_STOP_MARKET
	if _, err := s.PlaceOrder(ctx, req); sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT {
		t.Fatalf("conditional type on PlaceOrder: %v", err)
	}
}
