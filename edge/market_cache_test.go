package edge_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// bffMarketCacheControl is what the BFF sends on each public market route (bff/internal/api/market.go and
// exchanges.go). The edge must cache every one of them for anonymous requests, honouring the header.
var bffMarketCacheControl = map[string]string{
	"/api/v1/exchanges":   "public, max-age=10",
	"/api/v1/instruments": "public, max-age=60, stale-while-revalidate=300",
	"/api/v1/tickers":     "public, max-age=5, stale-while-revalidate=10",
	"/api/v1/movers":      "public, max-age=10, stale-while-revalidate=20",
	"/api/v1/candles":     "public, max-age=5, stale-while-revalidate=10",
	"/api/v1/orderbook":   "public, max-age=2",
	"/api/v1/trades":      "public, max-age=2, stale-while-revalidate=2",
}

// newMarketBFF answers every market route with the BFF's Cache-Control and a body naming the caller's cookie and
// authorization, numbered per path so a cached answer is recognisable.
func newMarketBFF(t *testing.T) *upstream {
	u := &upstream{hits: map[string]*atomic.Int64{}}
	mux := http.NewServeMux()
	for path, cc := range bffMarketCacheControl {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			n := u.hit(r.URL.Path)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", cc)
			fmt.Fprintf(w, `{"path":%q,"query":%q,"served":%d,"cookie":%q,"auth":%q}`, r.URL.Path, r.URL.RawQuery, n,
				r.Header.Get("Cookie"), r.Header.Get("Authorization"))
		})
	}
	u.srv = httptest.NewServer(mux)
	t.Cleanup(u.srv.Close)
	return u
}

// TestEdgeCachesEveryMarketRoute: for each public market route, with the BFF's real Cache-Control, a second
// anonymous GET is a cache hit that never reaches the BFF; a request carrying a session cookie or an Authorization
// header always reaches the BFF, and its answer is never served to anybody else.
func TestEdgeCachesEveryMarketRoute(t *testing.T) {
	for _, store := range []string{"memory", "valkey"} {
		t.Run(store, func(t *testing.T) {
			valkey, detail := "", "OTTER"
			if store == "valkey" {
				valkey, detail = startValkey(t), "REDIS"
			}
			bff, kratos := newMarketBFF(t), newKratos(t)
			e := startEdge(t, writeUI(t), bff.addr(), kratos.addr(), valkey)
			checkMarketRoutes(t, e, bff, detail)
		})
	}
}

// checkMarketRoutes runs the route checks against one edge whose hits name the store detail in Cache-Status.
func checkMarketRoutes(t *testing.T, e *edge, bff *upstream, detail string) {
	for path := range bffMarketCacheControl {
		t.Run(strings.TrimPrefix(path, "/api/v1/"), func(t *testing.T) {
			// A signed-in user asks first: the answer is built for them and must not be stored.
			userQ := path + "?exchange=binance&type=SWAP&symbol=BTCUSDT&probe=user"
			a := e.get(t, userQ, "Cookie", "exhub_session=user-a")
			if a.status != http.StatusOK || !strings.Contains(a.body, "user-a") || isHit(a) {
				t.Fatalf("cookie request: %d %q %q", a.status, a.body, a.header.Get("Cache-Status"))
			}
			for _, h := range [][]string{{}, {"Cookie", "exhub_session=user-b"}, {"Authorization", "Bearer user-c"}} {
				r := e.get(t, userQ, h...)
				if strings.Contains(r.body, "user-a") || isHit(r) {
					t.Fatalf("%v got user-a's answer from the cache: %q (%s)", h, r.body, r.header.Get("Cache-Status"))
				}
			}
			if n := bff.count(path); n != 4 {
				t.Fatalf("BFF saw %d requests, want 4 (none answered by the cache)", n)
			}

			// Anonymous: the first is stored, the next one is a hit with the same body and the BFF's header.
			q := path + "?exchange=binance&type=SWAP&symbol=BTCUSDT"
			first := e.get(t, q)
			if first.status != http.StatusOK || first.header.Get("Cache-Control") != bffMarketCacheControl[path] {
				t.Fatalf("first: %d Cache-Control %q", first.status, first.header.Get("Cache-Control"))
			}
			second := waitForHit(t, e, q)
			if second.body != first.body {
				t.Fatalf("hit body %q differs from %q", second.body, first.body)
			}
			if cs := second.header.Get("Cache-Status"); !strings.Contains(cs, "detail="+detail) {
				t.Fatalf("hit not from the %s store: Cache-Status %q", detail, cs)
			}
			if n := bff.count(path); n != 5 {
				t.Fatalf("BFF saw %d requests after the hit, want 5", n)
			}
			// With a cookie, the cached anonymous answer is not used either.
			c := e.get(t, q, "Cookie", "exhub_session=user-d")
			if isHit(c) || !strings.Contains(c.body, "user-d") || bff.count(path) != 6 {
				t.Fatalf("cookie request answered from the cache: %q (%s)", c.body, c.header.Get("Cache-Status"))
			}
		})
	}
}
