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
// exchanges.go). The edge must cache every one of them for every client, honouring the header.
var bffMarketCacheControl = map[string]string{
	"/api/v1/exchanges":   "public, max-age=10",
	"/api/v1/instruments": "public, max-age=60, stale-while-revalidate=300",
	"/api/v1/tickers":     "public, max-age=5, stale-while-revalidate=10",
	"/api/v1/movers":      "public, max-age=10, stale-while-revalidate=20",
	"/api/v1/candles":     "public, max-age=5, stale-while-revalidate=10",
	"/api/v1/orderbook":   "public, max-age=2",
	"/api/v1/trades":      "public, max-age=2, stale-while-revalidate=2",
	// The public content routes (bff/internal/api/content): the language is a query parameter, never a cookie.
	"/api/v1/content/events":             "public, max-age=60, stale-while-revalidate=300",
	"/api/v1/content/events/trading-cup": "public, max-age=60, stale-while-revalidate=300",
	"/api/v1/content/banners":            "public, max-age=60, stale-while-revalidate=300",
	"/api/v1/content/announcements":      "public, max-age=60, stale-while-revalidate=300",
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

// TestEdgeCachesEveryMarketRoute: for each public market route, with the BFF's real Cache-Control, a second GET is a
// cache hit that never reaches the BFF, whether the client is signed in or not: the edge removes the session cookie
// and any Authorization header before the cache and the BFF see the request, so the BFF never builds an answer for
// one user on these routes and every client shares the anonymous one.
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
			// A signed-in user asks first: the BFF sees neither the cookie nor any authorization.
			q := path + "?exchange=binance&type=SWAP&symbol=BTCUSDT"
			first := e.get(t, q, "Cookie", "exhub_session=user-a", "Authorization", "Bearer user-a")
			if first.status != http.StatusOK || first.header.Get("Cache-Control") != bffMarketCacheControl[path] {
				t.Fatalf("first: %d Cache-Control %q", first.status, first.header.Get("Cache-Control"))
			}
			if !strings.Contains(first.body, `"cookie":"","auth":""`) {
				t.Fatalf("the BFF saw credentials on a public route: %q", first.body)
			}
			// Anonymous, another user, a bearer token: all get the one stored answer.
			second := waitForHit(t, e, q)
			if second.body != first.body {
				t.Fatalf("hit body %q differs from %q", second.body, first.body)
			}
			if cs := second.header.Get("Cache-Status"); !strings.Contains(cs, "detail="+detail) {
				t.Fatalf("hit not from the %s store: Cache-Status %q", detail, cs)
			}
			for _, h := range [][]string{{"Cookie", "exhub_session=user-b"}, {"Authorization", "Bearer user-c"}} {
				r := e.get(t, q, h...)
				if r.body != first.body || !isHit(r) {
					t.Fatalf("%v: not the shared cached answer: %q (%s)", h, r.body, r.header.Get("Cache-Status"))
				}
			}
			if n := bff.count(path); n != 1 {
				t.Fatalf("BFF saw %d requests, want 1 (the rest answered by the cache)", n)
			}
		})
	}
}
