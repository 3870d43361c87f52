package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	marketapi "github.com/exhub/exhub/bff/internal/api/market"
	"github.com/exhub/exhub/bff/internal/cache"
	"github.com/exhub/exhub/bff/internal/config"
	"github.com/exhub/exhub/bff/internal/market"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/plugintest"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// referencePlugin is plugins/reference, built by TestMain.
func referencePlugin(t *testing.T) string {
	t.Helper()
	return plugintest.Path("reference")
}

// startReference serves the API with the real reference exchange plugin (slug reference) and Bybit coming soon.
func startReference(t *testing.T) *httptest.Server {
	t.Helper()
	srv, _, _ := startReferenceWith(t, nil)
	return srv
}

// startReferenceWith is startReference with analytics: analytics builds it from the configuration and the running
// plugin host (nil: none). It returns the host and the market service too.
func startReferenceWith(t *testing.T, analytics func(*config.Config, *pluginhost.Host) Analytics) (*httptest.Server, *pluginhost.Host, *market.Service) {
	t.Helper()
	cfg := config.Default()
	cfg.Valkey.Addr, cfg.ClickHouse.Addr, cfg.ClickHouse.HTTPAddr = "", "", ""
	cfg.Exchanges = []config.Exchange{
		{Key: 100, Slug: "reference", Name: "Reference Exchange", Plugin: referencePlugin(t)},
		{Key: 3, Slug: "bybit", Name: "Bybit", Status: config.StatusComingSoon},
	}
	host := pluginhost.New([]pluginhost.Spec{{Key: 100, Slug: "reference", Path: cfg.Exchanges[0].Plugin}}, pluginhost.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); host.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	sup, _ := host.Get("reference")
	wctx, wcancel := context.WithTimeout(ctx, 15*time.Second)
	defer wcancel()
	if err := sup.WaitRunning(wctx); err != nil {
		t.Fatal(err)
	}
	mk := market.New(market.Options{Exchanges: MarketExchanges(&cfg, host), Cache: cache.NewMemory(100)})
	var an Analytics
	if analytics != nil {
		an = analytics(&cfg, host)
	}
	h, _ := New(Deps{Config: &cfg, Host: host, Market: mk, Checks: []Check{}, Analytics: an})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, host, mk
}

func getJSON(t *testing.T, url string, v any) *http.Response {
	t.Helper()
	resp, body := get(t, url)
	if resp.StatusCode == 200 && v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("%s: %v\n%s", url, err, body)
		}
	}
	return resp
}

func mustDecimal(t *testing.T, what, s string) decimal.Decimal {
	t.Helper()
	d, err := decimal.NewFromString(s)
	if err != nil {
		t.Fatalf("%s %q is not a decimal string", what, s)
	}
	return d
}

