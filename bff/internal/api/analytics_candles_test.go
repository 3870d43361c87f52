package api

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/exhub/exhub/analytics/chtest"
	"github.com/exhub/exhub/analytics/query"
	"github.com/exhub/exhub/analytics/service"
	marketapi "github.com/exhub/exhub/bff/internal/api/market"
	"github.com/exhub/exhub/bff/internal/config"
	"github.com/exhub/exhub/bff/internal/market"
	"github.com/exhub/exhub/bff/internal/metrics"
	"github.com/exhub/exhub/bff/internal/pluginhost"
)

type candlesBody struct {
	Interval string          `json:"interval"`
	AsOf     int64           `json:"asOf"`
	Stale    bool            `json:"stale"`
	Candles  []market.Candle `json:"candles"`
}

// awayFromMinuteEdge waits until the clock is at least 3 s past a minute boundary and 20 s before the next one:
// right after a minute closes, live ingest needs a moment to store the closed minute, and until then the store
// rightly leaves that minute to the plugin.
func awayFromMinuteEdge() {
	for {
		s := time.Now().UnixMilli() % 60_000
		if s >= 3_000 && s <= 40_000 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func contiguous(t *testing.T, what string, cs []market.Candle, step int64) {
	t.Helper()
	for i := 1; i < len(cs); i++ {
		if cs[i].OpenTime-cs[i-1].OpenTime != step {
			t.Fatalf("%s: candles %d and %d not contiguous: %d %d", what, i-1, i, cs[i-1].OpenTime, cs[i].OpenTime)
		}
	}
}

// sameCandle compares two candles as numbers (the store and the exchange format decimals differently).
func sameCandle(t *testing.T, what string, a, b market.Candle) {
	t.Helper()
	if a.OpenTime != b.OpenTime || a.Trades != b.Trades || a.Closed != b.Closed {
		t.Fatalf("%s: %+v != %+v", what, a, b)
	}
	for _, f := range [][3]string{{"open", a.Open, b.Open}, {"high", a.High, b.High}, {"low", a.Low, b.Low},
		{"close", a.Close, b.Close}, {"volume", a.Volume, b.Volume}, {"quoteVolume", a.QuoteVolume, b.QuoteVolume}} {
		if !mustDecimal(t, f[0], f[1]).Equal(mustDecimal(t, f[0], f[2])) {
			t.Fatalf("%s: %s %s != %s\n%+v\n%+v", what, f[0], f[1], f[2], a, b)
		}
	}
}

// TestCandlesFromTheStore runs the analytics service (backfill of one day and live ingest) on a real ClickHouse
// with the reference plugin, and checks that GET /api/v1/candles answers from the store with the live candle
// merged in, rolls coarser intervals up exactly as the exchange does, pages by end time, takes the ranges the store
// lacks from the plugin, and falls back to the plugin when ClickHouse is down.
func TestCandlesFromTheStore(t *testing.T) {
	ch := chtest.Start(t)
	var svc *service.Service
	var symbol string
	srv, host, mk := startReferenceWith(t, func(cfg *config.Config, host *pluginhost.Host) Analytics {
		sup, _ := host.Get("reference")
		insts, _, err := market.New(market.Options{Exchanges: MarketExchanges(cfg, host)}).Instruments(context.Background(), "reference", "SWAP")
		if err != nil || len(insts) == 0 || sup == nil {
			t.Fatalf("instruments: %v", err)
		}
		symbol = insts[0].Symbol
		sc := AnalyticsConfig(cfg, host)
		sc.Addr, sc.HTTPAddr, sc.SpoolDir = ch.TCPAddr, ch.HTTPAddr, t.TempDir()
		sc.Schema.Database, sc.Symbols, sc.MaxSymbols = "chart", []string{symbol}, 1
		sc.BackfillDays, sc.BackfillPeriods, sc.Live, sc.FlushInterval = 1, nil, true, 200*time.Millisecond
		svc = service.New(sc)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- svc.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		return svc
	})
	ctx := context.Background()
	base := srv.URL + "/api/v1/candles?exchange=reference&type=SWAP&symbol="

	// Until the store holds the range, the plugin answers.
	deadline := time.Now().Add(90 * time.Second)
	for {
		var n uint64
		if _, err := svc.Store(); err == nil {
			if err := ch.Conn.QueryRow(ctx, "SELECT count() FROM chart.candles_1m FINAL WHERE symbol = ? AND closed", symbol).Scan(&n); err != nil {
				t.Fatal(err)
			}
		}
		if n >= 1440 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("backfill: %d closed minutes stored; stats %+v", n, svc.Stats())
		}
		time.Sleep(250 * time.Millisecond)
	}

	// The BFF's /metrics shows what ingest did: rows by table, the lease-less leader, the finished backfill pass.
	waitPass := time.Now().Add(60 * time.Second)
	for svc.Exchanges()[0].BackfillPasses == 0 {
		if time.Now().After(waitPass) {
			t.Fatalf("backfill pass not done: %+v", svc.Exchanges())
		}
		time.Sleep(100 * time.Millisecond)
	}
	m := metrics.New()
	m.RegisterAnalytics(svc)
	ms := httptest.NewServer(m.Handler())
	defer ms.Close()
	// Live trades reach the store as the venue makes them: wait (bounded) for the first before reading the rest.
	liveTrades := regexp.MustCompile(`(?m)^exhub_analytics_live_rows_total\{exchange="reference",table="trades"\} [1-9]`)
	_, mb := get(t, ms.URL)
	for waitLive := time.Now().Add(60 * time.Second); !liveTrades.Match(mb) && time.Now().Before(waitLive); {
		time.Sleep(200 * time.Millisecond)
		_, mb = get(t, ms.URL)
	}
	for _, re := range []string{
		`(?m)^exhub_analytics_rows_written_total\{table="candles_1m"\} [1-9][0-9]{3,}$`,
		`(?m)^exhub_analytics_ingest_leader\{exchange="reference"\} 1$`,
		`(?m)^exhub_analytics_backfill_passes_total\{exchange="reference"\} 1$`,
		`(?m)^exhub_analytics_backfill_instruments_done\{exchange="reference"\} [12]$`,
		`(?m)^exhub_analytics_backfill_rows_total\{exchange="reference"\} [1-9][0-9]{3,}$`,
		`(?m)^exhub_analytics_live_rows_total\{exchange="reference",table="trades"\} [1-9]`,
		`(?m)^exhub_analytics_spool_full 0$`,
		`(?m)^exhub_analytics_spool_bytes 0$`,
	} {
		if !regexp.MustCompile(re).Match(mb) {
			t.Errorf("/metrics does not match %s:\n%s", re, regexp.MustCompile(`(?m)^exhub_analytics.*$`).FindAll(mb, -1))
		}
	}

	// A stored minute 10 hours back gets a marker only the store knows: the store answers.
	const minute = int64(60_000)
	marked := (time.Now().UnixMilli()/minute - 600) * minute
	if err := ch.Conn.Exec(ctx, `INSERT INTO chart.candles_1m SELECT exchange, market_type, symbol, open_time, open, high,
	low, close, volume, quote_volume, 987654321, closed, ingested_at + INTERVAL 1 DAY FROM chart.candles_1m FINAL
	WHERE symbol = ? AND open_time = fromUnixTimestamp64Milli(?, 'UTC')`, symbol, marked); err != nil {
		t.Fatal(err)
	}
	// The forming minute gets a marker in the store too: the answer must carry the exchange's live candle instead.
	awayFromMinuteEdge()
	forming := time.Now().UnixMilli() / minute * minute
	if err := ch.Conn.Exec(ctx, `INSERT INTO chart.candles_1m SELECT exchange, market_type, symbol, open_time, open, high,
	low, close, volume, quote_volume, 123456789, closed, ingested_at + INTERVAL 1 DAY FROM chart.candles_1m FINAL
	WHERE symbol = ? AND open_time = fromUnixTimestamp64Milli(?, 'UTC')`, symbol, forming); err != nil {
		t.Fatal(err)
	}
	var cs candlesBody
	resp := getJSON(t, base+symbol+"&interval=1m&limit=700", &cs)
	if resp.StatusCode != 200 || resp.Header.Get(marketapi.SourceHeader) != marketapi.SourceStore || resp.Header.Get("Cache-Control") != marketapi.CacheCandlesLive ||
		len(cs.Candles) != 700 || cs.Stale || cs.AsOf == 0 {
		t.Fatalf("1m from the store: %d %v %d candles", resp.StatusCode, resp.Header, len(cs.Candles))
	}
	contiguous(t, "1m", cs.Candles, minute)
	found := false
	for _, c := range cs.Candles {
		found = found || (c.OpenTime == marked && c.Trades == 987654321)
	}
	if !found {
		t.Fatalf("the marked minute %d is not in the answer: not served from the store", marked)
	}
	// The newest candle is the exchange's forming one.
	last := cs.Candles[len(cs.Candles)-1]
	if now := time.Now().UnixMilli(); last.Closed || last.OpenTime != forming || last.OpenTime != now/minute*minute || last.Trades == 123456789 {
		t.Fatalf("last candle %+v is not the forming minute (now %d)", last, now)
	}
	for _, c := range cs.Candles[:len(cs.Candles)-1] {
		if !c.Closed {
			t.Fatalf("an older candle is not closed: %+v", c)
		}
	}

	// Paging back by end time continues seamlessly, from the store, with the long max-age of closed history.
	var older candlesBody
	resp = getJSON(t, fmt.Sprintf("%s%s&interval=1m&limit=100&end=%d", base, symbol, cs.Candles[0].OpenTime-1), &older)
	if resp.StatusCode != 200 || resp.Header.Get(marketapi.SourceHeader) != marketapi.SourceStore || resp.Header.Get("Cache-Control") != marketapi.CacheCandlesClosed ||
		len(older.Candles) != 100 || older.Candles[99].OpenTime != cs.Candles[0].OpenTime-minute {
		t.Fatalf("paging: %d %v %d candles", resp.StatusCode, resp.Header, len(older.Candles))
	}
	contiguous(t, "1m page", older.Candles, minute)

	// Hourly candles rolled up from the stored minutes equal the exchange's own, and the newest is its live one.
	awayFromMinuteEdge()
	var hours candlesBody
	resp = getJSON(t, base+symbol+"&interval=1h&limit=8", &hours)
	if resp.StatusCode != 200 || resp.Header.Get(marketapi.SourceHeader) != marketapi.SourceStore || len(hours.Candles) != 8 || hours.Interval != "1h" {
		t.Fatalf("1h from the store: %d %v %+v", resp.StatusCode, resp.Header, hours)
	}
	contiguous(t, "1h", hours.Candles, 3_600_000)
	ex, _, err := mk.Candles(ctx, "reference", "SWAP", symbol, "1h", hours.Candles[6].OpenTime, 7)
	if err != nil || len(ex) != 7 {
		t.Fatalf("exchange 1h: %v %d", err, len(ex))
	}
	for i := range ex {
		sameCandle(t, fmt.Sprintf("1h candle %d", i), hours.Candles[i], ex[i])
	}
	if l := hours.Candles[7]; l.Closed || l.OpenTime != time.Now().UnixMilli()/3_600_000*3_600_000 {
		t.Fatalf("forming hour %+v", l)
	}

	// 40 hours reach back before the one backfilled day: the older hours come from the plugin, seamlessly.
	awayFromMinuteEdge()
	var mixed candlesBody
	resp = getJSON(t, base+symbol+"&interval=1h&limit=40", &mixed)
	if resp.StatusCode != 200 || resp.Header.Get(marketapi.SourceHeader) != marketapi.SourceMixed || len(mixed.Candles) != 40 {
		t.Fatalf("1h mixed: %d %v %d candles", resp.StatusCode, resp.Header, len(mixed.Candles))
	}
	contiguous(t, "1h mixed", mixed.Candles, 3_600_000)
	ex, _, err = mk.Candles(ctx, "reference", "SWAP", symbol, "1h", mixed.Candles[38].OpenTime, 39)
	if err != nil || len(ex) != 39 {
		t.Fatalf("exchange 1h: %v %d", err, len(ex))
	}
	for i := range ex {
		if ex[i].OpenTime == marked/3_600_000*3_600_000 {
			continue // holds the marked minute
		}
		sameCandle(t, fmt.Sprintf("mixed 1h candle %d", i), mixed.Candles[i], ex[i])
	}

	// A range the store does not hold at all, and intervals it does not roll up, come from the plugin.
	for _, q := range []string{
		fmt.Sprintf("&interval=1h&limit=10&end=%d", time.Now().Add(-72*time.Hour).UnixMilli()),
		"&interval=3d&limit=3", "&interval=1w&limit=2",
	} {
		resp = getJSON(t, base+symbol+q, &cs)
		if resp.StatusCode != 200 || resp.Header.Get(marketapi.SourceHeader) != marketapi.SourcePlugin || len(cs.Candles) == 0 {
			t.Fatalf("%s: %d %v", q, resp.StatusCode, resp.Header)
		}
	}
	// Bad parameters are still 422 naming the parameter.
	for q, loc := range map[string]string{"NOPE&interval=1m": "query.symbol", symbol + "&interval=7m": "query.interval"} {
		resp, body := get(t, base+q)
		if resp.StatusCode != 422 || !strings.Contains(string(body), loc) {
			t.Fatalf("%s: %d %s", q, resp.StatusCode, body)
		}
	}

	// ClickHouse down: the same answer shape from the plugin.
	down, err := clickhouse.Open(&clickhouse.Options{Addr: []string{deadAddr(t)}, DialTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	cfg := config.Default()
	cfg.Exchanges = []config.Exchange{{Key: 100, Slug: "reference", Name: "Reference Exchange", Plugin: referencePlugin(t)}}
	h, _ := New(Deps{Config: &cfg, Host: host, Market: mk, Checks: []Check{},
		Analytics: fixedAnalytics{store: &query.Store{Conn: down, Database: "chart"}}})
	srv2 := httptest.NewServer(h)
	defer srv2.Close()
	resp = getJSON(t, srv2.URL+"/api/v1/candles?exchange=reference&type=SWAP&symbol="+symbol+"&interval=1m&limit=700", &cs)
	if resp.StatusCode != 200 || resp.Header.Get(marketapi.SourceHeader) != marketapi.SourcePlugin || len(cs.Candles) != 700 || cs.Stale {
		t.Fatalf("ClickHouse down: %d %v %d candles", resp.StatusCode, resp.Header, len(cs.Candles))
	}
	contiguous(t, "plugin 1m", cs.Candles, minute)
}

// deadAddr is a loopback address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
