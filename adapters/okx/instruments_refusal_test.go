package okx

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// TestRefusalForgetsInstruments: the instruments are read once and cached; an order OKX refuses for its grid
// (51121, PRECISION) is reported with OKX's code and makes the next order read the listing again; an order refused
// for anything else (51008, funds) keeps the cache.
func TestRefusalForgetsInstruments(t *testing.T) {
	var mu sync.Mutex
	reads, answer := 0, "0"
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/api/v5/public/instruments":
			reads++
			fmt.Fprint(w, testInstruments)
		case "/api/v5/trade/order":
			if answer == "0" {
				fmt.Fprint(w, `{"code":"0","msg":"","data":[{"ordId":"7","clOrdId":"","ts":"1","sCode":"0","sMsg":""}]}`)
				return
			}
			fmt.Fprintf(w, `{"code":"1","msg":"","data":[{"ordId":"","clOrdId":"","ts":"1","sCode":%q,"sMsg":"refused"}]}`, answer)
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"code":"50000","msg":"not found","data":[]}`)
		}
	}))
	t.Cleanup(ts.Close)
	st := DefaultSettings()
	st.RESTURL = ts.URL
	s := New(Options{Logger: quiet(), Settings: &st})
	t.Cleanup(s.Close)
	acct := &exchangev1.AccountRef{ApiKey: "k", ApiSecret: "s", Passphrase: "p"}
	set := func(code string) {
		mu.Lock()
		answer = code
		mu.Unlock()
	}
	readsNow := func() int {
		mu.Lock()
		defer mu.Unlock()
		return reads
	}
	place := func() error {
		_, err := s.PlaceOrder(t.Context(), &exchangev1.PlaceOrderRequest{Account: acct, MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT,
			Symbol: "T-USDT", Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: "10", Qty: "1"})
		return err
	}

	if err := place(); err != nil {
		t.Fatal(err)
	}
	if err := place(); err != nil || readsNow() != 1 {
		t.Fatalf("second order: %v, instruments read %d times, want 1 (cached)", err, readsNow())
	}
	set("51008")
	if d := sdk.DetailOf(place()); d.GetReason() != exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS || readsNow() != 1 {
		t.Fatalf("refused for funds: %v, instruments read %d times, want 1", d, readsNow())
	}
	set("51121")
	if d := sdk.DetailOf(place()); d.GetReason() != exchangev1.ErrorReason_ERROR_REASON_PRECISION || d.GetExchangeCode() != "51121" {
		t.Fatalf("refused for the lot size: %v", d)
	}
	set("0")
	if err := place(); err != nil || readsNow() != 2 {
		t.Fatalf("after a refusal for the grid: %v, instruments read %d times, want 2 (read again)", err, readsNow())
	}
	if err := place(); err != nil || readsNow() != 2 {
		t.Fatalf("then: %v, instruments read %d times, want 2 (cached again)", err, readsNow())
	}
}