func TestMarketRoutesWithTheReferencePlugin(t *testing.T) {
	srv := startReference(t)
	base := srv.URL + "/api/v1/"

	var insts struct {
		Exchange    string              `json:"exchange"`
		Type        string              `json:"type"`
		AsOf        int64               `json:"asOf"`
		Stale       bool                `json:"stale"`
		Instruments []market.Instrument `json:"instruments"`
	}
	resp := getJSON(t, base+"instruments?exchange=reference&type=SWAP", &insts)
	if resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != marketapi.CacheInstruments || resp.Header.Get(marketapi.StaleHeader) != "" {
		t.Fatalf("instruments: %d %v", resp.StatusCode, resp.Header)
	}
	if insts.Exchange != "reference" || insts.Type != "SWAP" || insts.Stale || insts.AsOf == 0 || len(insts.Instruments) < 3 {
		t.Fatalf("instruments body %+v", insts)
	}
	symbol := ""
	for _, i := range insts.Instruments {
		if i.Quote != "USDT" || i.Type != "SWAP" || i.Status != "TRADING" {
			t.Fatalf("instrument %+v", i)
		}
		mustDecimal(t, "maxLeverage", i.MaxLeverage)
		mustDecimal(t, "tickSize", i.TickSize)
		if i.Base == "BTC" {
			symbol = i.Symbol
		}
	}
	if symbol == "" {
		t.Fatal("no BTC perpetual")
	}

	var tk struct {
		Tickers []map[string]any `json:"tickers"`
	}
	resp = getJSON(t, base+"tickers?exchange=reference&type=SWAP", &tk)
	if resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != marketapi.CacheTickers || len(tk.Tickers) != len(insts.Instruments) {
		t.Fatalf("tickers: %d %d", resp.StatusCode, len(tk.Tickers))
	}
	for _, k := range []string{"last", "changePct24h", "quoteVolume24h", "markPrice", "fundingRate"} {
		s, ok := tk.Tickers[0][k].(string)
		if !ok {
			t.Fatalf("ticker %s is not a string: %v", k, tk.Tickers[0][k])
		}
		mustDecimal(t, k, s)
	}

	var mv struct {
		Movers []market.Mover `json:"movers"`
	}
	resp = getJSON(t, base+"movers", &mv)
	if resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != marketapi.CacheMovers || len(mv.Movers) != len(insts.Instruments) {
		t.Fatalf("movers: %d %+v", resp.StatusCode, mv)
	}
	for i := 1; i < len(mv.Movers); i++ {
		a := mustDecimal(t, "change", mv.Movers[i-1].ChangePct24h).Abs()
		b := mustDecimal(t, "change", mv.Movers[i].ChangePct24h).Abs()
		if a.LessThan(b) || mv.Movers[i].Exchange != 100 {
			t.Fatalf("movers not sorted by absolute change: %+v", mv.Movers)
		}
	}

	// 1500 one-minute candles: more than the plugin's page of 1000, so two calls, stitched ascending and contiguous.
	var cs struct {
		Candles []market.Candle `json:"candles"`
	}
	resp = getJSON(t, base+"candles?exchange=reference&type=SWAP&symbol="+symbol+"&interval=1m&limit=1500", &cs)
	if resp.StatusCode != 200 || len(cs.Candles) != 1500 || resp.Header.Get("Cache-Control") != marketapi.CacheCandlesLive {
		t.Fatalf("candles: %d %d", resp.StatusCode, len(cs.Candles))
	}
	for i := 1; i < len(cs.Candles); i++ {
		if cs.Candles[i].OpenTime-cs.Candles[i-1].OpenTime != 60_000 {
			t.Fatalf("candles %d and %d not contiguous: %d %d", i-1, i, cs.Candles[i-1].OpenTime, cs.Candles[i].OpenTime)
		}
	}
	// Paging back: end = first openTime - 1 gives the candles just before, with a long max-age (closed history).
	first := cs.Candles[0].OpenTime
	resp = getJSON(t, fmt.Sprintf("%scandles?exchange=reference&type=SWAP&symbol=%s&interval=1m&limit=10&end=%d", base, symbol, first-1), &cs)
	if resp.StatusCode != 200 || len(cs.Candles) != 10 || cs.Candles[9].OpenTime != first-60_000 ||
		resp.Header.Get("Cache-Control") != marketapi.CacheCandlesClosed {
		t.Fatalf("previous page: %d %+v %q", resp.StatusCode, cs.Candles, resp.Header.Get("Cache-Control"))
	}

	var book struct {
		Symbol string              `json:"symbol"`
		Bids   []market.PriceLevel `json:"bids"`
		Asks   []market.PriceLevel `json:"asks"`
	}
	resp = getJSON(t, base+"orderbook?exchange=reference&type=SWAP&symbol="+symbol+"&depth=10", &book)
	if resp.StatusCode != 200 || len(book.Bids) != 10 || len(book.Asks) != 10 || book.Symbol != symbol ||
		resp.Header.Get("Cache-Control") != marketapi.CacheOrderBook {
		t.Fatalf("orderbook: %d %+v", resp.StatusCode, book)
	}
	if !mustDecimal(t, "bid", book.Bids[0].Price).LessThan(mustDecimal(t, "ask", book.Asks[0].Price)) {
		t.Fatalf("crossed book %+v", book)
	}

	var tr struct {
		Trades []market.Trade `json:"trades"`
	}
	resp = getJSON(t, base+"trades?exchange=reference&type=SWAP&symbol="+symbol+"&limit=5", &tr)
	if resp.StatusCode != 200 || len(tr.Trades) == 0 || len(tr.Trades) > 5 || resp.Header.Get("Cache-Control") != marketapi.CacheTrades {
		t.Fatalf("trades: %d %+v", resp.StatusCode, tr)
	}

	// 422 naming the parameter.
	for _, c := range []struct{ query, field string }{
		{"instruments?exchange=nope&type=SWAP", "query.exchange"},
		{"instruments?exchange=bybit&type=SWAP", "query.exchange"},
		{"tickers?exchange=reference&type=FUTURES", "query.type"},
		{"tickers?exchange=reference", "query.type"},
		{"candles?exchange=reference&type=SWAP&symbol=NOPE&interval=1m", "query.symbol"},
		{"candles?exchange=reference&type=SWAP&symbol=" + symbol + "&interval=7m", "query.interval"},
		{"candles?exchange=reference&type=SWAP&symbol=" + symbol + "&interval=1m&limit=1501", "query.limit"},
		{"orderbook?exchange=reference&type=SWAP&symbol=" + symbol + "&depth=51", "query.depth"},
		{"trades?exchange=reference&type=SWAP&symbol=" + symbol + "&limit=0", "query.limit"},
		{"movers?limit=21", "query.limit"},
	} {
		resp, body := get(t, base+c.query)
		assertProblem(t, resp, body, 422)
		var p struct {
			Errors []struct {
				Location string `json:"location"`
			} `json:"errors"`
		}
		_ = json.Unmarshal(body, &p)
		if len(p.Errors) == 0 || p.Errors[0].Location != c.field {
			t.Errorf("%s: want location %s: %s", c.query, c.field, body)
		}
	}
}

