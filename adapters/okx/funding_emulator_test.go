package okx_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/okx"
	"github.com/exhub/exhub/adapters/okx/emulator"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdktest"
)

// pathCounter counts requests by URL path in front of the emulator, and keeps the last funding-rate answer per
// instrument.
type pathCounter struct {
	mu      sync.Mutex
	n       map[string]int
	funding map[string][]byte
}

type teeWriter struct {
	http.ResponseWriter
	buf bytes.Buffer
}

func (t *teeWriter) Write(b []byte) (int, error) {
	t.buf.Write(b)
	return t.ResponseWriter.Write(b)
}

func (p *pathCounter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.n[r.URL.Path]++
		p.n[r.Method+" "+r.URL.Path]++
		p.mu.Unlock()
		if r.URL.Path != fundingPath {
			h.ServeHTTP(w, r)
			return
		}
		tw := &teeWriter{ResponseWriter: w}
		h.ServeHTTP(tw, r)
		p.mu.Lock()
		if p.funding == nil {
			p.funding = map[string][]byte{}
		}
		p.funding[r.URL.Query().Get("instId")] = tw.buf.Bytes()
		p.mu.Unlock()
	})
}

func (p *pathCounter) get(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n[path]
}

// lastFunding is the emulator's last funding-rate answer for instID, as sent.
func (p *pathCounter) lastFunding(t *testing.T, instID string) (rate, fundingTime string) {
	t.Helper()
	p.mu.Lock()
	raw := p.funding[instID]
	p.mu.Unlock()
	var body struct {
		Code string `json:"code"`
		Data []struct {
			FundingRate string `json:"fundingRate"`
			FundingTime string `json:"fundingTime"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &body); err != nil || body.Code != "0" || len(body.Data) != 1 {
		t.Fatalf("emulator funding-rate %s: %v %s", instID, err, raw)
	}
	return body.Data[0].FundingRate, body.Data[0].FundingTime
}

const fundingPath = "/api/v5/public/funding-rate"

// freshAdapter is a new adapter (empty caches) configured to the shared emulator.
func freshAdapter(t *testing.T, w *world) exchangev1.ExchangeClient {
	t.Helper()
	// The tests count which rates one call fetched: a wait no busy machine outlasts, so none is left for later.
	srv := okx.New(okx.Options{FundingWait: 2 * time.Minute})
	t.Cleanup(srv.Close)
	c, _, err := sdktest.ServeInProcess(srv)
	if err != nil {
		t.Fatal(err)
	}
	settings := emulator.PluginSettings(w.ts.URL)
	settings["rest_timeout"] = "30s"
	if _, err := c.Configure(t.Context(), &exchangev1.ConfigureRequest{Settings: settings}); err != nil {
		t.Fatal(err)
	}
	return c
}

func swapTickers(t *testing.T, c exchangev1.ExchangeClient, symbols ...string) []*exchangev1.Ticker {
	t.Helper()
	r, err := c.GetTickers(t.Context(), &exchangev1.GetTickersRequest{MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbols: symbols})
	if err != nil {
		t.Fatal(err)
	}
	return r.GetTickers()
}

// OKX's tickers carry no funding rate: the adapter fills it from /public/funding-rate, a bounded few requests per
// call, most traded first, and serves the rest from its cache until the TTL.
func TestTickersFundingRateFromFundingEndpoint(t *testing.T) {
	w := shared(t)
	c := freshAdapter(t, w)

	before := w.hits.get(fundingPath)
	first := swapTickers(t, c)
	n := len(first)
	if n < 10 {
		t.Fatalf("only %d SWAP tickers; the test needs more than one call's worth", n)
	}
	if got := w.hits.get(fundingPath) - before; got != okx.FundingPerCall {
		t.Fatalf("first call made %d funding-rate requests, want %d", got, okx.FundingPerCall)
	}
	// The filled ones are the most traded.
	var with, without []decimal.Decimal
	for _, x := range first {
		v := decimal.RequireFromString(x.GetQuoteVolume_24H())
		if x.GetFundingRate() != "" {
			with = append(with, v)
		} else {
			without = append(without, v)
		}
	}
	if len(with) != okx.FundingPerCall {
		t.Fatalf("%d tickers with a funding rate after the first call, want %d", len(with), okx.FundingPerCall)
	}
	for _, a := range with {
		for _, b := range without {
			if a.LessThan(b) {
				t.Fatalf("a ticker with volume %s got its funding rate before one with %s", a, b)
			}
		}
	}

	// Further calls fill the rest, never more than the per-call bound.
	calls := 1
	for filled := len(with); filled < n; calls++ {
		if calls > n/okx.FundingPerCall+2 {
			t.Fatalf("still %d of %d without funding after %d calls", n-filled, n, calls)
		}
		b := w.hits.get(fundingPath)
		filled = 0
		for _, x := range swapTickers(t, c) {
			if x.GetFundingRate() != "" {
				filled++
			}
		}
		if got := w.hits.get(fundingPath) - b; got > okx.FundingPerCall {
			t.Fatalf("call %d made %d funding-rate requests", calls+1, got)
		}
	}

	// Everything fresh: no request at all, and each ticker carries what the emulator sent.
	b := w.hits.get(fundingPath)
	all := swapTickers(t, c)
	if got := w.hits.get(fundingPath) - b; got != 0 {
		t.Fatalf("%d funding-rate requests with a fresh cache", got)
	}
	now := time.Now().UnixMilli()
	for _, x := range all {
		if x.GetFundingRate() == "" || x.GetNextFundingTime() <= now {
			t.Fatalf("%s: funding %q next %d", x.GetSymbol(), x.GetFundingRate(), x.GetNextFundingTime())
		}
		rate, ft := w.hits.lastFunding(t, x.GetSymbol())
		if !decimal.RequireFromString(rate).Equal(decimal.RequireFromString(x.GetFundingRate())) || ft != decimal.NewFromInt(x.GetNextFundingTime()).String() {
			t.Fatalf("%s funding %s next %d; the emulator sent %s at %s", x.GetSymbol(), x.GetFundingRate(), x.GetNextFundingTime(), rate, ft)
		}
	}
}

// A requested symbol gets its funding rate on the first call, whatever its volume.
func TestTickersFundingRateForRequestedSymbol(t *testing.T) {
	w := shared(t)
	c := freshAdapter(t, w)
	all := swapTickers(t, c)
	// The least traded one: not among the first call's fetches.
	least := all[0]
	for _, x := range all {
		if decimal.RequireFromString(x.GetQuoteVolume_24H()).LessThan(decimal.RequireFromString(least.GetQuoteVolume_24H())) {
			least = x
		}
	}
	c = freshAdapter(t, w)
	got := swapTickers(t, c, least.GetSymbol())
	if len(got) != 1 || got[0].GetFundingRate() == "" || got[0].GetNextFundingTime() == 0 {
		t.Fatalf("ticker %v", got)
	}
	if !strings.HasSuffix(got[0].GetSymbol(), "-SWAP") {
		t.Fatalf("symbol %s", got[0].GetSymbol())
	}
	// Spot tickers never ask for funding.
	b := w.hits.get(fundingPath)
	if _, err := c.GetTickers(t.Context(), &exchangev1.GetTickersRequest{MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT}); err != nil {
		t.Fatal(err)
	}
	if d := w.hits.get(fundingPath) - b; d != 0 {
		t.Fatalf("spot tickers made %d funding-rate requests", d)
	}
}

// The streamed ticker of a swap carries the cached funding rate.
func TestStreamTickerCarriesFundingRate(t *testing.T) {
	w := shared(t)
	c := freshAdapter(t, w)
	swapTickers(t, c, "BTC-USDT-SWAP")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	st, err := c.StreamMarket(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sub := &exchangev1.Subscription{Channel: exchangev1.Channel_CHANNEL_TICKER, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: "BTC-USDT-SWAP"}
	if err := st.Send(&exchangev1.StreamMarketRequest{Op: exchangev1.StreamMarketRequest_OP_SUBSCRIBE, Subscriptions: []*exchangev1.Subscription{sub}, RequestId: "t"}); err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if tk := ev.GetTicker(); tk != nil {
			if tk.GetFundingRate() == "" || tk.GetNextFundingTime() <= time.Now().UnixMilli() {
				t.Fatalf("streamed ticker without funding: %v", tk)
			}
			return
		}
	}
}
