package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/exhub/exhub/plugin-sdk/conformance"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
	"github.com/exhub/exhub/plugin-sdk/sdktest"
)

func TestReferenceExchangeConforms(t *testing.T) {
	_, client := sdktest.Start(t, sdktest.Options{TickInterval: 20 * time.Millisecond})
	conformance.Test(t, client, conformance.Options{Account: &exchangev1.AccountRef{ApiKey: "conformance"}})
}

// broken is the reference exchange with a few contract violations, to prove the kit catches them.
type broken struct {
	*sdktest.Server
}

// GetCandles returns candles newest first (the contract says ascending).
func (b broken) GetCandles(ctx context.Context, req *exchangev1.GetCandlesRequest) (*exchangev1.GetCandlesResponse, error) {
	r, err := b.Server.GetCandles(ctx, req)
	if err == nil {
		slices.Reverse(r.Candles)
	}
	return r, err
}

// GetOrder loses the typed reason of a missing order.
func (b broken) GetOrder(ctx context.Context, req *exchangev1.GetOrderRequest) (*exchangev1.GetOrderResponse, error) {
	r, err := b.Server.GetOrder(ctx, req)
	if sdk.DetailOf(err).GetReason() == exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "something went wrong")
	}
	return r, err
}

// GetOrderBook crosses the book.
func (b broken) GetOrderBook(ctx context.Context, req *exchangev1.GetOrderBookRequest) (*exchangev1.GetOrderBookResponse, error) {
	r, err := b.Server.GetOrderBook(ctx, req)
	if err == nil && len(r.Book.Bids) > 0 && len(r.Book.Asks) > 0 {
		r.Book.Bids[0].Price = r.Book.Asks[0].Price
	}
	return r, err
}

func TestKitCatchesViolations(t *testing.T) {
	ref := sdktest.New(sdktest.Options{TickInterval: 20 * time.Millisecond})
	defer ref.Close()
	client, stop, err := sdktest.ServeInProcess(broken{ref})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	rep := conformance.Run(t.Context(), client, conformance.Options{Account: &exchangev1.AccountRef{ApiKey: "k"}})
	failed := map[string]string{}
	for _, r := range rep.Results {
		if r.Status == conformance.Fail {
			failed[r.Check] = r.Detail
		}
	}
	for _, want := range []string{"candles", "candle-paging", "order-book", "error-order-not-found"} {
		if _, ok := failed[want]; !ok {
			t.Errorf("check %s should fail against a broken plugin; failures: %v", want, failed)
		}
	}
	for _, mustPass := range []string{"describe", "instruments", "trades", "stream-book", "trading-round-trip"} {
		if d, ok := failed[mustPass]; ok {
			t.Errorf("check %s should still pass, failed with %s", mustPass, d)
		}
	}
	if rep.OK() || rep.Failed != len(failed) {
		t.Errorf("report OK=%v failed=%d, want not OK with %d failures", rep.OK(), rep.Failed, len(failed))
	}
	if !strings.Contains(failed["error-order-not-found"], "ORDER_NOT_FOUND") {
		t.Errorf("detail should name the expected reason: %q", failed["error-order-not-found"])
	}
}

func TestReportFormats(t *testing.T) {
	_, client := sdktest.Start(t, sdktest.Options{TickInterval: 20 * time.Millisecond})
	rep := conformance.Run(t.Context(), client, conformance.Options{})
	if !rep.OK() {
		t.Fatalf("reference without an account should pass: %+v", rep)
	}
	// Without an account the trading and wallet checks do not apply.
	if rep.Skipped == 0 || rep.Passed+rep.Skipped != len(conformance.CheckNames()) {
		t.Errorf("passed %d + n/a %d != %d checks", rep.Passed, rep.Skipped, len(conformance.CheckNames()))
	}
	var buf bytes.Buffer
	if err := rep.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"CHECK", "RESULT", "DURATION", "stream-book", "PASS reference:", "N/A"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	js, err := rep.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back conformance.Report
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if back.Passed != rep.Passed || len(back.Results) != len(rep.Results) || back.Exchange != "reference" {
		t.Errorf("JSON round trip lost data: %s", js)
	}
}