// switchPlugin is a market.Plugin that can be taken down.
type switchPlugin struct {
	desc *exchangev1.DescribeResponse
	real exchangev1.ExchangeClient
	down atomic.Bool
}

func (p *switchPlugin) Describe() *exchangev1.DescribeResponse { return p.desc }

func (p *switchPlugin) Call(ctx context.Context, _ string, fn func(context.Context, exchangev1.ExchangeClient) error) error {
	if p.down.Load() {
		return fmt.Errorf("switch: %w (restarting)", pluginhost.ErrUnavailable)
	}
	return fn(ctx, p.real)
}

// The plugin goes down: tickers already fetched are served stale (body and header); a book never fetched is a 503
// problem with Retry-After and no caching.
func TestMarketStaleAndUnavailable(t *testing.T) {
	cfg := config.Default()
	cfg.Valkey.Addr, cfg.ClickHouse.Addr, cfg.ClickHouse.HTTPAddr = "", "", ""
	host := pluginhost.New([]pluginhost.Spec{{Key: 100, Slug: "reference", Path: referencePlugin(t)}}, pluginhost.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); host.Run(ctx) }()
	defer func() { cancel(); <-done }()
	sup, _ := host.Get("reference")
	wctx, wcancel := context.WithTimeout(ctx, 15*time.Second)
	defer wcancel()
	if err := sup.WaitRunning(wctx); err != nil {
		t.Fatal(err)
	}
	client, err := sup.Client()
	if err != nil {
		t.Fatal(err)
	}
	sw := &switchPlugin{desc: sup.Describe(), real: client}
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	mk := market.New(market.Options{Exchanges: []market.Exchange{{Key: 100, Slug: "reference", Plugin: sw}}, Now: clock})
	h, _ := New(Deps{Config: &cfg, Market: mk, Checks: []Check{}})
	srv := httptest.NewServer(h)
	defer srv.Close()

	url := srv.URL + "/api/v1/tickers?exchange=reference&type=SPOT"
	var fresh struct {
		AsOf    int64            `json:"asOf"`
		Tickers []map[string]any `json:"tickers"`
	}
	if resp := getJSON(t, url, &fresh); resp.StatusCode != 200 || len(fresh.Tickers) == 0 {
		t.Fatalf("tickers %d", resp.StatusCode)
	}
	sw.down.Store(true)
	mu.Lock()
	now = now.Add(30 * time.Second)
	mu.Unlock()
	var stale struct {
		AsOf        int64            `json:"asOf"`
		Stale       bool             `json:"stale"`
		StaleReason string           `json:"staleReason"`
		Tickers     []map[string]any `json:"tickers"`
	}
	resp := getJSON(t, url, &stale)
	if resp.StatusCode != 200 || !stale.Stale || stale.AsOf != fresh.AsOf || len(stale.Tickers) != len(fresh.Tickers) ||
		stale.StaleReason == "" || resp.Header.Get(marketapi.StaleHeader) != "true" || resp.Header.Get("Cache-Control") != marketapi.CacheStale {
		t.Fatalf("stale: %d %+v %v", resp.StatusCode, stale, resp.Header)
	}

	resp, body := get(t, srv.URL+"/api/v1/orderbook?exchange=reference&type=SPOT&symbol=BTCUSDT&depth=5")
	assertProblem(t, resp, body, 503)
	if resp.Header.Get("Retry-After") != "2" {
		t.Fatalf("Retry-After %q", resp.Header.Get("Retry-After"))
	}
	if !strings.Contains(string(body), "not running") {
		t.Fatalf("detail: %s", body)
	}
}
